"""skorch callbacks every net gets or may get: the epoch table, the divergence check,
early stopping on a held-out split of the labelled rows and the learning-rate schedule."""

import math
import re
import sys

import numpy as np
import torch
from skorch.callbacks import Callback, EarlyStopping, LRScheduler, PrintLog

__all__ = ["FiniteLossCheck", "HOLD_AFTER", "LabelledRowsSplit", "PlainPrintLog",
           "StillImprovingWarning", "WARMUP_EPOCHS", "WarmupDecay",
           "check_early_stopping_size", "divergence_error", "labelled_rows", "loss_curve",
           "n_validation", "training_callbacks"]


_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _stdout_is_terminal():
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return False


class PlainPrintLog(PrintLog):
    """skorch's epoch table (:class:`skorch.callbacks.PrintLog`), without colour codes
    when standard output is not a terminal.

    skorch colours the best value of each column with ANSI escape codes whatever the
    output; in a pipe, a log file or a notebook capture they show up as ``[32m``-style
    garbage. The table is otherwise unchanged: ``tabulate`` aligns the columns on the
    visible text, so removing the codes keeps the layout. :func:`build_net` uses it as
    the ``print_log`` callback (same parameters as ``PrintLog``).
    """

    def table(self, row):
        text = super().table(row)
        return text if _stdout_is_terminal() else _ANSI_CODE.sub("", text)


def loss_curve(net):
    """Training loss after every epoch of a fitted skorch net, as a list of floats (empty
    when no epoch ran)."""
    if not len(net.history):
        return []
    return [float(v) for v in net.history[:, "train_loss"]]



def divergence_error(estimator_name, loss, where, hint):
    """The error of a diverged fit, in the one shape every estimator uses.

    ``"<estimator>: the training loss became <loss> at <where> (the network diverged);
    <hint>"``, raised by :class:`FiniteLossCheck` for the nets of :func:`build_net` and by
    the estimators that train by a loop of their own.

    Parameters
    ----------
    estimator_name : str
        The estimator's class name.
    loss : float
        The non-finite loss.
    where : str
        ``"epoch 3"``, ``"meta-step 12"``, ...
    hint : str
        What to change.

    Returns
    -------
    error : FloatingPointError
    """
    return FloatingPointError(f"{estimator_name}: the training loss became {loss} at {where} "
                              f"(the network diverged); {hint}")


class FiniteLossCheck(Callback):
    """skorch callback: ``FloatingPointError`` at the end of the first epoch whose training
    loss is not finite (a diverged network would otherwise go on and predict NaN without a
    word). :func:`build_net` installs it in every net.

    The message is :func:`divergence_error`'s. When the loss of the very first batch was
    already non-finite, it was computed before any optimiser step, so the learning rate is
    not the cause: the message says so and names ``first_batch_sources`` instead.

    Parameters
    ----------
    estimator_name : str, default="the estimator"
        Named in the message.
    hint : str or None, default=None
        What to change, after the net's ``lr``; None: ``"lower lr=<lr>."``.
    first_batch_sources : str or None, default=None
        What may produce non-finite values before any training (``"the input X or the
        encoder"``); None: ``"the input or the targets"``.
    """

    def __init__(self, estimator_name="the estimator", hint=None, first_batch_sources=None):
        self.estimator_name = estimator_name
        self.hint = hint
        self.first_batch_sources = first_batch_sources

    def on_epoch_end(self, net, **kwargs):
        loss = net.history[-1].get("train_loss")
        if loss is None or np.isfinite(loss):
            return
        epoch = len(net.history)
        batches = net.history[0].get("batches") or [{}]
        first = batches[0].get("train_loss")
        if epoch == 1 and first is not None and not np.isfinite(first):
            sources = self.first_batch_sources or "the input or the targets"
            hint = (f"the training loss of the first batch was already non-finite ({first}), "
                    "before any optimiser step, so the learning rate is not the cause: "
                    f"{sources} may produce non-finite values.")
        else:
            hint = self.hint or f"lower lr={net.lr!r}."
        raise divergence_error(self.estimator_name, loss, f"epoch {epoch}", hint)


# --------------------------------------------------------------------- early stopping

#: Warm-up length of ``lr_schedule="warmup_decay"``, in epochs (chemprop's default).
WARMUP_EPOCHS = 2

#: Share of ``max_epochs`` over which ``lr_schedule="warmup_decay_hold"`` warms up and
#: decays to ``lr / 10`` (then holds it).
HOLD_AFTER = 0.5


class WarmupDecay:
    """Factor of the base learning rate at optimiser step ``step`` (for ``LambdaLR``).

    Linear from 0.1 to 1 over ``warmup`` steps, then ``0.1 ** ((step - warmup) /
    (total - warmup))`` down to 0.1 at ``total``; 0.1 afterwards (chemprop's ``NoamLR``
    with ``init_lr = final_lr = max_lr / 10``, Yang et al. 2019). A class, not a lambda,
    so fitted estimators pickle.

    Parameters
    ----------
    warmup : int
        Warm-up steps (0: start at the peak).
    total : int
        Total steps.
    """

    def __init__(self, warmup, total):
        self.warmup = max(int(warmup), 0)
        self.total = max(int(total), self.warmup + 1)

    def __call__(self, step):
        if step < self.warmup:
            return 0.1 + 0.9 * step / self.warmup
        frac = min((step - self.warmup) / (self.total - self.warmup), 1.0)
        return 0.1 ** frac


def n_validation(n_samples, validation_fraction):
    """Number of held-out rows, as ``ShuffleSplit`` counts them (at least 1)."""
    return max(1, math.ceil(validation_fraction * n_samples))


def labelled_rows(target, sample_weight=None):
    """Rows that can enter a loss: at least one labelled (non-NaN) target and, with
    ``sample_weight``, a positive weight.

    Parameters
    ----------
    target : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Float targets (NaN: missing) or integer class codes.
    sample_weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    rows : ndarray of shape (n_samples,), dtype=bool
    """
    target = np.asarray(target)
    target = target.reshape(len(target), -1)
    rows = (~np.isnan(target)).any(axis=1) if target.dtype.kind == "f" else \
        np.ones(len(target), dtype=bool)
    if sample_weight is not None:
        rows &= np.asarray(sample_weight) > 0
    return rows


def check_early_stopping_size(estimator, n_samples, n_labelled=None, noun="sample"):
    """ValueError when too few rows are left to hold some out.

    ``n_labelled``: the rows with a label and a positive weight (default: all
    ``n_samples``); only those are split. ``noun``: what a row is, in the message.
    """
    n_labelled = n_samples if n_labelled is None else n_labelled
    if estimator.early_stopping and n_labelled - n_validation(
            n_labelled, estimator.validation_fraction) < 1:
        what = ("" if n_labelled == n_samples else
                f" ({n_labelled} of the {n_samples} have a label and a positive weight; "
                "only those are split)")
        raise ValueError(
            f"early_stopping=True holds out validation_fraction="
            f"{estimator.validation_fraction} of the {n_labelled} training {noun}(s)"
            f"{what}, which leaves none to train on; give more {noun}s or set "
            "early_stopping=False.")


class LabelledRowsSplit:
    """skorch ``train_split``: a seeded random ``fraction`` of the labelled rows held out.

    Only rows with a label and a positive weight (:func:`labelled_rows`) are split, so
    the held-out rows always carry a validation loss and the rows left to train on always
    carry a training loss; the other rows are dropped (they add nothing to either loss).
    With every row labelled this is skorch's ``ValidSplit(fraction, stratified=False,
    random_state=seed)`` exactly (the same rows, in the same order), and a row of weight
    0 changes nothing, as if it were left out.

    Parameters
    ----------
    fraction : float
        In (0, 1); at least one row is held out.
    seed : int
    rows : ndarray of shape (n_samples,), dtype=bool
        The labelled rows.
    """

    def __init__(self, fraction, seed, rows):
        self.fraction = fraction
        self.seed = seed
        self.rows = rows

    def __call__(self, dataset, y=None, groups=None):
        train, valid = self.indices()
        return (torch.utils.data.Subset(dataset, train),
                torch.utils.data.Subset(dataset, valid))

    def indices(self):
        """``(train, held_out)``: the row indices trained on and held out, in the order
        the subsets hold them."""
        from sklearn.model_selection import ShuffleSplit

        index = np.flatnonzero(self.rows)
        split = ShuffleSplit(n_splits=1, test_size=self.fraction, random_state=self.seed)
        train, valid = next(iter(split.split(np.arange(len(index)))))
        return index[train], index[valid]


def training_callbacks(estimator, n_samples, seed, labelled=None, noun="sample"):
    """skorch ``train_split`` and ``callbacks`` of the four training parameters.

    * ``early_stopping`` (scikit-learn's ``MLPRegressor`` names: ``early_stopping``,
      ``validation_fraction``, ``n_iter_no_change``): a seeded random
      ``validation_fraction`` of the labelled rows is held out (:class:`LabelledRowsSplit`),
      training stops once the validation loss has not improved for ``n_iter_no_change``
      epochs, and the weights of the best epoch are restored.
    * ``lr_schedule="warmup_decay"``: per batch, the learning rate rises linearly from
      ``lr / 10`` to ``lr`` over the first :data:`WARMUP_EPOCHS` epochs, then decays
      exponentially back to ``lr / 10`` at the last epoch (:class:`WarmupDecay`);
      ``"warmup_decay_hold"`` reaches ``lr / 10`` at :data:`HOLD_AFTER` of ``max_epochs``
      and holds it, so that the held-out loss can level off within the run and early
      stopping end it; ``"constant"``: no schedule.

    :func:`build_net` calls it for an estimator with these parameters.

    Parameters
    ----------
    estimator : estimator with the four training parameters, ``max_epochs`` and
        ``batch_size``
    n_samples : int
        Training rows.
    seed : int
        Seeds the validation split.
    labelled : ndarray of shape (n_samples,), dtype=bool, default=None
        The rows with a label and a positive weight (:func:`labelled_rows`; default:
        all). Early stopping splits only those.
    noun : str, default="sample"
        What a row is, in the size error of :func:`check_early_stopping_size`.

    Returns
    -------
    options : dict
        ``callbacks`` (a list of (name, callback)) and, with early stopping,
        ``train_split``.
    """
    labelled = np.ones(n_samples, dtype=bool) if labelled is None else np.asarray(labelled)
    n_labelled = int(labelled.sum())
    callbacks = []
    options = {}
    n_train = n_samples
    if estimator.early_stopping and estimator.max_epochs > 0:
        check_early_stopping_size(estimator, n_samples, n_labelled, noun=noun)
        options["train_split"] = LabelledRowsSplit(float(estimator.validation_fraction),
                                                   int(seed), labelled)
        n_train = n_labelled - n_validation(n_labelled, estimator.validation_fraction)
        callbacks.append(("early_stopping", EarlyStopping(
            monitor="valid_loss", patience=int(estimator.n_iter_no_change), threshold=0.0,
            load_best=True, sink=_silent)))
        callbacks.append(("still_improving", StillImprovingWarning(
            type(estimator).__name__, int(estimator.n_iter_no_change))))
    if estimator.lr_schedule in ("warmup_decay", "warmup_decay_hold") and \
            estimator.max_epochs > 0:
        per_epoch = math.ceil(n_train / estimator.batch_size)
        decay_epochs = estimator.max_epochs
        if estimator.lr_schedule == "warmup_decay_hold":
            decay_epochs = min(estimator.max_epochs, max(
                WARMUP_EPOCHS + 1, math.ceil(HOLD_AFTER * estimator.max_epochs)))
        callbacks.append(("lr_schedule", LRScheduler(
            policy=torch.optim.lr_scheduler.LambdaLR, step_every="batch",
            lr_lambda=WarmupDecay(WARMUP_EPOCHS * per_epoch, per_epoch * decay_epochs))))
    options["callbacks"] = callbacks
    return options


class StillImprovingWarning(Callback):
    """skorch callback: a ``ConvergenceWarning`` when training ran all ``max_epochs`` and
    the held-out loss was still improving, its best epoch within the last ``patience``
    epochs (early stopping never got to stop the run; scikit-learn's ``MLPRegressor``
    warns the same way when it reaches ``max_iter``). A patience of ``max_epochs`` or more
    cannot stop a run at all (a run watched for its whole held-out curve): then the best
    epoch must be within the last tenth of the epochs (at least the last one).

    Parameters
    ----------
    estimator_name : str
        Named in the message.
    patience : int
        Early stopping's ``n_iter_no_change``.
    """

    def __init__(self, estimator_name, patience):
        self.estimator_name = estimator_name
        self.patience = patience

    def on_train_end(self, net, **kwargs):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        n_epochs = len(net.history)
        best = [i + 1 for i, row in enumerate(net.history) if row.get("valid_loss_best")]
        window = self.patience if self.patience < net.max_epochs else \
            max(1, math.ceil(0.1 * net.max_epochs))
        if not best or n_epochs < net.max_epochs or best[-1] <= n_epochs - window:
            return
        warnings.warn(
            f"{self.estimator_name}: training ran all max_epochs={net.max_epochs} epochs "
            f"with the held-out loss still improving (best epoch {best[-1]} of {n_epochs}, "
            f"whose weights are kept); a larger max_epochs may fit better.",
            ConvergenceWarning, stacklevel=2)


def _silent(*args, **kwargs):
    """A sink for skorch's early-stopping message (module level: nets pickle)."""
