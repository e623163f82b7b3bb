"""The neural fingerprint torch module and graph collation, tested without sklearn."""

import numpy as np
import pytest
import torch
from rdkit import Chem

from sklearn_papers.chem.featurizers import MolGraph, mol_to_graph
from sklearn_papers.nn._graph import GraphBatch, collate_graphs, graph_loader
from sklearn_papers.nn._neural_fingerprint import (
    AtomBatchNorm,
    MaskedBCEWithLogitsLoss,
    MaskedMSELoss,
    NeuralFingerprintModel,
    NeuralFingerprintNet,
)

SMILES = ["CCO", "c1ccccc1O", "C", "[Na+].[Cl-]", "CC(C)(C)C(=O)N", "FS(F)(F)(F)(F)F"]


@pytest.fixture(scope="module")
def graphs():
    return [mol_to_graph(Chem.MolFromSmiles(s)) for s in SMILES]


def _net(seed=0, **kwargs):
    torch.manual_seed(seed)
    params = dict(fp_length=12, radius=3, conv_width=7, init_scale=0.5)
    params.update(kwargs)
    return NeuralFingerprintNet(62, 6, **params).eval()


def _naive_fingerprint(net, graph):
    """Oracle: loops over atoms and neighbours of one molecule with explicit sums."""
    h = torch.as_tensor(graph.atom_features, dtype=torch.float64)
    e = torch.as_tensor(graph.bond_features, dtype=torch.float64)
    src, dst = graph.edge_index
    fp = torch.softmax(net.output_layers[0](h), dim=1).sum(0)
    for layer in range(len(net.self_layers)):
        new = []
        for a in range(h.shape[0]):
            incoming = [k for k in range(len(dst)) if dst[k] == a]
            v = torch.zeros(h.shape[1] + e.shape[1], dtype=torch.float64)
            for k in incoming:
                v = v + torch.cat([h[src[k]], e[k]])
            w = net.degree_weights[layer][min(len(incoming), net.max_degree)]
            new.append(net.self_layers[layer](h[a]) + v @ w)
        h = torch.relu(net.norms[layer](torch.stack(new)))
        fp = fp + torch.softmax(net.output_layers[layer + 1](h), dim=1).sum(0)
    return fp


def test_collate_offsets_edges_and_indexes_molecules(graphs):
    batch = collate_graphs(graphs)
    assert isinstance(batch, GraphBatch) and len(batch) == len(graphs)
    t = batch.tensors
    n_atoms = [g.n_atoms for g in graphs]
    assert t["atom_features"].shape == (sum(n_atoms), 62)
    assert t["bond_features"].shape == (sum(g.n_edges for g in graphs), 6)
    np.testing.assert_array_equal(t["batch"].numpy(), np.repeat(np.arange(6), n_atoms))
    # every edge stays inside its molecule
    mol_of = t["batch"].numpy()
    assert (mol_of[t["edge_index"][0].numpy()] == mol_of[t["edge_index"][1].numpy()]).all()
    assert t["edge_index"].dtype == torch.int64 and t["atom_features"].dtype == torch.float32


def test_collate_refuses_empty_batch():
    with pytest.raises(ValueError, match="at least one graph"):
        collate_graphs([])


def test_forward_matches_naive_loop(graphs):
    net = _net().double()
    fps = net(**{k: (v.double() if v.is_floating_point() else v)
                 for k, v in collate_graphs(graphs).tensors.items()})
    for i, g in enumerate(graphs):
        torch.testing.assert_close(fps[i], _naive_fingerprint(net, g))


def test_shapes_and_row_sums(graphs):
    net = _net()
    fps = net(**collate_graphs(graphs).tensors)
    assert fps.shape == (6, 12)
    n_atoms = torch.tensor([g.n_atoms for g in graphs], dtype=torch.float32)
    torch.testing.assert_close(fps.sum(1), n_atoms * 4)  # radius 3 -> 4 softmax layers
    model = NeuralFingerprintModel(62, 6, fp_length=12, radius=2, conv_width=5,
                                   hidden_size=9, n_outputs=3).eval()
    assert model(**collate_graphs(graphs).tensors).shape == (6, 3)


def test_batch_equals_molecule_by_molecule(graphs):
    net = _net()
    together = net(**collate_graphs(graphs).tensors)
    alone = torch.cat([net(**collate_graphs([g]).tensors) for g in graphs])
    torch.testing.assert_close(together, alone)


def test_invariant_to_atom_order():
    net = _net()
    mol = Chem.MolFromSmiles("CC(=O)Nc1ccc(O)cc1")
    order = np.random.RandomState(0).permutation(mol.GetNumAtoms()).tolist()
    shuffled = Chem.RenumberAtoms(mol, order)
    # without canonicalisation the two graphs really are permuted
    g1 = mol_to_graph(mol, standardize=False)
    g2 = mol_to_graph(shuffled, standardize=False)
    assert not np.array_equal(g1.atom_features, g2.atom_features)
    torch.testing.assert_close(net(**collate_graphs([g1]).tensors),
                               net(**collate_graphs([g2]).tensors))


def test_degree_zero_atoms_use_self_and_degree_zero_weights():
    net = _net(batch_norm=False)
    g = mol_to_graph(Chem.MolFromSmiles("O"))
    with torch.no_grad():
        net.degree_weights[0][0].fill_(100.0)  # degree-0 weights multiply a zero sum
    fp = net(**collate_graphs([g]).tensors)
    assert torch.isfinite(fp).all()
    torch.testing.assert_close(fp, _naive_fingerprint(net.double(), g).float()[None],
                               rtol=1e-4, atol=1e-5)


def test_gradient_check_on_tiny_molecule():
    g = mol_to_graph(Chem.MolFromSmiles("CC=O"))
    net = _net(fp_length=4, radius=2, conv_width=3, batch_norm=False).double()
    t = collate_graphs([g]).tensors
    x = t["atom_features"].double().requires_grad_(True)

    def f(x):
        return net(x, t["bond_features"].double(), t["edge_index"], t["degree"], t["batch"],
                   t["n_molecules"])

    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-5)


def test_batch_norm_batch_of_one_atom_in_training_mode():
    """A batch holding one single-atom molecule must not fail in training."""
    bn = AtomBatchNorm(3).train()
    out = bn(torch.ones(1, 3))
    torch.testing.assert_close(out, torch.full((1, 3), 0.5))  # (1 - 0) / (1 + 1)
    net = _net().train()
    fp = net(**collate_graphs([mol_to_graph(Chem.MolFromSmiles("C"))]).tensors)
    assert torch.isfinite(fp).all()


def test_batch_norm_cumulative_statistics():
    bn = AtomBatchNorm(2, momentum=None).train()
    a, b = torch.randn(5, 2), torch.randn(7, 2)
    bn(a)
    bn(b)
    torch.testing.assert_close(bn.running_mean, (a.mean(0) + b.mean(0)) / 2)


def test_masked_losses_ignore_nan_targets():
    pred = torch.tensor([[0.0, 2.0], [1.0, -1.0]])
    target = torch.tensor([[1.0, float("nan")], [1.0, 0.0]])
    assert MaskedMSELoss()(pred, target).item() == pytest.approx((1 + 0 + 1) / 3)
    bce = MaskedBCEWithLogitsLoss()(pred, target)
    ref = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor([0.0, 1.0, -1.0]), torch.tensor([1.0, 1.0, 0.0]))
    torch.testing.assert_close(bce, ref)
    assert MaskedMSELoss()(pred, torch.full((2, 2), float("nan"))).item() == 0.0


def test_graph_loader_yields_targets():
    graphs = [mol_to_graph(Chem.MolFromSmiles(s)) for s in ["CC", "CCC", "C"]]
    batches = list(graph_loader(graphs, batch_size=2, y=np.arange(3, dtype=np.float32)))
    assert [len(b) for b, _ in batches] == [2, 1]
    assert batches[1][1].tolist() == [2.0]
    assert isinstance(graphs[0], MolGraph)
