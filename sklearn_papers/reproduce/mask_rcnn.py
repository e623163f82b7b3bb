"""He et al. (2017), Mask R-CNN: mask and box AP on synthetic scenes, and the paper's ablations.

Claims checked at our scale (He et al. 2017, Table 2): RoIAlign beats RoIPool, most at
AP75 and at large stride (Table 2c/d: +3 to +7 mask AP); per-class sigmoid masks beat a
per-pixel softmax over classes (Table 2b: +5.5 AP); and our target, a mean mask
IoU of matched instances of at least 0.85 on easy scenes. Data: ``make_scenes`` (discs
and squares, no touching in the easy setting), trained from scratch (no pretrained
weights exist offline). C4 (one map) vs FPN is compared too, and the joint semantic +
instance segmenter (:class:`~sklearn_papers.vision.InstanceSegmenter`), when present, is
run on the same scenes for quality and inference images/s.

Whether the competition between classes inside a box explains the sigmoid vs softmax
result is the experiment ``mask_rcnn_followup``, on crowded scenes.
"""

import time

import numpy as np

from sklearn_papers.metrics import (
    detection_box_average_precision,
    instance_best_iou,
    other_class_share,
)
from sklearn_papers.reproduce._claims import HOLDS, Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure
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

# Test scenes are drawn at the training scale, so both models predict at the input scale
# only (predict_scales=(1.0,)): the comparisons are of the architectures, not of the choice
# of a prediction scale.
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
    Claim("easy scenes: sigmoid masks better", "mask AP", "paired interval", key="easy",
          arms=(_MAIN, _SOFT)),
)

#: Crowded scenes: 4 classes (disc, square, ellipse, and discs of a second colour), 4 to 8
#: objects that may overlap (later ones occlude earlier ones). The training budget is the
#: main run's (same scene size, counts, epochs, lr and anchors), so that easy-scene fits of
#: the same two models and seeds are the control; one seed more than the main run.
PROTOCOL_FOLLOWUP = Protocol(
    full=dict(image_size=64, n_train=512, n_test=128, anchors=(8, 16, 32), epochs=16,
              lr=1e-2, seeds=4, predict_scales=(1.0,), variants=(_MAIN, _SOFT),
              scenes=dict(n_classes=4, min_objects=4, max_objects=8, overlap=True,
                          touching=0.0, noise=0.02)),
    quick=dict(n_train=96, n_test=32, epochs=10, seeds=1),
    shortened="{n_train} training scenes, {epochs} epochs and {seeds} seed (the full run: "
              "512 scenes, 16 epochs, 4 seeds); one seed cannot decide a paired claim.",
)

#: Worker processes for the independent fits (one torch thread each); the results do not
#: depend on it.
_N_JOBS = 2


def _params(variant):
    backbone, op, loss = (v.strip() for v in variant.split(","))
    return dict(backbone=backbone.lower(), roi_op="align" if op == "RoIAlign" else "pool",
                mask_loss=loss)


def _scenes(cfg, n, seed, hard):
    from sklearn_papers.datasets import make_scenes

    if hard:  # the package's default scenes: 3 classes, up to 6 objects, touching
        return make_scenes(n, image_size=cfg["image_size"], random_state=seed)
    return make_scenes(n, image_size=cfg["image_size"], n_classes=2, max_objects=3,
                       touching=0.0, noise=0.02, random_state=seed)


def _matched_iou(true_maps, pred_maps):
    """:func:`~sklearn_papers.metrics.matched_mask_iou` at IoU 0.5."""
    from sklearn_papers.metrics import matched_mask_iou

    return matched_mask_iou(list(true_maps), list(pred_maps), threshold=0.5)


def _label_maps(dets, shape, threshold):
    """The instance label maps :meth:`MaskRCNN.predict <sklearn_papers.vision.MaskRCNN.predict>`
    paints, from detections already computed."""
    from sklearn_papers.vision._mask_rcnn import paint_detections

    maps = np.zeros((len(dets),) + tuple(shape), dtype=np.int64)
    for i, d in enumerate(dets):
        maps[i] = paint_detections(d, shape, threshold)
    return maps


def _evaluate(est, test, return_detections=False):
    """Test metrics of a fitted MaskRCNN; the detections are computed once (the label
    maps of ``predict`` are painted from them)."""
    from sklearn_papers.metrics import mask_average_precision

    start = time.perf_counter()
    dets = est.predict_detections(test.images)
    seconds = time.perf_counter() - start
    masks = [d["masks"] for d in dets]
    kw = dict(pred_scores=[d["scores"] for d in dets], true_labels=test.labels,
              pred_labels=[d["labels"] for d in dets])
    maps = _label_maps(dets, test.instance_maps.shape[1:], est.instance_score_threshold)
    miou, matched = _matched_iou(test.instance_maps, maps)
    res = {
        "mask AP": mask_average_precision(test.instance_maps, masks, **kw),
        "AP50": mask_average_precision(test.instance_maps, masks, iou_thresholds=0.5, **kw),
        "AP75": mask_average_precision(test.instance_maps, masks, iou_thresholds=0.75, **kw),
        "box AP": detection_box_average_precision(test.boxes, test.labels, dets),
        "matched mask IoU": miou, "matched fraction": matched,
        "images/s": len(test.images) / seconds,
    }
    return (res, dets) if return_detections else res


def _fit_mask_rcnn(cfg, setting, variant, seed, data_seed, keep_maps):
    """One Mask R-CNN fit and its test metrics (a cached part; runs in a worker)."""
    from sklearn_papers.vision import MaskRCNN

    hard = setting != "easy"
    train = _scenes(cfg, cfg["n_train"], 1000 + data_seed, hard)
    test = _scenes(cfg, cfg["n_test"], 2000 + data_seed, hard)
    est = MaskRCNN(**_params(variant), anchor_sizes=cfg["anchors"], max_epochs=cfg["epochs"],
                   lr=cfg["lr"], predict_scales=cfg["predict_scales"], random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(train.images, train.instance_maps, train.semantic_maps)
    res = _evaluate(est, test)
    res["fit s"] = time.perf_counter() - t0
    res["fit CPU s"] = time.process_time() - c0
    if keep_maps:  # for the figure: the first test scenes and their predicted maps
        res["maps"] = est.predict(test.images[:3])
    return res


def _fit_segmenter(cfg, setting, seed, data_seed):
    """InstanceSegmenter on the same scenes (a cached part); None when the class does
    not exist."""
    try:
        from sklearn_papers.vision import InstanceSegmenter
    except ImportError:
        return None
    from sklearn_papers.metrics import mask_average_precision

    hard = setting != "easy"
    train = _scenes(cfg, cfg["n_train"], 1000 + data_seed, hard)
    test = _scenes(cfg, cfg["n_test"], 2000 + data_seed, hard)
    est = InstanceSegmenter(max_epochs=cfg["segmenter_epochs"],
                            predict_scales=cfg["predict_scales"], random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(train.images, train.instance_maps, train.semantic_maps)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    maps = est.predict(test.images)
    seconds = time.perf_counter() - t0
    miou, matched = _matched_iou(test.instance_maps, maps)
    return {"mask AP": mask_average_precision(test.instance_maps, maps),
            "AP50": mask_average_precision(test.instance_maps, maps, iou_thresholds=0.5),
            "AP75": mask_average_precision(test.instance_maps, maps, iou_thresholds=0.75),
            "box AP": float("nan"), "matched mask IoU": miou, "matched fraction": matched,
            "images/s": len(test.images) / seconds, "fit s": fit_s, "fit CPU s": fit_cpu}


def _plot(path, images, maps, results, variants):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.6),
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
    ax.set_ylim(0, 1)
    ax.set_title("test AP (mean over seeds)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path.parent, path.name, dpi=90)


def _paired(a, b):
    """Mean ± std over seeds of the paired gap ``a - b`` (same seeds, same scenes) and on
    how many seeds it is positive."""
    gap = np.asarray(a) - np.asarray(b)
    return (f"{gap.mean():+.3f} ± {gap.std():.3f}, positive on {int((gap > 0).sum())} of "
            f"{gap.size} seeds")


def _main_parts(ctx, cfg, seeds):
    """``(parts, jobs)`` of the main fits: every variant on the easy scenes (the first
    one on the default scenes too) and the InstanceSegmenter, per seed."""
    settings = ["easy"] + (["default"] if cfg["hard"] else [])
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    parts, jobs = [], []
    for setting in settings:
        variants = cfg["variants"] if setting == "easy" else cfg["variants"][:1]
        for seed in seeds:
            for variant in variants:
                keep = seed == seeds[0] and variant == variants[0]
                jobs.append((setting, variant, seed))
                parts.append((f"{setting}/{variant}/seed={seed}", _fit_mask_rcnn,
                              (protocol, setting, variant, seed, ctx.random_state, keep),
                              {**protocol, "setting": setting, "variant": variant,
                               "seed": seed, "data_seed": ctx.random_state}))
            if cfg["segmenter_epochs"] is not None:
                jobs.append((setting, None, seed))
                parts.append((f"{setting}/InstanceSegmenter/seed={seed}", _fit_segmenter,
                              (protocol, setting, seed, ctx.random_state),
                              {**protocol, "setting": setting, "seed": seed,
                               "data_seed": ctx.random_state}))
    return parts, jobs


def _table_rows(results, seg_rows):
    """Rows of the main table: per scene set and model, the test metrics over seeds."""
    keys = ("mask AP", "AP50", "AP75", "box AP", "matched mask IoU", "matched fraction",
            "images/s")
    models = ([(setting, f"Mask R-CNN ({variant})", res)
               for (setting, variant), res in results.items()]
              + [(setting, "InstanceSegmenter (defaults)", res)
                 for setting, res in seg_rows.items()])
    rows = []
    for setting, model, res in models:
        row = {"scenes": setting, "model": model,
               **{k: format_mean_std([r[k] for r in res], 1 if k == "images/s" else 3)
                  for k in keys},
               "fit CPU s": format_mean_std([r["fit CPU s"] for r in res], 0)}
        if model.startswith("InstanceSegmenter"):
            row["box AP"] = "n/a"
        rows.append(row)
    return rows


def _claim_lines(result, easy, seg_rows):
    """The claims' lines under the table, their verdicts kept in ``result``; ``easy``
    maps a variant to its easy-scene results per seed."""
    get = lambda v, k: [r[k] for r in easy[v]]  # noqa: E731

    def ap_verdict(key):
        claim = CLAIMS[key]
        return result.verdict(judge(claim, *(get(arm, claim.metric) for arm in claim.arms)))

    ious = get(_MAIN, "matched mask IoU")
    claims = [
        f"- Mean mask IoU of matched instances on easy scenes ({_MAIN}): "
        f"{np.mean(ious):.3f} ± {np.std(ious):.3f} over {len(ious)} seeds (lowest seed "
        f"{np.min(ious):.3f}; target >= 0.85): "
        + result.verdict(judge(CLAIMS["iou"], ious), style="outcome") + ".",
        f"- RoIAlign vs RoIPool (FPN), AP75: {np.mean(get(_MAIN, 'AP75')):.3f} vs "
        f"{np.mean(get(_POOL, 'AP75')):.3f} (paired gap "
        f"{_paired(get(_MAIN, 'AP75'), get(_POOL, 'AP75'))}), mask AP "
        f"{np.mean(get(_MAIN, 'mask AP')):.3f} vs {np.mean(get(_POOL, 'mask AP')):.3f}, "
        f"AP50 {np.mean(get(_MAIN, 'AP50')):.3f} vs {np.mean(get(_POOL, 'AP50')):.3f}; RoIAlign "
        f"better on AP75: {ap_verdict('align')}; paper: {CLAIMS['align'].paper}.",
    ]
    if _C4_POOL in easy:
        gap_c4 = np.mean(get(_C4, "AP75")) - np.mean(get(_C4_POOL, "AP75"))
        gap_fpn = np.mean(get(_MAIN, "AP75")) - np.mean(get(_POOL, "AP75"))
        claims.append(
            f"- At large stride (C4, one map at stride 8) RoIAlign - RoIPool on AP75: "
            f"{gap_c4:+.3f} vs {gap_fpn:+.3f} with the FPN (finest level stride 4); "
            f"RoIAlign better with C4: {ap_verdict('align_c4')}; paper: the gap grows with "
            f"the stride ({CLAIMS['align_c4'].paper} at stride 32).")
    sig_ap, soft_ap = get(_MAIN, "mask AP"), get(_SOFT, "mask AP")
    not_worse = judge(CLAIMS["sigmoid_not_worse"], sig_ap, soft_ap)
    claims.append(
        f"- Sigmoid vs softmax masks (FPN), mask AP: {np.mean(sig_ap):.3f} vs "
        f"{np.mean(soft_ap):.3f} (paired gap {_paired(sig_ap, soft_ap)}), AP75 "
        f"{np.mean(get(_MAIN, 'AP75')):.3f} vs {np.mean(get(_SOFT, 'AP75')):.3f}; sigmoid "
        f"better: {ap_verdict('sigmoid')}; at least as good (not worse by more than "
        f"{_NOT_WORSE} mask AP): " + result.verdict(not_worse, style="outcome")
        + f"; paper: {CLAIMS['sigmoid'].paper}.")
    claims.append(
        f"- C4 vs FPN, mask AP: {np.mean(get(_C4, 'mask AP')):.3f} vs "
        f"{np.mean(sig_ap):.3f} (paired gap {_paired(get(_C4, 'mask AP'), sig_ap)}).")
    if "easy" in seg_rows:
        seg = seg_rows["easy"]
        ips, ours = np.mean([r["images/s"] for r in seg]), np.mean(get(_MAIN, "images/s"))
        claims.append(
            f"- InstanceSegmenter on the same easy scenes: mask AP "
            f"{np.mean([r['mask AP'] for r in seg]):.3f} (its label maps, every instance "
            f"scored 1), matched mask IoU {np.mean([r['matched mask IoU'] for r in seg]):.3f} "
            f"vs {np.mean(sig_ap):.3f} and {np.mean(ious):.3f}; inference "
            f"{ips:.1f} vs {ours:.1f} images/s ({ips / ours:.1f}x).")
    return claims


def _fits(ctx, parts, desc, **where):
    """Values of the cached fitting ``parts`` (on :data:`_N_JOBS` workers), their wall
    seconds and how many were read back from an earlier run; ``where``: ``owner`` and
    ``share`` of :func:`~._parallel.cached_parts`."""
    start, n_reused = time.perf_counter(), len(ctx.reused)
    with one_torch_thread(), ctx.progress(total=len(parts), desc=desc) as bar:
        values = cached_parts(ctx, parts, n_jobs=_N_JOBS, progress=bar, **where)
    return values, time.perf_counter() - start, len(ctx.reused) - n_reused


def _data_text(cfg, n_fits, wall, n_reused, fit_cpu):
    """The report's paragraph on the data, models, metrics and cost."""
    steps = cfg["epochs"] * -(-cfg["n_train"] // 8)
    return (
        f"Data: `make_scenes` at {cfg['image_size']} x {cfg['image_size']} px; easy scenes: "
        f"2 classes (discs, squares), 1-3 objects, no touching, noise 0.02"
        + ("; default scenes: 3 classes, up to 6 objects, touching 0.5, noise 0.05"
           if cfg["hard"] else "")
        + f". {cfg['n_train']} training and {cfg['n_test']} test scenes (other seeds). "
        f"Model: `MaskRCNN` defaults (GroupNorm backbone of width 16, trained from scratch, "
        f"AdamW one-cycle, batch 8) with anchors {cfg['anchors']}, lr {cfg['lr']:g} and "
        f"{cfg['epochs']} epochs ({steps} steps); {cfg['seeds']} seeds (mean ± std; every "
        f"variant sees the same scenes and seeds, so gaps are also given paired). Metrics "
        f"on the test scenes: COCO mask AP@[.5:.95], AP50, AP75 "
        f"(`metrics.mask_average_precision`, class-aware), box AP@[.5:.95] (same matching "
        f"on box IoU), mean mask IoU of the matched instances of `predict` (IoU >= 0.5) and "
        f"the fraction matched; inference images/s of `predict_detections` on one thread, "
        f"and the CPU time of each fit (one torch thread; {_N_JOBS} fits run side by "
        f"side; {n_fits} fits took {wall:.0f} s wall"
        + (f", {n_reused} of them read back from an earlier run" if n_reused else "")
        + f"; {fit_cpu:.0f} s of fit CPU time in all). "
        + "Paper numbers are COCO ResNet-50 results, context only.")


def run(ctx):
    """Run the experiment; see the module docstring. Fits are independent cached parts
    (``--resume`` skips finished ones), run on :data:`_N_JOBS` worker processes."""
    cfg = PROTOCOL.settings(ctx.quick)
    seeds = PROTOCOL.seeds(ctx)
    parts, jobs = _main_parts(ctx, cfg, seeds)
    # shared with mask_rcnn_followup, whose control they are
    values, wall, n_reused = _fits(ctx, parts, "mask_rcnn: fits", share=True)
    results, seg_rows, figure_maps = {}, {}, {}
    for (setting, variant, _), value in zip(jobs, values):
        if variant is None:
            if value is not None:
                seg_rows.setdefault(setting, []).append(value)
            continue
        if "maps" in value:
            figure_maps[setting] = value.pop("maps")
        results.setdefault((setting, variant), []).append(value)
    fit_cpu = sum(v["fit CPU s"] for v in values if v is not None)
    ctx.log(f"[mask_rcnn] {len(parts)} fits in {wall:.0f} s ({_N_JOBS} workers; "
            f"{fit_cpu:.0f} s of fit CPU time)")
    easy = {v: results[("easy", v)] for v in cfg["variants"]}
    result = Result()
    claims = _claim_lines(result, easy, seg_rows)
    fig_path = ctx.figure_path("mask_rcnn_scenes.png")
    test = _scenes(cfg, 3, 2000 + ctx.random_state, False)
    _plot(fig_path, test.images[:3], figure_maps["easy"], easy, cfg["variants"])
    md = [_data_text(cfg, len(parts), wall, n_reused, fit_cpu), "",
          result.table(_table_rows(results, seg_rows)), "", *claims, "",
          "Whether the competition between classes inside a box explains the sigmoid vs "
          "softmax result is the experiment `mask_rcnn_followup`."]
    return result.done("\n".join(md), figures=[fig_path],
                       shortened=PROTOCOL.note(ctx.quick))


# -- follow-up: classes competing inside a box -------------------------------------------


def _crowded(cfg, n, seed):
    from sklearn_papers.datasets import make_scenes

    return make_scenes(n, image_size=cfg["image_size"], random_state=seed, **cfg["scenes"])


def _fit_crowded(cfg, variant, seed, data_seed):
    """One Mask R-CNN fit on crowded scenes: the metrics of ``_evaluate`` plus per true
    test instance its best same-class IoU and its box's other-class share (a cached
    part; runs in a worker)."""
    from sklearn_papers.vision import MaskRCNN

    train = _crowded(cfg, cfg["n_train"], 1000 + data_seed)
    test = _crowded(cfg, cfg["n_test"], 2000 + data_seed)
    est = MaskRCNN(**_params(variant), anchor_sizes=cfg["anchors"], max_epochs=cfg["epochs"],
                   lr=cfg["lr"], predict_scales=cfg["predict_scales"], random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(train.images, train.instance_maps, train.semantic_maps)
    res, dets = _evaluate(est, test, return_detections=True)
    res["instance IoU"] = instance_best_iou(test.instance_maps, test.labels, dets,
                                            threshold=est.instance_score_threshold)
    res["other-class share"] = other_class_share(test.semantic_maps, test.boxes, test.labels)
    res["fit s"] = time.perf_counter() - t0
    res["fit CPU s"] = time.process_time() - c0
    return res


def _followup_parts(ctx, cfg, seeds):
    """``(parts, jobs)`` of both models on crowded scenes, per seed."""
    # a fit does not depend on how many seeds there are: adding seeds keeps the cache
    protocol = {k: v for k, v in cfg.items() if k != "seeds"}
    parts, jobs = [], []
    for seed in seeds:
        for variant in cfg["variants"]:
            jobs.append(("crowded", variant, seed))
            parts.append((f"followup/crowded/{variant}/seed={seed}", _fit_crowded,
                          (protocol, variant, seed, ctx.random_state),
                          {**protocol, "variant": variant, "seed": seed,
                           "data_seed": ctx.random_state}))
    return parts, jobs


def _control_parts(ctx, seeds):
    """``(parts, jobs)`` of the control: both models on the easy scenes, the very parts of
    ``mask_rcnn`` (read from its run or its cache; computed into its cache if missing)."""
    main = PROTOCOL.settings(ctx.quick)
    first = PROTOCOL.seeds(ctx)[0]
    parts, jobs = [], []
    for seed in seeds:
        for variant in (_MAIN, _SOFT):
            jobs.append(("easy", variant, seed))
            parts.append((f"easy/{variant}/seed={seed}", _fit_mask_rcnn,
                           (main, "easy", variant, seed, ctx.random_state,
                            seed == first and variant == main["variants"][0]),
                           {**main, "setting": "easy", "variant": variant, "seed": seed,
                            "data_seed": ctx.random_state}))
    return parts, jobs


def _scene_shares(cfg, quick, data_seed):
    """``{scene set: other-class shares of its training boxes}`` of the scenes used."""
    main = PROTOCOL.settings(quick)
    sets = {"easy (main run)": _scenes(main, main["n_train"], 1000 + data_seed, False)}
    if main["hard"]:
        sets["default (main run)"] = _scenes(main, main["n_train"], 1000 + data_seed, True)
    sets["crowded (follow-up)"] = _crowded(cfg, cfg["n_train"], 1000 + data_seed)
    return {k: other_class_share(d.semantic_maps, d.boxes, d.labels) for k, d in sets.items()}


def _followup_explanation(boxes, better, larger, easy_verdict, easy_gap):
    """The follow-up's conclusion. It explains the main run's easy-scene result: a tie, or
    a sigmoid win far smaller than the paper's 5.5 AP (``easy_gap``, mean mask AP);
    ``better``, ``larger`` and ``easy_verdict`` are :class:`~._claims.Verdict` s."""
    subject = ("the undecided comparison on easy scenes" if easy_verdict.outcome != HOLDS
               else f"why the sigmoid's win on easy scenes is small ({easy_gap:+.3f} mask "
                      f"AP; paper: +5.5 AP)")
    if any(v.n_seeds < 2 for v in (better, larger)):
        return (f"{boxes}; with one seed the quick run cannot tell (a gap of any size "
                f"would decide), the full run's seeds do")
    better, larger = better.outcome, larger.outcome
    if better == HOLDS and larger == HOLDS:
        return (f"the competition the paper names explains {subject}: {boxes}, and the "
                f"sigmoid's gain grows once classes share the boxes")
    if better == HOLDS:
        return (f"{boxes}; the sigmoid wins on crowded scenes, but its gain is not clearly "
                f"larger than on easy scenes, so class competition explains {subject} "
                f"only in part")
    return (f"{boxes}, yet the softmax masks are not clearly worse on crowded scenes: at "
            f"our scale the class competition inside a box does not produce the paper's "
            f"5.5 AP, so it does not explain {subject}")


def _share_rows(shares):
    return [{"scenes (training set)": name, "boxes": len(s),
             "boxes holding pixels of another class": f"{np.mean(s > 0):.1%}",
             "mean share of a box's pixels of other classes": f"{np.mean(s):.1%}"}
            for name, s in shares.items()]


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


def _followup_lines(result, crowded, easy, shares):
    """The follow-up's claims' lines (verdicts kept in ``result``), the per-seed gaps on
    easy and crowded scenes and the per-group IoU gaps (for the figure)."""
    get = lambda res, v: np.array([r["mask AP"] for r in res[v]])  # noqa: E731
    sig_ap, soft_ap = get(crowded, _MAIN), get(crowded, _SOFT)
    gap, easy_gap = sig_ap - soft_ap, get(easy, _MAIN) - get(easy, _SOFT)
    better = judge(CLAIMS_FOLLOWUP["crowded"], sig_ap, soft_ap)
    larger = judge(CLAIMS_FOLLOWUP["larger"], gap, easy_gap)
    lines = [
        f"- Crowded scenes, sigmoid vs softmax mask AP: {np.mean(sig_ap):.3f} vs "
        f"{np.mean(soft_ap):.3f} (paired gap {_paired(sig_ap, soft_ap)}); "
        f"sigmoid better: {result.verdict(better)}; paper: {CLAIMS_FOLLOWUP['crowded'].paper}.",
        f"- Gap on crowded vs easy scenes (same budget; seeds of both: {len(gap)}): "
        f"{np.mean(gap):+.3f} vs {np.mean(easy_gap):+.3f}; larger on crowded "
        f"scenes: {result.verdict(larger)}.",
    ]
    by_group, iou, mixed = _by_box_group(crowded)
    if len(by_group) == 2:
        within = judge(CLAIMS_FOLLOWUP["within"], by_group["mixed"], by_group["clean"])
        lines.append(
            f"- Within the crowded test scenes ({mixed.sum()} of {mixed.size} true instances "
            f"have pixels of another class in their box): best same-class mask IoU, sigmoid "
            f"vs softmax, {iou[(_MAIN, 'mixed')]:.3f} vs {iou[(_SOFT, 'mixed')]:.3f} on those "
            f"boxes and {iou[(_MAIN, 'clean')]:.3f} vs {iou[(_SOFT, 'clean')]:.3f} on the "
            f"others; the sigmoid's IoU gain is larger where classes share the box: "
            f"{result.verdict(within)} ({np.mean(by_group['mixed']):+.3f} vs "
            f"{np.mean(by_group['clean']):+.3f}).")
    boxes = (f"{np.mean(shares['crowded (follow-up)'] > 0):.0%} of the crowded scenes' boxes "
             f"hold pixels of another class, {np.mean(shares['easy (main run)'] > 0):.0%} of "
             f"the easy scenes'")
    easy_verdict = judge(CLAIMS_FOLLOWUP["easy"], get(easy, _MAIN), get(easy, _SOFT))
    why = _followup_explanation(boxes, better, larger, easy_verdict, np.mean(easy_gap))
    lines.append(f"- Explanation: {why}.")
    return lines, easy_gap, gap, by_group


def _followup_figure(ctx, cfg, shares, easy_gap, gap, by_group):
    """The follow-up's figure; its example is, of 8 crowded scenes, the one with the most
    boxes holding pixels of another class."""
    fig = ctx.figure_path("mask_rcnn_crowded.png")
    pool = _crowded(cfg, 8, 3000 + ctx.random_state)
    best = int(np.argmax([np.sum(other_class_share(pool.semantic_maps[i:i + 1],
                                                   pool.boxes[i:i + 1],
                                                   pool.labels[i:i + 1]) > 0)
                          for i in range(len(pool.images))]))
    _plot_followup(fig, shares, easy_gap, gap, by_group, pool, best)
    return fig


def run_followup(ctx):
    """Classes competing inside a box: does the competition that a per-pixel softmax
    creates (He et al. 2017, Sec. 3, Table 2b) explain the sigmoid vs softmax result? Both
    models on crowded scenes, against the same models on easy scenes."""
    cfg = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = PROTOCOL_FOLLOWUP.seeds(ctx)
    parts, jobs = _followup_parts(ctx, cfg, seeds)
    values, wall, _ = _fits(ctx, parts, "mask_rcnn_followup: fits")
    control, control_jobs = _control_parts(ctx, seeds)
    control_values = _fits(ctx, control, "mask_rcnn_followup: control", owner="mask_rcnn")[0]
    res = {"crowded": {}, "easy": {}}
    for (scenes, variant, _), value in zip(jobs + control_jobs, values + control_values):
        res[scenes].setdefault(variant, []).append(value)
    ctx.log(f"[mask_rcnn_followup] {len(parts)} fits in {wall:.0f} s")
    result = Result()
    shares = _scene_shares(cfg, ctx.quick, ctx.random_state)
    lines, easy_gap, gap, by_group = _followup_lines(result, res["crowded"], res["easy"],
                                                     shares)
    keys = ("mask AP", "AP50", "AP75", "box AP", "matched mask IoU")
    rows = [{"scenes": scenes, "model": f"Mask R-CNN ({v})",
             **{k: format_mean_std([r[k] for r in res[scenes][v]], 3) for k in keys},
             "fit CPU s": format_mean_std([r["fit CPU s"] for r in res[scenes][v]], 0)}
            for scenes in ("crowded", "easy") for v in cfg["variants"]]
    md = [
        f"The paper's reason for the sigmoid's win (He et al. 2017, Sec. 3, Table 2b): a "
        f"per-pixel softmax makes the classes compete for every pixel of a box, while "
        f"per-class sigmoids leave the class to the box head. On the easy scenes a box "
        f"almost never holds pixels of another class, so there is nothing to compete for. "
        f"Here the same two models (FPN, RoIAlign; sigmoid vs softmax) are trained with the "
        f"budget of `mask_rcnn` ({cfg['n_train']} training and {cfg['n_test']} test scenes, "
        f"{cfg['epochs']} epochs, lr {cfg['lr']:g}) on crowded scenes: `make_scenes` with "
        f"4 classes (discs, squares, ellipses, discs of a second colour), 4 to 8 objects "
        f"per image that may overlap (later ones occlude earlier ones), noise 0.02; "
        f"{cfg['seeds']} seeds, paired with the easy-scene fits of `mask_rcnn` of the same "
        f"seeds. How often a box holds pixels of another class (true boxes of the training "
        f"scenes):",
        "", result.table(_share_rows(shares)), "", result.table(rows), "", *lines]
    fig = _followup_figure(ctx, cfg, shares, easy_gap, gap, by_group)
    return result.done("\n".join(md), figures=[fig],
                       shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


def _plot_followup(path, shares, easy_gap, gap, by_group, example, index=0):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6),
                             gridspec_kw={"width_ratios": [1, 1.3, 1.1, 1.1]})
    ax = axes[0]
    ax.imshow(example.images[index])
    ax.imshow(np.ma.masked_equal(example.semantic_maps[index], 0), cmap="tab10", alpha=0.35,
              vmin=0, vmax=10)
    for b in example.boxes[index]:
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
    ax = axes[2]
    for x, g in enumerate((easy_gap, gap)):
        ax.scatter(np.full(len(g), x), g, color="C0")
        ax.hlines(np.mean(g), x - 0.2, x + 0.2, color="k")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks([0, 1], ["easy", "crowded"])
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylabel("mask AP, sigmoid - softmax")
    ax.set_title("paired gap per seed (bar: mean)", fontsize=9)
    ax = axes[3]
    for x, g in enumerate(by_group):
        ax.scatter(np.full(len(by_group[g]), x), by_group[g], color="C1")
        ax.hlines(np.mean(by_group[g]), x - 0.2, x + 0.2, color="k")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(range(len(by_group)), [{"mixed": "box holds\nother classes",
                                          "clean": "box holds\none class"}[g]
                                         for g in by_group], fontsize=8)
    ax.set_xlim(-0.5, len(by_group) - 0.5)
    ax.set_ylabel("instance mask IoU, sigmoid - softmax")
    ax.set_title("crowded test instances, per seed", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path.parent, path.name, dpi=90)


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
