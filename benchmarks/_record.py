"""A benchmark's result as a small JSON file, from which the docs' Benchmarks pages are made.

``record(name, ...)`` writes ``benchmarks/results/<name>.json`` (a committed folder): what
was compared, the peer, one row per measurement with our figure, the peer's and their
ratio, the command that produced it and the machine it ran on (CPU model, cores, threads,
library versions). ``docs/_ext/benchmarks.py`` turns every file of that folder into a page
when the docs are built; ``tests/test_benchmark_results.py`` checks the files.
"""

import json
import os
import platform
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# the keys of a row as given to record(); it adds "ratio" = ours / peer
ROW_KEYS = ("what", "ours", "peer", "unit", "better")
# keys a row may add: the standard deviations over seeds of a score averaged over seeds
OPTIONAL_KEYS = ("ours_std", "peer_std")


def cpu_model():
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine():
    """The machine a benchmark ran on, as recorded beside its numbers."""
    import numpy
    import torch

    versions = {"python": platform.python_version(), "numpy": numpy.__version__,
                "torch": torch.__version__}
    try:
        import sklearn

        versions["scikit-learn"] = sklearn.__version__
    except ImportError:  # pragma: no cover - a hard dependency
        pass
    # the libraries whose version moves a benchmark's figures, where the benchmark used them
    for name in ("rdkit", "scipy", "joblib"):
        if name in sys.modules:
            versions[name] = getattr(sys.modules[name], "__version__", "unknown")
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "system": platform.system(),
            "torch_threads": torch.get_num_threads(), "versions": versions}


def command(argv=None):
    """The command line that ran the benchmark, relative to the repository root."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(RESULTS.parents[1])
    except ValueError:
        script = Path("benchmarks") / script.name
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", script.as_posix(), *args])


def record(name, *, title, peer, rows, argv=None, notes="", results=None):
    """Write ``<results>/<name>.json`` and return its path.

    Parameters
    ----------
    name : str
        The benchmark's name (the script's, without ``bench_``).
    title : str
        What is compared, one line.
    peer : str
        The peer, with its version where it has one.
    rows : list of dict
        One per measurement, with the keys of ``ROW_KEYS``: ``what`` (str), ``ours`` and
        ``peer`` (positive numbers, in ``unit``), ``unit`` (str) and ``better``
        (``"higher"`` or ``"lower"``: which values are better, e.g. ``"lower"`` for
        seconds). The file adds ``ratio``, ours / peer. A score averaged over seeds may
        add ``ours_std`` and ``peer_std`` (non-negative, in ``unit``), its standard
        deviations over the seeds, shown as ``mean ± std``.
    argv : list of str, default=None
        The script's arguments; ``sys.argv[1:]`` when None.
    notes : str, default=""
        One or two sentences on how to read the numbers.
    results : path-like, default=None
        The folder; ``benchmarks/results`` when None.

    Returns
    -------
    path : pathlib.Path
    """
    for i, row in enumerate(rows):
        if not set(ROW_KEYS) <= set(row) <= set(ROW_KEYS + OPTIONAL_KEYS):
            raise ValueError(f"row {i} has keys {sorted(row)}; expected {sorted(ROW_KEYS)}, "
                             f"optionally with {sorted(OPTIONAL_KEYS)}")
        if row["better"] not in ("higher", "lower"):
            raise ValueError(f"row {i}: better must be 'higher' or 'lower'")
        if not (float(row["ours"]) > 0 and float(row["peer"]) > 0):
            raise ValueError(f"row {i}: ours and peer must be positive numbers")
        if not all(float(row[key]) >= 0 for key in OPTIONAL_KEYS if key in row):
            raise ValueError(f"row {i}: ours_std and peer_std must be non-negative numbers")
    folder = Path(results) if results is not None else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "title": title, "peer": peer, "command": command(argv),
            "machine": machine(), "notes": notes,
            "rows": [{"what": row["what"], "ours": float(row["ours"]),
                      "peer": float(row["peer"]), "unit": row["unit"],
                      "ratio": float(row["ours"]) / float(row["peer"]),
                      "better": row["better"],
                      **{key: float(row[key]) for key in OPTIONAL_KEYS if key in row}}
                     for row in rows]}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded in {path.relative_to(folder.parent) if folder == RESULTS else path}")
    return path
