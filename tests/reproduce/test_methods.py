"""The registry of methods: one key per paper names its experiments, paper and results
pages, gallery examples and benchmarks, and README's table and the results index are its."""

import re
from pathlib import Path

import pytest

from sklearn_papers.reproduce._methods import (
    METHODS,
    SHARED_BENCHMARKS,
    method_of,
    methods_table,
    results_index,
)
from sklearn_papers.reproduce._registry import list_experiments

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"


def _once(names, what):
    seen = [n for m in METHODS for n in names(m)]
    doubled = sorted({n for n in seen if seen.count(n) > 1})
    assert not doubled, f"{what} named by two methods: {doubled}"
    return set(seen)


def _keyed(name, key, prefix="", suffix=""):
    """``name`` is ``<prefix><key><suffix>`` or ``<prefix><key>_<topic><suffix>``."""
    return re.fullmatch(rf"{re.escape(prefix + key)}(_[a-z0-9_]+)?{re.escape(suffix)}",
                        name) is not None


def test_keyed_follows_the_scheme():
    assert _keyed("plot_gilmer.py", "gilmer", "plot_", ".py")
    assert _keyed("bench_lpg_stock_lakes.py", "lpg", "bench_", ".py")
    assert not _keyed("bench_mpnn.py", "gilmer", "bench_", ".py")
    assert not _keyed("plot_gilmerx.py", "gilmer", "plot_", ".py")


def test_method_keys_are_unique_and_start_every_name_of_their_method():
    keys = [m.key for m in METHODS]
    assert len(set(keys)) == len(keys)
    for m in METHODS:
        assert all(_keyed(p, m.key) for p in m.page_stems()), m.key
        assert all(_keyed(n, m.key) for n in m.experiment_names()), m.key
        assert all(_keyed(e, m.key, "plot_", ".py") for e in m.examples), m.key
        assert all(_keyed(b, m.key, "bench_", ".py") for b in m.benchmarks), m.key


def test_readme_methods_table_is_the_registrys():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- methods-table -->\n(.*?)\n<!-- /methods-table -->", readme,
                      flags=re.S)
    assert table, "README has no <!-- methods-table --> block"
    assert table.group(1) == methods_table(), (
        "README's methods table differs from reproduce/_methods.py: paste "
        "sklearn_papers.reproduce._methods.methods_table() between the markers")


def test_every_experiment_belongs_to_one_method():
    named = _once(lambda m: m.experiment_names(), "experiments")
    assert named == set(list_experiments())
    assert method_of("gilmer").key == "gilmer"
    assert method_of("group_norm_followup").key == "group_norm"
    with pytest.raises(KeyError, match="no method"):
        method_of("no_such_experiment")


def test_every_paper_page_belongs_to_one_method_and_links_its_results_and_examples():
    named = _once(lambda m: m.page_stems(), "paper pages")
    pages = {p.stem for p in (ROOT / "docs" / "papers").glob("*.rst")} - {"index"}
    assert named == pages
    for m in METHODS:
        texts = {p: (ROOT / "docs" / "papers" / f"{p}.rst").read_text(encoding="utf-8")
                 for p in m.page_stems()}
        for stem, text in texts.items():
            assert text.startswith(f".. _{stem}:\n"), f"docs/papers/{stem}.rst's label"
        text = "\n".join(texts.values())
        for name in m.experiment_names():
            if not (RESULTS / f"{name}.rst").exists():
                continue  # not published
            assert (f"results-{name}>" in text or f"`results-{name}`" in text
                    or f"results/{name}" in text), (m.key, name)
        for example in m.examples:
            assert f"sphx_glr_auto_examples_{example}" in text, (m.key, example)


def test_every_example_and_benchmark_belongs_to_one_method_or_is_shared():
    examples = _once(lambda m: m.examples, "examples")
    assert examples == {p.name for p in (ROOT / "examples").glob("plot_*.py")}
    benchmarks = _once(lambda m: m.benchmarks, "benchmarks")
    assert not benchmarks & set(SHARED_BENCHMARKS)
    assert benchmarks | set(SHARED_BENCHMARKS) == {
        p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    for name in SHARED_BENCHMARKS:
        assert not any(_keyed(name, m.key, "bench_", ".py") for m in METHODS), name


def test_every_published_page_belongs_to_a_method():
    published = {p.stem for p in RESULTS.glob("*.json")}
    assert published <= {n for m in METHODS for n in m.experiment_names()}
    assert published == {p.stem for p in RESULTS.glob("*.rst")} - {"index"}


def test_results_index_is_generated_from_the_pages():
    assert (RESULTS / "index.rst").read_text(encoding="utf-8") == results_index(RESULTS), (
        "docs/results/index.rst differs from the pages' records: write "
        "sklearn_papers.reproduce._methods.results_index('docs/results') into it")


def test_results_index_counts_every_verdict(tmp_path):
    verdict = {"claim": "ours beats theirs", "rule": "paired interval", "outcome": "holds"}
    (tmp_path / "gilmer.json").write_text(
        '{"result": {"verdicts": [%s, %s]}}' % (
            str(verdict).replace("'", '"'),
            str(dict(verdict, outcome="inconclusive")).replace("'", '"')),
        encoding="utf-8")
    text = results_index(tmp_path)
    row = text[text.index(":ref:`gilmer <results-gilmer>`"):].split("\n")[:4]
    assert row[1:] == ["     - 1", "     - 0", "     - 1"]
    assert "Message passing neural networks </papers/gilmer>" in text
    assert text.count("ours beats theirs") == 2
