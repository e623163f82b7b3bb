"""``blend="ecfp_svr"`` of the graph regressors: the network's predictions blended with
MoleculeACE's SVR on ECFP, weighted by their held-out errors."""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from sklearn_papers.chem import MPNNRegressor, NeuralFingerprintRegressor
from sklearn_papers.chem._svr_blend import SVR_C, SVR_GAMMA, blend_share, svr_search_scored
from sklearn_papers.datasets import load_delaney
from sklearn_papers.utils._sklearn_compat import InvalidParameterError

MP = dict(hidden_size=8, n_steps=1, set2set_steps=1, edge_hidden_size=8, batch_size=16,
          max_epochs=4, verbose=0, random_state=0)
NF = dict(fp_length=8, radius=2, conv_width=8, hidden_size=8, batch_size=16, max_epochs=4,
          ensemble_size=1, verbose=0, random_state=0)


@pytest.fixture(scope="module")
def esol():
    X, y = load_delaney(return_X_y=True)
    return np.asarray(X[:90], dtype=object), np.asarray(y[:90], dtype=float)


def _network_alone(est, X):
    alone = copy.copy(est)
    alone.blend_svr_ = None
    return alone.predict(X)


def test_defaults():
    assert MPNNRegressor().blend == "ecfp_svr"
    assert NeuralFingerprintRegressor().blend is None


@pytest.mark.parametrize("cls, params", [(MPNNRegressor, MP),
                                         (NeuralFingerprintRegressor,
                                          {**NF, "early_stopping": True,
                                           "blend": "ecfp_svr"})])
def test_prediction_is_the_weighted_mean(esol, cls, params):
    X, y = esol
    est = cls(**params).fit(X[:70], y[:70])
    w = est.blend_weight_
    assert w.shape == (1,) and 0 <= w[0] <= 1
    assert len(est.blend_svr_) == 1
    svr = est.blend_svr_[0].predict(
        np.asarray(est.blend_fingerprint_.transform(X[70:]), dtype=np.float64))
    expected = (1 - w[0]) * _network_alone(est, X[70:]) + w[0] * svr
    assert_allclose(est.predict(X[70:]), expected, rtol=1e-12, atol=1e-12)


def test_network_is_the_one_without_blend(esol):
    X, y = esol
    blended = MPNNRegressor(**MP).fit(X[:70], y[:70])
    alone = MPNNRegressor(**MP, blend=None).fit(X[:70], y[:70])
    assert alone.blend_svr_ is None and alone.blend_fingerprint_ is None
    assert_array_equal(alone.blend_weight_, [0.0])
    assert_array_equal(_network_alone(blended, X[70:]), alone.predict(X[70:]))


def test_without_held_out_molecules_the_network_predicts_alone(esol):
    X, y = esol
    est = MPNNRegressor(**{**MP, "early_stopping": False}).fit(X[:70], y[:70])
    assert est.blend_svr_ is None
    assert_array_equal(est.blend_weight_, [0.0])
    ref = MPNNRegressor(**{**MP, "early_stopping": False, "blend": None}).fit(X[:70], y[:70])
    assert_array_equal(est.predict(X[70:]), ref.predict(X[70:]))


def test_ensemble_members_hold_out_disjoint_blocks_without_early_stopping(esol):
    X, y = esol
    params = {**NF, "ensemble_size": 3, "blend": "ecfp_svr"}
    est = NeuralFingerprintRegressor(**params).fit(X[:80], y[:80])
    blocks = est._member_held_out_rows
    assert len(blocks) == 3
    assert all(len(b) == 8 for b in blocks)  # 10 % of the 80 molecules each
    held = np.concatenate(blocks)
    assert len(np.unique(held)) == len(held)  # disjoint
    assert 0 <= est.blend_weight_[0] <= 1 and len(est.blend_svr_) == 1
    # the blocks follow random_state
    again = NeuralFingerprintRegressor(**params).fit(X[:80], y[:80])
    for a, b in zip(blocks, again._member_held_out_rows):
        assert_array_equal(a, b)


def test_member_blocks_need_a_blend_and_several_members(esol):
    X, y = esol
    plain = NeuralFingerprintRegressor(**{**NF, "ensemble_size": 2}).fit(X[:60], y[:60])
    assert plain._member_held_out_rows is None
    one = NeuralFingerprintRegressor(**{**NF, "blend": "ecfp_svr"}).fit(X[:60], y[:60])
    assert one._member_held_out_rows is None and one.blend_svr_ is None
    assert_array_equal(one.blend_weight_, [0.0])


def test_member_blocks_skip_unweighted_rows(esol):
    X, y = esol
    weight = np.ones(80)
    weight[:20] = 0
    est = NeuralFingerprintRegressor(**{**NF, "ensemble_size": 2, "blend": "ecfp_svr"})
    est.fit(X[:80], y[:80], sample_weight=weight)
    held = np.concatenate(est._member_held_out_rows)
    assert held.min() >= 20  # rows of the 60 weighted molecules only
    assert all(len(b) == 6 for b in est._member_held_out_rows)


def test_several_targets_with_missing_values(esol):
    X, y = esol
    Y = np.column_stack([y, -2 * y + 1])
    Y[::7, 1] = np.nan
    est = MPNNRegressor(**MP).fit(X[:70], Y[:70])
    assert est.blend_weight_.shape == (2,)
    assert len(est.blend_svr_) == 2
    pred = est.predict(X[70:])
    assert pred.shape == (20, 2) and np.isfinite(pred).all()


def test_invalid_molecules_stay_nan(esol):
    X, y = esol
    X_bad = np.concatenate([X[:70], ["not a molecule"]])
    y_bad = np.concatenate([y[:70], [0.0]])
    est = MPNNRegressor(**MP, errors="nan").fit(X_bad, y_bad)
    assert est.blend_svr_ is not None
    pred = est.predict(np.concatenate([X[70:75], ["C1CC"]]))
    assert np.isfinite(pred[:5]).all() and np.isnan(pred[5])


def test_clone_and_pickle_keep_the_blend(esol):
    X, y = esol
    est = MPNNRegressor(**MP).fit(X[:70], y[:70])
    assert clone(est).blend == "ecfp_svr"
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.predict(X[70:]), est.predict(X[70:]))


def test_unknown_blend_is_refused(esol):
    X, y = esol
    with pytest.raises(InvalidParameterError, match="blend"):
        MPNNRegressor(**MP, blend="rf").fit(X[:20], y[:20])


def test_svr_search_score_is_gridsearchcv_best_score():
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVR

    rng = np.random.RandomState(0)
    F = (rng.rand(60, 32) < 0.3).astype(np.float64)
    t = F[:, :4].sum(axis=1) + 0.1 * rng.randn(60)
    svr, score, oof = svr_search_scored(F, t, None)
    above = (t >= np.median(t)).astype(int)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=42).split(F, above))
    search = GridSearchCV(SVR(kernel="rbf", epsilon=0.1),
                          {"C": list(SVR_C), "gamma": list(SVR_GAMMA)}, cv=folds,
                          scoring="neg_root_mean_squared_error").fit(F, t)
    assert_allclose(score, -search.best_score_, rtol=1e-6)
    assert svr.C == search.best_params_["C"] and svr.gamma == search.best_params_["gamma"]
    # each row's out-of-fold prediction: the chosen SVR of the fold that held it out
    from sklearn.base import clone as clone_svr

    for train, held_out in folds:
        fold_svr = clone_svr(search.best_estimator_).fit(F[train], t[train])
        assert_allclose(oof[held_out], fold_svr.predict(F[held_out]), rtol=1e-6,
                        atol=1e-8)


def test_blend_share_minimises_the_held_out_error():
    rng = np.random.RandomState(0)
    e_net = rng.randn(200)
    # a weaker model erring like the network gets no weight
    assert blend_share(e_net, 1.5 * e_net + 0.1 * rng.randn(200)) == 0.0
    # equally good, independent errors: about half
    e_svr = rng.randn(200)
    share = blend_share(e_net, e_svr)
    assert 0.35 < share < 0.65
    grid = np.linspace(0, 1, 1001)
    errors = [np.sum(((1 - w) * e_net + w * e_svr) ** 2) for w in grid]
    assert abs(share - grid[int(np.argmin(errors))]) <= 1e-3
    # weights: a row of weight 0 counts for nothing
    assert blend_share(np.r_[e_net, 100.0], np.r_[e_svr, -100.0],
                       np.r_[np.ones(200), 0.0]) == pytest.approx(share)
    assert blend_share(np.zeros(3), np.zeros(3)) == 0.0


def test_too_few_held_out_molecules_keep_the_network_alone(esol):
    X, y = esol
    # 30 molecules: 3 held out, fewer than the 5 the weight is fitted on
    est = MPNNRegressor(**MP).fit(X[:30], y[:30])
    assert len(est._held_out_rows) == 3
    assert_array_equal(est.blend_weight_, [0.0])
    assert est.blend_svr_ is None and est.blend_fingerprint_ is None
    assert_array_equal(est.predict(X[70:]), _network_alone(est, X[70:]))


def test_several_fragments_warn_once(esol):
    from sklearn_papers.chem import MultipleFragmentsWarning

    X, y = esol
    est = MPNNRegressor(**MP).fit(X[:70], y[:70])
    assert est.blend_svr_ is not None
    with pytest.warns(MultipleFragmentsWarning) as caught:
        est.predict(["CCO.Cl"])
    assert sum(isinstance(w.message, MultipleFragmentsWarning) for w in caught) == 1


def test_score_names_invalid_molecules(esol):
    X, y = esol
    est = MPNNRegressor(**MP, errors="nan").fit(X[:70], y[:70])
    with pytest.raises(ValueError, match=r"1 molecule\(s\) of X are invalid \(rows 1\)"):
        est.score([X[70], "C1CC", X[71]], y[70:73])
    assert est.score(X[70:], y[70:]) == pytest.approx(
        1 - np.sum((est.predict(X[70:]) - y[70:]) ** 2) / np.sum((y[70:] - y[70:].mean()) ** 2))


def test_svr_search_shows_progress_and_is_silent_at_verbose_0(esol, capsys):
    X, y = esol
    MPNNRegressor(**{**MP, "verbose": 2}).fit(X[:70], y[:70])
    assert "MPNNRegressor SVR search" in capsys.readouterr().err
    MPNNRegressor(**MP).fit(X[:70], y[:70])
    assert "SVR search" not in capsys.readouterr().err
