"""Throughput of CircularFingerprint against scikit-fingerprints and a bare RDKit loop.

All three compute the same ECFP4 bits (radius 2, 2048 bits) for the same 20,000 MOSES
SMILES in one process (parsing included), and their outputs are checked to be identical.
Each is timed ``--repeats`` times, interleaved, and the best time is kept.

Run: ``.venv/bin/python benchmarks/bench_ecfp.py [--n-samples 20000] [--repeats 3]
[--n-jobs 1]``. Needs scikit-fingerprints (the ``bench`` extra).
"""

import argparse
import time

import numpy as np


def bare_rdkit(smiles, radius=2, n_bits=2048):
    """The plain loop a user would write: parse, fingerprint, stack."""
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    return np.array([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args(argv)

    from skfp.fingerprints import ECFPFingerprint

    from sklearn_papers.chem import CircularFingerprint
    from sklearn_papers.datasets import load_moses_smiles

    X, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
    smiles = X.tolist()
    runs = {
        "bare RDKit loop": lambda: bare_rdkit(smiles),
        "scikit-fingerprints ECFPFingerprint": lambda: ECFPFingerprint(
            fp_size=2048, radius=2, n_jobs=args.n_jobs).transform(smiles),
        "sklearn_papers CircularFingerprint": lambda: CircularFingerprint(
            radius=2, n_bits=2048, n_jobs=args.n_jobs).transform(smiles),
    }
    best = {name: np.inf for name in runs}
    outputs = {}
    for _ in range(args.repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            outputs[name] = run()
            best[name] = min(best[name], time.perf_counter() - start)
    reference = outputs["bare RDKit loop"]
    for name, out in outputs.items():
        assert np.array_equal(np.asarray(out), reference), f"{name} differs from RDKit"

    n = len(smiles)
    print(f"ECFP4 (radius 2, 2048 bits) on {n} MOSES SMILES, parsing included, "
          f"n_jobs={args.n_jobs}, best of {args.repeats}; outputs identical.")
    ours = n / best["sklearn_papers CircularFingerprint"]
    for name in runs:
        rate = n / best[name]
        print(f"  {name:38s} {rate:9.0f} mol/s   ours / this = {ours / rate:5.2f}")


if __name__ == "__main__":
    main()
