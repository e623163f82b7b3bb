"""Where GroverRegressor's best held-out epoch falls: its defaults, the same training with
a held-out part watched, and candidate defaults, in one process.

Every arm is ``GroverRegressor`` fine-tuning the shipped checkpoint (``"moses-small"``)
with the same network and the same ``"warmup_decay"`` schedule; they differ only in the
training parameters of ``ARMS`` and ``CANDIDATES``:

* ``previous``: a 30-epoch training, explicitly (``max_epochs=30``, ``lr=1e-3``, batch
  32, ``early_stopping=False``: every training molecule, the last epoch kept; the
  defaults train 60 epochs);
* ``previous-curve``: the same with ``early_stopping=True`` and a patience longer than
  ``max_epochs`` (nothing stops; the best epoch on the held-out 10 % is kept), for where
  the best held-out epoch falls;
* ``defaults``: the fine-tuned network as ``GroverRegressor(head="finetune",
  max_epochs=60)`` trains it (:data:`FINETUNED`), passed nothing else;
* the candidates of ``CANDIDATES``, asked for by name with ``--arms``.

On the regression sets of the quality comparisons (``benchmarks/_molsplits.py``: random
80/20, ``--seeds`` seeds from ``--first-seed``), each fit prints its best held-out epoch
and the last epoch run (``previous`` has no held-out part: "-"), the test RMSE and the
fit's CPU seconds; the summary gives the means of every arm. One torch thread.
``--record`` writes ``benchmarks/results/grover_defaults.json`` (the defaults as "ours",
``previous`` as "peer"; the peer's best-epoch share is that of ``previous-curve``).

``--per-epoch`` fits ``previous-curve`` once per split (``--set lr=3e-3`` changes its
parameters) keeping every epoch's weights, and prints one JSON line per fit (held-out
loss, test RMSE and CPU seconds so far, per epoch) and what early stopping with a
patience of 5 and 10 would have kept: the same run up to its stopping epoch (early
stopping reads only the held-out losses and the schedule depends only on
``max_epochs``), so one fit gives every patience.

Run: ``nice -n 5 .venv/bin/python benchmarks/bench_grover_defaults.py [--datasets esol
freesolv] [--seeds 3] [--arms previous previous-curve defaults] [--record]``, or
``... --per-epoch [--set lr=3e-3]``.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

#: A 30-epoch training, explicitly (the defaults train 60 epochs).
PREVIOUS = dict(max_epochs=30, lr=1e-3, batch_size=32, lr_schedule="warmup_decay",
                early_stopping=False)
#: Arm name -> constructor parameters.
ARMS = {
    "previous": PREVIOUS,
    "previous-curve": {**PREVIOUS, "early_stopping": True, "n_iter_no_change": 31},
    "defaults": {},
}
#: Candidate defaults (``--arms``; measured through ``--per-epoch``: patience 10 is the
#: ``--per-epoch`` run up to its stopping epoch).
CANDIDATES = {
    "es10": {**PREVIOUS, "early_stopping": True, "n_iter_no_change": 10},
    "es10-lr3e-3": {**PREVIOUS, "early_stopping": True, "n_iter_no_change": 10, "lr": 3e-3},
}
#: The fine-tuned network every arm starts from (the estimator's default head adds an SVR).
FINETUNED = {"head": "finetune", "max_epochs": 60}
#: Unit of the test RMSE per data set.
UNITS = {"esol": "log(mol/L)", "freesolv": "kcal/mol"}


def fit_grover(params, X, y, train, test, seed):
    """``(best epoch or None, epochs run, test RMSE, fit CPU seconds)`` of one
    GroverRegressor."""
    from sklearn_papers.chem import GroverRegressor

    est = GroverRegressor(random_state=seed, **{**FINETUNED, **params})
    cpu = time.process_time()
    with warnings.catch_warnings():
        # a run that never stops warns that it was still improving: it is meant to
        warnings.simplefilter("ignore")
        est.fit(X[train], y[train])
    cpu = time.process_time() - cpu
    rmse = float(np.sqrt(np.mean((est.predict(X[test]) - y[test]) ** 2)))
    curve = est.validation_loss_curve_
    best = None if curve is None else int(np.argmin(curve)) + 1
    return best, int(est.n_iter_), rmse, cpu


def fit_grover_per_epoch(params, X, y, train, test, seed):
    """One GroverRegressor fit that keeps every epoch's weights: ``(held-out loss per
    epoch, test RMSE per epoch, fit CPU seconds at the end of each epoch)``.

    Early stopping only reads the held-out losses and the schedule depends only on
    ``max_epochs``, so a run with patience ``p`` is this run up to the first epoch
    followed by ``p`` epochs without a lower held-out loss, with that prefix's best
    epoch restored: :func:`stopped` reads it off these curves.
    """
    import copy

    import sklearn_papers.nn._grover as grover_nn
    from sklearn_papers.chem import GroverRegressor

    states, cpu_at = [], []
    start = time.process_time()

    class KeepEveryEpoch(grover_nn.GroverNet):
        def on_epoch_end(self, net, **kwargs):
            cpu_at.append(time.process_time() - start)
            states.append(copy.deepcopy(net.module_.state_dict()))
            super().on_epoch_end(net, **kwargs)

    est = GroverRegressor(random_state=seed, **{**FINETUNED, **params})
    original = grover_nn.GroverNet
    grover_nn.GroverNet = KeepEveryEpoch
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X[train], y[train])
    finally:
        grover_nn.GroverNet = original
    # (copying a state costs milliseconds against seconds an epoch)
    rmse = []
    for state in states:
        est.module_.load_state_dict(state)
        rmse.append(float(np.sqrt(np.mean((est.predict(X[test]) - y[test]) ** 2))))
    return [float(v) for v in est.validation_loss_curve_], rmse, cpu_at


def stopped(valid, patience):
    """``(best epoch, epochs run)`` (1-based) of early stopping with ``patience`` on the
    held-out losses ``valid``."""
    best = 0
    for epoch in range(1, len(valid)):
        if valid[epoch] < valid[best]:
            best = epoch
        elif epoch - best >= patience:
            return best + 1, epoch + 1
    return best + 1, len(valid)


def main(argv=None):
    from _molsplits import add_split_arguments

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split_arguments(parser, n_max=False)
    parser.add_argument("--arms", nargs="+", default=list(ARMS),
                        choices=[*ARMS, *CANDIDATES])
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--per-epoch", action="store_true",
                        help="fit previous-curve only (with --set's changes), keeping "
                             "every epoch's weights, and read early stopping with "
                             "patience 5 and 10 off its curves")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="with --per-epoch: parameters changed (lr=3e-3 max_epochs=40)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)
    if args.per_epoch:
        return per_epoch(args)
    if args.record and not {"previous", "previous-curve", "defaults"} <= set(args.arms):
        parser.error("--record needs the arms previous, previous-curve and defaults")

    import torch

    torch.set_num_threads(1)
    from _molsplits import load, split

    arms = {**ARMS, **CANDIDATES}
    results = {}
    for name in args.datasets:
        X, y = load(name)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            train, test = split(name, X, y, seed)
            for arm in args.arms:
                best, last, rmse, cpu = fit_grover(arms[arm], X, y, train, test, seed)
                results.setdefault((name, arm), []).append((best, last, rmse, cpu))
                print(f"{name:9} n={len(X):5} seed {seed} {arm:16} best epoch "
                      f"{'-' if best is None else best:>3} of {last:3}  test RMSE "
                      f"{rmse:.3f}  fit CPU {cpu:6.1f} s", flush=True)
    rows = summary(results, args.datasets, args.arms)
    if args.record:
        from _record import record

        record("grover_defaults",
               title="GroverRegressor() at its defaults (ours) against its previous "
                     "training (peer): random 80/20 splits, means over seeds",
               peer="GroverRegressor(early_stopping=False): the last of 30 epochs on "
                    "every training molecule",
               rows=rows,
               notes="Same checkpoint, network and schedule; only the training parameters "
                     "differ. 'best epoch / epochs run' is the position of the best "
                     "held-out epoch in the run (1: the last epoch); the peer's is that "
                     "of the same training with a held-out 10 % and no stopping.")


def per_epoch(args):
    """``--per-epoch``: one line per epoch (held-out loss, test RMSE, CPU seconds so far)
    and what early stopping with patience 5 and 10 would have kept, per fit."""
    import json

    import torch

    torch.set_num_threads(1)
    from _molsplits import load, split

    changes = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    # nothing stops: the patience outlasts max_epochs
    params = {**ARMS["previous-curve"], **changes}
    params["n_iter_no_change"] = params["max_epochs"] + 1
    print(f"per epoch: {changes}", flush=True)
    for name in args.datasets:
        X, y = load(name)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            train, test = split(name, X, y, seed)
            valid, rmse, cpu = fit_grover_per_epoch(params, X, y, train, test, seed)
            print(json.dumps({"data set": name, "seed": seed, "params": changes,
                              "valid_loss": valid, "test_rmse": rmse, "cpu": cpu}),
                  flush=True)
            best = int(np.argmin(valid)) + 1
            print(f"{name:9} seed {seed} no stop: best epoch {best:3} of {len(valid):3}  "
                  f"test RMSE at best {rmse[best - 1]:.3f}, at the last {rmse[-1]:.3f}  "
                  f"fit CPU {cpu[-1]:6.1f} s", flush=True)
            for patience in (5, 10):
                best, run = stopped(valid, patience)
                print(f"{name:9} seed {seed} patience {patience:2}: best epoch {best:3} of "
                      f"{run:3}  test RMSE {rmse[best - 1]:.3f}  fit CPU "
                      f"{cpu[run - 1]:6.1f} s", flush=True)


def summary(results, datasets, arms):
    """Print the means of every arm and return the record rows: per data set, the mean
    test RMSE, fit CPU seconds, epochs run and best epoch / epochs run of the defaults
    ("ours") and of the previous training ("peer")."""
    from _molsplits import (best_epoch_share, ours_vs_peer_rows, print_arm_header,
                            print_arm_means)

    rows = []
    print_arm_header((9, 16))
    for name in datasets:
        print_arm_means(results, name, arms, (9, 16))
        if not {"previous", "previous-curve", "defaults"} <= set(arms):
            continue
        after, before = results[name, "defaults"], results[name, "previous"]
        rows += ours_vs_peer_rows(name, after, before, UNITS.get(name, "target units"))
        rows.append({"what": f"{name}: best held-out epoch / epochs run", "unit": "share",
                     "better": "lower", "ours": best_epoch_share(after),
                     "peer": best_epoch_share(results[name, "previous-curve"])})
        print(f"{name:9} defaults / previous: RMSE {rows[-4]['ours'] / rows[-4]['peer']:.3f}, "
              f"CPU {rows[-3]['ours'] / rows[-3]['peer']:.3f}")
    return rows


if __name__ == "__main__":
    main()
