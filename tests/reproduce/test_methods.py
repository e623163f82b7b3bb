"""The registry of methods: README's table, the experiments, the paper and results pages,
the gallery examples and the benchmarks agree with it."""

import re
from pathlib import Path

import pytest

from sklearn_papers.reproduce._methods import METHODS, method_of, methods_table
from sklearn_papers.reproduce._registry import list_experiments

ROOT = Path(__file__).resolve().parents[2]


def _once(names, what):
    seen = [n for m in METHODS for n in names(m)]
    doubled = sorted({n for n in seen if seen.count(n) > 1})
    assert not doubled, f"{what} named by two methods: {doubled}"
    return set(seen)


def test_method_keys_are_unique_and_are_their_first_page():
    keys = [m.key for m in METHODS]
    assert len(set(keys)) == len(keys)
    assert all(m.pages[0] == m.key for m in METHODS)


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
    assert method_of("gilmer").key == "gilmer_mpnn"
    with pytest.raises(KeyError, match="no method"):
        method_of("no_such_experiment")


def test_every_paper_page_belongs_to_one_method_and_links_its_results():
    named = _once(lambda m: m.pages, "paper pages")
    pages = {p.stem for p in (ROOT / "docs" / "papers").glob("*.rst")} - {"index"}
    assert named == pages
    for m in METHODS:
        text = "\n".join((ROOT / "docs" / "papers" / f"{p}.rst").read_text(encoding="utf-8")
                         for p in m.pages)
        for name in m.experiment_names():
            if not (ROOT / "docs" / "results" / f"{name}.rst").exists():
                continue  # not published
            assert (f"results-{name}>" in text or f"`results-{name}`" in text
                    or f"results/{name}" in text), (m.key, name)


def test_every_example_and_benchmark_belongs_to_one_method():
    examples = _once(lambda m: m.examples, "examples")
    assert examples == {p.name for p in (ROOT / "examples").glob("plot_*.py")}
    benchmarks = _once(lambda m: m.benchmarks, "benchmarks")
    assert benchmarks <= {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert all(m.examples for m in METHODS)
