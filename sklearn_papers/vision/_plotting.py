"""plot_instances: draw instance masks, boxes, classes and scores over an image."""

import numpy as np

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


def plot_instances(image, y_pred, ax=None, *, boxes=True, alpha=0.45, min_score=None,
                   class_names=None):
    """Draw instance masks, boxes, classes and scores over an image with matplotlib.

    Parameters
    ----------
    image : array-like of shape (H, W), (H, W, C) or (C, H, W)
        One image (grey, RGB or RGBA; any dtype matplotlib shows: uint8, or floats in
        [0, 1]). A grey image is shown in grey.
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
    alpha : float, default=0.45
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
        maps or a list of dicts: pass one entry), or a label has no entry in
        ``class_names``.
    TypeError
        If the image, the masks, boxes, labels or scores are not numeric.

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

    img = np.asarray(image)
    if img.ndim == 3 and img.shape[0] in (1, 3, 4) and img.shape[-1] not in (1, 3, 4):
        img = np.moveaxis(img, 0, -1)
    if img.ndim == 3 and img.shape[-1] == 1:
        img = img[..., 0]
    if img.dtype == object or not (np.issubdtype(img.dtype, np.number)
                                   or img.dtype == bool):
        raise TypeError(f"image must be a numeric array; got dtype {img.dtype}.")
    if img.ndim not in (2, 3):
        raise ValueError(f"image must be one image of shape (H, W), (H, W, C) or (C, H, W); "
                         f"got shape {np.shape(image)}.")
    if img.dtype == bool:
        img = img.astype(float)
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
