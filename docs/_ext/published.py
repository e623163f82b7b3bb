"""Numbers in the docs read from the published results' records, never typed.

Two pieces of markup, resolved when Sphinx reads a page:

``:result:`PAGE | ROW KEY; ROW KEY | COLUMN```
    The text of one cell of a table of ``docs/results/PAGE.json`` (the records beside the
    page ``sklearn-papers publish`` wrote): the row that holds every ``ROW KEY`` as a cell,
    in the column headed ``COLUMN``. ``PAGE#TEXT`` keeps to tables under a heading containing
    ``TEXT``. No match, or more than one, is an error (a warning, fatal under ``-W``).

``.. published-table:: PAGE``
    A table copied from that page, with the options ``:section:`` (text of its heading),
    ``:columns:`` (header cells to keep, separated by ``|``; all by default) and ``:rows:``
    (first cells of the rows to keep, separated by ``|``; all by default). The section
    and the columns must single out one table of the page.

:func:`find_uses` and :func:`resolve` are what ``tests/test_docs_numbers.py`` checks every
page with, without running Sphinx.
"""

import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList

from sklearn_papers.reproduce._publish import published_tables, published_value

RESULTS = Path(__file__).resolve().parents[1] / "results"

ROLE = re.compile(r":result:`([^`]+)`")
DIRECTIVE = re.compile(r"^( *)\.\. published-table:: *(\S+)\n((?:\1   :\w+:.*\n)*)", re.M)


def _tables(page, results=RESULTS):
    path = Path(results) / f"{page}.json"
    if not path.exists():
        raise KeyError(f"no published results page {path.name} in {Path(results).name}/")
    return published_tables(json.loads(path.read_text(encoding="utf-8")))


def resolve(text, results=RESULTS):
    """The cell a ``:result:`` role's text names (see the module docstring)."""
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3 or not all(parts):
        raise KeyError(f"{text!r}: write PAGE | ROW KEY; ROW KEY | COLUMN")
    page, section = (parts[0].split("#", 1) + [None])[:2]
    keys = [k.strip() for k in parts[1].split(";")]
    return published_value(_tables(page.strip(), results), keys, parts[2],
                           section=section.strip() if section else None)


def table(page, *, section=None, columns=None, rows=None, results=RESULTS):
    """``(columns, rows)`` of a ``published-table`` directive (see the module docstring)."""
    found = [t for t in _tables(page, results)
             if (section is None or section in t["section"])
             and (columns is None or set(columns) <= set(t["columns"]))]
    if len(found) != 1:
        raise KeyError(f"{len(found)} tables in {page}.json"
                       + (f" under a heading containing {section!r}" if section else "")
                       + (f" with the columns {columns}" if columns else "")
                       + "; give :section: or :columns: to pick one")
    columns_all, body = found[0]["columns"], found[0]["rows"]
    keep = columns or columns_all
    missing = [c for c in keep if c not in columns_all]
    if missing:
        raise KeyError(f"{page}.json has no column {missing}; it has {columns_all}")
    index = [columns_all.index(c) for c in keep]
    if rows is not None:
        missing = [r for r in rows if r not in [cells[0] for cells in body]]
        if missing:
            raise KeyError(f"{page}.json has no row {missing}")
        body = [cells for r in rows for cells in body if cells[0] == r]
    return keep, [[cells[j] for j in index] for cells in body]


def find_uses(text):
    """``(roles, directives)`` of a page: role texts, and ``(page, options)`` pairs."""
    uses = []
    for match in DIRECTIVE.finditer(text):
        options = dict(re.findall(r":(\w+): *(.*)", match.group(3)))
        uses.append((match.group(2), options))
    return ROLE.findall(text), uses


def _split(value):
    return [v.strip() for v in value.split("|")] if value else None


def _escape(cell):
    cell = cell.replace("\\", "\\\\")
    for mark in "*`|":
        cell = cell.replace(mark, "\\" + mark)
    return re.sub(r"(\w)_(?=\W|$)", r"\1\\_", cell)


def result_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    try:
        value = resolve(text)
    except KeyError as error:
        message = inliner.reporter.error(f":result:`{text}`: {error.args[0]}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    page = text.split("|")[0].split("#")[0].strip()
    inliner.document.settings.env.note_dependency(str(RESULTS / f"{page}.json"))
    return [nodes.Text(value)], []


class PublishedTable(Directive):
    required_arguments = 1
    option_spec = {"section": directives.unchanged, "columns": directives.unchanged,
                   "rows": directives.unchanged}

    def run(self):
        page = self.arguments[0]
        try:
            columns, rows = table(page, section=self.options.get("section"),
                                  columns=_split(self.options.get("columns")),
                                  rows=_split(self.options.get("rows")))
        except KeyError as error:
            raise self.error(f"published-table {page}: {error.args[0]}")
        self.state.document.settings.env.note_dependency(str(RESULTS / f"{page}.json"))
        lines = [f".. list-table:: From the published run (:ref:`results-{page}`)",
                 "   :header-rows: 1", ""]
        for cells in [columns, *rows]:
            for j, cell in enumerate(cells):
                lines.append(("   * - " if j == 0 else "     - ") + _escape(cell))
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"published-table {page}"),
                                self.content_offset, node)
        return node.children


def setup(app):
    app.add_role("result", result_role)
    app.add_directive("published-table", PublishedTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
