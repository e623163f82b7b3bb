"""GroverFeaturizer's fingerprint branch and GroverRegressor's SVR head."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, GroverRegressor

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC",
        "CCCCO", "c1ccccc1O", "CCCl", "NCCO"]
Y = np.array([-0.2, -2.1, 0.5, -0.9, 0.1, 0.3, -3.0, -1.6, -0.4, -2.4, -1.7, -3.8,
              -0.6, -0.05, -1.1, 0.9])
#: The shipped checkpoint, no descriptors (fast): the embedding and the fingerprint.
FAST = dict(descriptors=False, verbose=0)


@pytest.fixture(scope="module")
def fitted():
    # Fitted once for the module; do not mutate.
    return GroverFeaturizer(**FAST).fit(MOLS)


def test_blocks_are_embedding_then_ecfp4_bits(fitted):
    Z = fitted.transform(MOLS)
    width = fitted.embedding_dim_
    assert Z.shape == (len(MOLS), width + 1024) and Z.dtype == np.float32
    bits = CircularFingerprint(radius=2, n_bits=1024).transform(MOLS)
    np.testing.assert_array_equal(Z[:, width:], bits)
    names = fitted.get_feature_names_out()
    assert names[0] == "groverfeaturizer0" and names[width - 1] == f"groverfeaturizer{width - 1}"
    assert list(names[width:]) == list(CircularFingerprint(n_bits=1024).get_feature_names_out())


def test_embedding_is_standardized_and_balanced_against_the_bits(fitted):
    raw = GroverFeaturizer(fingerprint_bits=0, **FAST).fit(MOLS).transform(MOLS)
    Z = fitted.transform(MOLS).astype(np.float64)
    width = fitted.embedding_dim_
    rest, bits = Z[:, :width], Z[:, width:]
    expected = (raw - raw.mean(axis=0)) / np.where(raw.std(axis=0) > 0, raw.std(axis=0), 1)
    np.testing.assert_allclose(rest, expected * fitted.embedding_weight_, atol=1e-4)

    def mean_squared_distance(F):
        d2 = ((F[:, None, :] - F[None, :, :]) ** 2).sum(axis=-1)
        return d2.sum() / (len(F) * (len(F) - 1))

    # equal by construction on the training molecules, up to float32 rounding
    np.testing.assert_allclose(mean_squared_distance(rest), mean_squared_distance(bits),
                               rtol=1e-4)


def test_descriptors_block_sits_between_and_is_scaled_with_the_embedding():
    est = GroverFeaturizer(verbose=0).fit(MOLS)
    n_desc = len(est.descriptors_.descriptor_names_)
    Z = est.transform(MOLS)
    assert Z.shape[1] == est.embedding_dim_ + n_desc + 1024
    names = est.get_feature_names_out()
    assert list(names[est.embedding_dim_:est.embedding_dim_ + n_desc]) == list(
        est.descriptors_.descriptor_names_)
    assert names[-1] == "ecfp4_1023"


@pytest.mark.parametrize("off", [0, None])
def test_zero_or_none_disables_the_branch(off):
    est = GroverFeaturizer(fingerprint_bits=off, **FAST).fit(MOLS)
    assert est.fingerprint_ is None and est.embedding_scaler_ is None
    assert est.transform(MOLS).shape == (len(MOLS), est.embedding_dim_)


def test_radius_and_bits_are_the_fingerprints():
    est = GroverFeaturizer(fingerprint_bits=64, fingerprint_radius=1, **FAST).fit(MOLS)
    Z = est.transform(MOLS)
    np.testing.assert_array_equal(Z[:, est.embedding_dim_:],
                                  CircularFingerprint(radius=1, n_bits=64).transform(MOLS))
    assert est.get_feature_names_out()[-1] == "ecfp2_63"


@pytest.mark.parametrize("params, match", [
    ({"fingerprint_bits": -1}, "fingerprint_bits"),
    ({"fingerprint_bits": 1.5}, "fingerprint_bits"),
    ({"fingerprint_bits": 2**24 + 1}, "fingerprint_bits"),
    ({"fingerprint_radius": -1}, "fingerprint_radius"),
    ({"fingerprint_radius": "2"}, "fingerprint_radius"),
])
def test_bad_fingerprint_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        GroverFeaturizer(**FAST, **params).fit(MOLS)


def test_fit_transform_clone_pickle_and_pandas_output(fitted):
    Z = fitted.transform(MOLS)
    np.testing.assert_array_equal(GroverFeaturizer(**FAST).fit_transform(MOLS), Z)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fitted)).transform(MOLS), Z)
    assert clone(fitted).get_params()["fingerprint_bits"] == 1024
    est = clone(fitted).set_output(transform="pandas").fit(MOLS)
    frame = est.transform(MOLS)
    assert list(frame.columns) == list(est.get_feature_names_out())


def test_invalid_molecules_get_nan_rows_in_every_block():
    est = GroverFeaturizer(errors="nan", **FAST).fit(MOLS + ["not a smiles"])
    Z = est.transform(["CCO", "not a smiles", "c1ccccc1"])
    assert np.isnan(Z[1]).all() and np.isfinite(Z[[0, 2]]).all()


def test_load_refuses_the_branch_and_save_does_not_store_it(fitted, tmp_path):
    folder = fitted.save(tmp_path / "ckpt")
    loaded = GroverFeaturizer.load(folder)
    assert loaded.fingerprint_bits == 0 and loaded.fingerprint_ is None
    np.testing.assert_array_equal(loaded.transform(MOLS),
                                  GroverFeaturizer(fingerprint_bits=0, **FAST).fit(
                                      MOLS).transform(MOLS))
    with pytest.raises(ValueError, match="fingerprint_bits=1024"):
        GroverFeaturizer.load(folder, fingerprint_bits=1024)


# -- GroverRegressor(head="svr") ----------------------------------------------------------
@pytest.fixture(scope="module")
def svr_head():
    return GroverRegressor(head="svr", verbose=0).fit(MOLS, Y)


def test_svr_head_is_deterministic(svr_head):
    pred = svr_head.predict(MOLS)
    assert pred.shape == (len(MOLS),) and pred.dtype == np.float64
    np.testing.assert_array_equal(GroverRegressor(
        head="svr", verbose=0, random_state=7).fit(MOLS, Y).predict(MOLS), pred)
    # it fits the training targets better than their mean
    assert np.mean((pred - Y) ** 2) < np.var(Y)
    assert svr_head.net_ is None and len(svr_head.svr_) == 1
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(svr_head)).predict(MOLS), pred)


def test_svr_head_leaves_numpy_global_random_state_untouched():
    state = np.random.get_state()[1].copy()
    reg = GroverRegressor(head="svr", verbose=0).fit(MOLS, Y)
    reg.predict(MOLS)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_svr_head_predictions_shift_with_y(svr_head):
    # an SVR's intercept takes a shift of the targets; the folds follow the median
    shifted = GroverRegressor(head="svr", verbose=0).fit(MOLS, Y + 3)
    np.testing.assert_allclose(shifted.predict(MOLS), svr_head.predict(MOLS) + 3,
                               rtol=1e-6, atol=1e-6)
    assert svr_head.svr_[0].C in (1, 10, 100, 1000, 10000)


def test_svr_head_several_targets_with_missing_labels():
    Y2 = np.column_stack([Y, -Y])
    Y2[0, 1] = Y2[3, 0] = np.nan
    reg = GroverRegressor(head="svr", verbose=0).fit(MOLS, Y2)
    assert reg.predict(MOLS).shape == (len(MOLS), 2) and len(reg.svr_) == 2


def test_svr_head_refuses_nan_in_one_target_and_skips_invalid_molecules():
    y = Y.copy()
    y[2] = np.nan
    with pytest.raises(ValueError, match="row"):
        GroverRegressor(head="svr", verbose=0).fit(MOLS, y)
    reg = GroverRegressor(head="svr", verbose=0, errors="nan").fit(
        MOLS + ["nope"], np.append(Y, 1.0))
    pred = reg.predict(["CCO", "nope"])
    assert np.isfinite(pred[0]) and np.isnan(pred[1])


def test_svr_head_sample_weight_zero_equals_leaving_rows_out():
    w = np.ones(len(MOLS))
    w[:3] = 0
    a = GroverRegressor(head="svr", verbose=0).fit(MOLS, Y, sample_weight=w)
    b = GroverRegressor(head="svr", verbose=0).fit(MOLS[3:], Y[3:])
    np.testing.assert_allclose(a.predict(MOLS), b.predict(MOLS), rtol=1e-6, atol=1e-6)


def test_finetuning_parameters_with_the_svr_head_warn():
    with pytest.warns(UserWarning, match="max_epochs=3.*head='finetune'"):
        GroverRegressor(head="svr", max_epochs=3, verbose=0).fit(MOLS, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GroverRegressor(head="finetune", max_epochs=1, verbose=0, random_state=0).fit(MOLS, Y)


def test_bad_head_raises():
    with pytest.raises(ValueError, match="head"):
        GroverRegressor(head="kernel").fit(MOLS, Y)
