"""The one door to scikit-learn's private API.

Every module of the package that needs parameter validation or ``_fit_context`` imports it
from here, so a change in scikit-learn's private layout is fixed in one place.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data


def _initialize_nmf(X, n_components, init=None, eps=1e-6, random_state=None):
    """scikit-learn's private NMF initialiser (``sklearn.decomposition._nmf``).

    Imported lazily so that importing this module does not load ``sklearn.decomposition``.
    Same signature and return value ``(W, H)`` as scikit-learn's function.
    """
    from sklearn.decomposition._nmf import _initialize_nmf as initialize

    return initialize(X, n_components, init=init, eps=eps, random_state=random_state)


__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "_initialize_nmf",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
