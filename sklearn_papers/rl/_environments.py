"""Tabular grid worlds and delayed-chain MDPs (after Oh et al. 2020) behind gymnasium's API.

Two layers:

* :class:`GridWorld` and :class:`DelayedChain` are ``gymnasium.Env`` subclasses written as a
  plain one-environment reference (numpy, one step at a time).
* :class:`BatchedGridWorld` and :class:`BatchedChain` step many copies of them (many
  environments x many agents) in one tensor operation, with automatic resets. Both consume
  the same uniform random numbers as the reference (``step(actions, uniforms)``), so a test
  can check that they step exactly alike. :class:`GymEnvBatch` steps any list of gymnasium
  environments one by one behind the same interface (user environments, the benchmark's
  baseline).

:func:`make_batch` picks the fastest core for a list of environments.
"""

import warnings
from numbers import Integral

import gymnasium
import numpy as np
import torch
from gymnasium import spaces

__all__ = [
    "BatchedChain",
    "BatchedGridWorld",
    "DelayedChain",
    "GridWorld",
    "GymEnvBatch",
    "make_batch",
    "make_grid_world",
    "sample_grid_worlds",
]

# up, down, left, right as (row, column) moves
_MOVES = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)


def _check_observation(observation):
    if observation not in ("index", "features"):
        raise ValueError(f"observation must be 'index' or 'features', got {observation!r}")


def _check_render_mode(render_mode, modes):
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")


def _check_was_reset(env, method="step"):
    if getattr(env, "_needs_reset", False):
        raise gymnasium.error.ResetNeeded(
            f"call {type(env).__name__}.reset() before {method}(): the episode has not "
            "started (and reset(seed=...) seeds the per-step random numbers)")


# Smallest grids that hold each layout (see make_grid_world's docstring).
_MIN_CELLS = {"dense": 5, "sparse": 2}
_MIN_DIAMETER_LONG = 4


def _check_grid_size(kind, height, width):
    for name, v in (("height", height), ("width", width)):
        if isinstance(v, bool) or not isinstance(v, Integral) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if kind in _MIN_CELLS and height * width < _MIN_CELLS[kind]:
        need = "the start and four objects" if kind == "dense" else "the start and the goal"
        raise ValueError(f"a {kind!r} grid world needs at least {_MIN_CELLS[kind]} cells to "
                         f"hold {need}; height={height}, width={width} gives "
                         f"{height * width}")
    if kind == "long_horizon" and height + width - 2 < _MIN_DIAMETER_LONG:
        raise ValueError(f"a 'long_horizon' grid world needs height + width >= "
                         f"{_MIN_DIAMETER_LONG + 2} (a far goal, a trap within 2 steps of the "
                         f"start and a penalty between them); got height={height}, "
                         f"width={width}")


class GridWorld(gymnasium.Env):
    """A tabular grid world with collectable objects (after Oh et al. 2020).

    The agent moves up, down, left or right (action 0-3) on a ``height x width`` grid whose
    borders are walls. Object ``k`` sits at cell ``objects[k][0:2]``; walking onto it while it is
    present gives its reward ``r_k``, removes it, and ends the episode with probability
    ``p_term_k``. Every object absent at the start of a step reappears at the end of it with
    probability ``p_respawn_k``. An episode also ends (truncation) after ``max_steps`` steps.
    Each reset puts the agent on ``start`` with every object present.

    One step draws ``uniforms = self.np_random.random((n_objects, 2))``: column 0 decides
    termination, column 1 respawning. :class:`BatchedGridWorld` consumes the same numbers.

    Parameters
    ----------
    height, width : int, default=5
        Grid size (cells).
    objects : sequence of (row, col, reward, p_term, p_respawn), default=((4, 4, 1.0, 1.0, 0.0),)
        The objects; at most one per cell, none on ``start``.
    start : (int, int), default=(0, 0)
        The agent's cell after every reset.
    max_steps : int, default=50
        Steps after which an episode is truncated.
    observation : {"index", "features"}, default="index"
        ``"index"``: the agent's cell ``row * width + col`` (``Discrete(height * width)``; a
        tabular agent). ``"features"``: float32 vector of the one-hot cell followed by the
        map of cells holding a present object (``Box(0, 1, (2 * height * width,))``; an MLP
        agent).
    render_mode : {"ansi"} or None, default=None
        ``"ansi"``: :meth:`render` returns a text picture. ``metadata["render_fps"]`` (4,
        as gymnasium's text environments) is the frame rate a recorder would use.

    References
    ----------
    .. [1] Oh, J., Hessel, M., Czarnecki, W. M., Xu, Z., van Hasselt, H., Singh, S. and
       Silver, D. (2020). Discovering reinforcement learning algorithms. NeurIPS 33,
       (the tabular grid worlds of its experiments). :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import GridWorld
    >>> env = GridWorld(height=3, width=3, objects=[(2, 2, 1.0, 1.0, 0.0)])
    >>> obs, info = env.reset(seed=0)
    >>> obs
    0
    >>> env.step(3)[:3]
    (1, 0.0, False)
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, height=5, width=5, objects=((4, 4, 1.0, 1.0, 0.0),), start=(0, 0),
                 max_steps=50, observation="index", render_mode=None):
        _check_observation(observation)
        _check_render_mode(render_mode, self.metadata["render_modes"])
        for name, v in (("height", height), ("width", width), ("max_steps", max_steps)):
            if not isinstance(v, Integral) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        self.height, self.width = int(height), int(width)
        self.start = (int(start[0]), int(start[1]))
        if not (0 <= self.start[0] < height and 0 <= self.start[1] < width):
            raise ValueError(f"start={start!r} lies outside the {height} x {width} grid")
        objs = np.asarray(objects, dtype=np.float64).reshape(-1, 5)
        cells = set()
        for k, (r, c, _, p_term, p_resp) in enumerate(objs):
            if not (r == int(r) and c == int(c) and 0 <= r < height and 0 <= c < width):
                raise ValueError(f"objects[{k}] at ({r}, {c}) lies outside the {height} x "
                                 f"{width} grid")
            if (int(r), int(c)) in cells or (int(r), int(c)) == self.start:
                raise ValueError(f"objects[{k}] at ({int(r)}, {int(c)}) shares its cell with "
                                 "another object or the start")
            if not (0 <= p_term <= 1 and 0 <= p_resp <= 1):
                raise ValueError(f"objects[{k}] has probabilities outside [0, 1]: "
                                 f"p_term={p_term}, p_respawn={p_resp}")
            cells.add((int(r), int(c)))
        self.objects = [tuple(float(v) for v in o) for o in objs]
        self.max_steps = int(max_steps)
        self.observation = observation
        self.render_mode = render_mode
        self.n_states = self.height * self.width
        self.action_space = spaces.Discrete(4)
        if observation == "index":
            self.observation_space = spaces.Discrete(self.n_states)
        else:
            self.observation_space = spaces.Box(0.0, 1.0, (2 * self.n_states,),
                                                dtype=np.float32)
        self._obj_cell = (objs[:, 0] * self.width + objs[:, 1]).astype(np.int64)
        self._obj_reward = objs[:, 2].copy()
        self._p_term = objs[:, 3].copy()
        self._p_respawn = objs[:, 4].copy()
        self._pos = self.start[0] * self.width + self.start[1]
        self._present = np.ones(len(objs), dtype=bool)
        self._t = 0
        self._needs_reset = True

    @property
    def n_objects(self):
        """Number of objects."""
        return len(self.objects)

    def _obs(self):
        if self.observation == "index":
            return int(self._pos)
        out = np.zeros(2 * self.n_states, dtype=np.float32)
        out[self._pos] = 1.0
        out[self.n_states + self._obj_cell[self._present]] = 1.0
        return out

    def reset(self, *, seed=None, options=None):
        """Put the agent on ``start`` with every object present.

        Parameters
        ----------
        seed : int, default=None
            Seeds ``self.np_random`` (the per-step uniforms).
        options : dict, default=None
            Unused.

        Returns
        -------
        obs : int or ndarray of shape (2 * height * width,)
            The first observation.
        info : dict
            Empty.
        """
        super().reset(seed=seed)
        self._pos = self.start[0] * self.width + self.start[1]
        self._present = np.ones(self.n_objects, dtype=bool)
        self._t = 0
        self._needs_reset = False
        return self._obs(), {}

    def step(self, action):
        """Move one cell (walls stop the agent), collect, respawn.

        Parameters
        ----------
        action : int
            0 up, 1 down, 2 left, 3 right.

        Returns
        -------
        obs : int or ndarray
            The observation reached.
        reward : float
            Sum of the rewards of the objects collected.
        terminated : bool
            A collected object ended the episode.
        truncated : bool
            ``max_steps`` were reached.
        info : dict
            Empty.

        Raises
        ------
        gymnasium.error.ResetNeeded
            If :meth:`reset` was never called (as gymnasium's ``OrderEnforcing`` wrapper).
        """
        _check_was_reset(self)
        return self._step_with(action, self.np_random.random((self.n_objects, 2)))

    def _step_with(self, action, uniforms):
        """The step with given uniforms of shape ``(n_objects, 2)`` (the reference dynamics)."""
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        r, c = divmod(self._pos, self.width)
        r = min(max(r + _MOVES[action, 0], 0), self.height - 1)
        c = min(max(c + _MOVES[action, 1], 0), self.width - 1)
        self._pos = int(r * self.width + c)
        absent_before = ~self._present
        reward, terminated = 0.0, False
        for k in range(self.n_objects):
            if self._present[k] and self._obj_cell[k] == self._pos:
                reward += self._obj_reward[k]
                self._present[k] = False
                terminated = terminated or bool(uniforms[k, 0] < self._p_term[k])
        for k in range(self.n_objects):
            if absent_before[k] and uniforms[k, 1] < self._p_respawn[k]:
                self._present[k] = True
        self._t += 1
        truncated = (not terminated) and self._t >= self.max_steps
        return self._obs(), float(reward), terminated, truncated, {}

    def render(self):
        """Text picture: ``A`` agent, digits objects present, ``.`` empty.

        Returns
        -------
        picture : str
            ``height`` lines of ``width`` characters.

        Raises
        ------
        gymnasium.error.ResetNeeded
            If :meth:`reset` was never called (there is no episode to draw).
        """
        _check_was_reset(self, "render")
        grid = [["." for _ in range(self.width)] for _ in range(self.height)]
        for k, cell in enumerate(self._obj_cell):
            if self._present[k]:
                grid[cell // self.width][cell % self.width] = str(k % 10)
        grid[self._pos // self.width][self._pos % self.width] = "A"
        return "\n".join("".join(row) for row in grid)


class DelayedChain(gymnasium.Env):
    """A delayed-chain MDP (after Oh et al. 2020): the first action decides the end.

    From the start state the agent picks one of two branches (action 0 or 1); it then walks
    ``length - 1`` more steps along that branch whatever it does, and the last step pays
    ``+1`` if the branch was ``good_branch`` and ``-1`` otherwise, ending the episode. Every
    step before the last pays a distractor of ``+noise`` or ``-noise`` (probability 1/2 each,
    from ``uniforms[0]``), so credit must be assigned ``length`` steps back.

    Parameters
    ----------
    length : int, default=5
        Steps per episode (at least 2).
    good_branch : {0, 1}, default=0
        The first action that pays ``+1``.
    noise : float, default=0.0
        Amplitude of the distractor rewards.
    observation : {"index", "features"}, default="index"
        ``"index"``: the state ``0`` (start) or ``1 + branch * (length - 1) + depth - 1``
        (``Discrete(2 * length - 1)``); ``"features"``: its one-hot float32 vector.
    render_mode : None, default=None
        The chain declares no render modes; anything but None raises ``ValueError``.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33,
       (the delayed chain MDPs of its experiments). :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import DelayedChain
    >>> env = DelayedChain(length=3, good_branch=1)
    >>> env.reset(seed=0)[0], env.step(1)[:2], env.step(0)[:3], env.step(0)[:3]
    (0, (3, 0.0), (4, 0.0, False), (4, 1.0, True))
    """

    metadata = {"render_modes": []}

    def __init__(self, length=5, good_branch=0, noise=0.0, observation="index",
                 render_mode=None):
        _check_observation(observation)
        _check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        if not isinstance(length, Integral) or length < 2:
            raise ValueError(f"length must be an int >= 2, got {length!r}")
        if good_branch not in (0, 1):
            raise ValueError(f"good_branch must be 0 or 1, got {good_branch!r}")
        if not noise >= 0:
            raise ValueError(f"noise must be >= 0, got {noise!r}")
        self.length, self.good_branch, self.noise = int(length), int(good_branch), float(noise)
        self.observation = observation
        self.n_states = 2 * self.length - 1
        self.action_space = spaces.Discrete(2)
        if observation == "index":
            self.observation_space = spaces.Discrete(self.n_states)
        else:
            self.observation_space = spaces.Box(0.0, 1.0, (self.n_states,), dtype=np.float32)
        self._state = 0
        self._needs_reset = True

    def _obs(self):
        if self.observation == "index":
            return int(self._state)
        out = np.zeros(self.n_states, dtype=np.float32)
        out[self._state] = 1.0
        return out

    def reset(self, *, seed=None, options=None):
        """Back to the start state.

        Parameters
        ----------
        seed : int, default=None
            Seeds ``self.np_random`` (the distractor rewards).
        options : dict, default=None
            Unused.

        Returns
        -------
        obs : int or ndarray of shape (2 * length - 1,)
            The start state.
        info : dict
            Empty.
        """
        super().reset(seed=seed)
        self._state = 0
        self._needs_reset = False
        return self._obs(), {}

    def step(self, action):
        """One step along the chain.

        Parameters
        ----------
        action : int
            0 or 1; only the first action of an episode matters.

        Returns
        -------
        obs : int or ndarray
            The state reached (the last state again when the episode ends).
        reward : float
            ``+-1`` at the last step, ``+-noise`` before.
        terminated : bool
            The last step was taken.
        truncated : bool
            Always False.
        info : dict
            Empty.

        Raises
        ------
        gymnasium.error.ResetNeeded
            If :meth:`reset` was never called (as gymnasium's ``OrderEnforcing`` wrapper).
        """
        _check_was_reset(self)
        return self._step_with(action, self.np_random.random(1))

    def _step_with(self, action, uniforms):
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        n = self.length - 1
        if self._state == 0:
            branch, depth = int(action), 0
        else:
            branch, depth = divmod(self._state - 1, n)
            depth += 1
        if depth == n:  # last step: pay and stay
            reward = 1.0 if branch == self.good_branch else -1.0
            return self._obs(), reward, True, False, {}
        self._state = 1 + branch * n + depth
        reward = (self.noise if uniforms[0] < 0.5 else -self.noise) + 0.0  # no -0.0
        return self._obs(), float(reward), False, False, {}


def make_grid_world(kind="dense", *, height=5, width=5, random_state=None,
                    observation="index", render_mode=None):
    """Draw one grid world of a given reward layout (after Oh et al. 2020, scaled down).

    Parameters
    ----------
    kind : {"dense", "sparse", "long_horizon"}, default="dense"
        ``"dense"``: four objects, rewards uniform in ``[-1, 1]`` with one set to ``+1``, never
        terminating, respawning with probability 0.05 per step. ``"sparse"``: one ``+1``
        object at least half the grid's Manhattan diameter from the start, ending the episode.
        ``"long_horizon"``: a far ``+1`` object that ends the episode, a near ``+0.2`` object
        that also ends it (a myopic trap), and a ``-0.5`` object (no termination, respawn
        0.1) placed between them.
    height, width : int, default=5
        Grid size.
    random_state : int, RandomState instance or None, default=None
        Draws the start and object cells (and the dense rewards).
    observation : {"index", "features"}, default="index"
        Passed to :class:`GridWorld`.
    render_mode : {"ansi"} or None, default=None
        Passed to :class:`GridWorld` (``gymnasium.make`` passes it to every maker).

    Returns
    -------
    env : GridWorld
        ``max_steps = 4 * (height + width)``.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``height`` or ``width`` is not a positive int, or the grid is
        too small for the layout: ``"dense"`` needs ``height * width >= 5`` (the start and
        four objects), ``"sparse"`` ``height * width >= 2`` (the start and the goal),
        ``"long_horizon"`` ``height + width >= 6`` (a far goal at >= 0.6 of the Manhattan
        diameter, a trap within 2 steps of the start and a penalty between them; smaller
        grids cannot always place them).

    Examples
    --------
    >>> from sklearn_papers.rl import make_grid_world
    >>> make_grid_world("sparse", random_state=0).n_objects
    1
    """
    from sklearn_papers.utils._random import check_random_state

    if kind not in ("dense", "sparse", "long_horizon"):
        raise ValueError(f"kind must be 'dense', 'sparse' or 'long_horizon', got {kind!r}")
    _check_grid_size(kind, height, width)
    rng = check_random_state(random_state)
    cells = [(r, c) for r in range(height) for c in range(width)]
    while True:
        order = rng.permutation(len(cells))
        start = cells[order[0]]
        dist = np.array([abs(r - start[0]) + abs(c - start[1]) for r, c in cells])
        # a long-horizon layout needs a far goal: redraw a start too central to have one
        if kind != "long_horizon" or dist.max() >= (height + width - 2) * 0.6:
            break
    if kind == "dense":
        chosen = [cells[i] for i in order[1:5]]
        rewards = rng.uniform(-1, 1, size=len(chosen)).round(2)
        rewards[rng.randint(len(chosen))] = 1.0
        objects = [(r, c, float(w), 0.0, 0.05) for (r, c), w in zip(chosen, rewards)]
    elif kind == "sparse":
        far = [i for i in order[1:] if dist[i] >= (height + width - 2) / 2]
        r, c = cells[far[0]]
        objects = [(r, c, 1.0, 1.0, 0.0)]
    elif kind == "long_horizon":
        far = [i for i in order[1:] if dist[i] >= (height + width - 2) * 0.6]
        near = [i for i in order[1:] if 1 <= dist[i] <= 2]
        goal, trap = cells[far[0]], cells[near[0]]
        mid = [i for i in order[1:] if cells[i] not in (goal, trap)
               and 1 <= dist[i] < dist[far[0]]]
        bad = cells[mid[0]]
        objects = [(goal[0], goal[1], 1.0, 1.0, 0.0), (trap[0], trap[1], 0.2, 1.0, 0.0),
                   (bad[0], bad[1], -0.5, 0.0, 0.1)]
    else:
        raise ValueError(f"kind must be 'dense', 'sparse' or 'long_horizon', got {kind!r}")
    return GridWorld(height=height, width=width, objects=objects, start=start,
                     max_steps=4 * (height + width), observation=observation,
                     render_mode=render_mode)


def sample_grid_worlds(n, *, kinds=("dense", "sparse", "long_horizon"), height=5, width=5,
                       random_state=None, exclude=(), observation="index", render_mode=None):
    """Draw ``n`` distinct random grid worlds, e.g. a meta-training set or a held-out one.

    Parameters
    ----------
    n : int
        Number of environments.
    kinds : sequence of str, default=("dense", "sparse", "long_horizon")
        Layout kinds, cycled (see :func:`make_grid_world`).
    height, width : int, default=5
        Grid size.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.
    exclude : sequence of GridWorld, default=()
        Layouts not to repeat (pass the meta-training set to draw a held-out one).
    observation : {"index", "features"}, default="index"
        Passed to :class:`GridWorld`.
    render_mode : {"ansi"} or None, default=None
        Passed to :class:`GridWorld`.

    Returns
    -------
    envs : list of GridWorld
        No two share a layout (start and objects), and none equals one in ``exclude``.

    Raises
    ------
    ValueError
        If ``n`` is not an int >= 1, ``kinds`` is empty, the grid is too small for one of
        ``kinds`` (see :func:`make_grid_world`), or ``n`` distinct layouts could not be drawn.

    Examples
    --------
    >>> from sklearn_papers.rl import sample_grid_worlds
    >>> train = sample_grid_worlds(6, random_state=0)
    >>> test = sample_grid_worlds(3, random_state=1, exclude=train)
    >>> len(train), len(test)
    (6, 3)
    """
    from sklearn_papers.utils._random import check_random_state

    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise ValueError(f"n must be an int >= 1 (the number of grid worlds), got {n!r}")
    if isinstance(kinds, str) or len(kinds) == 0:
        raise ValueError(f"kinds must be a non-empty sequence of layout names, got {kinds!r}")
    for kind in kinds:
        if kind not in ("dense", "sparse", "long_horizon"):
            raise ValueError(f"kinds may hold 'dense', 'sparse' or 'long_horizon', got "
                             f"{kind!r}")
        _check_grid_size(kind, height, width)
    rng = check_random_state(random_state)
    seen = {(e.start, tuple(e.objects)) for e in exclude}
    envs = []
    for attempt in range(100 * n + 100):
        if len(envs) == n:
            break
        env = make_grid_world(kinds[len(envs) % len(kinds)], height=height, width=width,
                              random_state=rng, observation=observation,
                              render_mode=render_mode)
        key = (env.start, tuple(env.objects))
        if key not in seen:
            seen.add(key)
            envs.append(env)
    if len(envs) < n:
        raise ValueError(f"could not draw {n} distinct {height} x {width} grid worlds")
    return envs


# --------------------------------------------------------------------------- batched cores


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
        Environment ``i`` is reset with seed ``seed + i`` first; the ``k``-th environment
        put in a slot by :meth:`set_env` is reset with seed ``seed + n_envs + k``. Later
        resets within a slot are unseeded (they continue that environment's generator).
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
        self._seed = int(seed)
        self._n_set = 0
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
            self._shift(i, _reset_result(env.reset(seed=self._seed + i), self._where(i)),
                        "reset") for i, env in enumerate(self.envs)]

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
        seed = self._seed + self.n_envs + self._n_set
        self._n_set += 1
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
        return (self._stack(nxt), torch.as_tensor(rew, dtype=torch.float64),
                torch.as_tensor(term), torch.as_tensor(trunc))


def _step_result(out, where):
    """``(obs, reward, terminated, truncated)`` of gymnasium's 5-tuple, or a ``ValueError``."""
    if not isinstance(out, tuple) or len(out) != 5:
        n = len(out) if isinstance(out, tuple) else type(out).__name__
        raise ValueError(f"{where} returned {n} values from step(); gymnasium's API returns "
                         "(observation, reward, terminated, truncated, info). An environment "
                         "written for the old gym API (four values, one done flag) needs "
                         "porting, or shimmy's compatibility wrapper.")
    return out[:4]


def _reset_result(out, where):
    """The observation of gymnasium's ``(observation, info)``, or a ``ValueError``."""
    if not isinstance(out, tuple) or len(out) != 2:
        raise ValueError(f"{where} returned {out!r} from reset(); gymnasium's API returns "
                         "(observation, info). An environment written for the old gym API "
                         "(the observation alone) needs porting, or shimmy's compatibility "
                         "wrapper.")
    return out[0]


#: Largest reward magnitude accepted: the agents compute in float32 (largest 3.4e38), and a
#: discounted return sums up to ``1 / (1 - discount)`` rewards (1e4 at discount 0.9999).
MAX_ABS_REWARD = 1e30


def _finite_reward(r, where):
    try:
        reward = float(r)
    except (TypeError, ValueError):
        reward = None
    if reward is None or not np.isfinite(reward):
        raise ValueError(f"{where} returned the reward {r!r} from step(); rewards must be "
                         "finite numbers.")
    if abs(reward) > MAX_ABS_REWARD:
        raise ValueError(
            f"{where} returned the reward {reward:.3g} from step(); the agents compute in "
            f"float32 and accept rewards of magnitude up to {MAX_ABS_REWARD:.0e} (their "
            "returns, sums of many rewards, must stay finite). Scale the rewards down, e.g. "
            "gymnasium.wrappers.TransformReward(env, lambda r: r * 1e-30): the policy "
            "updates do not depend on the reward scale.")
    return reward


def _index_observation(space, obs, where, call):
    """``obs`` as an index in ``0 .. n - 1`` of a ``Discrete`` space, or a ``ValueError``.

    Accepts what ``space.contains`` accepts (a Python or numpy integer, or a 0-d integer
    array, in ``start .. start + n - 1``): a float such as 2.7 or a string such as "3" is
    not cast, since a lossy cast would turn a faulty environment into a plausible state.
    """
    if not space.contains(obs):
        low, high = int(space.start), int(space.start) + int(space.n) - 1
        raise ValueError(f"{where} returned the observation {obs!r} "
                         f"({type(obs).__name__}) from {call}(), outside its observation "
                         f"space {space}: a Discrete observation must be an integer (Python "
                         f"int, numpy integer or 0-d integer array) in {low} .. {high}. Fix "
                         "the environment's reset()/step(), or declare the space it "
                         "really has.")
    return int(obs) - int(space.start)


def _feature_observation(space, obs, obs_dim, where, call, warned=None):
    """``obs`` checked as a finite float vector of width ``obs_dim``, or a ``ValueError``.

    An observation outside the bounds of its ``Box`` space is used as it is, with a
    ``UserWarning`` naming ``where`` (once per ``where`` when a set ``warned`` is given),
    as gymnasium's own environment checker does: the agents do not read the bounds, but a
    space that does not hold the observations is a fault of the environment.
    """
    try:
        arr = np.asarray(obs, dtype=np.float32)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (obs_dim,) or not np.isfinite(arr).all():
        what = ("that is not numeric" if arr is None
                else f"of shape {arr.shape}" if arr.shape != (obs_dim,)
                else "with non-finite values")
        shown = np.asarray(obs, dtype=object).ravel()[:8].tolist()
        raise ValueError(f"{where} returned an observation {what} from {call}() "
                         f"({shown}...); its space is {space}.")
    if isinstance(space, spaces.Box) and (warned is None or where not in warned):
        low = np.broadcast_to(np.asarray(space.low, dtype=np.float64), arr.shape)
        high = np.broadcast_to(np.asarray(space.high, dtype=np.float64), arr.shape)
        outside = np.flatnonzero((arr < low) | (arr > high))
        if outside.size:
            j = int(outside[0])
            if warned is not None:
                warned.add(where)
            warnings.warn(
                f"{where} returned an observation from {call}() outside the bounds of its "
                f"observation space {space}: feature {j} is {float(arr[j]):.6g}, outside "
                f"[{low[j]:.6g}, {high[j]:.6g}] ({outside.size} feature(s) out of bounds). The "
                "agents use the values as they are; fix the environment's declared bounds "
                "(Box(low, high) holding every observation it returns, -inf/inf when "
                "unbounded) or clip its observations (gymnasium.wrappers."
                "TransformObservation(env, lambda o: numpy.clip(o, low, high), space)).",
                UserWarning, stacklevel=2)
    return obs


def _describe_spaces(n_actions, n_states, obs_dim):
    obs = (f"Discrete observations (up to {n_states} states)" if obs_dim is None
           else f"1-D Box observations of width {obs_dim}")
    return f"{n_actions} actions and {obs}"


def _check_fits(env, n_actions, n_states, obs_dim, where):
    """``ValueError`` unless ``env``'s spaces fit agents built for the given sizes."""
    space = env.observation_space
    fits = int(env.action_space.n) == n_actions and (
        (obs_dim is None and isinstance(space, spaces.Discrete) and int(space.n) <= n_states)
        or (obs_dim is not None and isinstance(space, spaces.Box)
            and space.shape == (obs_dim,)))
    if not fits:
        raise ValueError(
            f"{where} has action space {env.action_space} and observation space {space}; "
            f"the agents were built for {_describe_spaces(n_actions, n_states, obs_dim)}. "
            "The environments of one batch of agents need one action count and one "
            "observation kind and width (tables are sized by the largest Discrete space "
            "of a list; a sampler's first draws size them): make a sampler return "
            "environments of one size, or pass them as a list.")


def check_environment(env, index=0, name="environments", *, where=None):
    """Raise a clear error unless ``env`` is a gymnasium environment an agent can learn on
    (named ``where``, by default ``name[index]``)."""
    where = f"{name}[{index}]" if where is None else where
    if isinstance(env, type) and issubclass(env, gymnasium.Env):
        raise TypeError(f"{where} is the class {env.__name__}, not an environment; pass an "
                        f"instance, e.g. {env.__name__}()")
    if isinstance(env, str):
        raise TypeError(f"{where} is the string {env!r}, not an environment; pass "
                        f"gymnasium.make({env!r})")
    if not isinstance(env, gymnasium.Env):
        raise TypeError(f"{where} is a {type(env).__name__}, not a gymnasium.Env")
    if not isinstance(env.action_space, spaces.Discrete):
        raise ValueError(f"{where} has action space {env.action_space}; the agents need "
                         "gymnasium.spaces.Discrete actions")
    space = env.observation_space
    ok_box = isinstance(space, spaces.Box) and len(space.shape) == 1 and space.shape[0] > 0
    if not (isinstance(space, spaces.Discrete) or ok_box):
        raise ValueError(f"{where} has observation space {space}; the agents need Discrete "
                         "observations (tabular agent) or a 1-D Box (MLP agent). Flatten "
                         "other spaces first (e.g. gymnasium.wrappers.FlattenObservation).")


def _sub_environments(vec, name):
    """The sub-environments of a ``SyncVectorEnv`` (stepped one by one here)."""
    from gymnasium.vector import SyncVectorEnv, VectorWrapper

    if isinstance(vec, VectorWrapper):
        raise ValueError(
            f"{name} is a vector environment wrapped in {type(vec).__name__}; the agents "
            "step its sub-environments one by one, which would bypass that wrapper. Wrap "
            "each sub-environment instead (gymnasium.make_vec(..., wrappers=[...])) or pass "
            "a list of environments.")
    if not isinstance(vec, SyncVectorEnv):
        raise ValueError(
            f"{name} is a {type(vec).__name__}; the agents step the sub-environments of a "
            "gymnasium.vector.SyncVectorEnv one by one, and cannot reach those of other "
            "vector environments. Use gymnasium.make_vec(id, num_envs=n, "
            "vectorization_mode='sync') or a list [gymnasium.make(id) for _ in range(n)].")
    return list(vec.envs)


def environment_list(environments, name="environments"):
    """``environments`` as a list: one ``Env``, a sequence, or a ``SyncVectorEnv``'s
    sub-environments (error messages then name ``environments[i]`` by sub-environment)."""
    from gymnasium.vector import VectorEnv

    if isinstance(environments, VectorEnv):
        return _sub_environments(environments, name)
    if isinstance(environments, gymnasium.Env):
        return [environments]
    if isinstance(environments, (str, bytes, type)):
        hint = (f"; pass gymnasium.make({environments!r})" if isinstance(environments, str)
                else "")
        raise TypeError(f"{name} must be a gymnasium.Env, a list of them or a gymnasium "
                        f"vector environment, got {environments!r}{hint}")
    try:
        return list(environments)
    except TypeError:
        raise TypeError(f"{name} must be a gymnasium.Env, a list of them or a gymnasium "
                        f"vector environment, got {type(environments).__name__}") from None


def check_no_aliases(envs, name="environments"):
    """``ValueError`` if one environment object (or the ``unwrapped`` core of two
    wrappers) fills two places of ``envs``: it would be stepped as if it were two."""
    first = {}
    for i, env in enumerate(envs):
        k = first.setdefault(id(env.unwrapped), i)
        if k != i:
            same = ("is the same object as" if env is envs[k]
                    else "wraps the same environment as")
            raise ValueError(
                f"{name}[{i}] {same} {name}[{k}]; one environment object cannot be "
                "stepped by two agents (each would interrupt the other's episodes). Pass "
                f"separate environments, e.g. [gymnasium.make(id) for _ in range(n)] or "
                f"copy.deepcopy({name}[{k}]).")


def check_environments(environments, name="environments", *, one_batch=True,
                       allow_aliases=False):
    """Validate a non-empty list of environments; return the list.

    ``one_batch``: all share one action count and observation kind and width (one batch
    of agents). ``allow_aliases``: the same object may appear twice (the caller copies).
    """
    envs = environment_list(environments, name)
    if not envs:
        raise ValueError(f"{name} is empty")
    for i, env in enumerate(envs):
        check_environment(env, i, name)
    if not allow_aliases:
        check_no_aliases(envs, name)
    if not one_batch:
        return envs
    n_actions = envs[0].action_space.n
    kind0 = isinstance(envs[0].observation_space, spaces.Discrete)
    for i, env in enumerate(envs):
        if env.action_space.n != n_actions:
            raise ValueError(f"{name}[{i}] has {env.action_space.n} actions, {name}[0] has "
                             f"{n_actions}; one batch of agents needs one action count (pass "
                             "environments with one action count)")
        if isinstance(env.observation_space, spaces.Discrete) != kind0:
            raise ValueError(f"{name}[{i}] and {name}[0] mix Discrete and Box observations")
        if not kind0 and env.observation_space.shape != envs[0].observation_space.shape:
            raise ValueError(f"{name}[{i}] has observations of shape "
                             f"{env.observation_space.shape}, {name}[0] "
                             f"{envs[0].observation_space.shape}")
    return envs


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
