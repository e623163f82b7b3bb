"""Steps 1 and 2 of the molecule input (:mod:`~sklearn_papers.chem._molecule_input`):
read ``X`` into one entry per row (:func:`read_molecules`), and parse each entry once
(:func:`parse_molecules`).

* ``X`` is a 1-D array-like of SMILES strings or RDKit ``Mol`` objects (list, tuple,
  numpy array, pandas Series), or a single-column 2-D array or DataFrame (the shape a
  ``ColumnTransformer`` hands over). A bare string is refused: it is never split into
  characters.
* Invalid entries (unparsable SMILES, empty string, ``None``/NaN, numbers, molecules with
  no atoms) become :class:`InvalidMolecule` records with RDKit's reason; the report step
  (:mod:`~sklearn_papers.chem._report`) raises or masks them.
* ``Mol`` inputs are brought to the form ``Chem.MolFromSmiles`` gives a SMILES, on a copy
  (the input is never modified): an unsanitized ``Mol`` is sanitized, and explicit
  hydrogen atoms (``Chem.AddHs``, SDF files read with ``removeHs=False``) are removed as
  ``MolFromSmiles`` removes them, so a molecule gives the same features whichever way it
  comes in.
* RDKit's log lines never reach the console; their text goes into the reason.

A leaf: it imports nothing of :mod:`sklearn_papers`.
"""

import re
import sys
from contextlib import contextmanager

import numpy as np

__all__ = [
    "InvalidMolecule",
    "as_molecule_array",
    "no_cyclic_gc",
    "parse_molecules",
    "read_molecules",
    "row_labels",
]

_TIMESTAMP = re.compile(r"^\[\d\d:\d\d:\d\d\]\s*")


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


def _is_mol(value):
    from rdkit import Chem

    return isinstance(value, Chem.Mol)


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
    # a tensor exists only once torch is imported; torch itself is never imported here
    if isinstance(X, getattr(sys.modules.get("torch"), "Tensor", ())):
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


def read_molecules(X, *, input_name="X"):
    """Step 1: the entries of ``X``, one per row, and the row labels of a pandas input.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects, as the user gave them.
    input_name : str, default="X"
        Name used in error messages.

    Returns
    -------
    values : ndarray of shape (n_samples,), dtype=object
        The entries, unparsed, in input order (:func:`as_molecule_array`).
    labels : list or None
        The pandas index labels (:func:`row_labels`).

    Raises
    ------
    ValueError, TypeError
        As :func:`as_molecule_array` raises them.
    """
    return as_molecule_array(X, input_name=input_name), row_labels(X)


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

