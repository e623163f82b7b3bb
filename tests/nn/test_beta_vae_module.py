"""The beta-VAE torch module and loss, without sklearn."""

import pytest
import torch

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
