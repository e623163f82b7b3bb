"""The one door to scikit-learn's private API.

Every module of the package that needs parameter validation or ``_fit_context`` imports it
from here, so a change in scikit-learn's private layout is fixed in one place.

``validate_params``, ``validate_data``, ``check_array`` and ``_check_sample_weight`` are
scikit-learn's, with one addition: torch tensors given as data (with autograd history, or
on a GPU) arrive as numpy arrays (:mod:`sklearn_papers.utils._tensors`), so every function
and estimator validated here accepts them. :class:`Interval` is scikit-learn's without
booleans: ``n_bits=True`` is an error, not one bit.
"""

import numpy as np

from sklearn.base import _fit_context
from sklearn.utils import validation as _sklearn_validation
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    InvalidParameterError,
    Options,
    StrOptions,
)
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import validate_params as _sklearn_validate_params
from sklearn.utils.validation import check_is_fitted

from sklearn_papers.utils._tensors import tensors_to_numpy, with_numpy_inputs


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, not satisfied by a bool.

    ``True`` and ``False`` are integers to Python, so scikit-learn's ``Interval(Integral,
    1, None)`` takes ``n_bits=True`` as one bit; here a bool fails the constraint and the
    parameter error names the expected range.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params`` decorator; tensor arguments arrive as numpy.

    Parameters
    ----------
    parameter_constraints : dict
        Argument name -> list of constraints, as in scikit-learn.
    prefer_skip_nested_validation : bool
        As in scikit-learn.

    Returns
    -------
    decorator : callable
    """
    decorate = _sklearn_validate_params(
        parameter_constraints, prefer_skip_nested_validation=prefer_skip_nested_validation)

    def decorator(function):
        return with_numpy_inputs(decorate(function))

    return decorator


def validate_data(_estimator, /, X="no_validation", y="no_validation", **check_params):
    """scikit-learn's ``validate_data``; a torch tensor ``X`` or ``y`` is first made numpy.

    Parameters
    ----------
    _estimator : estimator
    X, y : array-like, torch.Tensor or "no_validation"
    **check_params
        As in scikit-learn (``reset``, ``validate_separately``, ``dtype``, ...).

    Returns
    -------
    As scikit-learn's ``validate_data``.
    """
    return _sklearn_validation.validate_data(
        _estimator, X=tensors_to_numpy(X, "X"), y=tensors_to_numpy(y, "y"), **check_params)


def check_array(array, *args, input_name="", **kwargs):
    """scikit-learn's ``check_array``; a torch tensor is first made numpy, and an error
    names the argument.

    Parameters
    ----------
    array : array-like or torch.Tensor
    *args, input_name, **kwargs
        As in scikit-learn.

    Returns
    -------
    As scikit-learn's ``check_array``.

    Raises
    ------
    ValueError
        scikit-learn's, starting with ``input_name`` where its message does not name it
        (a 1-D or empty array).
    """
    try:
        return _sklearn_validation.check_array(tensors_to_numpy(array, input_name or "X"),
                                               *args, input_name=input_name, **kwargs)
    except ValueError as error:
        if not input_name or input_name in str(error):
            raise
        raise ValueError(f"{input_name}: {error}") from None


def _check_sample_weight(sample_weight, X, **kwargs):
    """scikit-learn's ``_check_sample_weight``; tensors are first made numpy."""
    return _sklearn_validation._check_sample_weight(
        tensors_to_numpy(sample_weight, "sample_weight"), tensors_to_numpy(X, "X"), **kwargs)


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
    "check_array",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
