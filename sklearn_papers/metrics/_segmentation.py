"""Segmentation scores: symmetric best Dice, COCO mask AP, semantic mean IoU, boundary F.

Inputs are label maps, one 2-D integer array per image (0 = background, any positive id an
instance or a class), given as one array of shape (n_images, H, W), one (H, W) array, or a
list of 2-D arrays whose shapes may differ between images. Mask AP also takes predictions
as stacks of (possibly overlapping) boolean masks. numpy and scipy only.
"""

import inspect
from numbers import Integral, Real

import numpy as np
from scipy import ndimage

from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_params,
)
from sklearn_papers.utils._validation import check_keyword_values

__all__ = ["boundary_f_score", "make_segmentation_scorer", "mask_average_precision",
           "semantic_mean_iou", "symmetric_best_dice"]

COCO_IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
_RECALL_POINTS = np.linspace(0.0, 1.0, 101)


# --------------------------------------------------------------------------- input checks
def _check_maps(y, name):
    """A list of 2-D int64 label maps from an array or a list; clear errors otherwise."""
    if isinstance(y, np.ndarray) and y.ndim in (2, 3):
        items = [y] if y.ndim == 2 else list(y)
    elif isinstance(y, (list, tuple)):
        items = list(y)
    else:
        arr = np.asarray(y)
        if arr.ndim not in (2, 3):
            raise ValueError(f"{name} must be a label map of shape (H, W), an array of shape "
                             f"(n_images, H, W) or a list of 2-D maps; got shape {arr.shape}.")
        items = [arr] if arr.ndim == 2 else list(arr)
    out = []
    for i, item in enumerate(items):
        out.append(_check_map(item, f"{name}[{i}]"))
    return out


def _check_map(item, name):
    arr = np.asarray(item)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D label map (H, W); got shape {arr.shape}.")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer labels; got dtype {arr.dtype}.")
    if arr.size == 0:
        raise ValueError(f"{name} has shape {arr.shape}: a label map needs at least one "
                         "pixel.")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"{name} must hold integer labels; it has non-integer values "
                             f"(e.g. {arr[bad].ravel()[:1].tolist()}).")
    if arr.size and np.issubdtype(arr.dtype, np.unsignedinteger) and (
            arr.max() > np.iinfo(np.int64).max):
        raise ValueError(f"{name} has a label too large for int64 ({int(arr.max())}); "
                         f"labels must be at most {np.iinfo(np.int64).max}.")
    if arr.size and np.issubdtype(arr.dtype, np.floating) and (
            np.abs(arr.astype(np.float64)).max() >= 2.0**63):  # float16 cannot hold 2**63
        raise ValueError(f"{name} has a label too large for int64 ({arr.max()!r}).")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} has a negative label ({arr.min()}); labels must be >= 0 "
                         "(0 = background).")
    return arr


def _check_pair(y_true, y_pred):
    true = _check_maps(y_true, "y_true")
    pred = _check_maps(y_pred, "y_pred")
    _check_same_images(true, pred)
    return true, pred


def _check_same_images(true, pred, pred_shapes=None):
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} images but y_pred has {len(pred)}.")
    if len(true) == 0:
        raise ValueError("y_true and y_pred are empty (0 images).")
    for i, (t, p) in enumerate(zip(true, pred)):
        shape = p.shape if pred_shapes is None else pred_shapes[i]
        if t.shape != shape:
            raise ValueError(f"Image {i}: y_true has shape {t.shape} but y_pred has shape "
                             f"{shape}.")


def _overlaps(true, pred):
    """Contingency of two label maps: ids of each (background excluded) and pixel counts."""
    t_ids, t_inv = np.unique(true.ravel(), return_inverse=True)
    p_ids, p_inv = np.unique(pred.ravel(), return_inverse=True)
    table = np.bincount(t_inv * p_ids.size + p_inv, minlength=t_ids.size * p_ids.size)
    table = table.reshape(t_ids.size, p_ids.size)
    t_keep, p_keep = t_ids > 0, p_ids > 0
    return (table[np.ix_(t_keep, p_keep)], table.sum(1)[t_keep], table.sum(0)[p_keep])


# --------------------------------------------------------------------------- best Dice
def _best_dice(inter, size_a, size_b):
    """Mean over a's objects of the best Dice with any of b's (CVPPP's BestDice(a, b))."""
    if size_a.size == 0 and size_b.size == 0:
        return 1.0
    if size_a.size == 0 or size_b.size == 0:
        return 0.0
    dice = 2.0 * inter / (size_a[:, None] + size_b[None, :])
    return float(dice.max(axis=1).mean())


_DICE_PARAMS = {"y_true": ["array-like"], "y_pred": ["array-like"], "average": ["boolean"]}


@validate_params(_DICE_PARAMS, prefer_skip_nested_validation=True)
def symmetric_best_dice(y_true, y_pred, *, average=True):
    """Symmetric best Dice of instance label maps (the CVPPP leaf-segmentation score).

    For label maps ``a`` and ``b`` of one image, ``BestDice(a, b)`` is the mean over the
    objects of ``a`` of the largest Dice coefficient ``2 |A & B| / (|A| + |B|)`` with any
    object of ``b``; the symmetric best Dice is ``min(BestDice(a, b), BestDice(b, a))``
    (Scharr et al. 2016, Eq. 2-3). Instance ids need not match between ``y_true`` and
    ``y_pred``: the score is invariant to relabelling. Background (0) is not an object.

    Parameters
    ----------
    y_true : array-like of shape (n_images, H, W) or (H, W), or list of 2-D arrays
        True instance maps, non-negative integers (0 = background).
    y_pred : array-like of the same form and shapes as ``y_true``
        Predicted instance maps.
    average : bool, default=True
        Return the mean over images; if False, the score of each image.

    Returns
    -------
    score : float or ndarray of shape (n_images,)
        In [0, 1], greater is better. An image where neither map has an object scores 1,
        one where exactly one of them has none scores 0.

    Raises
    ------
    ValueError
        If the numbers of images or an image's shapes differ (the message names the
        image), a map is not 2-D or has no pixels, or it holds negative or non-integer
        labels.
    TypeError
        If a map is not numeric.

    See Also
    --------
    mask_average_precision : COCO-style detection score of instance masks.

    References
    ----------
    .. [1] Scharr, H., Minervini, M., French, A. P., et al. (2016). Leaf segmentation in
       plant phenotyping: a collation study. Machine Vision and Applications 27,
       585-606. https://doi.org/10.1007/s00138-015-0737-3

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import symmetric_best_dice
    >>> true = np.array([[1, 1, 0, 2, 2]])
    >>> symmetric_best_dice(true, true * 3)
    1.0
    >>> round(symmetric_best_dice(true, (true > 0).astype(int)), 3)
    0.667
    """
    true, pred = _check_pair(y_true, y_pred)
    scores = np.empty(len(true))
    for i, (t, p) in enumerate(zip(true, pred)):
        inter, size_t, size_p = _overlaps(t, p)
        scores[i] = min(_best_dice(inter, size_t, size_p), _best_dice(inter.T, size_p, size_t))
    return float(scores.mean()) if average else scores


# --------------------------------------------------------------------------- mask AP
def _pred_masks(item, name, shape):
    """(k, H*W) bool masks and their ids from a label map (H, W) or a mask stack (k, H, W)."""
    arr = np.asarray(item)
    if arr.ndim == 3:
        if arr.shape[1:] != shape:
            raise ValueError(f"{name} holds masks of shape {arr.shape[1:]} but the image's "
                             f"y_true has shape {shape}.")
        if arr.dtype != bool:
            if not np.all(np.isin(arr, (0, 1))):
                raise ValueError(f"{name} is a stack of masks (k, H, W) and must be boolean "
                                 "or 0/1.")
            arr = arr.astype(bool)
        return arr.reshape(arr.shape[0], shape[0] * shape[1])
    label_map = _check_map(arr, name)
    if label_map.shape != shape:
        raise ValueError(f"{name} has shape {label_map.shape} but the image's y_true has "
                         f"shape {shape}.")
    return _label_masks(label_map)


def _label_masks(label_map):
    ids = np.unique(label_map)
    ids = ids[ids > 0]
    return label_map.ravel()[None, :] == ids[:, None]


def _check_iou_thresholds(iou_thresholds):
    """1-D float array of thresholds in (0, 1) (COCO's ten for None); ValueError else."""
    if iou_thresholds is None:
        return COCO_IOU_THRESHOLDS
    if isinstance(iou_thresholds, (bool, np.bool_)):
        raise ValueError(f"iou_thresholds must be a float or floats in (0, 1), not the bool "
                         f"{iou_thresholds!r}.")
    try:
        thresholds = np.atleast_1d(np.asarray(iou_thresholds, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"iou_thresholds must be a float or floats in (0, 1); got "
                         f"{iou_thresholds!r}.") from None
    if thresholds.ndim != 1 or thresholds.size == 0:
        raise ValueError(f"iou_thresholds must be a float or a non-empty 1-D list of floats "
                         f"in (0, 1); got {iou_thresholds!r}.")
    bad = ~((thresholds > 0) & (thresholds < 1))  # NaN is bad too
    if bad.any():
        raise ValueError(f"iou_thresholds must lie in (0, 1); iou_thresholds"
                         f"[{int(np.argmax(bad))}] is {float(thresholds[bad][0])!r}.")
    return thresholds


def _per_image(values, name, n_images, counts, dtype, default):
    """Per-image 1-D arrays (scores or classes) matching the number of instances."""
    if values is None:
        return [np.full(k, default, dtype=dtype) for k in counts]
    values = list(values)
    if len(values) != n_images:
        raise ValueError(f"{name} has {len(values)} entries but there are {n_images} images.")
    out = []
    for i, (v, k) in enumerate(zip(values, counts)):
        try:
            v = np.asarray(v, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}[{i}] must hold numbers: {exc}") from None
        if v.size != k:
            raise ValueError(f"{name}[{i}] has {v.size} values but image {i} has {k} "
                             "instances (one value per instance, in increasing id order "
                             "for a label map).")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name}[{i}] has non-finite values.")
        bad = (v != np.round(v)) | (np.abs(v) >= 2.0**53)
        if np.issubdtype(dtype, np.integer) and bad.any():
            raise ValueError(f"{name}[{i}] must hold integer class ids (exactly representable "
                             f"integers); got {v[bad][:3].tolist()}")
        if np.issubdtype(dtype, np.integer) and (v < 0).any():
            # a negative id (-1 for "ignore" in some data sets) would be scored as a class
            k = int(np.argmax(v < 0))
            raise ValueError(f"{name}[{i}][{k}] is the class id {int(v[k])}; class ids must "
                             "be >= 0 (the labels of label maps). Relabel the classes, or "
                             "drop the instances meant to be ignored (and their masks or "
                             "boxes).")
        out.append(v.astype(dtype))
    return out


def _iou(pred, true):
    """IoU matrix (k_pred, k_true) of flattened boolean masks."""
    if pred.shape[0] == 0 or true.shape[0] == 0:
        return np.zeros((pred.shape[0], true.shape[0]))
    inter = pred.astype(np.float64) @ true.T.astype(np.float64)
    union = pred.sum(1)[:, None] + true.sum(1)[None, :] - inter
    return inter / np.maximum(union, 1)


def _match(ious, thresholds):
    """COCO greedy matching: detections in score order take their best free ground truth."""
    n_det, n_gt = ious.shape
    matched = np.zeros((len(thresholds), n_det), dtype=bool)
    for t, thr in enumerate(thresholds):
        taken = np.zeros(n_gt, dtype=bool)
        for d in range(n_det):
            best, m = min(thr, 1 - 1e-10), -1
            for g in range(n_gt):
                if taken[g] or ious[d, g] < best:
                    continue
                best, m = ious[d, g], g
            if m >= 0:
                taken[m] = True
                matched[t, d] = True
    return matched


_AP_PARAMS = {
    "y_true": ["array-like"], "y_pred": ["array-like"],
    "pred_scores": ["array-like", None], "true_labels": ["array-like", None],
    "pred_labels": ["array-like", None],
    "iou_thresholds": [Interval(Real, 0, 1, closed="neither"), "array-like", None],
    "max_detections": [Interval(Integral, 1, None, closed="left")]}


@validate_params(_AP_PARAMS, prefer_skip_nested_validation=True)
def mask_average_precision(y_true, y_pred, *, pred_scores=None, true_labels=None,
                           pred_labels=None, iou_thresholds=None, max_detections=100):
    """COCO-style mask average precision (AP) over images, classes and IoU thresholds.

    For each class and IoU threshold, the detections of all images are ranked by score;
    each one, in score order within its image, is matched to the unmatched ground-truth
    instance of its class with the largest mask IoU at or above the threshold (a true
    positive) or counted a false positive. Precision is made monotone in recall and read
    at the 101 recall points 0, 0.01, ..., 1 (0 beyond the largest recall reached); AP is
    their mean, averaged over classes that have ground truth and over the thresholds.
    This follows ``pycocotools.cocoeval.COCOeval`` with ``iouType="segm"``, area range
    "all" and no crowd regions (Lin et al. 2014); tests compare the two.

    Parameters
    ----------
    y_true : array-like of shape (n_images, H, W) or (H, W), or list of 2-D arrays
        True instance maps, non-negative integers (0 = background).
    y_pred : list of n_images arrays, or array of shape (n_images, H, W)
        Predictions per image: a 2-D instance map like ``y_true`` (non-overlapping
        instances), or a stack of boolean masks of shape (k, H, W) (may overlap, as
        Mask R-CNN's).
    pred_scores : list of n_images 1-D arrays or None, default=None
        Confidence of each predicted instance (for a label map in increasing id order, for
        a mask stack in stack order). None gives every detection score 1 (ties keep
        image order, then instance order).
    true_labels : list of n_images 1-D int arrays or None, default=None
        Class of each true instance, in increasing id order. None (with
        ``pred_labels=None``) evaluates class-agnostically.
    pred_labels : list of n_images 1-D int arrays or None, default=None
        Class of each predicted instance. Must be given together with ``true_labels``.
    iou_thresholds : float, array-like of floats or None, default=None
        IoU threshold(s) in (0, 1). None uses COCO's 0.5, 0.55, ..., 0.95 (AP@[.5:.95]);
        0.5 gives AP50 and 0.75 AP75.
    max_detections : int, default=100
        Highest-scored detections kept per image (COCO: 100).

    Returns
    -------
    ap : float
        In [0, 1], greater is better; NaN if no image has a ground-truth instance (COCO
        reports -1 then).

    Raises
    ------
    ValueError
        If the numbers of images or an image's shapes differ, a map has no pixels or
        holds negative or non-integer labels, a score or label array has the wrong
        length (the message names the image), a class id is negative or not an
        integer, only one of ``true_labels`` / ``pred_labels`` is given,
        ``iou_thresholds`` is empty or has a value outside (0, 1) (NaN included), or
        ``max_detections`` is a bool.

    See Also
    --------
    symmetric_best_dice : Segmentation score without detection confidences.

    References
    ----------
    .. [1] Lin, T.-Y., Maire, M., Belongie, S., et al. (2014). Microsoft COCO: common
       objects in context. ECCV 2014. https://doi.org/10.1007/978-3-319-10602-1_48

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import mask_average_precision
    >>> true = np.zeros((1, 8, 8), dtype=int)
    >>> true[0, :4, :4], true[0, 4:, 4:] = 1, 2
    >>> pred = true.copy()
    >>> pred[0, 4:, 4:] = 0          # one of the two objects missed
    >>> round(mask_average_precision(true, pred, iou_thresholds=0.5), 3)
    0.505
    """
    if isinstance(max_detections, bool):
        # an Integral for the parameter check: True kept one detection per image
        raise ValueError(f"max_detections must be an int >= 1 (COCO: 100), got "
                         f"{max_detections!r}")
    true = _check_maps(y_true, "y_true")
    if isinstance(y_pred, np.ndarray) and y_pred.ndim == 2:
        y_pred = [y_pred]
    pred_items = list(y_pred)
    if len(pred_items) != len(true):
        raise ValueError(f"y_true has {len(true)} images but y_pred has {len(pred_items)}.")
    if len(true) == 0:
        raise ValueError("y_true and y_pred are empty (0 images).")
    if (true_labels is None) != (pred_labels is None):
        raise ValueError("Pass both true_labels and pred_labels (class-aware AP) or neither "
                         "(class-agnostic AP).")
    gts = [_label_masks(t) for t in true]
    dts = [_pred_masks(p, f"y_pred[{i}]", true[i].shape) for i, p in enumerate(pred_items)]
    return _coco_average_precision(gts, dts, _iou, pred_scores, true_labels, pred_labels,
                                   iou_thresholds, max_detections)


def _coco_average_precision(gts, dts, iou, pred_scores, true_labels, pred_labels,
                            iou_thresholds, max_detections):
    """COCO AP over images, classes and thresholds of detections ``dts`` against ground
    truths ``gts`` (per image, indexable by a boolean or index array; their lengths are the
    instance counts), with ``iou(detections, truths)`` giving the IoU matrix: the protocol
    shared by mask and box AP."""
    n = len(gts)
    scores = _per_image(pred_scores, "pred_scores", n, [len(d) for d in dts], float, 1.0)
    t_lab = _per_image(true_labels, "true_labels", n, [len(g) for g in gts], np.int64, 1)
    p_lab = _per_image(pred_labels, "pred_labels", n, [len(d) for d in dts], np.int64, 1)
    thresholds = _check_iou_thresholds(iou_thresholds)
    classes = np.unique(np.concatenate(t_lab + p_lab)) if n else np.array([], dtype=int)
    precisions = []  # (n_thresholds,) AP per class with ground truth
    for c in classes:
        det_scores, det_tp, n_gt = [], [], 0
        for i in range(n):
            g = gts[i][t_lab[i] == c]
            sel = np.flatnonzero(p_lab[i] == c)
            order = sel[np.argsort(-scores[i][sel], kind="mergesort")][:max_detections]
            n_gt += len(g)
            if order.size == 0:
                continue
            det_scores.append(scores[i][order])
            det_tp.append(_match(iou(dts[i][order], g), thresholds))
        if n_gt == 0:
            continue
        if not det_scores:
            precisions.append(np.zeros(len(thresholds)))
            continue
        all_scores = np.concatenate(det_scores)
        tp = np.concatenate(det_tp, axis=1)[:, np.argsort(-all_scores, kind="mergesort")]
        precisions.append(np.array([_interpolated_ap(row, n_gt) for row in tp]))
    return float(np.mean(precisions)) if precisions else float("nan")


def _interpolated_ap(tp, n_gt):
    """101-point interpolated AP of one ranked list of true/false positives."""
    tps, fps = np.cumsum(tp), np.cumsum(~tp)
    recall = tps / n_gt
    precision = tps / (tps + fps + np.spacing(1))
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    idx = np.searchsorted(recall, _RECALL_POINTS, side="left")
    values = np.where(idx < precision.size, precision[np.minimum(idx, precision.size - 1)], 0)
    return values.mean()


# --------------------------------------------------------------------------- semantic IoU
def _check_labels(labels):
    """1-D int64 array of non-negative integer classes; ValueError naming a bad one."""
    arr = np.asarray(labels)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer)
                                   or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"labels must be non-negative integer classes; got {labels!r}.")
    arr = arr.ravel()
    if arr.size == 0:
        raise ValueError("labels is empty; pass at least one class, or None for every "
                         "class present.")
    bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < 0) if np.issubdtype(
        arr.dtype, np.floating) else arr < 0
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"labels[{k}] is {arr[k].item()!r}; labels must be non-negative "
                         "integer classes (0 = background).")
    return arr.astype(np.int64)


_MIOU_PARAMS = {"y_true": ["array-like"], "y_pred": ["array-like"],
                "labels": ["array-like", None], "average": ["boolean"]}


@validate_params(_MIOU_PARAMS, prefer_skip_nested_validation=True)
def semantic_mean_iou(y_true, y_pred, *, labels=None, average=True):
    """Mean intersection over union of semantic (class) maps, pooled over all pixels.

    For each class ``c``, ``IoU_c = TP / (TP + FP + FN)`` counted over every pixel of
    every image (the PASCAL VOC protocol, Everingham et al. 2010); the score is the mean
    over classes. Background (0) is a class like the others unless ``labels`` leaves it
    out.

    Parameters
    ----------
    y_true : array-like of shape (n_images, H, W) or (H, W), or list of 2-D arrays
        True class maps, non-negative integers.
    y_pred : array-like of the same form and shapes as ``y_true``
        Predicted class maps.
    labels : array-like of int or None, default=None
        Classes to average over, non-negative integers. None uses every class present
        in ``y_true`` or ``y_pred``. A listed class absent from both has no IoU (NaN per
        class) and is left out of the mean.
    average : bool, default=True
        Return the mean; if False, the IoU of each class in ``labels`` order (sorted
        classes when None).

    Returns
    -------
    score : float or ndarray of shape (n_labels,)
        In [0, 1], greater is better.

    Raises
    ------
    ValueError
        If the numbers of images or an image's shapes differ, a map has no pixels or
        holds negative or non-integer labels, or ``labels`` is empty or has a negative
        or non-integer class (the message names it).

    See Also
    --------
    sklearn.metrics.jaccard_score : The same per-class ratio on flat label vectors.

    References
    ----------
    .. [1] Everingham, M., Van Gool, L., Williams, C. K. I., Winn, J., Zisserman, A.
       (2010). The PASCAL visual object classes (VOC) challenge. IJCV 88, 303-338.
       https://doi.org/10.1007/s11263-009-0275-4

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import semantic_mean_iou
    >>> semantic_mean_iou(np.array([[0, 1, 1, 2]]), np.array([[0, 1, 2, 2]]))
    0.6666666666666666
    """
    true, pred = _check_pair(y_true, y_pred)
    t = np.concatenate([m.ravel() for m in true])
    p = np.concatenate([m.ravel() for m in pred])
    classes = np.union1d(t, p) if labels is None else _check_labels(labels)
    ious = np.empty(classes.size)
    for k, c in enumerate(classes):
        a, b = t == c, p == c
        union = np.count_nonzero(a | b)
        ious[k] = np.count_nonzero(a & b) / union if union else np.nan
    if not average:
        return ious
    return float(np.nanmean(ious)) if np.isfinite(ious).any() else float("nan")


# --------------------------------------------------------------------------- boundary F
def _boundary(label_map):
    """Object pixels with a 4-neighbour of another label (instance or background)."""
    b = np.zeros(label_map.shape, dtype=bool)
    diff_v = label_map[1:] != label_map[:-1]
    diff_h = label_map[:, 1:] != label_map[:, :-1]
    b[1:] |= diff_v
    b[:-1] |= diff_v
    b[:, 1:] |= diff_h
    b[:, :-1] |= diff_h
    return b & (label_map > 0)


_BF_PARAMS = {"y_true": ["array-like"], "y_pred": ["array-like"],
              "tolerance": [Interval(Real, 0, None, closed="left")], "average": ["boolean"]}


def _check_tolerance(tolerance):
    if isinstance(tolerance, (bool, np.bool_)):
        raise ValueError(f"tolerance must be a number of pixels (>= 1) or a fraction of the "
                         f"image diagonal (< 1), not the bool {tolerance!r}.")


@validate_params(_BF_PARAMS, prefer_skip_nested_validation=True)
def boundary_f_score(y_true, y_pred, *, tolerance=0.008, average=True):
    """Boundary F-measure of label maps, with a distance tolerance (DAVIS's F).

    The boundary of a label map is the set of object pixels (label > 0) with a
    4-neighbour of another label, so the edges between touching instances count; the
    image border is not a boundary (DAVIS's ``seg2bmap`` marks an object's pixels on the
    last row and column, and not on the first ones: ours is symmetric). A predicted
    boundary pixel is correct when a true boundary pixel lies within the
    tolerance (Euclidean distance); precision is the fraction of correct predicted
    boundary pixels, recall the same with the roles swapped, and
    ``F = 2 P R / (P + R)`` per image (Perazzi et al. 2016, Sec. 3.1; Martin et al.
    2004).

    Parameters
    ----------
    y_true : array-like of shape (n_images, H, W) or (H, W), or list of 2-D arrays
        True instance (or class) maps, non-negative integers.
    y_pred : array-like of the same form and shapes as ``y_true``
        Predicted maps.
    tolerance : float, default=0.008
        Matching distance, read in one of two units: **below 1 it is a fraction of the
        image diagonal** (rounded up to whole pixels; DAVIS's default 0.008 gives 1
        pixel for images up to 88 x 88, so ``tolerance=0.5`` is half the diagonal, not
        half a pixel); **at least 1 it is in pixels**. 0: a boundary pixel is correct
        only where the other map has a boundary pixel at the same place. A bool is
        refused.
    average : bool, default=True
        Return the mean over images; if False, the F-score of each image.

    Returns
    -------
    score : float or ndarray of shape (n_images,)
        In [0, 1], greater is better. An image where exactly one map has a boundary
        scores 0. Where neither has one (each map empty or a single object covering the
        whole image), it scores 1 if both have the same object pixels and 0 if not: an
        empty truth against a prediction of one object covering the image scores 0.

    Raises
    ------
    ValueError
        If the numbers of images or an image's shapes differ, a map has no pixels or
        holds negative or non-integer labels, or ``tolerance`` is a bool.

    See Also
    --------
    symmetric_best_dice : Region overlap of instances.

    References
    ----------
    .. [1] Perazzi, F., Pont-Tuset, J., McWilliams, B., Van Gool, L., Gross, M.,
       Sorkine-Hornung, A. (2016). A benchmark dataset and evaluation methodology for
       video object segmentation. CVPR 2016. https://doi.org/10.1109/CVPR.2016.85

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import boundary_f_score
    >>> true = np.zeros((16, 16), dtype=int)
    >>> true[4:12, 4:12] = 1
    >>> boundary_f_score(true, true)
    1.0
    >>> shifted = np.roll(true, 3, axis=1)
    >>> boundary_f_score(true, shifted) < 1.0
    True
    """
    _check_tolerance(tolerance)
    true, pred = _check_pair(y_true, y_pred)
    scores = np.empty(len(true))
    for i, (t, p) in enumerate(zip(true, pred)):
        radius = (tolerance if tolerance >= 1
                  else np.ceil(tolerance * np.hypot(*t.shape)))
        bt, bp = _boundary(t), _boundary(p)
        if not bt.any() and not bp.any():  # empty, or one object over the whole image
            scores[i] = float(np.array_equal(t > 0, p > 0))
            continue
        if not bt.any() or not bp.any():
            scores[i] = 0.0
            continue
        dist_to_true = ndimage.distance_transform_edt(~bt)
        dist_to_pred = ndimage.distance_transform_edt(~bp)
        precision = np.mean(dist_to_true[bp] <= radius)
        recall = np.mean(dist_to_pred[bt] <= radius)
        total = precision + recall
        scores[i] = 2 * precision * recall / total if total > 0 else 0.0
    return float(scores.mean()) if average else scores


# --------------------------------------------------------------------------- scorers
_SEGMENTATION_METRICS = {
    "symmetric_best_dice": symmetric_best_dice,
    "mask_average_precision": mask_average_precision,
    "semantic_mean_iou": semantic_mean_iou,
    "boundary_f_score": boundary_f_score,
}
_SUPPLIED = {"y_true", "y_pred", "average"}


class _SegmentationScorer:
    """``scorer(estimator, images, maps) -> float`` for ``scoring=`` in model selection."""

    def __init__(self, metric, kwargs):
        self.metric = metric
        self.kwargs = kwargs

    def __call__(self, estimator, X, y=None):
        if y is None:
            raise ValueError(f"The {self.metric!r} scorer needs the true label maps as y "
                             "(shape (n_images, H, W)); got y=None.")
        function = _SEGMENTATION_METRICS[self.metric]
        if self.metric == "semantic_mean_iou":
            if not hasattr(estimator, "predict_semantic"):
                raise TypeError(f"The 'semantic_mean_iou' scorer scores class maps from "
                                f"estimator.predict_semantic(X), but "
                                f"{type(estimator).__name__} has no predict_semantic method "
                                "(it predicts no semantic output).")
            return float(function(y, estimator.predict_semantic(X), **self.kwargs))
        if self.metric == "mask_average_precision":
            for method in ("predict_instances", "predict_detections"):
                if hasattr(estimator, method):
                    found = getattr(estimator, method)(X)
                    return float(function(y, [f["masks"] for f in found],
                                          pred_scores=[f["scores"] for f in found],
                                          **self.kwargs))
        return float(function(y, estimator.predict(X), **self.kwargs))

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        return f"make_segmentation_scorer({self.metric!r}{args})"


@validate_params(
    {"metric": [StrOptions(set(_SEGMENTATION_METRICS))]},
    prefer_skip_nested_validation=True,
)
def make_segmentation_scorer(metric, **kwargs):
    """Make a scorer ``scorer(estimator, images, maps)`` from a segmentation score.

    For ``GridSearchCV`` and ``cross_validate`` with ``X`` the images and ``y`` the true
    label maps. ``"semantic_mean_iou"`` scores ``estimator.predict_semantic(X)`` against
    class maps; the others score ``estimator.predict(X)`` (instance maps) against
    instance maps, except that ``"mask_average_precision"`` uses
    ``estimator.predict_instances(X)`` or else ``estimator.predict_detections(X)`` (as
    :class:`~sklearn_papers.vision.MaskRCNN` has) when the estimator has one (a list of
    dicts with ``"masks"`` (k, H, W) bool and ``"scores"`` (k,) per image), so that
    detection confidences rank the masks. AP is class-agnostic here (``y`` carries no classes).
    Greater is better for every score.

    Parameters
    ----------
    metric : {"symmetric_best_dice", "mask_average_precision", "semantic_mean_iou", \
            "boundary_f_score"}
        Name of the score function in :mod:`sklearn_papers.metrics`.
    **kwargs
        Passed to the score function (e.g. ``iou_thresholds=0.5``, ``tolerance=2``).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``.

    Raises
    ------
    TypeError
        If a keyword argument is not a parameter of the metric, or one the scorer
        supplies itself (``y_true``, ``y_pred``, ``average``); checked when the scorer
        is made. When called, a ``"semantic_mean_iou"`` scorer raises it for an
        estimator without ``predict_semantic``.
    ValueError
        If a keyword argument's value is one the metric refuses (``tolerance=-1``,
        ``iou_thresholds=5``, ``labels=[1.5]``); checked when the scorer is made.

    See Also
    --------
    make_disentanglement_scorer : The same for disentanglement scores.

    Examples
    --------
    >>> from sklearn_papers.metrics import make_segmentation_scorer
    >>> make_segmentation_scorer("mask_average_precision", iou_thresholds=0.5)
    make_segmentation_scorer('mask_average_precision', iou_thresholds=0.5)
    """
    function = _SEGMENTATION_METRICS[metric]
    params = inspect.signature(function).parameters
    valid = [name for name in params if name not in _SUPPLIED]
    if metric == "mask_average_precision":
        valid = [name for name in valid
                 if name not in ("pred_scores", "true_labels", "pred_labels")]
    for name in kwargs:
        if name not in valid:
            raise TypeError(f"make_segmentation_scorer({metric!r}) got an unexpected or "
                            f"scorer-supplied keyword argument {name!r}; {metric} takes "
                            f"{valid}.")
    _check_scorer_values(metric, function, kwargs)
    return _SegmentationScorer(metric, dict(kwargs))


_CONSTRAINTS = {"symmetric_best_dice": _DICE_PARAMS, "mask_average_precision": _AP_PARAMS,
                "semantic_mean_iou": _MIOU_PARAMS, "boundary_f_score": _BF_PARAMS}
_VALUE_CHECKS = {"iou_thresholds": _check_iou_thresholds, "labels": _check_labels,
                 "tolerance": _check_tolerance}


def _check_scorer_values(metric, function, kwargs):
    """Run the metric's constraints and value checks on a scorer's keyword arguments."""
    check_keyword_values(f"make_segmentation_scorer({metric!r})", function.__name__,
                         _CONSTRAINTS[metric], kwargs)
    for name, check in _VALUE_CHECKS.items():
        if name in kwargs and kwargs[name] is not None:
            try:
                check(kwargs[name])
            except ValueError as exc:
                raise ValueError(f"make_segmentation_scorer({metric!r}): {exc}") from exc
