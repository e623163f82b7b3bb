"""DiscriminativeLoss: each property a peer implementation got wrong, tested one by one."""

import itertools

import numpy as np
import pytest
import torch

from sklearn_papers.nn import DiscriminativeLoss
from sklearn_papers.nn._discriminative import safe_norm
from sklearn_papers.nn._segmenter import (
    JointSegmentationLoss,
    JointSegmenterModule,
    focal_binary_cross_entropy,
)


def _naive(embedding, instance_map, dv=0.5, dd=1.5, alpha=1.0, beta=1.0, gamma=0.001):
    """The paper's Eq. 1-4 with explicit loops, for one image (numpy, float64)."""
    e = embedding.reshape(embedding.shape[0], -1).T.astype(np.float64)
    ids = instance_map.ravel()
    labels = [i for i in np.unique(ids) if i != 0]
    if not labels:
        return 0.0
    means = {c: e[ids == c].mean(0) for c in labels}
    var = np.mean([np.mean([max(np.linalg.norm(means[c] - x) - dv, 0) ** 2
                            for x in e[ids == c]]) for c in labels])
    C = len(labels)
    pairs = [(a, b) for a, b in itertools.product(labels, labels) if a != b]
    dist = (sum(max(2 * dd - np.linalg.norm(means[a] - means[b]), 0) ** 2 for a, b in pairs)
            / (C * (C - 1)) if C > 1 else 0.0)
    reg = np.mean([np.linalg.norm(means[c]) for c in labels])
    return alpha * var + beta * dist + gamma * reg


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    emb = torch.randn(3, 4, 6, 7, generator=g, dtype=torch.float64)
    maps = torch.randint(0, 4, (3, 6, 7), generator=g)
    maps[2] = torch.where(maps[2] > 1, 9, 0)  # one instance with a large id
    return emb, maps


def test_matches_naive_equations_per_image(batch):
    emb, maps = batch
    loss = DiscriminativeLoss(delta_v=0.3, delta_d=1.2, alpha=0.7, beta=1.3, gamma=0.01)
    expected = np.mean([_naive(e.numpy(), m.numpy(), 0.3, 1.2, 0.7, 1.3, 0.01)
                        for e, m in zip(emb, maps)])
    assert float(loss(emb, maps)) == pytest.approx(expected, rel=1e-10)


def test_instances_do_not_mix_across_images(batch):
    emb, maps = batch
    loss = DiscriminativeLoss()
    separate = np.mean([float(loss(emb[i:i + 1], maps[i:i + 1])) for i in range(3)])
    assert float(loss(emb, maps)) == pytest.approx(separate, rel=1e-12)


def test_background_is_excluded(batch):
    emb, maps = batch
    emb = emb.clone().requires_grad_(True)
    loss = DiscriminativeLoss()
    value = loss(emb, maps)
    value.backward()
    bg = (maps == 0)[:, None].expand_as(emb)
    assert torch.all(emb.grad[bg] == 0)
    moved = emb.detach().clone()
    moved[bg] += 100.0
    assert float(loss(moved, maps)) == pytest.approx(float(value.detach()), rel=1e-12)


def test_push_term_has_no_diagonal_and_counts_each_pair_once():
    # Two instances of one pixel each, means 1 apart: push = (2 * 1.5 - 1)^2 = 4 exactly
    # (a diagonal term would add (2 * 1.5)^2 per instance, double counting would give 8).
    emb = torch.tensor([[0.0, 1.0]], dtype=torch.float64).reshape(1, 1, 1, 2)
    maps = torch.tensor([[[1, 2]]])
    pull, push, reg = DiscriminativeLoss().terms(emb[0], maps[0])
    assert float(pull) == 0.0
    assert float(push) == pytest.approx(4.0)
    assert float(reg) == pytest.approx(0.5)
    # Three collinear means 0, 1, 2: pairs (0,1), (0,2), (1,2) -> (2^2 + 1^2 + 2^2) / 3.
    emb3 = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64).reshape(1, 1, 3)
    _, push3, _ = DiscriminativeLoss().terms(emb3, torch.tensor([[1, 2, 3]]))
    assert float(push3) == pytest.approx((4 + 1 + 4) / 3)


def test_push_term_is_zero_not_nan_with_one_instance():
    emb = torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True)
    maps = torch.zeros(4, 4, dtype=torch.long)
    maps[1:3, 1:3] = 5
    pull, push, reg = DiscriminativeLoss().terms(emb, maps)
    assert float(push.detach()) == 0.0
    assert torch.isfinite(pull) and torch.isfinite(reg)
    (pull + push + reg).backward()
    assert torch.isfinite(emb.grad).all()


def test_loss_is_zero_with_a_gradient_without_instances():
    emb = torch.randn(2, 3, 5, 5, requires_grad=True)
    value = DiscriminativeLoss()(emb, torch.zeros(2, 5, 5, dtype=torch.long))
    assert float(value.detach()) == 0.0 and value.requires_grad
    value.backward()
    assert emb.grad is not None and torch.all(emb.grad == 0)


def test_safe_norm_gives_finite_gradients_at_zero_distance():
    # Every pixel of an instance equals its mean, two means coincide, one mean is 0.
    emb = torch.zeros(1, 3, 2, 4, dtype=torch.float64, requires_grad=True)
    maps = torch.tensor([[[1, 1, 2, 2], [1, 1, 2, 2]]])
    value = DiscriminativeLoss()(emb, maps)
    value.backward()
    assert torch.isfinite(emb.grad).all()
    assert float(value.detach()) == pytest.approx((2 * 1.5) ** 2)  # only the push term
    x = torch.zeros(2, 3, requires_grad=True)
    safe_norm(x).sum().backward()
    assert torch.all(x.grad == 0)
    y = torch.tensor([[3.0, 4.0]])
    assert float(safe_norm(y)) == 5.0


def test_invariant_to_instance_id_permutation(batch):
    emb, maps = batch
    loss = DiscriminativeLoss()
    perm = torch.tensor([0, 17, 3, 250, 0, 0, 0, 0, 0, 40])  # 0 stays background
    assert float(loss(emb, perm[maps])) == pytest.approx(float(loss(emb, maps)), rel=1e-12)


def test_sample_weight_zero_equals_leaving_the_image_out(batch):
    emb, maps = batch
    loss = DiscriminativeLoss()
    w = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64)
    kept = torch.tensor([0, 2])
    expected = (float(loss(emb[:1], maps[:1])) + 2 * float(loss(emb[2:], maps[2:]))) / 3
    assert float(loss(emb, maps, sample_weight=w)) == pytest.approx(expected, rel=1e-12)
    assert float(loss(emb, maps, sample_weight=torch.tensor([1.0, 0.0, 1.0]))) == (
        pytest.approx(float(loss(emb[kept], maps[kept])), rel=1e-6))


def test_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="disagree"):
        DiscriminativeLoss()(torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="must be"):
        DiscriminativeLoss()(torch.zeros(3, 4, 4), torch.zeros(3, 4, 4, dtype=torch.long))


def test_trains_embeddings_apart_and_together():
    torch.manual_seed(0)
    emb = torch.nn.Parameter(0.01 * torch.randn(1, 2, 4, 4))
    maps = torch.zeros(1, 4, 4, dtype=torch.long)
    maps[0, :, :2], maps[0, :, 2:] = 1, 2
    opt = torch.optim.Adam([emb], lr=0.1)
    loss = DiscriminativeLoss(gamma=0.0)
    for _ in range(80):
        opt.zero_grad()
        value = loss(emb, maps)
        value.backward()
        opt.step()
    assert float(value.detach()) < 1e-3
    m1 = emb[0, :, :, :2].mean((1, 2))
    m2 = emb[0, :, :, 2:].mean((1, 2))
    assert float((m1 - m2).norm().detach()) >= 2 * 1.5 - 1e-2


# ------------------------------------------------------------------ network and joint loss
@pytest.mark.parametrize("stride", [1, 2, 4])
def test_segmenter_module_shapes(stride):
    torch.manual_seed(0)
    module = JointSegmenterModule(3, 2, embedding_dim=5, width=8, decoder_width=8,
                                  output_stride=stride)
    sem, cen, emb = module(torch.randn(2, 3, 16, 24))
    assert sem.shape == (2, 3, 16 // stride, 24 // stride)
    assert cen.shape == (2, 16 // stride, 24 // stride)
    assert emb.shape == (2, 5, 16 // stride, 24 // stride)
    with pytest.raises(ValueError, match="power of 2"):
        JointSegmenterModule(3, 2, output_stride=3)


def test_joint_loss_backpropagates_and_weights_images():
    torch.manual_seed(0)
    module = JointSegmenterModule(3, 2, embedding_dim=4, width=8, decoder_width=8)
    outputs = module(torch.randn(3, 3, 8, 8))
    targets = {"semantic": torch.randint(0, 3, (3, 4, 4)), "center": torch.rand(3, 4, 4),
               "instance": torch.randint(0, 3, (3, 4, 4))}
    loss = JointSegmentationLoss(np.ones(3))
    per_image = loss.per_image(outputs, targets)
    w = torch.tensor([1.0, 0.0, 3.0])
    value = loss(outputs, targets, sample_weight=w)
    expected = (per_image[0] + 3 * per_image[2]) / 4
    assert float(value.detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    value.backward()
    assert all(torch.isfinite(p.grad).all() for p in module.parameters() if p.grad is not None)


def test_focal_cross_entropy_down_weights_easy_pixels():
    logits = torch.tensor([[[-4.0, 4.0]]])
    target = torch.tensor([[[0.0, 1.0]]])
    plain = focal_binary_cross_entropy(logits, target, 0.0)
    focal = focal_binary_cross_entropy(logits, target, 2.0)
    assert float(focal) < float(plain) / 100
    log_sig = torch.nn.functional.logsigmoid(torch.tensor(4.0))
    assert float(plain) == pytest.approx(float(-2 * log_sig), rel=1e-6)  # 1 centre
    near = focal_binary_cross_entropy(logits, torch.tensor([[[0.9, 1.0]]]), 0.0)
    assert float(near) < float(plain)  # a pixel near a centre is hardly penalised


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"delta_v": -0.1}, r"delta_v=-0.1 must be >= 0"),
    ({"delta_v": 1.5, "delta_d": 1.5}, r"delta_v=1.5 must be smaller than delta_d=1.5"),
    ({"delta_v": 2.0, "delta_d": 1.5}, r"delta_v=2.0 must be smaller than delta_d=1.5"),
    ({"delta_v": 0.0, "delta_d": -1.0}, r"delta_d=-1.0 must be > 0"),
    ({"delta_v": float("nan")}, r"delta_v=nan must be >= 0"),
])
def test_discriminative_rejects_bad_margins(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DiscriminativeLoss(**kwargs)


def test_discriminative_accepts_zero_pull_margin():
    loss = DiscriminativeLoss(delta_v=0.0, delta_d=1.0)
    assert torch.isfinite(loss(torch.randn(1, 2, 2, 2), torch.tensor([[[0, 1], [1, 2]]])))


def test_discriminative_rejects_bad_instance_maps():
    embedding = torch.randn(1, 2, 2, 2)
    loss = DiscriminativeLoss()
    with pytest.raises(ValueError, match="instance_maps must hold integer instance ids, got "
                                         "dtype torch.float32"):
        loss(embedding, torch.tensor([[[0.0, 0.5], [1.0, 1.0]]]))
    with pytest.raises(ValueError, match="non-negative ids .* got minimum -1"):
        loss(embedding, torch.tensor([[[0, -1], [1, 1]]]))
