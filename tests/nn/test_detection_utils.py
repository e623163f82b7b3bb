"""Matcher, BalancedPositiveNegativeSampler and BoxCoder against hand-computed values."""

import pytest
import torch

from sklearn_papers.nn._detection_utils import (
    BalancedPositiveNegativeSampler,
    BoxCoder,
    Matcher,
)


def test_matcher_thresholds_low_quality_matches_and_padding():
    # one image, four elements, two ground-truth boxes and one padding box (IoU -1)
    iou = torch.tensor([[[0.80, 0.10, -1.0],
                         [0.50, 0.20, -1.0],
                         [0.10, 0.25, -1.0],
                         [0.05, 0.15, -1.0]]])
    matched, labels = Matcher(0.7, 0.3)(iou)
    assert matched.tolist() == [[0, 0, 1, 1]]
    assert labels.tolist() == [[1, -1, 0, 0]]
    # the second box's best element (IoU 0.25) becomes positive
    _, labels = Matcher(0.7, 0.3, allow_low_quality_matches=True)(iou)
    assert labels.tolist() == [[1, -1, 1, 0]]
    # equal thresholds leave nothing ignored
    _, labels = Matcher(0.5, 0.5)(iou)
    assert labels.tolist() == [[1, 1, 0, 0]]
    # a row without ground truth: all negative
    matched, labels = Matcher(0.7, 0.3, True)(torch.zeros((2, 3, 0)))
    assert labels.tolist() == [[0, 0, 0]] * 2 and matched.tolist() == [[0, 0, 0]] * 2
    with pytest.raises(ValueError, match="low_threshold"):
        Matcher(0.3, 0.7)


def test_sampler_counts_and_candidates():
    labels = torch.tensor([[1] * 10 + [0] * 50 + [-1] * 4,
                           [1] * 2 + [0] * 3 + [-1] * 59])
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    pos, neg = BalancedPositiveNegativeSampler(16, 0.25)(labels)
    torch.random.set_rng_state(gen_state)
    assert pos.sum(1).tolist() == [4, 2] and neg.sum(1).tolist() == [12, 3]
    assert not (pos & (labels != 1)).any() and not (neg & (labels != 0)).any()


def test_sampler_random_rows_respect_counts_and_candidates(global_random_seed):
    torch.manual_seed(global_random_seed)
    labels = torch.randint(-1, 2, (4, 200))
    labels[1] = torch.where(labels[1] == 1, 0, labels[1])  # a row without positives
    pos, neg = BalancedPositiveNegativeSampler(32, 0.25)(labels)
    assert (pos <= (labels == 1)).all() and (neg <= (labels == 0)).all()
    assert (pos.sum(1) <= 8).all() and pos[1].sum() == 0
    assert ((pos | neg).sum(1) == 32).all()  # enough negatives to fill every row
    few = torch.tensor([[1, 0, -1, -1]])
    p, n = BalancedPositiveNegativeSampler(8, 0.5)(few)
    assert p.tolist() == [[True, False, False, False]]
    assert n.tolist() == [[False, True, False, False]]


def test_box_coder_round_trip_and_weights():
    ref = torch.tensor([[0.0, 0.0, 10.0, 20.0], [5.0, 5.0, 9.0, 7.0]])
    target = torch.tensor([[1.0, 2.0, 13.0, 18.0], [4.0, 5.0, 10.0, 9.0]])
    coder = BoxCoder((10.0, 10.0, 5.0, 5.0))
    deltas = coder.encode(ref, target)
    # centre (7, 10) vs (5, 10) on a 10 x 20 box: dx = 10 * 2 / 10; dw = 5 log(12 / 10)
    torch.testing.assert_close(deltas[0], torch.tensor(
        [2.0, 0.0, 5 * torch.log(torch.tensor(1.2)).item(),
         5 * torch.log(torch.tensor(0.8)).item()]), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(coder.decode(ref, deltas), target, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(BoxCoder().decode(ref, BoxCoder().encode(ref, target)),
                               target, rtol=1e-5, atol=1e-5)
