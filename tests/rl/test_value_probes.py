"""Monte-Carlo state values and the Spearman probes of Oh et al. (2020)'s value analysis."""

import numpy as np
import pytest

from sklearn_papers.rl._value_probes import (
    monte_carlo_values,
    probe_spearman,
    retest_spearman,
)


def test_monte_carlo_values_average_each_states_discounted_returns():
    # one agent: states 0, 1, 0, 1 with rewards 1, 0, 1, 0; the episode ends at step 1
    obs = np.array([[0, 1, 0, 1]])
    reward = np.array([[1.0, 0.0, 1.0, 0.0]])
    done = np.array([[False, True, False, False]])
    values, counts = monte_carlo_values(obs, reward, done, 3, (0.5, 1.0), n_counted=4,
                                        min_visits=2)
    np.testing.assert_array_equal(counts, [[2, 2, 0]])
    # returns at 0.5: 1, 0 (episode end), 1, 0; at 1.0 the same
    np.testing.assert_array_equal(values[0.5], [[1.0, 0.0, np.nan]])
    np.testing.assert_array_equal(values[1.0], [[1.0, 0.0, np.nan]])
    # the later steps feed the returns without counting as visits
    values, counts = monte_carlo_values(obs, reward, ~done & False, 3, (0.5,), n_counted=1,
                                        min_visits=1)
    np.testing.assert_array_equal(counts, [[1, 0, 0]])
    assert values[0.5][0, 0] == 1 + 0.25 * 1


def test_monte_carlo_values_check_shapes():
    with pytest.raises(ValueError, match="share one"):
        monte_carlo_values(np.zeros((2, 3), int), np.zeros((2, 4)), np.zeros((2, 3)), 2,
                           (0.9,), n_counted=2)
    with pytest.raises(ValueError, match=r"n_counted must lie in \[1, 3\]"):
        monte_carlo_values(np.zeros((2, 3), int), np.zeros((2, 3)), np.zeros((2, 3)), 2,
                           (0.9,), n_counted=0)


def test_probe_spearman_recovers_a_monotone_signal():
    rng = np.random.RandomState(0)
    target = rng.randn(80)
    features = np.c_[target + 0.01 * rng.randn(80), rng.randn(80)]
    groups, agents = np.repeat(np.arange(4), 20), np.tile(np.repeat([0, 1], 10), 4)
    pooled, per_grid = probe_spearman(features, target, groups, agents)
    assert pooled > 0.95 and per_grid > 0.95
    pooled, per_grid = probe_spearman(rng.randn(80, 2), target, groups, agents)
    assert abs(pooled) < 0.5 and abs(per_grid) < 0.5
    assert np.isnan(probe_spearman(features, target, groups)[1])
    assert np.isnan(probe_spearman(features, target, np.zeros(80))[0])  # one group: no CV


def test_retest_spearman():
    rng = np.random.RandomState(0)
    values = rng.randn(4, 25)
    values[:, :5] = np.nan
    assert retest_spearman(values, values) == (1.0, 1.0)
    pooled, per_agent = retest_spearman(values, rng.randn(4, 25))
    assert abs(pooled) < 0.4 and abs(per_agent) < 0.4
    assert np.isnan(retest_spearman(np.full((2, 5), np.nan), values[:2, :5])).all()
