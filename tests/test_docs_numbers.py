"""Numbers in the docs come from the published results: every ``:result:`` role and
``published-table`` directive of every page names exactly one cell (or table) of a page of
docs/results/, and the published tables read back as ``sklearn-papers publish`` wrote them.
"""

import importlib.util
from pathlib import Path

import pytest

from sklearn_papers.reproduce._publish import (markdown_to_rst, published_tables,
                                               published_value)

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _extension():
    spec = importlib.util.spec_from_file_location("published", DOCS / "_ext" / "published.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages():
    skip = {"_build", "generated", "auto_examples", "results"}
    return sorted(p for p in DOCS.rglob("*.rst") if not skip & set(p.relative_to(DOCS).parts))


REPORT = """### Objective, load_digits

| loss | implementation | final objective |
|---|---|---|
| frobenius | `sklearn_papers.NMF` | 250430 |
| frobenius | sklearn NMF(solver='mu') | 252475 |
| kullback-leibler | `sklearn_papers.NMF` | 58662.7 |

### Follow-up

| a\\|b | value_ |
|---|---|
| x | 0.5 ± 0.1 |
"""


def test_published_tables_read_back_what_publish_writes():
    rst, _ = markdown_to_rst(REPORT)
    tables = published_tables("Title\n=====\n\n" + rst)
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
    tables = published_tables("Title\n=====\n\n" + markdown_to_rst(REPORT)[0])
    with pytest.raises(KeyError):
        published_value(tables, row, column, section=section)


def test_the_role_and_the_directive_resolve_against_a_results_folder(tmp_path):
    published = _extension()
    (tmp_path / "nmf.rst").write_text("Title\n=====\n\n" + markdown_to_rst(REPORT)[0])
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
