"""skorch glue shared by the continual-learning estimators: a weighted soft-target net.

Both :class:`~sklearn_papers.continual.ProgressiveNetworkClassifier` and
:class:`~sklearn_papers.continual.GenerativeReplayClassifier` train with cross-entropy
against *target distributions* (one-hot rows for real labels; the previous model's soft
predictions for distilled replay), weighted per row. The inputs travel as the skorch dict
``{"X": X, "sample_weight": w}`` and the targets as float rows, the pattern skorch documents
for sample weights (its FAQ: "How do I use sample weights?").
"""

import torch
from skorch import NeuralNet
from skorch.utils import to_tensor

__all__ = ["SoftTargetNet", "soft_cross_entropy"]


def soft_cross_entropy(logits, targets):
    """Per-row cross-entropy ``-sum_c t_c log softmax(z)_c``.

    Parameters
    ----------
    logits : torch.Tensor of shape (B, C)
    targets : torch.Tensor of shape (B, C)
        Rows summing to one.

    Returns
    -------
    torch.Tensor of shape (B,)
    """
    return -(targets * torch.log_softmax(logits, dim=1)).sum(dim=1)


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
