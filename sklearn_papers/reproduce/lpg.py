"""Oh et al. (2020), Learned Policy Gradient: a meta-learned update rule on tabular grid worlds.

Claims checked at our scale (Oh et al. 2020, experiments on tabular grid worlds):

1. A rule meta-trained on a distribution of small grid worlds trains agents on held-out grids
   about as well as A2C with a tuned learning rate (target: LPG's mean lifetime return at
   least 80 % of A2C's), and better than an untrained rule and than the ablation without
   the prediction vector ``y``.
2. ``y`` becomes value-like: a linear probe from ``y(s)`` to the true discounted value of
   the agent's final policy reaches a Spearman correlation of at least 0.7 at the training
   discount 0.99. The verdict uses one probe per grid (fit on one agent, scored on a second
   agent trained on the same grid), as the paper analyses ``y`` within one environment; one
   probe for all grids (*pooled*, cross-validated by grid, a stricter test) is reported
   beside it.
3. ``y`` carries values for discounts other than the one the rule was trained with (0.99),
   where a TD(lambda) value learned beside the agent at 0.99 does not: at the other
   discounts the per-grid probe from ``y`` beats the TD value's, whose probe is lower there
   than at 0.99 (the pooled probes are reported too).

Environments: ``sample_grid_worlds`` (dense, sparse and long-horizon reward layouts) on a
5 x 5 grid for meta-training, a disjoint held-out set of the same size, and larger 7 x 7
grids. True values are Monte-Carlo averages of discounted returns from each visited cell
under the final policy (a long rollout without updates).

The follow-up ``lpg_followup``, an experiment of its own (claim 2 met the target in the
quick run, 600 meta-steps, but not in the full one, 1500): the rule of each LPG run is snapshotted during its meta-training (0, 150, 300, 600,
1000 meta-steps and the end; copies taken after the rule's optimizer steps, so the fit and
the cached parts are unchanged) and each snapshot goes through the same probe, together
with three candidate causes: the return of the agents it trains (does y's value-likeness
fall while returns rise?), the probe on often-visited cells only (the full protocol's
longer Monte-Carlo rollouts also count rarely visited cells), and the retest reliability of
the Monte-Carlo target (how far its noise caps any probe). New cached parts
(``LPG checkpoints/seed=S``); the LPG runs are ``lpg``'s parts (read from the same run when
it ran them); for LPG parts without the snapshots, the meta-training is re-run
(deterministic) to take them.

Whether the learned rule generalizes to environments nobody here wrote (gymnasium's
FrozenLake, CliffWalking and Taxi) is the experiment ``lpg_stock``
(:mod:`sklearn_papers.reproduce.lpg_stock`).
"""

import time
from contextlib import contextmanager

import numpy as np

from sklearn_papers.reproduce._claims import HOLDS, Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import (
    Protocol,
    in_one_torch_thread,
    one_torch_thread,
    save_figure,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP"]

#: ``{how}``: ``"per grid"`` (the verdicts of claims 2 and 3) or ``"pooled"`` (reported
#: beside them).
CLAIMS = declare(
    Claim("LPG reaches 80 % of A2C's return on the held-out grids", "", "paired interval",
          key="share", arms=("LPG", "A2C (tuned lr)")),
    Claim("LPG beats the untrained rule", "", "paired interval", key="untrained",
          arms=("LPG", "untrained rule")),
    Claim("LPG beats the ablation without y", "", "paired interval", key="no_y",
          arms=("LPG", "LPG without y")),
    Claim("{how}: y is value-like at the training discount (Spearman >= 0.7)", "",
          "mean interval", threshold=0.7, key="value_like", arms=("y(s)",)),
    Claim("{how}: y's probe higher than the TD value's at other discounts", "",
          "paired interval", key="y_beats", arms=("y(s)", "TD")),
    Claim("{how}: the TD value's probe higher at its own discount than at the others", "",
          "paired interval", key="td_drops", arms=("TD at 0.99", "TD")),
    Claim("{how}: y carries values at other discounts where the TD(lambda) value does not",
          "", "all of", key="other_discounts", arms=("y(s)", "TD(lambda) value")),
)

#: The follow-up's claim, read in its sentences (no verdict record).
CLAIMS_FOLLOWUP = declare(
    Claim("y's probe falls after its peak", "", "paired interval", key="falls"),
)

#: The follow-up (checkpoints along meta-training) runs in full mode only.
PROTOCOL = Protocol(
    full=dict(seeds=3, meta_steps=1500, n_train=48, n_test=24, n_large=12, lifetime=100,
              n_agents=64, mc_steps=6000, n_jobs=2),
    quick=dict(seeds=2, meta_steps=600, n_train=24, n_test=12, n_large=6, n_agents=32,
               mc_steps=2500),
    shortened="{meta_steps} meta-steps (the full run: 1500) with {n_agents} agents (64), "
              "{n_train} meta-training grids (48), {seeds} seeds (3); the paper meta-trains "
              "for billions of steps with a 256-unit LSTM and prediction size 30 (ours: 32 "
              "units, 8).",
)

_TRAIN_DISCOUNT = 0.99
_PROBE_DISCOUNTS = (0.5, 0.8, 0.9, 0.99)
_A2C_LRS = (1.0, 2.0, 3.0, 4.0)
_FOLLOWUP_HEADING = "Follow-up: y's value-likeness along meta-training"


def _mean(values):
    """Mean of the finite values (NaN, without a warning, when there are none)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else float("nan")


def _monte_carlo_values(net, params, envs, n_steps, discounts, seed, return_counts=False):
    """Per (env, cell): mean discounted return from the visits of a long rollout of the fixed
    final policies; the last ``burn`` steps only feed the returns of earlier visits.

    ``{discount: (n_envs, n_states)}`` (NaN where a cell has fewer than 5 visits); with
    ``return_counts``, also the visit counts ``(n_envs, n_states)`` and the number of steps
    they were counted over."""
    import torch

    from sklearn_papers.nn._lpg import rollout
    from sklearn_papers.rl import make_batch

    gen = torch.Generator().manual_seed(seed)
    core = make_batch(envs, generator=gen)
    traj = rollout(core, net, params, n_steps, gen)
    obs = traj["obs"].numpy()
    reward = traj["reward"].double().numpy()
    # a Monte-Carlo return ends with its episode, of either kind: there is no value to
    # bootstrap from after a time limit, so visits shortly before one count a shorter sum
    done = (traj["terminated"] | traj["truncated"]).numpy()
    burn = min(n_steps // 3, 700)
    out = {}
    for g in discounts:
        ret = np.zeros_like(reward)
        nxt = np.zeros(reward.shape[0])
        for t in range(reward.shape[1] - 1, -1, -1):
            nxt = reward[:, t] + g * (1 - done[:, t]) * nxt
            ret[:, t] = nxt
        vals = np.full((len(envs), core.n_states), np.nan)
        counts = np.zeros((len(envs), core.n_states))
        for b in range(len(envs)):
            o, r = obs[b, :-burn], ret[b, :-burn]
            sums = np.bincount(o, weights=r, minlength=core.n_states)
            counts[b] = np.bincount(o, minlength=core.n_states)
            seen = counts[b] >= 5
            vals[b, seen] = sums[seen] / counts[b, seen]
        out[g] = vals
    if return_counts:
        return out, counts, n_steps - burn
    return out


def _probe_spearman(features, target, groups, agents=None):
    """Spearman correlations of ridge probes, always scored on data they were not fit on.

    Returns ``(pooled, per_grid)``. *pooled*: one probe for every grid, cross-validated by
    grid (``GroupKFold`` over ``groups``), correlation over all (grid, cell) pairs: ``y``
    must carry the value's level consistently across grids. *per grid*: with two agents per
    grid (``agents`` in {0, 1}), a probe fit on one agent's cells predicts the other's,
    correlation among that agent's cells, averaged over both directions and the grids
    (NaN when ``agents`` is None).
    """
    from scipy.stats import spearmanr
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def probe():
        return make_pipeline(StandardScaler(), RidgeCV(np.logspace(-3, 3, 13)))

    n_splits = min(4, len(np.unique(groups)))
    pred = (cross_val_predict(probe(), features, target, groups=groups,
                              cv=GroupKFold(n_splits)) if n_splits >= 2 else None)
    per_grid = []
    for g in np.unique(groups) if agents is not None else ():
        for a in (0, 1):
            fit_on = (groups == g) & (agents == a)
            test_on = (groups == g) & (agents == 1 - a)
            if fit_on.sum() < 3 or test_on.sum() < 3 or np.ptp(target[test_on]) == 0:
                continue
            p = probe().fit(features[fit_on], target[fit_on]).predict(features[test_on])
            per_grid.append(spearmanr(p, target[test_on]).statistic if np.ptp(p) > 0
                            else 0.0)
    return (float(spearmanr(pred, target).statistic) if pred is not None else float("nan"),
            float(np.mean(per_grid)) if per_grid else float("nan"))


def _probe(est, envs, cfg, seed, extras=False):
    """Train two LPG agents per grid of ``envs``; Spearman of probes from y and from a
    TD(lambda) value to the Monte-Carlo values at each discount:
    ``{(kind, discount): (pooled, per_grid)}``.

    With ``extras`` (the follow-up's measures, computed after the others, which they leave
    unchanged; the TD probe only at 0.99), also: ``"returns"``, the agents' lifetime returns; ``"cells"``, the mean
    number of cells per agent that the probes score; ``("retest", discount)``, the
    Spearman correlation between these Monte-Carlo values and a second, independent
    estimate (another rollout of the same final policies), over all (agent, cell) pairs and
    per agent, averaged: how reproducibly the target itself ranks the cells;
    ``("y frequent", discount)``: the y probes on the cells whose visit share reaches the
    quick protocol's count (5 visits in its counted steps).
    """
    from sklearn_papers.nn._skorch import torch_seeded

    n = len(envs)
    twice = list(envs) + list(envs)            # agents i and i + n live in grid i
    with torch_seeded(seed):
        net, params, returns, value_w = est._run_lifetimes(twice, est.lifetime, seed)
        mc, counts, counted = _monte_carlo_values(
            net, params, twice, cfg["mc_steps"], _PROBE_DISCOUNTS, seed + 1,
            return_counts=True)
        if extras:
            mc2 = _monte_carlo_values(net, params, twice, cfg["mc_steps"],
                                      _PROBE_DISCOUNTS, seed + 2)
    y = params["y"].double().numpy()           # (2n, n_states, m)
    td = value_w.double().numpy()              # (2n, n_states)
    res = {}
    for g, vals in mc.items():
        mask = ~np.isnan(vals)
        rows = np.nonzero(mask)[0]
        groups, agents = rows % n, rows // n
        target = vals[mask]
        res[("y", g)] = _probe_spearman(y[mask], target, groups, agents)
        if extras and g != _TRAIN_DISCOUNT:    # the follow-up reports TD at 0.99 only
            continue
        res[("td", g)] = _probe_spearman(td[mask][:, None], target, groups, agents)
        if not extras:
            continue
        res[("retest", g)] = _retest_spearman(vals, mc2[g])
        quick = PROTOCOL.settings(True)
        quick_counted = quick["mc_steps"] - min(quick["mc_steps"] // 3, 700)
        frequent = mask & (counts / counted >= 5 / quick_counted)
        rows = np.nonzero(frequent)[0]
        res[("y frequent", g)] = (res[("y", g)] if np.array_equal(frequent, mask) else
                                  _probe_spearman(y[frequent], vals[frequent], rows % n,
                                                  rows // n))
    if extras:
        res["returns"] = np.asarray(returns, dtype=float)
        res["cells"] = float(np.mean((~np.isnan(mc[_TRAIN_DISCOUNT])).sum(1)))
    return res


def _retest_spearman(first, second):
    """``(pooled, per_agent)`` Spearman correlations between two ``(n_agents, n_states)``
    Monte-Carlo estimates of the same values, on the cells both estimated (NaN elsewhere):
    over all (agent, cell) pairs, and per agent averaged over the agents."""
    from scipy.stats import spearmanr

    both = ~np.isnan(first) & ~np.isnan(second)
    per_agent = [spearmanr(a[m], b[m]).statistic for a, b, m in zip(first, second, both)
                 if m.sum() >= 3 and np.ptp(a[m]) > 0 and np.ptp(b[m]) > 0]
    pooled = (float(spearmanr(first[both], second[both]).statistic)
              if both.sum() >= 3 else float("nan"))
    return pooled, _mean(per_agent)


def _plot_returns(out, filename, table, names):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4))
    sets = list(table)
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        means = [np.mean(table[s][name]) for s in sets]
        stds = [np.std(table[s][name]) for s in sets]
        ax.bar(np.arange(len(sets)) + j * width, means, width, yerr=stds, capsize=3,
               label=name)
    ax.set_xticks(np.arange(len(sets)) + 0.4 - width / 2, sets)
    ax.set_ylabel("mean lifetime return (sum of rewards)")
    ax.set_title("Agents trained by each update rule (mean ± std over meta-training seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out, filename, dpi=90)


def _plot_curves(out, filename, curves, probes):
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for label, runs in curves.items():
        for i, tr in enumerate(runs):
            if len(tr) >= 8:
                k = max(len(tr) // 20, 4)
                smooth = np.convolve(tr, np.ones(k) / k, mode="valid")
                ax.plot(smooth, color="C0" if label == "LPG" else "C3", alpha=0.8,
                        label=label if i == 0 else None)
    ax.set_xlabel("finished agent lifetimes during meta-training")
    ax.set_ylabel("lifetime return (moving average)")
    ax.set_title("Meta-training progress")
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    for kind, color, label in (("y", "C0", "linear probe from y(s)"),
                               ("td", "C2", "TD(lambda) value at gamma=0.99")):
        for j, (style, how) in enumerate((("-", "pooled"), ("--", "per grid"))):
            means = [np.mean([p[(kind, g)][j] for p in probes]) for g in _PROBE_DISCOUNTS]
            stds = [np.std([p[(kind, g)][j] for p in probes]) for g in _PROBE_DISCOUNTS]
            ax2.errorbar(_PROBE_DISCOUNTS, means, yerr=stds, marker="o", color=color,
                         linestyle=style, capsize=3, label=f"{label}, {how}")
    ax2.axhline(0.7, color="grey", linestyle=":", label="target 0.7")
    ax2.set_xlabel("discount of the true value")
    ax2.set_ylabel("Spearman correlation (held-out grids)")
    ax2.set_title("Is y value-like, at which discounts?")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out, filename, dpi=90)


def _ck_values(checkpoints, k, key, j=1):
    """Per seed: ``probe[key][j]`` at checkpoint ``k`` (``j=1``: per grid / per agent)."""
    return [c["probes"][k][key][j] for c in checkpoints]


def _ck_returns(checkpoints, k):
    """Per seed: the mean lifetime return of the probe's agents at checkpoint ``k``."""
    return [float(np.mean(c["probes"][k]["returns"])) for c in checkpoints]


def _plot_checkpoints(out, filename, steps, checkpoints):
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))

    def line(axis, values, **kw):
        means = [np.mean(v) for v in values]
        stds = [np.std(v) for v in values]
        axis.errorbar(steps, means, yerr=stds, marker="o", capsize=3, **kw)

    for i, g in enumerate(_PROBE_DISCOUNTS):
        line(ax, [_ck_values(checkpoints, k, ("y", g)) for k in steps], color=f"C{i}",
             label=f"y, true value at gamma={g}")
    line(ax, [_ck_values(checkpoints, k, ("y frequent", _TRAIN_DISCOUNT)) for k in steps],
         color="C4", linestyle="--", label="y, gamma=0.99, often-visited cells")
    line(ax, [_ck_values(checkpoints, k, ("td", _TRAIN_DISCOUNT)) for k in steps],
         color="grey", linestyle="--", label="TD(lambda) value, gamma=0.99")
    line(ax, [np.sqrt(np.clip(_ck_values(checkpoints, k, ("retest", _TRAIN_DISCOUNT)), 0,
                              None)) for k in steps],
         color="k", linestyle=":", label="sqrt(retest of the 0.99 target)")
    ax.axhline(0.7, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("meta-steps of the rule (0: untrained)")
    ax.set_ylabel("Spearman, per grid (held-out 5x5)")
    ax.set_title("Probes of each run's rule along its meta-training")
    ax.legend(fontsize=7)
    line(ax2, [_ck_returns(checkpoints, k) for k in steps], color="C0")
    ax2.set_xlabel("meta-steps of the rule (0: untrained)")
    ax2.set_ylabel("mean lifetime return of the probe's agents")
    ax2.set_title("Return of agents trained by each snapshot")
    fig.tight_layout()
    return save_figure(fig, out, filename, dpi=90)


def _checkpoint_rows(steps, checkpoints):
    """Rows of the follow-up's table: per checkpoint, the return of the agents the rule
    trains and the probes' Spearman correlations."""
    g0 = _TRAIN_DISCOUNT
    rows = []
    for k in steps:
        row = {"meta-steps": "0 (untrained)" if k == 0 else str(k),
               "return": format_mean_std(_ck_returns(checkpoints, k), 1)}
        for g in _PROBE_DISCOUNTS:
            row[f"y, {g:g}"] = format_mean_std(_ck_values(checkpoints, k, ("y", g)), 2)
        row["y, 0.99, often-visited cells"] = format_mean_std(
            _ck_values(checkpoints, k, ("y frequent", g0)), 2)
        row["TD value, 0.99"] = format_mean_std(_ck_values(checkpoints, k, ("td", g0)), 2)
        row["retest of the 0.99 target"] = format_mean_std(
            _ck_values(checkpoints, k, ("retest", g0)), 2)
        row["cells per agent"] = format_mean_std([c["probes"][k]["cells"]
                                                  for c in checkpoints], 1)
        rows.append(row)
    return rows


def _fall(y, trained, final):
    """``(peak, words, falls)``: the checkpoint where y's probe peaks, a sentence on how
    it falls after it, and whether the fall is beyond the seed spread (the paired
    interval rule over the seeds)."""
    peak = max(trained, key=lambda k: np.mean(y[k]))
    if peak == final:
        return peak, (f"y's probe is highest at the last checkpoint ({final}): it does not "
                      f"fall with longer meta-training in this run"), False
    falls = judge(CLAIMS_FOLLOWUP["falls"], y[peak], y[final]).outcome == HOLDS
    return peak, (f"y's probe peaks at meta-step {peak} ({np.mean(y[peak]):.2f}) and ends "
                  f"{np.mean(y[peak]) - np.mean(y[final]):.2f} lower at {final}: "
                  + ("a fall beyond the seed spread" if falls else
                     "within the seed spread, so no measurable fall")), falls


def _repeats(checkpoints, probes, lpg_values, final):
    """Whether the last checkpoint repeats the main table's probe exactly (it is the rule
    of the LPG part), and a sentence on the parts whose meta-training ran again."""
    repeats = all(np.array_equal(c["probes"][final][key], p[key], equal_nan=True)
                  for c, p in zip(checkpoints, probes) for key in p
                  if key in c["probes"][final])
    refits = [c for c in checkpoints if c["refit"]]
    same_fit = all(np.array_equal(c["training_returns"], v["training_returns"])
                   for c, v in zip(checkpoints, lpg_values) if c["refit"])
    refit_text = (f" {len(refits)} of the {len(checkpoints)} seeds' LPG parts were cached "
                  f"before they kept snapshots, so their meta-training ran again (same seed "
                  f"and settings) to take them; the re-runs reproduced the cached runs' "
                  f"meta-training returns exactly: {'yes' if same_fit else 'no'}."
                  if refits else "")
    return repeats, refit_text


def _checkpoint_section(result, steps, checkpoints, probes, lpg_values, cfg, wall):
    """The follow-up's markdown: the table by checkpoint and its computed sentences."""
    g0 = _TRAIN_DISCOUNT
    rows = _checkpoint_rows(steps, checkpoints)

    final, trained = steps[-1], [k for k in steps if k > 0]
    y = {k: _ck_values(checkpoints, k, ("y", g0)) for k in steps}
    ret = {k: _ck_returns(checkpoints, k) for k in steps}
    peak, fall, falls = _fall(y, trained, final)
    ret_peak = max(trained, key=lambda k: np.mean(ret[k]))
    path_text = ", ".join(f"{np.mean(y[k]):.2f} at {k}" for k in steps)
    ret_text = ", ".join(f"{np.mean(ret[k]):.1f} at {k}" for k in steps)
    best = {k: max(_PROBE_DISCOUNTS, key=lambda g: np.mean(_ck_values(checkpoints, k,
                                                                      ("y", g))))
            for k in trained}
    best_text = ", ".join(f"{best[k]:g} at {k}" for k in trained)

    y_end, freq_end = np.mean(y[final]), np.mean(_ck_values(checkpoints, final,
                                                            ("y frequent", g0)))
    retest = {k: _ck_values(checkpoints, k, ("retest", g0)) for k in steps}
    ceiling = {k: float(np.sqrt(max(np.mean(retest[k]), 0.0))) for k in steps}
    td_end = np.mean(_ck_values(checkpoints, final, ("td", g0)))
    first = trained[0]
    quick = PROTOCOL.settings(True)
    same_protocol = cfg["mc_steps"] == quick["mc_steps"]
    spread = max(np.std(y[final]), 0.02)
    corrected = y_end / ceiling[final] if ceiling[final] > 0 else float("nan")

    def effect(value):
        """'explains' (alone it lifts the probe to 0.7), 'contributes' or 'no'."""
        if not value - y_end > spread:
            return "no"
        return "explains" if value >= 0.7 > y_end else "contributes"

    factors = [("longer meta-training (y's probe at its peak)",
                np.mean(y[peak]) if falls else y_end),
               ("rarely visited cells (y's probe on the often-visited ones)", freq_end),
               ("the noise of the Monte-Carlo target (y's probe corrected for it, "
                "r / sqrt(retest))", corrected)]
    effects = [f"{name}: {value:.2f}, {effect(value)}" for name, value in factors]
    causes = [name.split(" (")[0] for (name, value) in factors
              if effect(value) != "no"]
    why = (("y's probe meets 0.7 at the end of this run" if y_end >= 0.7 else
            "y's probe ends below 0.7") + f" ({y_end:.2f}); by factor (a factor "
           f"'explains' the shortfall when it alone lifts the probe to 0.7, 'contributes' "
           f"when it lifts it by more than the seed spread {spread:.2f}): "
           + "; ".join(effects) + ". "
           + ("Measured causes: " + ", ".join(causes) + "." if causes else
              "None of the three measured factors moves it."))

    repeats, refit_text = _repeats(checkpoints, probes, lpg_values, final)
    cpu = sum(c["cpu"] for c in checkpoints)
    md = [
        f"#### {_FOLLOWUP_HEADING}",
        "",
        f"Why y's per-grid probe at 0.99 is where it is: the LPG rule of every meta-training "
        f"run of `lpg` is taken at meta-steps {', '.join(map(str, steps))} (0: the untrained "
        f"rule; the snapshots are copies of the rule's parameters after those Adam steps, "
        f"i.e. the rule a fit with that many meta-steps ends with) and put through the same "
        f"probe (two fresh agents per held-out 5 x 5 grid, per grid; mean ± std over "
        f"{len(checkpoints)} seeds). Return: the mean lifetime return of those probe agents. "
        f"Beside y's probe: the same probe on the *often-visited cells* only (a visit share "
        f"of at least 5 in {quick['mc_steps'] - min(quick['mc_steps'] // 3, 700)} steps, the "
        f"quick protocol's count; the probes of `lpg` count every cell visited 5 times in the "
        f"{cfg['mc_steps'] - min(cfg['mc_steps'] // 3, 700)} counted steps of a "
        f"{cfg['mc_steps']}-step rollout), the TD(lambda) value's probe, and the *retest* of "
        f"the target: the Spearman correlation, per agent, between the Monte-Carlo values "
        f"at 0.99 and a second independent estimate (another rollout of the same final "
        f"policy); a predictor of the true values scored against one estimate reaches "
        f"about the square root of the retest. {len(checkpoints)} parts, {wall:.0f} s wall, "
        f"{cpu:.0f} s of CPU time summed over them.{refit_text} The last checkpoint "
        f"repeats the probe of `lpg`'s table exactly: {'yes' if repeats else 'no'}.",
        "",
        result.table(rows),
        "",
        f"- Along meta-training the return goes {ret_text} (highest at {ret_peak}); y's "
        f"per-grid probe at 0.99 goes {path_text}: {fall}. The discount whose values y "
        f"ranks best: {best_text}.",
        f"- At the end ({final} meta-steps): y's probe at 0.99 is {y_end:.2f} on every "
        f"counted cell and {freq_end:.2f} on the often-visited ones "
        + ("(the same cells in this mode)" if same_protocol else
           f"({freq_end - y_end:+.2f}: "
           + ("rarely visited cells, whose y the agent updated rarely, pull it down"
              if effect(freq_end) != "no" else "the rarely visited cells do not explain it")
           + ")")
        + f"; the retest of the 0.99 target is {np.mean(retest[final]):.2f} (at {first} "
        f"meta-steps: {np.mean(retest[first]):.2f}), a ceiling of about {ceiling[final]:.2f} "
        f"for any probe, so y's probe corrected for the target's noise is {corrected:.2f} "
        f"(the TD value's: {td_end / ceiling[final]:.2f})."
        if ceiling[final] > 0 else "",
        f"- Why, per grid at 0.99: {why}",
    ]
    return "\n".join(md)


def _environments(cfg, rs):
    """The meta-training grids and the evaluation sets (deterministic in ``rs``)."""
    from sklearn_papers.rl import sample_grid_worlds

    train = sample_grid_worlds(cfg["n_train"], random_state=rs)
    test = sample_grid_worlds(cfg["n_test"], random_state=rs + 1000, exclude=train)
    large = sample_grid_worlds(cfg["n_large"], height=7, width=7, random_state=rs + 2000)
    return train, {"held-out 5x5": test, "larger 7x7": large}


def _score(est, envs):
    """Mean lifetime return of fresh agents trained by ``est``'s rule (the paper's metric)."""
    try:
        return float(np.mean(est.lifetime_returns(envs)))
    except FloatingPointError:
        return float("nan")


def _checkpoints(meta_steps):
    """Meta-steps at which the follow-up looks at the rule: 0 (the untrained rule), those of
    150, 300, 600, 1000 below ``meta_steps``, and ``meta_steps`` (at least one in between)."""
    steps = [s for s in (150, 300, 600, 1000) if s < meta_steps]
    if not steps and meta_steps >= 2:
        steps = [meta_steps // 2]
    return tuple([0] + steps + [meta_steps])


@contextmanager
def _rule_snapshots(steps, out):
    """Keep the parameters that an optimizer holds after its ``steps``-th steps, in ``out``.

    During :meth:`LearnedPolicyGradient.fit` the only optimizer is the rule's Adam, built on
    ``rule.parameters()``, so ``out[k]`` (a list of arrays in that order) is the rule after
    ``k`` meta-steps, the rule a fit with ``max_meta_steps=k`` ends with. Copying leaves the
    fit unchanged. Uses torch's global optimizer step hook, removed on exit.
    """
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


def _lpg(variant, cfg, seed):
    """The estimator of an LPG part (the meta-training protocol of every part)."""
    from sklearn_papers.rl import LearnedPolicyGradient

    return LearnedPolicyGradient(prediction_size=0 if variant == "LPG without y" else 8,
                                 lifetime=cfg["lifetime"], n_agents=cfg["n_agents"],
                                 max_meta_steps=cfg["meta_steps"], discount=_TRAIN_DISCOUNT,
                                 random_state=seed)


def _with_rule(est, params):
    """A copy of ``est`` whose rule has the parameters ``params`` (a snapshot), or the
    untrained rule with ``params=None``."""
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


@in_one_torch_thread
def _seed_part(variant, seed, cfg, rs, best_lr):
    """One meta-training run (``variant`` "LPG" or "LPG without y") and its evaluation.

    The LPG part also scores the untrained rule and A2C with this seed, runs the probe and
    keeps the rule's snapshots at the follow-up's checkpoints (``"snapshots"``: what a part
    cached before they were kept lacks them). Module-level so that it can run in a worker
    process (everything it needs is passed).
    """
    from sklearn_papers.rl import A2C

    train, sets = _environments(cfg, rs)
    t0, c0 = time.perf_counter(), time.process_time()
    snapshots = {}
    est = _lpg(variant, cfg, seed)
    with _rule_snapshots(_checkpoints(cfg["meta_steps"]) if variant == "LPG" else (),
                         snapshots):
        est.fit(train)
    out = {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
           "training_returns": est.training_returns_, "scores": {}}
    if variant == "LPG":
        out["snapshots"] = snapshots
    rules = {variant: est}
    if variant == "LPG":
        rules["untrained rule"] = est.untrained(random_state=seed)
        rules["A2C (tuned lr)"] = A2C(lr=best_lr, normalize_advantage=False,
                                      lifetime=cfg["lifetime"], random_state=seed)
        out["probe"] = _probe(est, sets["held-out 5x5"], cfg, seed)
    for sname, envs in sets.items():
        out["scores"][sname] = {name: _score(r, envs) for name, r in rules.items()}
    return out


@in_one_torch_thread
def _checkpoint_part(seed, cfg, rs, snapshots):
    """The follow-up for one seed: the LPG rule after each of ``_checkpoints`` meta-steps,
    probed on the held-out 5 x 5 grids (``_probe`` with its extra measures).

    ``snapshots`` come from the LPG part of this seed; None (a part cached before they were
    kept) re-runs its meta-training, deterministic with the same seed and settings, to take
    them (``"training_returns"`` lets the caller check that it reproduced the cached run).
    """
    train, sets = _environments(cfg, rs)
    steps = _checkpoints(cfg["meta_steps"])
    t0, c0 = time.perf_counter(), time.process_time()
    est = _lpg("LPG", cfg, seed)
    out = {"refit": snapshots is None, "training_returns": None}
    if snapshots is None:
        snapshots = {}
        with _rule_snapshots(steps, snapshots):
            est.fit(train)
        out["training_returns"] = est.training_returns_
    out["probes"] = {k: _probe(_with_rule(est, None if k == 0 else snapshots[k]),
                               sets["held-out 5x5"], cfg, seed, extras=True) for k in steps}
    out["seconds"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
    return out


def _tune_a2c(ctx, cfg, train):
    """A2C's learning rate, tuned on the meta-training grids (as the paper tunes A2C), with
    raw advantages (the protocol of the published runs): ``(best_lr, {lr: return})``."""
    from sklearn_papers.rl import A2C

    tuned = {}
    for lr in ctx.progress(_A2C_LRS, desc="lpg: tuning A2C"):
        score = _score(A2C(lr=lr, normalize_advantage=False, lifetime=cfg["lifetime"],
                           random_state=ctx.random_state), train)
        tuned[lr] = score if np.isfinite(score) else -np.inf  # NaN: the agents diverged
    return max(tuned, key=tuned.get), tuned


def _cache_params(cfg):
    """What every part's cache params hold beside its own settings: the estimator's
    defaults and the rule's file format (which names its inputs), so that a part cached
    with other defaults or inputs is redone."""
    from sklearn_papers.rl import LearnedPolicyGradient
    from sklearn_papers.rl._learned_policy_gradient import _FORMAT as rule_format

    defaults = {k: v for k, v in LearnedPolicyGradient().get_params().items()
                if k not in ("verbose", "random_state", "n_jobs")}
    return {"cfg": cfg, "defaults": defaults, "format": rule_format}


def _meta_training(ctx, cfg, best_lr, variants=("LPG", "LPG without y"), owner=None):
    """One cached part per (seed, variant) on ``cfg["n_jobs"]`` worker processes, kept for
    the follow-up (``owner="lpg"`` when the follow-up reads them); returns ``(jobs, values,
    wall seconds)``."""
    jobs = [(v, ctx.random_state + i) for i in range(cfg["seeds"]) for v in variants]
    params = {**_cache_params(cfg), "best_lr": best_lr}
    parts = [(f"{v}/seed={seed}", _seed_part, (v, seed, cfg, ctx.random_state, best_lr),
              params) for v, seed in jobs]
    start = time.perf_counter()
    with ctx.progress(total=len(parts), desc="lpg: meta-training runs") as bar:
        values = cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar, owner=owner,
                              share=owner is None)
    return jobs, values, time.perf_counter() - start


def _collect(jobs, values, sets):
    """``table[set][method]`` (returns per seed), meta-training ``curves``, the LPG parts'
    ``probes`` and their values, and the fits' summed wall and CPU seconds."""
    table = {s: {n: [] for n in _METHODS} for s in sets}
    out = dict(table=table, curves={"LPG": [], "LPG without y": []}, probes=[],
               lpg_values=[], seconds=0.0, cpu=0.0)
    for (v, _), value in zip(jobs, values):
        out["curves"][v].append(value["training_returns"])
        out["seconds"] += value["seconds"]
        out["cpu"] += value["cpu"]
        for sname, scores in value["scores"].items():
            for name, score in scores.items():
                table[sname][name].append(score)
        if v == "LPG":
            out["probes"].append(value["probe"])
            out["lpg_values"].append(value)
    return out


def _followup_parts(ctx, cfg, jobs, lpg_values):
    """The follow-up's checkpoints (the same LPG runs probed at several meta-steps; the
    rule's snapshots come from the LPG parts, or from a deterministic re-run of their
    meta-training where a part was cached before it kept them): ``(checkpoints, wall)``."""
    lpg_seeds = [seed for v, seed in jobs if v == "LPG"]
    params = {**_cache_params(cfg), "steps": _checkpoints(cfg["meta_steps"])}
    parts = [(f"LPG checkpoints/seed={seed}", _checkpoint_part,
              (seed, cfg, ctx.random_state, value.get("snapshots")), params)
             for seed, value in zip(lpg_seeds, lpg_values)]
    start = time.perf_counter()
    with ctx.progress(total=len(parts), desc="lpg: follow-up checkpoints") as bar:
        checkpoints = cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar)
    wall = time.perf_counter() - start
    ctx.log(f"[lpg] follow-up: {len(parts)} parts, {wall:.0f} s wall")
    return checkpoints, wall


#: The methods of the returns table, in its column order.
_METHODS = ["LPG", "A2C (tuned lr)", "untrained rule", "LPG without y"]


def _return_rows(table, sets):
    rows = []
    for sname in sets:
        row = {"environments": f"{sname} ({len(sets[sname])} grids)"}
        for n in _METHODS:
            row[n] = format_mean_std(table[sname][n], 1)
        lpg, a2c = np.mean(table[sname]["LPG"]), np.mean(table[sname]["A2C (tuned lr)"])
        row["LPG / A2C"] = f"{lpg / a2c:.2f}"
        rows.append(row)
    return rows


def _probe_rows(probes):
    rows = []
    for g in _PROBE_DISCOUNTS:
        row = {"discount of the true value": g}
        for kind, name in (("y", "y(s)"), ("td", "TD(lambda) value")):
            for j, how in enumerate(("pooled", "per grid")):
                row[f"{name}, {how}"] = format_mean_std([p[(kind, g)][j] for p in probes], 2)
        rows.append(row)
    return rows


def _probe_stats(probes, j):
    """Claims 2 and 3 on the probes: ``j = 1`` per grid (the paper analyses y within one
    environment), ``j = 0`` pooled (reported beside them)."""
    others = [g for g in _PROBE_DISCOUNTS if g != _TRAIN_DISCOUNT]
    how = "per grid" if j else "pooled"
    y_train = [p[("y", _TRAIN_DISCOUNT)][j] for p in probes]
    td_train = [p[("td", _TRAIN_DISCOUNT)][j] for p in probes]
    y_other = [_mean([p[("y", g)][j] for g in others]) for p in probes]
    td_other = [_mean([p[("td", g)][j] for g in others]) for p in probes]
    # claim 3: y carries the other discounts' values (its probe beats the TD value's
    # there) and the TD value does not (its probe is lower there than at its own discount)
    y_beats = judge(CLAIMS["y_beats"].at(how=how), y_other, td_other)
    td_drops = judge(CLAIMS["td_drops"].at(how=how), td_train, td_other)
    finite = np.asarray(y_train, dtype=float)
    finite = finite[np.isfinite(finite)]  # seeds without a probe are left out
    return dict(how=how, y_train=_mean(y_train), td_train=_mean(td_train),
                y_other=_mean(y_other), td_other=_mean(td_other), y_beats=y_beats,
                td_drops=td_drops, value_like=(judge(CLAIMS["value_like"].at(how=how), finite)
                                               if finite.size else None))


def _probe_text(result, probes):
    """Markdown of claims 2 and 3 (the probe of y against the TD value)."""
    grid, pooled = _probe_stats(probes, 1), _probe_stats(probes, 0)
    others = ", ".join(str(g) for g in _PROBE_DISCOUNTS if g != _TRAIN_DISCOUNT)

    def target(stats, style):
        if stats["value_like"] is None:
            return result.verdict("inconclusive", claim=CLAIMS["value_like"].at(
                how=stats["how"]), rule="no finite value", style="outcome")
        return result.verdict(stats["value_like"], style=style)

    def claim3(stats, style):
        parts = [stats["y_beats"], stats["td_drops"]]
        return result.verdict(all_of(*parts), claim=CLAIMS["other_discounts"].at(
            how=stats["how"]), parts=parts, style=style)

    def plain(verdict):
        return result.verdict(verdict, style="plain")

    return [
        f"- y is value-like at the training discount 0.99, per grid (the paper analyses "
        f"y within one environment): Spearman {grid['y_train']:.2f} (target >= 0.7: "
        f"{target(grid, 'bold')}). Pooled across grids, a stricter test that "
        f"the paper does not make (one read-out for every layout, so y must also carry the "
        f"value's level in reward units): {pooled['y_train']:.2f} "
        f"({target(pooled, 'plain')} against the same 0.7).",
        f"- Per grid, at the other discounts ({others}), y's "
        f"probe averages {grid['y_other']:.2f} against the TD(lambda) value's "
        f"{grid['td_other']:.2f} (y higher: {plain(grid['y_beats'])}), "
        f"while the TD value's probe "
        f"averages {grid['td_train']:.2f} at its own discount 0.99 (higher than at the "
        f"others: {plain(grid['td_drops'])}). y carries values at "
        f"other discounts where the "
        f"TD(lambda) value does not: {claim3(grid, 'bold')} (paper: y captures "
        f"values at "
        f"discounts other than the meta-training one). Pooled: y {pooled['y_other']:.2f} "
        f"against TD {pooled['td_other']:.2f} at the other discounts (y higher: "
        f"{plain(pooled['y_beats'])}), TD {pooled['td_train']:.2f} at 0.99 "
        f"(higher than at the others: {plain(pooled['td_drops'])}); "
        f"both parts together: {claim3(pooled, 'plain')}.",
    ]


_PROBE_PROTOCOL = (
    "Probe (held-out grids): ridge regression from `y(s)` (the agent's prediction "
    "vector at the end of its lifetime) to the Monte-Carlo value of each visited cell "
    "under the agent's final policy; Spearman correlation of its out-of-sample "
    "predictions. Two fresh agents are trained on every grid. *Pooled*: one probe "
    "for all grids, cross-validated by grid, correlation over all (grid, cell) pairs "
    "(y must carry the value's level consistently across grids). *Per grid*: a probe "
    "fit on one agent's cells predicts the other agent's values in the same grid, "
    "correlation among that agent's cells, averaged over both directions and the "
    "grids (y must rank a grid's states by value through a read-out that transfers "
    "between agents). "
    "Beside it, the same probes from a TD(lambda) value (lambda 0.9) learned at "
    "discount 0.99 alongside each agent from the same experience.")


def _returns_text(result, ctx, cfg, runs, sets, tuned, best_lr, parts_wall):
    """Markdown of the protocol and claim 1 (LPG's returns against A2C's)."""
    table, n_runs = runs["table"], sum(len(c) for c in runs["curves"].values())
    held = table["held-out 5x5"]
    ratio = np.mean(held["LPG"]) / np.mean(held["A2C (tuned lr)"])
    ratio_large = (np.mean(table["larger 7x7"]["LPG"])
                   / np.mean(table["larger 7x7"]["A2C (tuned lr)"]))
    lr_text = ", ".join(f"{lr:g}: {v:.1f}" for lr, v in tuned.items())
    return [
        f"Environments: {cfg['n_train']} random 5 x 5 grid worlds for meta-training "
        f"(`sample_grid_worlds`, dense / sparse / long-horizon layouts, "
        f"`random_state={ctx.random_state}`), {cfg['n_test']} disjoint held-out 5 x 5 grids and "
        f"{cfg['n_large']} 7 x 7 grids. Metric: lifetime return, the sum of rewards an agent "
        f"collects in {cfg['lifetime']} updates of 20 steps (2,000 steps), one fresh tabular "
        f"agent per grid, mean ± std over {cfg['seeds']} meta-training seeds. LPG: "
        f"{cfg['meta_steps']} meta-steps, {cfg['n_agents']} agents, 5 unrolled updates per "
        f"meta-gradient, prediction size 8. The {n_runs} meta-training runs (LPG and the "
        f"ablation, {cfg['seeds']} seeds each) with their evaluations took "
        f"{parts_wall:.0f} s wall on {cfg['n_jobs']} worker processes; the fits alone took "
        f"{runs['cpu']:.0f} s of CPU time ({runs['seconds']:.0f} s wall) summed over the runs, "
        f"one torch thread each (wall times are inflated when the machine is shared). "
        f"A2C: learning rate {best_lr:g}, the best mean lifetime return on the "
        f"meta-training grids among ({lr_text}).",
        "",
        result.table(_return_rows(table, sets)),
        "",
        f"- LPG reaches {100 * ratio:.0f} % of A2C's return on the held-out grids (target "
        ">= 80 %: " + result.verdict(judge(CLAIMS["share"], held["LPG"],
                                           0.8 * np.asarray(held["A2C (tuned lr)"])))
        + f") and {100 * ratio_large:.0f} % on the larger grids. Paper: LPG is competitive "
        "with A2C on the tabular grid worlds.",
        "- LPG beats the untrained rule: "
        + result.verdict(judge(CLAIMS["untrained"], held["LPG"], held["untrained rule"]))
        + "; LPG beats the ablation without y: "
        + result.verdict(judge(CLAIMS["no_y"], held["LPG"], held["LPG without y"]))
        + " (paper: removing y hurts the discovered rule).",
        "",
    ]


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    with one_torch_thread():
        train, sets = _environments(cfg, ctx.random_state)
        best_lr, tuned = _tune_a2c(ctx, cfg, train)
        jobs, values, parts_wall = _meta_training(ctx, cfg, best_lr)
        runs = _collect(jobs, values, sets)
    ctx.log(f"[lpg] {len(jobs)} meta-training runs with their evaluations: "
            f"{parts_wall:.0f} s wall on {cfg['n_jobs']} processes; the fits alone "
            f"{runs['seconds']:.0f} s wall, {runs['cpu']:.0f} s CPU, summed over the runs")
    figures = [_plot_returns(ctx, "lpg_returns.png", runs["table"], _METHODS),
               _plot_curves(ctx, "lpg_meta_training_and_probe.png", runs["curves"],
                            runs["probes"])]
    result = Result()
    md = _returns_text(result, ctx, cfg, runs, sets, tuned, best_lr, parts_wall)
    md += [_PROBE_PROTOCOL, "", result.table(_probe_rows(runs["probes"])), "",
           *_probe_text(result, runs["probes"]), "",
           "Why y's per-grid probe at 0.99 is where it is (the rule along meta-training) is "
           "the experiment `lpg_followup`; whether the learned rule generalizes to "
           "environments nobody here wrote (gymnasium's FrozenLake, CliffWalking and Taxi) "
           "is the experiment `lpg_stock`."]
    return result.done("\n".join(md), figures=figures, shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """The LPG rule of every meta-training run of ``lpg`` along its meta-training, as an
    experiment of its own (see the module docstring). The LPG runs are ``lpg``'s parts:
    read from this run when it ran them, else computed (and cached) under its name."""
    cfg = PROTOCOL.settings(ctx.quick)
    with one_torch_thread():
        train, sets = _environments(cfg, ctx.random_state)
        best_lr, _ = _tune_a2c(ctx, cfg, train)
        jobs, values, _ = _meta_training(ctx, cfg, best_lr, variants=("LPG",), owner="lpg")
        runs = _collect(jobs, values, sets)
        checkpoints, ck_wall = _followup_parts(ctx, cfg, jobs, runs["lpg_values"])
    steps = _checkpoints(cfg["meta_steps"])
    result = Result()
    md = _checkpoint_section(result, steps, checkpoints, runs["probes"], runs["lpg_values"],
                             cfg, ck_wall)
    return result.done(md, figures=[_plot_checkpoints(ctx, "lpg_checkpoints.png", steps,
                                                      checkpoints)],
                       shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="lpg",
    title="Learned Policy Gradient vs A2C on tabular grid worlds",
    paper="Oh, Hessel, Czarnecki, Xu, van Hasselt, Singh & Silver 2020, Discovering "
          "Reinforcement Learning Algorithms, NeurIPS",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="lpg_followup",
    title="Learned Policy Gradient follow-up: y's value-likeness along meta-training",
    paper="Oh, Hessel, Czarnecki, Xu, van Hasselt, Singh & Silver 2020, Discovering "
          "Reinforcement Learning Algorithms, NeurIPS",
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL,
    # it re-runs lpg's meta-training when run alone, and probes every rule at six points
    in_quick_run=False,
)
