"""Mask R-CNN (He et al. 2017) in pure torch, split as torchvision's detection models are:

- :mod:`._backbone`: :class:`Backbone` (GroupNorm ResNet, single map or FPN);
- :mod:`._rpn`: :class:`AnchorGenerator`, :class:`RPNHead`, :class:`RegionProposalNetwork`;
- :mod:`._poolers`: :class:`MultiScaleRoIPool` (RoIAlign / RoIPool per pyramid level);
- :mod:`._roi_heads`: box and mask heads and predictors, their losses, mask targets,
  inference and :class:`RoIHeads`;
- :mod:`._model`: :class:`MaskRCNNModule`, which composes them, and
  :class:`LossOutputNet` (the skorch net that optimises the module's own loss).

The matcher, sampler and box coder are in :mod:`sklearn_papers.nn._detection_utils`.
"""

from sklearn_papers.nn._mask_rcnn._backbone import Backbone
from sklearn_papers.nn._mask_rcnn._model import LossOutputNet, MaskRCNNModule
from sklearn_papers.nn._mask_rcnn._roi_heads import (
    mask_loss_sigmoid,
    mask_loss_softmax,
    paste_mask_crops,
    paste_masks,
)

__all__ = ["Backbone", "LossOutputNet", "MaskRCNNModule", "mask_loss_sigmoid",
           "mask_loss_softmax", "paste_mask_crops", "paste_masks"]
