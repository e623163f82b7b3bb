"""Scaffold splitters: scaffolds never straddle a split; deterministic and balanced modes."""

import warnings

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem.Scaffolds import MurckoScaffold
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import (
    CircularFingerprint,
    ScaffoldKFold,
    ScaffoldSplit,
    murcko_scaffolds,
)
from sklearn_papers.chem._scaffold import _scaffold_smiles
from sklearn_papers.datasets import load_delaney


@pytest.fixture(scope="module")
def bundled_sample():
    """Molecules sampled from five bundled data sets, parsed."""
    from sklearn_papers import datasets

    rng = np.random.RandomState(0)
    out = list(datasets.load_moses_smiles(n_samples=120, return_X_y=True)[0])
    for name in ["load_bbbp", "load_tox21", "load_malaria"]:
        X = np.asarray(getattr(datasets, name)(return_X_y=True)[0], dtype=object).ravel()
        out += [X[i] for i in rng.permutation(len(X))[:120]]
    out += list(datasets.load_cep(n_samples=120, return_X_y=True)[0])
    return [m for m in map(Chem.MolFromSmiles, out) if m is not None]


@pytest.fixture(scope="module")
def delaney():
    X, y = load_delaney(return_X_y=True)
    return np.asarray(X[:300], dtype=object), np.asarray(y[:300])


def _naive_scaffold(smiles):
    """Oracle: RDKit's scaffold molecule written as canonical SMILES."""
    core = MurckoScaffold.GetScaffoldForMol(Chem.MolFromSmiles(smiles))
    return Chem.MolToSmiles(core) if core.GetNumAtoms() else ""


def test_murcko_scaffolds_match_naive_oracle(delaney):
    X, _ = delaney
    got = murcko_scaffolds(X[:60])
    assert got.tolist() == [_naive_scaffold(s) for s in X[:60]]


def _rdkit_scaffold_smiles(mol, include_chirality):
    return MurckoScaffold.MurckoScaffoldSmiles(mol=mol, includeChirality=include_chirality)


@pytest.mark.parametrize("include_chirality", [False, True])
def test_murcko_scaffolds_match_rdkit_on_bundled_molecules(bundled_sample,
                                                           include_chirality):
    mols = bundled_sample
    assert len(mols) > 500
    expected = [_rdkit_scaffold_smiles(m, include_chirality) for m in mols]
    assert murcko_scaffolds(mols, include_chirality=include_chirality).tolist() == expected
    # the linear-time path, which murcko_scaffolds uses above _RDKIT_MAX_ATOMS atoms
    assert [_scaffold_smiles(m, include_chirality) for m in mols] == expected


#: Molecules where the side-chain removal must repeat RDKit's fix-ups: exocyclic double
#: bonds, substituted aromatic N, charges, stereo centres losing a substituent, salts,
#: isotopes, spiro and bridged rings, macrocycles, linkers with branches.
EDGE_CASES = [
    "O=C1CCCCC1", "CC(=O)c1ccccc1", "C=C1CCCCC1C", "Cn1ccnc1", "C[n+]1ccccc1",
    "[Na+].[O-]C(=O)c1ccccc1", "C[C@H]1CC[C@@H](O)CC1", "C[C@@]1(O)CCCC1",
    "N[C@@H](Cc1ccccc1)C(=O)O", "[2H]c1ccccc1", "[13CH3]c1ccccc1", "c1ccc2c(c1)CCC21CCNCC1",
    "C1CC2CCC1C2", "O=S(=O)(c1ccccc1)N1CCCC1", "C1CCCCCCCCCCCCCCCCCCCCCC1CC",
    "c1ccccc1CCCCc1ccccc1CC", "CC(C)(c1ccccc1)c1ccccc1", "N#CC1CCCC1", "O=[N+]([O-])c1ccccc1",
    "C/C=C/C1CCCCC1", "F/C=C1/CCCCC1", "c1ccccc1.c1ccncc1", "CCO.c1ccccc1C", "C1CC1C1CC1",
    "C1CC1CC(CC)C1CC1", "O=C(NC1CC1)C1CCC1=O", "Cc1cc[nH]c1", "C[Si]1(C)CCCC1", "B1OCCO1",
    "c1ccc(cc1)P(=O)(c1ccccc1)c1ccccc1", "CC1=CC(=O)C=CC1=O", "[H]C1CCCCC1",
    "C" + "CC(c1ccccc1)" * 20 + "C", "c1ccccc1" + "C" * 60 + "C1CCCC1",
    "O=C(OC1CCCCC1)" + "C" * 40,
]


@pytest.mark.parametrize("include_chirality", [False, True])
@pytest.mark.parametrize("explicit_h", [False, True])
def test_murcko_scaffolds_match_rdkit_on_edge_cases(include_chirality, explicit_h):
    mols = [Chem.MolFromSmiles(s) for s in EDGE_CASES]
    if explicit_h:
        mols = [Chem.AddHs(m) for m in mols]
    expected = [_rdkit_scaffold_smiles(m, include_chirality) for m in mols]
    assert murcko_scaffolds(mols, include_chirality=include_chirality).tolist() == expected
    assert [_scaffold_smiles(m, include_chirality) for m in mols] == expected


def test_murcko_scaffolds_of_long_chains():
    # RDKit's MurckoScaffold takes 12.8-19.3 s for each of these
    long = ["C" * 1500, "c1ccccc1" + "C" * 1500, "O" + "CCO" * 500]
    assert murcko_scaffolds(long).tolist() == ["", "c1ccccc1", ""]
    # 1,602 atoms; the scaffold runs from the first ring's backbone carbon to the last's
    polystyrene = "C" + "CC(c1ccccc1)" * 200 + "C"
    scaffold = Chem.MolFromSmiles(murcko_scaffolds([polystyrene])[0])
    assert scaffold.GetNumAtoms() == 1602 - 3
    assert scaffold.GetRingInfo().NumRings() == 200


def test_murcko_scaffolds_leave_input_molecules_unchanged():
    mol = Chem.MolFromSmiles("Cn1ccnc1C[C@H](F)c1ccccc1")
    before = Chem.MolToSmiles(mol)
    murcko_scaffolds([mol])
    assert Chem.MolToSmiles(mol) == before


LIPIDS_AND_POLYMERS = [
    "CCCCCCCCCCCCCCCC(=O)OCC(COC(=O)CCCCCCCCCCCCCCC)OC(=O)CCCCCCCCCCCCCCC",  # tripalmitin
    "CCCCCCCC/C=C\\CCCCCCCC(=O)OC1CCC2(C)C(=CCC3C2CCC2(C)C(C(C)CCCC(C)C)CCC32)C1",
    "C" * 2000,
    "O" + "CCO" * 600,
    "C" + "CC(c1ccccc1)" * 150 + "C",
    "c1ccccc1" + "C" * 1500,
]


@pytest.mark.parametrize("splitter", [ScaffoldSplit(test_size=0.25),
                                      ScaffoldSplit(method="balanced", random_state=0),
                                      ScaffoldKFold(n_splits=3)])
def test_scaffold_splitters_on_lipids_and_polymers(delaney, splitter):
    X = np.concatenate([delaney[0][:40], np.array(LIPIDS_AND_POLYMERS, dtype=object)])
    scaffolds = murcko_scaffolds(X)
    n_tests = 0
    for train, test in splitter.split(X):
        assert not set(scaffolds[train]) & set(scaffolds[test])
        assert len(train) + len(test) == len(X)
        n_tests += 1
    assert n_tests == splitter.get_n_splits()


def test_murcko_scaffolds_names_invalid_molecule():
    with pytest.raises(ValueError, match="index 1") as info:
        murcko_scaffolds(["CCO", "C1CC"])
    assert "errors=" not in str(info.value)  # it has no errors option to suggest


@pytest.mark.parametrize("method", ["deterministic", "balanced"])
def test_scaffold_split_keeps_scaffolds_on_one_side(delaney, method):
    X, _ = delaney
    scaffolds = murcko_scaffolds(X)
    splitter = ScaffoldSplit(n_splits=1, test_size=0.2, method=method, random_state=0)
    train, test = next(splitter.split(X))
    assert len(np.intersect1d(train, test)) == 0
    assert len(train) + len(test) == len(X)
    assert not set(scaffolds[train]) & set(scaffolds[test])
    assert abs(len(test) / len(X) - 0.2) < 0.1


def test_deterministic_split_puts_largest_scaffold_groups_in_training(delaney):
    X, _ = delaney
    scaffolds = murcko_scaffolds(X)
    train, test = next(ScaffoldSplit(test_size=0.2).split(X))
    values, counts = np.unique(scaffolds, return_counts=True)
    largest = values[np.argmax(counts)]
    assert largest in set(scaffolds[train])
    # test molecules come from the smallest groups
    sizes = dict(zip(values, counts))
    assert max(sizes[s] for s in scaffolds[test]) <= min(sizes[s] for s in scaffolds[train])
    again = next(ScaffoldSplit(test_size=0.2, random_state=5).split(X))
    np.testing.assert_array_equal(again[1], test)


def test_balanced_split_varies_with_random_state_and_is_reproducible(delaney):
    X, _ = delaney
    tests = [next(ScaffoldSplit(method="balanced", random_state=s).split(X))[1]
             for s in (0, 0, 1)]
    np.testing.assert_array_equal(tests[0], tests[1])
    assert not np.array_equal(tests[0], tests[2])
    splits = list(ScaffoldSplit(n_splits=3, method="balanced", random_state=0).split(X))
    assert len(splits) == 3 and not np.array_equal(splits[0][1], splits[1][1])


NINE = ["c1ccccc1C", "c1ccccc1O", "C1CCCCC1N", "CCO", "c1ccncc1", "CCN", "C1CC1", "C1CCC1",
        "c1ccoc1"]


def test_balanced_splits_differ_when_every_scaffold_group_is_big():
    # 9 molecules, test_size=0.2: every group is larger than half the test size, so
    # only the small groups were shuffled and the 3 splits were identical.
    splits = list(ScaffoldSplit(n_splits=3, method="balanced", random_state=0).split(NINE))
    assert len({tuple(test) for _, test in splits}) == 3
    tests = {tuple(next(ScaffoldSplit(method="balanced", random_state=s).split(NINE))[1])
             for s in range(5)}
    assert len(tests) > 1


def test_balanced_split_warns_when_a_split_repeats():
    X = ["CCO", "c1ccccc1", "C1CCCCC1"]  # three groups: three possible test sets
    with pytest.warns(UserWarning, match=r"split \d repeats split \d; the 3 molecules form "
                                         "3 scaffold group"):
        splits = list(ScaffoldSplit(n_splits=4, method="balanced", random_state=0).split(X))
    assert len(splits) == 4


def test_balanced_kfold_varies_with_random_state_when_every_group_is_big():
    # Three groups of three, two folds: every group is larger than half a fold, and the
    # folds were the same for every random_state.
    X = ["Cc1ccccc1", "Oc1ccccc1", "Nc1ccccc1", "Cc1ccncc1", "Oc1ccncc1", "Nc1ccncc1",
         "CC1CCCCC1", "OC1CCCCC1", "NC1CCCCC1"]
    partitions = {
        frozenset(tuple(test) for _, test in
                  ScaffoldKFold(n_splits=2, method="balanced", random_state=s).split(X))
        for s in range(8)
    }
    assert len(partitions) > 1
    det = [tuple(t) for _, t in ScaffoldKFold(n_splits=2).split(X)]
    assert det == [tuple(t) for _, t in ScaffoldKFold(n_splits=2, random_state=3).split(X)]


def test_scaffold_split_parameter_rules():
    X = ["c1ccccc1C", "c1ccccc1O", "CCO"]
    with pytest.raises(ValueError, match="n_splits must be 1"):
        next(ScaffoldSplit(n_splits=2).split(X))
    with pytest.raises(ValueError, match="test_size"):
        next(ScaffoldSplit(test_size=1.5).split(X))
    with pytest.raises(ValueError, match="too few scaffolds"):
        next(ScaffoldSplit(test_size=0.1).split(["c1ccccc1C", "c1ccccc1O"]))


@pytest.mark.parametrize("method", ["deterministic", "balanced"])
def test_scaffold_kfold_partitions_by_scaffold(delaney, method):
    X, _ = delaney
    scaffolds = murcko_scaffolds(X)
    cv = ScaffoldKFold(n_splits=4, method=method, random_state=0)
    seen = []
    for train, test in cv.split(X):
        assert not set(scaffolds[train]) & set(scaffolds[test])
        seen.append(test)
    np.testing.assert_array_equal(np.sort(np.concatenate(seen)), np.arange(len(X)))
    sizes = [len(t) for t in seen]
    assert max(sizes) - min(sizes) <= max(np.unique(scaffolds, return_counts=True)[1])
    assert cv.get_n_splits() == 4


def test_scaffold_kfold_too_few_scaffolds():
    with pytest.raises(ValueError, match="distinct scaffold"):
        list(ScaffoldKFold(n_splits=3).split(["CCO", "CCN", "c1ccccc1"]))


def test_scaffold_kfold_as_cv_in_grid_search(delaney):
    X, y = delaney
    pipe = make_pipeline(CircularFingerprint(radius=2, n_bits=256), Ridge())
    search = GridSearchCV(pipe, {"ridge__alpha": [0.1, 10.0]}, cv=ScaffoldKFold(n_splits=3))
    search.fit(X, y)
    assert np.isfinite(search.best_score_)
    scores = cross_val_score(pipe, X, y, cv=ScaffoldSplit(n_splits=2, method="balanced",
                                                          random_state=0))
    assert scores.shape == (2,)
    assert repr(clone(ScaffoldKFold(n_splits=3))) == repr(ScaffoldKFold(n_splits=3))


def test_scaffold_split_warns_when_a_test_set_holds_one_class():
    from sklearn_papers.datasets import load_bbbp

    X, y = load_bbbp(return_X_y=True)
    with pytest.warns(UserWarning, match="holds only class"):
        train, test = next(ScaffoldSplit(test_size=0.2).split(X, y))
    assert len(np.unique(y[test])) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        _, test = next(ScaffoldSplit(test_size=0.2, method="balanced",
                                     random_state=0).split(X, y))
        next(ScaffoldSplit(test_size=0.2).split(X, np.arange(len(X)) * 0.5))  # regression
    assert len(np.unique(y[test])) == 2
