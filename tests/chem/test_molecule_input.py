"""The molecule input path: each step once per molecule, in the order of one module whose
step modules import nothing back."""

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest

import sklearn_papers.chem as chem
from sklearn_papers.chem import _molecule_input

X = ["CCO", "CCN.Cl", "c1ccccc1", "CC(=O)O", "C1CC"]
SMALL = {
    "NeuralFingerprint": dict(fp_length=8, conv_width=4),
    "MPNN": dict(hidden_size=4, n_steps=1, set2set_steps=1, edge_hidden_size=4),
}


@pytest.fixture
def parsed(monkeypatch):
    """The number of entries each call of the parse step received."""
    calls = []
    original = _molecule_input.parse_molecules

    def counted(values):
        calls.append(len(values))
        return original(values)

    monkeypatch.setattr(_molecule_input, "parse_molecules", counted)
    return calls


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("with_y", [False, True])
def test_fit_transform_parses_each_molecule_once(name, with_y, parsed):
    def make():
        return getattr(chem, name)(max_epochs=1, batch_size=2, errors="nan", random_state=0,
                                   **SMALL[name])

    y = np.arange(len(X), dtype=float) if with_y else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = make().fit_transform(X, y)
    assert parsed == [len(X)]
    assert [w.category for w in caught].count(chem.MultipleFragmentsWarning) == 1
    parsed.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, y)
        np.testing.assert_array_equal(out, model.transform(X))
        assert parsed == [len(X), len(X)]  # a new call parses its X
        np.testing.assert_array_equal(out, model.transform(list(X)))
    assert np.isnan(out[4]).all() and np.isfinite(out[:4]).all()


@pytest.mark.parametrize("name", ["RDKitDescriptors", "CircularFingerprint",
                                  "MoleculeStandardizer"])
def test_fit_of_a_featurizer_parses_each_molecule_once(name, parsed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", chem.MultipleFragmentsWarning)
        getattr(chem, name)(errors="nan").fit(X)
    assert parsed == [len(X)]


def test_step_modules_import_nothing_of_the_input_path():
    root = Path(chem.__file__).parent
    steps = {"_parse", "_standardization", "_report"}
    for step in steps:
        tree = ast.parse((root / f"{step}.py").read_text())
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}
        family = {m.rsplit(".", 1)[1] for m in imported
                  if m.startswith("sklearn_papers.chem.")}
        assert family <= steps - {step}, (step, family)
