"""GraphCache: graphs featurized once, shared by clones, bounded, never pickled."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import (
    MPNN,
    GraphCache,
    GroverFeaturizer,
    NeuralFingerprint,
    NeuralFingerprintRegressor,
)

X = np.array(["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O",
              "C1CCCCC1", "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1"], dtype=object)


def _nf(**params):
    return NeuralFingerprint(fp_length=16, radius=2, conv_width=8, random_state=0,
                             **params)


def _mpnn(**params):
    return MPNN(hidden_size=8, n_steps=2, edge_hidden_size=8, random_state=0, **params)


def _grover(**params):
    return GroverFeaturizer(hidden_size=8, n_heads=1, depth=2, pretrained=None,
                            random_state=0, **params)


@pytest.mark.parametrize("make", [_nf, _mpnn, _grover])
def test_cached_graphs_give_the_same_output(make):
    cache = GraphCache()
    plain = make().fit(X).transform(X)
    first = make(graph_cache=cache).fit(X)
    np.testing.assert_array_equal(first.transform(X), plain)
    # every molecule featurized once (in fit, or in transform for GroverFeaturizer, whose
    # fit pretrains on graphs with labels or featurizes nothing), then read from the cache
    assert len(cache) == len(X) and cache.misses == len(X)
    assert cache.hits >= (0 if make is _grover else len(X))
    hits = cache.hits
    again = make(graph_cache=cache).fit(X).transform(X)
    np.testing.assert_array_equal(again, plain)
    assert cache.misses == len(X) and len(cache) == len(X) and cache.hits > hits


def test_clones_share_and_settings_separate():
    cache = GraphCache()
    est = _mpnn(graph_cache=cache)
    assert clone(est).graph_cache is cache and copy.deepcopy(cache) is cache
    est.fit(X)
    clone(est).set_params(hidden_size=4).fit(X)
    assert len(cache) == len(X) and cache.hits == len(X)
    # other graphs (hydrogens as atoms, another family, standardization): other entries
    _mpnn(graph_cache=cache, explicit_hydrogens=True).fit(X)
    _nf(graph_cache=cache).fit(X)
    _nf(graph_cache=cache, standardize=True).fit(X)
    assert len(cache) == 4 * len(X)


def test_bounded_least_recently_used():
    cache = GraphCache(max_molecules=4)
    _nf(graph_cache=cache).fit(X)
    assert len(cache) == 4
    hits = cache.hits
    _nf(graph_cache=cache).fit(X[-4:])  # the last four are the ones kept
    assert cache.hits == hits + 4
    cache.clear()
    assert len(cache) == 0 and cache.hits == 0 and cache.misses == 0
    with pytest.raises(ValueError, match="max_molecules"):
        GraphCache(max_molecules=0)


def test_pickle_never_carries_graphs():
    cache = GraphCache()
    est = _nf(graph_cache=cache).fit(X)
    empty = len(pickle.dumps(_nf(graph_cache=GraphCache()).fit(X)))
    assert abs(len(pickle.dumps(est)) - empty) < 100  # same size up to the identity token
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.transform(X), est.transform(X))
    assert repr(loaded.graph_cache) == "GraphCache(max_molecules=100000)"


def test_invalid_and_mol_inputs_are_not_cached():
    from rdkit import Chem

    cache = GraphCache()
    est = _nf(graph_cache=cache, errors="nan").fit(X)
    out = est.transform(["CCO", "C1CC", Chem.MolFromSmiles("CCCl")])
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()
    assert len(cache) == len(X)
    with pytest.raises(ValueError, match="index 1"):
        _nf(graph_cache=cache).fit(["CCO", "C1CC"])


def test_grid_search_featurizes_each_molecule_once():
    y = np.array([len(s) for s in X], dtype=float)
    cache = GraphCache()
    pipe = make_pipeline(
        NeuralFingerprintRegressor(fp_length=8, radius=1, conv_width=4, hidden_size=4,
                                   max_epochs=1, batch_size=4, random_state=0,
                                   graph_cache=cache))
    search = GridSearchCV(pipe, {"neuralfingerprintregressor__alpha": [0.1, 1.0]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert cache.misses == len(X) and len(cache) == len(X)
    assert cache.hits > 0


def test_pipeline_memory_with_featurizers(tmp_path):
    from sklearn.pipeline import Pipeline, make_union

    from sklearn_papers.chem import CircularFingerprint

    y = np.array([len(s) for s in X], dtype=float)
    union = make_union(CircularFingerprint(n_bits=64), GroverFeaturizer())
    pipe = Pipeline([("features", union), ("ridge", Ridge(alpha=1.0))], memory=str(tmp_path))
    first = pipe.fit(X, y).predict(X)
    entries = sorted(p.name for p in tmp_path.rglob("output.pkl"))
    assert len(entries) == 1  # the featurizers' fit_transform, stored once
    pipe.set_params(ridge__alpha=2.0).fit(X, y)
    assert sorted(p.name for p in tmp_path.rglob("output.pkl")) == entries  # reused
    reference = Pipeline([("features", union), ("ridge", Ridge(alpha=1.0))]).fit(X, y)
    np.testing.assert_allclose(first, reference.predict(X), rtol=1e-6)


def test_fitted_pretrained_featurizer_stores_no_data():
    # the embedding alone (the descriptors' CDFs keep up to 1000 quantiles of the data)
    plain = dict(descriptors=False, fingerprint_bits=0)
    small = len(pickle.dumps(GroverFeaturizer(**plain).fit(X[:2])))
    large = len(pickle.dumps(GroverFeaturizer(**plain).fit(np.repeat(X, 20))))
    assert small == large  # only the checkpoint's weights, nothing of the molecules


def test_parallel_featurization_same_graphs_invalid_and_warning():
    from sklearn_papers.chem import MultipleFragmentsWarning
    from sklearn_papers.chem._molecule_input import _MIN_PARALLEL
    from sklearn_papers.datasets import load_delaney

    data = np.asarray(load_delaney(return_X_y=True)[0][:_MIN_PARALLEL + 40], dtype=object)
    data[7], data[_MIN_PARALLEL + 3] = "C1CC", "CCN.Cl"  # the second lands in a late chunk
    outs = []
    for n_jobs in (1, 2):
        est = MPNN(n_jobs=n_jobs, errors="nan", graph_cache=GraphCache())
        with pytest.warns(MultipleFragmentsWarning, match=f"index {_MIN_PARALLEL + 3}"):
            graphs, valid = est._graphs(data)
        outs.append((graphs, valid))
    (g1, v1), (g2, v2) = outs
    np.testing.assert_array_equal(v1, v2)
    assert not v1[7] and v1.sum() == len(data) - 1 and len(g1) == len(g2) == v1.sum()
    for a, b in zip(g1, g2):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
