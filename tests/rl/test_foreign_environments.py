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


def _lake(slippery=False):
    return gymnasium.make("FrozenLake-v1", is_slippery=slippery)


# --- one environment object in two places

def test_a2c_refuses_one_environment_object_in_two_places():
    env = _lake()
    with pytest.raises(ValueError, match=r"environments\[1\] is the same object as "
                                         r"environments\[0\].*copy.deepcopy"):
        A2C(lifetime=2, random_state=0).fit([env, env])
    # two wrappers around one environment are one environment too
    inner = _lake().unwrapped
    wrapped = [gymnasium.wrappers.TimeLimit(inner, 50), gymnasium.wrappers.TimeLimit(inner, 50)]
    with pytest.raises(ValueError, match=r"environments\[1\] wraps the same environment as "
                                         r"environments\[0\]"):
        A2C(lifetime=2, random_state=0).fit(wrapped)
    with pytest.raises(ValueError, match=r"environments\[2\] is the same object"):
        A2C(lifetime=2, random_state=0).lifetime_returns([env, _lake(), env])


def test_a2c_on_separate_copies_learns_as_on_independent_environments():
    a = A2C(lifetime=30, random_state=0).fit([_lake(), _lake()])
    b = A2C(lifetime=30, random_state=0).fit([_lake(), _lake()])
    np.testing.assert_array_equal(a.lifetime_returns_, b.lifetime_returns_)
    assert a.lifetime_returns_.min() > 20  # each agent reached the goal many times


def test_lpg_gives_every_agent_its_own_copy_of_one_environment():
    env = _lake()
    one = LearnedPolicyGradient(**TINY).fit([env])
    two = LearnedPolicyGradient(**TINY).fit([_lake(), _lake()])
    np.testing.assert_allclose(one.meta_loss_curve_, two.meta_loss_curve_, rtol=1e-6)
    assert not hasattr(env.unwrapped, "s") or env.unwrapped.s is None  # never stepped


def test_loop_core_refuses_one_object_in_two_slots():
    from sklearn_papers.rl import GymEnvBatch

    env = _lake()
    with pytest.raises(ValueError, match="batch slots 0 and 1 hold the same environment"):
        GymEnvBatch([env, env])


class _Unpicklable(_Endless):
    def __deepcopy__(self, memo):
        raise TypeError("cannot copy this environment")


def test_lpg_names_an_environment_it_cannot_copy():
    with pytest.raises(ValueError, match=r"environments\[0\] cannot be copied.*sampler"):
        LearnedPolicyGradient(**TINY).fit([_Unpicklable()])
    # a sampler that makes new environments works
    LearnedPolicyGradient(**TINY).fit(lambda rng: _Unpicklable())


# --- observations outside the declared Discrete space

class _Returns(gymnasium.Env):
    """Discrete(5) observations, two actions, reward 1, five steps; returns ``value``."""

    def __init__(self, value):
        self.observation_space = spaces.Discrete(5)
        self.action_space = spaces.Discrete(2)
        self.value = value

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.value, {}

    def step(self, action):
        self.t += 1
        return self.value, 1.0, self.t >= 5, False, {}


@pytest.mark.parametrize("make", [
    lambda: A2C(lifetime=3, random_state=0),
    lambda: LearnedPolicyGradient(**TINY)], ids=["a2c", "lpg"])
@pytest.mark.parametrize("value", [2.7, "3", 5, -1, np.float64(2.0), np.array([1])],
                         ids=["float", "string", "too-large", "negative", "numpy-float",
                              "1-d-array"])
def test_observations_outside_the_discrete_space_are_named(make, value):
    with pytest.raises(ValueError, match=r"environments\[0\] returned the observation .* "
                                         r"outside its observation space Discrete\(5\)"):
        make().fit([_Returns(value)])


@pytest.mark.parametrize("value", [3, np.int64(3), np.int8(3), np.array(3)],
                         ids=["int", "int64", "int8", "0-d-array"])
def test_integer_observations_of_any_integer_type_are_accepted(value):
    a2c = A2C(lifetime=3, random_state=0).fit(_Returns(value))
    assert a2c.lifetime_returns_[0] == 60.0
