"""Writing ``REPORT.md``: markdown tables, the header with versions, and the sections."""

import datetime
import os
import platform
from pathlib import Path

import numpy as np

__all__ = ["format_mean_std", "markdown_table", "write_report"]


def format_mean_std(values, digits=2):
    """``"1.23 ± 0.04"`` for a sequence of numbers (std over the values, ddof=0).

    A single value is written without a spread (``"1.23"``): one run has none to report.
    """
    values = np.asarray(values, dtype=float).ravel()
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def markdown_table(rows, columns=None, floatfmt=".3f"):
    """Render a list of dicts (or a DataFrame) as a GitHub markdown table.

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        One dict per row.
    columns : list of str, default=None
        Column order; the keys of the first row when None.
    floatfmt : str, default=".3f"
        Format for float cells; strings are written as given and None as an empty cell.

    Returns
    -------
    table : str
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict(orient="records")
    rows = list(rows)
    if columns is None:
        columns = list(rows[0]) if rows else []

    def cell(v):
        if v is None:
            return ""
        if isinstance(v, (float, np.floating)):
            return "nan" if np.isnan(v) else format(v, floatfmt)
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def _versions():
    import importlib.metadata as md

    out = [f"Python {platform.python_version()}"]
    for dist in ["sklearn_papers", "scikit-learn", "numpy", "torch", "skorch", "rdkit"]:
        try:
            out.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            pass
    return ", ".join(out)


def write_report(out_dir, results, *, quick, seconds, command=None, pending=()):
    """Write ``<out_dir>/REPORT.md`` from ``[(experiment, section, seconds, error), ...]``.

    ``command`` is the command line to record in the header (default: the plain
    ``sklearn-papers reproduce [--quick]``). ``pending`` lists experiments not finished
    yet: the job rewrites the report after every experiment, so a long run that is
    interrupted still leaves the finished sections.

    Returns
    -------
    path : pathlib.Path
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if command is None:
        command = f"sklearn-papers reproduce{' --quick' if quick else ''}"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mode = "quick (`--quick`: shortened protocols, see each section)" if quick else "full"
    lines = [
        "# sklearn_papers: reproduction report",
        "",
        f"Generated {now} by `{command}` in "
        f"{seconds:.0f} s on {platform.machine()} with {os.cpu_count()} CPU(s).",
        f"Mode: {mode}.",
        f"Versions: {_versions()}.",
        "",
        "Every number below was computed by this run on the data bundled in "
        "`sklearn_papers.datasets`; the paper's numbers are quoted from the paper.",
        "",
        "| experiment | paper | status | time (s) |",
        "|---|---|---|---|",
    ]
    for exp, section, secs, error in results:
        status = "ok" if error is None else "**failed**"
        lines.append(f"| [{exp.name}](#{exp.name}) | {exp.paper} | {status} | {secs:.0f} |")
    for exp in pending:
        lines.append(f"| {exp.name} | {exp.paper} | not finished (running, or the run "
                     "stopped before it) | |")
    for exp, section, secs, error in results:
        lines += ["", f"<a id=\"{exp.name}\"></a>", f"## {exp.title}", "", f"*{exp.paper}*", ""]
        if error is not None:
            lines += ["This experiment failed:", "", "```", error.rstrip(), "```"]
            continue
        lines.append(section.markdown.rstrip())
        for fig in section.figures:
            rel = os.path.relpath(Path(fig), out_dir)
            lines += ["", f"![{Path(fig).stem}]({rel})"]
        if quick and section.shortened:
            lines += ["", f"**Shortened by `--quick`:** {section.shortened}"]
    path = out_dir / "REPORT.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
