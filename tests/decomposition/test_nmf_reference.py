"""_sklearn_mu_curve: scikit-learn's MU solver scored along its iterations."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.decomposition import NMF as SkNMF

from sklearn_papers.decomposition import NMF
from sklearn_papers.decomposition._nmf_reference import _sklearn_mu_curve
from sklearn_papers.utils._sklearn_compat import _initialize_nmf


def _start(seed=0):
    X = np.abs(np.random.RandomState(seed).randn(30, 12))
    W0, H0 = _initialize_nmf(X, 3, init="nndsvda", random_state=seed)
    return X, W0, H0


@pytest.mark.parametrize("loss", ["frobenius", "kullback-leibler"])
def test_curve_continues_one_run_and_matches_this_package_objective(loss):
    X, W0, H0 = _start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve, H = _sklearn_mu_curve(X, W0.copy(), H0.copy(), loss, [1, 3, 8])
        # one uninterrupted run of 8 iterations ends where the resumed runs do
        one = SkNMF(3, beta_loss=loss, solver="mu", init="custom", max_iter=8, tol=0)
        one.fit_transform(X, W=W0.copy(), H=H0.copy())
    assert curve.shape == (3,) and curve.dtype == np.float64
    assert_allclose(H, one.components_, rtol=1e-8, atol=1e-12)
    assert np.all(np.diff(curve) <= 1e-12 * curve[0])  # Lee & Seung: never increases
    # the first checkpoint: the objective this package's NMF records after one iteration
    ours = NMF(3, beta_loss=loss, init="custom", max_iter=1, tol=0)
    ours.fit(X, W=W0.copy(), H=H0.copy())
    assert_allclose(curve[0], ours.loss_curve_[0], rtol=1e-8)


@pytest.mark.parametrize("checkpoints", [[], [0, 2], [3, 3], [4, 2]])
def test_bad_checkpoints_are_named(checkpoints):
    X, W0, H0 = _start()
    with pytest.raises(ValueError, match="checkpoints must be strictly increasing"):
        _sklearn_mu_curve(X, W0, H0, "frobenius", checkpoints)
