"""The experiment registry of ``sklearn-papers reproduce``.

Every module-level ``EXPERIMENT`` or ``EXPERIMENT_<SUFFIX>`` (a follow-up) of a module of
this package is an :class:`Experiment`, whose ``run(ctx)`` takes a :class:`RunContext` and
returns a :class:`~._result.Result`. See ``CONTRIBUTING.md`` for how a module reads.
"""

import ast
import hashlib
import importlib
import os
import pickle
import pkgutil
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sklearn_papers.reproduce._records import read_record, write_record
from sklearn_papers.reproduce._report import utc_now
from sklearn_papers.reproduce._result import Result

__all__ = ["Experiment", "Result", "RunContext", "format_seconds", "get_experiments",
           "list_experiments"]


#: Version of the cache files' layout; files of another version are ignored.
_CACHE_FORMAT = 1


def format_seconds(seconds):
    """``"1h05m"``, ``"12m30s"`` or ``"45s"`` for a duration in seconds."""
    hours, rest = divmod(max(0, int(round(seconds))), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@dataclass
class RunContext:
    """What an experiment is given: mode, output folder, seed and progress settings.

    Attributes
    ----------
    quick, out_dir, random_state, verbose, resume
        ``--quick``, ``--out``, ``--seed``, ``--verbose`` (0 silences progress) and
        ``--resume`` (parts cached by an earlier run are read back, :meth:`cached`).
    experiment : str, default=""
        The experiment being run (set by the command line).
    reused, computed : list
        Parts read back from the cache (``(key, date computed)``), and keys computed.
    records_dir : pathlib.Path or None, default=None
        ``--records`` folder of this experiment: :meth:`cached` reads and writes text
        records there (:mod:`._records`), whatever ``resume`` says.
    records : list of dict
        The records read or written for the current experiment.
    shared : dict
        Values an experiment shares with its follow-up (``share=True`` of :meth:`cached`).
    """

    quick: bool
    out_dir: Path
    random_state: int = 0
    verbose: int = 1
    resume: bool = False
    experiment: str = ""
    reused: list = field(default_factory=list, repr=False)
    computed: list = field(default_factory=list, repr=False)
    records_dir: Path = None
    records: list = field(default_factory=list, repr=False)
    shared: dict = field(default_factory=dict, repr=False)

    def figure_path(self, name):
        """Path for a figure file ``<out_dir>/<name>`` (the folder exists)."""
        self.out_dir = Path(self.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        return self.out_dir / name

    def cache_dir(self, experiment=None):
        """``<out_dir>/.cache/<quick|full>-seed<random_state>/<experiment>/`` (default: the
        current experiment)."""
        mode = "quick" if self.quick else "full"
        name = experiment if experiment is not None else (self.experiment or "_")
        return Path(self.out_dir) / ".cache" / f"{mode}-seed{self.random_state}" / name

    def _cache_file(self, key, params, owner=None):
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(key)).strip("_")[:80] or "part"
        digest = hashlib.sha1(repr((str(key), _canonical(params))).encode()).hexdigest()[:12]
        return self.cache_dir(owner) / f"{safe}-{digest}.pkl"

    def _shared_key(self, key, params, owner):
        return (owner or self.experiment, str(key), repr(_canonical(params)))

    def _read(self, key, params, owner=None):
        """The stored record of a part (a text record, or a cache file) or None."""
        if self.records_dir is not None and owner is None:
            return read_record(self.records_dir, key, _canonical(params))
        try:
            with self._cache_file(key, params, owner).open("rb") as fh:
                record = pickle.load(fh)
        except Exception:  # noqa: BLE001 - a missing or broken file is recomputed
            return None
        if (record.get("format") == _CACHE_FORMAT and record.get("key") == str(key)
                and record.get("params") == _canonical(params)):
            return record
        return None

    def _write(self, key, params, owner, value, cpu_seconds):
        """Store a computed part atomically (no half file if killed); return its record."""
        if self.records_dir is not None and owner is None:
            return write_record(self.records_dir, key, _canonical(params), value,
                                cpu_seconds=cpu_seconds)
        path = self._cache_file(key, params, owner)
        record = {"format": _CACHE_FORMAT, "key": str(key), "params": _canonical(params),
                  "created": utc_now(), "value": value}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with tmp.open("wb") as fh:
            pickle.dump(record, fh)
        os.replace(tmp, path)
        return record

    def _reads_stored(self, owner):
        """Whether stored parts are read back: with ``--resume``, or from text records."""
        return self.resume or (self.records_dir is not None and owner is None)

    def has_cached(self, key, params=None, owner=None):
        """Whether :meth:`cached` would read ``key`` back instead of computing it."""
        if self._shared_key(key, params, owner) in self.shared:
            return True
        return self._reads_stored(owner) and self._read(key, params, owner) is not None

    def cached(self, key, compute, *, params=None, cpu_seconds=None, owner=None,
               share=False):
        """Return ``compute()`` (a value that pickles), cached under ``key``.

        With ``resume=True`` a value cached earlier under the same key, params, mode and
        seed is returned instead and listed in :attr:`reused`. Every computed value is
        written at once, so a stopped run can be resumed. With :attr:`records_dir` set,
        the value's JSON form is returned.

        Parameters
        ----------
        key : str
            Names the part, unique within the experiment (e.g. ``"ESOL/default/seed=3"``).
        compute : callable
        params : object, default=None
            Settings the value depends on: a cached value is used only when they are equal.
        cpu_seconds : float, default=None
            CPU seconds of a value computed elsewhere, for its record; None measures it.
        owner : str, default=None
            The experiment whose part this is (a follow-up reading its main experiment's):
            from :attr:`shared`, else cached in the owner's folder.
        share : bool, default=False
            Keep the value in :attr:`shared` for the rest of the run.
        """
        shared_key = self._shared_key(key, params, owner)
        if shared_key in self.shared:
            return self.shared[shared_key]
        record = self._read(key, params, owner) if self._reads_stored(owner) else None
        if record is not None:
            self.reused.append((str(key), record["created"]))
        else:
            start = os.times()
            value = compute()
            end = os.times()
            if cpu_seconds is None:
                cpu_seconds = (end.user - start.user) + (end.system - start.system)
            record = self._write(key, params, owner, value, cpu_seconds)
            self.computed.append(str(key))
        if self.records_dir is not None and owner is None:
            self.records.append(record)
        if share:
            self.shared[shared_key] = record["value"]
        return record["value"]

    def reused_note(self):
        """Markdown sentence on which parts came from an earlier run, or ``""``."""
        if not self.reused:
            return ""
        dates = sorted({d for _, d in self.reused})
        n_new = len(self.computed)
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        keys = ", ".join(f"`{k}` ({d})" for k, d in self.reused[:10])
        if len(self.reused) > 10:
            keys += f", and {len(self.reused) - 10} more"
        return (f"**Resumed:** {len(self.reused)} of {len(self.reused) + n_new} cached parts "
                f"were read back from an earlier run (`--resume`; computed {when}); "
                f"{n_new} computed in this run. Reused: {keys}.")

    def progress(self, iterable=None, *, desc=None, total=None):
        """A progress bar: tqdm on a terminal, else log lines with the time left (leaving
        out steps read from the cache); silent when ``verbose == 0``."""
        if self.verbose > 0 and not _is_terminal():
            return _LineProgress(self, iterable, desc=desc, total=total)
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, disable=self.verbose <= 0, leave=False)

    @property
    def estimator_verbose(self):
        """``verbose`` for an estimator: its own bars on a terminal only, else 0."""
        return self.verbose if _is_terminal() else 0

    def log(self, message):
        """Print a progress line unless silenced."""
        if self.verbose > 0:
            from tqdm.auto import tqdm

            tqdm.write(message)


def _canonical(params):
    """A picklable, comparable form of ``params`` (dicts sorted, tuples as lists)."""
    if isinstance(params, dict):
        return [(str(k), _canonical(v)) for k, v in sorted(params.items(),
                                                            key=lambda kv: str(kv[0]))]
    if isinstance(params, (list, tuple)):
        return [_canonical(v) for v in params]
    if isinstance(params, (str, int, float, bool, type(None))):
        return params
    if hasattr(params, "item") and getattr(params, "ndim", 1) == 0:
        return params.item()
    return repr(params)


def _is_terminal():
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _LineProgress:
    """Progress as log lines (for output to a file): step, elapsed, estimated time left."""

    min_interval = 5.0

    def __init__(self, ctx, iterable=None, *, desc=None, total=None):
        self.ctx, self.iterable, self.desc = ctx, iterable, desc or ctx.experiment or "progress"
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total, self.n, self.n_reused = total, 0, 0
        self.start = self._last = time.perf_counter()
        self._seen = (len(ctx.reused), len(ctx.computed))

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        """Count ``n`` finished steps (those read from the cache alone are not timed)."""
        self.n += n
        seen = (len(self.ctx.reused), len(self.ctx.computed))
        if seen[0] > self._seen[0] and seen[1] == self._seen[1]:
            self.n_reused += n
        self._seen = seen
        now = time.perf_counter()
        if now - self._last >= self.min_interval or (self.total and self.n >= self.total):
            self._last = now
            self.ctx.log(self.line())

    def line(self):
        """``[desc] n/total, elapsed, about ... left (k from the cache)``."""
        elapsed = time.perf_counter() - self.start
        text = f"[{self.desc}] {self.n}/{self.total or '?'}, {format_seconds(elapsed)} elapsed"
        run = self.n - self.n_reused
        if self.total and self.n < self.total and run > 0:
            text += f", about {format_seconds(elapsed / run * (self.total - self.n))} left"
        if self.n_reused:
            text += f" ({self.n_reused} from the cache)"
        return text


@dataclass(frozen=True)
class Experiment:
    """One paper's headline claims, re-run on bundled data.

    Attributes
    ----------
    name : str
        Name used by ``--only``, lower case, stable once published (e.g. ``"duvenaud"``).
    title, paper : str
        Section title in the report; citation (authors, year, title, venue).
    run : callable
        ``run(ctx: RunContext) -> Result``.
    records : bool, default=False
        Its parts can be kept as text records (``--records``): plain numbers.
    in_quick_run : bool, default=True
        False leaves it out of ``reproduce --quick`` without ``--only`` (``make demo``).
    claims : Claims, default={}
        The claims it judges (:func:`~._claims.declare`).
    protocol : Protocol or None, default=None
        Its settings and what ``--quick`` shortens (:class:`~._common.Protocol`).
    """

    name: str
    title: str
    paper: str
    run: Callable
    records: bool = False
    in_quick_run: bool = True
    claims: dict = field(default_factory=dict)
    protocol: object = None


#: A module-level name that registers an experiment.
_EXPERIMENT_NAME = re.compile(r"EXPERIMENT(_\w+)?")


def _module_experiments(module):
    """The :class:`Experiment` objects that ``module`` registers."""
    return [value for key, value in vars(module).items()
            if _EXPERIMENT_NAME.fullmatch(key) and isinstance(value, Experiment)]


def _experiment_modules():
    """``pkgutil`` module infos of the experiment modules (names without a leading ``_``)."""
    import sklearn_papers.reproduce as pkg

    return [info for info in pkgutil.iter_modules(pkg.__path__)
            if not info.name.startswith("_")]


def get_experiments():
    """Discover every experiment module and return ``{name: Experiment}`` sorted by name."""
    found = {}
    for info in _experiment_modules():
        module = importlib.import_module(f"sklearn_papers.reproduce.{info.name}")
        for exp in _module_experiments(module):
            if exp.name in found:
                raise ValueError(f"two experiments are named {exp.name!r}: give the one in "
                                 f"{module.__name__} another name")
            found[exp.name] = exp
    return dict(sorted(found.items()))


def list_experiments():
    """``{name: (title, paper)}`` of every experiment sorted by name, as in
    :func:`get_experiments`, read without importing the modules (torch, RDKit) where their
    ``Experiment(...)`` fields are literal strings."""
    found = {}
    for info in _experiment_modules():
        folder = getattr(info.module_finder, "path", None)  # None: not a plain folder
        listed = None if folder is None or info.ispkg else _static_experiments(
            Path(folder) / f"{info.name}.py")
        if listed is None:  # not plain strings: import the module
            listed = [{"name": exp.name, "title": exp.title, "paper": exp.paper}
                      for exp in _module_experiments(importlib.import_module(
                          f"sklearn_papers.reproduce.{info.name}"))]
        for fields in listed:
            found[fields["name"]] = (fields["title"], fields["paper"])
    return dict(sorted(found.items()))


def _static_experiments(path):
    """The ``name``, ``title`` and ``paper`` of each experiment the module at ``path``
    registers, read with :mod:`ast` (a string constant assigned above may stand for a
    field); None when the file cannot be parsed or a field is not a literal string."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    constants, found = {}, {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        target, value = node.targets[0].id, node.value
        if _EXPERIMENT_NAME.fullmatch(target):
            found[target] = _call_fields(value, constants)
        elif isinstance(value, ast.Constant) and isinstance(value.value, str):
            constants[target] = value.value
        else:
            constants.pop(target, None)  # reassigned to something else
    return None if None in found.values() else list(found.values())


def _call_fields(call, constants):
    """The literal ``name``, ``title`` and ``paper`` of an ``Experiment(...)`` node, or
    None."""
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Experiment"
            and not call.args):
        return None
    fields = {}
    for kw in call.keywords:
        if kw.arg in ("name", "title", "paper"):
            value = (kw.value.value if isinstance(kw.value, ast.Constant) else
                     constants.get(getattr(kw.value, "id", None)))
            if not isinstance(value, str):
                return None
            fields[kw.arg] = value
    return fields if len(fields) == 3 else None


def run_experiment(exp, ctx):
    """Run one experiment; return ``(section, seconds, error_text_or_None)``."""
    start = time.perf_counter()
    try:
        return exp.run(ctx), time.perf_counter() - start, None
    except Exception:  # noqa: BLE001 - one failing paper must not hide the others
        return None, time.perf_counter() - start, traceback.format_exc()
