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


def _no_hydrogen_atoms(mol):
    # GetNumAtoms counts explicit H atoms, GetNumHeavyAtoms does not (both in C++).
    return mol.GetNumAtoms() == mol.GetNumHeavyAtoms()


def standardize_mol(mol, smiles=None):
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
    smiles : str, default=None
        The SMILES ``mol`` was read from by ``Chem.MolFromSmiles(smiles)`` (default
        arguments), if so. It saves work: when ``smiles`` is already the canonical SMILES
        of a molecule without hydrogen atoms, re-reading it would give ``mol`` again, and
        ``mol`` itself is returned.

    Returns
    -------
    mol : rdkit.Chem.Mol
        A new molecule, or ``mol`` itself when ``smiles`` was canonical; the input is not
        modified.
    """
    return _standardize(mol, smiles)[0]


def _standardize(mol, smiles=None):
    """:func:`standardize_mol`, and the SMILES the returned molecule was read from by
    ``Chem.MolFromSmiles`` (default arguments), or None when it was not (RDKit corner
    cases: the input itself, hydrogens removed). ``(mol, source)``."""
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():
        if smiles is not None and _no_hydrogen_atoms(mol):
            # ``mol`` is what ``MolFromSmiles`` gives: sanitized, no H atoms, so removing
            # hydrogens would copy it unchanged.
            canonical_smiles = Chem.MolToSmiles(mol)
            if canonical_smiles == smiles:
                return mol, smiles
            canonical, no_h = Chem.MolFromSmiles(canonical_smiles), mol
        else:
            try:
                no_h = Chem.RemoveHs(mol)
            except Exception:  # noqa: BLE001 - unsanitizable input: keep it as given
                no_h = Chem.Mol(mol)
            canonical_smiles = Chem.MolToSmiles(no_h)
            canonical = Chem.MolFromSmiles(canonical_smiles)
    # A canonical SMILES that does not re-parse is an RDKit corner case; keep the graph.
    if canonical is not None and canonical.GetNumAtoms():
        return canonical, canonical_smiles
    return no_h, None


def mol_to_graph(mol, atom_features=None, bond_features=None, *, standardize=True,
                 smiles=None):
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
    smiles : str, default=None
        The SMILES ``mol`` was read from, passed to :func:`standardize_mol` (saves work,
        same graph).

    Returns
    -------
    graph : MolGraph
    """
    return mols_to_graphs([mol], atom_features, bond_features, standardize=standardize,
                          smiles=None if smiles is None else [smiles])[0]


#: Molecules featurized together by :func:`mols_to_graphs` (bounds the temporary arrays).
_CHUNK = 512


def mols_to_graphs(mols, atom_features=None, bond_features=None, *, standardize=True,
                   smiles=None):
    """Featurize a list of molecules; ``None`` entries stay ``None``.

    The same graphs as :func:`mol_to_graph` one molecule at a time, computed for many
    molecules at once: the feature blocks run once over all atoms (bonds) of a chunk of
    molecules, and the edge indices and degrees are built with numpy for the chunk.

    Parameters
    ----------
    mols : list of rdkit.Chem.Mol or None
        As returned by :func:`sklearn_papers.chem.check_molecules`.
    atom_features, bond_features, standardize
        As in :func:`mol_to_graph`.
    smiles : list of (str or None), default=None
        For each molecule, the SMILES it was read from by ``Chem.MolFromSmiles`` (None for
        a molecule given as a ``Mol``); see :func:`standardize_mol`.

    Returns
    -------
    graphs : list of MolGraph or None
    """
    from sklearn_papers.chem.featurizers._features import (
        duvenaud_atom_features,
        duvenaud_bond_features,
    )

    atom_features = duvenaud_atom_features() if atom_features is None else atom_features
    bond_features = duvenaud_bond_features() if bond_features is None else bond_features
    return _graphs_in_chunks(
        mols, smiles, lambda chunk, _: _chunk_graphs(chunk, atom_features, bond_features),
        standardize=standardize)


def _graphs_in_chunks(mols, smiles, featurize, *, standardize=True):
    """The loop of :func:`mols_to_graphs` and of GROVER's fast path: ``None`` entries stay
    ``None``; the other molecules, standardized (:func:`standardize_mol`) when asked, are
    given ``_CHUNK`` at a time to ``featurize(chunk, chunk_smiles)``, which returns one
    graph per molecule. ``chunk_smiles[k]`` is the SMILES ``chunk[k]`` was read from by
    ``Chem.MolFromSmiles``, or None when unknown."""
    mols = list(mols)
    if smiles is not None and len(smiles) != len(mols):
        raise ValueError(f"Got {len(smiles)} SMILES for {len(mols)} molecules.")
    where = [i for i, mol in enumerate(mols) if mol is not None]
    graphs = [None] * len(mols)
    for start in range(0, len(where), _CHUNK):
        part = where[start:start + _CHUNK]
        source = [None if smiles is None else smiles[i] for i in part]
        if standardize:
            standard = [_standardize(mols[i], s) for i, s in zip(part, source)]
        else:
            standard = [(mols[i], s) for i, s in zip(part, source)]
        chunk_graphs = featurize([m for m, _ in standard], [s for _, s in standard])
        for i, graph in zip(part, chunk_graphs):
            graphs[i] = graph
    return graphs


def _chunk_graphs(mols, atom_features, bond_features):
    """MolGraphs of a list of (standardized) molecules, featurized together."""
    from operator import methodcaller

    from sklearn_papers.chem.featurizers._features import molecule_items

    atoms, n_atoms = molecule_items(mols, "atoms")
    bonds, n_bonds = molecule_items(mols, "bonds")
    x = atom_features.rows(atoms, mols)
    begin = np.fromiter(map(methodcaller("GetBeginAtomIdx"), bonds), dtype=np.int64,
                        count=len(bonds))
    end = np.fromiter(map(methodcaller("GetEndAtomIdx"), bonds), dtype=np.int64,
                      count=len(bonds))
    return _split_graphs(x, bond_features.rows(bonds, mols), begin, end, n_atoms, n_bonds)


def _split_graphs(x, bond_rows, begin, end, n_atoms, n_bonds):
    """MolGraphs of a chunk of molecules from its concatenated arrays: ``x`` the atom
    rows, ``bond_rows`` one row per bond, ``begin`` / ``end`` the (per-molecule) atom
    indices of each bond, ``n_atoms`` / ``n_bonds`` per molecule."""
    e = np.repeat(bond_rows, 2, axis=0)  # one row per direction
    edges = np.empty((2, 2 * len(begin)), dtype=np.int64)  # 2k: u -> v, 2k + 1: v -> u
    edges[0, 0::2], edges[1, 0::2] = begin, end
    edges[0, 1::2], edges[1, 1::2] = end, begin
    atom_start = np.concatenate([[0], np.cumsum(n_atoms)])
    edge_start = 2 * np.concatenate([[0], np.cumsum(n_bonds)])
    # in-degree of every atom of the chunk: targets shifted to chunk-wide atom numbers
    shift = np.repeat(atom_start[:-1], 2 * n_bonds)
    degree = np.bincount(edges[1] + shift, minlength=int(atom_start[-1])).astype(np.int64)
    graphs = []
    for k in range(len(n_atoms)):
        a0, a1, e0, e1 = atom_start[k], atom_start[k + 1], edge_start[k], edge_start[k + 1]
        graphs.append(MolGraph(x[a0:a1], e[e0:e1], np.ascontiguousarray(edges[:, e0:e1]),
                               degree[a0:a1]))
    return graphs
