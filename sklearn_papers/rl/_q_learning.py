"""Tabular Q-learning (Watkins & Dayan 1992), the field's baseline on small Discrete tasks."""

from numbers import Integral, Real

import numpy as np
from gymnasium import spaces

from sklearn_papers.rl._env_checks import check_environment

__all__ = ["q_learning"]


def _check_discrete(env):
    check_environment(env, where="env")
    if not isinstance(env.observation_space, spaces.Discrete):
        raise ValueError(f"env has observation space {env.observation_space}; tabular "
                         "Q-learning needs Discrete observations (one table row per state)")


def _check_number(name, value, low, high, *, low_open=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a float, got {type(value).__name__} {value!r}")
    below = value <= low if low_open else value < low
    if below or value > high or not np.isfinite(value):
        side = "(" if low_open else "["
        raise ValueError(f"{name} must lie in {side}{low:g}, {high:g}], got {value!r}")


def q_learning(env, n_steps, *, learning_rate=0.5, epsilon=0.1, discount=0.99,
               random_state=None):
    """Learn a Q-table of ``env`` by tabular Q-learning with epsilon-greedy exploration.

    At every step the agent takes a random action with probability ``epsilon``, else a
    greedy one (ties broken at random), and moves ``Q[s, a]`` toward ``r + discount *
    max_a' Q[s', a']``. Termination ends the target (no bootstrap); a time limit
    (``truncated``) bootstraps, since the state still has a future. The environment is reset
    when an episode ends.

    Parameters
    ----------
    env : gymnasium.Env
        ``Discrete`` observations and actions. It is reset and stepped in place.
    n_steps : int
        Environment steps to learn from (over as many episodes as they span).
    learning_rate : float, default=0.5
        Step size ``alpha`` of the update, in (0, 1].
    epsilon : float, default=0.1
        Probability of a random action, in [0, 1].
    discount : float, default=0.99
        Discount of future rewards, in [0, 1].
    random_state : int, RandomState instance or None, default=None
        Seeds the exploration. An int also seeds the first ``env.reset``; otherwise the
        reset seed is drawn from it.

    Returns
    -------
    q : ndarray of shape (n_states, n_actions)
        The action values (float64, in reward units); ``q[s - start]`` is the row of
        observation ``s`` of a space starting at ``start``. ``q.argmax(1)`` is the greedy
        policy (as action indices from the action space's ``start``).

    Raises
    ------
    TypeError
        If ``env`` is not a gymnasium environment, or a rate is not a number.
    ValueError
        If ``env``'s spaces are not Discrete, ``n_steps`` is not a positive int, or a rate
        lies outside its range.

    References
    ----------
    .. [1] Watkins, C. J. C. H. and Dayan, P. (1992). Q-learning. Machine Learning 8,
       279-292. :doi:`10.1007/BF00992698`

    Examples
    --------
    >>> import gymnasium
    >>> from sklearn_papers.rl import q_learning
    >>> env = gymnasium.make("FrozenLake-v1", is_slippery=False)
    >>> q = q_learning(env, 3000, random_state=0)
    >>> q.shape
    (16, 4)
    """
    _check_discrete(env)
    if (isinstance(n_steps, (bool, np.bool_)) or not isinstance(n_steps, Integral)
            or n_steps < 1):
        raise ValueError(f"n_steps must be a positive int, got {n_steps!r}")
    _check_number("learning_rate", learning_rate, 0.0, 1.0, low_open=True)
    _check_number("epsilon", epsilon, 0.0, 1.0)
    _check_number("discount", discount, 0.0, 1.0)
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        rng, reset_seed = np.random.RandomState(random_state), int(random_state)
    else:
        from sklearn.utils import check_random_state

        rng = check_random_state(random_state)
        reset_seed = int(rng.randint(np.iinfo(np.int32).max))
    obs_start, act_start = int(env.observation_space.start), int(env.action_space.start)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    state = int(env.reset(seed=reset_seed)[0]) - obs_start
    for _ in range(n_steps):
        row = q[state]
        action = (rng.randint(len(row)) if rng.rand() < epsilon
                  else int(rng.choice(np.flatnonzero(row == row.max()))))
        nxt, reward, terminated, truncated, _ = env.step(action + act_start)
        nxt = int(nxt) - obs_start
        target = reward + (0.0 if terminated else discount * q[nxt].max())
        q[state, action] += learning_rate * (target - q[state, action])
        state = int(env.reset()[0]) - obs_start if terminated or truncated else nxt
    return q


def policy_returns(act, env, seed, n_episodes, max_steps):
    """Mean return of ``n_episodes`` episodes of the policy ``act(state) -> action`` in
    ``env``, each cut at ``max_steps`` steps; only the first reset is seeded (``seed``).
    Unlike :func:`~sklearn_papers.rl.evaluate_policy`, ``act`` is any callable (a
    Q-table's argmax, a random policy)."""
    out = []
    for ep in range(n_episodes):
        state = env.reset(seed=seed if ep == 0 else None)[0]
        total = 0.0
        for _ in range(max_steps):
            state, reward, terminated, truncated, _ = env.step(act(state))
            total += float(reward)
            if terminated or truncated:
                break
        out.append(total)
    return float(np.mean(out))
