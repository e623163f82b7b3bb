"""Rong et al. (2020), Table 1 at our scale: does self-supervised pretraining help?

Data: BBBP (ROC-AUC), ESOL and FreeSolv (RMSE), bundled. Split: balanced scaffold split
(:class:`~sklearn_papers.chem.ScaffoldSplit`, ``method="balanced"``, 80 % train / 20 %
test, one split per seed). Models, all with fixed hyper-parameters (no validation search):

* ``grover_linear`` / ``grover_mlp``: frozen embeddings of the shipped checkpoint
  ``moses-small`` + ridge / logistic regression, or + a small MLP;
* ``grover_finetuned``: :class:`~sklearn_papers.chem.GroverRegressor` /
  :class:`~sklearn_papers.chem.GroverClassifier` started from ``moses-small``;
* ``grover_scratch``: the same architecture and training from random weights;
* ``ecfp_rf``: ECFP4 (2048 bits) + random forest.

The paper's GROVER-base / GROVER-large numbers were obtained with a 48M / 100M-parameter
model pretrained on 11M molecules, three balanced scaffold splits (80/10/10) with
validation-based model selection, and RDKit 2D descriptors concatenated to the readout when
fine-tuning; our checkpoint is ~0.4M parameters pretrained on 15k MOSES molecules on two
CPU cores, so the absolute numbers are not comparable; the claims checked are relative.

Follow-up (``grover_followup``, an experiment of its own: :func:`followup`, its own cached
parts, with the main table's ESOL pair refitted by the same parts): the full run finds that
pretraining does not help on ESOL. On the same ESOL splits and protocol it measures (1)
the bigger ``moses-176k`` checkpoint fine-tuned against its architecture from scratch,
(2) the domain gap between each data set and MOSES (atom and bond context labels in the
checkpoints' ``<other>`` bucket, nearest-neighbour ECFP4 Tanimoto to MOSES, size), beside
MOSES molecules that ``moses-small`` never saw, and (3) ``moses-small`` fine-tuned against
scratch on random shares of each training part (fewer labels); its verdicts and
conclusion are computed from those numbers.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_papers.reproduce._claims import (
    HOLDS,
    NOT_HOLDS,
    Claim,
    all_of,
    at_least,
    declare,
    judge,
)
from sklearn_papers.reproduce._common import (
    Protocol,
    one_torch_thread,
    over_seeds,
    run_seeds,
    save_figure,
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

#: Budgets of the follow-up: new cached parts, kept out of :data:`PROTOCOL` (whose
#: settings are in the earlier parts' cache keys). ``seeds``: how many of the main seeds;
#: ``fractions``: shares of each training part in the learning curve (1.0 is the main
#: table's pair); ``n_ref``: MOSES molecules the data sets are compared with (the first
#: rows of ``load_moses_smiles``: 15,000 is exactly ``moses-small``'s pretraining set);
#: ``n_held``: MOSES molecules after those 15,000 (never seen by ``moses-small``) that
#: measure MOSES against itself.
PROTOCOL_FOLLOWUP = Protocol(
    full={"seeds": 3, "fractions": (0.1, 0.25, 0.5), "n_ref": 15000, "n_held": 2000},
    quick={"seeds": 1, "fractions": (0.3,), "n_ref": 1000, "n_held": 200},
    shortened="random subsets of 250 molecules per data set, 5 fine-tuning epochs instead of "
              "30, 100 trees instead of 500; {seeds} seed instead of 3, training shares "
              "{fractions} instead of (0.1, 0.25, 0.5), {n_ref:,} MOSES reference molecules "
              "instead of 15,000, {n_held} held-out ones instead of 2,000.",
)
#: Worker processes for the independent fits (not part of the protocol: cached parts do not
#: depend on it).
N_JOBS = 2


def _load(name, n_max, seed):
    from sklearn_papers.datasets import load_bbbp, load_delaney, load_freesolv

    loader = {"BBBP": load_bbbp, "ESOL": load_delaney, "FreeSolv": load_freesolv}[name]
    X, y = loader(return_X_y=True)
    X, y = np.asarray(X, dtype=object), np.asarray(y)
    if n_max is not None and len(X) > n_max:
        keep = np.sort(np.random.default_rng(seed).choice(len(X), n_max, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def _score(name, y_true, pred):
    from sklearn.metrics import mean_squared_error, roc_auc_score

    if name == "BBBP":
        return float(roc_auc_score(y_true, pred))
    return float(np.sqrt(mean_squared_error(y_true, pred)))


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
    grover = GroverFeaturizer(pretrained="moses-small", max_epochs=0,
                              descriptors=False, fingerprint_bits=0).fit(X[:1])
    Z = grover.transform(X)
    heads = {
        "grover_linear": make_pipeline(StandardScaler(), LogisticRegression(
            C=0.1, max_iter=2000)) if clf
        else make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 3, 12))),
        "grover_mlp": make_pipeline(StandardScaler(), (
            MLPClassifier if clf else MLPRegressor)(
            hidden_layer_sizes=(64,), alpha=1e-2, max_iter=500, early_stopping=False,
            random_state=seed)),
    }
    out = {}
    for key, model in heads.items():
        with warnings.catch_warnings():  # fixed iteration budget, reported as is
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(Z[train], y[train])
        pred = model.predict_proba(Z[test])[:, 1] if clf else model.predict(Z[test])
        out[key] = _score(name, y[test], pred)
    return out


def _fine_tune_part(name, X, y, train, test, est_params):
    """Test score of ``GroverClassifier`` / ``GroverRegressor`` fitted with ``est_params``."""
    from sklearn_papers.chem import GroverClassifier, GroverRegressor

    clf = name == "BBBP"
    Est = GroverClassifier if clf else GroverRegressor
    head = {} if clf else {"head": "finetune"}
    est = Est(**pinned(Est, est_params), **head).fit(X[train], y[train])
    pred = est.predict_proba(X[test])[:, 1] if clf else est.predict(X[test])
    return _score(name, y[test], pred)


def _forest_part(name, X, y, train, test, trees, seed):
    """Test score of ECFP4 (2048 bits) + a random forest of ``trees`` trees."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from sklearn_papers.chem import CircularFingerprint

    clf = name == "BBBP"
    fp = CircularFingerprint(radius=2, n_bits=2048).fit(X)
    F = fp.transform(X)
    forest = (RandomForestClassifier if clf else RandomForestRegressor)(
        n_estimators=trees, random_state=seed, n_jobs=1)
    forest.fit(F[train], y[train])
    pred = forest.predict_proba(F[test])[:, 1] if clf else forest.predict(F[test])
    return _score(name, y[test], pred)


def _dataset_parts(seed, name, settings):
    """``(parts, n)``: the cached parts of one data set and seed (``cached_parts``'s
    ``(key, func, args, params)``, one per model) and the number of molecules."""
    X, y, train, test = _split(name, settings, seed)
    if name == "BBBP" and len(np.unique(y[test])) < 2:  # ROC-AUC needs both classes
        raise RuntimeError(f"{name} seed {seed}: test split holds a single class")
    base = {"data set": name, "seed": seed, "n": len(X), "settings": settings}
    data = (name, X, y, train, test)
    # each model is one cached part: ``--resume`` skips the finished ones
    parts = [("grover_heads", f"{name}/seed={seed}/frozen_heads", _frozen_heads_part,
              (*data, seed), base)]
    for key, pretrained in (("grover_finetuned", "moses-small"), ("grover_scratch", None)):
        # same architecture either way: the shipped checkpoint's (hidden 64, 1 layer, 2 heads)
        est_params = dict(pretrained=pretrained, hidden_size=64, n_layers=1, n_heads=2,
                          depth=3, max_epochs=settings["epochs"], lr=5e-4, batch_size=32,
                          ffn_hidden=64, dropout=0.0, readout="mean", dist_coef=0.1,
                          random_state=seed)
        parts.append((key, f"{name}/seed={seed}/{key}", _fine_tune_part,
                      (*data, est_params), {**base, **est_params}))
    parts.append(("ecfp_rf", f"{name}/seed={seed}/ecfp_rf", _forest_part,
                  (*data, settings["trees"], seed), base))
    return parts, len(X)


def run(ctx):
    """Run the experiment (see the module docstring); return the report section."""

    settings = PROTOCOL.settings(ctx.quick)
    seeds = tuple(run_seeds(ctx, len(settings["seeds"])))
    start = time.perf_counter()
    with one_torch_thread():  # small graph model: one thread is fastest on a shared machine
        scores, sizes, jobs, parts = {}, {}, [], []
        for name in PAPER:
            scores[name] = {m: [] for m in MODELS}
            per_seed = over_seeds(_dataset_parts, seeds, name=name, settings=settings)
            for seed, (dataset_parts, sizes[name]) in zip(seeds, per_seed):
                for model, *part in dataset_parts:
                    jobs.append((name, seed, model))
                    parts.append(tuple(part))
        # independent fits side by side on worker processes (one torch thread each)
        with ctx.progress(total=len(parts), desc="grover") as bar:
            values = cached_parts(ctx, parts, n_jobs=N_JOBS, progress=bar)
        results = {}
        for (name, seed, model), value in zip(jobs, values):
            res = results.setdefault((name, seed), {})
            res.update(value if model == "grover_heads" else {model: value})
        for (name, seed), res in results.items():
            for m in MODELS:
                scores[name][m].append(res[m])
            ctx.log(f"grover {name} seed {seed}: " + ", ".join(
                f"{m} {res[m]:.3f}" for m in MODELS))
        seconds = time.perf_counter() - start

    rows = []
    for name in PAPER:
        row = {"data set, metric": f"{name}, {METRIC[name]}", "n": sizes[name]}
        for m in MODELS:
            row[m] = format_mean_std(scores[name][m], 3)
        row["paper GROVER base / large"] = f"{PAPER[name][0]:.3f} / {PAPER[name][1]:.3f}"
        rows.append(row)
    result = Result()
    claims = _main_claims(result, scores)
    fig = _plot(ctx, scores)
    md = "\n".join([
        "Balanced scaffold split (80 % train / 20 % test) per seed, seeds "
        f"{list(seeds)}; "
        + ("mean ± std over seeds. " if len(seeds) > 1 else "one seed, so no spread. ")
        + "Fixed hyper-parameters, no validation "
        f"search. Fine-tuning: {settings['epochs']} epochs, Adam lr 5e-4, batch 32. "
        "Our encoder is the shipped `moses-small` checkpoint (hidden 64, 1 block per view, "
        "2 heads, pretrained on 15,000 MOSES molecules); the paper's GROVER-base/large "
        "have 48M/100M parameters pretrained on 11M molecules, use 80/10/10 balanced "
        "scaffold splits with validation-based selection, and append RDKit 2D descriptors "
        "when fine-tuning (we do not). The absolute numbers are therefore not comparable; "
        "the claims are relative.",
        "",
        result.table(rows, columns=["data set, metric", "n", *MODELS,
                                    "paper GROVER base / large"]),
        "",
        result.table(claims),
        "",
        f"Wall time {seconds:.0f} s ({N_JOBS} worker processes, one torch thread each). "
        "Why pretraining does not help on ESOL is the experiment `grover_followup`.",
    ])
    return result.done(md, figures=[fig], shortened=PROTOCOL.note(ctx.quick))


def _main_claims(result, scores):
    """Rows of the main claims, each data set judged by the shared paired-interval rule
    over the seeds (test ROC-AUC higher is better, RMSE lower); the verdicts are kept in
    ``result``."""
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, name in zip(axes, PAPER):
        means = [np.mean(scores[name][m]) for m in MODELS]
        stds = [np.std(scores[name][m]) for m in MODELS]
        ax.bar(range(len(MODELS)), means, yerr=stds, color=["C0", "C0", "C2", "C7", "C1"])
        ax.axhline(PAPER[name][0], color="k", ls="--", lw=1, label="paper GROVER-base")
        ax.set_xticks(range(len(MODELS)))
        ax.set_xticklabels([m.replace("_", "\n") for m in MODELS], fontsize=8)
        ax.set_title(f"{name}: {METRIC[name]}", fontsize=9)
        if name == "BBBP":
            ax.set_ylim(0.5, 1.0)
        ax.legend(fontsize=7)
    fig.suptitle("GROVER at our scale: balanced scaffold split", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, ctx, "grover.png", dpi=100)


# -- follow-up of the claim that fails at full scale on ESOL ---------------------------------
#: Rows of ``load_moses_smiles`` that ``moses-small`` was pretrained on (its config.json).
MOSES_SMALL_ROWS = 15000
CHECKPOINTS = ("moses-small", "moses-176k")


def _main_esol(ctx, settings, seeds):
    """``{"grover_finetuned": [...], "grover_scratch": [...]}``: the main table's ESOL test
    RMSE per seed, computed by the main table's parts (same keys and settings)."""
    parts, models = [], []
    for dataset_parts, _ in over_seeds(_dataset_parts, seeds, name="ESOL", settings=settings):
        for model, *part in dataset_parts:
            if model in ("grover_finetuned", "grover_scratch"):
                models.append(model)
                parts.append(tuple(part))
    with ctx.progress(total=len(parts), desc="grover_followup: main table's ESOL") as bar:
        values = cached_parts(ctx, parts, n_jobs=N_JOBS, progress=bar)
    main = {"grover_finetuned": [], "grover_scratch": []}
    for model, value in zip(models, values):
        main[model].append(value)
    return main


def run_followup(ctx):
    """Run the follow-up of the ESOL claim (:func:`followup`) as an experiment of its own;
    return its report section."""
    settings = PROTOCOL.settings(ctx.quick)
    follow = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = tuple(run_seeds(ctx, len(settings["seeds"])))[:follow["seeds"]]
    start = time.perf_counter()
    with one_torch_thread():  # small graph model: one thread is fastest on a shared machine
        main = _main_esol(ctx, settings, seeds)
        result = Result()
        md, fig, _ = followup(ctx, result, settings, seeds, main)
    md += (f"\n\nWall time {time.perf_counter() - start:.0f} s ({N_JOBS} worker processes, "
           "one torch thread each; the main table's ESOL pair is refitted by the same parts "
           "as in `grover`).")
    return result.done(md, figures=[fig], shortened=PROTOCOL_FOLLOWUP.note(ctx.quick))


def _checkpoint_config(name):
    """The ``config.json`` of a shipped checkpoint."""
    import json
    from importlib.resources import files
    from pathlib import Path

    folder = Path(str(files("sklearn_papers.chem") / "_pretrained" / name))
    return json.loads((folder / "config.json").read_text())


def _finetune_params(pretrained, arch, settings, seed):
    """The main table's fine-tuning protocol (``_run_dataset``) with architecture ``arch``."""
    return dict(pretrained=pretrained, **arch, max_epochs=settings["epochs"], lr=5e-4,
                batch_size=32, ffn_hidden=64, dropout=0.0, readout="mean", dist_coef=0.1,
                random_state=seed)


def _finetune_scores(name, X, y, fit, test, est_params):
    """Test and training RMSE, loss curve and fit CPU seconds of one ``GroverRegressor``."""
    from sklearn_papers.chem import GroverRegressor

    cpu = time.process_time()
    est = GroverRegressor(**pinned(GroverRegressor, est_params), head="finetune").fit(
        X[fit], y[fit])
    cpu = time.process_time() - cpu
    return {"test": _score(name, y[test], est.predict(X[test])),
            "train": _score(name, y[fit], est.predict(X[fit])),
            "loss_curve": [float(v) for v in est.loss_curve_], "cpu_seconds": cpu,
            "n_train": int(len(fit))}


def _subset(train, fraction, seed):
    """A seeded random ``fraction`` of the training indices (sorted), at least 8."""
    n = max(8, int(round(fraction * len(train))))
    return np.sort(np.random.default_rng(seed).choice(train, n, replace=False))


def _mol_stats(smiles):
    """Atom and bond context labels (GROVER's, Section 4.1), heavy-atom counts per
    molecule and ECFP4 bits (2048) of the molecules of ``smiles`` that RDKit parses."""
    from sklearn_papers.chem import CircularFingerprint, check_molecules
    from sklearn_papers.chem.featurizers import standardize_mol
    from sklearn_papers.chem.featurizers._grover_features import (
        atom_context_label,
        bond_context_label,
    )

    smiles = np.asarray(smiles, dtype=object)
    mols, valid = check_molecules(smiles, errors="nan")
    atoms, bonds, sizes = [], [], []
    for mol, smi in zip(mols, smiles):
        if mol is None:
            continue
        mol = standardize_mol(mol, smi if isinstance(smi, str) else None)
        atoms += [atom_context_label(a) for a in mol.GetAtoms()]
        bonds += [bond_context_label(b) for b in mol.GetBonds()]
        sizes.append(mol.GetNumAtoms())
    bits = CircularFingerprint(radius=2, n_bits=2048).fit(smiles[valid]).transform(
        smiles[valid])
    return atoms, bonds, np.asarray(sizes), bits


def _nearest_tanimoto(A, B, *, chunk=512):
    """Per row of ``A`` (0/1 fingerprints) its largest Tanimoto similarity to a row of
    ``B`` (1 between two empty fingerprints)."""
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    nb = B32.sum(axis=1)
    out = np.empty(len(A32))
    for start in range(0, len(A32), chunk):
        a = A32[start:start + chunk]
        inter = a @ B32.T
        union = a.sum(axis=1)[:, None] + nb[None, :] - inter
        sim = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
        out[start:start + chunk] = sim.max(axis=1)
    return out


def _domain_gap(settings, follow, seed):
    """Per data set (and MOSES itself): shares of atom / bond context labels that fall in
    each checkpoint's ``<other>`` bucket, heavy atoms per molecule, and the ECFP4 Tanimoto
    similarity of each molecule to its nearest neighbour among ``n_ref`` MOSES molecules."""
    from sklearn_papers.datasets import load_moses_smiles

    moses, _ = load_moses_smiles(n_samples=MOSES_SMALL_ROWS + follow["n_held"],
                                 return_X_y=True)
    ref = _mol_stats(moses[:follow["n_ref"]])
    held = _mol_stats(moses[MOSES_SMALL_ROWS:])
    vocabs = {c: (set(_checkpoint_config(c)["atom_vocab"][2:]),
                  set(_checkpoint_config(c)["bond_vocab"][2:])) for c in CHECKPOINTS}
    sets = {"MOSES (held out)": (held, _nearest_tanimoto(held[3], ref[3]))}
    for name in PAPER:
        stats = _mol_stats(_load(name, settings["n_max"], seed)[0])
        sets[name] = (stats, _nearest_tanimoto(stats[3], ref[3]))
    out = {}
    for name, ((atoms, bonds, sizes, _), nn) in sets.items():
        row = {"n_molecules": int(len(sizes)), "heavy_atoms": float(np.mean(sizes)),
               "nn_tanimoto": nn}
        for c, (atom_vocab, bond_vocab) in vocabs.items():
            row[f"atom_other/{c}"] = float(np.mean([a not in atom_vocab for a in atoms]))
            row[f"bond_other/{c}"] = float(np.mean([b not in bond_vocab for b in bonds]))
        out[name] = row
    return out


def followup(ctx, result, settings, seeds, main):
    """Why pretraining did not help on ESOL: bigger pretraining, domain gap, labels.

    Three measurements on the main table's ESOL splits and protocol (new cached parts):
    the ``moses-176k`` checkpoint (hidden 144, 2 blocks per view, pretrained on all 176k
    MOSES molecules) fine-tuned against the same architecture from scratch; how far
    ESOL's molecules are from MOSES (context labels outside the checkpoint vocabularies,
    nearest-neighbour ECFP4 Tanimoto, size), beside BBBP, FreeSolv and MOSES itself; and
    fine-tuned ``moses-small`` against scratch on random fractions of each training part.

    Parameters
    ----------
    ctx : RunContext
    settings : dict
        ``PROTOCOL.settings(quick)``.
    seeds : tuple of int
        The main table's seeds; the first ``seeds`` of the follow-up config are used.
    main : dict
        ``main[model]``: the main table's ESOL test RMSE per seed.

    Returns
    -------
    markdown : str
    figure : pathlib.Path
    results : dict
        ``"big"``, ``"curve"``, ``"gap"`` and ``"verdicts"``.
    """
    follow = PROTOCOL_FOLLOWUP.settings(ctx.quick)
    seeds = tuple(seeds[:follow["seeds"]])
    name = "ESOL"
    small = dict(hidden_size=64, n_layers=1, n_heads=2, depth=3)  # the main table's
    big_config = _checkpoint_config("moses-176k")["params"]
    big = {k: int(big_config[k]) for k in ("hidden_size", "n_layers", "n_heads", "depth")}
    res_big = {"finetuned": [], "scratch": []}
    res_curve = {f: {"finetuned": [], "scratch": []} for f in follow["fractions"]}
    jobs, parts = [], []
    for seed in seeds:
        X, y, train, test = _split(name, settings, seed)
        base = {"data set": name, "seed": seed, "n": len(X), "settings": settings}
        for key, pretrained in (("finetuned", "moses-176k"), ("scratch", None)):
            est_params = _finetune_params(pretrained, big, settings, seed)
            jobs.append(res_big[key])
            parts.append((f"followup/{name}/seed={seed}/176k_{key}", _finetune_scores,
                          (name, X, y, train, test, est_params), {**base, **est_params}))
        for fraction in follow["fractions"]:
            fit = _subset(train, fraction, seed)
            for key, pretrained in (("finetuned", "moses-small"), ("scratch", None)):
                est_params = _finetune_params(pretrained, small, settings, seed)
                jobs.append(res_curve[fraction][key])
                parts.append((f"followup/{name}/seed={seed}/fraction={fraction}/{key}",
                              _finetune_scores, (name, X, y, fit, test, est_params),
                              {**base, **est_params, "fraction": fraction}))
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
    n_train_full = int(np.mean([len(_split(name, settings, s)[2]) for s in seeds]))
    verdicts = _followup_verdicts(res_big, res_curve, gap, main, seeds, n_train_full)
    fig = _followup_plot(ctx, res_big, res_curve, gap, main, seeds, n_train_full)
    md = _followup_markdown(result, res_big, res_curve, gap, main, seeds, follow, verdicts,
                            n_train_full)
    return md, fig, {"big": res_big, "curve": res_curve, "gap": gap, "verdicts": verdicts}


def _mean(parts, field="test"):
    return float(np.mean([p[field] for p in parts]))


#: The follow-up's comparisons of the domain gap are single measurements (integer counts of
#: context labels, Tanimoto similarities of bit vectors), not seed means: no rule applies.
_MEASURED = "measured (one count, no seeds)"


def _gains(scratch, finetuned):
    """Per-seed RMSE gain of fine-tuning (``scratch - fine-tuned``; > 0: pretraining helps)."""
    return [float(s) - float(f) for s, f in zip(scratch, finetuned)]


def _followup_verdicts(res_big, res_curve, gap, main, seeds, n_train_full):
    """The follow-up's verdicts and its conclusion, computed from its numbers.

    The seed-dependent answers (does fine-tuning beat scratch; does its gain grow with fewer
    labels) are :class:`~._claims.Claim` s judged by the shared paired-interval rule over
    the follow-up's seeds; the domain-gap answers compare single measurements.
    """
    k = len(seeds)
    main_tuned, main_scratch = main["grover_finetuned"][:k], main["grover_scratch"][:k]
    small_gain = float(np.mean(main_scratch) - np.mean(main_tuned))  # > 0: pretraining helps
    big_gain = _mean(res_big["scratch"]) - _mean(res_big["finetuned"])
    # 1. a bigger, better pretraining
    big = judge(CLAIMS_FOLLOWUP["big"], [p["test"] for p in res_big["finetuned"]],
                [p["test"] for p in res_big["scratch"]])
    # 2. the domain gap: is ESOL farther from MOSES than the data sets where it helped?
    others = [n for n in PAPER if n != "ESOL"]
    far_vocab = all(gap["ESOL"]["atom_other/moses-small"] > gap[n]["atom_other/moses-small"]
                    for n in others)
    med = {n: float(np.median(gap[n]["nn_tanimoto"])) for n in gap}
    far_nn = all(med["ESOL"] < med[n] for n in others)
    # 3. labels: does the gain grow as the labels get fewer?
    fractions = sorted(res_curve)
    gains = {f: _mean(res_curve[f]["scratch"]) - _mean(res_curve[f]["finetuned"])
             for f in fractions}
    gains[1.0] = small_gain
    fewest = fractions[0] if fractions else 1.0
    if fractions:
        few_tuned = [p["test"] for p in res_curve[fewest]["finetuned"]]
        few_scratch = [p["test"] for p in res_curve[fewest]["scratch"]]
    else:
        few_tuned, few_scratch = main_tuned, main_scratch
    few = judge(CLAIMS_FOLLOWUP["few"].at(fewest=fewest), few_tuned, few_scratch)
    grow = judge(CLAIMS_FOLLOWUP["grow"].at(fewest=fewest), _gains(few_scratch, few_tuned),
                 _gains(main_scratch, main_tuned))
    parts = []
    if big.outcome == HOLDS:
        parts.append("a bigger, longer pretraining turns the verdict: moses-176k fine-tuned "
                     f"beats its architecture from scratch by {big_gain:.3f} RMSE, so "
                     "moses-small (15k molecules, hidden 64) is too weak a start for ESOL")
    elif big.outcome == NOT_HOLDS:
        parts.append("a bigger, longer pretraining does not turn the verdict (moses-176k "
                     f"fine-tuned is {-big_gain:.3f} RMSE worse than from scratch), so the "
                     "size of the checkpoint is not the reason")
    else:
        parts.append("whether a bigger, longer pretraining turns the verdict is not decided "
                     f"on {k} seed(s) (moses-176k fine-tuned minus scratch: "
                     f"{-big_gain:+.3f} RMSE)")
    if few.outcome == HOLDS and small_gain <= 0:
        parts.append(f"with a {fewest:g} share of the labels moses-small does beat scratch "
                     f"(by {gains[fewest]:.3f}; {gains[1.0]:+.3f} with all of them): the "
                     "full ESOL training set is large enough for scratch to catch up")
    elif few.outcome == HOLDS:
        parts.append(f"moses-small beats scratch with a {fewest:g} share of the labels "
                     f"(by {gains[fewest]:.3f}) as with all of them (by {gains[1.0]:.3f})")
    elif few.outcome == NOT_HOLDS:
        parts.append(f"with a {fewest:g} share of the labels moses-small does not beat "
                     f"scratch either ({gains[fewest]:+.3f}), so it is not that ESOL has "
                     "labels enough to do without pretraining")
    else:
        parts.append(f"whether moses-small beats scratch with a {fewest:g} share of the "
                     f"labels is not decided on {k} seed(s) (gain {gains[fewest]:+.3f})")
    if far_vocab or far_nn:
        parts.append("ESOL is farther from MOSES than BBBP and FreeSolv on "
                     + " and ".join(w for w, f in (("context vocabulary", far_vocab),
                                                    ("nearest-neighbour Tanimoto", far_nn))
                                    if f))
    else:
        parts.append("the domain gap does not single ESOL out: it is no farther from MOSES "
                     "than the data sets where pretraining helps (by context vocabulary and "
                     "nearest-neighbour Tanimoto)")
    why = "; ".join(parts)
    return {"small_gain": small_gain, "big_gain": big_gain, "big": big, "few": few,
            "grow": grow, "flips": big.outcome, "far_vocab": far_vocab, "far_nn": far_nn,
            "nn_median": med, "gains": gains, "helps_few": few.outcome,
            "grows": grow.outcome, "why": why}


def _yes(flag):
    return "yes" if flag else "no"


def _gap_rows(gap, nn_median):
    """Rows of the domain-gap table: per set of molecules, the share of context labels
    outside each checkpoint's vocabulary and the nearest-neighbour Tanimoto to MOSES."""
    gap_rows = []
    for name, g in gap.items():
        gap_rows.append({
            "molecules": name, "n": g["n_molecules"],
            "heavy atoms (mean)": f"{g['heavy_atoms']:.1f}",
            "atom contexts in <other>: moses-small / moses-176k":
                f"{100 * g['atom_other/moses-small']:.1f} % / "
                f"{100 * g['atom_other/moses-176k']:.1f} %",
            "bond contexts in <other>: moses-small / moses-176k":
                f"{100 * g['bond_other/moses-small']:.1f} % / "
                f"{100 * g['bond_other/moses-176k']:.1f} %",
            "NN Tanimoto to MOSES: median": f"{nn_median[name]:.3f}",
            "share >= 0.5": f"{100 * np.mean(g['nn_tanimoto'] >= 0.5):.0f} %"})
    return gap_rows


def _followup_markdown(result, res_big, res_curve, gap, main, seeds, follow, v,
                       n_train_full):
    k = len(seeds)
    rows = [
        {"checkpoint (architecture)": "moses-small (hidden 64, 1 block, 15k molecules)",
         "fine-tuned": format_mean_std(main["grover_finetuned"][:k], 3),
         "scratch": format_mean_std(main["grover_scratch"][:k], 3),
         "scratch - fine-tuned": f"{v['small_gain']:+.3f}",
         "train RMSE fine-tuned / scratch": "-", "fit CPU s fine-tuned / scratch": "-"},
        {"checkpoint (architecture)": "moses-176k (hidden 144, 2 blocks, 176k molecules)",
         "fine-tuned": format_mean_std([p["test"] for p in res_big["finetuned"]], 3),
         "scratch": format_mean_std([p["test"] for p in res_big["scratch"]], 3),
         "scratch - fine-tuned": f"{v['big_gain']:+.3f}",
         "train RMSE fine-tuned / scratch":
             f"{_mean(res_big['finetuned'], 'train'):.3f} / "
             f"{_mean(res_big['scratch'], 'train'):.3f}",
         "fit CPU s fine-tuned / scratch":
             f"{_mean(res_big['finetuned'], 'cpu_seconds'):.0f} / "
             f"{_mean(res_big['scratch'], 'cpu_seconds'):.0f}"},
    ]
    gap_rows = _gap_rows(gap, v["nn_median"])
    curve_rows = []
    for f in sorted(res_curve):
        curve_rows.append({
            "share of training part": f"{f:g}",
            "training molecules": int(np.mean([p["n_train"] for p in res_curve[f]["scratch"]])),
            "fine-tuned (moses-small)": format_mean_std(
                [p["test"] for p in res_curve[f]["finetuned"]], 3),
            "scratch": format_mean_std([p["test"] for p in res_curve[f]["scratch"]], 3),
            "scratch - fine-tuned": f"{v['gains'][f]:+.3f}"})
    curve_rows.append({"share of training part": "1 (main table)",
                       "training molecules": n_train_full,
                       "fine-tuned (moses-small)": format_mean_std(
                           main["grover_finetuned"][:k], 3),
                       "scratch": format_mean_std(main["grover_scratch"][:k], 3),
                       "scratch - fine-tuned": f"{v['gains'][1.0]:+.3f}"})
    fewest = min(res_curve) if res_curve else 1.0
    claims = [
        {"follow-up question": "does a bigger, longer pretraining (moses-176k) make "
         "fine-tuning beat scratch on ESOL?", "answer": result.verdict(v["big"],
                                                                       style="outcome")},
        {"follow-up question": "are more of ESOL's atom contexts outside moses-small's "
         "vocabulary than BBBP's and FreeSolv's (where pretraining helped)?",
         "answer": f"**{_yes(v['far_vocab'])}** ({_MEASURED})"},
        {"follow-up question": "are ESOL's molecules farther from MOSES (lower median "
         "nearest-neighbour Tanimoto) than BBBP's and FreeSolv's?",
         "answer": f"**{_yes(v['far_nn'])}** ({_MEASURED})"},
        {"follow-up question": f"does moses-small beat scratch with a {fewest:g} share of "
         "the ESOL labels?", "answer": result.verdict(v["few"], style="outcome")},
        {"follow-up question": "is its gain larger with fewer labels than with all?",
         "answer": result.verdict(v["grow"], style="outcome")},
    ]
    return "\n".join([
        "### Follow-up: pretraining on ESOL",
        "",
        "In the published full run the claim fails on ESOL only: fine-tuned "
        "from `moses-small` 1.120 ± 0.048 against 1.009 ± 0.019 from scratch. Here, on "
        f"seeds {list(seeds)}, fine-tuning is "
        f"{'better' if v['small_gain'] > 0 else 'worse'} than scratch by "
        f"{abs(v['small_gain']):.3f}. Three measurements on the same balanced scaffold "
        "splits and the same fine-tuning protocol as the table above explain it; RMSE in "
        "log mol/L, mean ± std over seeds.",
        "",
        "**1. A bigger, longer pretraining.** The shipped `moses-176k` checkpoint, "
        "fine-tuned, against its architecture trained from scratch (`moses-small`'s pair "
        "from the table above, for reference).",
        "",
        result.table(rows),
        "",
        "**2. The domain gap.** The share of atom and bond contextual-property labels "
        "(GROVER's pretraining targets) that fall in each checkpoint's `<other>` bucket, "
        "and each molecule's ECFP4 (2048 bits) Tanimoto similarity to its nearest "
        f"neighbour among the first {follow['n_ref']:,} MOSES molecules "
        f"(`moses-small`'s pretraining set is the first {MOSES_SMALL_ROWS:,}). "
        f"MOSES (held out): {follow['n_held']:,} MOSES molecules after row "
        f"{MOSES_SMALL_ROWS:,}, never seen by `moses-small` (but part of `moses-176k`'s "
        "pretraining set).",
        "",
        result.table(gap_rows),
        "",
        "**3. Fewer labels.** `moses-small` fine-tuned against scratch (hidden 64) on a "
        "seeded random share of each training part, the same test part.",
        "",
        result.table(curve_rows),
        "",
        result.table(claims),
        "",
        f"**Conclusion (computed from the answers):** {v['why']}.",
    ])


def _followup_plot(ctx, res_big, res_curve, gap, main, seeds, n_train_full):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(seeds)
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.9))
    ax = axes[0]
    pairs = [("moses-small", main["grover_finetuned"][:k], main["grover_scratch"][:k]),
             ("moses-176k", [p["test"] for p in res_big["finetuned"]],
              [p["test"] for p in res_big["scratch"]])]
    for i, (label, tuned, scratch) in enumerate(pairs):
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
    fractions = sorted(res_curve)
    n_fit = [np.mean([p["n_train"] for p in res_curve[f]["scratch"]]) for f in fractions]
    n_fit.append(n_train_full)
    for kind, color, full in (("finetuned", "C2", main["grover_finetuned"][:k]),
                              ("scratch", "C7", main["grover_scratch"][:k])):
        means = [_mean(res_curve[f][kind]) for f in fractions] + [float(np.mean(full))]
        ax.plot(n_fit, means, "o-", color=color,
                label="fine-tuned (moses-small)" if kind == "finetuned" else "scratch")
    ax.set_xscale("log")
    ax.set_xlabel("ESOL training molecules")
    ax.set_ylabel("test RMSE (log mol/L)")
    ax.set_title("fewer labels", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, ctx, "grover_followup.png", dpi=100)


EXPERIMENT = Experiment(
    name="grover",
    title="GROVER: self-supervised pretraining for molecular property prediction",
    paper="Y. Rong, Y. Bian, T. Xu, W. Xie, Y. Wei, W. Huang, J. Huang (2020), "
          "Self-Supervised Graph Transformer on Large-Scale Molecular Data, NeurIPS 2020",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)

EXPERIMENT_FOLLOWUP = Experiment(
    name="grover_followup",
    title="GROVER follow-up: why pretraining does not help on ESOL",
    paper="Y. Rong, Y. Bian, T. Xu, W. Xie, Y. Wei, W. Huang, J. Huang (2020), "
          "Self-Supervised Graph Transformer on Large-Scale Molecular Data, NeurIPS 2020",
    run=run_followup,
    claims=CLAIMS_FOLLOWUP,
    protocol=PROTOCOL_FOLLOWUP,
)
