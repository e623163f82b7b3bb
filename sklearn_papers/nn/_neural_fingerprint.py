"""The neural graph fingerprint of Duvenaud et al. (2015) and its prediction head.

Tensor shapes: ``N`` atoms and ``E`` directed edges in a batch of ``B`` molecules (see
:func:`sklearn_papers.nn._graph.collate_graphs`), ``F`` atom features, ``F_b`` bond features.
"""

import torch
from torch import nn

from sklearn_papers.nn._graph import sum_by_molecule

__all__ = [
    "AtomBatchNorm",
    "MaskedBCEWithLogitsLoss",
    "MaskedMSELoss",
    "NeuralFingerprintModel",
    "NeuralFingerprintNet",
]


class AtomBatchNorm(nn.Module):
    """The authors' batch normalisation: ``(x - mean) / (std + 1)``, no learned affine.

    In training mode the statistics are those of the rows of the batch (all atoms of all its
    molecules) and running estimates are updated; with fewer than two rows (a batch holding
    one single-atom molecule), and in eval mode, the running estimates are used, so a batch
    of one never fails and predictions do not depend on how molecules are batched.

    Parameters
    ----------
    n_features : int
        Width ``D`` of the rows.
    momentum : float or None, default=0.1
        Weight of the new batch in the running estimates; ``None`` keeps a cumulative
        average over the batches seen since :meth:`reset_running_stats`.

    Shapes: input and output ``(N, D)``.
    """

    def __init__(self, n_features, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(n_features))
        self.register_buffer("running_std", torch.ones(n_features))
        self.register_buffer("n_batches", torch.zeros((), dtype=torch.long))

    def reset_running_stats(self):
        self.running_mean.zero_()
        self.running_std.fill_(1.0)
        self.n_batches.zero_()

    def forward(self, x):
        if self.training and x.shape[0] > 1:
            mean = x.mean(dim=0)
            std = x.std(dim=0, unbiased=False)
            with torch.no_grad():
                self.n_batches += 1
                m = 1.0 / float(self.n_batches) if self.momentum is None else self.momentum
                self.running_mean.lerp_(mean.detach(), m)
                self.running_std.lerp_(std.detach(), m)
        else:
            mean, std = self.running_mean, self.running_std
        return (x - mean) / (std + 1.0)


class NeuralFingerprintNet(nn.Module):
    """Neural graph fingerprint (Duvenaud et al. 2015, Algorithm 2; authors' code form).

    With ``h^0`` the atom features, each layer ``l = 1..radius`` computes, for every atom
    ``a`` with heavy-atom degree ``d_a`` (capped at ``max_degree``)::

        v_a   = sum over neighbours u of a of concat(h^{l-1}_u, e_{ua})       (F + F_b)
        h^l_a = relu(BN(h^{l-1}_a W^l_self + b^l + v_a H^l_{d_a}))            (conv_width)

    and the fingerprint sums, over atoms and over the layers ``l = 0..radius``,
    ``softmax(h^l_a W^l_out + c^l)`` (width ``fp_length``). The paper's Algorithm 2 adds
    ``h^{l-1}_a`` to the neighbour sum before the degree matrix; the authors' released
    code, whose numbers the paper reports, gives the atom's own state its own matrix
    ``W_self``, as here (it contains the paper's form as the case ``W_self`` = the atom
    block of ``H_d``).

    Parameters
    ----------
    n_atom_features : int
        ``F``.
    n_bond_features : int
        ``F_b``.
    fp_length : int, default=50
        Width of the fingerprint (softmax output layers).
    radius : int, default=4
        Number of convolution layers (the paper's ``R``, ECFP radius analogue).
    conv_width : int, default=20
        Width of the hidden atom states.
    max_degree : int, default=5
        One neighbour matrix per degree ``0..max_degree``; larger degrees share the last.
    batch_norm : bool, default=True
        :class:`AtomBatchNorm` after each convolution, as in the authors' code.
    init_scale : float or None, default=None
        When a float, every weight and bias is drawn from ``N(0, init_scale^2)`` (the
        authors' initialisation); None uses torch's default fan-in initialisation.

    Shapes: :meth:`forward` returns ``(B, fp_length)``.
    """

    def __init__(self, n_atom_features, n_bond_features, fp_length=50, radius=4, conv_width=20,
                 max_degree=5, batch_norm=True, init_scale=None):
        super().__init__()
        self.max_degree = int(max_degree)
        sizes = [int(n_atom_features)] + [int(conv_width)] * int(radius)
        self.self_layers = nn.ModuleList(
            nn.Linear(sizes[i], sizes[i + 1]) for i in range(radius)
        )
        self.degree_weights = nn.ParameterList(
            nn.Parameter(torch.empty(self.max_degree + 1, sizes[i] + n_bond_features,
                                     sizes[i + 1]))
            for i in range(radius)
        )
        self.output_layers = nn.ModuleList(nn.Linear(s, fp_length) for s in sizes)
        self.norms = nn.ModuleList(
            AtomBatchNorm(conv_width) if batch_norm else nn.Identity() for _ in range(radius)
        )
        self.reset_parameters(init_scale)

    def reset_parameters(self, init_scale=None):
        for w in self.degree_weights:
            bound = 1.0 / float(w.shape[1]) ** 0.5
            nn.init.uniform_(w, -bound, bound)
        for layer in [*self.self_layers, *self.output_layers]:
            layer.reset_parameters()
        if init_scale is not None:
            with torch.no_grad():
                for p in self.parameters():
                    p.normal_(0.0, float(init_scale))

    def _degree_groups(self, degree):
        """``(order, inverse, counts)``: the atoms sorted by capped degree (stable), the
        permutation back, and how many atoms have each degree ``0..max_degree``; computed
        once per batch and shared by the layers."""
        capped = degree.clamp(max=self.max_degree)
        order = torch.argsort(capped, stable=True)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(order.numel(), device=order.device)
        counts = torch.bincount(capped, minlength=self.max_degree + 1).tolist()
        return order, inverse, counts

    def _convolve(self, layer, h, bond_features, edge_index, groups):
        src, dst = edge_index[0], edge_index[1]
        weights = self.degree_weights[layer]                      # (D+1, F_in + F_b, F_out)
        f_in = weights.shape[1]
        messages = torch.cat([h[src], bond_features], dim=1)      # (E, F_in + F_b)
        summed = h.new_zeros((h.shape[0], f_in)).index_add_(0, dst, messages)
        # each atom's neighbour sum times its own degree's matrix H_d: the atoms sorted by
        # degree, one product per degree over a contiguous block, then back in atom order
        order, inverse, counts = groups
        blocks = summed.index_select(0, order).split(counts)
        neighbours = torch.cat([block @ weights[d] for d, block in enumerate(blocks)])
        out = self.self_layers[layer](h) + neighbours.index_select(0, inverse)
        return torch.relu(self.norms[layer](out))

    def forward(self, atom_features, bond_features, edge_index, degree, batch, n_molecules):
        """Fingerprints of a batch of molecules.

        Parameters
        ----------
        atom_features : torch.Tensor of shape (N, F)
        bond_features : torch.Tensor of shape (E, F_b)
        edge_index : torch.Tensor of shape (2, E), int64
        degree : torch.Tensor of shape (N,), int64
        batch : torch.Tensor of shape (N,), int64
            Molecule of each atom.
        n_molecules : int or 0-d tensor
            ``B``.

        Returns
        -------
        fingerprint : torch.Tensor of shape (B, fp_length)
        """
        n_molecules = int(n_molecules)
        h = atom_features
        fp = sum_by_molecule(torch.softmax(self.output_layers[0](h), dim=1), batch, n_molecules)
        groups = self._degree_groups(degree)
        for layer in range(len(self.self_layers)):
            h = self._convolve(layer, h, bond_features, edge_index, groups)
            fp = fp + sum_by_molecule(
                torch.softmax(self.output_layers[layer + 1](h), dim=1), batch, n_molecules
            )
        return fp


class NeuralFingerprintModel(nn.Module):
    """Neural fingerprint followed by a prediction head, trained end to end.

    Head: ``Linear(fp_length, hidden_size) -> AtomBatchNorm -> relu -> Linear(hidden_size,
    n_outputs)`` (the authors' one-hidden-layer net), or a single
    ``Linear(fp_length, n_outputs)`` when ``hidden_size == 0`` (the paper's "linear layer"
    rows).

    Parameters
    ----------
    n_atom_features, n_bond_features, fp_length, radius, conv_width, batch_norm, init_scale
        As in :class:`NeuralFingerprintNet`.
    hidden_size : int, default=100
        Width of the head's hidden layer; 0 for a linear head.
    n_outputs : int, default=1
        Number of outputs (targets, tasks or classes).
    n_mol_features : int, default=0
        Width of molecule-level features (``mol_features`` of :meth:`forward`) joined to
        the fingerprint before the head; 0: none.

    Shapes: :meth:`forward` returns ``(B, n_outputs)``.
    """

    def __init__(self, n_atom_features, n_bond_features, fp_length=50, radius=4, conv_width=20,
                 hidden_size=100, n_outputs=1, batch_norm=True, init_scale=None,
                 n_mol_features=0):
        super().__init__()
        self.fingerprint = NeuralFingerprintNet(
            n_atom_features, n_bond_features, fp_length=fp_length, radius=radius,
            conv_width=conv_width, batch_norm=batch_norm, init_scale=init_scale,
        )
        self.n_mol_features = int(n_mol_features)
        width = fp_length + self.n_mol_features
        if hidden_size:
            self.head = nn.Sequential(
                nn.Linear(width, hidden_size),
                AtomBatchNorm(hidden_size) if batch_norm else nn.Identity(),
                nn.ReLU(),
                nn.Linear(hidden_size, n_outputs),
            )
        else:
            self.head = nn.Linear(width, n_outputs)
        if init_scale is not None:
            with torch.no_grad():
                for p in self.head.parameters():
                    p.normal_(0.0, float(init_scale))

    def forward(self, atom_features, bond_features, edge_index, degree, batch, n_molecules,
                mol_features=None):
        """Outputs ``(B, n_outputs)``; inputs as in :meth:`NeuralFingerprintNet.forward`,
        plus ``mol_features`` ``(B, n_mol_features)`` when ``n_mol_features > 0``."""
        from sklearn_papers.nn._mpnn import join_mol_features

        fp = self.fingerprint(atom_features, bond_features, edge_index, degree, batch,
                              n_molecules)
        return self.head(join_mol_features(fp, mol_features, self.n_mol_features))


class MaskedMSELoss(nn.Module):
    """Mean squared error over the finite targets only (NaN targets are ignored).

    Shapes: ``input`` and ``target`` ``(B, T)``; returns a scalar (0 if no target is finite).
    """

    def forward(self, input, target):
        target = target.to(input.dtype).view_as(input)
        mask = ~torch.isnan(target)
        diff = torch.where(mask, input - torch.nan_to_num(target), torch.zeros_like(input))
        return (diff ** 2).sum() / mask.sum().clamp(min=1)


class MaskedBCEWithLogitsLoss(nn.Module):
    """Binary cross-entropy on logits over the labelled entries only (NaN = missing label).

    Shapes: ``input`` (logits) and ``target`` (0/1/NaN) ``(B, T)``; returns a scalar, the
    mean over labelled entries (0 if none).
    """

    def forward(self, input, target):
        target = target.to(input.dtype).view_as(input)
        mask = ~torch.isnan(target)
        losses = nn.functional.binary_cross_entropy_with_logits(
            input, torch.nan_to_num(target), reduction="none"
        )
        return torch.where(mask, losses, torch.zeros_like(losses)).sum() / mask.sum().clamp(min=1)
