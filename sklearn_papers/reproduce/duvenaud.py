"""Duvenaud et al. (2015), Table 2: neural and circular fingerprints on three regression sets.

Every row is searched on the paper's contiguous folds (``_duvenaud_search``; the neural rows
in ``_duvenaud_neural``); with ``--records DIR`` each finished fit is a text record that
later runs reuse (:mod:`._records`). The follow-up (``duvenaud_followup``) trains both
fingerprints on growing parts of photovoltaic.

Claims: CLAIMS below; setup: docs/papers/duvenaud.rst.
"""

from dataclasses import replace

import numpy as np

from sklearn_papers.datasets._splits import _contiguous_folds
from sklearn_papers.reproduce import _duvenaud_neural as neural
from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, save_figure, subplots
from sklearn_papers.reproduce._duvenaud_search import (
    FULL_N_JOBS,
    MODEL_SPECS,
    QUICK_ROWS,
    DatasetData,
    _fit_mlp,
    _load,
    search_rows,
)
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._records import records_note
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["CLAIMS", "EXPERIMENT", "EXPERIMENT_FOLLOWUP", "PROTOCOL", "claim_verdicts",
           "search_plan"]

#: The paper, as the report cites it.
PAPER = ("Duvenaud, Maclaurin, Aguilera-Iparraguirre, Gomez-Bombarelli, Hirzel, Aspuru-Guzik, "
         "Adams (2015). Convolutional networks on graphs for learning molecular "
         "fingerprints. NeurIPS 28")

#: The paper's Table 2, test MSE (mean, std over folds); predict-the-mean has no std.
PAPER_MSE = {
    "solubility": {
        "mean": (4.29, None), "ecfp_linear": (1.71, 0.13), "ecfp_mlp": (1.40, 0.13),
        "nf_linear": (0.77, 0.11), "nf_mlp": (0.52, 0.07)},
    "malaria": {
        "mean": (1.47, None), "ecfp_linear": (1.13, 0.03), "ecfp_mlp": (1.36, 0.10),
        "nf_linear": (1.15, 0.02), "nf_mlp": (1.16, 0.03)},
    "photovoltaic": {
        "mean": (6.40, None), "ecfp_linear": (2.63, 0.09), "ecfp_mlp": (2.00, 0.09),
        "nf_linear": (2.58, 0.18), "nf_mlp": (1.43, 0.09)},
}

#: Half-width of the tie band of a "ties" claim, as a fraction of the best ECFP row's mean
#: test MSE: a difference within 5 % of the error is a tie.
TIE_BAND = 0.05

_BEATS = "neural FP + neural net beats ECFP + neural net"
_ECFP_LABEL = {"ecfp_linear": "ECFP + linear", "ecfp_mlp": "ECFP + net"}

#: The paper's headline claim per data set (Table 2), keyed by the data set: neural FP +
#: neural net has a lower test MSE than ECFP + neural net, or (malaria) matches the best
#: ECFP row, whichever it is in this run, within :data:`TIE_BAND` of its mean MSE (the
#: declared margin is that fraction; :func:`claim_verdicts` scales it).
CLAIMS = declare(
    Claim(_BEATS, "test MSE", "paired interval", higher_is_better=False, unit="folds",
          key="solubility", arms=("nf_mlp", "ecfp_mlp")),
    Claim("neural FP + neural net ties with the best ECFP model (paper: ECFP + linear)",
          "test MSE", "equivalence", higher_is_better=False, margin=TIE_BAND, unit="folds",
          key="malaria", arms=("nf_mlp", "best ECFP row")),
    Claim(_BEATS, "test MSE", "paired interval", higher_is_better=False, unit="folds",
          key="photovoltaic", arms=("nf_mlp", "ecfp_mlp")),
)

#: Random-search draws per fold of each row.
PROTOCOL = Protocol(
    full=dict(ecfp_linear=50, ecfp_mlp=20, nf_linear=8, nf_mlp=8),
    quick=dict(ecfp_linear=5, ecfp_mlp=2, nf_linear=1, nf_mlp=1),
    shortened=(
        f"malaria and photovoltaic: their first {QUICK_ROWS} rows; ECFP rows: {{ecfp_linear}} "
        "/ {ecfp_mlp} draws per fold from narrower spaces; neural rows: one fixed "
        "configuration (" + ", ".join(f"{k} {v:g}" for k, v in neural._QUICK.items())
        + "), no search, the linear layer on solubility only; fewer Delaney molecules for "
        "the distance correlation."),
)

#: Every row searched: the ECFP ones, then the neural ones.
SPECS = (*MODEL_SPECS, *neural.NEURAL_SPECS)

#: The follow-up's photovoltaic rows loaded, training-set sizes and epochs (neural
#: fingerprint; ECFP + net).
PROTOCOL_FOLLOWUP = Protocol(
    full=dict(n_rows=20000, sizes=(1000, 4000, 16000), epochs=50, mlp_epochs=100),
    quick=dict(n_rows=3000, sizes=(500, 2000), epochs=15, mlp_epochs=15),
)


def _mean_baseline(data):
    return [float(np.mean((data.y[test] - data.y[train].mean()) ** 2))
            for train, _, test in _contiguous_folds(len(data.y))]


def _fmt_paper(mean, std):
    return f"{mean:.2f}" if std is None else f"{mean:.2f} ± {std:.2f}"


def _reference(claim, mse, mean):
    """The row ``nf_mlp`` is judged against: the claim's, or for a tie the best ECFP row."""
    if claim.rule != "equivalence":
        return claim.arms[1]
    return min(_ECFP_LABEL, key=lambda key: mean(mse[key]))


def claim_verdicts(results, paper_mse, result):
    """Judge the paper's headline claim (:data:`CLAIMS`) on each data set from this run's
    per-fold MSEs; a tie's band is :data:`TIE_BAND` times the best ECFP row's mean MSE.

    ``results[data name][model key]``: test MSE per fold (no ``"nf_mlp"``: not run);
    ``paper_mse[data name][model key]``: the paper's ``(mean, std)``; ``result`` keeps
    the verdicts. Returns one row per data set of :data:`CLAIMS` in ``results``.
    """
    rows = []
    for name, claim in CLAIMS.items():
        if name not in results:
            continue
        ours, paper = results[name], paper_mse[name]
        ties = claim.rule == "equivalence"
        paper_ref = _reference(claim, paper, lambda mse: mse[0])
        row = {"data set": name, "paper's claim": claim.statement,
               "paper MSE": f"{paper['nf_mlp'][0]:.2f} vs {paper[paper_ref][0]:.2f}"}
        if "nf_mlp" not in ours:
            rows.append({**row, "ours MSE": "", "holds here": "not run in --quick"})
            continue
        nf = np.asarray(ours["nf_mlp"], dtype=float)
        ref_key = _reference(claim, ours, np.mean)
        ref = np.asarray(ours[ref_key], dtype=float)
        if ties:
            claim = replace(claim, margin=TIE_BAND * float(ref.mean()))
        verdict = judge(claim, nf, ref)
        rows.append({**row, "ours MSE": f"{nf.mean():.2f} vs {ref.mean():.2f}"
                                        + (f" ({_ECFP_LABEL[ref_key]})" if ties else ""),
                     "holds here": result.verdict(
                         verdict, claim=f"{name}: {claim.statement}",
                         arms=("nf_mlp", ref_key), style="outcome", digits=2)
                                   + (f"; tie band ±{claim.margin:.2f}" if ties else "")})
    return rows


def _plot(ctx, results):
    names = list(results)
    keys = list(dict.fromkeys(k for name in names for k in results[name]))
    fig, axes = subplots(1, len(names), figsize=(4.2 * len(names), 3.6))
    for ax, name in zip(np.atleast_1d(axes), names):
        x = np.arange(len(keys))
        paper = [PAPER_MSE[name].get(k, (np.nan, None)) for k in keys]
        ours = [results[name].get(k, [np.nan]) for k in keys]
        ax.bar(x - 0.2, [p[0] for p in paper], 0.4, yerr=[p[1] or 0 for p in paper],
               label="paper", color="0.7", capsize=3)
        ax.bar(x + 0.2, [np.mean(o) for o in ours], 0.4, yerr=[np.std(o) for o in ours],
               label="ours", color="C0", capsize=3)
        for xi, o in zip(x, ours):
            if np.all(np.isnan(o)):
                ax.text(xi + 0.2, 0.02, "not run", rotation=90, ha="center", va="bottom",
                        fontsize=7, transform=ax.get_xaxis_transform())
        ax.set_xticks(x, [k.replace("ecfp_", "ECFP+").replace("nf_", "NF+") for k in keys],
                      rotation=30)
        ax.set_title(name)
        ax.set_ylabel("test MSE (5 folds)")
    np.atleast_1d(axes)[0].legend()
    fig.suptitle("Duvenaud et al. (2015) Table 2: ours vs paper")
    return save_figure(fig, ctx, "duvenaud_table2.png", dpi=110)


def search_plan(ctx, datasets):
    """Every row of the run's search, ``(data, spec, n_draws)`` for :func:`search_rows`:
    the ECFP rows of each data set, then the neural ones (``--quick``: of QUICK_MODELS)."""
    draws = PROTOCOL.settings(ctx.quick)
    rows = [(data, spec) for data in datasets for spec in MODEL_SPECS] + [
        (data, spec) for data in datasets for spec in neural.NEURAL_SPECS
        if not ctx.quick or spec.key in neural.QUICK_MODELS[data.name]]
    return [(data, spec, draws[spec.key]) for data, spec in rows]


def _table_rows(datasets, results, labels):
    rows = []
    for data in datasets:
        for key, label in labels.items():
            paper, mse = PAPER_MSE[data.name].get(key), results[data.name].get(key)
            rows.append({"data set (n)": f"{data.name} ({len(data.y)})", "model": label,
                         "ours MSE": ("not run in --quick" if mse is None
                                      else format_mean_std(mse)),
                         "paper MSE": _fmt_paper(*paper) if paper else "n/a",
                         "ours RMSE": "" if mse is None else format_mean_std(np.sqrt(mse)),
                         "paper RMSE": f"{np.sqrt(paper[0]):.2f}" if paper else "n/a"})
    return rows


def _chosen_lines(chosen_all, labels):
    lines = []
    for (name, key), chosen in chosen_all.items():
        length_key = "n_bits" if "n_bits" in chosen[0] else "fp_length"
        lines.append(f"- {name}, {labels[key]}: radius per fold "
                     f"{[c['radius'] for c in chosen]}, {length_key} "
                     f"{[c[length_key] for c in chosen]}")
    return lines


def _spaces(quick):
    """One line per row: its search space and this run's draws per fold."""
    draws, lines = PROTOCOL.settings(quick), []
    for spec in SPECS:
        n = draws[spec.key]
        searched = f"{n} random draw{'s' if n != 1 else ''} per fold"
        if quick and spec in neural.NEURAL_SPECS:
            searched = "`--quick`: one fixed configuration, no search"
        lines.append(f"- {spec.label}: {spec.describe}; {searched}")
    return lines


def run(ctx):
    """Run the experiment; see the module docstring."""
    result = Result()
    datasets = _load(ctx.quick)
    corr = []  # the ECFP correlation section, computed here while the workers fit
    found, chosen = search_rows(ctx, search_plan(ctx, datasets), n_jobs=FULL_N_JOBS,
                                meanwhile=lambda: corr.append(neural.ecfp_correlation(ctx)))
    results = {data.name: {"mean": _mean_baseline(data), **found[data.name]}
               for data in datasets}
    (corr_md, corr_fig), = corr
    labels = {"mean": "predict the training mean", **{s.key: s.label for s in SPECS}}
    fig = _plot(ctx, results)
    markdown = "\n".join([
        *result.block("Test MSE, mean ± std over the 5 contiguous folds (RMSE per fold, then "
                      "averaged; the paper's RMSE is the square root of its mean MSE).",
                      _table_rows(datasets, results, labels)),
        "Search spaces, with this run's draws per fold:",
        "",
        *_spaces(ctx.quick),
        "",
        "Selected configurations:",
        "",
        *_chosen_lines(chosen, labels),
        "",
        *result.block("The paper's headline claim per data set, judged on the folds' test "
                      "MSE:", claim_verdicts(results, PAPER_MSE, result)),
        *([records_note(ctx.records, "search fits"), ""] if ctx.records else []),
        "### Random-weight neural fingerprints track ECFP (paper, Section 3)",
        "",
        corr_md,
    ])
    return result.done(markdown, figures=[fig, corr_fig], shortened=PROTOCOL.note(ctx.quick))


def _curve_mse(fit_predict, params, data, n, test, seed):
    """Test MSE of a model trained on the first ``n`` rows of ``data``."""
    pred, = fit_predict(params, data, np.arange(n), [test], seed)
    return float(np.mean((pred - data.y[test]) ** 2))


def run_followup(ctx):
    """Neural FP against ECFP + net on photovoltaic as the training set grows: one fixed
    configuration each, trained on the first rows, tested on those after the largest set."""
    from sklearn_papers.datasets import load_cep

    cfg = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    X, y = load_cep(n_samples=cfg["n_rows"], return_X_y=True)
    data = DatasetData("photovoltaic", np.asarray(X, dtype=object), np.asarray(y, float))
    test = np.arange(cfg["sizes"][-1], len(data.y))
    nf_params = {**neural._QUICK, "max_epochs": cfg["epochs"]}
    mlp_params = {"radius": 2, "n_bits": 1024, "alpha": 1e-3, "hidden": 100, "lr": 1e-3,
                  "max_iter": cfg["mlp_epochs"]}
    models = {"neural FP + net": (neural._fit_predict, nf_params),
              "ECFP + net": (_fit_mlp, mlp_params)}
    parts = [(f"photovoltaic_followup/{name}/n={n}", _curve_mse,
              (fit, params, data, n, test, ctx.random_state),
              {**params, "n_rows": cfg["n_rows"], "n": n, "seed": ctx.random_state})
             for n in cfg["sizes"] for name, (fit, params) in models.items()]
    with ctx.progress(total=len(parts), desc="duvenaud photovoltaic follow-up") as bar:
        mse = iter(cached_parts(ctx, parts, progress=bar))
    curve = {(name, n): next(mse) for n in cfg["sizes"] for name in models}
    rows = [{"training molecules": n,
             **{f"{name}: test MSE": curve[(name, n)] for name in models},
             "neural FP - ECFP": curve[("neural FP + net", n)] - curve[("ECFP + net", n)]}
            for n in cfg["sizes"]]
    result = Result()
    markdown = "\n".join([
        "#### Follow-up: photovoltaic, neural fingerprint vs ECFP by training-set size",
        "",
        f"Test MSE (PCE %^2, one seed) on rows {cfg['sizes'][-1]}-{cfg['n_rows'] - 1}, "
        "training on the first n rows. Neural FP: "
        + ", ".join(f"{k} {v:g}" for k, v in nf_params.items() if k != "alpha")
        + "; ECFP + net: " + ", ".join(f"{k} {v:g}" for k, v in mlp_params.items()) + ".",
        "",
        result.table(rows),
    ])
    return result.done(markdown, shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


EXPERIMENT = Experiment(
    name="duvenaud",
    title="Duvenaud et al. (2015), Table 2: neural and circular fingerprints",
    paper=PAPER,
    run=run,
    records=True,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="duvenaud_followup",
    title="Duvenaud et al. follow-up: photovoltaic, neural fingerprint vs ECFP by "
          "training-set size",
    paper=PAPER,
    run=run_followup,
    records=True,
    protocol=PROTOCOL_FOLLOWUP,
)
