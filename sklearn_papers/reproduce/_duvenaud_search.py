"""The search protocol of Duvenaud et al. (2015): contiguous folds, random search per fold.

A row of Table 2 is a :class:`ModelSpec` (the ECFP rows here, the neural rows in
``_duvenaud_neural``); every draw of every row is one cached part. Setup:
docs/papers/duvenaud.rst.
"""

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sklearn_papers.chem._molecule_set import DatasetData
from sklearn_papers.datasets._splits import _contiguous_folds
from sklearn_papers.reproduce._parallel import cached_parts

__all__ = ["FULL_N_JOBS", "MODEL_SPECS", "QUICK_ROWS", "DatasetData", "ModelSpec", "search_parts",
           "search_rows", "select"]

#: Rows kept of malaria and photovoltaic in ``--quick`` mode (file order).
QUICK_ROWS = 2000


@dataclass(frozen=True)
class ModelSpec:
    """One row of the table: ``key`` into the papers' MSE tables, ``label`` and search
    space (``describe``) for the report, and

    - ``sample(rng, quick) -> dict``: draws one configuration;
    - ``fit_predict(params, data, train, [idx, ...], seed) -> [pred, ...]``: fits on the
      ``train`` rows, predicts the other index sets (module-level: sent to workers);
    - ``part_data(data, params) -> DatasetData``: what a fit reads of ``data`` (None:
      ``data`` whole);
    - ``code_version``: a recorded part is reused only under the same version; bump it
      when the results of ``fit_predict`` change (``test_duvenaud_records.py`` says when).
    """

    key: str
    label: str
    sample: Callable
    fit_predict: Callable
    describe: str
    part_data: Callable = None
    code_version: int = 1


def _bits_choice(rng, quick):
    return int(2 ** rng.integers(4, 10 if quick else 12))  # 16..512 quick, ..2048 full


def _sample_linear(rng, quick):
    return {"radius": int(rng.integers(1, 5)), "n_bits": _bits_choice(rng, quick),
            "alpha": float(10 ** rng.uniform(-2, 4))}


def _fit_linear(params, data, train, others, seed):
    from sklearn.linear_model import Ridge

    X = data.fingerprints(params["radius"], params["n_bits"])
    model = Ridge(alpha=params["alpha"]).fit(X[train], data.y[train])
    return [model.predict(X[idx]) for idx in others]


def _sample_mlp(rng, quick):
    return {"radius": int(rng.integers(1, 5)), "n_bits": _bits_choice(rng, quick),
            "alpha": float(10 ** rng.uniform(-5, 1)),
            "hidden": 32 if quick else int(rng.choice([50, 100, 200])),
            "lr": float(10 ** rng.uniform(-3.5, -2)),
            "max_iter": 15 if quick else 200}


def _fit_mlp(params, data, train, others, seed):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor
    from sklearn.preprocessing import StandardScaler

    X = data.fingerprints(params["radius"], params["n_bits"], dtype=np.float32)
    net = MLPRegressor(hidden_layer_sizes=(params["hidden"],), alpha=params["alpha"],
                       learning_rate_init=params["lr"], max_iter=params["max_iter"],
                       batch_size=100, random_state=seed)
    model = TransformedTargetRegressor(net, transformer=StandardScaler())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X[train], data.y[train])
    return [model.predict(X[idx]) for idx in others]


def _ecfp_part_data(data, params):
    return data.slim(params["radius"])


#: The ECFP rows of the table (the neural rows: ``_duvenaud_neural.NEURAL_SPECS``).
MODEL_SPECS = [
    ModelSpec("ecfp_linear", "ECFP + linear (Ridge)", _sample_linear, _fit_linear,
              "radius 1-4, n_bits 2^4-2^11, Ridge alpha log-uniform 1e-2..1e4",
              _ecfp_part_data),
    ModelSpec("ecfp_mlp", "ECFP + neural net (sklearn MLPRegressor, 1 hidden layer)",
              _sample_mlp, _fit_mlp,
              "radius 1-4, n_bits 2^4-2^11, L2 alpha log-uniform 1e-5..10, hidden "
              "{50, 100, 200}, Adam lr log-uniform 10^-3.5..10^-2, 200 epochs, "
              "batch 100, standardised target", _ecfp_part_data),
]

#: Worker processes of the full run's search (every draw of every row is one part).
FULL_N_JOBS = 2


def _load(quick):
    from sklearn_papers.datasets import load_cep, load_delaney, load_malaria

    n = QUICK_ROWS if quick else None
    sets = {"solubility": load_delaney(return_X_y=True),
            "malaria": load_malaria(return_X_y=True),
            "photovoltaic": load_cep(n_samples=n or 20000, return_X_y=True)}
    return [DatasetData(name, X[:n], y[:n]) for name, (X, y) in sets.items()]


def _search_part(fit_predict, params, data, train, val, test, seed):
    """One draw of the search: ``(validation MSE, test MSE)`` (a cached part)."""
    val_pred, test_pred = fit_predict(params, data, train, [val, test], seed)
    return (float(np.mean((np.asarray(val_pred) - data.y[val]) ** 2)),
            float(np.mean((np.asarray(test_pred) - data.y[test]) ** 2)))


def search_parts(data, spec, *, n_draws, quick, random_state):
    """The draws of one row's search as parts ``(key, func, args, params)`` of
    :func:`~._parallel.cached_parts`, valued ``(validation MSE, test MSE)``: every
    configuration of fold 0, then of fold 1, ..., from one generator."""
    rng = np.random.default_rng(random_state)
    parts = []
    for fold, (train, val, test) in enumerate(_contiguous_folds(len(data.y))):
        for draw in range(n_draws):
            params = spec.sample(rng, quick)
            seed = random_state * 1000 + fold * 100 + draw
            part_data = data if spec.part_data is None else spec.part_data(data, params)
            parts.append((f"{data.name}/{spec.key}/fold={fold}/draw={draw}", _search_part,
                          (spec.fit_predict, params, part_data, train, val, test, seed),
                          {"params": params, "seed": seed, "n": len(data.y),
                           "code": spec.code_version}))
    return parts


def select(data, parts, values):
    """Test MSEs and configurations of the best draw (lowest validation MSE, the first of
    equals) per fold, from :func:`search_parts`'s ``parts`` and their ``values``."""
    test_mse, chosen = [], []
    n_draws = len(parts) // len(list(_contiguous_folds(len(data.y))))
    for start in range(0, len(parts), n_draws):
        best = (np.inf, None, None)
        for part, (val_mse, part_test_mse) in zip(parts[start:start + n_draws],
                                                  values[start:start + n_draws]):
            if val_mse < best[0]:
                best = (val_mse, part[3]["params"], part_test_mse)
        test_mse.append(float(best[2]))
        chosen.append(best[1])
    return test_mse, chosen


def search_rows(ctx, plan, *, n_jobs=FULL_N_JOBS, desc="duvenaud", meanwhile=None):
    """The search of the rows ``(data, spec, n_draws)`` of ``plan``, every draw a
    part of one pool of ``n_jobs`` workers (``meanwhile`` runs here meanwhile).

    Returns ``{data name: {model key: [test MSE per fold]}}`` and ``{(data name, model
    key): [configuration per fold]}``, rows in the order of ``plan``.
    """
    row_parts = [search_parts(data, spec, n_draws=n_draws, quick=ctx.quick,
                              random_state=ctx.random_state) for data, spec, n_draws in plan]
    start = time.perf_counter()
    with ctx.progress(total=sum(map(len, row_parts)), desc=desc) as bar:
        values = cached_parts(ctx, [p for parts in row_parts for p in parts],
                              n_jobs=n_jobs, progress=bar, meanwhile=meanwhile)
    ctx.log(f"[duvenaud] {desc}: {len(values)} fits, {time.perf_counter() - start:.0f} s")
    results, chosen, values = {}, {}, iter(values)
    for (data, spec, _), parts in zip(plan, row_parts):
        mse, picked = select(data, parts, [next(values) for _ in parts])
        results.setdefault(data.name, {})[spec.key] = mse
        chosen[(data.name, spec.key)] = picked
    return results, chosen
