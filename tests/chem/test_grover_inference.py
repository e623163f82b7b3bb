"""The fast GROVER forward pass against a naive re-implementation (Rong et al. 2020, Sec. 3.1).

The module computes the dyMPN aggregation as one sparse product, the attention with
``scaled_dot_product_attention``, the raw-atom-feature products once per atom (sparse rows
without gradients) and ``transform`` batches molecules by size; the naive reference below
does each step the plain way (gathers and index_add, concatenated inputs, explicit
softmax). Outputs and gradients must agree up to float32 round-off.
"""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from sklearn_papers.chem import GroverFeaturizer
from sklearn_papers.chem._grover import _featurize
from sklearn_papers.chem._validation import check_molecules
from sklearn_papers.nn._graph import collate_graphs
from sklearn_papers.nn._grover import (
    GroverPretrainModel,
    GTransformer,
    NeighbourOperator,
    draw_hops,
)
from sklearn_papers.nn._grover._ops import _sparse_rows_product

SMILES = ["CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "[Na+].[Cl-]", "C", "C" * 40,
          "CN1CCC[C@H]1c1cccnc1", "O=C(O)CC(O)(CC(=O)O)C(=O)O", "c1ccc2ccccc2c1", "N#N"]


@pytest.fixture(scope="module")
def batch():
    mols = check_molecules(SMILES)[0]
    return collate_graphs(_featurize(mols, with_labels=False, n_jobs=1)).tensors


def _naive_mpn(mpn, x, edge_index, n_atoms, hops):
    src, dst = edge_index
    m = x.unsqueeze(0).expand(mpn.weight.shape[0], -1, -1)
    for _ in range(hops):
        if mpn.view == "node":
            agg = m.new_zeros(m.shape).index_add(1, dst, m[:, src])
        else:
            into = m.new_zeros((m.shape[0], n_atoms, m.shape[2])).index_add(1, dst, m)
            agg = into[:, src] - m[:, torch.arange(m.shape[1]) ^ 1]
        m = mpn.dropout(torch.relu(x + torch.einsum("smh,shk->smk", agg, mpn.weight)
                                   + mpn.bias))
    return m


def _naive_attention(q, k, v, segment):
    out = torch.zeros_like(q)
    for s in segment.unique():
        rows = (segment == s).nonzero().flatten()
        scores = q[:, rows] @ k[:, rows].transpose(1, 2) / math.sqrt(q.shape[2])
        out[:, rows] = torch.softmax(scores, -1) @ v[:, rows]
    return out


def _naive_block(block, x, edge_index, segment, n_atoms):
    if block.input is not None:
        x = block.input(x)
    hops = draw_hops(block.depth, block.training)  # the same RNG draw as the module
    qkv = _naive_mpn(block.mpn, x, edge_index, n_atoms, hops)
    h = block.n_heads
    att = _naive_attention(qkv[:h], qkv[h:2 * h], qkv[2 * h:], segment)
    att = att.permute(1, 0, 2).reshape(x.shape[0], -1)
    return x + block.dropout(block.norm(block.out(att)))


def _naive_gtransformer(enc, atom_features, bond_features, edge_index, batch, **ignored):
    x, (src, dst) = atom_features, edge_index
    x_e = torch.cat([x[src], bond_features], 1)
    h_v, h_e = x, x_e
    for block in enc.node_blocks:
        h_v = _naive_block(block, h_v, edge_index, batch, x.shape[0])
    for block in enc.edge_blocks:
        h_e = _naive_block(block, h_e, edge_index, batch[src], x.shape[0])
    nbr = torch.zeros_like(h_v).index_add(0, dst, h_v[src])
    into = h_e.new_zeros((x.shape[0], h_e.shape[1])).index_add(0, dst, h_e)
    rev = torch.arange(h_e.shape[0]) ^ 1
    return {"atom_from_atom": enc.ffn_atom_from_atom(torch.cat([x, nbr], 1)),
            "atom_from_bond": enc.ffn_atom_from_bond(torch.cat([x, into], 1)),
            "bond_from_atom": enc.ffn_bond_from_atom(torch.cat([x_e, h_v[src]], 1)),
            "bond_from_bond": enc.ffn_bond_from_bond(torch.cat([x_e, into[src] - h_e[rev]],
                                                               1))}


@pytest.mark.parametrize("view", ["node", "edge"])
@pytest.mark.parametrize("grad", [False, True])
def test_neighbour_operator_matches_per_edge_sums(batch, view, grad):
    edge_index, n_atoms = batch["edge_index"], batch["atom_features"].shape[0]
    src, dst = edge_index.tolist()
    n_rows = n_atoms if view == "node" else len(src)
    values = torch.randn(3, n_rows, 4, generator=torch.Generator().manual_seed(0),
                         requires_grad=grad)
    op = NeighbourOperator(view, edge_index, n_atoms, 3)
    with torch.set_grad_enabled(grad):
        got = op.streams(values)
    want = torch.zeros(3, n_rows, 4)
    for e, (u, v) in enumerate(zip(src, dst)):
        if view == "node":
            want[:, v] += values[:, u].detach()  # atom v sums its neighbours u
        else:  # edge u -> v sums the edges entering u, except v -> u
            for f in range(len(src)):
                if dst[f] == u and f != (e ^ 1):
                    want[:, e] += values[:, f].detach()
    torch.testing.assert_close(got.detach(), want)
    torch.testing.assert_close(op.single(values[0]).detach(), want[0])
    if grad:
        (got * want).sum().backward()  # d/dvalues of sum(agg(values) * c) = agg^T c
        assert values.grad.shape == values.shape and torch.isfinite(values.grad).all()


def test_sparse_rows_product_equals_the_dense_product(batch):
    x = batch["atom_features"]
    w = torch.randn(40, x.shape[1], generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        got = _sparse_rows_product(x, w)
    torch.testing.assert_close(got, x @ w.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("params", [dict(hidden_size=16, n_layers=1, n_heads=2, depth=3),
                                    dict(hidden_size=12, n_layers=2, n_heads=3, depth=2)])
def test_forward_and_gradients_match_the_naive_implementation(batch, params):
    torch.manual_seed(0)
    enc = GTransformer(151, 14, **params).eval()
    with torch.inference_mode():
        fast = enc(**batch)
    want = _naive_gtransformer(enc, **batch)
    for key, value in want.items():
        torch.testing.assert_close(fast[key], value.detach(), rtol=1e-5, atol=1e-5)
    # gradients (eval mode: the hop count is fixed, no dropout)
    proj = {k: torch.randn(v.shape, generator=torch.Generator().manual_seed(2))
            for k, v in want.items()}
    grads = []
    for out in (enc(**batch), _naive_gtransformer(enc, **batch)):
        enc.zero_grad()
        sum((out[k] * proj[k]).sum() for k in out).backward()
        grads.append({n: p.grad.clone() for n, p in enc.named_parameters()})
    for name in grads[0]:
        scale = float(grads[1][name].abs().max())  # round-off is relative to the largest
        torch.testing.assert_close(grads[0][name], grads[1][name], rtol=1e-5,
                                   atol=1e-5 * scale, msg=name)


def test_training_mode_draws_the_same_hops_and_dropout_masks_as_the_naive_path(batch):
    torch.manual_seed(0)
    enc = GTransformer(151, 14, hidden_size=8, n_heads=2, depth=3, dropout=0.3).train()
    with torch.random.fork_rng():
        torch.manual_seed(7)
        fast = enc(**batch)
        torch.manual_seed(7)
        want = _naive_gtransformer(enc, **batch)
    for key, value in want.items():
        torch.testing.assert_close(fast[key], value, rtol=1e-5, atol=1e-5)


def test_transform_rows_follow_the_input_order_whatever_the_batching():
    est = GroverFeaturizer(batch_size=3).fit(["CCO"])
    out = est.transform(SMILES)
    one_by_one = np.concatenate([est.transform([s]) for s in SMILES])
    np.testing.assert_allclose(out, one_by_one, rtol=1e-5, atol=1e-6)
    reversed_out = est.transform(SMILES[::-1])[::-1]
    np.testing.assert_allclose(out, reversed_out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("view", ["node", "edge"])
def test_neighbour_operator_into_a_buffer_is_bitwise_the_same(batch, view):
    # DyMPN's inference loop writes each hop's aggregation into one reused buffer
    edge_index, n_atoms = batch["edge_index"], batch["atom_features"].shape[0]
    n_rows = n_atoms if view == "node" else edge_index.shape[1]
    values = torch.randn(6, n_rows, 8, generator=torch.Generator().manual_seed(1))
    op = NeighbourOperator(view, edge_index, n_atoms, 6)
    buffer = torch.full_like(values, float("nan"))  # stale contents must not leak in
    with torch.no_grad():
        got = op.streams(values, out=buffer)
        fresh = op.streams(values)
    assert got.data_ptr() == buffer.data_ptr()
    assert torch.equal(got, fresh)
    with torch.enable_grad():  # the training path (sparse COO product)
        want = op.streams(values.clone().requires_grad_(True))
    torch.testing.assert_close(got, want.detach())


def test_dympn_inference_loop_matches_the_training_loop(batch):
    from sklearn_papers.nn._grover import DyMPN

    torch.manual_seed(0)
    mpn = DyMPN(6, 8, "edge").eval()
    edge_index, n_atoms = batch["edge_index"], batch["atom_features"].shape[0]
    x = torch.randn(edge_index.shape[1], 8, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        fast = mpn(x, edge_index, n_atoms, 3)
    slow = mpn(x.clone().requires_grad_(True), edge_index, n_atoms, 3)
    torch.testing.assert_close(fast, slow.detach())


# -- the inference path (evaluation mode without autograd) against the autograd path ------
MIXED = SMILES + ["C" * 130, "C1CC1", "[Na+]"]  # a chain in its own attention group


def _autograd_path(enc, batch):
    """The training code path (evaluation mode, autograd on)."""
    with torch.enable_grad():
        return {k: v.detach() for k, v in enc(**batch).items()}


@pytest.mark.parametrize("params", [dict(hidden_size=16, n_layers=1, n_heads=2, depth=3),
                                    dict(hidden_size=12, n_layers=2, n_heads=3, depth=2),
                                    dict(hidden_size=151, n_layers=1, n_heads=1, depth=1),
                                    dict(hidden_size=165, n_layers=1, n_heads=1, depth=0)])
def test_inference_path_matches_the_autograd_path(params):
    # widths 151 and 165 leave out the node-view / edge-view input projection
    mols = check_molecules(MIXED)[0]
    batch = collate_graphs(_featurize(mols, with_labels=False, n_jobs=1)).tensors
    torch.manual_seed(0)
    enc = GTransformer(151, 14, **params).eval()
    with torch.inference_mode():
        fast = enc(**batch)
        fast_atoms = enc(**batch, atoms_only=True)
    want = _autograd_path(enc, batch)
    assert set(fast) == set(want) and set(fast_atoms) == {"atom_from_atom", "atom_from_bond"}
    for key, value in want.items():
        torch.testing.assert_close(fast[key], value, rtol=1e-5, atol=1e-5)
    for key, value in fast_atoms.items():
        torch.testing.assert_close(value, want[key], rtol=1e-5, atol=1e-5)


def test_inference_path_on_molecules_without_bonds():
    mols = check_molecules(["C", "[Na+].[Cl-]", "O"])[0]
    batch = collate_graphs(_featurize(mols, with_labels=False, n_jobs=1)).tensors
    assert batch["edge_index"].shape[1] == 0
    torch.manual_seed(0)
    enc = GTransformer(151, 14, hidden_size=8).eval()
    with torch.inference_mode():
        fast = enc.embed(**batch)
    with torch.enable_grad():
        want = enc.embed(**batch).detach()
    torch.testing.assert_close(fast, want, rtol=1e-5, atol=1e-5)


def test_reused_scratch_gives_the_same_rows_and_never_aliases_outputs():
    from sklearn_papers.nn._grover import inference_scratch

    def tensors(smiles):
        mols = check_molecules(smiles)[0]
        return collate_graphs(_featurize(mols, with_labels=False, n_jobs=1)).tensors

    big, small = tensors(MIXED), tensors(["CCO", "c1ccccc1"])
    torch.manual_seed(0)
    enc = GTransformer(151, 14, hidden_size=16).eval()
    with torch.inference_mode():
        want_big, want_small = enc.embed(**big), enc.embed(**small)
        with inference_scratch():  # buffers sized by the big batch, then reused
            first = enc.embed(**big)
            second = enc.embed(**small)
            third = enc.embed(**big)
    assert torch.equal(first, want_big) and torch.equal(third, want_big)
    assert torch.equal(second, want_small)
