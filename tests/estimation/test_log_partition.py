"""LogPartitionEstimator: the note's mixture, closed-form Gaussians, bad energies, seeding."""

import math
import warnings

import numpy as np
import pytest
import torch

from sklearn_papers.estimation import LogPartitionEstimator
from sklearn_papers.estimation._targets import MIXTURE_LOG_Z as LOG_Z_MIXTURE
from sklearn_papers.estimation._targets import _mixture_energy as mixture_energy


def test_the_mixture_energy_integrates_to_its_log_z():
    # exp(-U) on a fine grid wide enough for the N([2, 0], 4I) component
    grid = torch.linspace(-20, 20, 1601, dtype=torch.float64)
    x = torch.cartesian_prod(grid, grid)
    z = torch.exp(-mixture_energy(x)).sum() * (grid[1] - grid[0]) ** 2
    assert math.isclose(math.log(float(z)), LOG_Z_MIXTURE, rel_tol=1e-6)


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
    # a plain numpy energy (x.numpy() on the autograd tensor): our error, not torch's
    with pytest.raises(ValueError, match="fit_proposal=False"):
        LogPartitionEstimator(lambda x: 0.5 * (x.numpy() ** 2).sum(1), **kw).fit()
    with pytest.raises(ValueError, match="n_features"):
        LogPartitionEstimator(mixture_energy, max_iter=2).fit()
    # a numpy energy is fine without tuning
    est = LogPartitionEstimator(lambda x: 0.5 * (x.numpy() ** 2).sum(1), n_features=2,
                                fit_proposal=False, n_estimates=100, random_state=0).fit()
    assert np.isfinite(est.log_partition_)


def test_random_state_reproducible_and_global_rng_untouched():
    """Same seed -> same result whatever the global seeds; global torch RNG unchanged."""
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
    # sample(0) and sample(-1) must not fail inside torch's reshape / tensor creation.
    est = LogPartitionEstimator(lambda x: 0.5 * (x**2).sum(1), n_features=2, max_iter=1,
                                n_estimates=10, random_state=0).fit()
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        est.sample(n_samples)
    assert est.sample(3).shape == (3, 2)


def _standard_normal_energy(x):
    return 0.5 * (x**2).sum(1)


def test_tuning_never_returns_a_proposal_worse_than_an_exact_start():
    """d = 20, q starts exactly at the target: every estimate is log Z (variance ~1e-8).

    Without a check on fresh draws, tuning can drive the variance to ~40-5000 and log Z
    to 17.0 (max_iter=100) or 2.4 (the defaults) against 18.38; the tuned proposal must be
    measured on fresh draws and dropped (with a warning) when it is worse. The tuning
    objective is the batch variance of SUMO, which is ~0 at the exact start (E[SUMO^2]
    would be (log Z)^2 = 338).
    """
    d = 20
    log_z = d / 2 * math.log(2 * math.pi)
    with pytest.warns(UserWarning, match="did not lower the sample variance"):
        est = LogPartitionEstimator(_standard_normal_energy, n_features=d, max_iter=100,
                                    n_estimates=2000, random_state=0).fit()
    assert est.tuning_accepted_ is False
    assert est.variance_["tuned"] > est.variance_["before"]
    assert est.variance_["after"] < 1e-6
    assert abs(est.log_partition_ - log_z) < 1e-3
    np.testing.assert_allclose(est.proposal_.covariance_matrix.numpy(), np.eye(d), atol=1e-4)
    assert not np.allclose(est.tuned_proposal_.covariance_matrix.numpy(), np.eye(d), atol=1e-4)
    assert est.loss_curve_[0] < 1e-4 and len(est.loss_curve_) == 100


def test_accepted_tuning_is_recorded_and_estimated_on_fresh_draws():
    # exp(-|x - 1|^2): Z = pi in 2-d; N(0, I) is a poor start, tuning helps.
    est = LogPartitionEstimator(lambda x: ((x - 1.0) ** 2).sum(1), n_features=2, max_iter=50,
                                n_estimates=2000, random_state=0).fit()
    assert est.tuning_accepted_ is True
    assert est.variance_["tuned"] < est.variance_["before"]
    assert torch.equal(est.tuned_proposal_.mean, est.proposal_.mean)
    assert est.variance_["after"] == pytest.approx(np.var(est.estimates_, ddof=1))
    # the reported estimates are fresh draws, not the ones the choice was made on
    assert est.variance_["after"] != est.variance_["tuned"]
    assert abs(est.log_partition_ - math.log(math.pi)) < 4 * est.log_partition_stderr_ + 0.01
    untuned = LogPartitionEstimator(lambda x: ((x - 1.0) ** 2).sum(1), n_features=2,
                                    fit_proposal=False, n_estimates=50, random_state=0).fit()
    assert untuned.tuning_accepted_ is None and untuned.tuned_proposal_ is None
    assert untuned.variance_["before"] == untuned.variance_["tuned"] == untuned.variance_["after"]


def test_heavy_tailed_importance_weights_warn():
    """q = N(0, 0.1 I) for the target N(0, 4I): w ~ exp(0.49 chi2_2), Pareto k = 0.975.

    The estimate is confidently wrong (log Z ~ 1.2 against 3.22); the estimator must say so.
    A proposal wider than the target has bounded weights (k_hat < 0.5) and no warning.
    """
    energy = lambda x: 0.5 * (x**2).sum(1) / 4.0  # noqa: E731
    narrow = torch.distributions.MultivariateNormal(torch.zeros(2), 0.1 * torch.eye(2))
    with pytest.warns(UserWarning, match="heavy-tailed"):
        est = LogPartitionEstimator(energy, proposal=narrow, fit_proposal=False,
                                    n_estimates=2000, random_state=0).fit()
    assert est.pareto_k_ > 0.7
    wide = torch.distributions.MultivariateNormal(torch.zeros(2), 8.0 * torch.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = LogPartitionEstimator(energy, proposal=wide, fit_proposal=False,
                                    n_estimates=2000, random_state=0).fit()
    assert est.pareto_k_ < 0.5


@pytest.mark.parametrize("shape", [4.0, 2.0, 1.0])
def test_pareto_k_recovers_the_tail_shape(shape):
    from sklearn_papers.estimation._log_partition import _pareto_k

    w = np.random.default_rng(0).pareto(shape, 20_000) + 1.0  # tail P(w > t) ~ t^-shape
    assert _pareto_k(np.log(w)) == pytest.approx(1.0 / shape, abs=0.12)
    assert _pareto_k(np.r_[np.log(w), -np.inf]) == _pareto_k(np.log(w))  # zero weights
    assert math.isnan(_pareto_k(np.zeros(10)))                           # too few draws


def _half_normal_energy(x):
    """exp(-|x|^2 / 2) on x_0 > 0 only (U = +inf elsewhere): Z = pi in 2-d."""
    return torch.where(x[:, 0] > 0, 0.5 * (x**2).sum(1), torch.inf)


@pytest.mark.parametrize("method, fix", [("sumo", "raise min_terms"), ("iwae", "raise k"),
                                         ("elbo", "method='iwae' or 'sumo'")])
def test_zero_density_regions_raise_instead_of_nan_or_inf(method, fix):
    # Used to give NaN (sumo: +inf and -inf estimates) or -inf (iwae, elbo) silently.
    with pytest.raises(ValueError, match=r"of 500 .* infinite.*energy is \+inf") as info:
        LogPartitionEstimator(_half_normal_energy, n_features=2, method=method, max_iter=5,
                              n_estimates=500, random_state=0).fit()
    assert fix in str(info.value)


def test_zero_density_regions_work_with_enough_min_terms():
    # P(all 20 first samples outside the support) = 2^-20 per estimate under N(0, I).
    est = LogPartitionEstimator(_half_normal_energy, n_features=2, min_terms=20,
                                fit_proposal=False, n_estimates=2000, random_state=0).fit()
    assert np.isfinite(est.estimates_).all()
    assert abs(est.log_partition_ - math.log(math.pi)) < 4 * est.log_partition_stderr_ + 0.01


def test_infinite_density_and_complex_energies_are_refused():
    kw = dict(n_features=2, max_iter=2, n_estimates=10, random_state=0)
    with pytest.raises(ValueError, match=r"-inf at sample \d+.*infinite density"):
        LogPartitionEstimator(lambda x: torch.where(x[:, 0] > 0, -torch.inf, 0.0 * x[:, 0]),
                              **kw).fit()
    with pytest.raises(TypeError, match="complex"):
        LogPartitionEstimator(lambda x: (x**2).sum(1) + 1j, **kw).fit()
    with pytest.raises(TypeError, match="complex"):
        LogPartitionEstimator(lambda x: (x.numpy() ** 2).sum(1) + 1j, fit_proposal=False,
                              n_features=2, n_estimates=10, random_state=0).fit()
    with pytest.raises(TypeError, match="real numbers"):
        LogPartitionEstimator(lambda x: ["a"] * x.shape[0], fit_proposal=False,
                              n_features=2, n_estimates=10, random_state=0).fit()
