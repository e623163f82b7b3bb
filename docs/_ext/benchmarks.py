"""The Benchmarks pages, generated from the benchmark scripts' recorded results.

Each ``benchmarks/bench_*.py`` that records its result writes
``benchmarks/results/<name>.json`` (see ``benchmarks/_record.py``). When the docs are
built, :func:`write_pages` turns every such file into ``docs/benchmarks/<name>.rst`` (our
figure, the peer's and the ratio per measurement, the command and the machine) and writes
``docs/benchmarks/index.rst`` listing them. The generated folder is not committed.
"""

import json
from pathlib import Path

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
    lines += [".. list-table::", "   :header-rows: 1", "",
              "   * - measurement", "     - unit", "     - ours", "     - peer",
              "     - ours / peer", "     - better"]
    for row in data["rows"]:
        lines += [f"   * - {_cell(row['what'])}", f"     - {_cell(row['unit'])}",
                  f"     - {_number(row['ours'])}", f"     - {_number(row['peer'])}",
                  f"     - {row['ratio']:.2f}", f"     - {row['better']}"]
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


def _on_builder_inited(app):
    write_pages(Path(app.srcdir) / "benchmarks")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
