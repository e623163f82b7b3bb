"""Where ``n_jobs`` starts to pay for featurization: one worker against ``--n-jobs``.

Times the featurization alone of each estimator family (ECFP4 ``transform``; the graph
estimators' graphs, as their ``fit`` and ``predict`` build them) for MOSES molecules
in sizes ``--sizes`` (with the in-process shortcut for small inputs switched off), with
``n_jobs=1`` and ``n_jobs=--n-jobs`` (joblib's loky backend;
the worker pool is started before timing, as it is after a first call), best of
``--repeats``. Prints the wall seconds and the speed-up; a speed-up below 1 means the
workers cost more than they save. The times are recorded in
``benchmarks/results/featurization_n_jobs.json`` (the docs' Benchmarks pages), ``--n-jobs``
workers against one.

Run: ``.venv/bin/python benchmarks/bench_featurization_n_jobs.py [--n-jobs 2]
[--sizes 128 512 2048 8192] [--repeats 3]``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 512, 2048, 8192])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    from joblib import Parallel, delayed

    from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, MPNN
    from sklearn_papers.chem import NeuralFingerprint
    from sklearn_papers.chem import _molecule_input
    from sklearn_papers.datasets import load_moses_smiles

    # measure the workers themselves: no in-process shortcut for small inputs
    shortcut, _molecule_input._MIN_PARALLEL = _molecule_input._MIN_PARALLEL, 1
    X, _ = load_moses_smiles(n_samples=max(args.sizes), return_X_y=True)
    X = np.asarray(X, dtype=object)
    Parallel(n_jobs=args.n_jobs)(delayed(abs)(i) for i in range(args.n_jobs))  # warm pool

    def graph_job(cls):
        def run(data, n_jobs):
            return cls(n_jobs=n_jobs)._graphs(data)
        return run

    families = {
        "ECFP4 (CircularFingerprint)": lambda data, n_jobs: CircularFingerprint(
            n_jobs=n_jobs).transform(data),
        "NeuralFingerprint graphs": graph_job(NeuralFingerprint),
        "MPNN graphs": graph_job(MPNN),
        "GROVER graphs": graph_job(GroverFeaturizer),
    }
    print(f"n_jobs=1 against n_jobs={args.n_jobs}, MOSES molecules, best of "
          f"{args.repeats}; measured without the graph estimators' in-process shortcut "
          f"(under {shortcut} molecules they featurize in-process whatever n_jobs)")
    print(f"{'featurizer':30} {'n':>6} {'1 job s':>9} {f'{args.n_jobs} jobs s':>9} "
          f"{'speed-up':>9}")
    rows = []
    for name, run in families.items():
        for n in args.sizes:
            data = X[:n]
            best = {}
            for jobs in (1, args.n_jobs):
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    run(data, jobs)
                    times.append(time.perf_counter() - start)
                best[jobs] = min(times)
            print(f"{name:30} {n:6d} {best[1]:9.3f} {best[args.n_jobs]:9.3f} "
                  f"{best[1] / best[args.n_jobs]:9.2f}")
            rows.append({"what": f"{name}, {n} molecules", "ours": best[args.n_jobs],
                         "peer": best[1], "unit": "s (wall time)", "better": "lower"})

    from _record import record

    record("featurization_n_jobs",
           title=f"Featurization with n_jobs={args.n_jobs} against one worker",
           peer="the same featurization with n_jobs=1", argv=argv, rows=rows,
           notes=f"MOSES molecules, best of {args.repeats}, joblib's loky backend with its "
                 f"pool started before timing; the graph estimators' in-process shortcut "
                 f"(under {shortcut} molecules) switched off. A ratio below 1 means the "
                 f"{args.n_jobs} workers were faster; above 1, they cost more than they "
                 "saved.")


if __name__ == "__main__":
    main()
