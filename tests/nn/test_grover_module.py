"""GROVER torch parts against naive per-molecule / per-edge re-implementations."""

import numpy as np
import pytest
import torch

from sklearn_papers.nn._grover import (
    DyMPN,
    GroverPretrainModel,
    GTransformer,
    draw_hops,
    grover_finetune_loss,
    segment_mean,
)
from sklearn_papers.nn._grover._attention import _masked_attention


def _toy_batch():
    """Two molecules: a 3-atom chain (bonds 0-1, 1-2) and a single atom (no bonds)."""
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    batch = torch.tensor([0, 0, 0, 1])
    return edge_index, batch


def test_masked_attention_matches_per_molecule_loop():
    g = torch.Generator().manual_seed(0)
    segment = torch.tensor([0, 0, 0, 1, 2, 2])
    q, k, v = (torch.randn(2, 6, 4, generator=g) for _ in range(3))
    got = _masked_attention(q, k, v, segment, 3)
    for s in range(3):
        rows = (segment == s).nonzero().flatten()
        for h in range(2):
            scores = q[h, rows] @ k[h, rows].T / 2.0
            want = torch.softmax(scores, -1) @ v[h, rows]
            torch.testing.assert_close(got[h, rows], want)


def test_attention_gradients_stay_finite_for_large_logits():
    # A GROVER block trained from scratch on Tox21 reached query/key entries of 2e4; the
    # CPU flash kernel of scaled_dot_product_attention then returned NaN gradients of a
    # finite forward and the fit diverged. Training goes through plain autograd instead.
    g = torch.Generator().manual_seed(0)
    segment = torch.repeat_interleave(torch.arange(4), torch.tensor([44, 30, 30, 12]))
    q, k, v = (torch.randn(2, len(segment), 144, generator=g) for _ in range(3))
    q, k = q * 2e4, k * 2e4
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    _masked_attention(*leaves, segment, 4).square().sum().backward()
    for t in leaves:
        assert torch.isfinite(t.grad).all()
    ref = [t.clone().requires_grad_() for t in (q, k, v)]
    for s in range(4):
        rows = (segment == s).nonzero().flatten()
        for h in range(2):
            scores = ref[0][h, rows] @ ref[1][h, rows].T / 12.0
            (torch.softmax(scores, -1) @ ref[2][h, rows]).square().sum().backward()
    for got, want in zip(leaves, ref):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-3)


def test_edge_view_dympn_matches_naive_directed_message_passing():
    torch.manual_seed(0)
    edge_index, _ = _toy_batch()
    mpn = DyMPN(2, 3, "edge")
    x = torch.randn(4, 3)
    got = mpn(x, edge_index, 4, hops=2)
    src, dst = edge_index.tolist()
    for s in range(2):
        m = x.clone()
        for _ in range(2):
            new = torch.empty_like(m)
            for e in range(4):
                # sum of edges entering the source atom, except the reverse edge
                incoming = [f for f in range(4) if dst[f] == src[e] and f != (e ^ 1)]
                agg = m[incoming].sum(0) if incoming else torch.zeros(3)
                new[e] = torch.relu(x[e] + agg @ mpn.weight[s] + mpn.bias[s, 0])
            m = new
        torch.testing.assert_close(got[s], m)


def test_draw_hops_is_depth_in_eval_and_truncated_in_training():
    assert draw_hops(3, training=False) == 3
    torch.manual_seed(0)
    hops = [draw_hops(3, training=True) for _ in range(300)]
    assert min(hops) >= 1 and max(hops) <= 6 and len(set(hops)) > 2


def test_gtransformer_shapes_with_a_bondless_molecule():
    torch.manual_seed(0)
    edge_index, batch = _toy_batch()
    enc = GTransformer(5, 2, hidden_size=8, n_layers=2, n_heads=2, depth=2).eval()
    x, e = torch.randn(4, 5), torch.randn(4, 2)
    out = enc(x, e, edge_index, batch, 2)
    assert out["atom_from_atom"].shape == out["atom_from_bond"].shape == (4, 8)
    assert out["bond_from_atom"].shape == out["bond_from_bond"].shape == (4, 8)
    emb = enc.embed(x, e, edge_index, batch, 2)
    assert emb.shape == (2, 16) and torch.isfinite(emb).all()
    want = torch.cat([out["atom_from_atom"][:3].mean(0), out["atom_from_bond"][:3].mean(0)])
    torch.testing.assert_close(emb[0], want)
    model = GroverPretrainModel(enc, 7, 5, 85)
    pred = model(x, e, edge_index, batch, 2)
    assert pred["atom"][0].shape == (4, 7) and pred["bond"][1].shape == (2, 5)
    assert all(m.shape == (2, 85) for m in pred["motif"])


def test_segment_mean_empty_segment_is_zero():
    values = torch.ones(3, 2)
    out = segment_mean(values, torch.tensor([0, 0, 2]), 3)
    np.testing.assert_allclose(out.numpy(), [[1, 1], [0, 0], [1, 1]])


def test_finetune_loss_ignores_missing_labels():
    preds = (torch.tensor([[0.0, 1.0], [2.0, 3.0]]), torch.tensor([[0.0, 1.0], [2.0, 3.0]]))
    target = torch.tensor([[0.0, float("nan")], [2.0, 3.0]])
    assert float(grover_finetune_loss(preds, target, "regression")) == 0.0
    target = torch.tensor([[1.0, float("nan")], [2.0, 3.0]])
    # mean over the 3 labelled entries of squared error (1 on one of them), for 2 views
    assert float(grover_finetune_loss(preds, target, "regression")) == pytest.approx(2 / 3)


def test_attention_groups_bound_padding_of_a_mixed_batch():
    from sklearn_papers.nn._grover import ATTENTION_FLOOR, ATTENTION_RATIO, attention_groups

    counts = np.array([500] + [20, 0, 35, 70, 90, 110, 12] * 4 + [3, 64, 65])
    groups = attention_groups(counts)
    members = np.concatenate([m for m, _ in groups])
    assert sorted(members.tolist()) == np.flatnonzero(counts).tolist()  # each once
    padded = sum(len(m) * length ** 2 for m, length in groups)
    own = int((counts ** 2).sum())
    assert padded <= ATTENTION_RATIO ** 2 * own + len(counts) * ATTENTION_FLOOR ** 2
    assert all(counts[m].max() == length for m, length in groups)
    # the chain is alone in its group: the small molecules do not pay 500^2 each
    assert [len(m) for m, length in groups if length == 500] == [1]
    assert padded < 1.3 * own < 0.1 * len(counts) * 500 ** 2
    # molecules of at most ATTENTION_FLOOR rows share one group
    assert len(attention_groups([5, 64, 30, 1])) == 1


def test_grouped_attention_matches_per_molecule_loop_on_mixed_sizes():
    g = torch.Generator().manual_seed(0)
    sizes = [150, 3, 1, 70, 40, 100, 2]  # several groups
    segment = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    q, k, v = (torch.randn(2, int(sum(sizes)), 4, generator=g) for _ in range(3))
    got = _masked_attention(q, k, v, segment, len(sizes) + 1)  # plus an empty segment
    for s in range(len(sizes)):
        rows = (segment == s).nonzero().flatten()
        want = torch.softmax(q[:, rows] @ k[:, rows].transpose(1, 2) / 2.0, -1) @ v[:, rows]
        torch.testing.assert_close(got[:, rows], want)
