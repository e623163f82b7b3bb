"""Tabular Q-learning on gymnasium's stock environments, and its input checks."""

import gymnasium
import numpy as np
import pytest

from sklearn_papers.rl import q_learning
from sklearn_papers.rl._q_learning import policy_returns


def test_q_learning_solves_a_deterministic_lake():
    env = gymnasium.make("FrozenLake-v1", is_slippery=False)
    q = q_learning(env, 3000, learning_rate=0.5, random_state=0)
    assert q.shape == (16, 4) and q.dtype == np.float64
    assert policy_returns(lambda s: int(np.argmax(q[s])), env, 0, 5, 100) == 1.0
    # a random policy rarely reaches the goal
    rng = np.random.RandomState(0)
    assert policy_returns(lambda s: int(rng.randint(4)), env, 0, 20, 100) < 0.5


def test_q_learning_is_seeded():
    env = gymnasium.make("CliffWalking-v1")
    a = q_learning(env, 500, random_state=3)
    b = q_learning(env, 500, random_state=3)
    c = q_learning(env, 500, random_state=np.random.RandomState(3))
    np.testing.assert_array_equal(a, b)
    assert c.shape == a.shape and np.isfinite(c).all()


def test_termination_ends_the_target():
    # one step of FrozenLake from the start into a hole is terminal: no bootstrap
    env = gymnasium.make("FrozenLake-v1", is_slippery=False, map_name="4x4")
    q = q_learning(env, 20000, learning_rate=1.0, epsilon=1.0, discount=0.9, random_state=0)
    # the goal's neighbour moving into the goal earns exactly the reward 1
    assert q[14, 2] == 1.0
    # moves into holes are worth 0; the table never exceeds the largest return
    assert q[4, 2] == 0.0 and q.max() == 1.0


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n_steps=0), ValueError, "n_steps must be a positive int"),
    (dict(n_steps=True), ValueError, "n_steps must be a positive int"),
    (dict(learning_rate=0.0), ValueError, r"learning_rate must lie in \(0, 1\]"),
    (dict(epsilon=1.5), ValueError, r"epsilon must lie in \[0, 1\]"),
    (dict(discount="0.9"), TypeError, "discount must be a float"),
    (dict(discount=float("nan")), ValueError, "discount must lie"),
])
def test_q_learning_rejects_bad_settings(kwargs, error, match):
    env = gymnasium.make("FrozenLake-v1")
    with pytest.raises(error, match=match):
        q_learning(env, **{"n_steps": 10, **kwargs})


def test_q_learning_needs_discrete_spaces():
    with pytest.raises(ValueError, match="Discrete observations"):
        q_learning(gymnasium.make("CartPole-v1"), 10)
    with pytest.raises(TypeError, match="gymnasium.make"):
        q_learning("FrozenLake-v1", 10)
