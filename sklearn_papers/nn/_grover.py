"""GROVER (Rong et al., 2020): the GTransformer encoder, pretraining heads and losses.

Tensor shapes: a batch of ``B`` molecules with ``N`` atoms and ``E`` directed edges in all
(see :func:`sklearn_papers.nn._graph.collate_graphs`); ``F`` atom features (151), ``F_b``
bond features (14); ``H`` the hidden size; ``h`` the number of attention heads. Directed
edges ``2k`` and ``2k + 1`` are the two directions of bond ``k``, so the reverse of edge
``e`` is ``e ^ 1`` and the bond-level rows are the even edges.

Everything is vectorised over the batch: message passing is one sparse-dense product per
hop for all streams (:class:`NeighbourOperator`, built once per batch and view); attention
runs on zero-padded ``(G, L, H)`` layouts with a mask (``scaled_dot_product_attention``),
one per group of molecules of similar length (:func:`attention_groups`: a few groups per
batch, never one per molecule), so one large molecule does not make the whole batch pay
``B x L^2``; the linear maps that read the sparse 151 atom features run once per atom.

In evaluation mode without autograd (``transform``, ``predict``) :class:`GTransformer`
takes an inference path (:meth:`GTransformer._forward_inference`; the same values up to
float32 round-off, tested against the autograd path): compressed-row aggregation matrices
and attention groups built with numpy once per batch and view, short attention groups by
batched matrix products, and the large temporaries in a :class:`Scratch` that
:func:`inference_scratch` shares among the batches of one call (fresh large tensors cost
page faults on CPU).
"""

import contextlib
import math
import threading
import warnings

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._graph import collate_graphs

__all__ = [
    "ATTENTION_FLOOR",
    "ATTENTION_RATIO",
    "GTransformer",
    "GroverDataset",
    "GroverFinetuneModel",
    "GroverPretrainModel",
    "NeighbourOperator",
    "attention_groups",
    "collate_grover",
    "draw_hops",
    "grover_finetune_loss",
    "grover_pretrain_loss",
    "inference_scratch",
    "run_module",
    "segment_mean",
    "train_module",
]


# -- helpers --------------------------------------------------------------------------------
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


class NeighbourOperator:
    """The aggregation ``agg`` of a :class:`DyMPN` view as a sparse matrix, built once per
    batch and shared by every block and hop of that view.

    ``agg(m)`` of Rong et al. (2020), Section 3.1: in the node view the sum over neighbour
    atoms, in the edge view (edge ``u -> v``) the sum of the edges entering ``u`` except
    ``v -> u``. It is applied as one sparse-dense product to the ``S`` stacked streams
    (a block-diagonal matrix, one block per stream), compressed-row (CSR) when no gradient
    is needed (fastest forward) and coordinate (COO) otherwise (fast backward).

    Parameters
    ----------
    view : {"node", "edge"}
    edge_index : torch.Tensor of shape (2, E), int64
    n_atoms : int
    n_streams : int
        ``S``.

    Shapes: :meth:`single` maps (M, H) to (M, H); :meth:`streams` (S, M, H) to (S, M, H),
    with ``M = n_atoms`` (node view) or ``E`` (edge view).
    """

    def __init__(self, view, edge_index, n_atoms, n_streams):
        self.view = view
        self.n_rows = int(n_atoms) if view == "node" else int(edge_index.shape[1])
        self.n_streams = int(n_streams)
        self.rows, self.cols = _neighbour_pairs(view, edge_index, n_atoms)
        self._cache = {}

    def _matrix(self, n_blocks, grad, dtype):
        key = (n_blocks, grad, dtype)
        if key not in self._cache:
            m, nnz = self.n_rows, self.rows.shape[0]
            shift = (torch.arange(n_blocks, device=self.rows.device) * m).repeat_interleave(nnz)
            rows = self.rows.repeat(n_blocks) + shift
            cols = self.cols.repeat(n_blocks) + shift
            values = torch.ones(rows.shape[0], dtype=dtype, device=rows.device)
            size = (n_blocks * m, n_blocks * m)
            if grad:
                mat = torch.sparse_coo_tensor(torch.stack([rows, cols]), values, size,
                                              check_invariants=False).coalesce()
            else:
                crow = torch.zeros(n_blocks * m + 1, dtype=torch.int64, device=rows.device)
                crow[1:] = torch.cumsum(torch.bincount(rows, minlength=n_blocks * m), 0)
                if rows.shape[0] < 2 ** 31 and n_blocks * m < 2 ** 31:
                    crow, cols = crow.int(), cols.int()  # the faster CPU kernel
                with warnings.catch_warnings():  # "CSR support is in beta state", once
                    warnings.filterwarnings("ignore", message=".*Sparse CSR tensor support")
                    mat = torch.sparse_csr_tensor(crow, cols, values, size,
                                                  check_invariants=False)
            self._cache[key] = mat
        return self._cache[key]

    def _apply(self, values, n_blocks, out=None):
        if self.n_rows == 0 or self.rows.shape[0] == 0:
            return torch.zeros_like(values) if out is None else out.zero_()
        grad = torch.is_grad_enabled() and values.requires_grad
        if not grad and n_blocks > 1 and self.view == "edge" and values.device.type == "cpu":
            # The edge view's block-diagonal CSR product is slow on CPU (several times the
            # gather + ordered scatter-add below, which sums each row's terms in the same
            # order: the same values, bit for bit).
            out = values.new_zeros(values.shape) if out is None else out.zero_()
            return out.index_add_(1, self.rows, values.index_select(1, self.cols))
        flat = values.reshape(n_blocks * self.n_rows, values.shape[-1])
        mat = self._matrix(n_blocks, grad, values.dtype)
        if grad:
            return torch.sparse.mm(mat, flat).view(values.shape)
        # into a new buffer (beta=0: its contents are ignored); several times faster on
        # CPU than ``mat @ flat``
        out = flat.new_empty(flat.shape) if out is None else out.view(flat.shape)
        return torch.addmm(out, mat, flat, beta=0, out=out).view(values.shape)

    def single(self, values):
        """``agg`` of one (M, H) matrix."""
        return self._apply(values, 1)

    def streams(self, values, out=None):
        """``agg`` of each of the ``S`` streams of an (S, M, H) tensor (written into
        ``out``, a contiguous tensor of the same shape, when given; not with gradients)."""
        return self._apply(values, values.shape[0], out)


class DyMPN(nn.Module):
    """``S`` parallel message-passing streams with a shared, random number of hops.

    GROVER's dyMPN (Section 3.1): each attention head has three message-passing networks
    producing its query, key and value; they are run here as ``S = 3 h`` stacked streams
    (one weight matrix each, batched with ``baddbmm``). With ``x`` the block input and
    ``m^0 = x``, each hop computes ``m^{t} = relu(x + agg(m^{t-1}) W_s + b_s)``, where
    ``agg`` is, in the node view, the sum over neighbour atoms, and in the edge view (edge
    ``u -> v``), the sum of the edges entering ``u`` minus the reverse edge ``v -> u``
    (directed-bond message passing; :class:`NeighbourOperator`). The first hop aggregates
    ``x`` once for all streams.

    Parameters
    ----------
    n_streams : int
        ``S``.
    hidden_size : int
        ``H``.
    view : {"node", "edge"}
    dropout : float, default=0.0

    Shapes: ``x`` (M, H) with ``M = N`` (node view) or ``E`` (edge view); output (S, M, H).
    """

    def __init__(self, n_streams, hidden_size, view, dropout=0.0):
        super().__init__()
        self.view = view
        self.weight = nn.Parameter(torch.empty(n_streams, hidden_size, hidden_size))
        self.bias = nn.Parameter(torch.zeros(n_streams, 1, hidden_size))
        nn.init.xavier_uniform_(self.weight.view(-1, hidden_size))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, edge_index, n_atoms, hops, operator=None):
        """``operator``: a :class:`NeighbourOperator` of this view and batch (built here
        when None)."""
        n_streams = self.weight.shape[0]
        if int(hops) <= 0:
            return x.unsqueeze(0).expand(n_streams, -1, -1)
        if operator is None:
            operator = NeighbourOperator(self.view, edge_index, n_atoms, n_streams)
        base = x.unsqueeze(0) + self.bias  # (S, M, H): x + b_s, shared by every hop
        if not torch.is_grad_enabled():
            # Inference: two (S, M, H) buffers for every hop (fewer fresh allocations,
            # whose page faults cost as much as the arithmetic on CPU); the same values.
            agg_buf, m = torch.empty_like(base), torch.empty_like(base)
            for hop in range(int(hops)):
                if hop == 0:  # m^0 = x in every stream: aggregate it once
                    agg = operator.single(x).unsqueeze(0).expand(n_streams, -1, -1)
                else:
                    agg = operator.streams(m, out=agg_buf)
                torch.baddbmm(base, agg, self.weight, out=m)
                m = self.dropout(F.relu_(m))
            return m
        m = None
        for hop in range(int(hops)):
            if hop == 0:  # m^0 = x in every stream: aggregate it once
                agg = operator.single(x).unsqueeze(0).expand(n_streams, -1, -1)
            else:
                agg = operator.streams(m)
            m = self.dropout(F.relu(torch.baddbmm(base, agg, self.weight)))
        return m


#: Attention groups (see :func:`attention_groups`): a group holds the molecules whose
#: length exceeds its longest one's divided by ``ATTENTION_RATIO``; every molecule of at most
#: ``ATTENTION_FLOOR`` rows shares one group.
ATTENTION_RATIO = 1.5
ATTENTION_FLOOR = 64


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


# -- inference path -------------------------------------------------------------------------
class Scratch:
    """Reusable scratch tensors of the inference forward pass (no autograd).

    On CPU every fresh tensor of more than a few hundred kB is a new memory mapping whose
    pages fault in on first write, which costs about as much as the arithmetic of a
    small molecule batch. The inference path takes its large temporaries (dyMPN streams,
    padded attention) from here instead; a buffer grows (by half again) when a batch needs
    more and is reused by every later batch. Only temporaries are taken from it: nothing
    the forward pass returns aliases a scratch buffer.
    """

    def __init__(self):
        self._store = {}

    def get(self, name, shape, like):
        """An uninitialised tensor of ``shape`` with ``like``'s dtype and device."""
        n = math.prod(shape)
        buf = self._store.get(name)
        if buf is None or buf.numel() < n or buf.dtype != like.dtype \
                or buf.device != like.device:
            size = n if buf is None or buf.numel() == 0 else max(n, int(1.5 * buf.numel()))
            buf = torch.empty(size, dtype=like.dtype, device=like.device)
            self._store[name] = buf
        return buf[:n].view(shape)


_SCRATCH = threading.local()


@contextlib.contextmanager
def inference_scratch():
    """Share one :class:`Scratch` among the inference forward passes run inside the
    block (on this thread): call it around a loop over batches."""
    previous = getattr(_SCRATCH, "active", None)
    _SCRATCH.active = Scratch()
    try:
        yield _SCRATCH.active
    finally:
        _SCRATCH.active = previous


def _current_scratch():
    scratch = getattr(_SCRATCH, "active", None)
    return Scratch() if scratch is None else scratch


#: Attention groups padded to at most this many rows are computed with plain batched
#: matrix products (faster for short sequences); longer ones with
#: ``scaled_dot_product_attention`` (which never holds the whole score tensor).
_MATH_ATTENTION_MAX = 96


class _AttentionPlan:
    """The attention groups of one view of a batch (:func:`attention_groups`), with their
    padded-layout indices and key masks, computed once with numpy and shared by every
    block of the view.

    ``parts``: per group ``(rows, group, pos, n_groups, length, flat, bias)``: the input
    rows of its molecules (None when the group holds every row in order), each row's
    molecule in the group and position in its molecule, the padded row of each row, and
    the additive key mask (G, 1, length)-shaped as (1, G, 1, length): 0 or -inf.
    """

    def __init__(self, segment, n_segments, device):
        seg = segment.detach().cpu().numpy()
        self.n_rows = seg.shape[0]
        counts = np.bincount(seg, minlength=int(n_segments))
        starts = np.cumsum(counts) - counts
        groups = attention_groups(counts)
        self.parts = []
        for members, length in groups:
            members = np.sort(members)  # molecule order: rows increasing
            size = counts[members]
            total = int(size.sum())
            pos = np.arange(total) - np.repeat(np.cumsum(size) - size, size)
            group = np.repeat(np.arange(len(members)), size)
            flat = group * length + pos
            bias = np.full(len(members) * length, -np.inf, dtype=np.float32)
            bias[flat] = 0.0
            rows = None if len(groups) == 1 else \
                torch.from_numpy(np.repeat(starts[members], size) + pos).to(device)
            self.parts.append((rows, torch.from_numpy(group).to(device),
                               torch.from_numpy(pos).to(device), len(members), int(length),
                               torch.from_numpy(flat).to(device),
                               torch.from_numpy(bias).to(device).view(1, len(members), 1,
                                                                      int(length))))


def _inference_attention(qkv, plan, scratch):
    """:func:`_masked_attention` for the inference path, on the groups of ``plan`` (an
    :class:`_AttentionPlan`): ``qkv`` (3 h, M, D) holds the queries, keys and values of
    the ``h`` heads; the attention rows are returned as one (M, h * D) matrix (heads side
    by side, the layout the output projection reads)."""
    n_heads, n_rows, d = qkv.shape[0] // 3, qkv.shape[1], qkv.shape[2]
    if n_rows == 0:
        return qkv.new_zeros((0, n_heads * d))
    out = qkv.new_empty((n_rows, n_heads, d))
    for rows, group, pos, n_groups, length, flat, bias in plan.parts:
        part = qkv if rows is None else qkv.index_select(1, rows)
        target = out if rows is None else qkv.new_empty((rows.shape[0], n_heads, d))
        _dense_attention(part[:n_heads], part[n_heads:2 * n_heads], part[2 * n_heads:],
                         group, pos, n_groups, length, scratch=scratch, out=target,
                         padded=(flat, bias), qkv=part)
        if rows is not None:
            out.index_copy_(0, rows, target)
    return out.view(n_rows, n_heads * d)


class _InferenceOperator:
    """:class:`NeighbourOperator` of the inference path: the same sums, as compressed-row
    (CSR) matrices built with numpy from the edge index (a handful of array operations
    instead of some twenty torch calls per batch and view).

    :meth:`single` maps (M, H) to (M, H) (gather + scatter-add); :meth:`streams` (S, M, H)
    into ``out`` (S, M, H) through the block-diagonal matrix of ``S`` copies.
    """

    def __init__(self, view, edge_index, n_atoms, n_streams):
        ei = edge_index.detach().cpu().numpy()
        src, dst = ei[0], ei[1]
        n_atoms, n_edges = int(n_atoms), src.shape[0]
        by_dst = np.argsort(dst, kind="stable")
        count = np.bincount(dst, minlength=n_atoms)
        if view == "node":
            m, cols, per_row = n_atoms, src[by_dst], count
        else:  # edge u -> v: the edges entering u, except v -> u (exactly one of them)
            start = np.cumsum(count) - count
            per_edge = count[src]
            total = int(per_edge.sum())
            rows = np.repeat(np.arange(n_edges), per_edge)
            offset = np.arange(total) - np.repeat(np.cumsum(per_edge) - per_edge, per_edge)
            cols = by_dst[start[src][rows] + offset]
            cols = cols[cols != (rows ^ 1)]
            m, per_row = n_edges, per_edge - 1
        self.n_rows, self.nnz = m, int(cols.shape[0])
        self.view, self.n_atoms, self.device = view, n_atoms, edge_index.device
        self._edges = (edge_index[0], edge_index[1])
        if view == "edge":
            self._reverse = torch.arange(n_edges, device=self.device) ^ 1
        self._parts = (np.concatenate([[0], np.cumsum(per_row)]), cols)
        self._mats = {}
        self.n_streams = int(n_streams)

    def _matrix(self, n_blocks, dtype):
        key = (n_blocks, dtype)
        if key not in self._mats:
            crow, cols = self._parts
            m, nnz = self.n_rows, self.nnz
            index = np.int32 if n_blocks * max(m, nnz) < 2 ** 31 else np.int64
            if n_blocks > 1:
                shift = np.arange(n_blocks)[:, None]
                crow = np.concatenate([(crow[:-1][None, :] + nnz * shift).ravel(),
                                       [n_blocks * nnz]])
                cols = (cols[None, :] + m * shift).ravel()
            values = torch.ones(n_blocks * nnz, dtype=dtype, device=self.device)
            with warnings.catch_warnings():  # "CSR support is in beta state", once
                warnings.filterwarnings("ignore", message=".*Sparse CSR tensor support")
                self._mats[key] = torch.sparse_csr_tensor(
                    torch.from_numpy(crow.astype(index)).to(self.device),
                    torch.from_numpy(cols.astype(index)).to(self.device), values,
                    (n_blocks * m, n_blocks * m), check_invariants=False)
        return self._mats[key]

    def single(self, values):
        """``agg`` of one (M, H) matrix, by a gather and a scatter-add (no matrix)."""
        src, dst = self._edges
        if self.view == "node":
            return values.new_zeros(values.shape).index_add_(0, dst, values[src])
        into = values.new_zeros((self.n_atoms, values.shape[1])).index_add_(0, dst, values)
        return into[src].sub_(values[self._reverse])

    def streams(self, values, out):
        """``agg`` of each stream of an (S, M, H) tensor, written into ``out``."""
        if self.nnz == 0 or self.n_rows == 0:
            return out.zero_()
        flat = out.view(-1, values.shape[-1])
        torch.addmm(flat, self._matrix(values.shape[0], values.dtype),
                    values.reshape(-1, values.shape[-1]), beta=0, out=flat)
        return out


def _dympn_inference(mpn, x, hops, operator, scratch):
    """:meth:`DyMPN.forward` without autograd: the streams in reused scratch buffers, the
    aggregation of every hop one compressed-row sparse product. Returns (S, M, H), a
    scratch buffer (read it before the next call)."""
    n_streams, hidden = mpn.weight.shape[0], mpn.weight.shape[2]
    n_rows = x.shape[0]
    if int(hops) <= 0:
        return x.unsqueeze(0).expand(n_streams, -1, -1)
    shape = (n_streams, n_rows, hidden)
    base = torch.add(x.unsqueeze(0), mpn.bias, out=scratch.get("base", shape, x))
    m, agg = scratch.get("m", shape, x), scratch.get("agg", shape, x)
    first = operator.single(x)
    torch.baddbmm(base, first.unsqueeze(0).expand(n_streams, -1, -1), mpn.weight, out=m)
    m.relu_()
    for _ in range(int(hops) - 1):
        operator.streams(m, out=agg)
        torch.baddbmm(base, agg, mpn.weight, out=m)
        m.relu_()
    return m


def _block_inference(block, x, plan, operator, scratch, projected):
    """:meth:`MTBlock.forward` in evaluation mode without autograd (no dropout, ``depth``
    hops); ``plan``: the view's :class:`_AttentionPlan`."""
    if block.input is not None:
        x = block.input[1:](x) if projected else block.input(x)
    qkv = _dympn_inference(block.mpn, x, block.depth, operator, scratch)
    att = _inference_attention(qkv, plan, scratch)
    return x + block.norm(block.out(att))


class MTBlock(nn.Module):
    """One GROVER transformer block of one view (node or edge).

    Input projection (when the width changes) ``x = LayerNorm(relu(x W_i))``; then
    ``h`` heads whose queries, keys and values come from a :class:`DyMPN`; attention
    among the atoms (node view) or directed edges (edge view) of each molecule; the heads
    are concatenated, projected by ``W_o`` and added back through a layer-normalised
    residual connection.

    Parameters
    ----------
    view : {"node", "edge"}
    input_size : int
    hidden_size : int
    n_heads : int
    depth : int
        Mean number of dyMPN hops.
    dropout : float, default=0.0

    Shapes: input (M, input_size), output (M, hidden_size).
    """

    def __init__(self, view, input_size, hidden_size, n_heads, depth, dropout=0.0):
        super().__init__()
        self.view, self.depth, self.n_heads = view, int(depth), int(n_heads)
        self.input = None
        if input_size != hidden_size:
            self.input = nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU(),
                                       nn.LayerNorm(hidden_size), nn.Dropout(dropout))
        self.mpn = DyMPN(3 * n_heads, hidden_size, view, dropout)
        self.out = nn.Linear(n_heads * hidden_size, hidden_size)
        self.norm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, edge_index, segment, n_atoms, n_molecules, operator=None,
                projected=False):
        """``operator``: the view's :class:`NeighbourOperator` for this batch (built when
        None); ``projected``: ``x`` is already ``x W_i + b_i`` (the input projection's
        linear part, which :class:`GTransformer` computes per atom for the edge view)."""
        if self.input is not None:
            x = self.input[1:](x) if projected else self.input(x)
        hops = draw_hops(self.depth, self.training)
        qkv = self.mpn(x, edge_index, n_atoms, hops, operator=operator)
        q, k, v = qkv[: self.n_heads], qkv[self.n_heads: 2 * self.n_heads], \
            qkv[2 * self.n_heads:]
        att = _masked_attention(q, k, v, segment, n_molecules)  # (h, M, H)
        att = att.permute(1, 0, 2).reshape(x.shape[0], self.n_heads * x.shape[1])
        return x + self.dropout(self.norm(self.out(att)))


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


def _ffn_split(ffn, x_part, state, n_feat):
    """``ffn(concat(x, state))`` given ``x_part = x W_x^T`` of its first layer."""
    first = ffn[0]
    return ffn[1:](x_part + F.linear(state, first.weight[:, n_feat:], first.bias))


def _ffn(n_in, hidden_size, dropout):
    return nn.Sequential(nn.Linear(n_in, 4 * hidden_size), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(4 * hidden_size, hidden_size), nn.LayerNorm(hidden_size))


class GTransformer(nn.Module):
    """GROVER's GTransformer: a node-view and an edge-view branch over one molecule batch.

    The node view starts from the atom features (F); the edge view from the directed-bond
    features ``concat(x_source_atom, e)`` (F + F_b). Each runs ``n_layers``
    :class:`MTBlock` s. Each branch then yields atom and bond embeddings through
    point-wise feed-forward layers with long-range residual access to the input features
    (Section 3.1, "node-view and edge-view GTransformer"):

    * ``atom_from_atom`` = FFN([x_v, sum of node-view states of v's neighbours]);
    * ``bond_from_atom`` = FFN([x_u e_uv, node-view state of u]) for edge u -> v;
    * ``atom_from_bond`` = FFN([x_v, sum of edge-view states entering v]);
    * ``bond_from_bond`` = FFN([x_u e_uv, edge-view messages entering u except v -> u]).

    Parameters
    ----------
    n_atom_features : int
        ``F``.
    n_bond_features : int
        ``F_b``.
    hidden_size : int, default=64
        ``H``.
    n_layers : int, default=1
        Transformer blocks per view.
    n_heads : int, default=2
        Attention heads (each with its own query, key and value dyMPNs).
    depth : int, default=3
        Mean dyMPN hop count (randomised in training, exact in evaluation).
    dropout : float, default=0.0

    Shapes: :meth:`forward` returns a dict with ``atom_from_atom`` and ``atom_from_bond``
    (N, H), ``bond_from_atom`` and ``bond_from_bond`` (E, H). :meth:`embed` returns the
    molecule embedding (B, 2 H): the mean over atoms of the two atom embeddings,
    concatenated (GROVER's fingerprint).
    """

    def __init__(self, n_atom_features, n_bond_features, hidden_size=64, n_layers=1,
                 n_heads=2, depth=3, dropout=0.0):
        super().__init__()
        self.hidden_size = int(hidden_size)
        f_a, f_e = int(n_atom_features), int(n_atom_features) + int(n_bond_features)
        self.node_blocks = nn.ModuleList(
            MTBlock("node", f_a if i == 0 else hidden_size, hidden_size, n_heads, depth,
                    dropout) for i in range(n_layers))
        self.edge_blocks = nn.ModuleList(
            MTBlock("edge", f_e if i == 0 else hidden_size, hidden_size, n_heads, depth,
                    dropout) for i in range(n_layers))
        self.ffn_atom_from_atom = _ffn(f_a + hidden_size, hidden_size, dropout)
        self.ffn_atom_from_bond = _ffn(f_a + hidden_size, hidden_size, dropout)
        self.ffn_bond_from_atom = _ffn(f_e + hidden_size, hidden_size, dropout)
        self.ffn_bond_from_bond = _ffn(f_e + hidden_size, hidden_size, dropout)

    @property
    def embedding_dim(self):
        """Width of :meth:`embed`'s output, ``2 H``."""
        return 2 * self.hidden_size

    def forward(self, atom_features, bond_features, edge_index, batch, n_molecules,
                atoms_only=False, **ignored):
        """The four embeddings (dict, see the class docstring); with ``atoms_only`` only
        ``atom_from_atom`` and ``atom_from_bond``, which is all that :meth:`embed` and
        fine-tuning read (the bond feed-forward layers on ``E`` rows are skipped).

        In evaluation mode without autograd (``torch.no_grad`` / ``inference_mode``) the
        inference path runs (:meth:`_forward_inference`: the same values up to float32
        round-off, fewer temporaries)."""
        if not self.training and not torch.is_grad_enabled():
            return self._forward_inference(atom_features, bond_features, edge_index, batch,
                                           n_molecules, atoms_only)
        n_atoms = atom_features.shape[0]
        n_mol = int(n_molecules)
        src, dst = edge_index[0], edge_index[1]
        x = atom_features
        n_feat = x.shape[1]
        edge_mol = batch[src]
        n_streams = self.node_blocks[0].mpn.weight.shape[0]
        node_op = NeighbourOperator("node", edge_index, n_atoms, n_streams)
        edge_op = NeighbourOperator("edge", edge_index, n_atoms, n_streams)
        node_in, edge_in = self.node_blocks[0].input, self.edge_blocks[0].input
        # Every linear map that reads the raw atom features x (node-view input projection,
        # atom part of the edge-view input projection, atom part of the two atom
        # feed-forward layers) in one product x W^T; Linear(concat(x_u, e_uv)) =
        # (x W_x^T)_u + e_uv W_e^T + b, so the edge view's atom part is computed once per
        # atom instead of once per directed edge.
        pieces = {"aa": self.ffn_atom_from_atom[0].weight[:, :n_feat],
                  "ab": self.ffn_atom_from_bond[0].weight[:, :n_feat]}
        if node_in is not None:
            pieces["node"] = node_in[0].weight
        if edge_in is not None:
            pieces["edge"] = edge_in[0].weight[:, :n_feat]
        xw = dict(zip(pieces, _sparse_rows_product(x, torch.cat(list(pieces.values())))
                      .split([w.shape[0] for w in pieces.values()], dim=1)))
        h_v = x if node_in is None else xw["node"] + node_in[0].bias
        for i, block in enumerate(self.node_blocks):
            h_v = block(h_v, edge_index, batch, n_atoms, n_mol, operator=node_op,
                        projected=i == 0 and node_in is not None)
        if edge_in is not None:
            h_e = xw["edge"].index_select(0, src) \
                + F.linear(bond_features, edge_in[0].weight[:, n_feat:], edge_in[0].bias)
        else:
            h_e = torch.cat([x[src], bond_features], dim=1)
        for i, block in enumerate(self.edge_blocks):
            h_e = block(h_e, edge_index, edge_mol, n_atoms, n_mol, operator=edge_op,
                        projected=i == 0 and edge_in is not None)
        nbr = node_op.single(h_v)  # sum of the node-view states of the neighbours
        into = h_e.new_zeros((n_atoms, h_e.shape[1])).index_add_(0, dst, h_e)
        out = {"atom_from_atom": _ffn_split(self.ffn_atom_from_atom, xw["aa"], nbr, n_feat),
               "atom_from_bond": _ffn_split(self.ffn_atom_from_bond, xw["ab"], into, n_feat)}
        if atoms_only:
            return out
        x_e = torch.cat([x[src], bond_features], dim=1)
        rev = torch.arange(h_e.shape[0], device=h_e.device) ^ 1
        out["bond_from_atom"] = self.ffn_bond_from_atom(torch.cat([x_e, h_v[src]], 1))
        out["bond_from_bond"] = self.ffn_bond_from_bond(
            torch.cat([x_e, into[src] - h_e[rev]], 1))
        return out

    def _forward_inference(self, atom_features, bond_features, edge_index, batch,
                           n_molecules, atoms_only):
        """:meth:`forward` in evaluation mode without autograd. The same computation with
        the large temporaries in a :class:`Scratch` (the one of :func:`inference_scratch`
        when active), every hop's aggregation a compressed-row sparse product, short
        attention groups by batched matrix products, and the feed-forward layers' first
        products written in place."""
        scratch = _current_scratch()
        x = atom_features
        n_atoms, n_feat = x.shape
        n_mol = int(n_molecules)
        src, dst = edge_index[0], edge_index[1]
        edge_mol = batch[src]
        n_streams = self.node_blocks[0].mpn.weight.shape[0]
        node_op = _InferenceOperator("node", edge_index, n_atoms, n_streams)
        edge_op = _InferenceOperator("edge", edge_index, n_atoms, n_streams)
        node_in, edge_in = self.node_blocks[0].input, self.edge_blocks[0].input
        aa, ab = self.ffn_atom_from_atom[0], self.ffn_atom_from_bond[0]
        # the linear maps that read the raw atom features, in one sparse product (as in
        # forward), their biases added to the product's columns
        pieces = [(aa.weight[:, :n_feat], aa.bias), (ab.weight[:, :n_feat], ab.bias)]
        if node_in is not None:
            pieces.append((node_in[0].weight, node_in[0].bias))
        if edge_in is not None:
            pieces.append((edge_in[0].weight[:, :n_feat], None))
        xw = _sparse_rows_product(x, torch.cat([w for w, _ in pieces]))
        xw += torch.cat([w.new_zeros(w.shape[0]) if b is None else b for w, b in pieces])
        parts = xw.split([w.shape[0] for w, _ in pieces], dim=1)
        h_v = x if node_in is None else parts[2]
        plan = _AttentionPlan(batch, n_mol, x.device)
        for i, block in enumerate(self.node_blocks):
            h_v = _block_inference(block, h_v, plan, node_op, scratch,
                                   projected=i == 0 and node_in is not None)
        if edge_in is not None:
            h_e = torch.addmm(edge_in[0].bias, bond_features,
                              edge_in[0].weight[:, n_feat:].t())
            h_e += parts[-1].index_select(0, src)
        else:
            h_e = torch.cat([x[src], bond_features], dim=1)
        plan = _AttentionPlan(edge_mol, n_mol, x.device)
        for i, block in enumerate(self.edge_blocks):
            h_e = _block_inference(block, h_e, plan, edge_op, scratch,
                                   projected=i == 0 and edge_in is not None)
        nbr = node_op.single(h_v)
        into = h_e.new_zeros((n_atoms, h_e.shape[1])).index_add_(0, dst, h_e)
        out = {}
        for key, ffn, x_part, state in (("atom_from_atom", self.ffn_atom_from_atom,
                                         parts[0], nbr),
                                        ("atom_from_bond", self.ffn_atom_from_bond,
                                         parts[1], into)):
            hidden = torch.addmm(x_part, state, ffn[0].weight[:, n_feat:].t()).relu_()
            out[key] = ffn[4](ffn[3](hidden))
        if atoms_only:
            return out
        x_e = torch.cat([x[src], bond_features], dim=1)
        rev = torch.arange(h_e.shape[0], device=h_e.device) ^ 1
        out["bond_from_atom"] = self.ffn_bond_from_atom(torch.cat([x_e, h_v[src]], 1))
        out["bond_from_bond"] = self.ffn_bond_from_bond(
            torch.cat([x_e, into[src] - h_e[rev]], 1))
        return out

    def embed(self, atom_features, bond_features, edge_index, batch, n_molecules, **ignored):
        """Molecule embeddings (B, 2 H): mean-pooled atom embeddings of both views."""
        out = self(atom_features, bond_features, edge_index, batch, n_molecules,
                   atoms_only=True)
        n = int(n_molecules)
        if not self.training and not torch.is_grad_enabled():  # one pass for both
            return segment_mean(torch.cat([out["atom_from_atom"], out["atom_from_bond"]],
                                          dim=1), batch, n)
        return torch.cat([segment_mean(out["atom_from_atom"], batch, n),
                          segment_mean(out["atom_from_bond"], batch, n)], dim=1)


class SelfAttentivePooling(nn.Module):
    """Self-attentive readout (Rong et al. 2020, Eq. 6; Lin et al. 2017).

    Per molecule with atom matrix ``H_G`` (n, D): ``S = softmax(W_2 tanh(W_1 H_G^T))``
    over its atoms, output ``flatten(S H_G)``.

    Parameters
    ----------
    in_features : int
        ``D``.
    attn_hidden : int, default=32
    attn_out : int, default=4

    Shapes: input (N, D) with ``segment`` (N,); output (B, attn_out * D).
    """

    def __init__(self, in_features, attn_hidden=32, attn_out=4):
        super().__init__()
        self.w1 = nn.Linear(in_features, attn_hidden, bias=False)
        self.w2 = nn.Linear(attn_hidden, attn_out, bias=False)
        self.out_features = attn_out * in_features

    def forward(self, values, segment, n_segments):
        scores = self.w2(torch.tanh(self.w1(values)))  # (N, attn_out)
        pos, length = _positions(segment, n_segments)
        dense = scores.new_full((int(n_segments), length, scores.shape[1]), -1e9)
        dense[segment, pos] = scores
        weights = torch.softmax(dense, dim=1)[segment, pos]  # (N, attn_out)
        pooled = values.new_zeros((int(n_segments), scores.shape[1], values.shape[1]))
        pooled.index_add_(0, segment, weights.unsqueeze(2) * values.unsqueeze(1))
        return pooled.flatten(1)


# -- pretraining ----------------------------------------------------------------------------
class GroverPretrainModel(nn.Module):
    """GTransformer plus GROVER's self-supervised heads (Section 4.1).

    * contextual property prediction: atom labels from ``atom_from_atom`` and from
      ``atom_from_bond`` (two linear heads); bond labels from ``bond_from_atom`` and
      ``bond_from_bond`` (two heads each summing a linear map of the two directions of the
      bond);
    * motif prediction: 85 logits from the mean readout of each of the four embeddings.

    Parameters
    ----------
    encoder : GTransformer
    n_atom_labels : int
        Size of the atom-label vocabulary (``<pad>`` and ``<other>`` included).
    n_bond_labels : int
    n_motifs : int, default=85

    Shapes: :meth:`forward` returns a dict: ``atom`` tuple of two (N, n_atom_labels)
    log-probabilities, ``bond`` tuple of two (E / 2, n_bond_labels), ``motif`` tuple of four
    (B, n_motifs) logits.
    """

    def __init__(self, encoder, n_atom_labels, n_bond_labels, n_motifs=85):
        super().__init__()
        self.encoder = encoder
        h = encoder.hidden_size
        self.atom_heads = nn.ModuleList(nn.Linear(h, n_atom_labels) for _ in range(2))
        self.bond_heads = nn.ModuleList(nn.Linear(h, n_bond_labels) for _ in range(2))
        self.bond_heads_rev = nn.ModuleList(nn.Linear(h, n_bond_labels) for _ in range(2))
        self.motif_heads = nn.ModuleList(nn.Linear(h, n_motifs) for _ in range(4))

    def forward(self, atom_features, bond_features, edge_index, batch, n_molecules,
                **ignored):
        emb = self.encoder(atom_features, bond_features, edge_index, batch, n_molecules)
        n = int(n_molecules)
        edge_mol = batch[edge_index[0]]
        atom = tuple(F.log_softmax(head(emb[k]), dim=1) for head, k in
                     zip(self.atom_heads, ("atom_from_atom", "atom_from_bond")))
        bond = tuple(
            F.log_softmax(head(emb[k][0::2]) + head_rev(emb[k][1::2]), dim=1)
            for head, head_rev, k in zip(self.bond_heads, self.bond_heads_rev,
                                         ("bond_from_atom", "bond_from_bond")))
        seg = {"atom_from_atom": batch, "atom_from_bond": batch,
               "bond_from_atom": edge_mol, "bond_from_bond": edge_mol}
        motif = tuple(head(segment_mean(emb[k], seg[k], n))
                      for head, k in zip(self.motif_heads, seg))
        return {"atom": atom, "bond": bond, "motif": motif}


def grover_pretrain_loss(out, atom_labels, bond_labels, motifs, dist_coef=0.1):
    """GROVER's pretraining objective (Section 4.1; code release ``GroverTask``).

    ``sum over views of NLL(atom labels) + NLL(bond labels) + BCE(motifs)`` plus the
    agreement between views: ``dist_coef * (MSE(log p_atom^node, log p_atom^edge) +
    MSE(log p_bond^node, log p_bond^edge)) + MSE(sigmoid motif logits of the two atom
    embeddings) + MSE(... of the two bond embeddings)``. Label 0 (``<pad>``) is ignored.

    Parameters
    ----------
    out : dict
        :meth:`GroverPretrainModel.forward` output.
    atom_labels : torch.Tensor of shape (N,), int64
    bond_labels : torch.Tensor of shape (E / 2,), int64
    motifs : torch.Tensor of shape (B, n_motifs), float 0/1
    dist_coef : float, default=0.1

    Returns
    -------
    loss : torch.Tensor, 0-d
    parts : dict of str to float
        ``atom``, ``bond``, ``motif``, ``agreement``.
    """
    zero = out["motif"][0].new_zeros(())
    atom = sum(F.nll_loss(p, atom_labels, ignore_index=0) for p in out["atom"]) \
        if atom_labels.numel() else zero
    if bond_labels.numel():
        bond = sum(F.nll_loss(p, bond_labels, ignore_index=0) for p in out["bond"])
        bond_dist = F.mse_loss(out["bond"][0], out["bond"][1])
    else:
        bond, bond_dist = zero, zero
    motif = sum(F.binary_cross_entropy_with_logits(p, motifs) for p in out["motif"])
    s = [torch.sigmoid(p) for p in out["motif"]]
    agreement = dist_coef * (F.mse_loss(out["atom"][0], out["atom"][1]) + bond_dist) \
        + F.mse_loss(s[0], s[1]) + F.mse_loss(s[2], s[3])
    loss = atom + bond + motif + agreement
    parts = {k: float(v.detach()) for k, v in
             {"atom": atom, "bond": bond, "motif": motif, "agreement": agreement}.items()}
    return loss, parts


# -- fine-tuning ----------------------------------------------------------------------------
class GroverFinetuneModel(nn.Module):
    """GTransformer plus two prediction heads, one per view (Section 4.2).

    Each view's atom embeddings are pooled per molecule (mean, or self-attentive) and fed
    to its own feed-forward head; in training both predictions enter the loss together
    with their disagreement (:func:`grover_finetune_loss`); the prediction is their mean.

    Parameters
    ----------
    encoder : GTransformer
    n_outputs : int
    readout : {"mean", "self_attention"}, default="mean"
    ffn_hidden : int, default=64
        Hidden width of each head (0: linear head).
    dropout : float, default=0.0
    n_mol_features : int, default=0
        Width of molecule-level features (``mol_features`` of :meth:`forward`, e.g.
        normalized RDKit descriptors) joined to each view's pooled embedding before its
        head, as GROVER's fine-tuning joins its ``rdkit_2d_normalized`` features; 0: none.

    Shapes: :meth:`forward` returns ``(pred_node_view, pred_edge_view)``, each
    (B, n_outputs), in training mode, and their mean (B, n_outputs) in evaluation mode.
    """

    def __init__(self, encoder, n_outputs, readout="mean", ffn_hidden=64, dropout=0.0,
                 n_mol_features=0):
        super().__init__()
        self.encoder = encoder
        h = encoder.hidden_size
        self.pools = nn.ModuleList(
            SelfAttentivePooling(h) if readout == "self_attention" else nn.Identity()
            for _ in range(2))
        self.n_mol_features = int(n_mol_features)
        width = (self.pools[0].out_features if readout == "self_attention" else h) \
            + self.n_mol_features
        self.readout = readout

        def head():
            if not ffn_hidden:
                return nn.Linear(width, n_outputs)
            return nn.Sequential(nn.Dropout(dropout), nn.Linear(width, ffn_hidden), nn.ReLU(),
                                 nn.Dropout(dropout), nn.Linear(ffn_hidden, n_outputs))

        self.heads = nn.ModuleList(head() for _ in range(2))

    def forward(self, atom_features, bond_features, edge_index, batch, n_molecules,
                mol_features=None, **ignored):
        from sklearn_papers.nn._mpnn import join_mol_features

        emb = self.encoder(atom_features, bond_features, edge_index, batch, n_molecules,
                           atoms_only=True)
        n = int(n_molecules)
        preds = []
        for pool, head, k in zip(self.pools, self.heads, ("atom_from_atom", "atom_from_bond")):
            pooled = pool(emb[k], batch, n) if self.readout == "self_attention" \
                else segment_mean(emb[k], batch, n)
            preds.append(head(join_mol_features(pooled, mol_features, self.n_mol_features)))
        if self.training:
            return tuple(preds)
        return (preds[0] + preds[1]) / 2


def grover_finetune_loss(preds, target, task, dist_coef=0.1, sample_weight=None):
    """Fine-tuning loss: task loss of both views plus ``dist_coef`` times their MSE.

    Parameters
    ----------
    preds : tuple of two torch.Tensor of shape (B, n_outputs)
    target : torch.Tensor
        (B, n_outputs) float (regression, binary and multi-task: NaN entries are left out)
        or (B,) int64 class codes (multiclass).
    task : {"regression", "binary", "multiclass"}
    dist_coef : float, default=0.1
    sample_weight : torch.Tensor of shape (B,), default=None
        Non-negative weight of each molecule: every mean over molecules (and labelled
        entries) becomes a weighted mean, so a weight of 0 leaves the molecule out.

    Returns
    -------
    loss : torch.Tensor, 0-d
    """
    if sample_weight is not None:
        return _weighted_finetune_loss(preds, target, task, dist_coef, sample_weight)
    if task == "multiclass":
        loss = sum(F.cross_entropy(p, target) for p in preds)
        agree = F.mse_loss(torch.softmax(preds[0], 1), torch.softmax(preds[1], 1))
        return loss + dist_coef * agree
    mask = ~torch.isnan(target)
    if not bool(mask.any()):
        return preds[0].sum() * 0.0
    t = target[mask]
    if task == "binary":
        loss = sum(F.binary_cross_entropy_with_logits(p[mask], t) for p in preds)
        agree = F.mse_loss(torch.sigmoid(preds[0]), torch.sigmoid(preds[1]))
    else:
        loss = sum(F.mse_loss(p[mask], t) for p in preds)
        agree = F.mse_loss(preds[0], preds[1])
    return loss + dist_coef * agree


def _weighted_finetune_loss(preds, target, task, dist_coef, sample_weight):
    """:func:`grover_finetune_loss` with per-molecule weights (equal to it for unit weights)."""
    weight = sample_weight.to(preds[0].device, preds[0].dtype)

    def weighted_mean(per_row):
        return (weight * per_row).sum() / weight.sum().clamp(min=1e-12)

    if task == "multiclass":
        loss = sum(weighted_mean(F.cross_entropy(p, target, reduction="none")) for p in preds)
        agree = weighted_mean(
            ((torch.softmax(preds[0], 1) - torch.softmax(preds[1], 1)) ** 2).mean(1))
        return loss + dist_coef * agree
    target = target.to(preds[0].dtype).view_as(preds[0])
    mask = ~torch.isnan(target)
    if not bool(mask.any()):
        return preds[0].sum() * 0.0
    clean = torch.nan_to_num(target)
    entry_weight = weight[:, None] * mask
    if task == "binary":
        per_entry = [F.binary_cross_entropy_with_logits(p, clean, reduction="none")
                     for p in preds]
        agree = weighted_mean(((torch.sigmoid(preds[0]) - torch.sigmoid(preds[1])) ** 2)
                              .mean(1))
    else:
        per_entry = [(p - clean) ** 2 for p in preds]
        agree = weighted_mean(((preds[0] - preds[1]) ** 2).mean(1))
    denominator = entry_weight.sum().clamp(min=1e-12)
    loss = sum((entry_weight * torch.where(mask, e, torch.zeros_like(e))).sum() / denominator
               for e in per_entry)
    return loss + dist_coef * agree


# -- data -----------------------------------------------------------------------------------
class GroverDataset(torch.utils.data.Dataset):
    """Molecular graphs with optional per-atom/bond labels, motifs and targets.

    Parameters
    ----------
    graphs : list of MolGraph
    atom_labels, bond_labels : list of ndarray of int64, default=None
        Vocabulary codes per atom (n_atoms_i,) and per bond (n_edges_i / 2,).
    motifs : ndarray of shape (n_samples, n_motifs), default=None
    y : ndarray of shape (n_samples, ...) , default=None
    """

    def __init__(self, graphs, atom_labels=None, bond_labels=None, motifs=None, y=None):
        self.graphs = list(graphs)
        self.atom_labels, self.bond_labels = atom_labels, bond_labels
        self.motifs, self.y = motifs, y

    def __len__(self):
        return len(self.graphs)

    def __getitem__(self, i):
        pick = (lambda a: None if a is None else a[i])
        return (self.graphs[i], pick(self.atom_labels), pick(self.bond_labels),
                pick(self.motifs), pick(self.y))


def collate_grover(items):
    """``collate_fn`` for :class:`GroverDataset`.

    Returns
    -------
    batch : GraphBatch
        From :func:`~sklearn_papers.nn._graph.collate_graphs`.
    labels : dict of str to torch.Tensor or None
        ``atom`` (N,) int64, ``bond`` (E / 2,) int64, ``motif`` (B, n_motifs) float32,
        ``y`` (B, ...) stacked targets; None where the dataset has none.
    """
    graphs, atom, bond, motif, y = zip(*items)

    def cat(parts, dtype):
        if parts[0] is None:
            return None
        return torch.from_numpy(np.concatenate(parts).astype(dtype, copy=False))

    def stack(parts):
        return None if parts[0] is None else torch.as_tensor(np.stack(parts))

    return collate_graphs(graphs), {"atom": cat(atom, np.int64), "bond": cat(bond, np.int64),
                                    "motif": stack(motif), "y": stack(y)}


def train_module(module, dataset, loss_fn, *, max_epochs, batch_size, lr, seed, device="cpu",
                 weight_decay=0.0, verbose=0, desc="training", lr_lambda=None,
                 valid_dataset=None, valid_loss_fn=None, n_iter_no_change=None,
                 history=None):
    """Train a module with Adam on shuffled mini-batches; a plain torch loop.

    Optionally with a learning-rate schedule (``lr_lambda``, stepped once per batch) and
    early stopping on ``valid_dataset``: after every epoch the module is evaluated in
    eval mode with ``valid_loss_fn``; training stops when the loss has not improved for
    ``n_iter_no_change`` epochs and the weights of the best epoch are restored.

    Parameters
    ----------
    module : torch.nn.Module
        Called as ``module(**batch.tensors)``.
    dataset : GroverDataset
    loss_fn : callable
        ``loss_fn(output, labels) -> 0-d tensor``; ``labels`` from :func:`collate_grover`
        (on ``device``).
    max_epochs, batch_size : int
    lr : float
    seed : int
        Seeds the shuffling generator (weights and dropout follow torch's RNG: call this
        inside ``torch_seeded``).
    device : torch.device or str, default="cpu"
    weight_decay : float, default=0.0
    verbose : int, default=0
        A tqdm bar over epochs when positive.
    desc : str, default="training"
    lr_lambda : callable, default=None
        ``step -> factor`` of ``lr`` (``torch.optim.lr_scheduler.LambdaLR``), stepped
        after every batch; None keeps ``lr``.
    valid_dataset : GroverDataset, default=None
        Held-out molecules for early stopping.
    valid_loss_fn : callable, default=None
        ``valid_loss_fn(eval_output, labels) -> 0-d tensor``; needed with
        ``valid_dataset``.
    n_iter_no_change : int, default=None
        Patience in epochs (None: run ``max_epochs`` epochs, still restoring the best).
    history : dict, default=None
        When given, ``history["valid_loss"]`` receives the validation loss of each epoch
        and ``history["best_epoch"]`` the (0-based) epoch whose weights are kept.

    Returns
    -------
    loss_curve : list of float
        Mean training loss of each epoch.
    """
    from tqdm.auto import tqdm

    module.to(device).train()
    opt = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=weight_decay)
    sched = None if lr_lambda is None else torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True, collate_fn=collate_grover,
        generator=torch.Generator().manual_seed(int(seed)))
    curve, valid_curve, best, best_state = [], [], None, None
    for epoch in tqdm(range(int(max_epochs)), desc=desc, disable=verbose <= 0, leave=False):
        total, count = 0.0, 0
        for batch, labels in loader:
            batch = batch.to(device)
            labels = {k: None if v is None else v.to(device) for k, v in labels.items()}
            opt.zero_grad()
            loss = loss_fn(module(**batch.tensors), labels)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += float(loss.detach()) * len(batch)
            count += len(batch)
        curve.append(total / max(count, 1))
        if not math.isfinite(curve[-1]):
            raise FloatingPointError(
                f"{desc}: the training loss became {curve[-1]} at epoch {epoch + 1} (the "
                "network diverged); lower lr, or check that the targets are finite and of "
                "a moderate size.")
        if valid_dataset is None:
            continue
        valid_curve.append(_evaluate(module, valid_dataset, valid_loss_fn,
                                     batch_size=batch_size, device=device))
        module.train()
        if best is None or valid_curve[-1] < valid_curve[best]:
            best = epoch
            best_state = {k: v.detach().clone() for k, v in module.state_dict().items()}
        elif n_iter_no_change is not None and epoch - best >= int(n_iter_no_change):
            break
    if best_state is not None:
        module.load_state_dict(best_state)
    if history is not None:
        history["valid_loss"], history["best_epoch"] = valid_curve, best
    module.eval()
    return curve


def _evaluate(module, dataset, loss_fn, *, batch_size, device):
    """Mean of ``loss_fn`` over ``dataset`` in eval mode (weighted by batch size)."""
    module.eval()
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False,
                                         collate_fn=collate_grover,
                                         generator=torch.Generator())
    total, count = 0.0, 0
    with torch.no_grad():
        for batch, labels in loader:
            batch = batch.to(device)
            labels = {k: None if v is None else v.to(device) for k, v in labels.items()}
            total += float(loss_fn(module(**batch.tensors), labels)) * len(batch)
            count += len(batch)
    return total / max(count, 1)


def run_module(fn, graphs, *, batch_size, device="cpu"):
    """Apply ``fn(**batch.tensors)`` to graphs in batches, without gradients.

    Returns
    -------
    out : ndarray of shape (len(graphs), D), dtype=float32
    """
    chunks = []
    with torch.no_grad(), inference_scratch():
        for start in range(0, len(graphs), int(batch_size)):
            batch = collate_graphs(graphs[start:start + int(batch_size)]).to(device)
            chunks.append(fn(**batch.tensors).float().cpu().numpy())
    return np.concatenate(chunks) if chunks else np.zeros((0, 0), dtype=np.float32)

