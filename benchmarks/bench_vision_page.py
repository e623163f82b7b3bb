"""Benchmark: small objects, printed characters on ``skimage.data.page()``, learned vs classical.

Ground truth: Sauvola threshold (window 25, k 0.2), specks under 8 pixels removed,
8-connected components (212 characters, median 39 pixels). ``MaskRCNN`` and
``InstanceSegmenter`` train at their defaults on the 35 64 x 64 tiles (step 32) of the left
two thirds of the page, their mirror images, and copies of those 70 lit up to 1.4 times
more brightly without saturating (:func:`brightened`; 140 images): the images guide's
augmentation for test images lit more brightly than the training ones, as the right third
of the page is. They are scored on (a) the 15
tiles of the right third and (b) the whole page at its native size, beside two classical
pipelines: global Otsu and Sauvola (scikit-image's defaults, window 15, k 0.2), each
followed by 8-connected components. Scores: symmetric best Dice of the label maps and COCO
mask AP@[.5:.95] of the scored instances (``sklearn_papers.metrics``), as mean and
standard deviation over the seeds; costs: CPU seconds of ``fit`` and of ``predict`` (label
maps and scored instances of both evaluation settings), MaskRCNN's beside
InstanceSegmenter's.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_vision_page.py [--seeds 0,1,2] [--threads 1]
[--no-brightened]``. Per-seed results are printed as they are computed, the table at the
end; the means are recorded in ``benchmarks/results/page.json`` (each score beside global
Otsu's, each cost beside InstanceSegmenter's), or with ``--no-brightened`` (the 70 tiles
and mirror images only) in ``benchmarks/results/page_mirrors_only.json``.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch
from skimage import data, filters, measure, morphology

from sklearn_papers.metrics import mask_average_precision, symmetric_best_dice
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _record import record  # noqa: E402

OTSU = "global Otsu + components"
SAUVOLA = "Sauvola + components"
MODELS = (("MaskRCNN", MaskRCNN), ("InstanceSegmenter", InstanceSegmenter))


def page_labels(image):
    """Dark characters: Sauvola (window 25, k 0.2), specks under 8 px dropped, 8-connected."""
    dark = image < filters.threshold_sauvola(image, window_size=25, k=0.2)
    dark = morphology.remove_small_objects(dark, max_size=7, connectivity=2)
    return measure.label(dark, connectivity=2)


def tiles(image, label_map, size=64, step=32):
    """Overlapping size x size tiles (the last row and column flush with the edges)."""
    h, w = image.shape
    rows = sorted({*range(0, h - size + 1, step), h - size})
    cols = sorted({*range(0, w - size + 1, step), w - size})
    return ([image[r:r + size, c:c + size] for r in rows for c in cols],
            [label_map[r:r + size, c:c + size] for r in rows for c in cols])


def brightened(images, gain=1.4, top=255):
    """Copies of images lit more brightly (the images guide's function): each multiplied
    by ``gain``, or by the largest factor that keeps its brightest pixel at ``top`` where
    that is smaller, so that no pixel saturates and no object loses contrast to clipping.
    Integer images are rounded; the copies keep the dtype of ``images``."""
    images = np.asarray(images)
    copies = [im * min(gain, top / max(float(im.max()), 1e-12)) for im in images]
    return np.stack([np.round(c) if im.dtype.kind in "ui" else c
                     for c, im in zip(copies, images)]).astype(images.dtype)


def prepare(brighten=True):
    """Training tiles (with their mirror images and, with ``brighten``, brightened copies
    of both) and the two evaluation settings."""
    page = data.page()
    labels = page_labels(page)
    split = page.shape[1] * 2 // 3
    train_x, train_y = tiles(page[:, :split], labels[:, :split])
    X_train = np.stack(train_x + [np.fliplr(t) for t in train_x])
    y_train = np.stack(train_y + [np.fliplr(t) for t in train_y])
    if brighten:
        X_train = np.concatenate([X_train, brightened(X_train)])
        y_train = np.concatenate([y_train, y_train])
    test_x, test_y = tiles(page[:, split:], labels[:, split:])
    settings = {"held-out tiles": (np.stack(test_x), np.stack(test_y)),
                "whole page": (page[None], labels[None])}
    return X_train, y_train, settings


def otsu(image):
    """Global Otsu threshold (dark objects), 8-connected components."""
    return measure.label(image < filters.threshold_otsu(image), connectivity=2)


def sauvola(image):
    """Sauvola threshold at scikit-image's defaults (dark objects), 8-connected components."""
    return measure.label(image < filters.threshold_sauvola(image), connectivity=2)


def scores(truth, maps, instances):
    """Mean symmetric best Dice of the maps, mask AP of the scored instances."""
    return (symmetric_best_dice(list(truth), list(maps)),
            mask_average_precision(list(truth), [d["masks"] for d in instances],
                                   pred_scores=[d["scores"] for d in instances]))


def classical_scores(method, X, y):
    maps = [method(im) for im in X]
    inst = [{"masks": m[None] == np.arange(1, m.max() + 1)[:, None, None],
             "scores": np.ones(m.max())} for m in maps]
    return scores(y, maps, inst)


def model_scores(model, X, y):
    """Scores and the CPU seconds of predicting the label maps and the scored instances."""
    start = time.process_time()
    maps = model.predict(X)
    if isinstance(model, MaskRCNN):
        instances = model.predict_detections(X)
    else:
        instances = model.predict_instances(X)
    return scores(y, maps, instances), time.process_time() - start


def summary(values):
    v = np.asarray(values, dtype=float)
    return v.mean(), v.std()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-brightened", action="store_true",
                        help="train on the tiles and their mirror images only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    X_train, y_train, settings = prepare(brighten=not args.no_brightened)
    print(f"{len(X_train)} training tiles; evaluated on "
          + ", ".join(f"{k} {v[0].shape}" for k, v in settings.items()), flush=True)

    rows = {}  # (method, setting) -> list of (Dice, AP)
    for name, (X, y) in settings.items():
        for method, fn in ((OTSU, otsu), (SAUVOLA, sauvola)):
            rows[(method, name)] = [classical_scores(fn, X, y)]
    costs = {}  # (label, "fit" / "predict") -> list of CPU seconds
    for _, cls in MODELS:  # untimed: the first fit of a process pays torch's lazy imports
        cls(max_epochs=1, random_state=0).fit(X_train[:2], y_train[:2])

    for seed in seeds:
        for label, cls in MODELS:
            model = cls(random_state=seed)
            start = time.process_time()
            model.fit(X_train, y_train)
            fit_s = time.process_time() - start
            costs.setdefault((label, "fit"), []).append(fit_s)
            print(f"seed {seed} {label}(): fit {fit_s:.1f} CPU s, object_size_ "
                  f"{model.object_size_:.1f} px", flush=True)
            predict_s = 0.0
            for name, (X, y) in settings.items():
                value, seconds = model_scores(model, X, y)
                predict_s += seconds
                rows.setdefault((label, name), []).append(value)
                print(f"  {name:15s} best Dice {value[0]:.3f} mask AP {value[1]:.3f} "
                      f"({seconds:.1f} CPU s)", flush=True)
            costs.setdefault((label, "predict"), []).append(predict_s)

    print(f"\n{len(seeds)} seed(s): {seeds}")
    print(f"{'method':26s} {'evaluated on':15s} {'best Dice':>15s} {'mask AP':>15s}")
    for name in settings:
        for method in (OTSU, SAUVOLA) + tuple(label for label, _ in MODELS):
            v = np.array(rows[(method, name)], dtype=float)
            cells = [f"{v[:, j].mean():.3f} ± {v[:, j].std():.3f}" for j in range(2)]
            print(f"{method:26s} {name:15s} {cells[0]:>15s} {cells[1]:>15s}")
    for (label, what), values in costs.items():
        mean, std = summary(values)
        print(f"{label:18s} {what:8s} {mean:8.1f} ± {std:.1f} CPU s")

    recorded, left_out = [], []
    seed_words = " ".join(map(str, seeds))
    for name in settings:
        for method in (SAUVOLA,) + tuple(label for label, _ in MODELS):
            v = np.array(rows[(method, name)], dtype=float)
            for j, metric in enumerate(("best Dice", "mask AP")):
                what = f"{method}, {name}, {metric}"
                if method != SAUVOLA:
                    what += f", mean over seeds {seed_words}"
                peer = rows[(OTSU, name)][0][j]
                if not (v[:, j].mean() > 0 and peer > 0):
                    left_out.append(what)
                    continue
                row = {"what": what, "ours": v[:, j].mean(), "peer": peer, "unit": metric,
                       "better": "higher"}
                if method != SAUVOLA:
                    row["ours_std"] = v[:, j].std()
                recorded.append(row)
    for what in ("fit", "predict"):
        ours, ours_std = summary(costs[("MaskRCNN", what)])
        peer, peer_std = summary(costs[("InstanceSegmenter", what)])
        recorded.append({"what": f"CPU seconds of {what}, MaskRCNN, peer InstanceSegmenter, "
                                 f"mean over seeds {seed_words}",
                         "ours": ours, "peer": peer, "unit": "CPU s", "better": "lower",
                         "ours_std": ours_std, "peer_std": peer_std})
    training = ("their mirror images" if args.no_brightened else "their mirror images, and "
                "copies of those lit up to 1.4 times more brightly without saturating")
    notes = ("skimage.data.page(), characters labelled by Sauvola (window 25, k 0.2), specks "
             "under 8 px removed; trained on the 64 x 64 tiles of the left two thirds, "
             f"{training}; scored on the 15 tiles of the right third and on the "
             "whole page. Scores: ours is the mean over seeds, peer is global Otsu + "
             "8-connected components. Costs: MaskRCNN's CPU seconds beside "
             "InstanceSegmenter's; predict covers both settings.")
    if left_out:
        notes += " Not recorded (a figure of 0): " + "; ".join(left_out) + "."
    title = ("MaskRCNN, InstanceSegmenter and Sauvola on the characters of skimage's page, "
             "against global Otsu")
    if args.no_brightened:
        record("page_mirrors_only", title=title + ", trained without brightened copies",
               peer=OTSU, rows=recorded, notes=notes)
    else:
        record("page", title=title, peer=OTSU, rows=recorded, notes=notes)


if __name__ == "__main__":
    main()
