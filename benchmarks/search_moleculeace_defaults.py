"""Candidate defaults of the graph regressors on MoleculeACE's targets (van Tilborg,
Alenicheva & Grisoni, J. Chem. Inf. Model. 2022): test RMSE, cliff RMSE and fit CPU.

Each arm is an estimator with parameters (``ARMS``, or ``--set`` on one of them); each is
fitted on the fixed training molecules of every target of ``--targets`` (the ten bundled
of :func:`sklearn_papers.datasets.load_moleculeace`) with ``random_state`` in ``--first-seed ..
--first-seed + --seeds - 1``, and scored on its test molecules: RMSE on all of them and
on the activity-cliff ones (``cliff_mol == 1``), in units of ``y`` (-log10 of Ki or EC50
in nM), and the fit's CPU seconds (one torch thread). One JSON line per fit goes to
``--out``; the summary gives each arm's means over the targets.

Run: ``OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/search_moleculeace_defaults.py
--arms grover grover-desc [--targets CHEMBL2047_EC50 ...] [--seeds 1] [--out rows.jsonl]``.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from bench_featurizer_moleculeace import TARGETS, load_target, rmse  # noqa: E402

#: Arm name -> (estimator class name in sklearn_papers.chem, constructor parameters).
ARMS = {
    "grover": ("GroverRegressor", {}),
    "grover-desc": ("GroverRegressor", {"descriptors": True}),
    "grover-desc-30": ("GroverRegressor", {"descriptors": True, "max_epochs": 30}),
    "grover-desc-es": ("GroverRegressor", {"descriptors": True, "early_stopping": True}),
    "mpnn": ("MPNNRegressor", {}),
    "mpnn-desc": ("MPNNRegressor", {"descriptors": True}),
    "nf": ("NeuralFingerprintRegressor", {}),
    "nf-desc": ("NeuralFingerprintRegressor", {"descriptors": True}),
}


def fit_score(cls_name, params, X, y, cliff, train, test, seed):
    """``(test RMSE, cliff RMSE, fit CPU seconds)`` of one fit."""
    import sklearn_papers.chem as chem

    est = getattr(chem, cls_name)(random_state=seed, verbose=0, **params)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[train], y[train])
    cpu = time.process_time() - start
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = est.predict(X[test])
    c = cliff[test]
    return rmse(pred, y[test]), rmse(pred[c], y[test][c]), cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", nargs="+", default=["grover", "grover-desc"])
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="parameters changed in every arm (JSON values)")
    parser.add_argument("--targets", nargs="+", default=TARGETS)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    changes = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}

    import torch

    torch.set_num_threads(1)
    results = {}
    for name in args.targets:
        X, y, cliff, is_test = load_target(name)
        train, test = np.flatnonzero(~is_test), np.flatnonzero(is_test)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for arm in args.arms:
                cls_name, params = ARMS[arm]
                params = {**params, **changes}
                score = fit_score(cls_name, params, X, y, cliff, train, test, seed)
                results.setdefault(arm, {}).setdefault(name, []).append(score)
                print(f"{name:16} seed {seed} {arm:16} RMSE {score[0]:.3f}  cliff "
                      f"{score[1]:.3f}  fit CPU {score[2]:6.1f} s", flush=True)
                if args.out:
                    with open(args.out, "a") as fh:
                        fh.write(json.dumps({
                            "target": name, "seed": seed, "arm": arm, "class": cls_name,
                            "params": params, "rmse": score[0], "cliff_rmse": score[1],
                            "cpu": score[2]}) + "\n")
    print("\nmeans over targets (of the means over seeds)")
    for arm, per_target in results.items():
        means = np.array([np.mean(v, axis=0) for v in per_target.values()])
        print(f"{arm:16} RMSE {means[:, 0].mean():.3f}  cliff {means[:, 1].mean():.3f}  "
              f"fit CPU {means[:, 2].mean():6.1f} s  ({len(per_target)} targets)")


if __name__ == "__main__":
    sys.exit(main())
