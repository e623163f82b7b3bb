"""Dosovitskiy & Brox (2016), DeePSiM: perceptual losses for autoencoders and feature inversion.

Checked on digits and ``Shapes``: autoencoders with a pixel loss (A), pixel + feature loss
(B) and pixel + feature + adversarial loss (C); feature inversion from two comparator
depths; iterated encoding-decoding. Claims: CLAIMS below; setup: docs/papers/deepsim.rst.
The follow-ups of the claims that do not hold are :mod:`.deepsim_followup`.
"""

import time

import numpy as np

from sklearn_papers.datasets import Shapes
from sklearn_papers.reproduce._claims import Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import (
    Protocol,
    in_one_torch_thread,
    run_seeds,
    save_figure,
    subplots,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT"]

_TARGET = "target: C sharpness >= 0.90 and > A on every seed"
_SHARPER = "sharpness ratio"

#: Main claims per ``{dataset}`` ("digits", "shapes").
CLAIMS = declare(
    Claim("{dataset}: B sharper than A (every seed)", _SHARPER, "every seed",
          key="b_sharper"),
    Claim("{dataset}: C sharper than A (every seed)", _SHARPER, "every seed",
          key="c_sharper"),
    Claim("{dataset}: " + _TARGET, _SHARPER, "all of", key="target_sharp"),
    Claim(_TARGET, _SHARPER, "every seed", key="target_vs_a"),
    Claim(_TARGET, _SHARPER, "every seed", margin=-1e-12, key="target_level"),
    Claim("{dataset}: target: C accuracy >= A + 2 points (seed mean)", "accuracy (points)",
          "paired interval", margin=2.0, key="target_acc"),
    Claim("{dataset}: C accuracy >= A + 2 points on every seed", "accuracy (points)",
          "every seed", margin=2.0 - 1e-12, key="acc_every"),
    Claim("{dataset}: C costs pixel MSE (MSE C > A)", "pixel MSE", "paired interval",
          key="mse_cost"),
    Claim("earlier layer reconstructed more exactly", "pixel MSE (test)", "paired interval",
          higher_is_better=False, key="early", arms=("pool1", "relu3")),
    Claim("images stay semantically similar", "accuracy drop (points)", "mean interval",
          higher_is_better=False, threshold=10.0, key="stays", arms=("arm C",)),
)

PROTOCOL = Protocol(
    full=dict(seeds=5, n_jobs=2,
              digits=dict(epochs=60, channels=32, code=4, layer="head", comparator_epochs=30),
              shapes=dict(n=3000, epochs=40, channels=32, code=4, layer="relu2",
                          comparator_epochs=15),
              inversion=dict(epochs=40, channels=32), iterations=8),
    quick=dict(seeds=3,
               digits=dict(epochs=12, channels=16, code=4, layer="head", comparator_epochs=30),
               shapes=dict(n=800, epochs=6, channels=16, code=4, layer="relu2",
                           comparator_epochs=15),
               inversion=dict(epochs=6, channels=16), iterations=5),
    shortened="{digits[epochs]}/{shapes[epochs]} epochs instead of 60/40, {seeds} seeds "
              "instead of 5, {shapes[n]} shapes images instead of 3000, channels "
              "{digits[channels]} instead of 32.",
)

#: Loss weights switched off in each arm.
ARMS = {
    "A: pixel": dict(lambda_feat=0.0, lambda_adv=0.0),
    "B: pixel + feature": dict(lambda_adv=0.0),
    "C: pixel + feature + adversarial (DeePSiM)": dict(),
}

#: The shapes data, whose factors are probed from the codes.
SHAPES = Shapes(16, n_scales=3, n_orientations=4, n_positions=6)
FACTORS = SHAPES.factor_names

#: Loss weights of the three arms (on the normalised terms, see DeePSiMLoss).
LOSS = dict(lambda_img=1.0, lambda_feat=3.0, lambda_adv=0.1, lr=2e-3, batch_size=64)


def load_data(name, cfg, random_state):
    """``X_train, X_test, y_train, y_test, (H, W), factors_train, factors_test`` of the
    protocol ``cfg`` (``cfg["shapes"]["n"]`` images of shapes, at most ``cfg["max_train"]``
    training images when given); pixels in [0, 1]; digits have no factors."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if name == "digits":
        X, y = load_digits(return_X_y=True)
        X = (X / 16.0).astype(np.float32)
        hw = (8, 8)
        factors = np.zeros((X.shape[0], 0), dtype=int)
    else:
        factors = SHAPES.sample_factors(cfg["shapes"]["n"], random_state=random_state)
        X = SHAPES.sample_observations_from_factors(factors)
        y = factors[:, 0]
        hw = (16, 16)
    X_tr, X_te, y_tr, y_te, f_tr, f_te = train_test_split(
        X, y, factors, test_size=0.25, stratify=y, random_state=random_state)
    n = cfg.get("max_train")
    return X_tr[:n], X_te, y_tr[:n], y_te, hw, f_tr[:n], f_te


def _independent_classifier(X_train, y_train, hw=(8, 8)):
    """Digits: an RBF SVC on the pixels; shapes: a conv ``CrossEntropyEmbedder`` with a
    logistic-regression read-out."""
    from sklearn.svm import SVC

    if hw == (8, 8):
        return SVC(gamma="scale").fit(X_train, y_train)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.contrastive import CrossEntropyEmbedder

    return make_pipeline(
        CrossEntropyEmbedder(encoder="conv", image_shape=hw, n_components=32,
                             max_epochs=15, random_state=0),
        LogisticRegression(max_iter=2000)).fit(X_train, y_train)


@in_one_torch_thread
def _prepare(dataset, part, cfg, data_seed):
    """Per dataset, once: the independent classifier (``part="classifier"``) or the shared
    comparator (``part="comparator"``)."""
    from sklearn_papers.generative._base import _comparator_accuracy, _fit_comparator

    X_tr, X_te, y_tr, y_te, hw, *_ = load_data(dataset, cfg, data_seed)
    if part == "classifier":
        clf = _independent_classifier(X_tr, y_tr, hw)
        return dict(clf=clf, acc_real=100 * clf.score(X_te, y_te))
    comparator, classes = _fit_comparator(X_tr, y_tr, hw, data_seed,
                                          cfg[dataset]["comparator_epochs"])
    return dict(comparator=comparator,
                comp_acc=_comparator_accuracy(comparator, classes, X_te, y_te))


def _fit_ae(dataset, arm, seed, cfg, data_seed, prepared, *, code=None, overrides=None):
    """A fitted ``DeePSiMAutoencoder`` of ``cfg[dataset]`` for ``arm`` (its letter will do)
    and :func:`load_data`'s arrays with the factors."""
    from sklearn_papers.generative import DeePSiMAutoencoder

    data = load_data(dataset, cfg, data_seed)
    dcfg = cfg[dataset]
    params = dict(LOSS, n_components=dcfg["code"] if code is None else code,
                  channels=dcfg["channels"], max_epochs=dcfg["epochs"], image_shape=data[4],
                  random_state=seed, comparator=prepared["comparator"],
                  comparator_layer=dcfg["layer"])
    params.update(ARMS[next(a for a in ARMS if a.startswith(arm))])
    params.update(overrides or {})
    return DeePSiMAutoencoder(**params).fit(data[0], data[2]), data


@in_one_torch_thread
def _fit_arm(dataset, arm, seed, cfg, data_seed, prepared, keep_model=False, overrides=None):
    """One autoencoder (dataset, arm, seed, settings ``overrides``): pixel MSE, sharpness
    ratio, independent-classifier accuracy (%), fit CPU seconds, first reconstructions."""
    from sklearn_papers.metrics import image_sharpness

    start = time.process_time()
    ae, (X_tr, X_te, y_tr, y_te, hw, f_tr, f_te) = _fit_ae(dataset, arm, seed, cfg, data_seed,
                                                           prepared, overrides=overrides)
    fit_cpu = time.process_time() - start
    recon = ae.inverse_transform(ae.transform(X_te))
    out = dict(dataset=dataset, arm=arm, seed=seed, mse=float(((recon - X_te) ** 2).mean()),
               sharp=image_sharpness(recon, hw) / image_sharpness(X_te, hw),
               acc=100 * prepared["clf"].score(recon, y_te), seconds=fit_cpu,
               recon=recon[:10], real=X_te[:10], hw=hw, model=ae if keep_model else None)
    if f_tr.shape[1]:
        out["probe"] = _probe_codes(ae.transform(X_tr), ae.transform(X_te), f_tr, f_te)
    return out


def _probe_codes(Z_tr, Z_te, f_tr, f_te, **kwargs):
    """``{factor: test accuracy (%)}`` of a logistic regression reading it from ``Z``."""
    from sklearn_papers.metrics import factor_probe_accuracy

    acc = factor_probe_accuracy(Z_tr, f_tr, Z_te, f_te, **kwargs)
    return {name: 100 * float(acc[k]) for k, name in enumerate(FACTORS)}


@in_one_torch_thread
def _invert(layer, cfg, seed, data_seed, prepared):
    """FeatureInverter on digits from one layer of the shared digits comparator."""
    from sklearn_papers.generative import FeatureInverter

    X_tr, X_te, y_tr, y_te, *_ = load_data("digits", cfg, data_seed)
    inv = FeatureInverter(comparator=prepared["comparator"], comparator_layer=layer,
                          channels=cfg["inversion"]["channels"],
                          max_epochs=cfg["inversion"]["epochs"], lr=LOSS["lr"],
                          random_state=seed).fit(X_tr, y_tr)
    recon = inv.predict(X_te)
    return dict(layer=layer, mse=float(((recon - X_te) ** 2).mean()),
                acc=100 * prepared["clf"].score(recon, y_te),
                width=inv.n_comparator_features_, recon=recon[:10], real=X_te[:10])


def _iterate(model, X_start, y_start, clf, n_iter):
    rows, accs, images = X_start, [], [X_start[:8]]
    for _ in range(n_iter):
        rows = model.inverse_transform(model.transform(rows))
        accs.append(100 * clf.score(rows, y_start))
        images.append(rows[:8])
    return accs, images


def _grid(ax, rows_list, hw, labels):
    """One row of images per entry of ``rows_list``, separated by a 1-pixel grey border."""
    def pad(r):
        return np.pad(np.clip(r.reshape(hw), 0, 1), 1, constant_values=0.5)

    tiles = [np.concatenate([pad(r) for r in rows], axis=1) for rows in rows_list]
    ax.imshow(np.concatenate(tiles, axis=0), cmap="gray", vmin=0, vmax=1)
    ax.set_yticks([(hw[0] + 2) * (i + 0.5) for i in range(len(labels))])
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xticks([])


def _grid_figure(ctx, name, rows_list, hw, labels, title, figsize):
    """A figure of one :func:`_grid`, saved as ``name``; returns its path."""
    fig, ax = subplots(figsize=figsize)
    _grid(ax, rows_list, hw, labels)
    ax.set_title(title)
    return save_figure(fig, ctx, name, dpi=110)


def _main_verdict_lines(result, res, dataset):
    """``- claim: verdict`` of each main claim of one dataset, from ``res[arm][measure]``
    (lists over seeds, in one seed order); the verdicts kept in ``result``."""
    a, b, c = (res[k] for k in ARMS)
    sharp_a, sharp_b, sharp_c = (np.asarray(r["sharp"]) for r in (a, b, c))
    acc_a, acc_c = np.asarray(a["acc"]), np.asarray(c["acc"])
    target = [judge(CLAIMS["target_vs_a"], sharp_c, sharp_a),
              judge(CLAIMS["target_level"], sharp_c, 0.90)]

    def line(key, *values):
        return result.verdict_line(judge(CLAIMS[key].at(dataset=dataset), *values), "outcome")

    return [line("b_sharper", sharp_b, sharp_a), line("c_sharper", sharp_c, sharp_a),
            result.verdict_line(all_of(*target), "parts", parts=target,
                                claim=CLAIMS["target_sharp"].at(dataset=dataset)),
            line("target_acc", acc_c, acc_a), line("acc_every", acc_c, acc_a),
            line("mse_cost", c["mse"], a["mse"]), ""]


def _run_parts(ctx, cfg, desc, parts, **where):
    """``{name: value}`` of ``parts``, ``(name, (key, func, args, params), cost)``, computed
    costliest first by :func:`~._parallel.cached_parts` (with ``owner`` and ``share``)."""
    parts = sorted(parts, key=lambda part: part[2], reverse=True)
    with ctx.progress(total=len(parts), desc=desc) as bar:
        values = cached_parts(ctx, [part for _, part, _ in parts], n_jobs=cfg["n_jobs"],
                              progress=bar, **where)
    return {name: value for (name, _, _), value in zip(parts, values)}


def _prepare_all(ctx, cfg, protocol, owner=None):
    """``{dataset: {"comparator", "comp_acc", "clf", "acc_real"}}`` (cached parts, which
    the follow-up reads with ``owner="deepsim"``)."""
    # relative costs: the shapes classifier and the digits comparator take longest
    costs = {("shapes", "classifier"): 4, ("digits", "comparator"): 3,
             ("shapes", "comparator"): 2, ("digits", "classifier"): 1}
    values = _run_parts(ctx, cfg, "deepsim: comparators, classifiers", [
        ((d, part), (f"prepare/{d}/{part}", _prepare, (d, part, cfg, ctx.random_state),
                     {**protocol, "dataset": d, "part": part, "data_seed": ctx.random_state}),
         cost) for (d, part), cost in costs.items()], owner=owner, share=owner is None)
    return {d: {**values[(d, "classifier")], **values[(d, "comparator")]} for d in _DATASETS}


_DATASETS = ("digits", "shapes")


def _fit_all(ctx, cfg, seeds, prepared, protocol, owner=None, inversions=True):
    """``{job: value}`` of the autoencoders and feature inverters, longest first (cached
    parts, which the follow-up reads with ``owner="deepsim"``)."""
    first_c = ("fit", "digits", list(ARMS)[2], seeds[0])
    jobs = [("fit", d, arm, s) for d in _DATASETS for arm in ARMS for s in seeds]
    jobs += [("invert", "digits", layer, seeds[0]) for layer in ("pool1", "relu3")
             if inversions]

    def part(job):
        kind, dataset, what, seed = job
        params = {**protocol, "kind": kind, "dataset": dataset, "what": what, "seed": seed,
                  "data_seed": ctx.random_state, "keep_model": job == first_c}
        key = f"{kind}/{dataset}/{what}/seed={seed}"
        if kind == "invert":
            return key, _invert, (what, cfg, seed, ctx.random_state, prepared["digits"]), params
        return (key, _fit_arm, (dataset, what, seed, cfg, ctx.random_state, prepared[dataset],
                                job == first_c), params)

    # relative costs (CPU seconds of the quick run) of each arm's fit; an inverter's 6.0
    costs = {"digits": dict(A=5.0, B=5.2, C=8.6), "shapes": dict(A=3.2, B=3.7, C=5.7)}
    return _run_parts(ctx, cfg, "deepsim: autoencoders, inversion",
                      [(job, part(job), costs[job[1]].get(job[2][0], 6.0)) for job in jobs],
                      owner=owner, share=owner is None)


def _dataset_runs(outputs, dataset, seeds):
    """``{arm: [the fit of each seed]}`` of one dataset."""
    return {arm: [outputs[("fit", dataset, arm, s)] for s in seeds] for arm in ARMS}


def _dataset_section(result, ctx, dataset, runs, prepared, cfg):
    """Markdown and figure of one dataset's arms; its verdicts kept in ``result``."""
    res = {arm: {k: [r[k] for r in runs[arm]] for k in ("mse", "sharp", "acc", "seconds")}
           for arm in ARMS}
    rows = [{"arm": arm,
             "pixel MSE (test)": format_mean_std(res[arm]["mse"], 4),
             "sharpness ratio (1 = real)": format_mean_std(res[arm]["sharp"], 3),
             "per seed": ", ".join(f"{v:.3f}" for v in res[arm]["sharp"]),
             "indep. classifier acc. (%)": format_mean_std(res[arm]["acc"], 1),
             "per seed (%)": ", ".join(f"{v:.1f}" for v in res[arm]["acc"]),
             "fit CPU time (s)": format_mean_std(res[arm]["seconds"], 1)} for arm in ARMS]
    d = cfg[dataset]
    md = [f"### {dataset}: autoencoders, arms A / B / C", "",
          f"Test-set metrics of each arm ({d['epochs']} epochs, {d['channels']} channels, "
          f"a {d['code']}-d code, compared layer `{d['layer']}`), mean ± std over "
          f"{len(runs[list(ARMS)[0]])} seeds.", "", result.table(rows), "",
          f"On the real test images: independent classifier {prepared['acc_real']:.1f} %, "
          f"the shared comparator {prepared['comp_acc']:.1f} %.", "",
          *_main_verdict_lines(result, res, dataset)]
    if dataset == "shapes":  # what the codes keep
        probes = [{"arm": arm, **{f"{name} (%)": format_mean_std([r["probe"][name] for r in rs], 1)
                                  for name in FACTORS}} for arm, rs in runs.items()]
        md += ["Each factor read from the codes by a logistic regression (standardised "
               "codes), test accuracy.", "", result.table(probes), ""]
    first = runs[list(ARMS)[0]][0]
    path = _grid_figure(ctx, f"deepsim_{dataset}_reconstructions.png",
                        [first["real"]] + [runs[arm][0]["recon"] for arm in ARMS],
                        first["hw"], ["real"] + [arm.split(":")[0] for arm in ARMS],
                        f"{dataset}: test images and reconstructions (seed {first['seed']})",
                        (8, 3.6))
    return md, path


def _inversion_section(result, ctx, outputs, seed):
    """Markdown and figure of the feature inversion from two comparator depths."""
    layers = {layer: outputs[("invert", "digits", layer, seed)] for layer in ("pool1", "relu3")}
    rows = [{"comparator layer": f"{name} ({v['width']} features)",
             "pixel MSE (test)": f"{v['mse']:.4f}",
             "indep. classifier acc. (%)": f"{v['acc']:.1f}"} for name, v in layers.items()]
    # one inverter per layer (seed 0): the shared rule reads one seed as inconclusive
    early_better = judge(CLAIMS["early"], [layers["pool1"]["mse"]], [layers["relu3"]["mse"]])
    path = _grid_figure(ctx, "deepsim_feature_inversion.png",
                        [layers["pool1"]["real"]] + [v["recon"] for v in layers.values()],
                        (8, 8), ["real", *layers],
                        "digits: images inverted from comparator features of two depths",
                        (8, 2.6))
    return ["### Feature inversion (digits, `FeatureInverter`, DeePSiM loss)", "",
            *result.block(f"Test images inverted from two layers of the digits comparator "
                          f"(seed {seed}).", rows, [early_better], style="outcome",
                          digits=4)], path


def _iterated_section(result, ctx, cfg, model, clf, seed):
    """Markdown and figure of iterated encoding-decoding with arm C."""
    _, X_te, _, y_te, hw, *_ = load_data("digits", cfg, ctx.random_state)
    accs, images = _iterate(model, X_te, y_te, clf, cfg["iterations"])
    stays = judge(CLAIMS["stays"], [accs[0] - accs[-1]])
    path = _grid_figure(ctx, "deepsim_iterated.png", images, hw,
                        ["real"] + [f"iter {k + 1}" for k in range(len(images) - 1)],
                        "digits, arm C: x -> decode(encode(x)), repeated",
                        (5, 0.6 * (len(images) + 1)))
    return ([f"### Iterated encoding-decoding (digits, arm C, seed {seed})", "",
             "Independent-classifier accuracy (%) after k iterations: "
             + ", ".join(f"k={k + 1}: {a:.1f}" for k, a in enumerate(accs)) + ".", "",
             result.verdict_line(stays, "outcome", digits=1), ""], path)


def run(ctx):
    """Run the experiment (module docstring); its parts are cached and kept for
    ``deepsim_followup``."""
    cfg = PROTOCOL.settings(ctx.quick)
    seeds = run_seeds(ctx, cfg["seeds"])
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    prepared = _prepare_all(ctx, cfg, protocol)
    outputs = _fit_all(ctx, cfg, seeds, prepared, protocol)
    result = Result()
    model = outputs[("fit", "digits", list(ARMS)[2], seeds[0])]["model"]
    sections = [_dataset_section(result, ctx, dataset, _dataset_runs(outputs, dataset, seeds),
                                 prepared[dataset], cfg) for dataset in _DATASETS]
    sections += [_inversion_section(result, ctx, outputs, seeds[0]),
                 _iterated_section(result, ctx, cfg, model, prepared["digits"]["clf"], seeds[0])]
    md = [line for lines, _ in sections for line in lines]
    md += ["The claims that do not hold are followed up by `deepsim_followup`.", ""]
    return result.done("\n".join(md), figures=[path for _, path in sections],
                       shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="deepsim",
    title="DeePSiM: perceptual losses for autoencoders and feature inversion (digits, Shapes)",
    paper="Dosovitskiy & Brox 2016, Generating Images with Perceptual Similarity Metrics "
          "based on Deep Networks, NeurIPS",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)
