"""Box AP against pycocotools, box IoU and matched IoU against hand-computed values, image
sharpness; bad input refused with the offending item named."""

import contextlib
import io

import numpy as np
import pytest

from sklearn_papers.metrics import (
    box_average_precision,
    box_iou,
    detection_box_average_precision,
    image_sharpness,
    mask_average_precision,
    matched_mask_iou,
)


def _random_detections(seed, n_images=6):
    rng = np.random.RandomState(seed)
    true_boxes, true_labels, pred_boxes, scores, pred_labels = [], [], [], [], []
    for _ in range(n_images):
        k = rng.randint(1, 5)
        xy = rng.uniform(0, 40, size=(k, 2))
        wh = rng.uniform(4, 20, size=(k, 2))
        gt = np.hstack([xy, xy + wh])
        lab = rng.randint(1, 3, size=k)
        keep = rng.rand(k) < 0.8
        jitter = rng.normal(0, 2.0, size=(keep.sum(), 4))
        det = gt[keep] + jitter
        det[:, 2:] = np.maximum(det[:, 2:], det[:, :2] + 1)
        extra = rng.randint(0, 3)
        exy = rng.uniform(0, 40, size=(extra, 2))
        det = np.vstack([det, np.hstack([exy, exy + 8])])
        true_boxes.append(gt)
        true_labels.append(lab)
        pred_boxes.append(det)
        scores.append(rng.rand(len(det)))
        pred_labels.append(np.concatenate([lab[keep], rng.randint(1, 3, size=extra)]))
    return true_boxes, true_labels, pred_boxes, scores, pred_labels


def _pycocotools_box_ap(true_boxes, true_labels, pred_boxes, scores, pred_labels, thr=None):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    images, anns, results = [], [], []
    for i, (g, lab) in enumerate(zip(true_boxes, true_labels)):
        images.append({"id": i + 1, "height": 64, "width": 64})
        for b, c in zip(g, lab):
            w, h = b[2] - b[0], b[3] - b[1]
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "iscrowd": 0,
                         "category_id": int(c), "bbox": [b[0], b[1], w, h], "area": w * h})
    for i, (d, s, lab) in enumerate(zip(pred_boxes, scores, pred_labels)):
        for b, sc, c in zip(d, s, lab):
            results.append({"image_id": i + 1, "category_id": int(c), "score": float(sc),
                            "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]]})
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns,
                      "categories": [{"id": 1}, {"id": 2}]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(results), "bbox")
        if thr is not None:
            ev.params.iouThrs = np.array([thr])
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev.stats[0] if thr is None else ev.stats[1 if thr == 0.5 else 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_box_ap_matches_pycocotools(seed):
    pytest.importorskip("pycocotools")
    tb, tl, pb, sc, pl = _random_detections(seed)
    ours = box_average_precision(tb, pb, pred_scores=sc, true_labels=tl, pred_labels=pl)
    assert ours == pytest.approx(_pycocotools_box_ap(tb, tl, pb, sc, pl), abs=1e-9)


def test_box_ap_equals_mask_ap_on_box_shaped_masks():
    # a box and its filled pixel mask have the same IoUs when the boxes are on the pixel grid
    boxes_true = [np.array([[0, 0, 4, 4], [6, 6, 12, 10]], float)]
    boxes_pred = [np.array([[0, 0, 4, 3], [6, 6, 12, 10], [1, 8, 3, 12]], float)]
    scores = [np.array([0.9, 0.5, 0.7])]

    def maps(boxes):
        out = np.zeros((len(boxes), 16, 16), dtype=bool)
        for k, (x1, y1, x2, y2) in enumerate(boxes.astype(int)):
            out[k, y1:y2, x1:x2] = True
        return out

    true_map = np.zeros((1, 16, 16), dtype=int)
    for k, m in enumerate(maps(boxes_true[0])):
        true_map[0][m] = k + 1
    mask_ap = mask_average_precision(true_map, [maps(boxes_pred[0])], pred_scores=scores)
    assert box_average_precision(boxes_true, boxes_pred, pred_scores=scores) == \
        pytest.approx(mask_ap)


def test_box_iou_values():
    iou = box_iou([[0, 0, 2, 2], [0, 0, 0, 0]], [[1, 0, 3, 2], [0, 0, 2, 2], [0, 0, 0, 0]])
    np.testing.assert_allclose(iou, [[1 / 3, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e200, 1e300])
def test_box_iou_is_scale_free_at_extreme_coordinates(scale):
    # areas of such boxes under- or overflow float64; the IoU of the same boxes must not
    a = np.array([[0, 0, 2, 2], [-3, -1, 5, 7]]) * scale
    b = np.array([[1, 0, 3, 2], [0, 0, 2, 2], [4, 4, 5, 5]]) * scale
    iou = box_iou(a, b)
    assert np.isfinite(iou).all()
    np.testing.assert_allclose(iou, box_iou(a / scale, b / scale), rtol=1e-12)
    np.testing.assert_allclose(iou[0], [1 / 3, 1, 0], rtol=1e-12)


def test_box_iou_of_boxes_spanning_the_float64_range():
    big = np.finfo(np.float64).max / 2
    np.testing.assert_allclose(box_iou([[-big, 0, big, 1]], [[0, 0, big, 1]]), [[0.5]])


def test_matched_mask_iou_values():
    true = np.zeros((2, 4, 4), dtype=int)
    true[0, :2], true[0, 2:, :1] = 1, 2
    true[1, 1:3, 1:3] = 1
    pred = np.zeros_like(true)
    pred[0, :3] = 1          # IoU 2/3 with instance 1; instance 2 unmatched
    pred[1, 1:3, 1:2] = 4    # IoU 1/2 with the second image's instance
    mean_iou, matched = matched_mask_iou(true, pred)
    assert mean_iou == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert matched == pytest.approx(2 / 3)
    assert matched_mask_iou(true, pred, threshold=0.6)[1] == pytest.approx(1 / 3)


def test_image_sharpness():
    assert image_sharpness(np.ones((3, 5, 5))) == 0.0
    checker = (np.indices((4, 4)).sum(0) % 2).astype(float)[None]
    assert image_sharpness(checker) == pytest.approx(2.0)
    assert image_sharpness(checker.reshape(1, 16), image_shape=(4, 4)) == pytest.approx(2.0)


@pytest.mark.parametrize("call, match", [
    (lambda: box_iou([[0, 0, 1]], [[0, 0, 1, 1]]), r"boxes_a must have shape \(k, 4\)"),
    (lambda: box_iou([[2, 0, 1, 1]], [[0, 0, 1, 1]]), r"boxes_a\[0\].*x2 < x1"),
    (lambda: box_iou([[0, 0, np.nan, 1]], [[0, 0, 1, 1]]), "NaN or inf"),
    (lambda: box_average_precision([[[0, 0, 1, 1]]], []), "1 images but pred_boxes has 0"),
    (lambda: box_average_precision([[[0, 0, 1, 1]]], [[[0, 0, 1, 1]]],
                                   true_labels=[[1]]), "both true_labels and pred_labels"),
    (lambda: box_average_precision(np.zeros((1, 1, 4)), [[[0, 0, 1, 1]]]), "lists"),
    (lambda: box_average_precision([[[0, 0, 1, 1]]], [[[5, 5, 1, 1]]]),
     r"pred_boxes\[0\]\[0\]"),
    (lambda: box_average_precision([[[0, 0, 1, 1]]], [[[0, 0, 1, 1]]],
                                   pred_scores=[[0.5, 0.2]]), r"pred_scores\[0\] has 2"),
    (lambda: box_average_precision([[[0, 0, 1, 1]]], [[[0, 0, 1, 1]]], true_labels=[[-1]],
                                   pred_labels=[[1]]),
     r"true_labels\[0\]\[0\] is the class id -1; class ids must be >= 0"),
    (lambda: matched_mask_iou(np.zeros((1, 4, 4), int), np.zeros((1, 4, 5), int)),
     r"y_true\[0\] has shape"),
    (lambda: matched_mask_iou(np.zeros((1, 4, 4), int), np.zeros((1, 4, 4), int),
                              threshold=0), "threshold must be a number in"),
    (lambda: image_sharpness(np.zeros((2, 3))), "image_shape"),
    (lambda: image_sharpness(np.zeros((1, 10)), image_shape=(3, 3)), "rows of 9 values"),
    (lambda: image_sharpness(np.full((1, 2, 2), np.nan)), "NaN or inf"),
    (lambda: image_sharpness(np.zeros((0, 2, 2))), "empty"),
])
def test_bad_input_names_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: box_average_precision([[[0, 0, 4, 4]]], [[[0, 0, 4, 4]]], max_detections=0),
     "max_detections must be an int >= 1"),
    (lambda: box_average_precision([[[0, 0, 4, 4]]], [[[0, 0, 4, 4]]], max_detections=1.5),
     "max_detections must be an int >= 1"),
    (lambda: box_average_precision([[[0, 0, 4, 4]]], [[[0, 0, 4, 4]]], max_detections=True),
     "max_detections must be an int >= 1"),
    (lambda: box_average_precision([[[0, 0, 4, 4]]], [[[0, 0, 4, 4]]], true_labels=[[1]],
                                   pred_labels=[[1.7]]), r"pred_labels\[0\] must hold integer"),
    (lambda: box_average_precision([[[0, 0, 4, 4]]], [[[0, 0, 4, 4]]], true_labels=[[1]],
                                   pred_labels=[["cat"]]), r"pred_labels\[0\] must hold numbers"),
    (lambda: matched_mask_iou([], []), "empty"),
    (lambda: matched_mask_iou(np.zeros((1, 2, 2), int), np.zeros((1, 2, 2), int),
                              threshold=None), "threshold must be a number"),
    (lambda: image_sharpness(np.zeros((1, 4)), image_shape=(-2, -2)), "pair of positive ints"),
    (lambda: image_sharpness(np.zeros((1, 4)), image_shape=4), "pair of positive ints"),
    (lambda: image_sharpness(np.zeros((1, 4)), image_shape=(2.0, 2.0)), "pair of positive ints"),
    (lambda: image_sharpness(np.zeros((1, 2, 2)) + 1j), "complex"),
])
def test_parameters_and_labels_are_checked(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_image_sharpness_names_an_image_of_another_shape():
    # numpy's "inhomogeneous shape" error named no image
    with pytest.raises(ValueError, match=r"images\[2\] has shape \(4, 4\) but images\[0\] "
                                         r"has \(5, 5\)"):
        image_sharpness([np.ones((5, 5)), np.ones((5, 5)), np.ones((4, 4))])


def test_detection_box_average_precision_reads_detection_dicts():
    rng = np.random.RandomState(0)
    true = [np.array([[0.0, 0, 4, 4], [4, 4, 8, 8]]), np.array([[1.0, 1, 5, 6]])]
    labels = [np.array([1, 2]), np.array([1])]
    dets = [{"boxes": b + rng.rand(*b.shape), "scores": rng.rand(len(b)), "labels": lab,
             "masks": None} for b, lab in zip(true, labels)]
    expected = box_average_precision(true, [d["boxes"] for d in dets],
                                     pred_scores=[d["scores"] for d in dets],
                                     true_labels=labels, pred_labels=labels)
    assert detection_box_average_precision(true, labels, dets) == expected
    with pytest.raises(ValueError, match=r"detections\[1\] must be a dict .* lacks \['scores'\]"):
        detection_box_average_precision(true, labels, [dets[0], {"boxes": true[1],
                                                                "labels": labels[1]}])
    with pytest.raises(ValueError, match="one dict per image"):
        detection_box_average_precision(true, labels, dets[0])


def _det(boxes, scores, labels):
    return {"boxes": np.asarray(boxes, dtype=float), "scores": np.asarray(scores, dtype=float),
            "labels": np.asarray(labels)}


def test_detection_box_average_precision_known_cases():
    gt = [np.array([[0.0, 0, 10, 10], [20, 20, 30, 30]])]
    lab = [np.array([1, 1])]
    perfect = _det(gt[0], [0.9, 0.8], [1, 1])
    assert detection_box_average_precision(gt, lab, [perfect]) == pytest.approx(1.0)
    # one object found, one missed: recall 0.5 at precision 1 -> 51 of 101 points
    half = _det(gt[0][:1], [0.9], [1])
    assert detection_box_average_precision(gt, lab, [half]) == pytest.approx(51 / 101)
    # wrong class: nothing matches
    wrong = _det(gt[0], [0.9, 0.8], [2, 2])
    assert detection_box_average_precision(gt, lab, [wrong]) == 0.0
    # a box shifted to IoU 0.6 counts at thresholds 0.5 and 0.55 only
    shifted = _det([[0.0, 0, 10, 10], [20, 20, 32.5, 30]], [0.9, 0.8], [1, 1])
    iou = 100 / 125
    n_ok = int(np.sum(np.linspace(0.5, 0.95, 10) <= iou + 1e-12))
    expected = (n_ok * 1.0 + (10 - n_ok) * 51 / 101) / 10
    assert detection_box_average_precision(gt, lab, [shifted]) == pytest.approx(expected)


@pytest.mark.parametrize("true, labels, boxes, match", [
    # a flat run of 8 or 5 numbers was reshaped to boxes (or failed in numpy's reshape)
    ([[[0, 0, 4, 4]]], [[1]], np.array([0, 0, 4, 4, 0, 0, 4, 4.0]),
     r"pred_boxes\[0\] must have shape \(k, 4\).*\(8,\)"),
    ([[[0, 0, 4, 4]]], [[1]], np.array([[0, 0, 4, 4, 1.0]]),
     r"pred_boxes\[0\] must have shape \(k, 4\).*\(1, 5\)"),
    ([[0, 0, 4, 4, 0, 0, 4, 4]], [[1, 1]], np.array([[0, 0, 4, 4.0]]),
     r"true_boxes\[0\] must have shape \(k, 4\)"),
    ([[[0, 0, 4, 4]]], None, np.array([[0, 0, 4, 4.0]]), "true_labels must be a list"),
    ("boxes", [[1]], np.array([[0, 0, 4, 4.0]]), "true_boxes must be a list"),
])
def test_detection_box_average_precision_names_malformed_input(true, labels, boxes, match):
    det = {"boxes": boxes, "scores": np.array([0.9]), "labels": np.array([1])}
    with pytest.raises(ValueError, match=match):
        detection_box_average_precision(true, labels, [det])


def test_detection_box_average_precision_takes_one_box_or_an_array_of_images():
    det = {"boxes": np.array([0, 0, 4, 4.0]), "scores": np.array([0.9]),
           "labels": np.array([1])}
    assert detection_box_average_precision([[0, 0, 4, 4]], [[1]], [det]) == pytest.approx(1.0)
    assert detection_box_average_precision(np.array([[[0, 0, 4, 4]]]), np.array([[1]]),
                                           [det]) == pytest.approx(1.0)
