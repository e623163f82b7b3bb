"""NeuralFingerprint, NeuralFingerprintRegressor, NeuralFingerprintClassifier."""

import numpy as np
import pytest
import torch
from scipy.spatial.distance import pdist
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import (
    CircularFingerprint,
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
)
from sklearn_papers.datasets import load_delaney

SMALL = dict(fp_length=16, radius=2, conv_width=8, hidden_size=8, batch_size=8)
MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "C", "O"]


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # Tiny graph models run fastest single-threaded; restore the caller's setting.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def delaney():
    X, y = load_delaney(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def fitted_regressor():
    y = np.array([len(s) for s in MOLS], dtype=float)
    return NeuralFingerprintRegressor(**SMALL, max_epochs=3, random_state=0).fit(MOLS, y)


def test_random_fingerprint_quick():
    nf = NeuralFingerprint(fp_length=16, radius=2, random_state=0).fit(MOLS)
    F = nf.transform(MOLS)
    assert F.shape == (12, 16) and F.dtype == np.float32 and np.isfinite(F).all()
    # each atom writes one softmax vector per layer (input + radius layers)
    n_atoms = np.array([3, 6, 4, 7, 6, 4, 6, 9, 6, 7, 1, 1])
    np.testing.assert_allclose(F.sum(axis=1), 3 * n_atoms, rtol=1e-5)
    assert nf.net_ is None and nf.loss_curve_ == [] and nf.n_iter_ == 0


def test_max_epochs_zero_keeps_the_untrained_fingerprint_when_y_is_given():
    y = np.array([len(s) for s in MOLS], dtype=float)
    untrained = NeuralFingerprint(fp_length=16, radius=2, random_state=0).fit(MOLS)
    in_pipeline = NeuralFingerprint(fp_length=16, radius=2, max_epochs=0,
                                    random_state=0).fit(MOLS, y)
    np.testing.assert_array_equal(in_pipeline.transform(MOLS), untrained.transform(MOLS))
    assert in_pipeline.n_iter_ == 0


def test_transform_does_not_depend_on_batch_size():
    nf = NeuralFingerprint(fp_length=16, radius=2, batch_size=5, random_state=0).fit(MOLS)
    F = nf.transform(MOLS)
    nf.set_params(batch_size=1)
    np.testing.assert_allclose(nf.transform(MOLS), F, rtol=1e-5, atol=1e-6)


def test_regressor_quick(fitted_regressor):
    reg = fitted_regressor
    pred = reg.predict(MOLS)
    assert pred.shape == (12,) and np.isfinite(pred).all()
    assert len(reg.loss_curve_) == reg.n_iter_ == 3
    assert np.isfinite(reg.loss_curve_).all()


def test_regressor_multi_output_in_original_units():
    y = np.c_[np.linspace(100, 200, 12), np.linspace(-1e-3, 1e-3, 12)]
    reg = NeuralFingerprintRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y)
    pred = reg.predict(MOLS)
    assert pred.shape == (12, 2)
    # standardised internally: predictions land on each target's own scale
    assert 50 < pred[:, 0].mean() < 250 and np.abs(pred[:, 1]).max() < 1e-2


def test_regressor_masks_missing_targets():
    """Targets of weight 0 (and NaN among several targets) are left out of the loss and
    of the standardisation, as in MPNN; NaN in a single target is refused."""
    y = np.array([len(s) for s in MOLS], dtype=float)
    missing = np.array([1, 4, 9])
    y_nan = y.copy()
    y_nan[missing] = np.nan
    with pytest.raises(ValueError, match=r"index 1, index 4, index 9.*Drop those rows"):
        NeuralFingerprintRegressor(**SMALL, max_epochs=1).fit(MOLS, y_nan)
    # Without batch norm and with one batch per epoch, molecules do not interact, so
    # masking a target equals leaving its molecule out (up to float32 summation order).
    params = {**SMALL, "batch_norm": False, "batch_size": 12, "max_epochs": 3,
              "random_state": 0}
    weight = np.ones(len(MOLS))
    weight[missing] = 0.0
    masked = NeuralFingerprintRegressor(**params).fit(MOLS, y, sample_weight=weight)
    kept = [m for i, m in enumerate(MOLS) if i not in missing]
    dropped = NeuralFingerprintRegressor(**params).fit(kept, np.delete(y, missing))
    np.testing.assert_allclose(masked.predict(MOLS), dropped.predict(MOLS), rtol=1e-4)
    np.testing.assert_allclose(masked.loss_curve_, dropped.loss_curve_, rtol=1e-4)
    # multi-output with missing entries in one column
    Y = np.c_[y, y[::-1]]
    Y[::3, 1] = np.nan
    reg = NeuralFingerprintRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, Y)
    assert reg.predict(MOLS).shape == (12, 2) and np.isfinite(reg.predict(MOLS)).all()
    assert np.isfinite(reg.loss_curve_).all()
    with pytest.raises(ValueError, match=r"y column\(s\) \[1\] hold no label"):
        NeuralFingerprintRegressor(**SMALL, max_epochs=1).fit(MOLS, np.c_[y, y * np.nan])
    with pytest.raises(ValueError, match=r"y holds NaN in 12 of 12 row\(s\)"):
        NeuralFingerprintRegressor(**SMALL, max_epochs=1).fit(MOLS, y * np.nan)


@pytest.mark.slow
def test_regressor_overfits_50_molecules(delaney):
    X, y = delaney[0][:50], delaney[1][:50]
    reg = NeuralFingerprintRegressor(fp_length=32, radius=2, conv_width=16, hidden_size=32,
                                     lr=1e-2, alpha=0.0, max_epochs=60, batch_size=25,
                                     random_state=0).fit(X, y)
    mse = np.mean((reg.predict(X) - y) ** 2)
    assert mse < 0.1 * np.var(y), (mse, np.var(y))
    assert reg.loss_curve_[-1] < 0.5 * reg.loss_curve_[0]


def test_trained_transformer_returns_learned_fingerprint():
    y = np.array([len(s) for s in MOLS], dtype=float)
    nf = NeuralFingerprint(**SMALL, max_epochs=2, random_state=0)
    F = nf.fit(MOLS, y).transform(MOLS)
    assert F.shape == (12, 16) and nf.n_outputs_ == 1 and nf.n_iter_ == 2
    random = NeuralFingerprint(**SMALL, random_state=0).fit(MOLS).transform(MOLS)
    assert not np.allclose(F, random)


def test_classifier_binary_and_multiclass():
    y2 = np.array(["a", "b"] * 6)
    clf = NeuralFingerprintClassifier(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y2)
    proba = clf.predict_proba(MOLS)
    assert proba.shape == (12, 2)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert set(clf.predict(MOLS)) <= {"a", "b"}
    y3 = np.arange(12) % 3
    clf3 = NeuralFingerprintClassifier(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y3)
    assert clf3.predict_proba(MOLS).shape == (12, 3) and clf3.n_outputs_ == 3
    np.testing.assert_array_equal(clf3.classes_, [0, 1, 2])


def test_classifier_multitask_masks_missing_labels():
    """Tox21-style targets: 0/1 per task, NaN where a molecule was not assayed."""
    rng = np.random.RandomState(0)
    aromatic = np.array(["c" in s for s in MOLS], dtype=float)
    Y = np.c_[aromatic, 1 - aromatic, rng.randint(0, 2, 12)].astype(float)
    Y[rng.rand(*Y.shape) < 0.3] = np.nan
    clf = NeuralFingerprintClassifier(**SMALL, lr=1e-2, max_epochs=30,
                                      random_state=0).fit(MOLS, Y)
    assert np.isfinite(clf.loss_curve_).all()
    proba = clf.predict_proba(MOLS)
    assert proba.shape == (12, 3) and np.isfinite(proba).all()
    labelled = ~np.isnan(Y[:, 0])
    assert (clf.predict(MOLS)[labelled, 0] == Y[labelled, 0]).mean() >= 0.8
    with pytest.raises(ValueError, match="0, 1 or NaN"):
        clf.fit(MOLS, np.where(np.isnan(Y), 2.0, Y))


def test_classifier_single_class_raises():
    with pytest.raises(ValueError, match="single class"):
        NeuralFingerprintClassifier(**SMALL, max_epochs=1).fit(MOLS, np.zeros(12))


def test_same_random_state_same_output_whatever_the_global_seeds():
    """The seed alone decides the output; the global RNGs are left as they were."""
    y = np.array([len(s) for s in MOLS], dtype=float)
    outs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        state = torch.random.get_rng_state()
        reg = NeuralFingerprintRegressor(**SMALL, max_epochs=2, random_state=0).fit(MOLS, y)
        assert torch.equal(torch.random.get_rng_state(), state), "global torch RNG touched"
        p1, p2 = reg.predict(MOLS), reg.predict(MOLS)
        np.testing.assert_array_equal(p1, p2)
        outs.append(p1)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    other = NeuralFingerprintRegressor(**SMALL, max_epochs=2, random_state=1).fit(MOLS, y)
    assert not np.allclose(other.predict(MOLS), outs[0])
    a = NeuralFingerprint(fp_length=8, random_state=3).fit_transform(MOLS)
    b = NeuralFingerprint(fp_length=8, random_state=3).fit_transform(MOLS)
    np.testing.assert_array_equal(a, b)


def test_remainder_batch_of_one_and_single_molecule_input():
    """9 molecules with batch_size=8 leave a last batch of one (batch norm!)."""
    X = MOLS[:8] + ["C"]
    y = np.arange(9, dtype=float)
    reg = NeuralFingerprintRegressor(**{**SMALL, "batch_size": 8}, max_epochs=2,
                                     random_state=0).fit(X, y)
    pred = reg.predict(["CCO"])
    assert pred.shape == (1,) and np.isfinite(pred).all()
    with pytest.raises(ValueError, match="single str"):
        reg.predict("CCO")


@pytest.mark.parametrize("bad", ["C1CC", "CC(C", "CC(C)(C)(C)(C)C"])
def test_invalid_smiles_raise_or_give_nan_rows(bad, fitted_regressor):
    """An invalid SMILES raises naming its index, or gives a NaN row with errors="nan"."""
    X = ["CCO", bad, "c1ccccc1"]
    with pytest.raises(ValueError, match="index 1"):
        NeuralFingerprint(fp_length=8, random_state=0).fit(MOLS).transform(X)
    nf = NeuralFingerprint(fp_length=8, errors="nan", random_state=0).fit(MOLS)
    F = nf.transform(X)
    assert np.isnan(F[1]).all()
    np.testing.assert_allclose(F[[0, 2]], nf.transform(["CCO", "c1ccccc1"]), rtol=1e-6)
    reg = clone(fitted_regressor).set_params(errors="nan")
    y = np.array([len(s) for s in MOLS + [bad]], dtype=float)
    pred = reg.fit(MOLS + [bad], y).predict(X)  # the bad training row is left out
    assert np.isnan(pred[1]) and np.isfinite(pred[[0, 2]]).all()


def test_classifier_nan_mode_predictions():
    X = MOLS + ["C1CC"]
    y = np.arange(13) % 2
    clf = NeuralFingerprintClassifier(**SMALL, max_epochs=1, errors="nan",
                                      random_state=0).fit(X, y)
    pred = clf.predict(["CCO", "C1CC"])
    assert pred[0] in (0, 1) and np.isnan(pred[1])
    assert np.isnan(clf.predict_proba(["C1CC"])).all()


def test_feature_names_and_pandas_output():
    """Feature names match the output width; set_output(transform="pandas") uses them."""
    nf = NeuralFingerprint(fp_length=8, random_state=0).fit(MOLS)
    names = nf.get_feature_names_out()
    assert list(names) == [f"neuralfingerprint{i}" for i in range(8)]
    df = nf.set_output(transform="pandas").transform(MOLS)
    assert list(df.columns) == list(names)
    np.testing.assert_allclose(df.to_numpy(), nf.set_output(transform="default").transform(MOLS))


def test_grid_search_over_radius_in_pipeline(delaney):
    X, y = delaney[0][:40], delaney[1][:40]
    pipe = make_pipeline(NeuralFingerprint(fp_length=32, max_epochs=30, random_state=0),
                         Ridge())
    search = GridSearchCV(pipe, {"neuralfingerprint__radius": [1, 2]}, cv=2).fit(X, y)
    assert search.best_params_["neuralfingerprint__radius"] in (1, 2)
    assert np.isfinite(search.predict(X[:3])).all()


def test_random_fingerprint_distances_track_ecfp(delaney):
    """The paper's Section 3 check: large random weights behave like ECFP."""
    X = delaney[0][:80]
    ecfp = CircularFingerprint(radius=4, n_bits=2048).fit_transform(X).astype(float)
    nf = NeuralFingerprint(fp_length=512, radius=4, random_state=0).fit_transform(X)
    nf = nf.astype(float)

    def minmax(a, b):  # continuous Tanimoto (Jaccard) distance, as in the paper
        return 1.0 - np.minimum(a, b).sum() / np.maximum(a, b).sum()

    d_ecfp = pdist(ecfp, "jaccard")
    r_large = np.corrcoef(d_ecfp, pdist(nf, minmax))[0, 1]
    small = NeuralFingerprint(fp_length=512, radius=4, init_scale=0.01,
                              random_state=0).fit_transform(X).astype(float)
    r_small = np.corrcoef(d_ecfp, pdist(small, minmax))[0, 1]
    assert r_large > 0.6 and r_large > r_small + 0.2, (r_large, r_small)


def test_invalid_parameters_and_device():
    with pytest.raises(ValueError, match="radius"):
        NeuralFingerprint(radius=-1).fit(MOLS)
    with pytest.raises(ValueError, match="init_scale"):
        NeuralFingerprint(init_scale="big").fit(MOLS)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            NeuralFingerprint(device="cuda").fit(MOLS)
    with pytest.raises(ValueError, match="12 molecules but y has 3"):
        NeuralFingerprintRegressor().fit(MOLS, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("even_batches", [True, False])
def test_numpy_integer_batch_size(even_batches):
    """A batch_size from a numpy grid (np.arange) passes the parameter checks; torch's
    samplers take Python ints only, so it is cast before training and prediction."""
    y = np.arange(len(MOLS), dtype=float)
    reg = NeuralFingerprintRegressor(**{**SMALL, "batch_size": np.int64(5)},
                                     even_batches=even_batches, max_epochs=1,
                                     random_state=0).fit(MOLS, y)
    assert np.isfinite(reg.predict(MOLS)).all()
    same = NeuralFingerprintRegressor(**{**SMALL, "batch_size": 5}, even_batches=even_batches,
                                      max_epochs=1, random_state=0).fit(MOLS, y)
    np.testing.assert_array_equal(reg.predict(MOLS), same.predict(MOLS))
