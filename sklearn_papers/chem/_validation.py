"""Molecule input checks outside the one-pass input path: the public
:func:`check_molecules` (read, parse, report, without standardization) and the column
name of a fitted molecule estimator's input at predict / transform.

The steps themselves live in :mod:`~sklearn_papers.chem._parse` (read, parse) and
:mod:`~sklearn_papers.chem._report` (raise or mask the invalid entries); an estimator's
molecules go through them in the order of :mod:`~sklearn_papers.chem._molecule_input`,
which also sets ``n_features_in_`` / ``feature_names_in_`` in ``fit``
(:func:`~sklearn_papers.chem._molecule_input.set_molecule_input_attributes`, importable
from here too).
"""

from sklearn_papers.chem._molecule_input import set_molecule_input_attributes
from sklearn_papers.chem._parse import parse_molecules, read_molecules
from sklearn_papers.chem._report import raise_or_mask

__all__ = [
    "check_molecule_feature_names",
    "check_molecules",
    "set_molecule_input_attributes",
]


def check_molecules(X, *, errors="raise", input_name="X", nan_hint=True):
    """Validate molecule input and parse every SMILES once.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects (list, numpy array, pandas Series, or a
        single-column DataFrame / 2-D array).
    errors : {"raise", "nan"}, default="raise"
        What to do with invalid entries: raise ``ValueError``, or keep them as ``None``
        in ``mols`` and ``False`` in ``valid`` so the caller can emit NaN rows.
    input_name : str, default="X"
        Name used in error messages.
    nan_hint : bool, default=True
        With ``errors="raise"``, end the error with the advice to pass ``errors='nan'``
        (False for a caller without that option).

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None, length n_samples
        Parsed molecules in input order; ``None`` for invalid entries (``errors="nan"``).
        ``Mol`` inputs come back as
        :func:`~sklearn_papers.chem._parse.parse_molecules` says (sanitized, explicit
        hydrogen atoms removed, as from their SMILES).
    valid : ndarray of shape (n_samples,), dtype=bool
        True where ``mols[i]`` is a molecule.

    Raises
    ------
    ValueError
        For a bare string, wrong dimensionality, empty input, or (with
        ``errors="raise"``) invalid entries, naming their index (position; for a pandas
        input also its index label), value and RDKit's reason.
    TypeError
        For sparse matrices and non-array-like input.

    Examples
    --------
    >>> from sklearn_papers.chem import check_molecules
    >>> mols, valid = check_molecules(["CCO", "C1CC"], errors="nan")
    >>> valid
    array([ True, False])
    """
    values, labels = read_molecules(X, input_name=input_name)
    mols, invalid = parse_molecules(values)
    valid = raise_or_mask(invalid, len(values), errors=errors, input_name=input_name,
                          nan_hint=nan_hint, labels=labels)
    return mols, valid


def check_molecule_feature_names(estimator, X):
    """At predict / transform: the column name of ``X`` against ``feature_names_in_``.

    As scikit-learn's estimators check a table's columns: ``ValueError`` when ``X`` is a
    DataFrame whose column name differs from the one ``fit`` saw, a ``UserWarning`` when
    ``fit`` saw a named column and ``X`` has none (or the reverse).

    Parameters
    ----------
    estimator : fitted molecule estimator
    X : array-like of shape (n_samples,) or (n_samples, 1)
        The molecules given to predict / transform.

    Raises
    ------
    ValueError
        If the column names differ.
    """
    try:
        from sklearn.utils.validation import _check_feature_names
    except ImportError:  # scikit-learn < 1.6
        estimator._check_feature_names(X, reset=False)
    else:
        _check_feature_names(estimator, X, reset=False)
