"""Graph estimators with and without RDKit descriptors joined to the readout.

Each graph estimator at its defaults, once as it is and once with ``descriptors=True``
(RDKit's 217 2-D descriptors through their fitted CDFs, joined to the readout before the
head, as chemprop's ``rdkit_2d_normalized`` and GROVER's fine-tuning do), beside ECFP4
(2048 bits) + ``RidgeCV`` (regression) or ``LogisticRegression`` (classification) on the
same split. The splits of the quality comparisons (``benchmarks/_molsplits.py``): ESOL and
FreeSolv random 80/20 (``--seeds`` seeds), BBBP balanced scaffold 80/20
(``--scaffold-seeds`` seeds); test RMSE (lower is better) or ROC-AUC (higher is better).
Torch runs on one thread; one ``GraphCache`` holds the graphs and raw descriptors of every
molecule across the arms, so each molecule is featurized once per estimator family.

Run: ``.venv/bin/python benchmarks/bench_graph_descriptors.py [--models mpnn nf grover]
[--datasets esol freesolv bbbp] [--seeds 3] [--scaffold-seeds 1] [--out rows.jsonl]``.
Each fit prints a row as it ends; the summary at the end gives, per data set and model,
the mean score without and with descriptors, their ratio (RMSE) or difference (AUC), and
the same against ECFP4 + the linear model; then the claims "with descriptors beats
without" and "with descriptors beats ECFP4 + the linear model", judged per data set by the
reports' ``paired interval`` rule over the seeds (``sklearn_papers.reproduce._claims``:
holds, does not hold or inconclusive; one seed is always inconclusive).
``--summary rows.jsonl`` prints the summary of rows recorded by ``--out`` without fitting.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

MODELS = ("mpnn", "nf", "grover")


def make(model, task, descriptors, seed, cache):
    from sklearn_papers import chem

    classes = {
        "mpnn": (chem.MPNNRegressor, chem.MPNNClassifier),
        "nf": (chem.NeuralFingerprintRegressor, chem.NeuralFingerprintClassifier),
        "grover": (chem.GroverRegressor, chem.GroverClassifier),
    }[model]
    cls = classes[0] if task == "regression" else classes[1]
    return cls(descriptors=descriptors, random_state=seed, graph_cache=cache)


def linear(task):
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint

    head = (RidgeCV(alphas=np.logspace(-2, 3, 11)) if task == "regression"
            else LogisticRegression(max_iter=2000))
    return make_pipeline(CircularFingerprint(), head)


def predictions(est, task, X):
    if task == "regression":
        return est.predict(X)
    proba = est.predict_proba(X)
    return proba[:, 1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mpnn"], choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=["esol", "freesolv", "bbbp"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scaffold-seeds", type=int, default=1)
    parser.add_argument("--out", default=None, help="append one JSON line per fit")
    parser.add_argument("--summary", default=None, metavar="ROWS",
                        help="print the summary of a --out file and exit")
    args = parser.parse_args(argv)
    if args.summary:
        with open(args.summary) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        models = [m for m in MODELS if any(r["arm"] == m for r in rows)]
        summary(rows, models)
        return

    import torch

    torch.set_num_threads(1)
    from _molsplits import DATASETS, load, score, split

    from sklearn_papers.chem import GraphCache

    cache = GraphCache()
    rows = []

    def record(row):
        rows.append(row)
        best = "" if row["best_epoch"] is None else \
            f"  best held-out epoch {row['best_epoch']} of {row['n_epochs']}"
        print(f"{row['dataset']:9} seed {row['seed']} {row['arm']:22} "
              f"{row['score']:.3f}  fit CPU {row['cpu_s']:6.1f} s{best}", flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")

    for name in args.datasets:
        task = DATASETS[name]
        X, y = load(name)
        n_seeds = args.seeds if task == "regression" else args.scaffold_seeds
        for seed in range(n_seeds):
            train, test = split(name, X, y, seed)
            arms = [("ecfp4+linear", lambda: linear(task))]
            for model in args.models:
                for desc in (False, True):
                    arms.append((model + ("+descriptors" if desc else ""),
                                 lambda m=model, d=desc: make(m, task, d, seed, cache)))
            for arm, build in arms:
                est = build()
                start = time.process_time()
                est.fit(X[train], y[train])
                cpu = time.process_time() - start
                value = score(name, y[test], predictions(est, task, X[test]))
                curve = getattr(est, "validation_loss_curve_", None)
                record({"dataset": name, "seed": seed, "arm": arm, "score": value,
                        "cpu_s": cpu, "n_epochs": getattr(est, "n_iter_", None),
                        "best_epoch": None if not curve else int(np.argmin(curve)) + 1})
    summary(rows, args.models)


def summary(rows, models):
    from _molsplits import DATASETS

    print()
    print("data set  model   without       with          with vs without   "
          "ECFP4+linear  with vs ECFP4")
    for name in dict.fromkeys(r["dataset"] for r in rows):
        regression = DATASETS[name] == "regression"

        def mean(arm):
            vals = [r["score"] for r in rows if r["dataset"] == name and r["arm"] == arm]
            return (float(np.mean(vals)), len(vals)) if vals else (np.nan, 0)

        ecfp, _ = mean("ecfp4+linear")
        for model in models:
            (without, n0), (with_, n1) = mean(model), mean(model + "+descriptors")
            if regression:
                change = f"ratio {with_ / without:.3f}"
                versus = f"ratio {with_ / ecfp:.3f}"
            else:
                change = f"diff {with_ - without:+.3f}"
                versus = f"diff {with_ - ecfp:+.3f}"
            print(f"{name:9} {model:7} {without:.3f} (n={n0})  {with_:.3f} (n={n1})  "
                  f"{change:17} {ecfp:.3f}         {versus}")
    print()
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for model in models:
            for statement, a, b in claims(model):
                verdict = judge_rows(rows, name, statement, a, b)
                if verdict is not None:
                    print(f"{name:9} {statement:44} {verdict.short()}")


def claims(model):
    """``(statement, arm A, arm B)``: the claims "A beats B" judged for ``model``."""
    return ((f"{model}+descriptors beats {model}", model + "+descriptors", model),
            (f"{model}+descriptors beats ECFP4+linear", model + "+descriptors",
             "ecfp4+linear"))


def judge_rows(rows, name, statement, a, b):
    """The ``paired interval`` verdict of "A beats B" on data set ``name``, over the seeds
    both arms have (None when they share none)."""
    from _molsplits import DATASETS

    from sklearn_papers.reproduce._claims import Claim, judge

    def per_seed(arm):
        return {r["seed"]: r["score"] for r in rows if r["dataset"] == name and r["arm"] == arm}

    sa, sb = per_seed(a), per_seed(b)
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return None
    metric = "test RMSE" if DATASETS[name] == "regression" else "test ROC-AUC"
    claim = Claim(statement, metric, "paired interval",
                  higher_is_better=DATASETS[name] != "regression")
    return judge(claim, [sa[s] for s in seeds], [sb[s] for s in seeds])


if __name__ == "__main__":
    main()
