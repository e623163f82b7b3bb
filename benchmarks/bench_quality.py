"""Quality at the defaults: our molecule models against chemprop's D-MPNN.

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
  molecules (its CLI's default split is 80/10/10; here the test part is ours), seeded
  with ``lightning.pytorch.seed_everything(seed)`` (rows whose ``params`` lack
  ``"seeded": true`` were measured before it was: their weight initialisation was not).

One JSON line per (model, data set, seed) is appended to ``--out`` as soon as it is
measured (score, wall and CPU seconds of the fit, the estimator's parameters, the commit,
the machine load); lines already there are skipped (the run resumes), and lines carrying a
``"superseded"`` note (measured at defaults that are no longer the defaults) are kept as a
record but neither skipped nor summarised. At the end (or with ``--summary``) one table
per data set is printed: per model the mean score +- the sample standard deviation over
seeds, the per-seed scores, and the mean wall and CPU seconds of a fit; then, over the
seeds every model has, whether the target holds (the best of our three families
beats chemprop, none is more than 10 % worse, i.e. RMSE above 1.1x or ROC-AUC below 0.9x
chemprop's, each judged by the reports' ``paired interval`` rule over the seeds, so the
target reads HOLDS, DOES NOT HOLD or INCONCLUSIVE; each at no more than chemprop's mean fit
time, CPU seconds when every model has them on a seed: over those seeds; else wall
seconds). The per-model
rows show every seed measured; the target line names the seeds it uses. Lower RMSE /
higher ROC-AUC is better.

The CPU seconds are ``time.process_time()`` of the fitting process, with one torch
thread: on a loaded machine they move much less than the wall time, which only compares
fits that ran side by side.

Run (hours on a shared 2-core machine: run it niced in the background; two processes,
e.g. ``--models chemprop`` and ``--models grover neural_fingerprint mpnn``, may append to
one file)::

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
from _molsplits import DATASETS, load, score, split
from _molsplits import commit as _commit
from _molsplits import fit_and_score
from _molsplits import mean_std as _stats
from _peers import import_chemprop

from sklearn_papers.reproduce._claims import NOT_HOLDS, Claim, all_of, judge

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
    est = _ours(family, DATASETS[name], seed)
    value, seconds, cpu, params = fit_and_score(est, name, X, y, train, test)
    return value, seconds, cpu, {"class": type(est).__name__, "params": params}


def _fit_chemprop(name, X, y, train, test, seed, descriptors=False):
    """Fit chemprop 2 at its defaults on ``train``, score it on ``test``.

    With ``descriptors=True``, each molecule also carries chemprop's
    ``v1_rdkit_2d_normalized`` molecule features (descriptastorus' 200 RDKit 2-D
    descriptors, each through its CDF fitted on a large reference set), wired as its CLI's
    ``--molecule-featurizers v1_rdkit_2d_normalized`` does: ``x_d`` of each datapoint (NaN
    read as 0, as its datapoints do), standard-scaled on the fitting part (the validation
    part with the same scaler, the model's ``X_d_transform`` at prediction), joined to the
    aggregated molecule vector before the FFN (``input_dim`` = hidden size + 200). Their
    computation is part of the timed fit, as the graphs' is.

    Returns ``(score, wall s, CPU s, {"class", "params"})``; ``params["best_epoch"]`` is the
    1-based epoch of the checkpoint kept (lowest validation loss) of the 50 run.
    """
    import logging
    import warnings

    chemprop = import_chemprop()[0]  # stands in for its GPU featurizer when absent
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
    pl.seed_everything(seed, verbose=False)  # its weight initialisation

    extra = featurizers.V1RDKit2DNormalizedFeaturizer() if descriptors else None

    def dataset(idx):
        from chemprop.utils import make_mol

        points = []
        for i in idx:
            mol = make_mol(X[i], keep_h=False, add_h=False)
            points.append(data.MoleculeDatapoint(
                mol, y2[i], x_d=None if extra is None else extra(mol).astype(float)))
        return data.MoleculeDataset(points, featurizer)

    start, cpu = time.perf_counter(), time.process_time()
    d_fit, d_val, d_test = dataset(fit), dataset(val), dataset(test)
    x_d_transform, d_xd = None, 0
    if descriptors:
        x_scaler = d_fit.normalize_inputs("X_d")
        d_val.normalize_inputs("X_d", x_scaler)
        x_d_transform, d_xd = nn.ScaleTransform.from_standard_scaler(x_scaler), d_fit.d_xd
    if task == "regression":
        scaler = d_fit.normalize_targets()
        d_val.normalize_targets(scaler)
    mp = nn.BondMessagePassing()
    if task == "regression":
        ffn = nn.RegressionFFN(n_tasks=y2.shape[1], input_dim=mp.output_dim + d_xd,
                               output_transform=nn.UnscaleTransform.from_standard_scaler(
                                   scaler))
    else:
        ffn = nn.BinaryClassificationFFN(n_tasks=y2.shape[1],
                                         input_dim=mp.output_dim + d_xd)
    model = models.MPNN(mp, nn.MeanAggregation(), ffn, X_d_transform=x_d_transform)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = ModelCheckpoint(dirpath=tmp, monitor="val_loss", mode="min", save_top_k=1)
        trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=50, logger=False,
                             enable_progress_bar=False, enable_model_summary=False,
                             callbacks=[ckpt])
        trainer.fit(model, data.build_dataloader(d_fit, seed=seed),
                    data.build_dataloader(d_val, shuffle=False, drop_last=False))
        best = models.MPNN.load_from_checkpoint(ckpt.best_model_path)
        best_epoch = int(Path(ckpt.best_model_path).name.split("epoch=")[1].split("-")[0]) + 1
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    best.eval()
    preds = []
    with torch.no_grad():
        for batch in data.build_dataloader(d_test, shuffle=False, drop_last=False):
            preds.append(best(batch.bmg, batch.V_d, batch.X_d).numpy())
    pred = np.concatenate(preds)
    value = score(name, y[test], pred if y.ndim > 1 or task == "regression" else pred[:, 0])
    return value, seconds, cpu, {"class": "chemprop.models.MPNN", "params": {
        "version": chemprop.__version__, "max_epochs": 50, "message_passing":
        "BondMessagePassing()", "aggregation": "MeanAggregation()", "batch_size": 64,
        "seeded": True, "best_epoch": best_epoch,
        **({"molecule_featurizers": ["v1_rdkit_2d_normalized"]} if descriptors else {})}}


def _rows(out):
    """The measured rows of ``out``, without those marked ``superseded`` (measured at
    defaults that are no longer the defaults; kept in the file as a record)."""
    rows = [json.loads(line) for line in Path(out).read_text().splitlines() if line.strip()]
    return [r for r in rows if not r.get("superseded")]


def run(args):
    import os

    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    done = {(r["model"], r["dataset"], r["seed"]) for r in _rows(out)} if out.exists() \
        else set()
    chemprop, note = import_chemprop() if "chemprop" in args.models else (None, "")
    if "chemprop" in args.models and chemprop is None:
        print(f"chemprop: SKIPPED, {note}")
    commit = _commit()
    for name in args.datasets:
        X, y = load(name)
        for seed in args.seeds:
            train, test = split(name, X, y, seed)
            for model in args.models:
                if (model, name, seed) in done or (model == "chemprop" and chemprop is None):
                    continue
                load_before = os.getloadavg()[0]
                if model == "chemprop":
                    value, seconds, cpu, what = _fit_chemprop(name, X, y, train, test, seed)
                else:
                    value, seconds, cpu, what = _fit_ours(model, name, X, y, train, test,
                                                          seed)
                row = {"model": model, "dataset": name, "seed": seed, "score": value,
                       "metric": "rmse" if DATASETS[name] == "regression" else "roc_auc",
                       "fit_seconds": seconds, "cpu_seconds": cpu, **what,
                       "commit": commit, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                   time.gmtime()),
                       "load_1min": [load_before, os.getloadavg()[0]]}
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    summary(args)


def _verdict(name, per, seeds):
    """The target on ``name`` over the ``seeds`` every model has, as text.

    Quality is judged by the reports' shared rule (``paired interval`` over seeds,
    ``sklearn_papers.reproduce._claims``): the best of ours (by mean) beats chemprop, and
    each of ours is within 10 % of chemprop (beats 0.9 x chemprop's ROC-AUC, or 1.1 x its
    RMSE, on the same seed). The fit time is a budget: each mean at most chemprop's.
    """
    higher = DATASETS[name] != "regression"
    values = {m: np.array([per[m][s][0] for s in seeds], dtype=float) for m in per}
    mean = {m: float(v.mean()) for m, v in values.items()}
    # fit times: CPU seconds over the seeds where every model has them, else wall seconds
    timed = [s for s in seeds if all(per[m][s][2] is not None for m in per)]
    cpu = bool(timed)
    timed, k = (timed, 2) if cpu else (seeds, 1)
    time_of = {m: np.mean([per[m][s][k] for s in timed]) for m in per}
    ref = mean["chemprop"]
    metric = "ROC-AUC" if higher else "RMSE"
    ours = [m for m in OURS if m in per]
    best = max(ours, key=mean.get) if higher else min(ours, key=mean.get)
    beats = judge(Claim(f"{best} beats chemprop", metric, "paired interval",
                        higher_is_better=higher), values[best], values["chemprop"])
    # "10 % worse": ROC-AUC below 0.9 x chemprop's, or RMSE above 1.1 x chemprop's
    bound = values["chemprop"] * (0.9 if higher else 1.1)
    close = {m: judge(Claim(f"{m} within 10 % of chemprop", metric, "paired interval",
                            higher_is_better=higher), values[m], bound) for m in ours}
    fast = {m: time_of[m] <= time_of["chemprop"] for m in ours}
    outcome = all_of(beats, *close.values()) if all(fast.values()) else NOT_HOLDS
    worst = min(ours, key=mean.get) if higher else max(ours, key=mean.get)
    return (f"{name}, seeds {' '.join(map(str, seeds))}: target {outcome.upper()}: "
            f"best ours {best} {mean[best]:.3f} vs chemprop {ref:.3f} "
            f"({100 * abs(mean[best] - ref) / ref:.1f} %), beats chemprop: "
            f"{beats.short()}; worst {worst} {100 * abs(mean[worst] - ref) / ref:.1f} % "
            f"{'worse' if (mean[worst] < ref) == higher else 'better'}; within 10 %: "
            + ", ".join(f"{m} {v.short()}" for m, v in close.items())
            + f"; {'CPU' if cpu else 'wall'} fit time (seeds {' '.join(map(str, timed))}) "
            f"<= chemprop's ({time_of['chemprop']:.0f} s): "
            + ", ".join(f"{m} {time_of[m]:.0f} s {'yes' if fast[m] else 'NO'}" for m in ours))


def summary(args):
    """Print one table per data set and the target on the complete seeds."""
    rows = _rows(args.out)
    for name in [d for d in DATASETS if any(r["dataset"] == d for r in rows)]:
        metric = "RMSE, lower is better" if DATASETS[name] == "regression" else \
            "ROC-AUC, higher is better"
        per = {}
        for r in rows:
            if r["dataset"] == name:
                per.setdefault(r["model"], {})[r["seed"]] = (
                    r["score"], r["fit_seconds"], r.get("cpu_seconds"))
        print(f"\n{name} (test {metric}; mean +- sample std over seeds; mean fit seconds)")
        print("| model (defaults) | score | per seed | wall s | CPU s |")
        print("|---|---|---|---|---|")
        for m in [m for m in ("chemprop", *OURS) if m in per]:
            seeds = sorted(per[m])
            mu, sd = _stats([per[m][s][0] for s in seeds])
            cpus = [per[m][s][2] for s in seeds]
            cpu = f"{np.mean(cpus):.0f}" if all(c is not None for c in cpus) else (
                "-" if all(c is None for c in cpus) else "mixed")
            print(f"| {m} | {mu:.3f} +- {sd:.3f} | "
                  + " / ".join(f"{s}: {per[m][s][0]:.3f}" for s in seeds)
                  + f" | {np.mean([per[m][s][1] for s in seeds]):.0f} | {cpu} |")
        complete = sorted(set.intersection(*(set(per[m]) for m in ("chemprop", *OURS)
                                              if m in per))) if "chemprop" in per else []
        if "chemprop" in per and all(m in per for m in OURS) and complete:
            print(_verdict(name, {m: per[m] for m in ("chemprop", *OURS)}, complete)
                  + ("" if len(complete) >= 3 else " [PARTIAL: fewer than 3 seeds]"))
        else:
            print(f"{name}: no seed with all four models yet")


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
