"""Finished parts of a long experiment as small text records, kept with the source.

A full run that takes longer than one machine lives (the ``duvenaud`` random search: 1,290
fits) accumulates its parts across machines when each finished part is written as a JSON
file into a folder of the repository and committed. A record holds what the report needs
(the part's value: scores, not models or predictions), the settings it was computed with
(``params``, which include the version of the code that computes the part), and where it
came from: the date, the commit of the source tree, the CPU seconds, the device and the
package versions.

A record is reused when its key and its ``params`` equal the part's, so a changed
configuration, protocol or code version recomputes the part. An experiment that records its
parts puts a code version into each part's ``params`` and bumps it when the code that
computes the part changes its results (a test that refits a small part against stored
numbers tells when that happens).
"""

import datetime
import json
import math
import os
import platform
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["RECORD_FORMAT", "read_record", "record_commits", "record_path", "to_json",
           "write_record"]

#: Version of the records' layout; records of another version are not reused.
RECORD_FORMAT = 1


def record_path(folder, key):
    """Path of the record of part ``key`` in ``folder`` (one file per part).

    Each ``/``-separated component of the key is one folder level, sanitized to letters,
    digits and ``_.=-``: ``"malaria/nf_mlp/fold=0/draw=3"`` is
    ``<folder>/malaria/nf_mlp/fold=0/draw=3.json``.
    """
    parts = [re.sub(r"[^A-Za-z0-9_.=-]+", "_", p).strip("_") or "_"
             for p in str(key).split("/")]
    return Path(folder).joinpath(*parts[:-1], parts[-1] + ".json")


def to_json(value):
    """``value`` as plain JSON types: tuples and arrays as lists, numpy scalars as Python
    numbers (float round-trips exactly through JSON's repr).

    Raises
    ------
    TypeError
        For a value that has no JSON form (a model, a function): records hold results.
    """
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (bool, int, str, type(None))):
        return value
    if isinstance(value, float):
        return value
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return to_json(value.tolist())
    raise TypeError(f"a part record holds plain values (numbers, strings, lists, dicts); "
                    f"got {type(value).__name__}: return scores, not objects, from the part")


def _same(a, b):
    """Equality of JSON values, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def read_record(folder, key, params):
    """The record of part ``key`` in ``folder`` when its ``params`` equal ``params``, else
    None (no file, an unreadable file, another layout version, other settings).

    Parameters
    ----------
    folder : path-like
    key : str
    params : object
        The part's settings in the canonical form of
        :meth:`~sklearn_papers.reproduce.RunContext.cached`.

    Returns
    -------
    record : dict or None
        Fields ``key``, ``params``, ``value``, ``created``, ``commit``, ``cpu_seconds``,
        ``device``, ``versions``.
    """
    path = record_path(folder, key)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return None
    if record.get("key") != str(key) or not _same(record.get("params"), to_json(params)):
        return None
    return record


def write_record(folder, key, params, value, *, cpu_seconds=None, device="cpu"):
    """Write the record of a finished part (atomically: a run stopped while writing leaves
    no half file) and return it.

    Parameters
    ----------
    folder : path-like
    key : str
    params : object
        Canonical settings of the part (see :func:`read_record`).
    value : object
        The part's value; must have a JSON form (:func:`to_json`).
    cpu_seconds : float, default=None
        CPU seconds (user + system) the part took.
    device : str, default="cpu"
        Device the part was computed on.

    Returns
    -------
    record : dict
    """
    record = {
        "format": RECORD_FORMAT, "key": str(key), "params": to_json(params),
        "value": to_json(value),
        "created": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 2),
        "device": str(device), "versions": _versions(),
    }
    path = record_path(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return record


def record_commits(records):
    """``{commit: number of records}`` over ``records`` (dicts from :func:`read_record` or
    :func:`write_record`), most frequent first: which code computed the parts."""
    counts = {}
    for record in records:
        commit = record.get("commit") or "unknown"
        counts[commit] = counts.get(commit, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@lru_cache(maxsize=1)
def _commit():
    from sklearn_papers.reproduce._report import source_commit

    return source_commit()


@lru_cache(maxsize=1)
def _versions():
    import numpy
    import sklearn

    found = {"python": platform.python_version(), "numpy": numpy.__version__,
             "scikit-learn": sklearn.__version__}
    for name, module in (("torch", "torch"), ("rdkit", "rdkit")):
        try:
            found[name] = __import__(module).__version__
        except ImportError:
            pass
    return found
