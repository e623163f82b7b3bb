"""Scikit-learn scorers built from the disentanglement scores."""

import inspect

from sklearn_papers.metrics._interventional import (
    _BETA_VAE_PARAMS,
    _FACTOR_VAE_PARAMS,
    _check_dataset,
    beta_vae_score,
    factor_vae_score,
)
from sklearn_papers.metrics._sample_based import (
    _DCI_PARAMS,
    _IRS_PARAMS,
    _MIG_PARAMS,
    _MODULARITY_PARAMS,
    _SAP_PARAMS,
    _check_bin_range,
    _check_classifier,
    dci,
    irs,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)
from sklearn_papers.utils._sklearn_compat import (
    StrOptions,
    validate_params,
)
from sklearn_papers.utils._validation import check_keyword_values

__all__ = ["make_disentanglement_scorer"]

_SAMPLE_BASED = {
    "mutual_info_gap": (mutual_info_gap, None),
    "dci": (dci, "disentanglement"),
    "sap_score": (sap_score, None),
    "modularity_explicitness": (modularity_explicitness, "modularity"),
    "irs": (irs, None),
}
_INTERVENTIONAL = {"beta_vae_score": beta_vae_score, "factor_vae_score": factor_vae_score}
# Parameter constraints of each metric (the ones its @validate_params uses).
_CONSTRAINTS = {"mutual_info_gap": _MIG_PARAMS, "dci": _DCI_PARAMS, "sap_score": _SAP_PARAMS,
                "modularity_explicitness": _MODULARITY_PARAMS, "irs": _IRS_PARAMS,
                "beta_vae_score": _BETA_VAE_PARAMS, "factor_vae_score": _FACTOR_VAE_PARAMS}
# Checks each metric runs inside its body, run again when a scorer is made.
_EXTRA_CHECKS = {"bin_range": _check_bin_range, "estimator": _check_classifier,
                 "dataset": _check_dataset}
_KEYS = {"dci": {"disentanglement", "completeness", "informativeness"},
         "modularity_explicitness": {"modularity", "explicitness"}}


class _DisentanglementScorer:
    """``scorer(estimator, X, factors) -> float`` for ``scoring=`` in model selection."""

    def __init__(self, metric, key, kwargs):
        self.metric = metric
        self.key = key
        self.kwargs = kwargs

    def __call__(self, estimator, X, y=None):
        if self.metric in _INTERVENTIONAL:
            return float(_INTERVENTIONAL[self.metric](self.kwargs["dataset"], estimator,
                                                      **{k: v for k, v in self.kwargs.items()
                                                         if k != "dataset"}))
        if y is None:
            raise ValueError(f"The {self.metric!r} scorer needs the factor matrix as y "
                             "(shape (n_samples, n_factors)); got y=None.")
        if not hasattr(estimator, "transform"):
            raise TypeError(f"The {self.metric!r} scorer scores the codes of "
                            f"estimator.transform(X), but {type(estimator).__name__} has no "
                            "transform method (pass a representation learner, or a Pipeline "
                            "ending in one).")
        function, default_key = _SAMPLE_BASED[self.metric]
        result = function(y, estimator.transform(X), **self.kwargs)
        if isinstance(result, dict):
            return float(result[self.key or default_key])
        return float(result)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        key = f", key={self.key!r}" if self.key else ""
        return f"make_disentanglement_scorer({self.metric!r}{key}{args})"


def _check_metric_kwargs(metric, kwargs):
    """Check a scorer's keyword arguments against the metric's signature and constraints.

    Raises
    ------
    TypeError
        For a keyword the metric does not take, or one the scorer supplies itself.
    ValueError
        For a value the metric's constraints or own checks reject (``n_bins=1``, a bad
        ``bin_range``, a regressor as ``dci``'s ``estimator``).
    """
    function = (_INTERVENTIONAL[metric] if metric in _INTERVENTIONAL
                else _SAMPLE_BASED[metric][0])
    supplied = ({"representation"} if metric in _INTERVENTIONAL else {"factors", "codes"})
    params = inspect.signature(function).parameters
    valid = [name for name, p in params.items()
             if name not in supplied and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for name in kwargs:
        if name in supplied:
            raise TypeError(f"make_disentanglement_scorer({metric!r}) got {name}=..., which "
                            f"the scorer supplies itself; valid keyword arguments are "
                            f"{valid}.")
        if name not in valid:
            raise TypeError(f"make_disentanglement_scorer({metric!r}) got an unexpected "
                            f"keyword argument {name!r}; {metric} takes {valid}.")

    # The metric's own @validate_params constraints, on just these values.
    check_keyword_values(f"make_disentanglement_scorer({metric!r})", function.__name__,
                         _CONSTRAINTS[metric], kwargs)
    for name, check in _EXTRA_CHECKS.items():
        if name in kwargs and (name != "estimator" or metric == "dci"):
            check(kwargs[name])


@validate_params(
    {"metric": [StrOptions(set(_SAMPLE_BASED) | set(_INTERVENTIONAL))],
     "key": [None, str]},
    prefer_skip_nested_validation=True,
)
def make_disentanglement_scorer(metric, *, key=None, **kwargs):
    """Make a scorer ``scorer(estimator, X, factors)`` from a disentanglement score.

    The scorer calls ``estimator.transform(X)`` and scores the codes against the factor
    matrix passed as ``y``, so it works as ``scoring=`` in ``GridSearchCV`` and
    ``cross_validate`` with ``y`` the factors. Greater is better for every score.

    Parameters
    ----------
    metric : {"mutual_info_gap", "dci", "sap_score", "modularity_explicitness", "irs", \
            "beta_vae_score", "factor_vae_score"}
        Name of the score function in :mod:`sklearn_papers.metrics`.
    key : str or None, default=None
        For scores returning a dict, the entry to use: ``"disentanglement"`` (default),
        ``"completeness"`` or ``"informativeness"`` for ``"dci"``; ``"modularity"``
        (default) or ``"explicitness"`` for ``"modularity_explicitness"``.
    **kwargs
        Passed to the score function (e.g. ``random_state=0``). The interventional scores
        need ``dataset=``; they ignore ``X`` and ``y`` and sample from the dataset
        instead, encoding with the fitted estimator.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``.

    Raises
    ------
    TypeError
        If a keyword argument is not a parameter of the metric (the message lists the
        valid ones), or is one the scorer supplies (``factors``, ``codes``,
        ``representation``), or ``dataset`` lacks ``factor_sizes``.
    ValueError
        If ``key`` is not an entry of the metric's result, ``key`` is given for a float
        score, an interventional metric has no ``dataset``, or a keyword argument's value
        violates the metric's constraints (e.g. ``n_bins=1``, a regressor as ``dci``'s
        ``estimator``); all are checked here, when the scorer is made, not when it first
        scores (where ``cross_validate`` would turn the error into NaN scores).

    See Also
    --------
    sklearn.metrics.make_scorer : The general scorer factory.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_papers.metrics import make_disentanglement_scorer
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 4, size=(300, 2))
    >>> X = np.c_[factors, rng.normal(scale=0.01, size=(300, 3))]
    >>> scorer = make_disentanglement_scorer("mutual_info_gap")
    >>> res = cross_validate(PCA(n_components=2), X, factors, scoring=scorer, cv=3)
    >>> res["test_score"].shape
    (3,)
    """
    _check_metric_kwargs(metric, kwargs)
    if metric in _INTERVENTIONAL:
        if "dataset" not in kwargs:
            raise ValueError(f"metric={metric!r} samples from a ground-truth dataset: pass "
                             "dataset=... (e.g. sklearn_papers.datasets.Shapes()).")
        if key is not None:
            raise ValueError(f"metric={metric!r} returns a float; key must be None.")
    elif key is not None:
        allowed = _KEYS.get(metric)
        if allowed is None:
            raise ValueError(f"metric={metric!r} returns a float; key must be None.")
        if key not in allowed:
            raise ValueError(f"key={key!r} is not a result of {metric!r}; choose from "
                             f"{sorted(allowed)}.")
    return _DisentanglementScorer(metric, key, dict(kwargs))


def _all_scores(dataset, representation, X, factors, *, n_train, n_eval,
                n_variance_estimate, estimator, random_state):
    """Every disentanglement score of one fitted ``representation``, by its usual name.

    ``X`` (n, n_features) and ``factors`` (n, n_factors) feed the sample-based scores
    (codes ``representation.transform(X)``); the interventional scores sample ``dataset``
    with ``n_train`` and ``n_eval`` points (FactorVAE's scale from ``n_variance_estimate``
    observations). ``estimator`` is DCI's classifier; ``random_state`` (an int) seeds
    every score. Returns ``{"BetaVAE", "FactorVAE", "MIG", "DCI-D", "SAP", "Modularity",
    "IRS": float}`` (van Steenkiste et al. 2019 compare them).
    """
    Z = representation.transform(X)
    seeded = dict(random_state=random_state)
    return {
        "BetaVAE": beta_vae_score(dataset, representation, n_train=n_train, n_eval=n_eval,
                                  **seeded),
        "FactorVAE": factor_vae_score(dataset, representation, n_train=n_train,
                                      n_eval=n_eval,
                                      n_variance_estimate=n_variance_estimate, **seeded),
        "MIG": mutual_info_gap(factors, Z),
        "DCI-D": dci(factors, Z, estimator=estimator, **seeded)["disentanglement"],
        "SAP": sap_score(factors, Z, **seeded),
        "Modularity": modularity_explicitness(factors, Z, **seeded)["modularity"],
        "IRS": irs(factors, Z),
    }
