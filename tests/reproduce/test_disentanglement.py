"""The disentanglement experiment's claims: per-seed rank correlations judged by the shared
rules."""

import numpy as np

from sklearn_papers.reproduce import disentanglement as D


def _rows(score_of, seeds=(0, 1, 2), betas=(1.0, 4.0, 16.0)):
    """Rows whose acc@10 rises with beta; ``score_of(beta, seed)`` gives every score."""
    rows = []
    for s in seeds:
        for b in betas:
            rows.append({"representation": f"beta-VAE b={b:g} s={s}", "acc@10": b + 0.1 * s,
                         "recon. MSE": b, **{k: score_of(b, s) for k in D.SCORES}})
    for name, acc in (("PCA", 0.0), ("random projection", -1.0)):
        rows.append({"representation": name, "acc@10": acc, "recon. MSE": -acc,
                     **{k: acc for k in D.SCORES}})
    return rows


def test_seed_correlations_group_each_seed_with_the_unseeded_representations():
    cfg = {"seeds": [0, 1, 2], "betas": [1.0, 4.0, 16.0]}
    rows = _rows(lambda b, s: b)
    np.testing.assert_allclose(D._seed_correlations(rows, cfg, "MIG"), [1.0, 1.0, 1.0])
    # reconstruction error grows with beta here, so its negation ranks the other way
    # among the beta-VAEs
    assert all(r < 0.5 for r in D._seed_correlations(rows, cfg, "-recon. MSE"))


def test_claims_hold_for_scores_that_rank_like_accuracy_and_fail_otherwise():
    cfg = {"seeds": [0, 1, 2], "betas": [1.0, 4.0, 16.0]}
    good = D._claims(_rows(lambda b, s: b + 0.01 * s), cfg)
    assert [v.outcome for v in good] == ["holds"] * 6
    bad = D._claims(_rows(lambda b, s: -b - 10), cfg)
    assert {v.outcome for v in bad} == {"does not hold"}
    # one seed: no spread, no verdict either way
    one = D._claims(_rows(lambda b, s: b, seeds=(0,)), {"seeds": [0], "betas": [1.0, 4.0, 16.0]})
    assert {v.outcome for v in one} == {"inconclusive"}
