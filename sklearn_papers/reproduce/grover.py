"""Rong et al. (2020), Table 1 at our scale: does self-supervised pretraining help?

BBBP, ESOL and FreeSolv on balanced scaffold splits: frozen ``moses-small`` embeddings with
a linear model or an MLP, GROVER fine-tuned from ``moses-small`` and from scratch, and ECFP4
+ random forest. The follow-up (``grover_followup``) asks why pretraining fails on ESOL.

Claims: CLAIMS and CLAIMS_FOLLOWUP below; setup: docs/papers/grover.rst.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_papers.reproduce._claims import Claim, all_of, at_least, declare, judge
from sklearn_papers.reproduce._common import (
    Protocol,
    one_torch_thread,
    run_seeds,
    save_figure,
    subplots,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._pinned import pinned
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT", "EXPERIMENT_FOLLOWUP", "PAPER"]

#: Rong et al. 2020, Table 1 (balanced scaffold split): (GROVER-base, GROVER-large).
PAPER = {"BBBP": (0.936, 0.940), "ESOL": (0.888, 0.831), "FreeSolv": (1.592, 1.544)}
METRIC = {"BBBP": "ROC-AUC (higher is better)", "ESOL": "RMSE, log mol/L (lower is better)",
          "FreeSolv": "RMSE, kcal/mol (lower is better)"}
MODELS = ("grover_linear", "grover_mlp", "grover_finetuned", "grover_scratch", "ecfp_rf")
_PRE, _ECFP = ("grover_finetuned", "grover_scratch"), ("grover_finetuned", "ecfp_rf")
_RMSE = "ESOL test RMSE"

CLAIMS = declare(
    Claim("pretraining beats no pretraining on each data set (fine-tuned from moses-small vs "
          "same model from scratch)", "", "all of", key="pre", arms=_PRE),
    *(Claim(f"{name}: fine-tuned beats scratch", METRIC[name], "paired interval",
            higher_is_better=name == "BBBP", key=f"pre/{name}", arms=_PRE) for name in PAPER),
    Claim("fine-tuned GROVER beats ECFP + random forest on at least two of three", "",
          "at least 2 of", key="ecfp", arms=_ECFP),
    *(Claim(f"{name}: fine-tuned beats ECFP + random forest", METRIC[name],
            "paired interval", higher_is_better=name == "BBBP", key=f"ecfp/{name}",
            arms=_ECFP) for name in PAPER),
)

#: Settings: molecules kept per data set (random subset before splitting), seeds (their
#: number counts), fine-tuning epochs, trees of the random forest.
PROTOCOL = Protocol(
    full={"n_max": None, "seeds": (0, 1, 2), "epochs": 30, "trees": 500},
    quick={"n_max": 250, "seeds": (0,), "epochs": 5, "trees": 100},
    shortened="random subsets of {n_max} molecules per data set, 1 seed instead of 3, "
              "{epochs} fine-tuning epochs instead of 30, {trees} trees instead of 500.",
)

#: The follow-up's claims (``{fewest}``: the smallest share of the training labels).
CLAIMS_FOLLOWUP = declare(
    Claim("moses-176k fine-tuned beats its architecture from scratch", _RMSE,
          "paired interval", higher_is_better=False, key="big",
          arms=("moses-176k fine-tuned", "scratch")),
    Claim("moses-small fine-tuned beats scratch with a {fewest:g} share of the labels", _RMSE,
          "paired interval", higher_is_better=False, key="few",
          arms=("moses-small fine-tuned", "scratch")),
    Claim("the gain of fine-tuning is larger with fewer labels than with all",
          "scratch - fine-tuned RMSE", "paired interval", key="grow",
          arms=("{fewest:g} share", "all labels")),
)

#: The follow-up's own budgets (the main table's settings are in the earlier parts' keys):
#: ``seeds``: how many of the main seeds; ``fractions``: shares of each training part;
#: ``n_ref``: first MOSES molecules compared with (15,000 are ``moses-small``'s pretraining
#: set); ``n_held``: MOSES molecules after those 15,000 (never seen by ``moses-small``).
PROTOCOL_FOLLOWUP = Protocol(
    full={"seeds": 3, "fractions": (0.1, 0.25, 0.5), "n_ref": 15000, "n_held": 2000},
    quick={"seeds": 1, "fractions": (0.3,), "n_ref": 1000, "n_held": 200},
)
#: Worker processes for the independent fits (cached parts do not depend on it).
N_JOBS = 2
#: The architecture of ``moses-small``, used by every fit of the main table.
_SMALL = dict(hidden_size=64, n_layers=1, n_heads=2, depth=3)


def _load(name, n_max, seed):
    from sklearn_papers.datasets import load_bbbp, load_delaney, load_freesolv

    loader = {"BBBP": load_bbbp, "ESOL": load_delaney, "FreeSolv": load_freesolv}[name]
    X, y = loader(return_X_y=True)
    if n_max is not None and len(X) > n_max:
        keep = np.sort(np.random.default_rng(seed).choice(len(X), n_max, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def _test_score(name, model, X, y, rows):
    """ROC-AUC of class 1's probability (BBBP) or RMSE of ``model`` on ``rows``."""
    from sklearn.metrics import roc_auc_score, root_mean_squared_error

    if name == "BBBP":
        return float(roc_auc_score(y[rows], model.predict_proba(X[rows])[:, 1]))
    return float(root_mean_squared_error(y[rows], model.predict(X[rows])))


def _split(name, settings, seed):
    """``(X, y, train, test)``: the molecules of ``name`` and their balanced scaffold split."""
    from sklearn_papers.chem import ScaffoldSplit

    X, y = _load(name, settings["n_max"], seed)
    train, test = next(ScaffoldSplit(method="balanced", test_size=0.2,
                                     random_state=seed).split(X))
    return X, y, train, test


def _frozen_heads_part(name, X, y, train, test, seed):
    """Test scores of the frozen ``moses-small`` embeddings + a linear model and + an MLP."""
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_papers.chem import GroverFeaturizer

    clf = name == "BBBP"
    Z = GroverFeaturizer(pretrained="moses-small", max_epochs=0, descriptors=False,
                         fingerprint_bits=0).fit(X[:1]).transform(X)
    linear = (LogisticRegression(C=0.1, max_iter=2000) if clf
              else RidgeCV(alphas=np.logspace(-2, 3, 12)))
    mlp = (MLPClassifier if clf else MLPRegressor)(
        hidden_layer_sizes=(64,), alpha=1e-2, max_iter=500, early_stopping=False,
        random_state=seed)
    out = {}
    for key, head in (("grover_linear", linear), ("grover_mlp", mlp)):
        model = make_pipeline(StandardScaler(), head)
        with warnings.catch_warnings():  # fixed iteration budget, reported as is
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(Z[train], y[train])
        out[key] = _test_score(name, model, Z, y, test)
    return out


def _fine_tune_part(name, X, y, train, test, est_params):
    """Test score of ``GroverClassifier`` / ``GroverRegressor`` fitted with ``est_params``."""
    from sklearn_papers.chem import GroverClassifier, GroverRegressor

    Est = GroverClassifier if name == "BBBP" else GroverRegressor
    head = {} if name == "BBBP" else {"head": "finetune"}
    est = Est(**pinned(Est, est_params), **head).fit(X[train], y[train])
    return _test_score(name, est, X, y, test)


def _forest_part(name, X, y, train, test, trees, seed):
    """Test score of ECFP4 (2048 bits) + a random forest of ``trees`` trees."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from sklearn_papers.chem import CircularFingerprint

    F = CircularFingerprint(radius=2, n_bits=2048).fit(X).transform(X)
    forest = (RandomForestClassifier if name == "BBBP" else RandomForestRegressor)(
        n_estimators=trees, random_state=seed, n_jobs=1)
    forest.fit(F[train], y[train])
    return _test_score(name, forest, F, y, test)


def _finetune_params(pretrained, arch, settings, seed):
    """The fine-tuning protocol of every GROVER fit, with architecture ``arch``."""
    return dict(pretrained=pretrained, **arch, max_epochs=settings["epochs"], lr=5e-4,
                batch_size=32, ffn_hidden=64, dropout=0.0, readout="mean", dist_coef=0.1,
                random_state=seed)


def _dataset_parts(seed, name, settings):
    """The cached parts ``(model, key, func, args, params)`` of one data set and seed."""
    X, y, train, test = _split(name, settings, seed)
    if name == "BBBP" and len(np.unique(y[test])) < 2:  # ROC-AUC needs both classes
        raise RuntimeError(f"{name} seed {seed}: test split holds a single class")
    base = {"data set": name, "seed": seed, "n": len(X), "settings": settings}
    data = (name, X, y, train, test)
    parts = [("grover_heads", f"{name}/seed={seed}/frozen_heads", _frozen_heads_part,
              (*data, seed), base)]
    for key, pretrained in (("grover_finetuned", "moses-small"), ("grover_scratch", None)):
        est_params = _finetune_params(pretrained, _SMALL, settings, seed)
        parts.append((key, f"{name}/seed={seed}/{key}", _fine_tune_part,
                      (*data, est_params), {**base, **est_params}))
    parts.append(("ecfp_rf", f"{name}/seed={seed}/ecfp_rf", _forest_part,
                  (*data, settings["trees"], seed), base))
    return parts


def _scores(ctx, settings, seeds, names, models, desc):
    """``(scores, sizes)``: ``scores[name][model]``, the test score per seed of the main
    table's parts of ``models``, and the molecules per data set."""
    jobs, parts, sizes = [], [], {}
    for name in names:
        for seed in seeds:
            for model, key, func, args, params in _dataset_parts(seed, name, settings):
                if model in models:
                    jobs.append((name, model))
                    parts.append((key, func, args, params))
                    sizes[name] = params["n"]
    # independent fits side by side on worker processes (one torch thread each)
    with ctx.progress(total=len(parts), desc=desc) as bar:
        values = cached_parts(ctx, parts, n_jobs=N_JOBS, progress=bar)
    scores = {name: {m: [] for m in MODELS if m in models} for name in names}
    for (name, model), value in zip(jobs, values):
        for m, v in (value.items() if model == "grover_heads" else [(model, value)]):
            scores[name][m].append(v)
    return scores, sizes


def run(ctx):
    """Run the experiment (see the module docstring); return the report section."""
    settings = PROTOCOL.settings(ctx.quick)
    seeds = tuple(run_seeds(ctx, len(settings["seeds"])))
    start = time.perf_counter()
    with one_torch_thread():  # small graph model: one thread is fastest on a shared machine
        scores, sizes = _scores(ctx, settings, seeds, PAPER, ("grover_heads", *MODELS),
                                "grover")
    seconds = time.perf_counter() - start
    rows = [{"data set, metric": f"{name}, {METRIC[name]}", "n": sizes[name],
             **{m: format_mean_std(scores[name][m], 3) for m in MODELS},
             "paper GROVER base / large": "{:.3f} / {:.3f}".format(*PAPER[name])}
            for name in PAPER]
    result = Result()
    claims = _main_claims(result, scores)
    spread = ", mean ± std over seeds" if len(seeds) > 1 else ", one seed (no spread)"
    md = "\n".join([
        *result.block(f"Test scores on balanced scaffold splits (80 % / 20 %), seeds "
                      f"{list(seeds)}{spread}; {settings['epochs']} fine-tuning epochs. "
                      "Paper: GROVER-base / -large.", rows),
        result.table(claims),
        "",
        f"Wall time {seconds:.0f} s ({N_JOBS} worker processes, one torch thread each).",
    ])
    return result.done(md, figures=[_plot(ctx, scores)], shortened=PROTOCOL.note(ctx.quick))


def _main_claims(result, scores):
    """Rows of the main claims, their verdicts kept in ``result``."""
    tuned = {name: scores[name]["grover_finetuned"] for name in PAPER}
    pre = [judge(CLAIMS[f"pre/{n}"], tuned[n], scores[n]["grover_scratch"]) for n in PAPER]
    ecfp = [judge(CLAIMS[f"ecfp/{n}"], tuned[n], scores[n]["ecfp_rf"]) for n in PAPER]

    def parts(verdicts):
        return "; ".join(f"{name}: " + result.verdict(v, style="plain")
                         for name, v in zip(PAPER, verdicts))

    return [
        {"claim (paper, at our scale)": CLAIMS["pre"].statement,
         "verdict": result.verdict(all_of(*pre), claim=CLAIMS["pre"], parts=pre)
         + " (all three must hold)", "per data set": parts(pre)},
        {"claim (paper, at our scale)": CLAIMS["ecfp"].statement,
         "verdict": result.verdict(at_least(2, *ecfp), claim=CLAIMS["ecfp"], parts=ecfp)
         + " (two of three must hold)", "per data set": parts(ecfp)},
    ]


def _plot(ctx, scores):
    fig, axes = subplots(1, 3, figsize=(13, 3.8))
    for ax, name in zip(axes, PAPER):
        ax.bar(range(len(MODELS)), [np.mean(scores[name][m]) for m in MODELS],
               yerr=[np.std(scores[name][m]) for m in MODELS],
               color=["C0", "C0", "C2", "C7", "C1"])
        ax.axhline(PAPER[name][0], color="k", ls="--", lw=1, label="paper GROVER-base")
        ax.set_xticks(range(len(MODELS)))
        ax.set_xticklabels([m.replace("_", "\n") for m in MODELS], fontsize=8)
        ax.set_title(f"{name}: {METRIC[name]}", fontsize=9)
        if name == "BBBP":
            ax.set_ylim(0.5, 1.0)
        ax.legend(fontsize=7)
    fig.suptitle("GROVER at our scale: balanced scaffold split", fontsize=10)
    return save_figure(fig, ctx, "grover.png", dpi=100)


# -- follow-up of the claim that fails at full scale on ESOL ---------------------------------
#: Rows of ``load_moses_smiles`` that ``moses-small`` was pretrained on (its config.json).
MOSES_SMALL_ROWS = 15000
CHECKPOINTS = ("moses-small", "moses-176k")


def run_followup(ctx):
    """Run the follow-up of the ESOL claim (:func:`followup`); return its report section."""
    settings = PROTOCOL.settings(ctx.quick)
    follow = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = tuple(run_seeds(ctx, len(settings["seeds"])))[:follow["seeds"]]
    start = time.perf_counter()
    with one_torch_thread():  # small graph model: one thread is fastest on a shared machine
        # the main table's ESOL pair, refitted by the same parts as in ``grover``
        main = _scores(ctx, settings, seeds, ["ESOL"], _PRE,
                       "grover_followup: main table's ESOL")[0]["ESOL"]
        result = Result()
        md, fig, _ = followup(ctx, result, settings, seeds, main)
    md += (f"\n\nWall time {time.perf_counter() - start:.0f} s ({N_JOBS} worker processes, "
           "one torch thread each).")
    shortened = " ".join(filter(None, [PROTOCOL.note(ctx.quick),
                                       PROTOCOL_FOLLOWUP.note(ctx.quick)]))
    return result.done(md, figures=[fig], shortened=shortened)


def _finetune_scores(name, X, y, fit, test, est_params):
    """Test and training RMSE, loss curve and fit CPU seconds of one ``GroverRegressor``."""
    from sklearn_papers.chem import GroverRegressor

    cpu = time.process_time()
    est = GroverRegressor(**pinned(GroverRegressor, est_params), head="finetune").fit(
        X[fit], y[fit])
    cpu = time.process_time() - cpu
    return {"test": _test_score(name, est, X, y, test),
            "train": _test_score(name, est, X, y, fit),
            "loss_curve": [float(v) for v in est.loss_curve_], "cpu_seconds": cpu,
            "n_train": len(fit)}


def _subset(train, fraction, seed):
    """A seeded random ``fraction`` of the training indices (sorted), at least 8."""
    n = max(8, round(fraction * len(train)))
    return np.sort(np.random.default_rng(seed).choice(train, n, replace=False))


def _domain_gap(settings, follow, seed):
    """:func:`~sklearn_papers.chem._domain_gap._domain_gap` of each data set and of held-out
    MOSES against the first ``n_ref`` MOSES molecules."""
    from sklearn_papers.chem._domain_gap import _domain_gap as measure
    from sklearn_papers.datasets import load_moses_smiles

    moses, _ = load_moses_smiles(n_samples=MOSES_SMALL_ROWS + follow["n_held"],
                                 return_X_y=True)
    sets = {"MOSES (held out)": moses[MOSES_SMALL_ROWS:],
            **{name: _load(name, settings["n_max"], seed)[0] for name in PAPER}}
    return measure(sets, moses[:follow["n_ref"]], CHECKPOINTS)


def followup(ctx, result, settings, seeds, main):
    """Why pretraining did not help on ESOL: bigger pretraining, domain gap, fewer labels.

    On the main table's ESOL splits (``settings``, the first of ``seeds``), beside its
    ESOL test RMSE per seed ``main[model]``: ``moses-176k`` fine-tuned against its
    architecture from scratch, how far each data set is from MOSES, and ``moses-small``
    against scratch on shares of each training part. Returns the markdown (tables and
    verdicts kept in ``result``), the figure and the results (``"big"``, ``"curve"``,
    ``"gap"``, ``"verdicts"``).
    """
    from sklearn_papers.chem import load_grover_checkpoint

    follow = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = tuple(seeds[:follow["seeds"]])
    main = {model: main[model][:len(seeds)] for model in _PRE}
    name = "ESOL"
    big_config = load_grover_checkpoint("moses-176k", heads=False)[0]["params"]
    big = {k: int(big_config[k]) for k in ("hidden_size", "n_layers", "n_heads", "depth")}
    res_big = {"finetuned": [], "scratch": []}
    res_curve = {f: {"finetuned": [], "scratch": []} for f in follow["fractions"]}
    jobs, parts, n_train = [], [], []
    for seed in seeds:
        X, y, train, test = _split(name, settings, seed)
        n_train.append(len(train))
        base = {"data set": name, "seed": seed, "n": len(X), "settings": settings}
        fits = [(res_big, "176k_", "moses-176k", big, train, {})] + [
            (res_curve[f], f"fraction={f}/", "moses-small", _SMALL, _subset(train, f, seed),
             {"fraction": f}) for f in follow["fractions"]]
        for into, key, pretrained, arch, fit, extra in fits:
            for arm, checkpoint in (("finetuned", pretrained), ("scratch", None)):
                est_params = _finetune_params(checkpoint, arch, settings, seed)
                jobs.append(into[arm])
                parts.append((f"followup/{name}/seed={seed}/{key}{arm}", _finetune_scores,
                              (name, X, y, fit, test, est_params),
                              {**base, **est_params, **extra}))
    gap = {}

    def domain_gap():  # in this process while the workers fit
        gap.update(ctx.cached("followup/domain_gap", lambda: _domain_gap(
            settings, follow, ctx.random_state), params={
            "settings": settings, "n_ref": follow["n_ref"], "n_held": follow["n_held"],
            "moses_small_rows": MOSES_SMALL_ROWS, "seed": ctx.random_state}))

    with ctx.progress(total=len(parts), desc="grover follow-up") as bar:
        values = cached_parts(ctx, parts, n_jobs=N_JOBS, progress=bar, meanwhile=domain_gap)
    for into, value in zip(jobs, values):
        into.append(value)
    curve = _curve(res_curve, main, int(np.mean(n_train)))
    verdicts = _followup_verdicts(res_big, curve, gap)
    fig = _followup_plot(ctx, res_big, curve, gap, main)
    md = _followup_markdown(result, res_big, curve, gap, main, seeds, follow, verdicts)
    return md, fig, {"big": res_big, "curve": res_curve, "gap": gap, "verdicts": verdicts}


def _tests(parts, field="test"):
    """``field`` of each fit's scores (one per seed)."""
    return [p[field] for p in parts]


def _mean(parts, field="test"):
    return float(np.mean(_tests(parts, field)))


def _measured(flag):
    """The answer to a domain-gap question: one measurement, not seed means, so no rule."""
    return f"**{'yes' if flag else 'no'}** (measured (one count, no seeds))"


def _gains(scratch, finetuned):
    """Per-seed RMSE gain of fine-tuning (``scratch - fine-tuned``; > 0: pretraining helps)."""
    return [float(s) - float(f) for s, f in zip(scratch, finetuned)]


def _curve(res_curve, main, n_train):
    """``{share: (training molecules, fine-tuned, scratch test RMSE per seed)}`` of each
    share of the labels, the main table's pair (``n_train`` molecules) at share 1."""
    curve = {f: (_mean(res_curve[f]["scratch"], "n_train"), _tests(res_curve[f]["finetuned"]),
                 _tests(res_curve[f]["scratch"])) for f in sorted(res_curve)}
    curve[1.0] = (n_train, main["grover_finetuned"], main["grover_scratch"])
    return curve


def _followup_verdicts(res_big, curve, gap):
    """The follow-up's answers: the seed-dependent ones judged by the paired-interval rule
    over the follow-up's seeds, the domain-gap ones comparing single measurements."""
    gains = {f: float(np.mean(scratch) - np.mean(tuned)) for f, (_, tuned, scratch)
             in curve.items()}  # > 0: pretraining helps
    # 1. a bigger, better pretraining
    big = judge(CLAIMS_FOLLOWUP["big"], _tests(res_big["finetuned"]),
                _tests(res_big["scratch"]))
    # 2. the domain gap: is ESOL farther from MOSES than the data sets where it helped?
    others = [n for n in PAPER if n != "ESOL"]
    far_vocab = all(gap["ESOL"]["atom_other/moses-small"] > gap[n]["atom_other/moses-small"]
                    for n in others)
    med = {n: float(np.median(gap[n]["nn_tanimoto"])) for n in gap}
    far_nn = all(med["ESOL"] < med[n] for n in others)
    # 3. labels: does the gain grow as the labels get fewer?
    fewest = min(curve)
    (_, few_tuned, few_scratch), (_, all_tuned, all_scratch) = curve[fewest], curve[1.0]
    few = judge(CLAIMS_FOLLOWUP["few"].at(fewest=fewest), few_tuned, few_scratch)
    grow = judge(CLAIMS_FOLLOWUP["grow"].at(fewest=fewest), _gains(few_scratch, few_tuned),
                 _gains(all_scratch, all_tuned))
    return {"small_gain": gains[1.0], "gains": gains, "big": big, "few": few, "grow": grow,
            "big_gain": _mean(res_big["scratch"]) - _mean(res_big["finetuned"]),
            "far_vocab": far_vocab, "far_nn": far_nn, "nn_median": med}


def _percent(g, kind):
    """``"a % / b %"``: the share of ``kind`` context labels in ``<other>``, per checkpoint."""
    return " / ".join(f"{100 * g[f'{kind}_other/{c}']:.1f} %" for c in CHECKPOINTS)


def _gap_rows(gap, nn_median):
    """Rows of the domain-gap table, one per set of molecules."""
    return [{"molecules": name, "n": g["n_molecules"],
             "heavy atoms (mean)": f"{g['heavy_atoms']:.1f}",
             "atom contexts in <other>: moses-small / moses-176k": _percent(g, "atom"),
             "bond contexts in <other>: moses-small / moses-176k": _percent(g, "bond"),
             "NN Tanimoto to MOSES: median": f"{nn_median[name]:.3f}",
             "share >= 0.5": f"{100 * np.mean(g['nn_tanimoto'] >= 0.5):.0f} %"}
            for name, g in gap.items()]


def _followup_markdown(result, res_big, curve, gap, main, seeds, follow, v):
    big = {key: (f"{_mean(res_big['finetuned'], key):{fmt}} / "
                 f"{_mean(res_big['scratch'], key):{fmt}}")
           for key, fmt in (("train", ".3f"), ("cpu_seconds", ".0f"))}
    rows = [
        {"checkpoint (architecture)": "moses-small (hidden 64, 1 block, 15k molecules)",
         "fine-tuned": format_mean_std(main["grover_finetuned"], 3),
         "scratch": format_mean_std(main["grover_scratch"], 3),
         "scratch - fine-tuned": f"{v['small_gain']:+.3f}",
         "train RMSE fine-tuned / scratch": "-", "fit CPU s fine-tuned / scratch": "-"},
        {"checkpoint (architecture)": "moses-176k (hidden 144, 2 blocks, 176k molecules)",
         "fine-tuned": format_mean_std(_tests(res_big["finetuned"]), 3),
         "scratch": format_mean_std(_tests(res_big["scratch"]), 3),
         "scratch - fine-tuned": f"{v['big_gain']:+.3f}",
         "train RMSE fine-tuned / scratch": big["train"],
         "fit CPU s fine-tuned / scratch": big["cpu_seconds"]},
    ]
    curve_rows = [{"share of training part": "1 (main table)" if f == 1.0 else f"{f:g}",
                   "training molecules": int(n),
                   "fine-tuned (moses-small)": format_mean_std(tuned, 3),
                   "scratch": format_mean_std(scratch, 3),
                   "scratch - fine-tuned": f"{v['gains'][f]:+.3f}"}
                  for f, (n, tuned, scratch) in curve.items()]
    claims = [
        (("does a bigger, longer pretraining (moses-176k) make fine-tuning beat scratch on "
          "ESOL?"), result.verdict(v["big"], style="outcome")),
        (("are more of ESOL's atom contexts outside moses-small's vocabulary than BBBP's and "
          "FreeSolv's (where pretraining helped)?"), _measured(v["far_vocab"])),
        (("are ESOL's molecules farther from MOSES (lower median nearest-neighbour Tanimoto) "
          "than BBBP's and FreeSolv's?"), _measured(v["far_nn"])),
        (f"does moses-small beat scratch with a {min(curve):g} share of the ESOL labels?",
         result.verdict(v["few"], style="outcome")),
        ("is its gain larger with fewer labels than with all?",
         result.verdict(v["grow"], style="outcome")),
    ]
    return "\n".join([
        "### Follow-up: pretraining on ESOL",
        "",
        f"ESOL test RMSE (log mol/L) on the main table's splits, seeds {list(seeds)}.",
        "",
        *result.block("**1. A bigger, longer pretraining:** `moses-176k` fine-tuned against "
                      "its architecture from scratch, below `moses-small`'s pair from the "
                      "main table.", rows),
        *result.block("**2. The domain gap:** context labels in each checkpoint's `<other>` "
                      "bucket, and each molecule's nearest neighbour among the first "
                      f"{follow['n_ref']:,} MOSES molecules. MOSES (held out): "
                      f"{follow['n_held']:,} molecules after row {MOSES_SMALL_ROWS:,}.",
                      _gap_rows(gap, v["nn_median"])),
        *result.block("**3. Fewer labels:** `moses-small` fine-tuned against scratch on a "
                      "seeded random share of each training part, the same test part.",
                      curve_rows),
        result.table([{"follow-up question": q, "answer": a} for q, a in claims]),
    ])


def _followup_plot(ctx, res_big, curve, gap, main):
    fig, axes = subplots(1, 3, figsize=(14, 3.9))
    ax = axes[0]
    pairs = [(main["grover_finetuned"], main["grover_scratch"]),
             (_tests(res_big["finetuned"]), _tests(res_big["scratch"]))]
    for i, (tuned, scratch) in enumerate(pairs):
        for j, (vals, color, kind) in enumerate(((tuned, "C2", "fine-tuned"),
                                                 (scratch, "C7", "scratch"))):
            ax.bar(3 * i + j, np.mean(vals), yerr=np.std(vals), color=color,
                   label=kind if i == 0 else None)
            ax.plot([3 * i + j] * len(vals), vals, "k.", ms=4)
    ax.set_xticks([0.5, 3.5])
    ax.set_xticklabels(["moses-small\n(hidden 64)", "moses-176k\n(hidden 144)"])
    ax.set_ylabel("ESOL test RMSE (log mol/L)")
    ax.set_title("ESOL: fine-tuned vs scratch, same architecture", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    names = list(gap)
    ax.boxplot([gap[n]["nn_tanimoto"] for n in names], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1))
    ax.set_xticklabels([n.replace(" (held out)", "\n(held out)") for n in names],
                       fontsize=8)
    ax.set_ylabel("nearest-neighbour Tanimoto to MOSES (ECFP4)")
    for i, n in enumerate(names, start=1):
        ax.text(i, 1.02, f"{100 * gap[n]['atom_other/moses-small']:.1f} %", ha="center",
                fontsize=7)
    ax.set_ylim(0, 1.1)
    ax.set_title("domain gap (numbers: atom contexts in <other>, moses-small)", fontsize=9)
    ax = axes[2]
    for col, color, label in ((1, "C2", "fine-tuned (moses-small)"), (2, "C7", "scratch")):
        ax.plot([c[0] for c in curve.values()], [np.mean(c[col]) for c in curve.values()],
                "o-", color=color, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("ESOL training molecules")
    ax.set_ylabel("test RMSE (log mol/L)")
    ax.set_title("fewer labels", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, ctx, "grover_followup.png", dpi=100)


_PAPER = ("Y. Rong, Y. Bian, T. Xu, W. Xie, Y. Wei, W. Huang, J. Huang (2020), "
          "Self-Supervised Graph Transformer on Large-Scale Molecular Data, NeurIPS 2020")

EXPERIMENT = Experiment(
    name="grover",
    title="GROVER: self-supervised pretraining for molecular property prediction",
    paper=_PAPER,
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="grover_followup",
    title="GROVER follow-up: why pretraining does not help on ESOL",
    paper=_PAPER,
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
