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

For skorch nets (neural fingerprint, MPNN) these are skorch callbacks
(:func:`skorch_training_options`); GROVER's plain torch loop uses the same rules
(:func:`sklearn_papers.nn._grover.train_module`).
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

#: Warm-up length of ``lr_schedule="warmup_decay"``, in epochs (chemprop's default).
WARMUP_EPOCHS = 2

_PARAMS_DOC = """\
    early_stopping : bool, default={early_stopping}
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``).
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default={n_iter_no_change}
        Epochs without improvement of the validation loss before stopping.{patience_note}
    lr_schedule : {{"constant", "warmup_decay"}}, default="{default}"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``: ``lr``
        throughout.
"""


def training_params_doc(lr_schedule, early_stopping=False, n_iter_no_change=10,
                        patience_note=""):
    """numpydoc of the four training parameters, with the estimator's defaults
    (``patience_note``: text appended to the description of ``n_iter_no_change``)."""
    return _PARAMS_DOC.format(default=lr_schedule, early_stopping=early_stopping,
                              n_iter_no_change=n_iter_no_change,
                              patience_note=patience_note)


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


def check_early_stopping_size(estimator, n_samples):
    """ValueError when too few molecules are left to hold some out."""
    if estimator.early_stopping and n_samples - n_validation(
            n_samples, estimator.validation_fraction) < 1:
        raise ValueError(
            f"early_stopping=True holds out validation_fraction="
            f"{estimator.validation_fraction} of the {n_samples} training molecule(s), "
            "which leaves none to train on; give more molecules or set "
            "early_stopping=False.")


def skorch_training_options(estimator, n_samples, seed):
    """``build_net`` keyword arguments (``train_split``, ``callbacks``) for ``estimator``.

    Parameters
    ----------
    estimator : estimator with the four training parameters, ``max_epochs`` and
        ``batch_size``
    n_samples : int
        Training molecules.
    seed : int
        Seeds the validation split.

    Returns
    -------
    options : dict
    """
    import torch
    from skorch.callbacks import EarlyStopping, LRScheduler
    from skorch.dataset import ValidSplit

    check_early_stopping_size(estimator, n_samples)
    callbacks, options = [], {}
    n_train = n_samples
    if estimator.early_stopping:
        options["train_split"] = ValidSplit(cv=float(estimator.validation_fraction),
                                            stratified=False, random_state=int(seed))
        n_train = n_samples - n_validation(n_samples, estimator.validation_fraction)
        callbacks.append(("early_stopping", EarlyStopping(
            monitor="valid_loss", patience=int(estimator.n_iter_no_change), threshold=0.0,
            load_best=True, sink=_silent)))
    if estimator.lr_schedule == "warmup_decay" and estimator.max_epochs > 0:
        per_epoch = math.ceil(n_train / estimator.batch_size)
        callbacks.append(("lr_schedule", LRScheduler(
            policy=torch.optim.lr_scheduler.LambdaLR, step_every="batch",
            lr_lambda=WarmupDecay(WARMUP_EPOCHS * per_epoch,
                                  per_epoch * estimator.max_epochs))))
    options["callbacks"] = callbacks or None
    return options


def _silent(*args, **kwargs):
    """A sink for skorch's early-stopping message (module level: nets pickle)."""
