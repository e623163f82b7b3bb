"""skorch glue shared by every torch estimator, one job a module.

* ``_fit``: the skeleton of ``fit`` (:func:`torch_fit`: device, dtype, seeding, net,
  fitted attributes) and of inference (:func:`torch_inference`);
* ``_factory``: :func:`build_net`, the one factory of skorch nets;
* ``_device``: :func:`check_device` and :func:`default_dtype`;
* ``_callbacks``: the epoch table, the divergence check, early stopping and the
  learning-rate schedule;
* ``_loaders``: batch samplers (near-equal sizes; fixed sizes, one order a pass);
* ``_losses`` and ``_nets``: the losses and net subclasses that more than one model trains
  with (a net subclass that runs one model's own training step stays beside that model);
* seeding (:func:`seed_from_random_state`, :func:`spawn_seeds`, :func:`torch_seeded`)
  lives in :mod:`sklearn_papers.utils._seeding`, re-exported here.

Public estimators own a skorch ``NeuralNet`` built inside ``fit`` (see STYLE.md and
CONTRIBUTING.md). The package imports no family.
"""

from sklearn_papers.nn._skorch._callbacks import (
    HOLD_AFTER,
    WARMUP_EPOCHS,
    FiniteLossCheck,
    LabelledRowsSplit,
    PlainPrintLog,
    StillImprovingWarning,
    WarmupDecay,
    check_early_stopping_size,
    divergence_error,
    labelled_rows,
    loss_curve,
    n_validation,
    training_callbacks,
)
from sklearn_papers.nn._skorch._device import check_device, default_dtype
from sklearn_papers.nn._skorch._factory import TRAINING_PARAMS, build_net
from sklearn_papers.nn._skorch._fit import (
    TorchFit,
    estimator_inference,
    set_fitted_net,
    torch_fit,
    torch_inference,
)
from sklearn_papers.nn._skorch._loaders import (
    EvenBatchLoader,
    EvenBatchSampler,
    PassBatchLoader,
    PassBatchSampler,
)
from sklearn_papers.nn._skorch._losses import (
    SampleWeightedTargetLoss,
    pack_sample_weight,
    soft_cross_entropy,
)
from sklearn_papers.nn._skorch._nets import SampleWeightedNet, SoftTargetNet, WeightPenaltyNet
from sklearn_papers.utils._seeding import seed_from_random_state, spawn_seeds, torch_seeded

__all__ = ["EvenBatchLoader", "EvenBatchSampler", "FiniteLossCheck", "HOLD_AFTER",
           "LabelledRowsSplit", "PassBatchLoader", "PassBatchSampler", "PlainPrintLog",
           "SampleWeightedNet",
           "SampleWeightedTargetLoss", "SoftTargetNet", "StillImprovingWarning",
           "TRAINING_PARAMS", "TorchFit", "WARMUP_EPOCHS", "WarmupDecay", "WeightPenaltyNet",
           "build_net", "check_device", "check_early_stopping_size", "default_dtype",
           "divergence_error", "estimator_inference", "labelled_rows", "loss_curve", "n_validation",
           "pack_sample_weight", "seed_from_random_state", "set_fitted_net",
           "soft_cross_entropy", "spawn_seeds", "torch_fit", "torch_inference",
           "torch_seeded", "training_callbacks"]
