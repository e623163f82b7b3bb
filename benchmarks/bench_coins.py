"""Benchmark: instance segmentation of a real photograph, learned vs classical.

``skimage.data.coins()`` prepared as in ``examples/plot_coins.py``: labels from
scikit-image's gallery recipe (24 coins), ``MaskRCNN`` and ``InstanceSegmenter`` trained at
their defaults on 64 x 64 tiles of the left two thirds of the image at half resolution
(with the 8 flips and rotations), compared with Otsu threshold + fill holes + connected
components on (a) the held-out tiles, (b) the whole held-out strip and (c) the whole
image at its native resolution (coins twice the size seen in ``fit``). Scores: symmetric
best Dice of the label maps and COCO mask AP@[.5:.95] of the scored instances, as mean and
standard deviation over the seeds. The learned models are scored with ``predict_scales="auto"``
(InstanceSegmenter's default) and ``(1.0,)`` (the input scale only, MaskRCNN's default).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_coins.py [--seeds 0,1,2] [--threads 1]``.
Per-seed results are printed as they are computed, the table at the end.
"""

import argparse
import time

import numpy as np
import torch
from scipy import ndimage as ndi
from skimage import data, filters, segmentation, transform

from sklearn_papers.metrics import mask_average_precision, symmetric_best_dice
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN


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
        rows[("Otsu + fill holes + components", name)] = [scores(y, maps, inst)]

    for seed in seeds:
        for label, model in (("MaskRCNN()", MaskRCNN(random_state=seed)),
                             ("InstanceSegmenter()", InstanceSegmenter(random_state=seed))):
            start = time.process_time()
            model.fit(X_train, y_train)
            fit_s = time.process_time() - start
            print(f"seed {seed} {label}: fit {fit_s:.0f} CPU s, object_size_ "
                  f"{model.object_size_:.1f} px", flush=True)
            for scales in ("auto", (1.0,)):
                model.set_params(predict_scales=scales)
                for name, (X, y) in settings.items():
                    start = time.process_time()
                    value = model_scores(model, X, y)
                    key = (f"{label} predict_scales={scales!r}", name)
                    rows.setdefault(key, []).append(value)
                    print(f"  predict_scales={scales!r:8s} {name:15s} best Dice "
                          f"{value[0]:.3f} mask AP {value[1]:.3f} "
                          f"({time.process_time() - start:.1f} CPU s)", flush=True)

    print(f"\n{len(seeds)} seed(s): {seeds}")
    print(f"{'method':48s} {'evaluated on':15s} {'best Dice':>15s} {'mask AP':>15s}")
    for (method, name), values in sorted(rows.items(), key=lambda kv: list(settings).index(kv[0][1])):
        v = np.array(values, dtype=float)
        cells = [f"{v[:, j].mean():.3f} ± {v[:, j].std():.3f}" if len(v) > 1
                 else f"{v[0, j]:.3f}" for j in range(2)]
        print(f"{method:48s} {name:15s} {cells[0]:>15s} {cells[1]:>15s}")


if __name__ == "__main__":
    main()
