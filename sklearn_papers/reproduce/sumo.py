"""Luo et al. (2020), SUMO: unbiased log Z on a toy mixture; SUMO- vs IWAE-trained VAEs.

Part A re-runs Chin-Wei Huang's note on SUMO (unbiasedness, tuning q); part B compares
VAEs trained with SUMO and with IWAE on binarised digits; the follow-up varies SUMO's m.
Claims: CLAIMS and CLAIMS_FOLLOWUP below; setup: docs/papers/sumo.rst.
"""

import math
import warnings
from functools import partial

import numpy as np
from scipy.stats import iqr

from sklearn_papers.estimation._targets import MIXTURE_LOG_Z as LOG_Z
from sklearn_papers.estimation._targets import _mixture_energy
from sklearn_papers.reproduce._claims import Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

PAPER = ("Luo, Beatson, Norouzi, Zhu, Duvenaud, Adams, Chen (2020). SUMO: Unbiased "
         "Estimation of Log Marginal Probability for Latent Variable Models. ICLR 2020.")
#: Worker processes for the independent VAE fits (the results do not depend on it).
N_JOBS = 2
# Huang's note: estimate and empirical variance of one estimate.
NOTE = {"ELBO": (1.4595, 0.9921), "IWAE (k=5)": (1.7616, 0.1544), "SUMO": (1.8359, 4.0)}


#: Tie band of the unbiasedness claim, in nats: half of IWAE (k=5)'s bias in the note, so
#: an estimator inside it is nearer unbiased than IWAE-like.
UNBIASED_MARGIN = round((LOG_Z - NOTE["IWAE (k=5)"][0]) / 2, 3)

_LOG_Z_EST = "log Z estimate (nats)"

CLAIMS = declare(
    Claim("SUMO is unbiased for log Z while ELBO and IWAE are biased low", "", "all of",
          key="unbiased", arms=("ELBO", "IWAE (k=5)", "SUMO")),
    Claim("SUMO is unbiased for log Z", _LOG_Z_EST, "equivalence", margin=UNBIASED_MARGIN,
          unit="estimates", key="sumo_unbiased", arms=("SUMO", "log Z")),
    # "biased low": below the tie band, i.e. the mean under log Z - margin
    Claim("{name} is biased low", _LOG_Z_EST, "mean interval", higher_is_better=False,
          threshold=LOG_Z - UNBIASED_MARGIN, unit="estimates", key="low", arms=("{name}",)),
    Claim("tuning q lowers SUMO's variance", "sample variance of one estimate", "every seed",
          higher_is_better=False, unit="starts", key="tuning",
          arms=("tuned q", "starting q")),
    Claim("SUMO-trained VAE beats IWAE-trained", "test log-likelihood (nats)",
          "paired interval", key="vae", arms=("SUMO", "IWAE")),
)

#: ``tune_steps``: Adam steps tuning q (part A); ``k_eval``: samples of the IWAE bound
#: that estimates the VAEs' test log-likelihood (part B).
PROTOCOL = Protocol(
    full=dict(tune_steps=500, seeds=5, epochs=150, k_eval=2000),
    quick=dict(tune_steps=150, seeds=2, epochs=15, k_eval=200),
    shortened="1e6 samples kept; tuning {tune_steps} steps instead of 500; VAEs trained "
              "{epochs} epochs instead of 150 on {seeds} seeds instead of 5, evaluated "
              "with IWAE_{k_eval} instead of IWAE_2000.",
)

CLAIMS_FOLLOWUP = declare(
    Claim("SUMO's deficit shrinks from m = {first} to m = {last}",
          "SUMO - IWAE test log-lik (nats)", "paired interval", key="shrinks",
          arms=("m = {last}", "m = {first}")),
)

#: ``ms``: SUMO's numbers of exact terms compared.
PROTOCOL_FOLLOWUP = Protocol(
    full=dict(ms=(1, 4, 16), seeds=3, epochs=150, k_eval=2000),
    quick=dict(ms=(1, 4), seeds=1, epochs=10, k_eval=200),
)


def _mean_se(est):
    """``"mean ± s.e."`` of a fitted ``LogPartitionEstimator``'s log Z."""
    return f"{est.log_partition_:.4f} ± {est.log_partition_stderr_:.4f}"


def _part_a(ctx, n_iter):
    """Part A: the three estimators with the note's q, then SUMO's tuning of q from two
    starts (``n_iter`` steps); ``(fits, rows, tuning rows, tuned)``."""
    import torch

    from sklearn_papers.estimation import LogPartitionEstimator, truncation_mean

    q = torch.distributions.MultivariateNormal(torch.zeros(2), 5 * torch.eye(2))
    n_samples = 1_000_000
    per_estimate = {"ELBO": 1, "IWAE (k=5)": 5, "SUMO": 1 + truncation_mean()}
    method = {"ELBO": "elbo", "IWAE (k=5)": "iwae", "SUMO": "sumo"}
    fits, rows = {}, []
    for name in ctx.progress(list(method), desc="sumo: log Z estimators"):
        n = int(math.ceil(n_samples / per_estimate[name]))
        est = LogPartitionEstimator(_mixture_energy, proposal=q, method=method[name], k=5,
                                    fit_proposal=False, n_estimates=n,
                                    random_state=ctx.random_state).fit()
        fits[name] = est
        rows.append({
            "estimator": name, "estimates": n,
            "ours: mean ± s.e.": _mean_se(est),
            "ours: bias": est.log_partition_ - LOG_Z,
            "ours: variance": est.variance_["after"], "ours: IQR": iqr(est.estimates_),
            "note: estimate": NOTE[name][0],
            "note: variance": ("about 4 (heavy-tailed)" if name == "SUMO"
                               else f"{NOTE[name][1]:.4f}"),
        })
    sumo = partial(LogPartitionEstimator, _mixture_energy, method="sumo",
                   n_estimates=int(math.ceil(n_samples / per_estimate["SUMO"])))
    tune_rows, tuned = [], {}
    for start, prop, kw in [("N(0, 5I) (the note's q)", q, {}),
                            ("N(0, I) (our default)", "gaussian", {"n_features": 2})]:
        est = sumo(proposal=prop, max_iter=n_iter, random_state=ctx.random_state,
                   verbose=ctx.estimator_verbose, **kw)
        with warnings.catch_warnings():  # a rejected tuning is reported in the table
            warnings.simplefilter("ignore", UserWarning)
            est.fit()
            before = sumo(proposal=prop, fit_proposal=False, random_state=ctx.random_state,
                          **kw).fit()
            # the tuned q itself, on fresh draws, whether or not the estimator kept it
            after = sumo(proposal=est.tuned_proposal_, fit_proposal=False,
                         random_state=ctx.random_state + 1).fit()
        tuned[start] = (before, after)
        cov = after.proposal_.covariance_matrix.numpy()
        tune_rows.append({
            "start q": start,
            "variance before": np.var(before.estimates_),
            "variance tuned q": np.var(after.estimates_),
            "IQR before": iqr(before.estimates_), "IQR tuned q": iqr(after.estimates_),
            "log Z tuned q (± s.e.)": _mean_se(after),
            "tuned q: mean, var": "({:.2f}, {:.2f}), ({:.2f}, {:.2f})".format(
                *after.proposal_.mean, cov[0, 0], cov[1, 1]),
            "kept by fit": "tuned q" if est.tuning_accepted_ else "start",
        })
    return fits, rows, tune_rows, tuned


def _fit_vaes(ctx, desc, jobs, k_eval, extra):
    """:func:`_vae_fit` of each job ``(key, seed, SUMOVAE parameters)``, one cached part
    each, on binarised ``load_digits`` split 80/20 by ``seed``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X = (load_digits().data > 7).astype(np.float64)
    splits = {seed: train_test_split(X, test_size=0.2, random_state=seed)
              for seed in {seed for _, seed, _ in jobs}}
    parts = [(key, _vae_fit, (params, *splits[seed], k_eval, extra),
              {**params, "k_eval": k_eval}) for key, seed, params in jobs]
    with ctx.progress(total=len(parts), desc=desc) as bar:
        return cached_parts(ctx, parts, n_jobs=N_JOBS, progress=bar)


def _vae_fit(params, X_tr, X_te, k_eval, extra):
    """A SUMOVAE fitted with ``params`` (a cached part): its IWAE_k_eval test log-likelihood
    and its loss curve (``extra="curve"``) or the IWAE ``k`` of equal expected samples."""
    from sklearn_papers.estimation import SUMOVAE

    vae = SUMOVAE(**params).fit(X_tr)
    return (float(vae._iwae_scores(X_te, k_eval).mean()),
            list(vae.loss_curve_) if extra == "curve" else vae._k())


def _part_b(ctx, cfg, seeds):
    """Part B: SUMO- and IWAE-trained VAEs; ``{objective: [test log-lik per seed]}`` and
    ``{objective: [loss curve per seed]}``."""
    jobs = [(seed, objective) for seed in seeds for objective in ("sumo", "iwae")]
    values = _fit_vaes(ctx, "sumo: SUMO vs IWAE VAEs", [
        (f"part_b/{objective}/seed={seed}", seed,
         dict(n_components=8, hidden_size=128, objective=objective, max_iter=cfg["epochs"],
              random_state=seed)) for seed, objective in jobs], cfg["k_eval"], "curve")
    results, curves = {"sumo": [], "iwae": []}, {"sumo": [], "iwae": []}
    for (seed, objective), (ll, curve) in zip(jobs, values):
        results[objective].append(ll)
        curves[objective].append(curve)
        ctx.log(f"[sumo] seed {seed} {objective}: test log-lik {ll:.3f}")
    return results, curves


def _followup(ctx, res, settings):
    """Part B again as SUMO's number of exact terms ``m`` grows (lower variance), IWAE at
    ``k = m + E[K]``, with ``settings`` as :data:`PROTOCOL_FOLLOWUP`'s and the list of
    ``"seeds"``; keeps the table and verdict in ``res``, returns the markdown."""
    ms, seeds, epochs, k_eval = (settings[k] for k in ("ms", "seeds", "epochs", "k_eval"))
    jobs = [(seed, m, objective) for m in ms for seed in seeds
            for objective in ("sumo", "iwae")]
    values = _fit_vaes(ctx, "sumo follow-up", [
        (f"followup/m={m}/{objective}/seed={seed}", seed,
         dict(n_components=8, hidden_size=128, objective=objective, min_terms=m, k=None,
              n_mc=10, batch_size=64, lr=1e-3, max_iter=epochs, random_state=seed))
        for seed, m, objective in jobs], k_eval, "k")
    scores = {m: {"sumo": [], "iwae": []} for m in ms}
    ks = {}
    for (_, m, objective), (ll, k) in zip(jobs, values):
        scores[m][objective].append(ll)
        ks[m] = k
    gap = {m: [s - i for s, i in zip(scores[m]["sumo"], scores[m]["iwae"])] for m in ms}
    rows = [{"min_terms m": m, "IWAE k (equal expected samples)": ks[m],
             "SUMO: test log-lik": format_mean_std(scores[m]["sumo"], 3),
             "IWAE: test log-lik": format_mean_std(scores[m]["iwae"], 3),
             "SUMO - IWAE (nats)": format_mean_std(gap[m], 3)} for m in ms]
    shrinks = judge(CLAIMS_FOLLOWUP["shrinks"].at(first=ms[0], last=ms[-1]), gap[ms[-1]],
                    gap[ms[0]])
    md = [
        "#### Follow-up: does SUMO's variance explain Part B?",
        "m exact terms before SUMO's truncation, IWAE at the same expected samples; "
        f"{epochs} epochs, seeds {seeds}, IWAE_{k_eval} test log-likelihood (nats).",
        res.table(rows),
        res.table(res.verdict_rows([shrinks])),
    ]
    return "\n\n".join(md)


def _figure(ctx, fits, tuned, curves):
    """Histograms of the log Z estimates, before / after tuning q; the VAEs' loss curves."""
    fig, axes = subplots(1, 3, figsize=(15, 4))
    bins = np.linspace(-3, 6, 120)
    for name, est in fits.items():
        axes[0].hist(np.clip(est.estimates_, bins[0], bins[-1]), bins=bins, density=True,
                     histtype="step", label=f"{name}: {est.log_partition_:.3f}")
    axes[0].axvline(LOG_Z, color="k", ls="--", label=f"log Z = {LOG_Z:.4f}")
    axes[0].set(title="Estimates of log Z, q = N(0, 5I) (clipped to [-3, 6])",
                xlabel="estimate", ylabel="density")
    axes[0].legend(fontsize=8)
    before, after = tuned["N(0, 5I) (the note's q)"]
    for label, est in [("SUMO, q = N(0, 5I)", before), ("SUMO, tuned q", after)]:
        axes[1].hist(np.clip(est.estimates_, bins[0], bins[-1]), bins=bins, histtype="step",
                     density=True, label=label)
    axes[1].set_yscale("log")
    axes[1].axvline(LOG_Z, color="k", ls="--")
    axes[1].set(title="SUMO before / after tuning q (log scale)", xlabel="estimate")
    axes[1].legend(fontsize=8)
    for objective, color in [("sumo", "C0"), ("iwae", "C1")]:
        for i, curve in enumerate(curves[objective]):
            axes[2].plot(curve, color=color, alpha=0.7,
                         label=objective.upper() if i == 0 else None)
    axes[2].set(title="VAE on binarised digits: training loss", xlabel="epoch",
                ylabel="-objective (nats)")
    axes[2].legend()
    return save_figure(fig, ctx, "sumo.png", dpi=90)


def run(ctx):
    """Run both parts and return the report section."""
    from sklearn_papers.estimation import SUMOVAE, truncation_mean

    cfg, seeds = PROTOCOL.settings(ctx.quick), PROTOCOL.seeds(ctx)
    with one_torch_thread():  # tiny tensors: the intra-op pool only adds overhead
        fits, rows_a, tune_rows, tuned = _part_a(ctx, cfg["tune_steps"])
        results, curves = _part_b(ctx, cfg, seeds)
        fig = _figure(ctx, fits, tuned, curves)
    res = Result()
    # part A: SUMO within the tie band of log Z, ELBO and IWAE below it
    parts = [judge(CLAIMS["sumo_unbiased"], fits["SUMO"].estimates_, LOG_Z)] + [
        judge(CLAIMS["low"].at(name=name), est.estimates_)
        for name, est in fits.items() if name != "SUMO"]
    unbiased = res.verdict(all_of(*parts), claim=CLAIMS["unbiased"], parts=parts,
                           style="outcome")
    # tuning: the sample variance of one estimate, tuned q against its start, per start
    falls = judge(CLAIMS["tuning"], [np.var(a.estimates_) for _, a in tuned.values()],
                  [np.var(b.estimates_) for b, _ in tuned.values()])
    vae = judge(CLAIMS["vae"], np.asarray(results["sumo"]), np.asarray(results["iwae"]))
    m, e_k = SUMOVAE().min_terms, truncation_mean()
    rows_b = [{"training objective": name,
               "ours: test log-lik (nats)": format_mean_std(results[objective], 3),
               "paper (MNIST, Omniglot)": paper} for objective, name, paper in (
        ("sumo", f"SUMO (m={m}, E[K]={e_k:.2f})",
         "SUMO better than IWAE at equal expected compute"),
        ("iwae", f"IWAE (k={round(m + e_k)}, equal expected compute)", "baseline"))]
    md = [
        f"### A. Unbiased log Z on the note's mixture (log Z = log 2π = {LOG_Z:.4f})",
        "With q = N(0, 5I), beside Chin-Wei Huang's note; variance and IQR of one estimate.",
        res.table(rows_a, floatfmt=".4f"),
        f"{CLAIMS['unbiased'].statement}: {unbiased}; its parts:",
        res.table(res.verdict_rows(parts, digits=4)),
        f"SUMO before / after {cfg['tune_steps']} Adam steps tuning q, on fresh estimates.",
        res.table(tune_rows, floatfmt=".3f"),
        res.table(res.verdict_rows([falls])),
        "### B. SUMO- vs IWAE-trained VAE on binarised digits (load_digits > 7)",
        f"IWAE_{cfg['k_eval']} bound (nats per image), seeds {seeds}, {cfg['epochs']} epochs.",
        res.table(rows_b),
        res.table(res.verdict_rows([vae])),
    ]
    return res.done("\n\n".join(md), figures=[fig], shortened=PROTOCOL.note(ctx.quick))


def run_followup(ctx):
    """Run the follow-up of part B (:func:`_followup`) as an experiment of its own."""
    res = Result()
    with one_torch_thread():
        md = _followup(ctx, res, dict(PROTOCOL_FOLLOWUP.settings(ctx.quick),
                                      seeds=PROTOCOL_FOLLOWUP.seeds(ctx)))
    return res.done(md, shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


EXPERIMENT = Experiment(
    name="sumo",
    title="SUMO: unbiased log-partition and log-likelihood estimates (Luo et al. 2020)",
    paper=PAPER,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="sumo_followup",
    title="SUMO follow-up: does SUMO's variance explain the VAE comparison?",
    paper=PAPER,
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
