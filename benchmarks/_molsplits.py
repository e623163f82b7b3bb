"""The splits and scores of the molecule quality comparisons.

ESOL and FreeSolv: random 80/20 (``train_test_split(test_size=0.2, random_state=seed)``),
test RMSE. BBBP and Tox21: balanced scaffold 80/20 (``ScaffoldSplit(method="balanced",
random_state=seed)``; the deterministic split of BBBP leaves one class in its test set),
test ROC-AUC (Tox21: mean over its 12 tasks of the labelled test molecules). Used by
``bench_quality.py`` and ``search_defaults.py``.
"""

from pathlib import Path

import numpy as np

DATASETS = {"esol": "regression", "freesolv": "regression", "bbbp": "classification",
            "tox21": "classification"}
#: The other bundled sets with a property to predict (Duvenaud et al.'s photovoltaic
#: efficiency and malaria activity), asked for by name only.
MORE_DATASETS = {"photovoltaic": "regression", "malaria": "regression"}
TASKS = {**DATASETS, **MORE_DATASETS}


def load(name):
    """``(X, y)`` of a bundled data set, X an object array of SMILES.

    Molecules RDKit cannot parse (8 in Tox21) are dropped, so every model sees the same
    molecules.
    """
    from sklearn_papers import datasets
    from sklearn_papers.chem import check_molecules

    loader = {"esol": datasets.load_delaney, "freesolv": datasets.load_freesolv,
              "bbbp": datasets.load_bbbp, "tox21": datasets.load_tox21,
              "photovoltaic": datasets.load_cep, "malaria": datasets.load_malaria}[name]
    X, y = loader(return_X_y=True)
    X, y = np.asarray(X, dtype=object), np.asarray(y, dtype=float)
    valid = check_molecules(X, errors="nan")[1]
    return X[valid], y[valid]


def add_split_arguments(parser, n_max=True):
    """The data sets, seeds and (``n_max``) subset size options the ``*_defaults``
    benchmarks share: ``--datasets`` (ESOL and FreeSolv by default), ``--seeds`` (3) and
    ``--n-max``."""
    parser.add_argument("--datasets", nargs="+", default=["esol", "freesolv"])
    parser.add_argument("--seeds", type=int, default=3)
    if n_max:
        parser.add_argument("--n-max", type=int, default=None,
                            help="at most this many molecules per data set (seeded subset)")


def subset(X, y, n_max):
    """At most ``n_max`` rows of ``(X, y)``: a random subset (seed 0) in data-set order,
    or all of them when ``n_max`` is None or not smaller."""
    if n_max is None or len(X) <= n_max:
        return X, y
    keep = np.sort(np.random.RandomState(0).choice(len(X), n_max, replace=False))
    return X[keep], y[keep]


def iter_splits(datasets, seeds, n_max=None):
    """``(name, X, y, seed, train, test)`` for every data set of ``datasets`` (at most
    ``n_max`` molecules, :func:`subset`) and split seed ``0 .. seeds - 1``."""
    for name in datasets:
        X, y = subset(*load(name), n_max)
        for seed in range(seeds):
            train, test = split(name, X, y, seed)
            yield name, X, y, seed, train, test


def split(name, X, y, seed):
    """Train and test indices of ``name`` for ``seed``."""
    if TASKS[name] == "regression":
        from sklearn.model_selection import train_test_split

        return train_test_split(np.arange(len(X)), test_size=0.2, random_state=seed)
    from sklearn_papers.chem import ScaffoldSplit

    return next(ScaffoldSplit(method="balanced", random_state=seed).split(X))


def score(name, y_true, pred):
    """Test RMSE (regression) or ROC-AUC (classification; ``pred``: P(label 1))."""
    from sklearn.metrics import roc_auc_score

    if TASKS[name] == "regression":
        return float(np.sqrt(np.mean((np.asarray(pred).ravel() - y_true.ravel()) ** 2)))
    y_true = y_true.reshape(len(y_true), -1)
    pred = np.asarray(pred).reshape(len(y_true), -1)
    aucs = []
    for t in range(y_true.shape[1]):
        seen = ~np.isnan(y_true[:, t])
        if len(np.unique(y_true[seen, t])) == 2:
            aucs.append(roc_auc_score(y_true[seen, t], pred[seen, t]))
    return float(np.mean(aucs))


def positive_proba(est, X):
    """P(label 1) per molecule (binary) or per molecule and task (multi-task)."""
    proba = est.predict_proba(X)
    return proba[:, 1] if est._task == "binary" else proba


def commit():
    """The commit of the imported ``sklearn_papers``, ``+dirty`` when its files differ
    from it; for a copy outside git, the first line of a ``COMMIT`` file next to the
    package (e.g. written after ``git archive``); else ``None``."""
    import subprocess

    import sklearn_papers

    root = Path(sklearn_papers.__file__).resolve().parent.parent
    try:
        def git(*cmd):
            return subprocess.run(["git", *cmd], capture_output=True, text=True, cwd=root,
                                  check=True).stdout.strip()

        dirty = git("status", "--porcelain", "--", "sklearn_papers")
        return git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        stamp = root / "COMMIT"
        return stamp.read_text().splitlines()[0] if stamp.exists() else None


def mean_std(values):
    """Mean and sample standard deviation (0 for one value)."""
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) if len(values) > 1 else 0.0


def fit_and_score(est, name, X, y, train, test):
    """Fit ``est`` on the training part of data set ``name``, score it on the test part.

    Returns ``(score, wall seconds, CPU seconds, params)``: the test RMSE or ROC-AUC, the
    fit's ``time.perf_counter`` and ``time.process_time`` seconds, and ``est``'s parameters
    without ``random_state`` (paths as strings).
    """
    import os
    import time

    start, cpu = time.perf_counter(), time.process_time()
    est.fit(X[train], y[train])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    pred = est.predict(X[test]) if DATASETS[name] == "regression" else \
        positive_proba(est, X[test])
    params = {k: (str(v) if isinstance(v, os.PathLike) else v)
              for k, v in est.get_params().items() if k != "random_state"}
    return score(name, y[test], pred), seconds, cpu, params


def best_epoch_share(runs):
    """Mean best held-out epoch / epochs run of ``(best, epochs, score, CPU s)`` runs."""
    return float(np.mean([b / n for b, n, _, _ in runs]))


def print_arm_means(results, name, arms, widths=(9, 16)):
    """One line per arm of ``results[name, arm]`` (runs ``(best epoch or None, epochs run,
    test RMSE, fit CPU s)``): best-epoch share, mean epochs, RMSE and CPU seconds;
    ``widths``: the data set's and the arm's column widths."""
    wn, wa = widths
    for arm in arms:
        runs = results.get((name, arm))
        if not runs:
            continue
        share = "-" if runs[0][0] is None else f"{best_epoch_share(runs):.2f}"
        print(f"{name:{wn}} {arm:{wa}} {share:>10} {np.mean([r[1] for r in runs]):7.1f} "
              f"{np.mean([r[2] for r in runs]):7.3f} {np.mean([r[3] for r in runs]):7.1f}")


def print_arm_header(widths=(9, 16)):
    """The header line of :func:`print_arm_means`, after an empty line."""
    wn, wa = widths
    print()
    print(f"{'data set':{wn}} {'arm':{wa}} {'best/last':>10} {'epochs':>7} {'RMSE':>7} "
          f"{'CPU s':>7}")


def ours_vs_peer_rows(name, after, before, rmse_unit):
    """Record rows of the mean test RMSE, fit CPU time and epochs run of ``after`` ("ours")
    against ``before`` ("peer"), runs as in :func:`print_arm_means`."""
    return [{"what": f"{name}: {what}", "unit": unit, "better": "lower",
             "ours": float(np.mean([r[column] for r in after])),
             "peer": float(np.mean([r[column] for r in before]))}
            for what, unit, column in (("test RMSE", rmse_unit, 2), ("fit CPU time", "s", 3),
                                       ("epochs run", "epochs", 1))]
