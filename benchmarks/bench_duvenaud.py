"""Speed of NeuralFingerprint: featurization and training throughput, against chemprop.

On Delaney (1128 molecules): (1) featurization molecules/s (parse + graph arrays) of ours
and of chemprop's ``SimpleMoleculeMolGraphFeaturizer``; (2) training molecules/s per
epoch of ``NeuralFingerprintRegressor`` and of chemprop's D-MPNN (``BondMessagePassing``,
mean aggregation, 1-hidden-layer FFN) at the same hidden size, depth, batch size and
epochs, both on CPU with one torch thread. Prints the ratios (chemprop time / ours: above
1 means we are faster). Without chemprop installed (the ``bench`` extra) only our numbers
are printed.

Run: ``.venv/bin/python benchmarks/bench_duvenaud.py [--epochs 5]
[--hidden 100] [--depth 3] [--repeats 2]``.
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


def ours(X, y, args):
    from sklearn_papers.chem import NeuralFingerprintRegressor
    from sklearn_papers.chem._validation import check_molecules
    from sklearn_papers.chem.featurizers import mols_to_graphs

    feat = _best(lambda: mols_to_graphs(check_molecules(X)[0]), args.repeats)
    reg = NeuralFingerprintRegressor(fp_length=args.hidden, radius=args.depth,
                                     conv_width=args.hidden, hidden_size=args.hidden,
                                     max_epochs=args.epochs, batch_size=50, random_state=0)
    start = time.perf_counter()
    reg.fit(X, y)
    total = time.perf_counter() - start
    epoch = float(np.mean(reg.net_.history[:, "dur"]))
    return feat, epoch, total


def chemprop_run(X, y, args):
    from chemprop import data, featurizers, models, nn
    from lightning import pytorch as pl

    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()

    def featurize():
        points = [data.MoleculeDatapoint.from_smi(s, [t]) for s, t in zip(X, y)]
        return data.MoleculeDataset(points, featurizer), points

    feat = _best(lambda: [featurizer(p.mol) for p in featurize()[1]], args.repeats)
    dataset, _ = featurize()
    loader = data.build_dataloader(dataset, batch_size=50, num_workers=0, seed=0)
    mp = nn.BondMessagePassing(d_h=args.hidden, depth=args.depth)
    ffn = nn.RegressionFFN(input_dim=mp.output_dim, hidden_dim=args.hidden, n_layers=1)
    model = models.MPNN(mp, nn.MeanAggregation(), ffn, batch_norm=False)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    start = time.perf_counter()
    trainer.fit(model, loader)
    total = time.perf_counter() - start
    return feat, total / args.epochs, total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)

    import torch

    from sklearn_papers.datasets import load_delaney

    torch.set_num_threads(1)
    X, y = load_delaney(return_X_y=True)
    n = len(X)
    rows = {"sklearn_papers NeuralFingerprint": ours(X, y, args)}
    chemprop, note = import_chemprop()
    if chemprop is None:
        print(f"{note}; install the peers with `make bench` to compare.")
    else:
        if note:
            print(note)
        rows["chemprop D-MPNN"] = chemprop_run(X, y, args)
    print(f"Delaney, {n} molecules, hidden={args.hidden}, depth={args.depth}, "
          f"epochs={args.epochs}, batch 50, CPU, 1 torch thread")
    print(f"{'':36s} {'featurize mol/s':>16s} {'train mol/s/epoch':>18s} {'fit s':>8s}")
    for name, (feat, epoch, total) in rows.items():
        print(f"{name:36s} {n / feat:16.0f} {n / epoch:18.0f} {total:8.2f}")
    if len(rows) == 2:
        (f1, e1, _), (f2, e2, _) = rows.values()
        print(f"ratio chemprop/ours: featurize time {f2 / f1:.2f}, epoch time {e2 / e1:.2f}")


if __name__ == "__main__":
    main()
