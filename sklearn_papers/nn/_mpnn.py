"""Message passing neural networks (Gilmer et al., 2017) as composable torch parts.

The paper's framework (Section 2, Equations 1-3) runs ``T`` message passing steps on a
molecular graph, then reads the atom states out into one vector per molecule::

    m_v^{t+1} = sum over neighbours w of v of M(h_v^t, h_w^t, e_vw)      (Eq. 1)
    h_v^{t+1} = U(h_v^t, m_v^{t+1})                                     (Eq. 2)
    y_hat     = R({h_v^T | v in G})                                      (Eq. 3)

Each part is its own module so variants are a choice of parts:

* messages ``M``: :class:`EdgeNetworkMessage` (Section 5.1, "edge network": an MLP maps the
  bond feature vector ``e_vw`` to a ``d x d`` matrix ``A(e_vw)`` and ``M = A(e_vw) h_w``;
  the paper's best) or :class:`PairMessage` (Section 5.1, "pair message": an MLP of
  ``(h_v, h_w, e_vw)``);
* update ``U``: :class:`GRUUpdate`, one GRU cell whose weights are shared by all ``T``
  steps (Section 2, GG-NN update; the message weights are shared across steps too, which
  the paper found helpful, Section 5.1);
* readout ``R``: :class:`Set2SetReadout` (Section 5.3, set2set of Vinyals et al. 2016, the
  paper's best), :class:`SumReadout` or :class:`MeanReadout`.

Everything is vectorised over a batch of molecules (see
:func:`sklearn_papers.nn._graph.collate_graphs`): messages are gathered per directed edge and
summed into atoms with ``index_add_``, readouts reduce atoms into molecules with
``index_add_`` / ``scatter_reduce``; there is no Python loop over molecules or atoms (only over
the ``T`` steps and the set2set steps).

Tensor shapes: a batch holds ``B`` molecules with ``N`` atoms and ``E`` directed edges in
total; ``F`` atom features, ``F_b`` bond features, ``d`` the hidden size.
"""

from typing import NamedTuple

import torch
from torch import nn

from sklearn_papers.nn._graph import sum_by_molecule

__all__ = [
    "DirectedBondPassing",
    "EdgeNetworkMessage",
    "EdgeState",
    "GRUUpdate",
    "MPNNEncoder",
    "MPNNModel",
    "MeanReadout",
    "PairMessage",
    "Set2SetReadout",
    "SumReadout",
    "build_message",
    "build_readout",
    "segment_softmax",
]


class EdgeNetworkMessage(nn.Module):
    """Edge network message: ``M(h_v, h_w, e_vw) = A(e_vw) h_w + b`` (Gilmer 2017, Sec. 5.1).

    ``A`` is an MLP ``F_b -> edge_hidden_size -> d * d`` reshaped to a ``d x d`` matrix per
    directed edge. The matrices depend only on the bonds, so :meth:`edge_state` computes them
    once per forward pass and every step reuses them.

    Bond feature vectors take few distinct values (a handful of bond types: 11 in a batch of
    50 ESOL molecules), so the MLP runs once per distinct row, ``K`` of them, and the edges
    are sorted by kind once per forward pass. When ``K`` is small each step then does one
    ``(E_k, d) @ (d, d)`` product per kind on a contiguous slice of edges (``E d^2``
    multiply-adds in ``K`` dense products); otherwise (e.g. continuous bond features) each
    edge gets its own matrix and a batched product (also ``E d^2``, in ``d x d`` pieces). Both
    give the same function and gradients as running the MLP on every edge (bond features
    that require a gradient are not deduplicated, so their gradient is exact too).

    Parameters
    ----------
    hidden_size : int
        ``d``.
    n_bond_features : int
        ``F_b``.
    edge_hidden_size : int, default=128
        Width of the MLP's hidden layer.
    """

    #: Use one dense product per kind while ``K <= _MAX_GROUPS``; a batched product above.
    _MAX_GROUPS = 64

    def __init__(self, hidden_size, n_bond_features, edge_hidden_size=128):
        super().__init__()
        self.hidden_size = int(hidden_size)
        self.net = nn.Sequential(
            nn.Linear(n_bond_features, edge_hidden_size),
            nn.ReLU(),
            nn.Linear(edge_hidden_size, self.hidden_size * self.hidden_size),
        )
        self.bias = nn.Parameter(torch.zeros(self.hidden_size))

    def edge_state(self, bond_features):
        """The distinct matrices, each edge's kind, and the edges sorted by kind.

        Parameters
        ----------
        bond_features : torch.Tensor of shape (E, F_b)

        Returns
        -------
        state : EdgeState
            ``matrices`` (K, d, d): ``A(e)`` for the ``K`` distinct bond feature rows;
            ``kind`` (E,) int64: ``A(e_vw) = matrices[kind[edge]]``; ``order`` (E,) int64:
            the edges sorted by kind; ``counts``: tuple of ``K`` ints, the number of edges
            of each kind.
        """
        d = self.hidden_size
        device = bond_features.device
        if bond_features.shape[0] == 0:
            empty = torch.zeros(0, dtype=torch.long, device=device)
            return EdgeState(bond_features.new_zeros((0, d, d)), empty, empty, ())
        if bond_features.requires_grad:
            # Deduplication would send each kind's gradient to one of its edges: give
            # every edge its own row when the bond features themselves are learned.
            rows = bond_features
            kind = torch.arange(bond_features.shape[0], device=device)
        else:
            rows, kind = _distinct_rows(bond_features)
        order = torch.argsort(kind, stable=True)
        counts = tuple(torch.bincount(kind, minlength=rows.shape[0]).tolist())
        return EdgeState(self.net(rows).view(-1, d, d), kind, order, counts)

    def forward(self, h, edge_state, edge_index):
        """Summed messages per atom.

        Parameters
        ----------
        h : torch.Tensor of shape (N, d)
            Atom states ``h^t``.
        edge_state : EdgeState
            From :meth:`edge_state`.
        edge_index : torch.Tensor of shape (2, E), int64
            Source ``w`` (row 0) and target ``v`` (row 1) of each directed edge.

        Returns
        -------
        m : torch.Tensor of shape (N, d)
            ``m_v = sum_w (A(e_vw) h_w + b)`` (zero for atoms without neighbours).
        """
        matrices, kind, order, counts = edge_state
        src, dst = edge_index[0], edge_index[1]
        if src.shape[0] == 0:  # a batch of bond-less molecules: no messages
            return h.new_zeros(h.shape)
        if len(counts) <= self._MAX_GROUPS:
            # Edges sorted by kind: one dense (E_k, d) @ (d, d) product per kind.
            h_src = h[src[order]]                                               # (E, d)
            msg = torch.cat([part @ a.T for part, a in
                             zip(torch.split(h_src, counts), matrices)])        # (E, d)
            dst = dst[order]
        else:
            msg = torch.bmm(matrices[kind], h[src].unsqueeze(-1)).squeeze(-1)  # (E, d)
        m = h.new_zeros(h.shape).index_add_(0, dst, msg)
        # sum_w b = in-degree(v) * b, added once per atom rather than once per edge.
        in_degree = torch.bincount(dst, minlength=h.shape[0]).to(h.dtype)
        return m + in_degree.unsqueeze(1) * self.bias


class EdgeState(NamedTuple):
    """Per-forward-pass state of :class:`EdgeNetworkMessage` (see its ``edge_state``)."""

    matrices: torch.Tensor
    kind: torch.Tensor
    order: torch.Tensor
    counts: tuple


def _distinct_rows(features):
    """Distinct rows of ``features`` (E, F) and the row index of each, like ``unique(dim=0)``.

    Rows of 0/1 entries (one-hot bond features) are packed into one int64 code per row and
    deduplicated with a 1-D ``unique``, which is far cheaper than ``unique(dim=0)``; other
    rows fall back to ``unique(dim=0)``. Returns ``(rows (K, F), inverse (E,) int64)`` with
    ``features == rows[inverse]``.
    """
    n_features = features.shape[1]
    if n_features <= 62 and bool(((features == 0) | (features == 1)).all()):
        weights = 2 ** torch.arange(n_features, device=features.device, dtype=torch.int64)
        codes = (features.to(torch.int64) * weights).sum(dim=1)  # no integer matmul on CUDA
        _, inverse = torch.unique(codes, return_inverse=True)
        first = torch.full((int(inverse.max()) + 1,), features.shape[0],
                           dtype=torch.int64, device=features.device)
        first = first.scatter_reduce(0, inverse, torch.arange(
            features.shape[0], device=features.device), reduce="amin")
        return features[first], inverse
    return torch.unique(features, dim=0, return_inverse=True)


class PairMessage(nn.Module):
    """Pair message: ``M(h_v, h_w, e_vw) = MLP([h_v, h_w, e_vw])`` (Gilmer 2017, Sec. 5.1).

    Parameters
    ----------
    hidden_size : int
        ``d``.
    n_bond_features : int
        ``F_b``.
    edge_hidden_size : int, default=128
        Width of the MLP's hidden layer (``2 d + F_b -> edge_hidden_size -> d``).
    """

    def __init__(self, hidden_size, n_bond_features, edge_hidden_size=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2 * hidden_size + n_bond_features, edge_hidden_size),
            nn.ReLU(),
            nn.Linear(edge_hidden_size, hidden_size),
        )

    def edge_state(self, bond_features):
        """The bond features themselves, (E, F_b)."""
        return bond_features

    def forward(self, h, edge_state, edge_index):
        """Summed messages per atom; shapes as in :meth:`EdgeNetworkMessage.forward`.

        ``edge_state`` is ``(E, F_b)``; returns ``(N, d)``.
        """
        src, dst = edge_index[0], edge_index[1]
        msg = self.net(torch.cat([h[dst], h[src], edge_state], dim=1))  # (E, d)
        return h.new_zeros(h.shape).index_add_(0, dst, msg)


class DirectedBondPassing(nn.Module):
    """Directed-bond message passing of chemprop's D-MPNN (Yang et al. 2019, Section 2.2).

    Hidden states live on directed edges ``v -> w``. With ``x_v`` the atom features and
    ``e_vw`` the bond features::

        h^0_vw = relu(W_i [x_v, e_vw])
        h^t_vw = relu(h^0_vw + W_h sum_{k -> v, k != w} h^{t-1}_kv)    (t = 1..T)
        h_v    = relu(W_o [x_v, sum_{k -> v} h^T_kv])

    The message into ``v -> w`` leaves out the reverse edge ``w -> v`` (``e ^ 1``), so
    messages do not flow straight back ("totters"). In this package's framework this is a
    message function whose update is the residual ``relu(h^0 + W_h m)`` instead of a GRU;
    the atom states go to the MPNN's readout.

    Parameters
    ----------
    n_atom_features : int
        ``F``.
    n_bond_features : int
        ``F_b``.
    hidden_size : int
        ``d``.
    n_steps : int
        ``T`` (chemprop's ``depth`` counts ``h^0`` as a step: ``depth = T + 1``).

    Shapes: :meth:`forward` takes ``x`` (N, F), ``e`` (E, F_b), ``edge_index`` (2, E) and
    returns the atom states (N, d).
    """

    def __init__(self, n_atom_features, n_bond_features, hidden_size, n_steps):
        super().__init__()
        self.n_steps = int(n_steps)
        self.w_i = nn.Linear(n_atom_features + n_bond_features, hidden_size, bias=False)
        self.w_h = nn.Linear(hidden_size, hidden_size, bias=False)
        self.w_o = nn.Linear(n_atom_features + hidden_size, hidden_size)

    def forward(self, atom_features, bond_features, edge_index):
        src, dst = edge_index[0], edge_index[1]
        n_atoms = atom_features.shape[0]
        h0 = torch.relu(self.w_i(torch.cat([atom_features[src], bond_features], dim=1)))
        h = h0
        rev = torch.arange(h.shape[0], device=h.device) ^ 1
        for _ in range(self.n_steps):
            into = h.new_zeros((n_atoms, h.shape[1])).index_add_(0, dst, h)
            h = torch.relu(h0 + self.w_h(into[src] - h[rev]))
        into = h.new_zeros((n_atoms, h.shape[1])).index_add_(0, dst, h)
        return torch.relu(self.w_o(torch.cat([atom_features, into], dim=1)))


class GRUUpdate(nn.Module):
    """Update ``U(h_v, m_v) = GRU(h_v, m_v)``, one cell shared by every step.

    Parameters
    ----------
    hidden_size : int
        ``d``.

    Shapes: ``h`` and ``m`` ``(N, d)`` -> ``(N, d)``.
    """

    def __init__(self, hidden_size):
        super().__init__()
        self.cell = nn.GRUCell(hidden_size, hidden_size)

    def forward(self, h, m):
        return self.cell(m, h)


class SumReadout(nn.Module):
    """Sum of the atom states of each molecule: (N, d) -> (B, d).

    Parameters
    ----------
    hidden_size : int
        ``d``.
    """

    def __init__(self, hidden_size):
        super().__init__()
        self.out_features = int(hidden_size)

    def forward(self, h, batch, n_molecules):
        return sum_by_molecule(h, batch, n_molecules)


class MeanReadout(SumReadout):
    """Mean of the atom states of each molecule: (N, d) -> (B, d).

    Parameters
    ----------
    hidden_size : int
        ``d``.
    """

    def forward(self, h, batch, n_molecules):
        total = sum_by_molecule(h, batch, n_molecules)
        count = h.new_zeros(int(n_molecules)).index_add_(0, batch, h.new_ones(h.shape[0]))
        return total / count.clamp(min=1).unsqueeze(1)


def segment_softmax(scores, batch, n_molecules):
    """Softmax of atom scores within each molecule.

    Parameters
    ----------
    scores : torch.Tensor of shape (N,)
    batch : torch.Tensor of shape (N,), int64
        Molecule of each atom.
    n_molecules : int
        ``B``.

    Returns
    -------
    weights : torch.Tensor of shape (N,)
        Non-negative; they sum to 1 over the atoms of each molecule.
    """
    n_molecules = int(n_molecules)
    top = scores.new_full((n_molecules,), float("-inf"))
    top = top.scatter_reduce(0, batch, scores.detach(), reduce="amax", include_self=True)
    ex = torch.exp(scores - top[batch])
    denom = scores.new_zeros(n_molecules).index_add_(0, batch, ex)
    return ex / denom[batch]


class Set2SetReadout(nn.Module):
    """set2set readout (Vinyals et al. 2016; Gilmer 2017, Sec. 5.3): (N, d) -> (B, 2 d).

    Starting from ``q*_0 = 0``, each of ``n_steps`` steps runs::

        q_t   = LSTM(q*_{t-1})                       (B, d)
        a_v   = softmax over atoms v of its molecule of <h_v, q_t>
        r_t   = sum_v a_v h_v                        (B, d)
        q*_t  = [q_t, r_t]                           (B, 2 d)

    and returns ``q*_T``. The result does not depend on the order of the atoms.

    Parameters
    ----------
    hidden_size : int
        ``d``.
    n_steps : int, default=6
        Number of processing steps ``T_s``.
    """

    def __init__(self, hidden_size, n_steps=6):
        super().__init__()
        self.hidden_size = int(hidden_size)
        self.n_steps = int(n_steps)
        self.out_features = 2 * self.hidden_size
        self.lstm = nn.LSTMCell(2 * self.hidden_size, self.hidden_size)

    def forward(self, h, batch, n_molecules):
        n_molecules = int(n_molecules)
        q_star = h.new_zeros((n_molecules, 2 * self.hidden_size))
        state = (h.new_zeros((n_molecules, self.hidden_size)),
                 h.new_zeros((n_molecules, self.hidden_size)))
        for _ in range(self.n_steps):
            state = self.lstm(q_star, state)
            q = state[0]                                            # (B, d)
            scores = (h * q[batch]).sum(dim=1)                       # (N,)
            a = segment_softmax(scores, batch, n_molecules)          # (N,)
            r = sum_by_molecule(a.unsqueeze(1) * h, batch, n_molecules)  # (B, d)
            q_star = torch.cat([q, r], dim=1)
        return q_star


_MESSAGES = {"edge_network": EdgeNetworkMessage, "pair": PairMessage}
_READOUTS = {"sum": SumReadout, "mean": MeanReadout, "set2set": Set2SetReadout}


def build_message(name, hidden_size, n_bond_features, edge_hidden_size=128):
    """The message module called ``name`` (``"edge_network"`` or ``"pair"``)."""
    if name not in _MESSAGES:
        raise ValueError(f"message={name!r} is not one of {sorted(_MESSAGES)}.")
    return _MESSAGES[name](hidden_size, n_bond_features, edge_hidden_size)


def build_readout(name, hidden_size, set2set_steps=6):
    """The readout module called ``name`` (``"sum"``, ``"mean"`` or ``"set2set"``)."""
    if name not in _READOUTS:
        raise ValueError(f"readout={name!r} is not one of {sorted(_READOUTS)}.")
    if name == "set2set":
        return Set2SetReadout(hidden_size, set2set_steps)
    return _READOUTS[name](hidden_size)


class MPNNEncoder(nn.Module):
    """The MPNN of Gilmer et al. (2017): embed atoms, ``T`` message passing steps, readout.

    ``h^0_v = relu(W x_v + b)`` embeds the atom features ``x_v`` in ``d`` dimensions (the
    paper pads ``x_v`` with zeros to ``d``; a learned embedding contains that as a special
    case), then ``n_steps`` times ``m = M(h, e)``, ``h = U(h, m)`` with shared weights, then
    the readout.

    Parameters
    ----------
    n_atom_features : int
        ``F``.
    n_bond_features : int
        ``F_b``.
    hidden_size : int, default=64
        ``d``.
    n_steps : int, default=6
        ``T``, the number of message passing steps (0: readout of the embedded atoms).
    message : {"edge_network", "pair", "directed"}, default="edge_network"
        "directed": :class:`DirectedBondPassing` replaces message, update and the atom
        embedding.
    readout : {"set2set", "sum", "mean"}, default="set2set"
    set2set_steps : int, default=6
        Processing steps of the set2set readout.
    edge_hidden_size : int, default=128
        Hidden width of the message MLP.

    Attributes
    ----------
    out_features : int
        Width of the readout vector: ``2 d`` for set2set, ``d`` otherwise.
    """

    def __init__(self, n_atom_features, n_bond_features, hidden_size=64, n_steps=6,
                 message="edge_network", readout="set2set", set2set_steps=6,
                 edge_hidden_size=128):
        super().__init__()
        self.n_steps = int(n_steps)
        if message == "directed":
            self.directed = DirectedBondPassing(n_atom_features, n_bond_features,
                                                hidden_size, n_steps)
        else:
            self.directed = None
            self.embed = nn.Linear(n_atom_features, hidden_size)
            self.message = build_message(message, hidden_size, n_bond_features,
                                         edge_hidden_size)
            self.update = GRUUpdate(hidden_size)
        self.readout = build_readout(readout, hidden_size, set2set_steps)
        self.out_features = self.readout.out_features

    def atom_states(self, atom_features, bond_features, edge_index):
        """Atom states after the last step, ``h^T`` of shape (N, d)."""
        if self.directed is not None:
            return self.directed(atom_features, bond_features, edge_index)
        h = torch.relu(self.embed(atom_features))
        state = self.message.edge_state(bond_features)
        for _ in range(self.n_steps):
            h = self.update(h, self.message(h, state, edge_index))
        return h

    def forward(self, atom_features, bond_features, edge_index, degree, batch, n_molecules):
        """Readout vector of each molecule.

        Parameters
        ----------
        atom_features : torch.Tensor of shape (N, F)
        bond_features : torch.Tensor of shape (E, F_b)
        edge_index : torch.Tensor of shape (2, E), int64
        degree : torch.Tensor of shape (N,), int64
            Unused (kept so ``module(**batch.tensors)`` works).
        batch : torch.Tensor of shape (N,), int64
            Molecule of each atom.
        n_molecules : int or 0-d tensor
            ``B``.

        Returns
        -------
        readout : torch.Tensor of shape (B, out_features)
        """
        h = self.atom_states(atom_features, bond_features, edge_index)
        return self.readout(h, batch, int(n_molecules))


class MPNNModel(nn.Module):
    """:class:`MPNNEncoder` followed by a prediction head, trained end to end.

    Head: ``Linear(out_features, d) -> relu -> Linear(d, n_outputs)`` (the paper's readout
    ends with a neural network on the set2set vector).

    Parameters
    ----------
    n_atom_features, n_bond_features, hidden_size, n_steps, message, readout, set2set_steps, \
edge_hidden_size
        As in :class:`MPNNEncoder`.
    n_outputs : int, default=1
        Number of outputs (targets, tasks or classes).
    n_mol_features : int, default=0
        Width of molecule-level features (``mol_features`` of :meth:`forward`, e.g.
        normalized RDKit descriptors) joined to the readout before the head, as
        chemprop's ``features_generator`` does; 0: none.

    Shapes: :meth:`forward` returns ``(B, n_outputs)``; :meth:`fingerprint` returns the
    readout vector ``(B, out_features)``.
    """

    def __init__(self, n_atom_features, n_bond_features, hidden_size=64, n_steps=6,
                 message="edge_network", readout="set2set", set2set_steps=6,
                 edge_hidden_size=128, n_outputs=1, n_mol_features=0):
        super().__init__()
        self.encoder = MPNNEncoder(
            n_atom_features, n_bond_features, hidden_size=hidden_size, n_steps=n_steps,
            message=message, readout=readout, set2set_steps=set2set_steps,
            edge_hidden_size=edge_hidden_size,
        )
        self.n_mol_features = int(n_mol_features)
        self.head = nn.Sequential(
            nn.Linear(self.encoder.out_features + self.n_mol_features, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, n_outputs),
        )

    def fingerprint(self, atom_features, bond_features, edge_index, degree, batch,
                    n_molecules):
        """Readout vector ``(B, out_features)``; inputs as in :meth:`MPNNEncoder.forward`."""
        return self.encoder(atom_features, bond_features, edge_index, degree, batch,
                            n_molecules)

    def forward(self, atom_features, bond_features, edge_index, degree, batch, n_molecules,
                mol_features=None):
        """Outputs ``(B, n_outputs)``; inputs as in :meth:`MPNNEncoder.forward`, plus
        ``mol_features`` ``(B, n_mol_features)`` when ``n_mol_features > 0``."""
        readout = self.fingerprint(atom_features, bond_features, edge_index, degree, batch,
                                   n_molecules)
        return self.head(join_mol_features(readout, mol_features, self.n_mol_features))


def join_mol_features(readout, mol_features, n_mol_features):
    """``readout`` followed by ``mol_features`` (columns), checked against the width the
    head was built for.

    Parameters
    ----------
    readout : torch.Tensor of shape (B, D)
    mol_features : torch.Tensor of shape (B, n_mol_features) or None
    n_mol_features : int
        The width the network was built for (0: ``mol_features`` must be None).

    Returns
    -------
    joined : torch.Tensor of shape (B, D + n_mol_features)
    """
    import torch

    given = 0 if mol_features is None else int(mol_features.shape[1])
    if given != n_mol_features:
        raise ValueError(
            f"The network was built for {n_mol_features} molecule-level feature(s) per "
            f"molecule, got {given}.")
    if not n_mol_features:
        return readout
    return torch.cat([readout, mol_features.to(readout.dtype)], dim=1)
