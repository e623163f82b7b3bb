"""Progress of long molecule work: shown by default on large inputs, silenced by verbose=0."""

import numpy as np
import pytest

from sklearn_papers.chem import (
    CircularFingerprint,
    GroverFeaturizer,
    MoleculeStandardizer,
    MPNNRegressor,
)
from sklearn_papers.datasets import load_delaney
from sklearn_papers.nn import _progress


@pytest.fixture
def small_thresholds(monkeypatch):
    """Thresholds of 40 molecules and 120 molecule-epochs, so that tests stay small."""
    monkeypatch.setattr(_progress, "PROGRESS_MIN_ITEMS", 40)
    monkeypatch.setattr(_progress, "TRAINING_MIN_ITEMS", 120)


@pytest.fixture(scope="module")
def smiles():
    return load_delaney(return_X_y=True)[0][:60]


def _small_mpnn(**kwargs):
    return MPNNRegressor(hidden_size=8, n_steps=1, edge_hidden_size=8, batch_size=16,
                         random_state=0, **kwargs)


def test_defaults_show_progress_on_large_inputs_only(small_thresholds, smiles, capfd):
    CircularFingerprint(batch_size=8).transform(smiles[:30])
    MoleculeStandardizer().transform(smiles[:30])
    assert capfd.readouterr().err == ""  # below the threshold: nothing
    CircularFingerprint(batch_size=8).transform(smiles)
    assert "CircularFingerprint" in capfd.readouterr().err
    MoleculeStandardizer().transform(smiles)
    assert "MoleculeStandardizer" in capfd.readouterr().err


def test_training_prints_the_epoch_table_from_the_threshold_on(small_thresholds, smiles,
                                                               capfd):
    y = np.linspace(0.0, 1.0, len(smiles))
    _small_mpnn(max_epochs=1, early_stopping=False).fit(smiles[:30], y[:30])
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""  # 30 molecule-epochs: silent
    model = _small_mpnn(max_epochs=3, early_stopping=False).fit(smiles, y)
    captured = capfd.readouterr()
    # 180 molecule-epochs: the epoch table, and the featurization bar (60 molecules)
    assert "train_loss" in captured.out and len(captured.out.strip().splitlines()) == 2 + 3
    assert "MPNNRegressor featurizing" in captured.err
    model.predict(smiles)
    assert "MPNNRegressor" in capfd.readouterr().err


def test_grover_featurizer_transform_shows_progress(small_thresholds, smiles, capfd):
    featurizer = GroverFeaturizer(hidden_size=8, n_heads=1, depth=1, pretrained=None,
                                  max_epochs=0, random_state=0).fit(smiles[:8])
    capfd.readouterr()
    featurizer.transform(smiles)
    err = capfd.readouterr().err
    assert "GroverFeaturizer featurizing" in err and "GroverFeaturizer:" in err


def test_verbose_zero_silences_everything(small_thresholds, smiles, capfd):
    y = np.linspace(0.0, 1.0, len(smiles))
    CircularFingerprint(verbose=0).transform(smiles)
    MoleculeStandardizer(verbose=0).transform(smiles)
    _small_mpnn(max_epochs=3, verbose=0).fit(smiles, y).predict(smiles)
    GroverFeaturizer(hidden_size=8, n_heads=1, depth=1, pretrained=None, max_epochs=0,
                     random_state=0, verbose=0).fit(smiles[:8]).transform(smiles)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_progress_does_not_change_the_output(small_thresholds, smiles):
    for est in (CircularFingerprint(n_bits=256), MoleculeStandardizer()):
        shown = est.set_params(verbose=2).transform(smiles)
        silent = est.set_params(verbose=0).transform(smiles)
        np.testing.assert_array_equal(shown, silent)
    y = np.linspace(0.0, 1.0, len(smiles))
    shown = _small_mpnn(max_epochs=2, verbose=2).fit(smiles, y).predict(smiles)
    silent = _small_mpnn(max_epochs=2, verbose=0).fit(smiles, y).predict(smiles)
    np.testing.assert_array_equal(shown, silent)
