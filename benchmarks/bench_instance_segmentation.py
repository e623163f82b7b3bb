"""Benchmark: InstanceSegmenter training and inference speed against a plain torch loop.

Same network (``JointSegmenterModule``), loss (``JointSegmentationLoss``), optimiser (Adam),
batch size and data (``make_scenes``, 64 x 64) for both. Training: images/s of
``InstanceSegmenter.fit`` (skorch, target building included) vs a hand-written epoch loop
over pre-built targets. Inference: images/s of the network alone
(``predict_outputs`` vs ``module(x)`` under ``torch.no_grad``) and of the full pipeline
(``predict``: grouping and upsampling too) for centre seeding and mean-shift, with and
without SLIC. Ratios ours / plain torch are printed (target: training and network-only
inference within 1.3x). Times are process CPU seconds (``time.process_time``; with one
torch thread this is the compute a free core would take, and it is robust to other load on
a shared machine); both paths are warmed up first (imports, allocator, Adam's first step).

Run: ``python benchmarks/bench_instance_segmentation.py [--n-train 128] [--epochs 2] [--threads 1]``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _plain_torch_fit(est, images, targets, epochs, batch_size, lr, seed):
    """A plain epoch loop: same module class, loss, optimiser and batch size."""
    from sklearn_papers.nn._segmenter import JointSegmentationLoss, JointSegmenterModule

    torch.manual_seed(seed)
    module = JointSegmenterModule(
        images.shape[1], est.n_classes_, embedding_dim=est.embedding_dim, width=est.width,
        decoder_width=max(8, est.width // 2), output_stride=est.output_stride,
        norm=est.norm)
    loss_fn = JointSegmentationLoss(est.class_weights_, gamma=est.gamma,
                                    delta_v=est.delta_v, delta_d=est.delta_d)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    x_all = torch.as_tensor(images)
    t_all = {k: torch.as_tensor(v) for k, v in targets.items()}
    gen = torch.Generator().manual_seed(seed)
    start = time.process_time()
    for _ in range(epochs):
        perm = torch.randperm(len(x_all), generator=gen)
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            opt.zero_grad()
            loss = loss_fn(module(x_all[idx]), {k: v[idx] for k, v in t_all.items()})
            loss.backward()
            opt.step()
    return time.process_time() - start, module


def _targets(est, data):
    """The low-resolution training targets the estimator builds (semantic, centre, ids)."""
    from sklearn_papers.vision._instance_grouping import (
        _center_heatmap,
        _mode_downsample,
        _relabel,
    )

    s = est.output_stride
    inst = np.stack([_relabel(m) for m in _mode_downsample(data.instance_maps, s)])
    sem = _mode_downsample(data.semantic_maps, s)
    centre = np.stack([_center_heatmap(m) for m in inst]).astype(np.float32)
    return {"semantic": sem, "center": centre, "instance": inst}


def _first(data, n):
    """The first ``n`` scenes of a ``make_scenes`` bunch (maps only)."""
    from sklearn.utils import Bunch

    return Bunch(instance_maps=data.instance_maps[:n], semantic_maps=data.semantic_maps[:n])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=128)
    parser.add_argument("--n-test", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--width", type=int, default=16)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from sklearn_papers.datasets import make_scenes
    from sklearn_papers.vision import InstanceSegmenter

    train = make_scenes(args.n_train, random_state=0)
    test = make_scenes(args.n_test, random_state=1)
    images = np.ascontiguousarray(np.moveaxis(train.images, -1, 1))
    warm = InstanceSegmenter(width=args.width, max_epochs=1, random_state=0)
    warm.fit(train.images[:16], train.instance_maps[:16],
             semantic_maps=train.semantic_maps[:16])
    _plain_torch_fit(warm, images[:16], _targets(warm, _first(train, 16)), 1, 16, 1e-3, 0)
    est = InstanceSegmenter(width=args.width, max_epochs=args.epochs, random_state=0)
    start = time.process_time()
    est.fit(train.images, train.instance_maps, semantic_maps=train.semantic_maps)
    t_ours = time.process_time() - start
    t_plain, module = _plain_torch_fit(est, images, _targets(est, train), args.epochs,
                                       est.batch_size, est.lr, 0)
    n_seen = args.n_train * args.epochs
    print(f"settings: {args.n_train} training / {args.n_test} test scenes of 64 x 64 x 3, "
          f"width {est.width}, output stride {est.output_stride}, batch {est.batch_size}, "
          f"{args.epochs} epochs, {torch.get_num_threads()} torch thread(s), CPU; rates from "
          "process CPU time")
    print("training (images/s):")
    print(f"  InstanceSegmenter.fit (skorch, targets built)  {n_seen / t_ours:8.1f}")
    print(f"  plain torch loop (targets pre-built)           {n_seen / t_plain:8.1f}")
    print(f"  ratio plain / ours (time ours / plain)         {t_ours / t_plain:8.2f}")

    x_test = np.ascontiguousarray(np.moveaxis(test.images, -1, 1))
    module.eval()
    start = time.process_time()
    with torch.no_grad():
        for i in range(0, len(x_test), est.batch_size):
            module(torch.as_tensor(x_test[i:i + est.batch_size]))
    t_plain_inf = time.process_time() - start
    start = time.process_time()
    est.predict_outputs(test.images)
    t_net = time.process_time() - start
    print("inference (images/s):")
    print(f"  plain torch module forward                     {args.n_test / t_plain_inf:8.1f}")
    print(f"  InstanceSegmenter.predict_outputs (network)    {args.n_test / t_net:8.1f}"
          f"   (time ratio ours / plain {t_net / t_plain_inf:.2f})")
    for grouping in ("centers", "mean_shift", "connected_components"):
        for slic in (True, False):
            est.set_params(grouping=grouping, slic=slic)
            start = time.process_time()
            est.predict(test.images)
            t = time.process_time() - start
            name = f"predict grouping={grouping}, slic={slic}"
            print(f"  {name:47s}{args.n_test / t:8.1f}")

    from _record import record

    setting = (f"{args.epochs} epochs, {args.n_train} training / {args.n_test} test "
               f"scenes of 64 x 64, width {est.width}")
    record("segmentation", title="InstanceSegmenter: training and network inference",
           peer="a plain torch loop over the same module, loss, optimiser and batches",
           argv=argv, rows=[
               {"what": f"training, {setting}", "ours": n_seen / t_ours,
                "peer": n_seen / t_plain, "unit": "images/s (CPU time)", "better": "higher"},
               {"what": f"network inference, {setting}", "ours": args.n_test / t_net,
                "peer": args.n_test / t_plain_inf, "unit": "images/s (CPU time)",
                "better": "higher"}],
           notes="Rates from process CPU time, so other processes' load does not enter "
                 "them. Our training builds its targets; the plain loop gets them built.")


if __name__ == "__main__":
    main()
