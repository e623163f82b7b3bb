"""Atom and bond feature sets as data: ordered blocks of one-hot codes and flags.

A feature set is a list of blocks; each block reads one property of an RDKit atom (or bond)
and writes a one-hot code or a 0/1 flag. The paper's sets are :func:`duvenaud_atom_features`
and :func:`duvenaud_bond_features`; other graph models build their own from the same blocks.
Everything returns numpy ``float32``.
"""

from itertools import repeat
from operator import methodcaller

import numpy as np

__all__ = [
    "DUVENAUD_ATOM_SYMBOLS",
    "AtomFeatures",
    "BondFeatures",
    "Flag",
    "OneHot",
    "duvenaud_atom_features",
    "duvenaud_bond_features",
]

#: The 43 element symbols of the authors' atom features (Duvenaud et al. 2015, code release
#: ``neuralfingerprint/features.py``); any other element sets the extra "unknown" slot.
DUVENAUD_ATOM_SYMBOLS = (
    "C", "N", "O", "S", "F", "Si", "P", "Cl", "Br", "Mg", "Na", "Ca", "Fe", "As", "Al",
    "I", "B", "V", "K", "Tl", "Yb", "Sb", "Sn", "Ag", "Pd", "Co", "Se", "Ti", "Zn", "H",
    "Li", "Ge", "Cu", "Au", "Ni", "Cd", "In", "Mn", "Zr", "Cr", "Pt", "Hg", "Pb",
)


class OneHot:
    """One-hot code of a property over a fixed list of choices.

    Parameters
    ----------
    name : str
        Prefix of the feature names (``"symbol"`` gives ``"symbol=C"``, ...).
    getter : callable
        ``getter(atom_or_bond) -> value``. Must be a module-level function (picklable).
    choices : sequence
        The values with their own slot, in order.
    unknown : {"extra", "last", "ignore"}, default="extra"
        A value outside ``choices`` sets an extra final slot named ``"<name>=unknown"``
        (``"extra"``), the last choice's slot (``"last"``: integer counts clipped to their
        largest value, as the authors' ``one_of_k_encoding_unk`` does), or no slot
        (``"ignore"``).
    """

    def __init__(self, name, getter, choices, unknown="extra"):
        self.name = name
        self.getter = getter
        self.choices = tuple(choices)
        self.unknown = unknown
        self._index = {c: i for i, c in enumerate(self.choices)}

    @property
    def n_features(self):
        return len(self.choices) + (self.unknown == "extra")

    @property
    def feature_names(self):
        names = [f"{self.name}={c}" for c in self.choices]
        return names + [f"{self.name}=unknown"] if self.unknown == "extra" else names

    def columns(self, items):
        """Slot index of each item, ndarray of shape (n_items,); -1 for no slot."""
        fallback = {"extra": len(self.choices), "last": len(self.choices) - 1,
                    "ignore": -1}[self.unknown]
        # map over C-level callables: no Python frame per item for the lookup
        return np.fromiter(map(self._index.get, map(self.getter, items), repeat(fallback)),
                           dtype=np.int64, count=len(items))


class Flag:
    """A single 0/1 feature.

    Parameters
    ----------
    name : str
        The feature name.
    getter : callable
        ``getter(atom_or_bond) -> bool``. Must be a module-level function (picklable).
    """

    n_features = 1

    def __init__(self, name, getter):
        self.name = name
        self.getter = getter

    @property
    def feature_names(self):
        return [self.name]


def _molecule_level(block):
    """Whether a block reads whole molecules (``molecule_rows(mol)``) rather than items."""
    return hasattr(block, "molecule_rows")


class _FeatureSet:
    def __init__(self, blocks):
        self.blocks = list(blocks)

    @property
    def n_features(self):
        """Total width of a feature row."""
        return sum(b.n_features for b in self.blocks)

    @property
    def feature_names(self):
        """ndarray of str of shape (n_features,): one name per column."""
        return np.asarray([n for b in self.blocks for n in b.feature_names], dtype=object)

    def _fill_items(self, out, items):
        """Write the columns of the per-item blocks (one-hot codes, flags, scalars)."""
        rows = np.arange(len(items))
        offset = 0
        for block in self.blocks:
            if _molecule_level(block):
                pass
            elif isinstance(block, OneHot):
                cols = block.columns(items)
                hit = cols >= 0
                out[rows[hit], offset + cols[hit]] = 1.0
            else:  # Flag (0/1) or a real-valued block (float64 values, cast once)
                dtype = bool if isinstance(block, Flag) else np.float64
                out[:, offset] = np.fromiter(map(block.getter, items), dtype=dtype,
                                             count=len(items))
            offset += block.n_features

    def __call__(self, items):
        """Feature rows of a list of RDKit atoms (or bonds) of one molecule.

        Returns
        -------
        features : ndarray of shape (len(items), n_features), dtype=float32
        """
        out = np.zeros((len(items), self.n_features), dtype=np.float32)
        if not items:
            return out
        self._fill_items(out, items)
        offset, index = 0, None
        for block in self.blocks:
            if _molecule_level(block):
                if index is None:
                    mol = items[0].GetOwningMol()
                    index = np.fromiter(map(methodcaller("GetIdx"), items), dtype=np.int64,
                                        count=len(items))
                out[:, offset:offset + block.n_features] = block.molecule_rows(mol)[index]
            offset += block.n_features
        return out

    def rows(self, items, mols):
        """Feature rows of all items of several molecules at once.

        Parameters
        ----------
        items : list of rdkit.Chem.Atom (or Bond)
            Every atom (bond) of each molecule of ``mols``, in index order, molecule after
            molecule (as :func:`molecule_items` gives).
        mols : list of rdkit.Chem.Mol

        Returns
        -------
        features : ndarray of shape (len(items), n_features), dtype=float32
            The rows ``self(items_of_one_molecule)`` would give, concatenated.
        """
        out = np.zeros((len(items), self.n_features), dtype=np.float32)
        if not items:
            return out
        self._fill_items(out, items)
        offset = 0
        for block in self.blocks:
            if _molecule_level(block):
                out[:, offset:offset + block.n_features] = np.concatenate(
                    [block.molecule_rows(m) for m in mols])
            offset += block.n_features
        return out

    def __repr__(self):
        names = [b.name if hasattr(b, "name") else type(b).__name__ for b in self.blocks]
        return f"{type(self).__name__}({names}, n_features={self.n_features})"


def molecule_items(mols, kind):
    """Every atom (``kind="atoms"``) or bond (``"bonds"``) of each molecule, in index order.

    Returns
    -------
    items : list of rdkit.Chem.Atom or rdkit.Chem.Bond
        Molecule after molecule.
    counts : ndarray of shape (len(mols),), dtype=int64
        Items of each molecule.
    """
    items = []
    counts = np.empty(len(mols), dtype=np.int64)
    # ``GetAtomWithIdx`` mapped over a range: one C++ call per atom, without the Python
    # iterator of ``Mol.GetAtoms()`` (about half the cost).
    for i, mol in enumerate(mols):
        n = mol.GetNumAtoms() if kind == "atoms" else mol.GetNumBonds()
        items.extend(map(mol.GetAtomWithIdx if kind == "atoms" else mol.GetBondWithIdx,
                         range(n)))
        counts[i] = n
    return items, counts


class AtomFeatures(_FeatureSet):
    """An ordered set of atom feature blocks (:class:`OneHot`, :class:`Flag`).

    Parameters
    ----------
    blocks : list of OneHot or Flag
        Each block reads an RDKit ``Atom``.
    """


class BondFeatures(_FeatureSet):
    """An ordered set of bond feature blocks (:class:`OneHot`, :class:`Flag`).

    Parameters
    ----------
    blocks : list of OneHot or Flag
        Each block reads an RDKit ``Bond``.
    """


# Getters are module-level, picklable callables (joblib workers); ``methodcaller`` calls
# the RDKit method without a Python frame per atom.
_symbol = methodcaller("GetSymbol")
_degree = methodcaller("GetDegree")
_total_hs = methodcaller("GetTotalNumHs")
_aromatic = methodcaller("GetIsAromatic")
_conjugated = methodcaller("GetIsConjugated")
_in_ring = methodcaller("IsInRing")


def _implicit_valence_getter():
    from rdkit import Chem

    return methodcaller("GetValence", Chem.ValenceType.IMPLICIT)


def _bond_type(bond):
    return str(bond.GetBondType())


def duvenaud_atom_features():
    """The paper's 62 atom features (Duvenaud et al., 2015, Section 4 and code release).

    One-hot element over :data:`DUVENAUD_ATOM_SYMBOLS` plus unknown (44), heavy-atom degree
    0-5 (6; larger degrees use the degree-5 slot), total hydrogens 0-4 (5; more use the
    4 slot), implicit valence 0-5 (6; more use the 5 slot), aromatic (1).

    Returns
    -------
    features : AtomFeatures
        ``features.n_features == 62``.
    """
    return AtomFeatures([
        OneHot("symbol", _symbol, DUVENAUD_ATOM_SYMBOLS, unknown="extra"),
        OneHot("degree", _degree, range(6), unknown="last"),
        OneHot("total_hs", _total_hs, range(5), unknown="last"),
        OneHot("implicit_valence", _implicit_valence_getter(), range(6), unknown="last"),
        Flag("aromatic", _aromatic),
    ])


def duvenaud_bond_features():
    """The paper's 6 bond features: single, double, triple, aromatic, conjugated, in ring.

    A bond of another type (dative, ...) sets none of the four type slots.

    Returns
    -------
    features : BondFeatures
        ``features.n_features == 6``.
    """
    return BondFeatures([
        OneHot("bond_type", _bond_type, ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC"),
               unknown="ignore"),
        Flag("conjugated", _conjugated),
        Flag("in_ring", _in_ring),
    ])

