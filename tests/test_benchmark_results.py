"""The benchmarks' recorded results and the docs pages made from them.

``benchmarks/_record.py`` writes one JSON per benchmark into ``benchmarks/results/``;
``docs/_ext/benchmarks.py`` turns them into the Benchmarks pages. Every committed file must
name a script that records it, hold a ratio equal to its two figures' quotient, and render
to valid reStructuredText.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

docutils_core = pytest.importorskip("docutils.core")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def record_module():
    return _load(ROOT / "benchmarks" / "_record.py", "_record")


@pytest.fixture(scope="module")
def pages_module():
    return _load(ROOT / "docs" / "_ext" / "benchmarks.py", "benchmarks_pages")


def _check_rst(text):
    docutils_core.publish_doctree(text, settings_overrides={"halt_level": 2,
                                                           "report_level": 2})


ROW = {"what": "batch 8", "ours": 2.0, "peer": 4.0, "unit": "ms", "better": "lower"}


def test_record_writes_what_the_pages_show(tmp_path, record_module, pages_module,
                                           monkeypatch):
    import rdkit

    monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / "bench_fake.py"), "--n", "3"])
    path = record_module.record("fake", title="Fake loss, forward", peer="peerlib 1.0",
                                rows=[ROW], notes="Values agree *exactly*.", results=tmp_path)
    data = json.loads(path.read_text())
    assert data["command"] == "python benchmarks/bench_fake.py --n 3"
    assert data["rows"][0]["ratio"] == 0.5
    assert data["machine"]["cpu"] and data["machine"]["cores"] >= 1
    assert {"python", "numpy", "torch"} <= set(data["machine"]["versions"])
    # a library the benchmark imported is named with its version
    assert data["machine"]["versions"]["rdkit"] == rdkit.__version__
    out = tmp_path / "pages"
    assert pages_module.write_pages(out, results=tmp_path) == ["fake"]
    text = (out / "fake.rst").read_text()
    _check_rst(text)
    assert "peerlib 1.0" in text and "0.50" in text and "bench_fake.py --n 3" in text
    assert data["machine"]["cpu"] in text
    assert ":doc:`fake`" in (out / "index.rst").read_text()
    # a score over seeds keeps its spread, shown as mean ± std
    record_module.record("fake", title="t", peer="p", argv=[], results=tmp_path,
                         rows=[{**ROW, "ours_std": 0.5, "peer_std": 0.25}])
    data = json.loads(path.read_text())
    assert (data["rows"][0]["ours_std"], data["rows"][0]["peer_std"]) == (0.5, 0.25)
    pages_module.write_pages(out, results=tmp_path)
    assert "2.000 ± 0.500" in (out / "fake.rst").read_text()
    # a page whose result file is gone is removed
    path.unlink()
    assert pages_module.write_pages(out, results=tmp_path) == []
    assert not (out / "fake.rst").exists()


@pytest.mark.parametrize("row, match", [
    ({**ROW, "ratio": 1.0}, "keys"),
    ({**ROW, "better": "faster"}, "better"),
    ({**ROW, "peer": 0.0}, "positive"),
    ({**ROW, "spread": 1.0}, "keys"),
    ({**ROW, "ours_std": -0.1}, "non-negative"),
])
def test_record_refuses_a_malformed_row(tmp_path, record_module, row, match):
    with pytest.raises(ValueError, match=match):
        record_module.record("fake", title="t", peer="p", rows=[row], argv=[],
                             results=tmp_path)


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.stem)
def test_committed_result_is_consistent_and_renders(path, pages_module):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["name"] == path.stem
    words = data["command"].split()
    assert words[0] == "python" and (ROOT / words[1]).is_file(), data["command"]
    script = (ROOT / words[1]).read_text(encoding="utf-8")
    assert f'record("{data["name"]}"' in script, f"{words[1]} does not record {path.name}"
    assert data["rows"] and data["machine"]["cpu"]
    for row in data["rows"]:
        assert row["better"] in ("higher", "lower")
        assert row["ratio"] == pytest.approx(row["ours"] / row["peer"], rel=1e-12)
    _check_rst(pages_module.page(data))
