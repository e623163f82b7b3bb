"""The returns of whole episodes of a trained agent, greedy or sampled, without learning."""

from numbers import Integral

import warnings

import numpy as np
from gymnasium import spaces

from sklearn_papers.rl._agents import MLPAgent, TabularAgent
from sklearn_papers.rl._env_checks import (
    _feature_observation,
    _finite_reward,
    _index_observation,
    _reset_result,
    _step_result,
    check_environment,
)
from sklearn_papers.utils._random import check_random_state


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


#: Steps after which ``score`` cuts an evaluation episode: a greedy policy can loop forever
#: in an environment without a time limit of its own.
SCORE_MAX_STEPS = 1000


def warn_cut_episodes(n_cut, n_episodes, max_episode_steps, how):
    """One ``UserWarning`` if ``n_cut`` of ``n_episodes`` episodes were cut at
    ``max_episode_steps`` steps; ``how`` says what sets the cut."""
    if n_cut:
        warnings.warn(
            f"{n_cut} of {n_episodes} evaluation episodes were still running after "
            f"{max_episode_steps} steps and were cut there: their returns are the sums of "
            f"their first {max_episode_steps} rewards, not of whole episodes (a greedy "
            f"policy that loops never ends an episode in an environment without a time "
            f"limit). {how}; gymnasium.wrappers.TimeLimit gives the environment a limit "
            f"of its own.", UserWarning, stacklevel=3)


def check_greedy(greedy):
    """TypeError unless ``greedy`` is a bool."""
    if not isinstance(greedy, (bool, np.bool_)):
        raise TypeError(f"greedy must be True (the most probable action) or False (actions "
                        f"sampled from the policy), got {greedy!r}")


def _episode_returns(agent, env, n_episodes, *, greedy, max_episode_steps, random_state,
                     where="env", resolve=None, count_cut=False):
    """The returns of :func:`~sklearn_papers.rl.evaluate_policy`, naming the environment
    ``where`` in its errors. ``resolve(agent, env, seed)`` turns what was passed into the
    agent to run (None: ``agent`` is one). With ``count_cut``, returns ``(returns, number
    of episodes cut at max_episode_steps)``."""
    for name, value in (("n_episodes", n_episodes), ("max_episode_steps", max_episode_steps)):
        if value is None and name == "max_episode_steps":
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    check_greedy(greedy)
    check_environment(env, where=where)
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    if resolve is not None:
        agent = resolve(agent, env, seed)
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

    # grown one episode at a time: an array of n_episodes allocated first failed in numpy
    # (MemoryError) before any episode for a very large n_episodes
    returns, n_cut = [], 0
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
            if terminated or truncated:
                break
            if max_episode_steps is not None and steps >= max_episode_steps:
                n_cut += 1
                break
            p = proba(obs, "step")
        returns.append(total)
    returns = np.asarray(returns, dtype=np.float64)
    return (returns, n_cut) if count_cut else returns
