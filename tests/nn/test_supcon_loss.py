"""SupCon loss (Khosla et al. 2020, eqs. 2-3) against a naive double loop, and its edge cases."""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from sklearn_papers.nn._supcon import SupConLoss, supcon_loss


def _naive_supcon(features, labels=None, temperature=0.1, variant="out", contrast_mode="all",
                  base_temperature=None):
    """Eqs. 2-3 written literally with Python loops in float64; anchors without
    positives are skipped and the result is the mean over the remaining anchors."""
    f = np.asarray(features, dtype=np.float64)
    n, v = f.shape[:2]
    f = f.reshape(n, v, -1)
    f = f / np.linalg.norm(f, axis=2, keepdims=True)
    lab = np.arange(n) if labels is None else np.asarray(labels)
    rows = [(b, w) for b in range(n) for w in range(v)]
    anchors = rows if contrast_mode == "all" else [(b, 0) for b in range(n)]
    losses = []
    for (b, w) in anchors:
        zi = f[b, w]
        others = [(c, u) for (c, u) in rows if (c, u) != (b, w)]
        positives = [(c, u) for (c, u) in others if lab[c] == lab[b]]
        if not positives:
            continue
        denom = sum(math.exp(zi @ f[c, u] / temperature) for (c, u) in others)
        if variant == "out":
            li = -sum(math.log(math.exp(zi @ f[c, u] / temperature) / denom)
                      for (c, u) in positives) / len(positives)
        else:
            li = -math.log(sum(math.exp(zi @ f[c, u] / temperature) / denom
                               for (c, u) in positives) / len(positives))
        losses.append(li)
    loss = float(np.mean(losses)) if losses else 0.0
    if base_temperature is not None:
        loss *= temperature / base_temperature
    return loss


def _naive_nt_xent(features, temperature):
    """SimCLR's NT-Xent for two views: cross-entropy over the 2N-1 other rows, target =
    the other view of the same sample."""
    n = features.shape[0]
    z = F.normalize(torch.cat([features[:, 0], features[:, 1]], dim=0), dim=1).double()
    sim = z @ z.T / temperature
    sim.fill_diagonal_(-math.inf)
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target).item()


@pytest.mark.parametrize("variant", ["out", "in"])
@pytest.mark.parametrize("contrast_mode", ["all", "one"])
@pytest.mark.parametrize("n_views", [1, 2, 3])
def test_supcon_loss_matches_naive_double_loop(variant, contrast_mode, n_views,
                                               global_random_seed):
    gen = torch.Generator().manual_seed(global_random_seed)
    features = torch.randn(7, n_views, 5, generator=gen, dtype=torch.float64) * 3
    labels = torch.tensor([0, 1, 1, 2, 0, 3, 1])  # class 2 and 3 have one sample
    got = supcon_loss(features, labels, temperature=0.5, variant=variant,
                      contrast_mode=contrast_mode).item()
    want = _naive_supcon(features.numpy(), labels.numpy(), temperature=0.5, variant=variant,
                         contrast_mode=contrast_mode)
    assert got == pytest.approx(want, rel=1e-10, abs=1e-12)


def test_supcon_loss_base_temperature_rescales_and_none_does_not():
    features = torch.randn(6, 2, 4, dtype=torch.float64)
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    plain = supcon_loss(features, labels, temperature=0.2).item()
    assert plain == pytest.approx(_naive_supcon(features, labels, temperature=0.2), rel=1e-10)
    scaled = supcon_loss(features, labels, temperature=0.2, base_temperature=0.07).item()
    assert scaled == pytest.approx(plain * 0.2 / 0.07, rel=1e-12)


def test_supcon_loss_l_in_is_at_most_l_out():
    # Jensen: -log(mean) <= mean(-log), per anchor, so L_in <= L_out (paper, eq. 4 remark).
    features = torch.randn(16, 2, 8)
    labels = torch.randint(0, 3, (16,))
    assert supcon_loss(features, labels, variant="in") <= supcon_loss(features, labels) + 1e-6


def test_supcon_loss_is_invariant_to_permuting_samples_and_views(global_random_seed):
    gen = torch.Generator().manual_seed(global_random_seed)
    features = torch.randn(9, 3, 6, generator=gen, dtype=torch.float64)
    labels = torch.randint(0, 3, (9,), generator=gen)
    ref = supcon_loss(features, labels)
    perm = torch.randperm(9, generator=gen)
    assert supcon_loss(features[perm], labels[perm]).item() == pytest.approx(ref.item(),
                                                                              rel=1e-12)
    view_perm = torch.tensor([2, 0, 1])
    assert supcon_loss(features[:, view_perm], labels).item() == pytest.approx(ref.item(),
                                                                               rel=1e-12)


def test_supcon_loss_is_scale_invariant_because_it_normalises():
    features = torch.randn(8, 2, 4, dtype=torch.float64)
    labels = torch.tensor([0, 1] * 4)
    ref = supcon_loss(features, labels).item()
    assert supcon_loss(features * 1e4, labels).item() == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("variant", ["out", "in"])
@pytest.mark.parametrize("labels", [None, torch.tensor([0, 0, 1, 2, 2])])
def test_identical_features_give_log_n_minus_one(variant, labels):
    # Every logit equals 1/tau, so each anchor's softmax is uniform over N - 1 others.
    n_samples, n_views = 5, 2
    features = torch.ones(n_samples, n_views, 3)
    loss = supcon_loss(features, labels, variant=variant, temperature=0.07)
    assert loss.item() == pytest.approx(math.log(n_samples * n_views - 1), rel=1e-6)


@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0])
def test_no_labels_two_views_equals_nt_xent(temperature, global_random_seed):
    gen = torch.Generator().manual_seed(global_random_seed)
    features = torch.randn(10, 2, 6, generator=gen, dtype=torch.float64)
    got = supcon_loss(features, None, temperature=temperature).item()
    assert got == pytest.approx(_naive_nt_xent(features, temperature), rel=1e-10)


def test_anchors_without_positives_are_left_out_of_the_mean():
    # One view: samples 0 and 3 are alone in their class (SupContrast #141's input).
    features = torch.randn(4, 1, 3, dtype=torch.float64)
    labels = torch.tensor([0, 1, 1, 3])
    loss = supcon_loss(features, labels)
    z = F.normalize(features[:, 0], dim=1)
    logits = z @ z.T / 0.1
    per = []
    for i, p in [(1, 2), (2, 1)]:  # the only anchors with a positive
        others = [a for a in range(4) if a != i]
        per.append(-(logits[i, p] - torch.logsumexp(logits[i, others], dim=0)))
    per = torch.stack(per)
    assert loss.item() == pytest.approx(per.mean().item(), rel=1e-10)
    # SupContrast after PR #142 counts the two lonely anchors as zeros in the mean, so its
    # value is ours times (anchors with positives) / (all anchors); we differ on purpose.
    assert per.sum().item() / 4 == pytest.approx(loss.item() * 2 / 4, rel=1e-10)


def _edge_cases():
    yield "class of one", torch.randn(21, 1, 8), torch.tensor(
        [0] * 6 + [1] * 6 + [2] + [3] + [4] * 7)
    yield "class of one, two views", torch.randn(21, 2, 8), torch.tensor(
        [0] * 6 + [1] * 6 + [2] + [3] + [4] * 7)
    yield "one class in the batch", torch.randn(6, 2, 8), torch.zeros(6, dtype=torch.long)
    yield "single sample, single view", torch.randn(1, 1, 8), torch.tensor([0])
    yield "single sample, two views", torch.randn(1, 2, 8), torch.tensor([0])
    yield "all labels distinct, one view", torch.randn(5, 1, 8), torch.arange(5)
    yield "identical features", torch.ones(4, 2, 8), torch.tensor([0, 0, 1, 1])
    yield "huge features", torch.randn(6, 2, 8) * 1e6, torch.tensor([0, 1, 2, 0, 1, 2])
    yield "tiny features", torch.randn(6, 2, 8) * 1e-20, torch.tensor([0, 1, 2, 0, 1, 2])
    yield "low temperature", torch.randn(6, 2, 8), torch.tensor([0, 1, 2, 0, 1, 2])


@pytest.mark.parametrize("variant", ["out", "in"])
@pytest.mark.parametrize("contrast_mode", ["all", "one"])
@pytest.mark.parametrize("case", list(_edge_cases()), ids=lambda c: c[0])
def test_supcon_loss_and_gradients_are_finite_in_edge_cases(case, variant, contrast_mode):
    name, features, labels = case
    features = features.clone().requires_grad_(True)
    temperature = 0.01 if name == "low temperature" else 0.1
    loss = SupConLoss(temperature, variant=variant, contrast_mode=contrast_mode)(features,
                                                                                  labels)
    loss.backward()
    assert torch.isfinite(loss), name
    assert torch.isfinite(features.grad).all(), name


def test_no_positive_anywhere_gives_zero_loss_and_zero_gradient():
    features = torch.randn(5, 1, 4, requires_grad=True)
    loss = supcon_loss(features, torch.arange(5))
    loss.backward()
    assert loss.item() == 0.0
    assert torch.equal(features.grad, torch.zeros_like(features))


def test_supcon_loss_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"shape \(batch, n_views, dim\)"):
        supcon_loss(torch.randn(4, 8), torch.arange(4))
    with pytest.raises(ValueError, match=r"labels must have shape \(4,\)"):
        supcon_loss(torch.randn(4, 2, 8), torch.arange(5))
    with pytest.raises(ValueError, match="variant='mid'"):
        supcon_loss(torch.randn(4, 2, 8), variant="mid")


def test_supcon_loss_flattens_trailing_dimensions():
    features = torch.randn(4, 2, 3, 2, dtype=torch.float64)
    labels = torch.tensor([0, 1, 0, 1])
    assert supcon_loss(features, labels).item() == pytest.approx(
        supcon_loss(features.reshape(4, 2, 6), labels).item(), rel=1e-12)


def test_agrees_with_pytorch_metric_learning_where_definitions_coincide(global_random_seed):
    # Every anchor has a positive (two views) and the batch has negatives: both are eq. 2
    # averaged over anchors, without base-temperature rescaling.
    # pytorch-metric-learning is in the test extra: this outside check always runs
    from pytorch_metric_learning import losses as pml_losses

    gen = torch.Generator().manual_seed(global_random_seed)
    features = torch.randn(12, 2, 6, generator=gen, dtype=torch.float64)
    labels = torch.randint(0, 3, (12,), generator=gen)
    theirs = pml_losses.SupConLoss(temperature=0.2)(features.reshape(24, 6),
                                                    labels.repeat_interleave(2))
    ours = supcon_loss(features, labels, temperature=0.2)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-8)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("temperature", [0.0, -0.1, float("nan"), float("inf")])
def test_supcon_rejects_non_positive_temperature(temperature):
    features = torch.randn(4, 2, 8, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 0, 1, 1])
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        SupConLoss(temperature=temperature)
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        supcon_loss(features, labels, temperature=temperature)
    loss = SupConLoss(temperature=0.1)
    loss.temperature = temperature  # changed after construction: checked at call too
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        loss(features, labels)
    with pytest.raises(ValueError, match="base_temperature must be a finite number > 0"):
        SupConLoss(temperature=0.1, base_temperature=temperature)


def test_supcon_rejects_empty_batch():
    with pytest.raises(ValueError,
                       match=r"at least one sample and one view, got shape \(0, 2, 8\)"):
        SupConLoss()(torch.randn(0, 2, 8), torch.zeros(0, dtype=torch.long))
    with pytest.raises(ValueError, match=r"got shape \(0, 2, 8\)"):
        supcon_loss(torch.randn(0, 2, 8))
    with pytest.raises(ValueError, match=r"got shape \(3, 0, 8\)"):
        supcon_loss(torch.randn(3, 0, 8))


def test_supcon_rejects_float_labels():
    features = torch.randn(4, 2, 8, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="labels must be integer class labels, got dtype "
                                         "torch.float32"):
        SupConLoss()(features, torch.tensor([0.0, 0.5, 1.0, 1.0]))
    with pytest.raises(ValueError, match="labels must be integer"):
        supcon_loss(features, np.array([0.0, 0.0, 1.0, 1.0]))
    # integer labels, numpy or torch, still work
    a = supcon_loss(features, np.array([0, 0, 1, 1]))
    b = supcon_loss(features, torch.tensor([0, 0, 1, 1]))
    assert torch.isfinite(a) and torch.allclose(a, b)
