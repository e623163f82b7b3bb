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
from sklearn_papers.datasets import load_delaney


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


def test_murcko_scaffolds_names_invalid_molecule():
    with pytest.raises(ValueError, match="index 1"):
        murcko_scaffolds(["CCO", "C1CC"])


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
