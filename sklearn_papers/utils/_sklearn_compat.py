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
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "_fit_context",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
