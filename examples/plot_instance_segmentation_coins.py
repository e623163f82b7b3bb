"""
======================================================================
Segment your own images: coins, Mask R-CNN, InstanceSegmenter and Otsu
======================================================================

A real photograph that ships with scikit-image, ``skimage.data.coins()`` (303 x 384
uint8 grey), with instance labels made by scikit-image's own gallery recipe (Sobel
elevation map, markers below 30 and above 150, watershed, fill holes, label, drop specks
under 100 px: 24 coins). Both estimators are trained on 64 x 64 tiles of the left two
thirds of the image at half resolution, with the 8 flips and rotations, and compared with
the classical pipeline (Otsu threshold, fill holes, connected components) on the held-out
right third: its tiles, the whole strip, and the whole image at its native resolution
(rescaled to the training scale before the estimators predict).

Training is shortened here (``max_epochs`` 6 and 15 instead of the defaults, 40 and 30)
so that the example runs in about half a minute on one core. The user guide's
:doc:`/user_guide/images` page gives the scores at the defaults, measured by
``benchmarks/bench_instance_segmentation_coins.py``.

The scores are the symmetric best Dice of the label maps and the COCO mask AP@[.5:.95]
of the scored instances (:func:`sklearn_papers.metrics.symmetric_best_dice`,
:func:`sklearn_papers.metrics.mask_average_precision`). Set ``COINS_SEEDS=0,1,2`` in the
environment to train with several seeds (one by default).
"""

import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import ndimage as ndi
from skimage import data, filters, segmentation, transform

from sklearn_papers.metrics import mask_average_precision, symmetric_best_dice
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN, plot_instances

torch.set_num_threads(1)
seeds = [int(s) for s in os.environ.get("COINS_SEEDS", "0").split(",")]


# %%
# Labels from scikit-image's gallery recipe
# -----------------------------------------
def coin_labels(image):
    elevation = filters.sobel(image)
    markers = np.zeros_like(image)
    markers[image < 30] = 1
    markers[image > 150] = 2
    coins_mask = ndi.binary_fill_holes(segmentation.watershed(elevation, markers) - 1)
    labels, _ = ndi.label(coins_mask)
    sizes = np.bincount(labels.ravel())
    labels[sizes[labels] < 100] = 0  # drop specks
    return segmentation.relabel_sequential(labels)[0]


coins = data.coins()
labels = coin_labels(coins)
print(f"{labels.max()} coins in a {coins.shape[0]} x {coins.shape[1]} image")

# half resolution: floats in [0, 1] for the image, nearest neighbour for the labels
half = transform.rescale(coins, 0.5, anti_aliasing=True)
half_labels = transform.resize(labels, half.shape, order=0, preserve_range=True,
                               anti_aliasing=False).astype(np.int64)
split = half.shape[1] * 2 // 3  # left two thirds to train, right third to test


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


X_train, y_train = dihedral(*tiles(half[:, :split], half_labels[:, :split]))
test_tiles, test_maps = tiles(half[:, split:], half_labels[:, split:])
X_test, y_test = np.stack(test_tiles), np.stack(test_maps)
print(f"{len(X_train)} training tiles, {len(X_test)} held-out tiles")


# %%
# The classical pipeline and the scores
# -------------------------------------
def otsu(image):
    """Otsu threshold, fill holes, connected components."""
    mask = ndi.binary_fill_holes(image > filters.threshold_otsu(image))
    return ndi.label(mask)[0]


def scores(truth, maps, instances):
    """Mean symmetric best Dice of the maps, mask AP of the scored instances."""
    return (symmetric_best_dice(list(truth), list(maps)),
            mask_average_precision(list(truth), [d["masks"] for d in instances],
                                   pred_scores=[d["scores"] for d in instances]))


def otsu_instances(maps):
    return [{"masks": m[None] == np.arange(1, m.max() + 1)[:, None, None],
             "scores": np.ones(m.max())} for m in maps]


# two settings: held-out tiles, the whole held-out strip
settings = {
    "held-out tiles": (X_test, y_test),
    "held-out strip": (half[None, :, split:], half_labels[None, :, split:]),
}
rows = {}
for name, (X, y) in settings.items():
    maps = [otsu(im) for im in X]
    rows[("Otsu + fill holes + components", name)] = [scores(y, maps, otsu_instances(maps))]
rows[("Otsu + fill holes + components", "native image")] = [
    (symmetric_best_dice(labels, otsu(coins)), float("nan"))]


def rescaled_predict(model, image):
    """Predict at the training scale (half resolution), labels back at full size."""
    small = transform.rescale(image, 0.5, anti_aliasing=True)[None]
    pred = model.predict(small)[0]
    return transform.resize(pred, image.shape, order=0, preserve_range=True,
                            anti_aliasing=False).astype(np.int64)


# %%
# Train both estimators
# ---------------------
models = {}
for seed in seeds:
    for label, model in (("MaskRCNN", MaskRCNN(max_epochs=6, random_state=seed)),
                         ("InstanceSegmenter",
                          InstanceSegmenter(max_epochs=15, random_state=seed))):
        model.fit(X_train, y_train)
        models[label, seed] = model
        for name, (X, y) in settings.items():
            maps = model.predict(X)
            if isinstance(model, MaskRCNN):
                instances = model.predict_detections(X)
            else:
                instances = model.predict_instances(X)
            rows.setdefault((label, name), []).append(scores(y, maps, instances))
        rows.setdefault((label, "native image"), []).append(
            (symmetric_best_dice(labels, rescaled_predict(model, coins)), float("nan")))

print(f"\n{'method':30s} {'evaluated on':16s} {'best Dice':>16s} {'mask AP':>16s}")
for (method, name), values in rows.items():
    v = np.array(values, dtype=float)
    cells = [f"{np.mean(v[:, j]):.3f} ± {np.std(v[:, j]):.3f}" if len(v) > 1
             else f"{v[0, j]:.3f}" for j in range(2)]
    print(f"{method:30s} {name:16s} {cells[0]:>16s} {cells[1]:>16s}")

# %%
# Look at the result
# ------------------
rcnn = models["MaskRCNN", seeds[0]]
segmenter = models["InstanceSegmenter", seeds[0]]
strip = half[None, :, split:]
fig, axes = plt.subplots(1, 4, figsize=(11, 4.5))
plot_instances(strip[0], half_labels[:, split:], ax=axes[0])
axes[0].set_title("gallery labels")
plot_instances(strip[0], otsu(strip[0]), ax=axes[1], boxes=False)
axes[1].set_title("Otsu + components")
plot_instances(strip[0], rcnn.predict_detections(strip)[0], ax=axes[2],
               min_score=rcnn.instance_score_threshold, class_names=["", "coin"])
axes[2].set_title("MaskRCNN")
plot_instances(strip[0], segmenter.predict(strip)[0], ax=axes[3], boxes=False)
axes[3].set_title("InstanceSegmenter")
fig.tight_layout()
plt.show()
