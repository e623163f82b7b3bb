"""Detection scores: COCO box average precision, matched-instance mask IoU.

numpy only. Box AP follows the same matching and 101-point interpolation as
:func:`~sklearn_papers.metrics.mask_average_precision` (one protocol for both), on box IoUs.
"""

import numbers

import numpy as np

from sklearn_papers.metrics._segmentation import _check_maps, _coco_average_precision
from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["box_average_precision", "box_iou", "detection_box_average_precision",
           "matched_mask_iou"]


def _check_boxes(boxes, name):
    """``(k, 4)`` float64 boxes ``(x1, y1, x2, y2)`` with finite coordinates, x2 >= x1 and
    y2 >= y1; a clear error naming ``name`` otherwise."""
    try:
        arr = np.asarray(boxes, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers (x1, y1, x2, y2): {exc}") from None
    if arr.size == 0:
        return arr.reshape(0, 4)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"{name} must have shape (k, 4), boxes as (x1, y1, x2, y2); got "
                         f"shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds NaN or inf coordinates")
    if np.any(arr[:, 2] < arr[:, 0]) or np.any(arr[:, 3] < arr[:, 1]):
        bad = int(np.flatnonzero((arr[:, 2] < arr[:, 0]) | (arr[:, 3] < arr[:, 1]))[0])
        raise ValueError(f"{name}[{bad}] = {arr[bad].tolist()} has x2 < x1 or y2 < y1: boxes "
                         "are (x1, y1, x2, y2), corners, not (x, y, width, height)")
    return arr


@with_numpy_inputs
def box_iou(boxes_a, boxes_b):
    """Pairwise intersection over union of two sets of axis-aligned boxes.

    Parameters
    ----------
    boxes_a : array-like of shape (n, 4)
        Boxes ``(x1, y1, x2, y2)`` (corners; any unit, e.g. pixels).
    boxes_b : array-like of shape (m, 4)
        Boxes in the same form and unit.

    Returns
    -------
    iou : ndarray of shape (n, m), float64 in [0, 1]
        0 where the union is empty (two empty boxes). Computed per pair in units of
        the pair's longest side, so coordinates of any finite magnitude (1e-200 as
        1e200) give the IoU of the same boxes in pixels.

    Raises
    ------
    ValueError
        If a set is not of shape (k, 4), holds NaN or inf, or has a box with x2 < x1 or
        y2 < y1.

    Examples
    --------
    >>> from sklearn_papers.metrics import box_iou
    >>> box_iou([[0, 0, 2, 2]], [[1, 0, 3, 2], [4, 4, 5, 5]]).round(3)
    array([[0.333, 0.   ]])
    """
    a, b = _check_boxes(boxes_a, "boxes_a"), _check_boxes(boxes_b, "boxes_b")
    # IoU does not depend on the unit, so every length is measured in half units (x / 2:
    # the difference of two finite coordinates then cannot overflow) and, per pair, in
    # units of the pair's longest side: areas are products of numbers in [0, 1], which
    # neither overflow (coordinates near 1e200) nor underflow (near 1e-200).
    a, b = a * 0.5, b * 0.5
    wa, ha = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    wb, hb = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    iw = np.clip(np.minimum(a[:, None, 2], b[None, :, 2])
                 - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, None, 3], b[None, :, 3])
                 - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    scale = np.maximum(np.maximum(wa, ha)[:, None], np.maximum(wb, hb)[None, :])
    safe = np.where(scale > 0, scale, 1.0)
    inter = (iw / safe) * (ih / safe)
    union = ((wa[:, None] / safe) * (ha[:, None] / safe)
             + (wb[None, :] / safe) * (hb[None, :] / safe) - inter)
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


@with_numpy_inputs
def box_average_precision(true_boxes, pred_boxes, *, pred_scores=None, true_labels=None,
                          pred_labels=None, iou_thresholds=None, max_detections=100):
    """COCO-style box average precision (AP) over images, classes and IoU thresholds.

    The protocol of :func:`~sklearn_papers.metrics.mask_average_precision` (greedy
    matching in score order, 101-point interpolated precision, mean over classes with
    ground truth and over thresholds), on box IoUs: ``pycocotools.cocoeval.COCOeval`` with
    ``iouType="bbox"``, area range "all" and no crowd regions (Lin et al. 2014).

    Parameters
    ----------
    true_boxes : list of n_images array-likes of shape (k_i, 4)
        True boxes per image, ``(x1, y1, x2, y2)`` (corners, e.g. pixels).
    pred_boxes : list of n_images array-likes of shape (d_i, 4)
        Detected boxes per image.
    pred_scores : list of n_images 1-D arrays or None, default=None
        Confidence of each detection; None scores every detection 1.
    true_labels, pred_labels : list of n_images 1-D int arrays or None, default=None
        Classes of the true boxes and of the detections (both or neither; neither is
        class-agnostic AP).
    iou_thresholds : float, array-like of floats or None, default=None
        IoU threshold(s) in (0, 1); None: COCO's 0.5, 0.55, ..., 0.95.
    max_detections : int, default=100
        Highest-scored detections kept per image (COCO: 100).

    Returns
    -------
    ap : float
        In [0, 1], greater is better; NaN if no image has a true box.

    Raises
    ------
    ValueError
        If the numbers of images differ, a box set is malformed (the message names the
        image), a score or label array has the wrong length, a label is not an integer >= 0,
        only one of the label lists is given, a threshold is outside (0, 1), or
        ``max_detections`` is not an int >= 1.

    References
    ----------
    .. [1] Lin, T.-Y., Maire, M., Belongie, S., et al. (2014). Microsoft COCO: common
       objects in context. ECCV 2014.
    .. [2] He, K., Gkioxari, G., Dollar, P., Girshick, R. (2017). Mask R-CNN. ICCV 2017.

    Examples
    --------
    >>> from sklearn_papers.metrics import box_average_precision
    >>> true = [[[0, 0, 4, 4], [4, 4, 8, 8]]]
    >>> found_one = [[[0, 0, 4, 4]]]
    >>> round(box_average_precision(true, found_one, iou_thresholds=0.5), 3)
    0.505
    """
    if not isinstance(true_boxes, (list, tuple)) or not isinstance(pred_boxes, (list, tuple)):
        raise ValueError("true_boxes and pred_boxes must be lists with one (k, 4) array of "
                         "boxes per image")
    if len(true_boxes) != len(pred_boxes):
        raise ValueError(f"true_boxes has {len(true_boxes)} images but pred_boxes has "
                         f"{len(pred_boxes)}.")
    if not true_boxes:
        raise ValueError("true_boxes and pred_boxes are empty (0 images).")
    if (true_labels is None) != (pred_labels is None):
        raise ValueError("Pass both true_labels and pred_labels (class-aware AP) or neither "
                         "(class-agnostic AP).")
    if isinstance(max_detections, bool) or not isinstance(max_detections, numbers.Integral) \
            or max_detections < 1:
        raise ValueError(f"max_detections must be an int >= 1 (COCO: 100), got "
                         f"{max_detections!r}")
    gts = [_check_boxes(b, f"true_boxes[{i}]") for i, b in enumerate(true_boxes)]
    dts = [_check_boxes(b, f"pred_boxes[{i}]") for i, b in enumerate(pred_boxes)]
    return _coco_average_precision(gts, dts, box_iou, pred_scores, true_labels, pred_labels,
                                   iou_thresholds, max_detections)


def _as_box_rows(boxes):
    """``boxes`` as rows of 4: an empty set as ``(0, 4)`` and one box ``(4,)`` as
    ``(1, 4)``; any other shape unchanged, for :func:`_check_boxes` to name."""
    arr = np.asarray(boxes)
    if arr.size == 0 or arr.shape == (4,):
        return arr.reshape(-1, 4)
    return arr


@with_numpy_inputs
def detection_box_average_precision(true_boxes, true_labels, detections, *,
                                    max_detections=100):
    """COCO box AP@[.5:.95] of per-image detection dicts.

    :func:`box_average_precision` on the output of a detector that returns one dict per
    image, as ``vision.MaskRCNN.predict_detections`` does.

    Parameters
    ----------
    true_boxes : list of n_images array-likes of shape (k_i, 4)
        True boxes per image, ``(x1, y1, x2, y2)``.
    true_labels : list of n_images 1-D int array-likes
        Class of each true box.
    detections : list of n_images dicts
        ``"boxes"`` (shape (d, 4)), ``"scores"`` (shape (d,)) and ``"labels"`` (shape
        (d,)) of each image; other keys (``"masks"``) are ignored.
    max_detections : int, default=100
        Highest-scored detections kept per image (COCO: 100).

    Returns
    -------
    ap : float
        In [0, 1], greater is better; NaN if no image has a true box.

    Raises
    ------
    ValueError
        If ``true_boxes``, ``true_labels`` or ``detections`` is not a list, a detection is
        not a dict with ``"boxes"``, ``"scores"`` and ``"labels"`` (the message names the
        image), or for the reasons of :func:`box_average_precision` (a box set of a shape
        other than ``(k, 4)``, ``(4,)`` for one box or empty, is refused, not reshaped).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import detection_box_average_precision
    >>> dets = [{"boxes": np.array([[0, 0, 4, 4]]), "scores": np.array([0.9]),
    ...          "labels": np.array([1])}]
    >>> round(detection_box_average_precision([[[0, 0, 4, 4]]], [[1]], dets), 3)
    1.0
    """
    if not isinstance(detections, (list, tuple)):
        raise ValueError("detections must be a list with one dict per image, got "
                         f"{type(detections).__name__}")
    for name, value in (("true_boxes", true_boxes), ("true_labels", true_labels)):
        if not isinstance(value, (list, tuple, np.ndarray)) or (
                isinstance(value, np.ndarray) and value.ndim == 0):
            raise ValueError(f"{name} must be a list with one array per image, got "
                             f"{type(value).__name__}")
    for n, d in enumerate(detections):
        missing = [k for k in ("boxes", "scores", "labels")
                   if not isinstance(d, dict) or k not in d]
        if missing:
            raise ValueError(f"detections[{n}] must be a dict with 'boxes', 'scores' and "
                             f"'labels'; it lacks {missing}")
    return box_average_precision([_as_box_rows(b) for b in true_boxes],
                                 [_as_box_rows(d["boxes"]) for d in detections],
                                 pred_scores=[d["scores"] for d in detections],
                                 true_labels=list(true_labels),
                                 pred_labels=[d["labels"] for d in detections],
                                 max_detections=max_detections)


@with_numpy_inputs
def matched_mask_iou(y_true, y_pred, *, threshold=0.5):
    """Mean mask IoU of the matched instances, and the fraction of true instances matched.

    Each true instance is matched to the predicted instance of its image with the largest
    IoU; it counts as matched when that IoU is at least ``threshold``. This is the quality
    of the masks that were found, apart from how many were found (the second value).

    Parameters
    ----------
    y_true : array-like of shape (n_images, H, W) or list of 2-D int arrays
        True instance maps (0 = background, ids > 0).
    y_pred : array-like of shape (n_images, H, W) or list of 2-D int arrays
        Predicted instance maps of the same shapes.
    threshold : float, default=0.5
        Least IoU of a match, in (0, 1].

    Returns
    -------
    mean_iou : float
        Mean IoU over matched true instances, in [0, 1]; 0.0 when none is matched.
    matched_fraction : float
        Matched true instances over all true instances, in [0, 1] (0.0 without any).

    Raises
    ------
    ValueError
        If the maps are not integer label maps of matching numbers and shapes (naming the
        image), there are no images, or ``threshold`` is not a number in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import matched_mask_iou
    >>> true = np.zeros((1, 4, 4), dtype=int); true[0, :2] = 1
    >>> pred = np.zeros((1, 4, 4), dtype=int); pred[0, :3] = 1
    >>> [round(v, 3) for v in matched_mask_iou(true, pred)]
    [0.667, 1.0]
    """
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not (
            0 < threshold <= 1):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")
    threshold = float(threshold)
    true, pred = _check_maps(y_true, "y_true"), _check_maps(y_pred, "y_pred")
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} images but y_pred has {len(pred)}.")
    if not true:
        raise ValueError("y_true and y_pred are empty (0 images).")
    ious, n_true = [], 0
    for i, (t, p) in enumerate(zip(true, pred)):
        if t.shape != p.shape:
            raise ValueError(f"y_true[{i}] has shape {t.shape} but y_pred[{i}] {p.shape}")
        p_ids = np.unique(p[p > 0])
        for k in np.unique(t[t > 0]):
            n_true += 1
            g = t == k
            if p_ids.size == 0:
                continue
            best = max(((p == j) & g).sum() / ((p == j) | g).sum() for j in p_ids)
            if best >= threshold:
                ious.append(best)
    return (float(np.mean(ious)) if ious else 0.0), (len(ious) / max(n_true, 1))
