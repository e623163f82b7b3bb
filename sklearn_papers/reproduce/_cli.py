"""Command line: ``sklearn-papers reproduce [--quick] [--only NAME ...] [--out DIR] [--resume]
[--records DIR]`` and ``sklearn-papers publish --report DIR [--to docs/results]``."""

import argparse
import contextlib
import hashlib
import inspect
import json
import os
import pickle
import sys
import time
import warnings
from pathlib import Path

from sklearn_papers import __version__
from sklearn_papers.reproduce import _registry
from sklearn_papers.reproduce._methods import method_of
from sklearn_papers.reproduce._publish import publish
from sklearn_papers.reproduce._registry import (
    RunContext,
    format_seconds,
    list_experiments,
    run_experiment,
)
from sklearn_papers.reproduce._report import (
    load_average,
    portable_command,
    utc_now,
    write_report,
)
from sklearn_papers.reproduce._result import Result

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse, with every usage error on one line: ``<prog>: error: <message>``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _seed(text):
    """``--seed``: an int in [0, 2**32 - 1] (numpy's seed range)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer; give a seed such as --seed 0") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(
            f"{value} is outside [0, 2**32 - 1]; give a seed such as --seed 0")
    return value


def _verbosity(text):
    """``--verbose``: an int >= 0."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer >= 0; give 0 (silent) or 1 (progress)")
    return int(text)


def _parser():
    parser = _Parser(prog="sklearn-papers", description="Re-run the headline claims of the "
                     "papers implemented in sklearn_papers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="run the experiments and write REPORT.md",
                         description="Run each paper's experiment on bundled data and "
                                     "write a report.")
    rep.add_argument("--quick", action="store_true",
                     help="shortened protocols that finish in minutes on 2 CPU cores")
    rep.add_argument("--only", nargs="+", metavar="NAME",
                     help="run only these experiments (see --list)")
    rep.add_argument("--out", default="reports", type=Path,
                     help="output folder for REPORT.md and PNG plots (default: reports/); "
                          "a REPORT.md already there is replaced")
    rep.add_argument("--resume", action="store_true",
                     help="reuse the experiments and parts that an earlier run with the "
                          "same --out, mode and seed finished")
    rep.add_argument("--records", default=None, type=Path, metavar="DIR",
                     help="folder of text records of finished parts, for the experiments "
                          "that keep them (duvenaud): a recorded part is reused, a new one "
                          "is written there; see docs/reproduce.rst")
    rep.add_argument("--seed", default=0, type=_seed, help="random seed (default: 0)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--verbose", default=1, type=_verbosity,
                     help="0 silences progress output (default: 1)")
    pub = sub.add_parser("publish", help="turn a run's report into docs pages",
                         description="Write <to>/<name>.json and .rst for each experiment "
                                     "of a run, copy its figures into <to>/figures/ and "
                                     "rewrite <to>/index.rst.")
    pub.add_argument("--report", required=True, type=Path,
                     help="output folder of the run (holds REPORT.md)")
    pub.add_argument("--to", default=Path("docs/results"), type=Path,
                     help="docs folder of the results pages (default: docs/results)")
    pub.add_argument("--only", nargs="+", metavar="NAME",
                     help="publish only these experiments' sections")
    return parser


def _usage_error(command, message):
    """Print ``sklearn-papers <command>: error: <message>``; return the exit status, 2."""
    print(f"sklearn-papers {command}: error: {message}", file=sys.stderr)
    return 2


def _unknown(names, known, hint=""):
    """The ``--only`` error for names not in ``known``, or None."""
    unknown = [n for n in names or () if n not in known]
    if not unknown:
        return None
    return (f"argument --only: unknown experiment(s) {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(sorted(known))}{hint}")


def _folder_error(option, path):
    """Why ``path`` cannot be the folder of ``option`` (created if missing), or None."""
    if path.exists() and not path.is_dir():
        return (f"argument {option}: {str(path)!r} is a file, not a folder; give the path "
                f"of a folder (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return (f"argument {option}: cannot create the folder {str(path)!r} "
                f"({exc.strerror or type(exc).__name__}); give a folder that can be "
                f"created and written")
    if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        return (f"argument {option}: the folder {str(path)!r} cannot be read and written "
                f"by this user; give a writable folder")
    return None


def main(argv=None):
    """Entry point of the ``sklearn-papers`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "publish":
        return _publish_command(args)
    if args.list:  # names and titles only: no experiment module (torch, RDKit) imported
        return _list_command(args)
    return _reproduce_command(args, sys.argv[1:] if argv is None else list(argv))


def _publish_command(args):
    """``sklearn-papers publish``: the published pages of a finished run."""
    if not (args.report / "REPORT.md").is_file():
        return _usage_error("publish", f"argument --report: no REPORT.md in "
                            f"{str(args.report)!r}; give the --out folder of a "
                            f"finished 'sklearn-papers reproduce' run")
    problem = _folder_error("--to", args.to)
    if problem:
        return _usage_error("publish", problem)
    try:
        pages = publish(args.report, args.to, only=args.only)
    except (OSError, ValueError) as exc:
        return _usage_error("publish", str(exc).replace("\n", " "))
    for page in pages:
        print(f"wrote {page}")
    return 0


def _list_command(args):
    """``reproduce --list``: name, title, paper and method of each experiment."""
    listed = list_experiments()
    problem = _unknown(args.only, listed)
    if problem:
        return _usage_error("reproduce", problem)
    if args.only:
        listed = {name: listed[name] for name in args.only}
    width = max(map(len, listed), default=0)
    for name, (title, paper) in listed.items():
        try:
            method = f"method {method_of(name).key}"
        except KeyError:
            method = "no method in reproduce/_methods.py"
        print(f"{name:{width}s}  {title}  [{paper}; {method}]")
    return 0


def _run_one(ctx, exp, resume):
    """Run ``exp``, or read it back with ``resume``: ``(section, seconds, error, CPU
    seconds, note)``."""
    name = ctx.experiment
    damaged = _damaged_files(ctx) if resume or ctx.records_dir else []
    earlier = _load_section(ctx, exp) if resume else None
    if earlier is not None:
        section, secs, created, cpu = earlier
        ctx.log(f"[{name}] reused from the run of {created}")
        note = (f"**Resumed:** this whole section was read back from the run finished "
                f"{created} (`--resume`); its times are that run's.")
        return section, secs, None, cpu, note
    cpu_start = _cpu_seconds()
    with _deduplicated_warnings() as repeats:
        section, secs, error = run_experiment(exp, ctx)
    cpu = _cpu_seconds() - cpu_start
    if repeats:
        ctx.log(f"[{name}] repeated warnings not shown again: " + "; ".join(
            f"{n} x {label}" for label, n in repeats.items()))
    if error is None:
        _save_section(ctx, section, secs, exp, cpu)
    ctx.log(f"[{name}] {'done' if error is None else 'FAILED'} in {format_seconds(secs)} "
            f"(CPU time {format_seconds(cpu)})")
    note = " ".join(filter(None, [ctx.reused_note(), _recomputed_note(damaged)]))
    return section, secs, error, cpu, note


def _reproduce_command(args, words):
    """``sklearn-papers reproduce``: run the experiments and write the report."""
    import matplotlib

    matplotlib.use("Agg")
    experiments = _registry.get_experiments()
    names = args.only or [name for name, exp in experiments.items()
                          if not args.quick or exp.in_quick_run]
    problem = _unknown(names, experiments, " (see --list)")
    for option, path in [("--out", args.out), ("--records", args.records)]:
        problem = problem or (None if path is None else _folder_error(option, path))
    if problem:
        return _usage_error("reproduce", problem)
    ctx = RunContext(quick=args.quick, out_dir=args.out, random_state=args.seed,
                     verbose=args.verbose, resume=args.resume)
    left_out = [name for name in experiments if name not in names and not args.only]
    if left_out:
        ctx.log(f"left out of a quick run of every experiment (their quick protocols take "
                f"longer than the others together): {', '.join(left_out)}; run them with "
                f"--only {' '.join(left_out)} --quick")
    start = time.perf_counter()
    command = portable_command(words)
    results, notes, cpu, path = [], {}, {}, None
    load_start = load_average()
    for i, name in enumerate(names):
        exp = experiments[name]
        ctx.experiment, ctx.reused, ctx.computed, ctx.records = name, [], [], []
        ctx.records_dir = (None if args.records is None or not exp.records else
                           args.records / name / f"{'quick' if args.quick else 'full'}"
                                                 f"-seed{args.seed}")
        ctx.log(f"[{name}] {exp.title} ({i + 1}/{len(names)}, "
                f"{format_seconds(time.perf_counter() - start)} into the run) ...")
        section, secs, error, cpu[name], notes[name] = _run_one(ctx, exp, args.resume)
        if error is not None and args.verbose > 0:
            print(error, file=sys.stderr)
        results.append((exp, section, secs, error))
        # rewritten after every experiment: an interrupted long run keeps what finished
        path = write_report(args.out, results, quick=args.quick,
                            seconds=time.perf_counter() - start, command=command,
                            pending=[experiments[n] for n in names[i + 1:]],
                            notes=notes, load_start=load_start, cpu=cpu)
    if path is None:
        print("sklearn-papers: no experiments to run.", file=sys.stderr)
        return 2
    print(f"Report written to {path.resolve()}")
    return 1 if any(r[3] is not None for r in results) else 0


def _cpu_seconds():
    """CPU seconds used so far by this process and every process below it: live ones
    (pool workers that outlive an experiment) from ``/proc``, finished ones from their
    parents' counts of reaped children, so that a worker reaped later counts once. Off
    Linux, this process and its reaped children only."""
    try:
        return _process_tree_cpu_seconds(os.getpid())
    except (OSError, ValueError, IndexError):
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system


def _process_tree_cpu_seconds(root):
    """utime + stime + cutime + cstime summed over ``root`` and its live descendants."""
    times, children = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        times[int(entry.name)] = sum(int(f) for f in fields[11:15])
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    if root not in times:
        raise OSError("no /proc entry for this process")
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _deduplicated_warnings():
    """Show each distinct warning once per experiment; yield ``{"Category at file:line":
    count}`` of the repeats not shown (a library's ``catch_warnings``, as in every
    scikit-learn fit, undoes Python's own once-per-location rule)."""
    seen, repeats = set(), {}
    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        key = (category, str(message).splitlines()[0] if str(message) else "", filename,
               lineno)
        if key in seen:
            label = f"{category.__name__} at {Path(filename).name}:{lineno}"
            repeats[label] = repeats.get(label, 0) + 1
            return
        seen.add(key)
        original(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield repeats
    finally:
        if warnings.showwarning is show:
            warnings.showwarning = original


def _reads_back(path):
    """Whether a cached part file (a pickle, or a JSON record) can be read back."""
    try:
        data = path.read_bytes()
        pickle.loads(data) if path.suffix == ".pkl" else json.loads(data)
    except Exception:  # noqa: BLE001 - any failure to read back means damaged
        return False
    return True


def _damaged_files(ctx):
    """Files of the experiment's cache (``*.pkl``) and records (``*.json``) that cannot be
    read back: the experiment recomputes those parts."""
    found = []
    for folder, pattern in [(ctx.cache_dir(), "*.pkl"), (ctx.records_dir, "*.json")]:
        if folder is not None and Path(folder).is_dir():
            found += [p for p in sorted(Path(folder).rglob(pattern)) if not _reads_back(p)]
    return found


def _recomputed_note(damaged):
    """Markdown naming the ``damaged`` files this run recomputed and those it left, or
    ``""``."""
    fixed = [f"`{p.name}`" for p in damaged if _reads_back(p)]
    left = [f"`{p.name}`" for p in damaged if not _reads_back(p)]
    text = []
    if fixed:
        text.append(f"**Recomputed:** {len(fixed)} cached part file(s) could not be read "
                    f"back (damaged) and were computed again: {', '.join(fixed)}.")
    if left:
        text.append(f"**Damaged:** {len(left)} cached file(s) could not be read back and "
                    f"were not used by this run: {', '.join(left)}.")
    return " ".join(text)


def _section_file(ctx):
    return ctx.cache_dir() / "_section.pkl"


def _source_digest(exp):
    """Digest of the experiment module's source (``""`` when unreadable)."""
    try:
        path = inspect.getsourcefile(exp.run)
        return hashlib.sha1(Path(path).read_bytes()).hexdigest() if path else ""
    except (OSError, TypeError):
        return ""


def _save_section(ctx, section, seconds, exp, cpu):
    """Keep a finished experiment's section, wall and CPU seconds for ``--resume``."""
    path = _section_file(ctx)
    path.parent.mkdir(parents=True, exist_ok=True)
    result = dict(section.to_dict(),
                  figures=[str(Path(f).resolve()) for f in section.figures])
    record = {"result": result, "seconds": seconds, "cpu": cpu, "created": utc_now(),
              "source": _source_digest(exp)}
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(record))
    tmp.replace(path)


def _load_section(ctx, exp):
    """``(section, seconds, created, cpu_seconds)`` of an earlier finished run; None when
    there is none, its module changed since, or one of its figures is gone."""
    try:
        record = pickle.loads(_section_file(ctx).read_bytes())
        section = Result.from_dict(record["result"])
        figures = [Path(f).resolve() for f in section.figures]
    except Exception:  # noqa: BLE001 - a missing or broken file means: run it again
        return None
    if (not all(f.is_file() for f in figures)
            or record.get("source", "") != _source_digest(exp)):
        return None
    section.figures = figures
    return section, record["seconds"], record["created"], record.get("cpu")


if __name__ == "__main__":
    raise SystemExit(main())
