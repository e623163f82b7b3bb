"""Milioto, Mandtler & Stachniss (2019): joint semantic + instance segmentation, fast.

Checked on ``make_scenes`` with touching same-class objects: centre seeding vs connected
components and mean-shift (De Brabandere et al. 2017), speed, SLIC upsampling; one
:class:`~sklearn_papers.vision.InstanceSegmenter` per seed scores every variant. The
follow-up ``instance_segmentation_followup`` (:func:`follow_ups`) measures why claims fail.
Claims: CLAIMS below; setup: docs/papers/instance_segmentation.rst.
"""

import time

import numpy as np

from sklearn_papers.metrics import (
    boundary_f_score,
    mask_average_precision,
    symmetric_best_dice,
)
from sklearn_papers.metrics._instances import touching_measures
from sklearn_papers.reproduce._claims import Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP"]

_VARIANTS = [  # (label, grouping, slic)
    ("centres + SLIC (paper)", "centers", True),
    ("centres, nearest upsampling", "centers", False),
    ("embedding + mean-shift + SLIC", "mean_shift", True),
    ("connected components + SLIC", "connected_components", True),
    ("connected components, nearest", "connected_components", False),
]
_PAPER, _PAPER_NEAR, _MS, _CC, _CC_NEAR = (v[0] for v in _VARIANTS)

#: "At least as good" claims: the largest disadvantage (best Dice, AP) that still counts.
_NOT_WORSE = 0.02

CLAIMS = declare(
    Claim("centres split touching objects", "best Dice (touching)", "mean interval",
          threshold=0.85, key="centres_split", arms=(_PAPER,)),
    Claim("connected components merge them", "best Dice (touching)", "mean interval",
          threshold=0.6, higher_is_better=False, key="cc_merge", arms=(_CC,)),
    Claim("centres split touching objects that connected components merge",
          "best Dice (touching)", "all of", key="touching", arms=(_PAPER, _CC)),
    Claim("centres as good as mean-shift", "{metric}", "paired interval",
          margin=-_NOT_WORSE, key="as_good_on", arms=(_PAPER, _MS)),
    Claim("centres at least as good as mean-shift on best Dice and AP@0.5",
          "best Dice (touching), AP@0.5", "all of", key="as_good", arms=(_PAPER, _MS)),
    Claim("centres >= 5x mean-shift's images/s", "speed ratio", "mean interval",
          threshold=5.0, key="speed", arms=(_PAPER, _MS)),
    Claim("SLIC raises boundary F", "boundary F", "paired interval", key="slic",
          arms=(_PAPER, _PAPER_NEAR)),
)

# Predicted at the input scale only, so that the variants differ in grouping and
# upsampling alone; three seeds in the quick run too (two cannot decide a claim).
PROTOCOL = Protocol(
    full=dict(n_train=800, n_test=200, seeds=3, max_epochs=30, image_size=64,
              params={"predict_scales": (1.0,)}),
    quick=dict(n_train=200, n_test=40, max_epochs=20),
    shortened="{n_train} training scenes instead of 800, {max_epochs} epochs instead of 30, "
              "{n_test} test scenes instead of 200.",
)

#: Worker processes for the seeds (one torch thread each); the results do not depend on it.
_N_JOBS = 2


def evaluate_variants(est, test, variants=_VARIANTS):
    """Scores and timings of each grouping/upsampling variant of one fitted segmenter.

    Parameters
    ----------
    est : InstanceSegmenter
        Fitted.
    test : Bunch
        From :func:`~sklearn_papers.datasets.make_scenes`.
    variants : list of (label, grouping, slic)

    Returns
    -------
    results : dict
        label -> dict of ``sbd``, ``sbd_touching``, ``ap50``, ``ap``, ``bf`` and
        ``seconds`` (wall time of ``predict_instances`` on the test images); plus
        ``"forward_seconds"``, the network's share (``predict_outputs``).
    """
    touching = test.has_touching
    out = {}
    start = time.perf_counter()
    est.predict_outputs(test.images)
    out["forward_seconds"] = time.perf_counter() - start
    for label, grouping, slic in variants:
        est.set_params(grouping=grouping, slic=slic)
        start = time.perf_counter()
        found = est.predict_instances(test.images)
        seconds = time.perf_counter() - start
        pred = np.stack([(f["masks"] * np.arange(1, f["labels"].size + 1)[:, None, None])
                         .sum(0) for f in found])
        sbd = symmetric_best_dice(test.instance_maps, pred, average=False)
        masks = [f["masks"] for f in found]
        kwargs = dict(pred_scores=[f["scores"] for f in found], true_labels=test.labels,
                      pred_labels=[f["labels"] for f in found])
        out[label] = dict(
            sbd=float(sbd.mean()),
            sbd_touching=float(sbd[touching].mean()) if touching.any() else float("nan"),
            ap50=mask_average_precision(test.instance_maps, masks, iou_thresholds=0.5,
                                        **kwargs),
            ap=mask_average_precision(test.instance_maps, masks, **kwargs),
            bf=boundary_f_score(test.instance_maps, pred),
            seconds=seconds, pred=pred[:4])
    est.set_params(grouping="centers", slic=True)
    return out


# ----------------------------------------------------------------------------- follow-ups
#: Boundary F tolerances (pixels) of the SLIC follow-up; 0 counts exact boundary pixels.
_TOLERANCES = (0, 1, 2, 3)
#: Contact-length strata (pixels, inclusive; None: no upper end) of the touching follow-up.
_CONTACT_BINS = ((1, 2), (3, 4), (5, 6), (7, None))
#: Touching-group strata (instances linked by same-class contacts) of that follow-up.
_GROUP_BINS = ((1, 1), (2, 2), (3, 3), (4, None))
#: boundary_f_score's default tolerance (a fraction of the diagonal), used by the table.
_TABLE_TOLERANCE = 0.008
_ORACLE = "oracle: components of the true semantic map"
_ORACLE_LOW = "oracle: the same at the output stride"
_TRUE_NEAR = "true instances at the output stride, nearest"
_TRUE_SLIC = "true instances at the output stride, SLIC vote"
#: The maps of the touching follow-up and of the boundary follow-up.
_TOUCH_METHODS = (_CC, _CC_NEAR, _PAPER, _ORACLE, _ORACLE_LOW)
_BF_METHODS = (_PAPER, _PAPER_NEAR, _TRUE_SLIC, _TRUE_NEAR)


def follow_ups(est, test):
    """Measurements that explain the two claims that fail at full scale.

    Touching pairs (merged or not, by contact length) and touching-subset instances (by
    touching group) for the network's variants and two oracles (connected components of
    the true semantic map, at full resolution and at the output stride); boundary F at
    each tolerance of ``_TOLERANCES`` for the centre variants and for the true maps taken
    to the output stride and back (nearest or SLIC vote).

    Parameters
    ----------
    est : InstanceSegmenter
        Fitted.
    test : Bunch
        From :func:`~sklearn_papers.datasets.make_scenes`.

    Returns
    -------
    result : dict
        ``"pairs"``, ``"instances"``: ``metrics._instances.touching_measures`` of the
        touching subset; ``"sbd_touching"``: method -> best Dice on it; ``"bf"``: method
        -> list of boundary F per tolerance; ``"sbd"``: method -> best Dice on all test
        scenes; ``"stride"`` (the output stride), ``"shape"`` (image height, width) and
        ``"table_radius"`` (the table's boundary F tolerance in pixels).
    """
    from sklearn_papers.vision._oracles import _components_oracle, _stride_round_trip

    true = test.instance_maps
    shape = true.shape[1:]
    stride = int(est.output_stride)
    maps = {}
    for label, grouping, slic in _VARIANTS:
        if label in _TOUCH_METHODS + _BF_METHODS:
            est.set_params(grouping=grouping, slic=slic)
            maps[label] = est.predict(test.images)
    est.set_params(grouping="centers", slic=True)
    maps[_ORACLE] = _components_oracle(test.semantic_maps)
    maps[_ORACLE_LOW] = _components_oracle(test.semantic_maps, stride)
    maps[_TRUE_NEAR], maps[_TRUE_SLIC] = _stride_round_trip(true, test.images, stride)
    touching = np.flatnonzero(test.has_touching)
    pairs, instances = touching_measures(true[touching], [test.labels[i] for i in touching],
                                         test.n_instances[touching],
                                         {m: maps[m][touching] for m in _TOUCH_METHODS})
    sbd_t = {m: float(symmetric_best_dice(true[touching], maps[m][touching]))
             if touching.size else float("nan") for m in _TOUCH_METHODS}
    bf = {m: [boundary_f_score(true, maps[m], tolerance=t) for t in _TOLERANCES]
          for m in _BF_METHODS}
    sbd = {m: symmetric_best_dice(true, maps[m]) for m in _BF_METHODS}
    return dict(pairs=pairs, instances=instances, sbd_touching=sbd_t, bf=bf, sbd=sbd,
                stride=stride, shape=tuple(int(x) for x in shape),
                table_radius=float(np.ceil(_TABLE_TOLERANCE * np.hypot(*shape))))


def _bin_label(lo, hi):
    return f">= {lo}" if hi is None else (f"{lo}" if lo == hi else f"{lo}-{hi}")


def _in_bin(x, lo, hi):
    return (x >= lo) & (x <= (np.inf if hi is None else hi))


def _pct(mask):
    return f"{100 * np.mean(mask):.0f}%" if np.size(mask) else "-"


def _avg(values, mask):
    return float(values[mask].mean()) if mask.any() else None


def _pooled(follow):
    """The follow-ups' per-pair and per-instance measurements, pooled over seeds."""
    def pooled(kind, method, key=None):
        return np.concatenate([f[kind][method] if key is None else f[kind][method][key]
                               for f in follow])

    return dict(
        contact=np.concatenate([f["pairs"]["contact"] for f in follow]),
        merged={m: pooled("pairs", m, "merged").astype(bool)
                for m in (_CC, _PAPER, _ORACLE_LOW)},
        pair_dice={m: pooled("pairs", m, "dice") for m in (_CC, _PAPER)},
        group=np.concatenate([f["instances"]["group"] for f in follow]),
        inst_dice={m: pooled("instances", m) for m in (_CC, _PAPER, _ORACLE)})


def _touching_rows(pool, stride):
    """Follow-up 1's rows: touching pairs by contact length, instances by touching group."""
    contact, merged, pair_dice = pool["contact"], pool["merged"], pool["pair_dice"]
    rows_pairs = []
    for lo, hi in _CONTACT_BINS:
        s = _in_bin(contact, lo, hi)
        rows_pairs.append({
            "contact (pixels)": _bin_label(lo, hi), "pairs": int(s.sum()),
            "merged: CC + SLIC": _pct(merged[_CC][s]),
            "merged: centres + SLIC": _pct(merged[_PAPER][s]),
            f"merged: true semantic map at stride {stride}": _pct(merged[_ORACLE_LOW][s]),
            "pair Dice: CC + SLIC": _avg(pair_dice[_CC], s),
            "pair Dice: centres + SLIC": _avg(pair_dice[_PAPER], s)})
    rows_groups = []
    for lo, hi in _GROUP_BINS:
        s = _in_bin(pool["group"], lo, hi)
        rows_groups.append({
            "touching group": _bin_label(lo, hi),
            "instances": f"{int(s.sum())} ({_pct(s)})",
            **{f"best Dice: {name}": _avg(pool["inst_dice"][m], s)
               for name, m in (("CC + SLIC", _CC), ("centres + SLIC", _PAPER),
                               ("oracle", _ORACLE))}})
    return rows_pairs, rows_groups


def _touching_section(res, follow, pool):
    """Markdown lines of follow-up 1 (its tables kept in ``res``)."""
    md = ["### Follow-up 1: connected components on the touching subset, by contact and "
          "group", ""]
    if not pool["contact"].size:  # no touching scene drawn: nothing to stratify
        return md + ["The test scenes have no touching pair: nothing to measure."]
    floor, cc_t = (float(np.mean([f["sbd_touching"][m] for f in follow]))
                   for m in (_ORACLE, _CC))
    rows_pairs, rows_groups = _touching_rows(pool, follow[0]["stride"])
    return md + [
        f"{pool['contact'].size} touching pairs ({len(follow)} seed(s)) by contact length, "
        "then touching instances by group size; the same fits, same seeds and scenes as "
        "`instance_segmentation`.", "", res.table(rows_pairs), "", res.table(rows_groups), "",
        f"Best Dice on the touching subset: {floor:.3f} for the oracle (every touching "
        f"pair merged), {cc_t:.3f} for connected components + SLIC."]


def _boundary_section(res, follow):
    """Markdown lines of follow-up 2 (its table kept in ``res``)."""
    rows = [{"map": m, **{f"BF @ {t} px": format_mean_std([f["bf"][m][i] for f in follow], 3)
                          for i, t in enumerate(_TOLERANCES)},
             "best Dice (all)": format_mean_std([f["sbd"][m] for f in follow], 3)}
            for m in _BF_METHODS]
    f0 = follow[0]
    return ["### Follow-up 2: boundary F of SLIC upsampling against the tolerance", "",
            f"Boundary F of the centre variants and of the true maps taken to stride "
            f"{f0['stride']} and back, mean ± std over seeds; the main table's tolerance: "
            f"{f0['table_radius']:g} px at {f0['shape'][0]} x {f0['shape'][1]}.", "",
            res.table(rows)]


def _plot_follow_ups(ctx, pool, follow):
    contact, merged, stride = pool["contact"], pool["merged"], follow[0]["stride"]
    fig, (ax, ax_b) = subplots(1, 2, figsize=(11, 3.8))
    bins = [(lo, hi) for lo, hi in _CONTACT_BINS if _in_bin(contact, lo, hi).any()]
    x = np.arange(len(bins))
    for m, name in ((_CC, "connected components + SLIC"), (_PAPER, "centres + SLIC"),
                    (_ORACLE_LOW, f"true semantic map at stride {stride}")):
        ax.plot(x, [merged[m][_in_bin(contact, *b)].mean() for b in bins], "o-", label=name)
    ax.set_xticks(x, [f"{_bin_label(*b)}\n({int(_in_bin(contact, *b).sum())} pairs)"
                      for b in bins], fontsize=8)
    ax.set(xlabel="contact length of a touching pair (pixels)",
           ylabel="share of pairs merged", ylim=(-0.05, 1.05))
    ax.legend(fontsize=8)
    ax.set_title("touching pairs merged (pooled over seeds)", fontsize=9)
    for m, style in zip(_BF_METHODS, ("o-", "s-", "o--", "s--")):
        ax_b.plot(_TOLERANCES, np.mean([f["bf"][m] for f in follow], 0), style, label=m)
    ax_b.set(xlabel="boundary F tolerance (pixels)", ylabel="boundary F", xticks=_TOLERANCES)
    ax_b.legend(fontsize=7)
    ax_b.set_title("boundary F against its tolerance (mean over seeds)", fontsize=9)
    return save_figure(fig, ctx, "instance_segmentation_followups.png", dpi=80)


def _plot_examples(ctx, test, results):
    shown = (_PAPER, _MS, _CC)
    n = min(4, len(test.images))
    fig, axes = subplots(n, 2 + len(shown), figsize=(2.3 * (2 + len(shown)), 2.3 * n))
    axes = np.atleast_2d(axes)
    for i in range(n):
        axes[i, 0].imshow(test.images[i])
        axes[i, 1].imshow(test.instance_maps[i], cmap="tab20", interpolation="nearest")
        for j, label in enumerate(shown):
            axes[i, 2 + j].imshow(results[label]["pred"][i], cmap="tab20",
                                  interpolation="nearest")
    for j, title in enumerate(["image", "true instances", *shown]):
        axes[0, j].set_title(title.replace(" + ", "\n+ "), fontsize=8)
    for ax in axes.ravel():
        ax.set(xticks=[], yticks=[])
    return save_figure(fig, ctx, "instance_segmentation_examples.png", dpi=80)


def _plot_scores(ctx, table):
    labels = list(table)
    metrics = [("sbd_touching", "best Dice (touching)"), ("ap50", "AP@0.5"),
               ("bf", "boundary F")]
    fig, (ax, ax_t) = subplots(1, 2, figsize=(12, 4))
    width = 0.8 / len(metrics)
    x = np.arange(len(labels))
    for k, (key, name) in enumerate(metrics):
        means = [np.mean([r[key] for r in table[label]]) for label in labels]
        ax.bar(x + k * width, means, width, label=name)
    ax.axhline(CLAIMS["centres_split"].threshold, color="k", linestyle="--", linewidth=0.8)
    ax.set_xticks(x + width, [lbl.replace(" + ", "\n+ ").replace(", ", ",\n")
                              for lbl in labels], fontsize=7)
    ax.set(ylim=(0, 1), title="scores on held-out scenes (mean over seeds)")
    ax.legend(fontsize=8)
    ips = [np.mean([r["ips"] for r in table[label]]) for label in labels]
    ax_t.barh(x, ips)
    ax_t.set_yticks(x, labels, fontsize=7)
    ax_t.set(xscale="log", xlabel="inference images / s (1 thread, log scale)")
    return save_figure(fig, ctx, "instance_segmentation_scores.png", dpi=80)


def _fit_score_and_follow_up(cfg, seed, train, test):
    """Fit one segmenter on the scenes ``train``: ``((fit seconds, fit process CPU seconds,
    evaluate_variants on test), follow_ups on test)``, both from the same network."""
    from sklearn_papers.vision import InstanceSegmenter

    start, cpu = time.perf_counter(), time.process_time()
    est = InstanceSegmenter(max_epochs=cfg["max_epochs"], random_state=seed, **cfg["params"])
    est.fit(train.images, train.instance_maps, semantic_maps=train.semantic_maps)
    seconds, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    return (seconds, fit_cpu, evaluate_variants(est, test)), follow_ups(est, test)


def _seed_values(ctx, cfg, *, owner=None, share=False):
    """``(seeds, scenes, values)``: :func:`_fit_score_and_follow_up` per seed, a cached part
    (``owner``, ``share``: see :func:`cached_parts`) on :data:`_N_JOBS` processes."""
    from sklearn_papers.datasets import make_scenes

    seeds = PROTOCOL.seeds(ctx)
    scenes = {seed: (make_scenes(cfg["n_train"], image_size=cfg["image_size"],
                                 random_state=seed),
                     make_scenes(cfg["n_test"], image_size=cfg["image_size"],
                                 random_state=10_000 + seed)) for seed in seeds}
    params = dict(cfg=cfg, tolerances=list(_TOLERANCES))
    parts = [(f"seed={seed}", _fit_score_and_follow_up, (cfg, seed, *scenes[seed]), params)
             for seed in seeds]
    with one_torch_thread(), ctx.progress(total=len(parts), desc="fits") as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar, owner=owner,
                              share=share)
    return seeds, scenes, values


def _table_rows(table):
    """Rows of the main table: per variant, the scores over seeds."""
    columns = {"best Dice (all)": "sbd", "best Dice (touching)": "sbd_touching",
               "AP@0.5": "ap50", "AP@[.5:.95]": "ap", "boundary F": "bf"}
    return [{"method": label,
             **{c: format_mean_std([r[k] for r in table[label]], 3) for c, k in columns.items()},
             "images/s": f"{np.mean([r['ips'] for r in table[label]]):.1f}"}
            for label in table]


def _claim_lines(res, table, forward, cfg):
    """The claims' lines (verdicts kept in ``res``) and the time per image of each step."""
    def per_seed(label, key):
        return [r[key] for r in table[label]]

    touching = [judge(CLAIMS["centres_split"], per_seed(_PAPER, "sbd_touching")),
                judge(CLAIMS["cc_merge"], per_seed(_CC, "sbd_touching"))]
    # "At least as good": on both scores, centres minus mean-shift per seed, not below
    # -_NOT_WORSE by the paired interval
    as_good = [judge(CLAIMS["as_good_on"].at(metric=key), per_seed(_PAPER, key),
                     per_seed(_MS, key)) for key in ("sbd_touching", "ap50")]
    fwd = float(np.mean(forward))
    # Post-processing time per image: the variant's time per image minus the forward pass.
    post = {label: max(1e-9, np.mean(per_seed(label, "seconds")) / cfg["n_test"] - fwd)
            for label in table}
    slic_cost = post[_PAPER] - post[_PAPER_NEAR]
    grouping_ms = max(1e-9, post[_MS] - slic_cost)  # mean-shift grouping without SLIC's share
    speed = judge(CLAIMS["speed"], np.divide(per_seed(_PAPER, "ips"), per_seed(_MS, "ips")))
    slic = judge(CLAIMS["slic"], per_seed(_PAPER, "bf"), per_seed(_PAPER_NEAR, "bf"))
    return [
        res.verdict_line(all_of(*touching), claim=CLAIMS["touching"], parts=touching),
        *(res.verdict_line(v, "plain") for v in touching),
        res.verdict_line(all_of(*as_good), claim=CLAIMS["as_good"], parts=as_good),
        *(f"- {v.claim.statement}, {name}: " + res.verdict(v, style="plain")
          for v, name in zip(as_good, ("best Dice (touching)", "AP@0.5"))),
        res.verdict_line(speed, "outcome", digits=1),
        res.verdict_line(slic, "outcome"),
        f"- Time per image: network forward {1000 * fwd:.1f} ms; grouping alone, centres vs "
        f"mean-shift, {1000 * post[_PAPER_NEAR]:.1f} vs {1000 * grouping_ms:.1f} ms; SLIC "
        f"{1000 * slic_cost:.1f} ms.",
    ]


def run(ctx):
    """Run the experiment (module docstring)."""
    cfg = PROTOCOL.settings(ctx.quick)
    seeds, scenes, both = _seed_values(ctx, cfg, share=True)
    fits = [scores for scores, _ in both]  # (fit seconds, fit CPU seconds, scores) per seed
    for seed, (seconds, _, res) in zip(seeds, fits):
        ctx.log(f"[instance_segmentation] seed {seed}: fit {seconds:.0f} s, centres+SLIC "
                f"best Dice {res[_PAPER]['sbd']:.3f}")
    n = cfg["n_test"]
    table = {label: [dict(res[label], ips=n / res[label]["seconds"]) for *_, res in fits]
             for label, _, _ in _VARIANTS}
    forward = [res["forward_seconds"] / n for *_, res in fits]
    test0 = scenes[seeds[0]][1]
    fig_examples = _plot_examples(ctx, test0, fits[0][2])
    fig_scores = _plot_scores(ctx, table)
    res = Result()
    md = [f"Scores on {cfg['n_test']} held-out scenes ({int(test0.has_touching.sum())} "
          f"touching for the first seed); {cfg['n_train']} training scenes, "
          f"{cfg['max_epochs']} epochs; mean ± std over {len(seeds)} seeds.", "",
          res.table(_table_rows(table)), "", *_claim_lines(res, table, forward, cfg),
          f"- Training: {np.mean([f[0] for f in fits]):.0f} s wall, "
          f"{np.mean([f[1] for f in fits]):.0f} s process CPU per fit ({_N_JOBS} worker "
          "processes).", "",
          "The follow-up `instance_segmentation_followup` measures why claims fail."]
    return res.done("\n".join(md), figures=[fig_scores, fig_examples],
                    shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """The two follow-ups (:func:`follow_ups`) on the networks of ``instance_segmentation``:
    read from this run when it ran them, else computed (and cached) under its name."""
    cfg = PROTOCOL.settings(ctx.quick)
    follow = [fu for _, fu in _seed_values(ctx, cfg, owner="instance_segmentation")[2]]
    pool = _pooled(follow)
    res = Result()
    md = _touching_section(res, follow, pool) + [""] + _boundary_section(res, follow)
    fig = _plot_follow_ups(ctx, pool, follow)
    return res.done("\n".join(md), figures=[fig], shortened=PROTOCOL.note(ctx.quick))


_PAPER_REF = ("Milioto, Mandtler & Stachniss 2019, Fast Instance and Semantic Segmentation "
              "Exploiting Local Connectivity, Metric Learning, and One-Shot Detection for "
              "Robotics, ICRA; De Brabandere, Neven & Van Gool 2017 (discriminative loss)")

EXPERIMENT = Experiment(
    name="instance_segmentation",
    title="Joint semantic + instance segmentation: centre seeding vs clustering, SLIC",
    paper=_PAPER_REF,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="instance_segmentation_followup",
    title="Joint instance segmentation, follow-up: touching pairs by contact, boundary F "
          "by tolerance",
    paper=_PAPER_REF,
    run=run_followup,
    protocol=PROTOCOL,
)
