"""Batched cores: many environments (x many agents) stepped behind one interface.

:class:`BatchedGridWorld` and :class:`BatchedChain` step many copies of
:class:`~sklearn_papers.rl.GridWorld` and :class:`~sklearn_papers.rl.DelayedChain` in one
tensor operation, with automatic resets. Both consume the same uniform random numbers as
the reference environments (``step(actions, uniforms)``), so a test can check that they
step exactly alike. :class:`GymEnvBatch` steps any list of gymnasium environments one by
one behind the same interface (user environments, the benchmark's baseline).
:func:`make_batch` picks the fastest core for a list of environments.
"""

import numpy as np
import torch
from gymnasium import spaces

from sklearn_papers.rl._env_checks import (
    _check_fits,
    _feature_observation,
    _finite_reward,
    _index_observation,
    _reset_result,
    _step_result,
)
from sklearn_papers.rl._environments import _MOVES, DelayedChain, GridWorld
from sklearn_papers.utils._seeding import spawn_seeds

__all__ = ["BatchedChain", "BatchedGridWorld", "GymEnvBatch", "make_batch"]



class _BatchCore:
    """Interface of the batched cores (attributes and methods every core has).

    ``n_envs``; ``n_actions``; ``n_states`` (int, or None for continuous observations);
    ``obs_dim`` (feature width, or None for index observations); ``obs`` (current
    observations: long ``(n_envs,)`` or float32 ``(n_envs, obs_dim)``); ``step(actions,
    uniforms=None) -> (next_obs, reward, terminated, truncated)`` where ``next_obs`` is the
    observation reached (before the automatic reset of finished environments, whose new
    observation is in ``obs``).
    """

    generator = None

    def _uniforms(self, shape, uniforms):
        if uniforms is None:
            return torch.rand(shape, generator=self.generator, dtype=torch.float64)
        u = torch.as_tensor(uniforms, dtype=torch.float64)
        if tuple(u.shape) != tuple(shape):
            raise ValueError(f"uniforms must have shape {tuple(shape)}, got {tuple(u.shape)}")
        return u

    @property
    def obs_np(self):
        """Current observations as a numpy array (``obs``'s dtype and shape)."""
        return self.obs.numpy()

    def step_np(self, actions):
        """:meth:`step` with numpy arrays in and out (the tabular agents' rollout)."""
        return tuple(x.numpy() for x in self.step(torch.from_numpy(np.asarray(actions))))


class BatchedGridWorld(_BatchCore):
    """Many :class:`GridWorld` copies of one size stepped in one tensor operation.

    Environment ``i`` of the batch follows ``envs[i]``'s layout (objects padded to the
    largest count with absent, reward-free ones); finished environments reset automatically.

    Parameters
    ----------
    envs : list of GridWorld
        Same ``height``, ``width`` and ``observation``; one per batch slot (repeat an
        environment to run several agents on it).
    generator : torch.Generator, default=None
        Source of the per-step uniforms when ``step`` is not given them.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33.
       :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.rl import BatchedGridWorld, sample_grid_worlds
    >>> core = BatchedGridWorld(sample_grid_worlds(3, random_state=0),
    ...                         generator=torch.Generator().manual_seed(0))
    >>> next_obs, reward, terminated, truncated = core.step([0, 1, 3])
    >>> next_obs.shape, reward.dtype
    (torch.Size([3]), torch.float64)
    """

    def __init__(self, envs, generator=None):
        e0 = envs[0]
        self.height, self.width, self.observation = e0.height, e0.width, e0.observation
        self.n_envs = len(envs)
        self.n_actions = 4
        self.n_objects = max(1, max(e.n_objects for e in envs))
        self.n_states = self.height * self.width
        self.obs_dim = None if self.observation == "index" else 2 * self.n_states
        self.generator = generator
        B, K = self.n_envs, self.n_objects
        self._cell = torch.full((B, K), -1, dtype=torch.long)
        self._reward = torch.zeros(B, K, dtype=torch.float64)
        self._p_term = torch.zeros(B, K, dtype=torch.float64)
        self._p_respawn = torch.zeros(B, K, dtype=torch.float64)
        self._valid = torch.zeros(B, K, dtype=torch.bool)
        self._start = torch.zeros(B, dtype=torch.long)
        self._max_steps = torch.zeros(B, dtype=torch.long)
        # next cell of every (cell, action): one gather per step instead of the arithmetic
        rows, cols = np.divmod(np.arange(self.n_states), self.width)
        self._next_cell = torch.as_tensor(
            np.clip(rows[:, None] + _MOVES[None, :, 0], 0, self.height - 1) * self.width
            + np.clip(cols[:, None] + _MOVES[None, :, 1], 0, self.width - 1))
        for i, env in enumerate(envs):
            self.set_env(i, env)
        self.pos = self._start.clone()
        self.present = self._valid.clone()
        self.t = torch.zeros(B, dtype=torch.long)

    def check_fits(self, env, where="the environment"):
        """Raise ``ValueError`` unless ``env`` is a :class:`GridWorld` of this batch's size.

        Parameters
        ----------
        env : gymnasium.Env
            A candidate for :meth:`set_env`.
        where : str, default="the environment"
            How the message names it.
        """
        if type(env) is not GridWorld or (env.height, env.width, env.observation) != (
                self.height, self.width, self.observation):
            got = (f"a {env.height} x {env.width} GridWorld ({env.observation!r})"
                   if type(env) is GridWorld else f"a {type(env).__name__}")
            raise ValueError(
                f"{where} is {got}; this batch of agents steps {self.height} x {self.width} "
                f"GridWorlds ({self.observation!r}) in one tensor operation, chosen from the "
                "first environments. Give one fit environments of one kind and size (a "
                "sampler should fix height and width), or pass them as a list.")

    def set_env(self, i, env):
        """Give slot ``i`` the layout of ``env`` and reset it.

        Parameters
        ----------
        i : int
            Batch slot.
        env : GridWorld
            Same size and observation kind as the batch.
        """
        if (env.height, env.width, env.observation) != (self.height, self.width,
                                                        self.observation):
            raise ValueError("all grid worlds of a batch need the same height, width and "
                             f"observation; slot {i} has {env.height} x {env.width} "
                             f"({env.observation!r}), the batch {self.height} x {self.width} "
                             f"({self.observation!r})")
        if env.n_objects > self.n_objects:  # widen every slot with absent, reward-free objects
            extra = env.n_objects - self.n_objects
            B = self.n_envs
            self._cell = torch.cat([self._cell, torch.full((B, extra), -1)], 1)
            for name in ("_reward", "_p_term", "_p_respawn"):
                setattr(self, name, torch.cat([getattr(self, name),
                                               torch.zeros(B, extra, dtype=torch.float64)], 1))
            self._valid = torch.cat([self._valid, torch.zeros(B, extra, dtype=torch.bool)], 1)
            if hasattr(self, "present"):
                self.present = torch.cat([self.present, torch.zeros(B, extra, dtype=torch.bool)],
                                         1)
            self.n_objects = env.n_objects
        k = env.n_objects
        self._cell[i] = -1
        self._reward[i] = 0.0
        self._p_term[i] = 0.0
        self._p_respawn[i] = 0.0
        self._valid[i] = False
        self._cell[i, :k] = torch.as_tensor(env._obj_cell)
        self._reward[i, :k] = torch.as_tensor(env._obj_reward)
        self._p_term[i, :k] = torch.as_tensor(env._p_term)
        self._p_respawn[i, :k] = torch.as_tensor(env._p_respawn)
        self._valid[i, :k] = True
        self._start[i] = env.start[0] * env.width + env.start[1]
        self._max_steps[i] = env.max_steps
        if hasattr(self, "pos"):
            self.pos[i] = self._start[i]
            self.present[i] = self._valid[i]
            self.t[i] = 0

    def _observe(self, pos, present):
        if self.observation == "index":
            return pos.clone()
        onehot = torch.nn.functional.one_hot(pos, self.n_states).to(torch.float32)
        occupied = torch.zeros(self.n_envs, self.n_states + 1, dtype=torch.float32)
        occupied.scatter_(1, torch.where(present, self._cell, self.n_states),
                          torch.ones_like(self._reward, dtype=torch.float32))
        return torch.cat([onehot, occupied[:, :self.n_states]], dim=1)

    @property
    def obs(self):
        """Current observations."""
        return self._observe(self.pos, self.present)

    def step(self, actions, uniforms=None):
        """Step every slot, then reset the finished ones.

        Parameters
        ----------
        actions : array-like of int of shape (n_envs,)
            One action per slot.
        uniforms : array-like of shape (n_envs, n_objects, 2), default=None
            The per-object uniforms of :meth:`GridWorld.step` (column 0: termination,
            column 1: respawn); drawn from ``generator`` when None.

        Returns
        -------
        next_obs : Tensor of shape (n_envs,) (long) or (n_envs, 2 * n_states) (float32)
            Observations reached, before the resets.
        reward : Tensor of shape (n_envs,)
            Rewards (float64).
        terminated : Tensor of shape (n_envs,)
            Episodes ended by the environment (bool).
        truncated : Tensor of shape (n_envs,)
            Episodes cut by the time limit (bool).
        """
        u = self._uniforms((self.n_envs, self.n_objects, 2), uniforms)
        actions = torch.as_tensor(actions, dtype=torch.long)
        self.pos = self._next_cell[self.pos, actions]
        absent_before = self._valid & ~self.present
        hit = self.present & (self._cell == self.pos[:, None])
        reward = (hit * self._reward).sum(1)
        terminated = (hit & (u[..., 0] < self._p_term)).any(1)
        self.present = (self.present & ~hit) | (absent_before & (u[..., 1] < self._p_respawn))
        self.t += 1
        truncated = ~terminated & (self.t >= self._max_steps)
        next_obs = self._observe(self.pos, self.present)
        done = terminated | truncated
        if done.any():
            self.pos = torch.where(done, self._start, self.pos)
            self.present = torch.where(done[:, None], self._valid, self.present)
            self.t.masked_fill_(done, 0)
        return next_obs, reward, terminated, truncated


class BatchedChain(_BatchCore):
    """Many :class:`DelayedChain` copies of one length stepped in one tensor operation.

    Parameters
    ----------
    envs : list of DelayedChain
        Same ``length`` and ``observation``.
    generator : torch.Generator, default=None
        Source of the per-step uniforms when ``step`` is not given them.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33.
       :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import BatchedChain, DelayedChain
    >>> core = BatchedChain([DelayedChain(length=3), DelayedChain(length=3, good_branch=1)])
    >>> core.step([1, 1], uniforms=[[0.0], [0.0]])[0]
    tensor([3, 3])
    """

    def __init__(self, envs, generator=None):
        e0 = envs[0]
        self.length, self.observation = e0.length, e0.observation
        self.n_envs, self.n_actions, self.n_states = len(envs), 2, e0.n_states
        self.obs_dim = None if self.observation == "index" else self.n_states
        self.generator = generator
        self._good = torch.zeros(self.n_envs, dtype=torch.long)
        self._noise = torch.zeros(self.n_envs, dtype=torch.float64)
        for i, env in enumerate(envs):
            self.set_env(i, env)
        self.state = torch.zeros(self.n_envs, dtype=torch.long)

    def check_fits(self, env, where="the environment"):
        """Raise ``ValueError`` unless ``env`` is a :class:`DelayedChain` of the batch's length.

        Parameters
        ----------
        env : gymnasium.Env
            A candidate for :meth:`set_env`.
        where : str, default="the environment"
            How the message names it.
        """
        if type(env) is not DelayedChain or (env.length, env.observation) != (
                self.length, self.observation):
            got = (f"a DelayedChain of length {env.length} ({env.observation!r})"
                   if type(env) is DelayedChain else f"a {type(env).__name__}")
            raise ValueError(
                f"{where} is {got}; this batch of agents steps DelayedChains of length "
                f"{self.length} ({self.observation!r}) in one tensor operation, chosen from "
                "the first environments. Give one fit environments of one kind and size, "
                "or pass them as a list.")

    def set_env(self, i, env):
        """Give slot ``i`` the parameters of ``env`` and reset it.

        Parameters
        ----------
        i : int
            Batch slot.
        env : DelayedChain
            Same length and observation kind as the batch.
        """
        if (env.length, env.observation) != (self.length, self.observation):
            raise ValueError(f"all chains of a batch need the same length and observation; "
                             f"slot {i} has length {env.length} ({env.observation!r}), the "
                             f"batch {self.length} ({self.observation!r})")
        self._good[i] = env.good_branch
        self._noise[i] = env.noise
        if hasattr(self, "state"):
            self.state[i] = 0

    def _observe(self, state):
        if self.observation == "index":
            return state.clone()
        return torch.nn.functional.one_hot(state, self.n_states).to(torch.float32)

    @property
    def obs(self):
        """Current observations."""
        return self._observe(self.state)

    def step(self, actions, uniforms=None):
        """Step every slot, then reset the finished ones.

        Parameters
        ----------
        actions : array-like of int of shape (n_envs,)
            One action per slot.
        uniforms : array-like of shape (n_envs, 1), default=None
            The distractor uniforms of :meth:`DelayedChain.step`; drawn from ``generator``
            when None.

        Returns
        -------
        next_obs : Tensor of shape (n_envs,) (long) or (n_envs, n_states) (float32)
            Observations reached, before the resets.
        reward : Tensor of shape (n_envs,)
            Rewards (float64).
        terminated : Tensor of shape (n_envs,)
            Episodes ended by the environment (bool).
        truncated : Tensor of shape (n_envs,)
            Episodes cut by the time limit (bool).
        """
        u = self._uniforms((self.n_envs, 1), uniforms)
        actions = torch.as_tensor(actions, dtype=torch.long)
        n = self.length - 1
        at_start = self.state == 0
        branch = torch.where(at_start, actions, (self.state - 1) // n)
        depth = torch.where(at_start, 0, (self.state - 1) % n + 1)
        terminated = depth == n
        final = torch.where(branch == self._good, 1.0, -1.0).to(torch.float64)
        noise = torch.where(u[:, 0] < 0.5, self._noise, -self._noise)
        reward = torch.where(terminated, final, noise)
        self.state = torch.where(terminated, self.state, 1 + branch * n + depth)
        next_obs = self._observe(self.state)
        self.state = torch.where(terminated, 0, self.state)
        return next_obs, reward, terminated, torch.zeros_like(terminated)


class GymEnvBatch(_BatchCore):
    """Any gymnasium environments stepped one by one behind the batched-core interface.

    Parameters
    ----------
    envs : list of gymnasium.Env
        ``Discrete`` action spaces of one size; observations all ``Discrete`` (index) or all
        1-D ``Box`` of one width (features). A ``Discrete`` space's ``start`` is honoured:
        the agents see observations and pick actions in ``0 .. n - 1``, shifted by it. No
        environment object (nor the ``unwrapped`` core of a wrapper) may fill two slots:
        every slot is stepped as its own episode.
    seed : int, default=0
        Seeds of the first resets, spawned from ``numpy.random.SeedSequence(seed)``
        (:func:`~sklearn_papers.utils._seeding.spawn_seeds`): its first ``n_envs`` children
        seed environment ``i``'s first reset, the next one the reset of each environment
        put in a slot by :meth:`set_env`, in turn. Later resets within a slot are unseeded
        (they continue that environment's generator).
    named_from : list of gymnasium.Env or None, default=None
        The caller's list: an environment that returns a non-finite reward or an
        observation outside its space is named ``environments[k]`` by its position
        ``k`` in it. None names it by its batch slot.
    names : list of str or None, default=None
        How error messages name the environment of each slot (e.g. ``"environments[3]"``);
        overrides ``named_from``.
    n_states : int or None, default=None
        Size of the agents' tables for ``Discrete`` observations: at least the largest
        ``n`` of the spaces of ``envs`` (the default); give more when :meth:`set_env` will
        bring larger spaces.

    Raises
    ------
    ValueError
        If one environment fills two slots, or an environment's first observation lies
        outside its space.

    References
    ----------
    .. [1] Towers, M. et al. (2024). Gymnasium: a standard interface for reinforcement
       learning environments. :doi:`10.48550/arXiv.2407.17032`

    Examples
    --------
    >>> from sklearn_papers.rl import DelayedChain, GymEnvBatch
    >>> batch = GymEnvBatch([DelayedChain(length=3), DelayedChain(length=3)], seed=0)
    >>> batch.step([0, 1])[1]
    tensor([0., 0.], dtype=torch.float64)
    """

    def __init__(self, envs, seed=0, *, named_from=None, names=None, n_states=None):
        self.envs = list(envs)
        self.named_from = None if named_from is None else list(named_from)
        self._names = None if names is None else list(names)
        self.n_envs = len(self.envs)
        self._seeds = np.random.SeedSequence(int(seed))
        self._warned = set()  # environments already warned about out-of-bounds observations
        space = self.envs[0].observation_space
        self.n_actions = int(self.envs[0].action_space.n)
        if isinstance(space, spaces.Discrete):
            largest = int(max(e.observation_space.n for e in self.envs))
            self.n_states = largest if n_states is None else max(largest, int(n_states))
            self.obs_dim = None
        else:
            self.n_states, self.obs_dim = None, int(space.shape[0])
        for i, env in enumerate(self.envs):
            self._check_not_in_another_slot(i, env)
        # gymnasium's Discrete(n, start=s) holds s .. s + n - 1: the agents see 0 .. n - 1
        self._obs_start = [self._start(e.observation_space) for e in self.envs]
        self._act_start = [self._start(e.action_space) for e in self.envs]
        self._current = [
            self._shift(i, _reset_result(env.reset(seed=s), self._where(i)), "reset")
            for i, (env, s) in enumerate(zip(self.envs, spawn_seeds(self._seeds, self.n_envs)))]

    @staticmethod
    def _start(space):
        return int(space.start) if isinstance(space, spaces.Discrete) else 0

    def _where(self, i):
        if self._names is not None and self._names[i] is not None:
            return self._names[i]
        env = self.envs[i]
        k = next((k for k, e in enumerate(self.named_from or []) if e is env), None)
        return (f"environments[{k}]" if k is not None
                else f"the environment in batch slot {i} ({type(env).__name__})")

    def _check_not_in_another_slot(self, i, env):
        core = env.unwrapped
        for j, other in enumerate(self.envs):
            if j != i and other.unwrapped is core:
                raise ValueError(
                    f"batch slots {min(i, j)} and {max(i, j)} hold the same environment "
                    f"object ({type(core).__name__}); one object cannot run two episodes at "
                    "once. Give every slot its own environment (gymnasium.make(...) for "
                    "each, or copy.deepcopy(env)).")

    def _shift(self, i, obs, call="step"):
        """Observation of environment ``i`` relative to its space's ``start``, checked
        against its space (the agents index tables and one-hot vectors with it)."""
        space = self.envs[i].observation_space
        if self.obs_dim is None:
            return _index_observation(space, obs, self._where(i), call)
        return _feature_observation(space, obs, self.obs_dim, self._where(i), call,
                                    warned=self._warned)

    def check_fits(self, env, where="the environment"):
        """Raise ``ValueError`` unless ``env`` has the spaces this batch was built for.

        Parameters
        ----------
        env : gymnasium.Env
            A candidate for :meth:`set_env`.
        where : str, default="the environment"
            How the message names it.
        """
        _check_fits(env, self.n_actions, self.n_states, self.obs_dim, where)

    def set_env(self, i, env, name=None):
        """Put ``env`` in slot ``i`` and reset it (with the next unused seed).

        Parameters
        ----------
        i : int
            Batch slot.
        env : gymnasium.Env
            Spaces that fit the batch (:meth:`check_fits`), not held by another slot.
        name : str, default=None
            How error messages name it (see ``names``).

        Raises
        ------
        ValueError
            If ``env`` does not fit the batch or already fills another slot.
        """
        where = name if name is not None else f"the environment put in batch slot {i}"
        self.check_fits(env, where)
        self._check_not_in_another_slot(i, env)
        self.envs[i] = env
        if self._names is None and name is not None:
            self._names = [None] * self.n_envs
        if self._names is not None:
            self._names[i] = name
        self._obs_start[i] = self._start(env.observation_space)
        self._act_start[i] = self._start(env.action_space)
        (seed,) = spawn_seeds(self._seeds, 1)
        self._current[i] = self._shift(i, _reset_result(env.reset(seed=seed), where), "reset")

    def _stack(self, observations):
        if self.obs_dim is None:
            return torch.as_tensor(np.asarray(observations, dtype=np.int64))
        return torch.as_tensor(np.asarray(observations, dtype=np.float32))

    @property
    def obs(self):
        """Current observations."""
        return self._stack(self._current)

    def step(self, actions, uniforms=None):
        """Step every environment with its own generator, resetting the finished ones.

        Parameters
        ----------
        actions : array-like of int of shape (n_envs,)
            One action per environment.
        uniforms : None
            Must be None (each environment draws its own randomness).

        Returns
        -------
        next_obs : Tensor of shape (n_envs,) (long) or (n_envs, obs_dim) (float32)
            Observations reached, before the resets.
        reward : Tensor of shape (n_envs,)
            Rewards (float64).
        terminated : Tensor of shape (n_envs,)
            Episodes ended by the environment (bool).
        truncated : Tensor of shape (n_envs,)
            Episodes cut by a time limit and not terminated (bool).

        Raises
        ------
        ValueError
            If an environment returns a non-finite reward, or an observation outside
            its ``Discrete`` space or non-finite (``Box``); the message names it.
        """
        if uniforms is not None:
            raise ValueError("GymEnvBatch steps environments with their own generators; "
                             "uniforms must be None")
        nxt, rew, term, trunc = self.step_np(actions)
        return (self._stack(nxt), torch.from_numpy(rew), torch.from_numpy(term),
                torch.from_numpy(trunc))

    @property
    def obs_np(self):
        """Current observations as a numpy array (``obs``'s dtype and shape)."""
        return self._np(self._current)

    def _np(self, observations):
        return np.asarray(observations, dtype=np.int64 if self.obs_dim is None else np.float32)

    def step_np(self, actions):
        """:meth:`step` with numpy arrays in and out (the tabular agents' rollout)."""
        actions = np.asarray(actions)
        nxt, rew, term, trunc = [], [], [], []
        for i, env in enumerate(self.envs):
            obs, r, te, tr = _step_result(env.step(int(actions[i]) + self._act_start[i]),
                                          self._where(i))
            obs = self._shift(i, obs)
            reward = _finite_reward(r, self._where(i))
            nxt.append(obs)
            rew.append(reward)
            term.append(bool(te))
            trunc.append(bool(tr) and not te)
            self._current[i] = (self._shift(i, _reset_result(env.reset(), self._where(i)),
                                            "reset") if (te or tr) else obs)
        return (self._np(nxt), np.asarray(rew, dtype=np.float64), np.asarray(term, dtype=bool),
                np.asarray(trunc, dtype=bool))


def _batchable(envs):
    if all(type(e) is GridWorld for e in envs) and len(
            {(e.height, e.width, e.observation) for e in envs}) == 1:
        return BatchedGridWorld
    if all(type(e) is DelayedChain for e in envs) and len(
            {(e.length, e.observation) for e in envs}) == 1:
        return BatchedChain
    return None


def make_batch(envs, *, generator=None, seed=0, named_from=None, names=None,
               compatible_with=()):
    """The fastest core for ``envs``: batched when all are one kind and size, else a loop.

    Parameters
    ----------
    envs : list of gymnasium.Env
        One per batch slot.
    generator : torch.Generator, default=None
        Uniforms for the batched cores.
    seed : int, default=0
        First-reset seeds of :class:`GymEnvBatch`.
    named_from : list of gymnasium.Env or None, default=None
        Passed to :class:`GymEnvBatch` (its error messages name environments by their
        position in this list).
    names : list of str or None, default=None
        Passed to :class:`GymEnvBatch` (how its error messages name each slot).
    compatible_with : sequence of gymnasium.Env, default=()
        Environments that may later be put in the slots (``set_env``): a batched core is
        chosen only when it can hold them too, and tables are sized for them.

    Returns
    -------
    core : BatchedGridWorld, BatchedChain or GymEnvBatch
        A batch with one slot per environment.

    Examples
    --------
    >>> from sklearn_papers.rl import make_batch, sample_grid_worlds
    >>> type(make_batch(sample_grid_worlds(3, random_state=0))).__name__
    'BatchedGridWorld'
    """
    kind = _batchable(list(envs) + list(compatible_with))
    if kind is not None:
        return kind(envs, generator=generator)
    n_states = None
    if isinstance(envs[0].observation_space, spaces.Discrete):
        n_states = max(int(e.observation_space.n) for e in list(envs) + list(compatible_with)
                       if isinstance(e.observation_space, spaces.Discrete))
    return GymEnvBatch(envs, seed=seed, named_from=named_from, names=names,
                       n_states=n_states)
