"""SUMOVAE: numerical stability, seeding, a quick fit on binarised digits, errors."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_digits

from sklearn_papers.estimation import SUMOVAE

FAST = dict(n_components=2, hidden_size=16, max_iter=8, random_state=0)


@pytest.fixture(scope="module")
def normal_data():
    return np.random.RandomState(0).normal(size=(200, 2))


@pytest.fixture(scope="module")
def fitted(normal_data):
    return SUMOVAE(**FAST).fit(normal_data)


def test_scores_have_right_shapes_and_are_finite(fitted, normal_data):
    s20 = fitted.score_samples(normal_data[:20])
    s1 = fitted.score_samples(normal_data[:1])
    assert s20.shape == (20,) and s1.shape == (1,)
    assert np.isfinite(s20).all() and np.isfinite(s1).all()
    assert np.isfinite(fitted.score(normal_data))


def test_far_outlier_scores_low_without_nan(fitted, normal_data):
    out = fitted.score_samples(np.array([[1e4, -1e4]]))
    assert not np.isnan(out).any()
    assert out[0] < np.median(fitted.score_samples(normal_data))


def test_large_magnitude_data_gives_finite_estimates(normal_data):
    X = normal_data * 1000 + 5000
    vae = SUMOVAE(**FAST).fit(X)
    s = vae.score_samples(X[:20])
    assert np.isfinite(s).all()
    # densities in the original units: log p shifts by -d log(1000) (about -13.8)
    assert np.median(s) < -10


def test_default_model_fits_200_normal_points(normal_data):
    """The defaults fit a small 2-D data set with finite scores and losses."""
    vae = SUMOVAE(random_state=0).fit(normal_data)
    assert np.isfinite(vae.score_samples(normal_data[:20])).all()
    assert np.isfinite(vae.loss_curve_).all()


def test_random_state_reproducible(normal_data):
    torch.manual_seed(3)
    np.random.seed(3)
    state = torch.random.get_rng_state()
    a = SUMOVAE(**FAST).fit(normal_data)
    assert torch.equal(torch.random.get_rng_state(), state)
    torch.manual_seed(4)
    np.random.seed(4)
    b = SUMOVAE(**FAST).fit(normal_data)
    c = SUMOVAE(**{**FAST, "random_state": 1}).fit(normal_data)
    X = normal_data[:10]
    np.testing.assert_array_equal(a.score_samples(X), a.score_samples(X))
    np.testing.assert_array_equal(a.transform(X), a.transform(X))
    np.testing.assert_allclose(a.score_samples(X), b.score_samples(X), rtol=1e-5)
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=1e-5)
    assert not np.allclose(a.transform(X), c.transform(X))


@pytest.mark.parametrize("objective", ["sumo", "iwae"])
def test_quick_fit_on_binarised_digits_improves_likelihood(objective):
    X = (load_digits().data[:300] > 7).astype(np.float64)
    vae = SUMOVAE(n_components=4, hidden_size=32, objective=objective, max_iter=5,
                  random_state=0).fit(X)
    assert vae.likelihood_ == "bernoulli"
    assert vae.loss_curve_[-1] < vae.loss_curve_[0]
    samples = vae.sample(5)
    assert samples.shape == (5, 64) and set(np.unique(samples)) <= {0.0, 1.0}
    assert vae.transform(X[:3].astype(np.float32)).dtype == np.float32
    assert vae._k() == 6


def test_bernoulli_rejects_values_outside_unit_interval():
    X = np.zeros((10, 3))
    X[4, 2] = 2.5
    with pytest.raises(ValueError, match=r"X\[4, 2\] = 2.5"):
        SUMOVAE(likelihood="bernoulli", max_iter=1).fit(X)


def test_score_samples_depends_only_on_each_row_and_the_seed(fitted, normal_data):
    """A row's Monte Carlo draws are keyed by its values: order, subsets, duplicates agree."""
    X = normal_data[:12]
    full = fitted.score_samples(X)
    perm = np.random.RandomState(1).permutation(12)
    np.testing.assert_allclose(fitted.score_samples(X[perm]), full[perm], rtol=0, atol=1e-9)
    one_by_one = np.concatenate([fitted.score_samples(x[None]) for x in X])
    np.testing.assert_allclose(one_by_one, full, rtol=0, atol=1e-9)
    dup = fitted.score_samples(np.vstack([X[3], X[5], X[3]]))
    assert dup[0] == dup[2]
    np.testing.assert_allclose(dup[[0, 1]], full[[3, 5]], rtol=0, atol=1e-9)
    # the draws still change with the seed (not a fixed, seed-independent pattern)
    other = clone(fitted).set_params(random_state=1)
    other.module_, other.mean_, other.scale_ = fitted.module_, fitted.mean_, fitted.scale_
    other.likelihood_, other.n_features_in_ = fitted.likelihood_, fitted.n_features_in_
    assert not np.allclose(other.score_samples(X), full)


def test_keyed_score_samples_agrees_with_a_tight_iwae_bound(fitted, normal_data):
    """Oracle: mean SUMO score vs IWAE_5000 (a lower bound within ~var/10^4 of log p).

    10^4 SUMO estimates (20 rows x 500). SUMO is unbiased but heavy-tailed, so its sample
    mean usually sits a little below: over 60 seeds the gap averaged -0.03 nats (std 0.1),
    the same as with torch's generator instead of the keyed draws; 0.062 at this seed.
    The keyed draws do not depend on the platform, so this check is deterministic.
    """
    X = normal_data[:20]
    sumo_mean = fitted._sumo_scores(fitted._check_X(X), 500).mean()
    iwae_mean = fitted._iwae_scores(X, 5000).mean()
    assert abs(sumo_mean - iwae_mean) < 0.1


@pytest.mark.parametrize("n_samples", [0, -1, 2.5, None])
def test_sample_rejects_a_non_positive_or_non_int_count(fitted, n_samples):
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        fitted.sample(n_samples)


def test_bernoulli_score_samples_rejects_values_outside_unit_interval():
    # score_samples returned finite "log-densities" for x = 5 under a Bernoulli model.
    X = (np.random.RandomState(0).rand(20, 3) > 0.5).astype(float)
    est = SUMOVAE(n_components=2, hidden_size=8, max_iter=1, n_mc=2, random_state=0).fit(X)
    assert est.likelihood_ == "bernoulli"
    X_new = X[:4].copy()
    X_new[2, 1] = 5.0
    with pytest.raises(ValueError, match=r"likelihood='bernoulli'.*X\[2, 1\] = 5.0"):
        est.score_samples(X_new)
    assert np.isfinite(est.score_samples(X[:4])).all()
