"""The experiment registry of ``sklearn-papers reproduce``.

One module per paper lives in :mod:`sklearn_papers.reproduce` (e.g. ``duvenaud.py``). It
defines a module-level ``EXPERIMENT = Experiment(...)``; modules are discovered by name, so
adding a paper means adding one file. An experiment's ``run`` takes a :class:`RunContext`
and returns a :class:`Section` of the report.
"""

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["Experiment", "RunContext", "Section", "get_experiments"]


@dataclass
class Section:
    """What one experiment contributes to ``REPORT.md``.

    Attributes
    ----------
    markdown : str
        Body of the section: tables (ours beside the paper's, split and metric named) and
        prose. Headings inside it start at level 3 (``###``).
    figures : list of pathlib.Path
        PNG files written into the output directory, embedded under the body.
    shortened : str
        In ``--quick`` mode, what was shortened relative to the paper's protocol; empty for
        a full run.
    """

    markdown: str
    figures: list = field(default_factory=list)
    shortened: str = ""


@dataclass
class RunContext:
    """What an experiment is given: mode, output folder, seed and progress settings."""

    quick: bool
    out_dir: Path
    random_state: int = 0
    verbose: int = 1

    def figure_path(self, name):
        """Path for a figure file ``<out_dir>/<name>`` (the folder exists)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        return self.out_dir / name

    def progress(self, iterable=None, *, desc=None, total=None):
        """A tqdm progress bar, silent when ``verbose == 0``."""
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, disable=self.verbose <= 0, leave=False)

    def log(self, message):
        """Print a progress line unless silenced."""
        if self.verbose > 0:
            from tqdm.auto import tqdm

            tqdm.write(message)


@dataclass(frozen=True)
class Experiment:
    """One paper's headline claim, re-run on bundled data.

    Attributes
    ----------
    name : str
        Name used by ``--only``, lower case: the first author (e.g. ``"duvenaud"``) or
        the method (e.g. ``"supcon"``, ``"group_norm"``), as the paper's issue names it.
    title : str
        Section title in the report.
    paper : str
        Citation: authors, year, title, venue.
    run : callable
        ``run(ctx: RunContext) -> Section``.
    """

    name: str
    title: str
    paper: str
    run: Callable


def get_experiments():
    """Discover every experiment module and return ``{name: Experiment}`` sorted by name."""
    import sklearn_papers.reproduce as pkg

    found = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        exp = getattr(module, "EXPERIMENT", None)
        if isinstance(exp, Experiment):
            found[exp.name] = exp
    return dict(sorted(found.items()))


def run_experiment(exp, ctx):
    """Run one experiment; return ``(section, seconds, error_text_or_None)``."""
    import traceback

    start = time.perf_counter()
    try:
        section = exp.run(ctx)
        error = None
    except Exception:  # noqa: BLE001 - one failing paper must not hide the others
        section = None
        error = traceback.format_exc()
    return section, time.perf_counter() - start, error
