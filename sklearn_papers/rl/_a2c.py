"""A2C: the hand-designed advantage actor-critic baseline of Oh et al. (2020)."""

from numbers import Integral, Real

import numpy as np

from sklearn_papers.nn._lpg import MLPAgentNet, a2c_targets
from sklearn_papers.nn._skorch import seed_from_random_state, torch_fit
from sklearn_papers.utils._seeding import spawn_seeds
from sklearn_papers.rl._base import _BaseRLEstimator
from sklearn_papers.rl._env_checks import check_environments
from sklearn_papers.rl._episodes import SCORE_MAX_STEPS, _episode_returns, warn_cut_episodes
from sklearn_papers.rl._tabular import a2c_update_np
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["A2C"]

#: ``lr="auto"``: the SGD step size of each agent kind (see the class docstring).
_AUTO_LR = {"tabular": 0.5, "mlp": 0.03}


def _standardize(advantage):
    """Advantages ``(B, T)`` standardized per agent over the rollout: mean 0, std 1 (a
    rollout of equal advantages gives zeros)."""
    centred = advantage - advantage.mean(1, keepdim=True)
    return centred / (centred.pow(2).mean(1, keepdim=True).sqrt() + 1e-8)


class A2C(_BaseRLEstimator):
    """Advantage actor-critic agents (Mnih et al. 2016), in the API of LearnedPolicyGradient.

    Read more in the :doc:`user guide </user_guide/environments>` and on the :doc:`paper
    page </papers/lpg>`.

    The agent's prediction is a scalar value ``v(s)`` (``prediction_size = 1``). Every
    update learns from a rollout of ``rollout_length`` steps: with TD(lambda) returns
    ``G_t`` bootstrapped from ``v`` and the advantages ``A_t = G_t - v(s_t)``
    (standardized over the rollout with ``normalize_advantage``), it ascends
    ``mean_t[A_t log pi(a_t|s_t) + entropy_cost H(pi(.|s_t))]`` and moves ``v(s_t)``
    toward ``G_t`` with weight ``value_weight``, by one SGD step of size ``lr`` (the same
    update form as LPG's, with the hand-designed targets in place of the learned ones).
    There is nothing to meta-train: :meth:`fit` trains one agent per environment and keeps
    them, and :meth:`score` evaluates those agents (greedy by default) without training
    them further.

    Parameters
    ----------
    lr : float or "auto", default="auto"
        SGD step size of the agent update. ``"auto"``: 0.5 for tabular agents, 0.03 for MLP
        agents. A tabular agent's update is a mean per visited state (each table entry
        visited in a rollout moves by ``lr`` times its mean gradient), an MLP's a mean over
        the rollout's steps, so the two kinds need different sizes. Measured with the
        other defaults, 3 seeds (greedy return after 500 updates unless said otherwise):
        tabular 0.3 / 0.5 / 1 / 3 gave a mean lifetime return of 212 / 241 / 269 / 235
        on 24 random 5 x 5 grid worlds (``sample_grid_worlds(24, random_state=0)``, 100
        updates); on CliffWalking-v1, 0.3 and 0.5 found the safe path (-17) with every
        seed, 1 with one seed of three (the others loop until cut); MLP on CartPole-v1, 0.03
        reached 150 and 0.1 89 (a step of 1 or more made the MLP diverge without
        ``normalize_advantage``, and 3, this parameter's former default, with it).
    normalize_advantage : bool, default=True
        Standardize the advantages of every rollout (per agent: mean 0, standard deviation
        1) before the policy step, so that the step does not grow with the rewards'
        scale. With raw advantages (False, the form of Oh et al.'s A2C baseline) a reward of
        -100, such as CliffWalking's cliff, moves a tabular policy's logits by hundreds in
        one update: the policy turns deterministic before it has explored, and on
        CliffWalking-v1 every learning rate from 0.1 to 3 left a greedy policy that loops
        (-200 when cut at 200 steps, 3 seeds) where tabular Q-learning found the optimal
        path (-13). The value head still learns the raw returns. Needs
        ``rollout_length >= 2``: standardized over one step, every advantage is 0
        (``ValueError`` when training starts).
    discount : float, default=0.99
        ``gamma``.
    td_lambda : float, default=0.9
        ``lambda`` of the returns.
    entropy_cost : float, default=0.01
        Weight of the policy entropy bonus.
    value_weight : float, default=0.5
        Weight of the value loss.
    lifetime : int, default=100
        Agent updates in a lifetime (used by :meth:`fit`, :meth:`lifetime_returns` and
        :meth:`train_agent`). 100 updates (2,000 steps) suit small tabular environments;
        an MLP agent on a ``Box`` environment needs many more: on CartPole-v1 (greedy
        return, 3 seeds, 20 episodes; a random policy scores 22) 100 updates gave 23 to
        36, 300 gave 53 to 145 and 1,000 gave 123 to 305.
    rollout_length : int, default=20
        Environment steps per update.
    agent : {"auto", "tabular", "mlp"}, default="auto"
        ``"auto"``: a table for ``Discrete`` observations, an MLP for 1-D ``Box`` ones.
    agent_hidden_size : int, default=32
        Hidden units of the MLP agent.
    device : str, default="cpu"
        Torch device (validated; the small agents run on CPU).
    random_state : int, RandomState instance or None, default=None
        Seeds the agents, the action sampling and the environments' randomness; the
        global RNGs are left untouched.
    verbose : int, default=0
        1 shows a progress bar.

    Attributes
    ----------
    agents_ : list of TabularAgent or MLPAgent
        One trained agent per environment given to :meth:`fit`, in order.
    lifetime_returns_ : ndarray of shape (n_environments,)
        Their lifetime returns: the sum of the rewards each collected while it learned,
        over ``lifetime`` updates (Oh et al. 2020's metric).

    See Also
    --------
    LearnedPolicyGradient : The meta-learned update rule A2C is compared with.
    evaluate_policy : The returns of whole episodes of one trained agent.

    References
    ----------
    .. [1] Mnih, V. et al. (2016). Asynchronous methods for deep reinforcement learning.
       ICML. :doi:`10.48550/arXiv.1602.01783`
    .. [2] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33
       (the A2C baseline). :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import A2C, sample_grid_worlds
    >>> envs = sample_grid_worlds(2, random_state=0)
    >>> a2c = A2C(lifetime=20, random_state=0).fit(envs)
    >>> len(a2c.agents_), a2c.agents_[0].predict([0, 1]).shape
    (2, (2,))
    """

    _parameter_constraints = {
        **_BaseRLEstimator._parameter_constraints,
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "normalize_advantage": ["boolean"],
        "td_lambda": [Interval(Real, 0, 1, closed="both")],
        "entropy_cost": [Interval(Real, 0, None, closed="left")],
        "value_weight": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, lr="auto", normalize_advantage=True, discount=0.99, td_lambda=0.9,
                 entropy_cost=0.01, value_weight=0.5, lifetime=100, rollout_length=20,
                 agent="auto", agent_hidden_size=32, device="cpu", random_state=None,
                 verbose=0):
        self.lr = lr
        self.normalize_advantage = normalize_advantage
        self.discount = discount
        self.td_lambda = td_lambda
        self.entropy_cost = entropy_cost
        self.value_weight = value_weight
        self.lifetime = lifetime
        self.rollout_length = rollout_length
        self.agent = agent
        self.agent_hidden_size = agent_hidden_size
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _prediction_size(self):
        return 1

    def _check_rollout_params(self):
        if self.normalize_advantage and self.rollout_length == 1:
            # standardized over one step, every advantage is 0: only the entropy term
            # moves the policy, towards uniform
            raise ValueError(
                "normalize_advantage=True standardizes the advantages over each rollout; "
                "with rollout_length=1 every advantage is 0 and the agents' policies never "
                "learn from their rewards. Use rollout_length >= 2 (the default is 20), or "
                "normalize_advantage=False.")

    def _targets(self, net, params, traj):
        _, y = net(params, traj["obs"])
        _, y2 = net(params, traj["next_obs"])
        advantage, returns = a2c_targets(y[..., 0], y2[..., 0], traj, self.discount,
                                         self.td_lambda)
        if self.normalize_advantage:
            advantage = _standardize(advantage)
        return advantage, returns

    def _update_tables(self, tables, traj):
        a2c_update_np(tables["logits"], tables["y"], traj, lr=self._learning_rate(),
                      y_weight=self.value_weight, entropy_cost=self.entropy_cost,
                      discount=self.discount, lam=self.td_lambda,
                      normalize_advantage=self.normalize_advantage)
        return True

    def _learning_rate(self, net=None):
        """``lr``, or for ``lr="auto"`` the default of the agent kind (``net``; the tabular
        one without a net)."""
        if self.lr != "auto":
            return float(self.lr)
        return _AUTO_LR["mlp" if isinstance(net, MLPAgentNet) else "tabular"]

    def _update_kwargs(self, net=None):
        return dict(lr=self._learning_rate(net), y_weight=self.value_weight,
                    entropy_cost=self.entropy_cost)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, environments, y=None):
        """Train one fresh A2C agent per environment for ``lifetime`` updates.

        Parameters
        ----------
        environments : gymnasium.Env, list of gymnasium.Env or gymnasium.vector.SyncVectorEnv
            ``Discrete`` actions; ``Discrete`` or 1-D ``Box`` observations. Each
            environment object once: its agent steps it in place (for several agents on
            one task, make one environment each, e.g. ``gymnasium.make_vec(id,
            num_envs=n, vectorization_mode="sync")``). Environments with other action
            counts or observation spaces than the rest are trained in a batch of their own.
        y : None
            Ignored.

        Returns
        -------
        self : A2C
            Fitted estimator.

        Raises
        ------
        TypeError, ValueError
            If an environment is not a gymnasium environment with those spaces, one
            object fills two places of ``environments``, or an environment returns a
            non-finite reward, a non-finite ``Box`` observation or an observation outside
            its ``Discrete`` space (the message names ``environments[i]``).

        Warns
        -----
        UserWarning
            If an agent met no non-zero reward in its training (it learned nothing from
            rewards, e.g. on a sparse-reward environment); the message names the
            environment and what to try.
        """
        envs = self._check_envs(environments)
        with torch_fit(self) as run:
            agents, ret = self._train_agents(envs, self.lifetime, run.seed, desc="A2C agents")
        self.agents_ = agents
        self.lifetime_returns_ = np.asarray(ret, dtype=np.float64)
        return self

    def score(self, environments, y=None, *, n_episodes=100, greedy=True):
        """Mean episode return of the fitted agents, evaluated without further training.

        The agents play whole episodes by :func:`evaluate_policy` (an episode still running
        after 1000 steps is cut there, with a warning); the score is the mean undiscounted
        episode return over all agents and episodes. Which agent plays where:

        * as many environments as agents: agent ``i`` plays ``n_episodes`` episodes in
          ``environments[i]`` (``fit``'s environments, in ``fit``'s order, score each agent
          on its own task);
        * any other number (one environment, or the held-out part of a list in
          ``cross_val_score`` / ``GridSearchCV``): the ``n_episodes * len(agents_)``
          episodes are dealt round-robin over the environments, agent ``i``'s ``k``-th
          episode in ``environments[(i * n_episodes + k) % len(environments)]``, so every
          environment gets an equal share. This measures how well agents trained with
          these parameters do on environments of the same kind as ``fit``'s.

        The rewards the agents collected while learning are in ``lifetime_returns_``;
        :meth:`lifetime_returns` trains fresh agents.

        Parameters
        ----------
        environments : gymnasium.Env, list of gymnasium.Env or gymnasium.vector.SyncVectorEnv
            Environments whose spaces fit the agents (the same action count; observations
            of the kind and width, or at most the number of states, they were trained on).
            ``GridSearchCV`` and ``cross_val_score`` need a list (they index it).
        y : None
            Ignored (``GridSearchCV`` passes it).
        n_episodes : int, default=100
            Episodes per agent. The score is a mean of random episode returns, so it is
            noisy: on slippery ``FrozenLake-v1`` (returns 0 or 1), the standard deviation of
            one agent's score over evaluation seeds was 0.07 to 0.13 with 10 episodes, 0.03
            to 0.08 with 30, 0.02 to 0.045 with 100 and 0.01 to 0.03 with 300 (6 agents,
            20 evaluation seeds each, scores 0.05 to 0.48). Model selection
            (``GridSearchCV``) ranks settings by it: use more episodes when settings differ
            by less than about twice that deviation, fewer in deterministic environments.
        greedy : bool, default=True
            True: every agent takes its most probable action; False: it samples from its
            policy (seeded by ``random_state``).

        Returns
        -------
        score : float
            Mean episode return; higher is better.

        Raises
        ------
        ValueError
            If an environment does not fit the agents (the message names
            ``environments[i]``), or ``n_episodes`` is not a positive int.

        Warns
        -----
        UserWarning
            Once per call, if episodes were cut at 1000 steps (their returns are partial).
        """
        check_is_fitted(self, "agents_")
        envs = check_environments(environments, one_batch=False, allow_aliases=True)
        if (isinstance(n_episodes, (bool, np.bool_)) or not isinstance(n_episodes, Integral)
                or n_episodes < 1):
            raise ValueError(f"n_episodes must be a positive int, got {n_episodes!r}")
        n_agents, n_envs = len(self.agents_), len(envs)
        # (agent, environment index, episodes): one entry per pair that plays
        if n_envs == n_agents:
            plays = [(i, i, n_episodes) for i in range(n_agents)]
        else:
            counts = _round_robin_counts(n_agents, n_envs, int(n_episodes))
            plays = [(i, j, int(counts[i, j])) for i in range(n_agents)
                     for j in range(n_envs) if counts[i, j]]
        seeds = spawn_seeds(seed_from_random_state(self.random_state), n_agents)
        returns, cut = [], 0
        for i, j, n in plays:
            r, c = _episode_returns(self.agents_[i], envs[j], n, greedy=greedy,
                                    max_episode_steps=SCORE_MAX_STEPS,
                                    random_state=seeds[i], where=f"environments[{j}]",
                                    count_cut=True)
            returns.append(r)
            cut += c
        warn_cut_episodes(cut, sum(n for _, _, n in plays), SCORE_MAX_STEPS,
                          "A2C.score cuts them there; evaluate_policy(agent, env, "
                          "max_episode_steps=...) sets the cut")
        return float(np.mean(np.concatenate(returns)))


def _round_robin_counts(n_agents, n_envs, n_episodes):
    """``counts[i, j]``: how many of agent ``i``'s ``n_episodes`` episodes are played in
    environment ``j`` when its ``k``-th goes to ``(i * n_episodes + k) % n_envs``.

    Counted without a loop over the episodes (one per episode took minutes before the
    first episode was played for a large ``n_episodes``): each environment gets
    ``n_episodes // n_envs`` episodes, and the ``n_episodes % n_envs`` environments
    following the agent's first one get one more.
    """
    full, extra = divmod(n_episodes, n_envs)
    counts = np.full((n_agents, n_envs), full, dtype=np.int64)
    for i in range(n_agents):
        start = (i * n_episodes) % n_envs
        counts[i, (start + np.arange(extra)) % n_envs] += 1
    return counts
