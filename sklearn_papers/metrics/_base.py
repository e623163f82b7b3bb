"""Shared pieces of the disentanglement scores: validation, pruning, discretisation, MI.

Everything here is numpy / scipy / scikit-learn only (no torch, no RDKit), so
``import sklearn_papers.metrics`` stays light.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_consistent_length

from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._validation import first_non_number

__all__ = []


def _as_2d(a, name, dtype):
    """Validate an array and make a 1-D one a single column."""
    item = first_non_number(a)
    if item is not None:
        raise ValueError(
            f"{name} must hold numbers; it holds {item!r}. Encode categorical values as "
            "integers first (e.g. sklearn.preprocessing.OrdinalEncoder)."
        )
    a = check_array(a, input_name=name, dtype=dtype, ensure_2d=False, ensure_min_samples=2)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got an array of shape {a.shape}.")
    return a


# Codes whose largest magnitude lies outside [2**-_SAFE_EXPONENT, 2**_SAFE_EXPONENT] are
# rescaled by an exact power of two: beyond it, squares (variances, standardisation) overflow
# to inf or underflow to 0 in float64 (2**512 ~ 1.3e154 squared overflows).
_SAFE_EXPONENT = 480


def _power_of_two_exponent(max_abs):
    """Exponent ``e`` such that ``x * 2**-e`` brings ``max_abs`` to about 1, or 0 if safe.

    Returns 0 when ``max_abs`` is 0 or already inside ``2**(+-_SAFE_EXPONENT)``, so codes of
    ordinary magnitude are never touched.
    """
    if not np.isfinite(max_abs) or max_abs == 0:
        return 0
    _, exponent = np.frexp(max_abs)
    return int(exponent) if abs(int(exponent)) > _SAFE_EXPONENT else 0


def _rescale_extreme(codes):
    """``codes`` times an exact power of two if their magnitude is extreme (else unchanged).

    Multiplying by a power of two is exact in floating point, so every score that does not
    depend on the codes' overall scale (per-code discretisation, ratios, trees,
    standardisation) is unchanged, and nothing downstream overflows.
    """
    exponent = _power_of_two_exponent(np.max(np.abs(codes)) if codes.size else 0.0)
    return np.ldexp(codes, -exponent) if exponent else codes


def _active_codes(std, collapse_tol):
    """Mask of non-collapsed codes from their standard deviations (scale-free rule)."""
    return (std > 0) & (std > collapse_tol * std.max())


def _check_codes(codes, collapse_tol):
    """Validate ``codes`` and drop collapsed (constant or near-constant) code dimensions.

    A code is collapsed when its standard deviation is at most ``collapse_tol`` times the
    largest code standard deviation (so the rule does not depend on the codes' overall
    scale). Exactly constant codes are always collapsed. Codes of extreme magnitude (beyond
    about 1e+-144, where float64 squares overflow or underflow) are first multiplied by an
    exact power of two, so the rule and the scores hold at any scale.

    Every code is dropped only when every code is exactly constant (a collapsed
    representation): the largest standard deviation is then 0. The result has no column,
    and the caller returns its floor score (:func:`_warn_collapsed`).

    Returns
    -------
    active : ndarray of shape (n_samples, n_active_codes), float64
    active_index : ndarray of int
        Column indices of the kept codes in the input.

    Raises
    ------
    ValueError
        If ``codes`` holds NaN or inf.
    """
    codes = _rescale_extreme(_as_2d(codes, "codes", np.float64))
    keep = _active_codes(codes.std(axis=0), collapse_tol)
    index = np.flatnonzero(keep)
    return codes[:, index], index


def _warn_collapsed(caller, floor):
    """Warn that every code is constant and ``caller`` returns its ``floor`` score.

    A fully collapsed representation (e.g. a beta-VAE whose KL term won) carries no
    information about any factor. disentanglement_lib returns the floor value for it (0 for
    FactorVAE and IRS explicitly; MIG, SAP and the DCI importances are 0 by construction),
    so that a sweep ranks the collapsed model last instead of stopping.
    """
    warnings.warn(
        f"{caller}: every code dimension is constant (a collapsed representation carries "
        f"no information about any factor); returning the floor score {floor}.",
        UserWarning,
        stacklevel=4,
    )


_BINNING_HINT = (
    "Bin it into a few repeated values first, e.g. with "
    "sklearn.preprocessing.KBinsDiscretizer(n_bins=20, encode='ordinal', strategy='uniform')."
)


def _check_factors(factors, *, n_samples=None, warn=True, discrete=True, n_bins=None,
                   caller=None, hint=None):
    """Validate ``factors``; label-encode each column and drop constant ones.

    Parameters
    ----------
    discrete : bool, default=True
        Require discrete factors: a factor with more distinct values than half the samples
        (continuous, or nearly unique per sample, so each value is seen about once; the same
        rule as scikit-learn's "could represent a regression problem" warning) raises.
    n_bins : int or None, default=None
        Factors with more than ``n_bins`` distinct values are first discretised into
        ``n_bins`` equal-width histogram bins over their range (see :func:`_discretize`).
    caller, hint : str or None
        Name of the score and an extra remedy, for the error message.

    Returns
    -------
    labels : ndarray of shape (n_samples, n_kept_factors), int64
        Column ``j`` holds integer labels ``0 .. n_values_j - 1``.
    values : ndarray of shape (n_samples, n_kept_factors), float64
        The kept factor columns as given (for the continuous SAP variant).
    n_values : ndarray of int
        Number of distinct values (or bins) of each kept factor.

    Raises
    ------
    ValueError
        If ``factors`` holds NaN/inf, lengths differ, every factor is constant, or (with
        ``discrete=True``) a factor is continuous or nearly unique per sample.
    """
    factors = _as_2d(factors, "factors", np.float64)
    n = factors.shape[0]
    if n_samples is not None and n != n_samples:
        raise ValueError(
            f"factors has {n} samples but codes has {n_samples}; they must "
            "have the same number of rows."
        )
    labels, n_values = [], []
    for j in range(factors.shape[1]):
        column = factors[:, j]
        uniques, inv = np.unique(column, return_inverse=True)
        if n_bins is not None and uniques.size > n_bins:
            binned = _discretize(_rescale_extreme(column.reshape(-1, 1)), n_bins, None).ravel()
            uniques, inv = np.unique(binned, return_inverse=True)
        if discrete and uniques.size > n / 2:
            who = f"{caller} needs" if caller else "This score needs"
            raise ValueError(
                f"factors column {j} has {uniques.size} distinct values for {n} samples (more "
                f"than half the samples): it looks continuous or unique per sample. {who} "
                "discrete factors whose values repeat; with about one sample per value every "
                "code looks perfectly predictive or invariant and the score is meaningless. "
                f"{_BINNING_HINT}" + (f" {hint}" if hint else "")
            )
        labels.append(inv.ravel())
        n_values.append(uniques.size)
    n_values = np.asarray(n_values)
    keep = n_values > 1
    if not keep.any():
        raise ValueError(
            f"All {factors.shape[1]} factors are constant; a constant factor has zero "
            "entropy and nothing to disentangle."
        )
    if warn and not keep.all():
        warnings.warn(
            f"Ignoring constant factor(s) at column(s) {np.flatnonzero(~keep).tolist()}: a "
            "constant factor has zero entropy and nothing to disentangle.",
            UserWarning,
            stacklevel=3,
        )
    labels = np.column_stack(labels)[:, keep].astype(np.int64)
    return labels, factors[:, keep], n_values[keep]


def _check_factors_codes(factors, codes, collapse_tol, **factor_kwargs):
    """Validate codes and factors together; ``factor_kwargs`` go to :func:`_check_factors`."""
    codes, _ = _check_codes(codes, collapse_tol)
    check_consistent_length(factors, codes)
    labels, values, n_values = _check_factors(factors, n_samples=codes.shape[0],
                                              **factor_kwargs)
    return labels, values, n_values, codes


def _discretize(codes, n_bins, bin_range):
    """Histogram discretisation of every code into ``n_bins`` integer bins.

    ``bin_range=None`` uses each code's own ``[min, max]`` (disentanglement_lib's
    ``histogram_discretizer``: ``np.digitize`` on the ``np.histogram`` edges without the
    last one); a ``(low, high)`` pair uses the same fixed edges for every code, values
    outside falling into the first or last bin.

    Returns
    -------
    bins : ndarray of shape (n_samples, n_codes), int64, values in ``[0, n_bins)``
    """
    out = np.empty(codes.shape, dtype=np.int64)
    for i in range(codes.shape[1]):
        if bin_range is None:
            edges = np.histogram_bin_edges(codes[:, i], bins=n_bins)
        else:
            edges = np.linspace(bin_range[0], bin_range[1], n_bins + 1)
        out[:, i] = np.clip(np.digitize(codes[:, i], edges[:-1]) - 1, 0, n_bins - 1)
    return out


def _one_hot(labels, n_values):
    """Sparse one-hot of several integer columns side by side, shape (n, sum(n_values))."""
    n, k = labels.shape
    offsets = np.concatenate([[0], np.cumsum(n_values)[:-1]])
    cols = (labels + offsets).ravel()
    rows = np.repeat(np.arange(n), k)
    data = np.ones(n * k)
    return sp.csr_matrix((data, (rows, cols)), shape=(n, int(np.sum(n_values)))), offsets


def _xlogx_ratio(p, q):
    """``p * log(p / q)`` with ``0 log 0 = 0``."""
    out = np.zeros_like(p)
    nz = p > 0
    out[nz] = p[nz] * np.log(p[nz] / q[nz])
    return out


def _mutual_info_matrix(code_bins, n_bins, labels, n_values):
    """Discrete mutual information (nats) of every (code, factor) pair in one sparse product.

    Equals ``sklearn.metrics.mutual_info_score(labels[:, j], code_bins[:, i])`` for every pair,
    computed from all joint histograms at once instead of a double loop.

    Returns
    -------
    mi : ndarray of shape (n_codes, n_factors)
    entropy : ndarray of shape (n_factors,)
        Entropy (nats) of each factor.
    """
    n, n_codes = code_bins.shape
    a, _ = _one_hot(code_bins, np.full(n_codes, n_bins))
    f, offsets = _one_hot(labels, n_values)
    joint = np.asarray((a.T @ f).todense()) / n  # (n_codes * n_bins, sum n_values)
    p_code = np.asarray(a.sum(axis=0)).ravel() / n
    p_fac = np.asarray(f.sum(axis=0)).ravel() / n
    terms = _xlogx_ratio(joint, np.outer(p_code, p_fac))
    per_code = terms.reshape(n_codes, n_bins, -1).sum(axis=1)  # (n_codes, sum n_values)
    mi = np.add.reduceat(per_code, offsets, axis=1)
    entropy = -np.add.reduceat(_xlogx_ratio(p_fac, np.ones_like(p_fac)), offsets)
    return np.maximum(mi, 0.0), entropy


def _top_two_gap(matrix):
    """Per column: largest minus second largest entry (second is 0 with one row)."""
    s = np.sort(matrix, axis=0)[::-1]
    second = s[1] if s.shape[0] > 1 else np.zeros(s.shape[1])
    return s[0] - second


def _entropy_base(p, base):
    """Entropy of each column of ``p`` (normalised to sum 1) in log base ``base``."""
    p = p / p.sum(axis=0, keepdims=True)
    h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=0)
    return h / np.log(base)
