"""Target handling shared by the graph-network estimators (numpy only, no torch).

The neural fingerprint, MPNN and GROVER estimators encode classification labels,
turn network logits into probabilities and labels, and standardise regression targets
the same way; these pure functions hold that logic once.
"""

import warnings

import numpy as np
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets

from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._validation import first_non_number

#: Loss names returned by :func:`encode_classification_targets`.
BCE_LOSS = "bce"
CROSS_ENTROPY_LOSS = "cross_entropy"
#: Loss name of regression on :func:`standardize_targets` output (NaN-masked squared error).
MSE_LOSS = "mse"


def check_labelled_columns(y, *, n_left_out=0):
    """Raise if a target column holds no label at all (every entry NaN).

    The one check (and message) for every graph estimator, regression or multi-task
    classification: a column without a label gives no loss and trains nothing.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets, NaN for a missing label. Non-numeric labels (class names) are not
        checked.
    n_left_out : int, default=0
        Number of invalid molecules left out of ``y`` before (``errors="nan"``); named
        in the message, since their labels may have been the only ones.

    Raises
    ------
    ValueError
        Naming the columns without any label.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.chem._targets import check_labelled_columns
    >>> check_labelled_columns([[0.0, np.nan], [1.0, np.nan]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y column(s) [1] hold no label: every entry is NaN (missing). ...
    """
    y = np.asarray(y)
    if y.dtype.kind not in "fc":
        if y.dtype.kind != "O":
            return
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            return
    if y.ndim == 0 or not len(y):
        return
    empty = np.flatnonzero(np.isnan(y.reshape(len(y), -1)).all(axis=0))
    if empty.size:
        where = (f" among the valid molecules ({n_left_out} invalid molecule(s) were left "
                 "out with errors='nan')" if n_left_out else "")
        raise ValueError(
            f"y column(s) {empty.tolist()} hold no label: every entry is NaN (missing)"
            f"{where}. Each target column needs at least one labelled molecule; drop "
            "the column(s) or label some of their molecules."
        )


def encode_classification_targets(y):
    """Encode classifier labels for a network head.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_tasks)
        Class labels, or a 2-D matrix of 0/1 labels with NaN for a missing label
        (multi-task binary classification).

    Returns
    -------
    task : {"multitask", "binary", "multiclass"}
        Kind of target.
    classes : ndarray of shape (n_classes,)
        Sorted class labels; ``[0, 1]`` for multi-task targets.
    target : ndarray
        Training target: float32 of shape (n_samples, n_tasks) with NaN kept
        (multi-task), float32 codes of shape (n_samples, 1) (binary), or int64 codes of
        shape (n_samples,) (multiclass).
    n_outputs : int
        Width of the network output: n_tasks, 1 or n_classes.
    loss : {"bce", "cross_entropy"}
        Loss to train with: binary cross-entropy on logits (NaN-masked), or softmax
        cross-entropy.

    Raises
    ------
    ValueError
        If a multi-task matrix holds a value other than 0, 1 or NaN, or a task column
        without any label (see :func:`check_labelled_columns`), or if ``y`` has a single
        class.

    Examples
    --------
    >>> from sklearn_papers.chem._targets import encode_classification_targets
    >>> task, classes, target, n_outputs, loss = encode_classification_targets(["a", "b", "a"])
    >>> task, classes.tolist(), target.ravel().tolist(), n_outputs, loss
    ('binary', ['a', 'b'], [0.0, 1.0, 0.0], 1, 'bce')
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] > 1:
        y = check_array(y, dtype=np.float64, ensure_all_finite="allow-nan", input_name="y")
        labelled = y[~np.isnan(y)]
        if not np.isin(labelled, (0.0, 1.0)).all():
            raise ValueError(
                "Multi-task y must hold 0, 1 or NaN (missing label); got values "
                f"{np.unique(labelled[~np.isin(labelled, (0.0, 1.0))])[:5]}."
            )
        check_labelled_columns(y)
        return "multitask", np.array([0, 1]), y.astype(np.float32), y.shape[1], BCE_LOSS
    y = column_or_1d(y, warn=True)
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"y has a single class {classes[0]!r}; a classifier needs at least two."
        )
    if len(classes) == 2:
        return "binary", classes, codes.astype(np.float32)[:, None], 1, BCE_LOSS
    return "multiclass", classes, codes.astype(np.int64), len(classes), CROSS_ENTROPY_LOSS


def classification_criterion(loss):
    """The torch loss class for a loss name of :func:`encode_classification_targets`.

    Parameters
    ----------
    loss : {"bce", "cross_entropy"}
        Loss name.

    Returns
    -------
    criterion : type
        ``MaskedBCEWithLogitsLoss`` (NaN targets left out) or
        ``torch.nn.CrossEntropyLoss``; torch is imported only here.
    """
    if loss == BCE_LOSS:
        from sklearn_papers.nn._neural_fingerprint import MaskedBCEWithLogitsLoss

        return MaskedBCEWithLogitsLoss
    import torch

    return torch.nn.CrossEntropyLoss


def proba_from_logits(logits, task):
    """Class probabilities from network logits.

    Parameters
    ----------
    logits : ndarray of shape (n_samples, n_outputs)
        Network outputs; NaN rows (invalid molecules) stay NaN.
    task : {"multitask", "binary", "multiclass"}
        Kind of target, as returned by :func:`encode_classification_targets`.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes) or (n_samples, n_tasks)
        Float64. Softmax over classes (multiclass), ``[1 - p, p]`` with the sigmoid
        ``p`` (binary), or the per-task sigmoid (multi-task).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.chem._targets import proba_from_logits
    >>> proba_from_logits(np.array([[0.0]]), "binary")
    array([[0.5, 0.5]])
    """
    logits = np.asarray(logits, dtype=np.float64)
    if task == "multiclass":
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)
    p = 1.0 / (1.0 + np.exp(-logits))
    return np.hstack([1.0 - p, p]) if task == "binary" else p


def predict_from_proba(proba, task, classes):
    """Class labels from probabilities.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes) or (n_samples, n_tasks)
        Output of :func:`proba_from_logits`; a row holding NaN marks an invalid molecule.
    task : {"multitask", "binary", "multiclass"}
        Kind of target.
    classes : ndarray of shape (n_classes,)
        Class labels, in the column order of ``proba``.

    Returns
    -------
    y_pred : ndarray of shape (n_samples,) or (n_samples, n_tasks)
        Multi-task: ``proba > 0.5`` as int64, or float64 with NaN rows when some rows
        are invalid. Otherwise the most probable class; with invalid rows, float64 with
        NaN (numeric classes) or object with None (other classes).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.chem._targets import predict_from_proba
    >>> predict_from_proba(np.array([[0.2, 0.8], [np.nan, np.nan]]), "binary",
    ...                    np.array(["a", "b"]))
    array(['b', None], dtype=object)
    """
    valid = ~np.isnan(proba).any(axis=1)
    if task == "multitask":
        if valid.all():
            return (proba > 0.5).astype(np.int64)
        out = (proba > 0.5).astype(np.float64)
        out[~valid] = np.nan
        return out
    labels = classes[np.argmax(np.nan_to_num(proba), axis=1)]
    if valid.all():
        return labels
    if np.issubdtype(classes.dtype, np.number):
        labels = labels.astype(np.float64)
        labels[~valid] = np.nan
    else:
        labels = labels.astype(object)
        labels[~valid] = None
    return labels


def _require_numeric_targets(y, estimator=None, transformer=False):
    """Raise a clear ValueError, naming ``estimator``, when regression targets hold text."""
    item = first_non_number(y)
    if item is None:
        return
    if estimator is None:
        raise ValueError(
            f"y must hold numbers: it is used as regression targets here, but it holds "
            f"{item!r}. Class labels belong to the *Classifier estimators; otherwise encode "
            "the labels as numbers first.")
    if transformer:
        raise ValueError(
            f"y must hold numbers: {estimator} trains its network on y as regression "
            f"targets when it gets one, but y holds {item!r}. Inside a classification "
            f"Pipeline use {estimator}(max_epochs=0) (random weights, y ignored), or "
            "encode the labels as numbers first.")
    raise ValueError(
        f"y must hold numbers: {estimator} uses it as regression targets, but it holds "
        f"{item!r}. Class labels belong to the *Classifier estimators; otherwise encode "
        "the labels as numbers first.")


def standardize_targets(y, *, allow_nan=True, require_labels=False, estimator=None,
                        transformer=False):
    """Check regression targets and scale each column to zero mean, unit variance.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Regression targets.
    allow_nan : bool, default=True
        Accept NaN (a missing value, left out of the mean and standard deviation and
        kept as NaN in the target); otherwise NaN raises ``ValueError``.
    require_labels : bool, default=False
        Raise ``ValueError`` (see :func:`check_labelled_columns`) for a column without
        any finite value; otherwise such a column is accepted (its mean is NaN, its
        scale 1).
    estimator : str or None, default=None
        Class name of the estimator training on ``y``, named in the error for text
        labels.
    transformer : bool, default=False
        Whether that estimator is a transformer (which trains on ``y`` only when given
        one): the error then suggests ``max_epochs=0``.

    Returns
    -------
    target : ndarray of shape (n_samples, n_targets)
        Standardised float32 targets.
    mean : ndarray of shape (n_targets,)
        Column means (float64), ignoring NaN.
    scale : ndarray of shape (n_targets,)
        Column standard deviations (float64), ignoring NaN; 1 where it is 0 or not finite.
    is_1d : bool
        Whether ``y`` was 1-D.

    Raises
    ------
    ValueError
        If ``y`` holds text (naming ``estimator``), infinite values, NaN while
        ``allow_nan=False``, more than two dimensions, an empty column while
        ``require_labels=True``, or a column so large that its mean or standard deviation
        overflows float64.

    Examples
    --------
    >>> from sklearn_papers.chem._targets import standardize_targets
    >>> target, mean, scale, is_1d = standardize_targets([1.0, 3.0, float("nan")])
    >>> target.ravel().tolist(), mean.tolist(), scale.tolist(), is_1d
    ([-1.0, 1.0, nan], [2.0], [1.0], True)
    """
    _require_numeric_targets(y, estimator, transformer)
    if np.ndim(y) > 2:
        raise ValueError(
            f"y must be 1-D (one target) or 2-D (one column per task); got shape "
            f"{np.shape(y)}. Reshape it, e.g. y.reshape(len(y), -1).")
    y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y",
                    ensure_all_finite="allow-nan" if allow_nan else True)
    y2 = y.reshape(len(y), -1)
    if require_labels:
        check_labelled_columns(y2)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.nanmean(y2, axis=0)
        std = np.nanstd(y2, axis=0)
    labelled = (~np.isnan(y2)).any(axis=0)
    overflow = labelled & ~(np.isfinite(mean) & np.isfinite(std))
    if overflow.any():
        j = int(np.flatnonzero(overflow)[0])
        raise ValueError(
            f"y column {j} is too large to standardise: its mean or standard deviation "
            f"overflows float64 (largest absolute value {np.nanmax(np.abs(y2[:, j])):.3g})"
            "; rescale the target.")
    scale = np.where(np.isfinite(std) & (std > 0), std, 1.0)
    return ((y2 - mean) / scale).astype(np.float32), mean, scale, y.ndim == 1


def destandardize_outputs(out, mean, scale, is_1d):
    """Bring standardised network outputs back to the original units.

    Parameters
    ----------
    out : ndarray of shape (n_samples, n_targets)
        Network outputs; NaN rows (invalid molecules) stay NaN.
    mean, scale : ndarray of shape (n_targets,)
        As returned by :func:`standardize_targets`.
    is_1d : bool
        Return a 1-D array (the targets were 1-D).

    Returns
    -------
    y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Float64 predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.chem._targets import destandardize_outputs
    >>> destandardize_outputs(np.array([[-1.0], [1.0]]), np.array([2.0]), np.array([1.0]),
    ...                       True)
    array([1., 3.])
    """
    pred = np.asarray(out).astype(np.float64) * scale + mean
    return pred[:, 0] if is_1d else pred


class ExtrapolationWarning(UserWarning):
    """Warning: a regressor predicted far outside the range of its training targets.

    Raised by ``predict`` of :class:`NeuralFingerprintRegressor`,
    :class:`MPNNRegressor` and :class:`GroverRegressor` when a prediction lies more than
    the training targets' range width below their minimum or above their maximum (per
    target column; for targets from -5 to 1, a prediction below -11 or above 7). Such a
    molecule is unlike the training molecules: the network extrapolates, and the value
    is not supported by the data. The message names how many rows, their positions and
    the training range. Check those molecules against the training set (their nearest
    training neighbours, e.g. by Tanimoto similarity on ECFP), add similar molecules to
    the training data, or filter this warning where extrapolation is meant.

    References
    ----------
    .. [1] Sheridan, R. P., Feuston, B. P., Maiorov, V. N. & Kearsley, S. K. (2004).
       Similarity to molecules in the training set is a good discriminator for prediction
       accuracy in QSAR. J. Chem. Inf. Comput. Sci. 44, 1912-1928.
       https://doi.org/10.1021/ci049782w

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_papers.chem._targets import ExtrapolationWarning, warn_extrapolation
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     far = warn_extrapolation(np.array([0.5, 11.0]), np.array([-5.0]),
    ...                              np.array([1.5]), "NeuralFingerprintRegressor")
    >>> far.tolist(), caught[0].category is ExtrapolationWarning
    ([False, True], True)
    """


def training_range(y):
    """Per-column minimum and maximum of the labelled regression targets.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Float targets; NaN (missing) is ignored.

    Returns
    -------
    low, high : ndarray of shape (n_targets,)
        Float64; NaN for a column without a label.
    """
    y2 = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    labelled = (~np.isnan(y2)).any(axis=0)
    low = np.full(y2.shape[1], np.nan)
    high = np.full(y2.shape[1], np.nan)
    low[labelled] = np.nanmin(y2[:, labelled], axis=0)
    high[labelled] = np.nanmax(y2[:, labelled], axis=0)
    return low, high


def warn_extrapolation(pred, low, high, estimator, max_listed=10):
    """Warn (:class:`ExtrapolationWarning`) for predictions far outside the training range.

    A prediction is far outside when it lies more than ``high - low`` below ``low`` or
    above ``high``. Columns whose training targets are all equal (width 0) or missing,
    and NaN predictions (invalid molecules), are not checked.

    Parameters
    ----------
    pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Predictions in the targets' units.
    low, high : ndarray of shape (n_targets,)
        The training targets' range, as returned by :func:`training_range`.
    estimator : str
        Class name of the predicting estimator, named in the message.
    max_listed : int, default=10
        Positions and values listed in the message at most.

    Returns
    -------
    far : ndarray of shape (n_samples,), dtype=bool
        Rows with at least one prediction far outside the range.
    """
    p2 = np.asarray(pred, dtype=np.float64).reshape(len(pred), -1)
    width = high - low
    checked = np.isfinite(width) & (width > 0)
    with np.errstate(invalid="ignore"):
        far_cells = ((p2 < low - width) | (p2 > high + width)) & checked
    far = far_cells.any(axis=1)
    if far.any():
        rows = np.flatnonzero(far)
        # Each listed row with its first far column: rows far in different columns are
        # listed with the prediction that is far, and that column's range.
        cols = far_cells[rows].argmax(axis=1)
        if p2.shape[1] > 1:
            ranges = "; ".join(
                f"target column {j}: {low[j]:.3g} to {high[j]:.3g}, width ({width[j]:.3g})"
                for j in np.unique(cols[:max_listed]))
            listed = ", ".join(f"{int(i)} (column {int(j)}: {p2[i, j]:.3g})"
                               for i, j in zip(rows[:max_listed], cols[:max_listed]))
            span = f"range ({ranges}): more than the column's width beyond it"
        else:
            listed = ", ".join(f"{int(i)} ({p2[i, 0]:.3g})" for i in rows[:max_listed])
            span = (f"range, {low[0]:.3g} to {high[0]:.3g}: more than its width "
                    f"({width[0]:.3g}) beyond it")
        more = f" and {len(rows) - max_listed} more" if len(rows) > max_listed else ""
        warnings.warn(
            f"{estimator} predicted {len(rows)} of {len(p2)} molecule(s) far outside the "
            f"training targets' {span}. "
            f"Rows (prediction): {listed}{more}. "
            "These molecules are unlike the training data and the predictions are "
            "extrapolations; compare them with their nearest training molecules, or add "
            "similar molecules to the training data.",
            ExtrapolationWarning, stacklevel=4)
    return far
