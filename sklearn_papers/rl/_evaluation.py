"""Evaluation of trained agents: the returns of whole episodes, greedy or sampled."""

from sklearn_papers.rl._a2c import A2C
from sklearn_papers.rl._agents import _Agent
from sklearn_papers.rl._episodes import _episode_returns, warn_cut_episodes
from sklearn_papers.rl._learned_policy_gradient import LearnedPolicyGradient
from sklearn_papers.utils._sklearn_compat import check_is_fitted

__all__ = ["evaluate_policy"]


def _resolve_agent(agent, env, random_state):
    """The agent to evaluate: itself, a fitted A2C's only agent, or a fresh agent trained
    on ``env`` by a fitted LearnedPolicyGradient's rule."""
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
        used as it is); once, if episodes were cut at ``max_episode_steps``.

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
    returns, n_cut = _episode_returns(agent, env, n_episodes, greedy=greedy,
                                      max_episode_steps=max_episode_steps,
                                      random_state=random_state, resolve=_resolve_agent,
                                      count_cut=True)
    warn_cut_episodes(n_cut, n_episodes, max_episode_steps,
                      "A larger max_episode_steps (None: never) moves the cut")
    return returns
