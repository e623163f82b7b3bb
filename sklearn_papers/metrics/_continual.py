"""Continual learning: what learning later tasks does to the accuracy on earlier ones."""

import numpy as np

from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["backward_transfer"]


@with_numpy_inputs
def backward_transfer(just_learnt, final):
    """Mean change of the earlier tasks' scores from right after learning each to the end.

    ``BWT = mean over tasks i < T of (final[i] - just_learnt[i])``, for ``T`` tasks
    learnt in order. Negative: the later tasks made the model forget (``-BWT`` is the
    average forgetting); positive: they helped. The last task has no later task and is
    left out.

    Parameters
    ----------
    just_learnt : array-like of shape (n_tasks,)
        Score (e.g. accuracy) of every task right after learning it, in task order.
    final : array-like of shape (n_tasks,)
        Score of every task after the last task.

    Returns
    -------
    bwt : float
        In the scores' units.

    Raises
    ------
    ValueError
        If an array is not 1-D or holds NaN or inf (the message names it), or the two
        have different lengths or fewer than two tasks.

    References
    ----------
    .. [1] Lopez-Paz, D. and Ranzato, M. (2017). Gradient episodic memory for continual
       learning. NeurIPS 30 (backward transfer, Sec. 2).

    Examples
    --------
    >>> from sklearn_papers.metrics import backward_transfer
    >>> backward_transfer([1.0, 0.75, 0.5], [0.5, 0.5, 0.5])
    -0.375
    """
    arrays = {}
    for name, value in (("just_learnt", just_learnt), ("final", final)):
        arrays[name] = np.asarray(value, dtype=float)
        if arrays[name].ndim != 1:
            raise ValueError(f"{name} must be 1-D, a score per task, got shape "
                             f"{arrays[name].shape}")
        if not np.all(np.isfinite(arrays[name])):
            raise ValueError(f"{name} holds NaN or inf: {arrays[name].tolist()}")
    just_learnt, final = arrays.values()
    if len(just_learnt) != len(final):
        raise ValueError(f"just_learnt and final hold a score per task: got "
                         f"{len(just_learnt)} and {len(final)} values")
    if len(final) < 2:
        raise ValueError(f"backward transfer needs at least two tasks, got {len(final)}")
    return float(np.mean(np.subtract(final, just_learnt)[:-1]))
