"""Speed of GROVER: featurization against chemprop's featurizer, pretraining throughput.

On MOSES molecules (bundled), one torch thread, all in one process, best of ``--repeats``:

1. featurization molecules/s, against chemprop 2 on the same SMILES: (a) our graph
   featurizer alone (what ``GroverFeaturizer`` computes before its network: SMILES parsing,
   canonical form, 151 atom / 14 bond features, edge index) against chemprop's featurizer
   alone (``SimpleMoleculeMolGraphFeaturizer``: parsing + graph features, no network), and
   our generic per-atom feature blocks (``mols_to_graphs`` with ``grover_atom_features()``,
   the reference the fast path ``grover_mols_to_graphs`` matches bit for bit); (b)
   ``GroverFeaturizer().transform`` (the default: the shipped ``moses-small`` checkpoint;
   graphs + the forward pass) against chemprop's featurizer + the encoder of a default
   D-MPNN (``MPNN.fingerprint``: hidden 300, depth 3, untrained), the closest equivalent of
   a learned featurizer, and against its featurizer alone; and ``NeuralFingerprint``;
2. pretraining molecules/s per epoch of ``GroverFeaturizer(pretrained=None).fit`` (graph
   + contextual labels + 85 motifs are computed once; the rate counts training epochs only)
   at the given settings, against ``NeuralFingerprint.fit(X, y)`` on a dummy target.

Ratios are rates, ours / peer (above 1: ours is faster); the featurization timings take
turns within each of ``--repeats`` rounds and the best of each is kept. They are CPU
seconds of this process (``time.process_time``: everything runs on one thread here), which
other jobs on a loaded machine disturb far less than wall time. chemprop is
optional (``make bench`` installs it); without it those lines say SKIPPED. ``--cv`` also
times the ESOL 5-fold ``cross_val_score`` of ``make_pipeline(GroverFeaturizer(),
RidgeCV())`` (and of ECFP + RidgeCV); ``--epochs 0`` skips the pretraining part.

``--data esol`` times the 1128 ESOL molecules instead of ``--n`` MOSES ones;
``--pretrained moses-small moses-176k`` times the transform of each shipped checkpoint.
The ``RATIO`` lines sum it up: the transform's CPU time per molecule, split into the graph
step and the network (the difference), against chemprop's featurizer, and the ratio of the
rates (the target: at least 1).

Run: ``.venv/bin/python benchmarks/bench_grover.py [--n 2000] [--data moses] [--epochs 2]
[--hidden 64] [--batch-size 32] [--repeats 3] [--pretrained moses-small moses-176k]
[--cv]``.
"""

import argparse
import time

import numpy as np
from _peers import import_chemprop


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _chemprop_timers(X, batch_size):
    """(featurizer-only callable, featurizer + encoder callable, version) or None."""
    chemprop, note = import_chemprop()
    if chemprop is None:
        print(f"peer   chemprop: SKIPPED, {note}")
        return None
    if note:
        print(f"note   {note}")
    import torch
    from chemprop import data, featurizers, models, nn
    from rdkit import Chem

    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()

    def featurize():
        return [featurizer(Chem.MolFromSmiles(s)) for s in X]

    model = models.MPNN(nn.BondMessagePassing(), nn.MeanAggregation(),
                        nn.RegressionFFN()).eval()

    def encode():
        points = [data.MoleculeDatapoint(Chem.MolFromSmiles(s)) for s in X]
        loader = data.build_dataloader(data.MoleculeDataset(points, featurizer),
                                       batch_size=batch_size, shuffle=False, num_workers=0)
        with torch.no_grad():
            return [model.fingerprint(b.bmg) for b in loader]

    return featurize, encode, chemprop.__version__


def _interleaved(timers, repeats):
    """Best time of each callable over ``repeats`` rounds, the callables taking turns
    within each round (a loaded machine slows them alike)."""
    best = {name: float("inf") for name in timers}
    for _ in range(repeats):
        for name, fn in timers.items():
            start = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
    return best


def _cross_validation(n_splits=5):
    """Seconds and RMSE of the ESOL ``cross_val_score`` of GroverFeaturizer() + RidgeCV,
    and of ECFP + RidgeCV, random folds (seed 0)."""
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    cv = KFold(n_splits, shuffle=True, random_state=0)
    for name, first in [("GroverFeaturizer()", GroverFeaturizer()),
                        ("CircularFingerprint()", CircularFingerprint())]:
        start, cpu = time.perf_counter(), time.process_time()
        scores = cross_val_score(make_pipeline(first, RidgeCV()), X, y, cv=cv,
                                 scoring="neg_root_mean_squared_error")
        print(f"cv         ESOL {n_splits}-fold cross_val_score of make_pipeline({name}, "
              f"RidgeCV()): {time.perf_counter() - start:.1f} s wall, "
              f"{time.process_time() - cpu:.1f} s CPU, RMSE {-scores.mean():.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000, help="MOSES molecules")
    parser.add_argument("--data", choices=["moses", "esol"], default="moses",
                        help="molecules of the featurization timings")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32,
                        help="molecules per batch (GroverFeaturizer's default: 32)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pretrained", nargs="+", default=["moses-small"],
                        help="shipped checkpoints whose transform is timed (the first is "
                             "the default's, moses-small; also: moses-176k)")
    parser.add_argument("--cv", action="store_true",
                        help="also time the ESOL 5-fold cross_val_score of "
                             "make_pipeline(GroverFeaturizer(), RidgeCV())")
    args = parser.parse_args()

    import torch

    from sklearn_papers.chem import GroverFeaturizer, NeuralFingerprint
    from sklearn_papers.chem._grover import _featurize
    from sklearn_papers.chem._validation import check_molecules
    from sklearn_papers.chem.featurizers import mols_to_graphs
    from sklearn_papers.chem.featurizers._grover_features import (
        grover_atom_features,
        grover_bond_features,
    )
    from sklearn_papers.datasets import load_delaney, load_moses_smiles

    torch.set_num_threads(1)
    if args.data == "esol":
        X, _ = load_delaney(return_X_y=True)
        args.n = len(X)
    else:
        X, _ = load_moses_smiles(n_samples=args.n, return_X_y=True)
    print(f"settings: n={args.n} {args.data.upper()} molecules, epochs={args.epochs}, "
          f"hidden={args.hidden}, "
          f"batch_size={args.batch_size}, torch threads=1, torch {torch.__version__}, best of "
          f"{args.repeats}")

    start = time.perf_counter()
    grover = GroverFeaturizer(batch_size=args.batch_size, descriptors=False,
                              fingerprint_bits=0).fit(X)
    t_fit = time.perf_counter() - start
    checkpoints = {name: GroverFeaturizer(pretrained=name, batch_size=args.batch_size,
                                          descriptors=False, fingerprint_bits=0).fit(X)
                   for name in args.pretrained}
    nf = NeuralFingerprint(batch_size=args.batch_size, random_state=0).fit(X[:50])
    fa, fb = grover_atom_features(), grover_bond_features()

    def generic():
        mols, _, smiles = grover._molecules(X, with_smiles=True)
        return mols_to_graphs(mols, fa, fb, smiles=smiles)

    timers = {"graphs": lambda: grover._graphs(X), "generic": generic,
              "nf": lambda: nf.transform(X)}
    for name, est in checkpoints.items():
        timers[f"grover {name}"] = (lambda est: lambda: est.transform(X))(est)
    peer = _chemprop_timers(X, args.batch_size)
    if peer is not None:
        timers["chemprop_feat"], timers["chemprop_enc"], version = peer
    best = _interleaved(timers, args.repeats)
    t_graphs, t_nf = best["graphs"], best["nf"]
    first = f"grover {args.pretrained[0]}"
    t_g = best[first]
    print(f"fit        GroverFeaturizer() (loads moses-small, checks X): {t_fit:.2f} s")
    print(f"featurize  GROVER graphs alone (parse + 151/14 features, no network) "
          f"{args.n / t_graphs:8.1f} mol/s | generic per-atom blocks (same arrays) "
          f"{args.n / best['generic']:8.1f} mol/s | ratio {best['generic'] / t_graphs:.2f}")
    print(f"featurize  GROVER {args.pretrained[0]}  {args.n / t_g:8.1f} mol/s | "
          f"NeuralFingerprint {args.n / t_nf:8.1f} mol/s | ratio GROVER / NF {t_nf / t_g:.2f}")
    if peer is not None:
        t_feat, t_enc = best["chemprop_feat"], best["chemprop_enc"]
        print(f"featurize  chemprop {version} featurizer alone {args.n / t_feat:8.1f} mol/s "
              f"| ratio GROVER graphs alone / it {t_feat / t_graphs:.2f} | ratio GROVER "
              f"transform / it {t_feat / t_g:.2f}")
        print(f"featurize  chemprop {version} featurizer + D-MPNN encoder "
              f"{args.n / t_enc:8.1f} mol/s | ratio GROVER / it {t_enc / t_g:.2f}")
    us = 1e6 / args.n
    for name in args.pretrained:
        t = best[f"grover {name}"]
        line = (f"RATIO      GroverFeaturizer(pretrained={name!r}).transform: "
                f"{args.n / t:7.1f} mol/s = {t * us:6.0f} us/mol CPU (graphs "
                f"{t_graphs * us:.0f} + network {(t - t_graphs) * us:.0f})")
        if peer is not None:
            line += (f" | chemprop featurizer {t_feat * us:.0f} us/mol | ratio of rates "
                     f"{t_feat / t:.2f} (target >= 1)")
        print(line)
    if args.cv:
        _cross_validation()
    if args.epochs == 0:
        return

    start = time.perf_counter()
    _featurize(check_molecules(X)[0], with_labels=True, n_jobs=1)
    t_lab = time.perf_counter() - start
    est = GroverFeaturizer(pretrained=None, hidden_size=args.hidden, max_epochs=args.epochs,
                           batch_size=args.batch_size, random_state=0)
    start = time.perf_counter()
    est.fit(X)
    t_fit = time.perf_counter() - start - t_lab
    reg = NeuralFingerprint(max_epochs=args.epochs, batch_size=args.batch_size,
                            random_state=0)
    y = np.array([len(s) for s in X], dtype=float)
    start = time.perf_counter()
    reg.fit(X, y)
    t_reg = time.perf_counter() - start
    rate = args.n * args.epochs / t_fit
    print(f"labels     GROVER graphs + labels + motifs {args.n / t_lab:8.1f} mol/s (once)")
    print(f"pretrain   GROVER {rate:8.1f} mol/s/epoch | NeuralFingerprint (supervised, incl. "
          f"featurization) {args.n * args.epochs / t_reg:8.1f} mol/s/epoch | ratio NF time "
          f"/ GROVER time {t_reg / t_fit:.2f}")


if __name__ == "__main__":
    main()
