"""RDKit molecule -> :class:`MolGraph` of plain numpy arrays (no torch here).

The atom and bond feature sets are parameters (:class:`AtomFeatures`, :class:`BondFeatures`),
so every graph model of the package (neural fingerprint, MPNN, GROVER) builds its graphs with
the same code and only chooses its feature set.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["MolGraph", "mol_to_graph", "mols_to_graphs", "standardize_mol"]


class MolGraph(NamedTuple):
    """One molecule as a directed graph of plain numpy arrays.

    Every bond ``k`` between atoms ``u`` and ``v`` gives two directed edges: ``2k`` is
    ``u -> v`` and ``2k + 1`` is ``v -> u``, so the reverse of edge ``e`` is ``e ^ 1``.

    Attributes
    ----------
    atom_features : ndarray of shape (n_atoms, n_atom_features), dtype=float32
        One row per heavy atom (hydrogens are implicit).
    bond_features : ndarray of shape (n_edges, n_bond_features), dtype=float32
        One row per *directed* edge (each bond's row appears twice).
    edge_index : ndarray of shape (2, n_edges), dtype=int64
        ``edge_index[0, e]`` is the source atom and ``edge_index[1, e]`` the target atom
        of directed edge ``e``. Empty (shape ``(2, 0)``) for a molecule without bonds.
    degree : ndarray of shape (n_atoms,), dtype=int64
        Number of heavy-atom neighbours of each atom (its in-degree in ``edge_index``).
    """

    atom_features: np.ndarray
    bond_features: np.ndarray
    edge_index: np.ndarray
    degree: np.ndarray

    @property
    def n_atoms(self):
        """Number of atoms (nodes)."""
        return self.atom_features.shape[0]

    @property
    def n_edges(self):
        """Number of directed edges (twice the number of bonds)."""
        return self.edge_index.shape[1]

    @property
    def rev_edge_index(self):
        """ndarray of shape (n_edges,): index of each directed edge's reverse edge."""
        return np.arange(self.n_edges, dtype=np.int64) ^ 1


def standardize_mol(mol):
    """Return one canonical form of a molecule: hydrogens implicit, canonical atom order.

    Explicit hydrogen atoms are removed and the molecule is re-read from its canonical
    isomeric SMILES, so that every spelling of a molecule (``"CCO"``, ``"OCC"``,
    ``"[CH3][CH2][OH]"``, ``"[H]OC([H])([H])C([H])([H])[H]"``) gives the same atoms, the
    same hydrogen counts and the same implicit valences. (RDKit counts the hydrogens of a
    bracket atom such as ``[CH3]`` as explicit, which would otherwise change the
    implicit-valence feature of the paper.)

    Parameters
    ----------
    mol : rdkit.Chem.Mol
        A sanitized molecule.

    Returns
    -------
    mol : rdkit.Chem.Mol
        A new molecule; the input is not modified.
    """
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():
        try:
            no_h = Chem.RemoveHs(mol)
        except Exception:  # noqa: BLE001 - unsanitizable input: keep it as given
            no_h = Chem.Mol(mol)
        canonical = Chem.MolFromSmiles(Chem.MolToSmiles(no_h))
    # A canonical SMILES that does not re-parse is an RDKit corner case; keep the graph.
    return canonical if canonical is not None and canonical.GetNumAtoms() else no_h


def mol_to_graph(mol, atom_features=None, bond_features=None, *, standardize=True):
    """Featurize one RDKit molecule into a :class:`MolGraph`.

    Parameters
    ----------
    mol : rdkit.Chem.Mol
        The molecule (with at least one atom). Salts (several fragments), charged atoms
        and molecules without bonds are fine.
    atom_features : AtomFeatures, default=None
        The atom feature set; :func:`duvenaud_atom_features` (62 values) when None.
    bond_features : BondFeatures, default=None
        The bond feature set; :func:`duvenaud_bond_features` (6 values) when None.
    standardize : bool, default=True
        Apply :func:`standardize_mol` first (implicit hydrogens, canonical atom order).

    Returns
    -------
    graph : MolGraph
    """
    from sklearn_papers.chem.featurizers._features import (
        duvenaud_atom_features,
        duvenaud_bond_features,
    )

    atom_features = duvenaud_atom_features() if atom_features is None else atom_features
    bond_features = duvenaud_bond_features() if bond_features is None else bond_features
    if standardize:
        mol = standardize_mol(mol)
    atoms = list(mol.GetAtoms())
    bonds = list(mol.GetBonds())
    x = atom_features(atoms)
    e = bond_features(bonds)
    if bonds:
        ends = np.array([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in bonds],
                        dtype=np.int64)
        edge_index = np.empty((2, 2 * len(bonds)), dtype=np.int64)
        edge_index[0, 0::2], edge_index[1, 0::2] = ends[:, 0], ends[:, 1]
        edge_index[0, 1::2], edge_index[1, 1::2] = ends[:, 1], ends[:, 0]
        e = np.repeat(e, 2, axis=0)
    else:
        edge_index = np.zeros((2, 0), dtype=np.int64)
        e = np.zeros((0, bond_features.n_features), dtype=np.float32)
    degree = np.bincount(edge_index[1], minlength=len(atoms)).astype(np.int64)
    return MolGraph(x, e, edge_index, degree)


def mols_to_graphs(mols, atom_features=None, bond_features=None, *, standardize=True):
    """Featurize a list of molecules; ``None`` entries stay ``None``.

    Parameters
    ----------
    mols : list of rdkit.Chem.Mol or None
        As returned by :func:`sklearn_papers.chem.check_molecules`.
    atom_features, bond_features, standardize
        As in :func:`mol_to_graph`.

    Returns
    -------
    graphs : list of MolGraph or None
    """
    return [
        None if mol is None
        else mol_to_graph(mol, atom_features, bond_features, standardize=standardize)
        for mol in mols
    ]
