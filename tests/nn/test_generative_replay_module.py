"""Pieces of generative replay as torch modules: mean-field layer, class VAE/GAN."""

import math

import pytest
import torch
from torch.distributions import Normal, kl_divergence

from sklearn_papers.nn._generative_replay import (
    ClassGAN,
    ClassVAE,
    GeneratorNet,
    MeanFieldLinear,
    ReplayClassifierModule,
)
from sklearn_papers.nn._skorch import PassBatchLoader, build_net, loss_curve


def train_generator(model, X, *, n_steps, batch_size, lr, seed=0):
    """Fit ``model`` to the rows ``X`` with a :class:`GeneratorNet`; its loss curve."""
    per_pass = math.ceil(len(X) / batch_size)
    net = build_net(model, seed=0, net_class=GeneratorNet, n_steps=n_steps,
                    max_epochs=math.ceil(n_steps / per_pass), batch_size=batch_size, lr=lr,
                    iterator_train=PassBatchLoader,
                    iterator_train__generator=torch.Generator().manual_seed(seed))
    net.fit({"X": X.numpy()}, None)
    assert net.steps_done_ == n_steps
    return loss_curve(net)


def test_mean_field_kl_equals_torch_distributions():
    torch.manual_seed(0)
    layer = MeanFieldLinear(4, 3, prior_std=0.5)
    with torch.no_grad():
        layer.weight_logvar.normal_()
        layer.prior_weight_mu.normal_()
    expected = 0.0
    for name in ("weight", "bias"):
        q = Normal(getattr(layer, f"{name}_mu"), (0.5 * getattr(layer, f"{name}_logvar")).exp())
        p = Normal(getattr(layer, f"prior_{name}_mu"),
                   (0.5 * getattr(layer, f"prior_{name}_logvar")).exp())
        expected = expected + kl_divergence(q, p).sum()
    torch.testing.assert_close(layer.kl(), expected)


def test_posterior_becomes_the_prior():
    torch.manual_seed(0)
    layer = MeanFieldLinear(4, 3)
    assert layer.kl() > 0
    layer.posterior_to_prior()
    torch.testing.assert_close(layer.kl(), torch.zeros(()), atol=1e-6, rtol=0)


def test_mean_field_eval_is_the_mean_and_train_is_noisy():
    torch.manual_seed(0)
    layer = MeanFieldLinear(4, 3, init_logvar=-2.0)
    x = torch.randn(6, 4)
    mean = x @ layer.weight_mu.T + layer.bias_mu
    assert torch.equal(layer.eval()(x), mean)
    assert not torch.allclose(layer.train()(x), mean)


def test_growing_keeps_units_and_prior():
    torch.manual_seed(0)
    module = ReplayClassifierModule(4, (5,), 2, bayesian=True, prior_std=0.3)
    module.posterior_to_prior()
    x = torch.randn(3, 4)
    before = module.eval()(x)
    module.grow(4)
    assert module.n_outputs == 4
    torch.testing.assert_close(module(x)[:, :2], before)
    new_prior_std = (0.5 * module.layers[-1].prior_weight_logvar[2:]).exp()
    torch.testing.assert_close(new_prior_std, torch.full_like(new_prior_std, 0.3))


def test_plain_module_has_no_penalty():
    module = ReplayClassifierModule(4, (5,), 2)
    module.kl_scale = 1.0
    assert module.penalty() == 0.0


@pytest.mark.parametrize("cls", [ClassVAE, ClassGAN])
def test_generator_trains_and_samples_have_the_input_shape(cls):
    torch.manual_seed(0)
    X = torch.randn(40, 5) * 0.3 + 2.0
    model = cls(5, n_latent=3, hidden=16)
    before = [p.detach().clone() for p in model.parameters()]
    losses = train_generator(model, X, n_steps=60, batch_size=16, lr=1e-2)
    assert all(torch.isfinite(torch.tensor(losses)))
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    out = model.sample(7, generator=torch.Generator().manual_seed(1))
    assert out.shape == (7, 5) and out.dtype == torch.float32
    again = model.sample(7, generator=torch.Generator().manual_seed(1))
    assert torch.equal(out, again)


def test_vae_learns_the_class_mean():
    torch.manual_seed(0)
    X = torch.randn(64, 3) * 0.2 + torch.tensor([1.0, -2.0, 0.5])
    model = ClassVAE(3, n_latent=2, hidden=16)
    losses = train_generator(model, X, n_steps=400, batch_size=32, lr=1e-2)
    assert losses[-1] < losses[0]
    mean = model.sample(500, generator=torch.Generator().manual_seed(0)).mean(0)
    torch.testing.assert_close(mean, X.mean(0), atol=0.2, rtol=0)


def test_generator_net_stops_at_n_steps_within_a_pass():
    torch.manual_seed(0)
    X = torch.randn(10, 2)
    # 3 batches a pass (4, 4, 2 rows): 7 steps are two passes and one batch of a third
    net = build_net(ClassVAE(2, n_latent=1, hidden=4), seed=0, net_class=GeneratorNet,
                    n_steps=7, max_epochs=3, batch_size=4, iterator_train=PassBatchLoader,
                    iterator_train__generator=torch.Generator().manual_seed(0))
    net.fit({"X": X.numpy()}, None)
    assert net.steps_done_ == 7
    assert [row["train_batch_count"] for row in net.history] == [3, 3, 1]


def test_a_diverging_generator_net_raises_the_divergence_error():
    torch.manual_seed(0)
    X = torch.randn(8, 2)
    X[0, 0] = float("nan")
    net = build_net(ClassVAE(2, n_latent=1, hidden=4), seed=0, net_class=GeneratorNet,
                    n_steps=4, max_epochs=2, batch_size=4, iterator_train=PassBatchLoader,
                    iterator_train__generator=torch.Generator().manual_seed(0))
    with pytest.raises(FloatingPointError, match="the training loss became nan at epoch 1"):
        net.fit({"X": X.numpy()}, None)
