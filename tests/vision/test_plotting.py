"""plot_instances draws masks, boxes, classes and scores."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from sklearn_papers.vision import plot_instances  # noqa: E402


def _detections():
    masks = np.zeros((3, 20, 24), dtype=bool)
    masks[0, 2:8, 2:8] = masks[1, 10:18, 10:20] = masks[2, 0:3, 20:24] = True
    return {"masks": masks, "boxes": np.array([[2, 2, 8, 8], [10, 10, 20, 18],
                                               [20, 0, 24, 3]], dtype=np.float32),
            "labels": np.array([1, 2, 1]), "scores": np.array([0.9, 0.75, 0.2])}


def test_detections_are_drawn_with_boxes_classes_and_scores():
    fig, ax = plt.subplots()
    out = plot_instances(np.random.RandomState(0).rand(20, 24), _detections(), ax=ax,
                         min_score=0.5, class_names=["background", "coin", "ring"])
    assert out is ax
    assert len(ax.patches) == 2  # the 0.2 detection is left out
    assert sorted(t.get_text() for t in ax.texts) == ["coin 0.90", "ring 0.75"]
    overlay = ax.images[1].get_array()
    assert overlay.shape == (20, 24, 4)
    assert overlay[4, 4, 3] > 0 and overlay[0, 22, 3] == 0 and overlay[15, 0, 3] == 0
    plt.close(fig)


def test_label_maps_and_channel_layouts():
    labels = np.zeros((20, 24), dtype=np.int64)
    labels[2:8, 2:8], labels[10:18, 10:20] = 4, 9
    fig, ax = plt.subplots()
    plot_instances(np.zeros((3, 20, 24)), labels, ax=ax)
    assert len(ax.patches) == 2 and not ax.texts
    assert ax.images[0].get_array().shape == (20, 24, 3)
    rect = sorted(ax.patches, key=lambda p: p.get_x())[0]
    assert (rect.get_x(), rect.get_y(), rect.get_width(), rect.get_height()) == (
        1.5, 1.5, 6, 6)
    plt.close(fig)


def test_bad_predictions_raise():
    image = np.zeros((20, 24))
    with pytest.raises(ValueError, match=r"instance map of shape \(20, 24\)"):
        plot_instances(image, np.zeros((20, 20), dtype=int))
    with pytest.raises(ValueError, match="'masks' entry"):
        plot_instances(image, {"boxes": np.zeros((0, 4))})
    bad = _detections()
    bad["scores"] = bad["scores"][:2]
    with pytest.raises(ValueError, match=r"'scores'\] has 2 entries but there are 3 masks"):
        plot_instances(image, bad)
    plt.close("all")
