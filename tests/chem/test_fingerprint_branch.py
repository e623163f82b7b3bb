"""ECFP bits joined to the readout of the MPNN and neural-fingerprint estimators."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_papers.chem import (
    MPNN,
    CircularFingerprint,
    GraphCache,
    MPNNClassifier,
    MPNNRegressor,
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
    RDKitDescriptors,
)

TRAIN = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
         "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CCCCCCCC", "NCCO"]
TEST = ["CCCO", "c1ccccc1O", "CCCCCCCCCCCCCCCC", "C"]
Y = np.linspace(-2.0, 2.0, len(TRAIN))
BITS = 64


@pytest.fixture(autouse=True)
def _one_torch_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _mpnn(cls=MPNNRegressor, **params):
    return cls(hidden_size=8, n_steps=1, edge_hidden_size=8, max_epochs=2, batch_size=4,
               random_state=0, **params)


def _nf(cls=NeuralFingerprintRegressor, **params):
    if cls is NeuralFingerprintRegressor:  # one network, as the other predictors train
        params = {"ensemble_size": 1, **params}
    return cls(fp_length=8, radius=2, conv_width=4, max_epochs=2, batch_size=4,
               random_state=0, **params)


def _transformers():
    return [lambda **p: _mpnn(MPNN, **p), lambda **p: _nf(NeuralFingerprint, **p)]


@pytest.mark.parametrize("make", _transformers(), ids=["mpnn", "nf"])
def test_joined_bits_are_circular_fingerprint_bits(make):
    est = make(fingerprint_bits=BITS, fingerprint_radius=1).fit(TRAIN)
    plain = make(fingerprint_bits=0).fit(TRAIN)
    width = plain.transform(TEST).shape[1]
    out = est.transform(TEST)
    assert out.shape == (len(TEST), width + BITS) and out.dtype == np.float32
    expected = CircularFingerprint(radius=1, n_bits=BITS).transform(TEST)
    np.testing.assert_array_equal(out[:, width:], expected)
    np.testing.assert_array_equal(est.fingerprint_.transform(TEST), expected)
    assert len(est.get_feature_names_out()) == out.shape[1]


@pytest.mark.parametrize("make", _transformers(), ids=["mpnn", "nf"])
def test_bits_come_before_the_descriptors(make):
    names = ["MolWt", "TPSA"]
    desc = RDKitDescriptors(descriptors=names)
    est = make(fingerprint_bits=BITS, descriptors=desc).fit(TRAIN)
    out = est.transform(TEST)
    np.testing.assert_array_equal(out[:, -len(names) - BITS:-len(names)],
                                  CircularFingerprint(n_bits=BITS).transform(TEST))
    np.testing.assert_array_equal(out[:, -len(names):],
                                  clone(desc).fit(TRAIN).transform(TEST).astype(np.float32))


@pytest.mark.parametrize("make", [_mpnn, _nf, lambda **p: _mpnn(MPNNClassifier, **p),
                                  lambda **p: _nf(NeuralFingerprintClassifier, **p)],
                         ids=["mpnn", "nf", "mpnn-classifier", "nf-classifier"])
def test_head_takes_the_bits_and_they_change_the_prediction(make):
    y = Y if "Regressor" in type(make()).__name__ else (Y > 0).astype(int)
    est = make(fingerprint_bits=BITS).fit(TRAIN, y)
    assert est.module_.n_mol_features == BITS
    with_desc = make(fingerprint_bits=BITS, descriptors=True).fit(TRAIN, y)
    assert with_desc.module_.n_mol_features == BITS + len(with_desc.descriptors_
                                                         .descriptor_names_)
    plain = make(fingerprint_bits=0).fit(TRAIN, y)
    assert plain.module_.n_mol_features == 0 and plain.fingerprint_ is None
    pred = est.predict(TEST)
    assert pred.shape == (len(TEST),)
    if y.dtype.kind == "f":
        assert not np.allclose(pred, plain.predict(TEST))
    # pickling keeps the branch
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(TEST), pred)


@pytest.mark.parametrize("value", [0, None])
def test_zero_or_none_means_no_branch(value):
    est = _nf(fingerprint_bits=value).fit(TRAIN, Y)
    assert est.fingerprint_ is None and est.module_.n_mol_features == 0


@pytest.mark.parametrize("params", [{"fingerprint_bits": -1}, {"fingerprint_bits": 2**25},
                                    {"fingerprint_bits": 1.5}, {"fingerprint_radius": -1}])
def test_bad_parameters_are_named(params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        _nf(**params).fit(TRAIN, Y)


def test_graph_cache_keeps_the_bits_apart_from_other_settings():
    cache = GraphCache()
    a = _mpnn(fingerprint_bits=BITS, graph_cache=cache).fit(TRAIN, Y)
    misses = cache.misses
    b = clone(a).fit(TRAIN, Y)
    assert cache.misses == misses and cache.hits >= len(TRAIN)
    np.testing.assert_array_equal(a.predict(TEST), b.predict(TEST))
    np.testing.assert_array_equal(
        a.predict(TEST), _mpnn(fingerprint_bits=BITS).fit(TRAIN, Y).predict(TEST))
    for other in ({"fingerprint_bits": 2 * BITS}, {"fingerprint_radius": 3},
                  {"fingerprint_bits": 0}):
        before = cache.misses
        _mpnn(graph_cache=cache, **{"fingerprint_bits": BITS, **other}).fit(TRAIN, Y)
        assert cache.misses == before + len(TRAIN), other


def test_bits_are_those_of_the_standardized_molecule():
    est = _mpnn(MPNN, fingerprint_bits=BITS, standardize=True).fit(TRAIN)
    out = est.transform(["CCN.Cl", "CCN"])
    np.testing.assert_array_equal(out[0, -BITS:], out[1, -BITS:])


def test_set_after_fit_changes_nothing_and_warns():
    est = _nf(fingerprint_bits=BITS).fit(TRAIN, Y)
    pred = est.predict(TEST)
    est.set_params(fingerprint_bits=2 * BITS)
    with pytest.warns(UserWarning, match="fingerprint"):
        np.testing.assert_array_equal(est.predict(TEST), pred)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert est.fit(TRAIN, Y).module_.n_mol_features == 2 * BITS
