"""Training options shared by the graph-network estimators: early stopping, LR schedule.

* Early stopping as scikit-learn's ``MLPRegressor`` names it (``early_stopping``,
  ``validation_fraction``, ``n_iter_no_change``): a seeded random ``validation_fraction``
  of the training molecules is held out, training stops once the validation loss has not
  improved for ``n_iter_no_change`` epochs, and the weights of the best epoch are
  restored.
* ``lr_schedule="warmup_decay"``: the learning rate rises linearly from ``lr / 10`` to
  ``lr`` over the first two epochs, then decays exponentially back to ``lr / 10`` at the
  last epoch, once per batch (the schedule of chemprop, Yang et al. 2019, its ``NoamLR``
  with ``init_lr = final_lr = max_lr / 10`` and two warm-up epochs).

* ``lr_schedule="warmup_decay_hold"`` (MPNN only): the same warm-up and decay, reaching
  ``lr / 10`` at half of ``max_epochs`` and holding it there, so that the held-out loss
  can level off within the run and early stopping end it.

Every graph model (neural fingerprint, MPNN, GROVER) trains through a skorch net, and
these are its callbacks (:func:`skorch_training_options`).
"""

import math
from numbers import Integral, Real

from sklearn_papers.utils._sklearn_compat import Interval, StrOptions

__all__ = []

#: Constraints of the four training parameters.
TRAINING_CONSTRAINTS = {
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "lr_schedule": [StrOptions({"constant", "warmup_decay"})],
}

#: The schedules of the MPNN estimators: those of
#: ``TRAINING_CONSTRAINTS`` plus ``"warmup_decay_hold"``.
HOLD_TRAINING_CONSTRAINTS = {
    **TRAINING_CONSTRAINTS,
    "lr_schedule": [StrOptions({"constant", "warmup_decay", "warmup_decay_hold"})],
}

#: Warm-up length of ``lr_schedule="warmup_decay"``, in epochs (chemprop's default).
WARMUP_EPOCHS = 2

#: Share of ``max_epochs`` over which ``lr_schedule="warmup_decay_hold"`` warms up and
#: decays to ``lr / 10`` (then holds it).
HOLD_AFTER = 0.5

_PARAMS_DOC = """\
    early_stopping : bool, default={early_stopping}
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``). Only molecules with a label (not NaN) and a
        positive ``sample_weight`` are split, so a weight of 0 still equals leaving the
        molecule out. Ignored with ``max_epochs=0``.
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default={n_iter_no_change}
        Epochs without improvement of the validation loss before stopping.{patience_note}
    lr_schedule : {{{options}}}, default="{default}"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019).{hold} ``"constant"``:
        ``lr`` throughout.{schedule_note}
"""

_HOLD_DOC = """ ``"warmup_decay_hold"``:
        the same, reaching ``lr / 10`` at half of ``max_epochs`` and holding it for the
        second half, so that with ``early_stopping`` and a patience shorter than that
        half training can end before ``max_epochs``."""


def training_params_doc(lr_schedule, early_stopping=False, n_iter_no_change=10,
                        patience_note="", hold=False, schedule_note=""):
    """numpydoc of the four training parameters, with the estimator's defaults
    (``patience_note``, ``schedule_note``: text appended to the descriptions of
    ``n_iter_no_change`` and ``lr_schedule``; ``hold``: the estimator accepts
    ``"warmup_decay_hold"``)."""
    options = '"constant", "warmup_decay"' + (', "warmup_decay_hold"' if hold else "")
    return _PARAMS_DOC.format(default=lr_schedule, early_stopping=early_stopping,
                              n_iter_no_change=n_iter_no_change,
                              patience_note=patience_note, options=options,
                              hold=_HOLD_DOC if hold else "", schedule_note=schedule_note)


class WarmupDecay:
    """Factor of the base learning rate at optimiser step ``step`` (for ``LambdaLR``).

    Linear from 0.1 to 1 over ``warmup`` steps, then ``0.1 ** ((step - warmup) /
    (total - warmup))`` down to 0.1 at ``total``; 0.1 afterwards. A class, not a lambda,
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
    """Number of held-out molecules, as ``ShuffleSplit`` counts them (at least 1)."""
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
    import numpy as np

    target = np.asarray(target)
    target = target.reshape(len(target), -1)
    rows = (~np.isnan(target)).any(axis=1) if target.dtype.kind == "f" else \
        np.ones(len(target), dtype=bool)
    if sample_weight is not None:
        rows &= np.asarray(sample_weight) > 0
    return rows


def check_early_stopping_size(estimator, n_samples, n_labelled=None):
    """ValueError when too few molecules are left to hold some out.

    ``n_labelled``: the molecules with a label and a positive weight (default: all
    ``n_samples``); only those are split.
    """
    n_labelled = n_samples if n_labelled is None else n_labelled
    if estimator.early_stopping and n_labelled - n_validation(
            n_labelled, estimator.validation_fraction) < 1:
        what = ("" if n_labelled == n_samples else
                f" ({n_labelled} of the {n_samples} have a label and a positive weight; "
                "only those are split)")
        raise ValueError(
            f"early_stopping=True holds out validation_fraction="
            f"{estimator.validation_fraction} of the {n_labelled} training molecule(s)"
            f"{what}, which leaves none to train on; give more molecules or set "
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
        import numpy as np
        import torch
        from sklearn.model_selection import ShuffleSplit

        index = np.flatnonzero(self.rows)
        split = ShuffleSplit(n_splits=1, test_size=self.fraction, random_state=self.seed)
        train, valid = next(iter(split.split(np.arange(len(index)))))
        return (torch.utils.data.Subset(dataset, index[train]),
                torch.utils.data.Subset(dataset, index[valid]))


def skorch_training_options(estimator, n_samples, seed, labelled=None):
    """``build_net`` keyword arguments (``train_split``, ``callbacks``) for ``estimator``.

    Parameters
    ----------
    estimator : estimator with the four training parameters, ``max_epochs`` and
        ``batch_size``
    n_samples : int
        Training molecules.
    seed : int
        Seeds the validation split.
    labelled : ndarray of shape (n_samples,), dtype=bool, default=None
        The rows with a label and a positive weight (:func:`labelled_rows`; default:
        all). Early stopping splits only those.

    Returns
    -------
    options : dict
    """
    import numpy as np
    import torch
    from skorch.callbacks import EarlyStopping, LRScheduler

    labelled = np.ones(n_samples, dtype=bool) if labelled is None else np.asarray(labelled)
    n_labelled = int(labelled.sum())
    from sklearn_papers.nn._skorch import FiniteLossCheck

    callbacks = [("finite_loss", FiniteLossCheck(type(estimator).__name__))]
    options = {}
    n_train = n_samples
    if estimator.early_stopping and estimator.max_epochs > 0:
        check_early_stopping_size(estimator, n_samples, n_labelled)
        options["train_split"] = LabelledRowsSplit(float(estimator.validation_fraction),
                                                   int(seed), labelled)
        n_train = n_labelled - n_validation(n_labelled, estimator.validation_fraction)
        callbacks.append(("early_stopping", EarlyStopping(
            monitor="valid_loss", patience=int(estimator.n_iter_no_change), threshold=0.0,
            load_best=True, sink=_silent)))
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


def _silent(*args, **kwargs):
    """A sink for skorch's early-stopping message (module level: nets pickle)."""
