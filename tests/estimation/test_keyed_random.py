"""Counter-based random numbers keyed by data rows (used by SUMOVAE.score_samples)."""

import numpy as np
import torch
from scipy import stats

from sklearn_papers.estimation._keyed_random import (
    SALT_SAMPLE,
    fmix32,
    keyed_normal,
    keyed_uniform53,
    mix,
    row_keys,
)


def _naive_fmix32(h):
    """MurmurHash3 fmix32 on a Python int, with explicit 32-bit wrap-around."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def test_fmix32_matches_naive_python_ints_including_extremes():
    rng = np.random.RandomState(0)
    values = [0, 1, 2**31 - 1, 2**31, 2**32 - 1] + rng.randint(0, 2**32, 200,
                                                               dtype=np.uint64).tolist()
    got = fmix32(torch.tensor(values, dtype=torch.int64)).tolist()
    assert got == [_naive_fmix32(int(v)) for v in values]
    assert fmix32(torch.tensor([0x12345678])).item() != 0x12345678


def test_row_keys_depend_on_seed_and_row_values_only():
    X = np.random.RandomState(0).normal(size=(6, 3))
    keys = row_keys(X, seed=7)
    assert keys.dtype == torch.int64 and keys.shape == (6,)
    assert int(keys.min()) >= 0 and int(keys.max()) < 2**32
    assert torch.equal(row_keys(X[::-1].copy(), seed=7), keys.flip(0))  # order of rows
    assert torch.equal(row_keys(X[2:3], seed=7), keys[2:3])              # subsets
    assert len(set(keys.tolist())) == 6
    assert not torch.equal(row_keys(X, seed=8), keys)
    assert not torch.equal(row_keys(X[:, ::-1].copy(), seed=7), keys)   # column order counts
    # equal values hash equally whatever the dtype or the sign of zero
    Z = np.array([[0.0, 1.5], [-0.0, 1.5]])
    k = row_keys(Z, seed=1)
    assert k[0] == k[1]
    assert torch.equal(row_keys(Z.astype(np.float32), seed=1), k)


def test_keyed_uniform53_is_uniform_on_half_open_unit_interval():
    states = mix(torch.tensor(123), torch.arange(50_000), SALT_SAMPLE)
    u = keyed_uniform53(states, 0, 0x5555)
    assert u.dtype == torch.float64
    assert float(u.min()) > 0.0 and float(u.max()) <= 1.0
    assert stats.kstest(u.numpy(), "uniform").pvalue > 1e-3
    # streams of one state are not the same numbers
    assert not torch.equal(u, keyed_uniform53(states, 1, 0x5555))


def test_keyed_normal_has_standard_normal_uncorrelated_coordinates():
    states = mix(torch.tensor(99), torch.arange(40_000), SALT_SAMPLE)
    z = keyed_normal(states, 5, dtype=torch.float64)
    assert z.shape == (40_000, 5)
    np.testing.assert_allclose(z.mean(0).numpy(), 0.0, atol=0.03)
    np.testing.assert_allclose(z.std(0).numpy(), 1.0, atol=0.03)
    corr = np.corrcoef(z.numpy().T)
    assert np.abs(corr - np.eye(5)).max() < 0.03
    for j in range(5):
        assert stats.kstest(z[:, j].numpy(), "norm").pvalue > 1e-3
    # deterministic in the states, float32 by default
    assert torch.equal(keyed_normal(states[:10], 5), z[:10].float())


def test_keyed_draws_of_a_state_do_not_depend_on_the_batch():
    states = mix(torch.tensor(5), torch.arange(100), SALT_SAMPLE)
    full = keyed_normal(states, 3)
    perm = torch.randperm(100, generator=torch.Generator().manual_seed(0))
    assert torch.equal(keyed_normal(states[perm], 3), full[perm])
    assert torch.equal(keyed_normal(states[7:8], 3), full[7:8])


def test_truncation_levels_from_keyed_uniforms_follow_the_paper_survival():
    from sklearn_papers.estimation._truncation import (
        _truncation_from_uniform,
        truncation_survival,
    )

    n = 200_000
    states = mix(torch.tensor(11), torch.arange(n), SALT_SAMPLE)
    K = _truncation_from_uniform(keyed_uniform53(states, 0, 0x7777), kind="paper", alpha=80,
                                 decay=0.9, cap=100)
    j = torch.tensor([1, 2, 3, 5, 10, 40, 80, 90])
    expected = truncation_survival(j).numpy()
    empirical = (K.unsqueeze(1) >= j).double().mean(0).numpy()
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(empirical - expected) <= 4 * se + 1e-12)
