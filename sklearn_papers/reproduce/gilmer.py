"""Gilmer et al. (2017), MPNN: ESOL and FreeSolv RMSE, the paper's ablations, and BBBP.

Three parts:

1. **Regression** on ESOL (Delaney solubility, log10 mol/L) and FreeSolv (hydration free
   energy, kcal/mol): random 80/10/10 train/validation/test splits, one per seed, test RMSE
   of :class:`~sklearn_papers.chem.MPNNRegressor` (edge network, GRU, set2set) beside
   MoleculeNet's MPNN (Wu et al. 2018: ESOL 0.58 ± 0.03, FreeSolv 1.15 ± 0.12) and
   chemprop's D-MPNN (Yang et al. 2019: 0.567 ± 0.026, 1.11 ± 0.035). The validation split
   is only reported (no early stopping, no hyper-parameter search).
2. **Ablations** of the paper's design choices at our scale, on ESOL with the same splits:
   readout sum vs set2set, message pair vs edge network, implicit vs explicit hydrogens
   (Gilmer et al. compare them on QM9, Sections 5 and 8).
3. **BBBP** (blood-brain barrier penetration, binary): balanced Bemis-Murcko scaffold splits
   (80/20, ``ScaffoldSplit(method="balanced")``), test ROC-AUC of the MPNN classifier beside
   the neural fingerprint classifier and ECFP + logistic regression on the same splits.
"""

import time

import numpy as np

from sklearn_papers.chem import MPNNClassifier, MPNNRegressor
from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, one_torch_thread, save_figure
from sklearn_papers.reproduce._parallel import cached_parts
from sklearn_papers.reproduce._pinned import pinned
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["CLAIMS", "EXPERIMENT", "PEER_RMSE", "PROTOCOL", "random_split"]

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

#: Epochs of the BBBP models in ``--quick`` (the largest data set of the experiment).
_QUICK_BBBP_EPOCHS = 15

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

PROTOCOL = Protocol(
    full=dict(seeds=5, ablation_seeds=5, bbbp_seeds=3, model=_FULL),
    quick=dict(seeds=2, ablation_seeds=1, bbbp_seeds=1, model=_QUICK),
    shortened=(
        "2 random splits for the main table and 1 for the ablations (full: 5 and 5); "
        "a smaller, shorter-trained model, " + ", ".join(f"{k}={v}" for k, v in _QUICK.items())
        + " (full: hidden_size=64, n_steps=6, set2set_steps=6, edge_hidden_size=128, 100 "
        f"epochs, batch 50, lr 1e-3); BBBP on 1 scaffold split (full: 3) with "
        f"{_QUICK_BBBP_EPOCHS} epochs for both neural models (full: 100), the neural "
        "fingerprint with fp_length=50, radius=3, hidden_size=50, lr=1e-2 (full: its "
        "defaults)."),
)


def random_split(n_samples, seed, fractions=(0.8, 0.1, 0.1)):
    """Random train/validation/test indices (80/10/10 by default).

    Parameters
    ----------
    n_samples : int
    seed : int
        Seeds the permutation.
    fractions : tuple of 3 floats, default=(0.8, 0.1, 0.1)

    Returns
    -------
    train, validation, test : ndarray of int
    """
    perm = np.random.default_rng(seed).permutation(n_samples)
    n_train = int(round(fractions[0] * n_samples))
    n_val = int(round(fractions[1] * n_samples))
    return perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]


def _make(cls, cache, params):
    """``cls`` with ``params`` (the protocol's pinned training settings added) reading its
    molecule graphs from the data set's :class:`~sklearn_papers.chem.GraphCache`."""
    return cls(**pinned(cls, {**params, "graph_cache": cache}))


def _rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


#: Data sets of this experiment, loaded once per process: ``name -> (X, y, graph cache)``
#: (a :class:`~sklearn_papers.chem.GraphCache`: every molecule featurized once per process).
#: Worker processes (``--quick`` runs fits side by side) load and featurize their own.
_DATA = {}


def _dataset(name):
    """``(X, y, cache)`` of ``"ESOL"``, ``"FreeSolv"`` or ``"BBBP"``, loaded once per process
    (X: object array of SMILES; y: float, or int for BBBP; cache: the ``GraphCache`` of
    X)."""
    if name not in _DATA:
        from sklearn_papers.datasets import load_bbbp, load_delaney, load_freesolv

        loader = {"ESOL": load_delaney, "FreeSolv": load_freesolv, "BBBP": load_bbbp}[name]
        X, y = loader(return_X_y=True)
        y = np.asarray(y).astype(int) if name == "BBBP" else np.asarray(y, dtype=float)
        from sklearn_papers.chem import GraphCache

        _DATA[name] = (np.asarray(X, dtype=object), y, GraphCache())
    return _DATA[name]


def _regression_fit(name, seed, setting):
    """One regression fit on the random split ``seed`` of data set ``name``."""
    X, y, cache = _dataset(name)
    train, val, test = random_split(len(y), seed)
    start = time.perf_counter()
    reg = _make(MPNNRegressor, cache, setting)
    reg.fit(X[train], y[train])
    return {"seconds": time.perf_counter() - start,
            "val": _rmse(reg.predict(X[val]), y[val]),
            "test": _rmse(reg.predict(X[test]), y[test]),
            "curve": list(reg.loss_curve_)}


def _regression(ctx, seeds, ablation_seeds, params, bar, n_jobs=1):
    """Test/validation RMSE of the default on every data set and the ablations on ESOL."""
    results = {}  # (dataset, label) -> {"test": [...], "val": [...], "curve": [...]}
    parts, where = [], []
    for name in ("ESOL", "FreeSolv"):
        _, y, _ = _dataset(name)
        variants = ABLATIONS if name == "ESOL" else ABLATIONS[:1]
        for label, change in variants:
            for seed in (seeds if not change else ablation_seeds):
                setting = {**_DESIGN, **params, **change, "random_state": seed}
                parts.append((f"{name}/{label.split(':')[0]}/seed={seed}", _regression_fit,
                              (name, seed, setting), {**setting, "n_samples": len(y)}))
                where.append((name, label))
    # each fit is cached in the output folder (``--resume`` skips the finished ones)
    for (name, label), part in zip(where, cached_parts(ctx, parts, n_jobs=n_jobs,
                                                       progress=bar)):
        rec = results.setdefault((name, label), {"test": [], "val": [], "seconds": []})
        for k in ("seconds", "val", "test"):
            rec[k].append(part[k])
        rec.setdefault("curve", part["curve"])
    for (name, label), rec in results.items():
        ctx.log(f"[gilmer] {name} {label}: test RMSE "
                f"{format_mean_std(rec['test'], 3)} ({np.mean(rec['seconds']):.1f} s/fit)")
    return results


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


def _bbbp(ctx, seeds, params, quick, bar, n_jobs=1):
    """ROC-AUC on balanced scaffold splits: MPNN vs neural fingerprint vs ECFP + LR.

    Returns ``(rows_by_model, note)``; ``rows_by_model`` is None when a piece is missing.
    """
    try:
        from sklearn_papers.chem._scaffold import ScaffoldSplit
    except ImportError:
        return None, "not run: no scaffold splitter (sklearn_papers.chem._scaffold) yet."

    X, _, _ = _dataset("BBBP")
    if quick:
        params = {**params, "max_epochs": _QUICK_BBBP_EPOCHS}
        nf_params = dict(_FULL_NF, radius=3, hidden_size=50, lr=1e-2,
                         max_epochs=_QUICK_BBBP_EPOCHS, batch_size=params["batch_size"])
    else:
        nf_params = dict(_FULL_NF, max_epochs=params["max_epochs"])
    aucs = {m: [] for m in _BBBP_MODELS}
    parts = []
    for seed in seeds:
        splitter = ScaffoldSplit(test_size=0.2, method="balanced", random_state=seed)
        train, test = next(splitter.split(X))
        for name in _BBBP_MODELS:
            setting = {"model": name, "seed": seed, "n_train": len(train),
                       "mpnn": params, "nf": nf_params}
            parts.append((f"BBBP/{name.split(' (')[0]}/seed={seed}", _bbbp_fit,
                          (name, seed, train, test, params, nf_params), setting))
    values = iter(cached_parts(ctx, parts, n_jobs=n_jobs, progress=bar))
    for seed in seeds:
        for name in _BBBP_MODELS:
            aucs[name].append(next(values))
        ctx.log(f"[gilmer] BBBP split {seed}: " + ", ".join(
            f"{k.split(' (')[0]} {v[-1]:.3f}" for k, v in aucs.items()))
    return aucs, ""


def _plot(ctx, results, aucs, n_ablation):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3 if aucs else 2, figsize=(13 if aucs else 9, 3.8))
    ax = axes[0]
    names = ["ESOL", "FreeSolv"]
    x = np.arange(len(names))
    default = ABLATIONS[0][0]
    ours = [results[(n, default)]["test"] for n in names]
    ax.bar(x - 0.27, [np.mean(o) for o in ours], 0.27, yerr=[np.std(o) for o in ours],
           capsize=3, label="ours (MPNNRegressor)", color="C0")
    for k, (peer, color) in enumerate([("MoleculeNet MPNN", "0.6"),
                                       ("chemprop D-MPNN", "0.8")]):
        vals = [PEER_RMSE[n][peer] for n in names]
        ax.bar(x + 0.27 * k, [v[0] for v in vals], 0.27, yerr=[v[1] for v in vals],
               capsize=3, label=peer, color=color)
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

    if aucs:
        ax = axes[2]
        names = list(aucs)
        ax.bar(np.arange(len(names)), [np.mean(aucs[n]) for n in names],
               yerr=[np.std(aucs[n]) for n in names], capsize=3, color=["C0", "C4", "C5"])
        ax.set_xticks(np.arange(len(names)), ["MPNN", "neural FP", "ECFP + LR"])
        ax.set_ylim(0.5, 1.0)
        ax.set_ylabel("test ROC-AUC")
        ax.set_title("BBBP, balanced scaffold split")
    fig.suptitle("Gilmer et al. (2017) MPNN")
    fig.tight_layout()
    return save_figure(fig, ctx, "gilmer_mpnn.png", dpi=110)


def _ablation_verdicts(results, k):
    """Verdicts of :data:`CLAIMS` on the first ``k`` seeds (the ablations'), by the shared
    paired-interval rule (:mod:`._claims`)."""
    return [judge(claim, *(results[("ESOL", arm)]["test"][:k] for arm in claim.arms))
            for claim in CLAIMS.values()]


def _main_rows(results, datasets):
    rows = []
    for name, (X, y) in datasets.items():
        rec = results[(name, _DEFAULT)]
        rows.append({"data set (n)": f"{name} ({len(y)})", "model": "ours: MPNNRegressor",
                     "test RMSE": format_mean_std(rec["test"], 3),
                     "validation RMSE": format_mean_std(rec["val"], 3),
                     "seeds": str(len(rec["test"]))})
        for peer, (m, s) in PEER_RMSE[name].items():
            rows.append({"data set (n)": f"{name} ({len(y)})", "model": peer,
                         "test RMSE": f"{m:.3f} ± {s:.3f}", "validation RMSE": "",
                         "seeds": "published"})
    return rows


def _ablation_rows(results, k, seed_txt, n_seeds):
    """Rows of the ablation table on the first ``k`` seeds; the default's label says so
    when the main table averages more seeds."""
    def label_of(label):
        if k < n_seeds and label == _DEFAULT:
            return (f"{label} ({seed_txt}; the main table's default averages {n_seeds} "
                    f"seeds)")
        return label

    return [{"variant (ESOL)": label_of(label),
             "test RMSE": format_mean_std(results[("ESOL", label)]["test"][:k], 3),
             "validation RMSE": format_mean_std(results[("ESOL", label)]["val"][:k], 3),
             "s per fit": f"{np.mean(results[('ESOL', label)]['seconds'][:k]):.1f}"}
            for label, _ in ABLATIONS]


def run(ctx):
    """Run the experiment; see the module docstring for the protocol."""
    cfg = PROTOCOL.settings(ctx.quick)
    params = dict(cfg["model"])
    seeds = PROTOCOL.seeds(ctx)
    # each fit is cached in the output folder (``--resume`` skips the finished ones)
    ablation_seeds, bbbp_seeds = seeds[:cfg["ablation_seeds"]], seeds[:cfg["bbbp_seeds"]]
    datasets = {k: _dataset(k)[:2] for k in ("ESOL", "FreeSolv")}
    # --quick: independent fits on two worker processes (one torch thread each); the full
    # run computes them in this process, in order
    n_jobs = 2 if ctx.quick else 1
    total = 2 * len(seeds) + (len(ABLATIONS) - 1) * len(ablation_seeds) + 3 * len(bbbp_seeds)
    start = time.perf_counter()
    # Molecule batches are small: one torch thread is faster than several, and far faster
    # on a busy machine (OpenMP threads waiting on each other).
    with one_torch_thread(), ctx.progress(total=total, desc="gilmer") as bar:
        results = _regression(ctx, seeds, ablation_seeds, params, bar, n_jobs=n_jobs)
        aucs, bbbp_note = _bbbp(ctx, bbbp_seeds, params, ctx.quick, bar, n_jobs=n_jobs)
    seconds = time.perf_counter() - start
    k = len(ablation_seeds)  # the default's first k seeds are the ablations' seeds
    subset = k < len(seeds)
    seed_txt = (f"seed {ablation_seeds[0]} only" if k == 1
                else f"seeds {ablation_seeds} only")
    setting = ", ".join(f"{k}={v}" for k, v in params.items())
    res = Result()
    parts = [
        "Test RMSE, mean ± std over random 80/10/10 splits (one split and one weight seed "
        f"per seed, seeds {seeds}); units: ESOL log10(mol/L), FreeSolv kcal/mol. Our model: "
        f"edge-network messages, GRU update, set2set readout, {setting}, Adam, standardised "
        "targets, no early stopping (the validation split is reported, not used). Peers' "
        "numbers are published values (MoleculeNet: Wu et al. 2018; chemprop: Yang et al. "
        "2019), not re-run here.",
        "",
        res.table(_main_rows(results, datasets)),
        "",
        f"#### Ablations (ESOL, {seed_txt if subset else 'same splits'})",
        "",
        f"Seeds {ablation_seeds}, every row including the default trained on the same "
        "splits. One change at a time from the default model. Gilmer et al. found "
        "edge-network messages and set2set better than pair messages and sum readout on "
        "QM9, and "
        "explicit hydrogens helpful there.",
        "",
        res.table(_ablation_rows(results, k, seed_txt, len(seeds))),
        "",
        res.table(res.verdict_rows(_ablation_verdicts(results, k))),
        "",
        "#### BBBP (scaffold split, ROC-AUC)",
        "",
    ]
    if aucs is None:
        parts.append(f"BBBP comparison {bbbp_note}")
    else:
        parts += [
            f"Balanced Bemis-Murcko scaffold splits, 80/20, seeds {bbbp_seeds} "
            "(`ScaffoldSplit(test_size=0.2, method='balanced')`), the same splits for every "
            "model; test ROC-AUC"
            + (", mean ± std over splits." if len(bbbp_seeds) > 1 else " on one split."),
            "",
            res.table([{"model": k, "test ROC-AUC": format_mean_std(v, 3),
                             "splits": str(len(v))} for k, v in aucs.items()]),
        ]
    parts += ["", f"Wall time of the experiment: {seconds:.0f} s."]
    fig = _plot(ctx, results, aucs, len(ablation_seeds))
    return res.done("\n".join(parts), figures=[fig], shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="gilmer",
    title="Gilmer et al. (2017): message passing neural networks on ESOL, FreeSolv, BBBP",
    paper=("Gilmer, Schoenholz, Riley, Vinyals, Dahl (2017). Neural message passing for "
           "quantum chemistry. ICML 2017"),
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)
