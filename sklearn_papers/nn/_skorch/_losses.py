"""Losses that more than one model trains with, and the packing of sample weights
into the targets they read."""

import numpy as np
import torch

__all__ = ["SampleWeightedTargetLoss", "pack_sample_weight", "soft_cross_entropy"]


def pack_sample_weight(target, sample_weight):
    """Targets with the sample weights as a last column, for :class:`SampleWeightedTargetLoss`.

    Carrying the weights inside ``y`` lets them follow every row through shuffling,
    batching and validation splits of any dataset and collate function unchanged.

    Parameters
    ----------
    target : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Float targets (NaN: missing) or int64 class codes.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights.

    Returns
    -------
    packed : ndarray of shape (n_samples, n_targets + 1), dtype float32
        Class codes are stored as floats (exact below 2**24).
    """
    target = np.asarray(target)
    target = target.reshape(len(target), -1).astype(np.float32)
    return np.column_stack([target, np.asarray(sample_weight, dtype=np.float32)])


class SampleWeightedTargetLoss(torch.nn.Module):
    """Per-sample-weighted loss on targets packed by :func:`pack_sample_weight`.

    The last target column holds the weight ``w_b`` of each sample. With per-entry losses
    ``l_bt`` and the labelled-entry mask ``m_bt`` (NaN targets are missing), the loss is
    ``sum_bt w_b m_bt l_bt / sum_bt w_b m_bt`` (0 when that sum is 0), so a sample of
    weight 0 counts as if it were left out, and unit weights give the unweighted masked
    mean.

    Parameters
    ----------
    loss : {"mse", "bce", "cross_entropy"}, default="mse"
        Squared error, binary cross-entropy on logits (both per entry, NaN targets left
        out), or softmax cross-entropy on class codes (one per sample).
    """

    def __init__(self, loss="mse"):
        super().__init__()
        if loss not in ("mse", "bce", "cross_entropy"):
            raise ValueError(f"loss={loss!r} is not one of 'mse', 'bce', 'cross_entropy'.")
        self.loss = loss

    def forward(self, input, target):
        """Weighted loss of ``input`` ``(B, T)`` against packed ``target`` ``(B, T' + 1)``.

        Parameters
        ----------
        input : torch.Tensor of shape (B, T)
            Network outputs (predictions or logits).
        target : torch.Tensor of shape (B, T + 1) or (B, 2)
            Targets then weights; for ``"cross_entropy"``, class codes then weights.

        Returns
        -------
        loss : torch.Tensor of shape ()
        """
        target = target.to(input.device)
        weight = target[:, -1].to(input.dtype)
        if self.loss == "cross_entropy":
            per_sample = torch.nn.functional.cross_entropy(
                input, target[:, 0].long(), reduction="none")
            return (weight * per_sample).sum() / weight.sum().clamp(min=1e-12)
        target = target[:, :-1].to(input.dtype).view_as(input)
        mask = ~torch.isnan(target)
        clean = torch.nan_to_num(target)
        if self.loss == "mse":
            per_entry = (input - clean) ** 2
        else:
            per_entry = torch.nn.functional.binary_cross_entropy_with_logits(
                input, clean, reduction="none")
        entry_weight = weight[:, None] * mask
        per_entry = torch.where(mask, per_entry, torch.zeros_like(per_entry))
        return (entry_weight * per_entry).sum() / entry_weight.sum().clamp(min=1e-12)


def soft_cross_entropy(logits, targets):
    """Per-row cross-entropy ``-sum_c t_c log softmax(z)_c``.

    Parameters
    ----------
    logits : torch.Tensor of shape (B, C)
    targets : torch.Tensor of shape (B, C)
        Rows summing to one.

    Returns
    -------
    torch.Tensor of shape (B,)
    """
    return -(targets * torch.log_softmax(logits, dim=1)).sum(dim=1)
