"""Continual learning on split digits: generative replay (Farquhar & Gal 2018) and
progressive networks (Rusu et al. 2016).

Split digits: ``load_digits`` with a stratified 70/30 train/test split per seed, cut into 5
tasks of 2 classes ({0, 1}, {2, 3}, ..., {8, 9}), learnt in order.

* Class-incremental (one shared head, no task id at test time),
  :class:`~sklearn_papers.continual.GenerativeReplayClassifier`: fine-tuning, prior-focused
  only (mean-field Gaussian, prior = previous posterior), deep generative replay with a VAE
  and with the paper's GAN, VGER (GAN replay + prior), exact replay of stored rows, and
  joint training on all rows (one fresh fit). Metric: accuracy over all 10 test classes
  after the last task, and accuracy on task 1's test rows after each task.
* Task-incremental, :class:`~sklearn_papers.continual.ProgressiveNetworkClassifier`:
  progressive columns vs fine-tuning one shared column with a head per task
  (``columns="shared"``); task 1's ``predict_proba`` compared bit for bit after every task.
* Forward transfer: a column on digits 0-4 (all their training rows), then digits 5-9 with
  10 labels per class, for a progressive second column, a fresh column on the 50 rows alone
  and fine-tuning the 0-4 network with a new head; paired differences over seeds (each seed
  draws the split, the 50 rows and the initialisations) with a t confidence interval.

Anchors (split MNIST, different data and networks): van de Ven & Tolias 2019, Table 4
(class-incremental: fine-tuning 19.9 %, deep generative replay 90.8 %, joint 97.9 %);
Avalanche's generative replay reaches about 75 % (0.71 of the fine-tuning-to-joint gap).
"""

import time

import numpy as np

from sklearn_papers.reproduce._digits import load_split, one_torch_thread
from sklearn_papers.reproduce._registry import Experiment, Section
from sklearn_papers.reproduce._report import format_mean_std, markdown_table

__all__ = ["EXPERIMENT"]

_TASKS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]

#: Class-incremental methods: label -> GenerativeReplayClassifier parameters (None: joint).
METHODS = {
    "fine-tuning": dict(generator=None),
    "prior-focused (VCL-like)": dict(generator=None, prior="previous"),
    "generative replay, VAE": dict(generator="vae"),
    "generative replay, GAN": dict(generator="gan"),
    "VGER (GAN replay + prior)": dict(generator="gan", prior="previous"),
    "exact replay (stored rows)": dict(generator="buffer"),
    "joint (all data, one fit)": None,
}

_ANCHORS = {"fine-tuning": "19.9", "generative replay, VAE": "90.8 (DGR)",
            "generative replay, GAN": "90.8 (DGR)", "joint (all data, one fit)": "97.9"}


def _config(quick):
    """Budgets. GANs get more steps than VAEs: on 125 rows of one digit class, a GAN's
    samples were classified as their digit (by a logistic regression on all of digits) at
    0.61-1.0 after 150 steps, 1.0 after 500 and 1000, with a pixel spread of 1.2, 2.0 and
    2.7 (real rows: 2.7); a VAE's at 1.0 after 150 steps (seed 0, digits 0, 3, 8)."""
    if quick:
        return dict(seeds=2, n_jobs=2, max_epochs=10, generator_steps=150, gan_steps=300,
                    pnn_epochs=10, transfer_seeds=10, transfer_epochs=10,
                    low_data_epochs=60, hidden=(64, 64))
    return dict(seeds=5, n_jobs=2, max_epochs=30, generator_steps=300, gan_steps=1000,
                pnn_epochs=40, transfer_seeds=20, transfer_epochs=40, low_data_epochs=150,
                hidden=(100, 100))


def split_tasks(y):
    """Task index (0-4) of every label of split digits."""
    return np.asarray(y) // 2


def class_incremental(params, X_train, X_test, y_train, y_test, *, seed, cfg):
    """Final accuracy over all classes and task-1 accuracy after each task (fractions)."""
    from sklearn_papers.continual import GenerativeReplayClassifier

    common = dict(hidden_layer_sizes=cfg["hidden"], max_epochs=cfg["max_epochs"],
                  generator_steps=cfg["generator_steps"], random_state=seed)
    t_train, t_test = split_tasks(y_train), split_tasks(y_test)
    first = t_test == 0
    if params is None:  # joint: one fit on every task's rows
        est = GenerativeReplayClassifier(**common, generator=None).fit(X_train, y_train)
        return est.score(X_test, y_test), [est.score(X_test[first], y_test[first])]
    if params.get("generator") == "gan":
        common["generator_steps"] = cfg["gan_steps"]
    est = GenerativeReplayClassifier(**common, **params)
    curve = []
    for k in range(len(_TASKS)):
        rows = t_train == k
        est.partial_fit(X_train[rows], y_train[rows], task=k)
        curve.append(est.score(X_test[first], y_test[first]))
    return est.score(X_test, y_test), curve


def task_incremental(columns, X_train, X_test, y_train, y_test, *, seed, cfg):
    """Mean task-incremental accuracy after the last task, task-1 accuracy after each task,
    whether task 1's probabilities stayed bit-identical, the parameter counts, and the
    average forgetting of tasks 1-4 (accuracy right after learning a task minus after the
    last task)."""
    from sklearn_papers.continual import ProgressiveNetworkClassifier

    est = ProgressiveNetworkClassifier(hidden_layer_sizes=(64, 64), columns=columns,
                                       max_epochs=cfg["pnn_epochs"], random_state=seed)
    t_train, t_test = split_tasks(y_train), split_tasks(y_test)
    curve, identical, reference, just_learnt = [], True, None, []
    for k in range(len(_TASKS)):
        rows = t_train == k
        est.partial_fit(X_train[rows], y_train[rows], task=k)
        just_learnt.append(est.score(X_test[t_test == k], y_test[t_test == k], task=k))
        proba = est.predict_proba(X_test, task=0)[:, :2]
        if reference is None:
            reference = proba
        identical &= bool(np.array_equal(proba, reference))
        curve.append(est.score(X_test[t_test == 0], y_test[t_test == 0], task=0))
    last = [est.score(X_test[t_test == k], y_test[t_test == k], task=k)
            for k in range(len(_TASKS))]
    forgetting = float(np.mean(np.subtract(just_learnt, last)[:-1]))
    return float(np.mean(last)), curve, identical, est.n_parameters_, forgetting


def forward_transfer(X_train, X_test, y_train, y_test, *, seed, cfg, n_per_class=10):
    """Test accuracy on digits 5-9 after learning them from ``n_per_class`` labels each:
    ``{"progressive": ..., "fresh column": ..., "fine-tuning": ...}``."""
    from sklearn_papers.continual import ProgressiveNetworkClassifier

    rng = np.random.RandomState(seed)
    low = np.concatenate([rng.choice(np.flatnonzero(y_train == c), n_per_class, replace=False)
                          for c in range(5, 10)])
    base = y_train < 5
    test = y_test >= 5
    common = dict(hidden_layer_sizes=(64, 64), random_state=seed)
    out = {}
    for name, columns in [("progressive", "per-task"), ("fine-tuning", "shared")]:
        est = ProgressiveNetworkClassifier(**common, columns=columns,
                                           max_epochs=cfg["transfer_epochs"])
        est.partial_fit(X_train[base], y_train[base], task="0-4")
        est.set_params(max_epochs=cfg["low_data_epochs"])
        est.partial_fit(X_train[low], y_train[low], task="5-9")
        out[name] = est.score(X_test[test], y_test[test], task="5-9")
    fresh = ProgressiveNetworkClassifier(**common, max_epochs=cfg["low_data_epochs"])
    fresh.fit(X_train[low], y_train[low])
    out["fresh column"] = fresh.score(X_test[test], y_test[test])
    return out


def paired_interval(a, b, level=0.95):
    """Mean of ``a - b`` and its two-sided t confidence interval (paired over seeds)."""
    from scipy import stats

    d = np.asarray(a, float) - np.asarray(b, float)
    half = stats.t.ppf(0.5 + level / 2, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def _ci_verdict(lo, hi):
    if lo > 0:
        return "holds (interval above 0)"
    if hi < 0:
        return "does not hold (interval below 0)"
    return "not shown (interval contains 0)"


def _plot(path, curves, pnn_curves):
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.3))
    steps = np.arange(1, len(_TASKS) + 1)
    for name, runs in curves.items():
        runs = 100 * np.asarray(runs)
        if runs.shape[1] == 1:  # joint: one point after the last task
            ax.errorbar([steps[-1]], runs.mean(0), yerr=runs.std(0), marker="*",
                        markersize=11, linestyle="none", label=name, capsize=3)
        else:
            ax.errorbar(steps, runs.mean(0), yerr=runs.std(0), marker="o", capsize=3,
                        label=name)
    ax.set_xticks(steps)
    ax.set_xlabel("tasks learnt")
    ax.set_ylabel("task-1 test accuracy (%), digits 0-1")
    ax.set_title("class-incremental (shared head, no task id)")
    ax.legend(fontsize=7)
    for name, runs in pnn_curves.items():
        runs = 100 * np.asarray(runs)
        ax2.errorbar(steps, runs.mean(0), yerr=runs.std(0), marker="o", capsize=3,
                     label=name)
    ax2.set_xticks(steps)
    ax2.set_xlabel("tasks learnt")
    ax2.set_ylabel("task-1 test accuracy (%), given the task id")
    ax2.set_title("task-incremental (head per task)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _plot_transfer(path, transfer):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    names = ["fresh column", "fine-tuning", "progressive"]
    data = [100 * np.asarray(transfer[n]) for n in names]
    for i in range(len(transfer["progressive"])):
        ax.plot(range(3), [d[i] for d in data], color="0.7", linewidth=0.8)
    ax.boxplot(data, positions=range(3), widths=0.4)
    ax.set_xticks(range(3), names)
    ax.set_ylabel("test accuracy on digits 5-9 (%)")
    ax.set_title("forward transfer: 10 labels per class after a 0-4 column\n"
                 "(one line per seed)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _run_job(kind, name, seed, cfg):
    """One run, in a worker process with one torch thread (tiny networks)."""
    data = load_split(seed)
    with one_torch_thread():
        if kind == "ci":
            return class_incremental(METHODS[name], *data, seed=seed, cfg=cfg)
        if kind == "ti":
            return task_incremental(name, *data, seed=seed, cfg=cfg)
        return forward_transfer(*data, seed=seed, cfg=cfg)


def run(ctx):
    """Run the experiment; see the module docstring. Runs are independent, seeded, cached
    parts (``--resume`` skips finished ones), run on ``n_jobs`` worker processes (one torch
    thread each)."""
    cfg = _config(ctx.quick)
    seeds = [ctx.random_state + i for i in range(cfg["seeds"])]
    start = time.perf_counter()
    final = {name: [] for name in METHODS}
    curves = {name: [] for name in METHODS}
    pnn = {c: {"final": [], "curve": [], "identical": [], "params": None, "forgetting": []}
           for c in ("per-task", "shared")}
    transfer = {"progressive": [], "fresh column": [], "fine-tuning": []}
    # Costliest first (GAN replay), so that the two workers finish together.
    order = {name: i for i, name in enumerate(sorted(
        METHODS, key=lambda n: -("GAN" in n) - 0.5 * ("VAE" in n)))}
    jobs = ([("ci", name, s) for name in sorted(METHODS, key=order.get) for s in seeds]
            + [("ti", c, s) for s in seeds for c in pnn]
            + [("ft", None, ctx.random_state + i) for i in range(cfg["transfer_seeds"])])
    from sklearn_papers.reproduce._parallel import cached_parts

    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    parts = [(f"{kind}/{name}/seed={seed}", _run_job, (kind, name, seed, cfg),
              {**protocol, "kind": kind, "method": name,
               "params": None if kind != "ci" else METHODS[name], "seed": seed})
             for kind, name, seed in jobs]
    with ctx.progress(total=len(parts), desc="continual") as bar:
        results = cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar)
    for (kind, name, seed), out in zip(jobs, results):
        if kind == "ci":
            final[name].append(out[0])
            curves[name].append(out[1])
        elif kind == "ti":
            acc, curve, identical, n_params, forgetting = out
            pnn[name]["forgetting"].append(forgetting)
            pnn[name]["final"].append(acc)
            pnn[name]["curve"].append(curve)
            pnn[name]["identical"].append(identical)
            pnn[name]["params"] = n_params
        else:
            for key, value in out.items():
                transfer[key].append(value)
    n_train = len(load_split(seeds[0])[0])
    seconds = time.perf_counter() - start
    ctx.log(f"[continual] {len(jobs)} runs in {seconds:.0f} s")

    pct = {name: 100 * np.asarray(v) for name, v in final.items()}
    ft, joint = pct["fine-tuning"].mean(), pct["joint (all data, one fit)"].mean()
    rows = []
    for name in METHODS:
        closure = (pct[name].mean() - ft) / (joint - ft) if joint > ft else float("nan")
        rows.append({
            "method (class-incremental)": name,
            "final accuracy, 10 classes (%)": format_mean_std(pct[name], 1),
            "task 1 after task 5 (%)": format_mean_std(100 * np.asarray(curves[name])[:, -1],
                                                       1),
            "gap closed": f"{closure:.2f}",
            "split MNIST anchor (%)": _ANCHORS.get(name, ""),
        })
    closure = {g: (pct[f"generative replay, {g}"].mean() - ft) / (joint - ft)
               for g in ("VAE", "GAN")}
    prior = pct["prior-focused (VCL-like)"].mean()

    ti_rows = []
    for c, label in (("per-task", "progressive networks"),
                     ("shared", "fine-tuning, head per task")):
        res = pnn[c]
        cur = 100 * np.asarray(res["curve"])
        ti_rows.append({
            "method (task-incremental)": label,
            "mean accuracy over 5 tasks (%)": format_mean_std(100 * np.asarray(res["final"]),
                                                              1),
            "task 1 after task 1 (%)": format_mean_std(cur[:, 0], 1),
            "task 1 after task 5 (%)": format_mean_std(cur[:, -1], 1),
            "forgetting, tasks 1-4 (points)": format_mean_std(
                100 * np.asarray(res["forgetting"]), 1),
            "task 1 proba bit-identical": f"{sum(res['identical'])}/{len(res['identical'])}",
            "parameters after each task": ", ".join(map(str, res["params"])),
        })
    forgetting = 100 * np.asarray(pnn["shared"]["forgetting"])

    tr = {k: 100 * np.asarray(v) for k, v in transfer.items()}
    vs_fresh = paired_interval(tr["progressive"], tr["fresh column"])
    vs_ft = paired_interval(tr["progressive"], tr["fine-tuning"])
    tr_rows = [{"model (digits 5-9, 10 labels per class)": k,
                "test accuracy (%)": format_mean_std(tr[k], 1)}
               for k in ("progressive", "fresh column", "fine-tuning")]

    fig = ctx.figure_path("continual_split_digits.png")
    _plot(fig, curves, {"progressive networks": pnn["per-task"]["curve"],
                        "fine-tuning, head per task": pnn["shared"]["curve"]})
    fig2 = ctx.figure_path("continual_forward_transfer.png")
    _plot_transfer(fig2, transfer)

    md = [
        f"Data: `load_digits`, stratified 70/30 split per seed ({n_train} train rows), 5 "
        f"tasks of 2 classes learnt in order; {cfg['seeds']} seeds (split, initialisation "
        f"and shuffling), mean ± std. Class-incremental models: "
        f"`GenerativeReplayClassifier(hidden_layer_sizes={cfg['hidden']}, "
        f"max_epochs={cfg['max_epochs']})`, one VAE ({cfg['generator_steps']} steps) or GAN "
        f"({cfg['gan_steps']} steps) per class per task, replay_ratio=1, prior_std=0.1, "
        f"kl_weight=0.01. "
        f"Anchors: split MNIST (van de Ven & Tolias 2019, Table 4), other data and "
        f"networks: context, not targets.",
        "",
        markdown_table(rows),
        "",
        f"- Fine-tuning forgets: {ft:.1f} % (target <= 25 %): "
        f"**{'holds' if ft <= 25 else 'does not hold'}**.",
        f"- Joint training: {joint:.1f} % (target >= 95 %): "
        f"**{'holds' if joint >= 95 else 'does not hold'}**.",
        f"- Generative replay closes >= 0.75 of the fine-tuning-to-joint gap: VAE "
        f"{closure['VAE']:.2f} (**{'holds' if closure['VAE'] >= 0.75 else 'does not hold'}**),"
        f" GAN {closure['GAN']:.2f} "
        f"(**{'holds' if closure['GAN'] >= 0.75 else 'does not hold'}**); Avalanche's "
        f"generative replay on split MNIST: 0.71.",
        f"- Prior-focused alone stays near fine-tuning with a shared head (the paper's "
        f"claim): {prior:.1f} % vs {ft:.1f} % "
        f"(**{'holds' if abs(prior - ft) <= 10 else 'does not hold'}**, within 10 points).",
        "",
        f"Task-incremental: `ProgressiveNetworkClassifier(hidden_layer_sizes=(64, 64), "
        f"max_epochs={cfg['pnn_epochs']})`, per-task columns with MLP adapters vs "
        f"`columns='shared'`; the task id is given at test time.",
        "",
        markdown_table(ti_rows),
        "",
        f"- Progressive networks: task 1's `predict_proba` bit-identical after tasks 2-5 in "
        f"{sum(pnn['per-task']['identical'])}/{len(seeds)} runs: "
        f"**{'holds' if all(pnn['per-task']['identical']) else 'does not hold'}**.",
        f"- Fine-tuning with per-task heads forgets: tasks 1-4 lose "
        f"{format_mean_std(forgetting, 1)} points of accuracy on average between right "
        f"after learning them and after task 5 (progressive networks: "
        f"{format_mean_std(100 * np.asarray(pnn['per-task']['forgetting']), 1)}): "
        f"**{'holds' if forgetting.mean() > 1 else 'does not hold'}** (measurably: > 1 point).",
        "",
        f"Forward transfer: a column trained on digits 0-4 ({cfg['transfer_epochs']} "
        f"epochs), then digits 5-9 from 10 labelled rows per class ({cfg['low_data_epochs']} "
        f"epochs), tested on every test row of 5-9; {cfg['transfer_seeds']} seeds, each "
        f"drawing the split, the 50 rows and the initialisations.",
        "",
        markdown_table(tr_rows),
        "",
        f"- Progressive minus fresh column: {vs_fresh[0]:+.1f} points, 95 % CI "
        f"[{vs_fresh[1]:+.1f}, {vs_fresh[2]:+.1f}] (paired t): forward transfer "
        f"**{_ci_verdict(vs_fresh[1], vs_fresh[2])}**.",
        f"- Progressive minus fine-tuning: {vs_ft[0]:+.1f} points, 95 % CI "
        f"[{vs_ft[1]:+.1f}, {vs_ft[2]:+.1f}]: "
        f"**{_ci_verdict(vs_ft[1], vs_ft[2])}** (the paper finds fine-tuning a strong "
        f"transfer baseline that progressive networks match or beat).",
    ]
    full = _config(False)
    shortened = (
        f"{cfg['seeds']} seeds instead of {full['seeds']}, hidden layers {cfg['hidden']} "
        f"instead of {full['hidden']}, {cfg['max_epochs']} classifier epochs and "
        f"{cfg['generator_steps']} VAE / {cfg['gan_steps']} GAN steps per class instead of "
        f"{full['max_epochs']} and {full['generator_steps']} / {full['gan_steps']}, "
        f"{cfg['pnn_epochs']} PNN epochs "
        f"instead of {full['pnn_epochs']}; forward transfer {cfg['transfer_seeds']} seeds "
        f"(full: {full['transfer_seeds']}), {cfg['transfer_epochs']}/{cfg['low_data_epochs']} "
        f"epochs (full: {full['transfer_epochs']}/{full['low_data_epochs']})."
        if ctx.quick else "")
    return Section(markdown="\n".join(md), figures=[fig, fig2], shortened=shortened)


EXPERIMENT = Experiment(
    name="continual",
    title="Continual learning on split digits: generative replay and progressive networks",
    paper=("Farquhar & Gal 2018, Towards Robust Evaluations of Continual Learning / "
           "A Unifying Bayesian View of Continual Learning; Rusu et al. 2016, Progressive "
           "Neural Networks"),
    run=run,
)
