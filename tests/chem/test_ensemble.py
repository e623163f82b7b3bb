"""``ensemble_size`` of the graph predictors: several networks trained from their own
seeds, predicting with the mean of their predictions or class probabilities."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_papers.chem import (
    MPNN,
    MPNNClassifier,
    MPNNRegressor,
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
)
from sklearn_papers.chem._ensemble import MeanOfMembers, member_seeds
from sklearn_papers.chem._targets import proba_from_logits
from sklearn_papers.datasets import load_delaney
from sklearn_papers.utils._sklearn_compat import InvalidParameterError

NF = dict(fp_length=8, radius=2, conv_width=8, hidden_size=8, batch_size=16, max_epochs=5,
          verbose=0)
MP = dict(hidden_size=8, n_steps=1, set2set_steps=1, edge_hidden_size=8, batch_size=16,
          max_epochs=3, early_stopping=False, verbose=0)
PREDICTORS = [NeuralFingerprintRegressor(**NF), NeuralFingerprintClassifier(**NF),
              MPNNRegressor(**MP, blend=None), MPNNClassifier(**MP)]


@pytest.fixture(scope="module")
def esol():
    X, y = load_delaney(return_X_y=True)
    return X[:80], y[:80]


def _id(est):
    return type(est).__name__


def _target(est, y):
    return (y > np.median(y)).astype(int) if hasattr(est, "predict_proba") else y


def _members_outputs(est, X):
    """Each member's raw outputs on ``X``, shape (n_members, n, n_outputs)."""
    graphs, _ = est._graphs(X, fitted=True)
    graphs = est._described(graphs, fit=False)
    return np.stack([est._forward_rows(member, graphs, "cpu", est.n_outputs_)
                     for member in est.module_.members])


@pytest.mark.parametrize("cls, default", [(NeuralFingerprintRegressor, 5),
                                          (NeuralFingerprintClassifier, 1),
                                          (MPNNRegressor, 1), (MPNNClassifier, 1)])
def test_predictors_have_ensemble_size_and_transformers_not(cls, default):
    assert cls().get_params()["ensemble_size"] == default
    assert "ensemble_size" not in NeuralFingerprint().get_params()
    assert "ensemble_size" not in MPNN().get_params()


@pytest.mark.parametrize("value", [0, -2, 1.5, "3", None])
def test_bad_ensemble_size_raises(value, esol):
    X, y = esol
    with pytest.raises(InvalidParameterError, match="ensemble_size"):
        NeuralFingerprintRegressor(**NF, ensemble_size=value).fit(X, y)


def test_member_seeds_start_with_the_fit_seed_and_extend():
    import itertools

    from sklearn_papers.utils._seeding import spawn_seeds

    seeds = list(member_seeds(7, 5))
    assert seeds[0] == 7 and len(set(seeds)) == 5
    assert seeds[1:] == spawn_seeds(7, 4)
    assert list(member_seeds(7, 3)) == seeds[:3]
    assert list(member_seeds(7, 1)) == [7]
    # made one at a time: a huge ensemble starts training at once
    assert list(itertools.islice(member_seeds(7, 10**12), 5)) == seeds


@pytest.mark.parametrize("est", PREDICTORS, ids=_id)
def test_member_zero_is_the_single_network_and_the_rest_differ(est, esol):
    X, y = esol
    y = _target(est, y)
    single = clone(est).set_params(random_state=0, ensemble_size=1).fit(X, y)
    ens = clone(est).set_params(random_state=0, ensemble_size=3).fit(X, y)
    assert isinstance(ens.module_, MeanOfMembers) and len(ens.module_.members) == 3
    outputs = _members_outputs(ens, X)
    np.testing.assert_allclose(outputs[0], single._run(X), rtol=1e-5, atol=1e-6)
    assert not np.allclose(outputs[0], outputs[1])
    assert not np.allclose(outputs[1], outputs[2])
    # the training record is member 0's
    assert ens.loss_curve_ == pytest.approx(single.loss_curve_)
    assert ens.n_iter_ == single.n_iter_


def test_regression_predicts_the_mean_of_the_members(esol):
    X, y = esol
    reg = NeuralFingerprintRegressor(**NF, ensemble_size=3, random_state=0).fit(X, y)
    members = [NeuralFingerprintRegressor(**NF, ensemble_size=1, random_state=0).fit(X, y)]
    outputs = _members_outputs(reg, X)
    mean = outputs.mean(axis=0)[:, 0] * reg._y_std[0] + reg._y_mean[0]
    np.testing.assert_allclose(reg.predict(X), mean, rtol=1e-5, atol=1e-5)
    assert not np.allclose(reg.predict(X), members[0].predict(X))


@pytest.mark.parametrize("kind", ["binary", "multiclass", "multitask"])
@pytest.mark.parametrize("cls, params", [(NeuralFingerprintClassifier, NF),
                                         (MPNNClassifier, MP)], ids=["nf", "mpnn"])
def test_classifier_probabilities_are_the_mean_of_the_members(cls, params, kind, esol):
    X, y = esol
    target = {"binary": (y > np.median(y)).astype(int),
              "multiclass": np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])),
              "multitask": np.c_[y > np.median(y), y > np.quantile(y, 0.25)].astype(int)}
    clf = cls(**params, ensemble_size=3, random_state=0).fit(X, target[kind])
    proba = clf.predict_proba(X)
    members = [proba_from_logits(out, clf._task) for out in _members_outputs(clf, X)]
    np.testing.assert_allclose(proba, np.mean(members, axis=0), rtol=1e-5, atol=1e-6)
    if kind != "multitask":
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])


def test_random_state_reproduces_the_ensemble(esol):
    X, y = esol
    a = NeuralFingerprintRegressor(**NF, ensemble_size=3, random_state=3).fit(X, y)
    b = NeuralFingerprintRegressor(**NF, ensemble_size=3, random_state=3).fit(X, y)
    c = NeuralFingerprintRegressor(**NF, ensemble_size=3, random_state=4).fit(X, y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-6)
    assert not np.allclose(a.predict(X), c.predict(X))
    # a random_state instance draws the ensemble's seed once
    d = NeuralFingerprintRegressor(**NF, ensemble_size=2,
                                   random_state=np.random.RandomState(0)).fit(X, y)
    e = NeuralFingerprintRegressor(**NF, ensemble_size=2,
                                   random_state=np.random.RandomState(0)).fit(X, y)
    np.testing.assert_allclose(d.predict(X), e.predict(X), rtol=1e-6, atol=1e-6)


def test_larger_ensemble_holds_the_members_of_a_smaller_one(esol):
    X, y = esol
    three = MPNNRegressor(**MP, ensemble_size=3, random_state=0).fit(X, y)
    two = MPNNRegressor(**MP, ensemble_size=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(_members_outputs(three, X)[:2], _members_outputs(two, X),
                               rtol=1e-5, atol=1e-6)


def test_ensemble_lowers_the_spread_over_random_states(esol):
    # member 0 is the single network, so one ensemble per random_state gives both
    X, y = esol
    singles, means = [], []
    for seed in range(6):
        reg = NeuralFingerprintRegressor(**NF, ensemble_size=4, random_state=seed)
        outputs = _members_outputs(reg.fit(X[:60], y[:60]), X[60:])[:, :, 0]
        singles.append(outputs[0])
        means.append(outputs.mean(axis=0))
    spread_single = np.std(singles, axis=0).mean()
    spread_mean = np.std(means, axis=0).mean()
    assert spread_mean < 0.75 * spread_single


def test_clone_and_pickle_keep_the_ensemble(esol):
    X, y = esol
    reg = MPNNRegressor(**MP, ensemble_size=2, random_state=0)
    assert clone(reg).get_params()["ensemble_size"] == 2
    reg.fit(X, y)
    restored = pickle.loads(pickle.dumps(reg))
    assert len(restored.module_.members) == 2
    np.testing.assert_allclose(restored.predict(X), reg.predict(X), rtol=1e-6, atol=1e-6)


def test_ensemble_leaves_the_global_torch_rng_alone(esol):
    X, y = esol
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    NeuralFingerprintRegressor(**NF, ensemble_size=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(torch.rand(3).numpy(), expected.numpy())


def _ensemble_check_cases():
    from sklearn_papers.chem.estimator_checks import molecule_estimator_checks

    small = dict(max_epochs=2, batch_size=16, ensemble_size=2, random_state=0, verbose=0)
    estimators = [
        NeuralFingerprintRegressor(fp_length=8, radius=2, conv_width=8, **small),
        MPNNClassifier(hidden_size=8, n_steps=1, set2set_steps=1, edge_hidden_size=8,
                       **small),
    ]
    return [pytest.param(est, check, id=f"{type(est).__name__}-{name}")
            for est in estimators for name, check in molecule_estimator_checks(est)]


@pytest.mark.parametrize("estimator, check", _ensemble_check_cases())
def test_ensembles_pass_the_molecule_estimator_checks(estimator, check):
    check(estimator)
