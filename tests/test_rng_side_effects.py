"""No public method changes the global torch, numpy or Python RNG state.

Walks every estimator registered in ``tests/_estimators.py`` (``NUMERIC``, ``MOLECULE``, and
``CUSTOM`` through ``CUSTOM_DATA``), so estimators added later are covered without editing
this file. Each estimator is fitted once (with an int ``random_state``) and the fitted
instance is reused for every inference method it has.
"""

import random
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import is_classifier, is_regressor
from sklearn.utils import get_tags

from sklearn_papers.utils.discovery import all_estimators
from sklearn_papers.chem.estimator_checks import MOLECULES
from tests._estimators import CUSTOM, CUSTOM_DATA, MOLECULE, NUMERIC

_CLASSES = dict(all_estimators())

#: Inference methods checked, in this order, when the fitted estimator has them.
METHODS = ["predict", "predict_proba", "predict_log_proba", "decision_function",
           "transform", "inverse_transform", "score", "score_samples", "sample"]


def _numeric_data(est):
    rng = np.random.RandomState(0)
    # Two features: LogPartitionEstimator's energy lives on R^2. Values in (0, 1) suit
    # non-negative (NMF) and Bernoulli (BetaVAE "auto") models too.
    X = rng.uniform(0.05, 0.95, size=(24, 2))
    y = None
    if is_classifier(est) or get_tags(est).target_tags.required:
        y = np.arange(len(X)) % 2
    if is_regressor(est):
        y = X.sum(1)
    return X, y


def _molecule_data(est):
    X = np.array(MOLECULES, dtype=object)
    y = None
    if is_regressor(est):
        y = np.array([len(s) for s in MOLECULES], dtype=np.float64)
    elif is_classifier(est):
        y = np.arange(len(X)) % 2
    return X, y


def _calls(name):
    """``(est, fit_call, {method: call})`` where each call is ``(args, kwargs)``."""
    if name in CUSTOM:
        est = _CLASSES[name](**CUSTOM[name])
        data = CUSTOM_DATA[name]()
        return est, data["fit"], dict(data.get("methods", {}))
    registry = NUMERIC if name in NUMERIC else MOLECULE
    est = _CLASSES[name](**registry[name])
    X, y = (_numeric_data if name in NUMERIC else _molecule_data)(est)
    fit_args = (X,) if y is None else (X, y)
    methods = {}
    for method in METHODS:
        if method == "sample":
            methods[method] = ((3,), {})
        elif method == "score":
            methods[method] = (fit_args, {})
        elif method == "inverse_transform":
            methods[method] = (None, {})  # filled with transform's output below
        else:
            methods[method] = ((X,), {})
    return est, (fit_args, {}), methods


def _state():
    return (torch.get_rng_state(), np.random.get_state(), random.getstate())


def _changed(before, after):
    out = []
    if not torch.equal(before[0], after[0]):
        out.append("torch")
    b, a = before[1], after[1]
    if not (b[0] == a[0] and np.array_equal(b[1], a[1]) and b[2:] == a[2:]):
        out.append("numpy")
    if before[2] != after[2]:
        out.append("random")
    return out


def _seed_globals():
    torch.manual_seed(1234)
    np.random.seed(1234)
    random.seed(1234)


_NAMES = sorted(set(NUMERIC) | set(MOLECULE) | set(CUSTOM))


def test_every_custom_estimator_has_data():
    missing = sorted(set(CUSTOM) - set(CUSTOM_DATA))
    assert not missing, f"CUSTOM estimators without a CUSTOM_DATA function: {missing}"


@pytest.mark.parametrize("name", _NAMES)
def test_public_methods_leave_global_rng_untouched(name):
    if name in CUSTOM and name not in CUSTOM_DATA:
        pytest.fail(f"{name} is in CUSTOM but has no CUSTOM_DATA function")
    est, (fit_args, fit_kwargs), methods = _calls(name)
    if "random_state" in est.get_params() and not isinstance(
            est.get_params()["random_state"], int):
        est.set_params(random_state=0)

    leaks = {}
    _seed_globals()
    before = _state()
    est.fit(*fit_args, **fit_kwargs)
    changed = _changed(before, _state())
    if changed:
        leaks["fit"] = changed

    checked = ["fit"]
    transformed = None
    for method, (args, kwargs) in methods.items():
        if not hasattr(est, method):
            continue
        if method == "inverse_transform":
            if transformed is None:
                continue
            args = (transformed,)
        _seed_globals()
        before = _state()
        out = getattr(est, method)(*args, **kwargs)
        changed = _changed(before, _state())
        if changed:
            leaks[method] = changed
        if method == "transform":
            transformed = out
        checked.append(method)
    assert len(checked) > 1 or not methods, f"{name}: no inference method was checked"
    report = ", ".join(f"{m}: {'/'.join(c)}" for m, c in leaks.items())
    assert not leaks, f"{name}: public methods changed the global RNG state ({report})"


def _function_calls():
    """Public functions that draw random numbers, each called with ``random_state=None``
    on tiny inputs (list inputs where they take arrays: array-likes must work too)."""
    from sklearn_papers.datasets import Shapes, make_scenes
    from sklearn_papers.metrics import beta_vae_score, dci, factor_vae_score, sap_score
    from sklearn_papers.rl import make_grid_world

    rng = np.random.RandomState(0)
    factors = rng.randint(0, 3, size=(60, 2)).tolist()
    codes = (np.asarray(factors) + 0.1 * rng.normal(size=(60, 2))).tolist()
    shapes = Shapes(image_size=16)
    weights = rng.normal(size=(16 * 16, 3))
    rep = lambda X: np.asarray(X, dtype=float).reshape(len(X), -1) @ weights  # noqa: E731
    return {
        "make_scenes": lambda: make_scenes(2, image_size=16),
        "Shapes.sample_factors": lambda: shapes.sample_factors(4, random_state=None),
        "make_grid_world": lambda: make_grid_world("sparse"),
        "dci": lambda: dci(factors, codes),
        "sap_score": lambda: sap_score(factors, codes),
        "beta_vae_score": lambda: beta_vae_score(shapes, rep, batch_size=4, n_train=16,
                                                 n_eval=8),
        "factor_vae_score": lambda: factor_vae_score(shapes, rep, batch_size=4, n_train=16,
                                                     n_eval=8, n_variance_estimate=32),
    }


@pytest.mark.parametrize("name", sorted(_function_calls()))
def test_public_functions_with_random_state_none_leave_global_rng_untouched(name):
    call = _function_calls()[name]
    _seed_globals()
    before = _state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call()
    changed = _changed(before, _state())
    assert not changed, f"{name}(random_state=None) changed the global {'/'.join(changed)} RNG"
