"""Mask R-CNN torch module (nn/_mask_rcnn/): losses, targets, shapes of the whole model."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sklearn_papers.nn._detection import roi_align
from sklearn_papers.nn._mask_rcnn import (
    Backbone,
    MaskRCNNModule,
    mask_loss_sigmoid,
    mask_loss_softmax,
    paste_masks,
)


def _disc_batch(n=2, size=32, empty=(1,)):
    """Images with one bright disc (class 1) and one square (class 2) each; the images in
    ``empty`` have no objects."""
    yy, xx = np.mgrid[:size, :size] + 0.5
    images = np.full((n, 3, size, size), 0.2, dtype=np.float32)
    boxes = np.zeros((n, 2, 4), dtype=np.float32)
    labels = np.zeros((n, 2), dtype=np.int64)
    masks = np.zeros((n, 2, size, size), dtype=np.uint8)
    for i in range(n):
        if i in empty:
            continue
        disc = (yy - 10) ** 2 + (xx - 11) ** 2 <= 36
        square = (np.abs(yy - 22) <= 4) & (np.abs(xx - 22) <= 4)
        for j, (m, c) in enumerate(((disc, 1), (square, 2))):
            ys, xs = np.nonzero(m)
            boxes[i, j] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
            labels[i, j] = c
            masks[i, j] = m
            images[i, :, m] = 0.9 if c == 1 else 0.6
    return tuple(torch.from_numpy(a) for a in (images, boxes, labels, masks))


def test_sigmoid_mask_loss_reads_only_the_own_class_mask():
    torch.manual_seed(0)
    logits = torch.randn(3, 4, 5, 5)
    labels = torch.tensor([1, 4, 2])
    targets = (torch.rand(3, 5, 5) > 0.5).float()
    loss = mask_loss_sigmoid(logits, labels, targets)
    own = logits[[0, 1, 2], [0, 3, 1]]
    expected = -(targets * F.logsigmoid(own) + (1 - targets) * F.logsigmoid(-own)).mean()
    torch.testing.assert_close(loss, expected)
    other = logits.clone()
    other[0, 1:] += 5.0  # masks of the other classes do not compete
    torch.testing.assert_close(mask_loss_sigmoid(other, labels, targets), loss)
    empty = torch.zeros(0, 4, 5, 5, requires_grad=True)
    z = mask_loss_sigmoid(empty, labels[:0], targets[:0])
    z.backward()
    assert float(z.detach()) == 0.0


def test_softmax_mask_loss_is_per_pixel_cross_entropy_over_classes():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 4, 4)  # background + 2 classes
    labels = torch.tensor([2, 1])
    targets = (torch.rand(2, 4, 4) > 0.5).float()
    logp = F.log_softmax(logits, 1)
    cls = targets.long() * labels[:, None, None]
    expected = -logp.gather(1, cls[:, None]).mean()
    torch.testing.assert_close(mask_loss_softmax(logits, labels, targets), expected)
    # unlike the sigmoid loss, the other classes' logits compete
    other = logits.clone()
    other[0, 1] += 5.0
    assert not torch.allclose(mask_loss_softmax(other, labels, targets), expected)


def test_mask_target_is_roi_cut_of_the_gt_mask_and_pastes_back():
    """The target (RoIAlign of the GT mask in its RoI, thresholded) pasted back into the
    image recovers the GT mask; a RoI covering half the object keeps only that half."""
    _, boxes, _, masks = _disc_batch(1, empty=())
    gt = masks[0, 0].float()
    box = boxes[0, 0]
    target = roi_align(gt[None, None], torch.cat([torch.zeros(1), box])[None], 28, 1.0, 2,
                       True)[0, 0] >= 0.5
    pasted = paste_masks(target[None].float(), box[None], 32, 32)[0]
    iou = (pasted & gt.bool()).sum() / (pasted | gt.bool()).sum()
    assert iou > 0.95
    half = box.clone()
    half[2] = (box[0] + box[2]) / 2
    t_half = roi_align(gt[None, None], torch.cat([torch.zeros(1), half])[None], 28, 1.0, 2,
                       True)[0, 0] >= 0.5
    p_half = paste_masks(t_half[None].float(), half[None], 32, 32)[0]
    assert not p_half[:, int(half[2]) + 1:].any()  # nothing beyond the RoI
    inter = (p_half & gt.bool()).sum() / p_half.sum()
    assert inter > 0.95


def test_paste_masks_degenerate_and_empty_boxes():
    out = paste_masks(torch.ones(1, 28, 28), torch.tensor([[5.0, 5.0, 5.0, 9.0]]), 16, 16)
    assert out.shape == (1, 16, 16) and not out.any()
    assert paste_masks(torch.zeros(0, 28, 28), torch.zeros(0, 4), 8, 8).shape == (0, 8, 8)


@pytest.mark.parametrize("fpn", [False, True])
def test_backbone_strides(fpn):
    bb = Backbone(3, 8, fpn)
    feats = bb(torch.zeros(2, 3, 64, 48))
    assert [f.shape[-2:] for f in feats] == [(64 // s, 48 // s) for s in bb.strides]
    assert all(f.shape[1] == bb.out_channels for f in feats)


@pytest.mark.parametrize("fpn, roi_op, mask_loss", [(False, "align", "sigmoid"),
                                                     (True, "pool", "softmax")])
def test_losses_finite_with_an_empty_image_and_gradients_reach_every_head(fpn, roi_op,
                                                                          mask_loss):
    torch.manual_seed(0)
    images, boxes, labels, masks = _disc_batch(2, empty=(1,))
    m = MaskRCNNModule(2, 3, width=8, fpn=fpn, roi_op=roi_op, mask_loss=mask_loss,
                       anchor_sizes=(8, 16, 32) if fpn else (8, 16))
    out = m.losses(images, boxes, labels, masks)
    assert set(out) == {"loss", "loss_cls", "loss_box", "loss_mask", "loss_rpn_cls",
                        "loss_rpn_box"}
    assert all(torch.isfinite(v) for v in out.values())
    out["loss"].backward()
    for name in ("rpn.head.cls_logits", "roi_heads.box_predictor.cls_score",
                 "roi_heads.box_predictor.bbox_pred", "roi_heads.mask_predictor.mask_fcn_logits"):
        grad = m.get_submodule(name).weight.grad
        assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0, name


@pytest.mark.parametrize("roi_op", ["align", "pool"])
def test_mask_image_feeds_the_roi_pixels_to_the_mask_head(roi_op):
    """With mask_image, the mask head's first conv takes the image channels beside the
    features; the mask logits then change with the pixels inside a RoI, the gradient
    reaches those input weights, and without it the head is the paper's."""
    torch.manual_seed(0)
    images, boxes, labels, masks = _disc_batch(2, empty=(1,))
    m = MaskRCNNModule(2, 3, width=8, fpn=True, roi_op=roi_op, mask_image=True)
    plain = MaskRCNNModule(2, 3, width=8, fpn=True, roi_op=roi_op)
    c = m.backbone.out_channels
    assert m.mask_image and m.roi_heads.mask_head[0].in_channels == c + 3
    assert plain.roi_heads.mask_head[0].in_channels == c
    assert m.roi_heads.mask_head[2].in_channels == c
    out = m.losses(images, boxes, labels, masks)
    out["loss"].backward()
    grad = m.roi_heads.mask_head[0].weight.grad[:, c:]
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    rois = torch.tensor([[0.0, 4, 4, 18, 18]])
    feats = m.backbone(m._normalise(images))
    a = m.roi_heads._mask_forward(feats, rois, m._normalise(images))
    changed = images.clone()
    changed[0, :, 10, 10] = 0.0  # one pixel inside the RoI
    b = m.roi_heads._mask_forward(feats, rois, m._normalise(changed))
    assert a.shape == (1, 2, 28, 28) and not torch.allclose(a, b)
    m.eval()
    det = m.detect(images)
    assert det["masks"].shape[-2:] == (28, 28) and torch.isfinite(det["masks"]).all()


def test_local_mask_image_and_flip_averaged_detection():
    """``mask_image="local"`` feeds the standardised RoI pixels (same head width as
    True); ``detect(flip=True)`` keeps the boxes and scores and changes the masks only;
    a wrong ``mask_image`` is named."""
    torch.manual_seed(0)
    images, boxes, labels, masks = _disc_batch(2, empty=(1,))
    m = MaskRCNNModule(2, 3, width=8, fpn=True, mask_image="local", score_threshold=0.0)
    c = m.backbone.out_channels
    assert m.mask_image == "local" and m.roi_heads.mask_image_local
    assert m.roi_heads.mask_head[0].in_channels == c + 3
    assert not MaskRCNNModule(2, 3, width=8, mask_image=True).roi_heads.mask_image_local
    m.losses(images, boxes, labels, masks)["loss"].backward()
    assert m.roi_heads.mask_head[0].weight.grad[:, c:].abs().sum() > 0
    m.eval()
    plain, flipped = m.detect(images), m.detect(images, flip=True)
    for k in ("boxes", "scores", "labels", "valid"):
        assert torch.equal(plain[k], flipped[k])
    v = plain["valid"]
    assert v.any() and not torch.allclose(plain["masks"][v], flipped["masks"][v])
    with pytest.raises(ValueError, match="mask_image must be True, False or 'local'"):
        MaskRCNNModule(2, 3, mask_image="global")


def test_losses_with_no_objects_at_all():
    torch.manual_seed(0)
    images, boxes, labels, masks = _disc_batch(2, empty=(0, 1))
    m = MaskRCNNModule(2, 3, width=8)
    out = m.losses(images, boxes[:, :0], labels[:, :0], masks[:, :0])
    assert torch.isfinite(out["loss"]) and float(out["loss_mask"].detach()) == 0.0
    out["loss"].backward()  # objectness and classification still learn "background"
    assert m.roi_heads.box_predictor.cls_score.weight.grad.abs().sum() > 0


def test_detect_shapes_and_padding():
    torch.manual_seed(0)
    images, *_ = _disc_batch(3, empty=(1,))
    m = MaskRCNNModule(2, 3, width=8, detections_per_image=7, score_threshold=0.0).eval()
    det = m.detect(images)
    assert det["boxes"].shape == (3, 7, 4) and det["masks"].shape == (3, 7, 28, 28)
    v = det["valid"]
    assert ((det["labels"][v] >= 1) & (det["labels"][v] <= 2)).all()
    s = torch.where(v, det["scores"], -1.0)
    assert (s[:, :-1] >= s[:, 1:]).all()  # decreasing scores, padding last
    assert ((det["masks"] >= 0) & (det["masks"] <= 1)).all()


def test_module_rejects_fpn_with_wrong_number_of_anchor_sizes():
    with pytest.raises(ValueError, match="one size per level"):
        MaskRCNNModule(2, 3, fpn=True, anchor_sizes=(8, 16))


@pytest.mark.slow
def test_module_overfits_two_images():
    torch.manual_seed(0)
    images, boxes, labels, masks = _disc_batch(2, empty=())
    m = MaskRCNNModule(2, 3, width=8, fpn=True)
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    for _ in range(300):  # the box classifier separates the classes after ~200 steps
        out = m.losses(images, boxes, labels, masks)
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
    m.eval()
    det = m.detect(images)
    # rank the valid detections only: padding slots keep the raw (suppressed) scores
    ranked = torch.where(det["valid"][0], det["scores"][0], -1.0)
    top = ranked.argsort(descending=True, stable=True)[:2]
    assert sorted(det["labels"][0][top].tolist()) == [1, 2]
    assert out["loss_mask"].detach().item() < 0.2
