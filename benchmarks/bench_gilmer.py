"""Training speed of MPNNRegressor against chemprop's D-MPNN on ESOL, in one process.

Both models train on the same ESOL molecules (Delaney, 1128) with the same hidden size,
number of message passing steps and batch size; graphs are featurized before the timed
epochs for both (chemprop: ``dataset.cache = True``; ours: skorch's per-epoch duration,
which excludes the featurization done at the start of ``fit``). The statistic is the
median over epochs after the first of training molecules per second, and the printed
ratio is ours / chemprop (above 1: ours is faster).

The models differ by design: ours is Gilmer et al.'s MPNN (edge-network messages on atoms,
GRU update, set2set readout); chemprop's is the directed MPNN of Yang et al. (2019) (bond
messages, mean aggregation). This measures the cost of one epoch of each at equal width.

Run: ``python benchmarks/bench_gilmer.py [--hidden 64] [--steps 6] [--epochs 4]
[--threads 1]``.

chemprop is optional: install it without its CUDA-pulling dependencies
(``pip install --no-deps chemprop lightning torchmetrics lightning-utilities astartes
multiprocess dill``). If it cannot be imported, only our model runs and the peer is
reported as skipped.
"""

import argparse
import statistics
import time

import numpy as np
import torch
from _peers import import_chemprop


def _ours(X, y, hidden, steps, epochs, batch_size):
    from sklearn_papers.chem import MPNNRegressor

    start = time.perf_counter()
    # the paper's model (edge network, set2set), not the package's defaults
    reg = MPNNRegressor(hidden_size=hidden, n_steps=steps, set2set_steps=steps,
                        edge_hidden_size=2 * hidden, max_epochs=epochs,
                        batch_size=batch_size, message="edge_network", readout="set2set",
                        lr_schedule="constant", random_state=0).fit(X, y)
    total = time.perf_counter() - start
    durations = [float(d) for d in reg.net_.history[:, "dur"]]
    return durations, total


class _EpochTimer:
    """Lightning callback recording the wall time of each training epoch."""

    def __init__(self):
        import lightning.pytorch as pl

        class Timer(pl.Callback):
            def __init__(self):
                self.durations = []

            def on_train_epoch_start(self, trainer, module):
                self._t = time.perf_counter()

            def on_train_epoch_end(self, trainer, module):
                self.durations.append(time.perf_counter() - self._t)

        self.callback = Timer()


def _chemprop(X, y, hidden, steps, epochs, batch_size):
    import logging
    import warnings

    import lightning.pytorch as pl

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    from chemprop import data, featurizers, models, nn

    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()
    points = [data.MoleculeDatapoint.from_smi(s, [t]) for s, t in zip(X, y)]
    dataset = data.MoleculeDataset(points, featurizer)
    scaler = dataset.normalize_targets()
    dataset.cache = True  # featurize before timing, as ours does
    loader = data.build_dataloader(dataset, batch_size=batch_size, num_workers=0, seed=0)
    mp = nn.BondMessagePassing(d_h=hidden, depth=steps)
    ffn = nn.RegressionFFN(input_dim=hidden, hidden_dim=hidden,
                           output_transform=nn.UnscaleTransform.from_standard_scaler(scaler))
    model = models.MPNN(mp, nn.MeanAggregation(), ffn)
    timer = _EpochTimer().callback
    trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=epochs, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[timer])
    start = time.perf_counter()
    trainer.fit(model, loader)
    return timer.durations, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for both models (small graph batches: 1 is "
                             "usually fastest on CPU)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    X, y = np.asarray(X, dtype=object), np.asarray(y, dtype=float)
    n = len(X)
    print(f"ESOL: {n} molecules; hidden={args.hidden}, steps={args.steps}, "
          f"batch={args.batch_size}, {args.epochs} epochs; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")

    def rate(durations):
        timed = durations[1:] if len(durations) > 1 else durations
        return n / statistics.median(timed)

    ours, ours_total = _ours(X, y, args.hidden, args.steps, args.epochs, args.batch_size)
    r_ours = rate(ours)
    print(f"ours   MPNNRegressor (edge network, GRU, set2set): {r_ours:8.0f} molecules/s "
          f"per epoch (median epoch {statistics.median(ours[1:] or ours):.2f} s; fit "
          f"incl. featurization {ours_total:.1f} s)")

    chemprop, note = import_chemprop()
    if chemprop is None:
        print(f"peer   chemprop D-MPNN: SKIPPED, {note}")
        return
    if note:
        print(f"note   {note}")
    peer, peer_total = _chemprop(X, y, args.hidden, args.steps, args.epochs, args.batch_size)
    r_peer = rate(peer)
    print(f"peer   chemprop {chemprop.__version__} D-MPNN (bond messages, mean):  "
          f"{r_peer:8.0f} molecules/s per epoch (median epoch "
          f"{statistics.median(peer[1:] or peer):.2f} s; fit {peer_total:.1f} s)")
    print(f"ratio  ours / chemprop = {r_ours / r_peer:.2f} (above 1: ours trains faster)")
    _arithmetic(X, args.hidden)


def _arithmetic(X, hidden):
    """Print the analytic multiply-adds per message passing step of each model on X."""
    from rdkit import Chem

    mols = [Chem.MolFromSmiles(s) for s in X]
    n_atoms = float(np.mean([m.GetNumAtoms() for m in mols]))
    n_edges = 2.0 * float(np.mean([m.GetNumBonds() for m in mols]))
    ours = (n_edges + 6 * n_atoms) * hidden ** 2   # edge-network products + GRU (2 x d->3d)
    peer = n_edges * hidden ** 2                   # one d x d product per directed bond
    print(f"cost   multiply-adds per step per molecule (analytic; {n_atoms:.1f} atoms, "
          f"{n_edges:.1f} directed edges): ours (E + 6N) d^2 = {ours / 1e3:.0f}k, "
          f"chemprop E d^2 = {peer / 1e3:.0f}k, ratio {ours / peer:.2f}")


if __name__ == "__main__":
    main()
