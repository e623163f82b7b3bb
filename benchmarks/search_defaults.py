"""The search that chose the default training settings of the molecule models (issue 20).

Each named configuration of ``CONFIGS`` is fitted on the training part and scored on the
test part of the splits of ``_molsplits`` (ESOL and FreeSolv random 80/20, test RMSE;
BBBP balanced scaffold, ROC-AUC), for the seeds given; one JSON line per (config, data
set, seed) is appended to ``--out`` as soon as it is measured (wall and CPU seconds of the
fit), and lines already there are skipped, so the search resumes where it stopped.
``--summary`` prints the mean per configuration and data set. One torch thread.

Run (niced, in the background: hours on a shared 2-core machine)::

    nice -n 10 .venv/bin/python benchmarks/search_defaults.py --family mpnn \\
        --datasets esol freesolv bbbp --seeds 0 1 --out /tmp/search_mpnn.jsonl
    .venv/bin/python benchmarks/search_defaults.py --summary --out /tmp/search_mpnn.jsonl
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

#: family -> config name -> constructor parameters (regressor and classifier alike).
CONFIGS = {
    "mpnn": {
        "old_defaults": dict(lr_schedule="constant"),
        "warmup_decay": dict(lr_schedule="warmup_decay"),
        "small_fast": dict(hidden_size=32, n_steps=3, set2set_steps=3, lr=5e-3, max_epochs=25,
                           lr_schedule="warmup_decay"),
        "directed_64": dict(message="directed", hidden_size=64, n_steps=3, lr=1e-3,
                            max_epochs=50, lr_schedule="warmup_decay"),
        "directed_128_mean": dict(message="directed", hidden_size=128, n_steps=3,
                                  readout="mean", lr=1e-3, max_epochs=50,
                                  lr_schedule="warmup_decay"),
    },
    "nf": {
        "old_defaults": dict(),
        "warmup_decay": dict(lr_schedule="warmup_decay"),
        "warmup_decay_lr3e-3": dict(lr_schedule="warmup_decay", lr=3e-3),
    },
    "grover": {
        "old_defaults": dict(),
        "warmup_decay": dict(lr_schedule="warmup_decay"),
        "epochs_50": dict(max_epochs=50),
        "epochs_50_warmup_decay": dict(max_epochs=50, lr_schedule="warmup_decay"),
    },
}


def _estimator(family, task, params, seed):
    from sklearn_papers import chem

    cls = {("mpnn", "regression"): chem.MPNNRegressor,
           ("mpnn", "classification"): chem.MPNNClassifier,
           ("nf", "regression"): chem.NeuralFingerprintRegressor,
           ("nf", "classification"): chem.NeuralFingerprintClassifier,
           ("grover", "regression"): chem.GroverRegressor,
           ("grover", "classification"): chem.GroverClassifier}[family, task]
    return cls(**params, random_state=seed)


def run(args):
    import torch

    from _molsplits import DATASETS, load, positive_proba, score, split

    torch.set_num_threads(1)
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["family"], r["config"], r["dataset"], r["seed"]))
    configs = CONFIGS[args.family]
    names = args.configs or list(configs)
    for name in args.datasets:
        X, y = load(name)
        task = DATASETS[name]
        for seed in args.seeds:
            train, test = split(name, X, y, seed)
            for config in names:
                if (args.family, config, name, seed) in done:
                    continue
                est = _estimator(args.family, task, configs[config], seed)
                start, cpu = time.perf_counter(), time.process_time()
                est.fit(X[train], y[train])
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
                pred = est.predict(X[test]) if task == "regression" else \
                    positive_proba(est, X[test])
                row = {"family": args.family, "config": config, "dataset": name,
                       "seed": seed, "score": score(name, y[test], pred),
                       "metric": "rmse" if task == "regression" else "roc_auc",
                       "fit_seconds": seconds, "cpu_seconds": cpu, "n_iter": int(est.n_iter_),
                       "params": configs[config]}
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)


def summary(args):
    rows = [json.loads(line) for line in Path(args.out).read_text().splitlines()]
    table = {}
    for r in rows:
        table.setdefault((r["family"], r["config"]), {}).setdefault(
            r["dataset"], []).append((r["score"], r["fit_seconds"]))
    datasets = sorted({r["dataset"] for r in rows})
    print("family config | " + " | ".join(f"{d} (mean score, fit s, n)" for d in datasets))
    for (family, config), per in table.items():
        cells = []
        for d in datasets:
            v = per.get(d, [])
            cells.append(f"{np.mean([s for s, _ in v]):.3f}, {np.mean([t for _, t in v]):.0f}"
                         f" s, {len(v)}" if v else "-")
        print(f"{family} {config} | " + " | ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=sorted(CONFIGS), default="mpnn")
    parser.add_argument("--configs", nargs="*", default=None)
    parser.add_argument("--datasets", nargs="*", default=["esol", "freesolv", "bbbp"])
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    parser.add_argument("--out", default="/tmp/search_defaults.jsonl")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args) if args.summary else run(args)


if __name__ == "__main__":
    main()
