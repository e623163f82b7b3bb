"""The four training parameters of the graph-network estimators, as they are documented
and validated: early stopping, validation fraction, patience and learning-rate schedule.

Every graph model (neural fingerprint, MPNN, GROVER) trains through a skorch net built by
:func:`sklearn_papers.nn._skorch.build_net`, which reads these parameters from the estimator
and installs their callbacks (:func:`sklearn_papers.nn._skorch.training_callbacks`: the
held-out split of the labelled molecules, early stopping with the best epoch restored,
chemprop's warm-up and decay schedule per batch).
"""

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

#: What to change when a graph model's fit diverges (``lr``: the estimator's).
DIVERGENCE_HINT = ("lower lr={lr!r}, or check that the targets are finite and of a "
                   "moderate size.")

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
