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
    with pytest.raises(ValueError, match=r"'scores'\] must have shape \(3,\), one entry per "
                                         r"mask \(3 masks\); got shape \(2,\)"):
        plot_instances(image, bad)
    plt.close("all")


@pytest.mark.parametrize("y_pred, error, match", [
    (np.zeros((2, 20, 24), dtype=int), ValueError,
     r"shape \(2, 20, 24\): a batch of 2 instance maps.*predict\(X\)\[i\]"),
    ([_detections(), _detections()], ValueError,
     r"list of 2 dicts.*predict_detections\(X\)\[i\]"),
    (np.full((20, 24), 0.5), ValueError, "integer instance ids"),
    (-np.ones((20, 24), dtype=int), ValueError, "negative id"),
    (None, ValueError, "instance map of shape .* got None"),
    ({**_detections(), "boxes": np.zeros((3, 3))}, ValueError,
     r"'boxes'\] must have shape \(3, 4\)"),
    ({**_detections(), "scores": ["high", "low", "low"]}, TypeError,
     r"'scores'\] must hold numbers"),
    ({**_detections(), "masks": np.array([[None]])}, TypeError, r"'masks'\] must be numeric"),
])
def test_malformed_predictions_name_the_field_and_the_fix(y_pred, error, match):
    with pytest.raises(error, match=match):
        plot_instances(np.zeros((20, 24)), y_pred)
    plt.close("all")


def test_labels_without_a_class_name_and_non_numeric_images_raise():
    with pytest.raises(ValueError, match=r"y_pred\['labels'\]\[1\] = 2 but class_names has "
                                         r"2 names"):
        plot_instances(np.zeros((20, 24)), _detections(), class_names=["background", "coin"])
    with pytest.raises(TypeError, match="image must be a numeric array"):
        plot_instances(np.full((20, 24), "x"), _detections())
    labels = np.zeros((20, 24))
    labels[2:5, 2:5] = 3.0  # an integral float map (e.g. resized with order=0) is drawn
    fig, ax = plt.subplots()
    assert len(plot_instances(np.zeros((20, 24)), labels, ax=ax).patches) == 1
    plt.close("all")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"alpha": 2}, ValueError, "'alpha' parameter"),
    ({"alpha": float("nan")}, ValueError, "'alpha' parameter"),
    ({"min_score": "high"}, ValueError, "'min_score' parameter"),
    ({"ax": "left"}, ValueError, "'ax' parameter"),
    ({"class_names": "coin"}, ValueError, "'class_names' parameter"),
    ({"class_names": {1: "coin", 2: "ring"}}, TypeError, "class_names must be a sequence"),
])
def test_plot_instances_checks_its_options(kwargs, error, match):
    # unchecked, alpha=2 drew with an alpha of 2, a string min_score failed in a numpy
    # ufunc, a string ax in matplotlib, and a string class_names named classes by letter
    with pytest.raises(error, match=match):
        plot_instances(np.zeros((20, 24)), _detections(), **kwargs)
    plt.close("all")


@pytest.mark.parametrize("edit, match", [
    ({"labels": [1.5, 2, 1]}, r"y_pred\['labels'\]\[0\] = 1.5 is not an integer class"),
    ({"labels": [1, float("nan"), 1]}, r"y_pred\['labels'\]\[1\] = nan is not an integer"),
    ({"masks": _detections()["masks"] * 0.3}, r"'masks'\] must be boolean or 0/1"),
])
def test_plot_instances_refuses_labels_and_masks_it_would_round(edit, match):
    # a class of 1.5 was drawn as class 1 and soft masks of 0.3 as full masks
    with pytest.raises(ValueError, match=match):
        plot_instances(np.zeros((20, 24)), {**_detections(), **edit},
                       class_names=["background", "coin", "ring"])
    plt.close("all")


@pytest.mark.parametrize("image, match", [
    (np.zeros((20, 24, 2)),
     r"C = 1 \(grey\), 3 \(RGB\) or 4 \(RGBA\); got shape \(20, 24, 2\)"),
    (np.zeros((0, 0)), "image has no pixels"),
    (np.full((20, 24, 3), 200.0), r"float colour image with values in \[200, 200\]"),
])
def test_plot_instances_names_images_matplotlib_cannot_show(image, match):
    with pytest.raises(ValueError, match=match):
        plot_instances(image, np.zeros(image.shape[:2], dtype=int))
    plt.close("all")


def test_plot_instances_reads_uint16_colour_images_by_their_bit_depth():
    # matplotlib clips integer colour images to 0..255: 12-bit data showed white
    rgb12 = np.random.RandomState(0).randint(0, 4096, (20, 24, 3)).astype(np.uint16)
    fig, ax = plt.subplots()
    plot_instances(rgb12, np.zeros((20, 24), dtype=int), ax=ax)
    shown = np.asarray(ax.images[0].get_array())
    np.testing.assert_allclose(shown, rgb12 / 4095.0)
    plt.close("all")
