"""MPNNRegressor's SVR blend on the bundled regression sets: the default
(``blend="ecfp_svr"``) against its network alone, in one process.

The blend's network is the one ``blend=None`` trains with the same ``random_state``, so
one fit per split gives both arms: the default's predictions, and the network's alone
(the fitted regressor with its SVR removed). The sets and splits are those of the
molecule quality comparisons (``benchmarks/_molsplits.py``: ESOL and FreeSolv, random
80/20, ``--seeds`` seeds). Each fit prints both test RMSEs, the SVR's weight and the
fit's CPU seconds (the network's training plus the SVR search); the summary gives the
means and standard deviations over seeds. One torch thread. ``--record`` writes
``benchmarks/results/mpnn_blend.json`` (the default as "ours", the network alone as
"peer"). The MoleculeACE targets, where the blend matters most, are in
``bench_moleculeace.py`` (``mpnn``, and ``mpnn_net`` for ``blend=None``).

Run: ``OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/bench_gilmer_blend.py
[--datasets esol freesolv] [--seeds 3] [--record]``.
"""

import argparse
import copy
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def fit_both(X, y, train, test, seed):
    """``(blend RMSE, network RMSE, SVR weight, fit CPU s)`` of one MPNNRegressor()."""
    from sklearn_papers.chem import MPNNRegressor

    est = MPNNRegressor(random_state=seed, verbose=0)
    cpu = time.process_time()
    est.fit(X[train], y[train])
    cpu = time.process_time() - cpu
    alone = copy.copy(est)
    alone.blend_svr_ = None

    def rmse(model):
        return float(np.sqrt(np.mean((model.predict(X[test]) - y[test]) ** 2)))

    return rmse(est), rmse(alone), float(est.blend_weight_[0]), cpu


def main(argv=None):
    from _molsplits import add_split_arguments, iter_splits, mean_std

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split_arguments(parser, n_max=False)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    runs = {}
    for name, X, y, seed, train, test in iter_splits(args.datasets, args.seeds):
        blend, alone, weight, cpu = fit_both(X, y, train, test, seed)
        runs.setdefault(name, []).append((blend, alone, weight, cpu))
        print(f"{name:9} seed {seed}  blend {blend:.3f}  network alone {alone:.3f}  "
              f"SVR weight {weight:.2f}  fit CPU {cpu:6.1f} s", flush=True)
    rows = []
    print(f"\n{'data set':9} {'blend':>15} {'network alone':>15} {'weight':>7}")
    for name, fits in runs.items():
        (b, bs), (a, as_) = mean_std([f[0] for f in fits]), mean_std([f[1] for f in fits])
        print(f"{name:9} {b:7.3f} +- {bs:.3f} {a:7.3f} +- {as_:.3f} "
              f"{np.mean([f[2] for f in fits]):7.2f}")
        rows.append({"what": f"{name}: test RMSE, mean over seeds", "ours": b, "peer": a,
                     "unit": "log units" if name == "esol" else "kcal/mol",
                     "better": "lower", "ours_std": bs, "peer_std": as_})
    if args.record:
        from _record import record

        record("mpnn_blend",
               title="MPNNRegressor() (network blended with the SVR on ECFP) against its "
                     "network alone: random 80/20 splits, means over seeds",
               peer="MPNNRegressor(blend=None): the same network, without the SVR",
               rows=rows,
               notes="One fit per split gives both arms (the network is the same). The "
                     "SVR's weight (fitted on the molecules early stopping held out), "
                     "mean over seeds: " + ", ".join(
                         f"{name} {np.mean([f[2] for f in fits]):.2f}"
                         for name, fits in runs.items()) + ".")


if __name__ == "__main__":
    main()
