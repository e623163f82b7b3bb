"""Mask R-CNN (He et al. 2017) in pure torch: backbone, RPN, box and mask heads, losses.

Shapes: images ``(N, C, H, W)`` float32 (already normalised by the module's ``mean`` and
``std`` buffers); ground truth padded to ``G`` instances per image: ``boxes (N, G, 4)``
float32 ``(x1, y1, x2, y2)`` in pixels (max exclusive), ``labels (N, G)`` int64 with 0 for
padding and ``1..n_classes`` for objects, ``masks (N, G, H, W)`` uint8 / bool. Everything
is vectorised over the images of a batch: proposals and detections are kept as padded
``(N, T, ...)`` tensors with validity masks.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV.
Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN. NeurIPS.
Lin, T.-Y., Dollar, P., Girshick, R., He, K., Hariharan, B. and Belongie, S. (2017).
Feature pyramid networks for object detection. CVPR.
Wu, Y. and He, K. (2018). Group normalization. ECCV.
"""

import math

import torch
import torch.nn.functional as F
from skorch import NeuralNet
from torch import nn

from sklearn_papers.nn._detection import (
    box_iou,
    clip_boxes,
    grid_anchors,
    nms_mask,
    roi_align,
    roi_pool,
)
from sklearn_papers.nn._detection_utils import (
    BalancedPositiveNegativeSampler,
    BoxCoder,
    Matcher,
)

__all__ = ["LossOutputNet", "MaskRCNNModule", "mask_loss_sigmoid", "mask_loss_softmax",
           "paste_masks", "sample_labels"]

_BOX_WEIGHTS = (10.0, 10.0, 5.0, 5.0)  # Fast R-CNN's box-head delta weights
_RPN_BETA = 1.0 / 9  # smooth L1 transition of Faster R-CNN / Detectron


def _gn(channels):
    groups = math.gcd(channels, 8)
    return nn.GroupNorm(groups, channels)


class _ResBlock(nn.Module):
    """Basic residual block (two 3x3 convs) with GroupNorm; 1x1 projection when needed."""

    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.gn1 = _gn(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.gn2 = _gn(c_out)
        self.proj = None
        if stride != 1 or c_in != c_out:
            self.proj = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), _gn(c_out))

    def forward(self, x):
        out = F.relu(self.gn1(self.conv1(x)))
        out = self.gn2(self.conv2(out))
        return F.relu(out + (x if self.proj is None else self.proj(x)))


class Backbone(nn.Module):
    """Small ResNet-style GroupNorm backbone, as one feature map ("c4") or an FPN.

    Stem (3x3 conv, stride 2) then residual stages at strides 4, 8 (and 16 for the FPN),
    widths ``width, 2 width, 2 width``. ``fpn=False`` returns the last stage's map (stride
    8): the single-map design of the paper's ResNet-C4 backbone at our scale. ``fpn=True``
    returns ``P2, P3, P4`` (strides 4, 8, 16) from lateral 1x1 convs, a nearest-neighbour
    top-down pathway and 3x3 output convs (Lin et al. 2017).

    Parameters
    ----------
    in_channels : int
    width : int
    fpn : bool
    """

    def __init__(self, in_channels, width, fpn):
        super().__init__()
        self.fpn = fpn
        self.stem = nn.Sequential(nn.Conv2d(in_channels, width, 3, 2, 1, bias=False),
                                  _gn(width), nn.ReLU(inplace=True))
        self.layer2 = _ResBlock(width, width, 2)
        self.layer3 = _ResBlock(width, 2 * width, 2)
        self.out_channels = 2 * width
        if fpn:
            self.layer4 = _ResBlock(2 * width, 2 * width, 2)
            c = self.out_channels
            self.lateral = nn.ModuleList([nn.Conv2d(ci, c, 1) for ci in (width, 2 * width,
                                                                          2 * width)])
            self.output = nn.ModuleList([nn.Conv2d(c, c, 3, 1, 1) for _ in range(3)])
            self.strides = (4, 8, 16)
        else:
            self.strides = (8,)

    def forward(self, x):
        """``(N, C, H, W)`` -> list of feature maps ``(N, out_channels, H / s, W / s)``."""
        c2 = self.layer2(self.stem(x))
        c3 = self.layer3(c2)
        if not self.fpn:
            return [c3]
        c4 = self.layer4(c3)
        lat = [lat(c) for lat, c in zip(self.lateral, (c2, c3, c4))]
        p4 = lat[2]
        p3 = lat[1] + F.interpolate(p4, size=lat[1].shape[-2:], mode="nearest")
        p2 = lat[0] + F.interpolate(p3, size=lat[0].shape[-2:], mode="nearest")
        return [out(p) for out, p in zip(self.output, (p2, p3, p4))]


def sample_labels(labels, n_per_row, positive_fraction):
    """Random balanced sample of positives (label 1) and negatives (label 0) per row.

    Up to ``n_per_row * positive_fraction`` positives, the rest negatives, drawn uniformly
    without replacement in every row at once (torch's global RNG; seeded by the caller).

    Parameters
    ----------
    labels : Tensor of shape (B, M) of int
        1 positive, 0 negative, -1 ignored.
    n_per_row : int
    positive_fraction : float

    Returns
    -------
    positive, negative : Tensors of shape (B, M) of bool
    """
    return BalancedPositiveNegativeSampler(n_per_row, positive_fraction)(labels)


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


def _gather_rows(x, idx):
    """``x (B, T, ...)`` gathered along dim 1 by ``idx (B, k)``."""
    shape = idx.shape + x.shape[2:]
    return torch.gather(x, 1, idx.reshape(*idx.shape, *([1] * (x.dim() - 2))).expand(shape))


class MaskRCNNModule(nn.Module):
    """Mask R-CNN: backbone, RPN, RoIAlign (or RoIPool), box head and FCN mask head.

    In training mode ``forward(images, boxes, labels, masks)`` returns a dict of losses
    with ``"loss" = L_cls + L_box + L_mask + L_rpn_cls + L_rpn_box`` (He et al. 2017,
    section 3). In eval mode :meth:`detect` returns padded detections.

    Parameters
    ----------
    n_classes : int
        Object classes (background excluded).
    in_channels : int
        Image channels.
    width : int, default=16
        Backbone width (see :class:`Backbone`); heads use ``2 * width`` channels.
    fpn : bool, default=False
    roi_op : {"align", "pool"}, default="align"
    mask_loss : {"sigmoid", "softmax"}, default="sigmoid"
    anchor_sizes : tuple of float, default=(8, 16, 32)
        Anchor sizes in pixels; with the FPN, one per level (P2, P3, P4).
    aspect_ratios : tuple of float, default=(0.5, 1, 2)
    rpn_pre_nms_top_n, rpn_post_nms_top_n : int, default=100, 50
        Proposals kept per image (and per level) before NMS, and per image after.
    rpn_batch_size : int, default=128
        Anchors sampled per image for the RPN loss (half positives at most).
    roi_batch_size : int, default=64
        Proposals sampled per image for the heads (a quarter positives at most).
    detections_per_image : int, default=100
    score_threshold : float, default=0.05
    box_nms_threshold : float, default=0.5
    mean, std : sequence of float or None
        Per-channel normalisation applied to the images inside the module.
    """

    def __init__(self, n_classes, in_channels, *, width=16, fpn=False, roi_op="align",
                 mask_loss="sigmoid", anchor_sizes=(8, 16, 32), aspect_ratios=(0.5, 1.0, 2.0),
                 rpn_pre_nms_top_n=100, rpn_post_nms_top_n=50, rpn_batch_size=128,
                 roi_batch_size=64, detections_per_image=100, score_threshold=0.05,
                 box_nms_threshold=0.5, mean=None, std=None):
        super().__init__()
        self.n_classes = int(n_classes)
        self.roi_op = roi_op
        self.mask_loss = mask_loss
        self.rpn_pre_nms_top_n = int(rpn_pre_nms_top_n)
        self.rpn_post_nms_top_n = int(rpn_post_nms_top_n)
        self.rpn_batch_size = int(rpn_batch_size)
        self.roi_batch_size = int(roi_batch_size)
        self.detections_per_image = int(detections_per_image)
        self.score_threshold = float(score_threshold)
        self.box_nms_threshold = float(box_nms_threshold)
        self.backbone = Backbone(in_channels, width, fpn)
        self.strides = self.backbone.strides
        c = self.backbone.out_channels
        sizes = tuple(float(s) for s in anchor_sizes)
        if fpn:
            if len(sizes) != len(self.strides):
                raise ValueError(f"with an FPN, anchor_sizes needs one size per level "
                                 f"({len(self.strides)}), got {anchor_sizes!r}.")
            self.level_sizes = [(s,) for s in sizes]
        else:
            self.level_sizes = [sizes]
        self.aspect_ratios = tuple(float(r) for r in aspect_ratios)
        n_anchors = len(self.level_sizes[0]) * len(self.aspect_ratios)
        self.rpn_conv = nn.Conv2d(c, c, 3, 1, 1)
        self.rpn_cls = nn.Conv2d(c, n_anchors, 1)
        self.rpn_box = nn.Conv2d(c, 4 * n_anchors, 1)
        hidden = 4 * c
        self.box_fc = nn.Sequential(nn.Flatten(), nn.Linear(c * 7 * 7, hidden),
                                    nn.ReLU(inplace=True), nn.Linear(hidden, hidden),
                                    nn.ReLU(inplace=True))
        self.cls_score = nn.Linear(hidden, self.n_classes + 1)
        self.bbox_pred = nn.Linear(hidden, 4 * self.n_classes)
        layers = []
        for _ in range(2):
            layers += [nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(inplace=True)]
        self.mask_convs = nn.Sequential(*layers)
        self.mask_up = nn.ConvTranspose2d(c, c, 2, 2)
        n_mask = self.n_classes if mask_loss == "sigmoid" else self.n_classes + 1
        self.mask_pred = nn.Conv2d(c, n_mask, 1)
        for m in (self.rpn_cls, self.rpn_box):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
        nn.init.normal_(self.cls_score.weight, std=0.01)
        nn.init.zeros_(self.cls_score.bias)
        nn.init.normal_(self.bbox_pred.weight, std=0.001)
        nn.init.zeros_(self.bbox_pred.bias)
        mean = torch.zeros(in_channels) if mean is None else torch.as_tensor(mean)
        std = torch.ones(in_channels) if std is None else torch.as_tensor(std)
        self.register_buffer("mean", mean.float().reshape(1, -1, 1, 1))
        self.register_buffer("std", std.float().reshape(1, -1, 1, 1))

    # ------------------------------------------------------------------ pieces
    # RPN: IoU >= 0.7 positive, < 0.3 negative, each object's best anchors positive, half
    # of the sampled anchors positive at most; RoI heads: IoU >= 0.5 positive, a quarter
    # of the sampled proposals positive at most (Ren et al. 2015)
    @property
    def rpn_matcher(self):
        return Matcher(0.7, 0.3, allow_low_quality_matches=True)

    @property
    def rpn_sampler(self):
        return BalancedPositiveNegativeSampler(self.rpn_batch_size, 0.5)

    @property
    def rpn_box_coder(self):
        return BoxCoder()

    @property
    def roi_matcher(self):
        return Matcher(0.5, 0.5)

    @property
    def roi_sampler(self):
        return BalancedPositiveNegativeSampler(self.roi_batch_size, 0.25)

    @property
    def box_coder(self):
        return BoxCoder(_BOX_WEIGHTS)

    def _anchors(self, features):
        return [grid_anchors(f.shape[-2:], s, sizes, self.aspect_ratios, device=f.device)
                for f, s, sizes in zip(features, self.strides, self.level_sizes)]

    def _rpn(self, features):
        """Objectness ``(N, A_l)`` and deltas ``(N, A_l, 4)`` per level."""
        logits, deltas = [], []
        for f in features:
            h = F.relu(self.rpn_conv(f))
            n, a = f.shape[0], self.rpn_cls.out_channels
            logits.append(self.rpn_cls(h).permute(0, 2, 3, 1).reshape(n, -1))
            d = self.rpn_box(h).reshape(n, a, 4, *f.shape[-2:]).permute(0, 3, 4, 1, 2)
            deltas.append(d.reshape(n, -1, 4))
        return logits, deltas

    def _proposals(self, logits, deltas, anchors, image_size):
        """Top-k per level, decode, clip, NMS 0.7 per level, top-k per image.

        Returns padded ``boxes (N, P, 4)`` and ``valid (N, P)`` (detached)."""
        height, width = image_size
        all_boxes, all_scores, all_levels = [], [], []
        for lvl, (lg, dl, an) in enumerate(zip(logits, deltas, anchors)):
            lg, dl = lg.detach(), dl.detach()
            k = min(self.rpn_pre_nms_top_n, lg.shape[1])
            scores, idx = lg.topk(k, dim=1)
            d = _gather_rows(dl, idx)
            a = an[idx]
            boxes = self.rpn_box_coder.decode(a.reshape(-1, 4), d.reshape(-1, 4)).reshape(
                idx.shape + (4,))
            all_boxes.append(clip_boxes(boxes, height, width))
            all_scores.append(scores)
            all_levels.append(torch.full_like(idx, lvl))
        boxes = torch.cat(all_boxes, 1)
        scores = torch.cat(all_scores, 1)
        levels = torch.cat(all_levels, 1)
        wh = boxes[..., 2:] - boxes[..., :2]
        valid = (wh > 1e-3).all(-1) & torch.isfinite(scores)
        keep = nms_mask(boxes, scores, valid, levels, 0.7)
        k = min(self.rpn_post_nms_top_n, boxes.shape[1])
        top = torch.where(keep, scores, -torch.inf).topk(k, dim=1).indices
        return _gather_rows(boxes, top), _gather_rows(keep, top)

    def _pool(self, features, rois, output_size):
        """RoIAlign / RoIPool of ``(K, 5)`` RoIs, each from its FPN level (Lin et al.
        2017, eq. 1 with a canonical size of 16 px at P3) or from the single map."""
        def op(f, r, stride):
            if self.roi_op == "align":
                return roi_align(f, r, output_size, 1.0 / stride, sampling_ratio=2,
                                 aligned=True)
            return roi_pool(f, r, output_size, 1.0 / stride)

        if len(features) == 1 or rois.shape[0] == 0:
            return op(features[0], rois, self.strides[0])
        wh = (rois[:, 3:5] - rois[:, 1:3]).clamp(min=1e-6)
        size = torch.sqrt(wh[:, 0] * wh[:, 1])
        level = torch.floor(3 + torch.log2(size / 16 + 1e-8)).clamp(2, 4).long() - 2
        # each level's RoIs pooled at once, then put back in the order of ``rois``
        order = torch.argsort(level, stable=True)
        counts = torch.bincount(level, minlength=len(features)).tolist()
        pooled = [op(f, r, s) for f, r, s, n in zip(
            features, torch.split(rois[order], counts), self.strides, counts) if n]
        return torch.cat(pooled)[torch.argsort(order)]

    def _box_head(self, features, rois):
        h = self.box_fc(self._pool(features, rois, 7))
        return self.cls_score(h), self.bbox_pred(h)

    def _mask_head(self, features, rois):
        h = self.mask_convs(self._pool(features, rois, 14))
        return self.mask_pred(F.relu(self.mask_up(h)))

    # ------------------------------------------------------------------ training
    def forward(self, images, boxes=None, labels=None, masks=None):
        """Losses in training mode; padded detections (see :meth:`detect`) otherwise."""
        if not self.training or boxes is None:
            return self.detect(images)
        return self.losses(images, boxes, labels, masks)

    def losses(self, images, boxes, labels, masks):
        """Dict of the five losses and their sum ``"loss"`` on one batch."""
        images = (images.float() - self.mean) / self.std
        n, _, height, width = images.shape
        boxes = boxes.float()
        labels = labels.long()
        if labels.shape[1] == 0:  # no objects in the batch: one padding slot
            boxes = boxes.new_zeros((n, 1, 4))
            labels = labels.new_zeros((n, 1))
            masks = masks.new_zeros((n, 1, height, width))
        gt_valid = labels > 0
        feats = self.backbone(images)
        anchors = self._anchors(feats)
        logits, deltas = self._rpn(feats)
        rpn_cls, rpn_box = self._rpn_losses(logits, deltas, anchors, boxes, gt_valid)
        # proposals + ground truth boxes, matched and sampled per image
        props, pvalid = self._proposals(logits, deltas, anchors, (height, width))
        props = torch.cat([props, boxes], 1)
        pvalid = torch.cat([pvalid, gt_valid], 1)
        loss_cls, loss_box, loss_mask = self._roi_losses(feats, props, pvalid, boxes, labels,
                                                         masks, gt_valid)
        total = loss_cls + loss_box + loss_mask + rpn_cls + rpn_box
        return {"loss": total, "loss_cls": loss_cls, "loss_box": loss_box,
                "loss_mask": loss_mask, "loss_rpn_cls": rpn_cls, "loss_rpn_box": rpn_box}

    def _rpn_losses(self, logits, deltas, anchors, boxes, gt_valid):
        """Objectness and box losses of the RPN on sampled anchors (Ren et al. 2015)."""
        n = boxes.shape[0]
        all_anchors = torch.cat(anchors, 0)
        obj = torch.cat(logits, 1)
        dlt = torch.cat(deltas, 1)
        iou = box_iou(all_anchors[None].expand(n, -1, -1), boxes)  # (N, A, G)
        match, lab = self.rpn_matcher(torch.where(gt_valid[:, None, :], iou, -1.0))
        pos, neg = self.rpn_sampler(lab)
        sampled = pos | neg
        n_sampled = sampled.sum().clamp(min=1)
        rpn_cls = F.binary_cross_entropy_with_logits(
            obj[sampled], pos[sampled].float(), reduction="sum") / n_sampled
        if pos.any():
            gt_of = _gather_rows(boxes, match)  # (N, A, 4)
            target = self.rpn_box_coder.encode(all_anchors[None].expand(n, -1, -1)[pos],
                                               gt_of[pos])
            rpn_box = F.smooth_l1_loss(dlt[pos], target, beta=_RPN_BETA,
                                       reduction="sum") / n_sampled
        else:
            rpn_box = dlt.sum() * 0.0
        return rpn_cls, rpn_box

    def _roi_losses(self, feats, props, pvalid, boxes, labels, masks, gt_valid):
        """Classification, box and mask losses of the RoI heads on sampled proposals."""
        n, height, width = masks.shape[0], masks.shape[-2], masks.shape[-1]
        iou = box_iou(props, boxes)
        iou = torch.where(gt_valid[:, None, :] & pvalid[:, :, None], iou, -1.0)
        match, lab = self.roi_matcher(iou)
        lab = torch.where(pvalid, lab, -1)
        pos, neg = self.roi_sampler(lab)
        sel = pos | neg
        dev = props.device
        img_idx = torch.arange(n, device=dev)[:, None].expand_as(sel)[sel]
        roi_boxes = props[sel]
        rois = torch.cat([img_idx[:, None].float(), roi_boxes], 1)
        matched = match[sel]
        is_pos = pos[sel]
        cls_target = torch.where(is_pos, labels[img_idx, matched], 0)
        cls_logits, box_deltas = self._box_head(feats, rois)
        loss_cls = F.cross_entropy(cls_logits, cls_target) if len(rois) else cls_logits.sum() * 0
        k = max(len(rois), 1)
        if not is_pos.any():
            zero = box_deltas.sum() * 0.0
            return loss_cls, zero, zero + sum(p.sum() for p in self.mask_pred.parameters()) * 0.0
        p_idx = torch.nonzero(is_pos).squeeze(1)
        p_cls = cls_target[p_idx]
        d = box_deltas[p_idx].reshape(-1, self.n_classes, 4)[
            torch.arange(len(p_idx), device=dev), p_cls - 1]
        gt_b = boxes[img_idx[p_idx], matched[p_idx]]
        target = self.box_coder.encode(roi_boxes[p_idx], gt_b)
        loss_box = F.smooth_l1_loss(d, target, beta=_RPN_BETA, reduction="sum") / k
        # mask target: the GT mask cropped to the RoI and resampled (RoI n GT mask)
        g = masks.shape[1]
        flat_masks = masks.reshape(n * g, 1, height, width).float()
        mrois = torch.cat([(img_idx[p_idx] * g + matched[p_idx])[:, None].float(),
                           roi_boxes[p_idx]], 1)
        mask_logits = self._mask_head(feats, rois[p_idx])
        m = mask_logits.shape[-1]
        mtarget = (roi_align(flat_masks, mrois, m, 1.0, 2, True)[:, 0] >= 0.5).float()
        loss_fn = mask_loss_sigmoid if self.mask_loss == "sigmoid" else mask_loss_softmax
        return loss_cls, loss_box, loss_fn(mask_logits, p_cls, mtarget)

    # ------------------------------------------------------------------ inference
    @torch.no_grad()
    def detect(self, images):
        """Detections of a batch, padded to ``detections_per_image``.

        Returns
        -------
        dict with ``boxes (N, D, 4)``, ``scores (N, D)``, ``labels (N, D)`` (1-based),
        ``valid (N, D)`` bool, and ``masks (N, D, M, M)`` float: the probability of the
        detection's class in its box (the mask branch is run on the final detections,
        as in the paper's inference).
        """
        images = (images.float() - self.mean) / self.std
        n, _, height, width = images.shape
        feats = self.backbone(images)
        anchors = self._anchors(feats)
        logits, deltas = self._rpn(feats)
        props, pvalid = self._proposals(logits, deltas, anchors, (height, width))
        p = props.shape[1]
        img_idx = torch.arange(n, device=images.device)[:, None].expand(n, p)
        rois = torch.cat([img_idx.reshape(-1, 1).float(), props.reshape(-1, 4)], 1)
        cls_logits, box_deltas = self._box_head(feats, rois)
        probs = F.softmax(cls_logits, -1)[:, 1:]  # (N*P, C)
        c = self.n_classes
        dec = self.box_coder.decode(props.reshape(-1, 4), box_deltas).reshape(-1, c, 4)
        dec = clip_boxes(dec, height, width).reshape(n, p * c, 4)
        scores = probs.reshape(n, p * c)
        labels = torch.arange(1, c + 1, device=images.device).repeat(p).expand(n, p * c)
        wh = dec[..., 2:] - dec[..., :2]
        valid = (pvalid[:, :, None].expand(n, p, c).reshape(n, p * c)
                 & (scores > self.score_threshold) & (wh > 1e-2).all(-1))
        keep = nms_mask(dec, scores, valid, labels, self.box_nms_threshold)
        d = min(self.detections_per_image, p * c)
        top = torch.where(keep, scores, -torch.inf).topk(d, dim=1).indices
        out = {"boxes": _gather_rows(dec, top), "scores": _gather_rows(scores, top),
               "labels": _gather_rows(labels.contiguous(), top),
               "valid": _gather_rows(keep, top)}
        det_img = torch.arange(n, device=images.device)[:, None].expand(n, d)[out["valid"]]
        det_boxes = out["boxes"][out["valid"]]
        det_labels = out["labels"][out["valid"]]
        m = 28
        masks = images.new_zeros((n, d, m, m))
        if len(det_boxes):
            mlog = self._mask_head(feats, torch.cat([det_img[:, None].float(), det_boxes], 1))
            if self.mask_loss == "sigmoid":
                prob = torch.sigmoid(mlog[torch.arange(len(det_boxes)), det_labels - 1])
            else:
                prob = F.softmax(mlog, 1)[torch.arange(len(det_boxes)), det_labels]
            masks[out["valid"]] = prob
        out["masks"] = masks
        return out


def paste_masks(masks, boxes, height, width, threshold=0.5):
    """Paste ``(D, M, M)`` RoI masks into ``(D, height, width)`` boolean image masks.

    Each image pixel centre inside a box is read from its mask by bilinear interpolation
    (the inverse of the RoIAlign sampling that made the mask targets); pixels outside the
    box are False.

    Parameters
    ----------
    masks : Tensor of shape (D, M, M)
        Probabilities.
    boxes : Tensor of shape (D, 4)
        In the pixel coordinates of the output image.
    height, width : int
    threshold : float, default=0.5

    Returns
    -------
    pasted : Tensor of shape (D, height, width) of bool
    """
    d = masks.shape[0]
    if d == 0:
        return torch.zeros((0, height, width), dtype=torch.bool, device=masks.device)
    boxes = boxes.to(masks.dtype)
    bw = (boxes[:, 2] - boxes[:, 0]).clamp(min=1e-6)
    bh = (boxes[:, 3] - boxes[:, 1]).clamp(min=1e-6)
    px = torch.arange(width, dtype=masks.dtype, device=masks.device) + 0.5
    py = torch.arange(height, dtype=masks.dtype, device=masks.device) + 0.5
    u = (px[None] - boxes[:, 0:1]) / bw[:, None]  # (D, W)
    v = (py[None] - boxes[:, 1:2]) / bh[:, None]  # (D, H)
    grid = torch.stack([(2 * u - 1)[:, None, :].expand(d, height, width),
                        (2 * v - 1)[:, :, None].expand(d, height, width)], dim=-1)
    val = F.grid_sample(masks[:, None], grid, mode="bilinear", padding_mode="border",
                        align_corners=False)[:, 0]
    inside = ((u >= 0) & (u <= 1))[:, None, :] & ((v >= 0) & (v <= 1))[:, :, None]
    return (val >= threshold) & inside



class LossOutputNet(NeuralNet):
    """skorch net whose module returns its own losses in training.

    Only ``get_loss`` is overridden (a documented skorch extension point): the module's
    training forward returns the dict of :meth:`MaskRCNNModule.losses`, and the optimised
    loss is its ``"loss"`` entry; the criterion is unused.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The ``"loss"`` entry of the module's output dict."""
        return y_pred["loss"]
