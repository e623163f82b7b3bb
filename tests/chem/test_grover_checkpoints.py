"""The shipped GROVER checkpoints: loadable by name, within the package's size budget, and
recording how they were made."""

import json
from pathlib import Path

import numpy as np
import pytest

from sklearn_papers.chem import GroverFeaturizer
from sklearn_papers.chem._grover_checkpoint import PRETRAINED, load_grover_checkpoint

_DIR = Path(__file__).resolve().parents[2] / "sklearn_papers" / "chem" / "_pretrained"


@pytest.mark.parametrize("name", PRETRAINED)
def test_shipped_checkpoint_is_small_and_documents_its_training(name):
    folder = _DIR / name
    assert (folder / "weights.pt").stat().st_size <= 10 * 1024 ** 2
    config = json.loads((folder / "config.json").read_text())
    training = config["training"]
    assert "python -m sklearn_papers.chem._grover_pretrain" in training["command"]
    assert training["n_molecules"] > 0 and "load_moses_smiles" in training["dataset"]
    load_grover_checkpoint(name)  # weights agree with the config (shapes, vocabularies)


def test_moses_176k_saw_every_bundled_moses_molecule_and_lists_its_legs():
    config = json.loads((_DIR / "moses-176k" / "config.json").read_text())
    training = config["training"]
    assert training["n_molecules"] == 176074
    assert training["epochs_done"] >= 1
    legs = training["legs"]
    assert len(legs) >= 2
    assert legs[0]["from_step"] == 0
    # each leg starts where the one before it stopped
    for before, after in zip(legs, legs[1:]):
        assert (after["from_epoch"], after["from_step"]) == (before["to_epoch"],
                                                             before["to_step"])


def test_moses_176k_featurizes_by_name_without_training():
    X = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1"]
    small = GroverFeaturizer(descriptors=False, fingerprint_bits=0).fit(X)
    big = GroverFeaturizer(pretrained="moses-176k", descriptors=False, fingerprint_bits=0).fit(X)
    Z = big.transform(X)
    assert Z.shape == (3, big.embedding_dim_)
    assert big.embedding_dim_ > small.embedding_dim_
    assert np.isfinite(Z).all()
    # fit loads and returns: transform does not depend on the molecules given to fit
    np.testing.assert_array_equal(
        GroverFeaturizer(pretrained="moses-176k", descriptors=False,
                         fingerprint_bits=0).fit(["C"]).transform(X),
        Z)
