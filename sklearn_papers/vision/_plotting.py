"""plot_instances: draw instance masks, boxes, classes and scores over an image."""

import numpy as np

__all__ = ["plot_instances"]


def _as_detections(y_pred, shape):
    """``(masks (k, H, W) bool, boxes (k, 4), labels (k,) or None, scores (k,) or None)``."""
    if isinstance(y_pred, dict):
        if "masks" not in y_pred:
            raise ValueError(f"y_pred must be an instance map of shape (H, W) or a dict with "
                             f"a 'masks' entry (as predict_detections or predict_instances "
                             f"return); got keys {sorted(y_pred)}.")
        masks = np.asarray(y_pred["masks"]).astype(bool)
        if masks.ndim != 3 or masks.shape[1:] != tuple(shape):
            raise ValueError(f"y_pred['masks'] must have shape (k, {shape[0]}, {shape[1]}) "
                             f"to match the image; got {masks.shape}.")
        k = masks.shape[0]
        boxes = y_pred.get("boxes")
        boxes = _boxes(masks) if boxes is None else np.asarray(boxes, dtype=float)
        labels = y_pred.get("labels")
        scores = y_pred.get("scores")
        for key, value in (("boxes", boxes), ("labels", labels), ("scores", scores)):
            if value is not None and len(value) != k:
                raise ValueError(f"y_pred['{key}'] has {len(value)} entries but there are "
                                 f"{k} masks.")
        return masks, boxes, labels, scores
    m = np.asarray(y_pred)
    if m.shape != tuple(shape) or not (np.issubdtype(m.dtype, np.integer) or m.dtype == bool):
        raise ValueError(f"y_pred must be an integer instance map of shape {tuple(shape)} "
                         f"(0 = background) or a dict of detections; got an array of shape "
                         f"{m.shape} and dtype {m.dtype}.")
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
        If ``y_pred`` is neither an instance map of the image's size nor a dict of
        detections matching it.

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
