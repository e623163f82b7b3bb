"""Regressors warn when a prediction lies far outside the training targets' range."""

import pickle
import warnings

import numpy as np
import pytest

from sklearn_papers.chem import (
    ExtrapolationWarning,
    GroverRegressor,
    MPNNRegressor,
    NeuralFingerprintRegressor,
)
from sklearn_papers.chem._targets import training_range, warn_extrapolation

# alkanes and alcohols of 1 to 8 carbons, the target growing with the chain
CHAINS = ["C" * n for n in range(1, 9)] + ["C" * n + "O" for n in range(1, 9)]
LENGTHS = np.array([n for n in range(1, 9)] + [n + 0.5 for n in range(1, 9)])
SMALL = {
    NeuralFingerprintRegressor: dict(fp_length=16, hidden_size=8, max_epochs=2),
    MPNNRegressor: dict(hidden_size=8, n_steps=2, set2set_steps=2, edge_hidden_size=8,
                        max_epochs=2),
    GroverRegressor: dict(hidden_size=8, n_heads=1, depth=2, pretrained=None, max_epochs=2,
                         head="finetune"),
}


def _caught(func, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args)
    return out, [w for w in caught if issubclass(w.category, ExtrapolationWarning)]


def test_margin_is_the_range_width():
    low, high = np.array([-5.0]), np.array([1.0])  # width 6: bounds -11 and 7
    far, caught = _caught(warn_extrapolation, np.array([-11.0, 7.0, 0.0]), low, high, "R")
    assert not far.any() and not caught
    far, caught = _caught(warn_extrapolation, np.array([-11.01, 7.0, 7.01, np.nan]), low,
                          high, "R")
    np.testing.assert_array_equal(far, [True, False, True, False])
    message = str(caught[0].message)
    assert len(caught) == 1 and message.startswith("R predicted 2 of 4 molecule(s)")
    for part in ("-5 to 1", "width (6)", "0 (-11)", "2 (7.01)", "nearest training"):
        assert part in message


def test_many_rows_are_counted_and_the_first_listed():
    pred = np.full(25, 100.0)
    _, caught = _caught(warn_extrapolation, pred, np.array([0.0]), np.array([1.0]), "R")
    message = str(caught[0].message)
    assert "25 of 25" in message and "9 (100) and 15 more" in message


def test_columns_are_checked_apart_and_constant_columns_not_at_all():
    y = np.array([[0.0, 3.0, np.nan], [1.0, 3.0, np.nan]])
    low, high = training_range(y)
    np.testing.assert_array_equal(low[:2], [0.0, 3.0])
    assert np.isnan(low[2]) and np.isnan(high[2])
    pred = np.array([[0.5, 50.0, 9.0], [2.5, 3.0, 9.0], [0.5, 3.0, 9.0]])
    far, caught = _caught(warn_extrapolation, pred, low, high, "R")
    np.testing.assert_array_equal(far, [False, True, False])
    assert "target column 0" in str(caught[0].message)


@pytest.mark.parametrize("ensemble_size", [1, 3])
def test_neural_fingerprint_warns_for_a_long_chain_and_not_in_range(ensemble_size):
    # the sum over atoms of the neural fingerprint grows with the molecule; the mean of
    # several networks as well
    reg = NeuralFingerprintRegressor(max_epochs=60, ensemble_size=ensemble_size,
                                     random_state=0, verbose=0)
    reg.fit(CHAINS, LENGTHS)
    pred, caught = _caught(reg.predict, ["CCC", "C" * 60, "CCCCO"])
    assert pred[1] > LENGTHS.max() + np.ptp(LENGTHS)
    assert len(caught) == 1 and "1 of 3 molecule(s)" in str(caught[0].message)
    assert "Rows (prediction): 1 (" in str(caught[0].message)
    _, caught = _caught(reg.predict, CHAINS)
    assert not caught
    # a pickled model keeps the range
    _, caught = _caught(pickle.loads(pickle.dumps(reg)).predict, ["C" * 60])
    assert len(caught) == 1


@pytest.mark.parametrize("cls", list(SMALL))
def test_every_molecule_regressor_checks_its_predictions(cls, monkeypatch):
    from sklearn_papers.chem import _graph_estimator

    reg = cls(random_state=0, verbose=0, **SMALL[cls]).fit(CHAINS, LENGTHS)
    np.testing.assert_array_equal(reg._y_low_, [1.0])
    np.testing.assert_array_equal(reg._y_high_, [8.5])
    _, caught = _caught(reg.predict, CHAINS)
    assert not caught
    # the network's outputs moved far off: the shared prediction path warns
    shifted = _graph_estimator.destandardize_outputs
    monkeypatch.setattr(_graph_estimator, "destandardize_outputs",
                        lambda *args: shifted(*args) + 100.0)
    _, caught = _caught(reg.predict, CHAINS[:3])
    assert len(caught) == 1 and cls.__name__ in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller


def test_zero_weight_rows_are_outside_the_range():
    w = np.ones(len(LENGTHS))
    y = LENGTHS.copy()
    y[0], w[0] = 1000.0, 0.0
    reg = MPNNRegressor(random_state=0, verbose=0, **SMALL[MPNNRegressor])
    reg.fit(CHAINS, y, sample_weight=w)
    assert reg._y_high_[0] == 8.5 and reg._y_low_[0] == 1.5


def test_rows_far_in_different_columns_are_listed_with_their_own_column():
    low, high = training_range(np.array([[0.0, 10.0], [1.0, 20.0]]))
    pred = np.array([[5.0, 15.0], [0.5, 50.0], [0.5, 15.0]])
    far, caught = _caught(warn_extrapolation, pred, low, high, "R")
    np.testing.assert_array_equal(far, [True, True, False])
    message = str(caught[0].message)
    for part in ("0 (column 0: 5)", "1 (column 1: 50)", "target column 0: 0 to 1",
                 "target column 1: 10 to 20, width (10)"):
        assert part in message
    assert "(0.5)" not in message and "column 0: 0.5" not in message
