"""Input and parameter checks shared by several families (no torch, no RDKit)."""

from numbers import Integral, Real

import numpy as np

from sklearn_papers.utils._sklearn_compat import Interval
from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["check_sample_weight", "common_constraints", "first_non_number"]


def first_non_number(values):
    """The first entry of a text/object array that is not a number, or None.

    Only arrays of dtype object, str or bytes are scanned (others hold numbers by
    construction); ``None`` entries count as missing values, not as text.

    Parameters
    ----------
    values : array-like

    Returns
    -------
    item : object or None
        The offending entry, for an error message naming it; None when every entry
        converts to float (or the array is numeric).

    Examples
    --------
    >>> from sklearn_papers.utils._validation import first_non_number
    >>> first_non_number(["1.5", "x", "2"]), first_non_number([1.0, None])
    ('x', None)
    """
    values = tensors_to_numpy(values, "values")
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        dtype = np.asarray(values, dtype=object).dtype if isinstance(values, (list, tuple)) \
            else np.asarray(values).dtype
    if dtype.kind not in "OUS":
        return None
    for item in np.asarray(values, dtype=object).ravel():
        if item is None:
            continue
        try:
            float(item)
        except (TypeError, ValueError):
            return item
    return None


def check_sample_weight(sample_weight, X):
    """Validate ``sample_weight`` for a ``fit``: None stays None (the unweighted path).

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), float or None
        Non-negative weights; a float gives every sample that weight.
    X : array-like of shape (n_samples, ...)
        The data the weights belong to (only its length is used; SMILES lists work).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), dtype float64, or None

    Raises
    ------
    ValueError
        If the weights are not finite, negative, of the wrong length, or all zero.

    Examples
    --------
    >>> from sklearn_papers.utils._validation import check_sample_weight
    >>> check_sample_weight([1, 0, 2], ["CCO", "C", "N"])
    array([1., 0., 2.])
    """
    from sklearn_papers.utils._sklearn_compat import _check_sample_weight

    if sample_weight is None:
        return None
    weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                  ensure_non_negative=True)
    if not weight.sum() > 0:
        raise ValueError("sample_weight sums to 0: at least one sample needs a positive "
                         "weight.")
    return weight


def common_constraints(min_epochs=1):
    """``_parameter_constraints`` of the parameters every torch estimator trained by
    epochs shares (those :func:`sklearn_papers.nn._skorch.build_net` reads, and
    ``random_state``); an estimator class spreads them into its own
    (``{**common_constraints(), "beta": [...]}``).

    Parameters
    ----------
    min_epochs : int, default=1
        Smallest ``max_epochs`` (0: a fit may keep the initial weights).

    Returns
    -------
    constraints : dict
        ``max_epochs`` and ``batch_size`` (ints), ``lr`` (> 0), ``device`` (str),
        ``random_state`` and ``verbose``.
    """
    return {
        "max_epochs": [Interval(Integral, min_epochs, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }


def check_keyword_values(owner, function_name, constraints, kwargs):
    """Check keyword values against a function's ``@validate_params`` constraints.

    Used by scorer factories, which receive a metric's keyword arguments long before the
    metric runs: the values are checked when the scorer is made, with the messages the
    metric itself would give.

    Parameters
    ----------
    owner : str
        Prefix of the error message, e.g. ``"make_segmentation_scorer('mask_average_precision')"``.
    function_name : str
        Name of the function whose constraints these are (it appears in the message).
    constraints : dict
        ``{parameter name: list of constraints}``, as given to ``validate_params``;
        parameters absent from ``kwargs`` are ignored.
    kwargs : dict
        The values to check.

    Raises
    ------
    ValueError
        ``"<owner>: <scikit-learn's message>"`` for the first value its constraints reject.
    """
    import inspect

    from sklearn import config_context

    from sklearn_papers.utils._sklearn_compat import InvalidParameterError, validate_params

    def stand_in(**_):
        return None

    stand_in.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in kwargs])
    stand_in.__qualname__ = function_name
    used = {name: c for name, c in constraints.items() if name in kwargs}
    try:
        # The factories run inside a validated call, where nested validation is skipped.
        with config_context(skip_parameter_validation=False):
            validate_params(used, prefer_skip_nested_validation=True)(stand_in)(**kwargs)
    except InvalidParameterError as exc:
        # A plain ValueError: the factory's own @validate_params would rename the function
        # in an InvalidParameterError's message to the factory's name.
        raise ValueError(f"{owner}: {exc}") from exc
