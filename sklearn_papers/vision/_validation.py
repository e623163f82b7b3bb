"""The one place where images and label maps enter the vision estimators.

Images come as a batch: an array of shape ``(n, H, W)`` (grey), ``(n, H, W, C)``
(channels last, canonical) or ``(n, C, H, W)`` (read as channels first when ``C <= 4 < W``),
or a list of ``(H, W)``, ``(H, W, C)`` or ``(C, H, W)`` images, which may differ in size.
They leave as a list of float32 ``(C, H, W)`` arrays in [0, 1]:

- ``uint8``: divided by 255;
- other integer dtypes (``uint16`` microscopy and camera images above all): divided by
  ``2 ** bits - 1``, ``bits`` being the declared bit depth or, when none is declared, the
  smallest of 8, 10, 12, 14 and 16 that holds the largest value of the training images
  (so 12-bit data stored as uint16 reads as 12-bit); the estimators keep the depth found
  in ``fit`` for ``predict``, where brighter values of a depth found (not declared) in
  ``fit`` are clipped to it with a warning, and values beyond a declared depth raise;
- ``bool``: 0 and 1;
- float: used as given, and must lie in [0, 1].

Every error names the offending image by its index. Detection targets (instance maps, or
dicts of boxes, labels and masks) are checked here too, each against its image
(:func:`targets_from_maps`, :func:`targets_from_dicts`).
"""

import warnings
from numbers import Real

import numpy as np

from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["MAX_INFERRED_CLASSES", "check_images", "check_scale_items", "check_label_map",
           "check_label_maps", "integer_bit_depth", "warn_inferred_bit_depth", "pad_images",
           "targets_from_dicts", "targets_from_maps"]

#: Bit depths tried, in order, for integer images without a declared depth.
_BIT_DEPTHS = (8, 10, 12, 14, 16)
#: Float pixel values may leave [0, 1] by this much (rounding of resampled images).
_FLOAT_TOLERANCE = 1e-6


def _one_image_error(name, shape, what):
    return ValueError(
        f"{name} has shape {tuple(shape)}: {what}. The estimator expects a batch of images "
        f"of shape (n, H, W), (n, H, W, C) or a list of images; for one image pass "
        f"{name}[None] (or [image]).")


def check_scale_items(value, name="predict_scales"):
    """Each entry of a sequence of scales: a finite positive real number.

    Strings of digits (``("2",)``) would be read as numbers by ``float``, and the
    message of a wrong entry would not say which one it is: this check comes first and
    names it. Values other than lists and tuples (``"auto"``, an unknown string, a
    scalar) are left to the parameter's own checks.

    Parameters
    ----------
    value : object
        The parameter as set.
    name : str, default="predict_scales"
        The parameter's name, for messages.

    Raises
    ------
    ValueError
        Naming the first entry ``name[i]`` that is not a finite positive real number
        (strings, bools, None and complex numbers included), and what to pass.
    """
    if not isinstance(value, (list, tuple)):
        return
    head = (f"{name} must be 'auto' or a non-empty sequence of positive numbers, got "
            f"{value!r}")
    for i, v in enumerate(value):
        if isinstance(v, (str, bytes, np.str_, np.bytes_)):
            why = (f"the string {v!r}; give the scale as a number, e.g. "
                   f"{name}=(0.5, 1.0, 2.0)")
        elif isinstance(v, (bool, np.bool_)) or not isinstance(v, Real):
            why = (f"a {type(v).__name__}, not a real number; give each scale as a "
                   f"number, e.g. {name}=(0.5, 1.0, 2.0)")
        elif not (np.isfinite(v) and v > 0):
            why = ("not a finite positive number; a scale multiplies the image's side "
                   "(1.0 is the input scale)")
        else:
            continue
        raise ValueError(f"{head}: {name}[{i}] = {v!r} is {why}.")


def _as_items(X, name, n_channels):
    """Split ``X`` into a list of ``(image_array, layout)`` without converting values."""
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(f"{name} must be a dense array of images, not a sparse matrix.")
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} has 0 images.")
        items = []
        for i, im in enumerate(X):
            if hasattr(im, "toarray") or hasattr(im, "tocsr"):
                raise TypeError(f"{name}[{i}] is a sparse matrix; images must be dense "
                                "arrays.")
            if im is None or isinstance(im, (str, bytes)):
                raise TypeError(
                    f"{name}[{i}] is {type(im).__name__} {im!r}, not an image: each item "
                    f"must be an array of shape (H, W), (H, W, C) or (C, H, W) (read "
                    f"image files first, e.g. with skimage.io.imread).")
            im = np.asarray(im)
            if im.ndim == 2:
                im = im[None]
            elif im.ndim == 3:
                if not (im.shape[0] <= 4 < im.shape[-1]):
                    im = np.moveaxis(im, -1, 0)
            else:
                raise ValueError(f"{name}[{i}] must be one image of shape (H, W), (H, W, C) "
                                 f"or (C, H, W); got shape {im.shape}.")
            items.append(im)
        return items
    arr = np.asarray(X)
    if arr.ndim == 2:
        raise _one_image_error(name, arr.shape, "one 2-D image, not a batch")
    if arr.ndim == 3:
        if n_channels is not None and n_channels > 1:
            if n_channels not in (arr.shape[0], arr.shape[-1]):
                raise ValueError(
                    f"{name} has shape {arr.shape}: a batch of grey images, but the model "
                    f"was fitted on {n_channels}-channel images. Pass {n_channels}-channel "
                    f"images (e.g. np.repeat({name}[..., None], {n_channels}, axis=-1) for "
                    f"grey ones), or fit on grey images.")
            raise _one_image_error(
                name, arr.shape, f"one image? The model was fitted on {n_channels}-channel "
                f"images, so a batch is 4-D (n, H, W, {n_channels})")
        if arr.shape[-1] == 1 or (n_channels is None and arr.shape[-1] <= 4
                                  and min(arr.shape[:2]) > 4):
            raise _one_image_error(name, arr.shape,
                                   "one image of shape (H, W, C)? A 3-D batch (n, H, W) "
                                   "holds grey images")
        return list(arr[:, None])
    if arr.ndim == 4:
        if arr.shape[0] == 0:
            raise ValueError(f"{name} has 0 images.")
        if not (arr.shape[1] <= 4 < arr.shape[-1]):
            arr = np.moveaxis(arr, -1, 1)
        return list(arr)
    raise ValueError(f"{name} must be a batch of images of shape (n, H, W), (n, H, W, C) or "
                     f"(n, C, H, W), or a list of images; got an array of shape "
                     f"{arr.shape}.")


def warn_inferred_bit_depth(X, fitted_bits, name="X"):
    """Warn when ``X`` holds integer images other than uint8 but ``fit`` saw none (its
    ``bit_depth_`` is None): their depth is then inferred from this batch alone, so the
    same image can be read brighter or darker depending on the images beside it."""
    if fitted_bits is not None:
        return
    X = tensors_to_numpy(X, name)
    bits = integer_bit_depth(X)
    if bits is None:
        return
    items = X if isinstance(X, (list, tuple)) else [np.asarray(X)]
    first = next(i for i, im in enumerate(items)
                 if np.issubdtype(np.asarray(im).dtype, np.integer)
                 and np.asarray(im).dtype != np.uint8)
    where = f"{name}[{first}]" if isinstance(X, (list, tuple)) else name
    warnings.warn(
        f"{where} is a {np.asarray(items[first]).dtype} image, but the estimator was fitted "
        f"on uint8 or float images only, so no bit depth was kept from fit: this batch is "
        f"read as {bits}-bit (the smallest depth holding its brightest value), and the "
        f"same image in another batch could be scaled differently. Fit on images of this "
        f"kind, or set bit_depth (e.g. bit_depth={bits}) before fit.", UserWarning,
        stacklevel=4)


def integer_bit_depth(X):
    """Bit depth of the integer images of ``X`` other than uint8 (None when it has none).

    The smallest of 8, 10, 12, 14 and 16 bits that holds their largest value (16 when it
    needs more: :func:`check_images` then refuses those images). uint8 images are always
    8-bit.

    Parameters
    ----------
    X : array-like or list of arrays
        Images, as :func:`check_images` takes them.

    Returns
    -------
    bits : int or None
    """
    X = tensors_to_numpy(X)
    items = X if isinstance(X, (list, tuple)) else [np.asarray(X)]
    top = None
    for im in items:
        im = np.asarray(im)
        if (im.dtype == bool or im.dtype == np.uint8 or im.size == 0
                or not np.issubdtype(im.dtype, np.integer)):
            continue
        value = int(im.max())
        top = value if top is None else max(top, value)
    if top is None:
        return None
    for bits in _BIT_DEPTHS:
        if top <= 2**bits - 1:
            return bits
    return _BIT_DEPTHS[-1]  # values beyond 16 bits: check_images names the image


def _to_unit_float(im, i, name, bits, clip_integers=False):
    """One image's pixel values as float32 in [0, 1] (see the module docstring)."""
    where = f"{name}[{i}]"
    if im.dtype == object or np.iscomplexobj(im) or not (
            np.issubdtype(im.dtype, np.number) or im.dtype == bool):
        raise TypeError(f"{where} must be a real numeric array (an image of uint8, uint16, "
                        f"bool or float in [0, 1]); got dtype {im.dtype}.")
    if im.dtype == bool:
        return im.astype(np.float32)
    if np.issubdtype(im.dtype, np.integer):
        top = 2**bits - 1
        if clip_integers and im.size and im.min() >= 0 and im.max() > top:
            warnings.warn(
                f"{name}[{i}] has pixel values up to {im.max()}, beyond the {bits}-bit "
                f"range (0..{top}) found in fit's images; they are clipped to {top}, the "
                f"brightest value the model has seen. If the data has more bits, declare "
                f"them (bit_depth=...) and fit again.", UserWarning, stacklevel=4)
            im = np.minimum(im, top)
        if im.size and (im.min() < 0 or im.max() > top):
            limit = f"0..{top} ({bits} bits)"
            raise ValueError(
                f"{where} has integer pixel values in [{im.min()}, {im.max()}]; integer "
                f"images here must lie in {limit}. Declare the bit depth (bit_depth=...), "
                f"rescale the images, or pass floats in [0, 1].")
        return im.astype(np.float32) / np.float32(top)
    out = im.astype(np.float32)
    if not np.isfinite(out).all():
        raise ValueError(f"{where} has non-finite pixel values (NaN or inf).")
    lo, hi = float(out.min()), float(out.max())
    if lo < -_FLOAT_TOLERANCE or hi > 1 + _FLOAT_TOLERANCE:
        if lo >= 0 and hi <= 2:
            # floats in [0, 1] pushed a little past 1 (brightened, sharpened, resampled)
            hint = "clip them to [0, 1] (np.clip(image, 0, 1)), or rescale them"
        elif lo >= 0 and hi <= 255:
            hint = "it looks like 8-bit intensities: divide by 255, or pass the uint8 array"
        elif lo >= 0 and hi <= 2**_BIT_DEPTHS[-1] - 1:
            # integer intensities stored as floats (e.g. 12-bit camera values): the depth
            # of fit when it holds them, else the smallest that does
            depth = (bits if bits is not None and hi <= 2**bits - 1 else
                     next(b for b in _BIT_DEPTHS if hi <= 2**b - 1))
            hint = (f"it looks like {depth}-bit intensities: divide by {2**depth - 1}, or "
                    f"pass them as an integer array (e.g. uint16)")
        else:
            hint = "rescale it, e.g. (image - image.min()) / (image.max() - image.min())"
        raise ValueError(f"{where} has float pixel values in [{lo:g}, {hi:g}], but float "
                         f"images must lie in [0, 1]: {hint}.")
    return np.clip(out, 0.0, 1.0)


def check_images(X, *, name="X", n_channels=None, min_size=1, bits=None,
                 clip_integers=False):
    """Validate a batch of images and bring it to float32 ``(C, H, W)`` arrays in [0, 1].

    Parameters
    ----------
    X : array-like of shape (n, H, W), (n, H, W, C) or (n, C, H, W), or list of images
        A list may hold ``(H, W)``, ``(H, W, C)`` or ``(C, H, W)`` images of different
        sizes (with one channel count).
    name : str, default="X"
        Name used in error messages.
    n_channels : int or None, default=None
        Channels the images must have (a fitted model's); None accepts any count (one
        for all images).
    min_size : int, default=1
        Smallest height and width accepted.
    bits : int or None, default=None
        Bit depth of integer images other than uint8 (which are always 8-bit); None: the
        smallest of 8, 10, 12, 14 and 16 bits that holds the largest value of the batch's
        such images (:func:`integer_bit_depth`).
    clip_integers : bool, default=False
        Clip integer values above ``2 ** bits - 1`` to it, with a ``UserWarning``,
        instead of raising (for prediction with a depth found, not declared, in fit:
        a brighter image keeps fit's scaling, its brightest pixels saturate).

    Returns
    -------
    images : list of n ndarrays of shape (C, H, W), float32
        Values in [0, 1].

    Raises
    ------
    ValueError
        One image given where a batch is expected, an empty batch, an unknown layout, a
        size below ``min_size``, a channel count other than ``n_channels`` (or differing
        between images), non-finite values, floats outside [0, 1] or integers beyond the
        bit depth; the message names the image.
    TypeError
        Sparse or non-numeric input.
    """
    X = tensors_to_numpy(X, name)
    items = _as_items(X, name, n_channels)
    if not items:
        raise ValueError(f"{name} has 0 images.")
    if bits is None:  # one depth for the batch's integer images other than uint8
        bits = integer_bit_depth(items)
    out = []
    for i, im in enumerate(items):
        c, h, w = im.shape
        if min(h, w) < min_size:
            raise ValueError(f"{name}[{i}] is {h} x {w} pixels (after reading the channel "
                             f"axis; {c} channels); images must be at least {min_size} x "
                             f"{min_size} pixels.")
        expected = n_channels if n_channels is not None else out[0].shape[0] if out else c
        if c != expected:
            what = (f"the model was fitted on {n_channels}" if n_channels is not None
                    else f"{name}[0] has {expected}")
            raise ValueError(f"{name}[{i}] has {c} channels but {what}.")
        out.append(_to_unit_float(im, i, name, 8 if im.dtype == np.uint8 else bits,
                                  clip_integers and im.dtype != np.uint8))
    return out


def pad_images(images, shape, value=0.0):
    """``(n, C, H, W)`` array of the images padded at the bottom and right to ``shape``."""
    n, c = len(images), images[0].shape[0]
    out = np.full((n, c) + tuple(shape), value, dtype=np.float32)
    for i, im in enumerate(images):
        out[i, :, : im.shape[1], : im.shape[2]] = im
    return out


def check_label_map(arr, name, shape):
    """One ``(H, W)`` map of non-negative integer labels matching an image of ``shape``.

    Parameters
    ----------
    arr : array-like of shape (H, W)
        Integer-valued labels (bool, any integer dtype, or integral floats).
    name : str
        Name used in error messages (e.g. ``"y[3]"``).
    shape : tuple of int
        ``(H, W)`` of the image.

    Returns
    -------
    labels : ndarray of shape (H, W), int64
    """
    if hasattr(arr, "toarray"):
        raise TypeError(f"{name} must be a dense array, not a sparse matrix.")
    arr = np.asarray(arr)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a numeric array of integer labels; got dtype "
                        f"{arr.dtype}.")
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} has shape {arr.shape} but its image is {tuple(shape)}.")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            pos = tuple(int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"{name} must hold integer labels; {name}"
                             f"[{', '.join(map(str, pos))}] = {float(arr[pos])!r}.")
        big = np.abs(arr) >= 2.0**63
        if big.any():
            pos = tuple(int(v) for v in np.argwhere(big)[0])
            raise ValueError(f"{name} has a label too large for int64: {name}"
                             f"[{', '.join(map(str, pos))}] = {float(arr[pos])!r}; labels "
                             "must be below 2**63.")
    if arr.size and np.issubdtype(arr.dtype, np.unsignedinteger) and (
            arr.max() > np.iinfo(np.int64).max):
        raise ValueError(f"{name} has a label too large for int64 ({int(arr.max())}); "
                         f"labels must be at most {np.iinfo(np.int64).max}.")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} has a negative label ({int(arr.min())}); labels must be "
                         ">= 0 (0 = background).")
    return arr


def check_label_maps(y, name, shapes):
    """One label map per image (:func:`check_label_map`), as a list of int64 arrays."""
    y = tensors_to_numpy(y, name)
    if hasattr(y, "toarray"):
        raise TypeError(f"{name} must be a dense array, not a sparse matrix.")
    if isinstance(y, np.ndarray) and y.ndim == 2 and len(shapes) == 1:
        raise ValueError(f"{name} has shape {y.shape}: one map? Pass one (H, W) map per "
                         f"image, e.g. {name}[None].")
    items = list(y) if isinstance(y, (list, tuple)) or (
        isinstance(y, np.ndarray) and y.ndim >= 1) else None
    if items is None:
        arr = np.asarray(y)
        if arr.ndim == 0:
            raise TypeError(f"{name} must be one (H, W) label map per image (an array of "
                            f"shape (n, H, W) or a list of maps); got {y!r:.80}.")
        items = list(arr)
    if len(items) != len(shapes):
        raise ValueError(f"{name} has {len(items)} maps but there are {len(shapes)} images.")
    return [check_label_map(m, f"{name}[{i}]", s) for i, (m, s) in enumerate(zip(items,
                                                                                 shapes))]


#: With n_classes=None, larger labels are taken for ids rather than classes and refused.
MAX_INFERRED_CLASSES = 1024


# ---------------------------------------------------------------- detection targets
def targets_from_maps(instance_maps, semantic_maps, shapes):
    """Per-image detection targets ``(boxes, labels, masks)`` from instance maps and
    optional semantic maps (an instance takes the majority class of its pixels; one
    class without them), each map checked against its image's ``shapes[i]``."""
    if instance_maps is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None: "
                         "give the true instances, one (H, W) instance map per image "
                         "(0 = background).")
    instance_maps = tensors_to_numpy(instance_maps, "instance_maps")
    semantic_maps = tensors_to_numpy(semantic_maps, "semantic_maps")
    n = len(shapes)
    inst = list(instance_maps) if not isinstance(instance_maps, np.ndarray) or \
        instance_maps.ndim == 3 else None
    if inst is None or len(inst) != n:
        got = getattr(instance_maps, "shape", None) or len(inst or [])
        raise ValueError(f"y must give one (H, W) instance map per image ({n}); got "
                         f"{got}.")
    sem = None
    if semantic_maps is not None:
        sem = list(semantic_maps)
        if len(sem) != n:
            raise ValueError(f"semantic_maps has {len(sem)} maps but there are {n} images.")
    out = []
    for i in range(n):
        m = check_label_map(inst[i], f"y[{i}]", shapes[i])
        ids = np.unique(m)
        ids = ids[ids > 0]
        masks = m[None] == ids[:, None, None]
        if sem is None:
            labels = np.ones(len(ids), dtype=np.int64)
        else:
            s = check_label_map(sem[i], f"semantic_maps[{i}]", shapes[i])
            labels = np.empty(len(ids), dtype=np.int64)
            for j, mk in enumerate(masks):
                # majority class (smallest on ties), without a table as large as the class
                classes, counts = np.unique(s[mk], return_counts=True)
                counts[classes == 0] = 0
                if counts.sum() == 0:
                    raise ValueError(f"instance {ids[j]} of y[{i}] lies on "
                                     f"background (class 0) of semantic_maps[{i}].")
                labels[j] = int(classes[np.argmax(counts)])
        out.append((_boxes_of(masks), labels, masks))
    return out


def _boxes_of(masks):
    """Tight ``(x1, y1, x2, y2)`` boxes (max exclusive) of ``(k, H, W)`` masks."""
    k = masks.shape[0]
    boxes = np.zeros((k, 4), dtype=np.float32)
    for j in range(k):
        ys, xs = np.nonzero(masks[j])
        boxes[j] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    return boxes


#: Boxes may leave the image by this many pixels (rounding of converted annotations);
#: they are clipped to it.
_BOX_TOLERANCE = 0.5


def _dict_field(t, i, key, dtype=None):
    """``t[key]`` as a numeric array; a ``TypeError`` naming ``y[i][key]`` otherwise."""
    try:
        arr = np.asarray(t[key], dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"y[{i}]['{key}'] must be a numeric array; it could not be read "
                        f"as one ({exc}).") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == bool):
        raise TypeError(f"y[{i}]['{key}'] must be a numeric array; got dtype {arr.dtype}.")
    return arr


def targets_from_dicts(targets, shapes):
    """Per-image detection targets ``(boxes, labels, masks)`` from target dicts, each
    checked against its image: ``k`` labels, ``k`` boxes inside the image and ``k``
    masks of its size."""
    targets = tensors_to_numpy(targets, "y")
    n = len(shapes)
    if len(targets) != n:
        raise ValueError(f"y has {len(targets)} target dicts but there are {n} images.")
    out = []
    for i, t in enumerate(targets):
        shape = tuple(int(v) for v in shapes[i])
        if not isinstance(t, dict) or not {"boxes", "labels", "masks"} <= set(t):
            keys = sorted(map(str, t)) if isinstance(t, dict) else type(t).__name__
            raise ValueError(f"y[{i}] must be a dict with keys 'boxes', 'labels' and "
                             f"'masks'; got {keys}.")
        labels = _dict_field(t, i, "labels")
        boxes = _dict_field(t, i, "boxes", np.float64)
        masks = _dict_field(t, i, "masks")
        if labels.ndim != 1:
            raise ValueError(f"y[{i}]['labels'] must be 1-D, one class per object; got "
                             f"shape {labels.shape}.")
        k = labels.shape[0]
        if k == 0:  # an image without objects: empty lists are fine
            masks = np.zeros((0,) + shape, dtype=bool) if masks.size == 0 else masks
            boxes = np.zeros((0, 4)) if boxes.size == 0 else boxes
        if boxes.shape != (k, 4):
            raise ValueError(f"y[{i}]['boxes'] has shape {boxes.shape} but y[{i}]['labels'] "
                             f"has {k} objects: boxes must be ({k}, 4), (x1, y1, x2, y2) in "
                             f"pixels.")
        if masks.ndim != 3 or masks.shape[0] != k:
            raise ValueError(f"y[{i}]['masks'] has shape {masks.shape} but y[{i}]['labels'] "
                             f"has {k} objects: masks must be ({k}, H, W), one per object.")
        if masks.shape[1:] != shape:
            raise ValueError(f"y[{i}]['masks'] are {masks.shape[1]} x {masks.shape[2]} but "
                             f"image X[{i}] is {shape[0]} x {shape[1]} pixels: each mask "
                             f"must have its image's (H, W).")
        if masks.dtype != bool and masks.size and not np.all((masks == 0) | (masks == 1)):
            j = int(np.argmax(~((masks == 0) | (masks == 1)).reshape(k, -1).all(1)))
            raise ValueError(f"y[{i}]['masks'][{j}] holds values other than 0 and 1; masks "
                             f"must be boolean or 0/1 (threshold soft masks, e.g. masks >= "
                             f"0.5, and 0/255 masks with masks > 0).")
        if k and (not (np.issubdtype(labels.dtype, np.integer) or labels.dtype == bool)
                  or labels.min() < 1):
            raise ValueError(f"y[{i}]['labels'] must be integers >= 1 (0 is the "
                             f"background), got {labels.tolist()}.")
        if k:
            bad = (~np.isfinite(boxes).all(1) | (boxes[:, 2] < boxes[:, 0])
                   | (boxes[:, 3] < boxes[:, 1]))
            if bad.any():
                j = int(np.argmax(bad))
                raise ValueError(f"y[{i}]['boxes'][{j}] = {boxes[j].tolist()} is not a box "
                                 f"(x1, y1, x2, y2) with x2 >= x1 and y2 >= y1.")
            h, w = shape
            tol = _BOX_TOLERANCE
            outside = ((boxes[:, :2] < -tol).any(1) | (boxes[:, 2] > w + tol)
                       | (boxes[:, 3] > h + tol))
            if outside.any():
                j = int(np.argmax(outside))
                raise ValueError(
                    f"y[{i}]['boxes'][{j}] = {boxes[j].tolist()} leaves image X[{i}] "
                    f"({h} x {w} pixels): boxes are (x1, y1, x2, y2) in pixels of their "
                    f"image, 0 <= x1 <= x2 <= {w} and 0 <= y1 <= y2 <= {h} (not (x, y, "
                    f"width, height), nor fractions of the image).")
            boxes = np.clip(boxes, 0, [w, h, w, h])
        out.append((boxes.astype(np.float32), labels.astype(np.int64), masks.astype(bool)))
    return out
