"""GROVER inputs and self-supervised labels: feature widths, contextual labels, motifs, vocab."""

from collections import Counter

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import Descriptors

from sklearn_papers.chem.featurizers._grover_features import (
    GROVER_MOTIFS,
    ContextVocab,
    atom_context_label,
    bond_context_label,
    grover_atom_features,
    grover_bond_features,
    grover_graph,
    motif_labels,
)

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"


def test_feature_widths_are_groverss_151_and_14():
    atoms, bonds = grover_atom_features(), grover_bond_features()
    assert atoms.n_features == 151 and len(atoms.feature_names) == 151
    assert bonds.n_features == 14 and len(bonds.feature_names) == 14
    assert len(set(atoms.feature_names)) == 151


def test_atom_feature_row_of_ethanol_oxygen_by_hand():
    mol = Chem.MolFromSmiles("CCO")
    names = list(grover_atom_features().feature_names)
    row = dict(zip(names, grover_atom_features()(list(mol.GetAtoms()))[2]))
    on = {n for n, v in row.items() if v == 1.0}
    # O: atomic number 8, total degree 2 (C + H), charge 0, no chirality, one H, SP3,
    # implicit valence 1, H-bond donor and acceptor, not acidic/basic, no ring.
    assert on == {"atomic_num=8", "total_degree=2", "formal_charge=0", "chiral_tag=0",
                  "total_hs=1", "hybridization=SP3", "implicit_valence=1", "hbond_acceptor",
                  "hbond_donor"}
    assert row["mass/100"] == pytest.approx(15.999 / 100, abs=1e-4)


def test_ring_size_and_bond_features_of_cyclopropane():
    mol = Chem.MolFromSmiles("C1CC1")
    names = list(grover_atom_features().feature_names)
    x = grover_atom_features()(list(mol.GetAtoms()))
    assert (x[:, names.index("ring_size_3")] == 1).all()
    assert (x[:, names.index("ring_size_6")] == 0).all()
    e = grover_bond_features()(list(mol.GetBonds()))
    bnames = list(grover_bond_features().feature_names)
    assert (e[:, bnames.index("bond_type=SINGLE")] == 1).all()
    assert (e[:, bnames.index("in_ring")] == 1).all()
    assert (e[:, bnames.index("no_bond")] == 0).all()


def test_aspirin_atom_labels_match_hand_derived():
    mol = Chem.MolFromSmiles(ASPIRIN)  # atoms in SMILES order
    labels = [atom_context_label(a) for a in mol.GetAtoms()]
    expected = [
        "C_C-SINGLE1",                         # methyl C
        "C_C-SINGLE1_O-DOUBLE1_O-SINGLE1",     # ester carbonyl C
        "O_C-DOUBLE1",                         # its =O
        "O_C-SINGLE2",                         # ester O (bonded to two C)
        "C_C-AROMATIC2_O-SINGLE1",             # ring C bearing the ester O
        "C_C-AROMATIC2", "C_C-AROMATIC2", "C_C-AROMATIC2", "C_C-AROMATIC2",
        "C_C-AROMATIC2_C-SINGLE1",             # ring C bearing the acid
        "C_C-SINGLE1_O-DOUBLE1_O-SINGLE1",     # carboxyl C (as the ester carbonyl C)
        "O_C-DOUBLE1",
        "O_C-SINGLE1",                         # hydroxyl O
    ]
    assert labels == expected


def test_bond_labels_by_hand():
    mol = Chem.MolFromSmiles("CC(=O)O")  # acetic acid: bonds C-C, C=O, C-O
    labels = [bond_context_label(b) for b in mol.GetBonds()]
    single, double = "(SINGLE-STEREONONE-NONE)", "(DOUBLE-STEREONONE-NONE)"
    assert labels == [
        f"{single}_C-{double}1_C-{single}1",
        f"{double}_C-{single}2",
        f"{single}_C-{double}1_C-{single}1",
    ]
    assert atom_context_label(Chem.MolFromSmiles("C").GetAtomWithIdx(0)) == "C"


def test_all_85_motifs_are_rdkits_fr_descriptors_and_match_them():
    names = [n for n, _ in Descriptors._descList if n.startswith("fr_")]
    assert len(GROVER_MOTIFS) == 85 and list(GROVER_MOTIFS) == names
    fns = dict(Descriptors._descList)
    for smiles in [ASPIRIN, "c1ccncc1CN", "O=C1NC(=O)CC1", "CCOP(=O)(O)O", "C"]:
        mol = Chem.MolFromSmiles(smiles)
        expected = np.array([fns[n](mol) > 0 for n in names], dtype=np.float32)
        np.testing.assert_array_equal(motif_labels(mol), expected)
    aspirin = dict(zip(GROVER_MOTIFS, motif_labels(Chem.MolFromSmiles(ASPIRIN))))
    assert aspirin["fr_ester"] == aspirin["fr_benzene"] == aspirin["fr_COO"] == 1
    assert aspirin["fr_amide"] == aspirin["fr_nitro"] == 0


def test_grover_graph_labels_line_up_with_the_standardised_graph():
    graph, atom_labels, bond_labels, motifs = grover_graph(Chem.MolFromSmiles("OC(=O)C"))
    assert graph.atom_features.shape == (4, 151)
    assert graph.bond_features.shape == (6, 14)  # 3 bonds, two directions each
    assert len(atom_labels) == 4 and len(bond_labels) == 3 and motifs.shape == (85,)
    # the same molecule written differently gives the same labels in the same order
    again = grover_graph(Chem.MolFromSmiles("CC(O)=O"))
    assert again[1] == atom_labels and again[2] == bond_labels


def test_vocab_orders_by_frequency_and_maps_rare_labels_to_other():
    counts = Counter({"C_C-SINGLE1": 5, "O_C-DOUBLE1": 3, "N_C-SINGLE1": 3, "S": 1})
    vocab = ContextVocab(counts, min_freq=2)
    assert vocab.itos == ["<pad>", "<other>", "C_C-SINGLE1", "N_C-SINGLE1", "O_C-DOUBLE1"]
    codes = vocab.encode(["O_C-DOUBLE1", "S", "never-seen", "C_C-SINGLE1"])
    np.testing.assert_array_equal(codes, [4, 1, 1, 2])
    assert ContextVocab.from_itos(vocab.itos).stoi == vocab.stoi
    with pytest.raises(ValueError, match="must start with"):
        ContextVocab.from_itos(["C", "<pad>"])


def test_ring_size_flags_match_rdkit_per_atom_queries():
    from rdkit import Chem

    from sklearn_papers.chem.featurizers._grover_features import RingSizeFlags

    block = RingSizeFlags(range(3, 9))
    for smiles in ["C1CC1", "c1ccc2ccccc2c1", "C1CC2CCC1C2", "C1CCCCCCCCCCC1",
                   "O=C1CCCN1c1ccc2c(c1)CCCC2", "CCO", "C12C3C4C1C5C2C3C45"]:
        mol = Chem.MolFromSmiles(smiles)
        atoms = list(mol.GetAtoms())
        want = [[a.IsInRingSize(k) for k in range(3, 9)] for a in atoms]
        np.testing.assert_array_equal(block.flags(mol, atoms), np.array(want, float))


# -- the fast path of the default feature sets is bit for bit the generic one ----------------
#: SMILES that exercise each shortcut of ``grover_mols_to_graphs``: chirality (``@``), bond
#: stereo (``/``), isotopes (``[13C]``, ``[2H]``: mass from ``GetMass``), a dative bond
#: (``->``: its double value is a single bond's), a quadruple bond, kept hydrogen atoms,
#: charges, salts, dummy atoms, heavy and rare elements, one-atom molecules, and SMILES
#: that are not canonical (re-read in canonical order).
_EDGE_CASES = [
    "C[C@H](N)C(=O)O", "N[C@@H](C)C(=O)O", "F/C=C/F", "F/C=C\\Cl", "C/C=C/C=C/C",
    "[13CH4]", "[2H]C([2H])Cl", "[H][H]", "[2H]O[2H]", "N->[Cu+2]", "[Fe]<-N", "C$C",
    "[Na+].[Cl-]", "[CH3][CH2][OH]", "OCC", "C1CC1C2CCCC2", "*C", "[1*]CC",
    "C[S@@](=O)c1ccccc1", "CC=C=CC", "[U]", "[Og]", "C[N+](C)(C)C", "[O-][n+]1ccccc1",
    "C1=CC=CC=C1", "c1ccc2ccccc2c1", "C1CCCCCCC1", "C12C3C4C1C5C2C3C45", "O=[N+]([O-])c1ccccc1",
    "[nH]1cccc1", "OC(=O)CC(O)(CC(=O)O)C(=O)O", "CCN(CC)CC.Cl", "[Se]", "B(O)O", "[SiH4]",
    "C[C@@H]1CC[C@H](C)CC1", "CC(C)(C)c1ccc(O)cc1", "[O-]S(=O)(=O)[O-].[Mg+2]",
]


def _assert_same_graphs(got, want):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), i
        if a is None:
            continue
        for field in a._fields:
            x, y = getattr(a, field), getattr(b, field)
            assert x.dtype == y.dtype and x.shape == y.shape, (i, field)
            assert x.tobytes() == y.tobytes(), (i, field, np.argwhere(x != y)[:3])


def _fast_and_generic(smiles, *, as_mols=False):
    from sklearn_papers.chem import check_molecules
    from sklearn_papers.chem.featurizers import mols_to_graphs
    from sklearn_papers.chem.featurizers._grover_features import grover_mols_to_graphs

    mols, valid = check_molecules(smiles, errors="nan")
    given = None if as_mols else [s if v else None for s, v in zip(smiles, valid)]
    fast = grover_mols_to_graphs(mols, smiles=given)
    generic = mols_to_graphs(mols, grover_atom_features(), grover_bond_features(),
                             smiles=given)
    return fast, generic


@pytest.mark.parametrize("as_mols", [False, True])
def test_fast_path_is_bitwise_the_generic_feature_sets_on_edge_cases(as_mols):
    fast, generic = _fast_and_generic(_EDGE_CASES + ["not a smiles"], as_mols=as_mols)
    assert fast[-1] is None and generic[-1] is None  # invalid entries stay None
    _assert_same_graphs(fast, generic)
    # the shortcuts were taken and still hit the cases they must read from RDKit
    names = list(grover_atom_features().feature_names)
    tags = fast[0].atom_features[:, names.index("chiral_tag=0"):names.index("chiral_tag=0") + 4]
    assert tags[:, 1:3].sum() == 1  # one tetrahedral centre
    mass = fast[_EDGE_CASES.index("[13CH4]")].atom_features[0, names.index("mass/100")]
    assert mass == np.float32(Chem.MolFromSmiles("[13CH4]").GetAtomWithIdx(0).GetMass() * 0.01)
    assert mass != np.float32(Chem.Atom(6).GetMass() * 0.01)  # not the element's weight
    stereo = fast[_EDGE_CASES.index("F/C=C/F")].bond_features[:, 7:]
    assert stereo[:, 0].sum() < stereo.shape[0]  # the double bond is not STEREONONE


@pytest.mark.parametrize("loader", ["load_delaney", "load_freesolv", "load_bbbp",
                                    "load_tox21", "load_moses_smiles"])
def test_fast_path_is_bitwise_the_generic_feature_sets_on_bundled_data(loader):
    import sklearn_papers.datasets as datasets

    kwargs = {"n_samples": 3000} if loader == "load_moses_smiles" else {}
    X = np.asarray(getattr(datasets, loader)(return_X_y=True, **kwargs)[0], dtype=object)
    sample = list(X[np.random.default_rng(0).choice(len(X), 150, replace=False)])
    _assert_same_graphs(*_fast_and_generic(sample))


def test_fast_path_skips_smarts_searches_only_where_no_match_is_possible():
    from sklearn_papers.chem.featurizers._grover_features import _SMARTS_ELEMENTS

    # every flag both searched and skipped in one chunk: molecules with only some of the
    # elements each pattern needs, next to ones that match it
    smiles = ["c1ccccc1", "CCCl", "CC(=O)O", "CCN", "CCS", "C[N+](C)(C)C", "CC(=S)[O-]",
              "c1ccncc1", "[nH]1cccc1", "OCCN", "C[S-]", "CP(=O)(O)O"]
    fast, generic = _fast_and_generic(smiles)
    _assert_same_graphs(fast, generic)
    names = list(grover_atom_features().feature_names)
    for flag, needed in _SMARTS_ELEMENTS.items():
        column = np.concatenate([g.atom_features[:, names.index(flag)] for g in fast])
        assert column.any(), flag  # the pattern still matches where it can
        skipped = 0
        # a molecule without the needed elements has no match (why it may be skipped)
        for g, s in zip(generic, smiles):
            if not {a.GetAtomicNum() for a in Chem.MolFromSmiles(s).GetAtoms()} & set(needed):
                assert not g.atom_features[:, names.index(flag)].any(), (flag, s)
                skipped += 1
        assert skipped, flag  # the skip was exercised


def test_grover_graphs_labels_unchanged_by_the_fast_path():
    from sklearn_papers.chem.featurizers._grover_features import grover_graphs

    mols = [Chem.MolFromSmiles(s) for s in _EDGE_CASES]
    fast = grover_graphs(mols, smiles=_EDGE_CASES)
    generic = grover_graphs(mols, grover_atom_features(), grover_bond_features(),
                            smiles=_EDGE_CASES)
    _assert_same_graphs([f[0] for f in fast], [g[0] for g in generic])
    for f, g in zip(fast, generic):
        assert f[1] == g[1] and f[2] == g[2] and np.array_equal(f[3], g[3])
