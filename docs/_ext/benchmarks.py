"""The Benchmarks pages, generated from the benchmark scripts' recorded results.

Each ``benchmarks/bench_*.py`` that records its result writes
``benchmarks/results/<name>.json`` (see ``benchmarks/_record.py``). When the docs are
built, :func:`write_pages` turns every such file into ``docs/benchmarks/<name>.rst`` (our
figure, the peer's and the ratio per measurement, the command and the machine) and writes
``docs/benchmarks/index.rst`` listing them. The generated folder is not committed.

Pages that quote a benchmark read its numbers the same way, never typed:

``:bench:`NAME | KEY; KEY | FIELD```
    One figure of ``benchmarks/results/NAME.json``: the row whose ``what``, split at its
    commas, holds every ``KEY`` as a part, and ``FIELD`` one of ``ours``, ``peer``,
    ``ratio`` (ours / peer), ``inverse ratio`` (peer / ours, e.g. a speed-up from two
    times), ``ours ± std`` or ``peer ± std``. No match, or more than one, is an error (a
    warning, fatal under ``-W``).

``.. benchmark-table:: NAME``
    The table of the benchmark's page (measurement, unit, ours, peer, ratio), with
    ``:rows:`` (keys of the rows to keep, rows separated by ``|``, keys within a row by
    ``;``; all rows by default) and a caption linking the page.

:func:`find_uses`, :func:`resolve` and :func:`table` are what
``tests/test_docs_numbers.py`` checks every page with, without running Sphinx.
"""

import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"


def _number(value):
    if value == 0 or 0.01 <= abs(value) < 1e6:
        digits = 3 if abs(value) < 10 else (1 if abs(value) < 1000 else 0)
        return f"{value:,.{digits}f}"
    return f"{value:.3g}"


def _cell(text):
    text = str(text).replace("\\", "\\\\")
    for mark in "*`|":
        text = text.replace(mark, "\\" + mark)
    return text


def _with_std(row, side):
    value = _number(row[side])
    if f"{side}_std" in row:
        value += f" ± {_number(row[side + '_std'])}"
    return value


def _table_lines(data, rows=None, caption=""):
    lines = [f".. list-table::{' ' + caption if caption else ''}", "   :header-rows: 1", "",
             "   * - measurement", "     - unit", "     - ours", "     - peer",
             "     - ours / peer", "     - better"]
    for row in data["rows"] if rows is None else rows:
        lines += [f"   * - {_cell(row['what'])}", f"     - {_cell(row['unit'])}",
                  f"     - {_with_std(row, 'ours')}", f"     - {_with_std(row, 'peer')}",
                  f"     - {row['ratio']:.2f}", f"     - {row['better']}"]
    return lines


def page(data):
    """The reStructuredText page of one recorded benchmark (a dict read from its JSON)."""
    title = data["title"]
    m = data["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    lines = [f".. Generated from benchmarks/results/{data['name']}.json by the docs build;",
             "   run the benchmark again to change it.", "",
             f".. _benchmark-{data['name']}:", "", title, "=" * len(title), "",
             f"Peer: {_cell(data['peer'])}.", ""]
    if data.get("notes"):
        lines += [_cell(data["notes"]), ""]
    lines += _table_lines(data)
    lines += ["", "Command (from the repository root)::", "", f"    {data['command']}", "",
              f"Machine: {_cell(m['cpu'])}, {m['cores']} cores, {m['system']}, "
              f"{m['torch_threads']} torch thread(s); {_cell(versions)}.", ""]
    return "\n".join(lines)


def index(names, titles):
    lines = ["Benchmarks", "==========", "",
             "Each page is the recorded output of one script of ``benchmarks/``, which times "
             "or scores an estimator of this package against a peer (another library, or a "
             "plain loop over the same computation) in one process, on the machine named on "
             "the page. Times on a shared machine vary with its load; the ratio of two "
             "figures measured side by side varies less. A script records its result in "
             "``benchmarks/results/<name>.json`` each time it runs, and the docs build "
             "makes these pages from those files.", ""]
    if names:
        lines += [".. list-table::", "   :header-rows: 1", "", "   * - benchmark",
                  "     - compares"]
        for name in names:
            lines += [f"   * - :doc:`{name}`", f"     - {_cell(titles[name])}"]
        lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   {n}" for n in names]
    else:
        lines += ["No benchmark has recorded a result yet."]
    return "\n".join(lines) + "\n"


def write_pages(out_dir, results=RESULTS):
    """Write the pages for every ``<results>/*.json`` into ``out_dir``; return their names.

    Files are rewritten only when their text changes, so Sphinx rebuilds only those.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts, titles = {}, {}
    for path in sorted(Path(results).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        texts[data["name"]] = page(data)
        titles[data["name"]] = data["title"]
    texts["index"] = index(sorted(titles), titles)
    for stale in out_dir.glob("*.rst"):
        if stale.stem not in texts:
            stale.unlink()
    for name, text in texts.items():
        target = out_dir / f"{name}.rst"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return sorted(titles)


ROLE = re.compile(r":bench:`([^`]+)`")
DIRECTIVE = re.compile(r"^( *)\.\. benchmark-table:: *(\S+)\n((?:\1   :\w+:.*\n)*)", re.M)
FIELDS = ("ours", "peer", "ratio", "inverse ratio", "ours ± std", "peer ± std")


def load(name, results=RESULTS):
    """The recorded result ``<results>/<name>.json`` as a dict."""
    path = Path(results) / f"{name}.json"
    if not path.exists():
        raise KeyError(f"no recorded benchmark {path.name} in benchmarks/{Path(results).name}/ "
                       f"(run benchmarks/bench_{name}.py)")
    return json.loads(path.read_text(encoding="utf-8"))


def find_row(data, keys):
    """The one row of ``data`` whose ``what``, split at commas, holds every key."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    found = [row for row in data["rows"]
             if set(keys) <= {part.strip() for part in row["what"].split(",")}]
    if len(found) != 1:
        raise KeyError(f"{len(found)} rows of {data['name']}.json hold {keys}; its rows: "
                       + "; ".join(repr(row["what"]) for row in data["rows"]))
    return found[0]


def resolve(text, results=RESULTS):
    """The figure a ``:bench:`` role's text names (see the module docstring)."""
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3 or not all(parts):
        raise KeyError(f"{text!r}: write NAME | KEY; KEY | FIELD")
    name, keys, field = parts
    if field not in FIELDS:
        raise KeyError(f"{text!r}: FIELD must be one of {FIELDS}, got {field!r}")
    row = find_row(load(name, results), [k.strip() for k in keys.split(";")])
    if field == "ratio":
        return f"{row['ratio']:.2f}"
    if field == "inverse ratio":
        return f"{row['peer'] / row['ours']:.2f}"
    if field.endswith("± std"):
        side = field.split()[0]
        if f"{side}_std" not in row:
            raise KeyError(f"{text!r}: the row {row['what']!r} records no {side}_std")
        return _with_std(row, side)
    return _number(row[field])


def table(name, rows=None, results=RESULTS):
    """The list-table lines of a ``benchmark-table`` directive (see the module docstring)."""
    data = load(name, results)
    chosen = None
    if rows is not None:
        chosen = [find_row(data, [k.strip() for k in keys.split(";")]) for keys in rows]
    return _table_lines(data, chosen, caption=f"Recorded by benchmarks/bench_{name}.py "
                                              f"(:ref:`benchmark-{name}`)")


def find_uses(text):
    """``(roles, directives)`` of a page: role texts, and ``(name, options)`` pairs."""
    uses = [(m.group(2), dict(re.findall(r":(\w+): *(.*)", m.group(3))))
            for m in DIRECTIVE.finditer(text)]
    return ROLE.findall(text), uses


def split_rows(value):
    return [v.strip() for v in value.split("|")] if value else None


def bench_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    try:
        value = resolve(text)
    except KeyError as error:
        message = inliner.reporter.error(f":bench:`{text}`: {error.args[0]}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    inliner.document.settings.env.note_dependency(
        str(RESULTS / f"{text.split('|')[0].strip()}.json"))
    return [nodes.Text(value)], []


class BenchmarkTable(Directive):
    required_arguments = 1
    option_spec = {"rows": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        try:
            lines = table(name, rows=split_rows(self.options.get("rows")))
        except KeyError as error:
            raise self.error(f"benchmark-table {name}: {error.args[0]}")
        self.state.document.settings.env.note_dependency(str(RESULTS / f"{name}.json"))
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"benchmark-table {name}"),
                                self.content_offset, node)
        return node.children


def _on_builder_inited(app):
    write_pages(Path(app.srcdir) / "benchmarks")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.add_role("bench", bench_role)
    app.add_directive("benchmark-table", BenchmarkTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
