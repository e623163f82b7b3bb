"""MinMax (continuous Tanimoto) distances between non-negative count or real fingerprints,
and nearest-neighbour Tanimoto similarities between sets of bit fingerprints.
numpy and scikit-learn only."""

import numpy as np

from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["minmax_distances", "nearest_tanimoto_similarity"]


@with_numpy_inputs
def minmax_distances(X, Y=None):
    """MinMax distances, ``1 - sum_k min(x_k, y_k) / sum_k max(x_k, y_k)``, between rows.

    The continuous generalisation of the Tanimoto (Jaccard) distance of bit vectors, which
    it equals on 0/1 rows; Duvenaud et al. (2015, Sec. 3) compare neural fingerprints,
    whose entries are real, with ECFP bit vectors by it.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Non-negative rows (fingerprints, counts).
    Y : array-like of shape (n_samples_Y, n_features) or None, default=None
        Non-negative rows; None: ``X`` itself.

    Returns
    -------
    distances : ndarray of shape (n_samples_X, n_samples_Y), float64 in [0, 1]
        0 for identical rows (two all-zero rows included), 1 for rows with no feature in
        common. For ``Y=None`` it is symmetric with a zero diagonal;
        ``scipy.spatial.distance.squareform(distances, checks=False)`` gives the condensed
        form of ``pdist``.

    Raises
    ------
    ValueError
        If an array is empty, not 2-D, holds NaN, inf or a negative value (the message
        names it), or ``X`` and ``Y`` have different numbers of features.

    References
    ----------
    .. [1] Duvenaud, D., Maclaurin, D., Aguilera-Iparraguirre, J., et al. (2015).
       Convolutional networks on graphs for learning molecular fingerprints. NeurIPS 28.
    .. [2] Ralaivola, L., Swamidass, S. J., Saigo, H., Baldi, P. (2005). Graph kernels for
       chemical informatics. Neural Networks 18(8).

    Examples
    --------
    >>> from sklearn_papers.metrics import minmax_distances
    >>> minmax_distances([[1, 1, 0], [1, 0, 0]], [[1, 0, 1]])
    array([[0.66666667],
           [0.5       ]])
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    Y = X if Y is None else check_array(Y, dtype=np.float64, input_name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; MinMax "
                         "distances compare rows of the same length")
    for name, A in (("X", X), ("Y", Y)):
        if (A < 0).any():
            row = int(np.argwhere(A < 0)[0, 0])
            raise ValueError(f"{name}[{row}] holds a negative value; MinMax distances take "
                             "non-negative rows (counts, bits, non-negative activations)")
    out = np.empty((len(X), len(Y)))
    y_max = Y.max(axis=1)
    for i, a in enumerate(X):  # row by row: memory of one (n_samples_Y, n_features) block
        # Each pair in units of its largest entry (the distance does not depend on the
        # unit): sums of entries near 1e308 do not overflow.
        unit = np.maximum(a.max(), y_max)
        unit = np.ldexp(1.0, np.frexp(np.where(unit > 0, unit, 1.0))[1] - 1)[:, None]  # exact
        high = (np.maximum(a, Y) / unit).sum(1)
        low = (np.minimum(a, Y) / unit).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i] = np.where(high > 0, 1.0 - low / high, 0.0)
    return out


@with_numpy_inputs
def nearest_tanimoto_similarity(X, Y, *, chunk_size=512):
    """Per row of ``X``, its largest Tanimoto similarity to a row of ``Y`` (bit vectors).

    The Tanimoto (Jaccard) similarity of two bit vectors is the number of bits set in both
    over the number set in either. The largest over ``Y`` measures how far each molecule of
    ``X`` is from a reference set, e.g. a pretraining set; Rong et al. (2020) motivate
    pretraining with such a gap between pretraining and downstream molecules.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Bit vectors: bool, or numbers that are all 0 or 1 (e.g. the uint8 output of
        :class:`~sklearn_papers.chem.CircularFingerprint`).
    Y : array-like of shape (n_samples_Y, n_features)
        The reference bit vectors.
    chunk_size : int, default=512
        Rows of ``X`` compared at once: memory of ``chunk_size * n_samples_Y`` floats.
        It does not change the result.

    Returns
    -------
    similarity : ndarray of shape (n_samples_X,), float64 in [0, 1]
        1 where a row of ``Y`` equals the row of ``X``; two all-zero rows have similarity 1.
        Equals ``1 - minmax_distances(X, Y).min(axis=1)`` on bits, at far less memory and
        time for large sets.

    Raises
    ------
    ValueError
        If an array is empty, not 2-D, holds a value other than 0 or 1 (the message names
        the row; use :func:`minmax_distances` for counts or real values), ``X`` and ``Y``
        have different numbers of features, or ``chunk_size`` is not a positive integer.

    References
    ----------
    .. [1] Rong, Y., Bian, Y., Xu, T., et al. (2020). Self-supervised graph transformer on
       large-scale molecular data. NeurIPS 33.

    Examples
    --------
    >>> from sklearn_papers.metrics import nearest_tanimoto_similarity
    >>> nearest_tanimoto_similarity([[1, 1, 0], [0, 0, 1]], [[1, 0, 0], [1, 1, 1]])
    array([0.66666667, 0.33333333])
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    X = check_array(X, dtype=None, input_name="X")
    Y = check_array(Y, dtype=None, input_name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; Tanimoto "
                         "similarities compare bit vectors of the same length")
    for name, A in (("X", X), ("Y", Y)):
        bad = (A != 0) & (A != 1)
        if bad.any():
            row = int(np.argwhere(bad)[0, 0])
            raise ValueError(f"{name}[{row}] holds a value other than 0 or 1; Tanimoto "
                             "similarities take bit vectors (use minmax_distances for "
                             "counts or real values)")
    # float32 products count the common bits exactly (up to 2**24 features), fast
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    n_y = Y32.sum(axis=1, dtype=np.float64)
    out = np.empty(len(X32))
    for start in range(0, len(X32), chunk_size):
        a = X32[start:start + chunk_size]
        inter = (a @ Y32.T).astype(np.float64)
        union = a.sum(axis=1, dtype=np.float64)[:, None] + n_y[None, :] - inter
        sim = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
        out[start:start + chunk_size] = sim.max(axis=1)
    return out
