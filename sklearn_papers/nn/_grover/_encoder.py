"""GROVER's GTransformer encoder: transformer blocks of the node and edge views and the
four feed-forward embeddings."""

import torch
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._grover._attention import _masked_attention
from sklearn_papers.nn._grover._inference import encoder_inference
from sklearn_papers.nn._grover._message_passing import DyMPN, NeighbourOperator
from sklearn_papers.nn._grover._ops import _sparse_rows_product, draw_hops, segment_mean


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
        inference path runs (:func:`._inference.encoder_inference`: the same values up to float32
        round-off, fewer temporaries)."""
        if not self.training and not torch.is_grad_enabled():
            return encoder_inference(self, atom_features, bond_features, edge_index,
                                     batch, n_molecules, atoms_only)
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
        out.update(self._bond_embeddings(x, bond_features, src, h_v, h_e, into))
        return out

    def _bond_embeddings(self, x, bond_features, src, h_v, h_e, into):
        """``bond_from_atom`` and ``bond_from_bond`` (E, H) from the atom features ``x``,
        the node-view states ``h_v``, the edge-view states ``h_e`` and their sums per
        atom ``into`` (shared by :meth:`forward` and the inference path)."""
        x_e = torch.cat([x[src], bond_features], dim=1)
        rev = torch.arange(h_e.shape[0], device=h_e.device) ^ 1
        return {"bond_from_atom": self.ffn_bond_from_atom(torch.cat([x_e, h_v[src]], 1)),
                "bond_from_bond": self.ffn_bond_from_bond(
                    torch.cat([x_e, into[src] - h_e[rev]], 1))}

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
