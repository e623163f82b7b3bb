"""Scores for multi-task binary targets with missing labels (Tox21-style 0 / 1 / NaN)."""

import numpy as np
from sklearn.metrics import roc_auc_score

from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["masked_roc_auc_score", "masked_roc_auc_scorer"]


def _as_2d_float(values, name):
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.iscomplexobj(values):  # a cast to float would drop the imaginary part
        raise ValueError(f"{name} must hold real numbers; got complex values.")
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers (NaN for a missing label): {exc}") \
            from None
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {values.shape}.")
    return values


@with_numpy_inputs
def masked_roc_auc_score(y_true, y_score, *, average="macro"):
    """ROC-AUC per task over the labelled molecules only, averaged over tasks.

    The MoleculeNet convention for data sets such as Tox21 (Wu et al. 2018, MoleculeNet,
    Sec. 3.2): each task is scored on the molecules that have a label for it (NaN is a
    missing label), tasks whose labelled molecules hold a single class are skipped, and
    the mean over the remaining tasks is reported.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_tasks)
        Binary labels 0 / 1, NaN (or ``pd.NA``) where missing.
    y_score : array-like of shape (n_samples,), (n_samples, n_tasks) or (n_samples, 2)
        Probability (or any score) of class 1 per task. For one task a two-column
        ``predict_proba`` output is accepted (its second column is used).
    average : {"macro", None}, default="macro"
        ``"macro"``: the unweighted mean over the scored tasks; ``None``: the score of
        every task, NaN for a skipped one.

    Returns
    -------
    score : float or ndarray of shape (n_tasks,)
        The mean ROC-AUC over the scored tasks (``average="macro"``), or one per task.

    Raises
    ------
    ValueError
        If the shapes differ, either array holds complex values, labels other than 0, 1
        or NaN occur, a labelled molecule has a non-finite score, or no task has both
        classes among its labelled molecules.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import masked_roc_auc_score
    >>> y = np.array([[0, 1], [1, np.nan], [0, 0], [1, 1]])
    >>> p = np.array([[0.1, 0.9], [0.8, 0.5], [0.3, 0.2], [0.7, 0.6]])
    >>> float(masked_roc_auc_score(y, p))
    1.0
    """
    if average not in ("macro", None):
        raise ValueError(f"average must be 'macro' or None, got {average!r}.")
    y_true = _as_2d_float(y_true, "y_true")
    y_score = _as_2d_float(y_score, "y_score")
    if y_true.shape[1] == 1 and y_score.shape[1] == 2:
        y_score = y_score[:, 1:]
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_score has shape "
                         f"{y_score.shape}.")
    labelled = ~np.isnan(y_true)
    bad = labelled & ~np.isin(y_true, (0.0, 1.0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"y_true[{i}, {j}] = {float(y_true[i, j])}: labels must be 0, 1 or NaN "
                         "(missing).")
    bad = labelled & ~np.isfinite(y_score)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"y_score[{i}, {j}] = {float(y_score[i, j])} is not finite for a "
                         "labelled molecule (an invalid molecule predicted NaN?).")
    scores = np.full(y_true.shape[1], np.nan)
    for j in range(y_true.shape[1]):
        rows = labelled[:, j]
        if len(np.unique(y_true[rows, j])) == 2:
            scores[j] = roc_auc_score(y_true[rows, j], y_score[rows, j])
    if np.isnan(scores).all():
        raise ValueError("No task has both classes among its labelled molecules: ROC-AUC "
                         "is undefined.")
    return scores if average is None else float(np.nanmean(scores))


@with_numpy_inputs
def masked_roc_auc_scorer(estimator, X, y_true):
    """Scorer of :func:`masked_roc_auc_score` on ``estimator.predict_proba(X)``.

    For ``scoring=`` of ``cross_val_score`` / ``GridSearchCV``. A plain
    ``make_scorer(..., response_method="predict_proba")`` would keep only the second
    column for an estimator with two classes, which drops every task but one of a
    multi-task classifier; this scorer passes all of them.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``predict_proba``.
    X : array-like
        Input of ``predict_proba``.
    y_true : array-like of shape (n_samples,) or (n_samples, n_tasks)
        Labels 0 / 1, NaN where missing.

    Returns
    -------
    score : float
        Greater is better.

    Examples
    --------
    >>> from sklearn.model_selection import KFold, cross_val_score
    >>> from sklearn_papers.chem import MPNNClassifier
    >>> from sklearn_papers.datasets import load_tox21
    >>> from sklearn_papers.metrics import masked_roc_auc_scorer
    >>> X, Y = load_tox21(return_X_y=True)
    >>> clf = MPNNClassifier(hidden_size=16, max_epochs=1, verbose=0, random_state=0)
    >>> scores = cross_val_score(clf, X[:60], Y[:60], cv=KFold(2),
    ...                          scoring=masked_roc_auc_scorer)
    >>> scores.shape
    (2,)
    """
    return masked_roc_auc_score(y_true, estimator.predict_proba(X))
