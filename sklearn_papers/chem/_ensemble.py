"""An ensemble of graph networks trained alike from different seeds, as one module.

The graph predictors' ``ensemble_size`` (chemprop's ``ensemble_size``, Yang et al. 2019)
trains that many networks and predicts with their mean: :class:`MeanOfMembers` holds the
members and combines their outputs, and :func:`member_seeds` gives each member's seed.
"""

import numpy as np
import torch

__all__ = ["MeanOfMembers", "member_seeds"]

#: How the members' outputs are combined, by the kind of target: the mean of the
#: regression outputs, or the logits of the mean class probabilities.
COMBINE = ("mean", "sigmoid", "softmax")


def member_seeds(seed, n_members):
    """The seeds of ``n_members`` networks of one fit whose seed is ``seed``.

    Member 0 gets ``seed`` itself, so that it is the network a fit with one member trains;
    member ``k >= 1`` gets child ``k - 1`` of
    :func:`~sklearn_papers.utils._seeding.spawn_seeds` of ``seed``, which does not depend
    on ``n_members``: a larger ensemble holds the members of a smaller one.

    Parameters
    ----------
    seed : int
        The fit's seed (drawn once from ``random_state``).
    n_members : int
        Number of networks, at least 1.

    Returns
    -------
    seeds : iterator of int
        ``n_members`` seeds, the first one ``seed``, each made when it is reached (a
        large ensemble starts training at once).
    """
    yield int(seed)
    for k in range(n_members - 1):
        # child k of SeedSequence(seed).spawn(n), made alone
        child = np.random.SeedSequence(int(seed), spawn_key=(k,))
        yield int(child.generate_state(1, dtype=np.uint32)[0] % np.iinfo(np.int32).max)


class MeanOfMembers(torch.nn.Module):
    """Several networks with the same inputs and outputs, predicting as one.

    Parameters
    ----------
    members : list of torch.nn.Module
        Trained networks; each maps the batch tensors to ``(n, n_outputs)`` outputs.
    combine : {"mean", "sigmoid", "softmax"}
        ``"mean"``: the mean of the members' outputs (regression). ``"sigmoid"``: the
        logit of the mean of the members' sigmoid probabilities (binary and multi-task
        classification). ``"softmax"``: the log of the mean of their softmax
        probabilities (multiclass). The classifiers' probabilities computed from these
        outputs are the mean of the members' probabilities, as chemprop averages them.
    """

    def __init__(self, members, combine="mean"):
        super().__init__()
        if combine not in COMBINE:
            raise ValueError(f"combine should be one of {COMBINE}, got {combine!r}.")
        self.members = torch.nn.ModuleList(members)
        self.combine = combine

    def forward(self, **tensors):
        outputs = torch.stack([member(**tensors).double() for member in self.members])
        if self.combine == "mean":
            return outputs.mean(dim=0)
        if self.combine == "sigmoid":
            return torch.logit(torch.sigmoid(outputs).mean(dim=0))
        return torch.log(torch.softmax(outputs, dim=-1).mean(dim=0))
