"""NeuralFingerprintRegressor's defaults against its previous training, and where the best
held-out epoch falls in each, in one process.

Every arm is ``NeuralFingerprintRegressor`` with the same network (the paper's fingerprint
of length 50, radius 4, a 100-wide head); they differ only in the training parameters of
``ARMS`` and ``CANDIDATES``:

* ``defaults``: ``NeuralFingerprintRegressor()``, passed nothing (``lr=1e-2`` warmed up
  then decayed to ``lr / 10`` over 100 epochs, batches of near-equal size; every training
  molecule, the last epoch kept; the mean of five networks, ``ensemble_size=5``);
* ``previous``: the training the estimator had before, explicitly (one network, the
  paper's constant ``lr=exp(-6)``, 200 epochs, a ``DataLoader``'s full batches and
  remainder);
* ``defaults-curve``, ``previous-curve``: the same trainings with ``early_stopping=True``
  and a patience longer than ``max_epochs`` (nothing stops; the best epoch on the held-out
  10 % is kept), for where the best held-out epoch falls and the first epoch whose
  held-out loss is within 2 % of the lowest;
* ``single``, ``three``: the defaults with one network or three (``ensemble_size=1``,
  ``3``);
* ``blend``: the defaults with ``blend="ecfp_svr"`` (each network leaves out its own
  block of molecules, on which the SVR's weight is fitted);
* the other candidates of ``CANDIDATES``, asked for by name with ``--arms``, or one built
  from ``--set NAME=VALUE`` pairs (arm ``set``).

On the regression sets of the quality comparisons (``benchmarks/_molsplits.py``: random
80/20, ``--seeds`` seeds; ``--n-max`` draws a seeded random subset first, for the larger
sets), each fit prints its best held-out epoch and the epochs run (no held-out part: "-"),
the test RMSE and the fit's CPU seconds; the summary gives the means of every arm. One
torch thread. ``--record`` writes ``benchmarks/results/nf_defaults.json``: the arm
``--ours`` names (``defaults`` unless told) against ``previous``, the best-epoch share
of their "-curve" arms, its test RMSE against ``single``'s and ``three``'s, and
``blend``'s test RMSE against its, where those arms ran.

Run: ``nice -n 5 .venv/bin/python benchmarks/bench_duvenaud_defaults.py [--datasets esol
freesolv] [--seeds 3] [--arms previous previous-curve defaults defaults-curve single three
blend]
[--set lr=0.01] [--record]``.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

#: The training the estimators had before: one network, the paper's constant learning rate
#: exp(-6), 200 epochs, a ``DataLoader``'s full batches and remainder.
PREVIOUS = {"lr": float(np.exp(-6)), "max_epochs": 200, "lr_schedule": "constant",
            "even_batches": False, "ensemble_size": 1}
#: Arm name -> constructor parameters. A "-curve" arm is its arm with ``early_stopping`` and
#: a patience longer than the run: nothing stops, the held-out curve is watched.
ARMS = {
    "previous": PREVIOUS,
    "previous-curve": {**PREVIOUS, "early_stopping": True, "n_iter_no_change": 201},
    "defaults": {},
    "defaults-curve": {"early_stopping": True, "n_iter_no_change": 101},
}
#: Candidates measured on the way to the defaults (``--arms``).
CANDIDATES = {
    "previous-even": {**PREVIOUS, "even_batches": True},
    "previous-even-curve": {**PREVIOUS, "even_batches": True, "early_stopping": True,
                            "n_iter_no_change": 201},
    "e100-constant": {**PREVIOUS, "even_batches": True, "max_epochs": 100},
    "lr3e-3": {"lr": 3e-3},
    "single": {"ensemble_size": 1},
    "three": {"ensemble_size": 3},
    "blend": {"blend": "ecfp_svr"},
}


def fit_nf(params, X, y, train, test, seed):
    """``(best held-out epoch or None, epochs run, test RMSE, fit CPU seconds, first epoch
    whose held-out loss is within 2 % of the lowest or None)``."""
    from sklearn_papers.chem import NeuralFingerprintRegressor

    est = NeuralFingerprintRegressor(random_state=seed, **params)
    cpu = time.process_time()
    est.fit(X[train], y[train])
    cpu = time.process_time() - cpu
    rmse = float(np.sqrt(np.mean((est.predict(X[test]) - y[test]) ** 2)))
    curve = est.validation_loss_curve_
    best = None if not curve else int(np.argmin(curve)) + 1
    near = None if not curve else int(np.argmax(np.asarray(curve) <= 1.02 * min(curve))) + 1
    return best, int(est.n_iter_), rmse, cpu, near


def _value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, text)


def main(argv=None):
    from _molsplits import add_split_arguments

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split_arguments(parser)
    parser.add_argument("--arms", nargs="+", default=list(ARMS),
                        choices=[*ARMS, *CANDIDATES])
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="an extra arm 'set' with these constructor parameters")
    parser.add_argument("--ours", default="defaults",
                        help="the arm recorded as 'ours' (its '-curve' arm for the epochs)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from _molsplits import iter_splits

    arms = {a: {**ARMS, **CANDIDATES}[a] for a in args.arms}
    if args.set:
        arms["set"] = {k: _value(v) for k, v in (s.split("=", 1) for s in args.set)}
        print(f"arm 'set': {arms['set']}")
    results = {}
    for name, X, y, seed, train, test in iter_splits(args.datasets, args.seeds,
                                                     args.n_max):
        for arm, params in arms.items():
            best, last, rmse, cpu, near = fit_nf(params, X, y, train, test, seed)
            results.setdefault((name, arm), []).append((best, last, rmse, cpu))
            where = "-" if best is None else f"{best:3}"
            within = "" if near is None else f" (within 2 % from epoch {near})"
            print(f"{name:12} n={len(X):5} seed {seed} {arm:15} best epoch {where:>3} of "
                  f"{last:3}{within}  test RMSE {rmse:.3f}  fit CPU {cpu:6.1f} s",
                  flush=True)
    rows = summary(results, args.datasets, list(arms), args.ours)
    if args.record:
        from _record import record

        record("nf_defaults",
               title="NeuralFingerprintRegressor() at its defaults (ours) against its "
                     "previous training (peer): random 80/20 splits, means over seeds",
               peer="NeuralFingerprintRegressor(lr=exp(-6), max_epochs=200, "
                    "lr_schedule='constant', even_batches=False, ensemble_size=1)",
               rows=rows,
               notes="Same network; ours is the mean of five of them. Every training "
                     "molecule, the last epoch kept. 'best held-out epoch / epochs run': "
                     "the same trainings with a held-out 10 % watched and nothing stopped "
                     "(1: the last epoch; ours: its first network). 'test RMSE against one "
                     "network' ('three networks'): ours against the same training of one "
                     "network (of three: the previous default) (peer). "
                     "'with blend': blend='ecfp_svr' (ours) against the defaults (peer).")


def summary(results, datasets, arms, ours):
    """Print the means of every arm; return the record rows: ``ours`` against ``previous``
    (test RMSE, fit CPU time, epochs run) and the best held-out epoch's share of the run of
    ``ours``'s and ``previous``'s curve arms, and the test RMSE of ``ours`` against
    ``single``, where they were fitted."""
    from _molsplits import (best_epoch_share, ours_vs_peer_rows, print_arm_header,
                            print_arm_means)

    rows = []
    print_arm_header((12, 20))
    for name in datasets:
        print_arm_means(results, name, arms, (12, 20))
        unit = "log units" if name == "esol" else "kcal/mol" if name == "freesolv" \
            else "target units"
        after, before = results.get((name, ours)), results.get((name, "previous"))
        if after and before:
            rows += ours_vs_peer_rows(name, after, before, unit)
        after = results.get((name, ours + "-curve"))
        before = results.get((name, "previous-curve"))
        if after and before:
            rows.append({"what": f"{name}: best held-out epoch / epochs run",
                         "unit": "share", "better": "lower",
                         "ours": best_epoch_share(after), "peer": best_epoch_share(before)})
        # (arm recorded as ours, arm recorded as peer, what the row compares)
        for mine, other, label in ((ours, "single", "against one network"),
                                   (ours, "three", "against three networks"),
                                   ("blend", ours, "with blend='ecfp_svr'")):
            after, before = results.get((name, mine)), results.get((name, other))
            if after and before and mine != other:
                rows.append({"what": f"{name}: test RMSE {label}", "unit": unit,
                             "better": "lower",
                             "ours": float(np.mean([r[2] for r in after])),
                             "peer": float(np.mean([r[2] for r in before])),
                             "ours_std": float(np.std([r[2] for r in after])),
                             "peer_std": float(np.std([r[2] for r in before]))})
    return rows


if __name__ == "__main__":
    main()
