"""GROVER's defaults under scaffold cross-validation on ESOL, FreeSolv, BBBP and Tox21:
the frozen featurizer against ECFP4 through the same linear model, and GroverRegressor's
two heads side by side.

Folds: ``ScaffoldKFold(5, method="balanced", random_state=0)`` of every set (the protocol
of ``eval_grover_checkpoint.py``); scores: test RMSE (ESOL, FreeSolv) and ROC-AUC (BBBP;
Tox21: the mean over its 12 tasks of the labelled molecules), mean and standard deviation
over the folds.

Arms (``--arms``):

* ``ecfp4``: ``CircularFingerprint()`` (ECFP4, 2048 bits) then the linear model;
* ``featurizer``: ``GroverFeaturizer()`` at its defaults, fitted on each training fold,
  then the same linear model;
* ``featurizer-nofp``: ``GroverFeaturizer(fingerprint_bits=0)`` (the embedding and the
  descriptors, without the fingerprint branch), then the linear model;
* ``model-default``: ``GroverRegressor()`` at its defaults (regression sets only;
  ``head="ensemble"``, 30 epochs of fine-tuning);
* ``model-finetune``: ``GroverRegressor(head="finetune", max_epochs=60)`` (the
  fine-tuned network alone, 60 epochs);
* ``model-svr``: ``GroverRegressor(head="svr")``;
* ``model-ensemble``: ``GroverRegressor(head="ensemble", max_epochs=60)``, the mean of
  both heads with 60 epochs of fine-tuning. Its fit holds the other two heads' fits (its
  network is ``model-finetune``'s with the same ``random_state``, its SVR
  ``head="svr"``'s; ``tests/chem`` checks it), so each of its folds also logs the scores
  of its two heads as ``model-finetune`` and ``model-svr`` (their ``cpu`` is None: not
  timed alone) where those arms have no row. ``model-default`` logs its SVR head's
  score as ``model-svr`` the same way.

The linear model is ``eval_grover_checkpoint.py``'s: ``StandardScaler`` + ``RidgeCV`` for
regression, ``StandardScaler`` + ``LogisticRegression(C=0.1)`` per task for
classification. Stochastic arms (those with the fine-tuned network) run ``--seeds`` seeds per fold
(``random_state`` 0, 1, ...). A ``GraphCache`` shared by every arm of a data set
featurizes each molecule once. Each fold's score is appended to ``--log`` (JSON lines)
as soon as it is known, and the folds already there are skipped. One torch thread.

``--record featurizer`` writes ``benchmarks/results/grover_featurizer_scaffold.json``
(``featurizer`` and ``featurizer-nofp``, each as "ours" against ``ecfp4``); ``--record
models`` writes ``benchmarks/results/grover_heads_scaffold.json`` (``model-default``,
``model-svr`` and ``model-ensemble``, each as "ours" against ``model-finetune``); its
fits are in ``benchmarks/results/grover_heads_scaffold_fits.jsonl``, the ``--log`` of its
command.

Run: ``OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python
benchmarks/bench_grover_scaffold_defaults.py [--datasets esol ...] [--arms ecfp4
featurizer ...] [--seeds 3] --log grover_scaffold.jsonl [--record featurizer]``.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

ARMS = ("ecfp4", "featurizer", "featurizer-nofp", "model-default", "model-finetune",
        "model-svr", "model-ensemble")
#: Arms whose fits depend on ``random_state`` (the others run once per fold; the
#: regressor's default head, an SVR search, draws nothing).
STOCHASTIC = ("model-default", "model-finetune", "model-ensemble")
#: The heads whose scores an arm's fit logs as another arm's (the same model).
HEAD_ARMS = {"model-ensemble": ("model-finetune", "model-svr"),
             "model-default": ("model-svr",)}
UNITS = {"esol": "log(mol/L)", "freesolv": "kcal/mol", "bbbp": "ROC-AUC",
         "tox21": "ROC-AUC"}


def features(arm, cache):
    """The transformer of a featurizer arm."""
    from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer

    if arm == "ecfp4":
        return CircularFingerprint(verbose=0)
    params = {"fingerprint_bits": 0} if arm == "featurizer-nofp" else {}
    return GroverFeaturizer(graph_cache=cache, verbose=0, **params)


def model(arm, task, seed, cache):
    """The estimator of a model arm (a regressor)."""
    from sklearn_papers.chem import GroverRegressor

    if task != "regression":
        raise ValueError(f"the model arms are regressors: {arm!r} needs a regression set")
    cls = GroverRegressor
    params = {"model-default": {}, "model-finetune": {"head": "finetune", "max_epochs": 60},
              "model-svr": {"head": "svr"},
              "model-ensemble": {"head": "ensemble", "max_epochs": 60}}[arm]
    return cls(graph_cache=cache, random_state=seed, verbose=0, **params)


def run_fold(arm, name, task, X, y, train, test, seed, cache):
    """Score and fit CPU seconds of one arm on one fold, and ``{arm: score}`` of the
    heads an ensemble holds (empty for the other arms)."""
    from _molsplits import positive_proba, score
    from eval_grover_checkpoint import _fit_predict

    cpu = time.process_time()
    heads = {}
    if arm.startswith("model"):
        est = model(arm, task, seed, cache).fit(X[train], y[train])
        pred = est.predict(X[test]) if task == "regression" else \
            positive_proba(est, X[test])
        if arm in HEAD_ARMS:
            heads = {f"model-{h}": score(name, y[test], p)
                     for h, p in est._head_predictions(X[test]).items()
                     if f"model-{h}" in HEAD_ARMS[arm]}
    else:
        tr = features(arm, cache)
        F_train = tr.fit_transform(X[train])
        pred = _fit_predict(task, F_train, y[train], tr.transform(X[test]))
    return score(name, y[test], pred), time.process_time() - cpu, heads


def read_log(path):
    done = {}
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["dataset"], row["arm"], row["fold"], row["seed"]] = row
    return done


def table(done, datasets, arms):
    """``{(dataset, arm): (per-fold scores averaged over seeds, seed spread, CPU)}``: the
    seed spread is the mean, over the folds with several seeds, of the standard deviation
    over seeds (0 without)."""
    out = {}
    for name in datasets:
        for arm in arms:
            rows = [r for k, r in done.items() if k[0] == name and k[1] == arm]
            if not rows:
                continue
            folds = sorted({r["fold"] for r in rows})
            per_fold = [[r["score"] for r in rows if r["fold"] == f] for f in folds]
            several = [np.std(v) for v in per_fold if len(v) > 1]
            timed = [r["cpu"] for r in rows if r["cpu"] is not None]
            out[name, arm] = (np.array([np.mean(v) for v in per_fold]),
                              float(np.mean(several)) if several else 0.0,
                              float(np.mean(timed)) if timed else float("nan"))
    return out


def main(argv=None):
    from _molsplits import DATASETS, load

    from sklearn_papers.chem import GraphCache, ScaffoldKFold

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--arms", nargs="+", default=["ecfp4", "featurizer",
                                                      "featurizer-nofp"], choices=ARMS)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--log", default=None)
    parser.add_argument("--record", choices=("featurizer", "models"), default=None)
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    done = read_log(args.log)
    for name in [] if args.summary_only else args.datasets:
        task = DATASETS[name]
        X, y = load(name)
        folds = list(ScaffoldKFold(args.folds, method="balanced", random_state=0).split(X))
        cache = GraphCache()
        for arm in args.arms:
            seeds = range(args.seeds) if arm in STOCHASTIC else [0]
            for i, (train, test) in enumerate(folds):
                for seed in seeds:
                    if (name, arm, i, seed) in done:
                        continue
                    value, cpu, heads = run_fold(arm, name, task, X, y, train, test, seed,
                                                 cache)
                    rows = [{"dataset": name, "arm": arm, "fold": i, "seed": seed,
                             "score": float(value), "cpu": cpu}]
                    rows += [{"dataset": name, "arm": h, "fold": i,
                              "seed": seed if h in STOCHASTIC else 0, "score": float(v),
                              "cpu": None, "from": arm} for h, v in heads.items()
                             if (name, h, i, seed if h in STOCHASTIC else 0) not in done]
                    for row in rows:
                        done[name, row["arm"], i, row["seed"]] = row
                        cpu_text = "-" if row["cpu"] is None else f"{row['cpu']:6.1f}"
                        print(f"{name:9} {row['arm']:16} fold {i} seed {row['seed']}  "
                              f"{row['score']:.3f}  CPU {cpu_text} s", flush=True)
                        if args.log:
                            with open(args.log, "a") as fh:
                                fh.write(json.dumps(row) + "\n")
    scores = table(done, args.datasets, args.arms)
    print(f"\n{'data set':9} {'arm':16} {'mean':>7} {'fold std':>8} {'seed spread':>11} "
          f"{'CPU/fit':>8}")
    for (name, arm), (v, spread, cpu) in scores.items():
        print(f"{name:9} {arm:16} {v.mean():7.3f} {v.std(ddof=1):8.3f} {spread:11.3f} "
              f"{cpu:8.1f}")
    if args.record:
        record_rows(args, scores, argv, done)


def seed_counts(done, name, arm):
    """``fold: number of seeds`` of one arm on one data set, as text."""
    folds = sorted({k[2] for k in done if k[0] == name and k[1] == arm})
    return ", ".join(f"fold {f}: {sum(1 for k in done if k[:3] == (name, arm, f))}"
                     for f in folds)


def record_rows(args, scores, argv, done):
    from _molsplits import DATASETS
    from _record import record

    pairs = ([("featurizer", "ecfp4"), ("featurizer-nofp", "ecfp4")]
             if args.record == "featurizer" else [("model-default", "model-finetune"),
                                                   ("model-svr", "model-finetune"),
                                                   ("model-ensemble", "model-finetune")])
    rows = []
    labels = {"featurizer": "GroverFeaturizer()", "ecfp4": "ECFP4",
              "featurizer-nofp": "GroverFeaturizer(fingerprint_bits=0)",
              "model-default": "GroverRegressor()",
              "model-finetune": "GroverRegressor(head='finetune', max_epochs=60)",
              "model-svr": "GroverRegressor(head='svr')",
              "model-ensemble": "GroverRegressor(head='ensemble', max_epochs=60)"}
    for name in args.datasets:
        higher = DATASETS[name] == "classification"
        metric = "test ROC-AUC" if higher else "test RMSE"
        for a_arm, b_arm in pairs:
            if (name, a_arm) not in scores or (name, b_arm) not in scores:
                continue
            a, spread_a, _ = scores[name, a_arm]
            b, spread_b, _ = scores[name, b_arm]
            row = {"what": f"{name}, {labels[a_arm]} vs {labels[b_arm]}, {metric}",
                   "ours": float(a.mean()), "peer": float(b.mean()),
                   "unit": UNITS[name], "better": "higher" if higher else "lower"}
            if args.record == "featurizer":  # deterministic: the spread over folds
                row.update(ours_std=float(a.std(ddof=1)), peer_std=float(b.std(ddof=1)))
            else:  # the spread over seeds
                row.update(ours_std=spread_a, peer_std=spread_b)
            rows.append(row)
    if args.record == "featurizer":
        record("grover_featurizer_scaffold",
               title="GroverFeaturizer() at its defaults (ours) against ECFP4 (peer), each "
                     "through the same linear model, balanced scaffold 5-fold "
                     "cross-validation",
               peer="ECFP4 (CircularFingerprint(), 2048 bits)", rows=rows, argv=argv,
               notes="StandardScaler + RidgeCV for regression, StandardScaler + "
                     "LogisticRegression(C=0.1) per task for classification, fitted on "
                     "each training fold with the featurizer. Means (± sample std) over "
                     "the folds.")
    else:
        record("grover_heads_scaffold",
               title="GroverRegressor() at its defaults and its heads alone (ours) "
                     "against the fine-tuned network alone, "
                     "GroverRegressor(head='finetune', max_epochs=60) (peer), balanced "
                     "scaffold 5-fold cross-validation",
               peer="GroverRegressor(head='finetune', max_epochs=60)", rows=rows,
               argv=argv,
               notes="Means over the folds of the per-fold means over the seeds of the "
                     "stochastic arms (seeds per fold: " + "; ".join(
                         f"{name} {arm} {seed_counts(done, name, 'model-' + arm)}"
                         for name in args.datasets
                         for arm in ("default", "finetune", "ensemble")
                         if (name, "model-" + arm) in scores) + "); ± the seed spread: "
                     "the mean over folds with several seeds of the standard deviation "
                     "over seeds (0 for the deterministic SVR head and with one seed).")


if __name__ == "__main__":
    main()
