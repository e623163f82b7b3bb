"""GROVER's data: the dataset of featurized molecules with their labels, its collate
function, and batched forward passes without gradients."""

import numpy as np
import torch

from sklearn_papers.nn._graph import collate_graphs
from sklearn_papers.nn._grover._inference import inference_scratch


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
