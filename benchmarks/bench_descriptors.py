"""RDKitDescriptors beside ECFP4 for a linear model: ESOL and FreeSolv test RMSE.

The splits of the quality comparisons (``benchmarks/_molsplits.py``: random 80/20,
``--seeds`` seeds); each featurization followed by ``RidgeCV`` (11 alphas, 1e-2..1e3):
ECFP4 (2048 bits), ``RDKitDescriptors()`` (all 217, CDF-normalized), and both joined.

Run: ``.venv/bin/python benchmarks/bench_descriptors.py [--seeds 3]``.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


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
    for name in args.datasets:
        X, y = load(name)
        for label, make in arms.items():
            scores = []
            for seed in range(args.seeds):
                train, test = split(name, X, y, seed)
                model = make_pipeline(make(), RidgeCV(alphas=np.logspace(-2, 3, 11)))
                model.fit(X[train], y[train])
                scores.append(score(name, y[test], model.predict(X[test])))
            mean, std = mean_std(scores)
            print(f"{name:9} {label:26} {mean:8.3f} ± {std:.3f}")


if __name__ == "__main__":
    main()
