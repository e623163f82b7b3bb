"""Gilmer et al. (2017), MPNN: ESOL and FreeSolv RMSE, the paper's ablations, and BBBP.

The MPNN regressor on random splits beside published peers, the paper's design choices
ablated on ESOL, and BBBP on scaffold splits against the neural fingerprint and ECFP.

Claims: CLAIMS below; setup: docs/papers/gilmer.rst.
"""

import time

import numpy as np
from sklearn.metrics import root_mean_squared_error as rmse

from sklearn_papers.chem import MPNNClassifier, MPNNRegressor
from sklearn_papers.datasets._splits import _random_split
from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._pinned import pinned
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["CLAIMS", "EXPERIMENT", "PEER_RMSE", "PROTOCOL"]

#: Test RMSE (mean, std) of the peers on random splits, as published: MoleculeNet's
#: MPNN (Wu et al. 2018) and chemprop's D-MPNN (Yang et al. 2019).
PEER_RMSE = {
    "ESOL": {"MoleculeNet MPNN": (0.58, 0.03), "chemprop D-MPNN": (0.567, 0.026)},
    "FreeSolv": {"MoleculeNet MPNN": (1.15, 0.12), "chemprop D-MPNN": (1.11, 0.035)},
}

#: Model settings. Full: the paper's defaults (d=64, T=6, set2set 6, edge net 128).
#: The design choices the ablations change are spelled out too, so that a change of the
#: estimator's defaults does not silently change this protocol.
_DESIGN = dict(message="edge_network", readout="set2set", explicit_hydrogens=False)
_FULL = dict(hidden_size=64, n_steps=6, set2set_steps=6, edge_hidden_size=128,
             max_epochs=100, batch_size=50, lr=1e-3)
_QUICK = dict(hidden_size=32, n_steps=3, set2set_steps=3, edge_hidden_size=32,
              max_epochs=25, batch_size=32, lr=5e-3)

#: The full run's neural fingerprint on BBBP: NeuralFingerprintClassifier's defaults when
#: this protocol was written (Duvenaud et al.'s settings), passed explicitly.
_FULL_NF = dict(fp_length=50, radius=4, conv_width=20, hidden_size=100,
                alpha=float(np.exp(-2)), lr=float(np.exp(-6)), batch_size=100,
                init_scale="auto", batch_norm=True)

#: Ablations: (label, parameter changes from the default model).
ABLATIONS = [
    ("default: edge network, set2set, implicit H", {}),
    ("readout = sum", {"readout": "sum"}),
    ("message = pair", {"message": "pair"}),
    ("explicit hydrogens", {"explicit_hydrogens": True}),
]
_DEFAULT = ABLATIONS[0][0]

#: The paper's findings on its design choices (QM9), as claims on ESOL's ablations, paired
#: by split; the arms are ablation labels, the claimed side first.
CLAIMS = declare(*(
    Claim(statement, "ESOL test RMSE", "paired interval", higher_is_better=False,
          paper="better on QM9", key=key, arms=arms)
    for statement, key, arms in (
        ("set2set readout beats sum readout", "readout", (_DEFAULT, "readout = sum")),
        ("edge-network messages beat pair messages", "message", (_DEFAULT, "message = pair")),
        ("explicit hydrogens beat implicit ones", "hydrogens",
         ("explicit hydrogens", _DEFAULT)))))

#: ``bbbp_epochs``: epochs of both neural models on BBBP; ``nf``: changes to the neural
#: fingerprint's settings there.
PROTOCOL = Protocol(
    full=dict(seeds=5, ablation_seeds=5, bbbp_seeds=3, model=_FULL,
              bbbp_epochs=_FULL["max_epochs"], nf={}),
    quick=dict(seeds=2, ablation_seeds=1, bbbp_seeds=1, model=_QUICK, bbbp_epochs=15,
               nf=dict(radius=3, hidden_size=50, lr=1e-2, batch_size=_QUICK["batch_size"])),
)


def _make(cls, cache, params):
    """``cls`` with ``params`` (pinned) reading its graphs from the data set's cache."""
    return cls(**pinned(cls, {**params, "graph_cache": cache}))


#: ``name -> (X, y, GraphCache)``, loaded and featurized once per process (worker
#: processes load their own).
_DATA = {}


def _dataset(name):
    """``(X, y, cache)`` of ``"ESOL"``, ``"FreeSolv"`` or ``"BBBP"``, loaded once per
    process (X: SMILES; y: float, or int for BBBP)."""
    if name not in _DATA:
        from sklearn_papers.chem import GraphCache
        from sklearn_papers.datasets import load_bbbp, load_delaney, load_freesolv

        loader = {"ESOL": load_delaney, "FreeSolv": load_freesolv, "BBBP": load_bbbp}[name]
        X, y = loader(return_X_y=True)  # SMILES (object) and float targets
        _DATA[name] = (X, y.astype(int) if name == "BBBP" else y, GraphCache())
    return _DATA[name]


def _regression_fit(name, seed, setting):
    """One regression fit on the random split ``seed`` of data set ``name``."""
    X, y, cache = _dataset(name)
    train, val, test = _random_split(len(y), seed)
    start = time.perf_counter()
    reg = _make(MPNNRegressor, cache, setting)
    reg.fit(X[train], y[train])
    return {"seconds": time.perf_counter() - start,
            "val": float(rmse(y[val], reg.predict(X[val]))),
            "test": float(rmse(y[test], reg.predict(X[test]))),
            "curve": list(reg.loss_curve_)}


def _regression_parts(seeds, ablation_seeds, params):
    """``((data set, label), part)`` of the default on every data set and the ablations on
    ESOL, one per seed."""
    for name in ("ESOL", "FreeSolv"):
        n = len(_dataset(name)[1])
        for label, change in (ABLATIONS if name == "ESOL" else ABLATIONS[:1]):
            for seed in (seeds if not change else ablation_seeds):
                setting = {**_DESIGN, **params, **change, "random_state": seed}
                yield (name, label), (f"{name}/{label.split(':')[0]}/seed={seed}",
                                      _regression_fit, (name, seed, setting),
                                      {**setting, "n_samples": n})


_BBBP_MODELS = ("MPNN (ours, MPNNClassifier)",
                "neural fingerprint (NeuralFingerprintClassifier)",
                "ECFP4 2048 bits + LogisticRegression(C=0.1)")


def _bbbp_fit(model, seed, train, test, params, nf_params):
    """Test ROC-AUC of one BBBP model (a name of ``_BBBP_MODELS``) on one split."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint, NeuralFingerprintClassifier

    X, y, cache = _dataset("BBBP")
    if model == _BBBP_MODELS[0]:
        est = _make(MPNNClassifier, cache, {**_DESIGN, **params, "random_state": seed})
    elif model == _BBBP_MODELS[1]:
        est = NeuralFingerprintClassifier(**pinned(NeuralFingerprintClassifier, nf_params),
                                          random_state=seed)
    else:
        est = make_pipeline(CircularFingerprint(radius=2, n_bits=2048),
                            LogisticRegression(C=0.1, max_iter=2000))
    est.fit(X[train], y[train])
    return float(roc_auc_score(y[test], est.predict_proba(X[test])[:, 1]))


def _bbbp_parts(cfg, seeds):
    """``(("BBBP", model), part)`` of every model on each balanced scaffold split."""
    from sklearn_papers.chem import ScaffoldSplit

    params = dict(cfg["model"], max_epochs=cfg["bbbp_epochs"])
    nf_params = dict(_FULL_NF, **cfg["nf"], max_epochs=cfg["bbbp_epochs"])
    for seed in seeds:
        train, test = next(ScaffoldSplit(test_size=0.2, method="balanced",
                                         random_state=seed).split(_dataset("BBBP")[0]))
        for name in _BBBP_MODELS:
            setting = {"model": name, "seed": seed, "n_train": len(train),
                       "mpnn": params, "nf": nf_params}
            yield ("BBBP", name), (f"BBBP/{name.split(' (')[0]}/seed={seed}", _bbbp_fit,
                                   (name, seed, train, test, params, nf_params), setting)


def _plot(ctx, results, aucs, n_ablation):
    fig, axes = subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    names = ["ESOL", "FreeSolv"]
    x = np.arange(len(names))
    ours = [results[(n, _DEFAULT)]["test"] for n in names]
    bars = {"ours (MPNNRegressor)": [(np.mean(v), np.std(v)) for v in ours],
            **{peer: [PEER_RMSE[n][peer] for n in names] for peer in PEER_RMSE["ESOL"]}}
    for k, ((label, vals), color) in enumerate(zip(bars.items(), ("C0", "0.6", "0.8"))):
        ax.bar(x + 0.27 * (k - 1), [v[0] for v in vals], 0.27, yerr=[v[1] for v in vals],
               capsize=3, label=label, color=color)
    ax.set_xticks(x, names)
    ax.set_ylabel("test RMSE (random 80/10/10)")
    ax.set_title("Regression: ours vs published")
    ax.legend(fontsize=8)

    ax = axes[1]
    labels = [lab for lab, _ in ABLATIONS]
    vals = [results[("ESOL", lab)]["test"][:n_ablation] for lab in labels]
    ax.barh(np.arange(len(labels)), [np.mean(v) for v in vals],
            xerr=[np.std(v) for v in vals], capsize=3, color=["C0", "C1", "C2", "C3"])
    ax.set_yticks(np.arange(len(labels)), [lab.split(":")[0] for lab in labels])
    ax.invert_yaxis()
    ax.set_xlabel("ESOL test RMSE")
    ax.set_title("Ablations (Gilmer Sec. 5/8)")

    ax = axes[2]
    ax.bar(np.arange(len(aucs)), [np.mean(v) for v in aucs.values()],
           yerr=[np.std(v) for v in aucs.values()], capsize=3, color=["C0", "C4", "C5"])
    ax.set_xticks(np.arange(len(aucs)), ["MPNN", "neural FP", "ECFP + LR"])
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("test ROC-AUC")
    ax.set_title("BBBP, balanced scaffold split")
    fig.suptitle("Gilmer et al. (2017) MPNN")
    return save_figure(fig, ctx, "gilmer_mpnn.png", dpi=110)


def _main_rows(results):
    rows = []
    for name in ("ESOL", "FreeSolv"):
        rec, where = results[(name, _DEFAULT)], f"{name} ({len(_dataset(name)[1])})"
        rows.append({"data set (n)": where, "model": "ours: MPNNRegressor",
                     "test RMSE": format_mean_std(rec["test"], 3),
                     "validation RMSE": format_mean_std(rec["val"], 3),
                     "seeds": str(len(rec["test"]))})
        rows += [{"data set (n)": where, "model": peer, "test RMSE": f"{m:.3f} ± {s:.3f}",
                  "validation RMSE": "", "seeds": "published"}
                 for peer, (m, s) in PEER_RMSE[name].items()]
    return rows


def _ablation_rows(results, k, seed_txt, n_seeds):
    """Rows of the ablation table on the first ``k`` seeds; the default's label says so
    when the main table averages more seeds."""
    note = (f" ({seed_txt}; the main table's default averages {n_seeds} seeds)"
            if k < n_seeds else "")
    return [{"variant (ESOL)": label + (note if label == _DEFAULT else ""),
             "test RMSE": format_mean_std(rec["test"][:k], 3),
             "validation RMSE": format_mean_std(rec["val"][:k], 3),
             "s per fit": f"{np.mean(rec['seconds'][:k]):.1f}"}
            for label, rec in ((label, results[("ESOL", label)]) for label, _ in ABLATIONS)]


def run(ctx):
    """Run the experiment; see the module docstring."""
    cfg = PROTOCOL.settings(ctx.quick)
    params = dict(cfg["model"])
    seeds = PROTOCOL.seeds(ctx)
    ablation_seeds, bbbp_seeds = seeds[:cfg["ablation_seeds"]], seeds[:cfg["bbbp_seeds"]]
    start = time.perf_counter()
    planned = [*_regression_parts(seeds, ablation_seeds, params),
               *_bbbp_parts(cfg, bbbp_seeds)]
    # small molecule batches: one torch thread is fastest, far faster on a busy machine;
    # --quick fits on two worker processes, the full run here, in order
    with one_torch_thread(), ctx.progress(total=len(planned), desc="gilmer") as bar:
        values = cached_parts(ctx, [part for _, part in planned],
                              n_jobs=2 if ctx.quick else 1, progress=bar)
    seconds = time.perf_counter() - start
    fits = {}
    for (at, _), value in zip(planned, values):
        fits.setdefault(at, []).append(value)
    aucs = {model: fits.pop(("BBBP", model)) for model in _BBBP_MODELS}
    results = {at: {k: [fit[k] for fit in part] for k in ("test", "val", "seconds")}
               for at, part in fits.items()}
    k = len(ablation_seeds)  # the default's first k seeds are the ablations' seeds
    seed_txt = f"seed {ablation_seeds[0]} only" if k == 1 else f"seeds {ablation_seeds} only"
    verdicts = [judge(claim, *(results[("ESOL", arm)]["test"][:k] for arm in claim.arms))
                for claim in CLAIMS.values()]
    res = Result()
    model = ", ".join(f"{key}={v}" for key, v in {**_DESIGN, **params}.items())
    markdown = "\n".join([
        *res.block(f"Test RMSE over random 80/10/10 splits, seeds {seeds}; our model: "
                   f"{model}. Peers: published values.", _main_rows(results)),
        f"#### Ablations (ESOL, {seed_txt if k < len(seeds) else 'same splits'})",
        "",
        *res.block(f"One change at a time from the default, seeds {ablation_seeds}, the "
                   "same splits.", _ablation_rows(results, k, seed_txt, len(seeds))),
        res.table(res.verdict_rows(verdicts)),
        "",
        "#### BBBP (scaffold split, ROC-AUC)",
        "",
        *res.block(f"Test ROC-AUC on balanced scaffold splits (80/20), seeds {bbbp_seeds}, "
                   "the same splits for every model.",
                   [{"model": name, "test ROC-AUC": format_mean_std(v, 3),
                     "splits": str(len(v))} for name, v in aucs.items()]),
        f"Wall time of the experiment: {seconds:.0f} s.",
    ])
    fig = _plot(ctx, results, aucs, k)
    return res.done(markdown, figures=[fig], shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="gilmer",
    title="Gilmer et al. (2017): message passing neural networks on ESOL, FreeSolv, BBBP",
    paper=("Gilmer, Schoenholz, Riley, Vinyals, Dahl (2017). Neural message passing for "
           "quantum chemistry. ICML 2017"),
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)
