"""Shared pieces of the disentanglement scores: validation, pruning, discretisation, MI.

Everything here is numpy / scipy / scikit-learn only (no torch, no RDKit), so
``import sklearn_papers.metrics`` stays light.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_consistent_length

__all__ = []


def _as_2d(a, name, dtype):
    """Validate an array and make a 1-D one a single column."""
    a = check_array(a, input_name=name, dtype=dtype, ensure_2d=False, ensure_min_samples=2)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got an array of shape {a.shape}.")
    return a


def _check_codes(codes, collapse_tol):
    """Validate ``codes`` and drop collapsed (constant or near-constant) code dimensions.

    A code is collapsed when its standard deviation is at most ``collapse_tol`` times the
    largest code standard deviation (so the rule does not depend on the codes' overall
    scale). Exactly constant codes are always collapsed.

    Returns
    -------
    active : ndarray of shape (n_samples, n_active_codes), float64
    active_index : ndarray of int
        Column indices of the kept codes in the input.

    Raises
    ------
    ValueError
        If ``codes`` holds NaN or inf, or every code dimension is collapsed.
    """
    codes = _as_2d(codes, "codes", np.float64)
    std = codes.std(axis=0)
    top = std.max()
    keep = (std > 0) & (std > collapse_tol * top)
    if not keep.any():
        raise ValueError(
            f"All {codes.shape[1]} code dimensions are constant or collapsed (standard "
            f"deviation <= collapse_tol={collapse_tol!r} x the largest one); there is no "
            "code to score."
        )
    index = np.flatnonzero(keep)
    return codes[:, index], index


def _check_factors(factors, *, n_samples=None, warn=True):
    """Validate discrete ``factors``; label-encode each column and drop constant ones.

    Returns
    -------
    labels : ndarray of shape (n_samples, n_kept_factors), int64
        Column ``j`` holds integer labels ``0 .. n_values_j - 1``.
    values : ndarray of shape (n_samples, n_kept_factors), float64
        The kept factor columns as given (for the continuous SAP variant).
    n_values : ndarray of int
        Number of distinct values of each kept factor.

    Raises
    ------
    ValueError
        If ``factors`` holds NaN/inf, lengths differ, or every factor is constant.
    """
    factors = _as_2d(factors, "factors", np.float64)
    if n_samples is not None and factors.shape[0] != n_samples:
        raise ValueError(
            f"factors has {factors.shape[0]} samples but codes has {n_samples}; they must "
            "have the same number of rows."
        )
    labels, n_values = [], []
    for j in range(factors.shape[1]):
        _, inv = np.unique(factors[:, j], return_inverse=True)
        labels.append(inv.ravel())
        n_values.append(int(inv.max()) + 1)
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


def _check_factors_codes(factors, codes, collapse_tol):
    codes, _ = _check_codes(codes, collapse_tol)
    check_consistent_length(factors, codes)
    labels, values, n_values = _check_factors(factors, n_samples=codes.shape[0])
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
