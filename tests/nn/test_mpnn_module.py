"""The MPNN torch parts (messages, GRU update, readouts), tested without sklearn."""

import numpy as np
import pytest
import torch
from rdkit import Chem

from sklearn_papers.chem._mpnn import mpnn_atom_features
from sklearn_papers.chem.featurizers import MolGraph, duvenaud_bond_features, mol_to_graph
from sklearn_papers.nn._graph import collate_graphs
from sklearn_papers.nn._mpnn import (
    EdgeNetworkMessage,
    MeanReadout,
    MPNNEncoder,
    MPNNModel,
    PairMessage,
    Set2SetReadout,
    SumReadout,
    build_message,
    build_readout,
    segment_softmax,
)

SMILES = ["CCO", "c1ccccc1O", "C", "[Na+].[Cl-]", "CC(C)(C)C(=O)N", "OC(=O)c1ccncc1"]
F_ATOM = mpnn_atom_features().n_features
F_BOND = duvenaud_bond_features().n_features


@pytest.fixture(scope="module")
def graphs():
    atoms, bonds = mpnn_atom_features(), duvenaud_bond_features()
    return [mol_to_graph(Chem.MolFromSmiles(s), atoms, bonds) for s in SMILES]


def _encoder(seed=0, **kwargs):
    torch.manual_seed(seed)
    params = dict(hidden_size=6, n_steps=3, set2set_steps=3, edge_hidden_size=5)
    params.update(kwargs)
    return MPNNEncoder(F_ATOM, F_BOND, **params).double().eval()


def _tensors(graphs):
    t = collate_graphs(graphs).tensors
    return {k: (v.double() if v.is_floating_point() else v) for k, v in t.items()}


def _naive_encoder(enc, graph):
    """Oracle: one molecule, explicit loops over atoms and incoming edges."""
    x = torch.as_tensor(graph.atom_features, dtype=torch.float64)
    e = torch.as_tensor(graph.bond_features, dtype=torch.float64)
    src, dst = graph.edge_index
    h = torch.relu(enc.embed(x))
    for _ in range(enc.n_steps):
        rows = []
        for v in range(h.shape[0]):
            m = torch.zeros(h.shape[1], dtype=torch.float64)
            for k in range(len(dst)):
                if dst[k] != v:
                    continue
                w = src[k]
                if isinstance(enc.message, EdgeNetworkMessage):
                    A = enc.message.net(e[k]).view(h.shape[1], h.shape[1])
                    m = m + A @ h[w] + enc.message.bias
                else:
                    m = m + enc.message.net(torch.cat([h[v], h[w], e[k]]))
            rows.append(m)
        h = enc.update.cell(torch.stack(rows), h)
    if isinstance(enc.readout, Set2SetReadout):
        d = h.shape[1]
        q_star = torch.zeros(1, 2 * d, dtype=torch.float64)
        state = (torch.zeros(1, d, dtype=torch.float64), torch.zeros(1, d, dtype=torch.float64))
        for _ in range(enc.readout.n_steps):
            state = enc.readout.lstm(q_star, state)
            q = state[0][0]
            a = torch.softmax(h @ q, dim=0)
            q_star = torch.cat([q, (a[:, None] * h).sum(0)])[None]
        return q_star[0]
    if isinstance(enc.readout, MeanReadout):
        return h.mean(0)
    return h.sum(0)


@pytest.mark.parametrize("message", ["edge_network", "pair"])
@pytest.mark.parametrize("readout", ["set2set", "sum", "mean"])
def test_encoder_matches_naive_loops(graphs, message, readout):
    enc = _encoder(message=message, readout=readout)
    with torch.no_grad():
        out = enc(**_tensors(graphs))
        expected = torch.stack([_naive_encoder(enc, g) for g in graphs])
    assert out.shape == (len(graphs), enc.out_features)
    torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-10)


def _permute(graph, perm):
    """Relabel atom ``i`` as ``perm[i]`` and reverse the edge order."""
    inv = np.argsort(perm)
    x = graph.atom_features[inv]
    order = np.arange(graph.n_edges)[::-1]
    edge_index = perm[graph.edge_index][:, order]
    return MolGraph(x, graph.bond_features[order], edge_index, graph.degree[inv])


@pytest.mark.parametrize("message", ["edge_network", "pair"])
@pytest.mark.parametrize("readout", ["set2set", "sum", "mean"])
def test_readout_is_invariant_to_atom_order(graphs, message, readout, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    enc = _encoder(message=message, readout=readout)
    permuted = [_permute(g, rng.permutation(g.n_atoms)) for g in graphs]
    with torch.no_grad():
        a = enc(**_tensors(graphs))
        b = enc(**_tensors(permuted))
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_atom_states_are_equivariant(graphs):
    enc = _encoder()
    g = graphs[4]
    perm = np.array([3, 0, 6, 1, 5, 2, 4])[: g.n_atoms]
    assert sorted(perm) == list(range(g.n_atoms))
    p = _permute(g, perm)
    t, tp = _tensors([g]), _tensors([p])
    with torch.no_grad():
        h = enc.atom_states(t["atom_features"], t["bond_features"], t["edge_index"])
        hp = enc.atom_states(tp["atom_features"], tp["bond_features"], tp["edge_index"])
    torch.testing.assert_close(hp[torch.as_tensor(perm)], h)


def test_batch_equals_molecules_one_at_a_time(graphs):
    model = MPNNModel(F_ATOM, F_BOND, hidden_size=8, n_steps=2, set2set_steps=2,
                      edge_hidden_size=8, n_outputs=3).eval()
    with torch.no_grad():
        together = model(**collate_graphs(graphs).tensors)
        alone = torch.cat([model(**collate_graphs([g]).tensors) for g in graphs])
        readout = model.fingerprint(**collate_graphs(graphs).tensors)
    assert together.shape == (len(graphs), 3) and readout.shape == (len(graphs), 16)
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-6)


def test_single_atom_molecules_get_finite_distinct_readouts(graphs):
    enc = _encoder()
    single = [g for g in graphs if g.n_edges == 0]  # "C" and "[Na+].[Cl-]"
    assert len(single) == 2
    with torch.no_grad():
        out = enc(**_tensors(single))
    assert torch.isfinite(out).all()
    assert not torch.equal(out[0], out[1])


def test_segment_softmax_sums_to_one_per_molecule():
    scores = torch.tensor([1.0, 2.0, 3.0, 1000.0, -1000.0, 0.5])
    batch = torch.tensor([0, 0, 0, 1, 1, 2])
    w = segment_softmax(scores, batch, 3)
    assert torch.isfinite(w).all()
    sums = torch.zeros(3).index_add_(0, batch, w)
    torch.testing.assert_close(sums, torch.ones(3))
    torch.testing.assert_close(w[:3], torch.softmax(scores[:3], dim=0))
    torch.testing.assert_close(w[3:5], torch.tensor([1.0, 0.0]))


def test_sum_and_mean_readouts():
    h = torch.arange(12.0).view(6, 2)
    batch = torch.tensor([0, 0, 1, 1, 1, 2])
    torch.testing.assert_close(SumReadout(2)(h, batch, 3),
                               torch.tensor([[2.0, 4.0], [18.0, 21.0], [10.0, 11.0]]))
    torch.testing.assert_close(MeanReadout(2)(h, batch, 3),
                               torch.tensor([[1.0, 2.0], [6.0, 7.0], [10.0, 11.0]]))


def test_edge_network_builds_one_matrix_per_edge():
    msg = EdgeNetworkMessage(4, F_BOND, edge_hidden_size=3)
    e = torch.rand(5, F_BOND)
    matrices, kind, order, counts = msg.edge_state(e)
    assert matrices.shape == (len(torch.unique(e, dim=0)), 4, 4) and kind.shape == (5,)
    torch.testing.assert_close(matrices[kind], msg.net(e).view(5, 4, 4))
    assert sum(counts) == 5 and kind[order].tolist() == sorted(kind.tolist())
    # One-hot rows take the packed-code path: two kinds, each edge pointing at its own.
    e_typed = torch.tensor([[1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0]])[[0, 1, 0, 0, 1]]
    matrices, kind, order, counts = msg.edge_state(e_typed)
    assert matrices.shape == (2, 4, 4) and sorted(counts) == [2, 3]
    assert kind[0] == kind[2] == kind[3] != kind[1] == kind[4]
    torch.testing.assert_close(matrices[kind], msg.net(e_typed).view(5, 4, 4))
    assert kind[order].tolist() == sorted(kind.tolist())
    assert isinstance(build_message("pair", 4, F_BOND), PairMessage)
    assert build_readout("set2set", 4).out_features == 8
    with pytest.raises(ValueError, match="message='gru'"):
        build_message("gru", 4, F_BOND)
    with pytest.raises(ValueError, match="readout='max'"):
        build_readout("max", 4)


def test_gradients_reach_every_parameter(graphs):
    model = MPNNModel(F_ATOM, F_BOND, hidden_size=6, n_steps=2, set2set_steps=2,
                      edge_hidden_size=5, n_outputs=1)
    model(**collate_graphs(graphs).tensors).sum().backward()
    missing = [n for n, p in model.named_parameters()
               if p.grad is None or not torch.isfinite(p.grad).all()]
    assert not missing, missing


def test_edge_network_per_edge_path_equals_per_kind_path(graphs, monkeypatch):
    # Continuous bond features: one matrix per edge (batched product); force each path.
    torch.manual_seed(0)
    msg = EdgeNetworkMessage(5, 3, edge_hidden_size=4).double()
    t = _tensors(graphs)
    e = torch.rand(t["edge_index"].shape[1], 3, dtype=torch.float64)
    h = torch.randn(t["atom_features"].shape[0], 5, dtype=torch.float64)
    state = msg.edge_state(e)
    monkeypatch.setattr(EdgeNetworkMessage, "_MAX_GROUPS", 0)
    per_edge = msg(h, state, t["edge_index"])
    monkeypatch.setattr(EdgeNetworkMessage, "_MAX_GROUPS", 10**9)
    per_kind = msg(h, state, t["edge_index"])
    src, dst = t["edge_index"]
    naive = torch.zeros_like(h)
    for k in range(e.shape[0]):
        naive[dst[k]] += msg.net(e[k]).view(5, 5) @ h[src[k]] + msg.bias
    torch.testing.assert_close(per_edge, naive)
    torch.testing.assert_close(per_kind, naive)


def test_edge_network_gradient_reaches_every_bond_feature_row(graphs):
    """One-hot bond features that require a gradient: exact per-edge gradients."""
    torch.manual_seed(0)
    msg = EdgeNetworkMessage(3, F_BOND, edge_hidden_size=4).double()
    t = _tensors(graphs)
    e = t["bond_features"].double().requires_grad_(True)
    h = torch.randn(t["atom_features"].shape[0], 3, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda b: msg(h, msg.edge_state(b), t["edge_index"]), (e,))


def test_directed_bond_passing_matches_a_naive_loop():
    from sklearn_papers.nn._mpnn import DirectedBondPassing

    torch.manual_seed(0)
    # a triangle 0-1-2 plus a pendant atom 3 on atom 2; edges 2k, 2k+1 are bond k
    bonds = [(0, 1), (1, 2), (2, 0), (2, 3)]
    src = [a for u, v in bonds for a in (u, v)]
    dst = [b for u, v in bonds for b in (v, u)]
    edge_index = torch.tensor([src, dst])
    x, e = torch.randn(4, 5), torch.randn(8, 3)
    mp = DirectedBondPassing(5, 3, 6, n_steps=2)
    got = mp(x, e, edge_index)
    h0 = torch.relu(mp.w_i(torch.cat([x[src], e], 1)))
    h = h0
    for _ in range(2):
        new = torch.empty_like(h)
        for k in range(8):
            m = sum((h[f] for f in range(8) if dst[f] == src[k] and f != (k ^ 1)),
                    torch.zeros(6))
            new[k] = torch.relu(h0[k] + mp.w_h(m))
        h = new
    for v in range(4):
        m = sum((h[f] for f in range(8) if dst[f] == v), torch.zeros(6))
        torch.testing.assert_close(got[v], torch.relu(mp.w_o(torch.cat([x[v], m]))))
