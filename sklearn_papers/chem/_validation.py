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
* ``Mol`` inputs are brought to the form ``Chem.MolFromSmiles`` gives a SMILES, on a copy
  (the input is never modified): an unsanitized ``Mol`` is sanitized, and explicit
  hydrogen atoms (``Chem.AddHs``, SDF files read with ``removeHs=False``) are removed as
  ``MolFromSmiles`` removes them, so a molecule gives the same features whichever way it
  comes in.
* RDKit's log lines never reach the console; their text goes into our message.
"""

import contextvars
import re
from contextlib import contextmanager

import numpy as np

from sklearn_papers.utils._tensors import is_torch_tensor

__all__ = [
    "InvalidMolecule",
    "as_molecule_array",
    "check_molecules",
    "describe_row",
    "input_rows",
    "parse_molecules",
    "raise_or_mask",
    "row_labels",
    "set_molecule_input_attributes",
]

#: How many offending entries an error message lists before summarising the rest.
_MAX_LISTED = 5

_TIMESTAMP = re.compile(r"^\[\d\d:\d\d:\d\d\]\s*")

#: While a wrapper (``SkipInvalidMolecules``) runs its estimator on a subset of the
#: user's rows: ``(n_subset, positions, labels)``, the subset's size, the position of each
#: subset row in the user's input and the user's labels (or None), so that messages name
#: rows as the user numbers them.
_OUTER_ROWS = contextvars.ContextVar("sklearn_papers_outer_rows", default=None)


def row_labels(X):
    """The pandas index labels of ``X``, when they differ from the positions; else None.

    Parameters
    ----------
    X : array-like
        The molecule input as the user gave it.

    Returns
    -------
    labels : list or None
        One label per row (Python scalars) for a pandas Series or DataFrame whose index is
        not ``0, 1, ..., n - 1``; None for other inputs and for such a default index (the
        label would repeat the position).
    """
    if not hasattr(X, "iloc"):
        return None
    index = getattr(X, "index", None)
    if index is None:
        return None
    labels = index.tolist()
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == i
           for i, v in enumerate(labels)):
        return None
    return labels


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
        The wrapper's input's labels (:func:`row_labels`), or None.
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


@contextmanager
def no_cyclic_gc():
    """Pause Python's cyclic garbage collector during a block of RDKit-heavy work.

    Featurizing and standardizing create many short-lived objects (RDKit atom, bond and
    molecule wrappers, small arrays) that hold no reference cycles: reference counting
    frees each at once. Their allocation bursts still start collections that scan every
    live object, about a quarter of the CPU time of featurizing molecules into graphs.
    The collector's state is restored after the block.
    """
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def describe_row(i, n_samples, labels=None):
    """How messages name row ``i`` of an input of ``n_samples`` rows.

    ``"index 3"``, or ``"index 3 (label 'mol_17')"`` when the input has pandas labels
    (:func:`row_labels`). Inside :func:`input_rows`, a call on that many rows names the
    row of the outer input (its position and label).

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
        If ``X`` is a sparse matrix, a torch tensor (which cannot hold molecules) or not
        array-like.
    """
    if is_torch_tensor(X):
        raise TypeError(
            f"{input_name} is a torch tensor, which cannot hold molecules; pass SMILES "
            "strings or RDKit Mol objects (a list, a 1-D array or a DataFrame column).")
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
        # A line ending in ":" introduces the SMILES and caret lines that follow it.
        lines = [line.rstrip(":").rstrip() for line in lines
                 if line and not line.startswith("~")]
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


def _rings_known(mol):
    """Whether RDKit has perceived the rings of ``mol`` (it has not when only
    ``UpdatePropertyCache`` ran; fingerprints then fail deep inside RDKit)."""
    from rdkit import rdBase

    with rdBase.BlockLogs():  # RDKit logs a stack trace before raising
        try:
            mol.GetRingInfo().NumRings()
        except RuntimeError:
            return False
    return True


def _as_parsed(mol):
    """A valid ``Mol`` input in the form ``Chem.MolFromSmiles`` gives: ``(mol, reason)``.

    ``MolFromSmiles`` sanitizes, then removes explicit hydrogen atoms (``RemoveHs`` with
    ``implicitOnly=False, updateExplicitCount=True``; hydrogens RDKit must keep, such as
    isotopes or ``[H][H]``, stay), then assigns stereochemistry. A sanitized ``Mol`` has
    its stereochemistry already; an unsanitized one is sanitized here. Returns the input
    itself when nothing needs doing, else a new molecule; ``mol`` is None and ``reason``
    says why when RDKit cannot sanitize it.
    """
    from rdkit import Chem

    unsanitized = mol.NeedsUpdatePropertyCache() or not _rings_known(mol)
    # GetNumAtoms counts the explicit H atoms, GetNumHeavyAtoms does not (cheap, in C++).
    has_h_atoms = mol.GetNumAtoms() != mol.GetNumHeavyAtoms()
    if not (unsanitized or has_h_atoms):
        return mol, None
    try:
        if has_h_atoms:  # RemoveHs returns a sanitized copy
            mol = Chem.RemoveHs(mol, implicitOnly=False, updateExplicitCount=True,
                                sanitize=True)
        else:
            mol = Chem.Mol(mol)
            Chem.SanitizeMol(mol)
        if unsanitized:
            Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
    except Exception as exc:  # noqa: BLE001 - RDKit raises several exception types
        reason = (str(exc).strip().splitlines() or ["no reason given"])[0]
        what = "unsanitized Mol" if unsanitized else "Mol"
        return None, f"{what} fails sanitization: {reason}"
    return mol, None


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
        unsanitized ones (property cache never computed) and ones with explicit hydrogen
        atoms, which are replaced by a copy in the form ``Chem.MolFromSmiles`` gives
        (sanitized, hydrogens removed), or marked invalid when RDKit cannot sanitize
        them. The input molecules are never modified.
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
                words = value.split(None, 1)
                if len(words) > 1:  # RDKit would read the first word, the rest as a name
                    invalid.append(InvalidMolecule(
                        i, value, f"whitespace inside the SMILES: RDKit would read only "
                                  f"{words[0]!r} and take {words[1]!r} as the molecule's name"))
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
                # Never sanitized (e.g. MolFromSmiles(..., sanitize=False)), featurizers
                # would fail inside RDKit; explicit H atoms (Chem.AddHs, SDF files read
                # with removeHs=False) would change the features. Both on a copy.
                mol, reason = _as_parsed(value)
                if mol is None:
                    invalid.append(InvalidMolecule(i, value, reason))
                    continue
                mols[i] = mol
            elif _is_missing(value):
                invalid.append(InvalidMolecule(i, value, "missing value"))
            elif isinstance(value, (bytes, np.bytes_)):
                # bytes columns come from HDF5 files and numpy "S" arrays
                invalid.append(InvalidMolecule(
                    i, value, "bytes, not a SMILES string: decode the column first, "
                              "e.g. [s.decode() for s in X] or np.char.decode(X)"))
            else:
                invalid.append(
                    InvalidMolecule(
                        i,
                        value,
                        f"not a SMILES string or RDKit Mol (got {type(value).__name__})",
                    )
                )
    return mols, invalid


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
        From :func:`parse_molecules` (indices relative to the whole input).
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
        The input's pandas labels (:func:`row_labels`), named beside the positions.

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
        ``Mol`` inputs come back as :func:`parse_molecules` says (sanitized, explicit
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
    values = as_molecule_array(X, input_name=input_name)
    mols, invalid = parse_molecules(values)
    valid = raise_or_mask(invalid, len(values), errors=errors, input_name=input_name,
                          nan_hint=nan_hint, labels=row_labels(X))
    return mols, valid


def set_molecule_input_attributes(estimator, X):
    """Set ``n_features_in_`` (and ``feature_names_in_``) of a molecule estimator in fit.

    Every molecule estimator takes one column of molecules, so ``n_features_in_`` is
    always 1 (a 1-D array counts as one column, as a ``ColumnTransformer`` column
    selection gives). ``feature_names_in_`` is the column's name when ``X`` is a
    one-column DataFrame with a string column name, and is removed otherwise (a stale
    one from an earlier fit).

    Parameters
    ----------
    estimator : estimator instance
        Modified in place.
    X : array-like of shape (n_samples,) or (n_samples, 1)
        The molecules ``fit`` was given (already validated).
    """
    estimator.n_features_in_ = 1
    columns = getattr(X, "columns", None)
    if columns is not None and len(columns) == 1 and isinstance(columns[0], str):
        estimator.feature_names_in_ = np.asarray(list(columns), dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


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
