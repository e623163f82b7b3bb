"""Benchmark: RoIAlign forward / forward + backward, and Mask R-CNN training iterations/s.

1. RoIAlign (``sklearn_papers.nn.roi_align``: two batched matrix products per call) against
   a plain-torch peer in the same process, ``F.grid_sample`` at the ``sampling_ratio^2``
   points of every bin followed by an average pool (the usual pure-torch RoIAlign), on the
   feature map of a 64 x 64 FPN level P2 (8 images, 32 channels, 16 x 16) with 512 RoIs,
   7 x 7 and 14 x 14 outputs. The two agree to float precision away from the map border
   (grid_sample's zero padding differs from RoIAlign's clamping at the edge; the check uses
   interior RoIs).
2. Training: iterations/s of ``MaskRCNNModule`` (FPN, batch 8, 64 x 64 ``make_scenes``) in a
   plain torch loop, and of ``MaskRCNN.fit`` (skorch) on the same data: the ratio is the
   estimator's overhead.
3. ``--torchvision``: makes a separate venv (default ``/tmp/sklearn_papers_torchvision``,
   ``pip install torch==2.14.1 torchvision==0.29.1``, about 5.5 GB; never part of
   ``make test``), runs ``torchvision.ops.roi_align`` / ``roi_pool`` there on the same saved
   inputs and prints the largest differences (float64) and the time ratios ours / theirs,
   both timed in that venv's process, interleaved (our ``nn/_detection.py`` needs torch
   only and is loaded there by path), so that the machine's load hits both alike (target
   for RoIAlign forward + backward: <= 1.2).

Run: ``python benchmarks/bench_mask_rcnn.py [--repeats 20] [--threads 1] [--torchvision]``.
The timings are recorded in ``benchmarks/results/mask_rcnn.json`` (the docs' Benchmarks
pages), the torchvision rows only when ``--torchvision`` ran.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from sklearn_papers.nn import roi_align, roi_pool

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats + 2):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times[2:])


def grid_sample_roi_align(features, rois, output_size, spatial_scale, sampling_ratio):
    """Plain-torch RoIAlign peer (aligned=True): grid_sample at every sampling point of
    every bin, then the mean over each bin's ``sampling_ratio^2`` points."""
    n, c, h, w = features.shape
    k, s = rois.shape[0], sampling_ratio
    x1 = rois[:, 1] * spatial_scale - 0.5
    y1 = rois[:, 2] * spatial_scale - 0.5
    bw = (rois[:, 3] - rois[:, 1]) * spatial_scale / output_size
    bh = (rois[:, 4] - rois[:, 2]) * spatial_scale / output_size
    steps = (torch.arange(output_size * s, dtype=features.dtype) + 0.5) / s
    xs = x1[:, None] + steps[None] * bw[:, None]  # (K, P * s) in cell-index coordinates
    ys = y1[:, None] + steps[None] * bh[:, None]
    gx = (xs + 0.5) / w * 2 - 1  # align_corners=False: index i -> (2 i + 1) / w - 1
    gy = (ys + 0.5) / h * 2 - 1
    grid = torch.stack([gx[:, None, :].expand(k, output_size * s, output_size * s),
                        gy[:, :, None].expand(k, output_size * s, output_size * s)], -1)
    sampled = F.grid_sample(features[rois[:, 0].long()], grid, mode="bilinear",
                            padding_mode="zeros", align_corners=False)
    return F.avg_pool2d(sampled, s)


def _inputs(dtype=torch.float32, n_rois=512, interior=False):
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(8, 32, 16, 16, generator=gen, dtype=dtype)
    lo = torch.rand(n_rois, 2, generator=gen, dtype=dtype) * 40 + (6 if interior else 0)
    size = torch.rand(n_rois, 2, generator=gen, dtype=dtype) * (12 if interior else 40) + 2
    rois = torch.cat([torch.randint(0, 8, (n_rois, 1), generator=gen).to(dtype), lo,
                      lo + size], 1)
    if interior:
        rois[:, 1:] = rois[:, 1:].clamp(6, 58)
    return feats, rois


def bench_roi_align(repeats):
    print("== RoIAlign: ours (batched matrix products) vs plain-torch grid_sample peer ==")
    f64, r64 = _inputs(torch.float64, interior=True)
    diff = (roi_align(f64, r64, 7, 0.25, 2, True)
            - grid_sample_roi_align(f64, r64, 7, 0.25, 2)).abs().max().item()
    print(f"  interior RoIs, float64: max |ours - grid_sample| = {diff:.2e}")
    feats, rois = _inputs()
    rows = []
    for out in (7, 14):
        row = {}
        for name, fn in (("ours", lambda f: roi_align(f, rois, out, 0.25, 2, True)),
                         ("grid_sample", lambda f: grid_sample_roi_align(f, rois, out, 0.25,
                                                                         2))):
            def fwd():
                with torch.no_grad():
                    fn(feats)

            def fwd_bwd():
                x = feats.detach().requires_grad_(True)
                fn(x).sum().backward()

            row[name] = (_median_time(fwd, repeats), _median_time(fwd_bwd, repeats))
        (of, ob), (gf, gb) = row["ours"], row["grid_sample"]
        print(f"  {out}x{out}, 512 RoIs: forward ours {1e3 * of:.2f} ms, grid_sample "
              f"{1e3 * gf:.2f} ms (ratio {of / gf:.2f}); forward+backward ours "
              f"{1e3 * ob:.2f} ms, grid_sample {1e3 * gb:.2f} ms (ratio {ob / gb:.2f})")
        what = f"RoIAlign {out} x {out}, 512 RoIs on (8, 32, 16, 16), float32"
        rows += [{"what": f"{what}, forward; peer: grid_sample", "ours": 1e3 * of,
                  "peer": 1e3 * gf, "unit": "ms", "better": "lower"},
                 {"what": f"{what}, forward + backward; peer: grid_sample", "ours": 1e3 * ob,
                  "peer": 1e3 * gb, "unit": "ms", "better": "lower"}]
    return rows


def bench_training(steps):
    import numpy as np

    from sklearn_papers.datasets import make_scenes
    from sklearn_papers.nn._mask_rcnn import MaskRCNNModule
    from sklearn_papers.vision import MaskRCNN
    from sklearn_papers.vision._mask_rcnn import _pad_targets, _targets_from_maps

    print(f"== training: FPN Mask R-CNN, batch 8, 64 x 64 scenes, {steps} steps ==")
    data = make_scenes(8 * steps, image_size=64, random_state=0)
    targets = _targets_from_maps(data.instance_maps, data.semantic_maps,
                                 [(64, 64)] * len(data.images))
    boxes, labels, masks = (torch.from_numpy(a) for a in _pad_targets(targets, (64, 64)))
    images = torch.from_numpy(np.ascontiguousarray(np.moveaxis(data.images, -1, 1)))
    torch.manual_seed(0)
    # the mask head of MaskRCNN's defaults
    defaults = MaskRCNN().get_params()
    module = MaskRCNNModule(3, 3, fpn=True, mask_image=defaults["mask_image"],
                            mask_box_expand=defaults["mask_box_expand"])
    opt = torch.optim.AdamW(module.parameters(), lr=3e-3, weight_decay=1e-4)
    start = time.perf_counter()
    for i in range(steps):
        sl = slice(8 * i, 8 * i + 8)
        loss = module.losses(images[sl], boxes[sl], labels[sl], masks[sl])["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    plain = steps / (time.perf_counter() - start)
    est = MaskRCNN(max_epochs=1, batch_size=8, random_state=0)
    start = time.perf_counter()
    est.fit(data.images, data.instance_maps, data.semantic_maps)
    fitted = steps / (time.perf_counter() - start)
    print(f"  plain torch loop: {plain:.2f} it/s ({8 * plain:.1f} images/s); MaskRCNN.fit: "
          f"{fitted:.2f} it/s (ratio fit / plain {fitted / plain:.2f}, includes validation "
          f"and target building)")
    return [{"what": f"training, FPN, batch 8, 64 x 64 scenes, {steps} steps; ours: "
                     f"MaskRCNN.fit, peer: a plain torch loop over MaskRCNNModule",
             "ours": fitted, "peer": plain, "unit": "iterations/s", "better": "higher"}]


_CHILD = r"""
import importlib.util, statistics, sys, time
import torch
from torchvision.ops import roi_align, roi_pool
torch.set_num_threads(int(sys.argv[3]))
spec = importlib.util.spec_from_file_location("ours_detection", sys.argv[5])
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)  # our RoIAlign needs torch only: timed beside theirs
data = torch.load(sys.argv[1])
out = {"torch": str(torch.__version__)}
f64, r64 = data["f64"], data["r64"]
out["align64"] = roi_align(f64, r64, 7, 0.25, 2, True)
out["pool64"] = roi_pool(f64, r64, 7, 0.25)
f, r = data["f"], data["r"]
def fwd(op):
    def run():
        with torch.no_grad():
            op(f, r, 7, 0.25, 2, True)
    return run
def fb(op):
    def run():
        x = f.detach().requires_grad_(True)
        op(x, r, 7, 0.25, 2, True).sum().backward()
    return run
fns = {"theirs_fwd": fwd(roi_align), "ours_fwd": fwd(ours.roi_align),
       "theirs_fb": fb(roi_align), "ours_fb": fb(ours.roi_align)}
times = {k: [] for k in fns}
for _ in range(2):  # warm-up
    for fn in fns.values():
        fn()
for _ in range(int(sys.argv[4])):  # interleaved, so that load changes hit both alike
    for k, fn in fns.items():
        s = time.perf_counter(); fn(); times[k].append(time.perf_counter() - s)
out["times"] = torch.tensor([statistics.median(times[k]) for k in
                             ("theirs_fwd", "theirs_fb", "ours_fwd", "ours_fb")])
torch.save(out, sys.argv[2])
"""


def bench_torchvision(venv, threads, repeats):
    print("== torchvision (separate venv) ==")
    venv = Path(venv)
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"  creating {venv} (pip install torch==2.14.1 torchvision==0.29.1, ~5.5 GB)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "torch==2.14.1",
                        "torchvision==0.29.1"], check=True)
    f64, r64 = _inputs(torch.float64)
    f, r = _inputs()
    with tempfile.TemporaryDirectory() as tmp:
        inp, res = os.path.join(tmp, "in.pt"), os.path.join(tmp, "out.pt")
        torch.save({"f64": f64, "r64": r64, "f": f, "r": r}, inp)
        script = os.path.join(tmp, "child.py")
        Path(script).write_text(_CHILD)
        detection = Path(roi_align.__code__.co_filename)
        subprocess.run([str(py), script, inp, res, str(threads), str(repeats),
                        str(detection)], check=True)
        theirs = torch.load(res)
    d_align = (roi_align(f64, r64, 7, 0.25, 2, True) - theirs["align64"]).abs().max().item()
    d_pool = (roi_pool(f64, r64, 7, 0.25) - theirs["pool64"]).abs().max().item()
    print(f"  float64, 512 RoIs: max |ours - torchvision| RoIAlign {d_align:.2e}, RoIPool "
          f"{d_pool:.2e}")
    tf, tb, of, ob = theirs["times"].tolist()
    print(f"  RoIAlign 7x7, 512 RoIs, both timed in one process of the torchvision venv "
          f"(torch {theirs['torch']}, interleaved): forward ours {1e3 * of:.2f} ms vs "
          f"torchvision {1e3 * tf:.2f} ms (ratio {of / tf:.2f}); forward+backward ours "
          f"{1e3 * ob:.2f} ms vs {1e3 * tb:.2f} ms (ratio {ob / tb:.2f}; target <= 1.2)")
    what = (f"RoIAlign 7 x 7, 512 RoIs, in the torchvision venv (torch {theirs['torch']}, "
            f"largest float64 difference {d_align:.1e})")
    return [{"what": f"{what}, forward; peer: torchvision.ops.roi_align", "ours": 1e3 * of,
             "peer": 1e3 * tf, "unit": "ms", "better": "lower"},
            {"what": f"{what}, forward + backward; peer: torchvision.ops.roi_align",
             "ours": 1e3 * ob, "peer": 1e3 * tb, "unit": "ms", "better": "lower"}]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--torchvision", action="store_true")
    parser.add_argument("--venv", default="/tmp/sklearn_papers_torchvision")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s)")
    rows = bench_roi_align(args.repeats) + bench_training(args.steps)
    peers = "a plain-torch RoIAlign (F.grid_sample, then an average pool); a plain torch loop"
    if args.torchvision:
        rows += bench_torchvision(args.venv, args.threads, args.repeats)
        peers += "; torchvision 0.29.1"

    from _record import record

    record("mask_rcnn", title="RoIAlign and Mask R-CNN training against plain-torch peers",
           peer=peers, rows=rows, argv=argv,
           notes=f"RoIAlign: medians of {args.repeats} timings after two warm-up calls, "
                 f"{args.threads} torch thread(s), in one process. The training row sets "
                 "MaskRCNN.fit (which also builds the targets, checks the input and picks "
                 "anchors from the training boxes) beside a plain loop over MaskRCNNModule "
                 "at its own defaults, with MaskRCNN's mask head (mask_image, "
                 "mask_box_expand): a ratio near 1 means the estimator adds no "
                 "cost of its own.")


if __name__ == "__main__":
    main()
