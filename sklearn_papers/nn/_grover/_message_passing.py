"""GROVER's dynamic message passing (dyMPN): the neighbour aggregation of each view as a
sparse operator, and the dyMPN layer that computes queries, keys and values."""

import warnings

import torch
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._grover._ops import _neighbour_pairs


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
