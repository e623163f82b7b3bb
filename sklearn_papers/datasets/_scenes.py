"""Procedural RGB scenes of discs, squares and ellipses with exact instance ground truth.

Every pixel's class and instance is known, same-class objects can be made to touch (the
case where connected components of a semantic map cannot split instances), and the
generator is deterministic under ``random_state``. Used by the instance-segmentation
estimators of :mod:`sklearn_papers.vision` and their reproduction experiments.
"""

from numbers import Integral, Real

import numpy as np
from scipy import ndimage
from sklearn.utils import Bunch

from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import Interval, validate_params

__all__ = ["make_scenes"]

SHAPE_KINDS = ("disc", "square", "ellipse")
# One base colour per class (RGB in [0, 1]); class c (1-based) uses _PALETTE[c - 1] and the
# shape kind SHAPE_KINDS[(c - 1) % 3].
_PALETTE = np.array([[0.90, 0.25, 0.20], [0.20, 0.75, 0.30], [0.25, 0.40, 0.95],
                     [0.95, 0.85, 0.20], [0.80, 0.30, 0.85], [0.20, 0.85, 0.90]])
_MIN_PIXELS = 6  # an object occluded down to fewer visible pixels is dropped
_MAX_TRIES = 40


def _local(size, cy, cx, angle):
    """Pixel-centre coordinates rotated into an object's frame (rows = y)."""
    centres = np.arange(size) + 0.5
    dy, dx = centres[:, None] - cy, centres[None, :] - cx
    cos, sin = np.cos(angle), np.sin(angle)
    return cos * dx + sin * dy, -sin * dx + cos * dy


def _render(size, kind, cy, cx, radius, angle):
    """Mask and normalised radial coordinate (0 at the centre, 1 at the rim) of one object."""
    u, v = _local(size, cy, cx, angle)
    if kind == 0:  # disc
        rho = np.hypot(u, v) / radius
    elif kind == 1:  # square of half-side 0.85 * radius
        rho = np.maximum(np.abs(u), np.abs(v)) / (0.85 * radius)
    else:  # ellipse with axes radius and 0.6 * radius
        rho = np.hypot(u / radius, v / (0.6 * radius))
    return rho <= 1.0, rho


def _touch(a, b):
    """Whether two disjoint masks share a 4-connected edge."""
    return bool((ndimage.binary_dilation(a) & b).any())


@validate_params(
    {"n_samples": [Interval(Integral, 1, None, closed="left")],
     "image_size": [Interval(Integral, 16, None, closed="left")],
     "n_classes": [Interval(Integral, 1, len(_PALETTE), closed="both")],
     "max_objects": [Interval(Integral, 1, None, closed="left")],
     "min_objects": [Interval(Integral, 0, None, closed="left")],
     "touching": [Interval(Real, 0, 1, closed="both")],
     "overlap": ["boolean"],
     "noise": [Interval(Real, 0, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def make_scenes(n_samples=100, *, image_size=64, n_classes=3, max_objects=6, min_objects=1,
                touching=0.5, overlap=False, noise=0.05, random_state=None):
    """Random RGB scenes of shaded discs, squares and ellipses with instance ground truth.

    Each image has a uniform grey background and between ``min_objects`` and
    ``max_objects`` objects. Class ``c`` (1-based) has its own colour and shape kind
    (disc, square, ellipse, then again for classes 4-6 with other colours); size,
    position and orientation are random. Each object is shaded radially (brightest at its
    centre, 0.55 of that at its rim) with a per-object brightness jitter, so touching
    objects of one class are separable from the image but not by connected components.
    With probability ``touching`` a new object copies the class of an existing object and
    is moved along a random direction until its mask touches that object's (4-connected
    neighbours, no overlap). Everything is drawn from one generator: the same
    ``random_state`` gives the same scenes on every machine.

    Parameters
    ----------
    n_samples : int, default=100
        Number of images.
    image_size : int, default=64
        Side of the square images in pixels (at least 16). Object radii are 7% to 13% of
        it.
    n_classes : int, default=3
        Number of object classes, 1 to 6.
    max_objects : int, default=6
        Largest number of objects placed in one image (fewer may fit).
    min_objects : int, default=1
        Smallest number of objects drawn per image; 0 allows empty images.
    touching : float in [0, 1], default=0.5
        Probability that each object after the first is placed touching an existing
        object of its class.
    overlap : bool, default=False
        Whether randomly placed objects may overlap (later ones occlude earlier ones;
        objects left with fewer than 6 visible pixels are dropped). If False, they never
        overlap.
    noise : float, default=0.05
        Standard deviation of the i.i.d. Gaussian pixel noise (intensities in [0, 1],
        clipped after adding it).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for the draw.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With the keys

        images : ndarray of shape (n_samples, image_size, image_size, 3), float32
            RGB intensities in [0, 1], channels last.
        semantic_maps : ndarray of shape (n_samples, image_size, image_size), int64
            0 for background, else the class 1..n_classes of the pixel.
        instance_maps : ndarray of shape (n_samples, image_size, image_size), int64
            0 for background, else the instance id; the ids of image ``i`` are
            ``1 .. n_instances[i]`` without gaps.
        boxes : list of n_samples ndarrays of shape (n_instances[i], 4), float32
            ``[x_min, y_min, x_max, y_max]`` of the visible mask of instance ``j + 1``,
            in pixels, max exclusive (width ``x_max - x_min``).
        labels : list of n_samples ndarrays of shape (n_instances[i],), int64
            Class of instance ``j + 1``.
        n_instances : ndarray of shape (n_samples,), int64
            Number of instances per image.
        has_touching : ndarray of shape (n_samples,), bool
            Whether two instances of one class share an edge in the image (measured on
            the maps, so that the "touching subset" is exact).
        class_names : list of str
            ``"background"`` then the shape kind and colour index of each class.

    Raises
    ------
    ValueError
        If a parameter is out of range, or ``min_objects > max_objects``.

    See Also
    --------
    make_shapes : Single binary shapes with disentanglement factors.

    Notes
    -----
    The scenes mimic the setting of instance segmentation of touching objects of one
    class (the leaves of the CVPPP challenge, Scharr et al. 2016), where the symmetric
    best Dice is measured and connected components of a semantic map fail.

    References
    ----------
    .. [1] Scharr, H., Minervini, M., French, A. P., et al. (2016). Leaf segmentation in
       plant phenotyping: a collation study. Machine Vision and Applications 27,
       585-606. https://doi.org/10.1007/s00138-015-0737-3

    Examples
    --------
    >>> from sklearn_papers.datasets import make_scenes
    >>> data = make_scenes(4, image_size=32, random_state=0)
    >>> data.images.shape, data.instance_maps.shape
    ((4, 32, 32, 3), (4, 32, 32))
    >>> bool((data.instance_maps[0] > 0).any())
    True
    >>> len(data.boxes), data.boxes[0].shape[1]
    (4, 4)
    """
    if min_objects > max_objects:
        raise ValueError(f"min_objects={min_objects} must be <= max_objects={max_objects}.")
    rng = check_random_state(random_state)
    size = int(image_size)
    images = np.empty((n_samples, size, size, 3), dtype=np.float32)
    semantic = np.zeros((n_samples, size, size), dtype=np.int64)
    instances = np.zeros((n_samples, size, size), dtype=np.int64)
    boxes, labels = [], []
    n_inst = np.zeros(n_samples, dtype=np.int64)
    has_touching = np.zeros(n_samples, dtype=bool)
    for i in range(n_samples):
        image, sem, inst, lab = _make_one(rng, size, n_classes, min_objects, max_objects,
                                          touching, overlap, noise)
        images[i], semantic[i], instances[i] = image, sem, inst
        labels.append(lab)
        n_inst[i] = lab.size
        box = np.zeros((lab.size, 4), dtype=np.float32)
        for j, sl in enumerate(ndimage.find_objects(inst, max_label=lab.size)):
            box[j] = (sl[1].start, sl[0].start, sl[1].stop, sl[0].stop)
        boxes.append(box)
        has_touching[i] = _has_same_class_contact(inst, lab)
    names = ["background"] + [f"{SHAPE_KINDS[c % 3]}_{c + 1}" for c in range(n_classes)]
    return Bunch(images=images, semantic_maps=semantic, instance_maps=instances, boxes=boxes,
                 labels=labels, n_instances=n_inst, has_touching=has_touching,
                 class_names=names)


def _has_same_class_contact(inst, lab):
    """Whether two 4-adjacent pixels belong to different instances of one class."""
    cls = np.concatenate([[0], lab])[inst]
    for a, b, ca, cb in ((inst[1:], inst[:-1], cls[1:], cls[:-1]),
                         (inst[:, 1:], inst[:, :-1], cls[:, 1:], cls[:, :-1])):
        if ((a != b) & (a > 0) & (b > 0) & (ca == cb)).any():
            return True
    return False


def _make_one(rng, size, n_classes, min_objects, max_objects, touching, overlap, noise):
    """One scene: image (H, W, 3), semantic and instance maps, labels of the instances."""
    n_objects = rng.randint(min_objects, max_objects + 1)
    background = rng.uniform(0.15, 0.35)
    image = np.full((size, size, 3), background)
    owner = np.zeros((size, size), dtype=np.int64)  # index + 1 of the object on top
    masks, classes, shades = [], [], []
    for _ in range(n_objects):
        placed = None
        want_touch = bool(masks) and rng.uniform() < touching
        kind_class = (classes[rng.randint(len(classes))] if want_touch
                      else rng.randint(1, n_classes + 1))
        target = (rng.choice([k for k, c in enumerate(classes) if c == kind_class])
                  if want_touch else None)
        for _ in range(_MAX_TRIES):
            radius = size * rng.uniform(0.07, 0.13)
            angle = rng.uniform(0, np.pi)
            kind = (kind_class - 1) % 3
            if target is None:
                cy, cx = rng.uniform(radius, size - radius, size=2)
                mask, rho = _render(size, kind, cy, cx, radius, angle)
                if not overlap and (mask & (owner > 0)).any():
                    continue
                placed = mask, rho
                break
            placed = _place_touching(rng, size, kind, radius, angle, masks[target], owner)
            if placed is not None:
                break
        if placed is None:
            continue
        mask, rho = placed
        masks.append(mask)
        classes.append(kind_class)
        shades.append(rng.uniform(0.85, 1.15))
        owner[mask] = len(masks)
        colour = np.clip(_PALETTE[kind_class - 1] * shades[-1], 0, 1)
        shading = 1.0 - 0.45 * np.clip(rho, 0, 1) ** 2
        image[mask] = colour * shading[mask][:, None]
    # Visible instances, relabelled 1..k in drawing order; tiny remnants are dropped.
    counts = np.bincount(owner.ravel(), minlength=len(masks) + 1)
    keep = [k for k in range(1, len(masks) + 1) if counts[k] >= _MIN_PIXELS]
    relabel = np.zeros(len(masks) + 1, dtype=np.int64)
    relabel[keep] = np.arange(1, len(keep) + 1)
    dropped = (owner > 0) & (relabel[owner] == 0)
    image[dropped] = background
    inst = relabel[owner]
    lab = np.array([classes[k - 1] for k in keep], dtype=np.int64)
    sem = np.concatenate([[0], lab])[inst]
    if noise > 0:
        image = image + rng.normal(scale=noise, size=image.shape)
    return np.clip(image, 0, 1).astype(np.float32), sem, inst, lab


def _place_touching(rng, size, kind, radius, angle, target_mask, owner):
    """Slide a new object towards ``target_mask`` until they touch; None if it fails."""
    ys, xs = np.nonzero(target_mask)
    ty, tx = ys.mean() + 0.5, xs.mean() + 0.5
    target_radius = np.sqrt(target_mask.sum() / np.pi)
    direction = rng.uniform(0, 2 * np.pi)
    dy, dx = np.sin(direction), np.cos(direction)
    previous = None
    # From clearly apart to clearly overlapping, in quarter-pixel steps: keep the last
    # position that does not overlap the target; it touches if the next one overlaps.
    for dist in np.arange(target_radius + 1.6 * radius + 2, 0, -0.25):
        cy, cx = ty + dist * dy, tx + dist * dx
        if not (radius <= cy <= size - radius and radius <= cx <= size - radius):
            return None
        mask, rho = _render(size, kind, cy, cx, radius, angle)
        if (mask & target_mask).any():
            break
        previous = mask, rho
    if previous is None:
        return None
    mask, rho = previous
    if (mask & (owner > 0)).any() or not _touch(mask, target_mask):
        return None
    return mask, rho
