"""Follow-ups of the DeePSiM claims that do not hold (experiment ``deepsim_followup``).

Dosovitskiy & Brox (2016); reads :mod:`.deepsim`'s cached parts (``owner="deepsim"``).
Checked: which term sharpens (digits), what the shapes comparator's layer weighs, and why
iterated encoding-decoding drifts. Claims: CLAIMS_FOLLOWUP below; setup:
docs/papers/deepsim.rst.
"""

from functools import partial

import numpy as np
from scipy.stats import entropy

from sklearn_papers.metrics import sharpness_measures
from sklearn_papers.metrics._image import _blurred
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
from sklearn_papers.reproduce._common import in_one_torch_thread, run_seeds, save_figure, subplots
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std, full_mode_only
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT_FOLLOWUP"]

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
#: arms' settings)``: D, the missing cell of the 2 x 2 design, and B', arm B comparing the
#: comparator's ``relu2`` instead of the logits.
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

#: Shape emphasis (see ``_shapes_followup``) below which a layer weighs the shape no more
#: than the pixel term does.
EMPHASIS_MATERIAL = 1.5

#: Iterations of the shapes follow-up's feature probes.
PROBE_MAX_ITER = 1000


def _followup_config(quick, cfg):
    """Settings of the follow-up parts (on the main protocol ``cfg``); the quick run leaves
    the iterated encoding-decoding arms to the full mode."""
    return dict(seeds=min(2 if quick else 3, cfg["seeds"]),
                sharpness_arms={k: v[1] for k, v in SHARPNESS_ARMS.items()},
                iterate=() if quick else ITERATE_CONFIGS, n_pairs=300 if quick else 1000,
                blurs=BLURS, edge_quantile=0.8, hf_cutoff=0.25, version=2)


@in_one_torch_thread
def _shapes_sensitivity(cfg, fcfg, data_seed, prepared):
    """Follow-up part (shapes): per factor, the normalised pixel and feature distances of
    image pairs one step apart in it, and linear probes of the compared layer."""
    from sklearn_papers.generative._base import _comparator_features
    from sklearn_papers.metrics import factor_step_distances

    layers = (cfg["shapes"]["layer"], "head")
    X_tr, X_te, _, _, _, f_tr, f_te = deepsim.load_data("shapes", cfg, data_seed)
    features = {"pixel": None, **{ly: partial(_comparator_features, prepared["comparator"], ly)
                                  for ly in layers}}
    # shape (0) is unordered, orientation (2) wraps around; one seed: the same pairs
    dist = {name: factor_step_distances(deepsim.SHAPES, f, X_tr, n_pairs=fcfg["n_pairs"],
                                        categorical=[0], cyclic=[2],
                                        random_state=data_seed + 19)
            for name, f in features.items()}
    feats_tr, feats_te = (features[layers[0]](X) for X in (X_tr, X_te))
    probe = deepsim._probe_codes(feats_tr, feats_te, f_tr, f_te, max_iter=PROBE_MAX_ITER)
    return dict(layers=layers, probe=probe, n_pairs=fcfg["n_pairs"],
                dist={factor: {name: float(d[k]) for name, d in dist.items()}
                      for k, factor in enumerate(deepsim.FACTORS)},
                width=int(feats_te.shape[1]))


@in_one_torch_thread
def _iterate_part(arm, code, seed, cfg, fcfg, data_seed, prepared):
    """Follow-up part (digits): iterated ``x -> decode(encode(x))`` of one autoencoder
    (arm, code width), measured at every iteration."""
    from sklearn_papers.generative._base import _comparator_accuracy

    ae, (X_tr, X_te, y_tr, y_te, hw, *_) = deepsim._fit_ae("digits", arm, seed, cfg,
                                                           data_seed, prepared, code=code)
    module, classes = prepared["comparator"], np.arange(10)
    rows, prev_code = X_te, None
    out = {k: [] for k in ("acc", "comp_acc", "mse_orig", "mse_step", "code_step", "spread",
                           "entropy")}
    real_var = float(X_te.var(axis=0).mean())
    for _ in range(cfg["iterations"]):
        z = ae.transform(rows)
        new = ae.inverse_transform(z)
        pred = prepared["clf"].predict(new)
        out["acc"].append(100 * float((pred == y_te).mean()))
        out["entropy"].append(float(entropy(np.bincount(pred), base=2)))
        out["spread"].append(float(new.var(axis=0).mean()) / real_var)
        out["comp_acc"].append(_comparator_accuracy(module, classes, new, y_te))
        out["mse_orig"].append(float(((new - X_te) ** 2).mean()))
        out["mse_step"].append(float(((new - rows) ** 2).mean()))
        out["code_step"].append(np.nan if prev_code is None else float(
            np.linalg.norm(z - prev_code, axis=1).mean()
            / np.linalg.norm(prev_code, axis=1).mean()))
        prev_code, rows = z, new
    return dict(arm=arm, code=code, seed=seed, **out)


def _followup_parts(cfg, fcfg, seeds, data_seed, prepared, protocol):
    """``(name, (key, func, args, params), cost)`` of the follow-up parts."""
    fseeds = seeds[:fcfg["seeds"]]
    common = {**protocol, "followup": fcfg, "data_seed": data_seed}
    parts = [(("iterate", arm, code, s),
              (f"followup/iterate/{arm}/code={code}/seed={s}", _iterate_part,
               (arm, code, s, cfg, fcfg, data_seed, prepared["digits"]),
               {**common, "kind": "iterate", "arm": arm, "code": code, "seed": s}),
              (5.0 if arm == "A" else 8.6) * (1.2 if code > 4 else 1.0))
             for arm, code in fcfg["iterate"] for s in fseeds]
    parts += [(("sharpness", key, s),
               (f"followup/digits/{key}/seed={s}", deepsim._fit_arm,
                ("digits", "C", s, cfg, data_seed, prepared["digits"], False, arm_overrides),
                {**common, "kind": "sharpness", "arm": key, "seed": s}),
               7.5 if key == "D" else 5.5)
              for key, arm_overrides in fcfg["sharpness_arms"].items() for s in fseeds]
    sensitivity = ("followup/shapes/comparator-sensitivity", _shapes_sensitivity,
                   (cfg, fcfg, data_seed, prepared["shapes"]),
                   {**common, "kind": "sensitivity", "probe_max_iter": PROBE_MAX_ITER})
    return parts + [(("sensitivity",), sensitivity, 2.0)]


def _follows(key, **values):
    """The sentence naming the claim of ``deepsim`` that a follow-up follows."""
    return f"Follows the claim of `deepsim`: {deepsim.CLAIMS[key].at(**values).statement}."


def _plot_sharpness(ctx, X_te, runs, order, labels, per_seed, refs, sharp_keys, seed):
    """Follow-up 1's figure: the reconstructions of each arm (``seed``) and the sharpness
    measures of each arm and of the blurred real images."""
    fig, axes = subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1.1, 1]})
    deepsim._grid(axes[0], [X_te] + [runs[k][0]["recon"] for k in order], (8, 8),
                  ["real"] + [labels[k].split(":")[0] for k in order])
    axes[0].set_title(f"digits, seed {seed}", fontsize=9)
    bars = order + [r for r in refs if r != "real"]
    width = 0.8 / len(bars)
    for i, name in enumerate(bars):
        vals = [np.mean(per_seed[name][m]) if name in per_seed else refs[name][m]
                for m in sharp_keys]
        axes[1].bar(np.arange(3) + i * width, vals, width, label=labels.get(name, name),
                    color=None if name in per_seed else str(0.4 + 0.3 * (i - len(order))))
    axes[1].axhline(1.0, color="k", lw=0.8, ls="--")
    axes[1].set_xticks(np.arange(3) + 0.4 - width / 2, sharp_keys)
    axes[1].set_ylabel("relative to the real images")
    axes[1].set_ylim(0, 1.45)
    axes[1].legend(fontsize=6, ncol=2, loc="upper center")
    axes[1].set_title("sharpness measured three ways (1 = real; first 10 test images)",
                      fontsize=9)
    return save_figure(fig, ctx, "deepsim_followup_sharpness.png", dpi=110)


def _sharpness_followup(result, ctx, cfg, fcfg, seeds, outputs, follow):
    """Markdown and figure of follow-up 1 (digits: which term makes the images sharp?)."""
    fseeds = seeds[:fcfg["seeds"]]
    X_te = deepsim.load_data("digits", cfg, ctx.random_state)[1][:10]
    hw = (8, 8)
    kw = dict(edge_quantile=fcfg["edge_quantile"], hf_cutoff=fcfg["hf_cutoff"])
    runs = {arm[0]: rs for arm, rs in deepsim._dataset_runs(outputs, "digits", fseeds).items()}
    runs.update({key: [follow[("sharpness", key, s)] for s in fseeds]
                 for key in fcfg["sharpness_arms"]})
    names = list(deepsim.ARMS)
    labels = {"A": names[0], "B": names[1] + " (on head)", "C": names[2]}
    labels.update({key: SHARPNESS_ARMS[key][0] for key in fcfg["sharpness_arms"]})
    order = ["A", "B", *(k for k in fcfg["sharpness_arms"] if k != "D"), "D", "C"]
    sharp = {k: np.array([r["sharp"] for r in runs[k]]) for k in order}
    # the 2 x 2 design on the full test set: feature term off/on x adversarial off/on
    adv_effect = ((sharp["C"] - sharp["B"]) + (sharp["D"] - sharp["A"])) / 2
    feat_effect = ((sharp["B"] - sharp["A"]) + (sharp["C"] - sharp["D"])) / 2
    design = [{"": f"adversarial {adv}", "feature off": f"{a}: {format_mean_std(sharp[a], 3)}",
               "feature on (head)": f"{b}: {format_mean_std(sharp[b], 3)}"}
              for adv, a, b in (("off", "A", "B"), ("on (0.1)", "D", "C"))]
    measures = {k: [sharpness_measures(r["recon"], X_te, hw, **kw) for r in runs[k]]
                for k in order}
    refs = {f"real, blurred {b:g} px": sharpness_measures(_blurred(X_te, b, hw), X_te, hw, **kw)
            for b in fcfg["blurs"]}
    refs["real"] = sharpness_measures(X_te, X_te, hw, **kw)
    keys = ("gradient", "edge gradient", "flat gradient", "high-frequency power")
    sharp_keys = ("gradient", "edge gradient", "high-frequency power")
    per_seed = {k: {m: [v[m] for v in measures[k]] for m in keys} for k in order}
    table = [{"images": labels[k], **{m: format_mean_std(per_seed[k][m], 3) for m in keys},
              "accuracy (%)": format_mean_std([r["acc"] for r in runs[k]], 1)}
             for k in order]
    table += [{"images": name, **{m: f"{v[m]:.3f}" for m in keys}, "accuracy (%)": ""}
              for name, v in refs.items()]

    def sharper(name, key, m):
        return judge(CLAIMS_FOLLOWUP["sharper_by"].at(name=name, m=m), per_seed[key][m],
                     per_seed["A"][m])

    v_agree = all_of(*(part for m in sharp_keys
                       for part in (negation(sharper("B", "B", m)), sharper("D", "D", m))))
    md = ["#### Follow-up 1 (digits): which term makes the images sharp", "",
          _follows("b_sharper", dataset="digits")
          + " Gradient ratio of the 2 x 2 design of the feature and adversarial terms "
          "(full test set), mean ± std over seeds " + ", ".join(map(str, fseeds)) + ":", "",
          result.table(design), "",
          f"Sharpness measured four ways relative to the real images (edges: top "
          f"{100 * (1 - fcfg['edge_quantile']):.0f} % of the real gradient magnitudes; "
          f"high frequencies: above {fcfg['hf_cutoff']} cycles/pixel), on the first 10 test "
          "images; accuracy on the full test set.", "", result.table(table), "",
          result.verdict_line(judge(CLAIMS_FOLLOWUP["adv"], adv_effect, 0.0), "outcome"),
          result.verdict_line(judge(CLAIMS_FOLLOWUP["feat"], adv_effect, feat_effect),
                              "outcome"),
          result.verdict_line(v_agree, "outcome", claim=CLAIMS_FOLLOWUP["agree"],
                              rule="paired interval per measure and comparison; all must hold")]
    for key in (k for k in fcfg["sharpness_arms"] if k != "D"):
        name = f"{labels[key].split(':')[0]} ({labels[key].split(': ')[-1]})"
        every = judge(CLAIMS_FOLLOWUP["arm_every"].at(name=name), sharp[key], sharp["A"])
        edges = all_of(*(sharper(name, key, m)
                         for m in ("edge gradient", "high-frequency power")))
        md.append(result.verdict_line(every, "outcome"))
        md.append(result.verdict_line(edges, "outcome",
                                      claim=CLAIMS_FOLLOWUP["arm_edges"].at(name=name),
                                      rule="paired interval per measure; both must hold"))
    md.append("")
    return md, _plot_sharpness(ctx, X_te, runs, order, labels, per_seed, refs, sharp_keys,
                               fseeds[0])


def _shapes_followup(result, ctx, sens, runs):
    """Markdown and figure of follow-up 2 (shapes: why C is not better classified)."""
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
    shape_a, shape_c = ([r["probe"]["shape"] for r in runs[arm]]
                        for arm in (list(deepsim.ARMS)[0], list(deepsim.ARMS)[2]))
    v1 = HOLDS if e_layer < EMPHASIS_MATERIAL else NOT_HOLDS
    # "no more shape": the negation of "C's codes keep more than 2 points more shape"
    v2 = negation(judge(CLAIMS_FOLLOWUP["more_shape"], shape_c, shape_a))
    md = ["#### Follow-up 2 (shapes): how much of the shape the feature term can keep", "",
          _follows("target_acc", dataset="shapes") + f" `factor_step_distances` of "
          f"{sens['n_pairs']} pairs (layer `{layer}`: {sens['width']} features); linear "
          f"probes of the `{layer}` features.", "", result.table(table), "",
          f"Shape emphasis (shape change over a one-step shift, relative to pixels): "
          f"`{layer}` {e_layer:.2f}, `head` {e_head:.2f}.", "",
          # one value of one fixed comparator, no mean over seeds: no interval rule applies
          result.verdict_line(v1, "outcome", rule="measured once (one fixed comparator, no seeds)",
                              claim=CLAIMS_FOLLOWUP["emphasis"].at(
                                  layer=layer, material=EMPHASIS_MATERIAL)),
          result.verdict_line(v2, "outcome", claim=CLAIMS_FOLLOWUP["no_more_shape"],
                              rule="the opposite claim, C's codes keep more than 2 points "
                                   "more shape, judged by paired interval and negated"), ""]
    fig, ax = subplots(figsize=(6.5, 3.2))
    x = np.arange(len(dist))
    for i, (key, label) in enumerate((("pixel", "pixels"), (layer, f"`{layer}`"),
                                      (head, "`head` (logits)"))):
        ax.bar(x + (i - 1) * 0.27, [d[key] for d in dist.values()], 0.27, label=label)
    ax.set_xticks(x, list(dist))
    ax.set_ylabel("normalised squared distance")
    ax.set_title("shapes: distance of image pairs differing in one factor", fontsize=9)
    ax.legend(fontsize=7)
    return md, save_figure(fig, ctx, "deepsim_followup_comparator.png", dpi=110)


def _iterate_table(runs, k):
    """Follow-up 3's table rows, and per (arm, code) the per-seed accuracy drop from the
    first to the last iteration."""
    table, drop = [], {}

    def pair(values, digits):
        values = np.array(values)
        return f"{values[:, 0].mean():.{digits}f} / {values[:, -1].mean():.{digits}f}"

    for (arm, code), rs in runs.items():
        acc = np.array([r["acc"] for r in rs])
        step = np.array([r["mse_step"] for r in rs])
        drop[arm, code] = acc[:, 0] - acc[:, -1]
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
    return table, drop


def _plot_iterate(ctx, runs, k):
    """Follow-up 3's figure: accuracy, MSE to the original and spread by iteration."""
    fig, axes = subplots(1, 3, figsize=(12, 3.2))
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
    return save_figure(fig, ctx, "deepsim_followup_iterated.png", dpi=110)


def _iterate_followup(result, ctx, cfg, fcfg, seeds, follow, main_accs):
    """Markdown and figure of follow-up 3 (digits: why iterated encoding-decoding drifts)."""
    fseeds = seeds[:fcfg["seeds"]]
    runs = {(arm, code): [follow[("iterate", arm, code, s)] for s in fseeds]
            for arm, code in fcfg["iterate"]}
    k = cfg["iterations"]
    table, drop = _iterate_table(runs, k)
    c4, c16, a4 = ("C", 4), ("C", 16), ("A", 4)
    all_runs = [r for rs in runs.values() for r in rs]

    def judged(key, a, b, ready):  # a comparison whose runs are missing does not hold
        claim = CLAIMS_FOLLOWUP[key].at(k=k)
        return judge(claim, a, b) if ready else judge(claim, [0.0], 0.0)

    verdicts = [
        judged("stays16", 10.0 - drop.get(c16, 0.0), 0.0, c16 in drop),
        judged("code_cause", drop.get(c4), drop.get(c16), c16 in drop and c4 in drop),
        judged("loss_cause", drop.get(c4), drop.get(a4), a4 in drop and c4 in drop),
        judged("settles", [r["mse_step"][1] - r["mse_step"][-1] for r in all_runs]
               if k > 2 else None, 0.0, k > 2),
        judge(CLAIMS_FOLLOWUP["fewer"], [r["entropy"][0] - r["entropy"][-1]
                                         for r in all_runs], 0.0)]
    same = (c4 in runs and np.allclose(runs[c4][0]["acc"], main_accs))
    md = [f"#### {_ITERATE_HEADING}", "",
          _follows("stays") + f" Seeds {', '.join(map(str, fseeds))}, {k} iterations; values "
          "after the first / last iteration, means over seeds.", "", result.table(table), "",
          f"The refitted C 4-d autoencoder of seed {fseeds[0]} reproduces the main "
          f"section's iteration exactly: {'yes' if same else 'no'}.", "",
          *(result.verdict_line(v, "outcome") for v in verdicts), ""]
    return md, _plot_iterate(ctx, runs, k)


def run_followup(ctx):
    """Run the follow-ups of ``deepsim``'s claims that do not hold. ``deepsim``'s parts
    are read from this run when it ran them, else computed (and cached) under its name."""
    cfg = deepsim.PROTOCOL.settings(ctx.quick)
    fcfg = _followup_config(ctx.quick, cfg)
    seeds = run_seeds(ctx, cfg["seeds"])
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    prepared = deepsim._prepare_all(ctx, cfg, protocol, owner="deepsim")
    outputs = deepsim._fit_all(ctx, cfg, seeds, prepared, protocol, owner="deepsim",
                               inversions=False)
    follow = deepsim._run_parts(ctx, cfg, "deepsim follow-ups", _followup_parts(
        cfg, fcfg, seeds, ctx.random_state, prepared, protocol))
    result = Result()
    md = [f"One experiment per claim of `deepsim` that does not hold ({len(follow)} parts).", ""]
    sections = [_sharpness_followup(result, ctx, cfg, fcfg, seeds, outputs, follow),
                _shapes_followup(result, ctx, follow[("sensitivity",)],
                                 deepsim._dataset_runs(outputs, "shapes", seeds))]
    if fcfg["iterate"]:
        model = outputs[("fit", "digits", list(deepsim.ARMS)[2], seeds[0])]["model"]
        _, X_te, _, y_te, *_ = deepsim.load_data("digits", cfg, ctx.random_state)
        accs, _ = deepsim._iterate(model, X_te, y_te, prepared["digits"]["clf"],
                                   cfg["iterations"])
        sections.append(_iterate_followup(result, ctx, cfg, fcfg, seeds, follow, accs))
    md += [line for lines, _ in sections for line in lines]
    if not fcfg["iterate"]:  # the quick run leaves it to the full mode (2/3 of the CPU time)
        md += [full_mode_only(
            "deepsim", _ITERATE_HEADING,
            "Why do iterated encoding-decoding images drift: the code width, the loss or the "
            "iterated map? Arms A and C (4-d code) and C (16-d code) tell them apart."), ""]
    shortened = (deepsim.PROTOCOL.note(True) + f" Follow-ups on {fcfg['seeds']} seeds; "
                 "follow-up 3 (iterated encoding-decoding) in full mode only."
                 if ctx.quick else "")
    return result.done("\n".join(md), figures=[path for _, path in sections],
                       shortened=shortened)


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
