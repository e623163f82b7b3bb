"""FeatureInverter: features in, images out; layers; errors; determinism; weights."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from sklearn_papers.generative import FeatureInverter

TINY = dict(channels=4, max_epochs=2, batch_size=32)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:120], y[:120]


@pytest.fixture(scope="module")
def fitted(digits):
    X, y = digits
    return FeatureInverter(comparator_layer="pool1", **TINY, random_state=0).fit(X, y)


def test_feature_inverter_quick(fitted, digits):
    X, _ = digits
    feats = fitted.transform(X)
    assert feats.shape == (120, 16 * 4 * 4) == (120, fitted.n_comparator_features_)
    images = fitted.inverse_transform(feats)
    assert images.shape == X.shape
    np.testing.assert_array_equal(fitted.predict(X), images)
    assert len(fitted.get_feature_names_out()) == feats.shape[1]


def test_features_match_the_comparator_layer(fitted, digits):
    X, _ = digits
    cnn = fitted.comparator_.module
    with torch.no_grad():
        x = torch.as_tensor(X, dtype=torch.float32)
        x = ((x - cnn.mean) / cnn.std).reshape(-1, 1, 8, 8)
        expected = cnn.pool1(cnn.relu1(cnn.conv1(x))).flatten(1).numpy()
    np.testing.assert_allclose(fitted.transform(X), expected, rtol=1e-4, atol=1e-5)


def test_layers_of_different_depth_have_different_widths(digits):
    X, y = digits
    deep = FeatureInverter(comparator_layer="head", **TINY, random_state=0).fit(X, y)
    assert deep.n_comparator_features_ == 10  # the classifier's logits
    assert deep.inverse_transform(deep.transform(X[:4])).shape == (4, 64)


def test_image_input_layout_is_kept(digits):
    X, _ = digits
    images = X.reshape(-1, 8, 8)
    inv = FeatureInverter(**{**TINY, "max_epochs": 1}, random_state=0).fit(images)
    assert inv.predict(images[:3]).shape == (3, 8, 8)
    assert "random weights" in inv.comparator_description_


def test_errors_name_the_problem(fitted, digits):
    X, _ = digits
    with pytest.raises(ValueError, match="has 16 features but the comparator layer"):
        fitted.inverse_transform(np.zeros((2, 16)))
    with pytest.raises(ValueError, match="images of shape"):
        fitted.transform(np.zeros((2, 4, 16)))
    bad = X.copy()
    bad[3, 63] = -np.inf
    with pytest.raises(ValueError, match=r"X\[3\] is -inf at pixel \(row 7, column 7"):
        FeatureInverter(**TINY).fit(bad)


def test_deterministic_and_comparator_untouched(digits, fitted):
    X, y = digits
    again = FeatureInverter(comparator_layer="pool1", **TINY, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    cnn = torch.nn.Sequential(torch.nn.Linear(64, 12), torch.nn.ReLU())
    before = [p.clone() for p in cnn.parameters()]
    inv = FeatureInverter(cnn, **TINY, random_state=0).fit(X)
    assert inv.n_comparator_features_ == 12
    assert all(torch.equal(a, b) for a, b in zip(before, cnn.parameters()))


def test_zero_weight_is_leaving_the_image_out(digits):
    X, y = digits
    w = np.ones(len(X))
    w[::4] = 0.0
    w[1::4] = 3.0
    keep = w > 0
    a = FeatureInverter(**TINY, random_state=0).fit(X, y, sample_weight=w)
    b = FeatureInverter(**TINY, random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_y_of_another_length_is_rejected(digits):
    X, y = digits
    for n_y in (99, 101):
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            FeatureInverter(**TINY, random_state=0).fit(X[:100], y[:n_y])


def test_all_loss_weights_zero_is_refused():
    est = FeatureInverter(lambda_img=0, lambda_feat=0, lambda_adv=0, max_epochs=1)
    with pytest.raises(ValueError, match="lambda_img, lambda_feat and lambda_adv are all 0"):
        est.fit(np.random.RandomState(0).rand(8, 64))
