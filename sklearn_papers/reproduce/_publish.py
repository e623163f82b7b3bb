"""Publishing a run's ``REPORT.md`` in the docs: one reStructuredText page per experiment.

``sklearn-papers publish --report reports/gilmer --to docs/results`` reads the report the
job wrote, converts each experiment's section to ``<to>/<name>.rst`` (the report's header
with command, date, commit, machine and versions at the top of every page; local paths in
the command are cut to their last component, see :func:`portable_command`), copies its
figures into ``<to>/figures/`` and rewrites ``<to>/index.rst`` to list every page there.
Only the markdown the job itself writes is understood: headings, paragraphs, bullet lists,
tables, images, inline code, bold and italics, fenced blocks.
"""

import re
import shlex
import shutil
from pathlib import Path

from sklearn_papers.reproduce._report import portable_command

__all__ = ["markdown_to_rst", "publish", "published_tables", "published_value"]

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


def _table(lines):
    rows = []
    for line in lines:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        rows.append(cells)
    header, body = rows[0], [r for r in rows[2:]]
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *body]:
        for j, cell in enumerate(row):
            out.append((("   * - " if j == 0 else "     - ") + _inline(cell)).rstrip())
    out.append("")
    return out


def markdown_to_rst(markdown, *, figure_dir="figures", level_shift=0):
    """Convert the job's markdown to reStructuredText.

    Parameters
    ----------
    markdown : str
        A section of ``REPORT.md``.
    figure_dir : str, default="figures"
        Folder (relative to the page) the images are referred to in.
    level_shift : int, default=0
        Added to each heading's level (``###`` is level 3).

    Returns
    -------
    rst : str
    images : list of str
        The image paths of the markdown, in order (relative to the report).
    """
    lines = markdown.splitlines()
    out, images, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            out += [".. code-block:: text", ""] + [f"   {b}" for b in block] + [""]
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(
                r"^\|(\s*:?-+:?\s*\|)+\s*$", lines[i + 1].strip()):
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            if out and out[-1] != "":
                out.append("")
            out += _table(block)
            continue
        heading = re.match(r"^(#{2,6})\s+(.*)$", stripped)
        if heading:
            level = min(len(heading.group(1)) + level_shift, 5)
            title = _inline(heading.group(2))
            out += ["", title, _HEADING_CHARS[level] * max(len(title), 4), ""]
            i += 1
            continue
        image = re.match(r"^!\[([^\]]*)\]\(([^)]+)\)$", stripped)
        if image:
            images.append(image.group(2))
            name = Path(image.group(2)).name
            out += ["", f".. image:: {figure_dir}/{name}", f"   :alt: {image.group(1)}",
                    "   :width: 100%", ""]
            i += 1
            continue
        if stripped.startswith("<a id="):
            i += 1
            continue
        if stripped.startswith("- ") and out and out[-1] != "" and not \
                out[-1].lstrip().startswith("- "):
            out.append("")
        out.append(_inline(line))
        i += 1
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"
    return text, images


def _without_local_paths(line):
    """A header line whose recorded ``sklearn-papers`` command has its local paths cut,
    whatever wrote the report (an absolute ``--out`` folder becomes its name)."""
    def portable(match):
        try:
            words = shlex.split(match.group(1))
        except ValueError:
            return match.group(0)
        return f"`{portable_command(words[1:])}`"

    return re.sub(r"`(sklearn-papers [^`]*)`", portable, line)


def _split_report(text):
    """``(header_lines, {name: (title, paper, body)})`` of a ``REPORT.md``."""
    head, _, rest = text.partition('\n<a id="')
    sections = {}
    for chunk in ('<a id="' + rest).split('\n<a id="') if rest else []:
        chunk = chunk.removeprefix('<a id="')
        name, _, body = chunk.partition('"></a>')
        body = body.strip("\n").splitlines()
        title = body[0].removeprefix("## ").strip()
        paper = body[2].strip().strip("*") if len(body) > 2 else ""
        sections[name] = (title, paper, "\n".join(body[3:]))
    header = [_without_local_paths(ln) for ln in head.splitlines()
              if ln.startswith(("Generated", "Mode:", "Commit:", "Machine:", "Versions:"))]
    table = [ln for ln in head.splitlines() if ln.startswith("| [")]
    return header, table, sections


def publish(report_dir, to_dir, *, only=None):
    """Write ``<to_dir>/<name>.rst`` for each section of ``<report_dir>/REPORT.md``.

    Parameters
    ----------
    report_dir : path-like
        Output folder of a run (holds ``REPORT.md`` and the figures).
    to_dir : path-like
        Docs folder of the results pages (created; figures go to ``figures/`` inside).
    only : list of str, default=None
        Experiments to publish; all sections of the report when None.

    Returns
    -------
    pages : list of pathlib.Path

    Raises
    ------
    FileNotFoundError
        If ``REPORT.md`` or one of its figures is missing.
    ValueError
        If an experiment of ``only`` has no finished section in the report.
    """
    report_dir, to_dir = Path(report_dir), Path(to_dir)
    text = (report_dir / "REPORT.md").read_text(encoding="utf-8")
    header, table, sections = _split_report(text)
    names = list(only) if only else list(sections)
    missing = [n for n in names if n not in sections]
    if missing:
        raise ValueError(f"no finished section for {missing} in {report_dir / 'REPORT.md'}; "
                         f"it has {sorted(sections)}.")
    (to_dir / "figures").mkdir(parents=True, exist_ok=True)
    quick = any(h.startswith("Mode: quick") for h in header)
    pages = []
    for name in names:
        title, paper, body = sections[name]
        rst, images = markdown_to_rst(body)
        for image in images:
            shutil.copyfile(report_dir / image, to_dir / "figures" / Path(image).name)
        row = [ln for ln in table if ln.startswith(f"| [{name}]")]
        status = ""
        if row:
            cells = [c.strip() for c in row[0].strip("|").split("|")]
            status = f"Status: {cells[2]}, {cells[3]} s wall time"
            status += (f", {cells[4]} s CPU time." if len(cells) > 4 and cells[4] else ".")
        lines = [f".. Generated by `sklearn-papers publish` from {report_dir.name}/REPORT.md;",
                 "   edit the experiment, not this page.", "", f".. _results-{name}:", "",
                 title, "=" * len(title), "", f"*{paper}*", "",
                 f"{'Quick' if quick else 'Full-protocol'} run of ``sklearn-papers "
                 "reproduce``, published as it wrote its report:", ""]
        lines += [f"- {_inline(h)}" for h in header] + ([f"- {status}"] if status else [])
        lines += ["", rst]
        page = to_dir / f"{name}.rst"
        page.write_text("\n".join(lines), encoding="utf-8")
        pages.append(page)
    _write_index(to_dir)
    return pages


def _write_index(to_dir):
    names = sorted(p.stem for p in Path(to_dir).glob("*.rst") if p.stem != "index")
    lines = ["Results of full runs", "====================", "",
             "Each page is the report of one full-protocol run of ``sklearn-papers "
             "reproduce`` (no ``--quick``), with the command, date, commit and machine it ran "
             "on. Published with ``sklearn-papers publish --report DIR --to docs/results``.",
             "", ".. toctree::", "   :maxdepth: 1", ""] + [f"   {n}" for n in names]
    (Path(to_dir) / "index.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _plain(cell):
    """The text a reader sees in an rst table cell: no inline-literal marks or escapes."""
    text = cell.replace("``", "").replace("\\ ", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def published_tables(text):
    """The tables of a published results page, as :func:`publish` writes them.

    Parameters
    ----------
    text : str
        A page of ``docs/results/`` (reStructuredText whose tables are ``list-table``
        directives with one header row).

    Returns
    -------
    tables : list of dict
        One per table, in page order: ``"section"`` (the heading above it, or the page
        title), ``"columns"`` (header cells) and ``"rows"`` (lists of cells), cells as a
        reader sees them (without inline-literal marks and escapes).
    """
    lines = text.splitlines()
    tables, section = [], ""
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and re.fullmatch(r"[=\-~^]{4,}", lines[i + 1]):
            section = _plain(lines[i])
            i += 2
            continue
        if lines[i].startswith(".. list-table::"):
            i += 1
            while i < len(lines) and (lines[i].startswith("   :") or not lines[i].strip()):
                i += 1
            rows = []
            while i < len(lines) and lines[i].startswith("   "):
                line = lines[i]
                if line.startswith("   * - ") or line == "   * -":
                    rows.append([_plain(line[6:])])
                elif line.startswith("     - ") or line == "     -":
                    rows[-1].append(_plain(line[6:]))
                i += 1
            if rows:
                tables.append({"section": section, "columns": rows[0], "rows": rows[1:]})
            continue
        i += 1
    return tables


def published_value(tables, row, column, *, section=None):
    """The one cell of ``tables`` in the row holding every key of ``row``, under ``column``.

    Parameters
    ----------
    tables : list of dict
        From :func:`published_tables`.
    row : str or sequence of str
        Cell texts that the row must all hold (exactly, as a reader sees them).
    column : str
        A header cell (exactly).
    section : str, default=None
        Only tables under a heading that contains this text.

    Returns
    -------
    value : str

    Raises
    ------
    KeyError
        If no cell matches, or more than one does (the message lists the candidates), so a
        number in the docs can never silently come from another row.
    """
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
