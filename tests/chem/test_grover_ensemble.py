"""GroverRegressor(head="ensemble"): the mean of the fine-tuned network and the SVR head."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_papers.chem import GroverRegressor

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC",
        "CCCCO", "c1ccccc1O", "CCCl", "NCCO"]
Y = np.array([-0.2, -2.1, 0.5, -0.9, 0.1, 0.3, -3.0, -1.6, -0.4, -2.4, -1.7, -3.8,
              -0.6, -0.05, -1.1, 0.9])
NEW = ["CCCCCO", "c1ccccc1C", "CC(C)(C)O"]
#: A short fine-tuning of the shipped checkpoint.
SHORT = dict(max_epochs=2, batch_size=8, random_state=0, verbose=0)


@pytest.fixture(scope="module")
def ensemble():
    # Fitted once for the module; do not mutate.
    return GroverRegressor(head="ensemble", **SHORT).fit(MOLS, Y)


def test_ensemble_is_the_mean_of_both_heads_fitted_alone(ensemble):
    network = GroverRegressor(head="finetune", **SHORT).fit(MOLS, Y)
    svr = GroverRegressor(head="svr", verbose=0).fit(MOLS, Y)
    pred = ensemble.predict(NEW)
    assert pred.shape == (len(NEW),) and pred.dtype == np.float64
    np.testing.assert_allclose(pred, (network.predict(NEW) + svr.predict(NEW)) / 2,
                               rtol=1e-6, atol=1e-6)
    heads = ensemble._head_predictions(NEW)
    np.testing.assert_allclose(heads["finetune"][:, 0], network.predict(NEW),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(heads["svr"][:, 0], svr.predict(NEW), rtol=1e-6, atol=1e-6)


def test_ensemble_keeps_both_heads_and_round_trips(ensemble):
    assert ensemble.module_ is not None and ensemble.net_ is not None
    assert len(ensemble.svr_) == 1 and ensemble.featurizer_ is not None
    assert ensemble.n_iter_ == 2 and len(ensemble.loss_curve_) == 2
    pred = ensemble.predict(MOLS)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(ensemble)).predict(MOLS), pred,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        clone(ensemble).fit(MOLS, Y).predict(MOLS), pred, rtol=1e-5, atol=1e-5)


def test_refit_with_another_head_drops_the_svr():
    reg = GroverRegressor(head="ensemble", **SHORT).fit(MOLS, Y)
    reg.set_params(head="finetune").fit(MOLS, Y)
    assert reg.svr_ is None and reg.featurizer_ is None
    with pytest.warns(UserWarning, match="max_epochs=2 ignored"):
        reg.set_params(head="svr").fit(MOLS, Y)
    assert reg.module_ is None and len(reg.svr_) == 1


def test_ensemble_uses_the_finetuning_parameters_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = GroverRegressor(head="ensemble", max_epochs=1, lr=3e-3, batch_size=8,
                              random_state=0, verbose=0).fit(MOLS, Y)
    assert reg.n_iter_ == 1


def test_ensemble_several_targets_and_invalid_molecules():
    Y2 = np.column_stack([Y, -Y])
    Y2[0, 1] = Y2[3, 0] = np.nan
    reg = GroverRegressor(head="ensemble", errors="nan", **SHORT).fit(
        MOLS + ["nope"], np.vstack([Y2, [1.0, 1.0]]))
    pred = reg.predict(["CCO", "nope", "c1ccccc1"])
    assert pred.shape == (3, 2) and len(reg.svr_) == 2
    assert np.isfinite(pred[[0, 2]]).all() and np.isnan(pred[1]).all()


def test_bad_head_names_the_options():
    with pytest.raises(ValueError, match="ensemble"):
        GroverRegressor(head="mean").fit(MOLS, Y)


def test_ensemble_with_a_short_fine_tuning_is_the_default():
    reg = GroverRegressor()
    assert (reg.head, reg.max_epochs) == ("ensemble", 30)
    assert reg.lr_schedule == "warmup_decay" and reg.pretrained == "moses-small"
