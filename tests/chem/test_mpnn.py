"""MPNN, MPNNRegressor, MPNNClassifier (Gilmer et al., 2017)."""

import copy

import numpy as np
import pytest
import torch
from rdkit import Chem
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklearn_papers.chem import MPNN, MPNNClassifier, MPNNRegressor
from sklearn_papers.chem._mpnn import _featurize, mpnn_atom_features

# the paper's model (edge network, GRU, set2set) trained with a constant lr on
# every molecule, small; the defaults are chemprop's shape and training
SMALL = dict(hidden_size=8, n_steps=2, set2set_steps=2, edge_hidden_size=8, batch_size=4,
             message="edge_network", readout="set2set", lr_schedule="constant",
             early_stopping=False)
MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "C", "O"]
Y = np.array([len(s) for s in MOLS], dtype=float)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # Tiny graph models run fastest single-threaded; restore the caller's setting.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def fitted_regressor():
    return MPNNRegressor(**SMALL, max_epochs=3, random_state=0).fit(MOLS, Y)


def test_default_network_is_directed_with_mean_readout():
    # the defaults (chemprop's D-MPNN shape): directed messages, mean readout
    reg = MPNNRegressor(hidden_size=8, max_epochs=3, batch_size=4, random_state=0)
    reg.fit(MOLS, Y)
    assert reg.module_.encoder.directed is not None
    assert reg.module_.encoder.out_features == 8 and reg.n_iter_ == 3
    assert np.isfinite(reg.predict(MOLS)).all()
    # warm-up then decay ends at a tenth of the peak learning rate
    assert reg.net_.optimizer_.param_groups[0]["lr"] == pytest.approx(reg.lr / 10)
    assert MPNN(hidden_size=8, random_state=0).fit(MOLS).transform(MOLS).shape == (12, 8)


def test_regressor_quick(fitted_regressor):
    pred = fitted_regressor.predict(MOLS)
    assert pred.shape == (12,) and pred.dtype == np.float64 and np.isfinite(pred).all()
    assert len(fitted_regressor.loss_curve_) == fitted_regressor.n_iter_ == 3
    assert np.isfinite(fitted_regressor.loss_curve_).all()


def test_regressor_multi_output_in_original_units():
    # Targets far from 0 with very different scales: standardised inside, original out.
    y = np.column_stack([1000.0 + Y, -0.001 * Y])
    reg = MPNNRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y)
    pred = reg.predict(MOLS)
    assert pred.shape == (12, 2) and reg.n_outputs_ == 2
    assert np.all(np.abs(pred[:, 0] - 1000.0 - Y.mean()) < 5 * Y.std())
    assert np.all(np.abs(pred[:, 1] + 0.001 * Y.mean()) < 0.005 * Y.std())


def test_regressor_ignores_missing_targets():
    y = np.column_stack([Y, Y[::-1]])
    y_nan = y.copy()
    y_nan[::3, 1] = np.nan
    reg = MPNNRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y_nan)
    assert np.isfinite(reg.predict(MOLS)).all()
    with pytest.raises(ValueError, match=r"y column\(s\) \[1\] hold no label"):
        MPNNRegressor(**SMALL, max_epochs=1).fit(MOLS, np.column_stack([Y, Y * np.nan]))


@pytest.mark.parametrize("kind", ["binary", "multiclass", "multitask"])
def test_classifier_targets(kind):
    if kind == "binary":
        y = np.array(["a", "b"] * 6)
    elif kind == "multiclass":
        y = np.arange(12) % 3
    else:
        y = np.column_stack([np.arange(12) % 2, (np.arange(12) // 2) % 2]).astype(float)
        y[[0, 5, 7], 1] = np.nan
    clf = MPNNClassifier(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y)
    proba = clf.predict_proba(MOLS)
    pred = clf.predict(MOLS)
    assert np.isfinite(proba).all()
    if kind == "multitask":
        assert proba.shape == (12, 2) and pred.shape == (12, 2)
        assert set(np.unique(pred)) <= {0, 1}
    else:
        assert proba.shape == (12, len(clf.classes_))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert set(pred) <= set(clf.classes_)


def test_classifier_rejects_bad_targets():
    with pytest.raises(ValueError, match="single class"):
        MPNNClassifier(**SMALL, max_epochs=1).fit(MOLS, np.zeros(12))
    y = np.column_stack([np.arange(12) % 2, np.full(12, 2.0)])
    with pytest.raises(ValueError, match="0, 1 or NaN"):
        MPNNClassifier(**SMALL, max_epochs=1).fit(MOLS, y)


def test_transformer_random_and_trained():
    rand = MPNN(**SMALL, random_state=0).fit(MOLS)
    Xt = rand.transform(MOLS)
    assert Xt.shape == (12, 16) and Xt.dtype == np.float32 and np.isfinite(Xt).all()
    assert rand.n_iter_ == 0 and rand.net_ is None
    names = rand.get_feature_names_out()
    assert list(names) == [f"mpnn{i}" for i in range(16)]
    trained = MPNN(**{**SMALL, "readout": "sum"}, max_epochs=2, random_state=0).fit(MOLS, Y)
    assert trained.transform(MOLS).shape == (12, 8) and trained.n_iter_ == 2
    df = clone(trained).set_output(transform="pandas").fit(MOLS, Y).transform(MOLS[:3])
    assert list(df.columns) == [f"mpnn{i}" for i in range(8)]


def test_single_atom_molecules():
    reg = MPNNRegressor(**SMALL, max_epochs=3, random_state=0).fit(MOLS, Y)  # has C and O
    pred = reg.predict(["C", "O", "N", "[Na+]", "[Cl-]"])
    assert pred.shape == (5,) and np.isfinite(pred).all()
    assert pred[0] != pred[1], "methane and water predicted identically"
    readout = MPNN(**SMALL, random_state=0).fit(MOLS).transform(["C", "O", "[Na+]"])
    assert not np.array_equal(readout[0], readout[1])


def test_remainder_batch_of_one_and_bare_string():
    reg = MPNNRegressor(**{**SMALL, "batch_size": 8}, max_epochs=2, random_state=0)
    reg.fit(MOLS[:9], Y[:9])  # batches of 8 and 1
    pred = reg.predict(["CCO"])
    assert pred.shape == (1,) and np.isfinite(pred).all()
    with pytest.raises(ValueError, match="single str 'CCO'"):
        reg.predict("CCO")


def test_predictions_do_not_depend_on_batch_size(fitted_regressor):
    a = fitted_regressor.predict(MOLS)
    b = copy.deepcopy(fitted_regressor).set_params(batch_size=1)  # inference batches of 1
    np.testing.assert_allclose(b.predict(MOLS), a, rtol=1e-5, atol=1e-6)


def test_explicit_hydrogens_graph_and_same_molecule_same_row():
    mol = Chem.MolFromSmiles("CCO")
    implicit, explicit = _featurize([mol], False)[0], _featurize([mol], True)[0]
    assert (implicit.n_atoms, explicit.n_atoms) == (3, 9)
    assert (implicit.n_edges, explicit.n_edges) == (4, 16)
    # Heavy atoms come first and keep element and hydrogen count; only the degree changes.
    names = list(mpnn_atom_features().feature_names)
    kept = [i for i, n in enumerate(names) if n.startswith(("symbol=", "total_hs="))]
    np.testing.assert_array_equal(explicit.atom_features[:3, kept],
                                  implicit.atom_features[:, kept])
    assert explicit.atom_features[3:, names.index("symbol=H")].all()
    spellings = ["CCO", "OCC", "[CH3][CH2][OH]", "[H]OC([H])([H])C([H])([H])[H]"]
    for explicit_hydrogens in (False, True):
        est = MPNN(**SMALL, explicit_hydrogens=explicit_hydrogens, random_state=0).fit(MOLS)
        out = est.transform(spellings)
        for row in out[1:]:  # same graph; only float rounding across batch rows differs
            np.testing.assert_allclose(row, out[0], rtol=1e-5, atol=1e-7)
    a = MPNN(**SMALL, random_state=0).fit(MOLS).transform(MOLS)
    b = MPNN(**SMALL, explicit_hydrogens=True, random_state=0).fit(MOLS).transform(MOLS)
    assert not np.allclose(a, b)


def test_random_state_reproducible_and_global_rng_untouched():
    outs = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        torch.manual_seed(global_seed)
        state = torch.get_rng_state()
        reg = MPNNRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, Y)
        assert torch.equal(torch.get_rng_state(), state), "global torch RNG was advanced"
        outs.append(reg.predict(MOLS))
        np.testing.assert_array_equal(reg.predict(MOLS), outs[-1])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    other = MPNNRegressor(**SMALL, max_epochs=2, random_state=1).fit(MOLS, Y)
    assert not np.allclose(other.predict(MOLS), outs[0])


def test_invalid_molecules_nan_rows():
    reg = MPNNRegressor(**SMALL, max_epochs=1, errors="nan", random_state=0)
    reg.fit(MOLS + ["C1CC"], np.append(Y, 1.0))
    pred = reg.predict(["CCO", "CC(C", "c1ccccc1"])
    assert np.isnan(pred[1]) and np.isfinite(pred[[0, 2]]).all()
    with pytest.raises(ValueError, match="index 1: 'CC\\(C'"):
        MPNNRegressor(**SMALL, max_epochs=1).fit(["CCO", "CC(C"], [1.0, 2.0])


def test_grid_search_over_n_steps():
    search = GridSearchCV(MPNNRegressor(**SMALL, max_epochs=2, random_state=0),
                          {"n_steps": [1, 3]}, cv=2)
    search.fit(np.array(MOLS, dtype=object), Y)
    assert search.best_params_["n_steps"] in (1, 3)
    assert np.isfinite(search.predict(MOLS[:3])).all()
    assert len(search.cv_results_["mean_test_score"]) == 2


@pytest.mark.slow
def test_regressor_overfit():
    # Memorise 12 molecules: training MSE in standardised units far below 1 (predicting
    # the mean gives exactly 1).
    # (the paper's model, on every molecule: no held-out part to restore a best epoch on)
    reg = MPNNRegressor(hidden_size=16, n_steps=3, set2set_steps=3, edge_hidden_size=16,
                        batch_size=12, lr=1e-2, max_epochs=150, message="edge_network",
                        readout="set2set", lr_schedule="constant", early_stopping=False,
                        random_state=0).fit(MOLS, Y)
    mse = np.mean((reg.predict(MOLS) - Y) ** 2) / Y.var()
    assert mse < 0.05, mse
    assert reg.loss_curve_[-1] < 0.1 * reg.loss_curve_[0]
