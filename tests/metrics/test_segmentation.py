"""Segmentation metrics against naive oracles and against pycocotools."""

import contextlib
import io
import warnings

import numpy as np
import pytest
from scipy import ndimage
from sklearn.metrics import jaccard_score

from sklearn_papers.datasets import make_scenes
from sklearn_papers.metrics import (
    boundary_f_score,
    make_segmentation_scorer,
    mask_average_precision,
    semantic_mean_iou,
    symmetric_best_dice,
)


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(12, image_size=32, random_state=0)


def _perturbed(scenes, seed):
    """Predicted mask stacks, scores and classes made by damaging the ground truth."""
    rng = np.random.RandomState(seed)
    masks, scores, labels = [], [], []
    for i, g in enumerate(scenes.instance_maps):
        found = []
        for j in range(1, scenes.n_instances[i] + 1):
            if rng.rand() < 0.2:
                continue  # missed
            found.append(np.roll(g == j, rng.randint(-2, 3), axis=rng.randint(2)))
        for _ in range(rng.randint(0, 3)):  # spurious boxes
            m = np.zeros(g.shape, dtype=bool)
            y, x = rng.randint(0, 27, size=2)
            m[y:y + 5, x:x + 5] = True
            found.append(m)
        found = np.array(found, dtype=bool).reshape(-1, *g.shape)
        masks.append(found)
        scores.append(np.round(rng.rand(len(found)), 1))  # rounded: ties happen
        labels.append(np.where(rng.rand(len(found)) < 0.7, 1 + rng.randint(0, 3, len(found)),
                               1 + rng.randint(0, 3, len(found))))
    return masks, scores, labels


# --------------------------------------------------------------------- symmetric best Dice
def _naive_best_dice(a, b):
    ids_a = [i for i in np.unique(a) if i > 0]
    ids_b = [j for j in np.unique(b) if j > 0]
    if not ids_a and not ids_b:
        return 1.0
    if not ids_a or not ids_b:
        return 0.0
    return np.mean([max(2 * np.sum((a == i) & (b == j)) / (np.sum(a == i) + np.sum(b == j))
                        for j in ids_b) for i in ids_a])


def test_symmetric_best_dice_matches_naive_oracle(scenes):
    rng = np.random.RandomState(0)
    pred = np.array([ndimage.label(s > 0)[0] for s in scenes.semantic_maps])
    pred[::3] = np.roll(pred[::3], 2, axis=1)
    expected = [min(_naive_best_dice(t, p), _naive_best_dice(p, t))
                for t, p in zip(scenes.instance_maps, pred)]
    np.testing.assert_allclose(symmetric_best_dice(scenes.instance_maps, pred, average=False),
                               expected)
    perm = np.concatenate([[0], rng.permutation(np.arange(1, 50)) + 7])
    assert symmetric_best_dice(scenes.instance_maps, perm[scenes.instance_maps]) == 1.0


def test_symmetric_best_dice_is_the_minimum_of_both_directions():
    true = np.array([[1, 1, 2, 2]])
    merged = np.array([[5, 5, 5, 5]])
    # BestDice(true, merged) = 2*2/(2+4) = 2/3 for both, BestDice(merged, true) = 2/3.
    assert symmetric_best_dice(true, merged) == pytest.approx(2 / 3)
    over = np.array([[1, 2, 3, 4]])
    assert symmetric_best_dice(true, over) == pytest.approx(min(2 / 3, 2 / 3))
    assert symmetric_best_dice(np.zeros((2, 3)), np.zeros((2, 3))) == 1.0
    assert symmetric_best_dice(np.zeros((1, 3)), np.ones((1, 3))) == 0.0


def test_metrics_accept_lists_of_differently_sized_images():
    true = [np.array([[1, 0], [0, 2]]), np.ones((3, 5), dtype=int)]
    assert symmetric_best_dice(true, true) == 1.0
    assert boundary_f_score(true, true) == 1.0
    assert semantic_mean_iou(true, true) == 1.0
    assert mask_average_precision(true, true) == pytest.approx(1.0)


@pytest.mark.parametrize("metric", [symmetric_best_dice, semantic_mean_iou, boundary_f_score,
                                    mask_average_precision])
def test_metrics_reject_bad_maps(metric):
    good = np.zeros((2, 4, 4), dtype=int)
    with pytest.raises(ValueError, match="Image 1|y_pred\\[1\\]"):
        metric(good, [np.zeros((4, 4)), np.zeros((4, 5))])
    with pytest.raises(ValueError, match="2 images but y_pred has 1"):
        metric(good, good[:1])
    with pytest.raises(ValueError, match="non-integer"):
        metric(good, good + 0.5)
    with pytest.raises(ValueError, match="negative"):
        metric(good - 1, good)



@pytest.mark.parametrize("metric", [symmetric_best_dice, semantic_mean_iou, boundary_f_score,
                                    mask_average_precision])
def test_metrics_name_empty_and_non_finite_maps(metric):
    good = np.zeros((2, 4, 4), dtype=int)
    # a 0 x 0 map scored 1.0 (Dice, boundary F) or NaN without a word
    with pytest.raises(ValueError, match=r"y_pred\[1\] has shape \(0, 0\): a label map "
                                         r"needs at least one pixel"):
        metric([good[0], good[1]], [good[0], np.zeros((0, 0), dtype=int)])
    # inf was reported as "non-integer values (e.g. [])"
    with pytest.raises(ValueError, match=r"non-integer values \(e.g. \[inf\]\)"):
        metric(good, np.where(good == 0, np.inf, 0.0))


def test_float16_label_maps_are_read_without_an_overflow_warning():
    # comparing float16 labels with 2**63 in float16 overflowed (RuntimeWarning)
    true = np.array([[0, 1, 1], [0, 2, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert symmetric_best_dice(true.astype(np.float16), true) == 1.0


# --------------------------------------------------------------------- mask AP
def _coco_ap(gts, gt_labels, dts, dt_scores, dt_labels, threshold):
    mask_util = pytest.importorskip("pycocotools.mask")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    def rle(m):
        r = mask_util.encode(np.asfortranarray(m.astype(np.uint8)))
        r["counts"] = r["counts"].decode()
        return r

    h, w = gts[0].shape
    images, anns, results = [], [], []
    for i, (g, labels) in enumerate(zip(gts, gt_labels)):
        images.append({"id": i + 1, "height": h, "width": w})
        for k, gid in enumerate(np.unique(g[g > 0])):
            r = rle(g == gid)
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "iscrowd": 0,
                         "category_id": int(labels[k]), "segmentation": r,
                         "area": float((g == gid).sum()), "bbox": list(mask_util.toBbox(r))})
    for i, (d, s, labels) in enumerate(zip(dts, dt_scores, dt_labels)):
        for k in range(d.shape[0]):
            results.append({"image_id": i + 1, "category_id": int(labels[k]),
                            "segmentation": rle(d[k]), "score": float(s[k])})
    cats = sorted(set(np.concatenate(list(gt_labels) + list(dt_labels)).tolist()))
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns,
                      "categories": [{"id": c} for c in cats]}
        gt.createIndex()
        evaluator = COCOeval(gt, gt.loadRes(results), "segm")
        if threshold is not None:
            evaluator.params.iouThrs = np.array([threshold])
        evaluator.evaluate()
        evaluator.accumulate()
    precision = evaluator.eval["precision"][:, :, :, 0, -1]
    return float(np.mean(precision[precision > -1]))


@pytest.mark.parametrize("threshold", [None, 0.5, 0.75])
@pytest.mark.parametrize("class_aware", [True, False])
def test_mask_ap_matches_pycocotools(scenes, threshold, class_aware):
    masks, scores, labels = _perturbed(scenes, seed=1)
    true_labels = scenes.labels if class_aware else [np.ones_like(v) for v in scenes.labels]
    pred_labels = labels if class_aware else [np.ones_like(v) for v in labels]
    expected = _coco_ap(list(scenes.instance_maps), true_labels, masks, scores, pred_labels,
                        threshold)
    ours = mask_average_precision(scenes.instance_maps, masks, pred_scores=scores,
                                  true_labels=true_labels if class_aware else None,
                                  pred_labels=pred_labels if class_aware else None,
                                  iou_thresholds=threshold)
    assert ours == pytest.approx(expected, abs=1e-12)
    assert 0 < ours < 1


def test_mask_ap_label_maps_equal_mask_stacks(scenes):
    stacks = [np.array([m == j for j in range(1, k + 1)]).reshape(-1, *m.shape)
              for m, k in zip(scenes.instance_maps, scenes.n_instances)]
    assert mask_average_precision(scenes.instance_maps, scenes.instance_maps) == 1.0
    assert mask_average_precision(scenes.instance_maps, stacks) == 1.0
    merged = [ndimage.label(s > 0)[0] for s in scenes.semantic_maps]
    assert mask_average_precision(scenes.instance_maps, merged, iou_thresholds=0.5) < 1.0


def test_mask_ap_edge_cases():
    empty = np.zeros((2, 4, 4), dtype=int)
    assert np.isnan(mask_average_precision(empty, empty))
    true = np.zeros((1, 4, 4), dtype=int)
    true[0, :2, :2] = 1
    assert mask_average_precision(true, np.zeros_like(true)) == 0.0
    assert mask_average_precision(true, [np.zeros((0, 4, 4), dtype=bool)]) == 0.0
    with pytest.raises(ValueError, match="pred_scores\\[0\\] has 2 values"):
        mask_average_precision(true, true, pred_scores=[[0.1, 0.2]])
    with pytest.raises(ValueError, match="both true_labels and pred_labels"):
        mask_average_precision(true, true, true_labels=[[1]])
    with pytest.raises(ValueError, match="boolean or 0/1"):
        mask_average_precision(true, [np.full((1, 4, 4), 2)])


# --------------------------------------------------------------------- semantic IoU
def test_semantic_mean_iou_matches_jaccard(scenes):
    pred = scenes.semantic_maps.copy()
    pred[:, ::4] = 0
    pred[:, :, ::5] = 2
    ours = semantic_mean_iou(scenes.semantic_maps, pred)
    expected = jaccard_score(scenes.semantic_maps.ravel(), pred.ravel(), average="macro")
    assert ours == pytest.approx(expected)
    per_class = semantic_mean_iou(scenes.semantic_maps, pred, labels=[1, 2, 5], average=False)
    assert np.isnan(per_class[2])
    assert semantic_mean_iou(scenes.semantic_maps, pred, labels=[1, 2, 5]) == pytest.approx(
        np.mean(per_class[:2]))


# --------------------------------------------------------------------- boundary F
def _naive_boundary_f(t, p, radius):
    def boundary(m):
        out = np.zeros(m.shape, dtype=bool)
        for y in range(m.shape[0]):
            for x in range(m.shape[1]):
                for dy, dx in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    yy, xx = y + dy, x + dx
                    if (m[y, x] > 0 and 0 <= yy < m.shape[0] and 0 <= xx < m.shape[1]
                            and m[yy, xx] != m[y, x]):
                        out[y, x] = True
        return out

    bt, bp = np.argwhere(boundary(t)), np.argwhere(boundary(p))
    dist = np.sqrt(((bp[:, None, :] - bt[None, :, :]) ** 2).sum(-1))
    precision = np.mean(dist.min(1) <= radius)
    recall = np.mean(dist.min(0) <= radius)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@pytest.mark.parametrize("tolerance, radius", [(1, 1), (2.5, 2.5), (0.008, 1), (0, 0)])
def test_boundary_f_score_matches_naive_oracle(scenes, tolerance, radius):
    pred = np.roll(scenes.instance_maps[:4], 2, axis=2)
    pred[1] = ndimage.label(scenes.semantic_maps[1] > 0)[0]
    expected = [_naive_boundary_f(t, p, radius) for t, p in zip(scenes.instance_maps[:4], pred)]
    np.testing.assert_allclose(boundary_f_score(scenes.instance_maps[:4], pred,
                                                tolerance=tolerance, average=False), expected)
    assert boundary_f_score(scenes.instance_maps, scenes.instance_maps) == 1.0


# --------------------------------------------------------------------- scorers
class _Oracle:
    """Stands in for a fitted segmenter: returns stored maps."""

    def __init__(self, instance, semantic):
        self.instance, self.semantic = instance, semantic

    def predict(self, X):
        return self.instance[: len(X)]

    def predict_semantic(self, X):
        return self.semantic[: len(X)]


def test_segmentation_scorers(scenes):
    merged = np.array([ndimage.label(s > 0)[0] for s in scenes.semantic_maps])
    est = _Oracle(merged, scenes.semantic_maps)
    X, y = scenes.images, scenes.instance_maps
    assert make_segmentation_scorer("symmetric_best_dice")(est, X, y) == pytest.approx(
        symmetric_best_dice(y, merged))
    assert make_segmentation_scorer("mask_average_precision", iou_thresholds=0.5)(
        est, X, y) == pytest.approx(mask_average_precision(y, merged, iou_thresholds=0.5))
    assert make_segmentation_scorer("semantic_mean_iou")(est, X, scenes.semantic_maps) == 1.0
    assert make_segmentation_scorer("boundary_f_score", tolerance=2)(est, X, y) == (
        pytest.approx(boundary_f_score(y, merged, tolerance=2)))
    with pytest.raises(TypeError, match="'y_pred'"):
        make_segmentation_scorer("symmetric_best_dice", y_pred=merged)
    with pytest.raises(TypeError, match="'pred_scores'"):
        make_segmentation_scorer("mask_average_precision", pred_scores=[1])
    with pytest.raises(ValueError, match="metric"):
        make_segmentation_scorer("dice")
    with pytest.raises(ValueError, match="needs the true label maps"):
        make_segmentation_scorer("symmetric_best_dice")(est, X)


def test_ap_scorer_uses_predict_instances_scores(scenes):
    masks, scores, _ = _perturbed(scenes, seed=2)

    class Detector(_Oracle):
        def predict_instances(self, X):
            return [{"masks": m, "scores": s} for m, s in zip(masks, scores)][: len(X)]

    est = Detector(scenes.instance_maps, scenes.semantic_maps)
    scorer = make_segmentation_scorer("mask_average_precision")
    assert scorer(est, scenes.images, scenes.instance_maps) == pytest.approx(
        mask_average_precision(scenes.instance_maps, masks, pred_scores=scores))


def test_ap_scorer_uses_predict_detections_scores(scenes):
    masks, scores, _ = _perturbed(scenes, seed=2)

    class Detector:  # MaskRCNN's interface: predict_detections, thresholded predict
        def predict_detections(self, X):
            return [{"masks": m, "scores": s} for m, s in zip(masks, scores)][: len(X)]

        def predict(self, X):
            return np.zeros_like(scenes.instance_maps[: len(X)])

    scorer = make_segmentation_scorer("mask_average_precision")
    expected = mask_average_precision(scenes.instance_maps, masks, pred_scores=scores)
    assert expected > 0
    assert scorer(Detector(), scenes.images, scenes.instance_maps) == pytest.approx(expected)
    with pytest.raises(TypeError, match="Detector has no predict_semantic"):
        make_segmentation_scorer("semantic_mean_iou")(Detector(), scenes.images,
                                                       scenes.semantic_maps)


@pytest.mark.parametrize("metric, kwargs, match", [
    ("boundary_f_score", {"tolerance": -1}, "tolerance"),
    ("boundary_f_score", {"tolerance": True}, "tolerance.* Got True"),
    ("mask_average_precision", {"iou_thresholds": 5}, "iou_thresholds"),
    ("mask_average_precision", {"iou_thresholds": [0.5, np.nan]},
     r"iou_thresholds\[1\] is nan"),
    ("mask_average_precision", {"iou_thresholds": []}, "non-empty"),
    ("semantic_mean_iou", {"labels": [1.5]}, r"labels\[0\] is 1.5"),
])
def test_scorer_values_are_checked_when_the_scorer_is_made(metric, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_segmentation_scorer(metric, **kwargs)


def test_bad_thresholds_labels_and_tolerance_are_refused():
    a = np.zeros((2, 8, 8), dtype=int)
    a[:, 2:5, 2:5] = 1
    with pytest.raises(ValueError, match=r"iou_thresholds\[0\] is nan"):
        mask_average_precision(a, a, iou_thresholds=[np.nan])  # not 1.0
    with pytest.raises(ValueError, match="non-empty"):
        mask_average_precision(a, a, iou_thresholds=[])  # not NaN with warnings
    with pytest.raises(ValueError, match=r"labels\[0\] is 1.5"):
        semantic_mean_iou(a, a, labels=[1.5])  # not class 1
    with pytest.raises(ValueError, match=r"labels\[1\] is -1"):
        semantic_mean_iou(a, a, labels=[0, -1])  # not NaN
    assert semantic_mean_iou(a, a, labels=[0, 1.0]) == 1.0
    with pytest.raises(ValueError, match="tolerance.* Got True"):
        boundary_f_score(a, a, tolerance=True)


def test_boundary_f_score_without_boundaries_compares_the_object_pixels():
    empty, full = np.zeros((16, 16), dtype=int), np.ones((16, 16), dtype=int)
    assert boundary_f_score(empty, full) == 0.0  # not 1.0: the object pixels differ
    assert boundary_f_score(full, full * 3) == 1.0 and boundary_f_score(empty, empty) == 1.0


def test_uint64_labels_above_int64_are_reported_as_too_large():
    a = np.zeros((8, 8), dtype=np.uint64)
    a[0, 0] = np.uint64(2**63 + 5)
    with pytest.raises(ValueError, match=r"too large for int64 \(9223372036854775813\)"):
        symmetric_best_dice(a, a)


def test_mask_ap_refuses_negative_class_ids_and_a_bool_max_detections():
    # a class id of -1 (an "ignore" label in some data sets) was scored as one more class,
    # and max_detections=True (an Integral) kept one detection per image, both silently
    true = np.zeros((1, 8, 8), dtype=int)
    true[0, :4, :4], true[0, 4:, 4:] = 1, 2
    with pytest.raises(ValueError, match=r"true_labels\[0\]\[1\] is the class id -1; class "
                                         r"ids must be >= 0.*drop the instances"):
        mask_average_precision(true, true, true_labels=[[1, -1]], pred_labels=[[1, 1]])
    with pytest.raises(ValueError, match=r"pred_labels\[0\]\[0\] is the class id -3"):
        mask_average_precision(true, true, true_labels=[[1, 1]], pred_labels=[[-3, 1]])
    with pytest.raises(ValueError, match=r"'max_detections' parameter .* Got True"):
        mask_average_precision(true, true, max_detections=True)
