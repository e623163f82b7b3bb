"""RoI feature extraction from one feature map or a pyramid (torchvision's
``ops/poolers.py``): :class:`MultiScaleRoIPool`.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV.
Lin, T.-Y., Dollar, P., Girshick, R., He, K., Hariharan, B. and Belongie, S. (2017).
Feature pyramid networks for object detection. CVPR.
"""

import torch
from torch import nn

from sklearn_papers.nn._detection import _roi_align, roi_pool

__all__ = ["MultiScaleRoIPool"]


class MultiScaleRoIPool(nn.Module):
    """RoIAlign (or RoIPool) of each RoI from its pyramid level, or from the single map.

    With several levels, a RoI of ``w x h`` pixels is read from level
    ``floor(3 + log2(sqrt(w h) / canonical_size))`` clipped to the levels P2 to P4 (Lin
    et al. 2017, eq. 1, with ``canonical_size`` at P3 in place of 224 px at P4). With the
    strides 4, 8 and 16 and the default 32 px, each RoI is read from the coarsest level
    on which it spans at least 4 feature cells across (``stride <= sqrt(w h) / 4``), and
    RoIs under 32 px from the finest: the pooled features of small objects are then
    interpolated from cells of at most a quarter of their size.

    Parameters
    ----------
    strides : tuple of int
        Stride in pixels of each feature level (one entry for a single map).
    output_size : int
        Side of the pooled features.
    roi_op : {"align", "pool"}, default="align"
        ``"align"``: :func:`~sklearn_papers.nn.roi_align` with ``sampling_ratio=2`` and
        ``aligned=True``; ``"pool"``: the quantised :func:`~sklearn_papers.nn.roi_pool`.
    canonical_size : float, default=32
        Size ``sqrt(w h)`` in pixels of the RoIs read from P3 (the second level).
    """

    def __init__(self, strides, output_size, roi_op="align", canonical_size=32.0):
        super().__init__()
        self.strides = tuple(int(s) for s in strides)
        self.output_size = int(output_size)
        self.roi_op = roi_op
        self.canonical_size = float(canonical_size)

    def _op(self, features, rois, stride):
        if self.roi_op == "align":
            size = (self.output_size, self.output_size)
            return _roi_align(features, rois, size, 1.0 / stride, 2, True)
        return roi_pool(features, rois, self.output_size, 1.0 / stride)

    def forward(self, features, rois):
        """Pooled features of each RoI.

        Parameters
        ----------
        features : list of Tensors of shape (N, C, H_l, W_l)
        rois : Tensor of shape (K, 5)
            ``(image index, x1, y1, x2, y2)`` in image pixels.

        Returns
        -------
        pooled : Tensor of shape (K, C, output_size, output_size)
            In the order of ``rois``.
        """
        if len(features) == 1 or rois.shape[0] == 0:
            return self._op(features[0], rois, self.strides[0])
        wh = (rois[:, 3:5] - rois[:, 1:3]).clamp(min=1e-6)
        size = torch.sqrt(wh[:, 0] * wh[:, 1])
        level = torch.floor(3 + torch.log2(size / self.canonical_size + 1e-8)).clamp(2, 4).long() - 2
        # each level's RoIs pooled at once, then put back in the order of ``rois``
        order = torch.argsort(level, stable=True)
        counts = torch.bincount(level, minlength=len(features)).tolist()
        pooled = [self._op(f, r, s) for f, r, s, n in zip(
            features, torch.split(rois[order], counts), self.strides, counts) if n]
        return torch.cat(pooled)[torch.argsort(order)]
