"""Does standardizing molecules change the scores on the bundled sets? (ECFP4 + linear model)

For ESOL, FreeSolv (random 80/20, test RMSE, ``RidgeCV``), BBBP and Tox21 (balanced scaffold
80/20, test ROC-AUC, ``LogisticRegression``; Tox21: one per task on its labelled molecules,
mean over the 12 tasks), the same model with ``CircularFingerprint(standardize=False)`` and
``standardize=True`` on the same splits (``benchmarks/_molsplits.py``), ``--seeds`` seeds.
Prints each arm's mean and standard deviation, the paired difference, how many molecules
standardization changes, and the featurization CPU time of each arm (this process: one job). The scores and times are
recorded in ``benchmarks/results/standardize.json`` (the docs' Benchmarks pages),
standardized against as given.

Run: ``.venv/bin/python benchmarks/bench_standardize.py [--seeds 3] [--datasets esol ...]``.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

NAMES = {"esol": "ESOL", "freesolv": "FreeSolv", "bbbp": "BBBP", "tox21": "Tox21"}


def _fit_predict(kind, F_train, y_train, F_test):
    from sklearn.linear_model import LogisticRegression, RidgeCV

    if kind == "regression":
        return RidgeCV(alphas=np.logspace(-2, 3, 11)).fit(F_train, y_train).predict(F_test)
    y_train = y_train.reshape(len(y_train), -1)
    out = np.full((len(F_test), y_train.shape[1]), 0.5)
    for t in range(y_train.shape[1]):
        seen = ~np.isnan(y_train[:, t])
        if len(np.unique(y_train[seen, t])) == 2:
            model = LogisticRegression(C=0.1, max_iter=2000)
            out[:, t] = model.fit(F_train[seen], y_train[seen, t]).predict_proba(F_test)[:, 1]
    return out if out.shape[1] > 1 else out[:, 0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=["esol", "freesolv", "bbbp", "tox21"])
    args = parser.parse_args(argv)

    from _molsplits import DATASETS, load, mean_std, score, split

    from sklearn_papers.chem import CircularFingerprint, MoleculeStandardizer

    print(f"{'data set':9} {'metric':7} {'as given':>15} {'standardized':>15} "
          f"{'paired diff':>16} {'changed':>8} {'fp s (given/std)':>17}")
    rows, notes = [], []
    for name in args.datasets:
        X, y = load(name)
        kind = DATASETS[name]
        from rdkit import Chem

        canonical = np.array([Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in X])
        std_smiles = MoleculeStandardizer(errors="nan").transform(X)[:, 0]
        changed = int(np.sum(std_smiles != canonical))
        feats, secs = {}, {}
        for std in (False, True):
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                feats[std] = CircularFingerprint(standardize=std, errors="nan").transform(X)
            secs[std] = time.process_time() - start
        # salts of inorganic parts only have no parent molecule (invalid when standardized):
        # the standardized arm gives them the empty fingerprint, so both arms keep every row
        no_parent = int(np.isnan(feats[True]).any(axis=1).sum())
        feats[True] = np.nan_to_num(feats[True], nan=0.0)
        scores = {False: [], True: []}
        for seed in range(args.seeds):
            train, test = split(name, X, y, seed)
            for std in (False, True):
                F = feats[std]
                scores[std].append(score(name, y[test],
                                         _fit_predict(kind, F[train], y[train], F[test])))
        diff = np.array(scores[True]) - np.array(scores[False])
        (m0, s0), (m1, s1), (md, sd) = (mean_std(scores[False]), mean_std(scores[True]),
                                        mean_std(diff))
        metric = "RMSE" if kind == "regression" else "ROC-AUC"
        print(f"{name:9} {metric:7} {m0:8.3f} ± {s0:.3f} {m1:8.3f} ± {s1:.3f} "
              f"{md:+8.4f} ± {sd:.4f} {changed:>4}/{len(X):<5} "
              f"{secs[False]:7.2f}/{secs[True]:.2f}")
        label = NAMES.get(name, name)
        rows += [{"what": f"{label}, test {metric}", "ours": m1, "peer": m0,
                  "ours_std": s1, "peer_std": s0, "unit": f"test {metric}",
                  "better": "lower" if kind == "regression" else "higher"},
                 {"what": f"{label}, ECFP4 of the whole set", "ours": secs[True],
                  "peer": secs[False], "unit": "CPU s", "better": "lower"}]
        notes.append(f"{label}: paired difference {md:+.4f} ± {sd:.4f}, standardization "
                     f"changes {changed} of {len(X)} molecules"
                     + (f" ({no_parent} salts of inorganic parts only, without a parent, "
                        "get the empty fingerprint)" if no_parent else ""))

    from _record import record

    record("standardize",
           title="Standardizing molecules: ECFP4 + a linear model, scores and time",
           peer="the same model on the molecules as given (CircularFingerprint(standardize="
                "False))", argv=argv, rows=rows,
           notes=f"Ours is CircularFingerprint(standardize=True), on the same splits "
                 f"({args.seeds} seeds, mean ± std over the seeds; RidgeCV on random 80/20 "
                 "splits for ESOL and FreeSolv, LogisticRegression on balanced scaffold "
                 "splits for BBBP and Tox21). A molecule changes when its canonical SMILES does. "
                 + "; ".join(notes) + ".")


if __name__ == "__main__":
    main()
