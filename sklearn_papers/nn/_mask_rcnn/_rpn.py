"""Region proposal network (Ren et al. 2015) on padded batches, in the pieces of
torchvision's ``models/detection/rpn.py``: :class:`AnchorGenerator`, :class:`RPNHead` and
:class:`RegionProposalNetwork` (anchor labelling, proposal filtering, losses).

Shapes: ``features`` is a list of maps ``(N, C, H_l, W_l)``, one per level; ground truth
is padded to ``G`` boxes per image, ``boxes (N, G, 4)`` float32 ``(x1, y1, x2, y2)`` in
pixels and ``labels (N, G)`` int64 with 0 for padding. Anchors of all levels are
concatenated level by level, each level's anchors in row-major position order with the
anchor shapes innermost (the order of :func:`~sklearn_papers.nn._detection.grid_anchors`).

References
----------
Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN. NeurIPS.
"""

import torch
import torch.nn.functional as F
from torch import nn

from sklearn_papers.nn._detection import box_iou, clip_boxes, grid_anchors, nms_mask
from sklearn_papers.nn._detection_utils import (
    BalancedPositiveNegativeSampler,
    BoxCoder,
    Matcher,
    gather_rows,
)

__all__ = ["AnchorGenerator", "RPNHead", "RegionProposalNetwork"]

SMOOTH_L1_BETA = 1.0 / 9  # smooth L1 transition of Faster R-CNN / Detectron


class AnchorGenerator(nn.Module):
    """Anchors of every position of every feature map.

    Parameters
    ----------
    strides : tuple of int
        Stride in pixels of each feature level.
    sizes : tuple of tuple of float
        Anchor sizes in pixels (square root of the area) of each level; every level has
        the same number of sizes.
    aspect_ratios : tuple of float
        Height / width ratios, the same at every level.

    Raises
    ------
    ValueError
        If ``sizes`` does not give one tuple per level, or the levels differ in their
        number of sizes.
    """

    def __init__(self, strides, sizes, aspect_ratios):
        super().__init__()
        self.strides = tuple(int(s) for s in strides)
        self.sizes = tuple(tuple(float(s) for s in level) for level in sizes)
        self.aspect_ratios = tuple(float(r) for r in aspect_ratios)
        if len(self.sizes) != len(self.strides):
            raise ValueError(f"sizes needs one tuple of anchor sizes per level "
                             f"({len(self.strides)}), got {sizes!r}.")
        if len({len(level) for level in self.sizes}) != 1:
            raise ValueError(f"every level needs the same number of anchor sizes (the "
                             f"RPN head is shared across levels), got {sizes!r}.")

    def num_anchors_per_location(self):
        """Anchors at each feature-map position: sizes per level times aspect ratios."""
        return len(self.sizes[0]) * len(self.aspect_ratios)

    def forward(self, features):
        """Anchors of each level.

        Parameters
        ----------
        features : list of Tensors of shape (N, C, H_l, W_l)

        Returns
        -------
        anchors : list of Tensors of shape (H_l * W_l * A, 4)
            ``(x1, y1, x2, y2)`` in image pixels, ``A`` =
            :meth:`num_anchors_per_location`.
        """
        return [grid_anchors(f.shape[-2:], s, sizes, self.aspect_ratios, device=f.device)
                for f, s, sizes in zip(features, self.strides, self.sizes)]


class RPNHead(nn.Module):
    """A 3x3 conv and ReLU shared by all levels, then 1x1 convs giving each anchor an
    objectness logit and four box deltas.

    The 1x1 convs start with torch's default initialisation;
    :meth:`reset_parameters` draws the detection initialisation (weights from
    N(0, 0.01^2), zero biases), which the model calls once all its layers are built.

    Parameters
    ----------
    in_channels : int
    num_anchors : int
        Anchors per feature-map position.
    """

    def __init__(self, in_channels, num_anchors):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, 1, 1)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, 1)
        self.bbox_pred = nn.Conv2d(in_channels, 4 * num_anchors, 1)

    def reset_parameters(self):
        """Weights of the two output convs from N(0, 0.01^2) (torch's global generator),
        biases zero."""
        for m in (self.cls_logits, self.bbox_pred):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)

    def forward(self, features):
        """Objectness and deltas of every anchor.

        Parameters
        ----------
        features : list of Tensors of shape (N, C, H_l, W_l)

        Returns
        -------
        objectness : list of Tensors of shape (N, H_l * W_l * A)
        deltas : list of Tensors of shape (N, H_l * W_l * A, 4)
            In the anchors' order (see the module docstring).
        """
        logits, deltas = [], []
        for f in features:
            h = F.relu(self.conv(f))
            n, a = f.shape[0], self.cls_logits.out_channels
            logits.append(self.cls_logits(h).permute(0, 2, 3, 1).reshape(n, -1))
            d = self.bbox_pred(h).reshape(n, a, 4, *f.shape[-2:]).permute(0, 3, 4, 1, 2)
            deltas.append(d.reshape(n, -1, 4))
        return logits, deltas


class RegionProposalNetwork(nn.Module):
    """Proposals from anchors, and the RPN's losses in training.

    Anchors are labelled by a :class:`~sklearn_papers.nn._detection_utils.Matcher`
    (IoU at least ``fg_iou_thresh`` positive, below ``bg_iou_thresh`` negative, each
    object's best anchors positive), ``batch_size_per_image`` of them sampled per image
    with at most ``positive_fraction`` positives; the losses are the binary cross-entropy
    of the sampled anchors' objectness and the smooth L1 (beta 1/9) of the positives'
    deltas, both divided by the number of sampled anchors (Ren et al. 2015).

    Proposals: per level the ``pre_nms_top_n`` highest-scoring anchors, decoded and
    clipped to the image, NMS at ``nms_thresh`` within each level, then the
    ``post_nms_top_n`` best per image.

    Parameters
    ----------
    anchor_generator : AnchorGenerator
    head : RPNHead
    fg_iou_thresh, bg_iou_thresh : float, default=0.7, 0.3
    batch_size_per_image : int, default=128
    positive_fraction : float, default=0.5
    pre_nms_top_n, post_nms_top_n : int, default=100, 50
    nms_thresh : float, default=0.7
    """

    def __init__(self, anchor_generator, head, *, fg_iou_thresh=0.7, bg_iou_thresh=0.3,
                 batch_size_per_image=128, positive_fraction=0.5, pre_nms_top_n=100,
                 post_nms_top_n=50, nms_thresh=0.7):
        super().__init__()
        self.anchor_generator = anchor_generator
        self.head = head
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh,
                                        allow_low_quality_matches=True)
        self.fg_bg_sampler = BalancedPositiveNegativeSampler(batch_size_per_image,
                                                             positive_fraction)
        self.box_coder = BoxCoder()
        self.pre_nms_top_n = int(pre_nms_top_n)
        self.post_nms_top_n = int(post_nms_top_n)
        self.nms_thresh = float(nms_thresh)

    def assign_targets_to_anchors(self, anchors, boxes, gt_valid):
        """Label each anchor and give it the ground-truth box it matches.

        Parameters
        ----------
        anchors : Tensor of shape (A, 4)
            All levels' anchors.
        boxes : Tensor of shape (N, G, 4)
        gt_valid : Tensor of shape (N, G) of bool
            False for padding boxes, which match nothing.

        Returns
        -------
        labels : Tensor of shape (N, A) of int64
            1 positive, 0 negative, -1 ignored.
        matched_gt_boxes : Tensor of shape (N, A, 4)
            The box each anchor overlaps most (meaningful for positives only).
        """
        n = boxes.shape[0]
        iou = box_iou(anchors[None].expand(n, -1, -1), boxes)  # (N, A, G)
        matched, labels = self.proposal_matcher(torch.where(gt_valid[:, None, :], iou, -1.0))
        return labels, gather_rows(boxes, matched)

    def compute_loss(self, objectness, deltas, anchors, labels, matched_gt_boxes):
        """Objectness and box losses on a random sample of the labelled anchors.

        Parameters
        ----------
        objectness : Tensor of shape (N, A)
            Logits.
        deltas : Tensor of shape (N, A, 4)
        anchors : Tensor of shape (A, 4)
        labels, matched_gt_boxes : Tensors of shape (N, A) and (N, A, 4)
            From :meth:`assign_targets_to_anchors`.

        Returns
        -------
        loss_objectness, loss_box : scalar Tensors
            The box loss is 0 with a (zero) gradient when no anchor is positive.
        """
        n = objectness.shape[0]
        pos, neg = self.fg_bg_sampler(labels)
        sampled = pos | neg
        n_sampled = sampled.sum().clamp(min=1)
        loss_objectness = F.binary_cross_entropy_with_logits(
            objectness[sampled], pos[sampled].float(), reduction="sum") / n_sampled
        if not pos.any():
            return loss_objectness, deltas.sum() * 0.0
        target = self.box_coder.encode(anchors[None].expand(n, -1, -1)[pos],
                                       matched_gt_boxes[pos])
        loss_box = F.smooth_l1_loss(deltas[pos], target, beta=SMOOTH_L1_BETA,
                                    reduction="sum") / n_sampled
        return loss_objectness, loss_box

    def filter_proposals(self, objectness, deltas, anchors, image_size):
        """Top-k per level, decode, clip, NMS per level, top-k per image (no gradient).

        Parameters
        ----------
        objectness, deltas, anchors : lists with one entry per level
            As returned by :class:`RPNHead` and :class:`AnchorGenerator`.
        image_size : tuple of int
            ``(height, width)`` in pixels.

        Returns
        -------
        proposals : Tensor of shape (N, P, 4)
            ``P = min(post_nms_top_n, candidates)``, by decreasing objectness.
        valid : Tensor of shape (N, P) of bool
            False for padding (suppressed, empty or non-finite candidates).
        """
        height, width = image_size
        all_boxes, all_scores = [], []
        for lg, dl, an in zip(objectness, deltas, anchors):
            lg, dl = lg.detach(), dl.detach()
            k = min(self.pre_nms_top_n, lg.shape[1])
            scores, idx = lg.topk(k, dim=1)
            d = gather_rows(dl, idx)
            a = an[idx]
            boxes = self.box_coder.decode(a.reshape(-1, 4), d.reshape(-1, 4)).reshape(
                idx.shape + (4,))
            all_boxes.append(clip_boxes(boxes, height, width))
            all_scores.append(scores)
        keeps = []
        for b, s in zip(all_boxes, all_scores):
            # NMS within each level (boxes of two levels never suppress each other): a
            # pair matrix per level, not one over all levels' candidates
            wh = b[..., 2:] - b[..., :2]
            keeps.append(nms_mask(b, s, (wh > 1e-3).all(-1) & torch.isfinite(s), None,
                                  self.nms_thresh))
        boxes = torch.cat(all_boxes, 1)
        scores = torch.cat(all_scores, 1)
        keep = torch.cat(keeps, 1)
        k = min(self.post_nms_top_n, boxes.shape[1])
        top = torch.where(keep, scores, -torch.inf).topk(k, dim=1).indices
        return gather_rows(boxes, top), gather_rows(keep, top)

    def forward(self, features, image_size, targets=None):
        """Proposals of a batch, and the RPN's losses when ``targets`` are given.

        Parameters
        ----------
        features : list of Tensors of shape (N, C, H_l, W_l)
        image_size : tuple of int
            ``(height, width)`` of the (padded) images in pixels.
        targets : dict or None, default=None
            ``"boxes"`` (N, G, 4) and ``"labels"`` (N, G) (0 for padding).

        Returns
        -------
        proposals : Tensor of shape (N, P, 4)
        valid : Tensor of shape (N, P) of bool
        losses : dict
            ``"loss_rpn_cls"`` and ``"loss_rpn_box"`` with targets; empty without.
        """
        anchors = self.anchor_generator(features)
        objectness, deltas = self.head(features)
        losses = {}
        if targets is not None:
            all_anchors = torch.cat(anchors, 0)
            obj = torch.cat(objectness, 1)
            dlt = torch.cat(deltas, 1)
            labels, matched = self.assign_targets_to_anchors(
                all_anchors, targets["boxes"], targets["labels"] > 0)
            loss_cls, loss_box = self.compute_loss(obj, dlt, all_anchors, labels, matched)
            losses = {"loss_rpn_cls": loss_cls, "loss_rpn_box": loss_box}
        proposals, valid = self.filter_proposals(objectness, deltas, anchors, image_size)
        return proposals, valid, losses
