"""Image statistics for generative models: sharpness by finite differences. numpy only."""

import numbers

import numpy as np

from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["image_sharpness"]


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
    if isinstance(images, (list, tuple)) and len(images) > 1:
        shapes = [np.shape(im) for im in images]
        odd = next((i for i, sh in enumerate(shapes) if sh != shapes[0]), None)
        if odd is not None:
            raise ValueError(f"images[{odd}] has shape {shapes[odd]} but images[0] has "
                             f"{shapes[0]}; the images must share one shape (crop or resize "
                             "them, or score each shape apart).")
    arr = np.asarray(images)
    if np.iscomplexobj(arr):
        raise ValueError("images must be real numbers, got complex values")
    try:
        x = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"images must be numbers: {exc}") from None
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
                             f"{h * w} values; got shape {x.shape}")
        x = x.reshape(-1, h, w)
    elif x.ndim != 3:
        raise ValueError(f"images must have shape (n_images, H, W), got {x.shape}; pass "
                         "image_shape=(H, W) for flattened rows")
    if x.size == 0:
        raise ValueError("images is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError("images holds NaN or inf")
    across = np.abs(np.diff(x, axis=2)).mean() if x.shape[2] > 1 else 0.0
    down = np.abs(np.diff(x, axis=1)).mean() if x.shape[1] > 1 else 0.0
    return float(across + down)
