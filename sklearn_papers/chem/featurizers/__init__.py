"""Molecule featurizers: RDKit molecules -> numpy arrays (atom/bond features, graphs).

Nothing here imports torch; tensors appear only in :mod:`sklearn_papers.nn` collate code.
"""

from sklearn_papers.chem.featurizers._features import (
    DUVENAUD_ATOM_SYMBOLS,
    AtomFeatures,
    BondFeatures,
    Flag,
    OneHot,
    duvenaud_atom_features,
    duvenaud_bond_features,
)
from sklearn_papers.chem.featurizers._graph import (
    MolGraph,
    mol_to_graph,
    mols_to_graphs,
    standardize_mol,
)

__all__ = [
    "DUVENAUD_ATOM_SYMBOLS",
    "AtomFeatures",
    "BondFeatures",
    "Flag",
    "MolGraph",
    "OneHot",
    "duvenaud_atom_features",
    "duvenaud_bond_features",
    "mol_to_graph",
    "mols_to_graphs",
    "standardize_mol",
]
