"""Command line: ``sklearn-papers reproduce [--quick] [--only NAME ...] [--out DIR]``."""

import argparse
import shlex
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(
        prog="sklearn-papers",
        description="Re-run the headline claims of the papers implemented in sklearn_papers.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser(
        "reproduce",
        help="run the experiments and write REPORT.md with tables and plots",
        description="Run each paper's experiment on bundled data and write a report.",
    )
    rep.add_argument("--quick", action="store_true",
                     help="shortened protocols that finish in minutes on 2 CPU cores")
    rep.add_argument("--only", nargs="+", metavar="NAME",
                     help="run only these experiments (see --list)")
    rep.add_argument("--out", default="reports", type=Path,
                     help="output folder for REPORT.md and PNG plots (default: reports/; "
                          "a REPORT.md already there is replaced, so give --only runs "
                          "their own folder to keep a full report)")
    rep.add_argument("--seed", default=0, type=int, help="random seed (default: 0)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--verbose", default=1, type=int,
                     help="0 silences progress output (default: 1)")
    return parser


def main(argv=None):
    """Entry point of the ``sklearn-papers`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_papers.reproduce._registry import RunContext, get_experiments, run_experiment
    from sklearn_papers.reproduce._report import write_report

    experiments = get_experiments()
    if args.list:
        for name, exp in experiments.items():
            print(f"{name:15s} {exp.title}  [{exp.paper}]")
        return 0
    names = args.only or list(experiments)
    unknown = [n for n in names if n not in experiments]
    if unknown:
        print(f"sklearn-papers: unknown experiment(s) {unknown}; "
              f"available: {sorted(experiments)}", file=sys.stderr)
        return 2
    ctx = RunContext(quick=args.quick, out_dir=args.out, random_state=args.seed,
                     verbose=args.verbose)
    start = time.perf_counter()
    words = sys.argv[1:] if argv is None else list(argv)
    command = "sklearn-papers " + shlex.join(str(w) for w in words)
    results, path = [], None
    for i, name in enumerate(names):
        exp = experiments[name]
        ctx.log(f"[{name}] {exp.title} ...")
        section, secs, error = run_experiment(exp, ctx)
        status = "done" if error is None else "FAILED"
        ctx.log(f"[{name}] {status} in {secs:.0f} s")
        if error is not None and args.verbose > 0:
            print(error, file=sys.stderr)
        results.append((exp, section, secs, error))
        # rewritten after every experiment: an interrupted long run keeps what finished
        path = write_report(args.out, results, quick=args.quick,
                            seconds=time.perf_counter() - start, command=command,
                            pending=[experiments[n] for n in names[i + 1:]])
    if path is None:
        print("sklearn-papers: no experiments to run.", file=sys.stderr)
        return 2
    print(f"Report written to {path.resolve()}")
    return 1 if any(r[3] is not None for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
