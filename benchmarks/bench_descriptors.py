"""RDKitDescriptors beside ECFP4 for a linear model: ESOL and FreeSolv test RMSE.

The splits of the quality comparisons (``benchmarks/_molsplits.py``: random 80/20,
``--seeds`` seeds); each featurization followed by ``RidgeCV`` (11 alphas, 1e-2..1e3):
ECFP4 (2048 bits), ``RDKitDescriptors()`` (all 217, CDF-normalized), and both joined.
The scores are recorded in ``benchmarks/results/descriptors.json`` (the docs' Benchmarks
pages), each arm with descriptors against ECFP4 alone.

Each comparison of two featurizations ("RDKitDescriptors beat ECFP4", "ECFP4 +
RDKitDescriptors beat ECFP4", "ECFP4 + RDKitDescriptors beat RDKitDescriptors") is judged
by the reports' ``paired interval`` rule over the seeds (``sklearn_papers.reproduce.
_claims``: holds, does not hold or inconclusive), not by comparing the means.

Run: ``.venv/bin/python benchmarks/bench_descriptors.py [--seeds 3]``.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

UNITS = {"esol": "log10 mol/L", "freesolv": "kcal/mol"}
NAMES = {"esol": "ESOL", "freesolv": "FreeSolv"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=["esol", "freesolv"])
    args = parser.parse_args(argv)

    from _molsplits import load, mean_std, score, split
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline, make_union

    from sklearn_papers.chem import CircularFingerprint, RDKitDescriptors

    arms = {
        "ECFP4": lambda: CircularFingerprint(),
        "RDKitDescriptors": lambda: RDKitDescriptors(),
        "ECFP4 + RDKitDescriptors": lambda: make_union(CircularFingerprint(),
                                                       RDKitDescriptors()),
    }
    print(f"{'data set':9} {'features':26} {'test RMSE':>16}")
    rows, scores = [], {}
    for name in args.datasets:
        X, y = load(name)
        found = {}
        for label, make in arms.items():
            per_seed = scores.setdefault((name, label), [])
            for seed in range(args.seeds):
                train, test = split(name, X, y, seed)
                model = make_pipeline(make(), RidgeCV(alphas=np.logspace(-2, 3, 11)))
                model.fit(X[train], y[train])
                per_seed.append(score(name, y[test], model.predict(X[test])))
            mean, std = mean_std(per_seed)
            found[label] = mean, std
            print(f"{name:9} {label:26} {mean:8.3f} ± {std:.3f}")
        (peer, peer_std) = found["ECFP4"]
        rows += [{"what": f"{NAMES.get(name, name)}, {label}", "ours": mean, "peer": peer,
                  "ours_std": std, "peer_std": peer_std,
                  "unit": f"test RMSE ({UNITS.get(name, 'target units')})",
                  "better": "lower"}
                 for label, (mean, std) in found.items() if label != "ECFP4"]

    from _record import record

    record("descriptors", title="RDKitDescriptors beside ECFP4 for a linear model (RidgeCV)",
           peer="ECFP4 alone (CircularFingerprint(), 2048 bits), same RidgeCV and splits",
           argv=argv, rows=rows,
           notes=f"Random 80/20 splits, {args.seeds} seeds (mean ± std over the seeds); "
                 "RidgeCV over 11 alphas from 1e-2 to 1e3; RDKitDescriptors() computes all of "
                 "RDKit's 2-D descriptors, each through the CDF fitted on the training "
                 "molecules.")
    verdicts(scores, args.datasets)


#: (A, B): the claim "A beats B" on test RMSE, judged per data set.
CLAIMS = (("RDKitDescriptors", "ECFP4"), ("ECFP4 + RDKitDescriptors", "ECFP4"),
          ("ECFP4 + RDKitDescriptors", "RDKitDescriptors"))


def verdicts(scores, datasets):
    """Print, per data set and claim of ``CLAIMS``, the verdict of the ``paired interval``
    rule on the per-seed test RMSE (``scores``: ``{(data set, arm): [RMSE per seed]}``)."""
    from sklearn_papers.reproduce._claims import Claim, judge

    print()
    for name in datasets:
        for a, b in CLAIMS:
            claim = Claim(f"{a} beat {b}", "test RMSE", "paired interval",
                          higher_is_better=False)
            verdict = judge(claim, scores[name, a], scores[name, b])
            print(f"{name:9} {claim.statement:50} {verdict.short()}")


if __name__ == "__main__":
    main()
