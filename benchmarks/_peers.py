"""Importing the peer libraries the benchmarks compare against (the ``bench`` extra)."""

import sys
import types


def import_chemprop():
    """Import chemprop; return ``(module, note)``, or ``(None, reason)`` if unavailable.

    chemprop 2.3 imports ``cuik_molmaker`` (a C++ extension for its optional GPU featurizer,
    with no wheel on PyPI for every platform) at module level. The CPU path the benchmarks
    time never calls it, so when it is missing an empty module object satisfies the import,
    and the returned note says so.
    """
    try:
        import cuik_molmaker  # noqa: F401

        note = ""
    except ImportError:
        sys.modules["cuik_molmaker"] = types.ModuleType("cuik_molmaker")
        note = "cuik_molmaker absent: replaced by an empty module (unused on the CPU path)"
    try:
        import chemprop
        import lightning  # noqa: F401
    except ImportError as exc:
        return None, f"chemprop not importable ({exc})"
    return chemprop, note
