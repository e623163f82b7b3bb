"""The four training parameters of the graph-network estimators, as they are validated: early stopping, validation fraction, patience and learning-rate schedule.

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
