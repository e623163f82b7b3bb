"""Checks of the environments a user hands over: spaces, sizes, aliasing, and the values
their ``reset`` and ``step`` return, each error naming ``environments[i]`` and the fix."""

import warnings

import gymnasium
import numpy as np
from gymnasium import spaces


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
    if isinstance(r, (str, bytes, np.str_, np.bytes_)):
        # float("1") would read it as a number: a reward of the wrong type, taken silently
        raise TypeError(
            f"{where} returned the reward {r!r}, a {type(r).__name__}, from step(); "
            "rewards must be numbers (int or float). Return float(reward) from the "
            "environment's step(), or wrap it: gymnasium.wrappers.TransformReward(env, "
            "float).")
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
            "gymnasium.wrappers.TransformReward(env, lambda r: r * 1e-30). A2C with "
            "normalize_advantage=True (its default) updates its policy the same way at any "
            "reward scale; a learned rule (LearnedPolicyGradient) and A2C with "
            "normalize_advantage=False see the scaled rewards as they are, so scale them "
            "into the range the rule was meta-trained on (about -1 to 1 for the package's "
            "grid worlds).")
    return reward


def _index_observation(space, obs, where, call):
    """``obs`` as an index in ``0 .. n - 1`` of a ``Discrete`` space, or a ``ValueError``.

    Accepts what ``space.contains`` accepts (a Python or numpy integer, or a 0-d integer
    array, in ``start .. start + n - 1``): a float such as 2.7 or a string such as "3" is
    not cast, since a lossy cast would turn a faulty environment into a plausible state.
    """
    if type(obs) is int and 0 <= obs - space.start < space.n:  # the common case, quickly
        return obs - int(space.start)
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
                else f"; pass an instance, e.g. {environments.__name__}()"
                if isinstance(environments, type) and issubclass(environments, gymnasium.Env)
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
