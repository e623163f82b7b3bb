"""Throughput of CircularFingerprint against scikit-fingerprints and a bare RDKit loop.

All three compute the same ECFP4 bits (radius 2, 2048 bits) for the same 20,000 MOSES
SMILES in one process (parsing included), and their outputs are checked to be identical.
Each is timed ``--repeats`` times, interleaved, and the best time is kept.

Run: ``.venv/bin/python benchmarks/bench_ecfp.py [--n-samples 20000] [--repeats 3]
[--n-jobs 1]``. scikit-fingerprints is installed by ``make bench``; without it the script
compares with the RDKit loop only. The rates are recorded in ``benchmarks/results/ecfp.json``
(the docs' Benchmarks pages).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


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

    import rdkit

    from sklearn_papers.chem import CircularFingerprint
    from sklearn_papers.datasets import load_moses_smiles

    X, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
    smiles = X.tolist()
    runs = {
        "bare RDKit loop": lambda: bare_rdkit(smiles),
        "sklearn_papers CircularFingerprint": lambda: CircularFingerprint(
            radius=2, n_bits=2048, n_jobs=args.n_jobs).transform(smiles),
    }
    peers = {"bare RDKit loop": f"a bare RDKit {rdkit.__version__} loop "
                                "(MolFromSmiles, then rdFingerprintGenerator)"}
    try:
        import skfp
        from skfp.fingerprints import ECFPFingerprint
    except ImportError:
        print("scikit-fingerprints is not installed (make bench installs it): "
              "comparing with the RDKit loop only.")
    else:
        runs["scikit-fingerprints ECFPFingerprint"] = lambda: ECFPFingerprint(
            fp_size=2048, radius=2, n_jobs=args.n_jobs).transform(smiles)
        peers["scikit-fingerprints ECFPFingerprint"] = (
            f"scikit-fingerprints {skfp.__version__} ECFPFingerprint")
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

    from _record import record

    record("ecfp", title="ECFP4 fingerprints per second, parsing included",
           peer="; ".join(peers.values()), argv=argv,
           rows=[{"what": f"{n} MOSES SMILES, radius 2, 2048 bits, n_jobs={args.n_jobs}, "
                          f"best of {args.repeats}; peer: {name}",
                  "ours": ours, "peer": n / best[name], "unit": "molecules/s",
                  "better": "higher"} for name in peers],
           notes="All outputs are checked to be identical bits before the rates are kept.")


if __name__ == "__main__":
    main()
