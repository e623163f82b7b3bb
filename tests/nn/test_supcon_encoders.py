"""Encoder blocks with a choice of normalisation (batch / group / layer / none), the
augmentations and the SupCon / cross-entropy models, tested without scikit-learn."""

import pytest
import torch
from torch import nn

from sklearn_papers.nn._encoders import (
    MIN_DENSE_GROUP_SIZE,
    BatchNorm1d,
    BatchNorm2d,
    ConvEncoder,
    MLPEncoder,
    group_count,
    make_norm,
    precise_batch_norm,
)
from sklearn_papers.nn._supcon import CrossEntropyModel, ImageAugment, SupConModel, TabularAugment


@pytest.mark.parametrize("channels, groups, expected", [(32, 8, 8), (10, 8, 5), (7, 8, 7),
                                                         (7, 3, 1), (64, 1, 1)])
def test_group_count_is_largest_divisor_not_above_request(channels, groups, expected):
    assert group_count(channels, groups) == expected


@pytest.mark.parametrize("channels, groups, min_size, expected", [
    (256, 1000, 4, 64), (16, 8, 4, 4), (12, 8, 4, 3), (6, 8, 4, 1), (3, 8, 4, 1),
    (10, 8, 2, 5), (7, 8, 2, 1)])
def test_group_count_keeps_a_minimum_group_size(channels, groups, min_size, expected):
    assert group_count(channels, groups, min_group_size=min_size) == expected


@pytest.mark.parametrize("kwargs, name", [
    (dict(num_channels=0, num_groups=8), "num_channels"),
    (dict(num_channels=8, num_groups=0), "num_groups"),
    (dict(num_channels=8, num_groups=2.5), "num_groups"),
    (dict(num_channels=8, num_groups=2, min_group_size=0), "min_group_size")])
def test_group_count_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"{name} must be an int >= 1"):
        group_count(**kwargs)


@pytest.mark.parametrize("width", [2, 3, 4, 6, 8, 12, 16, 256])
@pytest.mark.parametrize("num_groups", [1, 8, 1000])
def test_dense_group_norm_never_degenerates_or_crashes(width, num_groups):
    # One channel per group normalised every sample to the same value (the bias) and
    # crashed torch on a training batch of one; two channels gave only a sign.
    torch.manual_seed(0)
    layer = make_norm("group", width, num_groups=num_groups).train()
    assert width % layer.num_groups == 0
    assert width // layer.num_groups >= min(width, MIN_DENSE_GROUP_SIZE)
    out = layer(torch.randn(1, width))  # training batch of one
    assert out.shape == (1, width) and torch.isfinite(out).all()
    if width >= 3:  # more than a sign per group: distinct inputs give distinct outputs
        out = layer(torch.randn(50, width))
        assert len(torch.unique(out.round(decimals=5), dim=0)) == 50


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_per_sample_norm_of_one_dense_channel_is_rejected(norm):
    with pytest.raises(ValueError, match="fully connected layer of 1 channel"):
        make_norm(norm, 1)
    assert make_norm(norm, 1, spatial=True)(torch.randn(1, 1, 3, 3)).shape == (1, 1, 3, 3)


@pytest.mark.parametrize("norm, spatial, cls", [
    ("batch", False, BatchNorm1d), ("batch", True, BatchNorm2d),
    ("group", False, nn.GroupNorm), ("group", True, nn.GroupNorm),
    ("layer", False, nn.LayerNorm), ("layer", True, nn.GroupNorm),
    (None, False, nn.Identity),
])
def test_make_norm_builds_the_requested_layer(norm, spatial, cls):
    layer = make_norm(norm, 16, num_groups=4, spatial=spatial)
    assert isinstance(layer, cls)
    x = torch.randn(3, 16, 5, 5) if spatial else torch.randn(3, 16)
    assert layer(x).shape == x.shape
    if norm == "group":
        assert layer.num_groups == 4
    if norm == "layer" and spatial:
        assert layer.num_groups == 1


def test_make_norm_rejects_unknown_norm():
    with pytest.raises(ValueError, match="norm='instance'"):
        make_norm("instance", 8)


def test_group_norm_matches_its_definition():
    # Wu & He 2018, eq. 1: normalise over (C/G, H, W) of each group, per sample.
    x = torch.randn(2, 8, 3, 3, dtype=torch.float64)
    layer = make_norm("group", 8, num_groups=4, spatial=True).double()
    g = x.reshape(2, 4, -1)
    want = ((g - g.mean(-1, keepdim=True))
            / torch.sqrt(g.var(-1, unbiased=False, keepdim=True) + layer.eps)).reshape_as(x)
    torch.testing.assert_close(layer(x), want)


def test_batch_norm_accepts_a_training_batch_of_one():
    # A batch of one: torch's BatchNorm1d raises "Expected more than 1 value per channel".
    layer = BatchNorm1d(4).train()
    layer(torch.randn(8, 4))
    before = layer.running_mean.clone()
    out = layer(torch.randn(1, 4))
    assert out.shape == (1, 4) and torch.isfinite(out).all()
    torch.testing.assert_close(layer.running_mean, before)  # stats untouched
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(4).train()(torch.randn(1, 4))


def test_batch_norm_unchanged_for_ordinary_batches():
    torch.manual_seed(0)
    ours, ref = BatchNorm1d(4), nn.BatchNorm1d(4)
    x = torch.randn(6, 4)
    torch.testing.assert_close(ours(x), ref(x))
    torch.testing.assert_close(ours.running_var, ref.running_var)


@pytest.mark.parametrize("norm", ["batch", "group", "layer", None])
def test_encoders_map_to_n_components(norm):
    mlp = MLPEncoder(10, 6, hidden_layer_sizes=(12,), norm=norm, num_groups=4)
    assert mlp(torch.randn(5, 10)).shape == (5, 6)
    conv = ConvEncoder(64, 6, image_shape=(8, 8), norm=norm, num_groups=4, channels=(8, 16))
    out = conv(torch.randn(1, 64))
    assert out.shape == (1, 6) and torch.isfinite(out).all()


@pytest.mark.parametrize("norm", ["batch", "group", "layer", None])
@pytest.mark.parametrize("n_components", [1, 2, 3, 8])
def test_encoder_outputs_are_not_normalised(norm, n_components):
    # A norm on the output layer would collapse it: group norm with one feature per
    # group (n_components <= num_groups) or layer norm over 1-2 features maps every
    # input to (nearly) the same point.
    torch.manual_seed(0)
    encoders = [MLPEncoder(10, n_components, hidden_layer_sizes=(16,), norm=norm),
                ConvEncoder(64, n_components, image_shape=(8, 8), channels=(8, 16),
                            norm=norm)]
    norm_types = (nn.BatchNorm1d, nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)
    for enc, x in zip(encoders, (torch.randn(40, 10), torch.randn(40, 64))):
        last = enc.layers[-1] if isinstance(enc, MLPEncoder) else enc.head
        assert isinstance(last, nn.Linear) or (
            isinstance(last, nn.Sequential) and len(last) == 1
            and isinstance(last[0], nn.Linear))
        assert not any(isinstance(m, norm_types) for m in
                       (enc.layers[-2:] if isinstance(enc, MLPEncoder) else enc.head))
        for mode in (enc.train, enc.eval):
            mode()
            with torch.no_grad():
                z = enc(x)
            assert len(torch.unique(z.round(decimals=5), dim=0)) >= 36
            assert (z.std(dim=0) > 1e-3).all()  # no constant (or dead) feature


def test_conv_encoder_rejects_mismatched_image_shape():
    with pytest.raises(ValueError, match=r"image_shape=\(8, 7\) does not match n_features=64"):
        ConvEncoder(64, 4, image_shape=(8, 7))


def test_conv_encoder_accepts_channels_first_shape():
    conv = ConvEncoder(2 * 4 * 4, 3, image_shape=(2, 4, 4), channels=(4,))
    assert conv(torch.randn(3, 32)).shape == (3, 3)


def test_augmentations_keep_shape_and_follow_the_torch_seed():
    x = torch.rand(5, 64) * 16
    image = ImageAugment((8, 8), scale=4.0)
    tab = TabularAugment(x.mean(0), x.std(0) + 1.0, mask_prob=0.5)
    for aug in (image, tab):
        torch.manual_seed(3)
        a = aug(x)
        torch.manual_seed(3)
        b = aug(x)
        assert a.shape == x.shape
        torch.testing.assert_close(a, b)
        assert not torch.equal(a, x)


def test_image_augment_without_randomness_is_identity():
    x = torch.rand(3, 16)
    aug = ImageAugment((4, 4), scale=1.0, max_shift=0.0, max_rotation=0.0, noise=0.0)
    torch.testing.assert_close(aug(x), x, atol=1e-6, rtol=0)


def test_tabular_augment_masks_to_the_mean():
    x = torch.randn(200, 3)
    mean = torch.tensor([10.0, 20.0, 30.0])
    aug = TabularAugment(mean, torch.ones(3), noise=0.0, mask_prob=0.5)
    out = aug(x)
    masked = out != x
    assert 0.3 < masked.float().mean() < 0.7
    assert torch.equal(out[masked], mean.expand_as(out)[masked])


def test_models_shapes():
    sc = SupConModel(n_features=64, n_components=8, projection_dim=5, n_views=3,
                     encoder="conv", image_shape=(8, 8), augment=ImageAugment((8, 8), 1.0))
    x = torch.rand(4, 64)
    assert sc(x).shape == (4, 8)
    assert sc.training_output(x).shape == (4, 3, 5)
    ce = CrossEntropyModel(n_features=64, n_components=8, n_classes=3)
    assert ce(x).shape == (4, 8)
    assert ce.training_output(x).shape == (4, 3)


def test_supcon_views_are_grouped_by_sample():
    # With identity augmentation, all views of a sample are the same projection.
    sc = SupConModel(n_features=6, n_components=4, n_views=2, norm="layer").eval()
    out = sc.training_output(torch.randn(3, 6))
    torch.testing.assert_close(out[:, 0], out[:, 1])


@pytest.mark.parametrize("norm, cls", [("batch", BatchNorm1d), ("group", nn.GroupNorm),
                                       ("layer", nn.LayerNorm), (None, None)])
def test_dense_and_conv_blocks_place_the_norm_between_layer_and_relu(norm, cls):
    from sklearn_papers.nn._encoders import conv_block, dense_block

    dense = dense_block(6, 8, norm=norm, num_groups=4)
    conv = conv_block(2, 8, 4, stride=2, padding=1, norm=norm, num_groups=4)
    for layers, first in ((dense, nn.Linear), (conv, nn.Conv2d)):
        assert isinstance(layers[0], first) and isinstance(layers[-1], nn.ReLU)
        if norm is None:  # no layer at all: the parameter names of a plain stack are kept
            assert len(layers) == 2
        else:
            assert len(layers) == 3
    if norm is not None:
        assert isinstance(dense[1], cls)
        conv_cls = {"batch": BatchNorm2d}.get(norm, nn.GroupNorm)
        assert isinstance(conv[1], conv_cls)
    x = torch.randn(3, 2, 8, 8)
    assert nn.Sequential(*conv)(x).shape == (3, 8, 4, 4)
    assert nn.Sequential(*dense)(torch.randn(1, 6)).shape == (1, 8)  # batch of one


def test_precise_batch_norm_holds_the_population_statistics_of_whole_batches():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), BatchNorm1d(4))
    X = torch.randn(11, 3).numpy()
    precise = precise_batch_norm(model, X, batch_size=5)  # rows 10 and 11 left out
    with torch.no_grad():
        out = model[0](torch.as_tensor(X[:10]))
    torch.testing.assert_close(precise[1].running_mean, out.mean(0), rtol=1e-5, atol=1e-6)
    assert torch.equal(model[1].running_mean, torch.zeros(4))  # the original is untouched
    with pytest.raises(ValueError, match="at least one full batch"):
        precise_batch_norm(model, X, batch_size=12)
