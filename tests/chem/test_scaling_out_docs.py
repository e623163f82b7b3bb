"""Runs every ``.. code-block:: python`` of docs/user_guide/scaling_out.rst, in order.

The blocks share one namespace, as a reader running them one after the other would, in a
temporary folder. They start a Dask ``LocalCluster`` of two worker processes and close it.
"""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "scaling_out.rst"


def _blocks(text):
    """The Python code blocks of a reStructuredText page, dedented, in order."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?:    .*)?\n)+)", text,
                             flags=re.M):
        lines = match.group(1).rstrip("\n").split("\n")
        blocks.append("\n".join(line[4:] for line in lines) + "\n")
    return blocks


def test_every_snippet_runs_on_a_local_cluster(tmp_path, monkeypatch, capsys):
    pytest.importorskip("distributed")
    text = PAGE.read_text(encoding="utf-8")
    blocks = _blocks(text)
    assert len(blocks) >= 6, len(blocks)
    assert any("LocalCluster" in b for b in blocks)
    assert any("map_partitions" in b for b in blocks)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"{PAGE.name}[block {i}]", "exec"), namespace)
    finally:
        for name in ("client", "cluster"):
            if name in namespace:
                namespace[name].close()
    out = capsys.readouterr().out.splitlines()
    # the sparse matrix is much smaller than the dense one
    sizes = [line for line in out if line.endswith("MB dense")][0]
    sparse_mb, dense_mb = (float(v) for v in re.findall(r"([\d.]+) MB", sizes))
    assert sparse_mb < dense_mb / 5
    # the search on the cluster scored as the local one, and map_partitions gave the
    # very bits of a local transform
    assert any(line.endswith("True") and "ridge__alpha" in line for line in out), out
    assert any(line == "(3000, 256) True" for line in out), out
    # GROVER embeddings from the workers: equal up to float32 round-off
    grover = [line for line in out if "largest difference" in line][0]
    assert float(grover.rsplit(" ", 1)[1]) < 1e-4
    assert namespace["on_workers"].shape == (200, 128)
