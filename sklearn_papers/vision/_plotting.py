"""plot_instances: draw instance masks, boxes, classes and scores over an image."""

from numbers import Real

import numpy as np

from sklearn_papers.utils._sklearn_compat import HasMethods, Interval, validate_params

__all__ = ["plot_instances"]


def _numeric(value, name, ndim, k):
    """``value`` as a float array of ``ndim`` dimensions and ``k`` rows, or a clear error."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers; got {value!r:.60}.") from None
    if arr.ndim != ndim or len(arr) != k:
        want = f"({k},)" if ndim == 1 else f"({k}, 4)"
        raise ValueError(f"{name} must have shape {want}, one entry per mask ({k} masks); "
                         f"got shape {arr.shape}.")
    return arr


def _as_detections(y_pred, shape):
    """``(masks (k, H, W) bool, boxes (k, 4), labels (k,) or None, scores (k,) or None)``."""
    hint = ("pass one image's entry: predict(X)[i], or predict_detections(X)[i] / "
            "predict_instances(X)[i]")
    if isinstance(y_pred, (list, tuple)) and y_pred and all(
            isinstance(d, dict) for d in y_pred):
        raise ValueError(f"y_pred is a list of {len(y_pred)} dicts, the detections of "
                         f"several images; plot_instances draws one image: {hint}.")
    if isinstance(y_pred, dict):
        if "masks" not in y_pred:
            raise ValueError(f"y_pred must be an instance map of shape (H, W) or a dict with "
                             f"a 'masks' entry (as predict_detections or predict_instances "
                             f"return); got keys {sorted(map(str, y_pred))}.")
        masks = np.asarray(y_pred["masks"])
        if masks.dtype == object or not (np.issubdtype(masks.dtype, np.number)
                                         or masks.dtype == bool):
            raise TypeError(f"y_pred['masks'] must be numeric (bool); got dtype "
                            f"{masks.dtype}.")
        if masks.ndim != 3 or masks.shape[1:] != tuple(shape):
            raise ValueError(f"y_pred['masks'] must have shape (k, {shape[0]}, {shape[1]}) "
                             f"to match the image; got {masks.shape}.")
        if masks.dtype != bool and not np.all((masks == 0) | (masks == 1)):
            raise ValueError("y_pred['masks'] must be boolean or 0/1 (threshold soft masks "
                             "first, e.g. masks >= 0.5).")
        masks = masks.astype(bool)
        k = masks.shape[0]
        boxes = y_pred.get("boxes")
        boxes = _boxes(masks) if boxes is None else _numeric(boxes, "y_pred['boxes']", 2, k)
        if boxes.shape[1:] != (4,):
            raise ValueError(f"y_pred['boxes'] must have shape ({k}, 4), (x1, y1, x2, y2); "
                             f"got shape {boxes.shape}.")
        labels = y_pred.get("labels")
        scores = y_pred.get("scores")
        labels = None if labels is None else _numeric(labels, "y_pred['labels']", 1, k)
        if labels is not None:
            bad = ~np.isfinite(labels) | (labels != np.round(labels))
            if bad.any():
                j = int(np.argmax(bad))
                raise ValueError(f"y_pred['labels'][{j}] = {float(labels[j])!r} is not "
                                 "an integer class label.")
        scores = None if scores is None else _numeric(scores, "y_pred['scores']", 1, k)
        return masks, boxes, labels, scores
    m = np.asarray(y_pred) if not isinstance(y_pred, (str, bytes)) else np.array(None)
    if m.ndim == 3 and m.shape[1:] == tuple(shape):
        raise ValueError(f"y_pred has shape {m.shape}: a batch of {m.shape[0]} instance "
                         f"maps; plot_instances draws one image: {hint}.")
    numeric = m.dtype != object and (np.issubdtype(m.dtype, np.number) or m.dtype == bool)
    if m.shape != tuple(shape) or not numeric:
        raise ValueError(f"y_pred must be an integer instance map of shape {tuple(shape)} "
                         f"(0 = background) or a dict of detections; got "
                         + (f"an array of shape {m.shape} and dtype {m.dtype}."
                            if numeric or m.ndim else f"{y_pred!r:.60}."))
    if np.issubdtype(m.dtype, np.floating) and not np.all(np.isfinite(m) & (m == np.round(m))):
        raise ValueError("y_pred must hold integer instance ids; it has non-integer values "
                         "(resize label maps with nearest neighbour, order=0).")
    if m.size and m.min() < 0:
        raise ValueError(f"y_pred has a negative id ({m.min()}); instance maps hold 0 for "
                         "the background and positive ids.")
    ids = np.unique(m)
    ids = ids[ids > 0]
    masks = m[None] == ids[:, None, None]
    return masks, _boxes(masks), None, None


def _boxes(masks):
    out = np.zeros((len(masks), 4))
    for j, mk in enumerate(masks):
        ys, xs = np.nonzero(mk)
        if ys.size:
            out[j] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    return out


def _check_class_names(class_names):
    if class_names is None:
        return None
    if isinstance(class_names, (str, bytes, dict)) or not hasattr(class_names, "__len__"):
        raise TypeError(f"class_names must be a sequence of names indexed by label (e.g. "
                        f"['background', 'coin']); got {class_names!r:.60}.")
    return list(class_names)


@validate_params(
    {"ax": [HasMethods(["imshow", "add_patch"]), None], "boxes": ["boolean"],
     "alpha": [Interval(Real, 0, 1, closed="both")],
     "min_score": [Interval(Real, None, None, closed="neither"), None],
     "class_names": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def plot_instances(image, y_pred, ax=None, *, boxes=True, alpha=0.45, min_score=None,
                   class_names=None):
    """Draw instance masks, boxes, classes and scores over an image with matplotlib.

    Parameters
    ----------
    image : array-like of shape (H, W), (H, W, C) or (C, H, W)
        One image (grey, RGB or RGBA). A grey image of any real dtype is shown in grey,
        scaled from its smallest to its largest value. A colour image is uint8, floats
        in [0, 1], or other integers (uint16, ...) read by their bit depth (the smallest
        of 8, 10, 12, 14 and 16 bits holding the largest value), as the estimators read
        them.
    y_pred : array-like of shape (H, W) of int, or dict
        An instance map (0 = background, as :meth:`MaskRCNN.predict` or
        :meth:`InstanceSegmenter.predict` return for one image), or one image's
        detections: a dict with ``"masks"`` (k, H, W) and optionally ``"boxes"`` (k, 4)
        ``(x1, y1, x2, y2)`` in pixels, ``"labels"`` (k,) and ``"scores"`` (k,) (one
        entry of :meth:`MaskRCNN.predict_detections` or
        :meth:`InstanceSegmenter.predict_instances`).
    ax : matplotlib Axes or None, default=None
        Axes to draw on; None uses the current axes (``plt.gca()``).
    boxes : bool, default=True
        Draw each instance's box (from ``y_pred["boxes"]``, else the mask's tight box)
        and, when known, its class and score above it.
    alpha : float in [0, 1], default=0.45
        Opacity of the mask colours.
    min_score : float or None, default=None
        Leave out detections scoring below it (only with scores).
    class_names : sequence of str or None, default=None
        Names of the classes, indexed by label (e.g. ``["background", "coin"]``); None
        prints the label numbers.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If ``y_pred`` is neither an instance map of the image's size (integer ids >= 0)
        nor a dict of detections matching it (``k`` masks of the image's size, boxes
        ``(k, 4)``, labels and scores ``(k,)``), if it holds several images (a batch of
        maps or a list of dicts: pass one entry), masks are not boolean or 0/1, a
        label is not an integer or has no entry in ``class_names``, the image is empty,
        has a channel count other than 1, 3 or 4, or is a colour image of floats outside
        [0, 1] or of negative integers, or ``alpha`` is outside [0, 1], ``min_score`` is
        not a number or ``ax`` is not a matplotlib Axes.
    TypeError
        If the image, the masks, boxes, labels or scores are not numeric, or
        ``class_names`` is a string, a dict or not a sequence.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_papers.vision import plot_instances
    >>> image = np.zeros((20, 20))
    >>> labels = np.zeros((20, 20), dtype=int)
    >>> labels[2:8, 2:8], labels[10:18, 10:16] = 1, 2
    >>> ax = plot_instances(image, labels)
    >>> len(ax.patches)
    2
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from sklearn_papers.vision._validation import integer_bit_depth

    img = np.asarray(image)
    if img.ndim == 3 and img.shape[0] in (1, 3, 4) and img.shape[-1] not in (1, 3, 4):
        img = np.moveaxis(img, 0, -1)
    if img.ndim == 3 and img.shape[-1] == 1:
        img = img[..., 0]
    if img.dtype == object or not (np.issubdtype(img.dtype, np.number)
                                   or img.dtype == bool):
        raise TypeError(f"image must be a numeric array; got dtype {img.dtype}.")
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[-1] not in (3, 4)):
        raise ValueError(f"image must be one image of shape (H, W), (H, W, C) or (C, H, W) "
                         f"with C = 1 (grey), 3 (RGB) or 4 (RGBA); got shape "
                         f"{np.shape(image)}.")
    if img.size == 0:
        raise ValueError(f"image has no pixels (shape {np.shape(image)}).")
    if np.iscomplexobj(img):
        raise TypeError("image must be real; got a complex array.")
    if img.dtype == bool:
        img = img.astype(float)
    if img.ndim == 3 and img.dtype != np.uint8:
        # matplotlib clips colour images to [0, 1] (floats) or 0..255 (integers): a uint16
        # image would show white; integers are read by their bit depth as the estimators do
        if np.issubdtype(img.dtype, np.integer):
            if img.min() < 0:
                raise ValueError(f"image has negative pixel values ({img.min()}); integer "
                                 "colour images must be non-negative.")
            img = img / float(2 ** integer_bit_depth([img]) - 1)
        else:
            finite = img[np.isfinite(img)]
            if finite.size and (finite.min() < 0 or finite.max() > 1):
                raise ValueError(f"image is a float colour image with values in "
                                 f"[{finite.min():g}, {finite.max():g}]; float colour "
                                 "images must lie in [0, 1] (divide 0-255 values by 255).")
    class_names = _check_class_names(class_names)
    masks, box_array, labels, scores = _as_detections(y_pred, img.shape[:2])
    if min_score is not None and scores is not None:
        keep = np.asarray(scores) >= min_score
        masks, box_array = masks[keep], box_array[keep]
        labels = None if labels is None else np.asarray(labels)[keep]
        scores = np.asarray(scores)[keep]
    if labels is not None and class_names is not None:
        for j, lab in enumerate(np.asarray(labels, dtype=int)):
            if not 0 <= lab < len(class_names):
                raise ValueError(f"y_pred['labels'][{j}] = {lab} but class_names has "
                                 f"{len(class_names)} names (indexed by label, the "
                                 f"background first).")
    if ax is None:
        ax = plt.gca()
    ax.imshow(img, cmap="gray" if img.ndim == 2 else None)
    colours = plt.get_cmap("tab20")(np.arange(max(len(masks), 1)) % 20)
    overlay = np.zeros(img.shape[:2] + (4,))
    for j, mk in enumerate(masks):
        overlay[mk] = (*colours[j][:3], alpha)
    ax.imshow(overlay)
    if boxes:
        for j, (x1, y1, x2, y2) in enumerate(box_array):
            ax.add_patch(Rectangle((x1 - 0.5, y1 - 0.5), x2 - x1, y2 - y1, fill=False,
                                   edgecolor=colours[j], linewidth=1.2))
            text = []
            if labels is not None:
                lab = int(labels[j])
                text.append(class_names[lab] if class_names is not None else str(lab))
            if scores is not None:
                text.append(f"{float(scores[j]):.2f}")
            if text:
                ax.text(x1 - 0.5, y1 - 1.0, " ".join(text), color="white", fontsize=7,
                        bbox=dict(facecolor=colours[j], alpha=0.7, pad=1, edgecolor="none"))
    ax.set_axis_off()
    return ax
