"""Featurization done once: a 6-point GridSearchCV over a downstream Ridge alpha.

The pipeline is ``GroverFeaturizer(descriptors=False, fingerprint_bits=0)`` (the frozen
pretrained embedding) and ECFP4 side by side, then ``Ridge``; ``GridSearchCV`` searches 6
values of ``ridge__alpha`` with 5-fold cross-validation (30 fits, each featurizing its
training fold and transforming its test fold) on ESOL (1,128 molecules). Five arms, each
in this process, one after the other:

* ``no cache``: every fit and every prediction featurizes again;
* ``Pipeline(memory=...)``: scikit-learn caches the featurizers' ``fit_transform`` of each
  training fold (the test folds are still transformed at each point);
* ``GraphCache``: ``GroverFeaturizer(graph_cache=GraphCache())``: each molecule's graph is
  built once for the whole search (the network still runs at each fit);
* ``both``: ``Pipeline(memory=...)`` and a ``GraphCache``;
* ``featurize once``: the features of all molecules computed before the search, which
  then searches the Ridge alone (the lower bound).

Prints the wall and CPU seconds of each arm and its ratio to ``no cache``, and checks that
all arms choose the same alpha with the same cross-validated score. The times are recorded
in ``benchmarks/results/featurization_cache.json`` (the docs' Benchmarks pages), each arm
against ``no cache``.

Run: ``.venv/bin/python benchmarks/bench_featurization_cache.py [--cv 5]
[--n-samples 1128]``.
"""

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--n-samples", type=int, default=None)
    args = parser.parse_args(argv)

    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import Pipeline, make_union

    from sklearn_papers.chem import CircularFingerprint, GraphCache, GroverFeaturizer
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    X, y = np.asarray(X, dtype=object)[:args.n_samples], np.asarray(y)[:args.n_samples]
    grid = {"ridge__alpha": np.logspace(-2, 3, 6)}
    cv = KFold(args.cv, shuffle=True, random_state=0)

    def featurizers(**grover):
        return make_union(GroverFeaturizer(descriptors=False, fingerprint_bits=0, **grover),
                          CircularFingerprint())

    def search(pipe, data=X):
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = GridSearchCV(pipe, grid, cv=cv).fit(data, y)
        return result, time.perf_counter() - start, time.process_time() - cpu

    arms = {}
    arms["no cache"] = search(Pipeline([("features", featurizers()), ("ridge", Ridge())]))
    with tempfile.TemporaryDirectory() as folder:
        arms["Pipeline(memory=...)"] = search(
            Pipeline([("features", featurizers()), ("ridge", Ridge())], memory=folder))
    cache = GraphCache()
    arms["GraphCache"] = search(Pipeline([("features", featurizers(graph_cache=cache)),
                                          ("ridge", Ridge())]))
    both = GraphCache()
    with tempfile.TemporaryDirectory() as folder:
        arms["both"] = search(Pipeline([("features", featurizers(graph_cache=both)),
                                        ("ridge", Ridge())], memory=folder))
    start, cpu = time.perf_counter(), time.process_time()
    F = featurizers().fit_transform(X)
    once_wall, once_cpu = time.perf_counter() - start, time.process_time() - cpu
    result, wall, cpu_s = search(Pipeline([("ridge", Ridge())]), F)
    arms["featurize once"] = (result, wall + once_wall, cpu_s + once_cpu)

    base_wall, base_cpu = arms["no cache"][1:]
    print(f"ESOL, {len(X)} molecules: GridSearchCV over 6 Ridge alphas, {args.cv}-fold, "
          "GroverFeaturizer(descriptors=False, fingerprint_bits=0) + ECFP4 (2048 bits) "
          "-> Ridge")
    print(f"{'arm':22} {'wall s':>8} {'CPU s':>8} {'ratio (wall)':>13} {'best alpha':>11} "
          f"{'CV R2':>7}")
    for name, (res, wall, cpu_s) in arms.items():
        print(f"{name:22} {wall:8.1f} {cpu_s:8.1f} {wall / base_wall:13.2f} "
              f"{res.best_params_['ridge__alpha']:11.3g} {res.best_score_:7.4f}")
    print(f"GraphCache: {len(cache)} graphs, {cache.hits} hits, {cache.misses} misses, "
          f"{cache.nbytes / 2**20:.1f} MiB")
    scores = [res.best_score_ for res, _, _ in arms.values()]
    alphas = {res.best_params_["ridge__alpha"] for res, _, _ in arms.values()}
    assert len(alphas) == 1, f"the arms chose different alphas: {alphas}"
    np.testing.assert_allclose(scores, scores[0], rtol=1e-4)

    from _record import record

    (alpha,) = alphas
    rows = []
    for name, (_, wall, cpu_s) in arms.items():
        if name == "no cache":
            continue
        rows += [{"what": f"{name}, CPU time", "ours": cpu_s, "peer": base_cpu,
                  "unit": "s (CPU time)", "better": "lower"},
                 {"what": f"{name}, wall time", "ours": wall, "peer": base_wall,
                  "unit": "s (wall time)", "better": "lower"}]
    record("featurization_cache",
           title="Featurization done once: a GridSearchCV over a downstream Ridge",
           peer="the same search featurizing at every fit and prediction (arm 'no cache')",
           argv=argv, rows=rows,
           notes=f"ESOL, {len(X)} molecules: GridSearchCV over 6 Ridge alphas, {args.cv}-fold "
                 f"(GroverFeaturizer(descriptors=False) + ECFP4, then Ridge). Every arm "
                 f"chose alpha {alpha:g} "
                 f"with CV R2 {scores[0]:.4f}. The GraphCache arm's cache: {len(cache)} "
                 f"graphs, {cache.hits} hits, {cache.misses} misses, "
                 f"{cache.nbytes / 2**20:.1f} MiB. CPU time is the steadier measure on a "
                 "shared machine.")


if __name__ == "__main__":
    main()
