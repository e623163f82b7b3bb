"""_batch_norm_errors: a batch-norm classifier's test error by the source of its statistics."""

import numpy as np
import pytest
import torch
from torch import nn

from sklearn_papers.nn._encoders import (
    _batch_norm_errors,
    _batched_error,
    precise_batch_norm,
)


def _net_and_data():
    gen = torch.Generator().manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))
        net[1].running_mean.copy_(torch.randn(6, generator=gen))
        net[1].running_var.copy_(torch.rand(6, generator=gen) + 0.5)
    X = torch.randn(40, 3, generator=gen).numpy()
    X_test = torch.randn(11, 3, generator=gen).numpy()
    y_test = (X_test[:, 0] > 0).astype(np.int64)
    return net, X, X_test, y_test


def _manual_error(net, X, y):
    with torch.no_grad():
        pred = net(torch.as_tensor(X)).argmax(1).numpy()
    return 100.0 * float(np.mean(pred != y))


def test_each_mode_scores_its_own_statistics():
    net, X, X_test, y_test = _net_and_data()
    before = net[1].running_mean.clone()
    err = _batch_norm_errors(net, X, X_test, y_test, batch_size=5)
    assert set(err) == {"running", "precise", "test batches"}
    assert not net.training and torch.equal(net[1].running_mean, before)
    assert err["running"] == pytest.approx(_manual_error(net.eval(), X_test, y_test))
    precise = precise_batch_norm(net, X, batch_size=40).eval()
    assert err["precise"] == pytest.approx(_manual_error(precise, X_test, y_test))
    # 11 rows in batches of 5: the last batch of one row cannot be normalised, 10 scored
    wrong = 0
    train = precise_batch_norm(net, X, batch_size=40).train()  # any copy in training mode
    for i in (0, 5):
        wrong += _manual_error(train, X_test[i:i + 5], y_test[i:i + 5]) * 5 / 100
    assert err["test batches"] == pytest.approx(100.0 * wrong / 10)


def test_batched_error_in_eval_mode_does_not_depend_on_the_batch_size():
    net, _, X_test, y_test = _net_and_data()
    a = _batched_error(net, X_test, y_test, train_mode=False, batch_size=3)
    b = _batched_error(net, X_test, y_test, train_mode=False, batch_size=500)
    assert a == pytest.approx(b) and 0.0 <= a <= 100.0
