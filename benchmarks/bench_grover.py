"""Speed of GROVER: pretraining and featurization throughput, against NeuralFingerprint.

On MOSES molecules (bundled): (1) featurization molecules/s of ``GroverFeaturizer``
(parse + 151/14 features + forward pass) with the shipped ``moses-small`` checkpoint, and
of the peer ``NeuralFingerprint`` (random weights, 62/6 features) in the same process;
(2) pretraining molecules/s per epoch of ``GroverFeaturizer.fit`` (graph + contextual
labels + 85 motifs are computed once; the rate counts training epochs only) at the given
settings, against ``NeuralFingerprint.fit(X, y)`` trained for the same epochs on a dummy
target. Both on CPU with one torch thread. Prints the settings and the ratios (peer time /
ours: above 1 means GROVER is faster; GROVER is the larger model, so expect below 1).

Run: ``.venv/bin/python benchmarks/bench_grover.py [--n 2000] [--epochs 2]
[--hidden 64]``.
"""

import argparse
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000, help="MOSES molecules")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    import torch

    from sklearn_papers.chem import GroverFeaturizer, NeuralFingerprint
    from sklearn_papers.chem._grover import _featurize
    from sklearn_papers.chem._validation import check_molecules
    from sklearn_papers.datasets import load_moses_smiles

    torch.set_num_threads(1)
    X, _ = load_moses_smiles(n_samples=args.n, return_X_y=True)
    print(f"settings: n={args.n} MOSES molecules, epochs={args.epochs}, hidden={args.hidden}, "
          f"batch_size={args.batch_size}, torch threads=1, torch {torch.__version__}")

    grover = GroverFeaturizer(pretrained="moses-small", max_epochs=0,
                              batch_size=args.batch_size).fit(X[:1])
    start = time.perf_counter()
    grover.transform(X)
    t_g = time.perf_counter() - start
    nf = NeuralFingerprint(batch_size=args.batch_size, random_state=0).fit(X[:50])
    start = time.perf_counter()
    nf.transform(X)
    t_nf = time.perf_counter() - start
    print(f"featurize  GROVER moses-small {args.n / t_g:8.1f} mol/s | NeuralFingerprint "
          f"{args.n / t_nf:8.1f} mol/s | ratio NF time / GROVER time {t_nf / t_g:.2f}")

    start = time.perf_counter()
    _featurize(check_molecules(X)[0], with_labels=True, n_jobs=1)
    t_lab = time.perf_counter() - start
    est = GroverFeaturizer(hidden_size=args.hidden, max_epochs=args.epochs,
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
