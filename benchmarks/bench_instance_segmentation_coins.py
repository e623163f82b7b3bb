"""Benchmark: instance segmentation of a real photograph, learned vs classical.

``skimage.data.coins()`` prepared as in ``examples/plot_instance_segmentation_coins.py``: labels from
scikit-image's gallery recipe (24 coins), ``MaskRCNN`` and ``InstanceSegmenter`` trained at
their defaults on 64 x 64 tiles of the left two thirds of the image at half resolution
(with the 8 flips and rotations), compared with Otsu threshold + fill holes + connected
components on (a) the held-out tiles, (b) the whole held-out strip and (c) the whole
image at its native resolution (coins twice the size seen in ``fit``). Scores: symmetric
best Dice of the label maps and COCO mask AP@[.5:.95] of the scored instances, as mean and
standard deviation over the seeds. The learned models are scored at their defaults
(``predict_scales="auto"``; MaskRCNN also ``predict_tile_size="auto"``), with
``predict_scales=(1.0,)`` (the input scale only) and MaskRCNN with
``predict_tile_size=None`` (whole images, never windows).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_instance_segmentation_coins.py [--seeds 0,1,2] [--threads 1]``.
Per-seed results are printed as they are computed, the table at the end; the means are
recorded in ``benchmarks/results/coins.json`` (each model's figure beside Otsu's).
"""

import argparse
import os
import sys
import time

import numpy as np
import torch
from scipy import ndimage as ndi
from skimage import data, filters, segmentation, transform

from sklearn_papers.metrics import mask_average_precision, symmetric_best_dice
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _record import record  # noqa: E402

OTSU = "Otsu + fill holes + components"
#: Settings scored besides the defaults: (label, estimator class, parameters).
VARIANTS = (("MaskRCNN", MaskRCNN, {}),
            ("MaskRCNN", MaskRCNN, {"predict_scales": (1.0,)}),
            ("MaskRCNN", MaskRCNN, {"predict_tile_size": None}),
            ("InstanceSegmenter", InstanceSegmenter, {}),
            ("InstanceSegmenter", InstanceSegmenter, {"predict_scales": (1.0,)}))


def coin_labels(image):
    """scikit-image's gallery recipe: Sobel elevation, markers, watershed, fill, label."""
    elevation = filters.sobel(image)
    markers = np.zeros_like(image)
    markers[image < 30] = 1
    markers[image > 150] = 2
    coins_mask = ndi.binary_fill_holes(segmentation.watershed(elevation, markers) - 1)
    labels, _ = ndi.label(coins_mask)
    sizes = np.bincount(labels.ravel())
    labels[sizes[labels] < 100] = 0  # drop specks
    return segmentation.relabel_sequential(labels)[0]


def tiles(image, label_map, size=64, step=32):
    """Overlapping size x size tiles (the last row and column flush with the edges)."""
    h, w = image.shape
    rows = sorted({*range(0, h - size + 1, step), h - size})
    cols = sorted({*range(0, w - size + 1, step), w - size})
    return ([image[r:r + size, c:c + size] for r in rows for c in cols],
            [label_map[r:r + size, c:c + size] for r in rows for c in cols])


def dihedral(images, maps):
    """The 8 flips and rotations of every tile."""
    out_x, out_y = [], []
    for im, m in zip(images, maps):
        for k in range(4):
            for flip in (False, True):
                a, b = np.rot90(im, k), np.rot90(m, k)
                out_x.append(np.fliplr(a) if flip else a)
                out_y.append(np.fliplr(b) if flip else b)
    return np.stack(out_x), np.stack(out_y)


def prepare():
    """Training tiles and the three evaluation settings."""
    coins = data.coins()
    labels = coin_labels(coins)
    half = transform.rescale(coins, 0.5, anti_aliasing=True)
    half_labels = transform.resize(labels, half.shape, order=0, preserve_range=True,
                                   anti_aliasing=False).astype(np.int64)
    split = half.shape[1] * 2 // 3
    X_train, y_train = dihedral(*tiles(half[:, :split], half_labels[:, :split]))
    test_tiles, test_maps = tiles(half[:, split:], half_labels[:, split:])
    settings = {
        "held-out tiles": (np.stack(test_tiles), np.stack(test_maps)),
        "held-out strip": (half[None, :, split:], half_labels[None, :, split:]),
        "native image": (coins[None], labels[None]),
    }
    return X_train, y_train, settings


def otsu(image):
    """Otsu threshold, fill holes, connected components."""
    return ndi.label(ndi.binary_fill_holes(image > filters.threshold_otsu(image)))[0]


def scores(truth, maps, instances):
    """Mean symmetric best Dice of the maps, mask AP of the scored instances."""
    return (symmetric_best_dice(list(truth), list(maps)),
            mask_average_precision(list(truth), [d["masks"] for d in instances],
                                   pred_scores=[d["scores"] for d in instances]))


def model_scores(model, X, y):
    maps = model.predict(X)
    if isinstance(model, MaskRCNN):
        instances = model.predict_detections(X)
    else:
        instances = model.predict_instances(X)
    return scores(y, maps, instances)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    X_train, y_train, settings = prepare()
    print(f"{len(X_train)} training tiles; evaluated on "
          + ", ".join(f"{k} {v[0].shape}" for k, v in settings.items()), flush=True)

    rows = {}
    for name, (X, y) in settings.items():
        maps = [otsu(im) for im in X]
        inst = [{"masks": m[None] == np.arange(1, m.max() + 1)[:, None, None],
                 "scores": np.ones(m.max())} for m in maps]
        rows[(OTSU, name)] = [scores(y, maps, inst)]

    for seed in seeds:
        for label, cls in (("MaskRCNN", MaskRCNN), ("InstanceSegmenter", InstanceSegmenter)):
            model = cls(random_state=seed)
            defaults = model.get_params()
            start = time.process_time()
            model.fit(X_train, y_train)
            fit_s = time.process_time() - start
            print(f"seed {seed} {label}(): fit {fit_s:.0f} CPU s, object_size_ "
                  f"{model.object_size_:.1f} px", flush=True)
            for variant_label, _, params in VARIANTS:
                if variant_label != label:
                    continue
                model.set_params(**{**{k: defaults[k] for k in ("predict_scales",
                                                                 "predict_tile_size")
                                       if k in defaults}, **params})
                method = f"{label}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
                for name, (X, y) in settings.items():
                    start = time.process_time()
                    value = model_scores(model, X, y)
                    rows.setdefault((method, name), []).append(value)
                    print(f"  {method:45s} {name:15s} best Dice {value[0]:.3f} mask AP "
                          f"{value[1]:.3f} ({time.process_time() - start:.1f} CPU s)",
                          flush=True)

    print(f"\n{len(seeds)} seed(s): {seeds}")
    print(f"{'method':48s} {'evaluated on':15s} {'best Dice':>15s} {'mask AP':>15s}")
    ordered = sorted(rows.items(), key=lambda kv: list(settings).index(kv[0][1]))
    for (method, name), values in ordered:
        v = np.array(values, dtype=float)
        cells = [f"{v[:, j].mean():.3f} ± {v[:, j].std():.3f}" if len(v) > 1
                 else f"{v[0, j]:.3f}" for j in range(2)]
        print(f"{method:48s} {name:15s} {cells[0]:>15s} {cells[1]:>15s}")

    recorded, left_out = [], []
    for (method, name), values in ordered:
        if method == OTSU:
            continue
        v = np.array(values, dtype=float)
        for j, metric in enumerate(("best Dice", "mask AP")):
            what = (f"{method}, {name}, {metric} (± {v[:, j].std():.3f} over seeds "
                    f"{', '.join(map(str, seeds))})")
            if not (v[:, j].mean() > 0 and rows[(OTSU, name)][0][j] > 0):
                left_out.append(what)
                continue
            recorded.append({"what": what, "ours": v[:, j].mean(),
                             "peer": rows[(OTSU, name)][0][j], "unit": metric,
                             "better": "higher"})
    notes = ("skimage.data.coins() with scikit-image's gallery labels; trained on 64 x 64 "
             "half-resolution tiles of the left two thirds; held-out tiles and strip from "
             "the right third, the native image at full resolution (coins twice the "
             "training size). Ours: the mean over seeds; peer: Otsu threshold + fill holes "
             "+ connected components.")
    if left_out:
        notes += " Not recorded (a figure of 0): " + "; ".join(left_out) + "."
    record("coins", title="MaskRCNN and InstanceSegmenter on skimage's coins, against "
           "Otsu + connected components", peer=OTSU, rows=recorded, notes=notes)


if __name__ == "__main__":
    main()
