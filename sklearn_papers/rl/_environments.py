"""Tabular grid worlds and delayed-chain MDPs (after Oh et al. 2020) behind gymnasium's API.

:class:`GridWorld` and :class:`DelayedChain` are ``gymnasium.Env`` subclasses written as a
plain one-environment reference (numpy, one step at a time); :func:`make_grid_world` and
:func:`sample_grid_worlds` draw them. Their batched counterparts, which step many copies
in one tensor operation, are in :mod:`sklearn_papers.rl._batched`.
"""

from numbers import Integral

import gymnasium
import numpy as np
from gymnasium import spaces

__all__ = ["DelayedChain", "GridWorld", "make_grid_world", "sample_grid_worlds"]

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
