"""LogPartitionEstimator: the note's mixture, closed-form Gaussians, bad energies, seeding (B18)."""

import math

import numpy as np
import pytest
import torch

from sklearn_papers.estimation import LogPartitionEstimator

LOG_Z_MIXTURE = math.log(2 * math.pi)


def mixture_energy(x):
    """0.5 N([-2,0], I) + 0.5 N([2,0], 4I), unnormalised with Z = 2 pi (Huang's note)."""
    d2 = x[:, 1] ** 2
    a = -((x[:, 0] + 2) ** 2 + d2) / 2 - math.log(2)
    b = -((x[:, 0] - 2) ** 2 + d2) / 8 - math.log(8)
    return -torch.logaddexp(a, b)


def _note_proposal():
    return torch.distributions.MultivariateNormal(torch.zeros(2), 5 * torch.eye(2))


@pytest.fixture(scope="module")
def note_estimates():
    out = {}
    for method, n in [("elbo", 200_000), ("iwae", 200_000), ("sumo", 200_000)]:
        out[method] = LogPartitionEstimator(mixture_energy, proposal=_note_proposal(),
                                            method=method, fit_proposal=False,
                                            n_estimates=n, random_state=0).fit()
    return out


def test_sumo_recovers_log_z_of_the_mixture(note_estimates):
    est = note_estimates["sumo"]
    assert abs(est.log_partition_ - LOG_Z_MIXTURE) < 0.1
    assert abs(est.log_partition_ - LOG_Z_MIXTURE) < 4 * est.log_partition_stderr_


def test_elbo_and_iwae_are_ordered_lower_bounds(note_estimates):
    e, i = note_estimates["elbo"].log_partition_, note_estimates["iwae"].log_partition_
    assert e < i < LOG_Z_MIXTURE
    assert abs(i - 1.76) < 0.02  # Huang's note: 1.7616


def test_untuned_proposal_is_used_as_given(note_estimates):
    est = note_estimates["elbo"]
    assert isinstance(est.proposal_, torch.distributions.MultivariateNormal)
    assert est.variance_["before"] == est.variance_["after"]
    assert est.estimates_.shape == (200_000,)


def test_tuning_lowers_variance_and_recovers_a_gaussian_log_z():
    """U(x) = (x - mu)^T A (x - mu) / 2 has Z = (2 pi)^(d/2) det(A)^(-1/2)."""
    mu = torch.tensor([1.0, -0.5])
    A = torch.tensor([[4.0, 1.0], [1.0, 3.0]])

    def energy(x):
        d = x - mu
        return 0.5 * ((d @ A) * d).sum(1)

    log_z = math.log(2 * math.pi) - 0.5 * math.log(float(torch.linalg.det(A)))
    est = LogPartitionEstimator(energy, n_features=2, max_iter=100, lr=0.05,
                                n_estimates=10_000, random_state=0).fit()
    assert est.variance_["after"] < est.variance_["before"]
    assert abs(est.log_partition_ - log_z) < 4 * est.log_partition_stderr_ + 1e-3
    np.testing.assert_allclose(est.proposal_.mean.numpy(), mu.numpy(), atol=0.1)
    assert est.n_iter_ == 100 and len(est.loss_curve_) == 100
    X = np.array([[1.0, -0.5], [0.0, 0.0]])
    want = -energy(torch.tensor(X, dtype=torch.float32)).numpy() - est.log_partition_
    np.testing.assert_allclose(est.score_samples(X), want, rtol=1e-6)
    assert est.sample(7).shape == (7, 2)


@pytest.mark.parametrize("method", ["elbo", "iwae", "sumo"])
def test_each_method_runs_with_a_mixture_proposal(method):
    est = LogPartitionEstimator(mixture_energy, proposal="mixture", n_features=2,
                                method=method, max_iter=3, n_estimates=500,
                                random_state=0).fit()
    assert np.isfinite(est.log_partition_)
    assert isinstance(est.proposal_, torch.distributions.MixtureSameFamily)


def test_bad_energies_raise_clear_errors():
    kw = dict(n_features=2, max_iter=2, n_estimates=10, random_state=0)
    with pytest.raises(ValueError, match="NaN at sample"):
        LogPartitionEstimator(lambda x: x[:, 0] * float("nan"), **kw).fit()
    with pytest.raises(ValueError, match=r"shape \(n,\)"):
        LogPartitionEstimator(lambda x: x, **kw).fit()
    with pytest.raises(ValueError, match="not differentiable"):
        LogPartitionEstimator(lambda x: 0.5 * (x.detach().numpy() ** 2).sum(1), **kw).fit()
    with pytest.raises(ValueError, match="n_features"):
        LogPartitionEstimator(mixture_energy, max_iter=2).fit()
    # a numpy energy is fine without tuning
    est = LogPartitionEstimator(lambda x: 0.5 * (x.numpy() ** 2).sum(1), n_features=2,
                                fit_proposal=False, n_estimates=100, random_state=0).fit()
    assert np.isfinite(est.log_partition_)


def test_random_state_reproducible_and_global_rng_untouched():
    """B18: same seed -> same result whatever the global seeds; global torch RNG unchanged."""
    kw = dict(n_features=2, max_iter=5, n_estimates=300)
    torch.manual_seed(1)
    np.random.seed(1)
    state = torch.random.get_rng_state()
    a = LogPartitionEstimator(mixture_energy, random_state=0, **kw).fit()
    assert torch.equal(torch.random.get_rng_state(), state)
    torch.manual_seed(2)
    np.random.seed(2)
    b = LogPartitionEstimator(mixture_energy, random_state=0, **kw).fit()
    c = LogPartitionEstimator(mixture_energy, random_state=1, **kw).fit()
    np.testing.assert_allclose(a.estimates_, b.estimates_, rtol=1e-5)
    assert not np.allclose(a.estimates_, c.estimates_)
    np.testing.assert_array_equal(a.sample(5), a.sample(5))
    np.testing.assert_allclose(a.sample(5), b.sample(5), rtol=1e-5)


@pytest.mark.parametrize("n_samples", [0, -1, 2.5, None])
def test_sample_rejects_a_non_positive_or_non_int_count(n_samples):
    # sample(0) and sample(-1) used to fail inside torch's reshape / tensor creation.
    est = LogPartitionEstimator(lambda x: 0.5 * (x**2).sum(1), n_features=2, max_iter=1,
                                n_estimates=10, random_state=0).fit()
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        est.sample(n_samples)
    assert est.sample(3).shape == (3, 2)
