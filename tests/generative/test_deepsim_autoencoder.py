"""DeePSiMAutoencoder: shapes and layouts, errors, determinism, comparators left untouched,
sample_weight, the variational variant, quick and overfit tiers."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_digits

from sklearn_papers.generative import DeePSiMAutoencoder
from sklearn_papers.nn import ComparatorCNN

TINY = dict(n_components=3, channels=4, max_epochs=2, batch_size=32)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:120], y[:120]


@pytest.fixture(scope="module")
def fitted(digits):
    X, y = digits
    return DeePSiMAutoencoder(**TINY, random_state=0).fit(X, y)


def test_autoencoder_quick(fitted, digits):
    X, _ = digits
    codes = fitted.transform(X)
    assert codes.shape == (120, 3) and codes.dtype == np.float64
    recon = fitted.inverse_transform(codes)
    assert recon.shape == X.shape
    assert recon.min() >= X.min() and recon.max() <= X.max()  # within the training range
    assert fitted.image_shape_ == (8, 8, 1)
    assert fitted.n_iter_ == 2 and len(fitted.loss_curve_) == 2
    assert "classifier (10 classes" in fitted.comparator_description_
    names = fitted.get_feature_names_out()
    assert list(names) == ["deepsimautoencoder0", "deepsimautoencoder1", "deepsimautoencoder2"]


@pytest.mark.parametrize("layout", ["rows", "hw", "hwc"])
def test_inverse_transform_round_trips_the_input_layout(digits, layout):
    X, _ = digits
    images = {"rows": X, "hw": X.reshape(-1, 8, 8), "hwc": X.reshape(-1, 8, 8, 1)}[layout]
    ae = DeePSiMAutoencoder(**{**TINY, "max_epochs": 1}, random_state=0).fit(images)
    out = ae.inverse_transform(ae.transform(images))
    assert out.shape == images.shape
    assert ae.n_features_in_ == 64


def test_multichannel_images_keep_their_channels():
    rng = np.random.RandomState(0)
    images = rng.rand(20, 6, 5, 3).astype(np.float32)
    ae = DeePSiMAutoencoder(**{**TINY, "max_epochs": 1}, random_state=0).fit(images)
    assert ae.image_shape_ == (6, 5, 3)
    out = ae.inverse_transform(ae.transform(images))
    assert out.shape == images.shape and out.dtype == np.float32
    flat = DeePSiMAutoencoder(**{**TINY, "max_epochs": 1}, image_shape=(6, 5, 3),
                              random_state=0).fit(images.reshape(20, -1))
    assert flat.inverse_transform(flat.transform(images.reshape(20, -1))).shape == (20, 90)


def test_wrong_image_shape_names_the_shapes(fitted, digits):
    X, _ = digits
    with pytest.raises(ValueError, match=r"images of shape \(7, 9\).*\(8, 8, 1\)"):
        fitted.transform(np.zeros((2, 7, 9)))
    with pytest.raises(ValueError, match="has 63 features"):
        fitted.transform(X[:, :63])
    with pytest.raises(ValueError, match=r"image_shape=\(8, 9\) has 72 pixels but X has 64"):
        DeePSiMAutoencoder(image_shape=(8, 9), **TINY).fit(X)
    with pytest.raises(ValueError, match="n_components=3"):
        fitted.inverse_transform(np.zeros((2, 4)))


def test_non_finite_pixel_is_named_by_position(digits):
    X, _ = digits
    bad = X.reshape(-1, 8, 8).copy()
    bad[5, 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"X\[5\] is nan at pixel \(row 2, column 3"):
        DeePSiMAutoencoder(**TINY).fit(bad)
    rows = X.copy()
    rows[7, 10] = np.inf
    with pytest.raises(ValueError, match=r"X\[7\] is inf at pixel \(row 1, column 2"):
        DeePSiMAutoencoder(**TINY).fit(rows)


def test_same_random_state_same_model_and_no_global_rng_change(digits, fitted):
    X, y = digits
    torch.manual_seed(123)
    np.random.seed(123)
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()
    again = DeePSiMAutoencoder(**TINY, random_state=0).fit(X, y)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.random.get_state()[1].tolist() == np_state[1].tolist()
    np.testing.assert_array_equal(again.transform(X), fitted.transform(X))
    other = DeePSiMAutoencoder(**TINY, random_state=1).fit(X, y)
    assert not np.allclose(other.transform(X), fitted.transform(X))


def test_torch_module_comparator_is_bit_identical_after_fit(digits):
    X, _ = digits
    torch.manual_seed(0)
    cnn = ComparatorCNN((8, 8, 1), channels=(4, 4), mean=float(X.mean()), std=float(X.std()))
    cnn.train()
    before = {k: v.clone() for k, v in cnn.state_dict().items()}
    ae = DeePSiMAutoencoder(**TINY, comparator=cnn, comparator_layer="relu1",
                            random_state=0).fit(X)
    assert cnn.training  # the caller's module is not even switched to eval
    for k, v in cnn.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.requires_grad for p in cnn.parameters())
    # the private copy used in training did not change either
    used = ae.comparator_.module.state_dict()
    for k, v in before.items():
        assert torch.equal(used[k], v), k


def test_fitted_supcon_embedder_as_comparator_is_unchanged(digits):
    from sklearn_papers.contrastive import SupConEmbedder

    X, y = digits
    emb = SupConEmbedder(encoder="conv", image_shape=(8, 8), n_components=8,
                         projection_dim=8, max_epochs=1, random_state=0).fit(X, y)
    before = {k: v.clone() for k, v in emb.net_.module_.state_dict().items()}
    codes_before = emb.transform(X)
    ae = DeePSiMAutoencoder(**TINY, comparator=emb, comparator_layer="encoder.features.2",
                            random_state=0).fit(X)
    for k, v in emb.net_.module_.state_dict().items():
        assert torch.equal(v, before[k]), k
    np.testing.assert_array_equal(emb.transform(X), codes_before)
    assert ae.comparator_description_ == "fitted SupConEmbedder"


def test_comparator_errors_are_clear(digits):
    X, y = digits
    with pytest.raises(ValueError, match="'nope' is not a submodule"):
        DeePSiMAutoencoder(**TINY, comparator_layer="nope").fit(X, y)
    with pytest.raises(ValueError, match="failed on a batch of flat image rows"):
        DeePSiMAutoencoder(**TINY, comparator=torch.nn.Linear(10, 2)).fit(X)
    with pytest.raises(ValueError, match="Unknown label type"):
        DeePSiMAutoencoder(**TINY).fit(X, np.linspace(0, 1, len(X)))


def test_zero_weight_is_leaving_the_image_out(digits):
    X, y = digits
    w = np.where(np.arange(len(X)) % 3 == 0, 2.0, 1.0)
    w[::5] = 0.0
    keep = w > 0
    params = dict(**TINY, random_state=0)
    with_zeros = DeePSiMAutoencoder(**params).fit(X, y, sample_weight=w)
    left_out = DeePSiMAutoencoder(**params).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(with_zeros.transform(X), left_out.transform(X))
    unweighted = DeePSiMAutoencoder(**params).fit(X[keep], y[keep])
    assert not np.allclose(left_out.transform(X), unweighted.transform(X))
    with pytest.raises(ValueError, match="at least one non-zero"):
        DeePSiMAutoencoder(**params).fit(X, y, sample_weight=np.zeros(len(X)))


def test_variational_sample_and_plain_refusal(digits, fitted):
    X, _ = digits
    vae = DeePSiMAutoencoder(**TINY, variational=True, random_state=0).fit(X)
    draws = vae.sample(4)
    assert draws.shape == (4, 64)
    np.testing.assert_array_equal(vae.sample(4), draws)  # random_state fixes the draws
    np.testing.assert_array_equal(vae.transform(X[:3]), vae.transform(X[:3]))
    assert not hasattr(fitted, "sample") and hasattr(vae, "sample")
    with pytest.raises(AttributeError, match="has no attribute 'sample'"):
        fitted.sample(2)
    with pytest.raises(ValueError, match="positive int"):
        vae.sample(0)


def test_pickle_and_clone(fitted, digits):
    X, _ = digits
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(X), fitted.transform(X))
    assert clone(fitted).get_params() == fitted.get_params()


@pytest.mark.slow
def test_autoencoder_overfit():
    X, y = load_digits(return_X_y=True)
    X, y = X[:200], y[:200]
    ae = DeePSiMAutoencoder(n_components=16, channels=16, lambda_adv=0.0, max_epochs=60, batch_size=16,
                            random_state=0).fit(X, y)
    recon = ae.inverse_transform(ae.transform(X))
    # fraction of pixel variance left unexplained, on the training images
    assert ((recon - X) ** 2).mean() / X.var(axis=0).mean() < 0.2


def test_y_of_another_length_is_rejected(digits):
    X, y = digits
    for n_y in (99, 101):
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            DeePSiMAutoencoder(**TINY, random_state=0).fit(X[:100], y[:n_y])


def test_one_class_y_for_the_auto_comparator_is_refused(digits):
    X, y = digits
    with pytest.raises(ValueError, match=r"y has 1 class \(0\.0\).*at least two"):
        DeePSiMAutoencoder(**TINY, random_state=0).fit(X[:12], np.zeros(12))
    # the weight-0 rows are left out first: one class left
    w = (y[:12] == y[0]).astype(float)
    with pytest.raises(ValueError, match="y has 1 class"):
        DeePSiMAutoencoder(**TINY, random_state=0).fit(X[:12], y[:12], sample_weight=w)
    # labels are not used without the feature loss: no complaint
    est = DeePSiMAutoencoder(**{**TINY, "max_epochs": 1}, lambda_feat=0,
                             random_state=0).fit(X[:12], np.zeros(12))
    assert "unused" in est.comparator_description_


def test_all_loss_weights_zero_is_refused():
    est = DeePSiMAutoencoder(lambda_img=0, lambda_feat=0, lambda_adv=0, max_epochs=1)
    with pytest.raises(ValueError, match="lambda_img, lambda_feat and lambda_adv are all 0"):
        est.fit(np.random.RandomState(0).rand(8, 64))
