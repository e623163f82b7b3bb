"""He et al. (2017), Mask R-CNN: mask and box AP on synthetic scenes, and the paper's ablations.

Checked on ``make_scenes``: RoIAlign vs RoIPool, sigmoid vs softmax masks, the matched mask
IoU target; C4 vs FPN and the ``InstanceSegmenter`` are reported beside. The follow-up
``mask_rcnn_followup`` trains on crowded scenes. Claims: CLAIMS and CLAIMS_FOLLOWUP below;
setup: docs/papers/mask_rcnn.rst.
"""

import time

import numpy as np

from sklearn_papers.metrics import (
    detection_box_average_precision,
    instance_best_iou,
    mask_average_precision,
    matched_mask_iou,
    other_class_share,
)
from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP"]

_VARIANTS = ("FPN, RoIAlign, sigmoid", "FPN, RoIPool, sigmoid", "FPN, RoIAlign, softmax",
             "C4, RoIAlign, sigmoid")
_MAIN, _POOL, _SOFT, _C4, _C4_POOL = _VARIANTS + ("C4, RoIPool, sigmoid",)

#: "Not worse" claims: the largest disadvantage in mask AP that still counts as as good.
_NOT_WORSE = 0.02

# COCO test-dev mask AP of ResNet-50 Mask R-CNN variants, quoted from He et al. 2017
# (Table 2b-d; different data and scale: context, not targets).
_PAPER = {"align vs pool (C4, stride 16)": "26.9 vs 23.6 AP (AP75 27.6 vs 21.6)",
          "align vs pool (C5, stride 32)": "30.9 vs 23.7 AP (AP75 32.8 vs 22.3)",
          "sigmoid vs softmax": "30.3 vs 24.8 AP (ResNet-50-C4)"}

CLAIMS = declare(
    Claim("matched mask IoU >= 0.85", "matched mask IoU", "mean interval", threshold=0.85,
          key="iou", arms=(_MAIN,)),
    Claim("RoIAlign better on AP75", "AP75", "paired interval", key="align",
          arms=(_MAIN, _POOL), paper=_PAPER["align vs pool (C4, stride 16)"]),
    Claim("RoIAlign better on AP75 with C4", "AP75", "paired interval", key="align_c4",
          arms=(_C4, _C4_POOL), paper=_PAPER["align vs pool (C5, stride 32)"]),
    Claim("sigmoid masks better than softmax", "mask AP", "paired interval", key="sigmoid",
          arms=(_MAIN, _SOFT), paper=_PAPER["sigmoid vs softmax"]),
    Claim("sigmoid not worse than softmax", "mask AP", "paired interval",
          margin=-_NOT_WORSE, key="sigmoid_not_worse", arms=(_MAIN, _SOFT)),
)

PROTOCOL = Protocol(
    full=dict(image_size=64, n_train=512, n_test=128, anchors=(8, 16, 32), epochs=16,
              lr=1e-2, seeds=3, variants=_VARIANTS + (_C4_POOL,), hard=True,
              segmenter_epochs=30, predict_scales=(1.0,)),
    quick=dict(n_train=96, n_test=32, epochs=10, seeds=2, variants=_VARIANTS, hard=False,
               segmenter_epochs=15),
    shortened="{image_size} px scenes, {n_train} training scenes, {epochs} epochs, {seeds} "
              "seeds, easy scenes only, no C4 + RoIPool run (the full run: 64 px, 512 "
              "scenes, 16 epochs, 3 seeds, default scenes too).",
)

CLAIMS_FOLLOWUP = declare(
    Claim("crowded scenes: sigmoid masks better", "mask AP", "paired interval",
          key="crowded", arms=(_MAIN, _SOFT), paper=_PAPER["sigmoid vs softmax"]),
    Claim("sigmoid's gain larger on crowded than on easy scenes", "sigmoid - softmax mask AP",
          "paired interval", key="larger", arms=("crowded", "easy")),
    Claim("the sigmoid's IoU gain larger where classes share the box",
          "sigmoid - softmax instance IoU", "paired interval", key="within",
          arms=("mixed boxes", "clean boxes")),
)

#: Crowded scenes at the main run's training budget: its easy-scene fits are the control.
PROTOCOL_FOLLOWUP = Protocol(
    full=dict(image_size=64, n_train=512, n_test=128, anchors=(8, 16, 32), epochs=16,
              lr=1e-2, seeds=4, predict_scales=(1.0,), variants=(_MAIN, _SOFT),
              scenes=dict(n_classes=4, min_objects=4, max_objects=8, overlap=True,
                          touching=0.0, noise=0.02)),
    quick=dict(n_train=96, n_test=32, epochs=10, seeds=1),
    shortened="{n_train} training scenes, {epochs} epochs and {seeds} seed (the full run: "
              "512 scenes, 16 epochs, 4 seeds); one seed cannot decide a paired claim.",
)

#: The test metrics of the tables.
_METRICS = ("mask AP", "AP50", "AP75", "box AP", "matched mask IoU", "matched fraction",
            "images/s")

#: Worker processes for the fits (one torch thread each); the results do not depend on it.
_N_JOBS = 2


def _params(variant):
    backbone, op, loss = (v.strip() for v in variant.split(","))
    return dict(backbone=backbone.lower(), roi_op="align" if op == "RoIAlign" else "pool",
                mask_loss=loss)


def _scenes(cfg, n, seed, kind):
    """``n`` scenes of a ``kind``: ``"easy"``, ``"default"`` (the package's: 3 classes, up to
    6 objects, touching) or ``"crowded"`` (``cfg["scenes"]``)."""
    from sklearn_papers.datasets import make_scenes

    if kind == "easy":
        kw = dict(n_classes=2, max_objects=3, touching=0.0, noise=0.02)
    else:
        kw = cfg["scenes"] if kind == "crowded" else {}
    return make_scenes(n, image_size=cfg["image_size"], random_state=seed, **kw)


def _test_metrics(test, maps, masks, seconds, box_ap, **kw):
    """The tables' metrics of predicted ``maps`` and ``masks`` (``kw``: class-aware AP)."""
    true = test.instance_maps
    miou, matched = matched_mask_iou(list(true), list(maps))
    return {"mask AP": mask_average_precision(true, masks, **kw),
            "AP50": mask_average_precision(true, masks, iou_thresholds=0.5, **kw),
            "AP75": mask_average_precision(true, masks, iou_thresholds=0.75, **kw),
            "box AP": box_ap, "matched mask IoU": miou, "matched fraction": matched,
            "images/s": len(test.images) / seconds}


def _fit_scored(cfg, variant, seed, train, test):
    """``(model, test metrics, detections)`` of one fit (its times include the evaluation)."""
    from sklearn_papers.vision import MaskRCNN
    from sklearn_papers.vision._mask_rcnn import paint_detections

    # the paper's mask head: RoI features only, over the boxes as detected, masks
    # thresholded at 0.5, no test-time flip
    est = MaskRCNN(**_params(variant), anchor_sizes=cfg["anchors"], max_epochs=cfg["epochs"],
                   lr=cfg["lr"], predict_scales=cfg["predict_scales"], mask_image=False,
                   mask_box_expand=1.0, mask_threshold=0.5, predict_flip=False,
                   random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(train.images, train.instance_maps, train.semantic_maps)
    start = time.perf_counter()
    dets = est.predict_detections(test.images)
    seconds = time.perf_counter() - start
    # predict's label maps, painted from the detections already computed
    maps = np.stack([paint_detections(d, test.instance_maps.shape[1:],
                                      est.instance_score_threshold) for d in dets])
    res = _test_metrics(test, maps, [d["masks"] for d in dets], seconds,
                        detection_box_average_precision(test.boxes, test.labels, dets),
                        pred_scores=[d["scores"] for d in dets], true_labels=test.labels,
                        pred_labels=[d["labels"] for d in dets])
    res["fit s"] = time.perf_counter() - t0
    res["fit CPU s"] = time.process_time() - c0
    return est, res, dets


def _train_test(cfg, kind, data_seed):
    """The training and test scenes of a kind (:func:`_scenes`)."""
    return (_scenes(cfg, cfg["n_train"], 1000 + data_seed, kind),
            _scenes(cfg, cfg["n_test"], 2000 + data_seed, kind))


def _fit_mask_rcnn(cfg, setting, variant, seed, data_seed, keep_maps):
    """One Mask R-CNN fit and its test metrics (a cached part; runs in a worker)."""
    train, test = _train_test(cfg, setting, data_seed)
    est, res, _ = _fit_scored(cfg, variant, seed, train, test)
    if keep_maps:  # for the figure: the first test scenes and their predicted maps
        res["maps"] = est.predict(test.images[:3])
    return res


def _fit_segmenter(cfg, setting, seed, data_seed):
    """InstanceSegmenter on the same scenes and its test metrics (a cached part)."""
    from sklearn_papers.vision import InstanceSegmenter

    train, test = _train_test(cfg, setting, data_seed)
    est = InstanceSegmenter(max_epochs=cfg["segmenter_epochs"],
                            predict_scales=cfg["predict_scales"], random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(train.images, train.instance_maps, train.semantic_maps)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    maps = est.predict(test.images)
    res = _test_metrics(test, maps, maps, time.perf_counter() - t0, float("nan"))
    return {**res, "fit s": fit_s, "fit CPU s": fit_cpu}


def _plot(ctx, images, maps, results, variants):
    fig, axes = subplots(1, 4, figsize=(13, 3.6),
                             gridspec_kw={"width_ratios": [1, 1, 1, 1.6]})
    for ax, img, m in zip(axes[:3], images, maps):
        ax.imshow(img)
        ax.imshow(np.ma.masked_equal(m, 0), cmap="tab10", alpha=0.45, vmin=0, vmax=10)
        ax.set_title(f"{int(m.max())} instances predicted")
        ax.axis("off")
    ax = axes[3]
    keys = ("mask AP", "AP50", "AP75", "box AP")
    width = 0.8 / len(variants)
    for k, name in enumerate(variants):
        means = [np.mean([r[key] for r in results[name]]) for key in keys]
        ax.bar(np.arange(len(keys)) + k * width, means, width, label=name)
    ax.set_xticks(np.arange(len(keys)) + 0.4 - width / 2, keys)
    ax.set(ylim=(0, 1), title="test AP (mean over seeds)")
    ax.legend(fontsize=7)
    return save_figure(fig, ctx, "mask_rcnn_scenes.png", dpi=90)


def _main_parts(ctx, cfg, seeds):
    """The main fits: every variant on the easy scenes (the first one on the default scenes
    too) and the InstanceSegmenter, per seed; their params name each (``setting``, ``seed``
    and, but for the InstanceSegmenter, ``variant``)."""
    parts = []
    for setting in ["easy"] + (["default"] if cfg["hard"] else []):
        variants = cfg["variants"] if setting == "easy" else cfg["variants"][:1]
        for seed in seeds:
            where = {"setting": setting, "seed": seed, "data_seed": ctx.random_state}
            for variant in variants:
                keep = seed == seeds[0] and variant == variants[0]
                parts.append((f"{setting}/{variant}/seed={seed}", _fit_mask_rcnn,
                              (cfg, setting, variant, seed, ctx.random_state, keep),
                              {**cfg, **where, "variant": variant}))
            if cfg["segmenter_epochs"] is not None:
                parts.append((f"{setting}/InstanceSegmenter/seed={seed}", _fit_segmenter,
                              (cfg, setting, seed, ctx.random_state), {**cfg, **where}))
    return parts


def _table_rows(models, keys):
    """Table rows: per ``(scenes, model, results per seed)``, the mean ± std of each metric
    of ``keys`` and of the fit CPU time (no box AP for the InstanceSegmenter)."""
    rows = [{"scenes": scenes, "model": model,
             **{k: format_mean_std([r[k] for r in res], 1 if k == "images/s" else 3)
                for k in keys},
             "fit CPU s": format_mean_std([r["fit CPU s"] for r in res], 0)}
            for scenes, model, res in models]
    for row in rows:
        if row["model"].startswith("InstanceSegmenter"):
            row["box AP"] = "n/a"
    return rows


def _judge(claim, runs):
    """:func:`judge` on the per-seed values of the claim's metric in ``runs[arm]``."""
    return judge(claim, *([r[claim.metric] for r in runs[arm]] for arm in claim.arms))


def _fits(ctx, parts, desc, **where):
    """``(values, wall seconds, parts read back)`` of :func:`~._parallel.cached_parts`."""
    start, n_reused = time.perf_counter(), len(ctx.reused)
    with one_torch_thread(), ctx.progress(total=len(parts), desc=desc) as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar, **where)
    return values, time.perf_counter() - start, len(ctx.reused) - n_reused


def run(ctx):
    """Run the experiment (module docstring)."""
    cfg = PROTOCOL.settings(ctx.quick)
    parts = _main_parts(ctx, cfg, PROTOCOL.seeds(ctx))
    # shared with mask_rcnn_followup, whose control they are
    values, wall, n_reused = _fits(ctx, parts, "mask_rcnn: fits", share=True)
    results, figure_maps = {}, {}
    for (*_, where), value in zip(parts, values):
        if "maps" in value:
            figure_maps[where["setting"]] = value.pop("maps")
        results.setdefault((where["setting"], where.get("variant")), []).append(value)
    easy = {v: results[("easy", v)] for v in cfg["variants"]}
    verdicts = [_judge(c, easy) for c in CLAIMS.values()
                if all(arm in easy for arm in c.arms)]  # no C4 + RoIPool in the quick run
    test = _scenes(cfg, 3, 2000 + ctx.random_state, "easy")
    fig_path = _plot(ctx, test.images[:3], figure_maps["easy"], easy, cfg["variants"])
    models = [(s, f"Mask R-CNN ({v})", res) for (s, v), res in results.items() if v]
    models += [(s, "InstanceSegmenter (defaults)", res)
               for (s, v), res in results.items() if v is None]
    caption = (f"Test metrics on {cfg['image_size']} px scenes ({cfg['n_train']} training and "
               f"{cfg['n_test']} test scenes, {cfg['epochs']} epochs, lr {cfg['lr']:g}, "
               f"anchors {cfg['anchors']}), mean ± std over {cfg['seeds']} seeds. "
               f"{len(parts)} fits: {wall:.0f} s wall ({n_reused} read back), "
               f"{sum(v['fit CPU s'] for v in values):.0f} s fit CPU.")
    result = Result()
    md = result.block(caption, _table_rows(models, _METRICS), verdicts) + [
        "The follow-up `mask_rcnn_followup` asks whether classes competing inside a box "
        "explain the sigmoid vs softmax result."]
    return result.done("\n".join(md), figures=[fig_path],
                       shortened=PROTOCOL.note(ctx.quick))


# -- follow-up: classes competing inside a box -------------------------------------------


def _fit_crowded(cfg, variant, seed, data_seed):
    """One fit on crowded scenes: its metrics, and per true test instance its best
    same-class IoU and its box's other-class share (a cached part)."""
    train, test = _train_test(cfg, "crowded", data_seed)
    est, res, dets = _fit_scored(cfg, variant, seed, train, test)
    res["instance IoU"] = instance_best_iou(test.instance_maps, test.labels, dets,
                                            threshold=est.instance_score_threshold)
    res["other-class share"] = other_class_share(test.semantic_maps, test.boxes, test.labels)
    return res


def _followup_parts(ctx, cfg, seeds):
    """Both models on crowded scenes, per seed (params as :func:`_main_parts`'s)."""
    # a fit does not depend on how many seeds there are: adding seeds keeps the cache
    protocol = {k: v for k, v in cfg.items() if k != "seeds"}
    return [(f"followup/crowded/{variant}/seed={seed}", _fit_crowded,
             (protocol, variant, seed, ctx.random_state),
             {**protocol, "variant": variant, "seed": seed, "data_seed": ctx.random_state})
            for seed in seeds for variant in cfg["variants"]]


def _control_parts(ctx, seeds):
    """The control: ``mask_rcnn``'s own parts of both models on the easy scenes."""
    return [p for p in _main_parts(ctx, PROTOCOL.settings(ctx.quick), seeds)
            if p[3]["setting"] == "easy" and p[3].get("variant") in (_MAIN, _SOFT)]


def _scene_shares(cfg, quick, data_seed):
    """``{scene set: other-class shares of its training boxes}`` of the scenes used."""
    main = PROTOCOL.settings(quick)
    sets = {"easy (main run)": _scenes(main, main["n_train"], 1000 + data_seed, "easy")}
    if main["hard"]:
        sets["default (main run)"] = _scenes(main, main["n_train"], 1000 + data_seed, "default")
    sets["crowded (follow-up)"] = _scenes(cfg, cfg["n_train"], 1000 + data_seed, "crowded")
    return {k: other_class_share(d.semantic_maps, d.boxes, d.labels) for k, d in sets.items()}


def _ap_gap(runs):
    """Per seed, the sigmoid model's mask AP minus the softmax model's."""
    return np.array([a["mask AP"] - b["mask AP"] for a, b in zip(runs[_MAIN], runs[_SOFT])])


def _by_box_group(crowded):
    """Per instance of the crowded test scenes, the sigmoid - softmax IoU gap on boxes with
    (``"mixed"``) and without (``"clean"``) pixels of another class: per group, the per-seed
    means, and the mean IoU of each model; and the mask of mixed boxes."""
    mixed = crowded[_MAIN][0]["other-class share"] > 0
    groups = [(g, sel) for g, sel in (("mixed", mixed), ("clean", ~mixed)) if sel.any()]
    by_group = {g: np.array([np.mean((a["instance IoU"] - b["instance IoU"])[sel])
                             for a, b in zip(crowded[_MAIN], crowded[_SOFT])])
                for g, sel in groups}
    iou = {(v, g): np.mean([r["instance IoU"][sel].mean() for r in crowded[v]])
           for v in (_MAIN, _SOFT) for g, sel in groups}
    return by_group, iou, mixed


def run_followup(ctx):
    """Both models on crowded scenes, against the same models on easy scenes (the fits of
    ``mask_rcnn``)."""
    cfg = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = PROTOCOL_FOLLOWUP.seeds(ctx)
    parts = _followup_parts(ctx, cfg, seeds)
    values, wall, _ = _fits(ctx, parts, "mask_rcnn_followup: fits")
    control = _control_parts(ctx, seeds)
    control_values = _fits(ctx, control, "mask_rcnn_followup: control", owner="mask_rcnn")[0]
    res = {"crowded": {}, "easy": {}}
    for (*_, where), value in zip(parts + control, values + control_values):
        res[where.get("setting", "crowded")].setdefault(where["variant"], []).append(value)
    ctx.log(f"[mask_rcnn_followup] {len(parts)} fits in {wall:.0f} s")
    result = Result()
    gap, easy_gap = _ap_gap(res["crowded"]), _ap_gap(res["easy"])
    lines = [result.verdict_line(_judge(CLAIMS_FOLLOWUP["crowded"], res["crowded"])),
             result.verdict_line(judge(CLAIMS_FOLLOWUP["larger"], gap, easy_gap))]
    by_group, iou, mixed = _by_box_group(res["crowded"])
    if len(by_group) == 2:
        lines += [result.verdict_line(judge(CLAIMS_FOLLOWUP["within"], by_group["mixed"],
                                            by_group["clean"])),
                  f"- Crowded test instances whose box holds another class: {mixed.sum()} of "
                  f"{mixed.size}; mean best same-class IoU, sigmoid vs softmax: "
                  f"{iou[(_MAIN, 'mixed')]:.3f} vs {iou[(_SOFT, 'mixed')]:.3f} on those, "
                  f"{iou[(_MAIN, 'clean')]:.3f} vs {iou[(_SOFT, 'clean')]:.3f} on the others."]
    shares = _scene_shares(cfg, ctx.quick, ctx.random_state)
    share_rows = [{"scenes (training set)": name, "boxes": len(s),
                   "boxes holding pixels of another class": f"{np.mean(s > 0):.1%}",
                   "mean share of a box's pixels of other classes": f"{np.mean(s):.1%}"}
                  for name, s in shares.items()]
    rows = _table_rows([(scenes, f"Mask R-CNN ({v})", res[scenes][v])
                        for scenes in ("crowded", "easy") for v in cfg["variants"]],
                       _METRICS[:5])
    md = result.block("How often a true box of the training scenes holds pixels of another "
                      "class:", share_rows) + result.block(
        f"Both models on crowded and easy scenes ({cfg['n_train']} training and "
        f"{cfg['n_test']} test scenes, {cfg['epochs']} epochs), mean ± std over "
        f"{cfg['seeds']} seeds paired with `mask_rcnn`'s easy-scene fits.", rows) + lines
    fig = _plot_followup(ctx, cfg, shares, easy_gap, gap, by_group)
    return result.done("\n".join(md), figures=[fig],
                       shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


def _gap_panel(ax, gaps, labels, color, ylabel, title, fontsize=None):
    """Per-seed gaps of each group (points), their mean (bar) and zero."""
    for x, g in enumerate(gaps):
        ax.scatter(np.full(len(g), x), g, color=color)
        ax.hlines(np.mean(g), x - 0.2, x + 0.2, color="k")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(range(len(gaps)), labels, fontsize=fontsize)
    ax.set(xlim=(-0.5, len(gaps) - 0.5), ylabel=ylabel)
    ax.set_title(title, fontsize=9)


def _plot_followup(ctx, cfg, shares, easy_gap, gap, by_group):
    """The follow-up's figure; its example: of 8 crowded scenes, the most mixed boxes."""
    import matplotlib.pyplot as plt

    pool = _scenes(cfg, 8, 3000 + ctx.random_state, "crowded")
    i = int(np.argmax([np.sum(other_class_share(pool.semantic_maps[i:i + 1],
                                                pool.boxes[i:i + 1], pool.labels[i:i + 1]) > 0)
                       for i in range(len(pool.images))]))
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6),
                             gridspec_kw={"width_ratios": [1, 1.3, 1.1, 1.1]})
    ax = axes[0]
    ax.imshow(pool.images[i])
    ax.imshow(np.ma.masked_equal(pool.semantic_maps[i], 0), cmap="tab10", alpha=0.35,
              vmin=0, vmax=10)
    for b in pool.boxes[i]:
        ax.add_patch(plt.Rectangle((b[0] - 0.5, b[1] - 0.5), b[2] - b[0], b[3] - b[1],
                                   fill=False, color="w", lw=1))
    ax.set_title("a crowded scene and its true boxes", fontsize=9)
    ax.axis("off")
    ax = axes[1]
    names = list(shares)
    ax.bar(range(len(names)), [100 * np.mean(shares[n] > 0) for n in names])
    ax.set_xticks(range(len(names)), [n.replace(" (", "\n(") for n in names], fontsize=8)
    ax.set_ylabel("boxes with other-class pixels (%)")
    ax.set_title("classes sharing a box", fontsize=9)
    _gap_panel(axes[2], (easy_gap, gap), ["easy", "crowded"], "C0",
               "mask AP, sigmoid - softmax", "paired gap per seed (bar: mean)")
    _gap_panel(axes[3], list(by_group.values()),
               [{"mixed": "box holds\nother classes", "clean": "box holds\none class"}[g]
                for g in by_group], "C1", "instance mask IoU, sigmoid - softmax",
               "crowded test instances, per seed", fontsize=8)
    return save_figure(fig, ctx, "mask_rcnn_crowded.png", dpi=90)


EXPERIMENT = Experiment(
    name="mask_rcnn",
    title="Mask R-CNN on synthetic scenes: RoIAlign vs RoIPool, sigmoid vs softmax, C4 vs FPN",
    paper="He, Gkioxari, Dollar & Girshick 2017, Mask R-CNN, ICCV",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="mask_rcnn_followup",
    title="Mask R-CNN follow-up: classes competing inside a box (sigmoid vs softmax masks)",
    paper="He, Gkioxari, Dollar & Girshick 2017, Mask R-CNN, ICCV",
    run=run_followup,
    in_quick_run=False,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
