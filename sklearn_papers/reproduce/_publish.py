"""Publishing a run's results in the docs: one JSON record and one page per experiment.

The numbers the docs quote are read from the JSON (:func:`published_tables`).
"""

import json
import re
import shlex
import shutil
from pathlib import Path

from sklearn_papers.reproduce._methods import results_index
from sklearn_papers.reproduce._report import portable_command, section_markdown
from sklearn_papers.reproduce._result import HEADING, Result, dump_json, plain

__all__ = ["markdown_to_rst", "publish", "published_tables", "published_value", "render_page"]

_HEADING_CHARS = {2: "=", 3: "-", 4: "~", 5: "^"}


def _inline(text):
    """Inline markdown of one line to reStructuredText."""
    text = re.sub(r"\[([^\]]+)\]\(#[^)]*\)", r"\1", text)  # in-page links: their text
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for k, part in enumerate(parts):
        if len(part) > 1 and part.startswith("`") and part.endswith("`"):
            code = f"``{part[1:-1]}``"
            # rst inline markup needs a delimiter around it: an escaped space where a word
            # character touches it
            if out and out[-1][-1:].isalnum():
                code = "\\ " + code
            if k + 1 < len(parts) and parts[k + 1][:1].isalnum():
                code += "\\ "
            out.append(code)
            continue
        part = part.replace("\\|", "|").replace("|", "\\|")
        # a trailing underscore makes a reference in rst: escape it
        part = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", part)
        out.append(part)
    return "".join(out)


def list_table(rows):
    """The lines of a reStructuredText ``list-table`` whose first row is the header."""
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in rows:
        for j, cell in enumerate(row):
            out.append((("   * - " if j == 0 else "     - ") + cell).rstrip())
    return out


def _table(lines):
    """A markdown table as a ``list-table`` (lines)."""
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])] for line in lines]
    return list_table([[_inline(c) for c in row] for row in [rows[0], *rows[2:]]]) + [""]


def markdown_to_rst(markdown):
    """``(rst, images)``: a section of ``REPORT.md`` (headings, paragraphs, bullet lists,
    tables, images, inline code, bold, italics, fenced blocks) as reStructuredText, and
    the paths of its images, in order. The page refers to them in ``figures/``."""
    lines = markdown.splitlines()
    out, images, i = [], [], 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        if stripped.startswith("```"):
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].strip().startswith("```")), len(lines))
            out += [".. code-block:: text", "", *(f"   {b}" for b in lines[i + 1:end]), ""]
            i = end + 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(
                r"^\|(\s*:?-+:?\s*\|)+\s*$", lines[i + 1].strip()):
            end = next((j for j in range(i, len(lines))
                        if not lines[j].strip().startswith("|")), len(lines))
            if out and out[-1] != "":
                out.append("")
            out += _table(lines[i:end])
            i = end
            continue
        i += 1
        heading = HEADING.match(stripped)
        image = re.match(r"^!\[([^\]]*)\]\(([^)]+)\)$", stripped)
        if heading:
            title = _inline(heading.group(2))
            level = min(len(heading.group(1)), 5)
            out += ["", title, _HEADING_CHARS[level] * max(len(title), 4), ""]
        elif image:
            images.append(image.group(2))
            out += ["", f".. image:: figures/{Path(image.group(2)).name}",
                    f"   :alt: {image.group(1)}", "   :width: 100%", ""]
        elif not stripped.startswith("<a id="):
            if stripped.startswith("- ") and out and out[-1] != "" and not \
                    out[-1].lstrip().startswith("- "):
                out.append("")
            out.append(_inline(line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n") + "\n", images


def _page_data(entry, provenance):
    """The JSON of one published page: names, the run's provenance without its log (date,
    load), and the result."""
    prov = {k: provenance[k] for k in ("command", "mode", "commit", "versions", "hardware")}
    prov["command"] = _portable(prov["command"])
    prov.update(status=entry["status"], seconds=entry["seconds"],
                cpu_seconds=entry["cpu_seconds"])
    return {"name": entry["name"], "title": entry["title"], "paper": entry["paper"],
            "provenance": prov, "result": entry["result"]}


def _portable(command):
    """``command`` with its local paths cut (:func:`portable_command`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    return portable_command(words[1:]) if words[:1] == ["sklearn-papers"] else command


def render_page(page):
    """The reStructuredText of a published page from its JSON (:func:`publish`): ``name``,
    ``title``, ``paper``, ``provenance`` and ``result`` (figures relative to the page)."""
    prov, name, title = page["provenance"], page["name"], page["title"]
    rst, _ = markdown_to_rst(section_markdown(Result.from_dict(page["result"]),
                                              prov["mode"] == "quick"))
    status = f"Status: {prov['status']}, {prov['seconds']:.0f} s wall time"
    status += (f", {prov['cpu_seconds']:.0f} s CPU time." if prov["cpu_seconds"] is not None
               else ".")
    header = [f"Command: `{prov['command']}`.", f"Mode: {prov['mode']}.",
              f"Commit: {prov['commit']}.", f"Machine: {prov['hardware']}.",
              f"Versions: {prov['versions']}.", status]
    lines = [f".. Generated by `sklearn-papers publish` from {name}.json (beside this page);",
             "   edit the experiment, not this page.", "", f".. _results-{name}:", "",
             title, "=" * len(title), "", f"*{page['paper']}*", "",
             f"{'Quick' if prov['mode'] == 'quick' else 'Full-protocol'} run of "
             "``sklearn-papers reproduce``, published from its records:", ""]
    lines += [f"- {_inline(h)}" for h in header]
    return "\n".join(lines + ["", rst])


def publish(report_dir, to_dir, *, only=None):
    """Write ``<to_dir>/<name>.json`` (the run's provenance and the experiment's result)
    and ``<to_dir>/<name>.rst`` rendered from it, for each finished experiment of
    ``<report_dir>/REPORT.json`` (or those of ``only``: a ValueError for one that did not
    finish), copy the figures to ``<to_dir>/figures/`` and rewrite ``<to_dir>/index.rst``
    (:func:`~._methods.results_index`); return the pages' paths."""
    report_dir, to_dir = Path(report_dir), Path(to_dir)
    data = json.loads((report_dir / "REPORT.json").read_text(encoding="utf-8"))
    entries = {e["name"]: e for e in data["experiments"] if e["status"] == "ok"}
    names = list(only) if only else list(entries)
    missing = [n for n in names if n not in entries]
    if missing:
        raise ValueError(f"no finished section for {missing} in "
                         f"{report_dir / 'REPORT.json'}; it has {sorted(entries)}.")
    (to_dir / "figures").mkdir(parents=True, exist_ok=True)
    pages = []
    for name in names:
        page = _page_data(entries[name], data["provenance"])
        figures = []
        for fig in page["result"]["figures"]:
            shutil.copyfile(report_dir / fig, to_dir / "figures" / Path(fig).name)
            figures.append(f"figures/{Path(fig).name}")
        page["result"] = dict(page["result"], figures=figures)
        dump_json(page, to_dir / f"{name}.json")
        path = to_dir / f"{name}.rst"
        path.write_text(render_page(page), encoding="utf-8")
        pages.append(path)
    (to_dir / "index.rst").write_text(results_index(to_dir), encoding="utf-8")
    return pages


def published_tables(page):
    """The tables of a published page's JSON (``docs/results/<name>.json``), in page order:
    dicts of ``"section"`` (the heading above, or the page title), ``"columns"`` and
    ``"rows"`` (lists of cells), as plain text."""
    result = Result.from_dict(page["result"])
    result._set_titles()
    tables = []
    for table in result.tables:
        columns, rows = result.shown(table)
        tables.append({"section": plain(table.title) or page["title"], "columns": columns,
                       "rows": rows})
    return tables


def published_value(tables, row, column, *, section=None):
    """The one cell of ``tables`` (:func:`published_tables`) under the header ``column`` in
    the row holding every cell text of ``row`` (exactly, as a reader sees them), in tables
    under a heading containing ``section``. A KeyError when no cell matches, or more than
    one does: a number in the docs never silently comes from another row."""
    keys = [row] if isinstance(row, str) else list(row)
    found = []
    for table in tables:
        if section is not None and section not in table["section"]:
            continue
        if column not in table["columns"]:
            continue
        j = table["columns"].index(column)
        for cells in table["rows"]:
            if all(k in cells for k in keys) and j < len(cells):
                found.append((table["section"], cells, cells[j]))
    if len(found) != 1:
        what = "no cell" if not found else f"{len(found)} cells"
        listed = "; ".join(f"[{s}] {c}" for s, c, _ in found[:5])
        raise KeyError(f"{what} under column {column!r} in a row holding {keys}"
                       + (f" under a heading containing {section!r}" if section else "")
                       + (f": {listed}" if listed else ""))
    return found[0][2]
