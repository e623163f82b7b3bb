"""Probes of a :class:`~sklearn_papers.rl.LearnedPolicyGradient` rule: is its prediction
``y`` value-like (Oh et al. 2020, Section 5), and the rule at points of its meta-training.

:func:`_rule_probes` trains two agents per grid with the rule, rolls out their final
policies and probes ``y`` and a TD(lambda) value against the rollouts' Monte-Carlo values;
:func:`_rule_snapshots` keeps the rule after given meta-steps of a fit and
:func:`_with_rule` puts such a snapshot back.
"""

from contextlib import contextmanager

import numpy as np

from sklearn_papers.rl._value_probes import (
    monte_carlo_values,
    probe_spearman,
    retest_spearman,
)

__all__ = []


def _counted(n_steps):
    """Steps of a Monte-Carlo rollout whose visits count (the rest only feed returns)."""
    return n_steps - min(n_steps // 3, 700)


def _rollout_values(net, params, envs, n_steps, discounts, seed):
    """``({discount: (n_envs, n_states)}, visit counts, steps counted)``: the mean discounted
    returns of the visits of a long rollout of the final policies."""
    import torch

    from sklearn_papers.nn._lpg import rollout
    from sklearn_papers.rl import make_batch

    gen = torch.Generator().manual_seed(seed)
    core = make_batch(envs, generator=gen)
    traj = rollout(core, net, params, n_steps, gen)
    # a Monte-Carlo return ends with its episode, of either kind: there is no value to
    # bootstrap from after a time limit, so visits shortly before one count a shorter sum
    done = (traj["terminated"] | traj["truncated"]).numpy()
    out, counts = monte_carlo_values(traj["obs"].numpy(), traj["reward"].double().numpy(),
                                     done, core.n_states, discounts,
                                     n_counted=_counted(n_steps))
    return out, counts, _counted(n_steps)


def _rule_probes(est, envs, *, n_steps, discounts, discount, seed, frequent_rate=None):
    """Probes from ``y`` and from a TD(lambda) value of two agents per grid of ``envs``.

    ``est``: a fitted ``LearnedPolicyGradient``; ``n_steps``: length of the Monte-Carlo
    rollout of the final policies; ``discounts``: those of the true values; ``discount``:
    the training one; ``seed``: int. Returns ``{(kind, discount): (pooled, per_grid)}``
    (:func:`~._value_probes.probe_spearman`; ``kind`` "y" or "td"). With
    ``frequent_rate`` (visits per counted step), the TD value is probed at ``discount``
    only, and the result also holds ``"returns"`` (the agents' lifetime returns),
    ``"cells"`` (mean cells estimated per agent), ``("retest", discount)`` (agreement of
    two rollouts) and ``("y frequent", discount)`` (cells visited at least that often).
    """
    from sklearn_papers.nn._skorch import torch_seeded

    extras = frequent_rate is not None
    n = len(envs)
    twice = list(envs) + list(envs)            # agents i and i + n live in grid i
    with torch_seeded(seed):
        net, params, returns, value_w = est._run_lifetimes(twice, est.lifetime, seed)
        mc, counts, counted = _rollout_values(net, params, twice, n_steps, discounts,
                                              seed + 1)
        if extras:
            mc2 = _rollout_values(net, params, twice, n_steps, discounts, seed + 2)[0]
    y = params["y"].double().numpy()           # (2n, n_states, m)
    td = value_w.double().numpy()[..., None]   # (2n, n_states, 1)

    def spearman(features, target, cells):
        rows = np.nonzero(cells)[0]
        return probe_spearman(features[cells], target[cells], rows % n, rows // n)

    res = {}
    for g, vals in mc.items():
        mask = ~np.isnan(vals)
        res[("y", g)] = spearman(y, vals, mask)
        if extras and g != discount:
            continue
        res[("td", g)] = spearman(td, vals, mask)
        if extras:
            res[("retest", g)] = retest_spearman(vals, mc2[g])
            frequent = mask & (counts / counted >= frequent_rate)
            res[("y frequent", g)] = (res[("y", g)] if np.array_equal(frequent, mask)
                                      else spearman(y, vals, frequent))
    if extras:
        res["returns"] = np.asarray(returns, dtype=float)
        res["cells"] = float(np.mean((~np.isnan(mc[discount])).sum(1)))
    return res


@contextmanager
def _rule_snapshots(steps, out):
    """Keep in ``out[k]`` the parameters of the (one) optimizer after its ``k``-th step, for
    ``k`` in ``steps``: in a fit, the rule after ``k`` meta-steps."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    seen = {}

    def hook(optimizer, args, kwargs):
        seen[id(optimizer)] = n = seen.get(id(optimizer), 0) + 1
        if n in steps:
            out[n] = [p.detach().numpy().copy() for group in optimizer.param_groups
                      for p in group["params"]]

    handle = register_optimizer_step_post_hook(hook)
    try:
        yield out
    finally:
        handle.remove()
    if len(seen) > 1:
        raise RuntimeError(f"{len(seen)} optimizers stepped during the snapshots; the rule's "
                           f"snapshots would mix their parameters")


def _with_rule(est, params):
    """A copy of ``est`` whose rule has the snapshot ``params`` (None: untrained)."""
    import torch

    out = est.untrained()
    if params is not None:
        rule = list(out.module_.parameters())
        if len(rule) != len(params):
            raise ValueError(f"a snapshot of {len(params)} tensors for a rule of {len(rule)}")
        with torch.no_grad():
            for p, value in zip(rule, params):
                p.copy_(torch.as_tensor(value))
    return out
