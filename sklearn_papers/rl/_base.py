"""Shared machinery of the RL estimators: agent networks for a batch, lifetimes, scoring."""

import warnings
from numbers import Integral, Real

import numpy as np
import torch
from gymnasium import spaces
from sklearn.base import BaseEstimator

from sklearn_papers.nn._lpg import (
    MLPAgentNet,
    TabularAgentNet,
    agent_update,
    rollout,
    scale_rewards,
    value_update,
)
from sklearn_papers.nn._skorch import check_device, torch_fit
from sklearn_papers.rl._agents import MLPAgent, TabularAgent
from sklearn_papers.rl._batched import make_batch
from sklearn_papers.rl._env_checks import check_environment, check_environments
from sklearn_papers.rl._tabular import rollout_np, to_torch, value_update_np
from sklearn_papers.utils._seeding import spawn_seeds
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions

__all__ = []

_VALUE_LR = 0.1  # normalised-LMS step of the side TD(lambda) values (per visit for tables)


def _make_net(core, agent, prediction_size, hidden_size):
    """The agent network for a core: tabular for index observations unless ``agent="mlp"``."""
    if core.obs_dim is None and agent in ("auto", "tabular"):
        return TabularAgentNet(core.n_states, core.n_actions, prediction_size)
    if core.obs_dim is not None and agent == "tabular":
        raise ValueError("agent='tabular' needs Discrete observations; these environments "
                         "have Box observations (use agent='auto' or 'mlp')")
    n_inputs = core.obs_dim if core.obs_dim is not None else core.n_states
    net = MLPAgentNet(n_inputs, core.n_actions, prediction_size, hidden_size)
    net.discrete_inputs = core.obs_dim is None
    return net


def _agent_from(net, params, i, *, lifetime_return, n_updates, td_values=None):
    one = {k: v[i] for k, v in params.items()}
    tdv = None if td_values is None else td_values[i].detach().numpy().astype(np.float64)
    if isinstance(net, TabularAgentNet):
        return TabularAgent(net, one, lifetime_return=lifetime_return, n_updates=n_updates,
                            td_values=tdv)
    return MLPAgent(net, one, lifetime_return=lifetime_return, n_updates=n_updates,
                    td_values=tdv, discrete_inputs=net.discrete_inputs)


class _BaseRLEstimator(BaseEstimator):
    """Common parameters, agent training and scoring; subclasses define ``_targets``."""

    _parameter_constraints = {
        "lifetime": [Interval(Integral, 1, None, closed="left")],
        "rollout_length": [Interval(Integral, 1, None, closed="left")],
        "discount": [Interval(Real, 0, 1, closed="both")],
        "agent": [StrOptions({"auto", "tabular", "mlp"})],
        "agent_hidden_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # --- hooks
    def _prediction_size(self):
        raise NotImplementedError

    def _targets(self, net, params, traj):
        raise NotImplementedError

    def _update_kwargs(self, net):
        raise NotImplementedError

    def _check_rollout_params(self):
        """``ValueError`` for parameters under which the policy cannot learn (a subclass
        that centres its policy targets over each rollout needs two steps or more)."""

    def _update_tables(self, tables, traj):
        """Update tabular agents' numpy ``tables`` in place from a numpy trajectory and
        return True, or return False to update them through :meth:`_targets` in torch."""
        return False

    def _scales_rewards(self):
        """Whether the update targets see every agent's rewards divided by the largest
        ``|r|`` it has seen (:func:`~sklearn_papers.nn._lpg.scale_rewards`)."""
        return False

    # --- shared work
    def _check_envs(self, environments, name="environments"):
        """The user's environments as a list, validated: spaces, and no object in two
        places (each agent steps its environment in place)."""
        return check_environments(environments, name, one_batch=False)

    def _run_lifetimes(self, envs, n_updates, seed, *, desc=None, names=None, warn_idle=True):
        """Fresh agents, one per environment, trained ``n_updates`` updates in one batch.

        Returns ``(net, params, lifetime_returns (n,), td_value_weights (n, D))``. Warns
        (``warn_idle``) when an agent met no non-zero reward (:meth:`_warn_no_reward`).
        """
        check_device(self.device)  # validated; the small agents and cores run on CPU
        self._check_rollout_params()
        gen_seed, env_seed, act_seed = spawn_seeds(seed, 3)
        gen = torch.Generator().manual_seed(gen_seed)
        core = make_batch(envs, generator=gen, seed=env_seed, named_from=envs, names=names)
        net = _make_net(core, self.agent, self._prediction_size(), self.agent_hidden_size)
        params = net.init_params(len(envs), generator=gen)
        tabular = isinstance(net, TabularAgentNet)
        d = net.n_states if tabular else net.n_inputs
        value_w = torch.zeros(len(envs), d)
        total = np.zeros(len(envs))
        rewarded = np.zeros(len(envs), dtype=bool)  # an agent met a non-zero reward
        scale = torch.zeros(len(envs), dtype=torch.float64)
        # tabular agents act, and A2C's update their tables, in numpy (no torch per step)
        act_rng = np.random.default_rng(act_seed)
        tables = {k: v.numpy() for k, v in params.items()}
        steps = range(int(n_updates))
        if self.verbose and desc:
            from tqdm.auto import tqdm

            steps = tqdm(steps, desc=desc, leave=False)
        for _ in steps:
            if tabular:
                traj_np = rollout_np(core, tables["logits"], self.rollout_length, act_rng)
                total += traj_np["reward"].sum(1)
                rewarded |= (traj_np["reward"] != 0).any(1)
                value_update_np(value_w.numpy(), traj_np, self.discount, 0.9, _VALUE_LR)
                if self._update_tables(tables, traj_np):
                    continue
                traj = to_torch(traj_np, params["logits"].dtype)
            else:
                traj = rollout(core, net, params, self.rollout_length, gen)
                total += traj["reward"].sum(1).to(torch.float64).numpy()
                rewarded |= (traj["reward"] != 0).any(1).numpy()
                value_w = value_update(value_w, traj, self.discount, 0.9, _VALUE_LR)
            if self._scales_rewards():
                scale, traj = scale_rewards(traj, scale)
            with torch.no_grad():
                targets = self._targets(net, params, traj)
            params = agent_update(net, params, traj, targets, **self._update_kwargs(net))
            tables = {k: v.numpy() for k, v in params.items()}
        if warn_idle and n_updates:
            self._warn_no_reward(envs, rewarded, int(n_updates) * self.rollout_length, names)
        return net, params, total, value_w

    def _train_agents(self, envs, n_updates, seed, *, desc=None, name="environments",
                      names=None, warn_idle=True):
        """One fresh agent per environment: ``(agents, lifetime_returns (n,))``.

        Errors name ``{name}[i]``, or ``names[i]`` when given.

        Environments whose agents need different networks (action counts, observation
        kinds or widths) are trained in separate batches, with seeds spawned from ``seed``
        (:func:`~sklearn_papers.utils._seeding.spawn_seeds`); one batch when all agree.
        """
        groups = {}
        for i, env in enumerate(envs):
            space = env.observation_space
            key = (int(env.action_space.n), isinstance(space, spaces.Discrete),
                   None if isinstance(space, spaces.Discrete) else space.shape)
            groups.setdefault(key, []).append(i)
        agents, returns = [None] * len(envs), np.zeros(len(envs))
        for group_seed, idx in zip(spawn_seeds(seed, len(groups)), groups.values()):
            members = [envs[i] for i in idx]
            net, params, ret, value_w = self._run_lifetimes(
                members, n_updates, group_seed, desc=desc, warn_idle=warn_idle,
                names=[f"{name}[{i}]" if names is None else names[i] for i in idx])
            for j, i in enumerate(idx):
                agents[i] = _agent_from(net, params, j, lifetime_return=ret[j],
                                        n_updates=n_updates, td_values=value_w)
                returns[i] = ret[j]
        return agents, returns

    def train_agent(self, env, n_updates=None, random_state=None):
        """Train one fresh agent on ``env`` with this estimator's update rule.

        Parameters
        ----------
        env : gymnasium.Env
            ``Discrete`` actions; ``Discrete`` (tabular agent) or 1-D ``Box`` (MLP agent)
            observations. The package's grid worlds and chains are copied into a batched
            core; any other environment is reset (seeded) and stepped in place.
        n_updates : int, default=None
            Agent updates of ``rollout_length`` steps; ``lifetime`` when None.
        random_state : int, RandomState instance or None, default=None
            Seeds the agent and the environment; this estimator's ``random_state`` when None.

        Returns
        -------
        agent : TabularAgent or MLPAgent
            The trained agent; ``agent.lifetime_return_`` is the sum of its rewards.

        Raises
        ------
        TypeError, ValueError
            If ``env`` is not a gymnasium environment with the spaces above.

        Warns
        -----
        UserWarning
            If an agent met no non-zero reward in its training (it learned nothing from
            rewards, e.g. on a sparse-reward environment); the message names the
            environment and what to try.
        """
        self._check_ready()
        if isinstance(env, (list, tuple)):
            raise TypeError(f"env is a {type(env).__name__}; train_agent trains one agent on "
                            "one gymnasium.Env (lifetime_returns trains one per environment "
                            "of a list)")
        check_environment(env, where="env")  # errors name env, not env[0]
        envs = self._check_envs([env], name="env")
        n_updates = _check_n_updates(self.lifetime if n_updates is None else n_updates)
        with torch_fit(self, random_state=random_state) as run:
            net, params, ret, value_w = self._run_lifetimes(envs, n_updates, run.seed,
                                                            names=["env"])
        return _agent_from(net, params, 0, lifetime_return=ret[0], n_updates=n_updates,
                           td_values=value_w)

    def lifetime_returns(self, environments, n_updates=None, random_state=None):
        """Lifetime return (sum of rewards) of one fresh agent per environment.

        The lifetime return of Oh et al. (2020, Sec. 3): the sum of every reward an agent
        collects *while it learns* with this estimator's rule, from its first step to the
        end of its lifetime.

        Parameters
        ----------
        environments : gymnasium.Env, list of gymnasium.Env or gymnasium.vector.SyncVectorEnv
            As for :meth:`train_agent`, each object once (the agents step them in place);
            trained together in one batch when their spaces agree, else in one batch per
            kind of space.
        n_updates : int, default=None
            Agent updates per lifetime; ``lifetime`` when None.
        random_state : int, RandomState instance or None, default=None
            This estimator's ``random_state`` when None.

        Returns
        -------
        returns : ndarray of shape (n_environments,)
            Sum of every reward each agent collected in its lifetime (float64).

        Raises
        ------
        TypeError, ValueError
            If an environment is not a gymnasium environment with the spaces of
            :meth:`train_agent`, or one object fills two places of ``environments`` (the
            message names ``environments[i]``).
        """
        self._check_ready()
        envs = self._check_envs(environments)
        n_updates = _check_n_updates(self.lifetime if n_updates is None else n_updates)
        with torch_fit(self, random_state=random_state) as run:
            _, ret = self._train_agents(envs, n_updates, run.seed, desc="agents")
        return ret

    def _check_ready(self):
        # parameters set after fit (agent_lr, lifetime, ...) are read here: check them
        self._validate_params()

    def _warn_no_reward(self, envs, rewarded, n_steps, names=None):
        """``UserWarning`` naming the environments whose agents met no non-zero reward in
        their ``n_steps`` training steps (they learned nothing from rewards)."""
        idle = np.flatnonzero(~rewarded)
        if not idle.size:
            return
        labels = []
        for i in idle[:3]:
            env = envs[i]
            spec = getattr(env, "spec", None)
            kind = spec.id if spec is not None else type(env.unwrapped).__name__
            labels.append(f"{names[i] if names else f'environments[{i}]'} ({kind})")
        more = f" and {idle.size - 3} more" if idle.size > 3 else ""
        warnings.warn(
            f"{type(self).__name__}: the agent{'s' if idle.size > 1 else ''} on "
            f"{', '.join(labels)}{more} collected no reward at all in {n_steps:,} training "
            "steps (every reward was 0), so the policy learned nothing from rewards and a "
            "greedy score there is that of an untrained agent. With sparse rewards (e.g. "
            "FrozenLake-v1 8x8) try more steps (a larger lifetime or n_updates), a shaped "
            "reward that pays progress, or tabular Q-learning, whose epsilon-greedy "
            "exploration keeps trying new actions.", UserWarning, stacklevel=4)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.non_deterministic = False
        return tags


def _check_n_updates(n_updates):
    """``n_updates`` as an int, or a ``ValueError`` (a bool is not a number of updates)."""
    if (isinstance(n_updates, (bool, np.bool_)) or not isinstance(n_updates, Integral)
            or n_updates < 0):
        raise ValueError(f"n_updates must be a non-negative int or None, got {n_updates!r}")
    return int(n_updates)


def _assign(n_envs, n, rng):
    """``n`` indices drawn from ``range(n_envs)`` (each at least once when ``n >= n_envs``)."""
    return np.concatenate([rng.permutation(n_envs) for _ in range(-(-n // n_envs))])[:n]

