"""Molecule-level descriptors joined to the readout of the graph estimators."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_papers.chem import (
    GraphCache,
    GroverFeaturizer,
    GroverRegressor,
    MPNN,
    MPNNClassifier,
    MPNNRegressor,
    NeuralFingerprint,
    NeuralFingerprintRegressor,
    RDKitDescriptors,
)

TRAIN = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
         "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CCCCCCCC", "NCCO"]
TEST = ["CCCO", "c1ccccc1O", "CCCCCCCCCCCCCCCC", "C"]
Y = np.linspace(-2.0, 2.0, len(TRAIN))
NAMES = ["MolWt", "TPSA", "MolLogP", "NumHDonors"]


def _desc():
    return RDKitDescriptors(descriptors=NAMES)


def _mpnn(**params):
    return MPNNRegressor(hidden_size=8, n_steps=1, edge_hidden_size=8, max_epochs=2,
                         batch_size=4, random_state=0, **params)


def _nf(cls=NeuralFingerprintRegressor, **params):
    return cls(fp_length=8, radius=2, conv_width=4, hidden_size=4, max_epochs=2,
               batch_size=4, ensemble_size=1, random_state=0, **params)


def _grover(**params):
    return GroverRegressor(hidden_size=8, n_heads=1, depth=2, ffn_hidden=8, max_epochs=2,
                           batch_size=4, pretrained=None, random_state=0, head="finetune",
                           **params)


@pytest.mark.parametrize("make", [_mpnn, _nf, _grover], ids=["mpnn", "nf", "grover"])
def test_head_sees_the_training_normalized_descriptors(make):
    est = make(descriptors=_desc()).fit(TRAIN, Y)
    reference = _desc().fit(TRAIN)
    # CDFs fitted in fit, on the training molecules only
    assert est.descriptors_.descriptor_names_ == NAMES
    np.testing.assert_array_equal(est.descriptors_.quantile_transformer_.quantiles_,
                                  reference.quantile_transformer_.quantiles_)
    # the head takes the readout and the descriptors (GROVER: each view's head)
    import torch

    def inputs(model):
        return sum(m.in_features for m in model.module_.modules()
                   if isinstance(m, torch.nn.Linear))

    assert est.module_.n_mol_features == len(NAMES)
    assert inputs(est) - inputs(make().fit(TRAIN, Y)) in (len(NAMES), 2 * len(NAMES))
    pred = est.predict(TEST)
    assert pred.shape == (len(TEST),) and np.isfinite(pred).all()
    # the descriptors reach the prediction: other descriptors, another prediction
    other = clone(est).set_params(descriptors=RDKitDescriptors(descriptors=["qed"]))
    assert not np.allclose(other.fit(TRAIN, Y).predict(TEST), pred)
    # pickling keeps the fitted CDFs
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(TEST), pred)


@pytest.mark.parametrize("make", [
    lambda **p: MPNN(hidden_size=8, n_steps=1, edge_hidden_size=8, random_state=0, **p),
    lambda **p: NeuralFingerprint(fp_length=8, radius=2, conv_width=4, random_state=0, **p),
    lambda **p: GroverFeaturizer(fingerprint_bits=0, **p),
], ids=["mpnn", "nf", "grover"])
def test_transform_appends_the_normalized_descriptors(make):
    est = make(descriptors=_desc()).fit(TRAIN)
    plain = make(descriptors=False).fit(TRAIN)
    out = est.transform(TEST)
    width = plain.transform(TEST).shape[1]
    assert out.shape == (len(TEST), width + len(NAMES)) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, :width], plain.transform(TEST))
    expected = _desc().fit(TRAIN).transform(TEST).astype(np.float32)
    np.testing.assert_array_equal(out[:, width:], expected)
    assert len(est.get_feature_names_out()) == out.shape[1]


def test_true_means_every_descriptor_and_false_none():
    est = _nf(descriptors=True).fit(TRAIN, Y)
    assert len(est.descriptors_.descriptor_names_) == len(RDKitDescriptors().fit(
        TRAIN[:3]).descriptor_names_)
    assert _nf().fit(TRAIN, Y).descriptors_ is None


def test_invalid_molecules_and_standardize_apply_to_the_descriptors():
    est = MPNN(hidden_size=8, n_steps=1, random_state=0, errors="nan", standardize=True,
               descriptors=_desc()).fit(TRAIN + ["C1CC"])
    out = est.transform(["CCN.Cl", "CCN", "C1CC", "CC(=O)[O-].[Na+]", "CC(=O)O"])
    assert np.isnan(out[2]).all() and np.isfinite(np.delete(out, 2, axis=0)).all()
    # the same graph at two places of one batch: the readout's float32 products may round
    # differently with the row's place (BLAS kernels), so equal to float32 precision; the
    # descriptor columns (per molecule, elementwise) exactly
    n = len(NAMES)
    for a, b in ((0, 1), (3, 4)):   # a salt and its parent, a carboxylate and its acid
        np.testing.assert_allclose(out[a, :-n], out[b, :-n], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out[a, -n:], out[b, -n:])


def test_graph_cache_keeps_raw_descriptors_and_gives_the_same_model():
    cache = GraphCache()
    a = _mpnn(descriptors=_desc(), graph_cache=cache).fit(TRAIN, Y)
    misses = cache.misses
    b = clone(a).fit(TRAIN, Y)
    assert cache.misses == misses and cache.hits >= len(TRAIN)
    np.testing.assert_array_equal(a.predict(TEST), b.predict(TEST))
    np.testing.assert_array_equal(a.predict(TEST), _mpnn(descriptors=_desc()).fit(
        TRAIN, Y).predict(TEST))
    # the same cache without descriptors: its own entries, never mixed
    before = cache.misses
    _mpnn(graph_cache=cache).fit(TRAIN, Y)
    assert cache.misses == before + len(TRAIN)


def test_classifier_with_descriptors():
    y = (Y > 0).astype(int)
    clf = MPNNClassifier(hidden_size=8, n_steps=1, max_epochs=2, batch_size=4,
                         random_state=0, descriptors=_desc()).fit(TRAIN, y)
    proba = clf.predict_proba(TEST)
    assert proba.shape == (len(TEST), 2)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("make", [_mpnn, _nf, NeuralFingerprint, _grover, GroverFeaturizer],
                         ids=["mpnn", "nf", "nf_transformer", "grover", "grover_featurizer"])
@pytest.mark.parametrize("value", ["rdkit", ["MolWt", "TPSA"], None, 3])
def test_bad_descriptors_parameter_names_accepted_values(make, value):
    est = make(descriptors=value)
    with pytest.raises(ValueError) as info:
        est.fit(TRAIN, Y)
    message = str(info.value)
    assert f"'descriptors' parameter of {type(est).__name__}" in message
    assert "True" in message and "False" in message
    assert "sklearn_papers.chem.RDKitDescriptors" in message
    assert "._descriptors" not in message  # no private module path
    assert repr(value) in message
    # names given as strings: the message shows how to choose descriptors by name
    assert ("RDKitDescriptors(descriptors=" in message) == (not isinstance(value, (
        type(None), int)))


def test_bad_descriptors_parameter():
    with pytest.raises(ValueError, match="Unknown RDKit descriptor"):
        _mpnn(descriptors=RDKitDescriptors(descriptors=["NotADescriptor"])).fit(TRAIN, Y)


def test_grover_featurizer_load_refuses_descriptors(tmp_path):
    est = GroverFeaturizer().fit(TRAIN)
    folder = est.save(tmp_path / "grover")
    with pytest.raises(ValueError, match="needs molecules"):
        GroverFeaturizer.load(folder, descriptors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = GroverFeaturizer(pretrained=str(folder), descriptors=_desc(),
                                  fingerprint_bits=0).fit(TRAIN)
    assert loaded.transform(TEST).shape == (len(TEST), est.embedding_dim_ + len(NAMES))


def test_descriptor_cdfs_are_fitted_on_the_training_molecules_only():
    # a template fitted elsewhere is refitted, never used as it is, nor modified
    elsewhere = _desc().fit(TEST + ["CCCCCCCCCCCCCCCCCCCC", "OCC(O)CO"])
    before = elsewhere.quantile_transformer_.quantiles_.copy()
    est = MPNN(hidden_size=8, n_steps=1, edge_hidden_size=8, random_state=0,
               descriptors=elsewhere, errors="nan").fit(TRAIN + ["C1CC", ""])
    reference = _desc().fit(TRAIN).quantile_transformer_.quantiles_
    np.testing.assert_array_equal(est.descriptors_.quantile_transformer_.quantiles_,
                                  reference)  # the invalid rows left out too
    assert not np.array_equal(before, reference)
    np.testing.assert_array_equal(elsewhere.quantile_transformer_.quantiles_, before)
    # transforming other molecules does not refit them
    est.transform(TEST)
    np.testing.assert_array_equal(est.descriptors_.quantile_transformer_.quantiles_,
                                  reference)


@pytest.mark.parametrize("make", [_mpnn, _nf, _grover], ids=["mpnn", "nf", "grover"])
def test_clone_keeps_the_descriptors_parameter_and_refits_alike(make):
    est = make(descriptors=_desc()).fit(TRAIN, Y)
    copy = clone(est)
    assert not hasattr(copy, "descriptors_")
    assert copy.descriptors is not est.descriptors
    assert copy.descriptors.get_params() == est.descriptors.get_params()
    assert copy.get_params()["descriptors__descriptors"] == NAMES
    np.testing.assert_array_equal(copy.fit(TRAIN, Y).predict(TEST), est.predict(TEST))


def test_graph_estimator_messages_name_the_pandas_label():
    pd = pytest.importorskip("pandas")
    from sklearn_papers.chem import MultipleFragmentsWarning

    X = pd.Series(TRAIN[:3] + ["C1CC"], index=["w", "x", "y", "z"])
    with pytest.raises(ValueError, match=r"index 3 \(label 'z'\): 'C1CC'"):
        _mpnn().fit(X, Y[:4])
    est = _mpnn().fit(pd.Series(TRAIN), Y)
    with pytest.warns(MultipleFragmentsWarning, match=r"index 1 \(label 'q'\)"):
        est.predict(pd.Series(["CCO", "CCN.Cl"], index=["p", "q"]))


@pytest.mark.parametrize("fit_with, set_after", [
    (RDKitDescriptors(descriptors=["MolWt"]), _desc()),
    (False, _desc()),
    (_desc(), False),
])
def test_descriptors_set_after_fit_do_not_change_predictions(fit_with, set_after):
    # the network's input width was set by the fitted descriptors: reading the new
    # parameter at predict failed in QuantileTransformer (1 vs 4 columns) or with an
    # AttributeError on descriptors_=None
    for cache in (None, GraphCache()):
        est = _mpnn(descriptors=fit_with, graph_cache=cache).fit(TRAIN, Y)
        before = est.predict(TEST)
        est.set_params(descriptors=set_after)
        np.testing.assert_array_equal(est.predict(TEST), before)
