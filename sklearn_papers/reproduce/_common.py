"""Pieces every experiment uses: its :class:`Protocol`, seeds (:func:`run_seeds`,
:func:`over_seeds`), one torch thread (:func:`one_torch_thread`), figures
(:func:`subplots`, :func:`save_figure`, :func:`draw_figure`, :func:`errorbar`)."""

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

__all__ = ["Protocol", "draw_figure", "errorbar", "in_one_torch_thread", "one_torch_thread",
           "over_seeds", "run_seeds", "save_figure", "subplots"]


@dataclass(frozen=True)
class Protocol:
    """An experiment's settings as data, declared at the top of its module:
    ``PROTOCOL = Protocol(full=dict(seeds=5, epochs=60), quick=dict(seeds=3, epochs=8))``.

    ``run`` reads ``PROTOCOL.settings(ctx.quick)``, ``PROTOCOL.seeds(ctx)`` and
    ``PROTOCOL.note(ctx.quick)``; a test shrinks a run with ``PROTOCOL.but(epochs=1)``.

    Attributes
    ----------
    full : dict
        The full run's settings (``"seeds"``: how many seeds), as plain data.
    quick : dict, default={}
        Settings that ``--quick`` replaces (keys of ``full`` only, else a ValueError).
    shortened : str, default=""
        What ``--quick`` shortens, with ``{setting}`` placeholders filled from the quick
        settings; empty: written from the settings that differ.
    """

    full: dict
    quick: dict = field(default_factory=dict)
    shortened: str = ""

    def __post_init__(self):
        unknown = sorted(set(self.quick) - set(self.full))
        if unknown:
            raise ValueError(f"quick sets {unknown}, which the full protocol lacks: add "
                             "them to full")

    def settings(self, quick):
        """The settings of a run: ``full``, updated by ``quick`` when ``quick`` is true."""
        return {**self.full, **self.quick} if quick else dict(self.full)

    def seeds(self, ctx):
        """The run's seeds: :func:`run_seeds` with the setting ``"seeds"``."""
        return run_seeds(ctx, self.settings(ctx.quick)["seeds"])

    def note(self, quick):
        """What ``--quick`` shortened (``""`` for a full run)."""
        if not quick:
            return ""
        if self.shortened:
            return self.shortened.format(**self.settings(True))
        changed = [f"{k}: {v} instead of {self.full[k]}"
                   for k, v in self.quick.items() if v != self.full[k]]
        return "; ".join(changed) + "." if changed else ""

    def but(self, **settings):
        """This protocol with ``settings`` replacing those of both modes (for tests)."""
        unknown = sorted(set(settings) - set(self.full))
        if unknown:
            raise ValueError(f"the protocol has no settings {unknown}; its settings are "
                             f"{sorted(self.full)}")
        return replace(self, full={**self.full, **settings},
                       quick={**self.quick, **{k: v for k, v in settings.items()
                                               if k in self.quick}})


def run_seeds(ctx, n_seeds):
    """``[base, base + 1, ...]``: ``n_seeds`` seeds from the base ``ctx.random_state``
    (``--seed``), or ``ctx`` itself when an int; a ValueError for ``n_seeds < 1``."""
    n_seeds = int(n_seeds)
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1, got {n_seeds}")
    base = int(getattr(ctx, "random_state", ctx))
    return [base + i for i in range(n_seeds)]


def over_seeds(fn, seeds, *args, **kwargs):
    """``[fn(seed, *args, **kwargs) for seed in seeds]``: one result per seed, paired with
    ``seeds`` by position as the rules of :mod:`._claims` read them."""
    return [fn(seed, *args, **kwargs) for seed in seeds]


@contextmanager
def one_torch_thread():
    """Run torch with one intra-op thread, restoring the caller's setting afterwards.

    Small nets gain little from a second thread, whose waits on a busy machine can make
    them several times slower.
    """
    import torch

    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n_threads)


def subplots(*args, **kwargs):
    """:func:`matplotlib.pyplot.subplots`, matplotlib imported on the first figure."""
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def save_figure(fig, out, name, *, dpi=100, tight=True):
    """Write ``fig`` (with ``tight``, its tight layout) as the PNG ``<out>/<name>`` (``out``:
    a RunContext or a folder, created when missing), close it and return the path (for
    :attr:`~._result.Result.figures`)."""
    import matplotlib.pyplot as plt

    folder = Path(getattr(out, "out_dir", out))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if tight:
            fig.tight_layout()
        fig.savefig(folder / name, dpi=dpi)
    finally:
        plt.close(fig)
    return folder / name


def draw_figure(out, filename, draw, *data, ncols=1, figsize=(11, 4)):
    """Draw ``draw(*axes, *data)`` on a row of ``ncols`` new axes; save it, return its path."""
    fig, axes = subplots(1, ncols, figsize=figsize, squeeze=False)
    draw(*axes[0], *data)
    return save_figure(fig, out, filename, dpi=90)


def errorbar(ax, x, values, **kw):
    """Mean ± std of each of ``values`` (a sequence per point, e.g. over seeds) at ``x``."""
    ax.errorbar(x, [np.mean(v) for v in values], yerr=[np.std(v) for v in values],
                capsize=3, **kw)


def in_one_torch_thread(func):
    """Decorate ``func`` (a part of an experiment) to run inside :func:`one_torch_thread`."""
    return one_torch_thread()(func)
