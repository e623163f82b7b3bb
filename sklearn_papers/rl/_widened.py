"""A widened distribution of grid worlds for meta-training a learned update rule.

Oh et al. (2020) meta-train LPG on grid worlds and delayed chains of varied rewards,
lengths and dynamics, and find that the rule carries to Atari games it never saw. A rule
meta-trained on one kind of grid world learns that kind's habits (every episode that ends
ends with a reward, say); :func:`widened_grid_world` draws from a wider family, so that a
rule meets reward units and signs, episode lengths, slipperiness and terminal hazards it
must not take for granted.
"""

from numbers import Real

import gymnasium
import numpy as np

from sklearn_papers.rl._environments import GridWorld, make_grid_world
from sklearn_papers.utils._random import check_random_state

__all__ = ["LAKE_SLIPS", "SlipperyActions", "widened_grid_world"]

#: A lake's slipperiness, one drawn uniformly per lake: ``(p, sideways)`` of
#: :class:`SlipperyActions`.
LAKE_SLIPS = ((0.0, False), (0.0, False), (0.1, False), (0.33, False))


class SlipperyActions(gymnasium.ActionWrapper):
    """An environment whose actions slip with probability ``p``.

    A slipping action is replaced by a uniformly random one or, with ``sideways``, by one
    of the two moves at right angles to it, as on an icy lake where a step slides to
    either side but never back (gymnasium's slippery ``FrozenLake`` is ``p=2/3``
    sideways). The draws come from the environment's own generator (``np_random``, seeded
    by ``reset(seed=...)``). Used by :func:`widened_grid_world`, after the varied
    dynamics of Oh et al. (2020)'s meta-training environments.

    Parameters
    ----------
    env : gymnasium.Env
        With a ``Discrete`` action space; with ``sideways``, the grid worlds' actions
        (0 up, 1 down, 2 left, 3 right).
    p : float
        Probability that an action slips, in [0, 1].
    sideways : bool, default=False
        Slip to a move at right angles instead of to any action.

    Raises
    ------
    ValueError
        If ``p`` is not a number in [0, 1], ``sideways`` is not a bool, the action space
        is not ``Discrete``, or ``sideways`` is asked of an action space other than
        ``Discrete(4)``.

    References
    ----------
    Oh, J., Hessel, M., Czarnecki, W. M., Xu, Z., van Hasselt, H., Singh, S. and Silver, D.
    (2020). Discovering Reinforcement Learning Algorithms. NeurIPS 33.

    Examples
    --------
    >>> from sklearn_papers.rl import GridWorld, SlipperyActions
    >>> env = SlipperyActions(GridWorld(), 2 / 3, sideways=True)
    >>> _ = env.reset(seed=0)
    >>> sorted({env.action(3) for _ in range(100)})
    [0, 1, 3]
    """

    def __init__(self, env, p, sideways=False):
        super().__init__(env)
        if not isinstance(env.action_space, gymnasium.spaces.Discrete):
            raise ValueError(f"SlipperyActions needs a Discrete action space, got "
                             f"{env.action_space}.")
        if not _is_probability(p):
            raise ValueError(f"p must be a probability in [0, 1], got {p!r}.")
        if not isinstance(sideways, (bool, np.bool_)):
            raise ValueError(f"sideways must be True or False, got {sideways!r}.")
        if sideways and env.action_space.n != 4:
            raise ValueError(f"sideways slips need the grid moves up, down, left, right "
                             f"(Discrete(4)), got {env.action_space}.")
        self.p, self.sideways = float(p), bool(sideways)

    def action(self, action):
        if self.np_random.random() < self.p:
            start = int(self.action_space.start)  # Discrete(n, start=s): actions s .. s+n-1
            if self.sideways:
                side = (2, 3) if action - start in (0, 1) else (0, 1)
                return start + int(side[self.np_random.integers(2)])
            return start + int(self.np_random.integers(self.action_space.n))
        return action


def _is_probability(p):
    """Whether ``p`` is a real number (not a bool or a string) in [0, 1]."""
    return (isinstance(p, Real) and not isinstance(p, (bool, np.bool_))
            and 0.0 <= float(p) <= 1.0)


class _Affine:
    """The reward map ``r -> scale * r + offset`` (a picklable ``TransformReward`` function)."""

    def __init__(self, scale, offset):
        self.scale, self.offset = scale, offset

    def __call__(self, reward):
        return self.scale * reward + self.offset


def _path_exists(height, width, start, goal, blocked):
    """Whether ``goal`` can be reached from ``start`` on the grid avoiding ``blocked`` cells."""
    seen, todo = {start}, [start]
    while todo:
        r, c = todo.pop()
        if (r, c) == goal:
            return True
        for nxt in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if (0 <= nxt[0] < height and 0 <= nxt[1] < width and nxt not in seen
                    and nxt not in blocked):
                seen.add(nxt)
                todo.append(nxt)
    return False


def _lake(rng, height=5, width=5):
    """A lake: a start, a +1 goal at least half the grid's diameter away that ends the
    episode, and 1 to 5 holes that end it with a reward of 0 (two times in three) or -1,
    placed so that a path from the start to the goal avoids them: ``(start, objects)``."""
    cells = [(r, c) for r in range(height) for c in range(width)]
    while True:
        order = rng.permutation(len(cells))
        start, goal = cells[order[0]], cells[order[1]]
        if abs(start[0] - goal[0]) + abs(start[1] - goal[1]) < (height + width - 2) / 2:
            continue
        holes = [cells[i] for i in order[2:2 + rng.randint(1, height * width // 4)]]
        if _path_exists(height, width, start, goal, set(holes)):
            break
    hole = float(rng.choice([0.0, 0.0, -1.0]))
    return start, [(goal[0], goal[1], 1.0, 1.0, 0.0)] + [(r, c, hole, 1.0, 0.0)
                                                         for r, c in holes]


def _check_lake_slips(lake_slips):
    if isinstance(lake_slips, (str, bytes)):
        raise ValueError(f"lake_slips must be a non-empty sequence of (p, sideways) pairs, "
                         f"got {lake_slips!r}.")
    try:
        pairs = [tuple(pair) for pair in lake_slips]
    except TypeError:
        pairs = None
    if pairs is None or not all(len(pair) == 2 for pair in pairs):
        raise ValueError(f"lake_slips must be a non-empty sequence of (p, sideways) pairs, "
                         f"got {lake_slips!r}.")
    if not pairs or not all(_is_probability(p) for p, _ in pairs):
        raise ValueError(f"lake_slips must be a non-empty sequence of (p, sideways) pairs "
                         f"with p in [0, 1], got {lake_slips!r}.")
    for i, (_, sideways) in enumerate(pairs):
        if not isinstance(sideways, (bool, np.bool_)):
            # bool("False") is True: a string or a number would pick the slip silently
            raise ValueError(f"lake_slips[{i}] has sideways={sideways!r}; it must be True "
                             "(slip to a move at right angles) or False (to any action).")
    return tuple((float(p), bool(s)) for p, s in pairs)


def widened_grid_world(random_state=None, *, lake_slips=None):
    """Draw one environment of the widened meta-training distribution.

    A sampler for :meth:`LearnedPolicyGradient.fit` (``fit(widened_grid_world)``: every
    new agent lifetime draws one with the estimator's generator). A 5 x 5 grid world
    (:class:`GridWorld`, 4 actions, ``Discrete(25)`` observations), one of two families
    with probability 1/2 each:

    - a *lake*: a start, a +1 goal at least half the grid's diameter away that ends the
      episode, and 1 to 5 holes placed off some path to the goal that end the episode
      with a reward of 0 (two times in three) or -1; episodes cut at 20, 40, 80 or 150
      steps; rewards multiplied by 0.1, 1, 10 or 100; the slipperiness of
      ``lake_slips``;
    - one of :func:`make_grid_world`'s layouts (dense, sparse, long horizon); episodes
      cut at 10 to 150 steps; rewards multiplied by 0.1, 1, 10 or 100 and negated a
      quarter of the time, plus a per-step reward of 0, -0.01 or -0.05 times that scale;
      actions slipping to a random one with probability 0, 0.1, 0.33 or 0.66.

    The widening follows Oh et al. (2020), who vary rewards, lengths and dynamics in the
    meta-training set: a rule meta-trained on grid worlds whose episodes always end with
    a reward learns that ending an episode is good, and one that never met a reward of
    -100 does not know what to make of it (with ``reward_scaling="max_abs"`` it sees
    every unit alike).

    Parameters
    ----------
    random_state : int, RandomState instance or None, default=None
        The generator of the draw (a sampler receives the estimator's).
    lake_slips : sequence of (float, bool) or None, default=None
        ``(p, sideways)`` pairs of :class:`SlipperyActions`, one drawn uniformly for every
        lake. None: ``((0, False), (0, False), (0.1, False), (0.33, False))``, no slip
        half the time, else random actions with probability 0.1 or 0.33. ``(2 / 3, True)`` is slippery FrozenLake's own
        dynamics; bind the value with ``functools.partial`` to make a sampler.

    Returns
    -------
    env : gymnasium.Env
        A :class:`GridWorld` under gymnasium's ``TransformReward`` (and
        :class:`SlipperyActions` when it slips).

    Raises
    ------
    ValueError
        If ``lake_slips`` is not a non-empty sequence of ``(p, sideways)`` pairs with
        ``p`` a number in [0, 1] and ``sideways`` a bool.

    References
    ----------
    Oh, J., Hessel, M., Czarnecki, W. M., Xu, Z., van Hasselt, H., Singh, S. and Silver, D.
    (2020). Discovering Reinforcement Learning Algorithms. NeurIPS 33.

    Examples
    --------
    >>> from sklearn_papers.rl import widened_grid_world
    >>> env = widened_grid_world(random_state=0)
    >>> env.observation_space, env.action_space
    (Discrete(25), Discrete(4))
    """
    from gymnasium.wrappers import TransformReward

    slips = LAKE_SLIPS if lake_slips is None else _check_lake_slips(lake_slips)
    rng = check_random_state(random_state)
    if rng.rand() < 0.5:
        start, objects = _lake(rng)
        env = GridWorld(height=5, width=5, objects=objects, start=start,
                        max_steps=int(rng.choice([20, 40, 80, 150])))
        env = TransformReward(env, _Affine(float(rng.choice([0.1, 1.0, 10.0, 100.0])), 0.0))
        p, sideways = slips[rng.choice(len(slips))]
        return SlipperyActions(env, p, sideways) if p else env
    base = make_grid_world(("dense", "sparse", "long_horizon")[rng.randint(3)],
                           random_state=rng)
    env = GridWorld(height=5, width=5, objects=base.objects, start=base.start,
                    max_steps=int(rng.choice([10, 20, 40, 80, 150])))
    scale = float(rng.choice([0.1, 1.0, 10.0, 100.0])) * (1.0 if rng.rand() < 0.75 else -1.0)
    offset = float(rng.choice([0.0, 0.0, -0.01, -0.05])) * abs(scale)
    env = TransformReward(env, _Affine(scale, offset))
    p = float(rng.choice([0.0, 0.0, 0.1, 0.33, 0.66]))
    return SlipperyActions(env, p) if p else env
