"""The backbone of the Mask R-CNN module: a small GroupNorm ResNet, as one feature map
(the paper's C4 design at our scale) or a feature pyramid.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV.
Lin, T.-Y., Dollar, P., Girshick, R., He, K., Hariharan, B. and Belongie, S. (2017).
Feature pyramid networks for object detection. CVPR.
Wu, Y. and He, K. (2018). Group normalization. ECCV.
"""

import math

import torch.nn.functional as F
from torch import nn

__all__ = ["Backbone"]


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
