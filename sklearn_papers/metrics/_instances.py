"""Per-instance scores of instance masks: how much of a box other classes fill, and the best
same-class mask IoU of each true instance; and, for one label map, the same-class instances
that touch, the size of their touching groups and each true instance's best-Dice match.

They measure what He et al. (2017, Sec. 3 and Table 2b) name as the reason per-class
sigmoid masks beat a per-pixel softmax: the softmax makes the classes compete for every
pixel of a box, which matters where a box holds pixels of another class.
"""

import numpy as np

from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["instance_best_iou", "other_class_share"]


def _same_length(name_a, a, name_b, b):
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} hold one entry per image: got {len(a)} and "
                         f"{len(b)}")


@with_numpy_inputs
def other_class_share(semantic_maps, boxes, labels):
    """Per instance, the fraction of the pixels of its box that belong to another class.

    These are the pixels that a per-pixel softmax over classes makes compete with the
    box's class in the mask target (He et al. 2017, Table 2b).

    Parameters
    ----------
    semantic_maps : array-like of shape (n_images, height, width) of int
        0 for background, else the class of the pixel.
    boxes : list of n_images array-likes of shape (k_i, 4)
        ``(x1, y1, x2, y2)`` in pixels, max exclusive (as ``datasets.make_scenes`` gives).
    labels : list of n_images array-likes of shape (k_i,) of int
        Class of each box.

    Returns
    -------
    share : ndarray of shape (sum k_i,), float in [0, 1]
        In the order of the images, then of their boxes; 0 for a box outside the image.

    Raises
    ------
    ValueError
        When the three inputs do not hold one entry per image, or an image's boxes and
        labels differ in number.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import other_class_share
    >>> sem = np.zeros((1, 4, 4), dtype=int)
    >>> sem[0, :2, :2] = 1
    >>> sem[0, 1, 1] = 2
    >>> other_class_share(sem, [np.array([[0, 0, 2, 2]])], [np.array([1])])
    array([0.25])
    """
    semantic_maps = np.asarray(semantic_maps)
    _same_length("semantic_maps", semantic_maps, "boxes", boxes)
    _same_length("boxes", boxes, "labels", labels)
    out = []
    for i, (sem, bx, lab) in enumerate(zip(semantic_maps, boxes, labels)):
        bx, lab = np.asarray(bx, dtype=float).reshape(-1, 4), np.asarray(lab).ravel()
        if len(bx) != len(lab):
            raise ValueError(f"image {i} has {len(bx)} boxes and {len(lab)} labels; give one "
                             "label per box")
        for b, c in zip(bx, lab):
            x1, y1 = np.floor(b[:2]).astype(int)
            x2, y2 = np.ceil(b[2:]).astype(int)
            region = sem[max(y1, 0):y2, max(x1, 0):x2]
            out.append(float(((region > 0) & (region != c)).mean()) if region.size else 0.0)
    return np.asarray(out, dtype=float)


@with_numpy_inputs
def instance_best_iou(instance_maps, labels, detections, *, threshold=0.5):
    """Per true instance, the best mask IoU with a detection of its class.

    Parameters
    ----------
    instance_maps : array-like of shape (n_images, height, width) of int
        0 for background, instance ``i`` of an image as ``i`` (``1 .. k``).
    labels : list of n_images array-likes of shape (k_i,) of int
        Class of instance ``i`` at index ``i - 1``.
    detections : list of n_images dicts
        ``"masks"`` (bool, shape (d, height, width)), ``"scores"`` (shape (d,)) and
        ``"labels"`` (shape (d,)), as ``vision.MaskRCNN.predict_detections`` gives.
    threshold : float, default=0.5
        Detections scoring below it are left out.

    Returns
    -------
    iou : ndarray of shape (sum k_i,), float in [0, 1]
        In the order of the images, then of their instance ids (the order of
        :func:`other_class_share` for boxes listed by instance id); 0 for an instance no
        detection of its class covers.

    Raises
    ------
    ValueError
        When the inputs do not hold one entry per image, or an image has fewer labels
        than instances.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import instance_best_iou
    >>> inst = np.zeros((1, 4, 4), dtype=int)
    >>> inst[0, :2, :2] = 1
    >>> mask = np.zeros((1, 4, 4), dtype=bool)
    >>> mask[0, :2, :1] = True
    >>> dets = [{"masks": mask, "scores": np.array([0.9]), "labels": np.array([1])}]
    >>> instance_best_iou(inst, [np.array([1])], dets)
    array([0.5])
    """
    instance_maps = np.asarray(instance_maps)
    _same_length("instance_maps", instance_maps, "labels", labels)
    _same_length("instance_maps", instance_maps, "detections", detections)
    out = []
    for n, (inst, lab, d) in enumerate(zip(instance_maps, labels, detections)):
        lab = np.asarray(lab).ravel()
        if len(lab) < int(inst.max()):
            raise ValueError(f"image {n} has {int(inst.max())} instances but {len(lab)} "
                             "labels; give one label per instance id")
        masks = np.asarray(d["masks"], dtype=bool).reshape(len(d["scores"]), inst.size)
        keep = np.asarray(d["scores"]) >= threshold
        for i in range(1, int(inst.max()) + 1):
            g = (inst == i).reshape(-1)
            sel = masks[keep & (np.asarray(d["labels"]) == lab[i - 1])]
            if not len(sel):
                out.append(0.0)
                continue
            inter = (sel & g).sum(1)
            union = (sel | g).sum(1)
            out.append(float((inter / np.maximum(union, 1)).max()))
    return np.asarray(out, dtype=float)


# -- touching instances of one label map (helpers of the segmentation follow-ups) ---------

def touching_pairs(inst, labels):
    """``{(a, b): contact}``: same-class instances ``a < b`` of one map that share an
    edge, with the number of 4-adjacent pixel pairs between them."""
    cls = np.concatenate([[0], labels])[inst]
    pairs = {}
    for a, b, ca, cb in ((inst[1:], inst[:-1], cls[1:], cls[:-1]),
                         (inst[:, 1:], inst[:, :-1], cls[:, 1:], cls[:, :-1])):
        hit = (a != b) & (a > 0) & (b > 0) & (ca == cb)
        lo, hi = np.minimum(a[hit], b[hit]), np.maximum(a[hit], b[hit])
        for key, count in zip(*np.unique(np.stack([lo, hi], 1), axis=0, return_counts=True)):
            key = (int(key[0]), int(key[1]))
            pairs[key] = pairs.get(key, 0) + int(count)
    return pairs


def best_dice_match(true, pred):
    """Per true id ``0..max``: the predicted instance of best Dice (0: none) and that
    Dice (entry 0, the background, is meaningless)."""
    n_p = int(pred.max()) + 1
    n_t = int(true.max()) + 1
    inter = np.bincount(true.ravel() * n_p + pred.ravel(),
                        minlength=n_t * n_p).reshape(n_t, n_p).astype(float)
    dice = 2 * inter / np.maximum(inter.sum(1)[:, None] + inter.sum(0)[None, :], 1)
    dice[:, 0] = 0
    return dice.argmax(1), dice.max(1)


def touching_group_sizes(pairs, n):
    """Instances ``1..n``: size of the group of same-class instances linked by touching
    pairs (1: touches no instance of its class)."""
    parent = list(range(n + 1))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        parent[root(a)] = root(b)
    roots = np.array([root(i) for i in range(1, n + 1)])
    return np.array([(roots == r).sum() for r in roots], dtype=np.int64)


def nearest_upsample(low, stride, shape):
    """``low`` (``(..., h, w)``) repeated ``stride`` times along both image axes, cut to
    ``shape`` (height, width)."""
    return np.repeat(np.repeat(low, stride, axis=-2), stride, axis=-1)[
        ..., : shape[0], : shape[1]]


def touching_measures(true_maps, labels, n_instances, pred_maps):
    """``(pairs, instances)``: the touching same-class pairs of the true label maps
    (n, h, w) and what each predicted map set of ``pred_maps`` (name -> (n, h, w)) makes
    of them. ``labels[i]``: the class of each instance of map ``i``; ``n_instances`` (n,).

    ``pairs``: ``"contact"`` (int64 array, a pair's 4-adjacent pixel pairs) and per name
    ``"merged"`` (whether one predicted instance is both's best-Dice match) and ``"dice"``
    (their mean best Dice), one entry per touching pair of every map; ``instances``:
    ``"group"`` (:func:`touching_group_sizes`) and per name the best Dice, per true
    instance of every map.
    """
    pairs = {"contact": [], **{m: {"merged": [], "dice": []} for m in pred_maps}}
    instances = {"group": [], **{m: [] for m in pred_maps}}
    for i, true in enumerate(true_maps):
        found = touching_pairs(true, labels[i])
        pairs["contact"].extend(found.values())
        instances["group"].extend(touching_group_sizes(found, int(n_instances[i])))
        for m, maps in pred_maps.items():
            match, dice = best_dice_match(true, maps[i])
            instances[m].extend(dice[1:])
            for a, b in found:
                pairs[m]["merged"].append(bool(match[a] == match[b] and match[a] > 0))
                pairs[m]["dice"].append(float((dice[a] + dice[b]) / 2))
    pairs = {m: (np.asarray(v, dtype=np.int64) if m == "contact" else
                 {k: np.asarray(x) for k, x in v.items()}) for m, v in pairs.items()}
    return pairs, {m: np.asarray(v) for m, v in instances.items()}
