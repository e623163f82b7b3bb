"""He et al. (2017), Mask R-CNN: mask and box AP on synthetic scenes, and the paper's ablations.

Claims checked at our scale (He et al. 2017, Table 2): RoIAlign beats RoIPool, most at
AP75 and at large stride (Table 2c/d: +3 to +7 mask AP); per-class sigmoid masks beat a
per-pixel softmax over classes (Table 2b: +5.5 AP); and the issue's target, a mean mask
IoU of matched instances of at least 0.85 on easy scenes. Data: ``make_scenes`` (discs
and squares, no touching in the easy setting), trained from scratch (no pretrained
weights exist offline). C4 (one map) vs FPN is compared too, and the joint semantic +
instance segmenter (:class:`~sklearn_papers.vision.InstanceSegmenter`), when present, is
run on the same scenes for quality and inference images/s.
"""

import time

import numpy as np

from sklearn_papers.reproduce._digits import one_torch_thread, verdict
from sklearn_papers.reproduce._registry import Experiment, Section
from sklearn_papers.reproduce._report import format_mean_std, markdown_table

__all__ = ["EXPERIMENT"]

# COCO test-dev mask AP of ResNet-50 Mask R-CNN variants, quoted from He et al. 2017
# (Table 2b-d; different data and scale: context, not targets).
_PAPER = {"align vs pool (C4, stride 16)": "26.9 vs 23.6 AP (AP75 27.6 vs 21.6)",
          "align vs pool (C5, stride 32)": "30.9 vs 23.7 AP (AP75 32.8 vs 22.3)",
          "sigmoid vs softmax": "30.3 vs 24.8 AP (ResNet-50-C4)"}


_VARIANTS = ("FPN, RoIAlign, sigmoid", "FPN, RoIPool, sigmoid", "FPN, RoIAlign, softmax",
             "C4, RoIAlign, sigmoid")
# Fits run side by side on 2 worker processes (one torch thread each); n_jobs is not part
# of the protocol (cached parts do not depend on it).
_QUICK = dict(image_size=64, n_train=96, n_test=32, anchors=(8, 16, 32), epochs=12, lr=1e-2,
              seeds=2, variants=_VARIANTS, hard=False, segmenter_epochs=15, n_jobs=2)
_FULL = dict(image_size=64, n_train=512, n_test=128, anchors=(8, 16, 32), epochs=16, lr=1e-2,
             seeds=3, variants=_VARIANTS + ("C4, RoIPool, sigmoid",), hard=True,
             segmenter_epochs=30, n_jobs=2)


def _config(quick):
    return dict(_QUICK if quick else _FULL)


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


def _box_iou(a, b):
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area = lambda x: np.clip(x[:, 2:] - x[:, :2], 0, None).prod(-1)  # noqa: E731
    union = area(a)[:, None] + area(b)[None, :] - inter
    return inter / np.maximum(union, 1e-12)


def box_average_precision(true_boxes, true_labels, dets, max_detections=100):
    """COCO box AP@[.5:.95]: the matching and 101-point interpolation of
    :func:`sklearn_papers.metrics.mask_average_precision` (its private helpers, reused so
    that both APs follow one protocol) on box IoUs instead of mask IoUs."""
    from sklearn_papers.metrics._segmentation import (
        COCO_IOU_THRESHOLDS,
        _interpolated_ap,
        _match,
    )

    classes = np.unique(np.concatenate(list(true_labels) + [d["labels"] for d in dets]))
    aps = []
    for c in classes:
        scores, tps, n_gt = [], [], 0
        for tb, tl, d in zip(true_boxes, true_labels, dets):
            g = tb[tl == c]
            n_gt += len(g)
            sel = np.flatnonzero(d["labels"] == c)
            order = sel[np.argsort(-d["scores"][sel], kind="mergesort")][:max_detections]
            if order.size == 0:
                continue
            scores.append(d["scores"][order])
            ious = _box_iou(d["boxes"][order], g) if len(g) else np.zeros((len(order), 0))
            tps.append(_match(ious, COCO_IOU_THRESHOLDS))
        if n_gt == 0:
            continue
        if not scores:
            aps.append(0.0)
            continue
        tp = np.concatenate(tps, 1)[:, np.argsort(-np.concatenate(scores), kind="mergesort")]
        aps.append(np.mean([_interpolated_ap(row, n_gt) for row in tp]))
    return float(np.mean(aps)) if aps else float("nan")


def _matched_iou(true_maps, pred_maps):
    """Mean IoU of matched instances (best predicted instance with IoU >= 0.5 for each true
    one) and the fraction of true instances matched."""
    ious, n_true = [], 0
    for t, p in zip(true_maps, pred_maps):
        p_ids = np.unique(p[p > 0])
        for i in np.unique(t[t > 0]):
            n_true += 1
            g = t == i
            if p_ids.size == 0:
                continue
            best = max(((p == j) & g).sum() / ((p == j) | g).sum() for j in p_ids)
            if best >= 0.5:
                ious.append(best)
    return (float(np.mean(ious)) if ious else 0.0), (len(ious) / max(n_true, 1))


def _evaluate(est, test):
    from sklearn_papers.metrics import mask_average_precision

    start = time.perf_counter()
    dets = est.predict_detections(test.images)
    seconds = time.perf_counter() - start
    masks = [d["masks"] for d in dets]
    kw = dict(pred_scores=[d["scores"] for d in dets], true_labels=test.labels,
              pred_labels=[d["labels"] for d in dets])
    maps = est.predict(test.images)
    miou, matched = _matched_iou(test.instance_maps, maps)
    return {
        "mask AP": mask_average_precision(test.instance_maps, masks, **kw),
        "AP50": mask_average_precision(test.instance_maps, masks, iou_thresholds=0.5, **kw),
        "AP75": mask_average_precision(test.instance_maps, masks, iou_thresholds=0.75, **kw),
        "box AP": box_average_precision(test.boxes, test.labels, dets),
        "matched mask IoU": miou, "matched fraction": matched,
        "images/s": len(test.images) / seconds,
    }


def _fit_mask_rcnn(cfg, setting, variant, seed, data_seed, keep_maps):
    """One Mask R-CNN fit and its test metrics (a cached part; runs in a worker)."""
    from sklearn_papers.vision import MaskRCNN

    hard = setting != "easy"
    train = _scenes(cfg, cfg["n_train"], 1000 + data_seed, hard)
    test = _scenes(cfg, cfg["n_test"], 2000 + data_seed, hard)
    est = MaskRCNN(**_params(variant), anchor_sizes=cfg["anchors"], max_epochs=cfg["epochs"],
                   lr=cfg["lr"], random_state=seed)
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
    est = InstanceSegmenter(max_epochs=cfg["segmenter_epochs"], random_state=seed)
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
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _paired(a, b):
    """Mean ± std over seeds of the paired gap ``a - b`` (same seeds, same scenes) and on
    how many seeds it is positive."""
    gap = np.asarray(a) - np.asarray(b)
    return (f"{gap.mean():+.3f} ± {gap.std():.3f}, positive on {int((gap > 0).sum())} of "
            f"{gap.size} seeds")


def run(ctx):
    """Run the experiment; see the module docstring. Fits are independent cached parts
    (``--resume`` skips finished ones), run on ``n_jobs`` worker processes."""
    from sklearn_papers.reproduce._parallel import cached_parts

    cfg = _config(ctx.quick)
    seeds = [ctx.random_state + i for i in range(cfg["seeds"])]
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
    start, n_reused_before = time.perf_counter(), len(ctx.reused)
    with one_torch_thread(), ctx.progress(total=len(parts), desc="mask_rcnn: fits") as bar:
        values = cached_parts(ctx, parts, n_jobs=cfg["n_jobs"], progress=bar)
    wall = time.perf_counter() - start
    n_reused = len(ctx.reused) - n_reused_before
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
    ctx.log(f"[mask_rcnn] {len(parts)} fits in {wall:.0f} s ({cfg['n_jobs']} workers; "
            f"{fit_cpu:.0f} s of fit CPU time)")

    keys = ("mask AP", "AP50", "AP75", "box AP", "matched mask IoU", "matched fraction",
            "images/s")
    rows = []
    for (setting, variant), res in results.items():
        row = {"scenes": setting, "model": f"Mask R-CNN ({variant})"}
        row.update({k: format_mean_std([r[k] for r in res], 1 if k == "images/s" else 3)
                    for k in keys})
        row["fit CPU s"] = format_mean_std([r["fit CPU s"] for r in res], 0)
        rows.append(row)
    for setting, res in seg_rows.items():
        row = {"scenes": setting, "model": "InstanceSegmenter (defaults)"}
        row.update({k: format_mean_std([r[k] for r in res], 1 if k == "images/s" else 3)
                    for k in keys})
        row["box AP"] = "n/a"
        row["fit CPU s"] = format_mean_std([r["fit CPU s"] for r in res], 0)
        rows.append(row)

    easy = {v: results[("easy", v)] for v in cfg["variants"]}
    main = cfg["variants"][0]
    pool, soft, c4 = "FPN, RoIPool, sigmoid", "FPN, RoIAlign, softmax", "C4, RoIAlign, sigmoid"
    get = lambda v, k: [r[k] for r in easy[v]]  # noqa: E731
    ious = get(main, "matched mask IoU")
    iou_ok = np.mean(ious) >= 0.85
    every = "" if np.min(ious) >= 0.85 or not iou_ok else " on the mean, not on every seed"
    claims = [
        f"- Mean mask IoU of matched instances on easy scenes ({main}): "
        f"{np.mean(ious):.3f} ± {np.std(ious):.3f} over {len(ious)} seeds (lowest seed "
        f"{np.min(ious):.3f}; target >= 0.85): "
        f"**{'holds' if iou_ok else 'does not hold'}**{every}.",
        f"- RoIAlign vs RoIPool (FPN), AP75: {np.mean(get(main, 'AP75')):.3f} vs "
        f"{np.mean(get(pool, 'AP75')):.3f} (paired gap "
        f"{_paired(get(main, 'AP75'), get(pool, 'AP75'))}), "
        f"mask AP {np.mean(get(main, 'mask AP')):.3f} vs {np.mean(get(pool, 'mask AP')):.3f}, "
        f"AP50 {np.mean(get(main, 'AP50')):.3f} vs {np.mean(get(pool, 'AP50')):.3f}; RoIAlign "
        f"better on AP75: **{verdict(get(main, 'AP75'), get(pool, 'AP75'))}**; paper: "
        f"{_PAPER['align vs pool (C4, stride 16)']}.",
    ]
    if "C4, RoIPool, sigmoid" in easy:
        c4p = "C4, RoIPool, sigmoid"
        gap_c4 = np.mean(get(c4, "AP75")) - np.mean(get(c4p, "AP75"))
        gap_fpn = np.mean(get(main, "AP75")) - np.mean(get(pool, "AP75"))
        claims.append(
            f"- At large stride (C4, one map at stride 8) RoIAlign - RoIPool on AP75: "
            f"{gap_c4:+.3f} vs {gap_fpn:+.3f} with the FPN (finest level stride 4); "
            f"RoIAlign better with C4: **{verdict(get(c4, 'AP75'), get(c4p, 'AP75'))}**; "
            f"paper: the gap grows with the stride ({_PAPER['align vs pool (C5, stride 32)']} "
            f"at stride 32).")
    sig_ap, soft_ap = get(main, "mask AP"), get(soft, "mask AP")
    not_worse = np.mean(sig_ap) - np.mean(soft_ap) >= -max(np.std(sig_ap), np.std(soft_ap))
    claims.append(
        f"- Sigmoid vs softmax masks (FPN), mask AP: {np.mean(sig_ap):.3f} vs "
        f"{np.mean(soft_ap):.3f} (paired gap {_paired(sig_ap, soft_ap)}), AP75 "
        f"{np.mean(get(main, 'AP75')):.3f} vs {np.mean(get(soft, 'AP75')):.3f}; sigmoid "
        f"better: **{verdict(sig_ap, soft_ap)}**; at least as good (not worse by more than "
        f"one std): **{'holds' if not_worse else 'does not hold'}**; paper: "
        f"{_PAPER['sigmoid vs softmax']}.")
    claims.append(
        f"- C4 vs FPN, mask AP: {np.mean(get(c4, 'mask AP')):.3f} vs "
        f"{np.mean(get(main, 'mask AP')):.3f} (paired gap "
        f"{_paired(get(c4, 'mask AP'), get(main, 'mask AP'))}).")
    if "easy" in seg_rows:
        seg = seg_rows["easy"]
        ips = np.mean([r["images/s"] for r in seg])
        claims.append(
            f"- InstanceSegmenter on the same easy scenes: mask AP "
            f"{np.mean([r['mask AP'] for r in seg]):.3f} (its label maps, every instance "
            f"scored 1), matched mask IoU {np.mean([r['matched mask IoU'] for r in seg]):.3f} "
            f"vs {np.mean(get(main, 'mask AP')):.3f} and {np.mean(ious):.3f}; inference "
            f"{ips:.1f} vs {np.mean(get(main, 'images/s')):.1f} images/s "
            f"({ips / np.mean(get(main, 'images/s')):.1f}x).")

    fig_path = ctx.figure_path("mask_rcnn_scenes.png")
    test = _scenes(cfg, 3, 2000 + ctx.random_state, False)
    _plot(fig_path, test.images[:3], figure_maps["easy"], easy, cfg["variants"])
    steps = cfg["epochs"] * -(-cfg["n_train"] // 8)
    md = [
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
        f"and the CPU time of each fit (one torch thread; {cfg['n_jobs']} fits run side by "
        f"side; {len(parts)} fits took {wall:.0f} s wall"
        + (f", {n_reused} of them read back from an earlier run" if n_reused else "")
        + f"; {fit_cpu:.0f} s of fit CPU time in all). "
        f"Paper numbers are COCO ResNet-50 results, context only.",
        "",
        markdown_table(rows),
        "",
        *claims,
    ]
    shortened = (
        f"{cfg['image_size']} px scenes, {cfg['n_train']} training scenes, {cfg['epochs']} "
        f"epochs, {cfg['seeds']} seeds, easy scenes only, no C4 + RoIPool run (the full run: "
        f"{_FULL['image_size']} px, {_FULL['n_train']} scenes, {_FULL['epochs']} epochs, "
        f"{_FULL['seeds']} seeds, default scenes too)." if ctx.quick else "")
    return Section(markdown="\n".join(md), figures=[fig_path], shortened=shortened)


EXPERIMENT = Experiment(
    name="mask_rcnn",
    title="Mask R-CNN on synthetic scenes: RoIAlign vs RoIPool, sigmoid vs softmax, C4 vs FPN",
    paper="He, Gkioxari, Dollar & Girshick 2017, Mask R-CNN, ICCV",
    run=run,
)
