"""grover_context_coverage: shares of context labels outside a checkpoint's vocabularies."""

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem

from sklearn_papers.chem import GroverFeaturizer, grover_context_coverage
from sklearn_papers.chem._grover_coverage import _context_labels
from sklearn_papers.chem.featurizers._grover_features import grover_graphs

SMILES = ["CCO", "c1ccccc1C(=O)O", "FC(F)(F)[Si](C)(C)C", "CC(C)Cc1ccc(cc1)C(C)C(=O)O"]


def test_labels_are_the_featurizers_labels_of_the_standardized_molecules():
    atoms, bonds, sizes = _context_labels(SMILES)
    graphs = grover_graphs([Chem.MolFromSmiles(s) for s in SMILES], smiles=SMILES)
    assert atoms == [a for g in graphs for a in g[1]]
    assert bonds == [b for g in graphs for b in g[2]]
    np.testing.assert_array_equal(sizes, [3, 9, 8, 15])


@pytest.mark.parametrize("pretrained", ["moses-small", "moses-176k"])
def test_coverage_counts_the_labels_the_checkpoints_vocabulary_maps_to_other(pretrained):
    featurizer = GroverFeaturizer(pretrained=pretrained, max_epochs=0,
                                  descriptors=False).fit(SMILES[:1])
    atoms, bonds, _ = _context_labels(SMILES)
    got = grover_context_coverage(SMILES, pretrained)
    for kind, labels, vocab in (("atom", atoms, featurizer.atom_vocab_),
                                ("bond", bonds, featurizer.bond_vocab_)):
        expected = np.mean([vocab.stoi.get(w, 1) == 1 for w in labels])
        assert got[f"{kind}_other"] == pytest.approx(expected)
    assert (got["n_molecules"], got["n_atoms"], got["n_bonds"]) == (4, 35, len(bonds))
    assert 0 < got["atom_other"] < 1  # silicon is not in MOSES, the rest mostly is


def test_coverage_of_pretraining_like_molecules_is_full():
    got = grover_context_coverage(["CCO", "CCN", "c1ccccc1"])
    assert got["atom_other"] == 0.0 and got["bond_other"] == 0.0


def test_molecules_column_and_mol_objects_give_the_same_coverage():
    expected = grover_context_coverage(SMILES)
    assert grover_context_coverage(pd.DataFrame({"smiles": SMILES})) == expected
    assert grover_context_coverage(np.array(SMILES, dtype=object)[:, None]) == expected
    assert grover_context_coverage([Chem.MolFromSmiles(s) for s in SMILES]) == expected


def test_invalid_smiles_raise_or_are_skipped():
    with pytest.raises(ValueError, match="not_a_smiles"):
        grover_context_coverage(["CCO", "not_a_smiles"])
    got = grover_context_coverage(["CCO", "not_a_smiles"], errors="skip")
    assert got == grover_context_coverage(["CCO"])
    assert got["n_molecules"] == 1


def test_a_single_atom_has_no_bond_share():
    got = grover_context_coverage(["C"])
    assert got["n_bonds"] == 0 and np.isnan(got["bond_other"])


@pytest.mark.parametrize("kwargs, error, match", [
    ({"pretrained": "no-such-checkpoint"}, ValueError, "neither a shipped checkpoint"),
    ({"errors": "ignore"}, ValueError, "errors"),
    ({"pretrained": 3}, (TypeError, ValueError), "pretrained"),
])
def test_bad_arguments_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        grover_context_coverage(["CCO"], **kwargs)
