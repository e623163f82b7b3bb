"""The batched featurizers give, bit for bit, the graphs of a naive per-atom RDKit reference.

The reference below is written from the feature definitions (docstrings of
``grover_atom_features``, ``duvenaud_atom_features``, ``mpnn_atom_features``, ...) with one
plain RDKit call per atom, bond and property, on the canonical form
``MolFromSmiles(MolToSmiles(RemoveHs(MolFromSmiles(s))))``. It is compared with what the
estimators featurize (``_graphs``: SMILES given, the fast paths taken) and with
``mols_to_graphs`` on ``Mol`` inputs, on a sample of every bundled molecule data set plus
hand-picked corner cases (explicit and bracket hydrogens, isotopes, salts, charges,
stereo, lone atoms).
"""

import numpy as np
import pytest
from rdkit import Chem, rdBase

from sklearn_papers.chem import (
    GroverFeaturizer,
    MPNNRegressor,
    NeuralFingerprintRegressor,
    check_molecules,
)
from sklearn_papers.chem._mpnn import MPNN_ATOM_SYMBOLS
from sklearn_papers.chem.featurizers import DUVENAUD_ATOM_SYMBOLS, mols_to_graphs
from sklearn_papers.chem.featurizers._grover_features import (
    ACIDIC_SMARTS,
    BASIC_SMARTS,
    HBOND_ACCEPTOR_SMARTS,
    HBOND_DONOR_SMARTS,
    grover_atom_features,
    grover_bond_features,
)
from sklearn_papers.datasets import (
    load_bbbp,
    load_delaney,
    load_freesolv,
    load_moses_smiles,
    load_tox21,
)

CORNER_CASES = [
    "[H]OC([H])([H])C([H])([H])[H]", "[CH3][CH2][OH]", "OCC", "[Na+].[Cl-]", "C", "O",
    "[2H]C([2H])([2H])O", "[H][H]", "C/C=C/C", "F/C=C\\F", "C[C@H](N)C(=O)O",
    "N[C@@H](C)C(=O)O", "c1ccccc1O", "[NH4+]", "O=[N+]([O-])c1ccccc1", "[Al+3]",
    "C1CC1C2CCCC2C3CCCCCCC3", "CC(=O)Oc1ccccc1C(=O)O", "C1=CC=CC=C1", "[O-]C(=O)CC",
    "S(=O)(=O)(O)O", "P(=O)(O)(O)O", "[Si](C)(C)(C)C", "C#N", "B(O)O", "[Se]",
    "CC[N+](C)(C)C", "c1ccc2ccccc2c1", "C1CCC2(CC1)CCCC2",
]


@pytest.fixture(scope="module")
def smiles():
    """A fixed sample of every bundled molecule data set, plus the corner cases."""
    parts = [
        load_delaney(return_X_y=True)[0][::20], load_freesolv(return_X_y=True)[0][::20],
        load_bbbp(return_X_y=True)[0][::50], load_tox21(return_X_y=True)[0][::150],
        # RDKit-canonical SMILES: the path that keeps the parsed molecule
        load_moses_smiles(n_samples=40, return_X_y=True)[0],
    ]
    X = np.concatenate([np.asarray(p, dtype=object) for p in parts]
                       + [np.asarray(CORNER_CASES, dtype=object)])
    valid = check_molecules(X, errors="nan")[1]
    return [str(s) for s in X[valid]]


def _canonical(smi):
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smi)
        return Chem.MolFromSmiles(Chem.MolToSmiles(Chem.RemoveHs(mol)))


def _one_hot(value, choices, unknown):
    row = [0.0] * (len(choices) + (unknown == "extra"))
    if value in choices:
        row[list(choices).index(value)] = 1.0
    elif unknown == "extra":
        row[-1] = 1.0
    elif unknown == "last":
        row[len(choices) - 1] = 1.0
    return row


def _implicit_valence(atom):
    return atom.GetValence(Chem.ValenceType.IMPLICIT)


def _grover_atom_rows(mol):
    flagged = []
    for smarts in (HBOND_ACCEPTOR_SMARTS, HBOND_DONOR_SMARTS, ACIDIC_SMARTS, BASIC_SMARTS):
        pattern = Chem.MolFromSmarts(smarts)
        flagged.append({i for match in mol.GetSubstructMatches(pattern) for i in match})
    ring_info = mol.GetRingInfo()
    rows = []
    for atom in mol.GetAtoms():
        row = (_one_hot(atom.GetAtomicNum(), range(1, 101), "extra")
               + _one_hot(atom.GetTotalDegree(), range(6), "extra")
               + _one_hot(atom.GetFormalCharge(), (-2, -1, 0, 1, 2), "extra")
               + _one_hot(int(atom.GetChiralTag()), range(4), "extra")
               + _one_hot(atom.GetTotalNumHs(), range(5), "extra")
               + _one_hot(str(atom.GetHybridization()),
                          ("SP", "SP2", "SP3", "SP3D", "SP3D2"), "extra")
               + [float(atom.GetIsAromatic()), atom.GetMass() * 0.01]
               + _one_hot(_implicit_valence(atom), range(7), "extra")
               + [float(atom.GetIdx() in f) for f in flagged]
               + [float(ring_info.IsAtomInRingOfSize(atom.GetIdx(), k))
                  for k in range(3, 9)])
        rows.append(row)
    return rows


def _grover_bond_row(bond):
    return ([0.0] + _one_hot(str(bond.GetBondType()),
                             ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC"), "ignore")
            + [float(bond.GetIsConjugated()), float(bond.IsInRing())]
            + _one_hot(int(bond.GetStereo()), range(6), "extra"))


def _duvenaud_atom_rows(mol):
    return [_one_hot(a.GetSymbol(), DUVENAUD_ATOM_SYMBOLS, "extra")
            + _one_hot(a.GetDegree(), range(6), "last")
            + _one_hot(a.GetTotalNumHs(), range(5), "last")
            + _one_hot(_implicit_valence(a), range(6), "last")
            + [float(a.GetIsAromatic())] for a in mol.GetAtoms()]


def _mpnn_atom_rows(mol):
    return [_one_hot(a.GetSymbol(), MPNN_ATOM_SYMBOLS, "extra")
            + _one_hot(a.GetDegree(), range(6), "last")
            + _one_hot(a.GetFormalCharge(), (-1, 0, 1), "extra")
            + _one_hot(a.GetTotalNumHs(includeNeighbors=True), range(5), "last")
            + _one_hot(str(a.GetHybridization()), ("SP", "SP2", "SP3", "SP3D", "SP3D2"),
                       "extra")
            + [float(a.GetIsAromatic()), float(a.IsInRing())] for a in mol.GetAtoms()]


def _duvenaud_bond_row(bond):
    return (_one_hot(str(bond.GetBondType()), ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC"),
                     "ignore")
            + [float(bond.GetIsConjugated()), float(bond.IsInRing())])


def _reference(smi, atom_rows, bond_row, n_bond_features, explicit_hydrogens=False):
    mol = _canonical(smi)
    if explicit_hydrogens:
        mol = Chem.AddHs(mol)
    x = np.array(atom_rows(mol), dtype=np.float32)
    edges, e = [], []
    for bond in mol.GetBonds():
        u, v = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        edges += [(u, v), (v, u)]
        e += [bond_row(bond)] * 2
    edge_index = np.array(edges, dtype=np.int64).reshape(-1, 2).T
    e = np.array(e, dtype=np.float32).reshape(-1, n_bond_features)
    degree = np.bincount(edge_index[1], minlength=len(x)).astype(np.int64)
    return x, e, edge_index, degree


def _assert_same(graphs, references, smiles):
    assert len(graphs) == len(references)
    for graph, ref, smi in zip(graphs, references, smiles):
        for got, want in zip(graph, ref):
            assert got.dtype == want.dtype and got.shape == want.shape, smi
            assert got.tobytes() == want.tobytes(), smi  # bit for bit


FAMILIES = {
    "grover": (lambda: GroverFeaturizer(descriptors=False, fingerprint_bits=0), _grover_atom_rows,
               _grover_bond_row, 14,
               lambda: (grover_atom_features(), grover_bond_features())),
    "neural_fingerprint": (lambda: NeuralFingerprintRegressor(), _duvenaud_atom_rows,
                           _duvenaud_bond_row, 6, lambda: (None, None)),
    "mpnn": (lambda: MPNNRegressor(), _mpnn_atom_rows, _duvenaud_bond_row, 6, None),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_estimator_graphs_match_the_naive_rdkit_reference(family, smiles):
    make, atom_rows, bond_row, n_bond, _ = FAMILIES[family]
    references = [_reference(s, atom_rows, bond_row, n_bond) for s in smiles]
    graphs, valid = make()._graphs(np.asarray(smiles, dtype=object))
    assert valid.all()
    _assert_same(graphs, references, smiles)


def test_mpnn_explicit_hydrogen_graphs_match_the_reference(smiles):
    sample = smiles[::5]
    references = [_reference(s, _mpnn_atom_rows, _duvenaud_bond_row, 6,
                             explicit_hydrogens=True) for s in sample]
    graphs, _ = MPNNRegressor(explicit_hydrogens=True)._graphs(
        np.asarray(sample, dtype=object))
    _assert_same(graphs, references, sample)


@pytest.mark.parametrize("family", ["grover", "neural_fingerprint"])
def test_mols_to_graphs_on_mol_inputs_match_the_reference(family, smiles):
    _, atom_rows, bond_row, n_bond, feature_sets = FAMILIES[family]
    sample = smiles[::3]
    with rdBase.BlockLogs():
        mols = [Chem.MolFromSmiles(s) for s in sample]
    graphs = mols_to_graphs([None] + mols, *feature_sets())
    assert graphs[0] is None
    _assert_same(graphs[1:], [_reference(s, atom_rows, bond_row, n_bond) for s in sample],
                 sample)


def test_one_molecule_call_equals_the_batched_rows(smiles):
    atoms = grover_atom_features()
    for smi in smiles[::25]:
        mol = _canonical(smi)
        items = list(mol.GetAtoms())
        assert atoms(items).tobytes() == atoms.rows(items, [mol]).tobytes()
        # a subset of atoms in another order gets its own rows, in that order
        picked = items[::-2]
        assert atoms(picked).tobytes() == atoms(items)[[a.GetIdx() for a in picked]].tobytes()
