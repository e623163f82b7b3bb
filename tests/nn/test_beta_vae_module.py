"""The beta-VAE torch module and loss, without sklearn."""

import pytest
import torch
from torch import nn

from sklearn_papers.nn._beta_vae import BetaVAELoss, BetaVAEModule


@pytest.mark.parametrize("image_shape", [(1, 16, 16), (2, 12, 10), (1, 5, 7)])
def test_conv_module_shapes_for_any_image_size(image_shape):
    n_features = image_shape[0] * image_shape[1] * image_shape[2]
    m = BetaVAEModule(n_features, 3, encoder="conv", image_shape=image_shape, hidden=32)
    x = torch.rand(4, n_features)
    out, mu, logvar = m(x)
    assert out.shape == (4, n_features) and mu.shape == (4, 3) and logvar.shape == (4, 3)
    m.eval()
    out_eval, mu_eval, _ = m(x)
    torch.testing.assert_close(out_eval, m.decode(mu_eval))  # eval mode decodes the mean


def test_loss_is_reconstruction_plus_beta_times_kl():
    torch.manual_seed(0)
    x = (torch.rand(5, 6) > 0.5).float()
    out, mu, logvar = torch.randn(5, 6), torch.randn(5, 2), torch.randn(5, 2)
    recon = torch.nn.functional.binary_cross_entropy_with_logits(out, x, reduction="sum") / 5
    kl = sum(0.5 * (m**2 + torch.exp(lv) - 1 - lv) for m, lv in zip(mu.flatten(),
                                                                   logvar.flatten())) / 5
    got = BetaVAELoss(beta=3.0)((out, mu, logvar), x)
    torch.testing.assert_close(got, recon + 3.0 * kl)
    gauss = BetaVAELoss(beta=0.0, likelihood="gaussian")((out, mu, logvar), x)
    torch.testing.assert_close(gauss, 0.5 * ((out - x) ** 2).sum() / 5)



def _norm_layers(module):
    kinds = (nn.BatchNorm1d, nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)
    return [m for m in module.modules() if isinstance(m, kinds)]


# Hidden layers: mlp, 2 in the encoder + 2 in the decoder; conv on 16x16, encoder convs
# 16 -> 8 -> 4 and its linear layer, decoder 2 linear layers and 1 of its 2 up-sampling
# convs (the other is the output layer).
@pytest.mark.parametrize("encoder, image_shape, n_hidden", [("mlp", None, 4),
                                                           ("conv", (1, 16, 16), 6)])
@pytest.mark.parametrize("norm", ["batch", "group", "layer", None])
def test_norm_follows_every_hidden_layer_and_none_keeps_the_plain_architecture(
        encoder, image_shape, n_hidden, norm):
    n_features = 256 if encoder == "conv" else 20
    m = BetaVAEModule(n_features, 3, encoder=encoder, image_shape=image_shape, hidden=16,
                      norm=norm, num_groups=4)
    layers = _norm_layers(m)
    if norm is None:
        assert layers == []
        assert not any(isinstance(x, nn.Identity) for x in m.encoder.modules())
    else:
        assert len(layers) == n_hidden
        allowed = {"batch": {"BatchNorm1d", "BatchNorm2d"}, "group": {"GroupNorm"},
                   "layer": {"LayerNorm", "GroupNorm"}}[norm]
        assert {type(x).__name__ for x in layers} <= allowed
    m.train()
    out, mu, logvar = m(torch.rand(1, n_features))  # a training batch of one sample
    assert torch.isfinite(out).all() and mu.shape == (1, 3) and torch.isfinite(logvar).all()
