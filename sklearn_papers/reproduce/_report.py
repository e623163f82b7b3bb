"""Writing a run's report: ``REPORT.json`` (the data) and ``REPORT.md`` rendered from it."""

import datetime
import os
import platform
import re
import shlex
import subprocess
from functools import lru_cache
from pathlib import Path, PureWindowsPath

import numpy as np

from sklearn_papers.reproduce._result import Result, dump_json

__all__ = ["format_mean_std", "full_mode_only", "hardware", "load_average",
           "portable_command", "render_report", "report_data", "section_markdown",
           "source_commit", "write_report"]


def utc_now():
    """The current UTC time as reports write it: ``"2025-01-31 14:05 UTC"``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def format_mean_std(values, digits=2):
    """``"1.23 ± 0.04"`` for a sequence of numbers (std with ddof=0); ``"1.23"`` for one."""
    values = np.asarray(values, dtype=float).ravel()
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def full_mode_only(experiment, heading, what):
    """Markdown for a follow-up under ``heading`` (no ``#`` marks) that the quick run skips:
    ``what`` it measures (a sentence), then where to find it, the published full report
    (``docs/results/<experiment>.rst``) when that holds ``heading``, else the full mode."""
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


@lru_cache(maxsize=1)
def package_versions():
    """``{"python": ..., "sklearn_papers": ..., ...}``: Python's version and those of the
    installed packages a run depends on (scikit-learn, numpy, torch, skorch, RDKit)."""
    import importlib.metadata as md

    found = {"python": platform.python_version()}
    for dist in ["sklearn_papers", "scikit-learn", "numpy", "torch", "skorch", "rdkit"]:
        try:
            found[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return found


def source_commit():
    """The git commit of the package's checkout, with a note when it has local changes; else
    the line of a ``.source_commit`` file beside the package folder, else ``"unknown"``."""
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


def load_average():
    """``"0.5 0.4 0.3"``: the load averages over 1, 5 and 15 minutes, or ``"n/a"``."""
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
    """``"sklearn-papers WORDS"`` (shell-quoted) as reports record it, each local path
    (absolute, from ``~``, climbing out with ``..``; also in ``--opt=PATH``) cut to its last
    component: ``--out /home/me/runs/sumo`` becomes ``--out sumo``."""
    out = []
    for word in map(str, words):
        if word.startswith("--") and "=" in word:
            option, _, value = word.partition("=")
            out.append(f"{option}={_portable_path(value)}")
        else:
            out.append(_portable_path(word))
    return "sklearn-papers " + shlex.join(out)


def hardware():
    """One line on the machine: CPU model, cores, OS."""
    return (f"{_cpu_model()}, {os.cpu_count()} CPU(s), {platform.system()} "
            f"{platform.release()} ({platform.machine()})")


def report_data(results, *, quick, seconds, command=None, pending=(), notes=None,
                load_start=None, cpu=None, out_dir=None):
    """The run as data (what ``REPORT.json`` holds and ``REPORT.md`` renders).

    ``results`` is ``[(experiment, result, seconds, error), ...]``, ``pending`` the
    experiments not finished yet; ``notes`` and ``cpu`` map an experiment's name to its
    note (parts read back) and CPU seconds; ``load_start`` is the :func:`load_average` at
    the run's start; figure paths are written relative to ``out_dir``. The data holds
    ``"provenance"`` (command, mode, commit, versions, hardware), ``"log"`` (date, load:
    left out of the published pages) and ``"experiments"``: per experiment ``name``,
    ``title``, ``paper``, ``status`` (``"ok"``, ``"failed"``, ``"not finished"``),
    ``seconds``, ``cpu_seconds``, ``note``, ``error`` and ``result``.
    """
    if command is None:
        command = f"sklearn-papers reproduce{' --quick' if quick else ''}"
    notes, cpu = notes or {}, cpu or {}
    if load_start is None:
        load_start = load_average()
    experiments = [{
        "name": exp.name, "title": exp.title, "paper": exp.paper,
        "status": "ok" if error is None else "failed", "seconds": float(secs),
        "cpu_seconds": None if cpu.get(exp.name) is None else float(cpu[exp.name]),
        "note": notes.get(exp.name, ""), "error": error,
        "result": None if error is not None else result.to_dict(relative_to=out_dir),
    } for exp, result, secs, error in results]
    experiments += [{"name": exp.name, "title": exp.title, "paper": exp.paper,
                     "status": "not finished", "seconds": None, "cpu_seconds": None,
                     "note": "", "error": None, "result": None} for exp in pending]
    versions = ", ".join(f"{'Python' if name == 'python' else name} {version}"
                         for name, version in package_versions().items())
    return {
        "provenance": {"command": command, "mode": "quick" if quick else "full",
                       "commit": source_commit(), "versions": versions,
                       "hardware": hardware(), "seconds": float(seconds)},
        "log": {"generated": utc_now(),
                "load": f"at start {load_start}, at the end {load_average()} (1/5/15 min)"},
        "experiments": experiments,
    }


def render_report(data):
    """``REPORT.md`` of a run's data (:func:`report_data`, or ``REPORT.json`` read back)."""
    prov, log = data["provenance"], data.get("log", {})
    quick = prov["mode"] == "quick"
    mode = "quick (`--quick`: shortened protocols, see each section)" if quick else "full"
    exps = data["experiments"]
    with_cpu = any(e["cpu_seconds"] is not None for e in exps)
    noted = any(e["note"] for e in exps)
    lines = [
        "# sklearn_papers: reproduction report",
        "",
        f"Generated {log.get('generated', 'n/a')} by `{prov['command']}` in "
        f"{prov['seconds']:.0f} s.",
        f"Mode: {mode}.",
        f"Commit: {prov['commit']}.",
        f"Machine: {prov['hardware']}" + (f"; load average {log['load']}." if log.get("load")
                                          else "."),
        f"Versions: {prov['versions']}.",
        "",
        ("Every number below was computed on the data bundled in `sklearn_papers.datasets`, "
         "by this run or, where a section says **Resumed**, by the earlier run it names "
         "(`--resume`); the paper's numbers are quoted from the paper." if noted else
         "Every number below was computed by this run on the data bundled in "
         "`sklearn_papers.datasets`; the paper's numbers are quoted from the paper."),
        "",
        "| experiment | paper | status | time (s) |" + (" CPU time (s) |" if with_cpu else ""),
        "|---|---|---|---|" + ("---|" if with_cpu else ""),
    ]
    for e in exps:
        if e["status"] == "not finished":
            lines.append(f"| {e['name']} | {e['paper']} | not finished (running, or the run "
                         "stopped before it) | |")
            continue
        status = "ok" if e["status"] == "ok" else "**failed**"
        row = f"| [{e['name']}](#{e['name']}) | {e['paper']} | {status} | {e['seconds']:.0f} |"
        if with_cpu:
            row += f" {e['cpu_seconds']:.0f} |" if e["cpu_seconds"] is not None else " |"
        lines.append(row)
    for e in exps:
        if e["status"] == "not finished":
            continue
        lines += ["", f"<a id=\"{e['name']}\"></a>", f"## {e['title']}", "",
                  f"*{e['paper']}*", ""]
        if e["note"]:
            lines += [e["note"], ""]
        if e["error"] is not None:
            lines += ["This experiment failed:", "", "```", e["error"].rstrip(), "```"]
            continue
        lines.append(section_markdown(Result.from_dict(e["result"]), quick))
    return "\n".join(lines) + "\n"


def section_markdown(result, quick):
    """A result's markdown, then its figures and (in a quick run) what was shortened."""
    parts = [result.markdown.rstrip()]
    parts += [f"![{Path(fig).stem}]({Path(fig).as_posix()})" for fig in result.figures]
    if quick and result.shortened:
        parts.append(f"**Shortened by `--quick`:** {result.shortened}")
    return "\n\n".join(parts)


def write_report(out_dir, results, **kwargs):
    """Write ``<out_dir>/REPORT.json`` (:func:`report_data` with ``kwargs``) and
    ``REPORT.md`` rendered from it; return the path of ``REPORT.md``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = report_data(results, out_dir=out_dir, **kwargs)
    dump_json(data, out_dir / "REPORT.json")
    path = out_dir / "REPORT.md"
    path.write_text(render_report(data), encoding="utf-8")
    return path
