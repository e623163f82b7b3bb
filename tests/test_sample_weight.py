"""``sample_weight`` is honoured or refused, never silently ignored.

Walks every estimator registered in ``tests/_estimators.py`` (``NUMERIC``, ``MOLECULE``, and
``CUSTOM`` through ``CUSTOM_DATA``), so estimators added later are covered without editing
this file. For each of ``fit``, ``fit_transform`` and ``partial_fit`` that it has:

* the method takes no ``**kwargs`` (a catch-all swallows misspelt or unsupported parameters);
* when it has no ``sample_weight`` parameter, passing one raises ``TypeError`` naming it;
* when it has one, unit weights give the unweighted fit, non-uniform weights give another
  fit (compared by outputs and ``loss_curve_``), and ``set_fit_request(sample_weight=True)``
  routes the weights of ``fit`` through a Pipeline;
* for the estimators of ``ZERO_WEIGHT_IS_DROPPING`` (deterministic settings), a weight of 0
  gives the same fit as leaving the row out.
"""

import inspect

import numpy as np
import pytest
import sklearn
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags

from sklearn_papers.utils.discovery import all_estimators
from sklearn_papers.chem.estimator_checks import MOLECULES
from tests._estimators import CUSTOM, CUSTOM_DATA, MOLECULE, NUMERIC

_CLASSES = dict(all_estimators())
_NAMES = sorted(set(NUMERIC) | set(MOLECULE) | set(CUSTOM))
FIT_METHODS = ["fit", "fit_transform", "partial_fit"]
OUTPUT_METHODS = ["transform", "predict_proba", "predict", "score_samples",
                  "decision_function"]

#: Estimators whose weight-0 rows equal left-out rows, with the parameters that make the
#: fit deterministic and independent of how the remaining rows are batched: one batch
#: holding every row, no random augmentation or dropout, no batch statistics. MPNN's
#: default ``early_stopping=True`` stays on: its validation split draws only among the
#: rows with a label and a positive weight, so weight-0 rows do not move it.
ZERO_WEIGHT_IS_DROPPING = {
    "SupConEmbedder": {"augment": None, "norm": None, "batch_size": 64},
    "CrossEntropyEmbedder": {"augment": None, "norm": None, "batch_size": 64},
    "MPNNRegressor": {"batch_size": 64},
    "MPNNClassifier": {"batch_size": 64},
    "MPNN": {"batch_size": 64},
    "NeuralFingerprintRegressor": {"batch_size": 64, "batch_norm": False,
                                   "early_stopping": True},
    "NeuralFingerprintClassifier": {"batch_size": 64, "batch_norm": False},
    "NeuralFingerprint": {"batch_size": 64, "batch_norm": False},
    "GroverRegressor": {"batch_size": 64, "dropout": 0.0},
    "GroverClassifier": {"batch_size": 64, "dropout": 0.0},
}

#: Transformers that train only when given a target ``y`` (and use the weights then).
TRAINED_ON_OPTIONAL_Y = {"MPNN", "NeuralFingerprint"}


def _data(name, est):
    """``(fit_args, fit_kwargs, output_method, output_args)`` of tiny data for ``est``."""
    if name in CUSTOM:
        data = CUSTOM_DATA[name]()
        (args, kwargs), methods = data["fit"], data.get("methods", {})
        method = next((m for m in OUTPUT_METHODS if m in methods), None)
        return tuple(args), dict(kwargs), method, (methods[method][0] if method else None)
    if name in NUMERIC:
        X = np.random.RandomState(0).uniform(0.05, 0.95, size=(24, 2))
    else:
        X = np.array(MOLECULES, dtype=object)
    y = None
    if is_regressor(est):
        y = (X.sum(1) if name in NUMERIC else np.array([len(s) for s in X], dtype=float))
    elif is_classifier(est) or get_tags(est).target_tags.required:
        y = np.arange(len(X)) % 2
    elif name in TRAINED_ON_OPTIONAL_Y:
        y = np.array([len(s) for s in X], dtype=float)
    method = next(m for m in OUTPUT_METHODS if hasattr(est, m))
    return ((X,) if y is None else (X, y)), {}, method, (X,)


def _weights(n):
    """Non-uniform weights with zeros that keep both classes of ``arange(n) % 2``."""
    w = np.where(np.arange(n) % 3 == 0, 3.0, 1.0)
    w[::4] = 0.0
    return w


def _fitted(est, method, args, kwargs):
    est = clone(est)
    if method == "partial_fit" and "classes" in inspect.signature(est.partial_fit).parameters \
            and len(args) > 1:
        kwargs = {"classes": np.unique(args[1]), **kwargs}
    getattr(est, method)(*args, **kwargs)
    return est


def _output(est, method, args):
    """What a fit is compared by: the output of ``method``, then ``loss_curve_`` when the
    estimator has one (outputs thresholded to labels or masks can hide a changed fit)."""
    out = np.asarray(getattr(est, method)(*args), dtype=np.float64).ravel()
    curve = getattr(est, "loss_curve_", None)
    if curve is not None and len(curve):
        out = np.concatenate([out, np.asarray(curve, dtype=np.float64).ravel()])
    return out


def _take(args, mask):
    return tuple(a[mask] if hasattr(a, "__len__") and len(a) == len(mask) else a
                 for a in args)


def _cases():
    for name in _NAMES:
        for method in FIT_METHODS:
            # on an instance: a meta-estimator offers the methods its estimator has
            if hasattr(_CLASSES[name], method) and hasattr(_estimator(name), method):
                yield pytest.param(name, method, id=f"{name}-{method}")


def _estimator(name):
    registry = NUMERIC if name in NUMERIC else MOLECULE if name in MOLECULE else CUSTOM
    return _CLASSES[name](**registry[name])


@pytest.mark.parametrize("name, method", list(_cases()))
def test_fit_methods_take_no_catch_all_kwargs(name, method):
    func = getattr(_CLASSES[name], method)
    if not func.__module__.startswith("sklearn_papers"):
        return  # scikit-learn's mixins forward **fit_params to fit, which is checked
    kinds = {p.kind for p in inspect.signature(func).parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds, (
        f"{name}.{method} takes **kwargs: unsupported parameters (sample_weight among them) "
        "would be silently ignored"
    )


@pytest.mark.parametrize("name, method", list(_cases()))
def test_sample_weight_honoured_or_refused(name, method):
    if name in CUSTOM and name not in CUSTOM_DATA:
        pytest.fail(f"{name} is in CUSTOM but has no CUSTOM_DATA function")
    est = _estimator(name)
    args, kwargs, out_method, out_args = _data(name, est)
    n = len(args[0])
    w = _weights(n)
    params = inspect.signature(getattr(est, method)).parameters
    forwards = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if "sample_weight" not in params and not forwards:
        with pytest.raises(TypeError, match="sample_weight"):
            _fitted(est, method, args, {**kwargs, "sample_weight": w})
        return
    if "sample_weight" not in params:
        # scikit-learn's fit_transform forwards **fit_params to fit: refused there, or
        # honoured (checked below)
        try:
            _fitted(est, method, args, {**kwargs, "sample_weight": w})
        except TypeError as exc:
            assert "sample_weight" in str(exc), f"{name}.{method}: {exc}"
            return

    unweighted = _output(_fitted(est, method, args, kwargs), out_method, out_args)
    ones = _output(_fitted(est, method, args, {**kwargs, "sample_weight": np.ones(n)}),
                   out_method, out_args)
    np.testing.assert_allclose(ones, unweighted, rtol=1e-5, atol=1e-6,
                               err_msg=f"{name}.{method}: unit weights change the fit")
    weighted = _output(_fitted(est, method, args, {**kwargs, "sample_weight": w}),
                       out_method, out_args)
    assert not np.allclose(weighted, unweighted, rtol=1e-4, atol=1e-5), (
        f"{name}.{method}: non-uniform sample_weight gives the unweighted fit"
    )
    if method == "fit":
        # metadata routing: set_fit_request(sample_weight=True) exists (scikit-learn makes
        # it from fit's signature) and routes the weights through a Pipeline
        with sklearn.config_context(enable_metadata_routing=True):
            requests = {"sample_weight": True, **{k: True for k in kwargs}}
            pipe = Pipeline([("est", clone(est).set_fit_request(**requests))])
            pipe.fit(*args, **kwargs, sample_weight=w)
            routed = _output(pipe.named_steps["est"], out_method, out_args)
        np.testing.assert_allclose(routed, weighted, rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name}: routed sample_weight differs")


@pytest.mark.parametrize("name", sorted(ZERO_WEIGHT_IS_DROPPING))
def test_zero_weight_equals_dropping_rows(name):
    if name not in _CLASSES:
        pytest.skip(f"{name} is not a public estimator")
    est = _estimator(name).set_params(**ZERO_WEIGHT_IS_DROPPING[name])
    args, kwargs, out_method, out_args = _data(name, est)
    w = _weights(len(args[0]))
    keep = w > 0
    weighted = _output(_fitted(est, "fit", args, {**kwargs, "sample_weight": w}),
                       out_method, out_args)
    dropped = _output(_fitted(est, "fit", _take(args, keep), {**kwargs,
                                                               "sample_weight": w[keep]}),
                      out_method, out_args)
    # float32 training: summation order differs, and Adam magnifies tiny differences
    np.testing.assert_allclose(weighted, dropped, rtol=1e-3, atol=1e-4,
                               err_msg=f"{name}: weight-0 rows change the fit")


# -- the weighted losses: unit weights give the unweighted loss, weight 0 = sample left out


def _torch_data(seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch, g


@pytest.mark.parametrize("variant", ["out", "in"])
def test_supcon_loss_weights(variant):
    from sklearn_papers.nn import supcon_loss

    torch, g = _torch_data()
    features = torch.randn(8, 2, 5, generator=g)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 0, 1])
    w = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.0, 3.0, 1.0, 1.0])
    plain = supcon_loss(features, labels, variant=variant)
    ones = supcon_loss(features, labels, variant=variant, sample_weight=torch.ones(8))
    torch.testing.assert_close(ones, plain)
    keep = w > 0
    dropped = supcon_loss(features[keep], labels[keep], variant=variant,
                          sample_weight=w[keep])
    torch.testing.assert_close(supcon_loss(features, labels, variant=variant,
                                           sample_weight=w), dropped)
    # integer weights on anchors: weight 2 counts an anchor twice in the mean
    assert not torch.isclose(supcon_loss(features, labels, variant=variant,
                                         sample_weight=w), plain)


@pytest.mark.parametrize("loss", ["mse", "bce", "cross_entropy"])
def test_sample_weighted_target_loss(loss):
    from sklearn_papers.nn._neural_fingerprint import MaskedBCEWithLogitsLoss, MaskedMSELoss
    from sklearn_papers.nn._skorch import SampleWeightedTargetLoss, pack_sample_weight

    torch, g = _torch_data()
    pred = torch.randn(6, 2 if loss != "cross_entropy" else 3, generator=g)
    if loss == "cross_entropy":
        target = np.array([0, 2, 1, 1, 0, 2])
        plain = torch.nn.CrossEntropyLoss()(pred, torch.as_tensor(target))
    else:
        target = np.random.RandomState(0).uniform(size=(6, 2)).astype(np.float32)
        target = (target > 0.5).astype(np.float32) if loss == "bce" else target
        target[1, 0] = np.nan
        base = MaskedMSELoss() if loss == "mse" else MaskedBCEWithLogitsLoss()
        plain = base(pred, torch.as_tensor(target))
    weighted = SampleWeightedTargetLoss(loss)
    ones = weighted(pred, torch.as_tensor(pack_sample_weight(target, np.ones(6))))
    torch.testing.assert_close(ones, plain)
    w = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 3.0])
    keep = w > 0
    got = weighted(pred, torch.as_tensor(pack_sample_weight(target, w)))
    dropped = weighted(pred[torch.as_tensor(keep)],
                       torch.as_tensor(pack_sample_weight(target[keep], w[keep])))
    torch.testing.assert_close(got, dropped)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_grover_finetune_loss_weights(task):
    from sklearn_papers.nn._grover import grover_finetune_loss

    torch, g = _torch_data()
    preds = (torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g))
    if task == "multiclass":
        target = torch.tensor([0, 2, 1, 1, 0, 2])
    else:
        target = torch.rand(6, 3, generator=g)
        target = (target > 0.5).float() if task == "binary" else target
        target[2, 1] = float("nan")
    plain = grover_finetune_loss(preds, target, task, 0.1)
    torch.testing.assert_close(
        grover_finetune_loss(preds, target, task, 0.1, sample_weight=torch.ones(6)), plain)
    w = torch.tensor([1.0, 0.0, 2.0, 0.0, 1.0, 3.0])
    keep = w > 0
    torch.testing.assert_close(
        grover_finetune_loss(preds, target, task, 0.1, sample_weight=w),
        grover_finetune_loss(tuple(p[keep] for p in preds), target[keep], task, 0.1,
                             sample_weight=w[keep]))


def test_beta_vae_and_cross_entropy_losses_weights():
    from sklearn_papers.nn import BetaVAELoss
    from sklearn_papers.nn._supcon import WeightedCrossEntropyLoss

    torch, g = _torch_data()
    X = torch.rand(5, 4, generator=g)
    output = (torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g),
              torch.randn(5, 2, generator=g))
    w = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.0])
    keep = w > 0
    for loss, args, kept in [
        (BetaVAELoss(beta=2.0), (output, X), (tuple(o[keep] for o in output), X[keep])),
        (WeightedCrossEntropyLoss(), (output[0], torch.tensor([0, 1, 3, 2, 1])),
         (output[0][keep], torch.tensor([0, 1, 3, 2, 1])[keep])),
    ]:
        torch.testing.assert_close(loss(*args, sample_weight=torch.ones(5)), loss(*args))
        torch.testing.assert_close(loss(*args, sample_weight=w),
                                   loss(*kept, sample_weight=w[keep]))


@pytest.mark.parametrize("name", sorted(TRAINED_ON_OPTIONAL_Y))
def test_untrained_featurizer_refuses_sample_weight(name):
    # without y (or with max_epochs=0) the network keeps its random weights
    est = _estimator(name)
    X = np.array(MOLECULES, dtype=object)
    with pytest.raises(TypeError, match="sample_weight"):
        est.fit(X, sample_weight=np.ones(len(X)))
    y = np.arange(len(X), dtype=float)
    with pytest.raises(TypeError, match="sample_weight"):
        clone(est).set_params(max_epochs=0).fit(X, y, sample_weight=np.ones(len(X)))
