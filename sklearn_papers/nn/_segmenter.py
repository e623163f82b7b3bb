"""Joint semantic + instance-centre + embedding network (Milioto, Mandtler & Stachniss 2019).

A shared convolutional encoder down to ``output_stride`` and three light decoders at that
resolution: semantic class logits, an instance-centre heatmap logit and per-pixel
embeddings. The training criterion sums weighted cross-entropy, a focal-modulated binary
cross-entropy on the centre heatmap and the discriminative loss on the embeddings, per
image, so that per-image weights apply.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from sklearn_papers.nn._discriminative import DiscriminativeLoss
# the segmenter trains with the shared sample-weighted net; its name here is the one the
# estimator imports
from sklearn_papers.nn._skorch import SampleWeightedNet as SegmenterNet

__all__ = ["JointSegmentationLoss", "JointSegmenterModule", "SegmenterNet"]


def _norm_layer(norm, channels):
    if norm == "batch":
        return nn.BatchNorm2d(channels)
    if norm == "group":
        return nn.GroupNorm(min(8, channels), channels)
    return nn.Identity()


class _ConvBlock(nn.Sequential):
    def __init__(self, c_in, c_out, *, stride=1, dilation=1, norm="batch"):
        super().__init__(
            nn.Conv2d(c_in, c_out, 3, stride=stride, padding=dilation, dilation=dilation,
                      bias=norm is None),
            _norm_layer(norm, c_out),
            nn.ReLU(inplace=True),
        )


class _Residual(nn.Module):
    def __init__(self, channels, *, dilation=1, norm="batch"):
        super().__init__()
        self.conv1 = _ConvBlock(channels, channels, dilation=dilation, norm=norm)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation,
                               bias=norm is None)
        self.norm2 = _norm_layer(norm, channels)

    def forward(self, x):
        return F.relu(x + self.norm2(self.conv2(self.conv1(x))))


class JointSegmenterModule(nn.Module):
    """Shared encoder and three decoders: semantic, centre heatmap, embedding.

    The encoder is a stride-2 convolution per halving of the resolution down to
    ``output_stride``, then residual blocks with dilations 1, 2 and 4 (a receptive field
    of about 30 input pixels at output stride 2). Each decoder is a 3x3 convolution,
    normalisation, ReLU and a 1x1 convolution. The first two embedding dimensions are
    offset by the pixel's coordinates ``(row, column)`` in units of ``coordinate_unit``
    input pixels (the centre of output cell ``i`` is at input pixel
    ``(i + 0.5) * output_stride``), so that identical touching objects, which a
    translation-equivariant network cannot tell apart, get different embeddings, while
    the embeddings of a shifted object shift by the same amount whatever the image's size:
    the network learns offsets in pixels, not positions relative to the image.

    Parameters
    ----------
    in_channels : int
        Image channels C.
    n_classes : int
        Object classes; the semantic decoder outputs ``n_classes + 1`` logits
        (background first).
    embedding_dim : int, default=8
        Dimension D of the pixel embeddings.
    width : int, default=32
        Channels of the encoder.
    decoder_width : int, default=16
        Channels of each decoder's hidden layer.
    output_stride : int, default=2
        Power of 2: the outputs are ``(H / output_stride, W / output_stride)``.
    norm : {"batch", "group"} or None, default="batch"
        Normalisation after each convolution.
    mean, std : sequence of C floats or None, default=None
        Per-channel input standardisation (identity when None).
    coordinate_unit : float, default=32.0
        Input pixels per unit of the coordinate offset of the embeddings.

    Notes
    -----
    ``forward(X)`` takes ``X`` of shape (B, C, H, W) float32 with H and W multiples of
    ``output_stride`` and returns ``(semantic_logits (B, n_classes + 1, h, w),
    center_logits (B, h, w), embedding (B, D, h, w))`` with ``h = H / output_stride``.

    References
    ----------
    .. [1] Milioto, A., Mandtler, L., Stachniss, C. (2019). Fast instance and semantic
       segmentation exploiting local connectivity, metric learning, and one-shot
       detection for robotics. IEEE International Conference on Robotics and
       Automation (ICRA).

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import JointSegmenterModule
    >>> net = JointSegmenterModule(3, n_classes=2, width=8)
    >>> semantic, center, embedding = net(torch.zeros(1, 3, 16, 16))
    >>> tuple(semantic.shape), tuple(center.shape), tuple(embedding.shape)
    ((1, 3, 8, 8), (1, 8, 8), (1, 8, 8, 8))
    """

    def __init__(self, in_channels, n_classes, embedding_dim=8, width=32, decoder_width=16,
                 output_stride=2, norm="batch", mean=None, std=None, coordinate_unit=32.0):
        super().__init__()
        self.coordinate_unit = float(coordinate_unit)
        n_down = int(round(math.log2(output_stride)))
        if 2**n_down != output_stride:
            raise ValueError(f"output_stride must be a power of 2, got {output_stride}.")
        self.output_stride = int(output_stride)
        mean = torch.zeros(in_channels) if mean is None else torch.as_tensor(mean)
        std = torch.ones(in_channels) if std is None else torch.as_tensor(std)
        self.register_buffer("mean", mean.float().reshape(1, -1, 1, 1))
        self.register_buffer("std", std.float().reshape(1, -1, 1, 1))
        layers = [_ConvBlock(in_channels, width, stride=2 if n_down else 1, norm=norm)]
        layers += [_ConvBlock(width, width, stride=2, norm=norm) for _ in range(n_down - 1)]
        layers += [_Residual(width, dilation=d, norm=norm) for d in (1, 2, 4)]
        self.encoder = nn.Sequential(*layers)

        def decoder(c_in, c_out):
            return nn.Sequential(_ConvBlock(c_in, decoder_width, norm=norm),
                                 nn.Conv2d(decoder_width, c_out, 1))

        self.semantic = decoder(width, n_classes + 1)
        self.center = decoder(width, 1)
        self.embedding = decoder(width, embedding_dim)
        # A centre is rare: start the heatmap near p = 0.01 (as RetinaNet's prior).
        nn.init.constant_(self.center[-1].bias, -math.log(99.0))

    def forward(self, X, sample_weight=None):
        """Semantic logits, centre logits and embeddings at the output stride.

        Parameters
        ----------
        X : torch.Tensor of shape (B, C, H, W)
            Images, float32, H and W multiples of ``output_stride``.
        sample_weight : ignored
            Accepted so that skorch can pass ``{"X": ..., "sample_weight": ...}``.

        Returns
        -------
        semantic_logits, center_logits, embedding : torch.Tensor
            Shapes (B, n_classes + 1, h, w), (B, h, w) and (B, D, h, w).
        """
        features = self.encoder((X - self.mean) / self.std)
        _, _, h, w = features.shape
        scale = self.output_stride / self.coordinate_unit
        ys = (torch.arange(h, device=X.device, dtype=features.dtype) + 0.5) * scale
        xs = (torch.arange(w, device=X.device, dtype=features.dtype) + 0.5) * scale
        coords = torch.stack(torch.meshgrid(ys, xs, indexing="ij"))  # (2, h, w)
        embedding = self.embedding(features)
        d = min(2, embedding.shape[1])
        embedding = torch.cat([embedding[:, :d] + coords[None, :d], embedding[:, d:]], 1)
        return (self.semantic(features), self.center(features)[:, 0], embedding)


def focal_binary_cross_entropy(logits, target, gamma, beta=4.0):
    """Per-image focal-modulated binary cross-entropy of a centre heatmap.

    At the centre pixels (``target == 1``) ``-(1 - p)^gamma log p``, elsewhere
    ``-(1 - y)^beta p^gamma log(1 - p)``: the abundant, easy background is down-weighted by
    ``p^gamma`` (Lin et al. 2017) and pixels next to a centre, whose Gaussian target ``y``
    is high, are hardly penalised (``(1 - y)^beta``, Law & Deng 2018). Summed over pixels
    and divided by the number of centres (at least 1), so that the loss does not shrink
    with the image area.

    Parameters
    ----------
    logits, target : torch.Tensor of shape (B, h, w)
        Heatmap logits and targets in [0, 1] (1 exactly at centres).
    gamma : float
        Focusing exponent; 0 gives plain cross-entropy at the centres.
    beta : float, default=4.0
        Exponent of the penalty reduction around centres.

    Returns
    -------
    loss : torch.Tensor of shape (B,)
    """
    p = torch.sigmoid(logits)
    log_p, log_not_p = F.logsigmoid(logits), F.logsigmoid(-logits)
    pos = target >= 1
    loss = torch.where(pos, -((1 - p) ** gamma) * log_p,
                       -((1 - target) ** beta) * p**gamma * log_not_p)
    n_pos = pos.flatten(1).sum(1).to(loss.dtype)
    return loss.flatten(1).sum(1) / torch.clamp(n_pos, min=1.0)


class JointSegmentationLoss(nn.Module):
    """Sum of the three heads' losses per image, averaged (or weighted) over the batch.

    Parameters
    ----------
    class_weights : sequence of floats
        Weight of each semantic class (background first) in the cross-entropy.
    gamma : float, default=2.0
        Focusing exponent of the centre heatmap loss.
    delta_v, delta_d : float, default=0.5, 1.5
        Margins of :class:`DiscriminativeLoss`.
    embedding_weight : float, default=1.0
        Weight of the discriminative loss in the sum.

    Notes
    -----
    ``forward(outputs, targets, sample_weight=None)``: ``outputs`` as returned by
    :class:`JointSegmenterModule`, ``targets`` a dict of ``"semantic"`` (B, h, w) int64,
    ``"center"`` (B, h, w) float32 in [0, 1] and ``"instance"`` (B, h, w) int64.
    """

    def __init__(self, class_weights, gamma=2.0, delta_v=0.5, delta_d=1.5,
                 embedding_weight=1.0):
        super().__init__()
        self.register_buffer("class_weights", torch.as_tensor(class_weights).float())
        self.gamma = float(gamma)
        self.embedding_weight = float(embedding_weight)
        self.discriminative = DiscriminativeLoss(delta_v=delta_v, delta_d=delta_d)

    def per_image(self, outputs, targets):
        """Loss of each image, shape (B,)."""
        semantic_logits, center_logits, embedding = outputs
        sem = targets["semantic"].long()
        ce = F.cross_entropy(semantic_logits, sem, weight=self.class_weights, reduction="none")
        pixel_w = self.class_weights[sem]
        ce = ce.flatten(1).sum(1) / pixel_w.flatten(1).sum(1)
        center = focal_binary_cross_entropy(center_logits, targets["center"].float(),
                                            self.gamma)
        inst = targets["instance"].long()
        disc = []
        for e, m in zip(embedding, inst):
            pull, push, reg = self.discriminative.terms(e, m)
            d = self.discriminative
            disc.append(d.alpha * pull + d.beta * push + d.gamma * reg)
        return ce + center + self.embedding_weight * torch.stack(disc)

    def forward(self, outputs, targets, sample_weight=None):
        """Batch loss (scalar)."""
        losses = self.per_image(outputs, targets)
        if sample_weight is None:
            return losses.mean()
        w = sample_weight.to(losses.dtype).reshape(-1)
        return (w * losses).sum() / torch.clamp(w.sum(), min=torch.finfo(losses.dtype).tiny)
