"""Sample-based disentanglement scores: MIG, DCI, SAP, modularity/explicitness and IRS.

Each takes ground-truth ``factors`` of shape (n_samples, n_factors) and ``codes`` of shape
(n_samples, n_codes) for the same samples. Definitions and defaults follow the widely used
reference implementation (google-research disentanglement_lib, Locatello et al. 2019); the
places where we deliberately do the robust thing instead are listed in each Notes section.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

from sklearn_papers.metrics._base import (
    _check_factors_codes,
    _discretize,
    _entropy_base,
    _mutual_info_matrix,
    _top_two_gap,
    _warn_collapsed,
)
from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import HasMethods, Interval, validate_params

__all__ = ["dci", "irs", "modularity_explicitness", "mutual_info_gap", "sap_score"]

_BIN_RANGE = [None, tuple, list]
_COMMON = {
    "factors": ["array-like"],
    "codes": ["array-like"],
    "collapse_tol": [Interval(Real, 0, 1, closed="left")],
}
_N_BINS = [Interval(Integral, 2, None, closed="left")]
_TEST_SIZE = [Interval(Real, 0, 1, closed="neither")]

# Parameter constraints of each score, shared with make_disentanglement_scorer, which
# checks a scorer's keyword arguments against them when the scorer is made.
_MIG_PARAMS = {**_COMMON, "n_bins": _N_BINS, "bin_range": _BIN_RANGE}
_DCI_PARAMS = {**_COMMON, "estimator": [None, HasMethods(["fit", "predict"])],
               "test_size": _TEST_SIZE, "random_state": ["random_state"]}
_SAP_PARAMS = {**_COMMON, "continuous_factors": ["boolean"], "test_size": _TEST_SIZE,
               "random_state": ["random_state"]}
_MODULARITY_PARAMS = {**_COMMON, "n_bins": _N_BINS, "bin_range": _BIN_RANGE,
                      "test_size": _TEST_SIZE, "random_state": ["random_state"]}
_IRS_PARAMS = {**_COMMON, "diff_quantile": [Interval(Real, 0, 1, closed="right")],
               "n_bins": [None, Interval(Integral, 2, None, closed="left")]}


def _check_bin_range(bin_range):
    if bin_range is None:
        return None
    if len(bin_range) != 2 or not np.all(np.isfinite(bin_range)) or bin_range[0] >= bin_range[1]:
        raise ValueError(f"bin_range must be None or a finite (low, high) with low < high, got "
                         f"{bin_range!r}.")
    return float(bin_range[0]), float(bin_range[1])


def _check_classifier(estimator):
    """Raise unless ``estimator`` is None or a classifier (``dci`` predicts class labels)."""
    if estimator is not None and not is_classifier(estimator):
        kind = "a regressor" if is_regressor(estimator) else "not a classifier"
        raise ValueError(
            f"dci needs a classifier as estimator (each factor is predicted as class "
            f"labels and informativeness is accuracy); got {type(estimator).__name__}, "
            f"{kind}. For continuous factors, bin them (e.g. with "
            "sklearn.preprocessing.KBinsDiscretizer(encode='ordinal')) and use a classifier "
            "exposing feature_importances_ or coef_."
        )
    return estimator


def _split(n_samples, test_size, random_state):
    rng = check_random_state(random_state)
    return train_test_split(np.arange(n_samples), test_size=test_size,
                            random_state=rng.randint(np.iinfo(np.int32).max))


@validate_params(_MIG_PARAMS, prefer_skip_nested_validation=True)
def mutual_info_gap(factors, codes, *, n_bins=20, bin_range=None, collapse_tol=1e-6):
    """Mutual information gap (MIG) of a representation.

    For each factor :math:`v_k`, the gap between the two largest discrete mutual
    informations :math:`I(z_j; v_k)` over codes, divided by the factor's entropy, averaged
    over factors (Chen et al. 2018, Eq. 6)::

        MIG = mean_k (I(z_(1); v_k) - I(z_(2); v_k)) / H(v_k)

    Codes are discretised into ``n_bins`` histogram bins; mutual information is in nats.

    Parameters
    ----------
    factors : array-like of shape (n_samples, n_factors)
        Discrete ground-truth factors (any numeric values; each column is label-encoded).
        A 1-D array is one factor. A factor with more distinct values than half the
        samples (continuous, or unique per sample) raises: bin it first.
    codes : array-like of shape (n_samples, n_codes)
        Representation of the same samples (e.g. posterior means). A 1-D array is one code.
    n_bins : int, default=20
        Histogram bins per code.
    bin_range : (float, float) or None, default=None
        ``None`` bins each code over its own ``[min, max]`` (the reference); a ``(low,
        high)`` pair uses the same fixed edges for every code (values outside go to the
        end bins), so the code's scale matters.
    collapse_tol : float in [0, 1), default=1e-6
        Codes whose standard deviation is at most ``collapse_tol`` times the largest code
        standard deviation are treated as collapsed and dropped before scoring.

    Returns
    -------
    score : float
        In ``[0, 1]``; 1 when every factor is captured by exactly one code.

    Raises
    ------
    ValueError
        If factors or codes hold NaN/inf, their lengths differ, every factor is constant,
        or a factor is continuous or nearly unique per sample (more distinct values than
        half the samples; the message names the column).

    Warns
    -----
    UserWarning
        When every code is constant (a collapsed representation): the score is then its
        floor, 0, as in disentanglement_lib, instead of an error, so that a sweep ranks
        the collapsed model last.

    See Also
    --------
    modularity_explicitness : Also built on the discrete mutual-information matrix.
    dci : Importance-based disentanglement and completeness.

    Notes
    -----
    Robust where the reference is fragile: constant factors (zero entropy, a 0/0 gap) are
    dropped with a warning instead of producing NaN; with a single code the second-best
    mutual information is taken as 0 (the reference indexes a second code and fails); and
    collapsed codes are dropped, so a dead latent whose tiny noise is stretched over all
    bins by per-code discretisation cannot act as the runner-up. The reference takes the
    factors as given discrete labels (only the codes are binned); a continuous or
    unique-per-sample factor, whose plug-in entropy and mutual information are meaningless,
    is rejected rather than scored. Codes of extreme magnitude (beyond about 1e+-144) are
    rescaled by an exact power of two, which changes no score.

    References
    ----------
    .. [1] Chen, R. T. Q., Li, X., Grosse, R., Duvenaud, D. (2018). Isolating sources of
       disentanglement in variational autoencoders. NeurIPS. :arxiv:`1802.04942`.
    .. [2] Locatello, F. et al. (2019). Challenging common assumptions in the unsupervised
       learning of disentangled representations. ICML. :arxiv:`1811.12359`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import mutual_info_gap
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 4, size=(500, 2))
    >>> round(mutual_info_gap(factors, factors[:, ::-1] * 2.0), 2)  # a perfect code
    0.99
    >>> round(mutual_info_gap(factors, rng.normal(size=(500, 2))), 2)  # an unrelated one
    0.0
    """
    bin_range = _check_bin_range(bin_range)
    labels, _, n_values, codes = _check_factors_codes(factors, codes, collapse_tol,
                                                      caller="mutual_info_gap")
    if codes.shape[1] == 0:
        _warn_collapsed("mutual_info_gap", 0.0)
        return 0.0
    mi, entropy = _mutual_info_matrix(_discretize(codes, n_bins, bin_range), n_bins, labels,
                                      n_values)
    return float(np.clip(np.mean(_top_two_gap(mi) / entropy), 0.0, 1.0))


@validate_params(_DCI_PARAMS, prefer_skip_nested_validation=True)
def dci(factors, codes, *, estimator=None, test_size=1 / 3, random_state=None,
        collapse_tol=1e-6):
    """Disentanglement, completeness and informativeness (DCI) of a representation.

    One classifier per factor predicts the factor from all codes; its feature importances
    fill an importance matrix :math:`R` of shape (n_codes, n_factors) (Eastwood & Williams
    2018, Sec. 2). Disentanglement is ``1 - H_K(P_i.)`` per code (entropy of the code's
    normalised importance row in base n_factors), averaged with weights ``sum_k R_ik /
    sum R``; completeness is ``1 - H_D(P_.k)`` per factor (base n_codes), averaged with
    weights ``sum_i R_ik / sum R``; informativeness is the mean held-out accuracy.

    Parameters
    ----------
    factors : array-like of shape (n_samples, n_factors)
        Discrete ground-truth factors, used as class labels. A factor with more distinct
        values than half the samples (continuous, or unique per sample) raises.
    codes : array-like of shape (n_samples, n_codes)
        Representation of the same samples.
    estimator : classifier or None, default=None
        Cloned per factor; must be a classifier (``sklearn.base.is_classifier``) and expose
        ``feature_importances_`` or ``coef_`` after fit. ``None`` is
        ``GradientBoostingClassifier()`` (the reference's gradient-boosted trees).
        Regressors (Eastwood & Williams's LASSO and random-forest regressors for continuous
        factors) are not supported: bin continuous factors and use a classifier.
    test_size : float in (0, 1), default=1/3
        Held-out fraction for informativeness (the reference uses 10,000 train and 5,000
        test points).
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the default estimator.
    collapse_tol : float in [0, 1), default=1e-6
        See :func:`mutual_info_gap`.

    Returns
    -------
    scores : dict
        ``{"disentanglement": float, "completeness": float, "informativeness": float}``,
        each in ``[0, 1]``; informativeness is test accuracy (the reference's
        ``informativeness_test``).

    Raises
    ------
    ValueError
        As :func:`mutual_info_gap`, if the estimator is not a classifier, or if it exposes
        no importances.

    Warns
    -----
    UserWarning
        With a single (non-constant) factor: disentanglement is then 1 for any code, even
        a random one. When every code is constant (a collapsed representation): the
        scores are then their floor, disentanglement and completeness 0 and
        informativeness the held-out accuracy of predicting each factor's most frequent
        training value (what the classifiers do with constant inputs, as in
        disentanglement_lib).

    See Also
    --------
    mutual_info_gap : Information-theoretic gap score.

    Notes
    -----
    With one active code, completeness is 1 (all importance sits on that code); with one
    factor, disentanglement is 1 for any code (with a warning, as it then carries no
    information); the reference takes a logarithm in base 1 there. A factor
    with a single class in the training split gets zero importances and is predicted as
    that class.

    References
    ----------
    .. [1] Eastwood, C., Williams, C. K. I. (2018). A framework for the quantitative
       evaluation of disentangled representations. ICLR.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_papers.metrics import dci
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 3, size=(300, 2))
    >>> s = dci(factors, factors + 0.0, estimator=DecisionTreeClassifier(), random_state=0)
    >>> {k: round(v, 2) for k, v in s.items()}
    {'disentanglement': 1.0, 'completeness': 1.0, 'informativeness': 1.0}
    """
    _check_classifier(estimator)
    labels, _, _, codes = _check_factors_codes(factors, codes, collapse_tol, caller="dci")
    if codes.shape[1] == 0:
        # the classifiers see constant inputs: each predicts its most frequent training class
        train, test = _split(codes.shape[0], test_size, random_state)
        accuracy = [np.mean(labels[test, k] == np.bincount(labels[train, k]).argmax())
                    for k in range(labels.shape[1])]
        floor = {"disentanglement": 0.0, "completeness": 0.0,
                 "informativeness": float(np.mean(accuracy))}
        _warn_collapsed("dci", floor)
        return floor
    if labels.shape[1] == 1:
        warnings.warn(
            "dci: with a single factor every code's importance falls on that factor, so "
            "disentanglement is 1 for any code, even a random one; only completeness and "
            "informativeness are informative here.",
            UserWarning,
            stacklevel=2,
        )
    train, test = _split(codes.shape[0], test_size, random_state)
    rng = check_random_state(random_state)
    if estimator is None:
        estimator = GradientBoostingClassifier(random_state=rng.randint(np.iinfo(np.int32).max))
    n_codes, n_factors = codes.shape[1], labels.shape[1]
    importance = np.zeros((n_codes, n_factors))
    accuracy = np.zeros(n_factors)
    for k in range(n_factors):
        y_train, y_test = labels[train, k], labels[test, k]
        if np.unique(y_train).size < 2:
            accuracy[k] = np.mean(y_test == y_train[0])
            continue
        model = clone(estimator).fit(codes[train], y_train)
        if hasattr(model, "feature_importances_"):
            imp = np.abs(np.asarray(model.feature_importances_, dtype=float))
        elif hasattr(model, "coef_"):
            imp = np.abs(np.atleast_2d(model.coef_)).sum(axis=0)
        else:
            raise ValueError(f"estimator {type(model).__name__} exposes neither "
                             "feature_importances_ nor coef_ after fit.")
        importance[:, k] = imp
        accuracy[k] = np.mean(model.predict(codes[test]) == y_test)
    return {**_dc_from_importance(importance), "informativeness": float(np.mean(accuracy))}


def _dc_from_importance(importance):
    """Disentanglement and completeness from an importance matrix (n_codes, n_factors)."""
    n_codes, n_factors = importance.shape
    eps = 1e-11  # as the reference: an all-zero row or column counts as uniform
    weights = importance if importance.sum() > 0 else np.ones_like(importance)
    code_w = weights.sum(axis=1) / weights.sum()
    factor_w = weights.sum(axis=0) / weights.sum()
    d_code = (np.ones(n_codes) if n_factors == 1
              else 1.0 - _entropy_base(importance.T + eps, n_factors))
    c_factor = (np.ones(n_factors) if n_codes == 1
                else 1.0 - _entropy_base(importance + eps, n_codes))
    return {"disentanglement": float(np.clip(np.sum(d_code * code_w), 0, 1)),
            "completeness": float(np.clip(np.sum(c_factor * factor_w), 0, 1))}


@validate_params(_SAP_PARAMS, prefer_skip_nested_validation=True)
def sap_score(factors, codes, *, continuous_factors=False, test_size=1 / 3, random_state=None,
              collapse_tol=1e-6):
    """Separated attribute predictability (SAP) score of a representation.

    A score matrix :math:`S` of shape (n_codes, n_factors) says how well each single code
    predicts each factor; SAP is the mean over factors of the gap between the two largest
    scores (Kumar et al. 2018, Sec. 3). Discrete factors (default): :math:`S_{jk}` is the
    held-out accuracy of a one-dimensional ``LinearSVC(C=0.01, class_weight="balanced")``
    trained on code ``j`` alone. Continuous factors: :math:`S_{jk}` is the squared
    correlation of code ``j`` with factor ``k`` on all samples.

    Parameters
    ----------
    factors : array-like of shape (n_samples, n_factors)
        Ground-truth factors. The discrete variant (default) rejects a factor with more
        distinct values than half the samples (continuous, or unique per sample).
    codes : array-like of shape (n_samples, n_codes)
        Representation of the same samples.
    continuous_factors : bool, default=False
        Use the squared-correlation (regression) variant, which takes any numeric factors.
    test_size : float in (0, 1), default=1/3
        Held-out fraction for the discrete variant.
    random_state : int, RandomState instance or None, default=None
        Seeds the split (and the SVMs).
    collapse_tol : float in [0, 1), default=1e-6
        See :func:`mutual_info_gap`.

    Returns
    -------
    score : float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        As :func:`mutual_info_gap`.

    Warns
    -----
    UserWarning
        When every code is constant: the score is then its floor, 0 (see
        :func:`mutual_info_gap`).

    See Also
    --------
    mutual_info_gap : The same top-two gap on mutual information.

    Notes
    -----
    **Low ceiling of the discrete variant.** The runner-up score is an accuracy, so an
    uninformative code still scores about chance (``1 / n_values``, the balanced SVM
    predicting one class), and a one-dimensional linear SVM trained one-vs-rest with the
    reference's strong regularisation (``C=0.01``; weaker with more samples) separates
    only the extreme values of an ordered factor. A perfect code of a binary factor thus
    scores about 0.5, and of a factor with 5 values about 0.4. Compare SAP values only
    across representations of the same data; the continuous variant reaches 1. With a
    single code, the second score is taken as 0. The regularised SVM also makes the
    discrete variant depend on the codes' overall scale; codes of extreme magnitude
    (beyond about 1e+-144) are brought to magnitude about 1 by an exact power of two.

    References
    ----------
    .. [1] Kumar, A., Sattigeri, P., Balakrishnan, A. (2018). Variational inference of
       disentangled latent concepts from unlabeled observations. ICLR.
       :arxiv:`1711.00848`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import sap_score
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 2, size=(1000, 2))
    >>> round(sap_score(factors, factors[:, ::-1] + 0.0, random_state=0), 2)
    0.48
    >>> round(sap_score(factors, factors[:, ::-1] + 0.0, continuous_factors=True), 2)
    1.0
    """
    labels, values, _, codes = _check_factors_codes(
        factors, codes, collapse_tol, discrete=not continuous_factors, caller="sap_score",
        hint="Or use continuous_factors=True, the squared-correlation variant.")
    if codes.shape[1] == 0:
        _warn_collapsed("sap_score", 0.0)
        return 0.0
    n_codes, n_factors = codes.shape[1], labels.shape[1]
    scores = np.zeros((n_codes, n_factors))
    if continuous_factors:
        zc = codes - codes.mean(axis=0)
        vc = values - values.mean(axis=0)
        cov = zc.T @ vc / (codes.shape[0] - 1)
        var_z = zc.var(axis=0, ddof=1)
        var_v = vc.var(axis=0, ddof=1)
        scores = cov**2 / np.outer(var_z, var_v)
    else:
        rng = check_random_state(random_state)
        train, test = _split(codes.shape[0], test_size, rng)
        for k in range(n_factors):
            y_train, y_test = labels[train, k], labels[test, k]
            for j in range(n_codes):
                if np.unique(y_train).size < 2:
                    scores[j, k] = np.mean(y_test == y_train[0])
                    continue
                svm = LinearSVC(C=0.01, class_weight="balanced",
                                random_state=rng.randint(np.iinfo(np.int32).max))
                svm.fit(codes[train, j:j + 1], y_train)
                scores[j, k] = np.mean(svm.predict(codes[test, j:j + 1]) == y_test)
    return float(np.clip(np.mean(_top_two_gap(scores)), 0.0, 1.0))


@validate_params(_MODULARITY_PARAMS, prefer_skip_nested_validation=True)
def modularity_explicitness(factors, codes, *, n_bins=20, bin_range=None, test_size=1 / 3,
                            random_state=None, collapse_tol=1e-6):
    """Modularity and explicitness of a representation (Ridgeway & Mozer 2018).

    Modularity (Sec. 3, Eq. 2): for each code ``j`` with mutual information
    :math:`m_{jk}` to factor ``k`` and best factor ``k*``, ``delta_j = sum_{k != k*}
    m_jk^2 / (m_jk*^2 (K - 1))`` and the code's modularity is ``1 - delta_j`` (0 for a
    code with no information); averaged over codes. Explicitness: for each factor, the
    macro one-vs-rest ROC-AUC of a ``LogisticRegression`` on standardised codes, on
    held-out samples, averaged over factors.

    Parameters
    ----------
    factors : array-like of shape (n_samples, n_factors)
        Discrete ground-truth factors. A factor with more distinct values than half the
        samples (continuous, or unique per sample) raises.
    codes : array-like of shape (n_samples, n_codes)
        Representation of the same samples.
    n_bins : int, default=20
        Histogram bins per code for the mutual information.
    bin_range : (float, float) or None, default=None
        See :func:`mutual_info_gap`.
    test_size : float in (0, 1), default=1/3
        Held-out fraction for explicitness.
    random_state : int, RandomState instance or None, default=None
        Seeds the split.
    collapse_tol : float in [0, 1), default=1e-6
        See :func:`mutual_info_gap`.

    Returns
    -------
    scores : dict
        ``{"modularity": float, "explicitness": float}``, each in ``[0, 1]``.

    Raises
    ------
    ValueError
        As :func:`mutual_info_gap`.

    Warns
    -----
    UserWarning
        With a single (non-constant) factor: modularity is then 1 for any code with
        nonzero estimated mutual information, which includes random codes. When every
        code is constant (a collapsed representation): the scores are then their floor,
        modularity 0 and explicitness 0.5 (the ROC-AUC of constant predictions).

    See Also
    --------
    mutual_info_gap : Information-theoretic gap score.
    dci : Importance-based disentanglement and completeness.

    Notes
    -----
    Ridgeway & Mozer and the reference compute the mutual information with the factors as
    given discrete labels (only the codes are binned); a continuous or unique-per-sample
    factor would carry all of every code's information and make every code look modular,
    so it is rejected. Modularity uses all samples (the reference uses its training sample). With one factor,
    every informative code is fully modular (the reference divides by ``K - 1 = 0``).
    Collapsed codes are dropped rather than scored 0, so dead latents do not dilute the
    mean. Classes absent from the held-out split are skipped in the AUC average. The
    logistic regression runs up to 1,000 L-BFGS iterations (scikit-learn's default of 100
    often stops short, with a warning, on many-valued factors).

    References
    ----------
    .. [1] Ridgeway, K., Mozer, M. C. (2018). Learning deep disentangled embeddings with
       the F-statistic loss. NeurIPS. :arxiv:`1802.05312`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import modularity_explicitness
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 3, size=(600, 2))
    >>> s = modularity_explicitness(factors, factors + 0.0, random_state=0)
    >>> round(s["modularity"], 2)
    1.0
    """
    bin_range = _check_bin_range(bin_range)
    labels, _, n_values, codes = _check_factors_codes(factors, codes, collapse_tol,
                                                      caller="modularity_explicitness")
    if codes.shape[1] == 0:
        floor = {"modularity": 0.0, "explicitness": 0.5}
        _warn_collapsed("modularity_explicitness", floor)
        return floor
    if labels.shape[1] == 1:
        warnings.warn(
            "modularity_explicitness: with a single factor every code that carries any "
            "information about it is fully modular, so modularity is 1 for almost any code "
            "(even a random one, whose estimated mutual information is positive); only "
            "explicitness is informative here.",
            UserWarning,
            stacklevel=2,
        )
    mi, _ = _mutual_info_matrix(_discretize(codes, n_bins, bin_range), n_bins, labels, n_values)
    modularity = float(np.mean(_modularity_per_code(mi)))

    train, test = _split(codes.shape[0], test_size, random_state)
    mean, std = codes[train].mean(axis=0), codes[train].std(axis=0)
    std[std == 0] = 1.0
    z_train, z_test = (codes[train] - mean) / std, (codes[test] - mean) / std
    aucs = []
    for k in range(labels.shape[1]):
        y_train, y_test = labels[train, k], labels[test, k]
        classes = np.unique(y_train)
        if classes.size < 2:
            continue
        proba = LogisticRegression(max_iter=1000).fit(z_train, y_train).predict_proba(z_test)
        per_class = [roc_auc_score(y_test == c, proba[:, i]) for i, c in enumerate(classes)
                     if 0 < np.sum(y_test == c) < y_test.size]
        if per_class:
            aucs.append(np.mean(per_class))
    explicitness = float(np.mean(aucs)) if aucs else 0.5
    return {"modularity": float(np.clip(modularity, 0, 1)),
            "explicitness": float(np.clip(explicitness, 0, 1))}


def _modularity_per_code(mi):
    sq = mi**2
    top = sq.max(axis=1)
    n_factors = sq.shape[1]
    out = np.zeros(sq.shape[0])
    informative = top > 0
    if n_factors == 1:
        out[informative] = 1.0
        return out
    delta = (sq.sum(axis=1)[informative] - top[informative]) / (top[informative] * (n_factors - 1))
    out[informative] = 1.0 - delta
    return out


@validate_params(_IRS_PARAMS, prefer_skip_nested_validation=True)
def irs(factors, codes, *, diff_quantile=0.99, n_bins=20, collapse_tol=1e-6):
    """Interventional robustness score (IRS) of a representation (Suter et al. 2019).

    For code ``j`` and factor ``k``, the expected (over the factor's values) ``diff_quantile``
    quantile of ``|z_j - E[z_j | v_k]|`` within the samples sharing that factor value,
    normalised by the code's largest deviation from its mean, gives ``IRS_jk = 1 -
    deviation``. Each code's score is its best factor's; the result is their average
    weighted by each code's largest deviation (Suter et al. 2019, Sec. 4, Eq. 5-6).

    Parameters
    ----------
    factors : array-like of shape (n_samples, n_factors)
        Ground-truth factors. Discrete factors with at most ``n_bins`` values are used as
        given; others (continuous ones) are binned, see ``n_bins``.
    codes : array-like of shape (n_samples, n_codes)
        Representation of the same samples.
    diff_quantile : float in (0, 1], default=0.99
        Quantile of the within-group deviations (1.0 is the paper's maximum).
    n_bins : int >= 2 or None, default=20
        A factor with more than ``n_bins`` distinct values is discretised into ``n_bins``
        equal-width histogram bins over its range, as the reference does (it bins every
        factor into 20). ``None`` uses every factor as given. Either way a factor with
        more distinct values (or bins) than half the samples raises.
    collapse_tol : float in [0, 1), default=1e-6
        See :func:`mutual_info_gap`.

    Returns
    -------
    score : float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        As :func:`mutual_info_gap`; in particular for a factor with more distinct values (or
        bins) than half the samples.

    Warns
    -----
    UserWarning
        When every code is constant: the score is then its floor, 0 (see
        :func:`mutual_info_gap`).

    See Also
    --------
    mutual_info_gap : Information-theoretic gap score.
    dci : Importance-based disentanglement and completeness.

    Notes
    -----
    IRS conditions each code on each value of a factor: with a continuous factor every
    value is seen once, every within-value deviation is 0 and any code, even a random
    one, would score 1. The reference therefore discretises every factor into 20
    histogram bins; we bin only factors with more than ``n_bins`` values and take discrete
    ones as given (identical to the reference when a factor has at most 20 evenly spaced
    values; unevenly spaced discrete values are never merged), and reject factors that are
    still nearly unique per sample.

    References
    ----------
    .. [1] Suter, R., Miladinovic, D., Schoelkopf, B., Bauer, S. (2019). Robustly
       disentangled causal mechanisms: validating deep representations for
       interventional robustness. ICML. :arxiv:`1811.00007`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import irs
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 3, size=(300, 2))
    >>> round(irs(factors, factors + 0.0), 2)
    1.0
    """
    labels, _, n_values, codes = _check_factors_codes(
        factors, codes, collapse_tol, n_bins=n_bins, caller="irs",
        hint="Or lower n_bins (irs bins factors with more than n_bins values).")
    if codes.shape[1] == 0:
        _warn_collapsed("irs", 0.0)
        return 0.0
    max_dev = np.max(np.abs(codes - codes.mean(axis=0)), axis=0)
    cum = np.zeros((codes.shape[1], labels.shape[1]))
    for k in range(labels.shape[1]):
        for value in range(n_values[k]):
            group = codes[labels[:, k] == value]
            cum[:, k] += np.quantile(np.abs(group - group.mean(axis=0)), diff_quantile, axis=0)
        cum[:, k] /= n_values[k]
    per_code = np.max(1.0 - cum / max_dev[:, None], axis=1)
    return float(np.clip(np.average(per_code, weights=max_dev), 0.0, 1.0))
