"""The one place where molecule input is checked and SMILES are parsed.

Every estimator of :mod:`sklearn_papers.chem` sends its ``X`` through :func:`check_molecules`
(or, when it parses inside joblib workers, through :func:`as_molecule_array` then
:func:`parse_molecules` then :func:`raise_or_mask`). The policy is the same everywhere:

* ``X`` is a 1-D array-like of SMILES strings or RDKit ``Mol`` objects (list, tuple,
  numpy array, pandas Series), or a single-column 2-D array or DataFrame (the shape a
  ``ColumnTransformer`` hands over). A bare string is refused: it is never split into
  characters.
* Invalid entries (unparsable SMILES, empty string, ``None``/NaN, numbers, molecules with
  no atoms) raise ``ValueError`` naming how many there are and, for the first few, the
  index, the value and RDKit's reason. With ``errors="nan"`` the caller keeps the row and
  fills it with NaN: rows are never dropped or reordered.
* RDKit's log lines never reach the console; their text goes into our message.
"""

import re

import numpy as np

__all__ = [
    "InvalidMolecule",
    "as_molecule_array",
    "check_molecules",
    "parse_molecules",
    "raise_or_mask",
]

#: How many offending entries an error message lists before summarising the rest.
_MAX_LISTED = 5

_TIMESTAMP = re.compile(r"^\[\d\d:\d\d:\d\d\]\s*")


class InvalidMolecule(tuple):
    """One invalid input entry: ``(index, value, reason)``."""

    __slots__ = ()

    def __new__(cls, index, value, reason):
        return super().__new__(cls, (index, value, reason))

    def __getnewargs__(self):
        # Pickling (joblib workers return these) calls __new__ with these arguments;
        # tuple's default passes the whole tuple as one argument, which fails.
        return tuple(self)

    @property
    def index(self):
        return self[0]

    @property
    def value(self):
        return self[1]

    @property
    def reason(self):
        return self[2]


def _is_mol(obj):
    from rdkit import Chem

    return isinstance(obj, Chem.Mol)


def as_molecule_array(X, *, input_name="X"):
    """Normalise a container of molecules to a 1-D numpy object array.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects: list, tuple, numpy array, pandas
        Series, or a one-column DataFrame / 2-D array.
    input_name : str, default="X"
        Name used in error messages.

    Returns
    -------
    values : ndarray of shape (n_samples,), dtype=object
        The entries, unparsed, in input order.

    Raises
    ------
    ValueError
        If ``X`` is a single string or Mol, has more than one column, more than two
        dimensions, or no entries.
    TypeError
        If ``X`` is a sparse matrix or not array-like.
    """
    if isinstance(X, (str, bytes)) or _is_mol(X):
        shown = X if not _is_mol(X) else "<rdkit Mol>"
        raise ValueError(
            f"{input_name} must be a 1-D array-like of molecules (SMILES strings or RDKit "
            f"Mol objects), got a single {type(X).__name__} {shown!r}. Wrap it in a list: "
            f"[{shown!r}]."
        )
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # pandas DataFrame
        if X.shape[1] != 1:
            raise ValueError(
                f"{input_name} is a DataFrame with {X.shape[1]} columns "
                f"{list(X.columns)[:5]!r}; molecule input needs exactly one column of "
                "SMILES or Mol objects (select it, e.g. df[['smiles']] or df['smiles'])."
            )
        values = X.iloc[:, 0].to_numpy(dtype=object)
    elif hasattr(X, "iloc"):  # pandas Series
        values = X.to_numpy(dtype=object)
    elif hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError(
            f"{input_name} is a sparse matrix; molecule input must be a 1-D array-like of "
            "SMILES strings or RDKit Mol objects."
        )
    elif isinstance(X, np.ndarray):
        if X.ndim == 2 and X.shape[1] == 1:
            values = X[:, 0].astype(object)
        elif X.ndim == 1:
            values = X.astype(object)
        elif X.ndim == 0:
            raise ValueError(
                f"{input_name} must be a 1-D array-like of molecules, got a 0-d array "
                f"{X!r}."
            )
        else:
            raise ValueError(
                f"{input_name} must be 1-D, or 2-D with a single column, got an array of "
                f"shape {X.shape}. Molecule estimators take one SMILES (or Mol) per row."
            )
    else:
        try:
            items = list(X)
        except TypeError:
            raise TypeError(
                f"{input_name} must be a 1-D array-like of SMILES strings or RDKit Mol "
                f"objects, got {type(X).__name__}."
            ) from None
        values = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            if isinstance(item, (list, tuple, np.ndarray)):
                if len(item) != 1:
                    raise ValueError(
                        f"{input_name} must be 1-D, or 2-D with a single column; row {i} "
                        f"has {len(item)} entries."
                    )
                item = item[0]
            values[i] = item
    if values.shape[0] == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=(0,)) while a minimum of 1 is required: "
            f"{input_name} holds no molecules."
        )
    return values


def _is_missing(value):
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    try:  # pandas.NA / NaT without importing pandas
        return bool(value != value) if type(value).__name__ in ("NAType", "NaTType") else False
    except TypeError:
        return True


def _rdkit_reason(smiles):
    """Re-parse a failing SMILES and return RDKit's reason as one line of text."""
    from rdkit import Chem, rdBase

    if hasattr(rdBase, "CaptureErrorLog"):
        with rdBase.CaptureErrorLog() as capture:
            Chem.MolFromSmiles(smiles)
        lines = [_TIMESTAMP.sub("", line).strip() for line in capture.messages.splitlines()]
        lines = [line for line in lines if line and not line.startswith("~")]
        if lines:
            # The first line carries the reason; RDKit repeats some lines.
            return "; ".join(dict.fromkeys(lines[:2]))
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles, sanitize=False)
        if mol is None:
            return "SMILES syntax error (e.g. an unclosed ring or branch)"
        problems = Chem.DetectChemistryProblems(mol)
    if problems:
        return problems[0].Message()
    return "RDKit could not parse it"


def parse_molecules(values):
    """Parse each entry once; return the molecules and the invalid entries.

    Parameters
    ----------
    values : ndarray of shape (n_samples,), dtype=object
        As returned by :func:`as_molecule_array`.

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None, length n_samples
        ``None`` where the entry is invalid. ``Mol`` inputs are passed through, except
        unsanitized ones (property cache never computed), which are replaced by a
        sanitized copy, or marked invalid when RDKit cannot sanitize them.
    invalid : list of InvalidMolecule
        ``(index, value, reason)`` for each invalid entry, in input order.
    """
    from rdkit import Chem, rdBase

    mols = [None] * len(values)
    invalid = []
    with rdBase.BlockLogs():
        for i, value in enumerate(values):
            if isinstance(value, str):
                if not value.strip():
                    invalid.append(InvalidMolecule(i, value, "empty SMILES string"))
                    continue
                mol = Chem.MolFromSmiles(value)
                if mol is None:
                    invalid.append(InvalidMolecule(i, value, _rdkit_reason(value)))
                    continue
                if mol.GetNumAtoms() == 0:
                    invalid.append(InvalidMolecule(i, value, "molecule has no atoms"))
                    continue
                mols[i] = mol
            elif _is_mol(value):
                if value.GetNumAtoms() == 0:
                    invalid.append(InvalidMolecule(i, value, "molecule has no atoms"))
                    continue
                if value.NeedsUpdatePropertyCache():
                    # Never sanitized (e.g. MolFromSmiles(..., sanitize=False)): featurizers
                    # would fail inside RDKit, so sanitize a copy, leaving the input alone.
                    value = Chem.Mol(value)
                    try:
                        Chem.SanitizeMol(value)
                    except Exception as exc:  # RDKit raises several exception types
                        reason = (str(exc).strip().splitlines() or ["no reason given"])[0]
                        invalid.append(InvalidMolecule(
                            i, values[i], f"unsanitized Mol fails sanitization: {reason}"))
                        continue
                mols[i] = value
            elif _is_missing(value):
                invalid.append(InvalidMolecule(i, value, "missing value"))
            else:
                invalid.append(
                    InvalidMolecule(
                        i,
                        value,
                        f"not a SMILES string or RDKit Mol (got {type(value).__name__})",
                    )
                )
    return mols, invalid


def _describe(entry):
    value = entry.value
    if _is_mol(value):
        shown = "<rdkit Mol>"
    else:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
    return f"index {entry.index}: {shown} ({entry.reason})"


def raise_or_mask(invalid, n_samples, *, errors="raise", input_name="X"):
    """Apply the invalid-molecule policy.

    Parameters
    ----------
    invalid : list of InvalidMolecule
        From :func:`parse_molecules` (indices relative to the whole input).
    n_samples : int
        Number of input entries.
    errors : {"raise", "nan"}, default="raise"
        ``"raise"``: raise ``ValueError`` if any entry is invalid. ``"nan"``: return the
        mask; the caller fills the invalid rows with NaN.
    input_name : str, default="X"

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
        listed = "; ".join(_describe(e) for e in invalid[:_MAX_LISTED])
        more = len(invalid) - _MAX_LISTED
        tail = f"; and {more} more" if more > 0 else ""
        raise ValueError(
            f"{len(invalid)} of {n_samples} molecule(s) in {input_name} are invalid: "
            f"{listed}{tail}. Fix or drop them, or pass errors='nan' to get NaN rows for "
            "them instead."
        )
    return valid


def check_molecules(X, *, errors="raise", input_name="X"):
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

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None, length n_samples
        Parsed molecules in input order; ``None`` for invalid entries (``errors="nan"``).
    valid : ndarray of shape (n_samples,), dtype=bool
        True where ``mols[i]`` is a molecule.

    Raises
    ------
    ValueError
        For a bare string, wrong dimensionality, empty input, or (with
        ``errors="raise"``) invalid entries, naming their index, value and RDKit's reason.
    TypeError
        For sparse matrices and non-array-like input.

    Examples
    --------
    >>> from sklearn_papers.chem import check_molecules
    >>> mols, valid = check_molecules(["CCO", "C1CC"], errors="nan")
    >>> valid
    array([ True, False])
    """
    values = as_molecule_array(X, input_name=input_name)
    mols, invalid = parse_molecules(values)
    valid = raise_or_mask(invalid, len(values), errors=errors, input_name=input_name)
    return mols, valid
