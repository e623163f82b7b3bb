"""GroverFeaturizer / GroverRegressor / GroverClassifier behaviour."""

import json
import pickle

import numpy as np
import pytest
import torch
from rdkit import Chem

from sklearn_papers.chem import (
    GroverClassifier,
    GroverFeaturizer,
    GroverRegressor,
    load_grover_checkpoint,
)
from sklearn_papers.chem._grover import _checkpoint_dir
from sklearn_papers.chem.featurizers._grover_features import grover_graph

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC"]
TINY = dict(hidden_size=16, n_heads=2, depth=2, batch_size=4)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model on a shared machine: one thread is fastest
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def featurizer():
    # Fitted once for the module; do not mutate.
    return GroverFeaturizer(max_epochs=3, random_state=0, **TINY).fit(MOLS)


def test_fit_pretrains_and_loss_decreases(featurizer):
    assert featurizer.n_iter_ == 3
    assert featurizer.loss_curve_[-1] < featurizer.loss_curve_[0]
    out = featurizer.transform(MOLS)
    assert out.shape == (len(MOLS), 32) and out.dtype == np.float32
    assert np.isfinite(out).all()
    assert len(featurizer.get_feature_names_out()) == 32


def test_save_load_round_trip_gives_identical_embeddings(featurizer, tmp_path):
    folder = featurizer.save(tmp_path / "ckpt")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "weights.pt"]
    config = json.loads((folder / "config.json").read_text())
    assert config["format_version"] == 1 and config["params"]["hidden_size"] == 16
    # plain tensors only: loads with weights_only=True
    state = torch.load(folder / "weights.pt", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in state.values())
    loaded = GroverFeaturizer.load(folder)
    np.testing.assert_array_equal(loaded.transform(MOLS), featurizer.transform(MOLS))
    assert loaded.atom_vocab_.itos == featurizer.atom_vocab_.itos
    # refitting with pretrained=<folder> and no epochs reproduces it too
    refit = GroverFeaturizer(pretrained=str(folder), max_epochs=0, batch_size=4).fit(["CCO"])
    np.testing.assert_array_equal(refit.transform(MOLS), featurizer.transform(MOLS))
    # another batch size pads the attention differently: equal up to float32 rounding
    big = GroverFeaturizer(pretrained=str(folder), max_epochs=0, batch_size=32).fit(["CCO"])
    np.testing.assert_allclose(big.transform(MOLS), featurizer.transform(MOLS), atol=1e-5)
    again = pickle.loads(pickle.dumps(loaded))
    np.testing.assert_array_equal(again.transform(MOLS[:3]), loaded.transform(MOLS[:3]))


def test_load_rejects_missing_or_foreign_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="neither a shipped checkpoint"):
        GroverFeaturizer(pretrained=str(tmp_path / "nope")).fit(["CCO"])
    (tmp_path / "config.json").write_text(json.dumps({"format": "other"}))
    torch.save({}, tmp_path / "weights.pt")
    with pytest.raises(ValueError, match="not a sklearn_papers.grover checkpoint"):
        load_grover_checkpoint(tmp_path)


def test_damaged_checkpoint_files_raise_value_error_naming_them(tmp_path):
    import shutil

    from sklearn_papers.chem._grover import _checkpoint_dir

    folder = tmp_path / "ckpt"
    shutil.copytree(_checkpoint_dir("moses-small"), folder)
    config = (folder / "config.json").read_text()
    (folder / "config.json").write_text(config[: len(config) // 2])  # truncated
    for load in (load_grover_checkpoint, GroverFeaturizer.load):
        with pytest.raises(ValueError, match=r"config\.json' is not valid JSON") as info:
            load(folder)
        assert str(folder) in str(info.value)
    (folder / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"config\.json' holds a JSON list"):
        load_grover_checkpoint(folder)
    (folder / "config.json").write_text(config)
    (folder / "weights.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match=r"weights\.pt' is not a readable torch state_dict"):
        GroverFeaturizer(pretrained=str(folder)).fit(["CCO"])


def test_continued_pretraining_maps_unseen_labels_to_other(featurizer, tmp_path):
    folder = featurizer.save(tmp_path / "ckpt")
    new = ["FC(F)(F)c1ccc(Br)cc1", "C#CCN"]  # labels absent from the small vocabulary
    codes = featurizer.atom_vocab_.encode(
        [lab for s in new for lab in grover_graph(Chem.MolFromSmiles(s))[1]])
    assert (codes == 1).any()
    cont = GroverFeaturizer(pretrained=str(folder), max_epochs=1, batch_size=2,
                            random_state=0).fit(new)
    assert cont.atom_vocab_.itos == featurizer.atom_vocab_.itos
    assert cont.n_iter_ == 1 and np.isfinite(cont.loss_curve_).all()


def test_embeddings_invariant_to_atom_order(featurizer):
    rng = np.random.default_rng(0)
    mol = Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")
    shuffled = []
    for _ in range(3):
        order = rng.permutation(mol.GetNumAtoms()).tolist()
        shuffled.append(Chem.MolToSmiles(Chem.RenumberAtoms(mol, order), canonical=False))
    out = featurizer.transform(["CC(=O)Oc1ccccc1C(=O)O", *shuffled, mol])
    for row in out[1:]:
        np.testing.assert_array_equal(row, out[0])


def test_random_state_controls_fit_regardless_of_global_seeds():
    outs = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        torch.manual_seed(global_seed)
        est = GroverFeaturizer(max_epochs=1, random_state=0, dropout=0.1, **TINY).fit(MOLS)
        outs.append(est.transform(MOLS))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    state = torch.get_rng_state()
    GroverFeaturizer(max_epochs=1, random_state=3, **TINY).fit(MOLS[:4])
    assert torch.equal(state, torch.get_rng_state()), "global torch RNG was touched"


def test_invalid_and_nan_rows(featurizer, tmp_path):
    with pytest.raises(ValueError, match="index 1"):
        featurizer.transform(["CCO", "C1CC", "c1ccccc1"])
    lenient = GroverFeaturizer.load(featurizer.save(tmp_path / "c"), errors="nan")
    out = lenient.transform(["CCO", "C1CC", "c1ccccc1"])
    assert np.isnan(out[1]).all()
    np.testing.assert_array_equal(out[[0, 2]], featurizer.transform(["CCO", "c1ccccc1"]))


def test_regressor_overfits_a_small_set():
    X = MOLS[:8]
    y = np.array([0.5, -1.0, 2.0, 1.5, -0.5, 0.0, 1.0, -2.0])
    reg = GroverRegressor(pretrained=None, max_epochs=80, lr=3e-3, ffn_hidden=32,
                          random_state=0, **TINY).fit(X, y)
    mse = np.mean((reg.predict(X) - y) ** 2)
    assert mse < 0.05 * y.var(), mse
    assert reg.loss_curve_[-1] < 0.1 * reg.loss_curve_[0]


def test_regressor_multioutput_with_missing_labels_and_pretrained_encoder():
    X = MOLS[:6]
    Y = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 3.0], [np.nan, 0.5], [1.0, 1.0],
                  [0.5, 2.0]])
    reg = GroverRegressor(pretrained="moses-small", max_epochs=2, batch_size=4,
                          random_state=0).fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == (6, 2) and np.isfinite(pred).all()
    with pytest.raises(ValueError, match=r"y column\(s\) \[1\] hold no label"):
        GroverRegressor(pretrained=None, max_epochs=1, **TINY).fit(
            X, np.c_[np.ones(6), np.full(6, np.nan)])


def test_classifier_multitask_with_nan_and_multiclass():
    X = MOLS[:6]
    Y = np.array([[0, 1], [1, np.nan], [0, 0], [np.nan, 1], [1, 0], [0, 1]], dtype=float)
    clf = GroverClassifier(pretrained=None, max_epochs=2, random_state=0, **TINY).fit(X, Y)
    proba = clf.predict_proba(X)
    assert proba.shape == (6, 2) and ((proba >= 0) & (proba <= 1)).all()
    assert set(np.unique(clf.predict(X))) <= {0, 1}
    multi = GroverClassifier(pretrained=None, max_epochs=2, random_state=0,
                             readout="self_attention", **TINY).fit(X, ["a", "b", "c"] * 2)
    assert multi.predict_proba(X).shape == (6, 3)
    np.testing.assert_allclose(multi.predict_proba(X).sum(1), 1.0)


def test_shipped_checkpoint_loads_offline_and_is_small():
    folder = _checkpoint_dir("moses-small")
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size < 10e6
    config, _ = load_grover_checkpoint("moses-small")
    assert config["training"]["n_molecules"] > 0 and "command" in config["training"]
    grover = GroverFeaturizer(pretrained="moses-small", max_epochs=0).fit(["CCO"])
    out = grover.transform(["CCO", "OCC", "[CH3][CH2][OH]", "c1ccccc1"])
    assert out.shape == (4, config["embedding_dim"])
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[0], out[2])
    assert not np.array_equal(out[0], out[3])
