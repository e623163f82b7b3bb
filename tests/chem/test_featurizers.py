"""Atom/bond features and MolGraph: the paper's 62 + 6 features, graph structure, edge cases."""

import pickle

import numpy as np
import pytest
from rdkit import Chem

from sklearn_papers.chem.featurizers import (
    DUVENAUD_ATOM_SYMBOLS,
    AtomFeatures,
    Flag,
    MolGraph,
    OneHot,
    duvenaud_atom_features,
    duvenaud_bond_features,
    mol_to_graph,
    mols_to_graphs,
)


def _graph(smiles):
    return mol_to_graph(Chem.MolFromSmiles(smiles))


def _naive_atom_row(atom):
    """Oracle: the paper's atom features written out by hand for one atom."""
    symbols = list(DUVENAUD_ATOM_SYMBOLS) + ["Unknown"]
    sym = atom.GetSymbol() if atom.GetSymbol() in DUVENAUD_ATOM_SYMBOLS else "Unknown"
    row = [float(sym == s) for s in symbols]
    row += [float(min(atom.GetDegree(), 5) == d) for d in range(6)]
    row += [float(min(atom.GetTotalNumHs(), 4) == h) for h in range(5)]
    implicit = atom.GetValence(Chem.ValenceType.IMPLICIT)
    row += [float(min(implicit, 5) == v) for v in range(6)]
    row += [float(atom.GetIsAromatic())]
    return row


def test_feature_widths_match_the_paper():
    assert len(DUVENAUD_ATOM_SYMBOLS) == 43
    assert duvenaud_atom_features().n_features == 62
    assert duvenaud_bond_features().n_features == 6
    names = duvenaud_atom_features().feature_names
    assert len(names) == 62 and len(set(names)) == 62
    assert names[0] == "symbol=C" and names[43] == "symbol=unknown"


@pytest.mark.parametrize("smiles", ["CC(=O)Nc1ccc(O)cc1", "C[N+](C)(C)C", "c1ccc2[nH]ccc2c1",
                                    "[U]C", "FS(F)(F)(F)(F)F"])
def test_atom_features_match_naive_oracle(smiles):
    from sklearn_papers.chem.featurizers import standardize_mol

    mol = standardize_mol(Chem.MolFromSmiles(smiles))
    graph = mol_to_graph(mol, standardize=False)
    expected = np.array([_naive_atom_row(a) for a in mol.GetAtoms()], dtype=np.float32)
    np.testing.assert_array_equal(graph.atom_features, expected)
    # each row has exactly one element, degree, H and valence slot, plus the aromatic flag
    np.testing.assert_array_equal(graph.atom_features[:, :61].sum(axis=1), 4.0)


def test_bond_features_benzene_and_acetonitrile():
    benzene = _graph("c1ccccc1")
    np.testing.assert_array_equal(np.unique(benzene.bond_features, axis=0),
                                  [[0, 0, 0, 1, 1, 1]])
    nitrile = _graph("CC#N")
    rows = {tuple(r) for r in nitrile.bond_features.astype(int)}
    assert rows == {(1, 0, 0, 0, 0, 0), (0, 0, 1, 0, 0, 0)}


def test_edges_are_directed_pairs_with_reverse_at_xor_one():
    g = _graph("CC(=O)O")
    assert g.edge_index.shape == (2, 6) and g.bond_features.shape == (6, 6)
    np.testing.assert_array_equal(g.edge_index[:, g.rev_edge_index], g.edge_index[::-1])
    np.testing.assert_array_equal(g.bond_features, g.bond_features[g.rev_edge_index])
    np.testing.assert_array_equal(g.degree, np.bincount(g.edge_index[1], minlength=g.n_atoms))
    assert g.atom_features.dtype == np.float32 and g.edge_index.dtype == np.int64


@pytest.mark.parametrize("smiles", ["C", "O", "N", "[Na+]", "[Cl-]"])
def test_single_atom_molecules_have_empty_edges(smiles):
    """A molecule without bonds is a valid graph with zero edges."""
    g = _graph(smiles)
    assert g.n_atoms == 1 and g.edge_index.shape == (2, 0)
    assert g.bond_features.shape == (0, 6) and g.degree.tolist() == [0]


def test_methane_and_water_differ():
    assert not np.array_equal(_graph("C").atom_features, _graph("O").atom_features)


def test_salt_has_several_fragments_and_charged_atoms():
    g = _graph("[NH4+].[Cl-]")
    assert g.n_atoms == 2 and g.n_edges == 0
    g = _graph("CC(=O)[O-].[Na+]")
    assert g.n_atoms == 5 and g.n_edges == 6


def test_every_spelling_of_ethanol_gives_the_same_graph():
    """Implicit, bracket and explicit hydrogens, any atom order: one graph."""
    graphs = [_graph(s) for s in ["CCO", "OCC", "[CH3][CH2][OH]",
                                  "[H]OC([H])([H])C([H])([H])[H]"]]
    for g in graphs[1:]:
        for a, b in zip(graphs[0], g):
            np.testing.assert_array_equal(a, b)


def test_explicit_hydrogen_atoms_become_implicit():
    with_h = Chem.AddHs(Chem.MolFromSmiles("c1ccccc1O"))
    g = mol_to_graph(with_h)
    assert g.n_atoms == 7
    assert DUVENAUD_ATOM_SYMBOLS.index("H") not in np.flatnonzero(g.atom_features.sum(0))


def test_custom_feature_set_is_a_parameter():
    def symbol(atom):
        return atom.GetSymbol()

    def charged(atom):
        return atom.GetFormalCharge() != 0

    feats = AtomFeatures([OneHot("el", symbol, ["C", "N"]), Flag("charged", charged)])
    g = mol_to_graph(Chem.MolFromSmiles("C[N+](C)(C)C.[Cl-]"), atom_features=feats)
    assert g.atom_features.shape == (6, 4)
    assert list(feats.feature_names) == ["el=C", "el=N", "el=unknown", "charged"]
    assert g.atom_features[:, 3].sum() == 2  # N+ and Cl-
    assert g.atom_features[:, 2].sum() == 1  # Cl is unknown


def test_mols_to_graphs_keeps_none_and_pickles():
    graphs = mols_to_graphs([Chem.MolFromSmiles("CCO"), None])
    assert isinstance(graphs[0], MolGraph) and graphs[1] is None
    feats = pickle.loads(pickle.dumps(duvenaud_atom_features()))
    assert feats.n_features == 62
