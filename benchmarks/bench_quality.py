"""Quality at the defaults: our molecule models against chemprop's D-MPNN (issue 20).

On the splits of ``_molsplits`` (ESOL and FreeSolv random 80/20, test RMSE; BBBP and
Tox21 balanced scaffold 80/20, test ROC-AUC), for each seed, in one process, one torch
thread:

* ours at their defaults: ``MPNNRegressor`` / ``MPNNClassifier``,
  ``NeuralFingerprintRegressor`` / ``NeuralFingerprintClassifier``, ``GroverRegressor`` /
  ``GroverClassifier`` (fine-tuning the shipped checkpoint), each ``fit`` on the training
  part as a user would call it;
* chemprop 2 at its defaults: ``BondMessagePassing()`` (hidden 300, depth 3),
  ``MeanAggregation()``, the default FFN of the task, 50 epochs, batch 64, its
  warm-up-then-decay learning rate (``MPNN`` defaults), targets standardised as its CLI
  does, and the model of the best epoch on a random 10 % validation part of the training
  molecules (its CLI's default split is 80/10/10; here the test part is ours).

One JSON line per (model, data set, seed) is appended to ``--out`` as soon as it is
measured; lines already there are skipped (the run resumes). At the end (or with
``--summary``) the table is printed: the mean score per model and data set (per-seed
scores in brackets) and the mean fit time. Lower RMSE / higher ROC-AUC is better.

Run (hours on a shared 2-core machine: run it niced in the background)::

    nice -n 10 .venv/bin/python benchmarks/bench_quality.py --out /tmp/quality.jsonl
    .venv/bin/python benchmarks/bench_quality.py --summary --out /tmp/quality.jsonl

chemprop comes with ``make bench`` (or ``pip install .[bench]``); without it its rows are
skipped.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from _molsplits import DATASETS, load, positive_proba, score, split
from _peers import import_chemprop

OURS = ("mpnn", "neural_fingerprint", "grover")


def _ours(family, task, seed):
    from sklearn_papers import chem

    cls = {("mpnn", "regression"): chem.MPNNRegressor,
           ("mpnn", "classification"): chem.MPNNClassifier,
           ("neural_fingerprint", "regression"): chem.NeuralFingerprintRegressor,
           ("neural_fingerprint", "classification"): chem.NeuralFingerprintClassifier,
           ("grover", "regression"): chem.GroverRegressor,
           ("grover", "classification"): chem.GroverClassifier}[family, task]
    return cls(random_state=seed)


def _fit_ours(family, name, X, y, train, test, seed):
    task = DATASETS[name]
    est = _ours(family, task, seed)
    start = time.perf_counter()
    est.fit(X[train], y[train])
    seconds = time.perf_counter() - start
    pred = est.predict(X[test]) if task == "regression" else positive_proba(est, X[test])
    return score(name, y[test], pred), seconds


def _fit_chemprop(name, X, y, train, test, seed):
    import logging
    import warnings

    import_chemprop()  # stands in for its optional GPU featurizer when absent
    import lightning.pytorch as pl
    import torch
    from chemprop import data, featurizers, models, nn
    from lightning.pytorch.callbacks import ModelCheckpoint

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    task = DATASETS[name]
    y2 = y.reshape(len(y), -1)
    rng = np.random.RandomState(seed)
    perm = rng.permutation(train)
    n_val = max(1, int(round(0.1 * len(perm))))
    val, fit = perm[:n_val], perm[n_val:]
    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()

    def dataset(idx):
        return data.MoleculeDataset(
            [data.MoleculeDatapoint.from_smi(X[i], y2[i]) for i in idx], featurizer)

    start = time.perf_counter()
    d_fit, d_val, d_test = dataset(fit), dataset(val), dataset(test)
    if task == "regression":
        scaler = d_fit.normalize_targets()
        d_val.normalize_targets(scaler)
        ffn = nn.RegressionFFN(n_tasks=y2.shape[1],
                               output_transform=nn.UnscaleTransform.from_standard_scaler(
                                   scaler))
    else:
        ffn = nn.BinaryClassificationFFN(n_tasks=y2.shape[1])
    model = models.MPNN(nn.BondMessagePassing(), nn.MeanAggregation(), ffn)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = ModelCheckpoint(dirpath=tmp, monitor="val_loss", mode="min", save_top_k=1)
        trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=50, logger=False,
                             enable_progress_bar=False, enable_model_summary=False,
                             callbacks=[ckpt])
        trainer.fit(model, data.build_dataloader(d_fit, seed=seed),
                    data.build_dataloader(d_val, shuffle=False, drop_last=False))
        best = models.MPNN.load_from_checkpoint(ckpt.best_model_path)
    seconds = time.perf_counter() - start
    best.eval()
    preds = []
    with torch.no_grad():
        for batch in data.build_dataloader(d_test, shuffle=False, drop_last=False):
            preds.append(best(batch.bmg).numpy())
    pred = np.concatenate(preds)
    return score(name, y[test], pred if y.ndim > 1 or task == "regression"
                 else pred[:, 0]), seconds


def run(args):
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["model"], r["dataset"], r["seed"]))
    chemprop, note = import_chemprop() if "chemprop" in args.models else (None, "")
    if "chemprop" in args.models and chemprop is None:
        print(f"chemprop: SKIPPED, {note}")
    for name in args.datasets:
        X, y = load(name)
        for seed in args.seeds:
            train, test = split(name, X, y, seed)
            for model in args.models:
                if (model, name, seed) in done or (model == "chemprop" and chemprop is None):
                    continue
                if model == "chemprop":
                    value, seconds = _fit_chemprop(name, X, y, train, test, seed)
                else:
                    value, seconds = _fit_ours(model, name, X, y, train, test, seed)
                row = {"model": model, "dataset": name, "seed": seed, "score": value,
                       "metric": "rmse" if DATASETS[name] == "regression" else "roc_auc",
                       "fit_seconds": seconds}
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    summary(args)


def summary(args):
    rows = [json.loads(line) for line in Path(args.out).read_text().splitlines()]
    models = [m for m in ("chemprop", *OURS) if any(r["model"] == m for r in rows)]
    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in rows)]
    print("| model (defaults) | " + " | ".join(
        f"{d} {'RMSE' if DATASETS[d] == 'regression' else 'ROC-AUC'} (fit s)"
        for d in datasets) + " |")
    print("|---" * (len(datasets) + 1) + "|")
    for m in models:
        cells = []
        for d in datasets:
            got = sorted((r["seed"], r["score"], r["fit_seconds"]) for r in rows
                         if r["model"] == m and r["dataset"] == d)
            if not got:
                cells.append("-")
                continue
            per = " / ".join(f"{s:.3f}" for _, s, _ in got)
            cells.append(f"{np.mean([s for _, s, _ in got]):.3f} ({per}; "
                         f"{np.mean([t for _, _, t in got]):.0f} s)")
        print(f"| {m} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--models", nargs="*", default=["chemprop", *OURS])
    parser.add_argument("--out", default="/tmp/bench_quality.jsonl")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args) if args.summary else run(args)


if __name__ == "__main__":
    main()
