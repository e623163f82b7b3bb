"""Step 5 of the molecule input (:mod:`~sklearn_papers.chem._molecule_input`): the
invalid entries raised or masked, the multi-fragment molecules warned about, each row
named as the user numbers it.

A leaf: it imports only :mod:`~sklearn_papers.chem._parse` (to recognise a ``Mol``).
"""

import contextvars
import warnings
from contextlib import contextmanager

import numpy as np

from sklearn_papers.chem._parse import _is_mol

__all__ = [
    "MultipleFragmentsWarning",
    "describe_row",
    "input_rows",
    "raise_or_mask",
    "report_entries",
    "warn_multiple_fragments",
]

#: How many offending entries an error message lists before summarising the rest.
_MAX_LISTED = 5


#: While a wrapper (``SkipInvalidMolecules``) runs its estimator on a subset of the
#: user's rows: ``(n_subset, positions, labels)``, the subset's size, the position of each
#: subset row in the user's input and the user's labels (or None), so that messages name
#: rows as the user numbers them.
_OUTER_ROWS = contextvars.ContextVar("sklearn_papers_outer_rows", default=None)


@contextmanager
def input_rows(positions, n_input, labels=None):
    """Within this block, messages about a call on ``len(positions)`` rows name the row
    ``positions[i]`` (and its label) of the wrapper's input instead of row ``i``.

    Used by wrappers that pass their estimator a subset of the user's rows. Nested
    blocks compose: when the wrapper's input is itself the subset an outer block
    describes, rows are named as the outer input numbers them.

    Parameters
    ----------
    positions : array-like of int
        Position in the wrapper's input of each row handed on.
    n_input : int
        Number of rows of the wrapper's input.
    labels : list or None, default=None
        The wrapper's input's labels
        (:func:`~sklearn_papers.chem._parse.row_labels`), or None.
    """
    positions = np.asarray(positions, dtype=np.int64)
    outer = _OUTER_ROWS.get()
    if outer is not None and outer[0] == n_input:
        positions, labels = outer[1][positions], outer[2]
    token = _OUTER_ROWS.set((len(positions), positions, labels))
    try:
        yield
    finally:
        _OUTER_ROWS.reset(token)


def describe_row(i, n_samples, labels=None):
    """How messages name row ``i`` of an input of ``n_samples`` rows.

    ``"index 3"``, or ``"index 3 (label 'mol_17')"`` when the input has pandas labels
    (:func:`~sklearn_papers.chem._parse.row_labels`). Inside :func:`input_rows`, a call on
    that many rows names the row of the outer input (its position and label).

    Parameters
    ----------
    i : int
        Position in the input of the call.
    n_samples : int
        Number of rows of that input.
    labels : list or None, default=None
        That input's labels, or None.

    Returns
    -------
    text : str
    """
    outer = _OUTER_ROWS.get()
    if outer is not None and outer[0] == n_samples:
        i, labels = int(outer[1][i]), outer[2]
    text = f"index {int(i)}"
    if labels is not None:
        label = labels[i]
        shown = repr(label)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        text += f" (label {shown})"
    return text


def _describe(entry, n_samples=None, labels=None):
    value = entry.value
    if _is_mol(value):
        shown = "<rdkit Mol>"
    else:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
    where = (f"index {entry.index}" if n_samples is None
             else describe_row(entry.index, n_samples, labels))
    return f"{where}: {shown} ({entry.reason})"


def raise_or_mask(invalid, n_samples, *, errors="raise", input_name="X", nan_hint=True,
                  labels=None):
    """Apply the invalid-molecule policy.

    Parameters
    ----------
    invalid : list of InvalidMolecule
        From :func:`~sklearn_papers.chem._parse.parse_molecules` (indices relative to the
        whole input).
    n_samples : int
        Number of input entries.
    errors : {"raise", "nan"}, default="raise"
        ``"raise"``: raise ``ValueError`` if any entry is invalid. ``"nan"``: return the
        mask; the caller fills the invalid rows with NaN.
    input_name : str, default="X"
    nan_hint : bool, default=True
        End the error with the advice to pass ``errors='nan'`` (False for a caller
        without that option).
    labels : list or None, default=None
        The input's pandas labels (:func:`~sklearn_papers.chem._parse.row_labels`), named
        beside the positions.

    Returns
    -------
    valid : ndarray of shape (n_samples,), dtype=bool
        True where the molecule is valid.

    Raises
    ------
    ValueError
        With ``errors="raise"``, naming the number of invalid entries and, for the first
        five, their index, value and reason. Also when every entry is invalid and
        ``errors="nan"`` was asked for while fitting is impossible (the caller decides).
        If ``errors`` is neither ``"raise"`` nor ``"nan"``.
    """
    if errors not in ("raise", "nan"):
        raise ValueError(f"errors must be 'raise' or 'nan', got {errors!r}.")
    valid = np.ones(n_samples, dtype=bool)
    for entry in invalid:
        valid[entry.index] = False
    if invalid and errors == "raise":
        listed = "; ".join(_describe(e, n_samples, labels) for e in invalid[:_MAX_LISTED])
        more = len(invalid) - _MAX_LISTED
        tail = f"; and {more} more" if more > 0 else ""
        raise ValueError(
            f"{len(invalid)} of {n_samples} molecule(s) in {input_name} are invalid: "
            f"{listed}{tail}. Fix or drop them"
            + (", or pass errors='nan' to get NaN rows for them instead." if nan_hint
               else ".")
        )
    return valid


class MultipleFragmentsWarning(UserWarning):
    """Warning: molecules with several fragments were featurized with all of them.

    Salts, solvates and mixtures (``"CCN.Cl"``) were featurized as they are, counter-ions
    and solvent included. Raised once per call by the molecule estimators with
    ``standardize=False``, naming how many molecules and the first one's index. Pass
    ``standardize=True`` (or put :class:`MoleculeStandardizer` first in the pipeline) to
    keep only the parent molecule, or filter this warning when the fragments are meant.

    References
    ----------
    .. [1] Bento, A. P. et al. (2020). An open source chemical structure curation pipeline
       using RDKit. Journal of Cheminformatics, 12, 51 (the parent-molecule step).
       https://doi.org/10.1186/s13321-020-00456-1

    Examples
    --------
    >>> import warnings
    >>> from sklearn_papers.chem import CircularFingerprint, MultipleFragmentsWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = CircularFingerprint().transform(["CCO", "CCN.Cl"])
    >>> caught[0].category is MultipleFragmentsWarning
    True
    """


def _caller_stacklevel():
    """``stacklevel`` for a warning raised here that points at the first frame outside
    sklearn_papers, scikit-learn and joblib (the user's call, through any wrappers)."""
    import sys

    frame, level = sys._getframe(1), 1  # level 1: the function calling warnings.warn
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(("sklearn_papers.", "sklearn.", "joblib.")):
            return level
        frame, level = frame.f_back, level + 1
    return level


def warn_multiple_fragments(positions, values, n_samples, estimator, stacklevel=None,
                            labels=None):
    """One :class:`MultipleFragmentsWarning` naming how many and the first one.

    ``stacklevel`` None points the warning at the user's call (the first frame outside
    sklearn_papers and scikit-learn); ``labels``, the input's pandas labels
    (:func:`~sklearn_papers.chem._parse.row_labels`), are named beside the
    position."""
    if not positions:
        return
    if stacklevel is None:
        stacklevel = _caller_stacklevel()
    first = positions[0]
    value = values[first]
    shown = repr(value) if isinstance(value, str) else "<rdkit Mol>"
    if len(shown) > 80:
        shown = shown[:77] + "..."
    warnings.warn(
        f"{len(positions)} of {n_samples} molecule(s) given to {estimator} have more than "
        f"one fragment (first at {describe_row(first, n_samples, labels)}: {shown}); counter-ions, solvents and "
        "mixture components are featurized as part of the molecule. Pass "
        "standardize=True (or put MoleculeStandardizer() first in the pipeline) to keep "
        "the largest organic fragment, neutralized.",
        MultipleFragmentsWarning, stacklevel=stacklevel,
    )



def report_entries(invalid, multi, values, *, errors, estimator, labels=None):
    """The report step: raise or mask the invalid entries, then warn about the
    multi-fragment molecules.

    Parameters
    ----------
    invalid : list of InvalidMolecule
        The entries that failed to parse or to standardize, in input order.
    multi : list of int
        Positions of the valid molecules with several fragments (none with
        standardization).
    values : ndarray of shape (n_samples,), dtype=object
        The entries as read.
    errors : {"raise", "nan"}
        The estimator's ``errors`` (see :func:`raise_or_mask`).
    estimator : str
        The estimator's class name, named in the warning.
    labels : list or None, default=None
        The input's pandas labels (:func:`~sklearn_papers.chem._parse.row_labels`).

    Returns
    -------
    valid : ndarray of shape (n_samples,), dtype=bool

    Raises
    ------
    ValueError
        With ``errors="raise"`` and an invalid entry (see :func:`raise_or_mask`).
    """
    valid = raise_or_mask(invalid, len(values), errors=errors, labels=labels)
    warn_multiple_fragments(multi, values, len(values), estimator, labels=labels)
    return valid
