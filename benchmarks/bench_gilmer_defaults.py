"""Where MPNNRegressor's best held-out epoch falls: its defaults against chemprop's
training, in one process.

Both arms are ``MPNNRegressor`` with the same network (the defaults: chemprop's D-MPNN
shape), the same ``"warmup_decay"`` schedule over ``max_epochs=50`` and the same held-out
10 % (``early_stopping=True``); they differ only in the step size, the batch and the
patience. Both score the network alone (``blend=None``): the SVR blend of the default is
measured by ``bench_gilmer_blend.py``.

* ``defaults``: ``MPNNRegressor(blend=None)`` (``lr=2e-3``, ``batch_size=32``,
  ``n_iter_no_change=10``: twice the optimiser steps per epoch, stopped 10 epochs after
  the best held-out epoch);
* ``chemprop``-style training: ``lr=1e-3``, ``batch_size=64``, ``n_iter_no_change=50``
  (never stops early; the best epoch's weights are kept, as chemprop does), passed
  explicitly.

On the regression sets of the quality comparisons (``benchmarks/_molsplits.py``: random
80/20, ``--seeds`` seeds; ``--n-max`` draws a seeded random subset first, for the larger
sets), each fit prints its best held-out epoch and the last epoch run, the test RMSE and
the fit's CPU seconds; the summary gives the means of both arms and their ratio
(defaults / chemprop-style). When chemprop can be imported (``_peers.import_chemprop``) it
is fitted at its defaults too (D-MPNN, 300 wide, depth 3, mean aggregation, batch 64, 50
epochs, Noam learning rate, on 90 % of the training part with the other 10 % validated
each epoch), on the first ``--chemprop-seeds`` seeds, for its fit CPU seconds and its
last epoch's test RMSE. One torch thread. ``--record`` writes
``benchmarks/results/mpnn_defaults.json`` (the defaults as "ours", chemprop-style
training as "peer").

Run: ``nice -n 5 .venv/bin/python benchmarks/bench_gilmer_defaults.py [--datasets esol
freesolv malaria] [--seeds 3] [--n-max 2000] [--chemprop-seeds 1] [--record]``.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

#: chemprop's training, explicitly (the schedule and early stopping as the defaults').
PREVIOUS = dict(lr=1e-3, batch_size=64, lr_schedule="warmup_decay", max_epochs=50,
                early_stopping=True, n_iter_no_change=50, blend=None)
#: The estimator's default training, the network alone.
DEFAULTS = {"blend": None}


def fit_mpnn(params, X, y, train, test, seed):
    """``(best epoch, epochs run, test RMSE, fit CPU seconds)`` of one MPNNRegressor."""
    from sklearn_papers.chem import MPNNRegressor

    est = MPNNRegressor(random_state=seed, **params)
    cpu = time.process_time()
    est.fit(X[train], y[train])
    cpu = time.process_time() - cpu
    rmse = float(np.sqrt(np.mean((est.predict(X[test]) - y[test]) ** 2)))
    best = int(np.argmin(est.validation_loss_curve_)) + 1
    return best, int(est.n_iter_), rmse, cpu


def fit_chemprop(X, y, train, test, seed):
    """``(epochs, test RMSE of the last epoch, fit CPU seconds)`` of chemprop at its
    defaults, trained on 90 % of ``train`` and validated on the other 10 % each epoch."""
    from _peers import chemprop_fit_predict

    pred, cpu = chemprop_fit_predict(X[train], y[train], X[test], seed)
    return 50, float(np.sqrt(np.mean((pred - y[test]) ** 2))), cpu


def main(argv=None):
    from _molsplits import add_split_arguments

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split_arguments(parser)
    parser.add_argument("--chemprop-seeds", type=int, default=1,
                        help="seeds on which chemprop is fitted too (0: never)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from _molsplits import iter_splits

    chemprop = None
    if args.chemprop_seeds > 0:
        from _peers import import_chemprop

        chemprop, note = import_chemprop()
        print(f"chemprop: {'version ' + chemprop.__version__ if chemprop else note}")
    arms = {"chemprop-style": PREVIOUS, "defaults": DEFAULTS}
    results = {}
    for name, X, y, seed, train, test in iter_splits(args.datasets, args.seeds,
                                                     args.n_max):
        for arm, params in arms.items():
            best, last, rmse, cpu = fit_mpnn(params, X, y, train, test, seed)
            results.setdefault((name, arm), []).append((best, last, rmse, cpu))
            print(f"{name:9} n={len(X):5} seed {seed} {arm:9} best epoch {best:3} of "
                  f"{last:3}  test RMSE {rmse:.3f}  fit CPU {cpu:6.1f} s", flush=True)
        if chemprop is not None and seed < args.chemprop_seeds:
            epochs, rmse, cpu = fit_chemprop(X, y, train, test, seed)
            results.setdefault((name, "chemprop"), []).append((None, epochs, rmse, cpu))
            print(f"{name:9} n={len(X):5} seed {seed} chemprop {epochs} epochs  test "
                  f"RMSE {rmse:.3f} (last epoch)  fit CPU {cpu:6.1f} s", flush=True)
    rows = summary(results, args.datasets)
    if args.record:
        from _record import record

        record("mpnn_defaults",
               title="MPNNRegressor(blend=None) at its default training (ours) against "
                     "chemprop's training (peer): the network alone, random 80/20 splits, "
                     "means over seeds",
               peer="MPNNRegressor(lr=1e-3, batch_size=64, n_iter_no_change=50, "
                    "blend=None): "
                    "chemprop's step size and batch, the best epoch of 50 kept",
               rows=rows,
               notes="Same network, schedule and held-out 10 %; only the step size, the "
                     "batch and the patience differ. 'best epoch / epochs run' is the position of the "
                     "best held-out epoch in the run (1: the last epoch).")


def summary(results, datasets):
    """Print and return the record rows: per data set, the mean test RMSE, fit CPU
    seconds, epochs run and best epoch / epochs run of both arms (the defaults as
    "ours", chemprop-style training as "peer")."""
    from _molsplits import (best_epoch_share, ours_vs_peer_rows, print_arm_header,
                            print_arm_means)

    rows = []
    print_arm_header((9, 9))
    for name in datasets:
        print_arm_means(results, name, ("chemprop-style", "defaults", "chemprop"), (9, 9))
        after, before = results[name, "defaults"], results[name, "chemprop-style"]
        rows += ours_vs_peer_rows(name, after, before, "log units")
        rows.append({"what": f"{name}: best held-out epoch / epochs run", "unit": "share",
                     "better": "lower", "ours": best_epoch_share(after),
                     "peer": best_epoch_share(before)})
        print(f"{name:9} defaults / chemprop-style: RMSE {rows[-4]['ours'] / rows[-4]['peer']:.3f}, "
              f"CPU {rows[-3]['ours'] / rows[-3]['peer']:.3f}")
    return rows


if __name__ == "__main__":
    main()
