"""van Steenkiste et al. (2019): do disentanglement scores predict sample efficiency?

Beta-VAEs, PCA and a random projection on the shapes data: each score's rank correlation
with few-shot accuracy, judged per training seed.
Claims: CLAIMS below; setup: docs/papers/disentanglement.rst.
"""

import time

import numpy as np

from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT"]

PAPER = ("van Steenkiste, Locatello, Schmidhuber, Bachem (2019). Are disentangled "
         "representations helpful for abstract visual reasoning? NeurIPS")

SCORES = ["BetaVAE", "FactorVAE", "MIG", "DCI-D", "SAP", "Modularity", "IRS"]

#: The scores the paper names as predicting downstream accuracy best.
_CLAIMED = ("BetaVAE", "FactorVAE", "DCI-D")

#: Per claimed ``{score}``, judged over training seeds on Spearman correlations.
CLAIMS = declare(
    Claim("{score} correlates positively with few-shot accuracy", "Spearman with acc@10",
          "mean interval", threshold=0.0, paper="positive (Sec. 5)", key="positive"),
    Claim("{score} correlates with few-shot accuracy more than reconstruction error",
          "Spearman with acc@10", "paired interval", paper="yes (Sec. 5)", key="beats_recon"),
)

PROTOCOL = Protocol(
    full=dict(image_size=32, n_fit=10000, n_score=5000, n_pool=10000, n_test=5000,
              n_components=10, max_epochs=30, betas=[1.0, 4.0, 16.0], seeds=[0, 1, 2],
              n_interventional=(2000, 1000), dci_estimators=100),
    quick=dict(image_size=16, n_fit=2000, n_score=1000, n_pool=2000, n_test=1000,
               n_components=6, max_epochs=20, seeds=[0], n_interventional=(200, 100),
               dci_estimators=10),
)


def _evaluate(name, model, data, sets, cfg, seed0):
    """Fit one representation; its scores, reconstruction error and few-shot accuracies."""
    from sklearn.ensemble import GradientBoostingClassifier

    from sklearn_papers.metrics import factor_probe_accuracy
    from sklearn_papers.metrics._scorer import _all_scores

    start = time.perf_counter()
    model.fit(sets["fit"][0])
    fit_s = time.perf_counter() - start
    X_score = sets["score"][0]
    n_train, n_eval = cfg["n_interventional"]
    gbt = GradientBoostingClassifier(n_estimators=cfg["dci_estimators"], max_depth=3,
                                     random_state=seed0)
    row = {"representation": name,
           **_all_scores(data, model, *sets["score"], n_train=n_train, n_eval=n_eval,
                         n_variance_estimate=cfg["n_score"], estimator=gbt,
                         random_state=seed0),
           "recon. MSE": float(np.mean((model.inverse_transform(model.transform(X_score))
                                        - X_score) ** 2))}
    z_pool = model.transform(sets["pool"][0])
    z_test = model.transform(sets["test"][0])
    for per_class in (10, 100):
        row[f"acc@{per_class}"] = float(np.mean(factor_probe_accuracy(
            z_pool, sets["pool"][1], z_test, sets["test"][1], n_per_value=per_class,
            max_iter=500, random_state=np.random.RandomState(seed0 + per_class))))
    row["fit (s)"] = fit_s
    row["total (s)"] = time.perf_counter() - start
    return row


def _models(cfg, seed0):
    """``(name, estimator)`` of the beta-VAEs, PCA and a random projection."""
    from sklearn.decomposition import PCA
    from sklearn.random_projection import GaussianRandomProjection

    from sklearn_papers.decomposition import BetaVAE

    return [(f"beta-VAE b={beta:g} s={s}",
             BetaVAE(cfg["n_components"], beta=beta, encoder="mlp", max_epochs=cfg["max_epochs"],
                     batch_size=64, lr=3e-3, random_state=seed0 + s))
            for beta in cfg["betas"] for s in cfg["seeds"]] + [
        ("PCA", PCA(cfg["n_components"], random_state=seed0)),
        ("random projection", GaussianRandomProjection(
            cfg["n_components"], compute_inverse_components=True, random_state=seed0))]


def _spearman(rows, predictor, per_class):
    """Spearman correlation of ``predictor`` (``"-recon. MSE"``: negated) with
    ``acc@<per_class>`` over ``rows``."""
    from scipy.stats import spearmanr

    values = [-r["recon. MSE"] if predictor == "-recon. MSE" else r[predictor] for r in rows]
    return float(spearmanr(values, [r[f"acc@{per_class}"] for r in rows]).statistic)


def run(ctx):
    """Run the experiment; see the module docstring."""
    from sklearn_papers.datasets import Shapes

    cfg = PROTOCOL.settings(ctx.quick)
    seed0 = ctx.random_state
    data = Shapes(cfg["image_size"])
    rng = np.random.RandomState(seed0)
    sets = {}
    for name in ["fit", "score", "pool", "test"]:
        f = data.sample_factors(cfg[f"n_{name}"], rng)
        sets[name] = (data.sample_observations_from_factors(f), f)

    # one cached part per representation; --quick runs two side by side
    parts = [(name, _evaluate, (name, model, data, sets, cfg, seed0),
              {"cfg": cfg, "seed": seed0, "model": model.get_params()})
             for name, model in _models(cfg, seed0)]
    # small MLPs: one thread is as fast and robust to contention
    with one_torch_thread(), ctx.progress(total=len(parts), desc="disentanglement") as bar:
        rows = cached_parts(ctx, parts, n_jobs=2 if ctx.quick else 1, progress=bar)
    for row in rows:
        ctx.log(f"  {row['representation']}: FactorVAE={row['FactorVAE']:.3f} "
                f"MIG={row['MIG']:.3f} acc@10={row['acc@10']:.3f} "
                f"({row['total (s)']:.0f} s)")

    predictors = SCORES + ["-recon. MSE"]
    corr = np.array([[_spearman(rows, p, k) for k in (10, 100)] for p in predictors])
    corr_rows = [{"predictor": p, "Spearman with acc@10": float(c10),
                  "Spearman with acc@100": float(c100)}
                 for p, (c10, c100) in zip(predictors, corr)]

    fig_path = _plot(ctx, predictors, corr, rows)
    res = Result()
    md = [
        f"`Shapes(image_size={cfg['image_size']})`, {cfg['n_fit']} images to fit; beta-VAEs "
        f"with {cfg['n_components']} latents, {cfg['max_epochs']} epochs. acc@n: few-shot "
        "accuracy with n labelled images per class, mean over the factors.",
        "### Scores and downstream accuracy per representation",
        res.table(rows, columns=["representation", *SCORES, "recon. MSE", "acc@10",
                                 "acc@100", "fit (s)"]),
        f"### Rank correlation with few-shot accuracy ({len(rows)} representations)",
        res.table(corr_rows),
        "### The paper's claims, judged per training seed",
        f"Spearman with acc@10 over {len(cfg['betas']) + 2} representations per seed.",
        res.table(res.verdict_rows(_claims(rows, cfg), digits=2)),
    ]
    return res.done("\n\n".join(md), figures=[fig_path], shortened=PROTOCOL.note(ctx.quick))


def _seed_correlations(rows, cfg, predictor, per_class=10):
    """Spearman correlation of ``predictor`` with ``acc@<per_class>`` per training seed,
    over that seed's beta-VAEs and the unseeded representations (PCA, random projection)."""
    shared = [r for r in rows if not r["representation"].startswith("beta-VAE")]
    out = []
    for s in cfg["seeds"]:
        rho = _spearman([r for r in rows if r["representation"].startswith("beta-VAE")
                         and r["representation"].endswith(f" s={s}")] + shared,
                        predictor, per_class)
        out.append(rho if np.isfinite(rho) else 0.0)  # constant scores: no rank
    return out


def _claims(rows, cfg):
    """Verdicts of the paper's claims (shared rules) on per-seed rank correlations."""
    recon = _seed_correlations(rows, cfg, "-recon. MSE")
    verdicts = []
    for score in _CLAIMED:
        rho = _seed_correlations(rows, cfg, score)
        verdicts.append(judge(CLAIMS["positive"].at(score=score), rho))
        verdicts.append(judge(CLAIMS["beats_recon"].at(score=score), rho, recon))
    return verdicts


def _plot(ctx, predictors, corr, rows):
    """The correlation matrix, and FactorVAE score against few-shot accuracy."""
    fig, (ax0, ax1) = subplots(1, 2, figsize=(10, 4.2))
    im = ax0.imshow(corr, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax0.set_xticks([0, 1], ["acc@10", "acc@100"])
    ax0.set_yticks(range(len(predictors)), predictors)
    for i in range(corr.shape[0]):
        for j in range(2):
            ax0.text(j, i, f"{corr[i, j]:.2f}", ha="center", va="center", fontsize=8,
                     color="white" if abs(corr[i, j]) > 0.6 else "black")
    fig.colorbar(im, ax=ax0, label="Spearman rank correlation")
    ax0.set_title("Which score predicts few-shot accuracy?")
    for r in rows:
        ax1.scatter(r["FactorVAE"], r["acc@10"], s=30)
        ax1.annotate(r["representation"].replace("beta-VAE ", ""), (r["FactorVAE"], r["acc@10"]),
                     fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax1.set(xlabel="FactorVAE score", ylabel="few-shot accuracy (10 per class)",
            title="FactorVAE score vs downstream accuracy")
    return save_figure(fig, ctx, "disentanglement_correlations.png", dpi=110)


EXPERIMENT = Experiment(
    name="disentanglement",
    title="Disentanglement scores vs downstream sample efficiency (van Steenkiste et al. 2019)",
    paper=PAPER,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)
