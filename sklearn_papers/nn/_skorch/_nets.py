"""skorch net subclasses that more than one model trains with."""

from skorch import NeuralNet
from skorch.utils import to_tensor

from sklearn_papers.nn._graph import GraphBatch
from sklearn_papers.nn._skorch._losses import soft_cross_entropy

__all__ = ["SampleWeightedNet", "SoftTargetNet", "WeightPenaltyNet"]


class SampleWeightedNet(NeuralNet):
    """skorch net whose criterion receives the batch's sample weights.

    Only ``get_loss`` is overridden (a documented skorch extension point), following
    skorch's recipe for sample weights (its FAQ: "How do I use sample weights?"): fit on
    ``X = {"X": X, "sample_weight": w}``; the criterion is then called as
    ``criterion(y_pred, y_true, sample_weight=w_batch)``, and as ``criterion(y_pred,
    y_true)`` when ``X`` carries no weights. ``y`` may be an array or a dict of arrays,
    which skorch batches alike.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The criterion's loss, with the batch's sample weights when ``X`` has them."""
        y_true = to_tensor(y_true, device=self.device)
        if isinstance(X, dict) and "sample_weight" in X:
            weight = to_tensor(X["sample_weight"], device=self.device)
            return self.criterion_(y_pred, y_true, sample_weight=weight)
        return self.criterion_(y_pred, y_true)


class SoftTargetNet(NeuralNet):
    """skorch net minimising ``mean_b(w_b * CE_b) + module.penalty()``.

    ``w`` are the per-row weights from ``X["sample_weight"]`` (normalised by the estimator
    to mean one over the training rows), ``CE`` is :func:`soft_cross_entropy` and
    ``penalty`` an optional term of the module (the KL divergence to the prior of a
    variational classifier, already divided by the number of training rows). Only
    parameters with ``requires_grad`` reach the optimiser, so frozen columns of a
    progressive network are not even visited by it.

    Parameters
    ----------
    *args, **kwargs
        As for ``skorch.NeuralNet``.
    task_index : int or None, default=None
        With an int, the module is called as ``module(X, task_index)`` (the head of a
        multi-head module, such as one column of a progressive network); with None, as
        skorch calls it (``module(**X)`` for a dict ``X``).
    """

    def __init__(self, *args, task_index=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.task_index = task_index

    def infer(self, x, **fit_params):
        if self.task_index is None:
            return super().infer(x, **fit_params)
        x = to_tensor(x, device=self.device)
        return self.module_(x["X"] if isinstance(x, dict) else x, self.task_index)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = y_true.to(y_pred.device)
        ce = soft_cross_entropy(y_pred, y_true)
        if isinstance(X, dict) and X.get("sample_weight") is not None:
            ce = ce * X["sample_weight"].to(ce.device)
        loss = ce.mean()
        penalty = getattr(self.module_, "penalty", None)
        if callable(penalty):
            loss = loss + penalty()
        return loss

    def get_all_learnable_params(self):
        for name, param in self.module_.named_parameters():
            if param.requires_grad:
                yield name, param


class WeightPenaltyNet(NeuralNet):
    """skorch ``NeuralNet`` for graph batches, adding an L2 penalty to the loss.

    ``get_loss`` adds ``alpha * mean(w^2)`` over all weights (the L2 prior of Duvenaud et
    al.'s code, ``L2_reg * w.w / len(w)``); ``infer`` moves a
    :class:`~sklearn_papers.nn._graph.GraphBatch` to the device and calls
    ``module(**batch.tensors)``. Only these documented extension points are overridden;
    with ``alpha=0`` and array input it is a plain ``NeuralNet``.

    Parameters
    ----------
    *args, **kwargs
        As for ``skorch.NeuralNet``.
    alpha : float, default=0.0
        Weight of the penalty.
    """

    def __init__(self, *args, alpha=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.alpha = alpha

    def infer(self, x, **fit_params):
        if isinstance(x, GraphBatch):
            return self.module_(**x.to(self.device).tensors, **fit_params)
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        loss = super().get_loss(y_pred, y_true, X=X, training=training)
        if self.alpha and training:
            params = [p for p in self.module_.parameters() if p.requires_grad]
            n = sum(p.numel() for p in params)
            loss = loss + self.alpha * sum((p ** 2).sum() for p in params) / n
        return loss
