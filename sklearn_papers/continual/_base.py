"""The task contract shared by the continual-learning classifiers.

``partial_fit(X, y, *, task=None)`` trains on one task's rows: a new task id starts a task,
the latest task's id continues it, an earlier task's id is refused (tasks are learnt in
sequence). ``fit(X, y, *, task=array)`` starts afresh and trains the tasks in order of
first appearance. ``task`` (and ``sample_weight``) are ordinary keyword arguments, so
scikit-learn's metadata routing generates ``set_fit_request(task=...)`` and friends.
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from sklearn_papers.utils._sklearn_compat import check_is_fitted, validate_data
from sklearn_papers.utils._validation import check_sample_weight

__all__ = []


def _as_float32(X):
    """Cast finite X to float32, refusing values float32 cannot hold (they become inf)."""
    with np.errstate(over="ignore"):
        X32 = np.asarray(X, dtype=np.float32)
    if not np.isfinite(X32).all():
        i, j = np.argwhere(~np.isfinite(X32))[0]
        raise ValueError(
            f"X[{i}, {j}] = {float(X[i, j])!r} is too large for float32, in which the network "
            f"computes (max {float(np.finfo(np.float32).max):.3g}); rescale X.")
    return X32


def _task_key(value, where):
    """A task id as a plain hashable Python scalar (numpy scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        raise ValueError(f"task id at {where} is NaN; task ids are ints or strings.")
    if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
        # Python equates True, 1 and 1.0 (one dict key): they would silently be one task
        raise ValueError(f"task id at {where} is {value!r} ({type(value).__name__}); task "
                         f"ids are ints or strings ({value!r} would be the same task as "
                         f"{int(value)!r}). Pass {int(value)!r} or a string.")
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"task id at {where} is {value!r} of type {type(value).__name__}, "
                         "which is not hashable; task ids are ints or strings.") from None
    return value


def check_task(task, n_samples, *, name="task"):
    """Task ids per row: None, one id for every row, or one id per row.

    Returns
    -------
    tasks : list or None
        ``n_samples`` plain Python ids, or None.
    """
    if task is None:
        return None
    if np.isscalar(task) or (isinstance(task, np.ndarray) and task.ndim == 0):
        key = _task_key(task.item() if isinstance(task, np.ndarray) else task, name)
        return [key] * n_samples
    values = np.asarray(task, dtype=object)
    if values.ndim != 1 or len(values) != n_samples:
        raise ValueError(f"{name} must be one task id or one per row: got shape "
                         f"{values.shape} for {n_samples} rows.")
    return [_task_key(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _in_order_of_appearance(tasks):
    seen = {}
    for i, t in enumerate(tasks):
        seen.setdefault(t, []).append(i)
    return seen


class ContinualClassifierMixin(ClassifierMixin, BaseEstimator):
    """Task bookkeeping, validation and the ``fit``/``partial_fit`` loop.

    Subclasses implement ``_learn(X, y, w, task, new_task, seed)`` that trains on the rows
    of one task (``X`` float32, ``y`` original labels, ``w`` weights of mean one or None)
    and ``_forget()`` that drops every fitted state; they may override ``_observe(X)``,
    which sees the same rows in the training dtype first.
    """

    # ------------------------------------------------------------------ the contract
    def _fit(self, X, y, task, sample_weight, classes=None, *, reset):
        if reset:
            for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
                delattr(self, attr)
            self._forget()
        first = reset or not hasattr(self, "tasks_")
        X, y = validate_data(self, X, y, reset=first, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        if first:
            self._x_dtype = X.dtype
        weight = check_sample_weight(sample_weight, X)
        tasks = check_task(task, len(X))
        if classes is not None:
            classes = np.asarray(classes)
            unknown = np.setdiff1d(np.unique(y), classes)
            if unknown.size:
                raise ValueError(f"y has labels {unknown.tolist()} that are not in "
                                 f"classes={classes.tolist()}.")
        if first:
            from sklearn_papers.nn._skorch import seed_from_random_state

            self._seed = seed_from_random_state(self.random_state)
            self._n_calls = 0
            self.tasks_ = np.array([], dtype=object)
            self.task_classes_ = {}
            self.n_tasks_ = 0
        if tasks is None:
            if not reset and self.n_tasks_:
                self._warn_new_labels_without_task(y, weight)
            tasks = [self.tasks_[-1] if self.n_tasks_ else 0] * len(X)
        X_exact, X = X, _as_float32(X)
        groups = _in_order_of_appearance(tasks)
        if not reset and len(groups) > 1:
            raise ValueError(
                f"partial_fit trains on one task at a time; task has {len(groups)} ids "
                f"{list(groups)}. Call partial_fit once per task, or fit(X, y, task=task).")
        if weight is not None:  # before any training: a task needs a row to learn from
            for key, rows in groups.items():
                if not np.any(weight[np.asarray(rows)] > 0):
                    raise ValueError(
                        f"every row of task {key!r} has sample_weight 0 ({len(rows)} rows): "
                        "the task has nothing to learn from. Leave the task out, or give "
                        "some of its rows a positive weight.")
        for key, rows in groups.items():
            rows = np.asarray(rows)
            self._learn_rows(X[rows], y[rows], None if weight is None else weight[rows],
                             key, classes, X_exact[rows])
        return self

    def _warn_new_labels_without_task(self, y, weight):
        """One UserWarning when a ``partial_fit`` without ``task`` brings unseen labels.

        Without ``task`` the rows continue the latest task; new labels more often mean that
        the caller forgot to name a new task, which a continual learner cannot guess.
        """
        seen = y if weight is None else y[weight > 0]
        try:
            new = np.setdiff1d(np.unique(seen), self.classes_)
        except TypeError:  # mixed label types: refused with its own message later
            return
        if not new.size:
            return
        latest = self.tasks_[-1]
        ints = [t for t in self.tasks_ if isinstance(t, Integral) and not isinstance(t, bool)]
        suggestion = max(ints) + 1 if len(ints) == len(self.tasks_) else "<new task id>"
        import warnings

        warnings.warn(
            f"partial_fit got labels {new.tolist()} never seen before and no task=, so "
            f"these rows continue the latest task {latest!r} (learnt tasks: "
            f"{list(self.tasks_)}). If they start a new task, name it: "
            f"partial_fit(X, y, task={suggestion!r}); passing task={latest!r} continues "
            "the latest task without this warning.", UserWarning, stacklevel=5)

    def _learn_rows(self, X, y, weight, task, classes, X_exact):
        known = list(self.tasks_)
        if task in known and task != known[-1]:
            raise ValueError(
                f"task {task!r} is finished: tasks are learnt in sequence and only the "
                f"latest task ({known[-1]!r}) can be continued; learnt tasks: {known}.")
        if weight is not None:  # a weight of 0 is the row left out
            keep = weight > 0
            X, y, weight, X_exact = X[keep], y[keep], weight[keep], X_exact[keep]
            weight = (weight / weight.mean()).astype(np.float32)
        new_task = task not in known
        labels = np.unique(y) if classes is None else np.union1d(np.unique(y), classes)
        # every check first, then the state: a refused call leaves the estimator as it was
        task_labels = labels if new_task else self._union(self.task_classes_[task], labels)
        tasks = known + [task] if new_task else known
        all_classes = self._union(*[task_labels if t == task else self.task_classes_[t]
                                    for t in tasks])
        self.tasks_ = np.array(tasks, dtype=object)
        self.n_tasks_ = len(self.tasks_)
        self.task_classes_[task] = task_labels
        self.classes_ = all_classes
        from sklearn_papers.nn._skorch import spawn_seeds

        seed = spawn_seeds(self._seed, self._n_calls + 1)[-1]  # one child per call
        self._n_calls += 1
        self._observe(X_exact)
        self._learn(X, y, weight, task, new_task, seed)

    def _observe(self, X):
        """Called with the rows about to be learnt (positive weight), in the training
        dtype (float64 or float32), before ``_learn`` gets them in float32."""

    @staticmethod
    def _union(*arrays):
        def family(a):
            if a.dtype.kind in "iufb":
                return "numbers"
            if a.dtype.kind in "US":
                return "strings"
            return "numbers" if all(isinstance(v, (int, float, np.number)) for v in a) \
                else "strings" if all(isinstance(v, str) for v in a) else "objects"

        families = sorted({family(np.asarray(a)) for a in arrays if len(a)})
        error = ValueError(f"labels of different types ({', '.join(families)}) across "
                           "calls cannot be mixed; use one label type for every task.")
        if len(families) > 1:
            raise error
        try:
            return np.unique(np.concatenate(arrays))
        except TypeError:
            raise error from None

    # ------------------------------------------------------------------ inference helpers
    def _check_predict_X(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return _as_float32(X)

    def _known_task(self, key, where):
        if key not in self.task_classes_:
            raise ValueError(f"unknown task {key!r} at {where}; this "
                             f"{type(self).__name__} has learnt tasks {list(self.tasks_)}.")
        return key

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.classifier_tags.multi_class = True
        tags.input_tags.allow_nan = False
        return tags
