"""Oh et al. (2020), Learned Policy Gradient: a meta-learned update rule on tabular grid worlds.

Checks that the rule trains agents on held-out grids about as well as tuned A2C and better
than an untrained rule or the ablation without ``y``, and that ``y`` is value-like; the
follow-up ``lpg_followup`` probes the rule along its meta-training.

Claims: CLAIMS below; setup: docs/papers/lpg.rst.
"""

import time

import numpy as np

from sklearn_papers.reproduce._claims import HOLDS, Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import (
    Protocol,
    draw_figure,
    errorbar,
    in_one_torch_thread,
    one_torch_thread,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result
from sklearn_papers.rl._rule_probes import _counted, _rule_probes, _rule_snapshots, _with_rule
from sklearn_papers.rl._scores import _finite_mean, _or_nan

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
)

_TRAIN_DISCOUNT = 0.99
_PROBE_DISCOUNTS = (0.5, 0.8, 0.9, 0.99)
_A2C_LRS = (1.0, 2.0, 3.0, 4.0)
_FOLLOWUP_HEADING = "Follow-up: y's value-likeness along meta-training"
#: The methods of the returns table, in its column order.
_METHODS = ["LPG", "A2C (tuned lr)", "untrained rule", "LPG without y"]


def _probe(est, envs, cfg, seed, extras=False):
    """The probes of an LPG part (:func:`~sklearn_papers.rl._rule_probes._rule_probes`);
    with ``extras`` (the follow-up), a cell visited 5 times in a ``--quick`` rollout's
    counted steps is often visited."""
    rate = 5 / _counted(PROTOCOL.settings(True)["mc_steps"]) if extras else None
    return _rule_probes(est, envs, n_steps=cfg["mc_steps"], discounts=_PROBE_DISCOUNTS,
                        discount=_TRAIN_DISCOUNT, seed=seed, frequent_rate=rate)


def _plot_returns(ax, table):
    width = 0.8 / len(_METHODS)
    for j, name in enumerate(_METHODS):
        ax.bar(np.arange(len(table)) + j * width, [np.mean(t[name]) for t in table.values()],
               width, yerr=[np.std(t[name]) for t in table.values()], capsize=3, label=name)
    ax.set_xticks(np.arange(len(table)) + 0.4 - width / 2, list(table))
    ax.set(ylabel="mean lifetime return (sum of rewards)",
           title="Agents trained by each update rule (mean ± std over meta-training seeds)")
    ax.legend(fontsize=8)


def _plot_curves(ax, ax2, curves, probes):
    for label, runs in curves.items():
        for i, tr in enumerate(runs):
            if len(tr) >= 8:
                k = max(len(tr) // 20, 4)
                smooth = np.convolve(tr, np.ones(k) / k, mode="valid")
                ax.plot(smooth, color="C0" if label == "LPG" else "C3", alpha=0.8,
                        label=label if i == 0 else None)
    ax.set(xlabel="finished agent lifetimes during meta-training",
           ylabel="lifetime return (moving average)", title="Meta-training progress")
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    for kind, color, label in (("y", "C0", "linear probe from y(s)"),
                               ("td", "C2", "TD(lambda) value at gamma=0.99")):
        for j, (style, how) in enumerate((("-", "pooled"), ("--", "per grid"))):
            errorbar(ax2, _PROBE_DISCOUNTS, [[p[(kind, g)][j] for p in probes]
                                              for g in _PROBE_DISCOUNTS],
                      marker="o", color=color, linestyle=style, label=f"{label}, {how}")
    ax2.axhline(0.7, color="grey", linestyle=":", label="target 0.7")
    ax2.set(xlabel="discount of the true value",
            ylabel="Spearman correlation (held-out grids)",
            title="Is y value-like, at which discounts?")
    ax2.legend(fontsize=8)


def _ck_values(checkpoints, k, key):
    """Per seed: the per-grid value of ``probe[key]`` at checkpoint ``k``."""
    return [c["probes"][k][key][1] for c in checkpoints]


def _ck_returns(checkpoints, k):
    """Per seed: the mean lifetime return of the probe's agents at checkpoint ``k``."""
    return [float(np.mean(c["probes"][k]["returns"])) for c in checkpoints]


def _plot_checkpoints(ax, ax2, steps, checkpoints):
    def line(key, **kw):
        errorbar(ax, steps, [_ck_values(checkpoints, k, key) for k in steps], marker="o",
                  **kw)

    for i, g in enumerate(_PROBE_DISCOUNTS):
        line(("y", g), color=f"C{i}", label=f"y, true value at gamma={g}")
    line(("y frequent", _TRAIN_DISCOUNT), color="C4", linestyle="--",
         label="y, gamma=0.99, often-visited cells")
    line(("td", _TRAIN_DISCOUNT), color="grey", linestyle="--",
         label="TD(lambda) value, gamma=0.99")
    errorbar(ax, steps, [np.sqrt(np.clip(_ck_values(checkpoints, k, (
        "retest", _TRAIN_DISCOUNT)), 0, None)) for k in steps], marker="o", color="k",
        linestyle=":", label="sqrt(retest of the 0.99 target)")
    ax.axhline(0.7, color="grey", linestyle=":", linewidth=0.8)
    ax.set(xlabel="meta-steps of the rule (0: untrained)",
           ylabel="Spearman, per grid (held-out 5x5)",
           title="Probes of each run's rule along its meta-training")
    ax.legend(fontsize=7)
    errorbar(ax2, steps, [_ck_returns(checkpoints, k) for k in steps], marker="o",
              color="C0")
    ax2.set(xlabel="meta-steps of the rule (0: untrained)",
            ylabel="mean lifetime return of the probe's agents",
            title="Return of agents trained by each snapshot")


def _checkpoint_rows(steps, checkpoints):
    """The follow-up's table: per checkpoint, the return and the probes."""
    g0 = _TRAIN_DISCOUNT
    probes = [(f"y, {g:g}", ("y", g)) for g in _PROBE_DISCOUNTS] + [
        ("y, 0.99, often-visited cells", ("y frequent", g0)), ("TD value, 0.99", ("td", g0)),
        ("retest of the 0.99 target", ("retest", g0))]
    return [{"meta-steps": "0 (untrained)" if k == 0 else str(k),
             "return": format_mean_std(_ck_returns(checkpoints, k), 1),
             **{column: format_mean_std(_ck_values(checkpoints, k, key), 2)
                for column, key in probes},
             "cells per agent": format_mean_std([c["probes"][k]["cells"] for c in checkpoints],
                                                1)} for k in steps]


def _fall(y, trained, final):
    """``(peak, words, falls)``: where y's probe peaks and whether it falls after the peak
    beyond the seed spread (paired interval)."""
    peak = max(trained, key=lambda k: np.mean(y[k]))
    if peak == final:
        return peak, f"highest at the last checkpoint ({final}), no fall", False
    falls = judge(CLAIMS_FOLLOWUP["falls"], y[peak], y[final]).outcome == HOLDS
    return peak, (f"peaks at {peak} ({np.mean(y[peak]):.2f}) and ends "
                  f"{np.mean(y[peak]) - np.mean(y[final]):.2f} lower at {final}, "
                  + ("beyond" if falls else "within") + " the seed spread"), falls


def _repeats(checkpoints, probes, lpg_values, final):
    """Whether the last checkpoint repeats the main probe exactly, and a sentence on the
    parts whose meta-training ran again."""
    repeats = all(np.array_equal(c["probes"][final][key], p[key], equal_nan=True)
                  for c, p in zip(checkpoints, probes) for key in p
                  if key in c["probes"][final])
    refits = [c for c in checkpoints if c["refit"]]
    same_fit = all(np.array_equal(c["training_returns"], v["training_returns"])
                   for c, v in zip(checkpoints, lpg_values) if c["refit"])
    refit_text = (f" {len(refits)} of the {len(checkpoints)} seeds' LPG parts were cached "
                  f"without snapshots and re-run; they repeat the cached meta-training "
                  f"returns exactly: {'yes' if same_fit else 'no'}." if refits else "")
    return repeats, refit_text


def _checkpoint_section(result, steps, checkpoints, probes, lpg_values):
    """The follow-up's markdown: the table by checkpoint and its computed sentences."""
    g0 = _TRAIN_DISCOUNT
    final, trained = steps[-1], [k for k in steps if k > 0]
    y = {k: _ck_values(checkpoints, k, ("y", g0)) for k in steps}
    peak, fall, falls = _fall(y, trained, final)
    best = {k: max(_PROBE_DISCOUNTS, key=lambda g: np.mean(_ck_values(checkpoints, k,
                                                                      ("y", g))))
            for k in trained}
    y_end = np.mean(y[final])
    freq_end = np.mean(_ck_values(checkpoints, final, ("y frequent", g0)))
    retest = np.mean(_ck_values(checkpoints, final, ("retest", g0)))
    ceiling = float(np.sqrt(max(retest, 0.0)))
    td_end = np.mean(_ck_values(checkpoints, final, ("td", g0)))
    spread = max(np.std(y[final]), 0.02)
    corrected = y_end / ceiling if ceiling > 0 else float("nan")

    def effect(value):
        """'explains' (alone it lifts the probe to 0.7), 'contributes' or 'no'."""
        if not value - y_end > spread:
            return "no"
        return "explains" if value >= 0.7 > y_end else "contributes"

    factors = [("longer meta-training", np.mean(y[peak]) if falls else y_end),
               ("rarely visited cells", freq_end),
               ("the noise of the Monte-Carlo target", corrected)]
    causes = [name for name, value in factors if effect(value) != "no"]
    repeats, refit_text = _repeats(checkpoints, probes, lpg_values, final)
    caption = (
        f"The probes of `lpg` (per grid) of each run's rule after {', '.join(map(str, steps))} "
        f"meta-steps, and the return of the agents it trains; mean ± std over "
        f"{len(checkpoints)} seeds. Often-visited cells: at least 5 visits per "
        f"{_counted(PROTOCOL.settings(True)['mc_steps'])} counted steps.{refit_text} The last "
        f"checkpoint repeats the probe of `lpg`'s table exactly: {'yes' if repeats else 'no'}.")
    return "\n".join([
        f"#### {_FOLLOWUP_HEADING}",
        "",
        *result.block(caption, _checkpoint_rows(steps, checkpoints)),
        f"- y's probe at 0.99 {fall}; the discount y ranks best: "
        f"{', '.join(f'{best[k]:g} at {k}' for k in trained)}.",
        f"- At {final} meta-steps the retest of the target is {retest:.2f}, "
        f"so y's probe corrected for its noise is {corrected:.2f} (TD: "
        f"{td_end / ceiling:.2f})." if ceiling > 0 else "",
        f"- Why, per grid at 0.99 (y's probe {y_end:.2f}, seed spread {spread:.2f}): "
        + "; ".join(f"{name} {value:.2f}, {effect(value)}" for name, value in factors)
        + ". Measured causes: " + (", ".join(causes) if causes else "none") + ".",
    ])


def _environments(cfg, rs):
    """The meta-training grids and the evaluation sets (deterministic in ``rs``)."""
    from sklearn_papers.rl import sample_grid_worlds

    train = sample_grid_worlds(cfg["n_train"], random_state=rs)
    test = sample_grid_worlds(cfg["n_test"], random_state=rs + 1000, exclude=train)
    large = sample_grid_worlds(cfg["n_large"], height=7, width=7, random_state=rs + 2000)
    return train, {"held-out 5x5": test, "larger 7x7": large}


def _score(est, envs):
    """Mean lifetime return of fresh agents trained by ``est``'s rule (the paper's metric)."""
    return _or_nan(lambda: float(np.mean(est.lifetime_returns(envs))))


def _checkpoints(meta_steps):
    """The follow-up's meta-steps: 0, those of 150, 300, 600, 1000 below ``meta_steps`` (at
    least one), and ``meta_steps``."""
    steps = [s for s in (150, 300, 600, 1000) if s < meta_steps]
    if not steps and meta_steps >= 2:
        steps = [meta_steps // 2]
    return tuple([0] + steps + [meta_steps])


def _lpg(variant, cfg, seed):
    """The estimator of an LPG part (the meta-training protocol of every part)."""
    from sklearn_papers.rl import LearnedPolicyGradient

    return LearnedPolicyGradient(prediction_size=0 if variant == "LPG without y" else 8,
                                 lifetime=cfg["lifetime"], n_agents=cfg["n_agents"],
                                 max_meta_steps=cfg["meta_steps"], discount=_TRAIN_DISCOUNT,
                                 random_state=seed)


@in_one_torch_thread
def _seed_part(variant, seed, cfg, rs, best_lr):
    """One meta-training run of ``variant`` and its scores; the LPG part also scores the
    untrained rule and A2C, runs the probe and keeps the rule at the follow-up's checkpoints."""
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
    rules = {variant: est}
    if variant == "LPG":
        out["snapshots"] = snapshots
        rules["untrained rule"] = est.untrained(random_state=seed)
        rules["A2C (tuned lr)"] = A2C(lr=best_lr, normalize_advantage=False,
                                      lifetime=cfg["lifetime"], random_state=seed)
        out["probe"] = _probe(est, sets["held-out 5x5"], cfg, seed)
    for sname, envs in sets.items():
        out["scores"][sname] = {name: _score(r, envs) for name, r in rules.items()}
    return out


@in_one_torch_thread
def _checkpoint_part(seed, cfg, rs, snapshots):
    """The follow-up for one seed: the rule at each checkpoint, probed with the extra
    measures; ``snapshots=None`` re-runs the (deterministic) meta-training to take them."""
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
    """``(best_lr, {lr: return})``: A2C (raw advantages) tuned on the meta-training grids."""
    from sklearn_papers.rl import A2C

    tuned = {}
    for lr in ctx.progress(_A2C_LRS, desc="lpg: tuning A2C"):
        score = _score(A2C(lr=lr, normalize_advantage=False, lifetime=cfg["lifetime"],
                           random_state=ctx.random_state), train)
        tuned[lr] = score if np.isfinite(score) else -np.inf  # NaN: the agents diverged
    return max(tuned, key=tuned.get), tuned


def _cache_params(cfg):
    """Cache params of every part: ``cfg``, the estimator's defaults and the rule's format."""
    from sklearn_papers.rl import LearnedPolicyGradient
    from sklearn_papers.rl._learned_policy_gradient import _FORMAT as rule_format

    return {"cfg": cfg, "defaults": _defaults(LearnedPolicyGradient()), "format": rule_format}


def _defaults(est, drop=("verbose", "random_state", "n_jobs")):
    """``est``'s parameters but ``drop`` (what a part's cache params hold)."""
    return {k: v for k, v in est.get_params().items() if k not in drop}


def _timed_parts(ctx, cfg, parts, desc, **kwargs):
    """``(values, wall seconds)`` of :func:`cached_parts` on ``cfg["n_jobs"]`` processes."""
    start = time.perf_counter()
    with ctx.progress(total=len(parts), desc=desc) as bar:
        values = cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar, **kwargs)
    return values, time.perf_counter() - start


def _meta_training(ctx, cfg, variants=("LPG", "LPG without y"), owner=None):
    """A2C tuned, then a cached part per (seed, variant) (``owner="lpg"``: the follow-up
    reads them): ``table[set][method]`` (returns per seed), the meta-training ``curves``,
    the LPG parts (``lpg_values``) and their ``probes``, the fits' summed seconds, ..."""
    train, sets = _environments(cfg, ctx.random_state)
    best_lr, tuned = _tune_a2c(ctx, cfg, train)
    jobs = [(v, ctx.random_state + i) for i in range(cfg["seeds"]) for v in variants]
    params = {**_cache_params(cfg), "best_lr": best_lr}
    parts = [(f"{v}/seed={seed}", _seed_part, (v, seed, cfg, ctx.random_state, best_lr),
              params) for v, seed in jobs]
    values, wall = _timed_parts(ctx, cfg, parts, "lpg: meta-training runs", owner=owner,
                                share=owner is None)
    lpg_values = [value for (v, _), value in zip(jobs, values) if v == "LPG"]
    return {"table": {s: {n: [value["scores"][s][n] for value in values
                              if n in value["scores"][s]] for n in _METHODS} for s in sets},
            "curves": {v: [value["training_returns"] for (w, _), value in zip(jobs, values)
                           if w == v] for v in variants},
            "lpg_values": lpg_values, "probes": [value["probe"] for value in lpg_values],
            "seconds": sum(value["seconds"] for value in values),
            "cpu": sum(value["cpu"] for value in values),
            "sets": sets, "tuned": tuned, "best_lr": best_lr, "jobs": jobs, "wall": wall}


def _probe_text(result, probes):
    """Verdict lines of the probe claims: per grid in bold, pooled beside them."""
    others = [g for g in _PROBE_DISCOUNTS if g != _TRAIN_DISCOUNT]
    ways = (("per grid", 1, "outcome"), ("pooled", 0, "plain"))
    lines, parts = [], {}
    for how, j, style in ways:
        claim = CLAIMS["value_like"].at(how=how)
        finite = np.asarray([p[("y", _TRAIN_DISCOUNT)][j] for p in probes], dtype=float)
        finite = finite[np.isfinite(finite)]  # seeds without a probe are left out
        lines.append(result.verdict_line(judge(claim, finite), style) if finite.size else
                     result.verdict_line("inconclusive", "outcome", rule="no finite value",
                                         claim=claim))
        td_other = [_finite_mean([p[("td", g)][j] for g in others]) for p in probes]
        parts[how] = [judge(CLAIMS["y_beats"].at(how=how),
                            [_finite_mean([p[("y", g)][j] for g in others]) for p in probes],
                            td_other),
                      judge(CLAIMS["td_drops"].at(how=how),
                            [p[("td", _TRAIN_DISCOUNT)][j] for p in probes], td_other)]
    for how, _, style in ways:
        lines += [result.verdict_line(v, "plain") for v in parts[how]]
        lines.append(result.verdict_line(all_of(*parts[how]), style, parts=parts[how],
                                         claim=CLAIMS["other_discounts"].at(how=how)))
    return lines


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    with one_torch_thread():
        runs = _meta_training(ctx, cfg)
    ctx.log(f"[lpg] {len(runs['jobs'])} meta-training runs with their evaluations: "
            f"{runs['wall']:.0f} s wall on {cfg['n_jobs']} processes; the fits alone "
            f"{runs['seconds']:.0f} s wall, {runs['cpu']:.0f} s CPU, summed over the runs")
    table, sets, probes = runs["table"], runs["sets"], runs["probes"]
    figures = [draw_figure(ctx, "lpg_returns.png", _plot_returns, table, figsize=(7.5, 4)),
               draw_figure(ctx, "lpg_meta_training_and_probe.png", _plot_curves, runs["curves"],
                       probes, ncols=2)]
    held = table["held-out 5x5"]
    lr_text = ", ".join(f"{lr:g}: {v:.1f}" for lr, v in runs["tuned"].items())
    result = Result()
    md = result.block(
        f"Lifetime return of a fresh agent per grid ({cfg['lifetime']} updates of 20 steps), "
        f"mean ± std over {cfg['seeds']} meta-training seeds of {cfg['meta_steps']} "
        f"meta-steps with {cfg['n_agents']} agents. A2C's learning rate {runs['best_lr']:g} "
        f"is the best on the meta-training grids ({lr_text}).",
        [{"environments": f"{s} ({len(envs)} grids)",
          **{n: format_mean_std(table[s][n], 1) for n in _METHODS},
          "LPG / A2C": f"{np.mean(table[s]['LPG']) / np.mean(table[s]['A2C (tuned lr)']):.2f}"}
         for s, envs in sets.items()],
        [judge(CLAIMS["share"], held["LPG"], 0.8 * np.asarray(held["A2C (tuned lr)"])),
         judge(CLAIMS["untrained"], held["LPG"], held["untrained rule"]),
         judge(CLAIMS["no_y"], held["LPG"], held["LPG without y"])], style="outcome")
    md += result.block(
        f"Spearman correlation of probes from y(s) and from a TD(lambda) value to the "
        f"true values on the held-out grids, mean ± std over {cfg['seeds']} seeds.",
        [{"discount of the true value": g,
          **{f"{name}, {how}": format_mean_std([p[(kind, g)][j] for p in probes], 2)
             for kind, name in (("y", "y(s)"), ("td", "TD(lambda) value"))
             for j, how in enumerate(("pooled", "per grid"))}} for g in _PROBE_DISCOUNTS])
    md += _probe_text(result, probes)
    md += ["", "Follow-ups: `lpg_followup` (y along meta-training) and `lpg_stock` "
               "(gymnasium's stock environments)."]
    return result.done("\n".join(md), figures=figures, shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """The rule of every LPG run of ``lpg`` along its meta-training (computed if missing)."""
    cfg = PROTOCOL.settings(ctx.quick)
    steps = _checkpoints(cfg["meta_steps"])
    with one_torch_thread():
        runs = _meta_training(ctx, cfg, variants=("LPG",), owner="lpg")
        params = {**_cache_params(cfg), "steps": steps}
        parts = [(f"LPG checkpoints/seed={seed}", _checkpoint_part,
                  (seed, cfg, ctx.random_state, value.get("snapshots")), params)
                 for (_, seed), value in zip(runs["jobs"], runs["lpg_values"])]
        checkpoints, wall = _timed_parts(ctx, cfg, parts, "lpg: follow-up checkpoints")
    ctx.log(f"[lpg] follow-up: {len(parts)} parts, {wall:.0f} s wall")
    result = Result()
    md = _checkpoint_section(result, steps, checkpoints, runs["probes"], runs["lpg_values"])
    figure = draw_figure(ctx, "lpg_checkpoints.png", _plot_checkpoints, steps, checkpoints,
                     ncols=2)
    return result.done(md, figures=[figure], shortened=PROTOCOL.note(ctx.quick))


_PAPER = ("Oh, Hessel, Czarnecki, Xu, van Hasselt, Singh & Silver 2020, Discovering "
          "Reinforcement Learning Algorithms, NeurIPS")

EXPERIMENT = Experiment(
    name="lpg",
    title="Learned Policy Gradient vs A2C on tabular grid worlds",
    paper=_PAPER,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="lpg_followup",
    title="Learned Policy Gradient follow-up: y's value-likeness along meta-training",
    paper=_PAPER,
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL,
    # it re-runs lpg's meta-training when run alone, and probes every rule at six points
    in_quick_run=False,
)
