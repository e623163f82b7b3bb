"""Continual learning on split digits: generative replay (Farquhar & Gal 2018) and
progressive networks (Rusu et al. 2016); the follow-up ``continual_followup`` probes the
replay and the forward transfer against the labels budget.

Claims: CLAIMS below; setup: docs/papers/continual_replay.rst and continual_progressive.rst.
"""

import time
from collections import defaultdict

import numpy as np

from sklearn_papers.metrics import backward_transfer
from sklearn_papers.reproduce._claims import CONFIDENCE, Claim, _interval, declare, judge
from sklearn_papers.reproduce._common import Protocol, draw_figure, errorbar, run_seeds
from sklearn_papers.reproduce._digits import load_split, one_torch_thread
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std, full_mode_only
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP"]

_ACC = "final accuracy, 10 classes (%)"
_FT, _JOINT = "fine-tuning", "joint (all data, one fit)"

CLAIMS = declare(
    Claim("fine-tuning forgets", _ACC, "mean interval", higher_is_better=False,
          threshold=25.0, key="forgets", arms=(_FT,)),
    Claim("joint training reaches 95 %", _ACC, "mean interval", threshold=95.0, key="joint",
          arms=(_JOINT,)),
    Claim("generative replay ({g}) closes 0.75 of the gap", "share of the gap closed",
          "mean interval", threshold=0.75, key="closes",
          arms=("generative replay, {g}", _FT, _JOINT)),
    Claim("prior-focused stays near fine-tuning", _ACC, "equivalence", margin=10.0,
          key="prior", arms=("prior-focused (VCL-like)", _FT)),
    Claim("task 1's predict_proba bit-identical after tasks 2-5", "identical (1) or not (0)",
          "every seed", key="identical", arms=("progressive networks",)),
    Claim("fine-tuning with per-task heads forgets", "points", "mean interval",
          threshold=1.0, key="forgetting", arms=("fine-tuning, head per task",)),
    Claim("forward transfer: progressive networks beat a fresh column",
          "test accuracy (%), digits 5-9", "paired interval", key="transfer_fresh",
          arms=("progressive", "fresh column")),
    Claim("progressive networks beat fine-tuning", "test accuracy (%), digits 5-9",
          "paired interval", key="transfer_ft", arms=("progressive", "fine-tuning")),
)

CLAIMS_FOLLOWUP = declare(
    Claim("forward transfer with {n} labels per class", "test accuracy (%)",
          "paired interval", key="transfer_at", arms=("progressive", "fresh column")),
)

# GANs get more steps than VAEs (docs/papers/continual_replay.rst says why).
PROTOCOL = Protocol(
    full=dict(seeds=5, n_jobs=2, max_epochs=30, generator_steps=300, gan_steps=1000,
              pnn_epochs=40, transfer_seeds=20, transfer_epochs=40, low_data_epochs=150,
              hidden=(100, 100)),
    quick=dict(seeds=2, max_epochs=10, generator_steps=150, gan_steps=300, pnn_epochs=10,
               transfer_seeds=10, transfer_epochs=10, low_data_epochs=60, hidden=(64, 64)),
)

#: Budgets of the follow-ups' own parts (outside :data:`PROTOCOL`, whose settings key every
#: main part); the quick run leaves the replay follow-up to the full mode.
PROTOCOL_FOLLOWUP = Protocol(full=dict(replay_seeds=5, curve_seeds=20),
                             quick=dict(replay_seeds=0, curve_seeds=5))

_TASKS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]

#: Class-incremental methods: label -> GenerativeReplayClassifier parameters (None: joint).
METHODS = {
    _FT: dict(generator=None),
    "prior-focused (VCL-like)": dict(generator=None, prior="previous"),
    "generative replay, VAE": dict(generator="vae"),
    "generative replay, GAN": dict(generator="gan"),
    "VGER (GAN replay + prior)": dict(generator="gan", prior="previous"),
    "exact replay (stored rows)": dict(generator="buffer"),
    _JOINT: None,
}

_ANCHORS = {_FT: "19.9", "generative replay, VAE": "90.8 (DGR)",
            "generative replay, GAN": "90.8 (DGR)", _JOINT: "97.9"}


def split_tasks(y):
    """Task index (0-4) of every label of split digits."""
    return np.asarray(y) // 2


def _replay_classifier(params, cfg, seed):
    """The class-incremental model of ``params`` (a value of :data:`METHODS`)."""
    from sklearn_papers.continual import GenerativeReplayClassifier

    steps = cfg["gan_steps" if params.get("generator") == "gan" else "generator_steps"]
    return GenerativeReplayClassifier(hidden_layer_sizes=cfg["hidden"],
                                      max_epochs=cfg["max_epochs"], generator_steps=steps,
                                      random_state=seed, **params)


def class_incremental(params, X_train, X_test, y_train, y_test, *, seed, cfg):
    """Final accuracy over all classes and task-1 accuracy after each task (fractions)."""
    t_train, t_test = split_tasks(y_train), split_tasks(y_test)
    first = t_test == 0
    if params is None:  # joint: one fit on every task's rows
        est = _replay_classifier(dict(generator=None), cfg, seed).fit(X_train, y_train)
        return est.score(X_test, y_test), [est.score(X_test[first], y_test[first])]
    est = _replay_classifier(params, cfg, seed)
    curve = []
    for k in range(len(_TASKS)):
        rows = t_train == k
        est.partial_fit(X_train[rows], y_train[rows], task=k)
        curve.append(est.score(X_test[first], y_test[first]))
    return est.score(X_test, y_test), curve


def task_incremental(columns, X_train, X_test, y_train, y_test, *, seed, cfg):
    """Mean accuracy after the last task, task-1 accuracy after each task, whether task 1's
    probabilities stayed bit-identical, the parameter counts and the forgetting of tasks 1-4."""
    from sklearn_papers.continual import ProgressiveNetworkClassifier
    from sklearn_papers.continual._probes import _task_incremental_scores

    est = ProgressiveNetworkClassifier(hidden_layer_sizes=(64, 64), columns=columns,
                                       max_epochs=cfg["pnn_epochs"], random_state=seed)
    s = _task_incremental_scores(est, X_train, y_train, X_test, y_test, split_tasks(y_train),
                                 split_tasks(y_test))
    return (float(np.mean(s["final"])), s["first_task"], s["identical"], est.n_parameters_,
            -backward_transfer(s["just_learnt"], s["final"]))


#: Labels per class of digits 5-9 in the transfer follow-up (10: the main table's runs).
TRANSFER_SIZES = (1, 2, 3, 5)

#: Replayed rows drawn per class of task 1 for the replay-quality follow-up.
_N_REPLAY_PROBE = 200
_REPLAY_HEADING = "Follow-up, why GAN replay closes less of the gap"


def replay_diagnostics(generator, X_train, X_test, y_train, y_test, *, seed, cfg):
    """The main table's class-incremental run of ``generator`` ("gan" or "vae"), probed after
    every task with replayed rows of digits 0 and 1: a dict of per-task lists of the
    measures of docs/papers/continual_replay.rst, and ``"tstr"``, ``"tstr_task1"``."""
    from sklearn_papers.continual._probes import _replay_probes

    est = _replay_classifier(METHODS[f"generative replay, {generator.upper()}"], cfg, seed)
    return _replay_probes(est, X_train, y_train, X_test, y_test, split_tasks(y_train),
                          n_probe=_N_REPLAY_PROBE, random_state=seed)


def transfer_curve(X_train, X_test, y_train, y_test, *, seed, cfg, sizes=TRANSFER_SIZES):
    """``{n: {"progressive": ..., "fresh column": ..., "fine-tuning": ...}}``: test accuracy
    on digits 5-9 learnt from ``n`` labels per class after a column on digits 0-4 (trained
    once, copied for every ``n`` of ``sizes``)."""
    from sklearn_papers.continual._probes import _transfer_curve

    return _transfer_curve(X_train, y_train, X_test, y_test, range(5), sizes=sizes,
                           hidden_layer_sizes=(64, 64), epochs=cfg["transfer_epochs"],
                           low_data_epochs=cfg["low_data_epochs"], random_state=seed)


def paired_interval(a, b):
    """``(mean, low, high)``: mean of ``a - b`` and its paired t interval (the claims')."""
    mean, (low, high) = _interval(np.subtract(a, b, dtype=float))
    return mean, low, high


def _main_verdicts(pct, pnn, forgetting):
    """``{key: Verdict}`` of :data:`CLAIMS` (``"VAE"``, ``"GAN"``: the gap closed per seed)."""
    ft, joint = pct[_FT], pct[_JOINT]
    out = {
        "forgets": judge(CLAIMS["forgets"], ft),
        "joint": judge(CLAIMS["joint"], joint),
        "prior": judge(CLAIMS["prior"], pct["prior-focused (VCL-like)"], ft),
        "identical": judge(CLAIMS["identical"],
                           np.asarray(pnn["per-task"]["identical"], dtype=float), 0.0),
        "forgetting": judge(CLAIMS["forgetting"], forgetting),
    }
    gap = joint - ft
    keep = gap > 0  # a seed where joint training is no better than fine-tuning has no gap
    for g in ("VAE", "GAN"):
        share = ((pct[f"generative replay, {g}"] - ft)[keep] / gap[keep] if keep.any()
                 else np.zeros(1))
        out[g] = judge(CLAIMS["closes"].at(g=g), share)
    return out


_CI = f"{int(CONFIDENCE * 100)} % CI"


def _plot_tasks(ax, ax2, curves, pnn_curves):
    steps = np.arange(1, len(_TASKS) + 1)
    for name, runs in curves.items():
        runs = 100 * np.asarray(runs)
        if runs.shape[1] == 1:  # joint: one point after the last task
            errorbar(ax, [steps[-1]], runs.T, marker="*", markersize=11, linestyle="none",
                      label=name)
        else:
            errorbar(ax, steps, runs.T, marker="o", label=name)
    ax.set(ylabel="task-1 test accuracy (%), digits 0-1",
           title="class-incremental (shared head, no task id)")
    ax.legend(fontsize=7)
    for name, runs in pnn_curves.items():
        errorbar(ax2, steps, 100 * np.asarray(runs).T, marker="o", label=name)
    ax2.set(ylabel="task-1 test accuracy (%), given the task id",
            title="task-incremental (head per task)")
    ax2.legend(fontsize=8)
    for axis in (ax, ax2):
        axis.set_xticks(steps)
        axis.set_xlabel("tasks learnt")


def _plot_transfer(ax, transfer):
    names = ["fresh column", "fine-tuning", "progressive"]
    data = [100 * np.asarray(transfer[n]) for n in names]
    for i in range(len(transfer["progressive"])):
        ax.plot(range(3), [d[i] for d in data], color="0.7", linewidth=0.8)
    ax.boxplot(data, positions=range(3), widths=0.4)
    ax.set_xticks(range(3), names)
    ax.set(ylabel="test accuracy on digits 5-9 (%)",
           title="forward transfer: 10 labels per class after a 0-4 column\n(one line per seed)")


#: The replay-quality measures after task 5 (the drift: its largest over the tasks), their
#: columns and scale (100: a fraction shown in %).
_REPLAY_COLUMNS = (
    ("real", "task-1 test rows, classifier (%)", 100),
    ("replayed", "replayed 0-1, classifier (%)", 100),
    ("oracle", "replayed 0-1, oracle (%)", 100),
    ("spread", "pixel spread / real", 1),
    ("coverage", "coverage of 0-1 test rows (%)", 100),
    ("precision", "precision (%)", 100),
    ("distance", "distance to nearest real / real's", 1),
    ("told_apart", "told from real rows (%)", 100),
    ("drift", "largest drift of replayed rows (pixels)", 1),
    ("tstr", "trained on samples: all 10 (%)", 100),
    ("tstr_task1", "trained on samples: 0-1 (%)", 100),
)

#: How far GAN replay must fall behind VAE replay (points) for a measure to explain the gap
#: (``told_apart``: how far it must be ahead), and the measure in words.
_CAUSE_MARGINS = {"oracle": (5, "the oracle's accuracy"), "coverage": (10, "coverage"),
                  "precision": (10, "precision"),
                  "told_apart": (-5, "being told from real rows"),
                  "tstr": (5, "training on samples")}


def _replay_followup(res, probes, closure, curves):
    """Markdown of the replay follow-up; ``curves``: the main table's, which the probes repeat."""
    def value(run, key):
        if key == "drift":
            return max(run[key])
        return run[key] if key.startswith("tstr") else run[key][-1]

    last = {g: {key: scale * np.asarray([value(r, key) for r in runs])
                for key, _, scale in _REPLAY_COLUMNS} for g, runs in probes.items()}
    rows = [{"replay": g.upper(), **{
        column: (f"{m[key].max():.3g}" if key == "drift" else
                 format_mean_std(m[key], 1 if scale == 100 else 2))
        for key, column, scale in _REPLAY_COLUMNS}} for g, m in last.items()]
    n_runs = len(probes["gan"])
    same = sum(list(r["real"]) == list(c) for g in probes for r, c in
               zip(probes[g], curves[f"generative replay, {g.upper()}"]))
    mean = {g: {k: float(np.mean(v)) for k, v in m.items()} for g, m in last.items()}
    frozen = max(last["gan"]["drift"].max(), last["vae"]["drift"].max()) == 0
    causes = [words for key, (margin, words) in _CAUSE_MARGINS.items()
              if np.sign(margin) * (mean["vae"][key] - mean["gan"][key]) > abs(margin)]
    caption = (f"{_REPLAY_HEADING} (gap closed: GAN {closure['GAN']:.2f}, VAE "
               f"{closure['VAE']:.2f}): the table's replay runs repeated ({n_runs} seeds; "
               f"task-1 accuracies equal to the table's runs' in {same}/{2 * n_runs}), probed "
               f"after task 5 with {_N_REPLAY_PROBE} replayed rows of each of digits 0 and 1.")
    return res.block(caption, rows) + [
        "- " + ("No replay of replay: the replayed rows are bit-identical after every task."
                if frozen else "The replayed rows moved after task 1."),
        "- Explanation: " + ("GAN replay falls behind VAE replay in " + ", ".join(causes)
                             if causes else "no measure separates GAN from VAE replay")
        + f" (**{'explained by the replayed samples' if causes else 'not explained'}**).",
    ]


def _plot_replay(ax, ax2, probes):
    steps = np.arange(1, len(_TASKS) + 1)
    for g, color in (("gan", "C3"), ("vae", "C0")):
        runs = probes[g]
        for key, style, label in (("real", "-o", "task-1 test rows"),
                                  ("replayed", "--s", "replayed rows of 0-1")):
            errorbar(ax, steps, 100 * np.asarray([r[key] for r in runs]).T, fmt=style,
                      color=color, label=f"{g.upper()}: {label}")
        bars = [100 * np.asarray([r[key][-1] for r in runs])
                for key in ("oracle", "coverage", "precision")]
        bars.append(100 * np.asarray([r["tstr"] for r in runs]))
        x = np.arange(len(bars)) + (0.2 if g == "vae" else -0.2)
        ax2.bar(x, [b.mean() for b in bars], width=0.4, color=color,
                yerr=[b.std() for b in bars], capsize=3, label=g.upper())
    ax.set_xticks(steps)
    ax.set(xlabel="tasks learnt", ylabel="classifier accuracy (%)",
           title="what the replay classifier keeps of digits 0-1")
    ax.legend(fontsize=7)
    ax2.set_xticks(range(4), ["oracle on\nsamples of 0-1", "coverage of\n0-1 test rows",
                              "precision of\nsamples of 0-1", "trained on samples,\n"
                              "tested on real"], fontsize=8)
    ax2.set(ylabel="%", title="quality of the replayed samples")
    ax2.legend(fontsize=8)


def _transfer_followup(res, curve_runs, transfer):
    """Rows, paired intervals (against the fresh column and fine-tuning) and summary line of
    the transfer against the labels budget; the 10-label row is the main table's runs."""
    sizes = sorted(curve_runs[0]) + [10]
    acc = {n: {k: 100 * np.asarray([r[n][k] for r in curve_runs]) for k in transfer}
           for n in sizes[:-1]}
    acc[10] = {k: 100 * np.asarray(v) for k, v in transfer.items()}
    rows, gaps, ft_gaps = [], {}, {}
    for n in sizes:
        a = acc[n]
        gaps[n] = paired_interval(a["progressive"], a["fresh column"])
        ft = ft_gaps[n] = paired_interval(a["progressive"], a["fine-tuning"])
        rows.append({
            "labels per class": n,
            "fresh column (%)": format_mean_std(a["fresh column"], 1),
            "progressive (%)": format_mean_std(a["progressive"], 1),
            "fine-tuning (%)": format_mean_std(a["fine-tuning"], 1),
            f"progressive - fresh (points, {_CI})":
                f"{gaps[n][0]:+.1f} [{gaps[n][1]:+.1f}, {gaps[n][2]:+.1f}]",
            "transfer": res.verdict(judge(CLAIMS_FOLLOWUP["transfer_at"].at(n=n),
                                          a["progressive"], a["fresh column"]),
                                    style="bare", digits=1),
            "progressive - fine-tuning (points)": f"{ft[0]:+.1f} [{ft[1]:+.1f}, {ft[2]:+.1f}]",
        })
    shown = ", ".join(str(n) for n in sizes if gaps[n][1] > 0) or "none"
    worse = ", ".join(str(n) for n in sizes if gaps[n][2] < 0) or "none"
    falling = bool(np.all(np.diff([gaps[n][0] for n in sizes]) <= 0))
    summary = (f"- Forward transfer against the labels budget: the progressive column beats "
               f"a fresh one ({_CI} above 0) at n = {shown}, loses at n = {worse}; the mean "
               f"gap falls with every added label: {'yes' if falling else 'no'}.")
    return rows, gaps, ft_gaps, summary


def _plot_transfer_curve(ax, sizes, gaps, ft_gaps):
    for g, label, shift in ((gaps, "progressive minus fresh column", 0.97),
                            (ft_gaps, "progressive minus fine-tuning", 1.03)):
        mean = np.array([g[n][0] for n in sizes])
        err = np.array([[g[n][0] - g[n][1] for n in sizes],
                        [g[n][2] - g[n][0] for n in sizes]])
        ax.errorbar(np.asarray(sizes) * shift, mean, yerr=err, fmt="-o", capsize=4,
                    label=label)
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.legend(fontsize=8)
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set(xlabel="labels per class of digits 5-9",
           ylabel="accuracy gap on digits 5-9 (points)",
           title=f"forward transfer against the labels budget\n(mean, paired {_CI})")


def _run_job(kind, name, seed, cfg):
    """One run, in a worker process with one torch thread (tiny networks)."""
    data = load_split(seed)
    with one_torch_thread():
        if kind == "ci":
            return class_incremental(METHODS[name], *data, seed=seed, cfg=cfg)
        if kind == "ti":
            return task_incremental(name, *data, seed=seed, cfg=cfg)
        if kind == "rq":
            return replay_diagnostics(name, *data, seed=seed, cfg=cfg)
        if kind == "tc":
            return transfer_curve(*data, seed=seed, cfg=cfg)
        return transfer_curve(*data, seed=seed, cfg=cfg, sizes=(10,))[10]


def _parts(jobs, cfg):
    """``(jobs, parts)``: a cached part per ``(kind, method, seed)`` job, GAN then VAE runs
    first so that the workers finish together."""
    def cost(job):
        name = str(job[1])
        return -("GAN" in name or name == "gan") - 0.5 * ("VAE" in name or name == "vae")

    jobs = sorted(jobs, key=cost)
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    probes = {"rq": {"probe": _N_REPLAY_PROBE}, "tc": {"probe": list(TRANSFER_SIZES)}}
    return jobs, [(f"{kind}/{name}/seed={seed}", _run_job, (kind, name, seed, cfg),
                   {**protocol, "kind": kind, "method": name, "seed": seed,
                    **probes.get(kind, {"params": METHODS[name] if kind == "ci" else None})})
                  for kind, name, seed in jobs]


def _main_jobs(ctx, cfg, seeds, methods=tuple(METHODS), pnn=True):
    """The main runs' jobs: class-incremental ``methods``, task-incremental, forward transfer."""
    return ([("ci", name, s) for name in methods for s in seeds]
            + [("ti", c, s) for s in seeds for c in ("per-task", "shared")] * pnn
            + [("ft", None, ctx.random_state + i) for i in range(cfg["transfer_seeds"])])


def _collect(jobs, results):
    """The parts' values: ``final`` and ``curves`` per method, ``pnn`` per column mode,
    ``transfer`` per model, ``probes`` per generator and the ``curve_runs``."""
    by = defaultdict(list)
    for (kind, name, _), value in zip(jobs, results):
        by[kind, name].append(value)
    measures = ("final", "curve", "identical", "params", "forgetting")
    return dict(final={n: [v[0] for v in by["ci", n]] for n in METHODS},
                curves={n: [v[1] for v in by["ci", n]] for n in METHODS},
                pnn={c: dict(zip(measures, map(list, zip(*by["ti", c]))))
                     for c in ("per-task", "shared")},
                transfer={k: [v[k] for v in by["ft", None]]
                          for k in ("progressive", "fresh column", "fine-tuning")},
                probes={g: by["rq", g] for g in ("gan", "vae")}, curve_runs=by["tc", None])


def _gap_closed(pct, name):
    """The share of the gap from fine-tuning to joint training (means) that ``name`` closes."""
    ft, joint = pct[_FT].mean(), pct[_JOINT].mean()
    return (pct[name].mean() - ft) / (joint - ft if joint > ft else np.nan)


def _main_text(result, cfg, runs, n_train):
    """Markdown of the class-incremental, task-incremental and forward-transfer tables."""
    pct = {name: 100 * np.asarray(v) for name, v in runs["final"].items()}
    pnn = {c: {**res, **{k: 100 * np.asarray(res[k]) for k in ("final", "curve", "forgetting")}}
           for c, res in runs["pnn"].items()}
    v = _main_verdicts(pct, pnn, pnn["shared"]["forgetting"])
    tr = {k: 100 * np.asarray(values) for k, values in runs["transfer"].items()}

    def say(*keys_digits):
        return [result.verdict_line(v[k], "outcome", digits=d) for k, d in keys_digits] + [""]

    md = result.block(
        f"Class-incremental: accuracy after the last task, mean ± std over {cfg['seeds']} "
        f"seeds ({n_train} training rows); `GenerativeReplayClassifier(hidden_layer_sizes="
        f"{cfg['hidden']}, max_epochs={cfg['max_epochs']})` with a VAE "
        f"({cfg['generator_steps']} steps) or GAN ({cfg['gan_steps']} steps) per class.",
        [{"method (class-incremental)": name,
          "final accuracy, 10 classes (%)": format_mean_std(pct[name], 1),
          "task 1 after task 5 (%)": format_mean_std(
              100 * np.asarray(runs["curves"][name])[:, -1], 1),
          "gap closed": f"{_gap_closed(pct, name):.2f}",
          "split MNIST anchor (%)": _ANCHORS.get(name, "")} for name in METHODS])
    md += say(("forgets", 1), ("joint", 1), ("VAE", 2), ("GAN", 2), ("prior", 1))
    md += result.block(
        f"Task-incremental, task id given at test time: `ProgressiveNetworkClassifier("
        f"hidden_layer_sizes=(64, 64), max_epochs={cfg['pnn_epochs']})` against "
        f"`columns='shared'`.",
        [{"method (task-incremental)": label,
          "mean accuracy over 5 tasks (%)": format_mean_std(pnn[c]["final"], 1),
          "task 1 after task 1 (%)": format_mean_std(pnn[c]["curve"][:, 0], 1),
          "task 1 after task 5 (%)": format_mean_std(pnn[c]["curve"][:, -1], 1),
          "forgetting, tasks 1-4 (points)": format_mean_std(pnn[c]["forgetting"], 1),
          "task 1 proba bit-identical": f"{sum(pnn[c]['identical'])}/{len(pnn[c]['identical'])}",
          "parameters after each task": ", ".join(map(str, pnn[c]["params"][-1]))}
         for c, label in (("per-task", "progressive networks"),
                          ("shared", "fine-tuning, head per task"))])
    md += say(("identical", 0), ("forgetting", 1))
    md += result.block(
        f"Forward transfer: digits 5-9 from 10 labels per class after a column on digits "
        f"0-4 ({cfg['transfer_epochs']} and {cfg['low_data_epochs']} epochs); mean ± std "
        f"over {cfg['transfer_seeds']} seeds.",
        [{"model (digits 5-9, 10 labels per class)": k,
          "test accuracy (%)": format_mean_std(tr[k], 1)}
         for k in ("progressive", "fresh column", "fine-tuning")],
        [judge(CLAIMS[key], tr["progressive"], tr[k])
         for k, key in (("fresh column", "transfer_fresh"), ("fine-tuning", "transfer_ft"))],
        digits=1)
    return md + ["Follow-up: `continual_followup` (why GAN replay closes less of the gap; "
                 "forward transfer against the labels budget)."]


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    seeds = run_seeds(ctx, cfg["seeds"])
    start = time.perf_counter()
    jobs, parts = _parts(_main_jobs(ctx, cfg, seeds), cfg)
    with ctx.progress(total=len(parts), desc="continual") as bar:
        runs = _collect(jobs, cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar,
                                           share=True))
    ctx.log(f"[continual] {len(jobs)} runs in {time.perf_counter() - start:.0f} s")
    result = Result()
    md = _main_text(result, cfg, runs, len(load_split(seeds[0])[0]))
    pnn_curves = {"progressive networks": runs["pnn"]["per-task"]["curve"],
                  "fine-tuning, head per task": runs["pnn"]["shared"]["curve"]}
    figures = [draw_figure(ctx, "continual_split_digits.png", _plot_tasks, runs["curves"],
                       pnn_curves, ncols=2, figsize=(12, 4.3)),
               draw_figure(ctx, "continual_forward_transfer.png", _plot_transfer,
                       runs["transfer"], figsize=(6, 4))]
    return result.done("\n".join(md), figures=figures, shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """Run the follow-ups; the main runs are ``continual``'s parts (computed if missing)."""
    cfg = PROTOCOL.settings(ctx.quick)
    follow = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = run_seeds(ctx, cfg["seeds"])
    main_jobs, main_parts = _parts(_main_jobs(
        ctx, cfg, seeds, methods=(_FT, _JOINT, "generative replay, VAE",
                                  "generative replay, GAN"), pnn=False), cfg)
    jobs, parts = _parts(
        [("rq", g, s) for g in ("gan", "vae") for s in seeds[:follow["replay_seeds"]]]
        + [("tc", None, ctx.random_state + i) for i in range(follow["curve_seeds"])], cfg)
    with ctx.progress(total=len(main_parts) + len(parts), desc="continual follow-up") as bar:
        values = cached_parts(ctx, main_parts, n_jobs=cfg["n_jobs"], progress=bar,
                              owner="continual")
        values += cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar)
    runs = _collect(main_jobs + jobs, values)
    pct = {name: 100 * np.asarray(v) for name, v in runs["final"].items() if v}
    closure = {g: _gap_closed(pct, f"generative replay, {g}") for g in ("VAE", "GAN")}
    result = Result()
    rows, gaps, ft_gaps, summary = _transfer_followup(result, runs["curve_runs"],
                                                      runs["transfer"])
    figures = [draw_figure(ctx, "continual_transfer_labels.png", _plot_transfer_curve,
                       [r["labels per class"] for r in rows], gaps, ft_gaps, figsize=(6, 4))]
    md = result.block(
        f"Forward transfer of `continual` from the first {', '.join(map(str, TRANSFER_SIZES))} "
        f"of each class's 10 labelled rows ({len(runs['curve_runs'])} seeds) and all 10 "
        f"({cfg['transfer_seeds']} seeds); intervals paired over each row's seeds.", rows)
    md += [summary, ""]
    if all(runs["probes"].values()):
        figures.append(draw_figure(ctx, "continual_replay_quality.png", _plot_replay,
                               runs["probes"], ncols=2))
        md += _replay_followup(result, runs["probes"], closure, runs["curves"])
    else:
        md.append(full_mode_only(
            "continual_followup", _REPLAY_HEADING,
            f"Why does GAN replay close less of the gap (GAN {closure['GAN']:.2f} vs VAE "
            f"{closure['VAE']:.2f} here)? The replay runs repeated and their samples probed "
            "after every task."))
    return result.done("\n".join(md), figures=figures,
                       shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


_PAPER = ("Farquhar & Gal 2018, Towards Robust Evaluations of Continual Learning / A Unifying "
          "Bayesian View of Continual Learning; Rusu et al. 2016, Progressive Neural Networks")

EXPERIMENT = Experiment(
    name="continual",
    title="Continual learning on split digits: generative replay and progressive networks",
    paper=_PAPER,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="continual_followup",
    title="Continual learning follow-up: why GAN replay closes less of the gap; forward "
          "transfer against the labels budget",
    paper=_PAPER,
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
