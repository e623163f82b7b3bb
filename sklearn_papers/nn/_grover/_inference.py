"""The GTransformer's inference path (evaluation mode without autograd): the same layers,
with compressed-row aggregation matrices and attention groups built with numpy once per
batch and view, short attention groups by batched matrix products, and the large
temporaries in a :class:`Scratch` shared by the batches of one call."""

import contextlib
import math
import threading
import warnings

import numpy as np
import torch

from sklearn_papers.nn._grover._attention import _dense_attention, attention_groups
from sklearn_papers.nn._grover._ops import _sparse_rows_product


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


def encoder_inference(self, atom_features, bond_features, edge_index, batch,
                      n_molecules, atoms_only):
    """:meth:`GTransformer.forward` in evaluation mode without autograd (``self``: the
    encoder, whose layers it reads). The same computation with
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
    out.update(self._bond_embeddings(x, bond_features, src, h_v, h_e, into))
    return out
