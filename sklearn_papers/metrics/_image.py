"""Image statistics for generative models: sharpness by finite differences and by the
spectrum. numpy only."""

import numbers

import numpy as np

from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["image_sharpness", "sharpness_measures"]


@with_numpy_inputs
def image_sharpness(images, image_shape=None):
    """Mean absolute horizontal plus vertical finite difference of images.

    A blurred image has smaller differences between neighbouring pixels than a sharp one,
    so the ratio of a model's outputs' sharpness to the real images' measures how blurred
    its outputs are (1 = as sharp as the real images; Dosovitskiy & Brox 2016 compare
    losses by the sharpness of their reconstructions).

    Parameters
    ----------
    images : array-like of shape (n_images, H, W) or (n_images, H * W)
        Grey images; rows when ``image_shape`` is given.
    image_shape : tuple of int (H, W) or None, default=None
        Shape of each image when ``images`` holds flattened rows.

    Returns
    -------
    sharpness : float
        ``mean |x[i, j+1] - x[i, j]| + mean |x[i+1, j] - x[i, j]|`` over all images, in
        the images' units (non-negative; 0 for constant images).

    Raises
    ------
    ValueError
        If ``images`` is empty, complex, holds NaN or inf, is a list of images of
        different shapes (the message names the first odd one), is not 3-D without
        ``image_shape``, its rows do not have ``H * W`` values, or ``image_shape`` is not a
        pair of positive ints.

    References
    ----------
    .. [1] Dosovitskiy, A., Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 29.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import image_sharpness
    >>> stripes = np.tile([0.0, 1.0], (1, 2, 2))     # one 2 x 4 image of vertical stripes
    >>> image_sharpness(stripes)
    1.0
    """
    return _sharpness(_check_images(images, image_shape))


def _sharpness(x):
    across = np.abs(np.diff(x, axis=2)).mean() if x.shape[2] > 1 else 0.0
    down = np.abs(np.diff(x, axis=1)).mean() if x.shape[1] > 1 else 0.0
    return float(across + down)


@with_numpy_inputs
def sharpness_measures(images, real_images, image_shape=None, *, edge_quantile=0.8,
                       hf_cutoff=0.25):
    """Sharpness of images measured four ways, each relative to real images.

    The mean absolute finite difference (:func:`image_sharpness`) is a total variation,
    which blurring keeps where an edge is isolated and monotone; the other three measures
    tell steeper edges, texture and high frequencies apart (Dosovitskiy & Brox 2016
    compare losses by how sharp their reconstructions are).

    Parameters
    ----------
    images : array-like of shape (n_images, H, W) or (n_images, H * W)
        Grey images to measure; rows when ``image_shape`` is given.
    real_images : array-like of the same shape as ``images``
        The real images, the reference of every ratio: ``images[i]`` is measured at the
        edges and flat pixels of ``real_images[i]`` (often its original, for
        reconstructions).
    image_shape : tuple of int (H, W) or None, default=None
        Shape of each image when both arrays hold flattened rows.
    edge_quantile : float in (0, 1), default=0.8
        Pixels whose real gradient magnitude is at or above this quantile are the edges.
    hf_cutoff : float in (0, 0.5), default=0.25
        Radial spatial frequency (cycles per pixel; Nyquist is 0.5) above which spectral
        power counts as high-frequency.

    Returns
    -------
    measures : dict of str to float
        ``"gradient"``: :func:`image_sharpness` of ``images`` over that of
        ``real_images`` (1 = as sharp as real). ``"edge gradient"``: mean gradient
        magnitude (forward differences) at the real images' edges, over the real one
        there: how steep the edges are, blind to texture elsewhere. ``"flat gradient"``:
        mean gradient magnitude where the real images are flattest (real gradient at or
        below its median), over the real images' mean gradient magnitude: texture or
        artefacts (the real images' own value is not 0). ``"high-frequency power"``: the
        share of the mean-removed spectral power above ``hf_cutoff``, over the real
        images' share.

    Raises
    ------
    ValueError
        If either array fails the checks of :func:`image_sharpness` (the message names
        which), the two differ in shape, the images are smaller than 2 x 2 pixels, the
        real images are constant (every ratio divides by them) or have no spectral power
        above ``hf_cutoff``, or ``edge_quantile`` or ``hf_cutoff`` is out of range.

    References
    ----------
    .. [1] Dosovitskiy, A., Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 29.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import sharpness_measures
    >>> real = np.zeros((2, 8, 8)); real[:, 2:6, 2:6] = 1.0
    >>> sharpness_measures(real, real)["edge gradient"]
    1.0
    """
    for name, value, high in (("edge_quantile", edge_quantile, 1.0),
                              ("hf_cutoff", hf_cutoff, 0.5)):
        if (not isinstance(value, numbers.Real) or isinstance(value, bool)
                or not 0.0 < value < high):
            raise ValueError(f"{name} must be a number in (0, {high:g}), got {value!r}")
    x = _check_images(images, image_shape)
    r = _check_images(real_images, image_shape, name="real_images")
    if x.shape != r.shape:
        raise ValueError(f"images has shape {x.shape} but real_images {r.shape}; pass one "
                         "real image per image, of the same size (images[i] is measured at "
                         "real_images[i]'s edges)")
    if min(x.shape[1:]) < 2:
        raise ValueError(f"images are {x.shape[1]} x {x.shape[2]} pixels; the gradient "
                         "magnitude needs at least 2 x 2 pixels (pass image_shape=(H, W) "
                         "for flattened rows)")
    # Every measure is a ratio of two statistics of one homogeneity degree, so both
    # arrays are divided by one common scale: values near 1e300 do not overflow and
    # values near 1e-300 do not underflow. A power of two divides exactly: ties between
    # gradients (the edge and flat quantiles) stay ties.
    scale = max(np.abs(x).max(), np.abs(r).max())
    if scale > 0:
        scale = np.ldexp(1.0, int(np.frexp(scale)[1]) - 1)
        x, r = x / scale, r / scale
    if _sharpness(r) == 0.0:
        raise ValueError("real_images are constant (no gradient): every measure is a ratio "
                         "to theirs, so pass real images with edges")
    hf_real = _hf_fraction(r, hf_cutoff)
    if hf_real < 1e-12:
        raise ValueError(f"real_images have no spectral power above hf_cutoff={hf_cutoff!r} "
                         "(their share is the reference of 'high-frequency power'); pass a "
                         "lower hf_cutoff")
    gx, gr = _gradient_magnitude(x), _gradient_magnitude(r)
    edges = gr >= np.quantile(gr, edge_quantile)
    flat = gr <= np.quantile(gr, 0.5)
    return {"gradient": _sharpness(x) / _sharpness(r),
            "edge gradient": float(gx[edges].mean() / gr[edges].mean()),
            "flat gradient": float(gx[flat].mean() / gr.mean()),
            "high-frequency power": _hf_fraction(x, hf_cutoff) / hf_real}


def _blurred(images, sigma, image_shape=None):
    """``images`` blurred by a Gaussian of ``sigma`` pixels (``"nearest"`` at the borders),
    float64, in their layout: ``(n_images, H, W)``, or rows of ``image_shape`` images.
    Blurred real images are reference points for :func:`sharpness_measures`."""
    from scipy.ndimage import gaussian_filter

    x = np.asarray(images, dtype=np.float64)
    grid = x if image_shape is None else x.reshape(-1, *image_shape)
    return gaussian_filter(grid, sigma=(0, sigma, sigma), mode="nearest").reshape(x.shape)


def _gradient_magnitude(x):
    """|grad| of images ``(n, H, W)`` from forward differences, on ``(n, H-1, W-1)``."""
    gx = np.diff(x, axis=2)[:, :-1, :]
    gy = np.diff(x, axis=1)[:, :, :-1]
    return np.hypot(gx, gy)


def _hf_fraction(x, cutoff):
    """Fraction of the (mean-removed) spectral power of images ``(n, H, W)`` above
    ``cutoff`` cycles per pixel (radially)."""
    x = x - x.mean(axis=(1, 2), keepdims=True)
    power = np.abs(np.fft.fft2(x)) ** 2
    fy = np.fft.fftfreq(x.shape[1])[:, None]
    fx = np.fft.fftfreq(x.shape[2])[None, :]
    high = np.hypot(fy, fx) > cutoff
    total = power.sum()
    return float(power[:, high].sum() / total) if total > 0 else 0.0


def _check_images(images, image_shape, name="images"):
    """``images`` as a float64 array ``(n_images, H, W)``, validated (see
    :func:`image_sharpness` for the errors; messages name the argument ``name``)."""
    if isinstance(images, (list, tuple)) and len(images) > 1:
        shapes = [np.shape(im) for im in images]
        odd = next((i for i, sh in enumerate(shapes) if sh != shapes[0]), None)
        if odd is not None:
            raise ValueError(f"{name}[{odd}] has shape {shapes[odd]} but {name}[0] has "
                             f"{shapes[0]}; the images must share one shape (crop or resize "
                             "them, or score each shape apart).")
    arr = np.asarray(images)
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real numbers, got complex values")
    try:
        x = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers: {exc}") from None
    if image_shape is not None:
        shape = tuple(image_shape) if isinstance(image_shape, (tuple, list)) else None
        if shape is None or len(shape) != 2 or not all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0
                for v in shape):
            raise ValueError(f"image_shape must be a pair of positive ints (H, W), got "
                             f"{image_shape!r}")
        h, w = (int(v) for v in shape)
        if x.ndim != 2 or x.shape[1] != h * w:
            raise ValueError(f"with image_shape={tuple(image_shape)}, images must be rows of "
                             f"{h * w} values; got {name} of shape {x.shape}")
        x = x.reshape(-1, h, w)
    elif x.ndim != 3:
        raise ValueError(f"{name} must have shape (n_images, H, W), got {x.shape}; pass "
                         "image_shape=(H, W) for flattened rows")
    if x.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} holds NaN or inf")
    return x
