"""Prediction at the object scale seen in ``fit``: candidate scales and the choice among them.

A model trained on objects about ``d`` pixels across finds objects of that size. An image
whose objects are larger or smaller (a whole photograph at its native resolution after
training on half-resolution tiles) is predicted at several scales, and each image keeps
the scale at which the objects found are closest in size to those seen in ``fit``
(:func:`choose_scale`), provided the network finds the objects there: as many as at the
image's own scale and at every scale between, give or take a factor 1.25
(:func:`scale_is_backed`; ``MaskRCNN``
chooses among the scales that pass this test and move the objects towards the training
size, :func:`choose_backed_scale`).
"""

import numpy as np

__all__ = ["AUTO_SCALES", "FAR_FROM_TRAINING_SIZE", "MAX_INPUT_SCALE", "SCALE_MARGIN",
           "auto_input_scale", "choose_scale",
           "choose_backed_scale", "choose_detection_scale", "check_predict_scales", "resize_image", "resize_labels",
           "scale_is_backed", "size_gap", "tile_starts", "typical_size"]

#: Scales tried by ``predict_scales="auto"``: objects up to 4 times larger or 2 times
#: smaller than in ``fit`` are brought to the training size.
AUTO_SCALES = (0.25, 0.5, 1.0, 2.0)
#: A scale other than 1 is taken only when its objects' size is closer to the training
#: size by more than this factor (a margin against the noise of a median), and when it
#: finds at least ``1 / SCALE_MARGIN`` as many objects as scale 1 and every scale between
#: (instance centres for ``InstanceSegmenter``, confident detections for ``MaskRCNN``).
SCALE_MARGIN = 1.25
#: Objects whose typical size differs from the training size by more than this factor
#: at every scale tried are far from anything seen in ``fit`` (a warning says so).
FAR_FROM_TRAINING_SIZE = 2.0
#: Rescaled images smaller than this (pixels a side) are not tried.
MIN_RESCALED_SIDE = 16
#: Largest scale accepted: 16 times the side is 256 times the pixels (and memory).
MAX_SCALE = 16.0


#: Largest internal upscaling ``input_scale="auto"`` chooses (16 times the pixels).
MAX_INPUT_SCALE = 4


def auto_input_scale(size, min_size):
    """Internal upscaling of ``input_scale="auto"``: the smallest integer factor (at most
    :data:`MAX_INPUT_SCALE`) that makes objects of typical ``size`` pixels at least
    ``min_size`` pixels across; 1.0 when they are already (or ``size`` is not finite).

    Parameters
    ----------
    size : float
        Typical size of the training objects, in pixels.
    min_size : float
        Smallest object size the network resolves (a few strides of its finest output).

    Returns
    -------
    scale : float
        1.0, 2.0, 3.0 or 4.0.
    """
    if not (np.isfinite(size) and size > 0) or size >= min_size:
        return 1.0
    return float(min(MAX_INPUT_SCALE, int(np.ceil(min_size / size - 1e-9))))


def check_predict_scales(value):
    """``predict_scales`` as a sorted tuple of positive floats holding 1.0 (a wrong entry
    of a sequence is named, :func:`~sklearn_papers.vision._validation.check_scale_items`)."""
    from sklearn_papers.vision._validation import check_scale_items

    check_scale_items(value)
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"predict_scales must be 'auto' or a sequence of positive "
                             f"numbers, got {value!r}.")
        return AUTO_SCALES
    try:
        if any(isinstance(v, (bool, np.bool_)) for v in value):
            raise TypeError
        scales = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"predict_scales must be 'auto' or a sequence of positive numbers, "
                         f"got {value!r}.") from None
    if not scales or not all(np.isfinite(s) and s > 0 for s in scales):
        raise ValueError(f"predict_scales must be 'auto' or a non-empty sequence of positive "
                         f"numbers, got {value!r}.")
    if max(scales) > MAX_SCALE:
        raise ValueError(f"predict_scales holds {max(scales)!r}: scales above {MAX_SCALE:g} "
                         f"(a network input {MAX_SCALE ** 2:g} times the image's pixels) "
                         f"are refused; resize such images before predicting, or set "
                         f"image_size.")
    return tuple(sorted(set(scales) | {1.0}))


def typical_size(sizes, weights=None):
    """Weighted median of object sizes (``sqrt(area)``): with ``weights`` the areas, the
    size of the object that the typical object pixel belongs to, so that the pieces of
    objects cut by a tile's edge count for little. NaN without objects."""
    sizes = np.asarray(sizes, dtype=float)
    if sizes.size == 0:
        return float("nan")
    w = np.ones_like(sizes) if weights is None else np.asarray(weights, dtype=float)
    order = np.argsort(sizes)
    cum = np.cumsum(w[order])
    return float(sizes[order][np.searchsorted(cum, 0.5 * cum[-1])])


def size_gap(size, target):
    """``|log(size / target)|``: how far a typical object size is from the training
    size, as a factor (inf when either is missing)."""
    if not (np.isfinite(size) and np.isfinite(target) and size > 0 and target > 0):
        return float("inf")
    return float(abs(np.log(size / target)))


def choose_scale(sizes_by_scale, target):
    """The scale whose typical object size (in rescaled pixels) is closest to ``target``
    (log ratio), 1.0 unless another is closer by more than a factor 1.25.

    Parameters
    ----------
    sizes_by_scale : dict of float -> float
        Typical size of the objects found at each scale, in pixels of the rescaled image
        (NaN when none was found).
    target : float
        Typical size seen in ``fit``.
    """
    found = {s: v for s, v in sizes_by_scale.items() if np.isfinite(v) and v > 0}
    if not found or not np.isfinite(target) or target <= 0:
        return 1.0
    gap = {s: size_gap(v, target) for s, v in found.items()}
    best = min(gap, key=lambda s: (gap[s], abs(np.log(s))))
    if 1.0 in gap and gap[1.0] <= gap[best] + np.log(SCALE_MARGIN):
        return 1.0
    return best


def scale_is_backed(scale, counts_by_scale):
    """Whether the objects a detector finds at ``scale`` back a choice made on their
    size: at least ``1 / 1.25`` as many as at scale 1 and at every scale tried between
    1 and ``scale``.

    The sizes of the instances found at a scale agree with the training size both when
    the scale brings the objects to that size and when the network, at a scale where
    it sees objects smaller than in ``fit``, joins several into one instance of about
    the training size (a network's instances tend towards the sizes it was trained on).
    Only the first keeps the objects: there the network finds each of them with a
    confident centre, while joined objects lose theirs. A scale whose objects are of the
    training size but that finds no centre, or clearly fewer than scale 1, is thus
    refused, and
    so is one that finds clearly fewer than a scale between (coins twice the training
    size: scale 0.5 finds each coin, scale 0.25 joins them, and scale 1 cuts them into
    pieces, some of which are missed; only the comparison with 0.5 tells 0.25 apart).

    Parameters
    ----------
    scale : float
        The scale chosen on the objects' sizes (:func:`choose_scale`).
    counts_by_scale : dict of float -> int
        Number of objects (instance centres) the network finds at each scale.

    Returns
    -------
    backed : bool
        True for scale 1 and for scales whose count is not known; False for a scale
        where no centre is found (nothing there confirms that its instances are
        objects, whatever the other scales find).
    """
    if scale == 1.0 or scale not in counts_by_scale or 1.0 not in counts_by_scale:
        return True
    count = counts_by_scale[scale]
    return count > 0 and SCALE_MARGIN * count >= _most_found_between(scale,
                                                                      counts_by_scale)


def _most_found_between(scale, counts_by_scale):
    """Most objects found at a scale from 1 to ``scale`` (1 included, ``scale`` not):
    a scale further from 1 that finds clearly fewer objects than a nearer one joins
    them (shrinking) or cuts them (enlarging) past the size where they are found."""
    lo, hi = sorted((1.0, scale))
    return max(c for s, c in counts_by_scale.items()
               if lo <= s <= hi and s != scale)


def choose_backed_scale(sizes_by_scale, counts_by_scale, target):
    """``MaskRCNN``'s choice: the scale whose detections are closest in size to
    ``target`` among the scales that keep the objects.

    A detector's box regression follows the objects it sees only so far: at a wrong
    scale it finds pieces of large objects, or groups of small ones, boxed closer to the
    training sizes than the objects are. Its boxes still move the right way: detections
    at scale 1 larger than ``target`` mean objects larger than in ``fit``, so only scales
    below 1 are candidates (above 1 when they are smaller; any scale when scale 1 found
    nothing). A candidate must also find at least ``1 / 1.25`` as many objects as scale 1
    and as every scale tried between 1 and the candidate (a scale further from 1 that
    finds clearly fewer objects than a nearer one joins or cuts them). Where scale 1
    found nothing, a candidate's detections must also be within a factor
    :data:`FAR_FROM_TRAINING_SIZE` of ``target``: specks on a blank image, enlarged or
    shrunk, are boxed at any size, and none of them is an object at the training size.
    It is taken when its detections are closer in size to ``target`` than scale 1's by
    more than a factor 1.25, or, for a scale below 1, when it finds more objects than
    scale 1 by a factor 1.25 with detections at least as close in size (a few detections
    at scale 1 can be of about the training size by chance). A scale above 1 needs the
    margin in size: enlarging cuts objects into more pieces, so more detections there
    are no sign of the right scale (printed characters at their training size, enlarged
    twice, give more detections of about the same size). Without the direction, a
    scale that enlarges objects already too large could win: it cuts them into many
    pieces of about the training size.

    Parameters
    ----------
    sizes_by_scale : dict of float -> float
        Typical size (:func:`typical_size`) of the confident detections at each scale,
        in pixels of the rescaled image (NaN when there are none).
    counts_by_scale : dict of float -> float
        Number of objects found at each scale (the sum of the confident detections'
        scores).
    target : float
        Typical size of the objects seen in ``fit``.

    Returns
    -------
    scale : float
        Among the scales taken, the one closest in size to ``target`` (ties: the scale
        closest to 1, then the smaller); 1.0 when none is taken or ``target`` is not
        finite.
    """
    if not (np.isfinite(target) and target > 0):
        return 1.0
    own_count = counts_by_scale.get(1.0, 0.0)
    own_size = sizes_by_scale.get(1.0, float("nan"))
    own_gap = size_gap(own_size, target)
    # +1: objects larger than in fit, shrink them; -1: enlarge them; 0: either
    direction = np.sign(np.log(own_size / target)) if np.isfinite(own_gap) else 0.0
    taken = {}
    for scale, size in sizes_by_scale.items():
        count = counts_by_scale.get(scale, 0.0)
        if scale == 1.0 or SCALE_MARGIN * count < _most_found_between(
                scale, {1.0: own_count, **counts_by_scale}):
            continue
        if direction * np.log(scale) > 0:
            continue
        gap = size_gap(size, target)
        if direction == 0.0 and gap > np.log(FAR_FROM_TRAINING_SIZE):
            continue
        closer = gap + np.log(SCALE_MARGIN) < own_gap
        # more objects back a scale that shrinks them only: enlarging cuts objects
        # into more pieces of about the training size
        more = (scale < 1.0 and count > 0 and count >= SCALE_MARGIN * own_count
                and gap <= own_gap)
        if np.isfinite(gap) and (closer or more):
            taken[scale] = gap
    if not taken:
        return 1.0
    return min(taken, key=lambda s: (taken[s], abs(np.log(s)), s))


def choose_detection_scale(sizes_by_scale, counts_by_scale, target):
    """``MaskRCNN``'s scale: :func:`choose_backed_scale`, unless it shrinks the image
    and finds fewer objects there than at scale 1, or it enlarges the image and finds
    less than one object there where scale 1 finds none.

    Detections at scale 1 much larger than ``target`` are whole objects larger than in
    ``fit`` (pieces of them would be boxed near the training size). Shrinking the image
    keeps such objects whole, so the scale that brings them to the training size finds
    at least as many; one that finds fewer loses some (a held-out tile whose few coins
    are larger than the training median keeps its own scale). Where scale 1 finds
    nothing, a lone detection at a larger scale whose score is below 1 is as likely a
    speck enlarged (a blank margin of a page) as an object: the scores of the
    detections there must sum to at least 1. A smaller scale is taken as
    :func:`choose_backed_scale` says: objects larger than in ``fit`` can be missed at
    scale 1 and found whole when shrunk.

    Parameters
    ----------
    sizes_by_scale, counts_by_scale, target
        As :func:`choose_backed_scale`.

    Returns
    -------
    scale : float
        The scale :func:`choose_backed_scale` takes, or 1.0 when that scale is below 1
        and its count is below scale 1's, or above 1 with a count below 1 where scale
        1's is 0.
    """
    scale = choose_backed_scale(sizes_by_scale, counts_by_scale, target)
    count, own = counts_by_scale.get(scale, 0.0), counts_by_scale.get(1.0, 0.0)
    if (scale < 1.0 and count < own) or (scale > 1.0 and own == 0.0 and count < 1.0):
        return 1.0
    return scale


def tile_starts(length, window):
    """Start offsets of windows of ``window`` pixels covering ``length`` pixels with half
    a window of overlap, the last one flush with the end (``[0]`` when one window
    covers it)."""
    if length <= window:
        return [0]
    step = max(1, window // 2)
    return sorted({*range(0, length - window + 1, step), length - window})


def owned_intervals(starts, window, length):
    """The part ``[lo, hi)`` of an axis of ``length`` pixels that each window owns: the
    points closer to its centre than to any other window's centre (the first window's
    part is open below, the last one's above)."""
    centres = [s + window / 2 for s in starts]
    bounds = [-np.inf] + [(a + b) / 2 for a, b in zip(centres, centres[1:])] + [np.inf]
    return list(zip(bounds[:-1], bounds[1:]))


def rescaled_shape(shape, scale):
    return tuple(max(1, int(round(v * scale))) for v in shape)


def resize_image(image, shape):
    """``(C, H, W)`` float32 image resized to ``shape`` (bilinear, antialiased when
    shrinking)."""
    import torch
    import torch.nn.functional as F

    if tuple(image.shape[1:]) == tuple(shape):
        return image
    shrink = shape[0] < image.shape[1] or shape[1] < image.shape[2]
    out = F.interpolate(torch.from_numpy(np.ascontiguousarray(image[None])), size=shape,
                        mode="bilinear", align_corners=False, antialias=shrink)[0].numpy()
    return np.clip(out, 0.0, 1.0)


def resize_labels(labels, shape):
    """``(h, w)`` label map resized to ``shape`` by nearest neighbour (pixel centres)."""
    h, w = labels.shape
    rows = np.minimum(((np.arange(shape[0]) + 0.5) * h / shape[0]).astype(np.int64), h - 1)
    cols = np.minimum(((np.arange(shape[1]) + 0.5) * w / shape[1]).astype(np.int64), w - 1)
    return labels[rows[:, None], cols[None, :]]
