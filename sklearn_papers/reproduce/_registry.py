"""The experiment registry of ``sklearn-papers reproduce``.

One module per paper lives in :mod:`sklearn_papers.reproduce` (e.g. ``duvenaud.py``). It
defines a module-level ``EXPERIMENT = Experiment(...)``; modules are discovered by name, so
adding a paper means adding one file. An experiment's ``run`` takes a :class:`RunContext`
and returns a :class:`~._result.Result`: its section of the report as data.

An experiment module reads top-down:

1. its docstring: the paper, the data, what is checked;
2. ``CLAIMS = declare(Claim(...), ...)``: every claim it judges, with its words, arms,
   metric and rule (:func:`~._claims.declare`), and ``PROTOCOL = Protocol(full=...,
   quick=...)``: seeds, sizes and what ``--quick`` shortens (:class:`~._common.Protocol`);
3. the parts: module-level functions computing one fit, fold or seed from plain
   arguments, so that :func:`~._parallel.cached_parts` can cache them and run them on
   worker processes;
4. ``run``: reads the protocol, runs the parts, judges the declared claims and builds the
   :class:`~._result.Result`, through the shared helpers (:mod:`._common` for seeds,
   threads and figures, :mod:`._parallel` for parts, :mod:`._records` for records);
5. ``EXPERIMENT = Experiment(..., claims=CLAIMS, protocol=PROTOCOL)``.

A follow-up study of a paper's claims (why a claim fails, what changes it) is an experiment
of its own, defined in the same module (or in ``<name>_followup.py``) as
``EXPERIMENT_FOLLOWUP = Experiment(name="<name>_followup", ...)``: every module-level ``EXPERIMENT`` or ``EXPERIMENT_<SUFFIX>`` that
is an :class:`Experiment` is registered, so ``reproduce --only <name>_followup`` runs it
alone, with its own report section, cache folder, CPU time and published page.
"""

import datetime
import hashlib
import importlib
import os
import pickle
import pkgutil
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sklearn_papers.reproduce._result import Result

__all__ = ["Experiment", "Result", "RunContext", "format_seconds", "get_experiments",
           "list_experiments"]


#: Version of the cache files' layout; files of another version are ignored.
_CACHE_FORMAT = 1


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def format_seconds(seconds):
    """``"1h05m"``, ``"12m30s"`` or ``"45s"`` for a duration in seconds."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


@dataclass
class RunContext:
    """What an experiment is given: mode, output folder, seed and progress settings.

    Attributes
    ----------
    quick : bool
        ``--quick`` mode (shortened protocols).
    out_dir : pathlib.Path
        Output folder of the report and figures.
    random_state : int, default=0
        Base seed (``--seed``).
    verbose : int, default=1
        0 silences progress output.
    resume : bool, default=False
        ``--resume``: parts cached by an earlier run into ``out_dir`` (see :meth:`cached`)
        are read back instead of recomputed.
    experiment : str, default=""
        Name of the experiment being run (set by the command line before each one); the
        cache and the progress lines are per experiment.
    reused : list of (str, str)
        Parts of the current experiment read back from the cache: ``(key, date computed)``.
    computed : list of str
        Keys of the parts computed (and cached) by this run.
    records_dir : pathlib.Path or None, default=None
        Folder of text records of finished parts (set by the command line's ``--records``
        for experiments that record their parts, see :mod:`._records`). When set,
        :meth:`cached` reads and writes JSON records there instead of the pickles of the
        output folder, and reuses a record whatever ``resume`` says: the records are
        results kept with the source, which any later run continues.
    records : list of dict
        The records read or written for the current experiment (their ``commit`` fields
        say which code computed each part).
    shared : dict
        Values of the parts that an experiment shares with its follow-up (``share=True``
        of :meth:`cached`), kept for the whole run, by owner, key and params.

    Notes
    -----
    Caching is opt-in: an experiment that wraps its independent parts (one fold, one arm,
    one seed) in :meth:`cached` can be resumed part by part; one that does not is simply
    recomputed, or reused whole when it finished in the earlier run.
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

    # -- caching of finished parts (opt-in) ------------------------------------------------
    def cache_dir(self, experiment=None):
        """Folder of the cached parts of ``experiment`` (default: the current one).

        ``<out_dir>/.cache/<quick|full>-seed<random_state>/<experiment>/``: a quick run never
        reads a full run's parts, nor a run with another ``--seed``.
        """
        mode = "quick" if self.quick else "full"
        name = experiment if experiment is not None else (self.experiment or "_")
        return Path(self.out_dir) / ".cache" / f"{mode}-seed{self.random_state}" / name

    def _cache_file(self, key, params, owner=None):
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(key)).strip("_")[:80] or "part"
        digest = hashlib.sha1(repr((str(key), _canonical(params))).encode()).hexdigest()[:12]
        return self.cache_dir(owner) / f"{safe}-{digest}.pkl"

    def has_cached(self, key, params=None, owner=None):
        """Whether :meth:`cached` would read the value of ``key`` back instead of computing
        it."""
        if self._shared_key(key, params, owner) in self.shared:
            return True
        if self.records_dir is not None:
            from sklearn_papers.reproduce._records import read_record

            return read_record(self.records_dir, key, _canonical(params)) is not None
        if not self.resume:
            return False
        return self._read_pickle(key, params, owner) is not None

    def _shared_key(self, key, params, owner):
        return (owner or self.experiment, str(key), repr(_canonical(params)))

    def _read_pickle(self, key, params, owner=None):
        path = self._cache_file(key, params, owner)
        if not path.is_file():
            return None
        try:
            with path.open("rb") as fh:
                record = pickle.load(fh)
        except Exception:  # noqa: BLE001 - a broken cache file is recomputed
            return None
        if (record.get("format") == _CACHE_FORMAT and record.get("key") == str(key)
                and record.get("params") == _canonical(params)):
            return record
        return None

    def _cached_record(self, key, compute, params, cpu_seconds):
        from sklearn_papers.reproduce._records import read_record, write_record

        canonical = _canonical(params)
        record = read_record(self.records_dir, key, canonical)
        if record is not None:
            self.reused.append((str(key), record["created"]))
            self.records.append(record)
            return record["value"]
        start = os.times()
        value = compute()
        if cpu_seconds is None:
            end = os.times()
            cpu_seconds = (end.user - start.user) + (end.system - start.system)
        record = write_record(self.records_dir, key, canonical, value,
                              cpu_seconds=cpu_seconds)
        self.records.append(record)
        self.computed.append(str(key))
        return record["value"]

    def cached(self, key, compute, *, params=None, cpu_seconds=None, owner=None,
               share=False):
        """Return ``compute()``, cached in the output folder under ``key``.

        With ``resume=True`` a value cached by an earlier run under the same key, params,
        mode and seed is returned instead of calling ``compute``, and recorded in
        :attr:`reused` with the date it was computed (the report lists them). Every
        computed value is written to the cache, so an interrupted run can be resumed.

        Parameters
        ----------
        key : str
            Names the part, unique within the experiment (e.g. ``"ESOL/default/seed=3"``).
        compute : callable
            ``compute() -> value``; the value must pickle.
        params : object, default=None
            Settings the value depends on (a dict of hyper-parameters): a cached value is
            used only when they are equal, so a changed protocol recomputes.
        cpu_seconds : float, default=None
            CPU seconds the value took, when it was computed elsewhere (a worker process);
            kept in the part's record (:attr:`records_dir`). None measures ``compute()``.
        owner : str, default=None
            The experiment whose part this is, when not the current one: a follow-up
            reading its main experiment's parts. The value is read from :attr:`shared`
            when that experiment computed it earlier in this run (``share=True``), else
            cached (or read back) in the owner's folder.
        share : bool, default=False
            Keep the value in :attr:`shared` for the rest of the run, for a follow-up.

        Returns
        -------
        value : object
            With :attr:`records_dir` set, the value's JSON form (tuples read back as
            lists, arrays as lists).
        """
        shared_key = self._shared_key(key, params, owner)
        if shared_key in self.shared:
            return self.shared[shared_key]
        if self.records_dir is not None and owner is None:
            value = self._cached_record(key, compute, params, cpu_seconds)
            if share:
                self.shared[shared_key] = value
            return value
        path = self._cache_file(key, params, owner)
        record = self._read_pickle(key, params, owner) if self.resume else None
        if record is not None:
            self.reused.append((str(key), record["created"]))
            if share:
                self.shared[shared_key] = record["value"]
            return record["value"]
        value = compute()
        record = {"format": _CACHE_FORMAT, "key": str(key), "params": _canonical(params),
                  "created": _now().strftime("%Y-%m-%d %H:%M UTC"), "value": value}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with tmp.open("wb") as fh:
            pickle.dump(record, fh)
        os.replace(tmp, path)  # atomic: a run killed while writing leaves no half file
        self.computed.append(str(key))
        if share:
            self.shared[shared_key] = value
        return value

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

    # -- progress --------------------------------------------------------------------------
    def progress(self, iterable=None, *, desc=None, total=None):
        """A progress bar showing elapsed time and the estimated time left.

        A tqdm bar on a terminal; elsewhere (a log file) one line per step, at most every
        few seconds, with elapsed time and an estimate of the time left that leaves out
        the steps read back from the cache. Silent when ``verbose == 0``.
        """
        if self.verbose > 0 and not _is_terminal():
            return _LineProgress(self, iterable, desc=desc, total=total)
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, disable=self.verbose <= 0, leave=False)

    @property
    def estimator_verbose(self):
        """``verbose`` to pass to an estimator: its own progress bars on a terminal only.

        0 when the output goes to a file, where a bar's redraws would fill the log.
        """
        return self.verbose if _is_terminal() else 0

    def log(self, message):
        """Print a progress line unless silenced."""
        if self.verbose > 0:
            from tqdm.auto import tqdm

            tqdm.write(message)


def _canonical(params):
    """A picklable, comparable form of ``params`` (dicts sorted, tuples as lists)."""
    if isinstance(params, dict):
        return [(str(k), _canonical(v)) for k, v in sorted(params.items(), key=lambda kv:
                                                            str(kv[0]))]
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
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total, self.n, self.n_reused = total, 0, 0
        self.start = self._last = time.perf_counter()
        self._seen_reused, self._seen_computed = len(ctx.reused), len(ctx.computed)
        self.postfix = ""

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)

    def __len__(self):
        return self.total or 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, n=1):
        """Count ``n`` finished steps (steps whose parts all came from the cache are not
        used for the estimate)."""
        self.n += n
        reused = len(self.ctx.reused) > self._seen_reused
        computed = len(self.ctx.computed) > self._seen_computed
        if reused and not computed:
            self.n_reused += n
        self._seen_reused, self._seen_computed = len(self.ctx.reused), len(self.ctx.computed)
        now = time.perf_counter()
        if now - self._last >= self.min_interval or (self.total and self.n >= self.total):
            self._last = now
            self.ctx.log(self.line())

    def line(self):
        elapsed = time.perf_counter() - self.start
        text = f"[{self.desc}] {self.n}/{self.total if self.total else '?'}"
        text += f", {format_seconds(elapsed)} elapsed"
        run = self.n - self.n_reused
        if self.total and self.n < self.total and run > 0:
            left = elapsed / run * (self.total - self.n)
            text += f", about {format_seconds(left)} left"
        if self.n_reused:
            text += f" ({self.n_reused} from the cache)"
        if self.postfix:
            text += f" {self.postfix}"
        return text

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        items = dict(ordered_dict or {}, **kwargs)
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s="", refresh=True):
        self.postfix = str(s)

    def set_description(self, desc=None, refresh=True):
        self.desc = desc or self.desc

    def refresh(self):
        pass

    def write(self, message):
        self.ctx.log(message)

    def close(self):
        pass


@dataclass(frozen=True)
class Experiment:
    """One paper's headline claim, re-run on bundled data.

    Attributes
    ----------
    name : str
        Name used by ``--only``, lower case: the first author (e.g. ``"duvenaud"``) or
        the method (e.g. ``"supcon"``, ``"group_norm"``); it stays stable once published.
    title : str
        Section title in the report.
    paper : str
        Citation: authors, year, title, venue.
    run : callable
        ``run(ctx: RunContext) -> Result``.
    records : bool, default=False
        The experiment's parts can be kept as text records (``--records``; see
        :attr:`RunContext.records_dir`): their values are plain numbers.
    in_quick_run : bool, default=True
        Whether ``reproduce --quick`` without ``--only`` (``make demo``) runs it. False for
        an experiment whose quick protocol alone takes longer than the demo's budget of
        about 15 minutes on 2 cores; ``--only NAME --quick`` and the full run still run it.
    claims : Claims, default={}
        The claims it judges, as its module declares them (:func:`~._claims.declare`).
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


def _is_experiment_name(name):
    """Whether a module-level ``name`` registers an experiment: ``EXPERIMENT`` or
    ``EXPERIMENT_<SUFFIX>`` (e.g. ``EXPERIMENT_FOLLOWUP``)."""
    return name == "EXPERIMENT" or (name.startswith("EXPERIMENT_")
                                    and len(name) > len("EXPERIMENT_"))


def _module_experiments(module):
    """The :class:`Experiment` objects that ``module`` registers (see the module docstring)."""
    return [value for key, value in vars(module).items()
            if _is_experiment_name(key) and isinstance(value, Experiment)]


def get_experiments():
    """Discover every experiment module and return ``{name: Experiment}`` sorted by name
    (a module's ``EXPERIMENT`` and each of its ``EXPERIMENT_<SUFFIX>``)."""
    import sklearn_papers.reproduce as pkg

    found = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for exp in _module_experiments(module):
            if exp.name in found:
                raise ValueError(f"two experiments are named {exp.name!r}: give the one in "
                                 f"{module.__name__} another name")
            found[exp.name] = exp
    return dict(sorted(found.items()))


def list_experiments():
    """Name, title and paper of every experiment, read without importing the modules.

    ``--list`` needs only the strings of each module's ``EXPERIMENT = Experiment(name=...,
    title=..., paper=...)``; importing the modules would import torch, RDKit and the
    estimators (tens of seconds). The module source is parsed instead, and a literal
    string (or a module-level constant string holding it) is read; a module whose
    ``EXPERIMENT`` is not written that way is imported, as :func:`get_experiments` does.

    Returns
    -------
    experiments : dict
        ``{name: (title, paper)}`` sorted by name, the same as ``{name: (exp.title,
        exp.paper)}`` over :func:`get_experiments`.
    """
    import sklearn_papers.reproduce as pkg

    found = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        folder = getattr(info.module_finder, "path", None)  # None: not a plain folder
        listed = None if folder is None or info.ispkg else _static_experiments(
            Path(folder) / f"{info.name}.py")
        if listed is None:  # not plain strings: import the module
            module = importlib.import_module(f"{pkg.__name__}.{info.name}")
            listed = [{"name": exp.name, "title": exp.title, "paper": exp.paper}
                      for exp in _module_experiments(module)]
        for fields in listed:
            found[fields["name"]] = (fields["title"], fields["paper"])
    return dict(sorted(found.items()))


def _static_experiment_fields(path, target="EXPERIMENT"):
    """``{"name", "title", "paper"}`` strings of ``<target> = Experiment(...)`` in the
    module at ``path``; ``{}`` when it defines no ``target``; None when they are not
    literal strings (or module-level string constants) or the file cannot be parsed."""
    calls = _static_experiment_calls(path)
    if calls is None:
        return None
    constants, found = calls
    return {} if target not in found else _call_fields(found[target], constants)


def _static_experiments(path):
    """The ``{"name", "title", "paper"}`` of every experiment the module at ``path``
    registers (``EXPERIMENT`` and ``EXPERIMENT_<SUFFIX>``), or None when one of them is not
    written with literal strings (the module must then be imported)."""
    calls = _static_experiment_calls(path)
    if calls is None:
        return None
    constants, found = calls
    listed = [_call_fields(call, constants) for call in found.values()]
    return None if any(fields is None for fields in listed) else listed


def _static_experiment_calls(path):
    """``(constants, {target: call node})`` of the module at ``path``: its module-level
    string constants and the values assigned to experiment names; None when the file
    cannot be parsed."""
    import ast

    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    constants, calls = {}, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            target = node.targets[0].id
            if _is_experiment_name(target):
                calls[target] = node.value
            elif isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                constants[target] = node.value.value
            else:
                constants.pop(target, None)  # reassigned to something else
    return constants, calls


def _call_fields(call, constants):
    """The literal ``name``, ``title`` and ``paper`` of an ``Experiment(...)`` call node,
    or None."""
    import ast

    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "Experiment" and not call.args):
        return None
    fields = {}
    for kw in call.keywords:
        if kw.arg not in ("name", "title", "paper"):
            continue
        if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            fields[kw.arg] = kw.value.value
        elif isinstance(kw.value, ast.Name) and kw.value.id in constants:
            fields[kw.arg] = constants[kw.value.id]
        else:
            return None
    return fields if len(fields) == 3 else None


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
