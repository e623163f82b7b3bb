"""GroverFeaturizer / GroverRegressor / GroverClassifier behaviour."""

import json
import re
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
from sklearn_papers.chem._grover_checkpoint import _checkpoint_dir
from sklearn_papers.chem.featurizers._grover_features import grover_graph

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC"]
TINY = dict(hidden_size=16, n_heads=2, depth=2, batch_size=4)
#: A featurizer pretrained from scratch (the default loads the shipped checkpoint), its
#: embedding alone (the default joins RDKit's descriptors and ECFP4 bits).
SCRATCH = dict(TINY, pretrained=None, descriptors=False, fingerprint_bits=0)
#: The shipped checkpoint's embedding alone.
PLAIN = dict(descriptors=False, fingerprint_bits=0)


@pytest.fixture(scope="module")
def featurizer():
    # Fitted once for the module; do not mutate.
    return GroverFeaturizer(max_epochs=3, random_state=0, **SCRATCH).fit(MOLS)


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
    refit = GroverFeaturizer(**PLAIN, pretrained=str(folder), max_epochs=0,
                             batch_size=4).fit(["CCO"])
    np.testing.assert_array_equal(refit.transform(MOLS), featurizer.transform(MOLS))
    # another batch size pads the attention differently: equal up to float32 rounding
    big = GroverFeaturizer(**PLAIN, pretrained=str(folder), max_epochs=0,
                           batch_size=32).fit(["CCO"])
    np.testing.assert_allclose(big.transform(MOLS), featurizer.transform(MOLS), atol=1e-5)
    again = pickle.loads(pickle.dumps(loaded))
    np.testing.assert_array_equal(again.transform(MOLS[:3]), loaded.transform(MOLS[:3]))


def test_load_rejects_missing_or_foreign_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="neither a shipped checkpoint"):
        GroverFeaturizer(**PLAIN, pretrained=str(tmp_path / "nope")).fit(["CCO"])
    (tmp_path / "config.json").write_text(json.dumps({"format": "other"}))
    torch.save({}, tmp_path / "weights.pt")
    with pytest.raises(ValueError, match="not a sklearn_papers.grover checkpoint"):
        load_grover_checkpoint(tmp_path)


def test_damaged_checkpoint_files_raise_value_error_naming_them(tmp_path):
    import shutil

    from sklearn_papers.chem._grover_checkpoint import _checkpoint_dir

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
        GroverFeaturizer(**PLAIN, pretrained=str(folder)).fit(["CCO"])


def test_continued_pretraining_maps_unseen_labels_to_other(featurizer, tmp_path):
    folder = featurizer.save(tmp_path / "ckpt")
    new = ["FC(F)(F)c1ccc(Br)cc1", "C#CCN"]  # labels absent from the small vocabulary
    codes = featurizer.atom_vocab_.encode(
        [lab for s in new for lab in grover_graph(Chem.MolFromSmiles(s))[1]])
    assert (codes == 1).any()
    cont = GroverFeaturizer(**PLAIN, pretrained=str(folder), max_epochs=1, batch_size=2,
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
        est = GroverFeaturizer(max_epochs=1, random_state=0, dropout=0.1, **SCRATCH).fit(MOLS)
        outs.append(est.transform(MOLS))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    state = torch.get_rng_state()
    GroverFeaturizer(max_epochs=1, random_state=3, **SCRATCH).fit(MOLS[:4])
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
    reg = GroverRegressor(head="finetune", pretrained=None, max_epochs=80, lr=3e-3,
                          ffn_hidden=32, random_state=0, **TINY).fit(X, y)
    mse = np.mean((reg.predict(X) - y) ** 2)
    assert mse < 0.05 * y.var(), mse
    assert reg.loss_curve_[-1] < 0.1 * reg.loss_curve_[0]


def test_regressor_multioutput_with_missing_labels_and_pretrained_encoder():
    X = MOLS[:6]
    Y = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 3.0], [np.nan, 0.5], [1.0, 1.0],
                  [0.5, 2.0]])
    reg = GroverRegressor(head="finetune", pretrained="moses-small", max_epochs=2,
                          batch_size=4, random_state=0).fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == (6, 2) and np.isfinite(pred).all()
    with pytest.raises(ValueError, match=r"y column\(s\) \[1\] hold no label"):
        GroverRegressor(head="finetune", pretrained=None, max_epochs=1, **TINY).fit(
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
    grover = GroverFeaturizer(**PLAIN, pretrained="moses-small",
                              max_epochs=0).fit(["CCO"])
    out = grover.transform(["CCO", "OCC", "[CH3][CH2][OH]", "c1ccccc1"])
    assert out.shape == (4, config["embedding_dim"])
    # one molecule written three ways, at three places of one batch: equal to float32
    # precision (a row's place in the batch may change the rounding of its products)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[2], out[0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(out[0], out[3], rtol=1e-3)


def _record_attention(monkeypatch):
    """Record (padded score entries, own score entries) of every attention call."""
    import sklearn_papers.nn._grover._attention as grover_attention
    import sklearn_papers.nn._grover._inference as grover_inference

    calls, dense = [], grover_attention._dense_attention

    def recording(q, k, v, group, pos, n_groups, length, **kwargs):
        own = int((torch.bincount(group, minlength=int(n_groups)) ** 2).sum())
        calls.append((q.shape[0] * int(n_groups) * int(length) ** 2, q.shape[0] * own))
        return dense(q, k, v, group, pos, n_groups, length, **kwargs)

    monkeypatch.setattr(grover_attention, "_dense_attention", recording)  # autograd path
    monkeypatch.setattr(grover_inference, "_dense_attention", recording)  # inference path
    return calls


def test_one_large_molecule_does_not_blow_up_the_attention_of_its_batch(monkeypatch):
    # A 200-carbon chain with 31 small molecules in one batch of 32.
    chain, small = "C" * 200, (MOLS * 3)[:31]
    calls = _record_attention(monkeypatch)
    grover = GroverFeaturizer(batch_size=32, descriptors=False, fingerprint_bits=0).fit(["CCO"])
    mixed = grover.transform([chain, *small])
    padded_mixed = sum(p for p, _ in calls)
    own = sum(o for _, o in calls)
    calls.clear()
    grover.transform([chain])
    padded_alone = sum(p for p, _ in calls)
    calls.clear()
    grover.transform(small)
    padded_small = sum(p for p, _ in calls)
    # the mixed batch costs about its molecules' own attention, not 32 x 200^2 per view
    assert padded_mixed <= 1.1 * (padded_alone + padded_small)
    assert padded_mixed < 1.5 * own
    np.testing.assert_allclose(mixed[0], grover.transform([chain])[0], rtol=1e-4, atol=1e-5)
    # the same holds in training (pretraining on the mixed batch)
    calls.clear()
    GroverFeaturizer(max_epochs=1, random_state=0, **dict(SCRATCH, batch_size=32)).fit(
        [chain, *small])
    assert calls and sum(p for p, _ in calls) < 1.5 * sum(o for _, o in calls)


def test_default_featurizer_loads_the_checkpoint_without_training():
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import RDKitDescriptors

    assert GroverFeaturizer().fit(MOLS[:6]).n_iter_ == 0
    # the blocks before the fingerprint branch (tests/chem/test_grover_fingerprint.py)
    default = GroverFeaturizer(fingerprint_bits=0).fit(MOLS[:6])
    assert default.n_iter_ == 0 and default.loss_curve_ == []
    shipped = GroverFeaturizer.load("moses-small")
    assert shipped.descriptors is False and shipped.descriptors_ is None
    # the default: the shipped embedding, then the descriptors through CDFs fitted on X
    out = default.transform(MOLS)
    width = shipped.embedding_dim_
    np.testing.assert_array_equal(out[:, :width], shipped.transform(MOLS))
    np.testing.assert_allclose(out[:, width:],
                               RDKitDescriptors().fit(MOLS[:6]).transform(MOLS), atol=1e-6)
    assert out.shape == (len(MOLS), width + len(default.descriptors_.descriptor_names_))
    # without descriptors fit looks at nothing but the validity of X: other molecules
    # give the same model
    np.testing.assert_array_equal(
        GroverFeaturizer(descriptors=False, fingerprint_bits=0).fit(MOLS[5:]).transform(
            MOLS),
        shipped.transform(MOLS))
    with pytest.raises(ValueError, match="index 1"):
        GroverFeaturizer().fit(["CCO", "C1CC"])
    y = np.arange(len(MOLS), dtype=float)
    pred = make_pipeline(GroverFeaturizer(), RidgeCV()).fit(MOLS, y).predict(MOLS)
    assert pred.shape == (len(MOLS),) and np.isfinite(pred).all()
    # continued pretraining is asked for with max_epochs
    cont = GroverFeaturizer(max_epochs=1, batch_size=6, random_state=0, descriptors=False,
                            fingerprint_bits=0).fit(MOLS)
    assert cont.n_iter_ == 1
    assert not np.allclose(cont.transform(MOLS), shipped.transform(MOLS))


def _damaged_copy(tmp_path, edit_config=None, edit_state=None):
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(_checkpoint_dir("moses-small"), folder)
    if edit_config is not None:
        config = json.loads((folder / "config.json").read_text())
        edit_config(config)
        (folder / "config.json").write_text(json.dumps(config))
    if edit_state is not None:
        state = torch.load(folder / "weights.pt", weights_only=True)
        edit_state(state)
        torch.save(state, folder / "weights.pt")
    return folder


def _fit_both(folder, *, regressor_raises=True):
    """Messages of the featurizer, the loader and (if it raises) the regressor on folder."""
    fits = [lambda: GroverFeaturizer(**PLAIN, pretrained=folder).fit(MOLS[:2]),
            lambda: load_grover_checkpoint(folder)]
    if regressor_raises:
        fits.append(lambda: GroverRegressor(head="finetune", pretrained=folder,
                                            max_epochs=1).fit(MOLS[:2], [0.0, 1.0]))
    errors = []
    for fit in fits:
        with pytest.raises(ValueError) as info:
            fit()
        assert str(folder) in str(info.value)
        errors.append(str(info.value))
    return errors


@pytest.mark.parametrize("key, value, expected", [
    ("hidden_size", 32, r"config\.json gives hidden_size=32, but the tensors in weights\.pt "
                        r"are those of hidden_size=64"),
    ("n_heads", 1, r"n_heads=1, but .* n_heads=2"),
    ("n_layers", 2, r"n_layers=2, but .* n_layers=1"),
    ("hidden_size", "64", r"params\['hidden_size'\] is '64'; it must be a positive integer"),
])
def test_checkpoint_whose_config_disagrees_with_its_tensors(tmp_path, key, value, expected):
    # A checkpoint that does not fit: a ValueError naming the folder and the parameter, not a torch traceback.
    folder = _damaged_copy(tmp_path, lambda c: c["params"].update({key: value}))
    for message in _fit_both(folder):
        assert re.search(expected, message), message


def test_checkpoint_missing_extra_or_misshapen_tensor(tmp_path):
    name = "encoder.ffn_atom_from_bond.0.weight"
    folder = _damaged_copy(tmp_path, edit_state=lambda s: s.pop(name))
    for message in _fit_both(folder):
        assert "weights.pt lacks 1 tensor(s)" in message and repr(name) in message
    folder = _damaged_copy(tmp_path / "b", edit_state=lambda s: s.update(
        {"encoder.stray.weight": torch.zeros(2)}))
    for message in _fit_both(folder):
        assert "'encoder.stray.weight'" in message and "do not call for" in message
    folder = _damaged_copy(tmp_path / "c", edit_state=lambda s: s.update(
        {name: s[name].T.contiguous()}))
    for message in _fit_both(folder):
        assert repr(name) in message and "has shape (215, 256)" in message


def test_checkpoint_vocabulary_that_does_not_fit_the_head(tmp_path):
    folder = _damaged_copy(tmp_path, lambda c: c.update(atom_vocab=c["atom_vocab"][:-5]))
    for message in _fit_both(folder, regressor_raises=False):
        assert "atom_vocab has" in message and "'atom_heads.0.weight'" in message
    # a regressor only loads the encoder: the vocabulary does not matter to it
    reg = GroverRegressor(head="finetune", pretrained=folder, max_epochs=1,
                          random_state=0).fit(MOLS[:4], [0.0, 1.0, 2.0, 3.0])
    assert np.isfinite(reg.predict(MOLS[:2])).all()
    folder = _damaged_copy(tmp_path / "b", lambda c: c.update(bond_vocab=["C", "D"]))
    with pytest.raises(ValueError, match="'bond_vocab' is not a list of labels starting"):
        GroverFeaturizer(**PLAIN, pretrained=folder).fit(MOLS[:2])


def test_saving_a_loaded_checkpoint_keeps_its_training_record(tmp_path):
    shipped, _ = load_grover_checkpoint("moses-small")
    folder = GroverFeaturizer().fit(MOLS[:2]).save(tmp_path / "same")
    config, _ = load_grover_checkpoint(folder)
    assert config["training"] == shipped["training"]
    assert config["loss_curve"] == shipped["loss_curve"]
    # continued pretraining appends a leg and its epochs to the record
    cont = GroverFeaturizer(max_epochs=1, batch_size=6, random_state=0, descriptors=False,
                            fingerprint_bits=0).fit(MOLS)
    config, _ = load_grover_checkpoint(cont.save(tmp_path / "more"))
    legs = config["training"]["legs"]
    assert len(legs) == 2 and legs[0] == shipped["training"]
    assert legs[1]["epochs"] == 1 and legs[1]["n_molecules"] == len(MOLS)
    assert config["loss_curve"] == shipped["loss_curve"] + cont.loss_curve_
