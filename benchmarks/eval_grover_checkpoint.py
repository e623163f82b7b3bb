"""Does a GROVER checkpoint meet the molecule targets? Frozen embeddings vs ECFP, scaffold CV.

For each data set (ESOL, FreeSolv: RMSE; BBBP, Tox21: ROC-AUC, Tox21 the mean over its 12
tasks of the labelled molecules) and each fold of ``ScaffoldKFold(n_splits, method=
"balanced", random_state=seed)``, the same linear model is fitted on ECFP4 (2048 bits,
``CircularFingerprint()``) and on the frozen embeddings of each checkpoint
(``GroverFeaturizer(pretrained=...)``, which trains nothing): ``StandardScaler`` +
``RidgeCV(alphas=logspace(-2, 3, 12))`` for regression, ``StandardScaler`` +
``LogisticRegression(C=0.1)`` for classification (one per Tox21 task). The embeddings do
not depend on the training molecules, so each checkpoint embeds every molecule once.
With ``--descriptors``, also RDKit's 217 2-D descriptors (CDF-normalized, the CDFs fitted on
each fold's training molecules) joined to each checkpoint's embeddings (what
``GroverFeaturizer(pretrained=..., descriptors=True)`` fitted on the training fold gives)
and to ECFP4, and alone; the raw descriptors of every molecule are computed once. Data sets
beyond the four of ``_molsplits.DATASETS``: ``photovoltaic`` and ``malaria``;
``--max-molecules N`` draws N molecules of a larger set (seeded, printed).
With ``--finetune``, ``GroverRegressor`` / ``GroverClassifier`` at their defaults from each
checkpoint and from scratch (``pretrained=None``, same architecture) on the same folds
(slow: one fine-tuning per fold).

Usage (``moses-small`` is the shipped checkpoint; a folder is any ``save``-d one, e.g.
``STATE_DIR/checkpoint`` of a resumable pretraining)::

    python benchmarks/eval_grover_checkpoint.py moses-small STATE_DIR/checkpoint \
        --datasets esol freesolv bbbp tox21 --folds 5

It prints one table row per data set and model (mean and standard deviation over the
folds) and, per checkpoint, whether it beats ECFP (and scratch) on every data set: holds,
does not hold or inconclusive by the reports' ``paired interval`` rule over the folds
(``sklearn_papers.reproduce._claims``).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_papers.reproduce._claims import Claim, judge

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _linear(task):
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "regression":
        return make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 3, 12)))
    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))


def _fit_predict(task, F_train, y_train, F_test):
    """Predictions on ``F_test`` (regression values, or P(label 1) per task)."""
    if task == "regression":
        return _linear(task).fit(F_train, y_train).predict(F_test)
    Y = y_train.reshape(len(y_train), -1)
    out = np.full((len(F_test), Y.shape[1]), np.nan)
    for t in range(Y.shape[1]):
        seen = ~np.isnan(Y[:, t])
        if len(np.unique(Y[seen, t])) == 2:
            out[:, t] = _linear(task).fit(F_train[seen], Y[seen, t]).predict_proba(
                F_test)[:, 1]
    return out if Y.shape[1] > 1 else out[:, 0]


def main(argv=None):
    """Run the comparison and print the table.

    Parameters
    ----------
    argv : list of str, default=None

    Returns
    -------
    results : dict
        ``{dataset: {model: [score per fold]}}``.
    """
    import torch

    from _molsplits import DATASETS, TASKS, load, positive_proba, score
    from sklearn_papers.chem import (
        CircularFingerprint,
        GroverClassifier,
        GroverFeaturizer,
        GroverRegressor,
        ScaffoldKFold,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--finetune", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--descriptors", action="store_true")
    parser.add_argument("--max-molecules", type=int, default=None)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/grover_frozen.json (the first "
                             "checkpoint's frozen embeddings, with and without the "
                             "descriptors, against ECFP4 on every data set)")
    args = parser.parse_args(argv)
    if args.record and not args.descriptors:
        parser.error("--record needs --descriptors (the recorded rows compare both)")
    DATASETS = TASKS  # noqa: N806 - every named set, with its task
    torch.set_num_threads(1)
    results = {}
    for name in args.datasets:
        task = DATASETS[name]
        X, y = load(name)
        if args.max_molecules and len(X) > args.max_molecules:
            keep = np.sort(np.random.RandomState(args.seed).choice(
                len(X), args.max_molecules, replace=False))
            print(f"[{name}] {args.max_molecules} of {len(X)} molecules drawn "
                  f"(seed {args.seed})", file=sys.stderr, flush=True)
            X, y = X[keep], y[keep]
        t = time.perf_counter()
        feats = {"ECFP4": CircularFingerprint(n_jobs=args.n_jobs).fit_transform(X)}
        for ckpt in args.checkpoints:
            feats[f"GROVER {ckpt}"] = GroverFeaturizer(
                pretrained=ckpt, descriptors=False, n_jobs=args.n_jobs).fit(X[:1]).transform(X)
        raw = None
        if args.descriptors:
            from sklearn_papers.chem import RDKitDescriptors

            raw = RDKitDescriptors(normalize=None, n_jobs=args.n_jobs).fit_transform(X)
            names = RDKitDescriptors()._names()
        print(f"[{name}] featurized {len(X)} molecules in {time.perf_counter() - t:.0f} s",
              file=sys.stderr, flush=True)
        folds = list(ScaffoldKFold(args.folds, method="balanced",
                                   random_state=args.seed).split(X))
        scores = {model: [] for model in feats}
        for train, test in folds:
            fold_feats = dict(feats)
            if raw is not None:
                # the CDFs of the training fold, as fit(X[train]) learns them
                desc = RDKitDescriptors()._fit_raw(raw[train], names)._output(
                    raw, np.ones(len(raw), dtype=bool))
                fold_feats["descriptors"] = desc
                for model, F in feats.items():
                    fold_feats[f"{model} + descriptors"] = np.hstack([F, desc])
            for model, F in fold_feats.items():
                pred = _fit_predict(task, F[train], y[train], F[test])
                scores.setdefault(model, []).append(score(name, y[test], pred))
        if args.finetune:
            est_cls = GroverRegressor if task == "regression" else GroverClassifier
            for pretrained in list(args.checkpoints) + [None]:
                arch = {}
                if pretrained is None:  # scratch: the first checkpoint's architecture
                    from sklearn_papers.chem import load_grover_checkpoint

                    params = load_grover_checkpoint(args.checkpoints[0])[0]["params"]
                    arch = {k: params[k] for k in ("hidden_size", "n_layers", "n_heads",
                                                   "depth")}
                model = f"fine-tuned {pretrained or 'scratch'}"
                scores[model] = []
                for i, (train, test) in enumerate(folds):
                    head = {"head": "finetune"} if est_cls is GroverRegressor else {}
                    est = est_cls(pretrained=pretrained, random_state=i, **arch, **head)
                    est.fit(X[train], y[train])
                    pred = est.predict(X[test]) if task == "regression" else \
                        positive_proba(est, X[test])
                    scores[model].append(score(name, y[test], pred))
                    print(f"[{name}] {model} fold {i}: {scores[model][-1]:.3f}",
                          file=sys.stderr, flush=True)
        results[name] = scores
        print(f"[{name}] " + "; ".join(f"{m} {np.mean(v):.3f}" for m, v in scores.items())
              + f" ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    metric = {"regression": "RMSE (lower is better)",
              "classification": "ROC-AUC (higher is better)"}
    print(f"\nScaffoldKFold({args.folds}, balanced, random_state={args.seed}); mean (std) "
          "over folds\n")
    print("| data set | metric | model | score |\n|---|---|---|---|")
    for name, scores in results.items():
        for model, values in scores.items():
            print(f"| {name} | {metric[DATASETS[name]]} | {model} | {np.mean(values):.3f} "
                  f"({np.std(values):.3f}) |")
    print()
    for ckpt in args.checkpoints:
        for ours, other, label in (
                (f"GROVER {ckpt}", "ECFP4", "frozen embeddings beat ECFP4"),
                (f"GROVER {ckpt} + descriptors", "ECFP4",
                 "frozen embeddings + descriptors beat ECFP4"),
                (f"GROVER {ckpt} + descriptors", "ECFP4 + descriptors",
                 "frozen embeddings + descriptors beat ECFP4 + descriptors"),
                (f"fine-tuned {ckpt}", "fine-tuned scratch", "fine-tuning beats scratch")):
            verdicts = []
            for name, scores in results.items():
                if ours not in scores or other not in scores:
                    continue
                # paired by fold, judged by the reports' shared rule
                claim = Claim(f"{ours} beats {other}", "score", "paired interval",
                              higher_is_better=DATASETS[name] == "classification",
                              unit="folds")
                verdicts.append((name, judge(claim, scores[ours], scores[other])))
            if verdicts:
                print(f"{ckpt}: {label} on " + "; ".join(
                    f"{n} {v.short()}" for n, v in verdicts))
    if args.record:
        _record_results(results, args, DATASETS, argv)
    return results


#: Unit of each data set's score in the recorded rows.
_UNITS = {"esol": "log(mol/L)", "freesolv": "kcal/mol", "photovoltaic": "%",
          "malaria": "ln(uM)", "bbbp": "ROC-AUC", "tox21": "ROC-AUC"}


def _record_results(results, args, tasks, argv):
    """``benchmarks/results/grover_frozen.json``: per data set, the first checkpoint's
    frozen embeddings (alone and with the descriptors) against ECFP4, each through the
    same linear model; the verdicts of the paired interval rule over the folds in the
    notes."""
    from _record import record

    ckpt = args.checkpoints[0]
    rows, verdicts = [], []
    for name, scores in results.items():
        higher = tasks[name] == "classification"
        metric = "test ROC-AUC" if higher else "test RMSE"
        for ours in (f"GROVER {ckpt}", f"GROVER {ckpt} + descriptors"):
            a, b = np.asarray(scores[ours]), np.asarray(scores["ECFP4"])
            rows.append({"what": f"{name}, {ours} vs ECFP4, {metric}", "ours": float(a.mean()),
                         "peer": float(b.mean()), "ours_std": float(a.std(ddof=1)),
                         "peer_std": float(b.std(ddof=1)), "unit": _UNITS.get(name, "score"),
                         "better": "higher" if higher else "lower"})
            claim = Claim(f"{ours} beats ECFP4", "score", "paired interval",
                          higher_is_better=higher, unit="folds")
            verdicts.append(f"{name}, {ours}: {judge(claim, a, b).short()}")
    record("grover_frozen",
           title=f"Frozen GroverFeaturizer(pretrained={ckpt!r}) embeddings, alone and with "
                 "RDKit's 2-D descriptors joined (ours), against ECFP4 (peer), each through "
                 "the same linear model, balanced scaffold "
                 f"{args.folds}-fold cross-validation",
           peer="ECFP4 (CircularFingerprint(), 2048 bits)",
           rows=rows, argv=argv,
           notes="StandardScaler + RidgeCV for regression, StandardScaler + "
                 "LogisticRegression(C=0.1) per task for classification; the descriptors' "
                 "CDFs are fitted on each training fold. Means (± sample std) over the "
                 f"folds (seed {args.seed}"
                 + (f"; at most {args.max_molecules} molecules per set, a seeded draw"
                    if args.max_molecules else "")
                 + "). Beats ECFP4, paired interval rule over the folds: "
                 + "; ".join(verdicts) + ".")


if __name__ == "__main__":
    main()
