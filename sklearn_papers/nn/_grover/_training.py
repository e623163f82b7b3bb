"""GROVER's training through skorch: the net class that feeds graph batches to the
model, the collate function of labelled batches, and the pretraining and fine-tuning
losses as skorch criteria.

The estimators build the net with :func:`sklearn_papers.nn._skorch.build_net` and the
callbacks every graph model gets (the divergence check, early stopping on held-out
molecules with the best epoch restored, the learning-rate schedule: see
``chem/_training.py``), so GROVER trains as the other graph models do.
"""

from skorch import NeuralNet
from torch import nn

from sklearn_papers.nn._graph import GraphBatch
from sklearn_papers.nn._grover._data import collate_grover
from sklearn_papers.nn._grover._heads import grover_finetune_loss, grover_pretrain_loss

__all__ = ["FinetuneCriterion", "GroverNet", "PretrainCriterion", "collate_labelled"]


class GroverNet(NeuralNet):
    """skorch ``NeuralNet`` whose ``infer`` moves a
    :class:`~sklearn_papers.nn._graph.GraphBatch` to the device and calls
    ``module(**batch.tensors)``; everything else is skorch's."""

    def infer(self, x, **fit_params):
        if isinstance(x, GraphBatch):
            return self.module_(**x.to(self.device).tensors, **fit_params)
        return super().infer(x, **fit_params)


def collate_labelled(items):
    """:func:`~sklearn_papers.nn._grover.collate_grover` without the label kinds the
    dataset does not have (skorch moves every label tensor to the device).

    Returns
    -------
    batch : GraphBatch
    labels : dict of str to torch.Tensor
    """
    batch, labels = collate_grover(items)
    return batch, {k: v for k, v in labels.items() if v is not None}


class PretrainCriterion(nn.Module):
    """GROVER's self-supervised loss (:func:`grover_pretrain_loss`) as a skorch criterion.

    Parameters
    ----------
    dist_coef : float, default=0.1
        Weight of the disagreement between the node-view and edge-view predictions.
    """

    def __init__(self, dist_coef=0.1):
        super().__init__()
        self.dist_coef = float(dist_coef)

    def forward(self, out, labels):
        return grover_pretrain_loss(out, labels["atom"], labels["bond"], labels["motif"],
                                    self.dist_coef)[0]


class FinetuneCriterion(nn.Module):
    """GROVER's fine-tuning loss (:func:`grover_finetune_loss`) as a skorch criterion.

    In training the model returns the predictions of its two views, and the loss is the
    task loss of each plus ``dist_coef`` times their disagreement; in evaluation (the
    validation loss of early stopping) it returns their mean, whose task loss is the
    validation loss.

    Parameters
    ----------
    task : {"regression", "binary", "multiclass"}
    dist_coef : float, default=0.1
    weighted : bool, default=False
        The targets carry the sample weights as a last column
        (:func:`~sklearn_papers.nn._skorch.pack_sample_weight`).
    """

    def __init__(self, task, dist_coef=0.1, weighted=False):
        super().__init__()
        self.task, self.dist_coef, self.weighted = task, float(dist_coef), bool(weighted)

    def forward(self, pred, labels):
        y, w = labels["y"], None
        if self.weighted:
            y, w = (y[:, 0].long() if self.task == "multiclass" else y[:, :-1]), y[:, -1]
        if isinstance(pred, tuple):  # training: the two views
            return grover_finetune_loss(pred, y, self.task, self.dist_coef, sample_weight=w)
        return grover_finetune_loss((pred, pred), y, self.task, 0.0, sample_weight=w) / 2
