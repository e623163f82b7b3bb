"""GROVER's low-level tensor operations: segment means, positions in segments, dyMPN hop
draws, neighbour pairs and the sparse-row linear map."""

import math

import torch
from torch.nn import functional as F


def segment_mean(values, segment, n_segments):
    """Mean of rows per segment; an empty segment gives a zero row.

    Parameters
    ----------
    values : torch.Tensor of shape (M, D)
    segment : torch.Tensor of shape (M,), int64
        Segment (molecule) of each row, in ``[0, n_segments)``.
    n_segments : int

    Returns
    -------
    means : torch.Tensor of shape (n_segments, D)
    """
    out = values.new_zeros((int(n_segments), values.shape[1])).index_add_(0, segment, values)
    count = torch.bincount(segment, minlength=int(n_segments)).clamp(min=1)
    return out / count.unsqueeze(1).to(values.dtype)


def _positions(segment, n_segments):
    """Position of each row inside its segment (rows are grouped by segment, in order).

    Returns ``(pos, max_len)``; ``pos`` has shape (M,).
    """
    counts = torch.bincount(segment, minlength=int(n_segments))
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(segment.shape[0], device=segment.device) - starts[segment]
    max_len = int(counts.max()) if counts.numel() else 0
    return pos, max_len


def draw_hops(depth, training):
    """Number of message-passing hops of a dyMPN (Rong et al. 2020, Section 3.1).

    In training, a draw from a normal distribution with mean ``depth`` and standard deviation
    1 truncated to ``[depth - 3, depth + 3]``, rounded down and at least 1 (GROVER's
    "truncnorm" dynamic depth); the torch global RNG is used, so seed it (the estimators do,
    inside ``torch.random.fork_rng``). In evaluation, ``depth``.

    Parameters
    ----------
    depth : int
    training : bool

    Returns
    -------
    hops : int
    """
    if not training:
        return int(depth)
    while True:
        z = float(torch.randn(()))
        if -3.0 <= z <= 3.0:
            return max(1, int(math.floor(depth + z)))


def _neighbour_pairs(view, edge_index, n_atoms):
    """Non-zero pattern of the aggregation of a view, as (rows, cols) sorted by row.

    Node view (``n_atoms`` rows): ``(v, u)`` for every edge ``u -> v``, so row ``v`` sums
    its neighbour atoms. Edge view (``E`` rows): ``(e, f)`` for every edge ``f`` entering the
    source atom of edge ``e``, except ``e``'s reverse ``e ^ 1`` (directed-bond message
    passing).
    """
    src, dst = edge_index[0], edge_index[1]
    if view == "node":
        order = torch.argsort(dst, stable=True)
        return dst[order], src[order]
    n_edges = src.shape[0]
    by_dst = torch.argsort(dst, stable=True)
    count = torch.bincount(dst, minlength=int(n_atoms))
    start = torch.cumsum(count, 0) - count
    per_edge = count[src]  # edges entering the source atom of each edge
    rows = torch.repeat_interleave(torch.arange(n_edges, device=src.device), per_edge)
    offset = torch.arange(rows.shape[0], device=src.device) \
        - torch.repeat_interleave(torch.cumsum(per_edge, 0) - per_edge, per_edge)
    cols = by_dst[start[src[rows]] + offset]
    keep = cols != (rows ^ 1)
    return rows[keep], cols[keep]


def _sparse_rows_product(x, weight):
    """``x @ weight.T`` for an (N, F) matrix ``x`` of mostly zeros (GROVER's one-hot atom
    features: about 12 non-zeros of 151), (N, K).

    Without gradients it sums the ``weight`` columns of the non-zero entries
    (``embedding_bag``: a fraction of the dense product's work); otherwise the dense
    product. Equal up to float32 round-off.
    """
    if torch.is_grad_enabled() or x.shape[0] == 0:
        return F.linear(x, weight)
    rows, cols = x.nonzero(as_tuple=True)
    offsets = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
    offsets[1:] = torch.cumsum(torch.bincount(rows, minlength=x.shape[0]), 0)[:-1]
    return F.embedding_bag(cols, weight.t().contiguous(), offsets, mode="sum",
                           per_sample_weights=x[rows, cols])
