"""Speed of MIG, modularity and DCI against the reference's per-pair mutual-information loop.

On 10,000 samples x 10 codes x 5 factors (codes are noisy mixtures of the factors), our
``mutual_info_gap`` and ``modularity_explicitness`` (one sparse product for all joint
histograms) are timed against a straightforward loop that calls
``sklearn.metrics.mutual_info_score`` for every (code, factor) pair after the same 20-bin
histogram discretisation (disentanglement_lib's approach); the values are checked to be
equal. DCI is dominated by its gradient-boosted trees, so ours and a per-factor loop of the
same trees are timed for completeness. Each is timed ``--repeats`` times, interleaved, and
the best time is kept.

Run: ``.venv/bin/python benchmarks/bench_disentanglement.py [--n-samples 10000]
[--repeats 3] [--dci-estimators 20]``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import mutual_info_score

from sklearn_papers.metrics import dci, modularity_explicitness, mutual_info_gap

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _loop_mi(factors, codes, n_bins=20):
    disc = np.column_stack([np.digitize(c, np.histogram(c, n_bins)[1][:-1]) for c in codes.T])
    mi = np.array([[mutual_info_score(factors[:, k], disc[:, j])
                    for k in range(factors.shape[1])] for j in range(codes.shape[1])])
    return mi


def loop_mig(factors, codes):
    mi = _loop_mi(factors, codes)
    h = np.array([mutual_info_score(f, f) for f in factors.T])
    s = np.sort(mi, axis=0)[::-1]
    return float(np.mean((s[0] - s[1]) / h))


def loop_modularity(factors, codes):
    sq = _loop_mi(factors, codes) ** 2
    top = sq.max(axis=1)
    delta = (sq.sum(axis=1) - top) / (top * (sq.shape[1] - 1))
    return float(np.mean(np.where(top > 0, 1 - delta, 0.0)))


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dci-estimators", type=int, default=20)
    args = parser.parse_args(argv)

    rng = np.random.RandomState(0)
    factors = np.column_stack([rng.randint(s, size=args.n_samples) for s in (3, 6, 8, 16, 16)])
    codes = factors @ rng.normal(size=(5, 10)) + rng.normal(size=(args.n_samples, 10))

    rows = []
    t_ours, v_ours = _best(lambda: mutual_info_gap(factors, codes), args.repeats)
    t_loop, v_loop = _best(lambda: loop_mig(factors, codes), args.repeats)
    assert np.isclose(v_ours, v_loop, rtol=1e-9), (v_ours, v_loop)
    rows.append(("MIG", t_ours, t_loop, v_ours))

    def ours_mod():
        # modularity only: explicitness (logistic regressions) is timed out of the ratio
        from sklearn_papers.metrics._base import _check_factors_codes, _discretize, \
            _mutual_info_matrix
        from sklearn_papers.metrics._sample_based import _modularity_per_code

        labels, _, n_values, z = _check_factors_codes(factors, codes, 1e-6)
        mi, _ = _mutual_info_matrix(_discretize(z, 20, None), 20, labels, n_values)
        return float(np.mean(_modularity_per_code(mi)))

    t_ours, v_ours = _best(ours_mod, args.repeats)
    t_loop, v_loop = _best(lambda: loop_modularity(factors, codes), args.repeats)
    assert np.isclose(v_ours, v_loop, rtol=1e-9), (v_ours, v_loop)
    full = modularity_explicitness(factors, codes, random_state=0)["modularity"]
    assert np.isclose(full, v_ours, rtol=1e-12)
    rows.append(("modularity", t_ours, t_loop, v_ours))

    gbt = GradientBoostingClassifier(n_estimators=args.dci_estimators, max_depth=3,
                                     random_state=0)
    t_ours, v_ours = _best(lambda: dci(factors, codes, estimator=gbt,
                                       random_state=0)["disentanglement"], 1)
    rows.append(("DCI (GBT-bound)", t_ours, float("nan"), v_ours))

    print(f"{args.n_samples} samples x 10 codes x 5 factors, best of {args.repeats}")
    print(f"{'score':<18}{'ours (s)':>10}{'loop (s)':>10}{'speed-up':>10}{'value':>10}")
    for name, ours, loop, value in rows:
        ratio = loop / ours if np.isfinite(loop) else float("nan")
        print(f"{name:<18}{ours:>10.4f}{loop:>10.4f}{ratio:>10.1f}{value:>10.4f}")

    import sklearn
    from _record import record

    record("disentanglement",
           title=f"Disentanglement scores, {args.n_samples} samples x 10 codes x 5 factors",
           peer=f"per-pair sklearn.metrics.mutual_info_score loop (scikit-learn "
                f"{sklearn.__version__}), as disentanglement_lib computes it",
           argv=argv, rows=[{"what": f"{name}, best of {args.repeats}", "ours": ours,
                             "peer": loop, "unit": "s", "better": "lower"}
                            for name, ours, loop, _ in rows if np.isfinite(loop)],
           notes="The values of both are checked to be equal. DCI's time is its "
                 "gradient-boosted trees', the same on both sides, so it is left out.")


if __name__ == "__main__":
    main()
