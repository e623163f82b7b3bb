"""ProgressiveNetwork (Rusu et al. 2016) as a torch module: freezing, laterals, counts."""

import pytest
import torch

from sklearn_papers.nn._progressive import (
    LateralAdapter,
    ProgressiveNetwork,
    count_progressive_parameters,
    grow_linear,
)


def _network(adapter="mlp", norm=None, outputs=(2, 3, 2)):
    torch.manual_seed(0)
    net = ProgressiveNetwork(6, (5, 4), adapter=adapter, norm=norm)
    for n in outputs:
        net.add_task(n)
    return net


@pytest.mark.parametrize("adapter", ["mlp", "linear"])
@pytest.mark.parametrize("norm", [None, "layer"])
def test_parameter_count_is_exact(adapter, norm):
    torch.manual_seed(0)
    net = ProgressiveNetwork(6, (5, 4), adapter=adapter, norm=norm)
    counts = []
    for n in (2, 3, 2):
        net.add_task(n)
        counts.append(sum(p.numel() for p in net.parameters()))
    assert counts == count_progressive_parameters(6, (5, 4), (2, 3, 2), adapter=adapter,
                                                  norm=norm)


def test_parameter_count_by_hand():
    # Column 0: 6*5+5 + 5*4+4 + 4*2+2 = 69. Column 1 (k=1), linear laterals into layer 2
    # (5 -> 4: 20) and the head (4 -> 3: 12): 6*5+5 + 5*4+4 + 4*3+3 + 20 + 12 = 106.
    # With mlp adapters: layer 2: 1 + (5+1)*5 + 5*4 = 51; head: 1 + (4+1)*4 + 4*3 = 33.
    assert count_progressive_parameters(6, (5, 4), (2, 3), adapter="linear") == [69, 69 + 106]
    assert count_progressive_parameters(6, (5, 4), (2, 3), adapter="mlp") == [
        69, 69 + 74 + 51 + 33]


@pytest.mark.parametrize("adapter", ["mlp", "linear"])
def test_every_lateral_layer_uses_the_adapter_the_first_included(adapter):
    net = _network(adapter)
    for k, column in enumerate(net.columns):
        assert len(column.laterals) == (0 if k == 0 else 2)  # into layer 2 and the head
        for lateral in column.laterals:
            assert isinstance(lateral, LateralAdapter) and lateral.adapter == adapter
            assert hasattr(lateral, "alpha") == (adapter == "mlp")
            assert hasattr(lateral, "V") == (adapter == "mlp")
    # input widths: k earlier columns times one column's width at layer i - 1
    assert net.columns[2].laterals[0].U.in_features == (5 if adapter == "mlp" else 2 * 5)


def test_adding_a_column_freezes_the_earlier_ones_and_keeps_their_outputs():
    torch.manual_seed(0)
    net = ProgressiveNetwork(6, (5, 4))
    net.add_task(2)
    x = torch.randn(7, 6)
    before = net(x, 0).detach().clone()
    state = {k: v.clone() for k, v in net.columns[0].state_dict().items()}
    net.add_task(3)
    assert not any(p.requires_grad for p in net.columns[0].parameters())
    assert all(p.requires_grad for p in net.columns[1].parameters())
    opt = torch.optim.Adam(net.trainable_parameters(1), lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        net(x, 1).sum().backward()
        opt.step()
    assert torch.equal(net(x, 0), before)
    for k, v in net.columns[0].state_dict().items():
        assert torch.equal(v, state[k]), k


@pytest.mark.parametrize("adapter", ["mlp", "linear"])
def test_adapters_get_gradients(adapter):
    net = _network(adapter)
    x = torch.randn(8, 6)
    net(x, 2).pow(2).sum().backward()
    for lateral in net.columns[2].laterals:
        for name, p in lateral.named_parameters():
            assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert all(p.grad is None for p in net.columns[0].parameters())


def test_new_columns_do_not_change_earlier_outputs_bit_for_bit():
    net = _network(outputs=(2,))
    x = torch.randn(5, 6)
    out = net(x, 0).detach()
    net.add_task(4)
    net.add_task(2)
    assert torch.equal(net(x, 0), out)
    assert net(x, 1).shape == (5, 4) and net(x, -1).shape == (5, 2)


def test_frozen_columns_stay_in_eval_mode_when_training():
    net = _network()
    net.train()
    assert [c.training for c in net.columns] == [False, False, True]


def test_shared_mode_is_one_trunk_with_a_head_per_task():
    torch.manual_seed(0)
    net = ProgressiveNetwork(6, (5, 4), shared=True)
    for n in (2, 3):
        net.add_task(n)
    assert len(net.columns) == 1 and len(net.heads) == 2 and net.n_tasks == 2
    assert all(p.requires_grad for p in net.parameters())
    assert net(torch.randn(3, 6), 1).shape == (3, 3)


def test_grow_linear_keeps_the_old_units():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    big = grow_linear(lin, 4)
    # the old rows are copies (exact); the wider product may be computed by other BLAS
    # kernels than the narrow one, so its old columns agree to float32 rounding only
    assert torch.equal(big.weight[:2], lin.weight) and torch.equal(big.bias[:2], lin.bias)
    x = torch.randn(5, 3)
    torch.testing.assert_close(big(x)[:, :2], lin(x))
    with pytest.raises(ValueError, match="shrink"):
        grow_linear(lin, 1)


def test_only_the_latest_head_grows():
    net = _network()
    net.grow_outputs(2, 5)
    assert net(torch.randn(2, 6), 2).shape == (2, 5)
    with pytest.raises(ValueError, match="latest"):
        net.grow_outputs(0, 5)
