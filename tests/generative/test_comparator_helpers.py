"""The shared comparator of several fits: trained once, scored, its features read."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from sklearn_papers.generative._base import (
    _comparator_accuracy,
    _comparator_features,
    _fit_comparator,
)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return (X[:120] / 16.0).astype(np.float32), y[:120]


def test_fit_comparator_is_seeded_and_scores_its_own_classes(digits):
    X, y = digits
    a, classes = _fit_comparator(X, y + 10, (8, 8), seed=0, epochs=2)
    b, _ = _fit_comparator(X, y + 10, (8, 8), seed=0, epochs=2)
    np.testing.assert_array_equal(classes, np.arange(10, 20))
    assert not a.training
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)
    acc = _comparator_accuracy(a, classes, X, y + 10)
    with torch.no_grad():
        pred = classes[a(torch.as_tensor(X)).argmax(1).numpy()]
    assert acc == pytest.approx(100 * np.mean(pred == y + 10))
    assert 0.0 <= acc <= 100.0
    # labels outside the classes are never right
    assert _comparator_accuracy(a, classes, X, y) == 0.0


def test_comparator_features_leave_the_module_as_it_is(digits):
    X, y = digits
    module, _ = _fit_comparator(X, y, (8, 8), seed=0, epochs=1)
    before = [p.clone() for p in module.parameters()]
    feats = _comparator_features(module, "head", X[:7])
    assert feats.shape == (7, 10) and feats.dtype == np.float32  # the logits: 10 classes
    with torch.no_grad():
        np.testing.assert_allclose(feats, module(torch.as_tensor(X[:7])).numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert all(torch.equal(p, q) for p, q in zip(before, module.parameters()))
    assert _comparator_features(module, "relu2", X[:7]).shape[0] == 7
