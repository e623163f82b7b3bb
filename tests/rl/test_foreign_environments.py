"""Environments the package did not write: time limits, aliasing, bad observations, spaces,
registration with gymnasium, vector environments and evaluation of fitted agents."""

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from sklearn_papers.rl import A2C, LearnedPolicyGradient

TINY = dict(prediction_size=3, hidden_size=8, embedding_size=4, n_agents=2, lifetime=6,
            inner_steps=2, rollout_length=6, max_meta_steps=3, random_state=0)


class _Endless(gymnasium.Env):
    """One state, two actions, reward 1 on every step; the episode ends after ``limit`` steps
    by truncation (a time limit), by termination, or never (``limit=None``)."""

    def __init__(self, limit=10, terminate=False):
        self.observation_space = spaces.Discrete(1)
        self.action_space = spaces.Discrete(2)
        self.limit, self.terminate = limit, terminate

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        end = self.limit is not None and self.t >= self.limit
        return 0, 1.0, end and self.terminate, end and not self.terminate, {}


@pytest.mark.parametrize("kwargs, low, high", [
    (dict(limit=None), 9.0, 11.0),               # 1 / (1 - 0.9) = 10
    (dict(limit=10), 8.5, 11.0),                 # the clock does not change the state's future
    (dict(limit=10, terminate=True), 0.0, 7.0),  # a real end: the 10-step discounted sum, 6.5
], ids=["no-limit", "time-limit", "termination"])
def test_a2c_bootstraps_values_through_a_time_limit(kwargs, low, high):
    a2c = A2C(lifetime=150, discount=0.9, random_state=0).fit(_Endless(**kwargs))
    value = a2c.agents_[0].predict_values([0])[0, 0]
    assert low <= value <= high, value
