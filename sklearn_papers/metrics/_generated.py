"""Diversity and realism of generated samples against real rows: spread, coverage,
precision and distance by nearest neighbours, and a classifier's two-sample test. numpy,
scipy and scikit-learn only."""

import numbers

import numpy as np

from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["classifier_two_sample_score", "sample_quality"]


def _knn_radius(reference, k):
    """Distance of every row of ``reference`` to its ``k``-th nearest other row."""
    from scipy.spatial.distance import cdist

    d = np.sort(cdist(reference, reference), axis=1)
    return d[:, min(k, len(reference) - 1)]


@with_numpy_inputs
def sample_quality(samples, real_train, real_test, *, k=5):
    """Diversity and realism of generated rows against the real rows they imitate.

    Parameters
    ----------
    samples : array-like of shape (n_samples, n_features)
        Generated rows (e.g. the replayed images of one class, flattened).
    real_train : array-like of shape (n_train, n_features)
        Real rows the generator learnt from; the reference of every measure.
    real_test : array-like of shape (n_test, n_features)
        Real rows it did not see, for ``coverage`` and as the scale of ``distance``.
    k : int, default=5
        Neighbour of the real rows whose distance is the radius of their ball; at most
        ``n_train``.

    Returns
    -------
    quality : dict of str to float
        ``"spread"``: mean per-feature standard deviation of the samples over that of
        ``real_train`` (1 for samples as varied as the data, 0 for one repeated row).
        ``"coverage"``: fraction of the test rows that have a sample at most as far as
        their ``k``-th nearest training row: real rows the generator reaches (after
        Naeem et al. 2020). ``"precision"``: fraction of samples inside the
        ``k``-nearest-neighbour ball of some training row: rows that look like real ones
        (after Kynkaanniemi et al. 2019). ``"distance"``: mean distance of a sample to its
        nearest training row over that of a test row (1 for samples as close to the data
        as new real rows). Distances are Euclidean.

    Raises
    ------
    ValueError
        If an array is empty, not 2-D or holds NaN or inf (the message names it), the
        three have different numbers of features, ``real_train`` is constant, every
        ``real_test`` row is also in ``real_train`` or ``k`` is not an int in
        ``[1, n_train]``.

    References
    ----------
    .. [1] Naeem, M. F., Oh, S. J., Uh, Y., Choi, Y., Yoo, J. (2020). Reliable fidelity and
       diversity metrics for generative models. ICML.
    .. [2] Kynkaanniemi, T., Karras, T., Laine, S., Lehtinen, J., Aila, T. (2019). Improved
       precision and recall metric for assessing generative models. NeurIPS 32.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import sample_quality
    >>> rng = np.random.RandomState(0)
    >>> real = rng.rand(60, 4)
    >>> quality = sample_quality(real[:30], real[:30], real[30:])
    >>> quality["precision"], quality["distance"]
    (1.0, 0.0)
    """
    from scipy.spatial.distance import cdist

    arrays = {}
    for name, value in (("samples", samples), ("real_train", real_train),
                        ("real_test", real_test)):
        arrays[name] = check_array(value, dtype=(np.float64, np.float32), input_name=name,
                                   ensure_min_samples=0)
        if not len(arrays[name]):
            raise ValueError(f"{name} is empty: pass at least one row")
    widths = {name: a.shape[1] for name, a in arrays.items()}
    if len(set(widths.values())) > 1:
        raise ValueError(f"samples, real_train and real_test must have the same number of "
                         f"features, got {widths}")
    samples, real_train, real_test = arrays.values()
    if (not isinstance(k, numbers.Integral) or isinstance(k, bool)
            or not 1 <= k <= len(real_train)):
        raise ValueError(f"k must be an int in [1, n_train={len(real_train)}], got {k!r}")
    # Every measure is unchanged when all rows are multiplied by one factor, so the rows
    # are divided by their largest magnitude: values near 1e200 do not overflow in the
    # squared distances, nor values near 1e-200 underflow.
    magnitude = max(np.abs(a).max() for a in (samples, real_train, real_test))
    if magnitude > 0:  # a power of two: dividing by it is exact
        magnitude = np.ldexp(1.0, int(np.frexp(magnitude)[1]) - 1)
        samples, real_train, real_test = (a / magnitude
                                          for a in (samples, real_train, real_test))
    scale = real_train.std(axis=0).mean()
    if scale == 0:
        raise ValueError("real_train is constant: spread is a ratio to its standard "
                         "deviation, so pass real rows that vary")
    spread = float(samples.std(axis=0).mean() / scale)
    test_to_train = np.sort(cdist(real_test, real_train), axis=1)
    radius_test = test_to_train[:, k - 1]
    if test_to_train[:, 0].max() == 0:
        raise ValueError("every real_test row is also a real_train row: 'distance' is a "
                         "ratio to the test rows' distance from the training rows, so pass "
                         "real rows the generator did not learn from as real_test")
    to_train = cdist(samples, real_train)
    distance = float(to_train.min(axis=1).mean() / test_to_train[:, 0].mean())
    coverage = float(np.mean(cdist(real_test, samples).min(axis=1) <= radius_test))
    radius_train = _knn_radius(real_train, k)
    precision = float(np.mean((to_train <= radius_train).any(axis=1)))
    return {"spread": spread, "coverage": coverage, "precision": precision,
            "distance": distance}


@with_numpy_inputs
def classifier_two_sample_score(real, samples, *, estimator=None, cv=5, random_state=None):
    """How well a classifier tells generated rows from real ones (a two-sample test).

    The rows are labelled 0 (``real``) and 1 (``samples``) and a classifier is
    cross-validated on them (``StratifiedKFold`` with shuffling); the score is its mean
    balanced accuracy over the folds. 0.5: the samples cannot be told from the real rows;
    1: every one can.

    Parameters
    ----------
    real : array-like of shape (n_real, n_features)
        Real rows.
    samples : array-like of shape (n_samples, n_features)
        Generated rows (e.g. replayed images, flattened).
    estimator : classifier or None, default=None
        The classifier (cloned per fold); None: ``sklearn.svm.SVC()`` (RBF kernel).
    cv : int, default=5
        Folds; each side needs at least ``cv`` rows.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds' shuffling.

    Returns
    -------
    score : float
        Mean balanced accuracy over the folds, in [0, 1].

    Raises
    ------
    ValueError
        If an array is not 2-D or holds NaN or inf (the message names it), the two have
        different numbers of features, or a side has fewer than ``cv`` rows.
    TypeError
        If ``estimator`` is not a classifier.

    References
    ----------
    .. [1] Lopez-Paz, D. and Oquab, M. (2017). Revisiting classifier two-sample tests.
       ICLR.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import classifier_two_sample_score
    >>> rng = np.random.RandomState(0)
    >>> real = rng.randn(100, 2)
    >>> classifier_two_sample_score(real, real + 5, random_state=0)
    1.0
    """
    from sklearn.base import is_classifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC

    if isinstance(cv, bool) or not isinstance(cv, numbers.Integral) or cv < 2:
        raise ValueError(f"cv must be an int of at least 2 (folds), got {cv!r}")
    if estimator is not None and not is_classifier(estimator):
        raise TypeError(f"estimator must be a classifier (it separates real rows from "
                        f"samples), got {type(estimator).__name__}; pass e.g. "
                        f"LogisticRegression() or leave it None for an RBF SVC")
    real = check_array(real, dtype=(np.float64, np.float32), input_name="real")
    samples = check_array(samples, dtype=(np.float64, np.float32), input_name="samples")
    if real.shape[1] != samples.shape[1]:
        raise ValueError(f"real and samples must have the same number of features, got "
                         f"{real.shape[1]} and {samples.shape[1]}")
    if min(len(real), len(samples)) < cv:
        raise ValueError(f"real ({len(real)} rows) and samples ({len(samples)} rows) need "
                         f"at least cv={cv} rows each, one per fold")
    rows = np.concatenate([real, samples])
    is_sample = np.r_[np.zeros(len(real)), np.ones(len(samples))]
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    return float(cross_val_score(SVC() if estimator is None else estimator, rows, is_sample,
                                 cv=folds, scoring="balanced_accuracy").mean())
