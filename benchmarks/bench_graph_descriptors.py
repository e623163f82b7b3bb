"""Graph estimators with and without RDKit descriptors joined to the readout, beside chemprop.

The arms (``--arms``; by default ``ecfp4+linear mpnn mpnn+descriptors``):

* ``mpnn``, ``nf``, ``grover``: ``MPNN*``, ``NeuralFingerprint*`` and ``Grover*`` at their
  defaults; with ``+descriptors``, ``descriptors=True`` (RDKit's 217 2-D descriptors
  through CDFs fitted on the training molecules, joined to the readout before the head,
  as chemprop's ``rdkit_2d_normalized`` and GROVER's fine-tuning do);
* ``ecfp4+linear``: ECFP4 (2048 bits) + ``RidgeCV`` (regression) or ``LogisticRegression``
  (classification);
* ``chemprop``: chemprop 2 at its defaults, as ``bench_quality.py`` fits it (D-MPNN,
  hidden 300, depth 3, 50 epochs, the checkpoint of the best epoch on 10 % of the
  training molecules); ``chemprop+descriptors``: the same with its
  ``v1_rdkit_2d_normalized`` molecule features (descriptastorus' 200 CDF-normalized
  RDKit 2-D descriptors) joined before its FFN, as its CLI's ``--molecule-featurizers
  v1_rdkit_2d_normalized`` does. They need the ``bench`` extra.

The splits of the quality comparisons (``benchmarks/_molsplits.py``): ESOL and FreeSolv
random 80/20 (``--seeds`` seeds), BBBP and Tox21 balanced scaffold 80/20
(``--scaffold-seeds`` seeds); test RMSE (lower is better) or ROC-AUC (higher is better;
Tox21: the mean over its 12 tasks). Torch runs on one thread, one fit at a time; each fit
featurizes its own molecules (graphs and descriptors, no cache shared between fits), as
chemprop's does, so the fit CPU times (``time.process_time``) compare.

Run: ``python benchmarks/bench_graph_descriptors.py [--arms ...] [--datasets esol freesolv
bbbp tox21] [--seeds 3] [--scaffold-seeds 1] [--first-seed 0] [--out rows.jsonl]
[--record]``. Each fit
prints a row as it ends (score, fit CPU seconds, best held-out epoch of the epochs run) and
appends it to ``--out``; fits already in ``--out`` are not repeated (a run resumes, and
more seeds can be added later). The summary at the end gives, per data set, each arm's
mean +- sample standard deviation over seeds and mean fit CPU seconds; the claims "with
descriptors beats without" and "with descriptors beats ECFP4 + the linear model" per
model; and, with chemprop, the target "the best of ours with descriptors beats
chemprop-with-descriptors, at no more than its fit CPU time", judged per data set by the
reports' ``paired interval`` rule over the seeds both arms have
(``sklearn_papers.reproduce._claims``: holds, does not hold or inconclusive; one seed is
always inconclusive). ``--summary rows.jsonl`` prints the summary of recorded rows without
fitting; ``--record`` writes it to ``benchmarks/results/graph_descriptors.json`` (our arms
with descriptors against chemprop with descriptors, and against chemprop at its
defaults). The rows of the recorded result, one per fit, are kept beside it in
``benchmarks/results/graph_descriptors_rows.jsonl``: ``--summary`` re-judges them, and
``--out`` with that file adds seeds, arms or data sets without refitting the others.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

MODELS = ("mpnn", "nf", "grover")
ARMS = ("ecfp4+linear", "chemprop", "chemprop+descriptors",
        *(m + d for m in MODELS for d in ("", "+descriptors")))
PEER = "chemprop+descriptors"
NAMES = {"esol": "ESOL", "freesolv": "FreeSolv", "bbbp": "BBBP", "tox21": "Tox21"}


def make(model, task, descriptors, seed):
    from sklearn_papers import chem

    classes = {
        "mpnn": (chem.MPNNRegressor, chem.MPNNClassifier),
        "nf": (chem.NeuralFingerprintRegressor, chem.NeuralFingerprintClassifier),
        "grover": (chem.GroverRegressor, chem.GroverClassifier),
    }[model]
    cls = classes[0] if task == "regression" else classes[1]
    # GroverRegressor: the fine-tuned network (descriptors joined to its readout), with
    # the epochs of the recorded rows
    head = {"head": "finetune", "max_epochs": 60} if cls is chem.GroverRegressor else {}
    return cls(descriptors=descriptors, random_state=seed, **head)


def linear(task):
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint

    head = (RidgeCV(alphas=np.logspace(-2, 3, 11)) if task == "regression"
            else LogisticRegression(max_iter=2000))
    return make_pipeline(CircularFingerprint(), head)


def fit_ours(arm, name, X, y, train, test, seed):
    """Fit one of our arms; ``(score, CPU s, epochs run, best held-out epoch)``."""
    from _molsplits import DATASETS, positive_proba, score

    task = DATASETS[name]
    if arm == "ecfp4+linear":
        est = linear(task)
    else:
        model, _, desc = arm.partition("+")
        est = make(model, task, bool(desc), seed)
    start = time.process_time()
    est.fit(X[train], y[train])
    cpu = time.process_time() - start
    pred = est.predict(X[test]) if task == "regression" else (
        est.predict_proba(X[test])[:, 1] if arm == "ecfp4+linear"
        else positive_proba(est, X[test]))
    curve = getattr(est, "validation_loss_curve_", None)
    return (score(name, y[test], pred), cpu, getattr(est, "n_iter_", None),
            None if not curve else int(np.argmin(curve)) + 1)


def fit_chemprop(arm, name, X, y, train, test, seed):
    from bench_quality import _fit_chemprop

    value, _, cpu, what = _fit_chemprop(name, X, y, train, test, seed,
                                        descriptors=arm == PEER)
    return value, cpu, what["params"]["max_epochs"], what["params"]["best_epoch"]


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", nargs="+", default=["ecfp4+linear", "mpnn",
                                                      "mpnn+descriptors"], choices=ARMS)
    parser.add_argument("--datasets", nargs="+", default=["esol", "freesolv", "bbbp"],
                        choices=list(NAMES))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scaffold-seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="fit seeds first-seed, first-seed + 1, ... (several processes "
                             "can share the seeds of one run, each with its own --out)")
    parser.add_argument("--out", default=None,
                        help="append one JSON line per fit; fits already there are skipped")
    parser.add_argument("--summary", default=None, metavar="ROWS",
                        help="print the summary of a --out file and exit")
    parser.add_argument("--record", action="store_true",
                        help="write the summary to benchmarks/results/graph_descriptors.json")
    args = parser.parse_args(argv)
    if args.summary:
        rows = read_rows(args.summary)
        summary(rows)
        if args.record:  # recorded with the command that fits (and resumes) these rows
            record_rows(rows, fitting_argv(rows, args.summary))
        return

    import torch

    torch.set_num_threads(1)
    from _molsplits import DATASETS, load, split
    from _peers import import_chemprop

    if any(a.startswith("chemprop") for a in args.arms):
        chemprop, note = import_chemprop()
        if chemprop is None:
            raise SystemExit(f"chemprop arms asked for, but {note}")
    rows = read_rows(args.out) if args.out and os.path.exists(args.out) else []
    done = {(r["dataset"], r["seed"], r["arm"]) for r in rows}

    for name in args.datasets:
        task = DATASETS[name]
        X, y = load(name)
        n_seeds = args.seeds if task == "regression" else args.scaffold_seeds
        for seed in range(args.first_seed, args.first_seed + n_seeds):
            train, test = split(name, X, y, seed)
            for arm in args.arms:
                # the linear arm is single-task: Tox21's 12 tasks with missing labels skip it
                if (name, seed, arm) in done or (arm == "ecfp4+linear" and y.ndim > 1):
                    continue
                fit = fit_chemprop if arm.startswith("chemprop") else fit_ours
                value, cpu, n_epochs, best = fit(arm, name, X, y, train, test, seed)
                row = {"dataset": name, "seed": seed, "arm": arm, "score": value,
                       "cpu_s": cpu, "n_epochs": n_epochs, "best_epoch": best}
                rows.append(row)
                epochs = "" if best is None else \
                    f"  best held-out epoch {best} of {n_epochs}"
                print(f"{name:9} seed {seed} {arm:22} {value:.3f}  fit CPU {cpu:6.1f} s"
                      f"{epochs}", flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
    summary(rows)
    if args.record:
        record_rows(rows, argv)


def fitting_argv(rows, path):
    """The arguments of the run that fits ``rows`` (read from ``path``), resuming them."""
    from _molsplits import DATASETS

    names = [n for n in NAMES if any(r["dataset"] == n for r in rows)]

    def n_seeds(task):
        return max([r["seed"] + 1 for r in rows if DATASETS[r["dataset"]] == task],
                   default=0)

    argv = ["--arms", *[a for a in ARMS if any(r["arm"] == a for r in rows)],
            "--datasets", *names]
    if n_seeds("regression"):
        argv += ["--seeds", str(n_seeds("regression"))]
    if n_seeds("classification"):
        argv += ["--scaffold-seeds", str(n_seeds("classification"))]
    return argv + ["--out", Path(path).name, "--record"]


def scores(rows, name, arm):
    """``{seed: row}`` of ``arm`` on data set ``name``."""
    return {r["seed"]: r for r in rows if r["dataset"] == name and r["arm"] == arm}


def best_ours(rows, name):
    """Our arm with descriptors of the best mean score on ``name`` (None if none)."""
    from _molsplits import DATASETS

    ours = [a for a in ARMS if a.endswith("+descriptors") and a != PEER
            and scores(rows, name, a)]
    if not ours:
        return None
    sign = -1 if DATASETS[name] == "regression" else 1
    return max(ours, key=lambda a: sign * np.mean([r["score"] for r in
                                                   scores(rows, name, a).values()]))


def target(rows, name):
    """``(best arm, quality verdict, CPU s of best, CPU s of the peer, seeds)`` of the
    target "the best of ours with descriptors beats chemprop-with-descriptors, at no more
    than its fit CPU time" over the seeds both have; None without both."""
    best = best_ours(rows, name)
    if best is None or not scores(rows, name, PEER):
        return None
    sa, sb = scores(rows, name, best), scores(rows, name, PEER)
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return None
    verdict = judge_rows(rows, name, f"{best} beats {PEER}", best, PEER)
    cpu_a = float(np.mean([sa[s]["cpu_s"] for s in seeds]))
    cpu_b = float(np.mean([sb[s]["cpu_s"] for s in seeds]))
    return best, verdict, cpu_a, cpu_b, seeds


def summary(rows):
    from _molsplits import DATASETS, mean_std

    for name in dict.fromkeys(r["dataset"] for r in rows):
        metric = "test RMSE" if DATASETS[name] == "regression" else "test ROC-AUC"
        print(f"\n{name} ({metric}; mean +- sample std over seeds; mean fit CPU s; "
              "mean best held-out epoch / epochs run)")
        for arm in ARMS:
            per = scores(rows, name, arm)
            if not per:
                continue
            mu, sd = mean_std([r["score"] for r in per.values()])
            cpu = np.mean([r["cpu_s"] for r in per.values()])
            epochs = [(r["best_epoch"], r["n_epochs"]) for r in per.values()
                      if r.get("best_epoch") is not None]
            at = "" if not epochs else \
                f"  epoch {np.mean([e[0] for e in epochs]):.1f} / " \
                f"{np.mean([e[1] for e in epochs]):.1f}"
            print(f"  {arm:22} {mu:.3f} +- {sd:.3f} (n={len(per)})  CPU {cpu:7.1f} s{at}")
        for model in MODELS:
            for statement, a, b in claims(model):
                verdict = judge_rows(rows, name, statement, a, b)
                if verdict is not None:
                    print(f"  {statement:48} {verdict.short()}")
        outcome = target(rows, name)
        if outcome is not None:
            best, verdict, cpu_a, cpu_b, seeds = outcome
            print(f"  target (seeds {' '.join(map(str, seeds))}): {best} beats {PEER}: "
                  f"{verdict.short()}; fit CPU {cpu_a:.0f} s vs {cpu_b:.0f} s: "
                  f"{'yes' if cpu_a <= cpu_b else 'NO'}")


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

    sa, sb = scores(rows, name, a), scores(rows, name, b)
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return None
    metric = "test RMSE" if DATASETS[name] == "regression" else "test ROC-AUC"
    claim = Claim(statement, metric, "paired interval",
                  higher_is_better=DATASETS[name] != "regression")
    return judge(claim, [sa[s]["score"] for s in seeds], [sb[s]["score"] for s in seeds])


def record_rows(rows, argv):
    """Write ``benchmarks/results/graph_descriptors.json``: per data set, each of our arms
    with descriptors against chemprop with descriptors (score, fit CPU time) and against
    chemprop at its defaults (score), over the seeds both have; the targets' verdicts in
    the notes."""
    from _molsplits import DATASETS
    from _peers import import_chemprop
    from _record import record

    chemprop = import_chemprop()[0]
    out, verdicts = [], []
    for name in NAMES:
        if not any(r["dataset"] == name for r in rows):
            continue
        regression = DATASETS[name] == "regression"
        metric, unit = ("test RMSE", "log units" if name == "esol" else "kcal/mol") \
            if regression else ("test ROC-AUC", "ROC-AUC")
        better = "lower" if regression else "higher"
        for peer in (PEER, "chemprop"):
            for arm in ARMS:
                if not arm.endswith("+descriptors") or arm == PEER:
                    continue
                sa, sb = scores(rows, name, arm), scores(rows, name, peer)
                seeds = sorted(set(sa) & set(sb))
                if not seeds:
                    continue
                a = np.array([sa[s]["score"] for s in seeds])
                b = np.array([sb[s]["score"] for s in seeds])
                what = f"{NAMES[name]}, {arm}, vs {peer}, {len(seeds)} seed" \
                    + ("s" if len(seeds) > 1 else "")
                std = {"ours_std": a.std(ddof=1), "peer_std": b.std(ddof=1)} \
                    if len(seeds) > 1 else {}
                out.append({"what": f"{what}, {metric}", "ours": a.mean(),
                            "peer": b.mean(), "unit": unit, "better": better, **std})
                out.append({"what": f"{what}, fit CPU time",
                            "ours": np.mean([sa[s]["cpu_s"] for s in seeds]),
                            "peer": np.mean([sb[s]["cpu_s"] for s in seeds]),
                            "unit": "s", "better": "lower"})
        outcome = target(rows, name)
        if outcome is not None:
            best, verdict, cpu_a, cpu_b, seeds = outcome
            mean_a = np.mean([scores(rows, name, best)[s]["score"] for s in seeds])
            mean_b = np.mean([scores(rows, name, PEER)[s]["score"] for s in seeds])
            verdicts.append(f"{NAMES[name]} ({len(seeds)} seed{'s' * (len(seeds) > 1)}): "
                            f"{best} (mean {mean_a:.3f} vs {mean_b:.3f}) beats {PEER} "
                            f"{verdict.short()}, fit CPU {cpu_a:.0f} s vs {cpu_b:.0f} s")
    notes = ("Means over seeds (± sample std) of the test score and the fit CPU seconds "
             "(one torch thread, each fit featurizing its molecules); ESOL and FreeSolv "
             "random 80/20, BBBP and Tox21 balanced scaffold 80/20. Target, the best of "
             "ours with descriptors beating chemprop with its v1_rdkit_2d_normalized "
             "features by the paired interval rule over seeds, at no more than its fit "
             "CPU time: " + "; ".join(verdicts) + ".")
    version = getattr(chemprop, "__version__", "unknown") if chemprop else "unknown"
    record("graph_descriptors",
           title="Graph estimators with RDKit descriptors joined to the readout against "
                 "chemprop with its RDKit 2-D features",
           peer=f"chemprop {version} (--molecule-featurizers v1_rdkit_2d_normalized; "
                "rows 'vs chemprop': at its defaults)",
           rows=out, argv=argv, notes=notes)


if __name__ == "__main__":
    main()
