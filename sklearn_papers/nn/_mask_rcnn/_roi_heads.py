"""The RoI heads of Mask R-CNN on padded batches, in the pieces of torchvision's
``models/detection/roi_heads.py`` (and the head modules of ``faster_rcnn.py`` and
``mask_rcnn.py``): box head and predictor, mask head and predictor, their losses
(:func:`fastrcnn_loss`, :func:`maskrcnn_loss`), the mask targets
(:func:`project_masks_on_boxes`), inference (:func:`maskrcnn_inference`,
:func:`paste_masks`, :func:`paste_mask_crops`) and :class:`RoIHeads`, which matches and
samples the proposals and composes the rest.

Shapes: ``features`` is a list of maps ``(N, C, H_l, W_l)``; proposals are padded,
``(N, P, 4)`` with a validity mask ``(N, P)``; ground truth is padded to ``G`` instances,
``boxes (N, G, 4)`` float32 in pixels, ``labels (N, G)`` int64 (0 for padding, objects
``1..n_classes``), ``masks (N, G, H, W)`` uint8 / bool. A RoI is ``(image index, x1, y1,
x2, y2)``.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV.
Girshick, R. (2015). Fast R-CNN. ICCV.
Lipton, Z. C., Elkan, C. and Narayanaswamy, B. (2014). Optimal thresholding of classifiers
to maximize F1 measure. ECML PKDD.
"""

import torch
import torch.nn.functional as F
from torch import nn

from sklearn_papers.nn._detection import (
    _roi_align,
    box_iou,
    clip_boxes,
    nms_mask,
    roi_align_crops,
)
from sklearn_papers.nn._detection_utils import (
    BalancedPositiveNegativeSampler,
    BoxCoder,
    Matcher,
    gather_rows,
)
from sklearn_papers.nn._mask_rcnn._rpn import SMOOTH_L1_BETA

__all__ = ["FastRCNNPredictor", "MaskRCNNHeads", "MaskRCNNPredictor", "RoIHeads",
           "TwoMLPHead", "expand_boxes", "expected_iou_threshold", "fastrcnn_loss",
           "local_image_crops", "mask_loss_sigmoid", "mask_loss_softmax",
           "maskrcnn_inference", "maskrcnn_loss", "paste_mask_crops", "paste_masks",
           "project_masks_on_boxes"]

BOX_WEIGHTS = (10.0, 10.0, 5.0, 5.0)  # Fast R-CNN's box-head delta weights
#: Floor added to the standard deviation of each RoI's pixels by
#: :func:`local_image_crops`, in units of the training images' pixel standard deviation
#: (the images reach the heads normalised by it): a RoI whose pixels vary much less
#: than the training images' do keeps its small contrast instead of being stretched.
LOCAL_STD_FLOOR = 0.5


def local_image_crops(images, rois, size):
    """Each RoI's pixels, RoIAligned at ``size x size`` and standardised by their own
    mean and standard deviation.

    Samples outside the image take the mean of the RoI's samples inside it, then each
    channel of each crop has its mean subtracted and is divided by its standard deviation
    plus :data:`LOCAL_STD_FLOOR`. An edge is then placed against the brightness and
    contrast around the object, as a local threshold (Sauvola) does, and a change of
    lighting between images (``a * pixels + b`` over a RoI) leaves the crop nearly as it
    was.

    Parameters
    ----------
    images : Tensor of shape (N, C, H, W)
        Normalised images.
    rois : Tensor of shape (K, 5)
        ``(image index, x1, y1, x2, y2)`` in pixels.
    size : int

    Returns
    -------
    crops : Tensor of shape (K, C, size, size)
    """
    shape = (size, size)
    crops = _roi_align(images, rois, shape, 1.0, 2, True)
    # the share of each bin's samples that lie in the image (RoIAlign reads 0 outside)
    inside = _roi_align(images.new_ones((images.shape[0], 1) + images.shape[2:]), rois,
                        shape, 1.0, 2, True)
    mean_in = crops.sum((2, 3), keepdim=True) / inside.sum((2, 3), keepdim=True).clamp(
        min=1e-6)
    crops = crops + (1 - inside) * mean_in
    mean = crops.mean((2, 3), keepdim=True)
    std = crops.std((2, 3), keepdim=True) if size > 1 else torch.zeros_like(mean)
    return (crops - mean) / (std + LOCAL_STD_FLOOR)


def expand_boxes(boxes, factor):
    """Boxes ``(..., 4)`` ``(x1, y1, x2, y2)`` scaled by ``factor`` about their centres
    (the regions the mask branch reads and predicts with ``mask_box_expand``)."""
    if factor == 1.0:
        return boxes
    centre = (boxes[..., :2] + boxes[..., 2:]) / 2
    half = (boxes[..., 2:] - boxes[..., :2]) * (factor / 2)
    return torch.cat([centre - half, centre + half], -1)


class TwoMLPHead(nn.Module):
    """Box head: the pooled features flattened, then two fully connected layers with
    ReLU.

    Parameters
    ----------
    in_features : int
        Channels times pooled side squared.
    representation_size : int
    """

    def __init__(self, in_features, representation_size):
        super().__init__()
        self.fc6 = nn.Linear(in_features, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        """``(K, C, S, S)`` -> ``(K, representation_size)``."""
        x = F.relu(self.fc6(x.flatten(1)), inplace=True)
        return F.relu(self.fc7(x), inplace=True)


class FastRCNNPredictor(nn.Module):
    """Class logits (background first) and class-specific box deltas of each RoI.

    The two layers start with torch's default initialisation; :meth:`reset_parameters`
    draws the detection initialisation, which the model calls once all its layers are
    built.

    Parameters
    ----------
    in_features : int
    n_classes : int
        Object classes, background excluded.
    """

    def __init__(self, in_features, n_classes):
        super().__init__()
        self.cls_score = nn.Linear(in_features, n_classes + 1)
        self.bbox_pred = nn.Linear(in_features, 4 * n_classes)

    def reset_parameters(self):
        """Weights from N(0, 0.01^2) (class logits) and N(0, 0.001^2) (deltas), drawn
        from torch's global generator; biases zero."""
        nn.init.normal_(self.cls_score.weight, std=0.01)
        nn.init.zeros_(self.cls_score.bias)
        nn.init.normal_(self.bbox_pred.weight, std=0.001)
        nn.init.zeros_(self.bbox_pred.bias)

    def forward(self, x):
        """``(K, in_features)`` -> logits ``(K, n_classes + 1)``, deltas
        ``(K, 4 n_classes)``."""
        return self.cls_score(x), self.bbox_pred(x)


class MaskRCNNHeads(nn.Sequential):
    """Mask head: ``n_layers`` 3x3 convs with ReLU at the pooled resolution.

    Parameters
    ----------
    in_channels : int
    n_layers : int, default=2
    """

    def __init__(self, in_channels, n_layers=2, out_channels=None):
        out_channels = in_channels if out_channels is None else out_channels
        layers = []
        for k in range(n_layers):
            layers += [nn.Conv2d(in_channels if k == 0 else out_channels, out_channels, 3, 1,
                                 1), nn.ReLU(inplace=True)]
        super().__init__(*layers)


class MaskRCNNPredictor(nn.Module):
    """A 2x2 stride-2 transposed conv with ReLU, then a 1x1 conv to one mask logit per
    class (per class and background for the softmax loss).

    Parameters
    ----------
    in_channels : int
    n_mask_classes : int
    """

    def __init__(self, in_channels, n_mask_classes):
        super().__init__()
        self.conv5_mask = nn.ConvTranspose2d(in_channels, in_channels, 2, 2)
        self.mask_fcn_logits = nn.Conv2d(in_channels, n_mask_classes, 1)

    def forward(self, x):
        """``(K, C, S, S)`` -> mask logits ``(K, n_mask_classes, 2 S, 2 S)``.

        A 2x2 stride-2 transposed conv maps each input pixel to its own 2x2 block, and a
        1x1 conv acts on each pixel alone, so both are computed as matrix products over
        the pixels, ``(K S S, C)`` by ``(C, 4 C)`` and ``(4 K S S, C)`` by
        ``(C, n_mask_classes)``, with the layers' own weights: the same values as the
        two conv layers, faster on CPU (above all in the backward pass).
        """
        k, c, s, _ = x.shape
        up_w = self.conv5_mask.weight  # (C, C_up, 2, 2)
        c_up = up_w.shape[1]
        rows = x.permute(0, 2, 3, 1).reshape(k * s * s, c)
        # columns ordered (row in the block, column in the block, channel)
        up = torch.addmm(self.conv5_mask.bias.repeat(4), rows,
                         up_w.permute(0, 2, 3, 1).reshape(c, 4 * c_up))
        up = F.relu(up).reshape(4 * k * s * s, c_up)
        logit_w = self.mask_fcn_logits.weight
        n_out = logit_w.shape[0]
        logits = torch.addmm(self.mask_fcn_logits.bias, up, logit_w.reshape(n_out, c_up).t())
        # (K, i, j, a, b, class) -> (K, class, 2 i + a, 2 j + b)
        return logits.reshape(k, s, s, 2, 2, n_out).permute(0, 5, 1, 3, 2, 4).reshape(
            k, n_out, 2 * s, 2 * s)


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    """Classification and box losses of the sampled RoIs (Girshick 2015).

    Cross-entropy over background and the classes; smooth L1 (beta 1/9) of the positive
    RoIs' deltas for their own class, summed and divided by the number of sampled RoIs.

    Parameters
    ----------
    class_logits : Tensor of shape (K, n_classes + 1)
    box_regression : Tensor of shape (K, 4 n_classes)
    labels : Tensor of shape (K,) of int64
        0 for background, ``1..n_classes`` for a positive RoI.
    regression_targets : Tensor of shape (K_pos, 4)
        Deltas of the positive RoIs (``labels > 0``), in their order.

    Returns
    -------
    loss_cls, loss_box : scalar Tensors
        0 with a (zero) gradient when ``K = 0`` (both) or no RoI is positive (box).
    """
    if class_logits.shape[0]:
        loss_cls = F.cross_entropy(class_logits, labels)
    else:
        loss_cls = class_logits.sum() * 0
    if not (labels > 0).any():
        return loss_cls, box_regression.sum() * 0.0
    positive = torch.nonzero(labels > 0).squeeze(1)
    n_classes = box_regression.shape[1] // 4
    pred = box_regression[positive].reshape(-1, n_classes, 4)[
        torch.arange(len(positive), device=labels.device), labels[positive] - 1]
    loss_box = F.smooth_l1_loss(pred, regression_targets, beta=SMOOTH_L1_BETA,
                                reduction="sum") / max(class_logits.shape[0], 1)
    return loss_cls, loss_box


def mask_loss_sigmoid(logits, labels, targets):
    """Per-class sigmoid mask loss (He et al. 2017, section 3, L_mask).

    Binary cross-entropy averaged over the pixels of the mask of each RoI's own class
    only; the other classes' masks do not compete.

    Parameters
    ----------
    logits : Tensor of shape (K, n_classes, M, M)
    labels : Tensor of shape (K,) of int in 1..n_classes
    targets : Tensor of shape (K, M, M) of float in {0, 1}

    Returns
    -------
    loss : scalar Tensor (0 with a gradient when K = 0)
    """
    if logits.shape[0] == 0:
        return logits.sum() * 0.0
    own = logits[torch.arange(logits.shape[0], device=logits.device), labels - 1]
    return F.binary_cross_entropy_with_logits(own, targets)


def mask_loss_softmax(logits, labels, targets):
    """Multinomial mask loss, the paper's ablation (Table 2b): a per-pixel softmax over
    background and the classes, the target being the RoI's class inside its mask and
    background elsewhere.

    Parameters
    ----------
    logits : Tensor of shape (K, n_classes + 1, M, M)
    labels : Tensor of shape (K,) of int in 1..n_classes
    targets : Tensor of shape (K, M, M) of float in {0, 1}

    Returns
    -------
    loss : scalar Tensor
    """
    if logits.shape[0] == 0:
        return logits.sum() * 0.0
    cls = (targets > 0.5).long() * labels[:, None, None]
    return F.cross_entropy(logits, cls)


_MASK_LOSSES = {"sigmoid": mask_loss_sigmoid, "softmax": mask_loss_softmax}


def project_masks_on_boxes(gt_masks, rois, matched_idxs, size):
    """Mask targets: each RoI's matched ground-truth mask cropped to the RoI and
    resampled to ``size x size`` by RoIAlign, thresholded at 0.5.

    Parameters
    ----------
    gt_masks : Tensor of shape (N, G, H, W)
    rois : Tensor of shape (K, 5)
    matched_idxs : Tensor of shape (K,) of int64
        Index in ``0..G-1`` of each RoI's ground-truth instance in its image.
    size : int

    Returns
    -------
    targets : Tensor of shape (K, size, size) of float32 in {0, 1}
    """
    # each RoI reads its own matched mask, in chunks of at most as many masks as the batch
    # holds (float copies of at most the batch's masks)
    step = max(1, gt_masks.shape[0] * gt_masks.shape[1])
    img, boxes = rois[:, 0].long(), rois[:, 1:]
    crops = [roi_align_crops(gt_masks[img[i:i + step], matched_idxs[i:i + step]].float(),
                             boxes[i:i + step], size, 2, True)
             for i in range(0, len(rois), step)]
    if not crops:
        return gt_masks.new_zeros((0, size, size), dtype=torch.float32)
    return (torch.cat(crops) >= 0.5).float()


def maskrcnn_loss(mask_logits, labels, gt_masks, rois, matched_idxs, loss="sigmoid"):
    """Mask loss of the positive RoIs against their projected ground-truth masks.

    Parameters
    ----------
    mask_logits : Tensor of shape (K, n_mask_classes, M, M)
    labels : Tensor of shape (K,) of int in 1..n_classes
    gt_masks, rois, matched_idxs
        As in :func:`project_masks_on_boxes`.
    loss : {"sigmoid", "softmax"}, default="sigmoid"
        :func:`mask_loss_sigmoid` or :func:`mask_loss_softmax`.

    Returns
    -------
    loss : scalar Tensor
    """
    targets = project_masks_on_boxes(gt_masks, rois, matched_idxs, mask_logits.shape[-1])
    return _MASK_LOSSES[loss](mask_logits, labels, targets)


def maskrcnn_inference(mask_logits, labels, loss="sigmoid"):
    """Mask probabilities of each detection's own class.

    Parameters
    ----------
    mask_logits : Tensor of shape (D, n_mask_classes, M, M)
    labels : Tensor of shape (D,) of int in 1..n_classes
    loss : {"sigmoid", "softmax"}, default="sigmoid"
        The loss the head was trained with: a sigmoid of the class's own logit, or the
        class's share of a softmax over background and the classes.

    Returns
    -------
    probabilities : Tensor of shape (D, M, M)
    """
    rows = torch.arange(len(labels))
    if loss == "sigmoid":
        return torch.sigmoid(mask_logits[rows, labels - 1])
    return F.softmax(mask_logits, 1)[rows, labels]


#: Pixels of the largest block of box crops :func:`paste_mask_crops` samples at once.
PASTE_BLOCK_PIXELS = 1 << 22
#: Fixed-point steps of the ``"auto"`` mask threshold (:func:`expected_iou_threshold`).
_AUTO_STEPS = 5
#: Lowest ``"auto"`` mask threshold.
_AUTO_MIN = 0.05


def expected_iou_threshold(probabilities, inside):
    """Per-mask threshold maximising the expected IoU of the thresholded mask.

    For independent pixel probabilities ``p``, adding a pixel raises the expected IoU
    ``J`` of a mask when ``p > J / (1 + J)`` (the Jaccard form of the F-measure's optimal
    threshold, half the best F1; Lipton, Elkan and Narayanaswamy 2014). ``J`` of the mask
    ``p >= t`` is estimated as ``sum(p >= t: p) / (#(p >= t) + sum(p < t: p))``; the
    threshold starts at 0.5 and takes ``_AUTO_STEPS`` fixed-point steps
    ``t <- J(t) / (1 + J(t))``, then at least ``_AUTO_MIN``. A crisp mask (probabilities
    0 or 1) keeps 0.5; a mask unsure at its edges gets a lower threshold.

    Parameters
    ----------
    probabilities : Tensor of shape (K, H, W)
        Each mask's probabilities at the pixels of its crop.
    inside : Tensor of shape (K, H, W) of bool
        The pixels that belong to each mask's box (the others count as 0).

    Returns
    -------
    thresholds : Tensor of shape (K,)
    """
    p = torch.where(inside, probabilities, torch.zeros_like(probabilities)).flatten(1)
    t = torch.full((p.shape[0], 1), 0.5, dtype=p.dtype, device=p.device)
    for _ in range(_AUTO_STEPS):
        on = p >= t
        kept = torch.where(on, p, torch.zeros_like(p)).sum(1, keepdim=True)
        rest = p.sum(1, keepdim=True) - kept
        j = kept / (on.sum(1, keepdim=True) + rest).clamp(min=1e-6)
        t = j / (1 + j)
    return t[:, 0].clamp(min=_AUTO_MIN)


def _crop_bounds(boxes, height, width):
    """Integer pixel ranges ``(y0, y1, x0, x1)`` holding every pixel centre inside each
    ``(D, 4)`` box (a pixel more on each side; clipped to the image)."""
    x0 = torch.floor(boxes[:, 0] - 0.5).clamp(0, width).long()
    x1 = (torch.ceil(boxes[:, 2] - 0.5) + 1).clamp(0, width).long()
    y0 = torch.floor(boxes[:, 1] - 0.5).clamp(0, height).long()
    y1 = (torch.ceil(boxes[:, 3] - 0.5) + 1).clamp(0, height).long()
    return y0, torch.maximum(y1, y0), x0, torch.maximum(x1, x0)


def paste_mask_crops(masks, boxes, height, width, threshold=0.5,
                     block_pixels=PASTE_BLOCK_PIXELS):
    """Paste ``(D, M, M)`` RoI masks into the image, each only within its box.

    Each image pixel centre inside a box is read from its mask by bilinear interpolation
    (the inverse of the RoIAlign sampling that made the mask targets) and kept from
    ``threshold`` on; pixels outside the box are False. The masks are sampled in blocks
    of at most about
    ``block_pixels`` crop pixels, so memory grows with the boxes' areas, not with the
    image's area times the number of masks.

    Parameters
    ----------
    masks : Tensor of shape (D, M, M)
        Probabilities.
    boxes : Tensor of shape (D, 4)
        In the pixel coordinates of the output image.
    height, width : int
    threshold : float or "auto", default=0.5
        ``"auto"``: each mask's own :func:`expected_iou_threshold` over the pixels of
        its box.
    block_pixels : int, default=4194304
        Crop pixels sampled at once (a single larger crop is sampled alone).

    Yields
    ------
    index : int
        The mask's row in ``masks``, in increasing order.
    bounds : tuple of int
        ``(y0, y1, x0, x1)``, the crop's rows ``y0:y1`` and columns ``x0:x1``.
    crop : Tensor of shape (y1 - y0, x1 - x0) of bool
        The pasted mask in the crop.
    """
    d = masks.shape[0]
    if d == 0:
        return
    boxes = boxes.to(masks.dtype)
    y0, y1, x0, x1 = _crop_bounds(boxes, height, width)
    hs, ws = (y1 - y0).tolist(), (x1 - x0).tolist()
    start = 0
    while start < d:
        stop, hmax, wmax = start + 1, hs[start], ws[start]
        while stop < d:
            h, w = max(hmax, hs[stop]), max(wmax, ws[stop])
            if (stop + 1 - start) * h * w > block_pixels:
                break
            stop, hmax, wmax = stop + 1, h, w
        if hmax > 0 and wmax > 0:
            b = boxes[start:stop]
            k = stop - start
            bw = (b[:, 2] - b[:, 0]).clamp(min=1e-6)
            bh = (b[:, 3] - b[:, 1]).clamp(min=1e-6)
            px = (x0[start:stop, None] + torch.arange(wmax, device=masks.device)).to(
                masks.dtype) + 0.5
            py = (y0[start:stop, None] + torch.arange(hmax, device=masks.device)).to(
                masks.dtype) + 0.5
            u = (px - b[:, 0:1]) / bw[:, None]  # (k, wmax)
            v = (py - b[:, 1:2]) / bh[:, None]  # (k, hmax)
            grid = torch.stack([(2 * u - 1)[:, None, :].expand(k, hmax, wmax),
                                (2 * v - 1)[:, :, None].expand(k, hmax, wmax)], dim=-1)
            val = F.grid_sample(masks[start:stop, None], grid, mode="bilinear",
                                padding_mode="border", align_corners=False)[:, 0]
            inside = ((u >= 0) & (u <= 1))[:, None, :] & ((v >= 0) & (v <= 1))[:, :, None]
            if isinstance(threshold, str):
                # each crop's own pixels (a block pads the smaller crops)
                own = ((torch.arange(hmax, device=masks.device) < torch.tensor(
                    hs[start:stop], device=masks.device)[:, None])[:, :, None]
                    & (torch.arange(wmax, device=masks.device) < torch.tensor(
                        ws[start:stop], device=masks.device)[:, None])[:, None, :])
                cut = expected_iou_threshold(val, inside & own)[:, None, None]
            else:
                cut = threshold
            pasted = (val >= cut) & inside
            for j in range(k):
                i = start + j
                yield i, (int(y0[i]), int(y1[i]), int(x0[i]), int(x1[i])), \
                    pasted[j, :hs[i], :ws[i]]
        else:
            for i in range(start, stop):
                yield i, (int(y0[i]), int(y1[i]), int(x0[i]), int(x1[i])), \
                    torch.zeros((hs[i], ws[i]), dtype=torch.bool, device=masks.device)
        start = stop


def paste_masks(masks, boxes, height, width, threshold=0.5):
    """Paste ``(D, M, M)`` RoI masks into ``(D, height, width)`` boolean image masks.

    Each image pixel centre inside a box is read from its mask by bilinear interpolation
    (the inverse of the RoIAlign sampling that made the mask targets); pixels outside the
    box are False. Only each box's crop is sampled (:func:`paste_mask_crops`): beyond
    the output, memory grows with the boxes' areas.

    Parameters
    ----------
    masks : Tensor of shape (D, M, M)
        Probabilities.
    boxes : Tensor of shape (D, 4)
        In the pixel coordinates of the output image.
    height, width : int
    threshold : float or "auto", default=0.5
        As in :func:`paste_mask_crops`.

    Returns
    -------
    pasted : Tensor of shape (D, height, width) of bool
    """
    out = torch.zeros((masks.shape[0], height, width), dtype=torch.bool,
                      device=masks.device)
    for i, (r0, r1, c0, c1), crop in paste_mask_crops(masks, boxes, height, width,
                                                      threshold):
        out[i, r0:r1, c0:c1] = crop
    return out


def _at_most_per_image(img_idx, cap):
    """``(K,)`` bool: a uniform random subset of at most ``cap`` entries of each image
    (``img_idx``: each entry's image), drawn from torch's global generator."""
    if len(img_idx) == 0:
        return torch.zeros(0, dtype=torch.bool, device=img_idx.device)
    # sorted by image, in random order within each image
    key = img_idx.to(torch.float64) + torch.rand(len(img_idx), dtype=torch.float64,
                                                 device=img_idx.device)
    order = torch.argsort(key)
    counts = torch.bincount(img_idx)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.empty_like(img_idx)
    rank[order] = torch.arange(len(img_idx), device=img_idx.device) - starts[img_idx[order]]
    return rank < cap


class RoIHeads(nn.Module):
    """Box and mask heads on the proposals: losses in training, detections otherwise.

    Training (He et al. 2017; Ren et al. 2015): the ground-truth boxes are added to the
    proposals, each proposal is matched to the object it overlaps most (IoU at least
    ``fg_iou_thresh`` positive, below ``bg_iou_thresh`` background),
    ``batch_size_per_image`` are sampled per image with at most ``positive_fraction``
    positives, and the losses are :func:`fastrcnn_loss` on the sample and
    :func:`maskrcnn_loss` on its positives (at most ``mask_rois_per_image`` of them per
    image, drawn at random).

    Inference: every proposal gets a score and a decoded, clipped box per class; boxes
    scoring above ``score_thresh`` and at least 0.01 px wide and high are kept after NMS
    at ``nms_thresh`` within each class, the ``detections_per_img`` best per image; the
    mask branch is run on these final detections.

    Parameters
    ----------
    box_roi_pool : MultiScaleRoIPool
        Output size 7 for :class:`TwoMLPHead`.
    box_head : TwoMLPHead
    box_predictor : FastRCNNPredictor
    mask_roi_pool : MultiScaleRoIPool
    mask_head : MaskRCNNHeads
    mask_predictor : MaskRCNNPredictor
    n_classes : int
        Object classes, background excluded.
    fg_iou_thresh, bg_iou_thresh : float, default=0.5, 0.5
    batch_size_per_image : int, default=64
    positive_fraction : float, default=0.25
    bbox_reg_weights : tuple of 4 float, default=(10, 10, 5, 5)
    score_thresh : float, default=0.05
    nms_thresh : float, default=0.5
    detections_per_img : int, default=100
    mask_loss : {"sigmoid", "softmax"}, default="sigmoid"
    mask_rois_per_image : int or None, default=None
        Most positive RoIs per image the mask branch is trained on, a uniform random
        subset of the sampled positives; None: all of them.
    mask_box_expand : float, default=1.0
        The mask branch reads and predicts each RoI (in training) or detection box (in
        inference) scaled by this factor about its centre (:func:`expand_boxes`), so
        that a mask can reach past a box that is a pixel or two short; 1.0: the box
        itself (the paper's).
    mask_image_local : bool, default=False
        When the mask head reads the image (``images`` given), each RoI's pixels are
        standardised by their own mean and standard deviation
        (:func:`local_image_crops`); False: read as given.
    """

    def __init__(self, box_roi_pool, box_head, box_predictor, mask_roi_pool, mask_head,
                 mask_predictor, n_classes, *, fg_iou_thresh=0.5, bg_iou_thresh=0.5,
                 batch_size_per_image=64, positive_fraction=0.25,
                 bbox_reg_weights=BOX_WEIGHTS, score_thresh=0.05, nms_thresh=0.5,
                 detections_per_img=100, mask_loss="sigmoid", mask_rois_per_image=None,
                 mask_box_expand=1.0, mask_image_local=False):
        super().__init__()
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.mask_roi_pool = mask_roi_pool
        self.mask_head = mask_head
        self.mask_predictor = mask_predictor
        self.n_classes = int(n_classes)
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh)
        self.fg_bg_sampler = BalancedPositiveNegativeSampler(batch_size_per_image,
                                                             positive_fraction)
        self.box_coder = BoxCoder(bbox_reg_weights)
        self.score_thresh = float(score_thresh)
        self.nms_thresh = float(nms_thresh)
        self.detections_per_img = int(detections_per_img)
        self.mask_loss = mask_loss
        self.mask_rois_per_image = None if mask_rois_per_image is None else int(
            mask_rois_per_image)
        self.mask_box_expand = float(mask_box_expand)
        self.mask_image_local = bool(mask_image_local)

    def _box_forward(self, features, rois):
        return self.box_predictor(self.box_head(self.box_roi_pool(features, rois)))

    def _mask_forward(self, features, rois, images=None):
        pooled = self.mask_roi_pool(features, rois)
        if images is not None:
            # the image itself, read at the mask head's resolution, beside the features
            size = self.mask_roi_pool.output_size
            crops = (local_image_crops(images, rois, size) if self.mask_image_local else
                     _roi_align(images, rois, (size, size), 1.0, 2, True))
            pooled = torch.cat([pooled, crops], 1)
        return self.mask_predictor(self.mask_head(pooled))

    def _flipped_mask_forward(self, features, rois, images, flipped, width):
        """Mask logits of ``rois`` averaged with those of the mirrored images: ``flipped``
        is ``(features, images)`` of the images ``width`` pixels wide mirrored left to
        right, read over the mirrored RoIs, and their logits are mirrored back."""
        width = float(width)
        logits = self._mask_forward(features, rois, images)
        mirrored = torch.stack([rois[:, 0], width - rois[:, 3], rois[:, 2], width - rois[:, 1],
                                rois[:, 4]], 1)
        back = self._mask_forward(flipped[0], mirrored, flipped[1]).flip(-1)
        return (logits + back) / 2

    def select_training_samples(self, proposals, valid, targets):
        """Add the ground truth to the proposals, match and sample them.

        Parameters
        ----------
        proposals : Tensor of shape (N, P, 4)
        valid : Tensor of shape (N, P) of bool
        targets : dict
            ``"boxes"`` (N, G, 4) and ``"labels"`` (N, G).

        Returns
        -------
        rois : Tensor of shape (K, 5)
            The sampled RoIs of all images, image by image.
        matched_idxs : Tensor of shape (K,) of int64
            Each RoI's ground-truth instance in its image.
        labels : Tensor of shape (K,) of int64
            Its class for a positive, 0 for background.
        regression_targets : Tensor of shape (K_pos, 4)
            Deltas (:attr:`box_coder`) from each positive RoI to its ground-truth box.
        """
        boxes, gt_labels = targets["boxes"], targets["labels"]
        gt_valid = gt_labels > 0
        n = boxes.shape[0]
        proposals = torch.cat([proposals, boxes], 1)
        valid = torch.cat([valid, gt_valid], 1)
        iou = box_iou(proposals, boxes)
        iou = torch.where(gt_valid[:, None, :] & valid[:, :, None], iou, -1.0)
        matched, labels = self.proposal_matcher(iou)
        labels = torch.where(valid, labels, -1)
        pos, neg = self.fg_bg_sampler(labels)
        sel = pos | neg
        img_idx = torch.arange(n, device=proposals.device)[:, None].expand_as(sel)[sel]
        roi_boxes = proposals[sel]
        rois = torch.cat([img_idx[:, None].float(), roi_boxes], 1)
        matched = matched[sel]
        is_pos = pos[sel]
        cls_target = torch.where(is_pos, gt_labels[img_idx, matched], 0)
        regression_targets = self.box_coder.encode(roi_boxes[is_pos],
                                                   boxes[img_idx[is_pos], matched[is_pos]])
        return rois, matched, cls_target, regression_targets

    def postprocess_detections(self, class_logits, box_regression, proposals, valid,
                               image_size):
        """Per-class boxes and scores of every proposal, filtered, class-wise NMS and
        the best per image.

        Parameters
        ----------
        class_logits : Tensor of shape (N * P, n_classes + 1)
        box_regression : Tensor of shape (N * P, 4 n_classes)
        proposals : Tensor of shape (N, P, 4)
        valid : Tensor of shape (N, P) of bool
        image_size : tuple of int

        Returns
        -------
        dict
            ``boxes (N, D, 4)``, ``scores (N, D)``, ``labels (N, D)`` (1-based) and
            ``valid (N, D)`` bool, ``D = min(detections_per_img, P n_classes)``, by
            decreasing score with padding last.
        """
        height, width = image_size
        n, p = proposals.shape[:2]
        c = self.n_classes
        probs = F.softmax(class_logits, -1)[:, 1:]  # (N*P, C)
        dec = self.box_coder.decode(proposals.reshape(-1, 4), box_regression).reshape(-1, c, 4)
        dec = clip_boxes(dec, height, width).reshape(n, p * c, 4)
        scores = probs.reshape(n, p * c)
        labels = torch.arange(1, c + 1, device=proposals.device).repeat(p).expand(n, p * c)
        wh = dec[..., 2:] - dec[..., :2]
        keep = (valid[:, :, None].expand(n, p, c).reshape(n, p * c)
                & (scores > self.score_thresh) & (wh > 1e-2).all(-1))
        keep = nms_mask(dec, scores, keep, labels, self.nms_thresh)
        d = min(self.detections_per_img, p * c)
        top = torch.where(keep, scores, -torch.inf).topk(d, dim=1).indices
        return {"boxes": gather_rows(dec, top), "scores": gather_rows(scores, top),
                "labels": gather_rows(labels.contiguous(), top),
                "valid": gather_rows(keep, top)}

    def forward(self, features, proposals, valid, image_size, targets=None, images=None,
                owned=None, flipped=None):
        """Losses with ``targets``, detections without.

        Parameters
        ----------
        features : list of Tensors of shape (N, C, H_l, W_l)
        proposals : Tensor of shape (N, P, 4)
        valid : Tensor of shape (N, P) of bool
        image_size : tuple of int
            ``(height, width)`` of the (padded) images in pixels.
        targets : dict or None, default=None
            ``"boxes"`` (N, G, 4), ``"labels"`` (N, G) and ``"masks"`` (N, G, H, W).
        images : Tensor of shape (N, C, H, W) or None, default=None
            The normalised images, read by the mask head beside the features.
        owned : tuple of two Tensors or None, default=None
            Detection only: ``(offsets, bounds)``, ``offsets (N, 2)`` ``(x, y)`` added to
            each image's boxes and ``bounds (N, 4)`` ``(y0, y1, x0, x1)``: a detection
            whose shifted box centre lies outside ``y0 <= y < y1, x0 <= x < x1`` is
            marked invalid before the mask branch runs (the windows of a large image
            keep the detections they own; the others need no mask).
        flipped : tuple or None, default=None
            Detection only: ``(features, images)`` of the images mirrored left to right
            (``images`` None when the mask head does not read them). Each detection's
            mask logits are then the mean of its own and those of its mirrored box on the
            mirrored images, mirrored back (test-time flip averaging); boxes and scores
            come from the images as given.

        Returns
        -------
        dict
            With targets, ``"loss_cls"``, ``"loss_box"`` and ``"loss_mask"`` (scalar
            Tensors, each 0 with a gradient when nothing is sampled or nothing is
            positive). Without, the detections of :meth:`postprocess_detections` and
            ``masks (N, D, 28, 28)``: the probability of each detection's class in its
            box (0 for padding).
        """
        if targets is not None:
            return self._losses(features, proposals, valid, targets, images)
        n, p = proposals.shape[:2]
        img_idx = torch.arange(n, device=proposals.device)[:, None].expand(n, p)
        rois = torch.cat([img_idx.reshape(-1, 1).float(), proposals.reshape(-1, 4)], 1)
        class_logits, box_regression = self._box_forward(features, rois)
        out = self.postprocess_detections(class_logits, box_regression, proposals, valid,
                                          image_size)
        if owned is not None:
            offsets, bounds = owned
            shifted = out["boxes"] + offsets.repeat(1, 2)[:, None, :]
            cx = (shifted[..., 0] + shifted[..., 2]) / 2
            cy = (shifted[..., 1] + shifted[..., 3]) / 2
            out["valid"] = out["valid"] & (
                (cy >= bounds[:, 0:1]) & (cy < bounds[:, 1:2]) & (cx >= bounds[:, 2:3])
                & (cx < bounds[:, 3:4]))
        d = out["valid"].shape[1]
        det_img = torch.arange(n, device=proposals.device)[:, None].expand(n, d)[out["valid"]]
        det_boxes = out["boxes"][out["valid"]]
        det_labels = out["labels"][out["valid"]]
        m = 2 * self.mask_roi_pool.output_size
        masks = features[0].new_zeros((n, d, m, m))
        if len(det_boxes):
            mask_boxes = expand_boxes(det_boxes, self.mask_box_expand)
            mask_rois = torch.cat([det_img[:, None].float(), mask_boxes], 1)
            if flipped is None:
                mask_logits = self._mask_forward(features, mask_rois, images)
            else:
                mask_logits = self._flipped_mask_forward(features, mask_rois, images,
                                                         flipped, image_size[1])
            masks[out["valid"]] = maskrcnn_inference(mask_logits, det_labels, self.mask_loss)
        out["masks"] = masks
        return out

    def _losses(self, features, proposals, valid, targets, images=None):
        rois, matched, labels, regression_targets = self.select_training_samples(
            proposals, valid, targets)
        class_logits, box_regression = self._box_forward(features, rois)
        loss_cls, loss_box = fastrcnn_loss(class_logits, box_regression, labels,
                                           regression_targets)
        positive = labels > 0
        if not positive.any():
            # zero-valued, with a zero gradient for the mask logits' layer
            loss_mask = loss_box + sum(
                p.sum() for p in self.mask_predictor.mask_fcn_logits.parameters()) * 0.0
            return {"loss_cls": loss_cls, "loss_box": loss_box, "loss_mask": loss_mask}
        p_idx = torch.nonzero(positive).squeeze(1)
        if self.mask_rois_per_image is not None:
            p_idx = p_idx[_at_most_per_image(rois[p_idx, 0].long(),
                                             self.mask_rois_per_image)]
        mask_rois = rois[p_idx]
        mask_rois = torch.cat([mask_rois[:, :1], expand_boxes(mask_rois[:, 1:],
                                                              self.mask_box_expand)], 1)
        mask_logits = self._mask_forward(features, mask_rois, images)
        loss_mask = maskrcnn_loss(mask_logits, labels[p_idx], targets["masks"], mask_rois,
                                  matched[p_idx], self.mask_loss)
        return {"loss_cls": loss_cls, "loss_box": loss_box, "loss_mask": loss_mask}
