"""Probes of a learned rule's ``y`` and snapshots of the rule along its meta-training."""

import numpy as np
import pytest
import torch

from sklearn_papers.rl import LearnedPolicyGradient, sample_grid_worlds
from sklearn_papers.rl._rule_probes import (
    _counted,
    _rule_probes,
    _rule_snapshots,
    _with_rule,
)


def _rule(meta_steps, **params):
    return LearnedPolicyGradient(lifetime=3, n_agents=3, max_meta_steps=meta_steps,
                                 random_state=0, **params)


def test_counted_steps_leave_the_last_third_at_most_700_to_the_returns():
    assert _counted(300) == 200
    assert _counted(6000) == 5300


def test_rule_probes_give_a_pooled_and_a_per_grid_correlation_per_discount():
    train = sample_grid_worlds(4, random_state=0)
    envs = sample_grid_worlds(3, random_state=1, exclude=train)
    est = _rule(2).fit(train)
    res = _rule_probes(est, envs, n_steps=300, discounts=(0.5, 0.99), discount=0.99,
                       seed=0)
    assert set(res) == {("y", 0.5), ("y", 0.99), ("td", 0.5), ("td", 0.99)}
    for value in res.values():
        assert len(value) == 2
        assert all(np.isnan(v) or -1 <= v <= 1 for v in value)
    # the same seed, the same probes
    again = _rule_probes(est, envs, n_steps=300, discounts=(0.5, 0.99), discount=0.99,
                         seed=0)
    for key, value in res.items():
        np.testing.assert_array_equal(value, again[key])
    # the extra measures: TD at the training discount only; every visited cell is frequent
    extra = _rule_probes(est, envs, n_steps=300, discounts=(0.5, 0.99), discount=0.99,
                         seed=0, frequent_rate=0.0)
    assert ("td", 0.5) not in extra
    np.testing.assert_array_equal(extra[("y frequent", 0.99)], extra[("y", 0.99)])
    np.testing.assert_array_equal(extra[("y", 0.99)], res[("y", 0.99)])
    assert extra["returns"].shape == (2 * len(envs),)
    assert 0 < extra["cells"] <= envs[0].observation_space.n
    assert len(extra[("retest", 0.99)]) == 2


def test_rule_snapshots_are_the_rules_of_shorter_fits():
    train = sample_grid_worlds(4, random_state=0)
    snapshots = {}
    with _rule_snapshots((2, 4), snapshots):
        est = _rule(4).fit(train)
    assert sorted(snapshots) == [2, 4]
    for k, params in ((0, None), (2, snapshots[2]), (4, snapshots[4])):
        shorter = _rule(k).fit(train)
        copy = _with_rule(est, params)
        for a, b in zip(copy.module_.parameters(), shorter.module_.parameters()):
            assert torch.equal(a, b)
    # the hook is gone: a later fit records nothing
    _rule(2).fit(train)
    assert sorted(snapshots) == [2, 4]


def test_rule_snapshots_refuse_two_optimizers_and_a_snapshot_of_another_rule():
    optimizers = [torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
                  for _ in range(2)]
    with pytest.raises(RuntimeError, match="2 optimizers stepped"):
        with _rule_snapshots((1,), {}):
            for optimizer in optimizers:
                optimizer.step()
    est = _rule(0).fit(sample_grid_worlds(2, random_state=0))
    with pytest.raises(ValueError, match="a snapshot of 1 tensors"):
        _with_rule(est, [np.zeros(2)])
