"""Fine-tuning GROVER from a shipped checkpoint against training it from scratch.

The target for a shipped checkpoint: "fine-tuning from the checkpoint beats
training from scratch on each" of ESOL, FreeSolv, BBBP and Tox21. On the splits of
``_molsplits`` (the ones ``bench_quality.py`` uses: ESOL and FreeSolv random 80/20, test
RMSE; BBBP and Tox21 balanced scaffold 80/20, test ROC-AUC, Tox21 the mean over its 12
tasks), for each seed, in one process, one torch thread, ``GroverRegressor`` /
``GroverClassifier`` at their defaults (``random_state=seed``) is fitted on the training
part four ways:

* ``moses-small``: ``pretrained="moses-small"`` (the default; hidden 64, 1 block per view,
  pretrained on 15k MOSES molecules);
* ``scratch-small``: ``pretrained=None`` with ``moses-small``'s architecture;
* ``moses-176k``: ``pretrained="moses-176k"`` (hidden 144, 2 blocks per view, one epoch
  over the 176k bundled MOSES molecules);
* ``scratch-176k``: ``pretrained=None`` with ``moses-176k``'s architecture.

The architecture of a scratch model is read from its checkpoint's ``config.json``; every
other parameter is the estimator's default, so each pair differs only in the starting
weights.

One JSON line per (model, data set, seed) is appended to ``--out`` as soon as it is
measured (score, wall and CPU seconds of the fit, the parameters, the commit, the load);
lines already there (read again before each fit) are skipped, so the run resumes and
several processes (e.g. one per data set) may append to one file. At the end (or with ``--summary``)
one table per data set: per model the mean score +- the sample standard deviation over
seeds, the per-seed scores and the mean wall and CPU seconds of a fit; then per checkpoint
a verdict over the seeds both it and its scratch twin have, by the reports' shared rule
(``paired interval``, ``sklearn_papers.reproduce._claims``): fine-tuning beats scratch when
the 90 % interval of its per-seed advantage (lower RMSE, higher ROC-AUC) lies above 0, does
not when it lies at or below 0, and the run is inconclusive otherwise. The
CPU seconds are ``time.process_time()`` of the fit with one torch thread; on a loaded
machine they are a steadier measure than the wall time.

Run (hours on a shared 2-core machine: niced, in the background; ESOL and FreeSolv first)::

    nice -n 10 .venv/bin/python benchmarks/bench_grover_finetune.py \\
        --datasets esol freesolv --out /tmp/grover_finetune.jsonl
    nice -n 10 .venv/bin/python benchmarks/bench_grover_finetune.py \\
        --datasets bbbp tox21 --out /tmp/grover_finetune.jsonl
    .venv/bin/python benchmarks/bench_grover_finetune.py --summary \\
        --out /tmp/grover_finetune.jsonl
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_papers.reproduce._claims import Claim, judge

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _molsplits import DATASETS, load, split  # noqa: E402
from _molsplits import commit as _commit  # noqa: E402
from _molsplits import fit_and_score  # noqa: E402
from _molsplits import mean_std as _stats  # noqa: E402

#: Model name -> (checkpoint whose weights start the fit or None, checkpoint whose
#: architecture the model has).
MODELS = {"moses-small": ("moses-small", "moses-small"),
          "scratch-small": (None, "moses-small"),
          "moses-176k": ("moses-176k", "moses-176k"),
          "scratch-176k": (None, "moses-176k")}
#: Fine-tuned model -> its from-scratch twin.
PAIRS = {"moses-small": "scratch-small", "moses-176k": "scratch-176k"}
_ARCH = ("hidden_size", "n_layers", "n_heads", "depth")


def architecture(checkpoint):
    """``hidden_size``, ``n_layers``, ``n_heads`` and ``depth`` of a shipped checkpoint."""
    from importlib.resources import files

    path = Path(str(files("sklearn_papers.chem") / "_pretrained" / checkpoint)) / "config.json"
    params = json.loads(path.read_text())["params"]
    return {k: int(params[k]) for k in _ARCH}


def estimator(model, task, seed):
    """The estimator of ``model`` (a key of :data:`MODELS`) at its defaults."""
    from sklearn_papers.chem import GroverClassifier, GroverRegressor

    start, arch = MODELS[model]
    cls = GroverRegressor if task == "regression" else GroverClassifier
    params = {"pretrained": start, "random_state": seed}
    if cls is GroverRegressor:  # the fine-tuned network, not the default SVR head
        params["head"] = "finetune"
    if start is None:
        params.update(architecture(arch))
    return cls(**params)


def fit_one(model, name, X, y, train, test, seed):
    """``(score, wall seconds, CPU seconds, what)`` of one fit on the training part.

    A fit that diverges (``FloatingPointError``: its training loss became NaN) gives score
    None, the seconds it ran and ``what["error"]``, the estimator's message."""
    est = estimator(model, DATASETS[name], seed)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        value, seconds, cpu, params = fit_and_score(est, name, X, y, train, test)
    except FloatingPointError as exc:
        return None, time.perf_counter() - wall0, time.process_time() - cpu0, {
            "class": type(est).__name__, "params": est.get_params(), "error": str(exc)}
    return value, seconds, cpu, {
        "class": type(est).__name__, "params": params, "n_iter": int(est.n_iter_)}


def _rows(out):
    out = Path(out)
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def run(args):
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    commit = _commit()
    for name in args.datasets:
        X, y = load(name)
        for seed in args.seeds:
            train, test = split(name, X, y, seed)
            for model in args.models:
                # read before each fit: another process may append to the same file
                if (model, name, seed) in {(r["model"], r["dataset"], r["seed"])
                                           for r in _rows(out)}:
                    continue
                load_before = os.getloadavg()[0]
                value, seconds, cpu, what = fit_one(model, name, X, y, train, test, seed)
                row = {"model": model, "dataset": name, "seed": seed, "score": value,
                       "metric": "rmse" if DATASETS[name] == "regression" else "roc_auc",
                       "fit_seconds": seconds, "cpu_seconds": cpu, **what,
                       "n_train": int(len(train)), "n_test": int(len(test)),
                       "commit": commit, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                   time.gmtime()),
                       "load_1min": [load_before, os.getloadavg()[0]]}
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps({k: v for k, v in row.items() if k != "params"}),
                      flush=True)
    summary(args)


def verdict(name, per, tuned):
    """Whether fine-tuning ``tuned`` beats its scratch twin on ``name``, as text, or None
    when no seed has both. ``per[model][seed] = (score, wall s, CPU s)``."""
    scratch = PAIRS[tuned]
    if tuned not in per or scratch not in per:
        return None
    seeds = sorted(set(per[tuned]) & set(per[scratch]))
    if not seeds:
        return None
    higher = DATASETS[name] != "regression"
    # a diverged fit (score None) loses its seed; the means are over the seeds both finished
    diverged = {m: [s for s in seeds if per[m][s][0] is None] for m in (tuned, scratch)}
    def seed_won(s):
        a, b = per[tuned][s][0], per[scratch][s][0]
        if a is None or b is None:
            return b is None and a is not None
        return a > b if higher else a < b

    won = np.array([seed_won(s) for s in seeds])
    wins = int(np.sum(won))
    both = [s for s in seeds if per[tuned][s][0] is not None and per[scratch][s][0] is not None]
    if not both:
        return (f"{name}: no seed where both {tuned} and {scratch} finished (diverged: "
                + "; ".join(f"{m} on seeds {v}" for m, v in diverged.items() if v) + ")")
    a = np.array([per[tuned][s][0] for s in both])
    b = np.array([per[scratch][s][0] for s in both])
    judged = judge(Claim(f"fine-tuning from {tuned} beats scratch", "score", "paired interval",
                         higher_is_better=higher), a, b)
    cpu = np.mean([per[tuned][s][2] for s in both]) / np.mean(
        [per[scratch][s][2] for s in both])
    note = "".join(f"; {m} diverged (training loss NaN) on seed(s) "
                   f"{' '.join(map(str, v))}, a seed it loses" for m, v in diverged.items() if v)
    means = "" if len(both) == len(seeds) else f" on seeds {' '.join(map(str, both))}"
    return (f"{name}: fine-tuning from {tuned} beats scratch: {judged.outcome.upper()} "
            f"[{judged.short()}] ({a.mean():.3f} vs {b.mean():.3f}{means}, "
            f"{'+' if (a.mean() > b.mean()) else '-'}{abs(a.mean() - b.mean()):.3f}; "
            f"wins {wins} of {len(seeds)} seeds"
            f" ({' '.join(str(s) for s, w in zip(seeds, won) if w) or 'none'} of "
            f"{' '.join(map(str, seeds))}); "
            f"CPU time ratio {cpu:.2f}{note})"
            + ("" if len(seeds) >= 3 else " [PARTIAL: fewer than 3 seeds]"))


def _mean_of_finished(by_seed, k):
    """Mean of entry ``k`` (1: wall s, 2: CPU s) over the seeds whose fit finished."""
    done = [v[k] for v in by_seed.values() if v[0] is not None]
    return np.mean(done) if done else float("nan")


def summary(args):
    """Print one table per data set and the verdicts."""
    rows = _rows(args.out)
    verdicts = []
    for name in [d for d in DATASETS if any(r["dataset"] == d for r in rows)]:
        metric = "RMSE, lower is better" if DATASETS[name] == "regression" else \
            "ROC-AUC, higher is better"
        per = {}
        for r in rows:
            if r["dataset"] == name:
                per.setdefault(r["model"], {})[r["seed"]] = (
                    r["score"], r["fit_seconds"], r["cpu_seconds"])
        print(f"\n{name} (test {metric}; mean +- sample std over seeds; mean fit seconds)")
        print("| model (defaults) | score | per seed | wall s | CPU s |")
        print("|---|---|---|---|---|")
        for m in [m for m in MODELS if m in per]:
            seeds = sorted(per[m])
            finished = [per[m][s][0] for s in seeds if per[m][s][0] is not None]
            mu, sd = _stats(finished) if finished else (float("nan"), float("nan"))
            print(f"| {m} | {mu:.3f} +- {sd:.3f} | "
                  + " / ".join(f"{s}: " + ("diverged" if per[m][s][0] is None else
                                           f"{per[m][s][0]:.3f}") for s in seeds)
                  + f" | {_mean_of_finished(per[m], 1):.0f}"
                  f" | {_mean_of_finished(per[m], 2):.0f} |")
        for tuned in PAIRS:
            line = verdict(name, per, tuned)
            if line:
                print(line)
                verdicts.append((tuned, line))
    for tuned in PAIRS:
        lines = [line for t, line in verdicts if t == tuned]
        if lines:
            n_beat = sum(": HOLDS [" in line for line in lines)
            print(f"\n{tuned}: fine-tuning beats scratch (paired interval over seeds) on "
                  f"{n_beat} of {len(lines)} data sets measured (target: every one of the four)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS),
                        choices=list(DATASETS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--out", default="/tmp/bench_grover_finetune.jsonl")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args) if args.summary else run(args)


if __name__ == "__main__":
    main()
