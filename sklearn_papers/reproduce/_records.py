"""Finished parts of a long experiment as small JSON records, kept with the source.

A run longer than one machine lives (the ``duvenaud`` search) continues across machines
from a committed folder of records (``--records``, see docs/reproduce.rst). A record holds
a part's value, its ``params`` (with the version of the code that computes it) and where
it came from; it is reused when its key and ``params`` equal the part's.
"""

import json
import math
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from sklearn_papers.reproduce._report import package_versions, source_commit, utc_now
from sklearn_papers.reproduce._result import to_json

__all__ = ["RECORD_FORMAT", "read_record", "record_path", "records_note", "to_json",
           "write_record"]

#: Version of the records' layout; records of another version are not reused.
RECORD_FORMAT = 1


def record_path(folder, key):
    """``<folder>/<component>/.../<last>.json`` for part ``key``: one folder level per
    ``/``-separated component, sanitized to letters, digits and ``_.=-``."""
    parts = [re.sub(r"[^A-Za-z0-9_.=-]+", "_", p).strip("_") or "_"
             for p in str(key).split("/")]
    return Path(folder).joinpath(*parts[:-1], parts[-1] + ".json")


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
    """The record of part ``key`` in ``folder`` (a dict of ``key``, ``params``, ``value``,
    ``created``, ``commit``, ``cpu_seconds``, ``device``, ``versions``) when its ``params``
    equal ``params``; None for no file, an unreadable one, another layout or settings."""
    try:
        record = json.loads(record_path(folder, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return None
    if record.get("key") != str(key) or not _same(record.get("params"), to_json(params)):
        return None
    return record


def write_record(folder, key, params, value, *, cpu_seconds=None):
    """Write the record of a finished part (``value`` with a JSON form, :func:`to_json`;
    ``cpu_seconds``: user + system) atomically and return it."""
    record = {
        "format": RECORD_FORMAT, "key": str(key), "params": to_json(params),
        "value": to_json(value), "created": utc_now(), "commit": _commit(),
        "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 2),
        "device": "cpu", "versions": package_versions(),
    }
    path = record_path(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return record


def records_note(records, what):
    """A sentence on the run's ``records`` (the ``what``): their number, the commits whose
    code computed them (most records first) and their CPU time."""
    counts = sorted(Counter(r.get("commit") or "unknown" for r in records).items(),
                    key=lambda kv: (-kv[1], kv[0]))
    commits = ", ".join(f"`{c}` ({n})" for c, n in counts)
    cpu = sum(r.get("cpu_seconds") or 0.0 for r in records)
    return (f"The {len(records)} {what} are kept as text records (`--records`), computed by "
            f"the code of commit(s) {commits}, {cpu / 3600:.1f} CPU hours in all.")


@lru_cache(maxsize=1)
def _commit():
    return source_commit()
