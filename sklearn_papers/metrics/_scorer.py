"""Scikit-learn scorers built from the disentanglement scores."""

from sklearn_papers.metrics._interventional import beta_vae_score, factor_vae_score
from sklearn_papers.metrics._sample_based import (
    dci,
    irs,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)
from sklearn_papers.utils._sklearn_compat import StrOptions, validate_params

__all__ = ["make_disentanglement_scorer"]

_SAMPLE_BASED = {
    "mutual_info_gap": (mutual_info_gap, None),
    "dci": (dci, "disentanglement"),
    "sap_score": (sap_score, None),
    "modularity_explicitness": (modularity_explicitness, "modularity"),
    "irs": (irs, None),
}
_INTERVENTIONAL = {"beta_vae_score": beta_vae_score, "factor_vae_score": factor_vae_score}
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
        function, default_key = _SAMPLE_BASED[self.metric]
        result = function(y, estimator.transform(X), **self.kwargs)
        if isinstance(result, dict):
            return float(result[self.key or default_key])
        return float(result)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        key = f", key={self.key!r}" if self.key else ""
        return f"make_disentanglement_scorer({self.metric!r}{key}{args})"


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
    ValueError
        If ``key`` is not an entry of the metric's result, ``key`` is given for a float
        score, or an interventional metric has no ``dataset``.

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
