"""GROVER's heads and losses: the self-supervised pretraining tasks (contextual property
and motif prediction) and the fine-tuning model with its self-attentive readout."""

import torch
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._grover._ops import _positions, segment_mean


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
