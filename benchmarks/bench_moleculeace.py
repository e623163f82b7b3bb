"""MoleculeACE's protocol on its ten bundled targets: potency on one target, activity
cliffs included, our molecule models at their defaults against SVR on ECFP.

The sets are :func:`sklearn_papers.datasets.load_moleculeace`'s (van Tilborg et al.,
J. Chem. Inf. Model. 2022): ``y`` = -log10(Ki or EC50 / nM), the benchmark's fixed
train/test split, and its activity-cliff labels. Every model is fitted on the training
part and scored on the test part by the benchmark's two metrics: the test RMSE and the
RMSE on the test molecules that are part of an activity cliff ("cliff RMSE").

Models (``--models``):

* ``svr``: MoleculeACE's support vector regression on ECFP (radius 2, 1024 bits; our
  :class:`~sklearn_papers.chem.CircularFingerprint` gives the benchmark's bits), RBF
  kernel, ``epsilon=0.1``, its grid ``C`` in {1, 10, 100, 1000, 10000} x ``gamma`` in
  {1e-6, ..., 0.1}, chosen by 5-fold cross-validation on the training part, stratified
  on whether ``y`` is below its median (``StratifiedKFold(shuffle=True,
  random_state=42)``), by the mean of the folds' RMSE, as MoleculeACE's code does. It is
  the peer of every other model. Deterministic: one fit. The search computes the RBF
  kernel once per ``gamma`` (:class:`SVRSearch`); ``--check-search`` compares it with
  the plain ``GridSearchCV`` (the same parameters and predictions, at a fraction of the
  CPU).
* ``rf``: scikit-learn's ``RandomForestRegressor()`` on the same ECFP.
* ``chemprop``: chemprop's D-MPNN at its defaults (the ``bench`` extra, ``make bench``):
  50 epochs on 90 % of the training part, the other 10 % validated each epoch, the last
  epoch's model scored.
* ``grover_svr``: ``GroverFeaturizer()`` at its defaults (the shipped checkpoint, frozen;
  embedding, descriptors and ECFP4 bits, the blocks scaled as it scales them) then the
  same SVR search. Deterministic: one fit.
* ``nf``, ``mpnn``: ``NeuralFingerprintRegressor()``, ``MPNNRegressor()`` at their
  defaults (the neural fingerprint's: the mean of five networks; the MPNN's: its network
  blended with the SVR search on ECFP, ``blend="ecfp_svr"``). A blended model's fit
  also logs its network's scores alone (``network_rmse``, ``network_cliff_rmse``) and the
  SVR's weight.
* ``mpnn_net``: ``MPNNRegressor(blend=None)``, the network alone; run only when
  ``--models`` names it.
* ``nf_blend``: ``NeuralFingerprintRegressor(blend="ecfp_svr")``, its five networks
  blended with the SVR; ``nf_ens3_blend``: the same with three networks. Run only when
  ``--models`` names them.
* ``nf_single``: ``NeuralFingerprintRegressor(ensemble_size=1)``, one network; run only
  when ``--models`` names it.
* ``nf_fp``, ``mpnn_fp``: the same with a fingerprint branch (``fingerprint_bits=1024``:
  ECFP4 bits joined to the readout); run only when ``--models`` names them.
* ``nf_ens3``, ``mpnn_ens3``: the same with ``ensemble_size=3`` (the mean of that
  many networks trained from different seeds); ``nf_ens3_e50``, ``mpnn_ens3_e25``: three
  networks of half the default epochs each. Run only when ``--models`` names them.
* ``grover``: ``GroverRegressor(head="svr")``, the SVR head on the frozen encoder
  (deterministic: one fit).
* ``grover_default``: ``GroverRegressor()`` at its defaults (``head="ensemble"``,
  ``max_epochs=30``): the mean of the fine-tuned network and the SVR head.
* ``grover_finetune``: ``GroverRegressor(head="finetune", max_epochs=60)``, the
  fine-tuned network alone, 60 epochs; run only when ``--models`` names it.
* ``grover_ensemble``: ``GroverRegressor(head="ensemble", max_epochs=60)``, the default
  with 60 epochs of fine-tuning; run only when ``--models`` names it.

Stochastic models are fitted with ``--seeds`` seeds (``random_state`` 0, 1, ...); a
target's score is the mean over seeds. "CPU per fit" is the process CPU seconds of one
``fit`` (for the searches: the whole search and the refit), featurization included. One
torch thread. Each fit's scores are appended to ``--log`` (JSON lines) as soon as they
are known, and fits already in that file are not run again, so a long run can be
stopped and resumed, and parts can run alone (``--targets``, ``--models``). The log
defaults to ``benchmarks/results/moleculeace_fits.jsonl``, the committed fits of the
recorded results; ``--log`` names another file for a run of one's own.

The summary prints, per model, the mean test RMSE and cliff RMSE over the targets it
shares with ``svr``, how many of them it wins against ``svr`` by test RMSE, and the mean
CPU per fit. ``--record`` writes ``benchmarks/results/moleculeace.json`` (each model as
"ours", ``svr`` as "peer").

Run: ``OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_moleculeace.py
[--targets CHEMBL2047_EC50 ...] [--models svr rf grover_svr nf mpnn mpnn_net nf_blend nf_ens3_blend nf_fp
mpnn_fp nf_single nf_ens3 nf_ens3_e50 mpnn_ens3 mpnn_ens3_e25 grover grover_default
grover_finetune grover_ensemble chemprop]
[--seeds 3] [--log FITS.jsonl] [--record]``; ``--summary-only --record`` records the
fits of the log without fitting.
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

sys.path.insert(0, os.path.dirname(__file__))

#: MoleculeACE's SVR grid (its ``configures/default/SVM.yml``).
SVR_GRID = {"C": [1, 10, 100, 1000, 10000], "gamma": [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]}
#: The committed log of the fits behind ``benchmarks/results/moleculeace.json``.
FIT_LOG = Path(__file__).parent / "results" / "moleculeace_fits.jsonl"
#: Models in the order they run by default: the cheap ones first.
MODELS = ("svr", "rf", "grover_svr", "nf", "mpnn", "grover", "grover_default", "chemprop")
#: Models run only when ``--models`` names them.
OPTIONAL_MODELS = ("mpnn_net", "nf_blend", "nf_ens3_blend", "nf_fp", "mpnn_fp", "nf_single",
                   "nf_ens3", "nf_ens3_e50",
                   "mpnn_ens3", "mpnn_ens3_e25", "grover_finetune", "grover_ensemble")
#: The optional variants of ``nf`` and ``mpnn``: the parameters they change.
VARIANTS = {"nf_fp": ("nf", {"fingerprint_bits": 1024}),
            "mpnn_fp": ("mpnn", {"fingerprint_bits": 1024}),
            "mpnn_net": ("mpnn", {"blend": None}),
            "nf_blend": ("nf", {"blend": "ecfp_svr"}),
            "nf_ens3_blend": ("nf", {"ensemble_size": 3, "blend": "ecfp_svr"}),
            "nf_single": ("nf", {"ensemble_size": 1}),
            "nf_ens3": ("nf", {"ensemble_size": 3}),
            "nf_ens3_e50": ("nf", {"ensemble_size": 3, "max_epochs": 50}),
            "mpnn_ens3": ("mpnn", {"ensemble_size": 3}),
            "mpnn_ens3_e25": ("mpnn", {"ensemble_size": 3, "max_epochs": 25})}
#: Models with one fit whatever the seed (GroverRegressor's SVR head draws nothing).
DETERMINISTIC = ("svr", "grover_svr", "grover")
#: The models' names in the recorded rows and the notes.
LABELS = {"svr": "SVR on ECFP", "rf": "RF on ECFP", "grover_svr": "GroverFeaturizer() + SVR",
          "nf": "NeuralFingerprintRegressor()", "mpnn": "MPNNRegressor()",
          "nf_fp": "NeuralFingerprintRegressor(fingerprint_bits=1024)",
          "mpnn_fp": "MPNNRegressor(fingerprint_bits=1024)",
          "mpnn_net": "MPNNRegressor(blend=None)",
          "nf_blend": "NeuralFingerprintRegressor(blend='ecfp_svr')",
          "nf_ens3_blend": "NeuralFingerprintRegressor(ensemble_size=3, blend='ecfp_svr')",
          "nf_single": "NeuralFingerprintRegressor(ensemble_size=1)",
          "nf_ens3": "NeuralFingerprintRegressor(ensemble_size=3)",
          "nf_ens3_e50": "NeuralFingerprintRegressor(ensemble_size=3, max_epochs=50)",
          "mpnn_ens3": "MPNNRegressor(ensemble_size=3)",
          "mpnn_ens3_e25": "MPNNRegressor(ensemble_size=3, max_epochs=25)",
          "grover": "GroverRegressor(head='svr')",
          "grover_finetune": "GroverRegressor(head='finetune', max_epochs=60)",
          "grover_ensemble": "GroverRegressor(head='ensemble', max_epochs=60)",
          "grover_default": "GroverRegressor()", "chemprop": "chemprop"}


def median_stratified_folds(y, n_splits=5, random_state=42):
    """MoleculeACE's cross-validation folds: ``StratifiedKFold`` on ``y >= median(y)``."""
    from sklearn.model_selection import StratifiedKFold

    labels = (np.asarray(y) >= np.median(y)).astype(int)
    cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return list(cv.split(labels, labels))


def svr_search(y_train):
    """MoleculeACE's SVR search on features, as a ``GridSearchCV`` (the reference
    :class:`SVRSearch` is checked against by ``--check-search``)."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVR

    return GridSearchCV(SVR(kernel="rbf", epsilon=0.1), SVR_GRID,
                        cv=median_stratified_folds(y_train),
                        scoring="neg_root_mean_squared_error", n_jobs=None)


class SVRSearch(RegressorMixin, BaseEstimator):
    """MoleculeACE's SVR search, with the RBF kernel computed once per ``gamma``.

    The same search as :func:`svr_search` (the same folds, grid, refit on the whole
    training part with the lowest mean fold RMSE): the squared distances between the
    training molecules are computed once and each fit gets ``exp(-gamma * d2)`` as a
    precomputed kernel, which libsvm would otherwise recompute for every ``C`` and fold.
    """

    def fit(self, X, y):
        from sklearn.metrics.pairwise import euclidean_distances
        from sklearn.svm import SVR

        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        d2 = euclidean_distances(X, squared=True)
        folds = median_stratified_folds(y)
        scores = {}
        for gamma in SVR_GRID["gamma"]:
            K = np.exp(-gamma * d2)
            for C in SVR_GRID["C"]:
                fold_rmse = []
                for tr, va in folds:
                    svr = SVR(kernel="precomputed", C=C, epsilon=0.1)
                    svr.fit(K[np.ix_(tr, tr)], y[tr])
                    fold_rmse.append(rmse(y[va], svr.predict(K[np.ix_(va, tr)])))
                scores[C, gamma] = float(np.mean(fold_rmse))
        # the first of the grid's order among equal scores, as GridSearchCV's rank does
        order = [(C, g) for C in SVR_GRID["C"] for g in SVR_GRID["gamma"]]
        self.best_params_ = dict(zip(("C", "gamma"), min(order, key=lambda k: scores[k])))
        self.X_ = X
        self.svr_ = SVR(kernel="precomputed", C=self.best_params_["C"], epsilon=0.1)
        self.svr_.fit(np.exp(-self.best_params_["gamma"] * d2), y)
        return self

    def predict(self, X):
        from sklearn.metrics.pairwise import euclidean_distances

        d2 = euclidean_distances(np.asarray(X, dtype=np.float64), self.X_, squared=True)
        return self.svr_.predict(np.exp(-self.best_params_["gamma"] * d2))


def ecfp():
    from sklearn_papers.chem import CircularFingerprint

    return CircularFingerprint(radius=2, n_bits=1024)


def make_model(name, seed, y_train):
    """The estimator ``name`` (an object with ``fit(X, y)`` and ``predict(X)`` on SMILES),
    or None for chemprop."""
    from sklearn.pipeline import make_pipeline

    if name == "svr":
        return make_pipeline(ecfp(), SVRSearch())
    if name == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return make_pipeline(ecfp(), RandomForestRegressor(random_state=seed))
    if name == "grover_svr":
        from sklearn_papers.chem import GroverFeaturizer

        # its defaults: embedding, descriptors and ECFP4 bits, the blocks already scaled
        return make_pipeline(GroverFeaturizer(verbose=0), SVRSearch())
    from sklearn_papers import chem

    if name == "grover_finetune":
        return chem.GroverRegressor(head="finetune", max_epochs=60, random_state=seed,
                                    verbose=0)
    if name == "grover":
        return chem.GroverRegressor(head="svr", verbose=0)
    if name == "grover_ensemble":
        return chem.GroverRegressor(head="ensemble", max_epochs=60, random_state=seed,
                                    verbose=0)
    if name == "grover_default":
        return chem.GroverRegressor(random_state=seed, verbose=0)
    base, extra = VARIANTS.get(name, (name, {}))
    cls = {"nf": chem.NeuralFingerprintRegressor, "mpnn": chem.MPNNRegressor}[base]
    return cls(random_state=seed, verbose=0, **extra)


def fit_chemprop(X_train, y_train, X_test, seed):
    """``(test predictions, fit CPU seconds)`` of chemprop at its defaults."""
    from _peers import chemprop_fit_predict

    return chemprop_fit_predict(X_train, y_train, X_test, seed)


def rmse(y, pred):
    return float(np.sqrt(np.mean((np.asarray(pred) - np.asarray(y)) ** 2)))


def run_one(name, target, seed):
    """One fit: a dict with the test RMSE, cliff RMSE, fit CPU seconds, the largest
    distance of a test prediction outside the training targets' range (0 inside), the
    range's width, both RMSEs of the predictions clipped to that range ("bounded") and
    the warnings the fit and prediction raised."""
    from sklearn_papers.datasets import load_moleculeace

    data = load_moleculeace(target)
    X, y = data.data, data.target
    train, test = data.train_indices, data.test_indices
    cliff = data.cliff[test]
    model = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name == "chemprop":
            pred, cpu = fit_chemprop(X[train], y[train], X[test], seed)
        else:
            model = make_model(name, seed, y[train])
            cpu = time.process_time()
            model.fit(X[train], y[train])
            cpu = time.process_time() - cpu
            pred = model.predict(X[test])
    low, high = y[train].min(), y[train].max()
    outside = float(np.max(np.maximum(low - pred, pred - high).clip(min=0)))
    bounded = np.clip(pred, low, high)
    row = {"target": target, "model": name, "seed": seed, "rmse": rmse(y[test], pred),
           "cliff_rmse": rmse(y[test][cliff], pred[cliff]), "cpu": cpu,
           "outside": outside, "range_width": float(high - low),
           "rmse_bounded": rmse(y[test], bounded),
           "cliff_rmse_bounded": rmse(y[test][cliff], bounded[cliff]),
           "warnings": sorted({type(w.message).__name__ for w in caught})}
    if hasattr(getattr(model, "module_", None), "members"):
        row["by_ensemble_size"] = smaller_ensembles(model, X[test], y[test], cliff)
    if getattr(model, "blend_svr_", None) is not None:
        row["blend_weight"] = float(model.blend_weight_[0])
        row["network_rmse"], row["network_cliff_rmse"] = network_alone(
            model, X[test], y[test], cliff)
    return row


def network_alone(model, X_test, y_test, cliff):
    """``(test RMSE, cliff RMSE)`` of a blended regressor's network without the SVR (the
    network ``blend=None`` trains with the same ``random_state``), scored without
    training it again."""
    import copy

    alone = copy.copy(model)
    alone.blend_svr_ = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = alone.predict(X_test)
    return rmse(y_test, pred), rmse(y_test[cliff], pred[cliff])


def smaller_ensembles(model, X_test, y_test, cliff):
    """``[test RMSE, cliff RMSE]`` of the mean of the first ``k`` members of a fitted
    ensemble, for ``k`` = 1 .. ``ensemble_size``: the ensembles of ``ensemble_size=k``
    with the same ``random_state`` (a larger ensemble holds the members of a smaller
    one), scored without training them again."""
    import copy

    from sklearn_papers.chem._ensemble import MeanOfMembers

    members, scores = list(model.module_.members), []
    for k in range(1, len(members) + 1):
        smaller = copy.copy(model)
        smaller.module_ = MeanOfMembers(members[:k], model.module_.combine)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = smaller.predict(X_test)
        scores.append([rmse(y_test, pred), rmse(y_test[cliff], pred[cliff])])
    return scores


def check_search(target):
    """Print the best parameters of :class:`SVRSearch` and of the ``GridSearchCV`` of
    :func:`svr_search` on ``target``, their test predictions' largest difference and
    their fit CPU seconds."""
    from sklearn_papers.datasets import load_moleculeace

    data = load_moleculeace(target)
    X, y = ecfp().fit_transform(data.data), data.target
    train, test = data.train_indices, data.test_indices
    fits = {}
    for name, search in (("GridSearchCV", svr_search(y[train])), ("SVRSearch", SVRSearch())):
        cpu = time.process_time()
        search.fit(X[train], y[train])
        fits[name] = search, time.process_time() - cpu
        print(f"{target} {name:12} best {search.best_params_}  fit CPU {fits[name][1]:.1f} s")
    diff = np.abs(fits["GridSearchCV"][0].predict(X[test])
                  - fits["SVRSearch"][0].predict(X[test])).max()
    print(f"largest difference of the test predictions: {diff:.3g}")


def read_log(path):
    done = {}
    if path is not None and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["target"], row["model"], row["seed"]] = row
    return done


def summary(done, targets, models):
    """Print the per-target table and the means; return the record rows and the notes."""
    per = {}
    for (target, model, _), row in done.items():
        per.setdefault((target, model), []).append(row)
    mean = {key: {k: float(np.mean([r[k] for r in rows]))
                  for k in ("rmse", "cliff_rmse", "cpu")} | {"n": len(rows)}
            for key, rows in per.items()}
    print(f"{'target':16} " + " ".join(f"{m:>16}" for m in models))
    for target in targets:
        cells = []
        for m in models:
            s = mean.get((target, m))
            cells.append(f"{s['rmse']:7.3f} ({s['cliff_rmse']:.3f})" if s else f"{'-':>16}")
        print(f"{target:16} " + " ".join(f"{c:>16}" for c in cells))
    rows, notes = [], []
    peer = "svr"
    for m in models:
        shared = [t for t in targets if (t, m) in mean and (t, peer) in mean]
        if not shared:
            continue
        ours = {k: np.mean([mean[t, m][k] for t in shared]) for k in ("rmse", "cliff_rmse", "cpu")}
        base = {k: np.mean([mean[t, peer][k] for t in shared]) for k in ("rmse", "cliff_rmse", "cpu")}
        wins = sum(mean[t, m]["rmse"] < mean[t, peer]["rmse"] for t in shared)
        cliff_wins = sum(mean[t, m]["cliff_rmse"] < mean[t, peer]["cliff_rmse"] for t in shared)
        seeds = sorted({mean[t, m]["n"] for t in shared})
        print(f"{m:10} mean over {len(shared):2} targets: test RMSE {ours['rmse']:.3f} "
              f"(SVR {base['rmse']:.3f}), cliff RMSE {ours['cliff_rmse']:.3f} "
              f"(SVR {base['cliff_rmse']:.3f}), wins vs SVR {wins}/{len(shared)} "
              f"(cliff {cliff_wins}/{len(shared)}), CPU per fit {ours['cpu']:.1f} s "
              f"(SVR {base['cpu']:.1f} s), seeds {seeds}")
        fits = [r for t in shared for r in per[t, m]]
        if all("rmse_bounded" in r for r in fits):
            far = sum(r["outside"] > r["range_width"] for r in fits)
            print(f"{'':10} predictions clipped to the training range: test RMSE "
                  f"{np.mean([r['rmse_bounded'] for r in fits]):.3f}, cliff RMSE "
                  f"{np.mean([r['cliff_rmse_bounded'] for r in fits]):.3f} (mean over "
                  f"fits; unclipped {np.mean([r['rmse'] for r in fits]):.3f}); largest "
                  f"distance outside {max(r['outside'] for r in fits):.2f}; fits with a "
                  f"prediction more than the range's width outside: {far} of {len(fits)}")
        if fits and all("network_rmse" in r for r in fits):
            alone = {k: np.mean([np.mean([r[k] for r in per[t, m]]) for t in shared])
                     for k in ("network_rmse", "network_cliff_rmse", "blend_weight")}
            line = (f"{LABELS[m]}'s network alone (the same fits without the SVR): mean "
                    f"test RMSE {alone['network_rmse']:.3f}, cliff RMSE "
                    f"{alone['network_cliff_rmse']:.3f}; the SVR's mean weight "
                    f"{alone['blend_weight']:.2f}")
            print(f"{'':10} {line}")
            notes.append(line)
        if m != peer:
            notes.append(f"{LABELS[m]} wins {wins} of {len(shared)} targets by test RMSE "
                         f"and {cliff_wins} by cliff RMSE "
                         f"({' or '.join(map(str, seeds))} seed(s) per target)")
        n_t = f"{len(shared)} targets"
        for key, what, unit in (("rmse", "test RMSE", "log units"),
                                ("cliff_rmse", "cliff RMSE", "log units"),
                                ("cpu", "CPU per fit", "s")):
            rows.append({"what": f"{LABELS[m]}, mean, {n_t}, {what}", "ours": ours[key],
                         "peer": base[key], "unit": unit, "better": "lower"})
        for t in shared:
            for key, what in (("rmse", "test RMSE"), ("cliff_rmse", "cliff RMSE")):
                rows.append({"what": f"{LABELS[m]}, {t}, {what}", "ours": mean[t, m][key],
                             "peer": mean[t, peer][key], "unit": "log units",
                             "better": "lower"})
    return rows, notes


def main(argv=None):
    from sklearn_papers.datasets import MOLECULEACE_TARGETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=list(MOLECULEACE_TARGETS),
                        choices=MOLECULEACE_TARGETS)
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        choices=MODELS + OPTIONAL_MODELS)
    parser.add_argument("--seeds", type=int, default=3,
                        help="seeds of the stochastic models (0 .. seeds - 1)")
    parser.add_argument("--log", default=str(FIT_LOG),
                        help="JSON-lines file of the fits: appended to, and read to skip "
                             "fits already done (default: the committed fit log)")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--summary-only", action="store_true",
                        help="fit nothing: summarise (and with --record, record) the fits "
                             "already in --log")
    parser.add_argument("--check-search", action="store_true",
                        help="compare SVRSearch with GridSearchCV on the first target, "
                             "then stop")
    args = parser.parse_args(argv)
    if args.check_search:
        return check_search(args.targets[0])

    import torch

    torch.set_num_threads(1)
    done = read_log(args.log)
    # the cheap models first, on every target; then the next model
    for name in [] if args.summary_only else args.models:
        seeds = [0] if name in DETERMINISTIC else range(args.seeds)
        for target in args.targets:
            for seed in seeds:
                if (target, name, seed) in done:
                    continue
                try:
                    row = run_one(name, target, seed)
                except RuntimeError as exc:
                    if name != "chemprop":
                        raise
                    print(f"chemprop skipped: {exc}", flush=True)
                    break
                done[target, name, seed] = row
                print(f"{target:16} {name:10} seed {seed}  test RMSE {row['rmse']:.3f}  "
                      f"cliff RMSE {row['cliff_rmse']:.3f}  CPU {row['cpu']:7.1f} s  "
                      f"outside {row['outside']:.2f}  {' '.join(row['warnings'])}",
                      flush=True)
                if args.log is not None:
                    with open(args.log, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
    done = {k: v for k, v in done.items()
            if k[0] in args.targets and k[1] in args.models and k[2] < args.seeds}
    rows, notes = summary(done, args.targets, args.models)
    if args.record:
        from _record import record

        record("moleculeace",
               title="Potency on one target (MoleculeACE, 10 targets): each model (ours) "
                     "against SVR on ECFP (peer), test RMSE and cliff RMSE",
               peer="SVR on ECFP4 (1024 bits) with MoleculeACE's C x gamma search",
               rows=[r for r in rows if not r["what"].startswith(LABELS["svr"] + ",")],
               notes="Means over targets of the per-target means over seeds; "
                     "log units of -log10(Ki or EC50 / nM). " + "; ".join(notes) + ".")


if __name__ == "__main__":
    main()
