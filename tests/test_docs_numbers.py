"""Numbers in the docs come from data: every ``:result:`` role and ``published-table``
directive of every page names exactly one cell (or table) of the records of a page of
docs/results/ (the JSON beside it, from which the page is rendered), and every ``:bench:``
role and ``benchmark-table`` directive names one figure (or rows) of a recorded benchmark
in benchmarks/results/.
"""

import importlib.util
import json
from pathlib import Path

import pytest

from sklearn_papers.reproduce._publish import published_tables, published_value, render_page
from sklearn_papers.reproduce._result import Result

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _extension(name="published"):
    spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages():
    skip = {"_build", "generated", "auto_examples", "results"}
    return sorted(p for p in DOCS.rglob("*.rst") if not skip & set(p.relative_to(DOCS).parts))


def _page():
    """A published page's JSON: two tables, the second with an escaped bar in a header."""
    result = Result()
    text = "\n".join([
        "### Objective, load_digits", "",
        result.table([
            {"loss": "frobenius", "implementation": "`sklearn_papers.NMF`",
             "final objective": 250430.0},
            {"loss": "frobenius", "implementation": "sklearn NMF(solver='mu')",
             "final objective": 252475.0},
            {"loss": "kullback-leibler", "implementation": "`sklearn_papers.NMF`",
             "final objective": 58662.7}], floatfmt=".6g"), "",
        "### Follow-up", "",
        result.table([{"a|b": "x", "value_": "0.5 ± 0.1"}])])
    return {"name": "nmf", "title": "Title", "paper": "P", "result": result.done(text).to_dict()}


def test_published_tables_read_the_records_as_a_reader_sees_them():
    tables = published_tables(json.loads(json.dumps(_page())))
    assert [t["section"] for t in tables] == ["Objective, load_digits", "Follow-up"]
    assert tables[0]["columns"] == ["loss", "implementation", "final objective"]
    assert tables[0]["rows"][2] == ["kullback-leibler", "sklearn_papers.NMF", "58662.7"]
    assert tables[1]["columns"] == ["a|b", "value_"]
    assert published_value(tables, ["frobenius", "sklearn_papers.NMF"],
                           "final objective") == "250430"
    assert published_value(tables, "x", "value_", section="Follow") == "0.5 ± 0.1"


@pytest.mark.parametrize("row, column, section", [
    ("frobenius", "final objective", None),       # two rows hold it
    ("hinge", "final objective", None),           # none does
    ("x", "final objective", None),               # not a column of x's table
    ("x", "value_", "Objective"),                 # not under that heading
])
def test_published_value_refuses_an_ambiguous_or_missing_cell(row, column, section):
    tables = published_tables(_page())
    with pytest.raises(KeyError):
        published_value(tables, row, column, section=section)


def test_the_role_and_the_directive_resolve_against_a_results_folder(tmp_path):
    published = _extension()
    (tmp_path / "nmf.json").write_text(json.dumps(_page()))
    assert published.resolve("nmf | kullback-leibler | final objective", tmp_path) == "58662.7"
    assert published.resolve("nmf#Follow | x | value_", tmp_path) == "0.5 ± 0.1"
    with pytest.raises(KeyError, match="PAGE"):
        published.resolve("nmf | final objective", tmp_path)
    with pytest.raises(KeyError, match="no published results page"):
        published.resolve("gone | x | value_", tmp_path)
    columns, rows = published.table("nmf", section="Objective", columns=["final objective"],
                                    rows=["kullback-leibler"], results=tmp_path)
    assert columns == ["final objective"] and rows == [["58662.7"]]
    with pytest.raises(KeyError, match="2 tables"):
        published.table("nmf", results=tmp_path)
    text = ("A :result:`nmf | x | value_` and\n\n.. published-table:: nmf\n"
            "   :section: Objective\n   :columns: loss | final objective\n\nafter\n")
    assert published.find_uses(text) == (
        ["nmf | x | value_"],
        [("nmf", {"section": "Objective", "columns": "loss | final objective"})])


def test_every_published_page_is_rendered_from_the_json_beside_it():
    results = DOCS / "results"
    pages = sorted(p for p in results.glob("*.rst") if p.stem != "index")
    assert pages
    for page in pages:
        record = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
        assert render_page(record) == page.read_text(encoding="utf-8"), page.name


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_published_number_of_a_page_resolves(page):
    published = _extension()
    roles, tables = published.find_uses(page.read_text(encoding="utf-8"))
    for text in roles:
        value = published.resolve(text)
        assert value.strip(), text
    for name, options in tables:
        split = published._split
        columns, rows = published.table(name, section=options.get("section"),
                                        columns=split(options.get("columns")),
                                        rows=split(options.get("rows")))
        assert rows and all(len(r) == len(columns) for r in rows), name


BENCH = {"name": "fake", "rows": [
    {"what": "ESOL, descriptors", "ours": 0.5, "peer": 2.0, "ratio": 0.25, "unit": "RMSE",
     "better": "lower", "ours_std": 0.25, "peer_std": 0.125},
    {"what": "ESOL, both", "ours": 1.0, "peer": 2.0, "ratio": 0.5, "unit": "RMSE",
     "better": "lower"},
    {"what": "FreeSolv, both", "ours": 4.0, "peer": 2.0, "ratio": 2.0, "unit": "RMSE",
     "better": "lower"}]}


def test_the_bench_role_and_table_read_one_recorded_figure(tmp_path):
    bench = _extension("benchmarks")
    (tmp_path / "fake.json").write_text(json.dumps(BENCH))
    assert bench.resolve("fake | ESOL; both | ours", tmp_path) == "1.000"
    assert bench.resolve("fake | FreeSolv | ratio", tmp_path) == "2.00"
    assert bench.resolve("fake | FreeSolv | inverse ratio", tmp_path) == "0.50"
    assert bench.resolve("fake | descriptors | ours ± std", tmp_path) == "0.500 ± 0.250"
    for text, match in [("fake | both | ours", "2 rows"),          # two rows hold it
                        ("fake | SIDER | ours", "0 rows"),         # none does
                        ("fake | ESOL; both | mean", "FIELD"),     # no such field
                        ("fake | ESOL; both | ours ± std", "ours_std"),
                        ("fake | ours", "NAME"),
                        ("gone | ESOL | ours", "no recorded benchmark")]:
        with pytest.raises(KeyError, match=match):
            bench.resolve(text, tmp_path)
    lines = bench.table("fake", rows=["FreeSolv", "ESOL; descriptors"], results=tmp_path)
    assert lines[0].endswith("(:ref:`benchmark-fake`)")
    body = "\n".join(lines)
    assert body.index("FreeSolv, both") < body.index("ESOL, descriptors")
    assert "ESOL, both" not in body and "0.500 ± 0.250" in body
    text = ("A :bench:`fake | ESOL; both | ours` and\n\n.. benchmark-table:: fake\n"
            "   :rows: FreeSolv | ESOL; both\n\nafter\n")
    assert bench.find_uses(text) == (["fake | ESOL; both | ours"],
                                     [("fake", {"rows": "FreeSolv | ESOL; both"})])


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_benchmark_number_of_a_page_resolves(page):
    bench = _extension("benchmarks")
    roles, tables = bench.find_uses(page.read_text(encoding="utf-8"))
    for text in roles:
        assert bench.resolve(text).strip(), text
    for name, options in tables:
        lines = bench.table(name, rows=bench.split_rows(options.get("rows")))
        assert any(line.startswith("   * - ") for line in lines[10:]), name
