"""Progress shown during long work: the epoch table of training and progress bars.

``verbose`` of the molecule estimators decides what is shown: 0 shows nothing; 1 (their
default) shows a progress bar for work on at least :data:`PROGRESS_MIN_ITEMS` molecules
and the epoch table of a training of at least :data:`TRAINING_MIN_ITEMS` molecule-epochs
(molecules times ``max_epochs``), so small inputs print nothing; 2 or more shows both
whatever the size. Bars go to standard error (tqdm), the epoch table to standard output
(skorch).
"""

import re
import sys

__all__ = ["EpochTable", "PROGRESS_MIN_ITEMS", "TRAINING_MIN_ITEMS", "progress",
           "shows_progress", "training_verbose"]

#: Inputs with fewer items than this show no progress bar at ``verbose=1``: their work
#: ends within seconds.
PROGRESS_MIN_ITEMS = 10_000

#: Trainings of fewer molecule-epochs (molecules times ``max_epochs``) than this print no
#: epoch table at ``verbose=1``.
TRAINING_MIN_ITEMS = 100_000

_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def shows_progress(verbose, n_items):
    """Whether work on ``n_items`` items shows a progress bar at this ``verbose``.

    Parameters
    ----------
    verbose : int or bool
        The estimator's ``verbose``: 0 never, 1 from :data:`PROGRESS_MIN_ITEMS` items on,
        2 or more always.
    n_items : int
        Items of the work (molecules).

    Returns
    -------
    show : bool
    """
    verbose = int(verbose or 0)
    return verbose >= 2 or (verbose == 1 and int(n_items) >= PROGRESS_MIN_ITEMS)


def training_verbose(verbose, n_samples=None, max_epochs=None):
    """skorch's ``verbose`` for a training: the epoch table or nothing.

    Parameters
    ----------
    verbose : int or bool
        The estimator's ``verbose``.
    n_samples : int or None, default=None
        Training rows; None applies no size threshold (``verbose`` as given).
    max_epochs : int or None, default=None
        Epochs of the training.

    Returns
    -------
    verbose : int
        0 at ``verbose=1`` when ``n_samples * max_epochs`` is below
        :data:`TRAINING_MIN_ITEMS`; else ``int(verbose)``.
    """
    verbose = int(verbose or 0)
    if verbose == 1 and n_samples is not None and max_epochs is not None and \
            int(n_samples) * int(max_epochs) < TRAINING_MIN_ITEMS:
        return 0
    return verbose


def progress(iterable, *, verbose, n_items, total=None, desc=None, unit="it"):
    """``iterable``, wrapped in a tqdm bar on standard error when
    :func:`shows_progress` says so.

    Parameters
    ----------
    iterable : iterable
        The work, one step per item yielded.
    verbose : int or bool
        The estimator's ``verbose``.
    n_items : int
        Items (molecules) of the whole work, for the size threshold.
    total : int or None, default=None
        Steps of ``iterable`` (for the bar's length).
    desc : str or None, default=None
        The bar's label (the estimator's name).
    unit : str, default="it"
        What one step is (``"batch"``, ``"molecule"``).

    Returns
    -------
    iterable : iterable
        ``iterable`` itself, or a ``tqdm`` over it.
    """
    if not shows_progress(verbose, n_items):
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr,
                dynamic_ncols=True, leave=False)


def _stdout_is_terminal():
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return False


def __getattr__(name):
    """:class:`EpochTable` is made on first use (PEP 562): skorch and torch are imported
    then, not by the molecule transformers that use only the progress bars."""
    if name == "EpochTable":
        cls = _epoch_table_class()
        globals()["EpochTable"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _epoch_table_class():
    from skorch.callbacks import EarlyStopping, PrintLog

    class EpochTable(PrintLog):
        """skorch's epoch table with a row for every epoch run and the best epoch marked.

        Differences from :class:`skorch.callbacks.PrintLog` (same parameters):

        * the epoch at which early stopping ends training gets its row: skorch's
          ``EarlyStopping`` ends training inside that epoch's ``on_epoch_end``, before the
          table's turn, so ``PrintLog`` leaves it out;
        * a ``best`` column holds ``+`` on every epoch whose monitored loss (``valid_loss``
          with a validation split, else ``train_loss``) is the lowest so far: the last ``+``
          is the best epoch;
        * when early stopping ended training, a last line names the epoch it stopped at and
          the best epoch, whose weights are restored (``load_best``);
        * no ANSI colour codes when standard output is not a terminal (skorch colours the
          best values whatever the output; in a pipe or a log file the codes are garbage).
        """

        def initialize(self):
            super().initialize()
            self.printed_ = 0
            return self

        def table(self, row):
            row = dict(row)  # a copy: the history is not changed
            key = "valid_loss" if "valid_loss" in row else "train_loss"
            if f"{key}_best" in row:
                row["event_best"] = bool(row[f"{key}_best"])
            text = super().table(row)
            return text if _stdout_is_terminal() else _ANSI_CODE.sub("", text)

        def on_epoch_end(self, net, **kwargs):
            super().on_epoch_end(net, **kwargs)
            self.printed_ = len(net.history)

        def on_train_end(self, net, **kwargs):
            if not len(net.history) or not net.verbose:
                return
            if len(net.history) > self.printed_:  # the epoch early stopping ended
                super().on_epoch_end(net, **kwargs)
                self.printed_ = len(net.history)
            stopper = next((cb for _, cb in getattr(net, "callbacks_", [])
                            if isinstance(cb, EarlyStopping)), None)
            if stopper is None or getattr(stopper, "misses_", 0) < stopper.patience:
                return
            key = stopper.monitor
            values = [(i + 1, row[key]) for i, row in enumerate(net.history) if key in row]
            if not values:
                return
            best_epoch, best = min(values, key=lambda pair: pair[1])
            restored = ", its weights restored" if stopper.load_best else ""
            self._sink(f"Stopped after epoch {len(net.history)}: {key} did not improve for "
                       f"{stopper.patience} epochs. Best epoch: {best_epoch} ({key} "
                       f"{best:{self.floatfmt}}){restored}.", net.verbose)
            if self.sink is print:
                sys.stdout.flush()

    EpochTable.__module__, EpochTable.__qualname__ = __name__, "EpochTable"
    return EpochTable
