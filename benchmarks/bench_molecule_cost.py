"""CPU per molecule of frozen GROVER featurization and of MoleculeStandardizer, against ECFP4.

On the same MOSES SMILES, in one process, one torch thread, best of ``--repeats`` rounds
(the three timings take turns within each round): ``CircularFingerprint(radius=2,
n_bits=2048).transform`` (ECFP4, the peer), ``GroverFeaturizer(descriptors=False).transform``
(the shipped ``moses-small`` checkpoint, frozen: fitted with ``max_epochs=0``; the embedding
without the descriptors the default joins) and
``MoleculeStandardizer().transform`` (cleanup, largest organic fragment, neutralize). Times
are CPU seconds of this process (``time.process_time``), which other jobs on a loaded
machine disturb far less than wall time. Prints each rate and the ratio of CPU per molecule
to ECFP4's; records them in ``benchmarks/results/molecule_cost.json``.

Run: ``.venv/bin/python benchmarks/bench_molecule_cost.py [--n 5000] [--repeats 3]
[--smiles-file PATH]``. ``--smiles-file`` reads a one-column CSV of SMILES (gzip or not),
such as ``moses/dataset/data/train.csv.gz`` of the ``molsets`` wheel; without it the
bundled MOSES test split is used.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smiles-file", default=None)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, MoleculeStandardizer

    if args.smiles_file:
        import pandas as pd

        X = pd.read_csv(args.smiles_file, nrows=args.n).iloc[:, 0].astype(str).tolist()
        source = f"{len(X)} SMILES of {Path(args.smiles_file).name}"
    else:
        from sklearn_papers.datasets import load_moses_smiles

        X = load_moses_smiles(n_samples=args.n, return_X_y=True)[0].tolist()
        source = f"{len(X)} bundled MOSES test SMILES"
    ecfp = CircularFingerprint(radius=2, n_bits=2048, verbose=0)
    grover = GroverFeaturizer(max_epochs=0, descriptors=False, verbose=0).fit(X[:10])
    standardizer = MoleculeStandardizer(verbose=0)
    runs = {"ECFP4": ecfp.transform, "frozen GROVER": grover.transform,
            "MoleculeStandardizer": standardizer.transform}
    for run in runs.values():  # warm-up: imports, tables, the first torch calls
        run(X[:50])
    best = {name: float("inf") for name in runs}
    for _ in range(args.repeats):
        for name, run in runs.items():
            start = time.process_time()
            run(X)
            best[name] = min(best[name], time.process_time() - start)
    n = len(X)
    print(f"CPU per molecule on {source}, one torch thread, best of {args.repeats}:")
    for name in runs:
        print(f"  {name:22s} {1e3 * best[name] / n:7.3f} ms/molecule   "
              f"{best[name] / best['ECFP4']:5.2f}x ECFP4")

    from _record import record

    record("molecule_cost", title="CPU per molecule against ECFP4: frozen GROVER "
           "featurization and MoleculeStandardizer", peer="CircularFingerprint ECFP4 "
           "(radius 2, 2048 bits), same process", argv=argv,
           rows=[{"what": f"{name}, {source}, CPU ms per molecule",
                  "ours": 1e3 * best[name] / n, "peer": 1e3 * best["ECFP4"] / n,
                  "unit": "CPU ms/molecule", "better": "lower"}
                 for name in ("frozen GROVER", "MoleculeStandardizer")],
           notes="Ratios are CPU per molecule against ECFP4's (parsing included in "
                 "both); process time, best of the rounds.")


if __name__ == "__main__":
    main()
