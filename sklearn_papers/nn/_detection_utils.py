"""The matching, sampling and box-coding pieces of two-stage detectors, by their
torchvision names (``torchvision.models.detection._utils``): :class:`Matcher`,
:class:`BalancedPositiveNegativeSampler` and :class:`BoxCoder`, and :func:`gather_rows`,
which picks entries of padded per-image tensors.

Unlike torchvision's, which work on one image at a time, these take a padded batch:
rows are images, and padding entries are marked by an IoU of -1 (:class:`Matcher`) or a
label of -1 (:class:`BalancedPositiveNegativeSampler`).

References
----------
Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN. NeurIPS.
"""

import torch

from sklearn_papers.nn._detection import decode_boxes, encode_boxes

__all__ = ["BalancedPositiveNegativeSampler", "BoxCoder", "Matcher", "gather_rows"]


class Matcher:
    """Each element (anchor or proposal) matched to the ground-truth box it overlaps most.

    An element whose best IoU is at least ``high_threshold`` is positive (label 1), below
    ``low_threshold`` negative (0), in between ignored (-1). With
    ``allow_low_quality_matches``, the elements that are the best match of some ground
    truth box (ties included) are positive whatever their IoU, so that every object has
    an anchor (Faster R-CNN's RPN rule).

    Parameters
    ----------
    high_threshold : float
    low_threshold : float
        At most ``high_threshold``; equal thresholds leave nothing ignored.
    allow_low_quality_matches : bool, default=False
    """

    def __init__(self, high_threshold, low_threshold, allow_low_quality_matches=False):
        if low_threshold > high_threshold:
            raise ValueError(f"low_threshold={low_threshold} must not exceed "
                             f"high_threshold={high_threshold}.")
        self.high_threshold = float(high_threshold)
        self.low_threshold = float(low_threshold)
        self.allow_low_quality_matches = bool(allow_low_quality_matches)

    def __call__(self, iou):
        """Match a batch.

        Parameters
        ----------
        iou : Tensor of shape (B, M, G)
            IoU of each element with each ground-truth box of its row; -1 for a padding
            box (or a padding element), which never matches.

        Returns
        -------
        matched : Tensor of shape (B, M) of int64
            Index of the best ground-truth box (0 when the row has none).
        labels : Tensor of shape (B, M) of int64
            1 positive, 0 negative, -1 ignored.
        """
        b, m, g = iou.shape
        if g == 0:
            best = iou.new_full((b, m), -1.0)
            matched = torch.zeros((b, m), dtype=torch.long, device=iou.device)
        else:
            best, matched = iou.max(2)
        labels = torch.full_like(matched, -1)
        labels = torch.where(best < self.low_threshold, 0, labels)
        labels = torch.where(best >= self.high_threshold, 1, labels)
        if self.allow_low_quality_matches and g:
            gt_best = iou.max(1, keepdim=True).values  # (B, 1, G)
            low_quality = ((iou == gt_best) & (gt_best > 0)).any(2)
            labels = torch.where(low_quality, 1, labels)
        return matched, labels


class BalancedPositiveNegativeSampler:
    """A random sample of positives and negatives per row, at most a fraction positive.

    Up to ``batch_size_per_image * positive_fraction`` positives, the rest of
    ``batch_size_per_image`` negatives, drawn uniformly without replacement in every row at
    once from torch's global generator (seeded by the caller).

    Parameters
    ----------
    batch_size_per_image : int
    positive_fraction : float
    """

    def __init__(self, batch_size_per_image, positive_fraction):
        self.batch_size_per_image = int(batch_size_per_image)
        self.positive_fraction = float(positive_fraction)

    def __call__(self, labels):
        """Sample a batch.

        Parameters
        ----------
        labels : Tensor of shape (B, M) of int
            1 positive, 0 negative, -1 ignored.

        Returns
        -------
        positive, negative : Tensors of shape (B, M) of bool
        """
        n = self.batch_size_per_image
        pos, neg = labels == 1, labels == 0
        n_pos = pos.sum(1).clamp(max=int(n * self.positive_fraction))
        n_neg = torch.minimum(n - n_pos, neg.sum(1))
        rand = torch.rand(labels.shape, device=labels.device)
        pos_rank = torch.where(pos, rand, 2.0).argsort(1).argsort(1)
        neg_rank = torch.where(neg, rand, 2.0).argsort(1).argsort(1)
        return pos & (pos_rank < n_pos[:, None]), neg & (neg_rank < n_neg[:, None])


class BoxCoder:
    """Box regression targets relative to reference boxes and back (Fast R-CNN's
    parametrisation, :func:`~sklearn_papers.nn._detection.encode_boxes`).

    Parameters
    ----------
    weights : tuple of 4 floats, default=(1, 1, 1, 1)
        ``(wx, wy, ww, wh)``; Fast R-CNN's box head uses ``(10, 10, 5, 5)``.
    """

    def __init__(self, weights=(1.0, 1.0, 1.0, 1.0)):
        self.weights = tuple(float(w) for w in weights)

    def encode(self, reference, target):
        """Deltas ``(K, 4)`` of ``target`` boxes ``(K, 4)`` from ``reference`` boxes."""
        return encode_boxes(reference, target, self.weights)

    def decode(self, reference, deltas):
        """Boxes ``(K, 4 k)`` from ``reference`` boxes ``(K, 4)`` and deltas ``(K, 4 k)``."""
        return decode_boxes(reference, deltas, self.weights)


def gather_rows(x, idx):
    """Entries of each row of a padded batch, by index.

    Parameters
    ----------
    x : Tensor of shape (B, T, ...)
    idx : Tensor of shape (B, k) of int64
        Indices into dimension 1 of ``x``.

    Returns
    -------
    rows : Tensor of shape (B, k, ...)
        ``rows[b, j] = x[b, idx[b, j]]``.
    """
    shape = idx.shape + x.shape[2:]
    return torch.gather(x, 1, idx.reshape(*idx.shape, *([1] * (x.dim() - 2))).expand(shape))
