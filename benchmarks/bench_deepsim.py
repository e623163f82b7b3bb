"""Benchmark: DeePSiMAutoencoder training throughput against a plain torch loop.

Both train the same networks (the package's encoder, up-convolutional generator,
discriminator and a frozen comparator CNN of the same widths) on the same images with the
same DeePSiM loss (pixel + feature + adversarial terms, normalised), batch size, Adam
settings and discriminator pause rule. The plain loop is written here from torch
primitives only: a shuffled index permutation, the discriminator step, the generator step.
Our estimator adds skorch's data loading and history, input validation, the comparator's
calibration and (for ``comparator="auto"`` with labels) training the comparator; the
comparator here is a given, already-built module so both sides do the same work.

Printed: training images per second of each (median of ``--repeats`` fits of ``--epochs``
epochs, after one warm-up fit) and the ratio ours / plain (target: >= 0.8).

Run: ``python benchmarks/bench_deepsim.py [--data digits|shapes] [--epochs 3] [--repeats 3]``.
The rates are recorded in ``benchmarks/results/deepsim.json`` (the docs' Benchmarks pages).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _data(name):
    if name == "digits":
        from sklearn.datasets import load_digits

        X = (load_digits().data / 16.0).astype(np.float32)
        return X, (8, 8, 1)
    from sklearn_papers.datasets import make_shapes

    X, _ = make_shapes(1500, image_size=16, random_state=0)
    return X, (16, 16, 1)


def _plain_loop(X, shape, comparator_module, *, channels, code, epochs, batch_size, lr,
                lambdas, seed):
    from sklearn_papers.nn._deepsim import (
        DeePSiMDiscriminator,
        DeePSiMEncoder,
        DeePSiMGenerator,
    )

    torch.manual_seed(seed)
    enc = DeePSiMEncoder(shape, code, channels=channels)
    gen = DeePSiMGenerator(code, shape, channels=channels)
    disc = DeePSiMDiscriminator(shape, channels=channels)
    comp = comparator_module.eval()
    for p in comp.parameters():
        p.requires_grad_(False)
    layer = comp.get_submodule("relu2")
    X_t = torch.as_tensor(X)

    def features(x):
        out = {}
        handle = layer.register_forward_hook(lambda m, i, o: out.setdefault("f", o))
        comp(x)
        handle.remove()
        return out["f"].flatten(1)

    with torch.no_grad():
        real_feats = features(X_t)
    img_scale = float(X_t.var(0, unbiased=False).mean())
    feat_scale = float(real_feats.var(0, unbiased=False).mean())
    params = list(enc.parameters()) + list(gen.parameters())
    opt_g = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), fused=True)
    opt_d = torch.optim.Adam(disc.parameters(), lr=lr, betas=(0.9, 0.999), fused=True)
    lam_img, lam_feat, lam_adv = lambdas
    gen_rng = torch.Generator().manual_seed(seed)
    last_adv = None
    for _ in range(epochs):
        perm = torch.randperm(X_t.shape[0], generator=gen_rng)
        for start in range(0, X_t.shape[0], batch_size):
            idx = perm[start:start + batch_size]
            real, rf = X_t[idx], real_feats[idx]
            fake = gen(enc(real))
            d_loss = (F.softplus(-disc(real)) + F.softplus(disc(fake.detach()))).mean()
            if last_adv is None or float(d_loss) >= 0.1 * last_adv:
                opt_d.zero_grad(set_to_none=True)
                d_loss.backward()
                opt_d.step()
            disc.requires_grad_(False)
            adv = F.softplus(-disc(fake)).mean()
            feat = ((features(fake) - rf) ** 2).mean() / feat_scale
            img = ((fake - real) ** 2).mean() / img_scale
            loss = lam_img * img + lam_feat * feat + lam_adv * adv
            opt_g.zero_grad(set_to_none=True)
            loss.backward()
            opt_g.step()
            disc.requires_grad_(True)
            last_adv = float(adv)
    return gen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["digits", "shapes"], default="digits")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from sklearn_papers.generative import DeePSiMAutoencoder
    from sklearn_papers.nn import ComparatorCNN

    X, shape = _data(args.data)
    torch.manual_seed(0)
    cnn = ComparatorCNN(shape, mean=float(X.mean()), std=float(X.std()))
    common = dict(channels=args.channels, epochs=args.epochs, batch_size=args.batch, lr=2e-3)
    lambdas = (1.0, 1.0, 0.1)

    def ours():
        DeePSiMAutoencoder(n_components=4, comparator=cnn, comparator_layer="relu2",
                           lambda_img=lambdas[0], lambda_feat=lambdas[1],
                           lambda_adv=lambdas[2], image_shape=shape[:2],
                           channels=args.channels, max_epochs=args.epochs,
                           batch_size=args.batch, lr=2e-3, random_state=0).fit(X)

    def plain():
        _plain_loop(X, shape, cnn, code=4, lambdas=lambdas, seed=0, **common)

    times = {"ours": [], "plain": []}
    for fn in (ours, plain):  # warm-up
        fn()
    for _ in range(args.repeats):
        for name, fn in (("ours", ours), ("plain", plain)):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    n_images = X.shape[0] * args.epochs
    rate = {k: n_images / statistics.median(v) for k, v in times.items()}
    print(f"DeePSiM autoencoder training on {args.data} ({X.shape[0]} images, "
          f"{shape[0]}x{shape[1]}), {args.epochs} epochs, batch {args.batch}, channels "
          f"{args.channels}, {torch.get_num_threads()} thread(s), median of {args.repeats}:")
    print(f"  sklearn_papers DeePSiMAutoencoder  {rate['ours']:9.0f} images/s")
    print(f"  plain torch loop                   {rate['plain']:9.0f} images/s")
    print(f"  ratio ours / plain                 {rate['ours'] / rate['plain']:9.2f}  "
          "(target >= 0.8)")

    from _record import record

    record("deepsim", title="DeePSiM autoencoder training: the estimator against a plain torch loop",
           peer="a plain torch loop over the same networks, loss and Adam settings",
           argv=argv, rows=[{
               "what": f"{args.data} ({X.shape[0]} images, {shape[0]} x {shape[1]}), "
                       f"{args.epochs} epochs, batch {args.batch}, {args.channels} channels, "
                       f"{torch.get_num_threads()} thread(s), median of {args.repeats} fits",
               "ours": rate["ours"], "peer": rate["plain"], "unit": "images/s",
               "better": "higher"}],
           notes="The estimator's extra work is skorch's data loading and history, input "
                 "validation and the comparator's calibration pass.")


if __name__ == "__main__":
    main()
