"""DeePSiM torch modules without scikit-learn: shapes, the loss against its terms, the
frozen comparator, the discriminator pause."""

import pytest
import torch
from torch.nn import functional as F

from sklearn_papers.nn import (
    ComparatorCNN,
    DeePSiMDiscriminator,
    DeePSiMGenerator,
    DeePSiMLoss,
    FrozenComparator,
)
from sklearn_papers.nn._deepsim import (
    DeePSiMEncoder,
    DeePSiMModel,
    deepsim_train_step,
    images_to_rows,
    resolution_chain,
    rows_to_images,
)


@pytest.mark.parametrize("shape", [(8, 8, 1), (16, 16, 1), (1, 5, 1), (5, 7, 3), (1, 1, 1)])
def test_networks_map_rows_to_the_right_shapes(shape):
    torch.manual_seed(0)
    n_features = shape[0] * shape[1] * shape[2]
    rows = torch.rand(3, n_features)
    enc = DeePSiMEncoder(shape, 4, channels=4)
    gen = DeePSiMGenerator(4, shape, channels=4)
    disc = DeePSiMDiscriminator(shape, channels=4, n_condition=2)
    cnn = ComparatorCNN(shape, n_classes=3, channels=(4, 4))
    assert enc(rows).shape == (3, 4)
    out = gen(enc(rows))
    assert out.shape == (3, n_features)
    squashed = DeePSiMGenerator(4, shape, channels=4, output="sigmoid")(enc(rows))
    assert bool(((squashed > 0) & (squashed < 1)).all())
    assert disc(rows, torch.randn(3, 2)).shape == (3,)
    assert cnn(rows).shape == (3, 3)


def test_generator_starts_at_the_given_mean_brightness():
    torch.manual_seed(0)
    for output in ("linear", "sigmoid"):
        gen = DeePSiMGenerator(3, (8, 8, 1), channels=4, output_mean=0.1, output=output)
        with torch.no_grad():
            gen.out.weight.zero_()
        torch.testing.assert_close(gen(torch.randn(2, 3)), torch.full((2, 64), 0.1))


def test_resolution_chain_halves_down_to_four_pixels():
    assert resolution_chain(8, 8) == [(8, 8), (4, 4)]
    assert resolution_chain(32, 32) == [(32, 32), (16, 16), (8, 8), (4, 4)]
    assert resolution_chain(1, 64) == [(1, 64)]
    assert resolution_chain(9, 9) == [(9, 9), (5, 5)]


def test_row_layout_is_channels_last_row_major():
    images = torch.arange(2 * 3 * 4 * 2, dtype=torch.float32).reshape(2, 3, 4, 2)  # (B,H,W,C)
    rows = images.reshape(2, -1)
    nchw = rows_to_images(rows, (3, 4, 2))
    assert torch.equal(nchw, images.permute(0, 3, 1, 2))
    assert torch.equal(images_to_rows(nchw), rows)


def _loss_setup():
    torch.manual_seed(0)
    shape = (8, 8, 1)
    cnn = ComparatorCNN(shape, channels=(4, 8))
    comp = FrozenComparator(cnn, "relu2", offset=1.0, scale=2.0)
    disc = DeePSiMDiscriminator(shape, channels=4).eval()  # no dropout: deterministic
    loss = DeePSiMLoss(comp, disc, lambda_feat=0.7, lambda_adv=0.3, lambda_img=1.9,
                       feat_scale=0.5, img_scale=0.25)
    fake, real = torch.rand(5, 64), torch.rand(5, 64)
    return cnn, comp, disc, loss, fake, real


def test_loss_equals_the_weighted_sum_of_its_terms_computed_separately():
    cnn, comp, disc, loss, fake, real = _loss_setup()
    w = torch.tensor([1.0, 2.0, 0.0, 0.5, 1.5])

    def feats(x):  # the comparator's relu2 output by hand, on rows mapped to data units
        x = ((x * 2.0 + 1.0) - cnn.mean) / cnn.std
        x = cnn.pool1(F.relu(cnn.conv1(x.reshape(-1, 1, 8, 8))))
        return F.relu(cnn.conv2(x)).flatten(1)

    feat = ((feats(fake) - feats(real)) ** 2).mean(1) / 0.5
    img = ((fake - real) ** 2).mean(1) / 0.25
    adv = -torch.log(torch.sigmoid(disc(fake)))
    for weights in (None, w):
        avg = (lambda v: v.mean()) if weights is None else (
            lambda v: (v * weights).sum() / weights.sum())
        expected = 0.7 * avg(feat) + 0.3 * avg(adv) + 1.9 * avg(img)
        got = loss(fake, real, sample_weight=weights)
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
        terms = loss.terms(fake, real, sample_weight=weights)
        torch.testing.assert_close(terms["feat"], avg(feat), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(terms["adv"], avg(adv), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(terms["img"], avg(img), rtol=1e-5, atol=1e-6)


def test_discriminator_loss_is_the_gan_loss():
    _, _, disc, loss, fake, real = _loss_setup()
    expected = (-torch.log(torch.sigmoid(disc(real)))
                - torch.log(1 - torch.sigmoid(disc(fake)))).mean()
    torch.testing.assert_close(loss.discriminator_loss(fake, real), expected, rtol=1e-5,
                               atol=1e-6)


def test_lambda_adv_zero_or_no_discriminator_drops_the_adversarial_term():
    _, comp, _, _, fake, real = _loss_setup()
    loss = DeePSiMLoss(comp, None, lambda_feat=1.0, lambda_img=1.0)
    t = loss.terms(fake, real)
    torch.testing.assert_close(loss(fake, real), t["feat"] + t["img"])
    assert float(t["adv"]) == 0.0


def test_calibrate_makes_the_terms_fractions_of_variance():
    torch.manual_seed(0)
    cnn = ComparatorCNN((8, 8, 1), channels=(4, 8))
    loss = DeePSiMLoss(FrozenComparator(cnn, "relu1"), None)
    real = torch.rand(200, 64)
    loss.calibrate(real)
    mean_image = real.mean(0, keepdim=True).expand_as(real)
    # predicting the mean image costs exactly 1 in normalised pixel units
    assert float(loss.terms(mean_image, real)["img"]) == pytest.approx(1.0, rel=1e-4)
    # scaling the comparator's activations leaves the normalised feature term unchanged
    scaled = ComparatorCNN((8, 8, 1), channels=(4, 8))
    scaled.load_state_dict(cnn.state_dict())
    with torch.no_grad():
        scaled.conv1.weight.mul_(10.0)
        scaled.conv1.bias.mul_(10.0)
    loss10 = DeePSiMLoss(FrozenComparator(scaled, "relu1"), None).calibrate(real)
    fake = torch.rand(200, 64)
    assert float(loss10.terms(fake, real)["feat"]) == pytest.approx(
        float(loss.terms(fake, real)["feat"]), rel=1e-4)


def test_frozen_comparator_gets_no_gradient_and_stays_in_eval_mode():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(64, 16), torch.nn.BatchNorm1d(16),
                                 torch.nn.Dropout(0.5), torch.nn.ReLU())
    module[1].running_mean.fill_(0.3)
    before = {k: v.clone() for k, v in module.state_dict().items()}
    comp = FrozenComparator(module, "3")
    comp.train()
    assert not module.training
    x = torch.rand(4, 64, requires_grad=True)
    out = comp(x)
    torch.testing.assert_close(comp(x), out)  # no dropout, fixed statistics
    out.sum().backward()
    assert x.grad is not None and bool(x.grad.abs().sum() > 0)  # gradient flows through
    assert all(p.grad is None for p in module.parameters())
    for k, v in module.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_frozen_comparator_unknown_layer_lists_the_names():
    with pytest.raises(ValueError, match=r"'nope' is not a submodule.*relu1"):
        FrozenComparator(ComparatorCNN((8, 8, 1)), "nope")


def test_frozen_comparator_stops_at_the_layer():
    calls = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x

    module = torch.nn.Sequential(torch.nn.Linear(4, 3), Probe())
    assert FrozenComparator(module, "0")(torch.rand(2, 4)).shape == (2, 3)
    assert not calls


def test_train_step_pauses_a_discriminator_that_is_too_good():
    torch.manual_seed(0)
    shape = (8, 8, 1)
    model = DeePSiMModel(DeePSiMGenerator(2, shape, channels=4),
                         DeePSiMEncoder(shape, 2, channels=4))
    disc = DeePSiMDiscriminator(shape, channels=4)
    loss = DeePSiMLoss(FrozenComparator(ComparatorCNN(shape, channels=(4, 4))), disc,
                       lambda_adv=1.0)
    opt_g = torch.optim.Adam(model.parameters(), 1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-3)
    x = torch.rand(8, 64)
    assert deepsim_train_step(model, loss, opt_g, opt_d, x, x)["d_updated"]
    before = [p.clone() for p in disc.parameters()]
    loss._last_adv = 1e6  # the generator's adversarial loss is huge: D is winning
    step = deepsim_train_step(model, loss, opt_g, opt_d, x, x, pause_ratio=0.1)
    assert not step["d_updated"]
    assert all(torch.equal(a, b) for a, b in zip(before, disc.parameters()))
    assert step["adv"] > 0 and step["img"] > 0 and step["feat"] >= 0


def test_variational_step_adds_the_kl_term():
    torch.manual_seed(0)
    shape = (8, 8, 1)
    model = DeePSiMModel(DeePSiMGenerator(2, shape, channels=4),
                         DeePSiMEncoder(shape, 2, channels=4, variational=True),
                         variational=True)
    loss = DeePSiMLoss(FrozenComparator(ComparatorCNN(shape, channels=(4, 4))), None)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    x = torch.rand(8, 64)
    step = deepsim_train_step(model, loss, opt, None, x, x, lambda_kl=1.0)
    assert step["kl"] > 0
    model.eval()
    mu, logvar = model.encode(x)
    torch.testing.assert_close(model(x)[0], model.generator(mu))
