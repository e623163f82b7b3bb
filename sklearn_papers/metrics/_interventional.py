"""Interventional disentanglement scores: the BetaVAE (Higgins 2017) and FactorVAE (Kim 2018) scores.

They need a ground-truth dataset that can render observations for chosen factors: any object
with ``factor_sizes`` (sequence of int), ``sample_factors(n, random_state)`` returning an int
array (n, n_factors) and ``sample_observations_from_factors(factors, random_state)`` returning
an array (n, n_features), such as :class:`sklearn_papers.datasets.Shapes`.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from sklearn_papers.utils._sklearn_compat import HasMethods, Interval, validate_params

__all__ = ["beta_vae_score", "factor_vae_score"]

_DATASET = HasMethods(["sample_factors", "sample_observations_from_factors"])
_REPRESENTATION = [callable, HasMethods(["transform"])]
_CHUNK = 8192  # observations per representation call


def _as_function(representation):
    if hasattr(representation, "transform"):
        return representation.transform
    return representation


def _represent(function, observations):
    """Codes of ``observations``, computed in chunks, as float64 (n, n_codes)."""
    out = [np.asarray(function(observations[i:i + _CHUNK]), dtype=np.float64)
           for i in range(0, observations.shape[0], _CHUNK)]
    codes = np.concatenate(out, axis=0)
    if codes.ndim == 1:
        codes = codes.reshape(-1, 1)
    if not np.all(np.isfinite(codes)):
        raise ValueError("The representation returned NaN or inf codes.")
    return codes


def _varying_factors(dataset):
    sizes = np.asarray(dataset.factor_sizes, dtype=int)
    varying = np.flatnonzero(sizes > 1)
    if varying.size == 0:
        raise ValueError("Every factor of the dataset is constant (factor_sizes all 1); "
                         "there is nothing to intervene on.")
    return sizes, varying


def _points_per_chunk(batch_size, per_point):
    return max(1, _CHUNK // (batch_size * per_point))


def _beta_vae_features(dataset, function, n_points, batch_size, varying, rng):
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
            f1 = dataset.sample_factors(batch_size, rng)
            f2 = dataset.sample_factors(batch_size, rng)
            f2[:, k] = f1[:, k]
            labels.append(k)
            first.append(f1)
            second.append(f2)
        x = dataset.sample_observations_from_factors(np.concatenate(first + second), rng)
        z = _represent(function, x)
        diff = np.abs(z[: m * batch_size] - z[m * batch_size:])
        feats.append(diff.reshape(m, batch_size, -1).mean(axis=1))
    return np.concatenate(feats), np.asarray(labels)


@validate_params(
    {"dataset": [_DATASET], "representation": _REPRESENTATION,
     "batch_size": [Interval(Integral, 1, None, closed="left")],
     "n_train": [Interval(Integral, 2, None, closed="left")],
     "n_eval": [Interval(Integral, 1, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
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
        used.
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
    ValueError
        If every factor is constant or the representation returns NaN/inf.

    See Also
    --------
    factor_vae_score : The majority-vote variant, robust to rotations of one factor.

    Notes
    -----
    Only non-constant factors (size > 1) are chosen for intervention (the reference would
    also pick a size-1 factor, which is indistinguishable by construction).

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
    _, varying = _varying_factors(dataset)
    function = _as_function(representation)
    x_train, y_train = _beta_vae_features(dataset, function, n_train, batch_size, varying, rng)
    x_eval, y_eval = _beta_vae_features(dataset, function, n_eval, batch_size, varying, rng)
    if np.unique(y_train).size < 2:
        return float(np.mean(y_eval == y_train[0]))
    model = LogisticRegression(random_state=rng.randint(np.iinfo(np.int32).max))
    model.fit(x_train, y_train)
    return float(model.score(x_eval, y_eval))


def _factor_vae_votes(dataset, function, n_points, batch_size, varying, scale, rng):
    """Votes (n_factors, n_active_codes): which normalised code varies least per fixed factor.

    Random draws happen per point in the reference's order; rendering and encoding are
    batched over several points.
    """
    votes = np.zeros((len(dataset.factor_sizes), scale.size), dtype=np.int64)
    step = _points_per_chunk(batch_size, 1)
    for start in range(0, n_points, step):
        m = min(step, n_points - start)
        index, batches = [], []
        for _ in range(m):
            k = varying[rng.randint(varying.size)]
            f = dataset.sample_factors(batch_size, rng)
            f[:, k] = f[0, k]
            index.append(k)
            batches.append(f)
        z = _represent(function, dataset.sample_observations_from_factors(
            np.concatenate(batches), rng))
        z = z[:, scale.index].reshape(m, batch_size, -1)
        local = z.var(axis=1, ddof=1) / scale.variance
        np.add.at(votes, (np.asarray(index), np.argmin(local, axis=1)), 1)
    return votes


class _Scale:
    """Global variances of the active (non-collapsed) code dimensions."""

    def __init__(self, variance, collapse_tol):
        std = np.sqrt(variance)
        keep = (std > 0) & (std > collapse_tol * std.max())
        if not keep.any():
            raise ValueError(f"All {variance.size} code dimensions are constant or collapsed on "
                             "the dataset; there is no code to score.")
        self.index = np.flatnonzero(keep)
        self.variance = variance[self.index]
        self.size = self.index.size


@validate_params(
    {"dataset": [_DATASET], "representation": _REPRESENTATION,
     "batch_size": [Interval(Integral, 2, None, closed="left")],
     "n_train": [Interval(Integral, 1, None, closed="left")],
     "n_eval": [Interval(Integral, 1, None, closed="left")],
     "n_variance_estimate": [Interval(Integral, 2, None, closed="left")],
     "collapse_tol": [Interval(Real, 0, 1, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
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
        ``representation(X) -> codes``, or an object whose ``transform`` is used.
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
    ValueError
        If every factor is constant, every code is collapsed, or the representation returns
        NaN/inf.

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
    _, varying = _varying_factors(dataset)
    function = _as_function(representation)
    obs = dataset.sample_observations_from_factors(
        dataset.sample_factors(n_variance_estimate, rng), rng)
    scale = _Scale(_represent(function, obs).var(axis=0, ddof=1), collapse_tol)
    train = _factor_vae_votes(dataset, function, n_train, batch_size, varying, scale, rng)
    classifier = np.argmax(train, axis=0)  # factor predicted by each active code
    evaluation = _factor_vae_votes(dataset, function, n_eval, batch_size, varying, scale, rng)
    correct = evaluation[classifier, np.arange(scale.size)].sum()
    return float(correct / evaluation.sum())
