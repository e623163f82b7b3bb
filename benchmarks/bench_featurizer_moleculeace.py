"""Frozen ``GroverFeaturizer`` configurations + SVR against ECFP + SVR on MoleculeACE's
targets (van Tilborg, Alenicheva & Grisoni, J. Chem. Inf. Model. 2022).

For each target of ``--targets`` (the ten of
:func:`sklearn_papers.datasets.load_moleculeace`) and its fixed train/test split, every feature set below goes through the same SVR search,
MoleculeACE's: an RBF ``SVR`` with ``C`` in {1, 10, 100, 1000, 10000} and ``gamma`` in
``logspace(-5, 0, 6)`` chosen by 5-fold cross-validation on the training molecules,
stratified on whether the target is above the training median; refitted on every
training molecule. Test RMSE on all test molecules and on the activity-cliff ones
(``cliff_mol == 1``), in units of ``y`` (-log10 of Ki or EC50 in nM).

Feature sets (``--features``):

* ``ecfp``: ECFP4 counts as bits, 1024 bits (``CircularFingerprint(n_bits=1024)``, the
  benchmark's fingerprint);
* ``grover``: ``GroverFeaturizer(descriptors=False, fingerprint_bits=0)``, the embeddings
  alone;
* ``grover+desc``: ``GroverFeaturizer(descriptors=True)`` (embeddings, then RDKit's 2-D
  descriptors through CDFs fitted on the training molecules);
* ``desc``: the descriptors alone;
* ``grover+desc+ecfp``: the embeddings, descriptors and ECFP bits side by side;
* each of them with ``:std`` appended: a ``StandardScaler`` fitted on the training
  molecules before the SVR; with ``:bal``: ECFP bits as they are and the other blocks
  standardized, then scaled so that their mean squared distance between training
  molecules equals that of the bits (``ecfp+grover+desc:bal``).

Embeddings, raw descriptors and fingerprints are computed once per molecule (the frozen
featurizer trains nothing, so its embeddings do not depend on the split) and kept in
``--cache`` (``.npz`` per target; a folder of the system's temporary directory by default). Precomputed RBF kernels: one distance matrix per feature
set, so the search costs one SVR fit per grid point and fold. One thread.

Run: ``OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python
benchmarks/bench_featurizer_moleculeace.py [--targets CHEMBL1862_Ki ...] [--features ecfp
grover+desc:std ...] [--rf] [--out results.jsonl]``.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGETS = ["CHEMBL1862_Ki", "CHEMBL2047_EC50", "CHEMBL2147_Ki", "CHEMBL228_Ki",
           "CHEMBL231_Ki", "CHEMBL233_Ki", "CHEMBL236_Ki", "CHEMBL237_EC50",
           "CHEMBL238_Ki", "CHEMBL4792_Ki"]
FEATURES = ["ecfp", "grover", "grover:std", "grover+desc", "grover+desc:std", "desc:std",
            "grover+desc+ecfp:std"]
C_GRID = [1.0, 10.0, 100.0, 1000.0, 10000.0]
GAMMA_GRID = list(np.logspace(-5, 0, 6))


def load_target(name):
    """``(smiles, y, cliff, is_test)`` of one bundled MoleculeACE target."""
    from sklearn_papers.datasets import load_moleculeace

    data = load_moleculeace(name)
    is_test = np.zeros(len(data.data), dtype=bool)
    is_test[data.test_indices] = True
    return np.asarray(data.data, dtype=object), data.target, data.cliff, is_test


def raw_features(name, smiles, cache, checkpoint):
    """``{"ecfp", "grover", "desc_raw"}`` of every molecule, from ``cache`` if there."""
    file = Path(cache) / f"{name}-{checkpoint}.npz"
    if file.exists():
        return dict(np.load(file))
    from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, RDKitDescriptors

    out = {"ecfp": CircularFingerprint(n_bits=1024).fit_transform(smiles).astype(np.float64)}
    start = time.process_time()
    out["grover"] = GroverFeaturizer(pretrained=checkpoint, descriptors=False,
                                     fingerprint_bits=0, verbose=0).fit_transform(
        smiles).astype(np.float64)
    out["grover_cpu"] = np.array(time.process_time() - start)
    start = time.process_time()
    out["desc_raw"] = RDKitDescriptors(normalize=None).fit_transform(smiles)
    out["desc_cpu"] = np.array(time.process_time() - start)
    Path(cache).mkdir(parents=True, exist_ok=True)
    np.savez(file, **out)
    return out


def descriptors_cdf(raw, train):
    """The descriptors of every molecule through CDFs fitted on ``train`` (what
    ``GroverFeaturizer(descriptors=True)`` fitted on the training molecules joins)."""
    from sklearn_papers.chem import RDKitDescriptors
    from sklearn_papers.chem._descriptors import descriptor_names

    fitted = RDKitDescriptors()._fit_raw(raw[train], descriptor_names())
    return fitted._output(raw, np.ones(len(raw), dtype=bool))


def feature_matrix(spec, raw, train):
    """The matrix of feature set ``spec`` (see the module docstring)."""
    from sklearn.preprocessing import StandardScaler

    parts, _, scale = spec.partition(":")
    blocks = []
    for part in parts.split("+"):
        if part == "desc":
            blocks.append(descriptors_cdf(raw["desc_raw"], train))
        else:
            blocks.append(raw[part])
    if scale == "bal":
        # ECFP bits as they are; the other blocks standardized together and scaled so
        # their mean squared distance between training molecules equals the bits'
        ecfp = [b for p, b in zip(parts.split("+"), blocks) if p == "ecfp"]
        rest = np.hstack([b for p, b in zip(parts.split("+"), blocks) if p != "ecfp"])
        rest = StandardScaler().fit(rest[train]).transform(rest)
        if ecfp:
            bits = ecfp[0][train]
            p_on = bits.mean(axis=0)
            bit_d2 = 2 * np.sum(p_on * (1 - p_on))  # mean squared distance of the bits
            rest = rest * np.sqrt(bit_d2 / (2 * rest.shape[1]))
        return np.hstack(ecfp + [rest])
    F = np.hstack(blocks)
    if scale == "std":
        F = StandardScaler().fit(F[train]).transform(F)
    return F


def svr_search(F, y, train, test, seed=0):
    """MoleculeACE's SVR search on precomputed RBF kernels: ``(test predictions, best
    params, CPU seconds)``."""
    from sklearn.metrics import mean_squared_error
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVR

    start = time.process_time()
    Ftr, ytr = F[train], y[train]
    D_tr = euclidean_distances(Ftr, squared=True)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(
        Ftr, ytr > np.median(ytr)))
    best, best_score = None, np.inf
    for gamma in GAMMA_GRID:
        K = np.exp(-gamma * D_tr)
        for C in C_GRID:
            errors = []
            for a, b in folds:
                model = SVR(kernel="precomputed", C=C).fit(K[np.ix_(a, a)], ytr[a])
                errors.append(mean_squared_error(ytr[b], model.predict(K[np.ix_(b, a)])))
            if np.mean(errors) < best_score:
                best, best_score = (C, gamma), np.mean(errors)
    C, gamma = best
    model = SVR(kernel="precomputed", C=C).fit(np.exp(-gamma * D_tr), ytr)
    K_test = np.exp(-gamma * euclidean_distances(F[test], Ftr, squared=True))
    return model.predict(K_test), {"C": C, "gamma": float(gamma)}, time.process_time() - start


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=TARGETS)
    parser.add_argument("--features", nargs="+", default=FEATURES)
    parser.add_argument("--checkpoint", default="moses-small")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "sklearn_papers_moleculeace"))
    parser.add_argument("--rf", action="store_true",
                        help="also RandomForestRegressor(n_estimators=100) on ECFP")
    parser.add_argument("--out", default=None, help="append one JSON line per result")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    table = {}
    for name in args.targets:
        smiles, y, cliff, is_test = load_target(name)
        train, test = np.flatnonzero(~is_test), np.flatnonzero(is_test)
        raw = raw_features(name, smiles, args.cache, args.checkpoint)
        specs = list(args.features) + (["rf"] if args.rf else [])
        for spec in specs:
            if spec == "rf":
                from sklearn.ensemble import RandomForestRegressor

                start = time.process_time()
                pred = RandomForestRegressor(100, random_state=0).fit(
                    raw["ecfp"][train], y[train]).predict(raw["ecfp"][test])
                params, cpu = {}, time.process_time() - start
            else:
                F = feature_matrix(spec, raw, train)
                pred, params, cpu = svr_search(F, y, train, test)
            row = {"target": name, "features": spec, "checkpoint": args.checkpoint,
                   "rmse": rmse(pred, y[test]),
                   "cliff_rmse": rmse(pred[cliff[test]], y[test][cliff[test]]),
                   "params": params, "cpu": cpu}
            table[name, spec] = row
            print(f"{name:16} {spec:22} RMSE {row['rmse']:.3f}  cliff {row['cliff_rmse']:.3f}"
                  f"  {params}  CPU {cpu:6.1f} s", flush=True)
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    print("\nmeans over targets (wins against ecfp, by test RMSE)")
    for spec in specs:
        rows = [table[t, spec] for t in args.targets]
        wins = sum(table[t, spec]["rmse"] < table[t, "ecfp"]["rmse"] for t in args.targets) \
            if "ecfp" in specs else "-"
        print(f"{spec:22} RMSE {np.mean([r['rmse'] for r in rows]):.3f}  cliff "
              f"{np.mean([r['cliff_rmse'] for r in rows]):.3f}  wins {wins}")


if __name__ == "__main__":
    sys.exit(main())
