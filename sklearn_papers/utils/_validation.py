"""Input checks shared by several families (no torch, no RDKit)."""

import numpy as np

__all__ = ["first_non_number"]


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
