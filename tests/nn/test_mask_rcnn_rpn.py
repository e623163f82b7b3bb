"""The region proposal network's pieces (nn/_mask_rcnn/_rpn.py): anchors, head, anchor
labels, losses and proposal filtering."""

import pytest
import torch

from sklearn_papers.nn._detection import box_iou
from sklearn_papers.nn._mask_rcnn._rpn import (
    AnchorGenerator,
    RegionProposalNetwork,
    RPNHead,
)


def _rpn(sizes=((16.0,),), ratios=(1.0,), strides=(8,), channels=4, **kw):
    gen = AnchorGenerator(strides, sizes, ratios)
    return RegionProposalNetwork(gen, RPNHead(channels, gen.num_anchors_per_location()),
                                 **kw)


def test_anchor_generator_shapes_and_checks():
    gen = AnchorGenerator((4, 8), ((8.0, 16.0), (32.0, 64.0)), (0.5, 1.0, 2.0))
    assert gen.num_anchors_per_location() == 6
    feats = [torch.zeros(2, 3, 8, 6), torch.zeros(2, 3, 4, 3)]
    anchors = gen(feats)
    assert [a.shape for a in anchors] == [(8 * 6 * 6, 4), (4 * 3 * 6, 4)]
    # the first cell's square anchor of size 8 at level 0 is centred on (2, 2)
    torch.testing.assert_close(anchors[0][1], torch.tensor([-2.0, -2.0, 6.0, 6.0]))
    with pytest.raises(ValueError, match="one tuple of anchor sizes per level"):
        AnchorGenerator((4, 8), ((8.0,),), (1.0,))
    with pytest.raises(ValueError, match="same number of anchor sizes"):
        AnchorGenerator((4, 8), ((8.0,), (16.0, 32.0)), (1.0,))


def test_rpn_head_shapes_follow_the_anchor_order():
    torch.manual_seed(0)
    head = RPNHead(4, 3)
    head.reset_parameters()
    assert float(head.cls_logits.bias.detach().abs().sum()) == 0.0
    assert float(head.cls_logits.weight.detach().std()) < 0.05  # N(0, 0.01^2) draws
    feats = [torch.randn(2, 4, 5, 6), torch.randn(2, 4, 3, 2)]
    logits, deltas = head(feats)
    assert [t.shape for t in logits] == [(2, 5 * 6 * 3), (2, 3 * 2 * 3)]
    assert [t.shape for t in deltas] == [(2, 5 * 6 * 3, 4), (2, 3 * 2 * 3, 4)]
    # anchor k of cell (i, j) reads channel k of the objectness map at (i, j)
    raw = head.cls_logits(torch.relu(head.conv(feats[0])))
    assert torch.equal(logits[0][1, (2 * 6 + 4) * 3 + 1], raw[1, 1, 2, 4])
    raw_d = head.bbox_pred(torch.relu(head.conv(feats[0])))
    assert torch.equal(deltas[0][0, (1 * 6 + 3) * 3 + 2], raw_d[0, 8:12, 1, 3])


def test_anchor_labels_from_a_known_box_follow_the_matcher_thresholds():
    """Anchors of 16 px on a 4 x 4 grid of stride 8; the box of anchor (1, 1) and a small
    box near anchor (3, 3). IoU 1 -> positive; a neighbour shifted by half an anchor has
    IoU 1/3 (between 0.3 and 0.7) -> ignored; a diagonal neighbour 1/7 -> negative; the
    small box's best anchor (IoU 0.14) is positive as its object's best match; a padding
    box matches nothing."""
    rpn = _rpn()
    anchors = rpn.anchor_generator([torch.zeros(1, 4, 4, 4)])[0]
    boxes = torch.tensor([[[4.0, 4.0, 20.0, 20.0], [24.0, 24.0, 30.0, 30.0],
                           [4.0, 4.0, 20.0, 20.0]]])
    gt_valid = torch.tensor([[True, True, False]])
    labels, matched = rpn.assign_targets_to_anchors(anchors, boxes, gt_valid)
    assert labels.reshape(4, 4).tolist() == [[0, -1, 0, 0],
                                             [-1, 1, -1, 0],
                                             [0, -1, 0, 0],
                                             [0, 0, 0, 1]]
    iou = box_iou(anchors, boxes[0, :2])
    torch.testing.assert_close(iou[1 * 4 + 2, 0], torch.tensor(1 / 3))
    torch.testing.assert_close(iou[15, 1], torch.tensor(36 / 256))
    assert matched[0, 5].tolist() == [4.0, 4.0, 20.0, 20.0]
    assert matched[0, 15].tolist() == [24.0, 24.0, 30.0, 30.0]


def test_rpn_losses_without_positives_are_zero_gradient_safe():
    torch.manual_seed(0)
    rpn = _rpn(batch_size_per_image=8)
    feats = [torch.randn(2, 4, 4, 4)]
    targets = {"boxes": torch.zeros(2, 1, 4), "labels": torch.zeros(2, 1, dtype=torch.long)}
    proposals, valid, losses = rpn(feats, (32, 32), targets)
    assert set(losses) == {"loss_rpn_cls", "loss_rpn_box"}
    assert float(losses["loss_rpn_box"].detach()) == 0.0
    assert float(losses["loss_rpn_cls"].detach()) > 0
    (losses["loss_rpn_cls"] + losses["loss_rpn_box"]).backward()
    assert rpn.head.bbox_pred.weight.grad is not None
    assert float(rpn.head.bbox_pred.weight.grad.abs().sum()) == 0.0
    assert float(rpn.head.cls_logits.weight.grad.abs().sum()) > 0


def test_rpn_loss_values_on_a_hand_checked_sample():
    """Two labelled anchors, both sampled: BCE of logits (0 for the positive, 0 for the
    negative) is 2 log 2 over 2 sampled; the positive's deltas are off by 1 per
    coordinate from its target: smooth L1 (beta 1/9) 4 (1 - 1/18) over 2 sampled."""
    rpn = _rpn(batch_size_per_image=8)
    anchors = torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]])
    labels = torch.tensor([[1, 0]])
    matched = torch.tensor([[[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 10.0, 10.0]]])
    objectness = torch.zeros(1, 2, requires_grad=True)
    deltas = torch.ones(1, 2, 4, requires_grad=True)  # target deltas of the positive: 0
    loss_cls, loss_box = rpn.compute_loss(objectness, deltas, anchors, labels, matched)
    torch.testing.assert_close(loss_cls, torch.log(torch.tensor(2.0)))
    torch.testing.assert_close(loss_box, torch.tensor(4 * (1 - 1 / 18) / 2))


def test_filter_proposals_budget_clipping_and_nms_within_each_level():
    rpn = _rpn(sizes=((16.0,), (16.0,)), strides=(8, 8), pre_nms_top_n=3, post_nms_top_n=4)
    feats = [torch.zeros(1, 4, 2, 2), torch.zeros(1, 4, 2, 2)]
    anchors = rpn.anchor_generator(feats)
    # the same scores on both levels: cell 0 best, then its right neighbour (IoU 0.5 with
    # it once both are clipped to the image), then cell 3 (diagonal, IoU 0.29)
    scores = torch.tensor([[4.0, 3.0, 1.0, 2.0]])
    deltas = torch.zeros(1, 4, 4)
    boxes, valid = rpn.filter_proposals([scores, scores], [deltas, deltas], anchors,
                                        (16, 16))
    assert boxes.shape == (1, 4, 4) and valid.shape == (1, 4)
    assert (boxes >= 0).all() and (boxes <= 16).all()  # clipped to the image
    # 3 candidates per level, no suppression at NMS 0.7; the 4 best of the 6 kept
    assert valid.all()
    torch.testing.assert_close(boxes[0, 0], torch.tensor([0.0, 0.0, 12.0, 12.0]))
    rpn.nms_thresh = 0.4  # the neighbour now suppressed, the diagonal cell kept
    boxes, valid = rpn.filter_proposals([scores, scores], [deltas, deltas], anchors,
                                        (16, 16))
    # per level: cell 0 and cell 3 survive; identical boxes of the two levels both kept
    assert int(valid.sum()) == 4
    kept = boxes[0][valid[0]]
    assert sorted(map(tuple, kept.tolist())) == [(0.0, 0.0, 12.0, 12.0)] * 2 + [
        (4.0, 4.0, 16.0, 16.0)] * 2


def test_filter_proposals_equals_one_nms_over_all_levels_grouped_by_level():
    # random crowded proposals on three levels: NMS level by level keeps what one NMS
    # over all candidates, levels as groups, keeps
    from sklearn_papers.nn._detection import clip_boxes, nms_mask

    g = torch.Generator().manual_seed(0)
    rpn = _rpn(sizes=((8.0,), (16.0,), (32.0,)), strides=(4, 8, 16), pre_nms_top_n=40,
               post_nms_top_n=1000, nms_thresh=0.5)
    feats = [torch.zeros(2, 4, 32 // s, 32 // s) for s in (4, 8, 16)]
    anchors = rpn.anchor_generator(feats)
    scores = [torch.randn(2, len(a), generator=g) for a in anchors]
    deltas = [0.3 * torch.randn(2, len(a), 4, generator=g) for a in anchors]
    boxes, valid = rpn.filter_proposals(scores, deltas, anchors, (32, 32))
    cand, cand_scores, levels = [], [], []
    for lvl, (s, d, a) in enumerate(zip(scores, deltas, anchors)):
        top, idx = s.topk(min(40, s.shape[1]), dim=1)
        dec = rpn.box_coder.decode(a[idx].reshape(-1, 4), torch.stack(
            [d[i, idx[i]] for i in range(2)]).reshape(-1, 4)).reshape(2, -1, 4)
        cand.append(clip_boxes(dec, 32, 32))
        cand_scores.append(top)
        levels.append(torch.full_like(idx, lvl))
    cand, cand_scores, levels = (torch.cat(x, 1) for x in (cand, cand_scores, levels))
    wh = cand[..., 2:] - cand[..., :2]
    keep = nms_mask(cand, cand_scores, (wh > 1e-3).all(-1), levels, 0.5)
    assert 0 < int(valid.sum()) < valid.numel()  # NMS suppressed some, kept some
    for i in range(2):
        expected = cand[i][keep[i]][torch.argsort(-cand_scores[i][keep[i]], stable=True)]
        torch.testing.assert_close(boxes[i][valid[i]], expected)


def test_rpn_forward_without_targets_gives_no_losses():
    torch.manual_seed(0)
    rpn = _rpn(post_nms_top_n=5)
    proposals, valid, losses = rpn([torch.randn(3, 4, 4, 4)], (32, 32))
    assert losses == {} and proposals.shape == (3, 5, 4) and valid.shape == (3, 5)
