"""Dosovitskiy & Brox (2016), DeePSiM: perceptual losses for autoencoders and feature inversion.

Claims checked, at small scale, on ``sklearn.datasets.load_digits`` (8x8, 10 classes) and on
the package's procedural ``Shapes`` images (16x16, class = the shape: square, ellipse,
heart), with autoencoders of a small code and three arms of the same architecture and
budget: (A) pixel loss only, (B) pixel + feature loss, (C) pixel + feature + adversarial
loss (the paper's DeePSiM). Reported: pixel MSE (pixels scaled to [0, 1]); a *sharpness
ratio*, the mean absolute finite-difference gradient of the reconstructions divided by
that of the real test images (1.0 = as sharp as real); the accuracy of an independent
classifier (trained on the real training images, not the comparator) on the
reconstructions of the test images (an RBF SVC on pixels for digits, a small conv net for
shapes); image grids. The paper's claim at this scale: B and C are sharper than A and keep
class identity, at some cost in pixel MSE. Target of issue 15: C's sharpness ratio >= 0.90
and above A's on every seed, and the independent classifier at least 2 points more
accurate on C's reconstructions than on A's.

As in the paper, whose comparator is one fixed, pretrained AlexNet, the comparator is
trained once per dataset (a :class:`~sklearn_papers.nn.ComparatorCNN` classifier of the
training labels, the network ``comparator="auto"`` builds) and shared by arms B and C of
every seed and by the feature inverters; the seeds vary the autoencoders.

Also: feature inversion from two comparator depths (earlier layers are reconstructed more
exactly, the paper's Fig. 4), iterated encoding-decoding with arm C (images stay
semantically similar while details change), and on ``Shapes`` linear probes of the codes
for each generative factor (what a small code keeps).
"""

import time

import numpy as np

from sklearn_papers.reproduce._registry import Experiment, Section
from sklearn_papers.reproduce._report import format_mean_std, markdown_table

__all__ = ["EXPERIMENT"]

ARMS = {
    "A: pixel": dict(lambda_feat=0.0, lambda_adv=0.0),
    "B: pixel + feature": dict(lambda_adv=0.0),
    "C: pixel + feature + adversarial (DeePSiM)": dict(),
}

#: Shapes factors probed from the codes.
FACTORS = ("shape", "scale", "orientation", "pos_x", "pos_y")


def _config(quick):
    if quick:
        return dict(seeds=3, n_jobs=2,
                    digits=dict(epochs=12, channels=16, code=4, layer="head",
                                comparator_epochs=30),
                    shapes=dict(n=800, epochs=6, channels=16, code=4, layer="relu2",
                                comparator_epochs=15),
                    inversion=dict(epochs=6, channels=16), iterations=5)
    return dict(seeds=5, n_jobs=2,
                digits=dict(epochs=60, channels=32, code=4, layer="head",
                            comparator_epochs=30),
                shapes=dict(n=3000, epochs=40, channels=32, code=4, layer="relu2",
                            comparator_epochs=15),
                inversion=dict(epochs=40, channels=32), iterations=8)


#: Loss weights of the three arms (on the normalised terms, see DeePSiMLoss).
LOSS = dict(lambda_img=1.0, lambda_feat=3.0, lambda_adv=0.1, lr=2e-3, batch_size=64)

#: Epochs of the shared comparator classifier when the config does not say
#: (``comparator="auto"`` trains 15).
COMPARATOR_EPOCHS = 15


def load_data(name, random_state=0, n_shapes=1200, max_train=None, return_factors=False):
    """``X_train, X_test, y_train, y_test, (H, W)`` with pixels in [0, 1] (at most
    ``max_train`` training images when given); with ``return_factors`` the ``Shapes``
    factor indices of train and test are appended (None for digits)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if name == "digits":
        X, y = load_digits(return_X_y=True)
        X = (X / 16.0).astype(np.float32)
        hw = (8, 8)
        factors = np.zeros((X.shape[0], 0), dtype=int)
    else:
        from sklearn_papers.datasets import Shapes

        data = Shapes(16, n_scales=3, n_orientations=4, n_positions=6)
        factors = data.sample_factors(n_shapes, random_state=random_state)
        X = data.sample_observations_from_factors(factors)
        y = factors[:, 0]
        hw = (16, 16)
    X_tr, X_te, y_tr, y_te, f_tr, f_te = train_test_split(
        X, y, factors, test_size=0.25, stratify=y, random_state=random_state)
    if max_train is not None:
        X_tr, y_tr, f_tr = X_tr[:max_train], y_tr[:max_train], f_tr[:max_train]
    if return_factors:
        return X_tr, X_te, y_tr, y_te, hw, f_tr, f_te
    return X_tr, X_te, y_tr, y_te, hw


def sharpness(rows, hw):
    """Mean absolute horizontal + vertical finite difference of images given as rows."""
    x = np.asarray(rows, dtype=np.float64).reshape(-1, *hw)
    return float(np.abs(np.diff(x, axis=2)).mean() + np.abs(np.diff(x, axis=1)).mean())


def _independent_classifier(X_train, y_train, hw=(8, 8)):
    """Digits: an RBF SVC on the pixels. Shapes: a small conv net (the package's
    ``CrossEntropyEmbedder``, batch norm and max pooling, unlike the comparator) with a
    logistic-regression read-out, since a pixel SVC tells the shapes apart poorly when
    they move (about 50 % on real test images, chance 33 %)."""
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


def _train_comparator(X_train, y_train, hw, seed, epochs=None):
    """The fixed comparator of a dataset: the ``ComparatorCNN`` of ``comparator="auto"``,
    trained as a classifier of the training labels (returns it and the classes)."""
    import torch

    from sklearn_papers.generative._base import _train_classifier
    from sklearn_papers.nn import ComparatorCNN
    from sklearn_papers.nn._skorch import torch_seeded

    classes, y_enc = np.unique(y_train, return_inverse=True)
    rows = np.ascontiguousarray(X_train, dtype=np.float32)
    with torch_seeded(seed, "cpu"):  # the initial weights too, whatever ran before
        module = ComparatorCNN((*hw, 1), n_classes=len(classes), mean=float(rows.mean()),
                               std=float(rows.std()) or 1.0)
    _train_classifier(module, rows, y_enc, None, seed, "cpu",
                      epochs=COMPARATOR_EPOCHS if epochs is None else epochs)
    return module, classes


def _comparator_accuracy(module, classes, X, y):
    """Accuracy (%) of the comparator classifier's logits on images ``X``."""
    import torch

    with torch.no_grad():
        pred = module(torch.as_tensor(np.ascontiguousarray(X, dtype=np.float32))).argmax(1)
    return 100 * float((classes[pred.numpy()] == np.asarray(y)).mean())


def _prepare(dataset, part, cfg, data_seed):
    """Per dataset, once: the independent classifier (``part="classifier"``) or the shared
    comparator (``part="comparator"``)."""
    import torch

    torch.set_num_threads(1)
    start = time.process_time()
    X_tr, X_te, y_tr, y_te, hw = load_data(dataset, data_seed, cfg["shapes"]["n"],
                                           cfg.get("max_train"))
    if part == "classifier":
        clf = _independent_classifier(X_tr, y_tr, hw)
        out = dict(clf=clf, acc_real=100 * clf.score(X_te, y_te))
    else:
        comparator, classes = _train_comparator(X_tr, y_tr, hw, data_seed,
                                                cfg[dataset].get("comparator_epochs"))
        out = dict(comparator=comparator,
                   comp_acc=_comparator_accuracy(comparator, classes, X_te, y_te))
    out["cpu"] = time.process_time() - start
    return out


def _fit_arm(dataset, arm, seed, cfg, data_seed, prepared, keep_model=False):
    """One autoencoder (dataset, arm, seed); metrics, CPU seconds, first reconstructions."""
    import torch

    from sklearn_papers.generative import DeePSiMAutoencoder

    torch.set_num_threads(1)
    start = time.process_time()
    X_tr, X_te, y_tr, y_te, hw, f_tr, f_te = load_data(
        dataset, data_seed, cfg["shapes"]["n"], cfg.get("max_train"), return_factors=True)
    dcfg = cfg[dataset]
    params = dict(LOSS, n_components=dcfg["code"], channels=dcfg["channels"],
                  max_epochs=dcfg["epochs"], image_shape=hw, random_state=seed,
                  comparator=prepared["comparator"], comparator_layer=dcfg["layer"])
    params.update(ARMS[arm])
    ae = DeePSiMAutoencoder(**params).fit(X_tr, y_tr)
    fit_cpu = time.process_time() - start
    recon = ae.inverse_transform(ae.transform(X_te))
    out = dict(dataset=dataset, arm=arm, seed=seed,
               mse=float(((recon - X_te) ** 2).mean()),
               sharp=sharpness(recon, hw) / sharpness(X_te, hw),
               acc=100 * prepared["clf"].score(recon, y_te), seconds=fit_cpu,
               recon=recon[:10], real=X_te[:10], hw=hw, model=ae if keep_model else None)
    if f_tr.shape[1]:
        out["probe"] = _probe_codes(ae.transform(X_tr), ae.transform(X_te), f_tr, f_te)
    out["cpu"] = time.process_time() - start
    return out


def _probe_codes(Z_tr, Z_te, f_tr, f_te):
    """Test accuracy (%) of a logistic regression reading each factor from the codes."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {name: 100 * make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
            .fit(Z_tr, f_tr[:, k]).score(Z_te, f_te[:, k])
            for k, name in enumerate(FACTORS)}


def _invert(layer, cfg, seed, data_seed, prepared):
    """FeatureInverter on digits from one layer of the shared digits comparator."""
    import torch

    from sklearn_papers.generative import FeatureInverter

    torch.set_num_threads(1)
    start = time.process_time()
    X_tr, X_te, y_tr, y_te, hw = load_data("digits", data_seed,
                                           max_train=cfg.get("max_train"))
    inv = FeatureInverter(comparator=prepared["comparator"], comparator_layer=layer,
                          channels=cfg["inversion"]["channels"],
                          max_epochs=cfg["inversion"]["epochs"], lr=LOSS["lr"],
                          random_state=seed).fit(X_tr, y_tr)
    recon = inv.predict(X_te)
    return dict(layer=layer, mse=float(((recon - X_te) ** 2).mean()),
                acc=100 * prepared["clf"].score(recon, y_te),
                width=inv.n_comparator_features_, recon=recon[:10], real=X_te[:10],
                cpu=time.process_time() - start)


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


def _claims(res):
    """Computed verdicts per dataset from ``res[arm] = {"sharp": [...], "acc": [...],
    "mse": [...]}`` (lists over seeds, in the same seed order for every arm)."""
    a, b, c = (res[k] for k in ARMS)
    sharp_a, sharp_b, sharp_c = (np.asarray(r["sharp"]) for r in (a, b, c))
    gains = np.asarray(c["acc"]) - np.asarray(a["acc"])
    return {
        "B sharper than A (every seed)": bool(np.all(sharp_b > sharp_a)),
        "C sharper than A (every seed)": bool(np.all(sharp_c > sharp_a)),
        "target: C sharpness >= 0.90 and > A on every seed": bool(
            np.all(sharp_c >= 0.90) and np.all(sharp_c > sharp_a)),
        "target: C accuracy >= A + 2 points (seed mean)": bool(gains.mean() >= 2.0),
        "C accuracy >= A + 2 points on every seed": bool(np.all(gains >= 2.0)),
        "C costs pixel MSE (MSE C > A)": bool(np.mean(c["mse"]) > np.mean(a["mse"])),
        "_gains": gains,
    }


def _cost(job):
    """Relative cost of a job (CPU seconds of the quick run), to start the longest first."""
    kind, dataset, arm = job[0], job[1], job[2]
    if kind == "invert":
        return 6.0
    return {"digits": {"A": 5.0, "B": 5.2, "C": 8.6},
            "shapes": {"A": 3.2, "B": 3.7, "C": 5.7}}[dataset][arm[0]]


def run(ctx):
    """Run the experiment; see the module docstring. Preparations, fits and inversions are
    cached parts (``--resume`` skips finished ones), run on ``n_jobs`` worker processes."""
    import matplotlib.pyplot as plt

    from sklearn_papers.reproduce._parallel import cached_parts

    cfg = _config(ctx.quick)
    seeds = [ctx.random_state + i for i in range(cfg["seeds"])]
    datasets = ("digits", "shapes")
    start = time.perf_counter()
    protocol = {k: v for k, v in cfg.items() if k != "n_jobs"}
    # the two longest preparations (shapes classifier, digits comparator) first
    parts = [("shapes", "classifier"), ("digits", "comparator"), ("shapes", "comparator"),
             ("digits", "classifier")]
    prepared = {d: {"cpu": 0.0} for d in datasets}
    with ctx.progress(total=len(parts), desc="deepsim: comparators, classifiers") as bar:
        values = cached_parts(
            ctx, [(f"prepare/{d}/{part}", _prepare, (d, part, cfg, ctx.random_state),
                   {**protocol, "dataset": d, "part": part, "data_seed": ctx.random_state})
                  for d, part in parts], n_jobs=cfg["n_jobs"], progress=bar)
    for (d, _), out in zip(parts, values):
        out = dict(out)
        cpu = prepared[d]["cpu"] + out.pop("cpu")
        prepared[d].update(out, cpu=cpu)
    ctx.log(f"[deepsim] comparators and independent classifiers done in "
            f"{time.perf_counter() - start:.0f} s")
    jobs = [("fit", d, arm, s) for d in datasets for arm in ARMS for s in seeds]
    jobs += [("invert", "digits", layer, seeds[0]) for layer in ("pool1", "relu3")]
    jobs.sort(key=_cost, reverse=True)
    first_c = ("fit", "digits", list(ARMS)[2], seeds[0])

    def part(job):
        kind, dataset, what, seed = job
        params = {**protocol, "kind": kind, "dataset": dataset, "what": what, "seed": seed,
                  "data_seed": ctx.random_state, "keep_model": job == first_c}
        key = f"{kind}/{dataset}/{what}/seed={seed}"
        if kind == "invert":
            return key, _invert, (what, cfg, seed, ctx.random_state, prepared["digits"]), params
        return (key, _fit_arm, (dataset, what, seed, cfg, ctx.random_state, prepared[dataset],
                                job == first_c), params)

    with ctx.progress(total=len(jobs), desc="deepsim: autoencoders, inversion") as bar:
        outputs = dict(zip(jobs, cached_parts(ctx, [part(job) for job in jobs],
                                              n_jobs=cfg["n_jobs"], progress=bar)))
    worker_cpu = (sum(p["cpu"] for p in prepared.values())
                  + sum(o["cpu"] for o in outputs.values()))
    wall = time.perf_counter() - start
    ctx.log(f"[deepsim] autoencoders and inversion done in {wall:.0f} s "
            f"({worker_cpu:.0f} s CPU in the workers)")

    md, figures = [], []
    for dataset in datasets:
        runs = {arm: [outputs[("fit", dataset, arm, s)] for s in seeds] for arm in ARMS}
        res = {arm: {k: [r[k] for r in runs[arm]] for k in ("mse", "sharp", "acc", "seconds")}
               for arm in ARMS}
        rows = []
        for arm in ARMS:
            rows.append({"arm": arm,
                         "pixel MSE (test)": format_mean_std(res[arm]["mse"], 4),
                         "sharpness ratio (1 = real)": format_mean_std(res[arm]["sharp"], 3),
                         "per seed": ", ".join(f"{v:.3f}" for v in res[arm]["sharp"]),
                         "indep. classifier acc. (%)": format_mean_std(res[arm]["acc"], 1),
                         "per seed (%)": ", ".join(f"{v:.1f}" for v in res[arm]["acc"]),
                         "fit CPU time (s)": format_mean_std(res[arm]["seconds"], 1)})
        claims = _claims(res)
        gains = claims.pop("_gains")
        prep = prepared[dataset]
        md += [f"### {dataset}: autoencoders, arms A / B / C", "", markdown_table(rows), "",
               f"Independent classifier on the real test images: {prep['acc_real']:.1f} %; "
               f"the shared comparator classifier on them: {prep['comp_acc']:.1f} %. "
               f"C minus A accuracy: {gains.mean():+.1f} points (per seed: "
               + ", ".join(f"{g:+.1f}" for g in gains) + ").", ""]
        md += [f"- {name}: **{'holds' if ok else 'does not hold'}**"
               for name, ok in claims.items()]
        md.append("")
        if dataset == "shapes":
            md += _probe_section(runs, cfg)

        first = runs[list(ARMS)[0]][0]
        fig, ax = plt.subplots(figsize=(8, 3.6))
        _grid(ax, [first["real"]] + [runs[arm][0]["recon"] for arm in ARMS],
              first["hw"], ["real"] + [arm.split(":")[0] for arm in ARMS])
        ax.set_title(f"{dataset}: test images and reconstructions (seed {seeds[0]})")
        fig.tight_layout()
        path = ctx.figure_path(f"deepsim_{dataset}_reconstructions.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        figures.append(path)

    # ------------------------------------------------------------ feature inversion
    layers = {layer: outputs[("invert", "digits", layer, seeds[0])]
              for layer in ("pool1", "relu3")}
    inv_rows = [{"comparator layer": f"{name} ({v['width']} features)",
                 "pixel MSE (test)": f"{v['mse']:.4f}",
                 "indep. classifier acc. (%)": f"{v['acc']:.1f}"} for name, v in layers.items()]
    early_better = layers["pool1"]["mse"] < layers["relu3"]["mse"]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    _grid(ax, [layers["pool1"]["real"]] + [v["recon"] for v in layers.values()], (8, 8),
          ["real", *layers])
    ax.set_title("digits: images inverted from comparator features of two depths")
    fig.tight_layout()
    path = ctx.figure_path("deepsim_feature_inversion.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    figures.append(path)

    # ------------------------------------------------------------ iterated encode-decode
    model = outputs[first_c]["model"]
    X_tr, X_te, y_tr, y_te, hw = load_data("digits", ctx.random_state,
                                           max_train=cfg.get("max_train"))
    accs, images = _iterate(model, X_te, y_te, prepared["digits"]["clf"], cfg["iterations"])
    stays = accs[-1] >= accs[0] - 10.0
    fig, ax = plt.subplots(figsize=(5, 0.6 * (len(images) + 1)))
    _grid(ax, images, hw, ["real"] + [f"iter {k + 1}" for k in range(len(images) - 1)])
    ax.set_title("digits, arm C: x -> decode(encode(x)), repeated")
    fig.tight_layout()
    path = ctx.figure_path("deepsim_iterated.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    figures.append(path)

    md += ["### Feature inversion (digits, `FeatureInverter`, DeePSiM loss)", "",
           markdown_table(inv_rows), "",
           f"- earlier layer reconstructed more exactly (MSE pool1 < relu3): "
           f"**{'holds' if early_better else 'does not hold'}** (paper, Fig. 4: conv1-conv5 "
           "reconstructions keep more detail than fc6-fc8).", "",
           f"### Iterated encoding-decoding (digits, arm C, seed {seeds[0]})", "",
           "Independent-classifier accuracy (%) against the original labels after k "
           "iterations: " + ", ".join(f"k={k + 1}: {a:.1f}" for k, a in enumerate(accs)), "",
           f"- images stay semantically similar (accuracy after {len(accs)} iterations within "
           f"10 points of after 1): **{'holds' if stays else 'does not hold'}**.", "",
           f"Time: {wall:.0f} s wall for the fits, {worker_cpu:.0f} s of CPU time in the "
           f"{cfg['n_jobs']} worker processes (one torch thread each; the CPU column of the "
           "summary table counts only the main process).", ""]

    sh = cfg["shapes"]
    md.insert(0, "\n".join([
        f"Data: `load_digits` (pixels / 16) and `Shapes(16, n_scales=3, n_orientations=4, "
        f"n_positions=6)` ({sh['n']} images, class = shape), each split 75/25 stratified "
        f"(`random_state={ctx.random_state}`). Autoencoders: `DeePSiMAutoencoder` with a "
        f"{cfg['digits']['code']}-d code, conv encoder, up-convolutional generator "
        f"(bilinear upsampling + conv, leaky ReLU 0.3), `channels`="
        f"{cfg['digits']['channels']}, Adam lr {LOSS['lr']}, batch {LOSS['batch_size']}, "
        f"{cfg['digits']['epochs']} epochs (digits) / {sh['epochs']} (shapes). Comparator: "
        "one fixed network per dataset, as the paper's AlexNet: the `ComparatorCNN` that "
        "`comparator='auto'` builds, trained once as a classifier of the training labels "
        f"({cfg['digits'].get('comparator_epochs', COMPARATOR_EPOCHS)} epochs on digits, "
        f"{sh.get('comparator_epochs', COMPARATOR_EPOCHS)} on shapes, seed "
        f"{ctx.random_state}) and shared by arms B and C of "
        "every seed and by the feature inverters; compared layer: its logits (`head`) on "
        "digits, `relu2` on shapes (the logits of the weaker shape classifier made the B "
        "and C autoencoders collapse to a constant image). "
        f"Weights of the normalised terms: lambda_img={LOSS['lambda_img']}, "
        f"lambda_feat={LOSS['lambda_feat']}, lambda_adv={LOSS['lambda_adv']} (A: feature and "
        "adversarial weights 0; B: adversarial 0). Independent classifier, trained on the "
        "real training images: `SVC(gamma='scale')` on the pixels for digits; for shapes a "
        "`CrossEntropyEmbedder(encoder='conv')` (15 epochs) + `LogisticRegression`, since "
        "a pixel SVC tells moving shapes apart poorly. Mean ± std over "
        f"{len(seeds)} seeds (autoencoder seeds; split and comparator fixed). The paper "
        "works on ImageNet 227x227 images with AlexNet as comparator; its results are "
        "figures (Figs. 1, 4-6), quoted here only as qualitative claims.", ""]))
    shortened = (
        f"{cfg['digits']['epochs']}/{sh['epochs']} epochs instead of 60/40, "
        f"{len(seeds)} seeds instead of 5, {sh['n']} shapes images instead of 3000, "
        f"channels {cfg['digits']['channels']} instead of 32." if ctx.quick else "")
    return Section(markdown="\n".join(md), figures=figures, shortened=shortened)


def _probe_section(runs, cfg):
    """Markdown: what the shapes codes keep (linear-probe accuracy per factor)."""
    rows = []
    for arm, rs in runs.items():
        row = {"arm": arm}
        for name in FACTORS:
            row[f"{name} (%)"] = format_mean_std([r["probe"][name] for r in rs], 1)
        rows.append(row)
    chance = {"shape": 33.3, "scale": 33.3, "orientation": 25.0, "pos_x": 16.7, "pos_y": 16.7}
    return [f"What the {cfg['shapes']['code']}-d shapes codes keep: test accuracy of a "
            "logistic regression (standardised codes) reading each generative factor from "
            "the codes (chance: " + ", ".join(f"{k} {v:.0f} %" for k, v in chance.items())
            + ").", "", markdown_table(rows), ""]


EXPERIMENT = Experiment(
    name="deepsim",
    title="DeePSiM: perceptual losses for autoencoders and feature inversion (digits, Shapes)",
    paper="Dosovitskiy & Brox 2016, Generating Images with Perceptual Similarity Metrics "
          "based on Deep Networks, NeurIPS",
    run=run,
)
