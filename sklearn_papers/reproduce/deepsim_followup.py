"""The follow-ups of the DeePSiM claims that do not hold (experiment ``deepsim_followup``).

Dosovitskiy & Brox (2016); the main experiment is :mod:`.deepsim`, whose comparators,
classifiers and autoencoders these follow-ups read (its cached parts, ``owner="deepsim"``).
One designed experiment per claim, each with cached parts of its own
(``_followup_config``): which term sharpens (a 2 x 2 design of the feature and adversarial
terms on digits, sharpness measured four ways against blurred real images); what the
shapes comparator's compared layer weighs (distances of image pairs differing in one
factor, linear probes); and why iterated encoding-decoding drifts (the loss, the code
size, or the iterated map).
"""

import copy
import time

import numpy as np

from sklearn_papers.metrics import sharpness_measures
from sklearn_papers.reproduce import deepsim
from sklearn_papers.reproduce._claims import (
    HOLDS,
    NOT_HOLDS,
    Claim,
    all_of,
    declare,
    judge,
    negation,
)
from sklearn_papers.reproduce._common import in_one_torch_thread, run_seeds, save_figure
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std, full_mode_only
from sklearn_papers.reproduce._result import Result
from sklearn_papers.reproduce.deepsim import (
    _DATASETS,
    ARMS,
    CLAIMS,
    FACTORS,
    LOSS,
    _arm_metrics,
    _comparator_accuracy,
    _fit_all,
    _grid,
    _iterate,
    _main_claims,
    _prepare_all,
    load_data,
    sharpness,
)

__all__ = ["EXPERIMENT_FOLLOWUP"]

_ALL = "paired interval per measure and comparison; all must hold"

#: The follow-ups' claims (``deepsim_followup``): ``{name}`` an added arm, ``{m}`` a
#: sharpness measure, ``{k}`` iterations.
CLAIMS_FOLLOWUP = declare(
    # follow-up 1 (digits): which term sharpens
    Claim("the adversarial term sharpens (its effect > 0 on every seed)", "", "every seed",
          key="adv"),
    Claim("the feature term sharpens less than the adversarial term (every seed)", "",
          "every seed", key="feat"),
    Claim("the measures agree: gradient, edge gradient and high-frequency power all rank B "
          "no sharper than A and D sharper than A", "", "all of", key="agree"),
    Claim("{name} sharper than A ({m})", "", "paired interval", key="sharper_by"),
    Claim("{name} is sharper than A on every seed (gradient ratio)", "", "every seed",
          key="arm_every"),
    Claim("{name} is sharper than A by the edge gradient and the high-frequency power too",
          "", "all of", key="arm_edges"),
    # follow-up 2 (shapes): what the compared layer weighs
    Claim("the compared layer `{layer}` puts no material extra weight on a shape change, "
          "relative to a shift, over the pixels (emphasis < {material:g})", "",
          "measured once", key="emphasis"),
    Claim("C's codes keep more shape than A's", "", "paired interval", margin=2.0,
          key="more_shape"),
    Claim("C's codes keep no more shape than A's (shape probe, C - A <= 2 points)", "",
          "negation", key="no_more_shape"),
    # follow-up 3 (digits): why iterated encoding-decoding drifts
    Claim("with a 16-d code, C's images stay semantically similar (accuracy after {k} "
          "iterations within 10 points of after 1, every seed)", "", "every seed",
          key="stays16"),
    Claim("the code size is a material cause (a 16-d code drops more than 5 points less "
          "than a 4-d one, arm C, paired by seed)", "", "paired interval", margin=5.0,
          key="code_cause"),
    Claim("the loss is a material cause (the pixel loss alone drops more than 5 points less "
          "than DeePSiM, 4-d codes, paired by seed)", "", "paired interval", margin=5.0,
          key="loss_cause"),
    Claim("the iterates settle (the pixel change between successive iterates shrinks from "
          "iteration 2 to the last, every run)", "", "every seed", unit="runs",
          key="settles"),
    Claim("the iterates concentrate on fewer classes (the entropy of the predicted classes "
          "falls, every run)", "", "every seed", unit="runs", key="fewer"),
)

#: Arms added by the digits sharpness follow-up, ``key: (label, overrides of the main
#: arms' settings)``: D, the missing cell of the 2 x 2 design (feature term off / on x
#: adversarial term off / on), and B' (arm B with its feature term on the comparator's
#: second conv block, ``relu2``, the estimator's default layer and the one the shapes arms
#: compare, instead of the logits, ``head``, which the digits arms compare).
SHARPNESS_ARMS = {
    "D": ("D: pixel + adversarial", dict(lambda_feat=0.0)),
    "B-relu2": ("B': pixel + feature on relu2", dict(lambda_adv=0.0,
                                                       comparator_layer="relu2")),
}

#: (arm, code width) of the iterated encoding-decoding follow-up (full mode only).
ITERATE_CONFIGS = (("A", 4), ("C", 4), ("C", 16))
_ITERATE_HEADING = "Follow-up 3 (digits): why iterated encoding-decoding drifts"

#: Gaussian blurs (pixels) of the real test images, as reference points of the measures.
BLURS = (0.5, 1.0)

#: Shapes follow-up: a compared layer whose shape emphasis (see ``_shapes_followup``) is
#: below this puts no material extra weight on the shape over the pixel term (the logits
#: reach about 11 in the quick run).
EMPHASIS_MATERIAL = 1.5

#: Iterations of the shapes follow-up's feature probes (300 left two of the five
#: unconverged at full scale).
PROBE_MAX_ITER = 1000


def _followup_config(quick, cfg):
    """Settings of the follow-up parts: the main protocol's epochs and channels (``cfg``),
    on the first ``seeds`` seeds. The quick run has no iterated encoding-decoding arms
    (``iterate`` empty: that follow-up runs in full mode only)."""
    return dict(seeds=min(2 if quick else 3, cfg["seeds"]),
                sharpness_arms={k: v[1] for k, v in SHARPNESS_ARMS.items()},
                iterate=() if quick else ITERATE_CONFIGS, n_pairs=300 if quick else 1000,
                blurs=BLURS,
                edge_quantile=0.8, hf_cutoff=0.25, version=2)


def _blurred(rows, hw, sigma):
    from scipy.ndimage import gaussian_filter

    x = np.asarray(rows, dtype=np.float64).reshape(-1, *hw)
    return gaussian_filter(x, sigma=(0, sigma, sigma), mode="nearest").reshape(len(x), -1)


def _fit_ae(dataset, arm, seed, cfg, data_seed, prepared, *, code=None, overrides=None):
    """A ``DeePSiMAutoencoder`` of the main protocol (``cfg[dataset]``) for arm ``arm``
    ("A", "B" or "C"), optionally with another code width and other settings
    (``overrides``); returns it and the data."""
    from sklearn_papers.generative import DeePSiMAutoencoder

    data = load_data(dataset, data_seed, cfg["shapes"]["n"], cfg.get("max_train"))
    X_tr, X_te, y_tr, y_te, hw = data
    dcfg = cfg[dataset]
    arm_name = next(a for a in ARMS if a.startswith(arm))
    params = dict(LOSS, n_components=dcfg["code"] if code is None else code,
                  channels=dcfg["channels"], max_epochs=dcfg["epochs"], image_shape=hw,
                  random_state=seed, comparator=prepared["comparator"],
                  comparator_layer=dcfg["layer"])
    params.update(ARMS[arm_name])
    params.update(overrides or {})
    return DeePSiMAutoencoder(**params).fit(X_tr, y_tr), data


@in_one_torch_thread
def _fit_sharpness_arm(key, seed, cfg, fcfg, data_seed, prepared):
    """Follow-up part (digits): the added arm ``key`` of ``fcfg["sharpness_arms"]``; the
    main metrics and the sharpness measures on the full test set, and its first 10
    reconstructions."""

    start = time.process_time()
    ae, (X_tr, X_te, y_tr, y_te, hw) = _fit_ae("digits", "C", seed, cfg, data_seed,
                                               prepared,
                                               overrides=fcfg["sharpness_arms"][key])
    recon = ae.inverse_transform(ae.transform(X_te))
    kw = dict(edge_quantile=fcfg["edge_quantile"], hf_cutoff=fcfg["hf_cutoff"])
    return dict(key=key, seed=seed, mse=float(((recon - X_te) ** 2).mean()),
                sharp=sharpness(recon, hw) / sharpness(X_te, hw),
                acc=100 * prepared["clf"].score(recon, y_te),
                measures=sharpness_measures(recon, X_te, hw, **kw),
                recon=recon[:10], cpu=time.process_time() - start)


def _comparator_features(module, layer, rows):
    import torch

    from sklearn_papers.nn import FrozenComparator

    frozen = FrozenComparator(copy.deepcopy(module), layer)  # leaves ``module`` as it is
    with torch.no_grad():
        return frozen(torch.as_tensor(np.ascontiguousarray(rows, dtype=np.float32))).numpy()


@in_one_torch_thread
def _shapes_sensitivity(cfg, fcfg, data_seed, prepared):
    """Follow-up part (shapes): what the comparator's features encode. Per factor, the
    normalised pixel and feature distances between images that differ in that factor
    only (one step), and linear probes of the compared layer's features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_papers.datasets import Shapes

    start = time.process_time()
    module = prepared["comparator"]
    layers = (cfg["shapes"]["layer"], "head")
    X_tr, X_te, y_tr, y_te, hw, f_tr, f_te = load_data(
        "shapes", data_seed, cfg["shapes"]["n"], cfg.get("max_train"), return_factors=True)
    pix_var = float(X_tr.var(axis=0).mean())
    feats_tr = {ly: _comparator_features(module, ly, X_tr) for ly in layers}
    feat_var = {ly: float(f.var(axis=0).mean()) for ly, f in feats_tr.items()}

    data = Shapes(16, n_scales=3, n_orientations=4, n_positions=6)
    rng = np.random.RandomState(data_seed + 19)
    base = data.sample_factors(fcfg["n_pairs"], random_state=rng)
    x0 = data.sample_observations_from_factors(base)
    f0 = {ly: _comparator_features(module, ly, x0) for ly in layers}
    dist = {}
    for k, name in enumerate(FACTORS):
        size = data.factor_sizes[k]
        moved = base.copy()
        if name == "shape":
            moved[:, k] = (base[:, k] + rng.randint(1, size, len(base))) % size
        elif name == "orientation":
            moved[:, k] = (base[:, k] + 1) % size
        else:  # one step up, or down at the top
            moved[:, k] = np.where(base[:, k] < size - 1, base[:, k] + 1, base[:, k] - 1)
        x1 = data.sample_observations_from_factors(moved)
        row = {"pixel": float(((x1 - x0) ** 2).mean() / pix_var)}
        for ly in layers:
            f1 = _comparator_features(module, ly, x1)
            row[ly] = float(((f1 - f0[ly]) ** 2).mean() / feat_var[ly])
        dist[name] = row
    feats_te = _comparator_features(module, layers[0], X_te)
    probe = {name: 100 * make_pipeline(StandardScaler(),
                                       LogisticRegression(max_iter=PROBE_MAX_ITER))
             .fit(feats_tr[layers[0]], f_tr[:, k]).score(feats_te, f_te[:, k])
             for k, name in enumerate(FACTORS)}
    return dict(layers=layers, dist=dist, probe=probe, n_pairs=len(base),
                width=int(feats_te.shape[1]), cpu=time.process_time() - start)


@in_one_torch_thread
def _iterate_part(arm, code, seed, cfg, fcfg, data_seed, prepared):
    """Follow-up part (digits): iterated ``x -> decode(encode(x))`` of one autoencoder
    (arm, code width): per iteration the independent classifier's and the comparator's
    accuracy against the original labels, the pixel MSE to the original and to the
    previous iterate, and how far the codes move."""

    start = time.process_time()
    ae, (X_tr, X_te, y_tr, y_te, hw) = _fit_ae("digits", arm, seed, cfg, data_seed,
                                               prepared, code=code)
    module, classes = prepared["comparator"], np.arange(10)
    rows, prev_code = X_te, None
    out = {k: [] for k in ("acc", "comp_acc", "mse_orig", "mse_step", "code_step", "spread",
                           "entropy")}
    images = [X_te[:8]]
    real_var = float(X_te.var(axis=0).mean())
    for _ in range(cfg["iterations"]):
        z = ae.transform(rows)
        new = ae.inverse_transform(z)
        pred = prepared["clf"].predict(new)
        share = np.bincount(np.searchsorted(classes, pred), minlength=len(classes)) / len(pred)
        out["acc"].append(100 * float((pred == y_te).mean()))
        out["entropy"].append(float(-(share[share > 0] * np.log2(share[share > 0])).sum()))
        out["spread"].append(float(new.var(axis=0).mean()) / real_var)
        out["comp_acc"].append(_comparator_accuracy(module, classes, new, y_te))
        out["mse_orig"].append(float(((new - X_te) ** 2).mean()))
        out["mse_step"].append(float(((new - rows) ** 2).mean()))
        out["code_step"].append(np.nan if prev_code is None else float(
            np.linalg.norm(z - prev_code, axis=1).mean()
            / np.linalg.norm(prev_code, axis=1).mean()))
        prev_code, rows = z, new
        images.append(new[:8])
    return dict(arm=arm, code=code, seed=seed, images=images, cpu=time.process_time() - start,
                **out)


def _followup_parts(cfg, fcfg, seeds, data_seed, prepared, protocol):
    """``(name, (key, func, args, params), cost)`` of the follow-up parts."""
    fseeds = seeds[:fcfg["seeds"]]
    common = {**protocol, "followup": fcfg, "data_seed": data_seed}
    parts = []
    for arm, code in fcfg["iterate"]:
        for s in fseeds:
            name = ("iterate", arm, code, s)
            parts.append((name, (f"followup/iterate/{arm}/code={code}/seed={s}", _iterate_part,
                                 (arm, code, s, cfg, fcfg, data_seed, prepared["digits"]),
                                 {**common, "kind": "iterate", "arm": arm, "code": code,
                                  "seed": s}),
                          (5.0 if arm == "A" else 8.6) * (1.2 if code > 4 else 1.0)))
    for key in fcfg["sharpness_arms"]:
        for s in fseeds:
            parts.append((("sharpness", key, s),
                          (f"followup/digits/{key}/seed={s}", _fit_sharpness_arm,
                           (key, s, cfg, fcfg, data_seed, prepared["digits"]),
                           {**common, "kind": "sharpness", "arm": key, "seed": s}),
                          7.5 if key == "D" else 5.5))
    parts.append((("sensitivity",), ("followup/shapes/comparator-sensitivity",
                                     _shapes_sensitivity,
                                     (cfg, fcfg, data_seed, prepared["shapes"]),
                                     {**common, "kind": "sensitivity",
                                      "probe_max_iter": PROBE_MAX_ITER}), 2.0))
    return parts


def _followed(outcome):
    """How the followed claim came out in this run, in words (``outcome`` of its verdict)."""
    return {HOLDS: "which held in this run", NOT_HOLDS: "which did not hold in this run"}.get(
        outcome, "which was inconclusive in this run")


def _explanation(outcome):
    """The opening words of a follow-up's explanation, by the outcome of its verdicts."""
    return "Explanation " + {HOLDS: "**supported**: ", NOT_HOLDS: "**not supported**: "}.get(
        outcome, "**not decided** (a verdict above is inconclusive): ")


def _verdict(result, verdict, claim=None, rule=None):
    """One line of a follow-up's verdicts, kept in ``result``: the claim, then a
    :class:`~._claims.Verdict`'s outcome with its rule and numbers, or the outcome of a
    declared ``claim`` that :func:`~._claims.judge` does not judge, with ``rule`` saying
    how it was reached."""
    statement = (claim or verdict.claim).statement
    return f"- {statement}: " + result.verdict(verdict, claim=claim, rule=rule,
                                                style="outcome")


#: How the shapes follow-up's single measurement (of one fixed comparator) is judged: a
#: value, not a mean over seeds, so no interval rule applies.
_MEASURED = "measured once (one fixed comparator, no seeds)"


def _plot_sharpness(ctx, X_te, runs, order, labels, mean, refs, sharp_keys, seed):
    """Follow-up 1's figure: the reconstructions of each arm (``seed``) and the sharpness
    measures of each arm and of the blurred real images."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1.1, 1]})
    _grid(axes[0], [X_te] + [runs[k][0]["recon"] for k in order], (8, 8),
          ["real"] + [labels[k].split(":")[0] for k in order])
    axes[0].set_title(f"digits, seed {seed}", fontsize=9)
    bars = order + [r for r in refs if r != "real"]
    width = 0.8 / len(bars)
    for i, name in enumerate(bars):
        vals = [mean[name][m] if name in mean else refs[name][m] for m in sharp_keys]
        axes[1].bar(np.arange(3) + i * width, vals, width,
                    label=labels[name] if name in labels else name,
                    color=None if name in mean else str(0.4 + 0.3 * (i - len(order))))
    axes[1].axhline(1.0, color="k", lw=0.8, ls="--")
    axes[1].set_xticks(np.arange(3) + 0.4 - width / 2, sharp_keys)
    axes[1].set_ylabel("relative to the real images")
    axes[1].set_ylim(0, 1.45)
    axes[1].legend(fontsize=6, ncol=2, loc="upper center")
    axes[1].set_title("sharpness measured three ways (1 = real; first 10 test images)",
                      fontsize=9)
    fig.tight_layout()
    return save_figure(fig, ctx, "deepsim_followup_sharpness.png", dpi=110)


def _sharpness_measured(ctx, cfg, fcfg, seeds, outputs, follow):
    """The numbers of follow-up 1: runs, labels and order of the arms, the 2 x 2 design's
    table and per-seed effects, the four measures per arm and of the blurred real images,
    and the verdicts of the design."""
    fseeds = seeds[:fcfg["seeds"]]
    X_te = load_data("digits", ctx.random_state, max_train=cfg.get("max_train"))[1][:10]
    hw = (8, 8)
    kw = dict(edge_quantile=fcfg["edge_quantile"], hf_cutoff=fcfg["hf_cutoff"])
    names = list(ARMS)
    runs = {"A": [outputs[("fit", "digits", names[0], s)] for s in fseeds],
            "B": [outputs[("fit", "digits", names[1], s)] for s in fseeds],
            "C": [outputs[("fit", "digits", names[2], s)] for s in fseeds]}
    runs.update({key: [follow[("sharpness", key, s)] for s in fseeds]
                 for key in fcfg["sharpness_arms"]})
    labels = {"A": names[0], "B": names[1] + " (on head)", "C": names[2]}
    labels.update({key: SHARPNESS_ARMS[key][0] if key in SHARPNESS_ARMS else key
                   for key in fcfg["sharpness_arms"]})
    order = ["A", "B"] + [k for k in fcfg["sharpness_arms"] if k != "D"] + ["D", "C"]
    order = [k for k in order if k in runs]
    sharp = {k: np.array([r["sharp"] for r in runs[k]]) for k in order}
    # the 2 x 2 design on the full test set: feature term off/on x adversarial off/on
    adv_effect = ((sharp["C"] - sharp["B"]) + (sharp["D"] - sharp["A"])) / 2
    feat_effect = ((sharp["B"] - sharp["A"]) + (sharp["C"] - sharp["D"])) / 2
    design = [{"": "adversarial off", "feature off": f"A: {format_mean_std(sharp['A'], 3)}",
               "feature on (head)": f"B: {format_mean_std(sharp['B'], 3)}"},
              {"": "adversarial on (0.1)",
               "feature off": f"D: {format_mean_std(sharp['D'], 3)}",
               "feature on (head)": f"C: {format_mean_std(sharp['C'], 3)}"}]
    measures = {k: [sharpness_measures(r["recon"], X_te, hw, **kw) for r in runs[k]]
                for k in order}
    refs = {f"real, blurred {b:g} px": sharpness_measures(_blurred(X_te, hw, b), X_te, hw, **kw)
            for b in fcfg["blurs"]}
    refs["real"] = sharpness_measures(X_te, X_te, hw, **kw)
    keys = ("gradient", "edge gradient", "flat gradient", "high-frequency power")
    sharp_keys = ("gradient", "edge gradient", "high-frequency power")
    table = [{"images": labels[k], **{m: format_mean_std([v[m] for v in measures[k]], 3)
                                      for m in keys},
              "accuracy (%)": format_mean_std([r["acc"] for r in runs[k]], 1)}
             for k in order]
    table += [{"images": name, **{m: f"{v[m]:.3f}" for m in keys}, "accuracy (%)": ""}
              for name, v in refs.items()]
    mean = {k: {m: float(np.mean([v[m] for v in measures[k]])) for m in keys} for k in order}
    v_adv = judge(CLAIMS_FOLLOWUP["adv"], adv_effect, 0.0)
    v_feat = judge(CLAIMS_FOLLOWUP["feat"], adv_effect, feat_effect)
    per_seed = {k: {m: [v[m] for v in measures[k]] for m in keys} for k in order}
    v_agree = all_of(*(part for m in sharp_keys for part in (
        negation(judge(CLAIMS_FOLLOWUP["sharper_by"].at(name="B", m=m), per_seed["B"][m],
                       per_seed["A"][m])),
        judge(CLAIMS_FOLLOWUP["sharper_by"].at(name="D", m=m), per_seed["D"][m], per_seed["A"][m]))))
    return dict(fseeds=fseeds, X_te=X_te, runs=runs, labels=labels, order=order,
                sharp=sharp, adv_effect=adv_effect, feat_effect=feat_effect, design=design,
                refs=refs, sharp_keys=sharp_keys, table=table, mean=mean, per_seed=per_seed,
                v_adv=v_adv, v_feat=v_feat, v_agree=v_agree)


def _sharpness_followup(result, ctx, cfg, fcfg, seeds, outputs, follow, followed):
    """Markdown and figure of follow-up 1 (digits: which term makes the images sharp?)."""
    m_ = _sharpness_measured(ctx, cfg, fcfg, seeds, outputs, follow)
    (fseeds, X_te, runs, labels, order, sharp, adv_effect, feat_effect, design, refs,
     sharp_keys, table, mean, per_seed, v_adv, v_feat, v_agree) = m_.values()
    md = ["#### Follow-up 1 (digits): which term makes the images sharp", "",
          f"Claim followed: B (pixel + feature) sharper than A (every seed), "
          f"{_followed(followed)} above. Design: a 2 x 2 "
          "factorial of the two perceptual terms, feature term off / on x adversarial term "
          "off / on: A, B and C are the main arms, and D (pixel + adversarial, "
          "lambda_adv=0.1, no feature term) is the missing cell; B' is B with its feature "
          "term on the comparator's second conv block (`relu2`, 4 x 4 feature maps: the "
          "estimator's default layer, and the one the shapes arms compare) instead of the "
          "logits (`head`, 10 numbers that say which digit, "
          "not where its strokes are). Everything else as the main arms (epochs, channels, "
          "weights, "
          "the shared comparator), seeds " + ", ".join(str(s) for s in fseeds) + ".", "",
          "Gradient ratio (the report's sharpness, full test set), mean ± std over those "
          "seeds:", "", result.table(design), "",
          "Effect on the gradient ratio, per seed (each the mean of its two differences in "
          "the 2 x 2 table): adversarial term " + ", ".join(f"{v:+.3f}" for v in adv_effect)
          + "; feature term " + ", ".join(f"{v:+.3f}" for v in feat_effect) + ".", "",
          "Is the measure the cause? The gradient ratio is a total variation, which "
          "blurring keeps where an edge is isolated and monotone (it drops only where blur "
          "merges thin strokes), so sharpness is measured three more ways "
          "(`sharpness_measures`): the gradient at the real images' edges (top "
          f"{100 * (1 - fcfg['edge_quantile']):.0f} % of their gradient magnitudes), the "
          "gradient where the real image is flattest (over the real mean gradient: texture "
          "or artefacts), and the share of spectral power above "
          f"{fcfg['hf_cutoff']} cycles/pixel; each relative to the real images, on the "
          "first 10 test images (the only reconstructions the main parts keep; accuracy "
          "on the full test set), with the real images blurred by a Gaussian as reference "
          "points.", "", result.table(table), "",
          _verdict(result, v_adv), _verdict(result, v_feat),
          _verdict(result, v_agree, CLAIMS_FOLLOWUP["agree"], _ALL)]
    texture = []
    for key in fcfg["sharpness_arms"]:
        if key == "D":
            continue
        name = f"{labels[key].split(':')[0]} ({labels[key].split(': ')[-1]})"
        every = judge(CLAIMS_FOLLOWUP["arm_every"].at(name=name), sharp[key], sharp["A"])
        edges = all_of(*(judge(CLAIMS_FOLLOWUP["sharper_by"].at(name=name, m=m), per_seed[key][m],
                               per_seed["A"][m])
                         for m in ("edge gradient", "high-frequency power")))
        md.append(_verdict(result, every))
        md.append(_verdict(result, edges, CLAIMS_FOLLOWUP["arm_edges"].at(name=name),
                           "paired interval per measure; both must hold"))
        if every.outcome == HOLDS and edges == NOT_HOLDS:
            texture.append(
                f"{name.split(' (')[0]} raises the gradient ratio with texture where the "
                f"digits are flat (flat gradient {mean[key]['flat gradient']:.3f} against "
                f"A's {mean['A']['flat gradient']:.3f}), not with steeper edges (edge "
                f"gradient {mean[key]['edge gradient']:.3f} against "
                f"{mean['A']['edge gradient']:.3f}) or more high frequencies.")
    explained = all_of(v_adv, v_feat, v_agree)
    b0 = fcfg["blurs"][0]
    md += ["", _explanation(explained)
           + ("at this scale the sharpness is the adversarial term's. A squared distance "
              "between the features of a fixed network is, like the pixel distance, "
              "minimised under an uncertain 4-d code by images whose features are the "
              "average, and only the discriminator penalises averaged, blurry images. This "
              "matches the paper's motivation for the adversarial term, a natural-image "
              "prior (the feature map is contractive, so images that are not natural can "
              "match the features); 'B sharper than A' asks the feature term alone for "
              "sharpness. "
              + " ".join(texture)
              + f" (For scale: the real images blurred by {b0:g} px have an edge-gradient "
              f"ratio of {refs[f'real, blurred {b0:g} px']['edge gradient']:.3f}; A's is "
              f"{mean['A']['edge gradient']:.3f}, C's {mean['C']['edge gradient']:.3f}.)"
              if explained == HOLDS else
              "the terms' effects or the measures disagree with that reading (see the "
              "numbers above)." if explained == NOT_HOLDS else
              "the run cannot tell whether the sharpness is the adversarial term's (see "
              "the numbers above)."), ""]

    path = _plot_sharpness(ctx, X_te, runs, order, labels, mean, refs, sharp_keys,
                           fseeds[0])
    return md, path


def _shapes_followup(result, ctx, cfg, sens, runs, gains, followed):
    """Markdown and figure of follow-up 2 (shapes: why C is not better classified)."""
    import matplotlib.pyplot as plt

    layer, head = sens["layers"]
    dist = sens["dist"]
    table = [{"factor changed (one step)": name, "pixel distance": f"{d['pixel']:.3f}",
              f"`{layer}` distance": f"{d[layer]:.3f}", "`head` distance": f"{d[head]:.3f}",
              f"`{layer}` / pixel": f"{d[layer] / d['pixel']:.2f}",
              f"`{layer}` probe acc. (%)": f"{sens['probe'][name]:.1f}"}
             for name, d in dist.items()]

    def emphasis(ly):
        pos = np.mean([dist[k][ly] for k in ("pos_x", "pos_y")])
        pix = np.mean([dist[k]["pixel"] for k in ("pos_x", "pos_y")])
        return (dist["shape"][ly] / pos) / (dist["shape"]["pixel"] / pix)

    e_layer, e_head = emphasis(layer), emphasis(head)
    arms = list(ARMS)
    shape_a = [r["probe"]["shape"] for r in runs[arms[0]]]
    shape_c = [r["probe"]["shape"] for r in runs[arms[2]]]
    code_gain = float(np.mean(shape_c) - np.mean(shape_a))
    v1 = HOLDS if e_layer < EMPHASIS_MATERIAL else NOT_HOLDS
    # "no more shape": the negation of "C's codes keep more than 2 points more shape"
    v2 = negation(judge(CLAIMS_FOLLOWUP["more_shape"], shape_c, shape_a))
    supported = all_of(v1, v2)
    md = ["#### Follow-up 2 (shapes): how much of the shape the feature term can keep", "",
          f"Claim followed: C accuracy >= A + 2 points, "
          f"{_followed(followed)} above "
          f"(C - A = {gains.mean():+.1f} points). Design: the feature term can push into the "
          "code only what the compared features weigh. For "
          f"{sens['n_pairs']} pairs of `Shapes` images identical but for one factor, "
          "changed by one step (another shape; the next scale, orientation or position), "
          "the squared distance of the pair in pixels and at the comparator's compared layer "
          f"(`{layer}`, {sens['width']} features) and logits (`head`), each normalised as the "
          "loss normalises its terms (mean squared difference over the training images' "
          "mean per-pixel or per-feature variance); and linear probes (logistic regression "
          f"on the standardised `{layer}` features of the real images, train/test as the "
          "autoencoders) of what that layer encodes. The independent classifier's target "
          "is the shape.", "", result.table(table), "",
          f"Shape emphasis (a shape change relative to a one-step shift, at the layer, over "
          f"the same ratio in pixels; 1 = weighs shape as the pixel term does): `{layer}` "
          f"{e_layer:.2f}, `head` {e_head:.2f}. Shape read from the 4-d codes (main "
          f"probes): A {np.mean(shape_a):.1f} %, C {np.mean(shape_c):.1f} % "
          f"(C - A {code_gain:+.1f} points).", "",
          _verdict(result, v1, CLAIMS_FOLLOWUP["emphasis"].at(layer=layer, material=EMPHASIS_MATERIAL),
                   _MEASURED),
          _verdict(result, v2, CLAIMS_FOLLOWUP["no_more_shape"], "the opposite claim, C's codes keep "
                   "more than 2 points more shape, judged by paired interval and negated"), "",
          _explanation(supported)
          + (f"`{layer}` does encode the shape (a linear probe reads it from the real "
             f"images' features at {sens['probe']['shape']:.1f} %, the position at "
             f"{sens['probe']['pos_x']:.1f} / {sens['probe']['pos_y']:.1f} %), but the loss "
             "is a squared distance, and in it a shape change counts, relative to a "
             f"one-step shift, about as it does in pixels (emphasis {e_layer:.2f}; shape "
             f"{dist['shape'][layer]:.3f} against shifts {dist['pos_x'][layer]:.3f} / "
             f"{dist['pos_y'][layer]:.3f}). So the feature term adds no pressure to keep "
             "the shape in a 4-d code that position and scale already fill; C's codes keep "
             "the shape no better than A's and its reconstructions cannot be classified "
             f"better. The logits weigh the shape {e_head:.1f} times more than pixels do, "
             "but comparing them made the autoencoders collapse (see the user guide)."
             if supported == HOLDS else
             "the compared layer does weigh the shape more than the pixels do, or C's "
             "codes keep more shape than A's: the accuracy gap has another cause (see "
             "the numbers above)." if supported == NOT_HOLDS else
             "the run cannot tell whether C's codes keep more shape than A's (see the "
             "numbers above)."), ""]

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    x = np.arange(len(dist))
    for i, (key, label) in enumerate((("pixel", "pixels"), (layer, f"`{layer}`"),
                                      (head, "`head` (logits)"))):
        ax.bar(x + (i - 1) * 0.27, [d[key] for d in dist.values()], 0.27, label=label)
    ax.set_xticks(x, list(dist))
    ax.set_ylabel("normalised squared distance")
    ax.set_title("shapes: distance of image pairs differing in one factor", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = save_figure(fig, ctx, "deepsim_followup_comparator.png", dpi=110)
    return md, path


def _iterate_table(runs, k):
    """Follow-up 3's table rows, and per (arm, code) the accuracy drop from the first to
    the last iteration and the first iteration's accuracy (per seed)."""
    table, drop, first = [], {}, {}

    def pair(values, digits):
        values = np.array(values)
        return f"{values[:, 0].mean():.{digits}f} / {values[:, -1].mean():.{digits}f}"

    for (arm, code), rs in runs.items():
        acc = np.array([r["acc"] for r in rs])
        step = np.array([r["mse_step"] for r in rs])
        drop[arm, code], first[arm, code] = acc[:, 0] - acc[:, -1], acc[:, 0]
        table.append({
            "autoencoder": f"{arm}, {code}-d code",
            "indep. acc. 1 / k (%)": pair(acc, 1),
            "change per seed (points)": ", ".join(f"{-d:+.1f}" for d in drop[arm, code]),
            "comparator acc. 1 / k (%)": pair([r["comp_acc"] for r in rs], 1),
            "pixel MSE to original 1 / k": pair([r["mse_orig"] for r in rs], 4),
            "spread 1 / k": pair([r["spread"] for r in rs], 3),
            "class entropy 1 / k (bits)": pair([r["entropy"] for r in rs], 2),
            "code change 2 / k (%)": pair([100 * np.asarray(r["code_step"][1:]) for r in rs],
                                          1) if k > 1 else "-",
            "MSE between iterates 2 / k":
                f"{step[:, min(1, k - 1)].mean():.4f} / {step[:, -1].mean():.4f}"})
    return table, drop, first


def _iterate_why(runs, k, drop, first, code_cause, loss_cause, settles):
    """Follow-up 3's explanation, in words, from its runs and verdicts."""
    mean_drop = {key: float(d.mean()) for key, d in drop.items()}
    drops = ", ".join(f"{arm} {code}-d {mean_drop[arm, code]:.1f}" for arm, code in runs)
    if HOLDS in (code_cause.outcome, loss_cause.outcome):
        why = ("the drift has a material cause in "
               + " and ".join(n for n, v in (("the code size", code_cause),
                                             ("the loss", loss_cause)) if v.outcome == HOLDS)
               + f" (mean drops in points: {drops}).")
    elif k > 1:
        per = {key: mean_drop[key] / (k - 1) for key in mean_drop}
        codes = {key: (100 * np.mean([r["code_step"][1] for r in rs]),
                       100 * np.mean([r["code_step"][-1] for r in rs]))
                 for key, rs in runs.items()}
        ent = {key: (np.mean([r["entropy"][0] for r in rs]),
                     np.mean([r["entropy"][-1] for r in rs])) for key, rs in runs.items()}
        spread = {key: (np.mean([r["spread"][0] for r in rs]),
                        np.mean([r["spread"][-1] for r in rs])) for key, rs in runs.items()}
        why = ("neither the code size nor the loss: every variant loses about the same per "
               "further pass (" + ", ".join(f"{a} {c}-d {per[a, c]:.1f}" for a, c in runs)
               + " points per pass), although one pass keeps the class with very different "
               "accuracy (" + ", ".join(f"{a} {c}-d {first[a, c].mean():.1f} %"
                                        for a, c in runs) + "). What the variants share is "
               "an encoder trained on real images, never on its own reconstructions: "
               "encode(decode(z)) is not z (the codes move by "
               + ", ".join(f"{codes[a, c][0]:.1f} %" for a, c in runs)
               + " of their norm at the second pass, "
               + ", ".join(f"{codes[a, c][1]:.1f} %" for a, c in runs)
               + " at the last), so every pass re-encodes with an error, and the iterates "
               + ("settle (their successive changes shrink) " if settles.outcome == HOLDS
                  else "drift ")
               + "on fewer classes (predicted-class entropy "
               + ", ".join(f"{ent[a, c][0]:.2f} -> {ent[a, c][1]:.2f}" for a, c in runs)
               + " bits) and at "
               + ("higher" if all(v[1] > v[0] for v in spread.values()) else "changed")
               + " contrast (spread " + ", ".join(f"{spread[a, c][0]:.3f} -> "
                                                   f"{spread[a, c][1]:.3f}" for a, c in runs)
               + "). This is consistent with, not a proof of, that cause: a cycle term "
               "(encode(decode(z)) = z) in training would test it. The paper's autoencoders "
               "are far larger and trained on ImageNet.")
    else:
        why = f"not found: no variant differs materially (mean drops in points: {drops})."
    return why


def _plot_iterate(ctx, runs, k):
    """Follow-up 3's figure: accuracy, MSE to the original and spread by iteration."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    it = np.arange(1, k + 1)
    for (arm, code), rs in runs.items():
        label = f"{arm}, {code}-d"
        for ax, field in zip(axes, ("acc", "mse_orig", "spread")):
            vals = np.array([r[field] for r in rs])
            ax.errorbar(it, vals.mean(0), yerr=vals.std(0), marker="o", ms=3, label=label)
    for ax, label in zip(axes, ("indep. classifier acc. (%)", "pixel MSE to the original",
                                "spread (1 = real test images)")):
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=7)
    axes[1].set_title("digits: x -> decode(encode(x)), repeated (mean ± std over seeds)",
                      fontsize=9)
    fig.tight_layout()
    path = save_figure(fig, ctx, "deepsim_followup_iterated.png", dpi=110)
    return path


def _iterate_followup(result, ctx, cfg, fcfg, seeds, follow, main_accs, followed):
    """Markdown and figure of follow-up 3 (digits: why iterated encoding-decoding drifts)."""
    fseeds = seeds[:fcfg["seeds"]]
    runs = {(arm, code): [follow[("iterate", arm, code, s)] for s in fseeds]
            for arm, code in fcfg["iterate"]}
    k = cfg["iterations"]
    table, drop, first = _iterate_table(runs, k)
    c4, c16, a4 = ("C", 4), ("C", 16), ("A", 4)
    all_runs = [r for rs in runs.values() for r in rs]

    def judged(key, a, b, ready):  # a comparison whose runs are missing does not hold
        claim = CLAIMS_FOLLOWUP[key].at(k=k)
        return judge(claim, a, b) if ready else judge(claim, [0.0], 0.0)

    stays16 = judged("stays16", 10.0 - drop.get(c16, 0.0), 0.0, c16 in drop)
    code_cause = judged("code_cause", drop.get(c4), drop.get(c16), c16 in drop and c4 in drop)
    loss_cause = judged("loss_cause", drop.get(c4), drop.get(a4), a4 in drop and c4 in drop)
    settles = judged("settles", [r["mse_step"][1] - r["mse_step"][-1] for r in all_runs]
                     if k > 2 else None, 0.0, k > 2)
    fewer = judge(CLAIMS_FOLLOWUP["fewer"], [r["entropy"][0] - r["entropy"][-1] for r in all_runs], 0.0)
    same = (c4 in runs and np.allclose(runs[c4][0]["acc"], main_accs))
    md = [f"#### {_ITERATE_HEADING}", "",
          f"Claim followed: images stay semantically similar over iterations, "
          f"{_followed(followed)} above. Candidate "
          "causes: the 4-d code (each pass squeezes the image into 4 numbers again), the "
          "perceptual loss (its feature and adversarial terms trade pixel fidelity for "
          "plausible detail, which the next pass takes as input), or the iterated map "
          "itself (whatever the loss, encode(decode(z)) need not be z, so each pass can "
          "move the code). Design: per seed ("
          + ", ".join(str(s) for s in fseeds) + "), three autoencoders of the main digits "
          "protocol iterated " + str(k) + " times: A (pixel loss) with the 4-d code, C "
          "(DeePSiM) with the 4-d code, and C with a 16-d code; measured in class space "
          "(the independent SVC, and the comparator classifier, against the original "
          "labels; the entropy of the SVC's predicted classes, log2(10) = 3.32 bits when "
          "they are uniform), in pixel space (MSE to the original image, and between "
          "successive iterates), by the spread of the images (mean per-pixel variance "
          "across the test set, over the real test images') and in code space (mean "
          "distance between the codes of successive passes, over the codes' mean norm).",
          "", result.table(table), "",
          f"The refitted C 4-d autoencoder of seed {fseeds[0]} reproduces the main "
          f"section's iteration exactly: {'yes' if same else 'no'}.", "",
          *(_verdict(result, v) for v in (stays16, code_cause, loss_cause, settles, fewer)),
          ""]
    why = _iterate_why(runs, k, drop, first, code_cause, loss_cause, settles)
    md += ["Explanation: " + why, ""]

    path = _plot_iterate(ctx, runs, k)
    return md, path


def _followup_values(ctx, cfg, fcfg, seeds, prepared, protocol):
    """The follow-ups' own parts, longest first: ``{name: value}``."""
    extra = sorted(_followup_parts(cfg, fcfg, seeds, ctx.random_state, prepared, protocol),
                   key=lambda t: t[2], reverse=True)
    with ctx.progress(total=len(extra), desc="deepsim follow-ups") as bar:
        values = cached_parts(ctx, [p for _, p, _ in extra], n_jobs=cfg["n_jobs"],
                              progress=bar)
    return {name: value for (name, _, _), value in zip(extra, values)}

def _followups_text(result, ctx, cfg, fcfg, seeds, outputs, follow, main, iterated):
    """Markdown and figures of the three follow-ups; ``main[dataset] = (verdicts by key,
    C - A accuracy gains)``, ``iterated = (accuracies, verdict)`` of the main iteration."""
    follow_cpu = sum(v["cpu"] for v in follow.values())
    md = ["One designed experiment per claim of `deepsim` that does not hold, each with its "
          f"own cached parts ({len(follow)} parts, {follow_cpu:.0f} s of CPU time in this "
          "run); each says which claim it follows and how that claim came out in this run "
          "(the main runs are `deepsim`'s parts).", ""]
    sub, path = _sharpness_followup(result, ctx, cfg, fcfg, seeds, outputs, follow,
                                    main["digits"][0]["b_sharper"].outcome)
    md += sub
    figures = [path]
    s_runs = {arm: [outputs[("fit", "shapes", arm, s)] for s in seeds] for arm in ARMS}
    sub, path = _shapes_followup(result, ctx, cfg, follow[("sensitivity",)], s_runs,
                                 main["shapes"][1], main["shapes"][0]["target_acc"].outcome)
    md += sub
    figures.append(path)
    if fcfg["iterate"]:
        sub, path = _iterate_followup(result, ctx, cfg, fcfg, seeds, follow, iterated[0],
                                      iterated[1].outcome)
        md += sub
        figures.append(path)
    else:  # the quick run leaves it to the full mode (2/3 of its follow-ups' CPU time)
        md += [full_mode_only(
            "deepsim", _ITERATE_HEADING,
            "Why do iterated encoding-decoding images drift? Arm A and arm C with a 4-d "
            "code and arm C with a 16-d code, refitted and iterated, tell the code width, "
            "the perceptual loss and the iterated map apart."), ""]
    return md, figures


def run_followup(ctx):
    """Run the follow-ups of ``deepsim``'s claims that do not hold, as an experiment of its
    own. The comparators, classifiers and autoencoders it follows are ``deepsim``'s parts:
    read from this run when it ran them, else computed (and cached) under its name."""
    cfg = deepsim.PROTOCOL.settings(ctx.quick)
    fcfg = _followup_config(ctx.quick, cfg)
    seeds = run_seeds(ctx, cfg["seeds"])
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    prepared = _prepare_all(ctx, cfg, protocol, owner="deepsim")
    outputs = _fit_all(ctx, cfg, seeds, prepared, protocol, owner="deepsim",
                       inversions=False)
    follow = _followup_values(ctx, cfg, fcfg, seeds, prepared, protocol)
    main = {}
    for dataset in _DATASETS:
        res = _arm_metrics({arm: [outputs[("fit", dataset, arm, s)] for s in seeds]
                            for arm in ARMS})
        gains = np.asarray(res[list(ARMS)[2]]["acc"]) - np.asarray(res[list(ARMS)[0]]["acc"])
        main[dataset] = ({key: v for key, v, _ in _main_claims(res, dataset)}, gains)
    model = outputs[("fit", "digits", list(ARMS)[2], seeds[0])]["model"]
    X_te, y_te = load_data("digits", ctx.random_state, max_train=cfg.get("max_train"))[1::2]
    accs, _ = _iterate(model, X_te, y_te, prepared["digits"]["clf"], cfg["iterations"])
    result = Result()
    md, figures = _followups_text(result, ctx, cfg, fcfg, seeds, outputs, follow, main,
                                  (accs, judge(CLAIMS["stays"], [accs[0] - accs[-1]])))
    shortened = (deepsim.PROTOCOL.note(True) + f" Follow-ups on {fcfg['seeds']} seeds; follow-up 3 "
                 "(iterated encoding-decoding) in full mode only." if ctx.quick else "")
    return result.done("\n".join(md), figures=figures, shortened=shortened)


EXPERIMENT_FOLLOWUP = Experiment(
    name="deepsim_followup",
    title="DeePSiM follow-ups: which term sharpens, what the comparator weighs, why "
          "iterates drift",
    paper="Dosovitskiy & Brox 2016, Generating Images with Perceptual Similarity Metrics "
          "based on Deep Networks, NeurIPS",
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=deepsim.PROTOCOL,
)
