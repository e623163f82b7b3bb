"""Batching molecular graphs: numpy ``MolGraph`` lists -> one batched graph of tensors.

This is where tensors first appear on the molecule path (DESIGN.md, "Data flow for
molecules"). A batch concatenates the atoms of its molecules, offsets every edge index by
the number of atoms before it, and keeps ``batch``, the molecule of each atom, so a module
sums per molecule with ``index_add_`` and never loops over molecules in Python.

The graphs only need the four fields of ``sklearn_papers.chem.featurizers.MolGraph``
(``atom_features``, ``bond_features``, ``edge_index``, ``degree``); ``nn`` does not import
the ``chem`` family.
"""

import numpy as np
import torch

__all__ = [
    "GraphBatch",
    "GraphDataset",
    "collate_graph_targets",
    "collate_graphs",
    "graph_loader",
    "sum_by_molecule",
]


class GraphBatch:
    """A batch of molecular graphs as tensors (see :func:`collate_graphs` for the fields).

    ``len(batch)`` is the number of molecules, which is what skorch reads as the batch size;
    ``batch.to(device)`` moves every tensor; ``module(**batch.tensors)`` runs a graph module.

    Parameters
    ----------
    tensors : dict of str to torch.Tensor
        ``atom_features`` (N, F), ``bond_features`` (E, F_b), ``edge_index`` (2, E),
        ``degree`` (N,), ``batch`` (N,), ``n_molecules`` (0-d).
    """

    def __init__(self, tensors):
        self.tensors = tensors

    def __len__(self):
        return int(self.tensors["n_molecules"])

    def to(self, device):
        """A copy with every tensor on ``device``."""
        return GraphBatch({k: v.to(device) for k, v in self.tensors.items()})

    def __repr__(self):
        n_atoms = self.tensors["atom_features"].shape[0]
        return f"GraphBatch(n_molecules={len(self)}, n_atoms={n_atoms})"


def collate_graphs(graphs):
    """Concatenate a list of molecular graphs into one batched graph.

    Parameters
    ----------
    graphs : sequence of MolGraph
        ``n_molecules`` graphs; each has ``atom_features`` (n_atoms_i, F_atom),
        ``bond_features`` (n_edges_i, F_bond), ``edge_index`` (2, n_edges_i), ``degree``
        (n_atoms_i,).

    Returns
    -------
    batch : GraphBatch
        Its ``tensors``: ``atom_features`` float32 (N, F_atom), ``bond_features`` float32
        (E, F_bond), ``edge_index`` int64 (2, E) into the concatenated atoms, ``degree``
        int64 (N,), ``batch`` int64 (N,) molecule index of each atom in
        ``[0, n_molecules)``, and ``n_molecules`` int64 scalar. ``N`` and ``E`` are the
        totals over the batch. When the graphs carry ``mol_features`` (one row of
        molecule-level features each, e.g. normalized descriptors), also
        ``mol_features`` float32 (n_molecules, F_mol).
    """
    if len(graphs) == 0:
        raise ValueError("collate_graphs needs at least one graph, got an empty batch.")
    n_atoms = np.fromiter((g.atom_features.shape[0] for g in graphs), dtype=np.int64,
                          count=len(graphs))
    offsets = np.concatenate([[0], np.cumsum(n_atoms)[:-1]])
    edge_index = np.concatenate(
        [g.edge_index + off for g, off in zip(graphs, offsets)], axis=1
    )
    tensors = {
        "atom_features": torch.from_numpy(
            np.concatenate([g.atom_features for g in graphs]).astype(np.float32, copy=False)
        ),
        "bond_features": torch.from_numpy(
            np.concatenate([g.bond_features for g in graphs]).astype(np.float32, copy=False)
        ),
        "edge_index": torch.from_numpy(edge_index.astype(np.int64, copy=False)),
        "degree": torch.from_numpy(np.concatenate([g.degree for g in graphs]).astype(np.int64)),
        "batch": torch.from_numpy(np.repeat(np.arange(len(graphs), dtype=np.int64), n_atoms)),
        "n_molecules": torch.tensor(len(graphs), dtype=torch.int64),
    }
    if getattr(graphs[0], "mol_features", None) is not None:
        tensors["mol_features"] = torch.from_numpy(
            np.stack([g.mol_features for g in graphs]).astype(np.float32, copy=False))
    return GraphBatch(tensors)


def sum_by_molecule(values, batch, n_molecules):
    """Sum atom rows into molecule rows.

    Parameters
    ----------
    values : torch.Tensor of shape (N, D)
        One row per atom of the batch.
    batch : torch.Tensor of shape (N,), int64
        Molecule index of each atom.
    n_molecules : int
        Number of molecules in the batch.

    Returns
    -------
    sums : torch.Tensor of shape (n_molecules, D)
    """
    out = values.new_zeros((int(n_molecules), values.shape[1]))
    return out.index_add_(0, batch, values)


class GraphDataset(torch.utils.data.Dataset):
    """Molecular graphs with optional targets, for skorch and ``DataLoader``.

    Parameters
    ----------
    graphs : list of MolGraph
        One graph per sample.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs), default=None
        Targets; ``None`` gives a zero placeholder (for prediction).
    """

    def __init__(self, graphs, y=None):
        self.graphs = list(graphs)
        if y is not None and len(y) != len(self.graphs):
            raise ValueError(f"{len(self.graphs)} graphs but {len(y)} targets.")
        self.y = y

    def __len__(self):
        return len(self.graphs)

    def __getitem__(self, i):
        target = np.float32(0.0) if self.y is None else self.y[i]
        return self.graphs[i], target


def collate_graph_targets(items):
    """``collate_fn`` for a ``DataLoader`` over :class:`GraphDataset`.

    Returns
    -------
    (batch, y) : (GraphBatch, torch.Tensor)
        ``batch`` from :func:`collate_graphs`; ``y`` stacks the targets (float32 for float
        targets, int64 for integer class labels).
    """
    graphs, targets = zip(*items)
    return collate_graphs(graphs), torch.as_tensor(np.stack(targets))


def graph_loader(graphs, *, batch_size, y=None, shuffle=False, generator=None):
    """A ``DataLoader`` yielding ``(batch, y)`` from :func:`collate_graph_targets`."""
    return torch.utils.data.DataLoader(
        GraphDataset(graphs, y), batch_size=int(batch_size), shuffle=shuffle,  # numpy ints too
        collate_fn=collate_graph_targets, generator=generator,
    )
