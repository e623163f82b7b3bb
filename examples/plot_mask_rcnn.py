"""
=====================================================
Mask R-CNN on synthetic scenes: detections and masks
=====================================================

Train :class:`sklearn_papers.vision.MaskRCNN` from scratch on 64 procedural 40 x 40
scenes of discs and squares (``make_scenes``), then show the boxes, classes, scores and
masks it predicts on held-out scenes beside the ground truth, with the COCO mask AP of
:meth:`~sklearn_papers.vision.MaskRCNN.score`. A tiny budget (a few epochs on one thread),
so expect rough masks: the reproduction experiment ``mask_rcnn`` trains longer.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import Rectangle

from sklearn_papers.datasets import make_scenes
from sklearn_papers.vision import MaskRCNN

torch.set_num_threads(1)
kw = dict(image_size=40, n_classes=2, max_objects=3, touching=0.0, noise=0.02)
train = make_scenes(64, random_state=0, **kw)
test = make_scenes(4, random_state=1, **kw)

model = MaskRCNN(anchor_sizes=(5, 10, 20), max_epochs=15, random_state=0)
model.fit(train.images, train.instance_maps, train.semantic_maps)
ap = model.score(test.images, test.instance_maps, test.semantic_maps)
detections = model.predict_detections(test.images)
maps = model.predict(test.images)

fig, axes = plt.subplots(2, 4, figsize=(11, 5.6))
for k in range(4):
    axes[0, k].imshow(test.images[k])
    axes[0, k].imshow(np.ma.masked_equal(test.instance_maps[k], 0), cmap="tab10",
                      alpha=0.4, vmin=0, vmax=10)
    axes[0, k].set_title(f"truth: {test.n_instances[k]} objects")
    axes[1, k].imshow(test.images[k])
    axes[1, k].imshow(np.ma.masked_equal(maps[k], 0), cmap="tab10", alpha=0.4, vmin=0,
                      vmax=10)
    d = detections[k]
    for (x1, y1, x2, y2), label, score in zip(d["boxes"], d["labels"], d["scores"]):
        if score < 0.5:
            continue
        axes[1, k].add_patch(Rectangle((x1 - 0.5, y1 - 0.5), x2 - x1, y2 - y1, fill=False,
                                       color="white", linewidth=1))
        axes[1, k].text(x1, y1 - 1, f"{label}: {score:.2f}", color="white", fontsize=7)
    axes[1, k].set_title(f"predicted: {int(maps[k].max())} instances")
for ax in axes.ravel():
    ax.axis("off")
fig.suptitle(f"MaskRCNN after {model.n_iter_} epochs on 64 scenes: test mask AP@[.5:.95] "
             f"= {ap:.2f}")
fig.tight_layout()
plt.show()
