"""The domain gap of sets of molecules to a GROVER checkpoint's pretraining chemistry."""

import numpy as np

from sklearn_papers.chem import grover_context_coverage
from sklearn_papers.chem._domain_gap import _domain_gap, _ecfp4


def test_ecfp4_leaves_out_what_rdkit_does_not_parse():
    bits = _ecfp4(["CCO", "not a molecule", "c1ccccc1"])
    assert bits.shape == (2, 2048)
    assert set(np.unique(bits)) <= {0, 1}


def test_domain_gap_counts_atoms_coverage_and_nearest_neighbours():
    sets = {"alcohols": ["CCO", "CCCO", "not a molecule"], "aromatics": ["c1ccccc1O"]}
    gap = _domain_gap(sets, ["CCO", "CCCO"], ("moses-small", "moses-176k"))
    alcohols = gap["alcohols"]
    assert alcohols["n_molecules"] == 2 and alcohols["heavy_atoms"] == 3.5
    # each alcohol is in the reference: its nearest neighbour is itself
    np.testing.assert_array_equal(alcohols["nn_tanimoto"], [1.0, 1.0])
    assert 0 <= gap["aromatics"]["nn_tanimoto"][0] < 1
    for c in ("moses-small", "moses-176k"):
        cover = grover_context_coverage(["c1ccccc1O"], c)
        assert gap["aromatics"][f"atom_other/{c}"] == cover["atom_other"]
        assert gap["aromatics"][f"bond_other/{c}"] == cover["bond_other"]
