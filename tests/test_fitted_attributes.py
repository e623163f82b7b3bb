"""Every torch estimator spells its fitted objects one way (CONTRIBUTING.md, "Fitted objects").

* Trained through skorch: ``net_`` is the initialised ``skorch.NeuralNet``, the trained
  module is ``net_.module_`` (a ``module_`` attribute, where kept, is that same object)
  and ``loss_curve_`` ends with the net's ``history[:, "train_loss"]`` (``n_iter_``
  epochs).
* Trained by a loop of its own: ``module_`` is the trained ``torch.nn.Module``.
* Any other fitted attribute holding a ``torch.nn.Module`` is a part of that module or of
  the net's criterion (a view such as an encoder, a loss's feature comparator), never a
  second root under another name.

Walks every estimator registered in ``tests/_estimators.py`` (fitted on the data of
``tests/test_rng_side_effects.py``), so estimators added later are covered.
"""

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose
from skorch import NeuralNet

from sklearn_papers.chem._ensemble import MeanOfMembers
from tests._estimators import CUSTOM, MOLECULE, NUMERIC
from tests.test_rng_side_effects import _calls

#: Estimators that hold no trained ``torch.nn.Module`` (checked below: none is found).
NO_TORCH_MODULE = {
    # numpy and RDKit only
    "CircularFingerprint", "MoleculeStandardizer", "RDKitDescriptors",
    # multiplicative updates written as torch functions; the fitted state is arrays
    "NMF",
    # a torch distribution tuned by gradient; the fitted state is the distribution
    "LogPartitionEstimator",
    # tabular actor-critic agents (numpy tables)
    "A2C",
}

#: Meta-estimators: the spelling is checked on the fitted inner estimator.
META = {"SkipInvalidMolecules": "estimator_"}

#: Known departures, outside the families that follow the spelling yet.
KNOWN_DEPARTURES = {}

_NAMES = sorted(set(NUMERIC) | set(MOLECULE) | set(CUSTOM))


def _fitted_attributes(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def _modules_in(value):
    """``torch.nn.Module`` objects held by ``value``, through lists, tuples and dicts."""
    if isinstance(value, torch.nn.Module):
        return [value]
    if isinstance(value, (list, tuple)):
        return [m for v in value for m in _modules_in(v)]
    if isinstance(value, dict):
        return [m for v in value.values() for m in _modules_in(v)]
    return []


def _fit(name):
    est, (fit_args, fit_kwargs), _ = _calls(name)
    est.fit(*fit_args, **fit_kwargs)
    return getattr(est, META[name]) if name in META else est


def test_registry_names_in_the_lists_exist():
    listed = NO_TORCH_MODULE | set(META) | set(KNOWN_DEPARTURES)
    assert listed <= set(_NAMES), sorted(listed - set(_NAMES))


@pytest.mark.parametrize("name", sorted(NO_TORCH_MODULE))
def test_estimators_listed_without_a_torch_module_hold_none(name):
    attrs = _fitted_attributes(_fit(name))
    held = {k for k, v in attrs.items() if _modules_in(v)}
    assert not held, f"{name} holds torch modules in {sorted(held)}: take it off the list"


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DEPARTURES[n]))
    if n in KNOWN_DEPARTURES else n
    for n in _NAMES if n not in NO_TORCH_MODULE])
def test_torch_estimators_spell_fitted_objects_one_way(name):
    est = _fit(name)
    label = type(est).__name__
    attrs = _fitted_attributes(est)
    net = attrs.get("net_")
    if net is not None:
        assert isinstance(net, NeuralNet) and net.initialized_, \
            f"{label}.net_ is {type(net).__name__}, not an initialised skorch NeuralNet"
        module = net.module_
        if "module_" in attrs:
            held = attrs["module_"]
            # an ensemble's module_ holds its networks; net_ trained the first
            first = held.members[0] if isinstance(held, MeanOfMembers) else held
            assert first is module, f"{label}.module_ is not net_.module_"
            module = held
    else:
        assert isinstance(attrs.get("module_"), torch.nn.Module), (
            f"{label} keeps no trained module at net_.module_ (skorch) or module_ (own "
            f"loop); fitted attributes: {sorted(attrs)}")
        module = attrs["module_"]
    parts = {id(m) for m in module.modules()}
    criterion = getattr(net, "criterion_", None)
    if isinstance(criterion, torch.nn.Module):
        parts |= {id(m) for m in criterion.modules()}
    for key, value in attrs.items():
        if key in ("net_", "module_") or not isinstance(value, torch.nn.Module):
            continue
        assert id(value) in parts, (
            f"{label}.{key} is a torch module outside the trained net; keep it at "
            "net_.module_ (or module_) and reach it from there")

    assert isinstance(attrs.get("n_iter_"), (int, np.integer)), f"{label}.n_iter_"
    curve = attrs.get("loss_curve_")
    assert isinstance(curve, list) and all(isinstance(v, float) for v in curve), \
        f"{label}.loss_curve_ is not a list of floats"
    assert len(curve) >= est.n_iter_
    if net is not None and est.n_iter_:
        # the same float32 losses, read twice from the history
        assert_allclose(curve[-est.n_iter_:], net.history[:, "train_loss"][-est.n_iter_:],
                        rtol=1e-6)
