"""Mask R-CNN (He et al. 2017) in pure torch, composed of its pieces: the backbone
(:mod:`._backbone`), the region proposal network (:mod:`._rpn`) and the RoI heads
(:mod:`._roi_heads`), with the matcher, sampler and box coder of
:mod:`sklearn_papers.nn._detection_utils`.

Shapes: images ``(N, C, H, W)`` float32 (normalised by the module's ``mean`` and ``std``
buffers inside the module); ground truth padded to ``G`` instances per image: ``boxes (N,
G, 4)`` float32 ``(x1, y1, x2, y2)`` in pixels (max exclusive), ``labels (N, G)`` int64
with 0 for padding and ``1..n_classes`` for objects, ``masks (N, G, H, W)`` uint8 / bool.
Everything is vectorised over the images of a batch: proposals and detections are kept as
padded ``(N, T, ...)`` tensors with validity masks.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV.
Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN. NeurIPS.
Lin, T.-Y., Dollar, P., Girshick, R., He, K., Hariharan, B. and Belongie, S. (2017).
Feature pyramid networks for object detection. CVPR.
"""

import torch
from skorch import NeuralNet
from torch import nn

from sklearn_papers.nn._mask_rcnn._backbone import Backbone
from sklearn_papers.nn._mask_rcnn._poolers import MultiScaleRoIPool
from sklearn_papers.nn._mask_rcnn._roi_heads import (
    FastRCNNPredictor,
    MaskRCNNHeads,
    MaskRCNNPredictor,
    RoIHeads,
    TwoMLPHead,
)
from sklearn_papers.nn._mask_rcnn._rpn import AnchorGenerator, RegionProposalNetwork, RPNHead

__all__ = ["LossOutputNet", "MaskRCNNModule"]


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
    mask_rois_per_image : int or None, default=None
        Most positive RoIs per image the mask branch is trained on (a random subset of
        the sampled positives); None: all of them (the paper's), up to a quarter of
        ``roi_batch_size``. A cap makes training cheaper: the mask branch is the most
        costly part of a step.
    detections_per_image : int, default=100
    score_threshold : float, default=0.05
    box_nms_threshold : float, default=0.5
    mean, std : sequence of float or None
        Per-channel normalisation applied to the images inside the module.
    mask_image : bool or "local", default=False
        The mask head also reads the normalised image, RoIAligned over each RoI at the
        head's resolution (``in_channels`` more channels at its first conv); ``"local"``:
        each RoI's pixels standardised by their own mean and standard deviation
        (:func:`~sklearn_papers.nn._mask_rcnn._roi_heads.local_image_crops`); False: the
        paper's head, features only.
    mask_box_expand : float, default=1.0
        Factor by which the mask branch enlarges each box about its centre (see
        :class:`RoIHeads`); the masks of :meth:`detect` cover the enlarged boxes.
    """

    def __init__(self, n_classes, in_channels, *, width=16, fpn=False, roi_op="align",
                 mask_loss="sigmoid", anchor_sizes=(8, 16, 32), aspect_ratios=(0.5, 1.0, 2.0),
                 rpn_pre_nms_top_n=100, rpn_post_nms_top_n=50, rpn_batch_size=128,
                 roi_batch_size=64, mask_rois_per_image=None, detections_per_image=100,
                 score_threshold=0.05, box_nms_threshold=0.5, mean=None, std=None,
                 mask_image=False, mask_box_expand=1.0):
        super().__init__()
        self.n_classes = int(n_classes)
        if mask_image not in (True, False, "local"):
            raise ValueError(f"mask_image must be True, False or 'local', got "
                             f"{mask_image!r}.")
        self.mask_image = mask_image if mask_image == "local" else bool(mask_image)
        self.backbone = Backbone(in_channels, width, fpn)
        self.strides = self.backbone.strides
        c = self.backbone.out_channels
        sizes = tuple(float(s) for s in anchor_sizes)
        if fpn:
            if len(sizes) != len(self.strides):
                raise ValueError(f"with an FPN, anchor_sizes needs one size per level "
                                 f"({len(self.strides)}), got {anchor_sizes!r}.")
            level_sizes = tuple((s,) for s in sizes)
        else:
            level_sizes = (sizes,)
        # RPN: IoU >= 0.7 positive, < 0.3 negative, each object's best anchors positive,
        # half of the sampled anchors positive at most; RoI heads: IoU >= 0.5 positive, a
        # quarter of the sampled proposals positive at most (Ren et al. 2015)
        anchor_generator = AnchorGenerator(self.strides, level_sizes, aspect_ratios)
        self.rpn = RegionProposalNetwork(
            anchor_generator, RPNHead(c, anchor_generator.num_anchors_per_location()),
            fg_iou_thresh=0.7, bg_iou_thresh=0.3, batch_size_per_image=rpn_batch_size,
            positive_fraction=0.5, pre_nms_top_n=rpn_pre_nms_top_n,
            post_nms_top_n=rpn_post_nms_top_n, nms_thresh=0.7)
        n_mask = self.n_classes if mask_loss == "sigmoid" else self.n_classes + 1
        self.roi_heads = RoIHeads(
            MultiScaleRoIPool(self.strides, 7, roi_op), TwoMLPHead(c * 7 * 7, 4 * c),
            FastRCNNPredictor(4 * c, self.n_classes), MultiScaleRoIPool(self.strides, 14, roi_op),
            MaskRCNNHeads(c + (in_channels if mask_image else 0), 2, c),
            MaskRCNNPredictor(c, n_mask), self.n_classes,
            fg_iou_thresh=0.5, bg_iou_thresh=0.5, batch_size_per_image=roi_batch_size,
            positive_fraction=0.25, score_thresh=score_threshold, nms_thresh=box_nms_threshold,
            detections_per_img=detections_per_image, mask_loss=mask_loss,
            mask_rois_per_image=mask_rois_per_image, mask_box_expand=mask_box_expand,
            mask_image_local=mask_image == "local")
        # the output layers' initialisation is drawn once every layer is built, in this
        # order, which fixes what a seeded build gives
        self.rpn.head.reset_parameters()
        self.roi_heads.box_predictor.reset_parameters()
        mean = torch.zeros(in_channels) if mean is None else torch.as_tensor(mean)
        std = torch.ones(in_channels) if std is None else torch.as_tensor(std)
        self.register_buffer("mean", mean.float().reshape(1, -1, 1, 1))
        self.register_buffer("std", std.float().reshape(1, -1, 1, 1))

    # proposal budgets and the detections' NMS threshold, which the estimator reads and
    # adapts to the size of the images at prediction
    @property
    def rpn_pre_nms_top_n(self):
        """Proposals kept per level before NMS (the RPN's ``pre_nms_top_n``)."""
        return self.rpn.pre_nms_top_n

    @rpn_pre_nms_top_n.setter
    def rpn_pre_nms_top_n(self, value):
        self.rpn.pre_nms_top_n = int(value)

    @property
    def rpn_post_nms_top_n(self):
        """Proposals kept per image after NMS (the RPN's ``post_nms_top_n``)."""
        return self.rpn.post_nms_top_n

    @rpn_post_nms_top_n.setter
    def rpn_post_nms_top_n(self, value):
        self.rpn.post_nms_top_n = int(value)

    @property
    def box_nms_threshold(self):
        """IoU threshold of the detections' class-wise NMS (the RoI heads'
        ``nms_thresh``)."""
        return self.roi_heads.nms_thresh

    def _normalise(self, images):
        return (images.float() - self.mean) / self.std

    def forward(self, images, boxes=None, labels=None, masks=None):
        """Losses in training mode; padded detections (see :meth:`detect`) otherwise."""
        if not self.training or boxes is None:
            return self.detect(images)
        return self.losses(images, boxes, labels, masks)

    def losses(self, images, boxes, labels, masks):
        """Dict of the five losses and their sum ``"loss"`` on one batch.

        Parameters
        ----------
        images : Tensor of shape (N, C, H, W)
        boxes : Tensor of shape (N, G, 4)
        labels : Tensor of shape (N, G) of int
            0 for padding.
        masks : Tensor of shape (N, G, H, W)

        Returns
        -------
        dict of scalar Tensors
            ``"loss_rpn_cls"``, ``"loss_rpn_box"`` (:class:`RegionProposalNetwork`),
            ``"loss_cls"``, ``"loss_box"``, ``"loss_mask"`` (:class:`RoIHeads`) and their
            sum ``"loss"``.
        """
        images = self._normalise(images)
        n, _, height, width = images.shape
        boxes = boxes.float()
        labels = labels.long()
        if labels.shape[1] == 0:  # no objects in the batch: one padding slot
            boxes = boxes.new_zeros((n, 1, 4))
            labels = labels.new_zeros((n, 1))
            masks = masks.new_zeros((n, 1, height, width))
        targets = {"boxes": boxes, "labels": labels, "masks": masks}
        features = self.backbone(images)
        proposals, valid, rpn = self.rpn(features, (height, width), targets)
        roi = self.roi_heads(features, proposals, valid, (height, width), targets,
                             images if self.mask_image else None)
        total = (roi["loss_cls"] + roi["loss_box"] + roi["loss_mask"] + rpn["loss_rpn_cls"]
                 + rpn["loss_rpn_box"])
        return {"loss": total, **roi, **rpn}

    @torch.no_grad()
    def detect(self, images, owned=None, flip=False):
        """Detections of a batch, padded to ``detections_per_image``.

        Parameters
        ----------
        images : Tensor of shape (N, C, H, W)
        owned : tuple of two Tensors or None, default=None
            ``(offsets, bounds)``: only the detections whose box centre, shifted by
            ``offsets``, lies within ``bounds`` stay valid and get masks (see
            :class:`~sklearn_papers.nn._mask_rcnn._roi_heads.RoIHeads`).
        flip : bool, default=False
            Average each detection's mask logits with those of the images mirrored left
            to right (one more backbone pass; boxes and scores are those of the images
            as given).

        Returns
        -------
        dict with ``boxes (N, D, 4)``, ``scores (N, D)``, ``labels (N, D)`` (1-based),
        ``valid (N, D)`` bool, and ``masks (N, D, M, M)`` float: the probability of the
        detection's class in its box (the mask branch is run on the final detections,
        as in the paper's inference).
        """
        images = self._normalise(images)
        height, width = images.shape[-2:]
        features = self.backbone(images)
        proposals, valid, _ = self.rpn(features, (height, width))
        flipped = None
        if flip:
            mirrored = images.flip(-1)
            flipped = (self.backbone(mirrored), mirrored if self.mask_image else None)
        return self.roi_heads(features, proposals, valid, (height, width),
                              images=images if self.mask_image else None, owned=owned,
                              flipped=flipped)


class LossOutputNet(NeuralNet):
    """skorch net whose module returns its own losses in training.

    Only ``get_loss`` is overridden (a documented skorch extension point): the module's
    training forward returns the dict of :meth:`MaskRCNNModule.losses`, and the optimised
    loss is its ``"loss"`` entry; the criterion is unused.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The ``"loss"`` entry of the module's output dict."""
        return y_pred["loss"]
