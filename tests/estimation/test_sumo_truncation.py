"""Truncation distributions of SUMO's Russian roulette: survival function, sampling, mean."""

import math

import numpy as np
import pytest
import torch

from sklearn_papers.estimation import sample_truncation, truncation_mean, truncation_survival


def test_paper_survival_is_harmonic_then_geometric():
    j = np.arange(1, 200)
    want = np.where(j <= 80, 1.0 / j, (1 / 80) * 0.9 ** (j - 80.0))
    np.testing.assert_allclose(truncation_survival(j).numpy(), want, rtol=1e-12)
    # continuous at the switch and non-increasing everywhere
    s = truncation_survival(j).numpy()
    assert np.all(np.diff(s) <= 0)


@pytest.mark.parametrize("kind", ["paper", "harmonic"])
def test_sampled_levels_have_the_stated_survival(global_random_seed, kind):
    n = 400_000
    K = sample_truncation(n, kind=kind, cap=50,
                          generator=torch.Generator().manual_seed(global_random_seed)).numpy()
    assert K.min() >= 1
    for j in [1, 2, 3, 5, 10, 50, 80, 85, 100]:
        p = truncation_survival(j, kind=kind, cap=50).item()
        emp = np.mean(K >= j)
        assert abs(emp - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-6, (j, emp, p)
    if kind == "harmonic":
        assert K.max() == 50


def test_truncation_mean_is_sum_of_survival():
    j = np.arange(1, 2000)
    assert truncation_mean() == pytest.approx(truncation_survival(j).sum().item(), rel=1e-9)
    assert truncation_mean() == pytest.approx(5.078, abs=1e-3)
    assert truncation_mean(kind="harmonic", cap=10) == pytest.approx(
        sum(1 / i for i in range(1, 11)))


def test_bad_truncation_parameters_raise():
    with pytest.raises(ValueError, match="kind"):
        truncation_survival(1, kind="poisson")
    with pytest.raises(ValueError, match="cap"):
        sample_truncation(3, kind="harmonic", cap=None)
    with pytest.raises(ValueError, match="decay"):
        truncation_mean(decay=1.0)


@pytest.mark.parametrize("n, error", [(-1, ValueError), (2.5, TypeError), (3.0, TypeError),
                                      (True, TypeError), ("3", TypeError)])
def test_bad_number_of_draws_is_a_clear_error(n, error):
    # -1 must not fail inside torch, nor 2.5 be silently truncated to 2 draws.
    with pytest.raises(error, match="n must be"):
        sample_truncation(n)


def test_number_of_draws_accepts_integer_types():
    assert sample_truncation(0).shape == (0,)
    assert sample_truncation(np.int64(4)).shape == (4,)
    assert sample_truncation(torch.tensor(5)).shape == (5,)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_device_is_a_value_error():
    with pytest.raises(ValueError, match="CUDA is not available"):
        sample_truncation(3, device="cuda")
