"""Khosla et al. (2020), supervised contrastive learning: linear probes on digits.

Checks SupCon L_out >= L_in and SupCon >= cross-entropy (linear-probe accuracy on
``load_digits``); the follow-up compares L_out and L_in where the positives are biased.
Claims: CLAIMS and CLAIMS_FOLLOWUP below; setup: docs/papers/supcon.rst.
"""

from functools import partial

import numpy as np

from sklearn_papers.reproduce._claims import Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import Protocol, over_seeds, save_figure, subplots
from sklearn_papers.reproduce._digits import (
    CONV_ENCODER,
    load_split,
    one_torch_thread,
    subsample,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP"]

_METRIC = "linear-probe test accuracy (%)"

CLAIMS = declare(
    Claim("L_out >= L_in (2 views)", _METRIC, "paired interval", key="out_vs_in",
          arms=("SupCon L_out, 2 views", "SupCon L_in, 2 views")),
    Claim("SupCon L_out >= cross-entropy", _METRIC, "paired interval", key="vs_ce",
          arms=("SupCon L_out, 2 views", "cross-entropy")),
)

PROTOCOL = Protocol(
    full=dict(seeds=5, epochs=60, supcon=((2, "out"), (2, "in"), (4, "out"), (4, "in")),
              few_labels=True),
    quick=dict(seeds=3, epochs=8, supcon=((2, "out"), (2, "in"), (4, "out")),
               few_labels=False),
    shortened="{epochs} epochs instead of 60 and {seeds} seeds instead of 5; L_in with 4 "
              "views and the 10 %-labels variant skipped.",
)

CLAIMS_FOLLOWUP = declare(
    Claim("L_out - L_in grows from {few} to {many} views", "linear-probe accuracy (points)",
          "paired interval", key="grows", arms=("{many} views", "{few} views")),
    Claim("L_out beats L_in at {views} views", "linear-probe accuracy", "paired interval",
          key="ahead_at"),
    Claim("L_out beats L_in at every number of views", "linear-probe accuracy", "all of",
          key="ahead", arms=("L_out", "L_in")),
)

PROTOCOL_FOLLOWUP = Protocol(
    full=dict(seeds=3, epochs=30, batch_size=32, views=(2, 4, 8)),
    quick=dict(seeds=1, epochs=4, views=(2, 6)),
)

# Quoted from the paper (different datasets and networks: context, not targets).
_PAPER_TOP1 = {  # ResNet-50 top-1 accuracy (%)
    "SupCon L_out": "78.7 (ImageNet, Table 1); 96.0 (CIFAR-10); 76.5 (CIFAR-100)",
    "SupCon L_in": "67.4 (ImageNet, Table 1)",
    "cross-entropy": "95.0 (CIFAR-10); 75.3 (CIFAR-100)",
}

#: Worker processes for the independent fits (the results do not depend on it).
_N_JOBS = 2


def _probe(embedder, X_train, y_train, X_test, y_test, keep=False, knn=False):
    """Linear-probe test accuracy (%) of ``embedder`` (fitted in it), and its test
    embedding (``keep``), its 1-NN test accuracy (%) (``knn``) or None."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(embedder, LogisticRegression(max_iter=3000)).fit(X_train, y_train)
    emb = pipe[0]
    if knn:
        nn = KNeighborsClassifier(1).fit(emb.transform(X_train), y_train)
        return 100 * pipe.score(X_test, y_test), 100 * nn.score(emb.transform(X_test), y_test)
    return 100 * pipe.score(X_test, y_test), (emb.transform(X_test) if keep else None)


def _methods(cfg):
    """``{method name: embedder class with the protocol's settings}``; give ``random_state``."""
    from sklearn_papers.contrastive import CrossEntropyEmbedder, SupConEmbedder

    common = dict(**CONV_ENCODER, max_epochs=cfg["epochs"], batch_size=256, lr=2e-3)
    methods = {f"SupCon L_{variant}, {n_views} views": partial(
        SupConEmbedder, variant=variant, n_views=n_views, temperature=0.1, **common)
        for n_views, variant in cfg["supcon"]}
    methods["cross-entropy"] = partial(CrossEntropyEmbedder, **common)
    return methods


def _plot_embeddings(ctx, embeddings, y_test, seed):
    """2-D PCA of the test embeddings of three methods (seed ``seed``), coloured by digit."""
    from sklearn.decomposition import PCA

    fig, axes = subplots(1, 3, figsize=(13, 4.2))
    for ax, name in zip(axes, ["SupCon L_out, 2 views", "SupCon L_in, 2 views",
                               "cross-entropy"]):
        pts = PCA(n_components=2).fit_transform(embeddings[name])
        sc = ax.scatter(pts[:, 0], pts[:, 1], c=y_test, cmap="tab10", s=6)
        ax.set(title=f"{name}\nPCA of test embeddings (seed {seed})", xticks=[], yticks=[])
    fig.colorbar(sc, ax=axes[-1], ticks=range(10), label="digit")
    return save_figure(fig, ctx, "supcon_digits_pca.png", dpi=90)


def _linear_probes(ctx, cfg, seeds, split):
    """``{method: [linear-probe accuracy per seed]}`` and the first seed's test embeddings
    of the 2-view methods and cross-entropy, one cached part per fit."""
    methods = _methods(cfg)
    jobs = [(name, s, s == seeds[0] and ("2 views" in name or name == "cross-entropy"))
            for s in seeds for name in methods]
    parts = []
    for name, seed, keep in jobs:
        embedder = methods[name](random_state=seed)
        parts.append((f"{name}/seed={seed}", _probe, (embedder, *split, keep),
                      {**embedder.get_params(), "keep": keep}))
    with ctx.progress(total=len(parts), desc="supcon: linear probes") as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar)
    acc = {name: [] for name in methods}
    for (name, _, _), (score, _) in zip(jobs, values):
        acc[name].append(score)
    return acc, {name: Z for (name, _, keep), (_, Z) in zip(jobs, values) if keep}


def _few_labels(ctx, cfg, seeds, split):
    """Linear-probe accuracies with 10 % of the training labels, ``{method: [per seed]}``
    for SupCon L_out (2 views) and cross-entropy; ``{}`` when the protocol skips them."""
    if not cfg["few_labels"]:
        return {}
    X_train, y_train, X_test, y_test = split
    X_few, y_few = subsample(X_train, y_train, 0.1, ctx.random_state)
    methods = _methods(cfg)
    return {name: over_seeds(lambda s, name=name: _probe(
        methods[name](random_state=s), X_few, y_few, X_test, y_test)[0],
        ctx.progress(seeds, desc=f"supcon: 10% labels, {name}"))
        for name in ("SupCon L_out, 2 views", "cross-entropy")}


def _rows(acc, few):
    """Rows of the table: each method's accuracy, with 10 % of the labels, and the paper's."""
    rows = []
    for name, values in acc.items():
        row = {"method (same conv encoder)": name,
               "ours: test accuracy (%)": format_mean_std(values, 1)}
        if few:  # only L_out (2 views) and cross-entropy are run with 10 % of the labels
            row["ours, 10 % of labels (%)"] = (format_mean_std(few[name], 1) if name in few
                                               else "not run")
        row["paper: top-1 (%), other datasets"] = _PAPER_TOP1.get(name.split(",")[0], "")
        rows.append(row)
    return rows


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    X_train, X_test, y_train, y_test = load_split(ctx.random_state)
    split = (X_train, y_train, X_test, y_test)
    seeds = PROTOCOL.seeds(ctx)
    with one_torch_thread():
        acc, embeddings = _linear_probes(ctx, cfg, seeds, split)
        few = _few_labels(ctx, cfg, seeds, split)
    fig_path = _plot_embeddings(ctx, embeddings, y_test, seeds[0])

    res = Result()
    md = [
        f"Linear-probe test accuracy (%) over {len(seeds)} seeds, {len(X_train)} / "
        f"{len(X_test)} split, {cfg['epochs']} epochs; the paper's column: other datasets.",
        "### SupCon vs cross-entropy (linear probe)",
        res.table(_rows(acc, few)),
        # each claim's arms are the names of the methods it compares
        res.table(res.verdict_rows([judge(c, *(acc[arm] for arm in c.arms))
                                    for c in CLAIMS.values()])),
    ]
    return res.done("\n\n".join(md), figures=[fig_path], shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """Run :func:`followup` on the main experiment's split as an experiment of its own."""
    X_train, X_test, y_train, y_test = load_split(ctx.random_state)
    res = Result()
    md, _ = followup(ctx, res, X_train, y_train, X_test, y_test)
    return res.done(md, shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


def _followup_accuracies(ctx, cfg, seeds, split):
    """``{(views, variant): [(probe, 1-NN) per seed]}``, one cached part per fit."""
    from sklearn_papers.contrastive import SupConEmbedder

    jobs = [(v, variant, s) for v in cfg["views"] for variant in ("out", "in") for s in seeds]
    parts = []
    for n_views, variant, seed in jobs:
        params = dict(**CONV_ENCODER, variant=variant, n_views=n_views, temperature=0.1,
                      max_epochs=cfg["epochs"], batch_size=cfg["batch_size"], lr=2e-3,
                      weight_decay=1e-4, norm="batch", random_state=seed)
        parts.append((f"followup/views={n_views}/L_{variant}/seed={seed}", _probe,
                      (SupConEmbedder(**params), *split, False, True), params))
    with one_torch_thread(), ctx.progress(total=len(parts), desc="supcon follow-up") as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar)
    acc = {}
    for (n_views, variant, _), value in zip(jobs, values):
        acc.setdefault((n_views, variant), []).append(value)
    return acc


def _followup_rows(acc, views):
    """One row per number of views: probe and 1-NN accuracy of both losses."""
    rows = []
    for v in views:
        col = {(var, i): [a[i] for a in acc[(v, var)]] for var in ("out", "in") for i in (0, 1)}
        rows.append({"views per image": v,
                     **{f"L_{var}: {what} (%)": format_mean_std(col[(var, i)], 1)
                        for i, what in enumerate(("probe", "1-NN")) for var in ("out", "in")},
                     "L_out - L_in, probe (points)":
                         f"{np.mean(col[('out', 0)]) - np.mean(col[('in', 0)]):+.1f}"})
    return rows


def followup(ctx, res, X_train, y_train, X_test, y_test):
    """L_out vs L_in at batch :data:`PROTOCOL_FOLLOWUP`'s ``batch_size`` with a growing
    number of views, where most positives are views of the anchor's own image (Khosla et
    al. 2020, Sec. 3.2.1). Keeps its tables and verdicts in ``res``; returns ``(markdown,
    accuracies)``."""
    cfg = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = PROTOCOL_FOLLOWUP.seeds(ctx)
    acc = _followup_accuracies(ctx, cfg, seeds, (X_train, y_train, X_test, y_test))
    probe = {key: [a[0] for a in values] for key, values in acc.items()}
    gap = {v: np.subtract(probe[(v, "out")], probe[(v, "in")]) for v in cfg["views"]}
    few_v, many_v = cfg["views"][0], cfg["views"][-1]
    grows = judge(CLAIMS_FOLLOWUP["grows"].at(few=few_v, many=many_v), gap[many_v], gap[few_v])
    at_views = [judge(CLAIMS_FOLLOWUP["ahead_at"].at(views=v), probe[(v, "out")],
                      probe[(v, "in")]) for v in cfg["views"]]
    md = [
        "#### Follow-up: L_out vs L_in where the positives are biased",
        f"Batch {cfg['batch_size']}, {', '.join(map(str, cfg['views']))} views per image, "
        f"{cfg['epochs']} epochs, seeds {seeds}; otherwise as in `supcon`.",
        res.table(_followup_rows(acc, cfg["views"])),
        res.table(res.verdict_rows([grows])),
        f"{CLAIMS_FOLLOWUP['ahead'].statement}: "
        + res.verdict(all_of(*at_views), claim=CLAIMS_FOLLOWUP["ahead"], parts=at_views,
                      style="parts") + ".",
    ]
    return "\n\n".join(md), acc


EXPERIMENT = Experiment(
    name="supcon",
    title="Supervised contrastive learning vs cross-entropy on digits (linear probe)",
    paper="Khosla et al. 2020, Supervised Contrastive Learning, NeurIPS",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="supcon_followup",
    title="SupCon follow-up: L_out vs L_in where the positives are biased",
    paper="Khosla et al. 2020, Supervised Contrastive Learning, NeurIPS",
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
