"""Targets the molecule regressors cannot use: NaN with one target, NaN given to score,
and no y around a regressor or classifier in SkipInvalidMolecules."""

import numpy as np
import pandas as pd
import pytest

import sklearn_papers.chem as chem
from sklearn_papers.chem import SkipInvalidMolecules

X = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCC", "OCCO"]
SMALL = {
    "NeuralFingerprintRegressor": dict(fp_length=8, conv_width=4, hidden_size=4),
    "MPNNRegressor": dict(hidden_size=4, n_steps=1, set2set_steps=1, edge_hidden_size=4),
    "GroverRegressor": dict(hidden_size=8, n_heads=1, depth=1, ffn_hidden=4,
                            pretrained=None, head="finetune"),
}


def _regressor(name, **kwargs):
    return getattr(chem, name)(max_epochs=1, batch_size=4, random_state=0,
                               **SMALL[name], **kwargs)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_one_target_with_nan_is_refused_naming_the_rows(name):
    y = np.array([1.0, np.nan, 2.0, 3.0, np.nan, 4.0])
    with pytest.raises(ValueError, match=r"y holds NaN in 2 of 6 row\(s\) \(index 1, "
                                         r"index 4\).*Drop those rows \(or impute"):
        _regressor(name).fit(X, y)
    with pytest.raises(ValueError, match=r"index 1, index 4"):
        _regressor(name).fit(X, y.reshape(-1, 1))


def test_nan_targets_of_a_series_are_named_and_left_out_rows_may_hold_nan():
    y = pd.Series([1.0, 2.0, np.nan, 3.0, 4.0, 5.0])
    with pytest.raises(ValueError, match=r"index 2\)"):
        _regressor("MPNNRegressor").fit(X, y)
    # NaN on an invalid molecule (errors="nan") or on a row of weight 0 is left out anyway
    X_bad = X[:5] + ["C1CC"]
    y_bad = np.array([1.0, 2.0, 0.5, 3.0, 4.0, np.nan])
    _regressor("MPNNRegressor", errors="nan").fit(X_bad, y_bad)
    y_w = np.array([1.0, np.nan, 0.5, 3.0, 4.0, 2.0])
    _regressor("MPNNRegressor").fit(X, y_w, sample_weight=[1, 0, 1, 1, 1, 1])


def test_several_targets_keep_nan_as_a_missing_label():
    y = np.c_[[1.0, np.nan, 2.0, 3.0, 1.0, 4.0], np.arange(6.0)]
    pred = _regressor("MPNNRegressor").fit(X, y).predict(X)
    assert pred.shape == (6, 2) and np.isfinite(pred).all()


@pytest.mark.parametrize("name", sorted(SMALL))
def test_score_with_nan_targets_names_y_and_the_rows(name):
    model = _regressor(name).fit(X, np.arange(6.0))
    y = np.array([1.0, 2.0, 3.0, np.nan, 4.0, 5.0])
    with pytest.raises(ValueError, match=r"y holds NaN in 1 of 6 row\(s\) \(index 3\); "
                                         r"score .*Drop those rows of X and y"):
        model.score(X, y)
    assert np.isfinite(model.score(X, np.arange(6.0)))


@pytest.mark.parametrize("inner, kind", [
    (lambda: _regressor("MPNNRegressor"), "regressor"),
    (lambda: chem.NeuralFingerprintClassifier(fp_length=8, conv_width=4, hidden_size=4,
                                              max_epochs=1, random_state=0), "classifier"),
])
def test_skip_invalid_over_a_predictor_needs_y(inner, kind):
    with pytest.raises(ValueError, match=rf"SkipInvalidMolecules over a {kind} \(\w+\) "
                                         r"needs y: call fit\(X, y\)"):
        SkipInvalidMolecules(inner()).fit(X + ["C1CC"])
    with pytest.raises(ValueError, match=r"needs y"):
        SkipInvalidMolecules(inner()).fit(X + ["C1CC"], None)


def test_skip_invalid_over_a_transformer_fits_without_y():
    model = SkipInvalidMolecules(chem.CircularFingerprint(n_bits=16))
    with pytest.warns(UserWarning, match="left 1 of 7"):
        model.fit(X + ["C1CC"])
    assert model.transform(X).shape == (6, 16)


def test_regressor_score_names_text_targets():
    from sklearn_papers.chem import NeuralFingerprintRegressor

    X = np.array(["CCO", "CCN", "CCC", "CCCl", "c1ccccc1", "CC(=O)O"], dtype=object)
    reg = NeuralFingerprintRegressor(max_epochs=1, random_state=0, verbose=0).fit(
        X, np.arange(6.0))
    with pytest.raises(ValueError, match="y must hold numbers: NeuralFingerprintRegressor"):
        reg.score(X, np.array(["a", "b", "c", "d", "e", "f"], dtype=object))


@pytest.mark.parametrize("name", sorted(SMALL))
def test_three_dimensional_targets_are_refused_with_the_shape(name):
    y = np.arange(6.0).reshape(6, 1, 1)
    with pytest.raises(ValueError, match=r"y must be 1-D .* got shape \(6, 1, 1\)"):
        _regressor(name).fit(X, y)
