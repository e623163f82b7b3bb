"""A diverging fit stops at the epoch it diverges, with one error shape on every family.

Every estimator that trains through skorch gets the divergence check from
``nn._skorch.build_net`` (``FiniteLossCheck``); the estimators that train by a loop of their
own raise the same ``divergence_error``. The training loss is made NaN from the second
epoch on (wrapping the step function skorch calls for every training batch, so the net and
its custom train steps run unchanged), and the test asserts the error type, its message
shape and that no third epoch ran. Walks every estimator registered in
``tests/_estimators.py`` that holds a trained torch module.
"""

import re

import numpy as np
import pytest
import torch
from skorch import NeuralNet

from tests.test_fitted_attributes import META, NO_TORCH_MODULE, _NAMES
from tests.test_rng_side_effects import _calls

#: Estimators trained by a loop of their own, with the function their loss goes through
#: (module path, name) and the step named in the message.
OWN_LOOP = {
    "SUMOVAE": ("sklearn_papers.estimation._sumo_vae", "iwae", "epoch 1",
                {"objective": "iwae"}),
    "LearnedPolicyGradient": ("sklearn_papers.rl._learned_policy_gradient", "lpg_meta_loss",
                              "meta-step 1", {}),
}

#: Transformers that train only when given targets (without, they keep their initial
#: weights): fitted with regression targets here.
TRAIN_WITH_Y = {"MPNN", "NeuralFingerprint"}

_SKORCH = [n for n in _NAMES if n not in NO_TORCH_MODULE and n not in OWN_LOOP]


def _shape(name, where):
    return (rf"^{re.escape(name)}: the training loss became nan at {where} "
            r"\(the network diverged\); \S")


def _inner_name(name, est):
    return type(est.get_params()[META[name].rstrip("_")]).__name__ if name in META else name


@pytest.mark.parametrize("name", _SKORCH)
def test_a_diverging_skorch_fit_stops_at_that_epoch_with_one_message(name, monkeypatch):
    est, (fit_args, fit_kwargs), _ = _calls(name)
    if name in TRAIN_WITH_Y:
        fit_args = (fit_args[0], np.arange(len(fit_args[0]), dtype=np.float64))
    inner = est.get_params()[META[name].rstrip("_")] if name in META else est
    inner.set_params(max_epochs=3)
    epochs_run = []
    run_single_epoch = NeuralNet.run_single_epoch

    def nan_from_epoch_2(net, iterator, training, prefix, step_fn, **fit_params):
        def step(batch, **kwargs):
            out = step_fn(batch, **kwargs)
            if training and len(net.history) >= 2:
                out = {**out, "loss": out["loss"].detach() * float("nan")}
            return out
        if training:
            epochs_run.append(len(net.history))
        return run_single_epoch(net, iterator, training, prefix, step, **fit_params)

    monkeypatch.setattr(NeuralNet, "run_single_epoch", nan_from_epoch_2)
    with pytest.raises(FloatingPointError, match=_shape(_inner_name(name, est), "epoch 2")):
        est.fit(*fit_args, **fit_kwargs)
    assert max(epochs_run) == 2, f"{name} trained on after the diverged epoch: {epochs_run}"


@pytest.mark.parametrize("name", sorted(OWN_LOOP))
def test_a_diverging_own_loop_fit_raises_the_same_message(name, monkeypatch):
    module_path, function, where, params = OWN_LOOP[name]
    est, (fit_args, fit_kwargs), _ = _calls(name)
    est.set_params(**params)
    module = __import__(module_path, fromlist=[function])
    original = getattr(module, function)

    def nan_loss(*args, **kwargs):
        out = original(*args, **kwargs)
        if isinstance(out, tuple):
            return (out[0] * float("nan"),) + out[1:]
        return out * float("nan")

    monkeypatch.setattr(module, function, nan_loss)
    with pytest.raises(FloatingPointError, match=_shape(name, where)):
        est.fit(*fit_args, **fit_kwargs)


def test_a_first_batch_already_non_finite_does_not_blame_the_learning_rate():
    from sklearn_papers.nn._skorch import build_net

    class NaNModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 1)

        def forward(self, X):
            return self.linear(X) * float("nan")

    X = np.zeros((8, 2), np.float32)
    y = np.zeros((8, 1), np.float32)
    net = build_net(NaNModule, seed=0, max_epochs=2, batch_size=4,
                    first_batch_sources="the input X")
    with pytest.raises(FloatingPointError, match=_shape("the estimator", "epoch 1") +
                       r".*first batch was already non-finite \(nan\), before any optimiser "
                       r"step, so the learning rate is not the cause: the input X may"):
        net.fit(X, y)
    assert len(net.history) == 1
