"""Wu & He (2018), group normalisation: error against batch size.

Checks that group norm keeps its error at small batches where batch norm degrades, on
digits; the follow-up repeats it on ``Shapes(32)`` with a deeper net and equal epochs.
Claims: CLAIMS and CLAIMS_FOLLOWUP below; setup: docs/papers/group_norm.rst.
"""

import time
from itertools import product

import numpy as np

from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._digits import (
    CONV_ENCODER,
    load_split,
    subsample,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT"]

# Wu & He's ImageNet ResNet-50 top-1 error (%) by images per GPU (context, not targets).
_PAPER = {("batch", 2): 34.7, ("group", 2): 24.1, ("batch", 32): 23.6, ("group", 32): 24.1}
_BATCH_SIZES = (2, 4, 16, 64)

_ERROR = "test error (%)"

CLAIMS = declare(
    Claim("GN at least as good as BN at batch {batch}", _ERROR, "paired interval",
          higher_is_better=False, key="small_batch", arms=("group norm", "batch norm"),
          paper="24.1 vs 34.7 % top-1 error at 2 images per GPU (ImageNet, ResNet-50)"),
)

PROTOCOL = Protocol(
    full=dict(norms=("batch", "group", "layer"), seeds=3, train=None, epochs=15,
              min_steps=3000),
    quick=dict(norms=("batch", "group"), seeds=2, train=300, epochs=8, min_steps=1500),
    shortened="{train} training images instead of the whole training split, at least "
              "{epochs} epochs and {min_steps} steps instead of 15 and 3000, {seeds} seeds "
              "instead of 3; layer norm skipped (the full run adds it).",
)

_AHEAD = "group norm at least as good as batch norm at batch {small}"

#: Batch norm scored with its running averages is the arm ``"batch: running"``.
CLAIMS_FOLLOWUP = declare(
    Claim(_AHEAD[0].upper() + _AHEAD[1:], _ERROR, "paired interval", higher_is_better=False,
          key="ahead", arms=("group", "batch: running")),
    Claim("{budget}: " + _AHEAD, _ERROR, "paired interval", higher_is_better=False,
          key="ahead_at", arms=("group", "batch: running")),
    Claim("{budget}: batch norm's error higher at batch {small} than at {big}", _ERROR,
          "paired interval", key="bn_worse", arms=("batch {small}", "batch {big}")),
    Claim("batch {batch} lower at {epochs} epochs (both norms pooled)", _ERROR,
          "paired interval", higher_is_better=False, key="longer",
          arms=("equal epochs, long", "equal epochs, short")),
)

#: Shapes at 32 x 32, a 5-block conv net, fixed optimiser steps; then the equal-epoch
#: budgets (:func:`_equal_epoch_budgets`), ``long`` in the full run only (its cost).
PROTOCOL_FOLLOWUP = Protocol(
    full=dict(n_train=5000, n_test=2000, steps={2: 6000, 32: 1500}, seeds=3,
              batch_sizes=(2, 32), channels=(16, 32, 32, 64, 64), budgets=("short", "long")),
    quick=dict(n_train=1000, n_test=500, steps={2: 800, 32: 300}, seeds=1,
               channels=(8, 16, 16, 32, 32), budgets=("short",)),
)

#: Worker processes for the independent fits (the results do not depend on it).
_N_JOBS = 2

#: The follow-up's figure: error at batch 2 and 32 with fixed steps and equal epochs.
_FOLLOWUP_FIGURE = "group_norm_equal_epochs.png"
#: The arms of the equal-epoch comparison: batch norm with its running averages, group norm.
_RUNNING_GROUP = ("batch: running", "group")


def _epochs(cfg, n_fit, batch_size):
    """``cfg["epochs"]``, raised to give at least ``cfg["min_steps"]`` steps (group norm
    is slower to start than batch norm)."""
    steps_per_epoch = -(-n_fit // batch_size)
    return max(cfg["epochs"], -(-cfg["min_steps"] // steps_per_epoch))


def _lr(batch_size):
    """AdamW learning rate: 2e-3 at batch 16, scaled by sqrt(batch / 16)."""
    return 2e-3 * float(np.sqrt(batch_size / 16))


def _fit_error(params, X_fit, y_fit, X_test, y_test):
    """Test error (%) of the linear layer of one ``CrossEntropyEmbedder(**params)``."""
    import torch

    from sklearn_papers.contrastive import CrossEntropyEmbedder

    est = CrossEntropyEmbedder(**params).fit(X_fit, y_fit)
    with torch.no_grad():
        logits = est.net_.module_.classifier(torch.as_tensor(est.transform(X_test)))
    return 100 * float(np.mean(est.classes_[logits.argmax(dim=1).numpy()] != y_test))


def _plot(ctx, err, norms):
    """Error against decreasing batch size (Wu & He's Fig. 1); the paper's points beside."""
    fig, (ax, ax_paper) = subplots(1, 2, figsize=(11, 4.2),
                                       gridspec_kw={"width_ratios": [3, 2]})
    for norm in norms:
        e = [err[(norm, bs)] for bs in _BATCH_SIZES]
        ax.errorbar(_BATCH_SIZES, [np.mean(v) for v in e], yerr=[np.std(v) for v in e],
                    marker="o", capsize=3, label=f"{norm} norm")
    ax.set_xscale("log", base=2)
    ax.set_xticks(_BATCH_SIZES, [str(b) for b in _BATCH_SIZES])
    ax.invert_xaxis()
    ax.set(xlabel="batch size (images per step)", ylabel="test error (%)",
           title="ours: conv classifier on digits (mean ± std over seeds)")
    for norm in ("batch", "group"):  # markers only: the curve between them is not quoted
        ax_paper.plot([32, 2], [_PAPER[(norm, 32)], _PAPER[(norm, 2)]], marker="s",
                      markersize=8, linestyle="none", label=f"{norm} norm")
    ax_paper.set_xscale("log", base=2)
    ax_paper.set_xticks([32, 2], ["32", "2"])
    ax_paper.set(xlim=(48, 1.4), xlabel="batch size (images per GPU)",
                 ylabel="top-1 error (%)",
                 title="paper: ResNet-50 on ImageNet\n(Wu & He 2018, quoted points)")
    for a in (ax, ax_paper):
        a.legend()
    return save_figure(fig, ctx, "group_norm_digits.png", dpi=90)


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    X_train, X_test, y_train, y_test = load_split(ctx.random_state)
    X_fit, y_fit = X_train, y_train
    if cfg["train"] is not None:
        X_fit, y_fit = subsample(X_train, y_train, cfg["train"], ctx.random_state)
    start = time.perf_counter()
    err = {}
    jobs = [(norm, bs, seed) for norm in cfg["norms"]
            for bs in _BATCH_SIZES for seed in PROTOCOL.seeds(ctx)]
    params = [dict(**CONV_ENCODER, norm=norm, num_groups=8, batch_size=bs, lr=_lr(bs),
                   max_epochs=_epochs(cfg, len(X_fit), bs), weight_decay=1e-4,
                   augment="default", random_state=seed) for norm, bs, seed in jobs]
    # one cached part per fit (``--resume`` skips the finished ones), one torch thread each
    parts = [(f"{norm}/batch={bs}/seed={seed}", _fit_error, (p, X_fit, y_fit, X_test, y_test),
              {**p, "n_fit": len(X_fit)}) for (norm, bs, seed), p in zip(jobs, params)]
    with one_torch_thread(), ctx.progress(total=len(jobs),
                                          desc="group_norm: norms x batch sizes") as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar)
    for (norm, bs, _), value in zip(jobs, values):
        err.setdefault((norm, bs), []).append(value)
    ctx.log(f"[group_norm] {len(jobs)} fits done in {time.perf_counter() - start:.0f} s")

    rows = [{"batch size": bs, **{f"ours {norm} norm: test error (%)":
                                  format_mean_std(err[(norm, bs)], 1) for norm in cfg["norms"]}}
            for bs in _BATCH_SIZES]
    rows += [{"batch size": f"paper, ImageNet, {bs}/GPU",
              **{f"ours {norm} norm: test error (%)": f"{_PAPER[(norm, bs)]}"
                 for norm in ("batch", "group")}} for bs in (2, 32)]
    fig_path = _plot(ctx, err, cfg["norms"])
    res = Result()
    bs0 = _BATCH_SIZES[0]
    budget = ", ".join(f"batch {bs}: {_epochs(cfg, len(X_fit), bs)}" for bs in _BATCH_SIZES)
    md = [
        f"Test error (%) of the classifier's own linear layer on {len(X_test)} test images, "
        f"mean ± std over {cfg['seeds']} seeds; {len(X_fit)} training images; epochs "
        f"{budget}. Paper rows: ResNet-50 on ImageNet, as context.",
        res.table(rows),
        res.table(res.verdict_rows([judge(CLAIMS["small_batch"].at(batch=bs0),
                                          err[("group", bs0)], err[("batch", bs0)])])),
    ]
    return res.done("\n\n".join(md), figures=[fig_path], shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """Run :func:`followup` as an experiment of its own."""
    res = Result()
    md, _ = followup(ctx, res)
    return res.done(md, figures=[ctx.figure_path(_FOLLOWUP_FIGURE)],
                    shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


# -- follow-up: the paper's conditions at our scale -----------------------------------------

def _shapes_task(cfg, seed):
    """Train and test images of ``Shapes(32)`` (rows of 1024 floats) and their shapes."""
    from sklearn_papers.datasets import make_shapes

    rng = np.random.RandomState(seed)
    (X_train, f_train), (X_test, f_test) = (make_shapes(n, random_state=rng)
                                            for n in (cfg["n_train"], cfg["n_test"]))
    return [X_train, f_train[:, 0].copy(), X_test, f_test[:, 0].copy()]


def _train_deep(norm, batch_size, seed, cfg, X_train, y_train):
    """Train the deep conv classifier with AdamW for a fixed number of steps."""
    import torch

    from sklearn_papers.nn import ConvEncoder
    from sklearn_papers.nn._skorch import torch_seeded

    with torch_seeded(seed):
        model = ConvEncoder(X_train.shape[1], 3, image_shape=(32, 32),
                            channels=cfg["channels"], norm=norm, num_groups=8)
        opt = torch.optim.AdamW(model.parameters(), lr=_lr(batch_size), weight_decay=1e-4)
        gen = np.random.default_rng(seed)
        X_t, y_t = torch.as_tensor(X_train), torch.as_tensor(y_train)
        model.train()
        order, pos = gen.permutation(len(X_t)), 0
        for _ in range(cfg["steps"][batch_size]):
            if pos + batch_size > len(order):
                order, pos = gen.permutation(len(X_t)), 0
            idx = torch.as_tensor(order[pos:pos + batch_size])
            pos += batch_size
            loss = torch.nn.functional.cross_entropy(model(X_t[idx]), y_t[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model


def _followup_fit(norm, bs, seed, cfg, X_tr, y_tr, X_te, y_te):
    """Train one follow-up net; ``(test errors by statistics mode, seconds)``."""
    import torch

    from sklearn_papers.nn._encoders import _batch_norm_errors

    start = time.perf_counter()
    model = _train_deep(norm, bs, seed, cfg, X_tr, y_tr)
    if norm == "batch":
        scores = _batch_norm_errors(model, X_tr, X_te, y_te, bs)
    else:  # no batch statistics: one error, in eval mode
        model.eval()
        with torch.no_grad():
            pred = model(torch.as_tensor(X_te)).argmax(1).numpy()
        scores = {"": 100.0 * float(np.mean(pred != y_te))}
    return scores, time.perf_counter() - start


def _epochs_of(cfg, bs, steps=None):
    """Epochs of ``steps`` steps at batch ``bs`` (default: the follow-up's own steps)."""
    steps = cfg["steps"][bs] if steps is None else steps
    return steps * bs / cfg["n_train"]


def _equal_epoch_budgets(cfg):
    """Steps per batch size of two equal-epoch budgets, ``{"short": {bs: steps}, "long":
    {bs: steps}}``: each keeps one batch size's fixed steps and gives the other as many
    epochs (``short``: the small batch's epochs, ``long``: the large batch's)."""
    small, big = cfg["batch_sizes"]
    steps = cfg["steps"]
    short = {small: steps[small], big: max(1, round(steps[small] * small / big))}
    long = {small: max(1, round(steps[big] * big / small)), big: steps[big]}
    return {"short": short, "long": long}


def _followup_parts(cfg, seeds):
    """The fixed-step runs (keys and params kept, so ``--resume`` reads old caches) and
    those the equal-epoch budgets add, the longest first (so that the workers finish
    together): ``(parts, runs)``, ``runs[i] = (norm, batch_size, steps, seed)``."""
    names, cfg = cfg["budgets"], {k: v for k, v in cfg.items() if k != "budgets"}
    data = {seed: _shapes_task(cfg, seed) for seed in seeds}
    runs = [(norm, bs, cfg["steps"][bs], seed) for bs in cfg["batch_sizes"] for seed in seeds
            for norm in ("batch", "group")]
    budgets = _equal_epoch_budgets(cfg)
    for name in names:
        for (bs, n), seed, norm in product(budgets[name].items(), seeds, ("batch", "group")):
            if (norm, bs, n, seed) not in runs:
                runs.append((norm, bs, n, seed))
    runs.sort(key=lambda r: -r[2] * r[1] ** 0.5)
    parts = []
    for norm, bs, n, seed in runs:
        sub, key = cfg, f"followup/{norm}/batch={bs}/seed={seed}"
        if n != cfg["steps"][bs]:  # an equal-epoch run
            sub = {**cfg, "steps": {bs: n}}
            key = f"followup/equal-epochs/{norm}/batch={bs}/steps={n}/seed={seed}"
        parts.append((key, _followup_fit, (norm, bs, seed, sub, *data[seed]),
                      {**sub, "norm": norm}))
    return parts, runs


def followup(ctx, res):
    """Wu & He's conditions at our scale: a deeper net on ``Shapes(32)``, batch norm scored
    with three kinds of statistics, then equal epochs (:func:`_equal_epoch_budgets`).

    Keeps its tables and verdicts in ``res``; returns ``(markdown, errors)``;
    ``errors[(arm, batch_size)]`` is a list over seeds of the fixed-step runs.
    """
    cfg = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    arms = ("batch: running", "batch: precise", "batch: test batches", "group")
    parts, runs = _followup_parts(cfg, PROTOCOL_FOLLOWUP.seeds(ctx))
    with one_torch_thread(), ctx.progress(total=len(parts),
                                          desc="group_norm follow-up") as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar)
    by_steps = {}  # (arm, batch size, steps): errors over seeds
    for (norm, bs, n, _), (scores, _) in zip(runs, values):
        for mode, e in scores.items():
            arm = f"batch: {mode}" if norm == "batch" else "group"
            by_steps.setdefault((arm, bs, n), []).append(e)
    err = {(arm, bs): by_steps[(arm, bs, cfg["steps"][bs])]
           for arm in arms for bs in cfg["batch_sizes"]}
    small = cfg["batch_sizes"][0]
    rows = [{"normalisation (statistics at test time)": arm,
             **{f"batch {bs}: test error (%)": format_mean_std(err[(arm, bs)], 1)
                for bs in cfg["batch_sizes"]}} for arm in arms]
    ahead = judge(CLAIMS_FOLLOWUP["ahead"].at(small=small), err[("group", small)],
                  err[("batch: running", small)])
    steps = ", ".join(f"{cfg['steps'][bs]} steps at batch {bs}" for bs in cfg["batch_sizes"])
    md = [
        "#### Follow-up: the paper's conditions at our scale",
        f"Test error (%) on {cfg['n_test']} `Shapes(32)` images, {cfg['seeds']} seed(s); conv "
        f"blocks of {list(cfg['channels'])} channels, {cfg['n_train']} training images, "
        f"{steps}. Batch norm is scored with three kinds of statistics (rows).",
        res.table(rows),
        _bullets(res, [ahead]),
        _equal_epochs_markdown(res, cfg, by_steps),
    ]
    _plot_budgets(ctx, cfg, by_steps)
    return "\n\n".join(md), err


def _bullets(res, verdicts):
    """Verdict lines, not a table: a section's one table is what the docs and tests read."""
    return "\n".join(res.verdict_line(v, "outcome") for v in verdicts)


def _budget_rows(cfg):
    """``(name, {batch_size: steps})`` of the fixed-step runs and the equal-epoch budgets
    ``cfg["budgets"]``, as the report lists them."""
    budgets = _equal_epoch_budgets(cfg)
    return [("fixed steps (above)", dict(cfg["steps"]))] + [
        (f"equal epochs, {name}", budgets[name]) for name in cfg["budgets"]]


def _equal_epochs_markdown(res, cfg, by_steps):
    """The equal-epochs table and its verdicts, under their own heading."""
    small, big = cfg["batch_sizes"]
    budgets = dict(_budget_rows(cfg))

    def err(name, arm, bs):  # errors over seeds under one budget
        return by_steps[(arm, bs, budgets[name][bs])]

    def ahead(name):
        return judge(CLAIMS_FOLLOWUP["ahead_at"].at(budget=name, small=small),
                     err(name, "group", small), err(name, "batch: running", small))

    rows = []
    for name, steps in budgets.items():
        row = {"budget": name, **{f"batch {bs}: steps (epochs)":
                                  f"{steps[bs]} ({_epochs_of(cfg, bs, steps[bs]):.1f})"
                                  for bs in (small, big)}}
        for arm in _RUNNING_GROUP:
            for bs in (small, big):
                row[f"{arm.split(':')[0]} norm, batch {bs} (%)"] = format_mean_std(
                    err(name, arm, bs), 1)
        # batch norm's rise in mean error from the big batch to the small, minus group norm's
        bn, gn = (float(np.mean(err(name, arm, small))) - np.mean(err(name, arm, big))
                  for arm in _RUNNING_GROUP)
        row["batch norm's excess penalty (points)"] = f"{bn - gn:+.1f}"
        rows.append(row)
    paper = (_PAPER[("batch", 2)] - _PAPER[("batch", 32)]
             - _PAPER[("group", 2)] + _PAPER[("group", 32)])
    md = [
        "##### Equal epochs at both batch sizes",
        "Test error (%) with batch norm's running averages, at the fixed steps above and at "
        "equal epochs; each budget reuses the other batch size's runs. Wu & He's excess "
        f"penalty (ImageNet, 32 to 2 images per GPU): {paper:+.1f} points.",
        res.table(rows),
        _bullets(res, [ahead(f"equal epochs, {name}") for name in cfg["budgets"]]),
    ]
    short, long = "equal epochs, short", "equal epochs, long"
    if long not in budgets:
        return "\n\n".join(md + ["The budget that answers the paper's question, **equal "
                                 "epochs, long**, runs in the full protocol only."])

    def pooled(name, bs):  # both norms' errors at one budget and batch size
        return err(name, "batch: running", bs) + err(name, "group", bs)

    e_long = _epochs_of(cfg, big)
    verdicts = [
        ahead(long),
        judge(CLAIMS_FOLLOWUP["bn_worse"].at(budget=long, small=small, big=big),
              err(long, "batch: running", small), err(long, "batch: running", big)),
        *(judge(CLAIMS_FOLLOWUP["longer"].at(batch=bs, epochs=f"{e_long:.1f}"),
                pooled(long, bs), pooled(short, bs)) for bs in (small, big)),
    ]
    return "\n\n".join(md + ["The budget that answers the paper's question: **equal epochs, "
                             "long** (equal epochs, each batch size's full schedule).",
                             _bullets(res, verdicts)])


def _plot_budgets(ctx, cfg, by_steps):
    """Test error at both batch sizes under each budget, one panel per norm."""
    small, big = cfg["batch_sizes"]
    fig, axes = subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, arm in zip(axes, _RUNNING_GROUP):
        for (name, steps), marker in zip(_budget_rows(cfg), "osD"):
            e = [by_steps[(arm, bs, steps[bs])] for bs in (big, small)]
            ax.errorbar([0, 1], [np.mean(v) for v in e], yerr=[np.std(v) for v in e],
                        marker=marker, capsize=3,
                        label=f"{name}: {_epochs_of(cfg, big, steps[big]):.1f} / "
                              f"{_epochs_of(cfg, small, steps[small]):.1f} epochs")
        ax.set_xticks([0, 1], [f"batch {big}", f"batch {small}"])
        ax.set(xlim=(-0.3, 1.3), xlabel="batch size (images per step)",
               title=f"{arm.split(':')[0]} norm" + (" (running averages)"
                                                    if arm.startswith("batch") else ""))
        ax.legend(fontsize=7)
    axes[0].set_ylabel("test error (%), mean ± std over seeds")
    fig.suptitle("Shapes(32), 5-block conv net: fixed steps vs equal epochs")
    return save_figure(fig, ctx, _FOLLOWUP_FIGURE, dpi=90)


EXPERIMENT = Experiment(
    name="group_norm",
    title="Group norm vs batch norm (and layer norm) by batch size on digits",
    paper="Wu & He 2018, Group Normalization, ECCV",
    run=run,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="group_norm_followup",
    title="Group norm follow-up: the paper's conditions at our scale (Shapes, deeper net)",
    paper="Wu & He 2018, Group Normalization, ECCV",
    run=run_followup,
)
