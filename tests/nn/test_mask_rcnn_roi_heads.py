"""The RoI heads' pieces (nn/_mask_rcnn/_roi_heads.py, _poolers.py): head shapes, RoI
pooling levels, sampling, losses, mask targets and postprocessing."""

import math

import pytest
import torch
import torch.nn.functional as F

from sklearn_papers.nn._detection import roi_align
from sklearn_papers.nn._mask_rcnn._poolers import MultiScaleRoIPool
from sklearn_papers.nn._mask_rcnn._roi_heads import (
    FastRCNNPredictor,
    MaskRCNNHeads,
    MaskRCNNPredictor,
    RoIHeads,
    TwoMLPHead,
    _at_most_per_image,
    expand_boxes,
    expected_iou_threshold,
    fastrcnn_loss,
    local_image_crops,
    maskrcnn_inference,
    paste_masks,
    project_masks_on_boxes,
)


def _heads(n_classes=2, c=4, strides=(8,), **kw):
    torch.manual_seed(0)
    heads = RoIHeads(MultiScaleRoIPool(strides, 7), TwoMLPHead(c * 49, 16),
                     FastRCNNPredictor(16, n_classes), MultiScaleRoIPool(strides, 14),
                     MaskRCNNHeads(c, 2), MaskRCNNPredictor(c, n_classes), n_classes, **kw)
    heads.box_predictor.reset_parameters()
    return heads


def test_head_shapes():
    x = torch.randn(5, 4, 7, 7)
    h = TwoMLPHead(4 * 49, 16)(x)
    logits, deltas = FastRCNNPredictor(16, 3)(h)
    assert h.shape == (5, 16) and logits.shape == (5, 4) and deltas.shape == (5, 12)
    m = MaskRCNNPredictor(4, 3)(MaskRCNNHeads(4, 2)(torch.randn(5, 4, 14, 14)))
    assert m.shape == (5, 3, 28, 28)


def test_mask_predictor_equals_its_transposed_conv_and_1x1_conv():
    """The matrix-product forward gives the values and gradients of the two conv layers
    it holds."""
    torch.manual_seed(0)
    for n_out in (1, 3):
        pred = MaskRCNNPredictor(6, n_out).double()
        x = torch.randn(4, 6, 5, 5, dtype=torch.float64, requires_grad=True)
        out = pred(x)
        ref = pred.mask_fcn_logits(F.relu(pred.conv5_mask(x)))
        torch.testing.assert_close(out, ref)
        w = torch.randn_like(out)
        params = [x, *pred.parameters()]
        for g, g_ref in zip(torch.autograd.grad((out * w).sum(), params),
                            torch.autograd.grad((ref * w).sum(), params)):
            torch.testing.assert_close(g, g_ref)
    assert pred(torch.zeros(0, 6, 5, 5, dtype=torch.float64)).shape == (0, 3, 10, 10)


def test_mask_rois_per_image_caps_each_image_at_random():
    img = torch.tensor([0, 0, 0, 0, 0, 1, 1, 2, 0, 2, 2, 2])
    torch.manual_seed(0)
    seen = torch.zeros(len(img))
    for _ in range(50):
        keep = _at_most_per_image(img, 2)
        assert torch.bincount(img[keep], minlength=3).tolist() == [2, 2, 2]
        seen += keep
    assert (seen > 0).all()  # every entry is drawn some time
    assert _at_most_per_image(img, 10).all()
    assert _at_most_per_image(img[:0], 2).shape == (0,)


def test_pooler_reads_each_roi_from_its_pyramid_level():
    torch.manual_seed(0)
    strides = (4, 8, 16)
    feats = [torch.randn(1, 2, 64 // s, 64 // s) for s in strides]
    # 16 px -> P2, 32 px -> P3, 64 px -> P4 (canonical 32 px at P3: at least 4 cells
    # across); order kept
    rois = torch.tensor([[0, 0, 0, 64, 64], [0, 4, 4, 20, 20], [0, 10, 10, 42, 42.0],
                         [0, 2, 2, 33, 33]])
    out = MultiScaleRoIPool(strides, 3)(feats, rois)
    for k, level in enumerate((2, 0, 1, 0)):
        ref = roi_align(feats[level], rois[k:k + 1], 3, 1 / strides[level], 2, True)
        torch.testing.assert_close(out[k:k + 1], ref)
    # another canonical size moves the levels: 16 px at P3
    out = MultiScaleRoIPool(strides, 3, canonical_size=16)(feats, rois[:3])
    for k, level in enumerate((2, 1, 2)):
        ref = roi_align(feats[level], rois[k:k + 1], 3, 1 / strides[level], 2, True)
        torch.testing.assert_close(out[k:k + 1], ref)
    single = MultiScaleRoIPool((8,), 3, roi_op="pool")([feats[1]], rois)
    assert single.shape == (4, 2, 3, 3)


def test_fastrcnn_loss_hand_checked_values():
    """Two RoIs, zero logits over 3 classes: cross-entropy log 3. The positive (class 2)
    predicts deltas 1 off its target in each coordinate: smooth L1 (beta 1/9)
    4 (1 - 1/18), over the 2 sampled RoIs; its class-1 deltas and the background RoI's
    deltas do not count."""
    logits = torch.zeros(2, 3, requires_grad=True)
    deltas = torch.full((2, 8), 50.0)
    deltas[0, 4:] = 1.0
    deltas.requires_grad_(True)
    loss_cls, loss_box = fastrcnn_loss(logits, deltas, torch.tensor([2, 0]),
                                       torch.zeros(1, 4))
    torch.testing.assert_close(loss_cls, torch.tensor(math.log(3.0)))
    torch.testing.assert_close(loss_box, torch.tensor(4 * (1 - 1 / 18) / 2))
    loss_box.backward()
    assert deltas.grad[0, :4].abs().sum() == 0 and deltas.grad[1].abs().sum() == 0
    assert (deltas.grad[0, 4:] == 0.5).all()


def test_losses_without_positives_are_zero_and_gradient_safe():
    heads = _heads()
    feats = [torch.randn(1, 4, 4, 4, requires_grad=True)]
    proposals = torch.tensor([[[2.0, 2.0, 14.0, 14.0], [10.0, 8.0, 30.0, 20.0]]])
    valid = torch.ones(1, 2, dtype=torch.bool)
    targets = {"boxes": torch.zeros(1, 1, 4), "labels": torch.zeros(1, 1, dtype=torch.long),
               "masks": torch.zeros(1, 1, 32, 32, dtype=torch.uint8)}
    losses = heads(feats, proposals, valid, (32, 32), targets)
    assert set(losses) == {"loss_cls", "loss_box", "loss_mask"}
    assert float(losses["loss_box"].detach()) == 0.0
    assert float(losses["loss_mask"].detach()) == 0.0
    assert float(losses["loss_cls"].detach()) > 0  # the proposals learn "background"
    sum(losses.values()).backward()
    for layer in (heads.box_predictor.bbox_pred, heads.mask_predictor.mask_fcn_logits):
        assert layer.weight.grad is not None and layer.weight.grad.abs().sum() == 0
    assert heads.box_predictor.cls_score.weight.grad.abs().sum() > 0
    assert torch.isfinite(feats[0].grad).all()


def test_ground_truth_joins_the_proposals_as_a_positive_with_zero_target():
    heads = _heads()
    proposals = torch.zeros(1, 3, 4)
    valid = torch.zeros(1, 3, dtype=torch.bool)  # no usable proposal
    box = torch.tensor([4.0, 6.0, 20.0, 18.0])
    targets = {"boxes": box.reshape(1, 1, 4), "labels": torch.tensor([[2]])}
    rois, matched, labels, reg = heads.select_training_samples(proposals, valid, targets)
    assert rois.tolist() == [[0.0, *box.tolist()]]
    assert matched.tolist() == [0] and labels.tolist() == [2]
    torch.testing.assert_close(reg, torch.zeros(1, 4))


def test_mask_targets_are_the_gt_mask_inside_each_roi():
    masks = torch.zeros(2, 2, 16, 16, dtype=torch.uint8)
    masks[1, 1, 4:12, 2:10] = 1  # image 1, instance 1
    rois = torch.tensor([[1, 2, 4, 10, 12], [1, 2, 4, 18, 12.0]])
    targets = project_masks_on_boxes(masks, rois, torch.tensor([1, 1]), 8)
    assert targets.shape == (2, 8, 8) and (targets[0] == 1).all()
    # a RoI twice as wide: the object fills its left half
    assert (targets[1][:, :4] == 1).all() and (targets[1][:, 4:] == 0).all()
    assert project_masks_on_boxes(masks, rois, torch.tensor([0, 0]), 8).sum() == 0


@pytest.mark.parametrize("scale", [1, 2])
@pytest.mark.parametrize("expand", [1.0, 1.5])
def test_mask_targets_pasted_back_give_the_small_shapes_they_came_from(scale, expand):
    """A training mask target made over an object's own box (enlarged by ``expand``, the
    image and mask enlarged ``scale`` times as ``input_scale`` does), pasted back into
    the image at input size as prediction pastes masks, is the object's mask: shapes of
    1 to 7 pixels a side, at odd and even positions, come back pixel for pixel (a
    half-pixel mismatch between target and paste shifts or grows them)."""
    g = torch.Generator().manual_seed(0)
    h = w = 24
    shapes = [torch.ones(1, 1), torch.ones(1, 2), torch.ones(3, 1), torch.eye(3),
              torch.tensor([[1.0, 1, 1], [1, 0, 1], [1, 1, 1]]), torch.ones(2, 5)]
    shapes += [(torch.rand(k, k + 1, generator=g) > 0.4).float() for k in (4, 5, 6, 7)]
    masks, boxes = [], []
    for i, shape in enumerate(shapes):
        m = torch.zeros(h, w)
        r, c = 3 + i % 5, 2 + (3 * i) % 11
        m[r:r + shape.shape[0], c:c + shape.shape[1]] = shape
        ys, xs = torch.nonzero(m, as_tuple=True)
        masks.append(m)
        boxes.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
    masks = torch.stack(masks)
    boxes = torch.tensor(boxes, dtype=torch.float32)
    # the network's pixels: image and masks enlarged bilinearly, masks thresholded at 0.5
    net = (F.interpolate(masks[:, None], scale_factor=scale, mode="bilinear",
                         align_corners=False)[:, 0] >= 0.5) if scale > 1 else masks.bool()
    rois = expand_boxes(boxes * scale, expand)
    targets = project_masks_on_boxes(net[None].to(torch.uint8), torch.cat(
        [torch.zeros(len(rois), 1), rois], 1), torch.arange(len(rois)), 28)
    pasted = paste_masks(targets, rois / scale, h, w)
    assert torch.equal(pasted, masks.bool())


def test_mask_inference_reads_each_detections_own_class():
    logits = torch.zeros(2, 3, 2, 2)
    logits[0, 1] = 4.0  # detection 0 has class 2
    logits[1, 0] = -4.0  # detection 1 has class 1
    prob = maskrcnn_inference(logits, torch.tensor([2, 1]))
    torch.testing.assert_close(prob[0], torch.full((2, 2), torch.sigmoid(torch.tensor(4.0))))
    torch.testing.assert_close(prob[1], torch.full((2, 2), torch.sigmoid(torch.tensor(-4.0))))
    soft = maskrcnn_inference(logits, torch.tensor([1, 0]), "softmax")
    torch.testing.assert_close(soft, torch.softmax(logits, 1)[[0, 1], [1, 0]])


def test_postprocessing_keeps_per_class_nms():
    """Proposals 0 and 1 overlap (IoU 0.82). Proposal 0 is class 1; proposal 1 is class 1
    or class 2 with equal scores: its class-1 box is suppressed by proposal 0's, its
    class-2 box is kept. Proposal 2 is background (both class scores under 0.05)."""
    heads = _heads(nms_thresh=0.5)
    proposals = torch.tensor([[[0.0, 0.0, 10.0, 10.0], [1.0, 0.0, 11.0, 10.0],
                               [20.0, 20.0, 30.0, 30.0]]])
    logits = torch.tensor([[0.0, 5.0, 0.0], [0.0, 4.0, 4.0], [5.0, 0.0, 0.0]])
    out = heads.postprocess_detections(logits, torch.zeros(3, 8), proposals,
                                       torch.ones(1, 3, dtype=torch.bool), (32, 32))
    assert out["boxes"].shape == (1, 6, 4)
    v = out["valid"][0]
    assert int(v.sum()) == 2 and v[:2].all()  # valid first, by decreasing score
    assert out["labels"][0, :2].tolist() == [1, 2]
    torch.testing.assert_close(out["boxes"][0, :2], proposals[0, :2])
    probs = torch.softmax(logits, -1)
    torch.testing.assert_close(out["scores"][0, :2], torch.stack([probs[0, 1], probs[1, 2]]))
    heads.nms_thresh = 0.9  # class 1 of proposal 1 no longer suppressed
    out = heads.postprocess_detections(logits, torch.zeros(3, 8), proposals,
                                       torch.ones(1, 3, dtype=torch.bool), (32, 32))
    assert int(out["valid"].sum()) == 3


def test_detection_forward_shapes_and_masks_of_padding_are_zero():
    heads = _heads(score_thresh=0.0, detections_per_img=5)
    feats = [torch.randn(2, 4, 4, 4)]
    proposals = torch.tensor([[2.0, 2.0, 14.0, 14.0], [10.0, 8.0, 30.0, 20.0]]).expand(2, 2, 4)
    valid = torch.tensor([[True, True], [False, False]])
    with torch.no_grad():
        out = heads(feats, proposals, valid, (32, 32))
    assert out["masks"].shape == (2, 4, 28, 28) and out["boxes"].shape == (2, 4, 4)
    assert not out["valid"][1].any() and out["masks"][1].abs().sum() == 0
    assert out["valid"][0].any()
    assert ((out["masks"] >= 0) & (out["masks"] <= 1)).all()


def test_detections_outside_the_owned_bounds_get_no_mask_and_the_rest_are_unchanged():
    heads = _heads(score_thresh=0.0, detections_per_img=8)
    g = torch.Generator().manual_seed(1)
    feats = [torch.randn(2, 4, 4, 4, generator=g)]
    xy = torch.rand(2, 6, 2, generator=g) * 20
    proposals = torch.cat([xy, xy + 4 + 8 * torch.rand(2, 6, 2, generator=g)], -1)
    valid = torch.ones(2, 6, dtype=torch.bool)
    offsets = torch.tensor([[0.0, 0.0], [100.0, 50.0]])
    bounds = torch.tensor([[0.0, 16.0, -float("inf"), 12.0], [60.0, 200.0, 110.0, 200.0]])
    with torch.no_grad():
        full = heads(feats, proposals, valid, (32, 32))
        owned = heads(feats, proposals, valid, (32, 32), owned=(offsets, bounds))
    shifted = full["boxes"] + offsets.repeat(1, 2)[:, None]
    cx, cy = (shifted[..., 0] + shifted[..., 2]) / 2, (shifted[..., 1] + shifted[..., 3]) / 2
    inside = ((cy >= bounds[:, :1]) & (cy < bounds[:, 1:2]) & (cx >= bounds[:, 2:3])
              & (cx < bounds[:, 3:]))
    assert torch.equal(owned["valid"], full["valid"] & inside)
    assert (full["valid"] & ~inside).any() and owned["valid"].any()
    for k in ("boxes", "scores", "labels"):
        assert torch.equal(owned[k], full[k])
    torch.testing.assert_close(owned["masks"][owned["valid"]], full["masks"][owned["valid"]])
    assert owned["masks"][~owned["valid"]].abs().sum() == 0


def test_expected_iou_threshold_keeps_crisp_masks_at_half_and_lowers_unsure_ones():
    inside = torch.ones(4, 10, 10, dtype=torch.bool)
    p = torch.zeros(4, 10, 10)
    p[0, 2:8, 2:8] = 1.0  # crisp: 0.5
    p[1, 2:8, 2:8] = 0.45  # a whole object at 0.45: kept, J = 0.45, t = 0.45 / 1.45
    p[2, 2:8, 2:8] = 0.9  # a sure core and an unsure ring: t = J / (1 + J) below 0.5
    p[2, 1, 1:9] = p[2, 8, 1:9] = p[2, 1:9, 1] = p[2, 1:9, 8] = 0.45
    t = expected_iou_threshold(p, inside)
    torch.testing.assert_close(t[0], torch.tensor(0.5))
    torch.testing.assert_close(t[1], torch.tensor(0.45 / 1.45))
    core = 36 * 0.9
    j = (core + 28 * 0.45) / (64 + 0.0)  # the ring joins: t falls below 0.45
    assert t[2] < 0.45 and torch.isclose(t[2], torch.tensor(j / (1 + j)))
    assert t[3] == 0.05  # an empty mask: the floor, nothing kept
    # pixels outside the box count as 0
    inside[1, :, 5:] = False
    assert torch.isclose(expected_iou_threshold(p, inside)[1], torch.tensor(0.45 / 1.45))


def test_paste_auto_threshold_keeps_an_unsure_small_object_that_half_drops():
    masks = torch.zeros(2, 28, 28)
    masks[0, 7:21, 7:21] = 0.45  # a 6 x 6 object read at 0.45 in its 1.5 x box
    masks[1, 7:21, 7:21] = 1.0
    boxes = torch.tensor([[10.0, 10.0, 19.0, 19.0]] * 2)
    half = paste_masks(masks, boxes, 32, 32, 0.5)
    auto = paste_masks(masks, boxes, 32, 32, "auto")
    assert not half[0].any() and auto[0].sum() > 0
    assert torch.equal(auto[1], half[1])  # a crisp mask: the same as 0.5
    assert torch.equal(auto[0], half[1])


def test_local_image_crops_ignore_brightness_and_fill_outside_with_the_roi_mean():
    """Each RoI's crop loses its mean: a brightness offset leaves it unchanged and a
    constant image gives zeros, also for a RoI half outside the image (RoIAlign reads 0
    there, which plain crops keep)."""
    g = torch.Generator().manual_seed(0)
    images = torch.rand(2, 3, 16, 20, generator=g)
    rois = torch.tensor([[0.0, 2, 3, 12, 11], [1.0, -6, 4, 6, 14], [1.0, 14, -3, 26, 9]])
    crops = local_image_crops(images, rois, 7)
    assert crops.shape == (3, 3, 7, 7)
    torch.testing.assert_close(local_image_crops(images + 2.5, rois, 7), crops)
    torch.testing.assert_close(crops.mean((2, 3)), torch.zeros(3, 3), atol=1e-6, rtol=0)
    flat = torch.full((2, 3, 16, 20), 1.7)
    assert local_image_crops(flat, rois, 7).abs().max() < 1e-5
    assert roi_align(flat, rois, 7, 1.0, 2, True)[1:].std((2, 3)).min() > 0.1
    # a contrast far above the floor is divided out (unit standard deviation); one below
    # it is kept small
    assert crops.std((2, 3)).max() < 0.5
    strong = local_image_crops(images * 400, rois, 7).std((2, 3))
    assert strong.min() > 0.98 and strong.max() <= 1.0


def test_local_mask_image_reads_standardised_crops():
    heads = _heads(c=4 + 1, mask_image_local=True)
    g = torch.Generator().manual_seed(2)
    feats = [torch.randn(1, 4, 4, 4, generator=g)]
    images = torch.rand(1, 1, 32, 32, generator=g)
    rois = torch.tensor([[0.0, 4, 4, 20, 24]])
    with torch.no_grad():
        a = heads._mask_forward(feats, rois, images)
        b = heads._mask_forward(feats, rois, images + 3.0)
        heads.mask_image_local = False
        c = heads._mask_forward(feats, rois, images + 3.0)
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, c)


def test_flip_averaged_masks_are_mirror_equivariant():
    """With ``flipped``, a detection's mask logits average its own pass and the mirrored
    one: swapping the image and its mirror (and mirroring the boxes) mirrors the masks,
    which one pass of convolutions alone does not do."""
    heads = _heads(score_thresh=0.0, detections_per_img=4)
    g = torch.Generator().manual_seed(3)
    feats = [torch.randn(1, 4, 4, 4, generator=g)]
    mirror = [feats[0].flip(-1)]
    rois = torch.tensor([[0.0, 3, 5, 17, 23], [0.0, 12, 2, 30, 15]])
    back = torch.stack([rois[:, 0], 32 - rois[:, 3], rois[:, 2], 32 - rois[:, 1],
                        rois[:, 4]], 1)
    with torch.no_grad():
        avg = heads._flipped_mask_forward(feats, rois, None, (mirror, None), 32)
        avg_m = heads._flipped_mask_forward(mirror, back, None, (feats, None), 32)
        one = heads._mask_forward(feats, rois)
        one_m = heads._mask_forward(mirror, back)
    torch.testing.assert_close(avg_m.flip(-1), avg)
    assert not torch.allclose(one_m.flip(-1), one, atol=1e-4)
    torch.testing.assert_close(avg, (one + one_m.flip(-1)) / 2)
    proposals = rois[None, :, 1:]
    valid = torch.ones(1, 2, dtype=torch.bool)
    with torch.no_grad():
        plain = heads(feats, proposals, valid, (32, 32))
        flipped = heads(feats, proposals, valid, (32, 32), flipped=(mirror, None))
    for k in ("boxes", "scores", "labels", "valid"):
        assert torch.equal(plain[k], flipped[k])
    assert not torch.allclose(plain["masks"], flipped["masks"])
