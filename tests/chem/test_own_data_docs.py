"""Runs every ``.. code-block:: python`` of docs/user_guide/molecules_own_data.rst, in order.

The blocks share one namespace, as a reader running them one after the other would; a block
whose first line says ``fresh process`` runs in a new Python process instead. They run in a
temporary folder holding ``my_molecules.csv``, written here from the bundled ESOL data.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

PAGE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "molecules_own_data.rst"


def _blocks(text):
    """The Python code blocks of a reStructuredText page, dedented, in order."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?:    .*)?\n)+)", text,
                             flags=re.M):
        lines = match.group(1).rstrip("\n").split("\n")
        blocks.append("\n".join(line[4:] for line in lines) + "\n")
    return blocks


def _write_csv(path):
    import pandas as pd

    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    rows = list(zip(X[:120], np.round(y[:120], 3)))
    # two salts and three broken entries, spread through the table
    rows.insert(10, ("CCCC(=O)[O-].[Na+]", 0.5))
    rows.insert(50, ("CCCCN.Cl", 0.9))
    rows.insert(20, ("not_a_smiles", -1.0))
    rows.insert(80, ("C1CC", -2.0))
    rows.insert(100, ("", -3.0))
    pd.DataFrame(rows, columns=["smiles", "logS"]).to_csv(path, index=False)


def test_every_snippet_runs(tmp_path, monkeypatch):
    blocks = _blocks(PAGE.read_text())
    assert len(blocks) >= 8, len(blocks)
    assert "CACHE_TABLE" not in PAGE.read_text() and "NJOBS_TABLE" not in PAGE.read_text()
    _write_csv(tmp_path / "my_molecules.csv")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    fresh = 0
    for i, block in enumerate(blocks):
        if "fresh process" in block.splitlines()[0]:
            fresh += 1
            result = subprocess.run([sys.executable, "-c", block], capture_output=True,
                                    text=True, cwd=tmp_path, env=_env())
            assert result.returncode == 0, f"block {i}:\n{block}\n{result.stderr}"
            continue
        exec(compile(block, f"{PAGE.name}[block {i}]", "exec"), namespace)
    assert fresh == 1
    # what the page says happened
    assert namespace["model"].n_left_out_ == 3
    pred = namespace["pred"]
    assert np.isnan(pred[[1, 3]]).all() and np.isfinite(pred[[0, 2]]).all()


def _env():
    import os

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env
