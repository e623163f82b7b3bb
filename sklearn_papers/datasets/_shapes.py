"""A dSprites-like ground-truth-factor image generator, made procedurally (offline, deterministic).

Binary images of one shape (square, ellipse or heart) at a given scale, orientation and x/y
position on a small square canvas, with every factor known. The object
:class:`Shapes` is what the interventional disentanglement scores need (it renders
observations for chosen factors); :func:`make_shapes` draws a sample for the sample-based
scores.
"""

from numbers import Integral

import numpy as np

from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import Interval, validate_params

__all__ = ["Shapes", "make_shapes"]

SHAPE_NAMES = ("square", "ellipse", "heart")
FACTOR_NAMES = ("shape", "scale", "orientation", "pos_x", "pos_y")
_CHUNK = 2048


def _inside(shape, u, v):
    """Membership of local coordinates (u, v) (unit half-size) in each shape, vectorised."""
    square = (np.abs(u) <= 0.8) & (np.abs(v) <= 0.8)
    ellipse = u**2 + (v / 0.5) ** 2 <= 1.0
    hx, hy = 1.15 * u, -1.15 * v + 0.25  # implicit heart (x^2 + y^2 - 1)^3 - x^2 y^3 <= 0
    heart = (hx**2 + hy**2 - 1.0) ** 3 - hx**2 * hy**3 <= 0.0
    return np.where(shape == 0, square, np.where(shape == 1, ellipse, heart))


class Shapes:
    """Ground-truth dataset of dSprites-like binary shape images.

    Five independent factors, each taking evenly spaced values: ``shape`` (square,
    ellipse, heart), ``scale`` (``n_scales`` values in [0.5, 1]), ``orientation``
    (``n_orientations`` angles in [0, pi/2) radians), ``pos_x`` and ``pos_y``
    (``n_positions`` centres each in [0.25, 0.75] of the canvas width). Rendering is exact
    and deterministic: the same factors give the same image on every machine.

    Parameters
    ----------
    image_size : int, default=32
        Side of the square canvas in pixels (at least 8).
    n_scales : int, default=6
        Number of scale values (dSprites: 6).
    n_orientations : int, default=8
        Number of orientation values. They span a quarter turn, so that no two values
        give the same image of the square (dSprites uses 40 over a full turn, where the
        square and ellipse repeat).
    n_positions : int, default=16
        Number of x and of y positions (dSprites: 32 on a 64-pixel canvas).

    Attributes
    ----------
    factor_names : tuple of str
        ``("shape", "scale", "orientation", "pos_x", "pos_y")``.
    factor_sizes : tuple of int
        Number of values of each factor.
    n_features : int
        ``image_size ** 2``, the width of a flattened image.

    Raises
    ------
    ValueError
        If a size parameter is out of range.

    See Also
    --------
    make_shapes : A random sample of images and factors.
    sklearn_papers.metrics.factor_vae_score : Needs this object.

    References
    ----------
    .. [1] Matthey, L., Higgins, I., Hassabis, D., Lerchner, A. (2017). dSprites:
       disentanglement testing sprites dataset. https://github.com/deepmind/dsprites-dataset

    Examples
    --------
    >>> from sklearn_papers.datasets import Shapes
    >>> data = Shapes(image_size=16)
    >>> data.factor_sizes
    (3, 6, 8, 16, 16)
    >>> factors = data.sample_factors(4, random_state=0)
    >>> data.sample_observations_from_factors(factors).shape
    (4, 256)
    """

    def __init__(self, image_size=32, *, n_scales=6, n_orientations=8, n_positions=16):
        for name, value, low in [("image_size", image_size, 8), ("n_scales", n_scales, 1),
                                 ("n_orientations", n_orientations, 1),
                                 ("n_positions", n_positions, 1)]:
            if not isinstance(value, Integral) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
        self.image_size = int(image_size)
        self.n_scales = int(n_scales)
        self.n_orientations = int(n_orientations)
        self.n_positions = int(n_positions)
        self.factor_names = FACTOR_NAMES
        self.factor_sizes = (len(SHAPE_NAMES), self.n_scales, self.n_orientations,
                             self.n_positions, self.n_positions)
        self.n_features = self.image_size**2

    def __repr__(self):
        return (f"Shapes(image_size={self.image_size}, n_scales={self.n_scales}, "
                f"n_orientations={self.n_orientations}, n_positions={self.n_positions})")

    def sample_factors(self, n, random_state=None):
        """Draw ``n`` factor vectors uniformly and independently.

        Parameters
        ----------
        n : int
            Number of samples.
        random_state : int, RandomState instance or None, default=None
            Seed or generator.

        Returns
        -------
        factors : ndarray of shape (n, 5), int64
            Index of each factor's value, ``0 <= factors[:, j] < factor_sizes[j]``.
        """
        rng = check_random_state(random_state)
        return np.column_stack([rng.randint(size, size=int(n)) for size in self.factor_sizes]
                               ).astype(np.int64).reshape(int(n), len(self.factor_sizes))

    def factor_values(self, factors):
        """Physical values of factor indices.

        Parameters
        ----------
        factors : array-like of shape (n, 5), int
            Factor indices.

        Returns
        -------
        values : ndarray of shape (n, 5), float64
            Shape index, scale (fraction of the largest size), orientation (radians),
            x and y centre (fraction of the canvas width).
        """
        f = self._check_factors(factors)
        scale = np.linspace(0.5, 1.0, self.n_scales) if self.n_scales > 1 else np.ones(1)
        angle = np.arange(self.n_orientations) * (np.pi / 2) / self.n_orientations
        pos = (np.linspace(0.25, 0.75, self.n_positions) if self.n_positions > 1
               else np.full(1, 0.5))
        return np.column_stack([f[:, 0].astype(float), scale[f[:, 1]], angle[f[:, 2]],
                                pos[f[:, 3]], pos[f[:, 4]]])

    def _check_factors(self, factors):
        f = np.asarray(factors)
        if f.ndim != 2 or f.shape[1] != len(self.factor_sizes):
            raise ValueError(f"factors must have shape (n, {len(self.factor_sizes)}), got "
                             f"{f.shape}.")
        if not np.issubdtype(f.dtype, np.integer):
            if not np.all(np.isfinite(f)) or not np.all(f == np.round(f)):
                raise ValueError("factors must be integer indices.")
            f = f.astype(np.int64)
        bad = (f < 0) | (f >= np.asarray(self.factor_sizes))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(f"factors[{i}, {j}] = {f[i, j]} is outside [0, "
                             f"{self.factor_sizes[j]}) for factor {self.factor_names[j]!r}.")
        return f

    def sample_observations_from_factors(self, factors, random_state=None):
        """Render the images of given factors.

        Parameters
        ----------
        factors : array-like of shape (n, 5), int
            Factor indices (as from :meth:`sample_factors`).
        random_state : None, int or RandomState, default=None
            Unused: rendering is deterministic (accepted for the ground-truth dataset
            interface of the interventional scores).

        Returns
        -------
        X : ndarray of shape (n, image_size ** 2), float32
            Flattened binary images (row-major), values 0 or 1.

        Raises
        ------
        ValueError
            If a factor index is out of range.
        """
        values = self.factor_values(factors)
        size = self.image_size
        centres = (np.arange(size) + 0.5) / size
        gx, gy = np.meshgrid(centres, centres)  # gx varies along columns (x), gy along rows
        out = np.empty((values.shape[0], self.n_features), dtype=np.float32)
        for start in range(0, values.shape[0], _CHUNK):
            v = values[start:start + _CHUNK, :, None, None]
            half = 0.2 * v[:, 1]
            dx, dy = gx - v[:, 3], gy - v[:, 4]
            cos, sin = np.cos(v[:, 2]), np.sin(v[:, 2])
            u = (cos * dx + sin * dy) / half
            w = (-sin * dx + cos * dy) / half
            img = _inside(v[:, 0].astype(int), u, w)
            out[start:start + _CHUNK] = img.reshape(img.shape[0], -1)
        return out


@validate_params(
    {"n_samples": [Interval(Integral, 1, None, closed="left")],
     "image_size": [Interval(Integral, 8, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def make_shapes(n_samples=1000, *, image_size=32, random_state=None):
    """Random dSprites-like images with their ground-truth factors.

    Factors are drawn uniformly and independently from :class:`Shapes` with default
    factor sizes ``(3, 6, 8, 16, 16)``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of images.
    image_size : int, default=32
        Side of the square canvas in pixels.
    random_state : int, RandomState instance or None, default=None
        Seed for the factor draw (rendering itself is deterministic).

    Returns
    -------
    X : ndarray of shape (n_samples, image_size ** 2), float32
        Flattened binary images.
    factors : ndarray of shape (n_samples, 5), int64
        Factor indices in the order ``Shapes.factor_names`` (shape, scale, orientation,
        pos_x, pos_y).

    See Also
    --------
    Shapes : The dataset object, for interventional scores and physical factor values.

    Examples
    --------
    >>> from sklearn_papers.datasets import make_shapes
    >>> X, factors = make_shapes(10, image_size=16, random_state=0)
    >>> X.shape, factors.shape
    ((10, 256), (10, 5))
    """
    data = Shapes(image_size)
    factors = data.sample_factors(n_samples, random_state)
    return data.sample_observations_from_factors(factors), factors
