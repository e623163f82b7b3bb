"""Interventional measures: the BetaVAE (Higgins 2017) and FactorVAE (Kim 2018) scores, and
how far a representation moves when one factor changes by one step.

They need a ground-truth dataset that can render observations for chosen factors: any object
with ``factor_sizes`` (sequence of int), ``sample_factors(n, random_state)`` returning an int
array (n, n_factors) and ``sample_observations_from_factors(factors, random_state)`` returning
an array (n, n_features), such as :class:`sklearn_papers.datasets.Shapes`.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.linear_model import LogisticRegression

from sklearn_papers.metrics._base import _active_codes, _power_of_two_exponent, _warn_collapsed
from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import (
    HasMethods,
    Interval,
    check_array,
    validate_params,
)
from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["beta_vae_score", "factor_step_distances", "factor_vae_score"]

_DATASET = HasMethods(["sample_factors", "sample_observations_from_factors"])
_REPRESENTATION = [callable, HasMethods(["transform"])]
_CHUNK = 8192  # observations per representation call


def _as_function(representation):
    if hasattr(representation, "transform"):
        return representation.transform
    return representation


def _check_dataset(dataset):
    """Validate the dataset's ``factor_sizes`` (the methods are checked by ``_DATASET``).

    Returns
    -------
    sizes : ndarray of int, shape (n_factors,)

    Raises
    ------
    TypeError
        If ``factor_sizes`` is missing or not a sequence of integers.
    ValueError
        If it is empty or holds a size below 1.
    """
    name = type(dataset).__name__
    if not hasattr(dataset, "factor_sizes"):
        raise TypeError(
            f"dataset ({name}) has no factor_sizes attribute: a ground-truth dataset needs "
            "factor_sizes (a sequence of int, the number of values of each factor), "
            "sample_factors(n, random_state) and sample_observations_from_factors(factors, "
            "random_state), like sklearn_papers.datasets.Shapes."
        )
    raw = dataset.factor_sizes
    try:
        sizes = np.asarray(raw)
    except Exception:  # noqa: BLE001 - any failure means "not a sequence of int"
        sizes = np.asarray(None, dtype=object)
    if (sizes.ndim != 1 or sizes.size == 0 or not np.issubdtype(sizes.dtype, np.number)
            or np.issubdtype(sizes.dtype, np.complexfloating)
            or not np.all(np.isfinite(sizes)) or not np.all(sizes == np.round(sizes))):
        raise TypeError(f"dataset.factor_sizes must be a non-empty sequence of int (the "
                        f"number of values of each factor); {name} has {raw!r}.")
    sizes = sizes.astype(int)
    if np.any(sizes < 1):
        raise ValueError(f"dataset.factor_sizes must all be >= 1; {name} has "
                         f"{sizes.tolist()}.")
    return sizes


def _sample_factors(dataset, n, sizes, rng):
    """``dataset.sample_factors(n, rng)``, checked to be a numeric (n, n_factors) array; a copy."""
    out = tensors_to_numpy(dataset.sample_factors(n, rng), "dataset.sample_factors(...)")
    try:
        factors = np.array(out)
    except (TypeError, ValueError):  # ragged nested sequences
        factors = np.asarray(None, dtype=object)
    if (factors.shape != (n, sizes.size) or not np.issubdtype(factors.dtype, np.number)
            or np.issubdtype(factors.dtype, np.complexfloating)):
        raise ValueError(
            f"dataset.sample_factors({n}, random_state) must return a numeric array of shape "
            f"({n}, {sizes.size}) (one column per entry of factor_sizes); "
            f"{type(dataset).__name__} returned "
            + (f"shape {factors.shape}, dtype {factors.dtype}." if factors.ndim else
               f"{type(factors.item()).__name__}.")
        )
    return factors


def _observations(dataset, factors, rng):
    """``dataset.sample_observations_from_factors`` checked to give one row per factor row."""
    obs = tensors_to_numpy(dataset.sample_observations_from_factors(factors, rng),
                           "dataset.sample_observations_from_factors(...)")
    n = factors.shape[0]
    shape = getattr(obs, "shape", None)
    if shape is None or len(shape) == 0 or shape[0] != n:
        raise ValueError(
            f"dataset.sample_observations_from_factors must return an array with one row "
            f"per factor vector ({n} rows); {type(dataset).__name__} returned "
            + (f"shape {tuple(shape)}." if shape is not None else f"{type(obs).__name__}.")
        )
    return obs


class _Encoder:
    """The representation, with every output checked and on a fixed scale.

    Each call must return a finite numeric array of shape (n, n_codes) for n observations
    (a 1-D array of length n is one code; a torch tensor is detached and copied to the CPU),
    with the same n_codes every time. If the first
    codes have an extreme magnitude (beyond about 1e+-144, where variances overflow or
    underflow in float64), all codes are multiplied by one exact power of two, which
    changes no ratio of variances or differences.
    """

    def __init__(self, representation):
        self.function = _as_function(representation)
        self.name = getattr(representation, "__qualname__", type(representation).__name__)
        self.n_codes = None
        self.exponent = None

    def _call(self, observations):
        n = observations.shape[0]
        out = self.function(observations)
        if out is None:
            raise TypeError(f"The representation {self.name} returned None for {n} "
                            f"observations; it must return codes of shape ({n}, n_codes).")
        out = tensors_to_numpy(out, f"the output of the representation {self.name}")
        try:
            codes = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"The representation {self.name} returned "
                            f"{type(out).__name__} that is not a numeric array of codes "
                            f"({exc}).") from exc
        if codes.ndim == 1 and codes.shape[0] == n:
            codes = codes.reshape(-1, 1)
        if codes.ndim != 2 or codes.shape[0] != n or codes.shape[1] == 0:
            raise ValueError(
                f"The representation {self.name} must return a 2-D array of codes with one "
                f"row per observation, shape ({n}, n_codes); for {n} observations it "
                f"returned shape {codes.shape}."
            )
        if self.n_codes is not None and codes.shape[1] != self.n_codes:
            raise ValueError(f"The representation {self.name} returned {codes.shape[1]} "
                             f"codes per observation, but {self.n_codes} before; the code "
                             "size must not change between calls.")
        self.n_codes = codes.shape[1]
        if not np.all(np.isfinite(codes)):
            raise ValueError(f"The representation {self.name} returned NaN or inf codes.")
        if self.exponent is None:
            self.exponent = _power_of_two_exponent(np.max(np.abs(codes)))
        return np.ldexp(codes, -self.exponent) if self.exponent else codes

    def __call__(self, observations):
        """Codes of ``observations``, in balanced chunks of at most ``_CHUNK`` rows."""
        n = observations.shape[0]
        n_chunks = max(1, -(-n // _CHUNK))
        bounds = np.linspace(0, n, n_chunks + 1).astype(int)
        return np.concatenate([self._call(observations[a:b])
                               for a, b in zip(bounds[:-1], bounds[1:])], axis=0)


def _varying_factors(dataset):
    sizes = _check_dataset(dataset)
    varying = np.flatnonzero(sizes > 1)
    if varying.size == 0:
        raise ValueError("Every factor of the dataset is constant (factor_sizes all 1); "
                         "there is nothing to intervene on.")
    return sizes, varying


def _points_per_chunk(batch_size, per_point):
    return max(1, _CHUNK // (batch_size * per_point))


def _beta_vae_features(dataset, function, n_points, batch_size, sizes, varying, rng):
    """(features (n_points, n_codes), labels (n_points,)) for the BetaVAE classifier.

    Random draws happen per point in the reference's order (factor index, first batch,
    second batch); only rendering and encoding are batched over several points.
    """
    feats, labels = [], []
    step = _points_per_chunk(batch_size, 2)
    for start in range(0, n_points, step):
        m = min(step, n_points - start)
        first, second = [], []
        for _ in range(m):
            k = varying[rng.randint(varying.size)]
            f1 = _sample_factors(dataset, batch_size, sizes, rng)
            f2 = _sample_factors(dataset, batch_size, sizes, rng)
            f2[:, k] = f1[:, k]
            labels.append(k)
            first.append(f1)
            second.append(f2)
        x = _observations(dataset, np.concatenate(first + second), rng)
        z = function(x)
        diff = np.abs(z[: m * batch_size] - z[m * batch_size:])
        feats.append(diff.reshape(m, batch_size, -1).mean(axis=1))
    return np.concatenate(feats), np.asarray(labels)


# Parameter constraints, shared with make_disentanglement_scorer.
_BETA_VAE_PARAMS = {
    "dataset": [_DATASET], "representation": _REPRESENTATION,
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "n_train": [Interval(Integral, 2, None, closed="left")],
    "n_eval": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}
_FACTOR_VAE_PARAMS = {
    "dataset": [_DATASET], "representation": _REPRESENTATION,
    "batch_size": [Interval(Integral, 2, None, closed="left")],
    "n_train": [Interval(Integral, 1, None, closed="left")],
    "n_eval": [Interval(Integral, 1, None, closed="left")],
    "n_variance_estimate": [Interval(Integral, 2, None, closed="left")],
    "collapse_tol": [Interval(Real, 0, 1, closed="left")],
    "random_state": ["random_state"],
}


@validate_params(_BETA_VAE_PARAMS, prefer_skip_nested_validation=True)
def beta_vae_score(dataset, representation, *, batch_size=64, n_train=10000, n_eval=5000,
                   random_state=None):
    """BetaVAE disentanglement score (Higgins et al. 2017, Sec. 3).

    Each point: pick a factor ``k`` at random, draw ``batch_size`` pairs of factor vectors
    that agree on factor ``k`` only by construction, render and encode both, and take the
    mean absolute difference of the codes over the pairs. A ``LogisticRegression`` learns to
    predict ``k`` from that vector; the score is its accuracy on ``n_eval`` fresh points.

    Parameters
    ----------
    dataset : object
        Ground-truth dataset with ``factor_sizes``, ``sample_factors(n, random_state)`` and
        ``sample_observations_from_factors(factors, random_state)``.
    representation : callable or fitted transformer
        ``representation(X) -> codes (n, n_codes)``, or an object whose ``transform`` is
        used. ``X`` is a numpy array; the codes may be a numpy array or a torch tensor
        (detached and copied to the CPU, e.g. ``lambda x: model.encode(torch.as_tensor(x))``).
    batch_size : int, default=64
        Pairs averaged per point.
    n_train : int, default=10000
        Training points for the classifier (the reference's default; each costs
        ``2 * batch_size`` encoded observations).
    n_eval : int, default=5000
        Evaluation points.
    random_state : int, RandomState instance or None, default=None
        Seeds sampling and the classifier.

    Returns
    -------
    score : float
        Evaluation accuracy in ``[0, 1]``; chance is ``1 / n_varying_factors``.

    Raises
    ------
    TypeError
        If the dataset lacks ``factor_sizes`` (or it is not a sequence of int), or the
        representation returns None or a non-numeric result.
    ValueError
        If every factor is constant, the dataset's methods return arrays of the wrong
        shape, or the representation returns anything but a finite array of shape
        (n_observations, n_codes) (a 1-D array of length n_observations is one code), or
        changes its number of codes between calls.

    Warns
    -----
    UserWarning
        When every pair of observations is encoded identically (a collapsed, constant
        representation): the score is then its floor, the evaluation accuracy of
        predicting the most frequent training factor, which is what the classifier does
        with constant inputs (and disentanglement_lib's result).

    See Also
    --------
    factor_vae_score : The majority-vote variant, robust to rotations of one factor.

    Notes
    -----
    Only non-constant factors (size > 1) are chosen for intervention (the reference would
    also pick a size-1 factor, which is indistinguishable by construction). The classifier
    is the reference's default-regularised ``LogisticRegression`` (run to convergence:
    ``max_iter=1000`` where the reference stops at 100), so the score depends on
    the codes' overall scale (shrinking all codes lowers it); codes of extreme magnitude
    (beyond about 1e+-144) are brought to magnitude about 1 by an exact power of two.

    References
    ----------
    .. [1] Higgins, I. et al. (2017). beta-VAE: learning basic visual concepts with a
       constrained variational framework. ICLR.

    Examples
    --------
    >>> from sklearn_papers.datasets import Shapes
    >>> from sklearn_papers.metrics import beta_vae_score
    >>> data = Shapes(image_size=16)
    >>> oracle = lambda X: X.reshape(len(X), 16, 16).sum(axis=(1, 2))[:, None]
    >>> s = beta_vae_score(data, oracle, batch_size=8, n_train=50, n_eval=50, random_state=0)
    >>> 0.0 <= s <= 1.0
    True
    """
    rng = check_random_state(random_state)
    sizes, varying = _varying_factors(dataset)
    function = _Encoder(representation)
    x_train, y_train = _beta_vae_features(dataset, function, n_train, batch_size, sizes,
                                          varying, rng)
    x_eval, y_eval = _beta_vae_features(dataset, function, n_eval, batch_size, sizes, varying,
                                        rng)
    if np.unique(y_train).size < 2:
        return float(np.mean(y_eval == y_train[0]))
    if not (x_train.any() or x_eval.any()):
        # every pair encoded identically: the classifier sees constant inputs and can only
        # predict the most frequent training factor (disentanglement_lib's result, too)
        floor = float(np.mean(y_eval == np.bincount(y_train).argmax()))
        _warn_collapsed("beta_vae_score", floor)
        return floor
    # The reference keeps scikit-learn's default max_iter=100, which lbfgs often reaches
    # before converging on these features (one ConvergenceWarning per score). The score is
    # meant to be the accuracy of the regularised optimum, so we let the solver get there:
    # on Shapes(32), 2000/1000 points, PCA codes: 0.831 at 100 iterations (warning), 0.826
    # at 1000 and 5000 (converged); random-projection codes 0.556 at both.
    model = LogisticRegression(max_iter=1000,
                               random_state=rng.randint(np.iinfo(np.int32).max))
    model.fit(x_train, y_train)
    return float(model.score(x_eval, y_eval))


def _factor_vae_votes(dataset, function, n_points, batch_size, sizes, varying, scale, rng):
    """Votes (n_factors, n_active_codes): which normalised code varies least per fixed factor.

    Random draws happen per point in the reference's order; rendering and encoding are
    batched over several points.
    """
    votes = np.zeros((sizes.size, scale.size), dtype=np.int64)
    step = _points_per_chunk(batch_size, 1)
    for start in range(0, n_points, step):
        m = min(step, n_points - start)
        index, batches = [], []
        for _ in range(m):
            k = varying[rng.randint(varying.size)]
            f = _sample_factors(dataset, batch_size, sizes, rng)
            f[:, k] = f[0, k]
            index.append(k)
            batches.append(f)
        z = function(_observations(dataset, np.concatenate(batches), rng))
        z = z[:, scale.index].reshape(m, batch_size, -1)
        local = z.var(axis=1, ddof=1) / scale.variance
        np.add.at(votes, (np.asarray(index), np.argmin(local, axis=1)), 1)
    return votes


class _Scale:
    """Global variances of the active (non-collapsed) code dimensions (none when every
    code is constant)."""

    def __init__(self, variance, collapse_tol):
        keep = _active_codes(np.sqrt(variance), collapse_tol)
        self.index = np.flatnonzero(keep)
        self.variance = variance[self.index]
        self.size = self.index.size


@validate_params(_FACTOR_VAE_PARAMS, prefer_skip_nested_validation=True)
def factor_vae_score(dataset, representation, *, batch_size=64, n_train=10000, n_eval=5000,
                     n_variance_estimate=10000, collapse_tol=0.05, random_state=None):
    """FactorVAE disentanglement score (Kim & Mnih 2018, Sec. 4).

    Codes are divided by their standard deviation over ``n_variance_estimate`` random
    observations. Each point: fix one random factor across ``batch_size`` random factor
    vectors, encode, and vote for the code with the smallest normalised variance. A
    majority-vote classifier (each code predicts the factor it most often wins for, on the
    training votes) is scored on ``n_eval`` fresh votes.

    Parameters
    ----------
    dataset : object
        Ground-truth dataset (see :func:`beta_vae_score`).
    representation : callable or fitted transformer
        ``representation(X) -> codes``, or an object whose ``transform`` is used. ``X`` is
        a numpy array; the codes may be a numpy array or a torch tensor (detached and
        copied to the CPU).
    batch_size : int, default=64
        Observations per vote.
    n_train : int, default=10000
        Training votes.
    n_eval : int, default=5000
        Evaluation votes.
    n_variance_estimate : int, default=10000
        Observations for the global variances.
    collapse_tol : float in [0, 1), default=0.05
        Code dimensions whose global standard deviation is at most ``collapse_tol`` times
        the largest are pruned before voting (Kim & Mnih prune collapsed dimensions).
    random_state : int, RandomState instance or None, default=None
        Seeds sampling.

    Returns
    -------
    score : float
        Evaluation accuracy of the majority-vote classifier, in ``[0, 1]``.

    Raises
    ------
    TypeError
        As :func:`beta_vae_score`.
    ValueError
        As :func:`beta_vae_score`.

    Warns
    -----
    UserWarning
        When every code is constant over the ``n_variance_estimate`` observations (a
        collapsed representation): the score is then its floor, 0, as in
        disentanglement_lib.

    See Also
    --------
    beta_vae_score : The linear-classifier variant.

    Notes
    -----
    The reference's pruning threshold is 0 on the scale, so it keeps every dimension: a
    zero-variance dimension then gives 0/0 = NaN, which ``argmin`` returns, and it wins
    every vote. Here collapsed dimensions are pruned (relative to the largest scale, so the
    rule is unit-free) and the argmin over the active ones is mapped back correctly.

    References
    ----------
    .. [1] Kim, H., Mnih, A. (2018). Disentangling by factorising. ICML.
       :arxiv:`1802.05983`.

    Examples
    --------
    >>> from sklearn_papers.datasets import Shapes
    >>> from sklearn_papers.metrics import factor_vae_score
    >>> data = Shapes(image_size=16)
    >>> oracle = lambda X: X.reshape(len(X), 16, 16).sum(axis=(1, 2))[:, None]
    >>> s = factor_vae_score(data, oracle, batch_size=8, n_train=50, n_eval=50,
    ...                      n_variance_estimate=200, random_state=0)
    >>> 0.0 <= s <= 1.0
    True
    """
    rng = check_random_state(random_state)
    sizes, varying = _varying_factors(dataset)
    function = _Encoder(representation)
    obs = _observations(dataset, _sample_factors(dataset, n_variance_estimate, sizes, rng), rng)
    scale = _Scale(function(obs).var(axis=0, ddof=1), collapse_tol)
    if scale.size == 0:  # disentanglement_lib returns 0 here too
        _warn_collapsed("factor_vae_score", 0.0)
        return 0.0
    train = _factor_vae_votes(dataset, function, n_train, batch_size, sizes, varying, scale,
                              rng)
    classifier = np.argmax(train, axis=0)  # factor predicted by each active code
    evaluation = _factor_vae_votes(dataset, function, n_eval, batch_size, sizes, varying,
                                   scale, rng)
    correct = evaluation[classifier, np.arange(scale.size)].sum()
    return float(correct / evaluation.sum())


def _factor_indices(indices, n_factors, name):
    """``indices`` as a set of factor indices in ``[0, n_factors)``, else a ValueError."""
    out = set()
    for k in indices:
        if not isinstance(k, Integral) or isinstance(k, bool) or not 0 <= k < n_factors:
            raise ValueError(f"{name} must hold factor indices in [0, {n_factors}) (one per "
                             f"column of dataset.sample_factors); got {list(indices)!r}.")
        out.add(int(k))
    return out


@validate_params(
    {"dataset": [_DATASET], "representation": _REPRESENTATION + [None],
     "reference": ["array-like"], "n_pairs": [Interval(Integral, 1, None, closed="left")],
     "categorical": ["array-like"], "cyclic": ["array-like"], "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def factor_step_distances(dataset, representation, reference, *, n_pairs=1000,
                          categorical=(), cyclic=(), random_state=None):
    """How far a representation moves when one ground-truth factor changes by one step.

    Draws ``n_pairs`` factor vectors from ``dataset``, then, for each factor in turn, moves
    that factor one step in every vector and renders both images of each pair. The
    distance of a factor is the mean squared difference of the pair's codes, divided by
    the codes' variance on ``reference`` (per code, averaged over the codes). Comparing
    these distances for the pixels and for a network's features shows which factors the
    features weigh more than the pixels do (Dosovitskiy & Brox 2016 compare images in such
    a feature space).

    One step of an ordinal factor is to the next value, or to the previous one at the top;
    of a ``cyclic`` factor, to the next value modulo its size; of a ``categorical``
    factor, to another value drawn uniformly.

    Parameters
    ----------
    dataset : object
        Ground-truth dataset with ``factor_sizes``, ``sample_factors(n, random_state)`` and
        ``sample_observations_from_factors(factors, random_state)``, such as
        :class:`~sklearn_papers.datasets.Shapes`. Every factor needs at least two values.
    representation : callable, fitted transformer or None
        ``representation(X) -> codes (n, n_codes)`` (numpy array or torch tensor), or an
        object whose ``transform`` is used; None measures the observations themselves.
    reference : array-like of shape (n_reference, n_features)
        Observations whose codes' variance normalises the distances (for example the
        training images), at least two.
    n_pairs : int, default=1000
        Factor vectors drawn; each gives one pair per factor.
    categorical : sequence of int, default=()
        Indices of the unordered factors (the shape of :class:`~sklearn_papers.datasets.Shapes`
        is factor 0).
    cyclic : sequence of int, default=()
        Indices of the factors whose values wrap around (an orientation), disjoint from
        ``categorical``.
    random_state : int, RandomState instance or None, default=None
        Draws the factor vectors, then the categorical steps. The same seed gives the
        same pairs for every representation.

    Returns
    -------
    distances : ndarray of shape (n_factors,), float64
        Normalised mean squared distance per factor, in ``factor_sizes`` order; 0 where the
        representation ignores the factor, about 2 where a step moves the codes as far as
        two independent reference observations lie apart.

    Raises
    ------
    TypeError
        If the dataset lacks ``factor_sizes`` (or it is not a sequence of int), or the
        representation returns None or a non-numeric result.
    ValueError
        If a factor has a single value, ``categorical`` or ``cyclic`` holds an index out
        of range or the two overlap, ``reference`` is not a 2-D finite array of at least
        two rows, the representation returns anything but a finite array of shape
        (n_observations, n_codes), or its codes are constant on ``reference``.

    See Also
    --------
    beta_vae_score : Intervenes on one factor to score disentanglement.

    References
    ----------
    .. [1] Dosovitskiy, A., Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 29.

    Examples
    --------
    >>> from sklearn_papers.datasets import Shapes
    >>> from sklearn_papers.metrics import factor_step_distances
    >>> data = Shapes(image_size=16, n_scales=3, n_orientations=4, n_positions=6)
    >>> reference = data.sample_observations_from_factors(data.sample_factors(200, 0))
    >>> area = lambda X: X.sum(axis=1, keepdims=True)
    >>> d = factor_step_distances(data, area, reference, n_pairs=100, categorical=[0],
    ...                           cyclic=[2], random_state=0)
    >>> d.shape, bool(d[1] > d[3])  # the area follows the scale, not the x position
    ((5,), True)
    """
    sizes = _check_dataset(dataset)
    if np.any(sizes < 2):
        raise ValueError(f"every factor needs at least two values to step; factor_sizes "
                         f"is {sizes.tolist()} (leave the constant factors out).")
    categorical = _factor_indices(categorical, sizes.size, "categorical")
    cyclic = _factor_indices(cyclic, sizes.size, "cyclic")
    if categorical & cyclic:
        raise ValueError(f"factors {sorted(categorical & cyclic)} are both categorical and "
                         "cyclic; give each factor one kind.")
    reference = check_array(reference, dtype="numeric", input_name="reference",
                            ensure_min_samples=2)
    rng = check_random_state(random_state)
    function = _Encoder(lambda X: X) if representation is None else _Encoder(representation)
    scale = float(function(reference).var(axis=0).mean())
    if scale == 0:
        raise ValueError("the representation's codes are constant on reference, so no "
                         "distance can be normalised; give varied reference observations.")
    base = _sample_factors(dataset, n_pairs, sizes, rng)
    codes = function(_observations(dataset, base, rng))
    distances = np.empty(sizes.size)
    for k, size in enumerate(sizes):
        moved = base.copy()
        if k in categorical:
            moved[:, k] = (base[:, k] + rng.randint(1, size, n_pairs)) % size
        elif k in cyclic:
            moved[:, k] = (base[:, k] + 1) % size
        else:
            moved[:, k] = np.where(base[:, k] < size - 1, base[:, k] + 1, base[:, k] - 1)
        moved_codes = function(_observations(dataset, moved, rng))
        distances[k] = ((moved_codes - codes) ** 2).mean() / scale
    return distances
