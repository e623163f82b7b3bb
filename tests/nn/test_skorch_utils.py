"""build_net: the package's skorch conventions, and the caller's optimizer settings win."""

import pytest
import torch

from sklearn_papers.nn._skorch import build_net


def _optimizer(**kwargs):
    net = build_net(torch.nn.Linear(2, 1), seed=0, max_epochs=0, **kwargs)
    net.initialize()
    return net.optimizer_


def test_adam_is_fused_by_default_on_cpu():
    assert _optimizer().defaults["fused"] is True
    assert _optimizer(optimizer=torch.optim.AdamW).defaults["fused"] is True
    assert not _optimizer(optimizer=torch.optim.SGD).defaults.get("fused")


@pytest.mark.parametrize("setting", ["optimizer__foreach", "optimizer__differentiable"])
def test_caller_settings_are_not_combined_with_fused(setting):
    opt = _optimizer(**{setting: True})
    assert not opt.defaults.get("fused") and opt.defaults[setting.split("__")[1]] is True


def test_device_none_means_do_not_move():
    assert build_net(torch.nn.Linear(2, 1), seed=0, device=None).device is None


@pytest.mark.parametrize("device", ["meta", "xla", "nope"])
def test_check_device_refuses_devices_the_estimators_cannot_run_on(device):
    from sklearn_papers.nn._skorch import check_device

    with pytest.raises(ValueError, match=repr(device)):
        check_device(device)


def test_check_device_accepts_cpu():
    from sklearn_papers.nn._skorch import check_device

    assert check_device("cpu") == torch.device("cpu")
