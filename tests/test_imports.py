"""Import hygiene: the top level is lazy, and metrics never pulls in torch or RDKit."""

import subprocess
import sys

import pytest


def _imported_after(statement):
    code = (
        f"import sys; {statement}; "
        "print(','.join(m for m in ('torch', 'rdkit', 'skorch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return set(filter(None, out.stdout.strip().split(",")))


def test_top_level_import_is_lazy():
    assert _imported_after("import sklearn_papers") == set()


def test_metrics_does_not_import_torch_or_rdkit():
    assert _imported_after("import sklearn_papers.metrics") == set()


def test_datasets_do_not_import_torch_or_rdkit():
    assert _imported_after("import sklearn_papers.datasets") == set()


@pytest.mark.parametrize("name", ["chem", "continual", "datasets", "decomposition",
                                  "contrastive", "estimation", "generative", "metrics", "nn",
                                  "reproduce", "rl", "utils", "vision"])
def test_subpackages_load_on_attribute_access(name):
    import sklearn_papers

    assert getattr(sklearn_papers, name).__name__ == f"sklearn_papers.{name}"


def test_unknown_attribute_raises():
    import sklearn_papers

    with pytest.raises(AttributeError, match="no attribute"):
        sklearn_papers.not_a_module  # noqa: B018
