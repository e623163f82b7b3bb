"""Evaluation of trained agents: the returns of whole episodes, greedy or sampled."""

from numbers import Integral

import numpy as np
from gymnasium import spaces

from sklearn_papers.rl._agents import MLPAgent, TabularAgent, _Agent
from sklearn_papers.rl._environments import (
    _feature_observation,
    _finite_reward,
    _index_observation,
    _reset_result,
    _step_result,
    check_environment,
)
from sklearn_papers.utils._random import check_random_state

__all__ = ["evaluate_policy"]


def _resolve_agent(agent, env, random_state):
    """The agent to evaluate: itself, a fitted A2C's only agent, or a fresh agent trained
    on ``env`` by a fitted LearnedPolicyGradient's rule."""
    from sklearn_papers.rl._a2c import A2C
    from sklearn_papers.rl._learned_policy_gradient import LearnedPolicyGradient
    from sklearn_papers.utils._sklearn_compat import check_is_fitted

    if isinstance(agent, _Agent):
        return agent
    if isinstance(agent, A2C):
        check_is_fitted(agent, "agents_")
        if len(agent.agents_) != 1:
            raise ValueError(f"this A2C holds {len(agent.agents_)} agents (one per "
                             "environment it was fitted on); pass one of them, e.g. "
                             "evaluate_policy(a2c.agents_[0], env), or use a2c.score")
        return agent.agents_[0]
    if isinstance(agent, LearnedPolicyGradient):
        return agent.train_agent(env, random_state=random_state)
    raise TypeError(f"agent must be a TabularAgent, an MLPAgent, a fitted A2C or a fitted "
                    f"LearnedPolicyGradient, got {type(agent).__name__}")


def _check_agent_fits(agent, env, where):
    space = env.observation_space
    if int(env.action_space.n) != agent.n_actions:
        raise ValueError(f"{where} has {int(env.action_space.n)} actions "
                         f"({env.action_space}); the agent was trained with "
                         f"{agent.n_actions}")
    if isinstance(agent, TabularAgent) or (isinstance(agent, MLPAgent)
                                            and agent.discrete_inputs):
        n = agent.n_states if isinstance(agent, TabularAgent) else agent.net.n_inputs
        if not isinstance(space, spaces.Discrete) or int(space.n) > n:
            raise ValueError(f"{where} has observation space {space}; the agent was "
                             f"trained on Discrete observations with {n} states")
    elif not isinstance(space, spaces.Box) or space.shape != (agent.net.n_inputs,):
        raise ValueError(f"{where} has observation space {space}; the agent was trained on "
                         f"1-D Box observations of width {agent.net.n_inputs}")


def evaluate_policy(agent, env, n_episodes=10, *, greedy=True, max_episode_steps=1000,
                    random_state=None):
    """The return of each of ``n_episodes`` whole episodes of a trained agent in ``env``.

    The agent does not learn during the evaluation. The return of an episode is the plain
    (undiscounted) sum of its rewards, from ``reset`` to ``terminated`` or ``truncated``.
    This differs from the *lifetime return* of Oh et al. (2020), the sum of the rewards an
    agent collects *while it learns* (``lifetime_returns_``, ``lifetime_returns``).

    Parameters
    ----------
    agent : TabularAgent, MLPAgent, A2C or LearnedPolicyGradient
        A trained agent (``A2C().fit(env).agents_[0]``, ``train_agent(env)``); a fitted
        :class:`A2C` with a single agent; or a fitted :class:`LearnedPolicyGradient`, whose
        rule then trains a fresh agent on ``env`` first (``train_agent(env,
        random_state=random_state)``, ``lifetime`` updates), and that agent is evaluated.
    env : gymnasium.Env
        ``Discrete`` actions of the agent's count; the observations the agent was trained
        on (``Discrete`` with at most its number of states, or a 1-D ``Box`` of its
        width). It is reset and stepped in place.
    n_episodes : int, default=10
        Episodes to run.
    greedy : bool, default=True
        True: the most probable action ``argmax_a pi(a|s)`` (ties go to the lowest
        action index); False: actions sampled from ``pi(.|s)``.
    max_episode_steps : int or None, default=1000
        An episode still running after this many steps is cut there (its return is the
        sum so far): a greedy policy can loop forever in an environment without a time
        limit of its own. None never cuts.
    random_state : int, RandomState instance or None, default=None
        Seeds the first ``env.reset`` (later resets continue the environment's own
        generator) and, with ``greedy=False``, the action sampling.

    Returns
    -------
    returns : ndarray of shape (n_episodes,)
        The return of every episode (float64), in order.

    Raises
    ------
    TypeError
        If ``agent`` or ``env`` is of an unsupported type, or ``greedy`` is not a bool.
    ValueError
        If ``env``'s spaces do not fit the agent, it returns a ``Discrete`` observation
        outside its space, a non-finite ``Box`` observation or a reward that is not finite
        or exceeds 1e30 in magnitude, an A2C holds several agents, or ``n_episodes`` or
        ``max_episode_steps`` is not a positive int.

    Warns
    -----
    UserWarning
        Once, if ``env`` returns a ``Box`` observation outside its space's bounds (it is
        used as it is).

    See Also
    --------
    A2C.score : The mean of these returns over a fitted A2C's agents.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33
       (lifetime return, Sec. 3). :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> import gymnasium
    >>> from sklearn_papers.rl import A2C, evaluate_policy
    >>> env = gymnasium.make("FrozenLake-v1", is_slippery=False)
    >>> a2c = A2C(lifetime=100, random_state=0).fit(env)
    >>> evaluate_policy(a2c.agents_[0], env, n_episodes=3, random_state=0)
    array([1., 1., 1.])
    """
    return _episode_returns(agent, env, n_episodes, greedy=greedy,
                            max_episode_steps=max_episode_steps, random_state=random_state)


def _episode_returns(agent, env, n_episodes, *, greedy, max_episode_steps, random_state,
                     where="env"):
    """:func:`evaluate_policy`, naming the environment ``where`` in its errors."""
    for name, value in (("n_episodes", n_episodes), ("max_episode_steps", max_episode_steps)):
        if value is None and name == "max_episode_steps":
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not isinstance(greedy, (bool, np.bool_)):
        raise TypeError(f"greedy must be True (the most probable action) or False (actions "
                        f"sampled from the policy), got {greedy!r}")
    check_environment(env, where=where)
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    agent = _resolve_agent(agent, env, seed)
    _check_agent_fits(agent, env, where)
    space = env.observation_space
    discrete = isinstance(space, spaces.Discrete)
    act_start = int(env.action_space.start)
    if discrete:
        n = agent.n_states if isinstance(agent, TabularAgent) else agent.net.n_inputs
        table = agent.predict_proba(np.arange(n))

        def proba(obs, call):
            return table[_index_observation(space, obs, where, call)]
    else:
        warned = set()  # one warning for observations outside the Box's bounds

        def proba(obs, call):
            x = np.asarray(_feature_observation(space, obs, agent.net.n_inputs, where, call,
                                                warned=warned), dtype=np.float32)
            return agent.predict_proba(x[None])[0]

    returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        obs = _reset_result(env.reset(seed=seed if episode == 0 else None), where)
        p = proba(obs, "reset")
        total, steps = 0.0, 0
        while True:
            action = int(np.argmax(p)) if greedy else int(rng.choice(len(p), p=p / p.sum()))
            obs, reward, terminated, truncated = _step_result(env.step(action + act_start),
                                                              where)
            total += _finite_reward(reward, where)
            steps += 1
            if terminated or truncated or (max_episode_steps is not None
                                           and steps >= max_episode_steps):
                break
            p = proba(obs, "step")
        returns[episode] = total
    return returns
