"""Tabular agents' per-step path in numpy: acting, TD(lambda) returns and A2C's update.

A tabular agent's policy is a row lookup, so its rollout needs no torch call per step:
:func:`rollout_np` samples actions with numpy, and for :class:`~sklearn_papers.rl.A2C`
:func:`a2c_update_np` applies the update of
:func:`sklearn_papers.nn._lpg.agent_update` (with the targets of
:func:`~sklearn_papers.nn._lpg.a2c_targets`) to the tables directly: the gradient of a
table entry is the sum of its visits' output gradients.
"""

import numpy as np
import torch

__all__ = []


def rollout_np(core, logits, length, rng):
    """Run every agent ``length`` steps with actions sampled from ``softmax(logits[obs])``.

    Parameters
    ----------
    core : batched core
        ``obs_np`` and ``step_np`` of :mod:`sklearn_papers.rl._batched`.
    logits : ndarray of shape (B, S, A)
        The agents' logit tables.
    length : int
        Steps.
    rng : numpy.random.Generator
        Source of the action uniforms.

    Returns
    -------
    traj : dict of ndarray
        ``obs``, ``actions``, ``next_obs`` (int64, (B, T)), ``reward`` (float64, (B, T)),
        ``terminated``, ``truncated`` (bool, (B, T); ``truncated`` excludes terminated).

    Raises
    ------
    FloatingPointError
        If a policy is not finite (the agents' parameters diverged).
    """
    B = logits.shape[0]
    rows = np.arange(B)
    obs = np.empty((B, length), dtype=np.int64)
    nxt = np.empty((B, length), dtype=np.int64)
    act = np.empty((B, length), dtype=np.int64)
    rew = np.empty((B, length), dtype=np.float64)
    term = np.empty((B, length), dtype=bool)
    trunc = np.empty((B, length), dtype=bool)
    if not np.isfinite(logits).all():  # finite logits give a finite policy
        raise FloatingPointError("the agents' policy became non-finite (their parameters "
                                 "diverged); lower the agent's learning rate")
    uniforms = rng.random((length, B, 1))
    last = logits.shape[2] - 1
    for t in range(length):
        o = core.obs_np
        z = logits[rows, o].astype(np.float64)
        cdf = np.cumsum(np.exp(z - z.max(1, keepdims=True)), 1)
        a = np.minimum((cdf < uniforms[t] * cdf[:, -1:]).sum(1), last)
        o2, r, te, tr = core.step_np(a)
        obs[:, t], act[:, t], nxt[:, t], rew[:, t] = o, a, o2, r
        term[:, t], trunc[:, t] = te, tr & ~te
    return {"obs": obs, "actions": act, "reward": rew, "terminated": term,
            "truncated": trunc, "next_obs": nxt}


def to_torch(traj, dtype):
    """The trajectory as the tensors of :func:`sklearn_papers.nn._lpg.rollout`."""
    out = {k: torch.from_numpy(v) for k, v in traj.items()}
    out["reward"] = out["reward"].to(dtype)
    return out


def lambda_returns_np(reward, terminated, truncated, next_values, discount, lam):
    """:func:`sklearn_papers.nn._lpg.lambda_returns` in numpy (all arrays (B, T))."""
    g = discount * (1.0 - terminated)
    lam_t = lam * (1.0 - truncated)
    out = np.empty_like(reward)
    nxt = next_values[:, -1]
    for t in range(reward.shape[1] - 1, -1, -1):
        nxt = reward[:, t] + g[:, t] * ((1 - lam_t[:, t]) * next_values[:, t]
                                        + lam_t[:, t] * nxt)
        out[:, t] = nxt
    return out


def _visits(obs, n_states):
    """Every step's state visit count in its agent's rollout, (B, T)."""
    B = obs.shape[0]
    flat = obs + n_states * np.arange(B)[:, None]
    counts = np.bincount(flat.ravel(), minlength=B * n_states)
    return counts[flat].astype(np.float64)


def value_update_np(w, traj, discount, lam, lr):
    """:func:`sklearn_papers.nn._lpg.value_update` of tabular values ``w`` (B, S), in place."""
    rows = np.arange(w.shape[0])[:, None]
    v, v2 = w[rows, traj["obs"]], w[rows, traj["next_obs"]]
    target = lambda_returns_np(traj["reward"], traj["terminated"], traj["truncated"],
                               v2.astype(np.float64), discount, lam)
    np.add.at(w, (np.broadcast_to(rows, traj["obs"].shape), traj["obs"]),
              (lr * (target - v)).astype(w.dtype))


def a2c_update_np(logits, y, traj, *, lr, y_weight, entropy_cost, discount, lam,
                  normalize_advantage):
    """One A2C update of tabular agents, in place.

    The targets of :func:`~sklearn_papers.nn._lpg.a2c_targets` (advantages standardized
    per agent with ``normalize_advantage``) and the step of
    :func:`~sklearn_papers.nn._lpg.agent_update`: every visited entry moves by ``lr``
    times the mean gradient of its visits.

    Parameters
    ----------
    logits : ndarray of shape (B, S, A)
    y : ndarray of shape (B, S, 1)
        Value tables.
    traj : dict of ndarray
        From :func:`rollout_np`.
    lr, y_weight, entropy_cost, discount, lam : float
    normalize_advantage : bool
    """
    B, S, A = logits.shape
    rows = np.broadcast_to(np.arange(B)[:, None], traj["obs"].shape)
    obs, actions = traj["obs"], traj["actions"]
    values = y[rows, obs, 0].astype(np.float64)
    next_values = y[rows, traj["next_obs"], 0].astype(np.float64)
    ret = lambda_returns_np(traj["reward"], traj["terminated"], traj["truncated"],
                            next_values, discount, lam)
    adv = ret - values
    if normalize_advantage:
        adv = adv - adv.mean(1, keepdims=True)
        adv = adv / (np.sqrt((adv ** 2).mean(1, keepdims=True)) + 1e-8)
    n = _visits(obs, S)[..., None]
    z = logits[rows, obs].astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    probs = np.exp(logp)
    onehot = np.zeros_like(probs)
    np.put_along_axis(onehot, actions[..., None], 1.0, -1)
    g_logits = -adv[..., None] * (onehot - probs)
    if entropy_cost:
        h = -(probs * logp).sum(-1, keepdims=True)
        g_logits += entropy_cost * probs * (logp + h)
    g_y = y_weight * (values - ret)[..., None]
    np.add.at(logits, (rows, obs), (-lr * g_logits / n).astype(logits.dtype))
    np.add.at(y, (rows, obs), (-lr * g_y / n).astype(y.dtype))
