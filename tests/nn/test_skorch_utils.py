"""build_net: the package's skorch conventions, and the caller's optimizer settings win;
spawn_seeds: sub-seeds from numpy's SeedSequence."""

import numpy as np
import pytest
import torch

from sklearn_papers.nn._skorch import build_net, spawn_seeds


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


def _epoch_table(capsys):
    X = torch.linspace(-1, 1, 16).reshape(-1, 1).numpy()
    module = torch.nn.Linear(1, 1)
    torch.nn.init.zeros_(module.weight), torch.nn.init.zeros_(module.bias)
    net = build_net(module, seed=0, max_epochs=3, lr=0.1, batch_size=16, verbose=1)
    net.fit(X, 2 * X)
    return capsys.readouterr().out


def test_epoch_table_has_no_colour_codes_when_stdout_is_not_a_terminal(capsys, monkeypatch):
    from sklearn_papers.nn import _progress, _skorch

    plain = _epoch_table(capsys)  # captured stdout: not a terminal
    assert "\x1b[" not in plain
    assert "train_loss" in plain and len(plain.strip().splitlines()) == 2 + 3
    monkeypatch.setattr(_skorch._callbacks, "_stdout_is_terminal", lambda: True)
    monkeypatch.setattr(_progress, "_stdout_is_terminal", lambda: True)
    coloured = _epoch_table(capsys)
    assert "\x1b[" in coloured  # a terminal keeps skorch's colours
    # the same table otherwise (the durations differ; compare the other columns)
    ansi = _skorch._callbacks._ANSI_CODE
    strip = [line.split()[:2] for line in ansi.sub("", coloured).splitlines()]
    assert strip == [line.split()[:2] for line in plain.splitlines()]


def test_spawn_seeds_are_seed_sequence_children_independent_of_their_number():
    seeds = spawn_seeds(7, 4)
    assert spawn_seeds(7, 2) == seeds[:2]
    children = np.random.SeedSequence(7).spawn(4)
    assert seeds == [int(c.generate_state(1, dtype=np.uint32)[0] % np.iinfo(np.int32).max)
                     for c in children]
    assert all(0 <= s < np.iinfo(np.int32).max for s in seeds)
    assert len(set(seeds)) == 4
    # neighbouring parents give unrelated children, unlike offsets (seed + 1 of 7 is 8)
    assert not set(spawn_seeds(8, 4)) & set(seeds)


class _Estimator:
    """The common parameters as an estimator holds them (``get_params``)."""

    def __init__(self, **params):
        self._params = params
        vars(self).update(params)

    def get_params(self, deep=True):
        return dict(self._params)


def test_build_net_reads_the_common_parameters_and_an_explicit_keyword_wins():
    est = _Estimator(max_epochs=7, lr=0.5, batch_size=3, device="cpu", verbose=0)
    net = build_net(torch.nn.Linear, seed=0, estimator=est, lr=0.25)
    assert (net.max_epochs, net.lr, net.batch_size, net.device) == (7, 0.25, 3, "cpu")
    assert net.train_split is None
    names = [name for name, _ in net.callbacks]
    assert names[0] == "finite_loss"
    assert net.callbacks[0][1].estimator_name == "_Estimator"


def test_build_net_installs_the_training_callbacks_of_an_estimator_that_has_them():
    est = _Estimator(max_epochs=4, lr=1e-3, batch_size=2, early_stopping=True,
                     validation_fraction=0.25, n_iter_no_change=2,
                     lr_schedule="warmup_decay")
    with pytest.raises(ValueError, match="pass labelled="):
        build_net(torch.nn.Linear, seed=0, estimator=est)
    net = build_net(torch.nn.Linear, seed=0, estimator=est, labelled=np.ones(8, bool))
    assert [name for name, _ in net.callbacks] == ["finite_loss", "early_stopping",
                                                   "still_improving", "lr_schedule"]
    assert net.train_split.fraction == 0.25
    with pytest.raises(ValueError, match="of the 1 training molecule"):
        build_net(torch.nn.Linear, seed=0, estimator=est, labelled=np.ones(1, bool),
                  noun="molecule")


def test_build_net_takes_a_numpy_integer_batch_size():
    net = build_net(torch.nn.Linear, seed=0, batch_size=np.int64(4), module__in_features=2,
                    module__out_features=1, criterion=torch.nn.MSELoss)
    assert type(net.batch_size) is int and net.batch_size == 4
