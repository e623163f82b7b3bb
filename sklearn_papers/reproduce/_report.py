"""Writing ``REPORT.md``: markdown tables, the header with versions, and the sections."""

import datetime
import os
import platform
import re
import shlex
import subprocess
from pathlib import Path, PureWindowsPath

import numpy as np

__all__ = ["format_mean_std", "full_mode_only", "machine_info", "markdown_table",
           "portable_command", "source_commit", "write_report"]


def format_mean_std(values, digits=2):
    """``"1.23 ± 0.04"`` for a sequence of numbers (std over the values, ddof=0).

    A single value is written without a spread (``"1.23"``): one run has none to report.
    """
    values = np.asarray(values, dtype=float).ravel()
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def full_mode_only(experiment, heading, what):
    """Markdown for a follow-up that the quick run skips (to keep ``make demo`` short).

    Points to the published full report (``docs/results/<experiment>.rst``, found from a
    source checkout) when it holds ``heading``, else says to run the full mode.

    Parameters
    ----------
    experiment : str
        The experiment's name, e.g. ``"mask_rcnn"``.
    heading : str
        The follow-up's heading, without the markdown ``#`` marks.
    what : str
        One sentence on what the follow-up measures.

    Returns
    -------
    markdown : str
    """
    page = Path(__file__).resolve().parents[2] / "docs" / "results" / f"{experiment}.rst"
    try:
        published = heading in page.read_text(encoding="utf-8")
    except OSError:
        published = False
    where = (f"its published full result is in `docs/results/{experiment}.rst` "
             f"(section \"{heading}\")" if published else
             f"run `sklearn-papers reproduce --only {experiment}` (full mode) for it")
    return (f"#### {heading}\n\n{what} This follow-up runs in full mode only (the quick "
            f"run skips it to stay within the demo's budget; no verdict here): {where}.")


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


def source_commit():
    """The git commit of the package's source tree, with a note when it has local changes.

    Read with ``git`` from the checkout the package is imported from; a copied tree
    without ``.git`` may carry a ``.source_commit`` file (one line) next to the package
    folder. ``"unknown"`` when neither exists.
    """
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode == 0 and head.stdout.strip():
            dirty = subprocess.run(
                ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no",
                 "--", "sklearn_papers"], capture_output=True, text=True, timeout=10)
            text = head.stdout.strip()
            if dirty.returncode == 0 and dirty.stdout.strip():
                text += " (with uncommitted changes in sklearn_papers/)"
            return text
    except (OSError, subprocess.SubprocessError):
        pass
    marker = root / ".source_commit"
    if marker.is_file():
        return marker.read_text(encoding="utf-8").strip() or "unknown"
    return "unknown"


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load():
    try:
        return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except (AttributeError, OSError):
        return "n/a"


def _portable_path(word):
    """``word``, or its last component when it is a local path (absolute, ``~``, ``..``)."""
    local = (os.path.isabs(word) or word.startswith("~") or re.match(r"^[A-Za-z]:[\\/]", word)
             or ".." in re.split(r"[\\/]", word))
    if not local:
        return word
    return PureWindowsPath(word.rstrip("/\\")).name or "."


def portable_command(words):
    """The command line ``sklearn-papers WORDS`` as reports record it: no local paths.

    A word that is a local path (absolute, starting with ``~``, or climbing out with
    ``..``; also the value of ``--opt=PATH``) is written as its last component:
    ``--out /home/me/runs/sumo`` becomes ``--out sumo``, the name the published page gives
    the report's folder. Relative paths inside the working directory are kept as typed.

    Parameters
    ----------
    words : sequence of str or path-like
        The arguments after ``sklearn-papers``.

    Returns
    -------
    command : str
        ``"sklearn-papers " +`` the shell-quoted words.
    """
    out = []
    for word in map(str, words):
        if word.startswith("--") and "=" in word:
            option, _, value = word.partition("=")
            out.append(f"{option}={_portable_path(value)}")
        else:
            out.append(_portable_path(word))
    return "sklearn-papers " + shlex.join(out)


def machine_info():
    """One line on the machine: CPU model, cores, OS, and the load average now."""
    return (f"{_cpu_model()}, {os.cpu_count()} CPU(s), {platform.system()} "
            f"{platform.release()} ({platform.machine()}), load average at start "
            f"{_load()} (1/5/15 min)")


def write_report(out_dir, results, *, quick, seconds, command=None, pending=(), notes=None,
                 machine=None, cpu=None):
    """Write ``<out_dir>/REPORT.md`` from ``[(experiment, section, seconds, error), ...]``.

    ``command`` is the command line to record in the header (default: the plain
    ``sklearn-papers reproduce [--quick]``). ``pending`` lists experiments not finished
    yet: the job rewrites the report after every experiment, so a long run that is
    interrupted still leaves the finished sections. ``notes`` maps an experiment's name
    to a line written at the top of its section (which parts came from an earlier run);
    ``machine`` is the :func:`machine_info` line of the run's start; ``cpu`` maps an
    experiment's name to the CPU seconds it used (a column of the summary table: on a
    shared machine the wall time overstates what the experiment needs, the CPU time does
    not).

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
    notes = notes or {}
    if machine is None:
        machine = machine_info()
    lines = [
        "# sklearn_papers: reproduction report",
        "",
        f"Generated {now} by `{command}` in "
        f"{seconds:.0f} s on {platform.machine()} with {os.cpu_count()} CPU(s).",
        f"Mode: {mode}.",
        f"Commit: {source_commit()}.",
        f"Machine: {machine}; load average at the end {_load()}.",
        f"Versions: {_versions()}.",
        "",
        ("Every number below was computed on the data bundled in `sklearn_papers.datasets`, "
         "by this run or, where a section says **Resumed**, by the earlier run it names "
         "(`--resume`); the paper's numbers are quoted from the paper." if notes else
         "Every number below was computed by this run on the data bundled in "
         "`sklearn_papers.datasets`; the paper's numbers are quoted from the paper."),
        "",
        "| experiment | paper | status | time (s) |" + (" CPU time (s) |" if cpu else ""),
        "|---|---|---|---|" + ("---|" if cpu else ""),
    ]
    for exp, section, secs, error in results:
        status = "ok" if error is None else "**failed**"
        row = f"| [{exp.name}](#{exp.name}) | {exp.paper} | {status} | {secs:.0f} |"
        if cpu:
            row += f" {cpu[exp.name]:.0f} |" if exp.name in cpu else " |"
        lines.append(row)
    for exp in pending:
        lines.append(f"| {exp.name} | {exp.paper} | not finished (running, or the run "
                     "stopped before it) | |")
    for exp, section, secs, error in results:
        lines += ["", f"<a id=\"{exp.name}\"></a>", f"## {exp.title}", "", f"*{exp.paper}*", ""]
        if exp.name in notes:
            lines += [notes[exp.name], ""]
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
