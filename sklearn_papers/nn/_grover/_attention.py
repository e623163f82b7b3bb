"""Attention among the rows of each molecule of a batch, padded per group of molecules of
similar length (:func:`attention_groups`)."""

import math

import numpy as np
import torch
from torch.nn import functional as F


#: Attention groups (see :func:`attention_groups`): a group holds the molecules whose
#: length exceeds its longest one's divided by ``ATTENTION_RATIO``; every molecule of at most
#: ``ATTENTION_FLOOR`` rows shares one group.
ATTENTION_RATIO = 1.5
ATTENTION_FLOOR = 64


#: Attention groups padded to at most this many rows are computed with plain batched
#: matrix products (faster for short sequences); longer ones with
#: ``scaled_dot_product_attention`` (which never holds the whole score tensor).
_MATH_ATTENTION_MAX = 96


def attention_groups(counts, ratio=ATTENTION_RATIO, floor=ATTENTION_FLOOR):
    """Group molecules by length so that padded attention costs about their own share.

    Attention among the ``n_i`` rows of each molecule is computed on a zero-padded
    ``(G, L, L)`` score tensor per group of ``G`` molecules, ``L`` the longest in the group.
    One group for the whole batch costs ``B * max(n)^2`` (one 500-atom chain makes 31 small
    molecules pay for 500^2 each); here a group starts at the longest remaining molecule
    (length ``L``) and takes every molecule longer than ``L / ratio``, so every padded
    score tensor holds at most ``ratio^2 n_i^2`` entries per molecule, and molecules of at
    most ``floor`` rows share one group (at most ``floor^2`` entries each). In all, the
    score entries are at most ``ratio^2 * sum(n_i^2) + B * floor^2``.

    Parameters
    ----------
    counts : array-like of int of shape (B,)
        Rows (atoms or directed edges) of each molecule; zeros are left out.
    ratio : float, default=1.5
    floor : int, default=64

    Returns
    -------
    groups : list of (ndarray of int64, int)
        Molecule indices of each group, longest first, and the group's padded length.
    """
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    order = order[counts[order] > 0]
    desc = counts[order]
    groups, i = [], 0
    while i < len(order):
        length = int(desc[i])
        cut = length / ratio if length > floor else 0
        j = i + int(np.searchsorted(-desc[i:], -cut, side="left"))  # first with n <= cut
        groups.append((order[i:j], length))
        i = j
    return groups


def _dense_attention(q, k, v, group, pos, n_groups, length, scratch=None, out=None,
                     padded=None, qkv=None):
    """Padded attention of one group: ``q``, ``k``, ``v`` (h, M, D) rows of ``n_groups``
    molecules (``group`` (M,) in ``[0, n_groups)``, ``pos`` (M,) in ``[0, length)``).

    The score tensor is (h, n_groups, length, length), padded keys masked out; computed by
    ``torch.nn.functional.scaled_dot_product_attention`` (scale ``1 / sqrt(D)``), or, when
    gradients are needed on the CPU, by :func:`_math_attention` (finite gradients for large
    logits). Returns (h, M, D).

    The inference path passes a :class:`Scratch` (the padded inputs are taken from it and,
    up to :data:`_MATH_ATTENTION_MAX` rows, the attention is computed with batched matrix
    products: the same values up to float32 round-off) and ``out``, an (M, h, D) tensor
    that receives the result (returned), and may pass ``padded``: ``(flat, bias)``,
    ``group * length + pos`` and the additive key mask (1, G, 1, length) (0 or -inf),
    and ``qkv``, the (3 h, M, D) tensor whose three blocks of ``h`` are ``q``, ``k``,
    ``v`` (padded in one copy).
    """
    n_heads, _, d = q.shape
    n_groups, length = int(n_groups), int(length)
    if padded is None:
        flat = group * length + pos  # row of each input row in the (G * L) padded layout
        mask = torch.zeros(n_groups * length, dtype=torch.bool, device=q.device)
        mask[flat] = True
        bias = None
    else:
        flat, bias = padded
        mask = None

    def dense(t, name):
        if scratch is None:
            padded = t.new_zeros((n_heads, n_groups * length, d))
        else:
            padded = scratch.get(name, (n_heads, n_groups * length, d), t).zero_()
        return padded.index_copy_(1, flat, t).view(n_heads, n_groups, length, d)

    if qkv is not None and scratch is not None:
        both = scratch.get("att_qkv", (3 * n_heads, n_groups * length, d), qkv).zero_()
        both.index_copy_(1, flat, qkv)
        both = both.view(3, n_heads, n_groups, length, d)
        dense_q, dense_k, dense_v = both[0], both[1], both[2]
    else:
        dense_q, dense_k, dense_v = (None,) * 3
    if scratch is not None and length <= _MATH_ATTENTION_MAX:
        rows = n_heads * n_groups
        if dense_q is None:
            dense_q, dense_k, dense_v = (dense(t, name) for t, name in (
                (q, "att_q"), (k, "att_k"), (v, "att_v")))
        qd, kd, vd = (t.reshape(rows, length, d) for t in (dense_q, dense_k, dense_v))
        if bias is None:
            bias = torch.zeros(n_groups * length, dtype=q.dtype, device=q.device) \
                .masked_fill_(~mask, float("-inf")).view(1, n_groups, 1, length)
        scores = torch.bmm(qd, kd.transpose(1, 2), out=scratch.get(
            "att_scores", (rows, length, length), q))
        scores.view(n_heads, n_groups, length, length).mul_(1.0 / math.sqrt(d)).add_(bias)
        att = torch.bmm(torch.softmax(scores, dim=-1), vd, out=scratch.get(
            "att_out", (rows, length, d), q))
    else:
        if mask is None:
            mask = bias == 0
        if dense_q is None:
            dense_q, dense_k, dense_v = (dense(t, name) for t, name in (
                (q, "att_q"), (k, "att_k"), (v, "att_v")))
        key_mask = mask.view(1, n_groups, 1, length)
        if q.device.type == "cpu" and torch.is_grad_enabled() and (
                q.requires_grad or k.requires_grad or v.requires_grad):
            att = _math_attention(dense_q, dense_k, dense_v, key_mask)
        else:
            att = F.scaled_dot_product_attention(dense_q, dense_k, dense_v,
                                                 attn_mask=key_mask)
    att = att.reshape(n_heads, n_groups * length, d)
    if out is None:
        return att.index_select(1, flat)
    return torch.index_select(att.transpose(0, 1), 0, flat, out=out)


def _math_attention(q, k, v, key_mask):
    """``softmax(q k^T / sqrt(D) + mask) v`` written out, for training on the CPU.

    ``F.scaled_dot_product_attention`` picks its flash kernel on the CPU, whose backward
    returns NaN gradients when attention logits are large (measured: query and key entries
    of 2e4 in a GROVER block trained from scratch on Tox21 gave NaN in the backward of a
    finite forward, and the fit diverged); autograd through these three operations gives
    the same values up to float32 round-off, with finite gradients. ``key_mask`` is a
    boolean (1, G, 1, L) mask of the valid keys (every query row has at least one).
    """
    scores = torch.matmul(q, k.transpose(-1, -2)).mul_(1.0 / math.sqrt(q.shape[-1]))
    scores = scores.masked_fill(~key_mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def _masked_attention(q, k, v, segment, n_segments):
    """Scaled dot-product attention among the rows of each segment, per head.

    ``q``, ``k``, ``v``: (h, M, D), rows grouped by segment in order. Returns (h, M, D).
    Rows only attend to rows of their own molecule (Rong et al. 2020, Eq. 3, applied per
    molecule). Molecules of similar length are padded together (:func:`attention_groups`),
    so a mixed batch costs about the sum of its molecules' own attention.
    """
    n_seg = int(n_segments)
    if q.shape[1] == 0:
        return q.new_zeros(q.shape)
    counts = torch.bincount(segment, minlength=n_seg)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(segment.shape[0], device=segment.device) - starts[segment]
    groups = attention_groups(counts.cpu().numpy())
    if len(groups) == 1:
        return _dense_attention(q, k, v, segment, pos, n_seg, groups[0][1])
    # Rows sorted by group (stable: each molecule's rows stay together and in order).
    group_of = np.full(n_seg, -1, dtype=np.int64)
    slot = np.zeros(n_seg, dtype=np.int64)
    for g, (members, _) in enumerate(groups):
        group_of[members] = g
        slot[members] = np.arange(len(members))
    group_of, slot = (torch.from_numpy(a).to(segment.device) for a in (group_of, slot))
    row_group = group_of[segment]
    order = torch.argsort(row_group, stable=True)
    sizes = torch.bincount(row_group, minlength=len(groups)).tolist()
    out = q.new_empty(q.shape)
    start = 0
    for (members, length), size in zip(groups, sizes):
        rows = order[start:start + size]
        start += size
        out[:, rows] = _dense_attention(q[:, rows], k[:, rows], v[:, rows],
                                        slot[segment[rows]], pos[rows], len(members), length)
    return out
