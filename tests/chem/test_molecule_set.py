"""A set of molecules: ECFP bits computed once at 2048 bits and folded to a smaller power
of two, graphs cached per process."""

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

from sklearn_papers.chem._molecule_set import MAX_BITS, DatasetData
from sklearn_papers.datasets import load_delaney


@pytest.mark.parametrize("radius", [1, 4])
@pytest.mark.parametrize("n_bits", [16, 512])
def test_folding_2048_bits_equals_rdkit_at_the_smaller_size(radius, n_bits):
    X = load_delaney(return_X_y=True)[0][:150]
    data = DatasetData("solubility", X, np.zeros(len(X)))
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    ref = np.array([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in X])
    np.testing.assert_array_equal(data.fingerprints(radius, n_bits), ref)
    assert data._cache[radius].shape == (len(X), MAX_BITS)


def test_slim_copy_keeps_the_bits_of_one_radius():
    data = DatasetData("toy", np.array(["CCO", "CCN", "c1ccccc1"], dtype=object),
                       np.zeros(3))
    data.bits(1), data.bits(2)
    slim = data.slim(2)
    assert list(slim._cache) == [2] and slim._cache[2] is data._cache[2]
    assert slim._mols is None and slim.name == "toy"
    np.testing.assert_array_equal(slim.fingerprints(2, 64), data.fingerprints(2, 64))
    assert not data.slim()._cache


def test_invalid_smiles_are_named():
    data = DatasetData("toy", np.array(["CCO", "not a molecule"], dtype=object), np.zeros(2))
    with pytest.raises(ValueError, match="not a molecule"):
        data.fingerprints(2, 64)


def test_graph_cache_is_shared_per_set_and_cleared_for_the_next():
    smiles = np.array(["CCO", "CCN"], dtype=object)
    first = DatasetData("a", smiles, np.zeros(2))
    cache = first.graph_cache()
    assert DatasetData("a", smiles.copy(), np.ones(2)).graph_cache() is cache
    assert first.slim().graph_cache() is cache
    cleared = []
    cache.clear = lambda: cleared.append(True)
    other = DatasetData("a", np.array(["CCC"], dtype=object), np.zeros(1)).graph_cache()
    assert other is not cache and cleared == [True]
    assert DatasetData("b", smiles, np.zeros(2)).graph_cache() is not other
