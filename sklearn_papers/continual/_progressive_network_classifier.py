"""ProgressiveNetworkClassifier: progressive neural networks (Rusu et al. 2016)."""

from numbers import Integral, Real

import numpy as np

from sklearn_papers.continual._base import ContinualClassifierMixin, check_task
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_papers.utils._validation import common_constraints

__all__ = ["ProgressiveNetworkClassifier"]


class ProgressiveNetworkClassifier(ContinualClassifierMixin):
    """Task-incremental classifier that adds a network column per task and freezes the old.

    Read more in the :doc:`user guide </continual>` and on the :doc:`paper page
    </papers/continual_progressive>`.

    Each new task gets a new *column*, an MLP with ``hidden_layer_sizes`` and its own output
    head. Every earlier column is frozen, so what the network predicts for an earlier task
    can never change (no forgetting, to the bit). The new column reads the earlier columns
    through lateral connections: its layer ``i`` (``i = 2..L`` and the output head) adds
    ``lateral(h_{i-1}^{(<k)})``, the concatenated layer-``(i - 1)`` activations of all
    earlier columns, through the paper's adapter (Rusu et al. 2016, eqs. 1-2):
    ``adapter="mlp"``: ``U relu(V (alpha h) + c)`` with a learned scalar ``alpha`` per layer
    and ``V`` projecting to one column's width; ``"linear"``: ``U h``. Into layer 1 a lateral
    would only repeat ``W_1 x``, so there is none. The parameter count grows with every task
    (quadratically in the number of columns, through the laterals), see ``n_parameters_``.

    The task contract (see the user guide's continual-learning page):
    ``partial_fit(X, y, task=t)`` trains task ``t``'s column (a new id adds a column; the
    latest id continues training it); ``fit(X, y, task=ids)`` trains the tasks in order of
    first appearance. ``predict(X, task=t)`` answers with task ``t``'s column and head: the
    task id is required as soon as two tasks are learnt (task-incremental learning).

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(64, 64)
        Hidden widths of every column.
    adapter : {"mlp", "linear"}, default="mlp"
        Lateral adapter of every lateral layer: the paper's non-linear adapter (eq. 2) or a
        linear lateral (eq. 1).
    alpha_init : float, default=0.1
        Initial value of the learned scalar ``alpha`` of the ``"mlp"`` adapters; the paper
        initialises it to a small random value, so the lateral input starts small.
    norm : {"layer"} or None, default=None
        Layer normalisation of every hidden pre-activation, or none. (Batch norm would keep
        running statistics that frozen columns must not update, so it is not offered.)
    columns : {"per-task", "shared"}, default="per-task"
        ``"shared"`` is the fine-tuning baseline of the paper: one column trained on every
        task in turn, one head per task, nothing frozen and no laterals; it forgets.
    max_epochs : int, default=40
        Passes over each ``partial_fit`` call's rows.
    batch_size : int, default=32
        Rows per optimiser step.
    lr : float, default=1e-3
        Adam learning rate.
    device : str, default="cpu"
        Torch device, e.g. ``"cuda"``.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling of every task; the global torch RNG is
        left untouched.
    verbose : int, default=0
        1 prints skorch's table of the training loss per epoch.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Every label of every task (sorted). :meth:`predict_proba` has one column per entry;
        a row's probabilities are zero outside its task's classes.
    task_classes_ : dict
        Task id -> sorted ndarray of that task's labels.
    tasks_ : ndarray of shape (n_tasks,), dtype object
        Task ids in the order they were learnt.
    n_tasks_ : int
        Number of tasks (columns, or heads with ``columns="shared"``).
    n_parameters_ : list of int
        Total number of parameters after each task.
    net_ : skorch.NeuralNet
        The skorch net of the last call (``net_.history``: that call's epochs); every
        call trains the same module, ``net_.module_``, a
        :class:`~sklearn_papers.nn._progressive.ProgressiveNetwork` (its columns in
        ``net_.module_.columns``).
    loss_curve_ : list of float
        Mean training loss of every epoch of every call, in order.
    n_iter_ : int
        Epochs run by the last call.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    GenerativeReplayClassifier : Class-incremental learning with one shared head.

    Notes
    -----
    Inputs are standardised with the mean and standard deviation of the first task's rows,
    for every column. Each call trains with a fresh skorch ``NeuralNet`` (Adam state is not
    carried over between calls). ``sample_weight`` weights the cross-entropy of each row; a
    weight of 0 drops the row.

    References
    ----------
    .. [1] Rusu, A. A., Rabinowitz, N. C., Desjardins, G., Soyer, H., Kirkpatrick, J.,
       Kavukcuoglu, K., Pascanu, R. and Hadsell, R. (2016). Progressive neural networks.
       arXiv:1606.04671, section 2, eqs. 1-2. :doi:`10.48550/arXiv.1606.04671`

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_papers.continual import ProgressiveNetworkClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> task = y // 5                      # task 0: digits 0-4, task 1: digits 5-9
    >>> pnn = ProgressiveNetworkClassifier(hidden_layer_sizes=(16,), max_epochs=2,
    ...                                    random_state=0)
    >>> pnn.fit(X[:400], y[:400], task=task[:400]).n_tasks_
    2
    >>> pnn.predict(X[400:405], task=1).shape
    (5,)
    """

    _parameter_constraints = {
        **common_constraints(),
        "hidden_layer_sizes": [tuple, list],
        "adapter": [StrOptions({"mlp", "linear"})],
        "alpha_init": [Interval(Real, None, None, closed="neither")],
        "norm": [StrOptions({"layer"}), None],
        "columns": [StrOptions({"per-task", "shared"})],
    }

    def __init__(self, hidden_layer_sizes=(64, 64), *, adapter="mlp", alpha_init=0.1,
                 norm=None, columns="per-task", max_epochs=40, batch_size=32, lr=1e-3,
                 device="cpu", random_state=None, verbose=0):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.adapter = adapter
        self.alpha_init = alpha_init
        self.norm = norm
        self.columns = columns
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        sizes = tuple(self.hidden_layer_sizes)
        if not sizes or not all(isinstance(s, Integral) and not isinstance(s, bool) and s >= 1
                                for s in sizes):
            raise ValueError("hidden_layer_sizes must be a non-empty tuple of positive ints, "
                             f"got {self.hidden_layer_sizes!r}.")
        from sklearn_papers.nn._skorch import check_device

        return check_device(self.device)

    def _forget(self):
        for name in ("_x_dtype", "_seed", "_n_calls", "_units"):
            self.__dict__.pop(name, None)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, task=None, sample_weight=None):
        """Learn the tasks of ``(X, y)`` in sequence, from scratch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (float; computed in float32).
        y : array-like of shape (n_samples,)
            Class labels (ints or strings); each task may have its own label set.
        task : array-like of shape (n_samples,) or scalar, default=None
            Task id of every row (ints or strings); the tasks are learnt in order of first
            appearance, each by one :meth:`partial_fit`. None: one task, id 0.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights of the cross-entropy; 0 leaves a row out.

        Returns
        -------
        self : ProgressiveNetworkClassifier
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse or not finite, ``y`` is continuous, ``task`` has the
            wrong length, every row of a task has ``sample_weight`` 0 (the message names
            the task), or ``hidden_layer_sizes`` is not a tuple of positive ints.
        """
        self._check_params()
        return self._fit(X, y, task, sample_weight, reset=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, *, task=None, classes=None, sample_weight=None):
        """Train on one task's rows: a new task id adds a column, the latest one continues.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of one task.
        y : array-like of shape (n_samples,)
            Their labels.
        task : int, str, or array-like of one repeated id, default=None
            The task. None: the latest task (task 0 on the first call); labels never
            seen before then give a ``UserWarning`` naming them and the ``task=`` to
            pass, since they usually mean a new task.
        classes : array-like, default=None
            Labels of this task, if some are missing from this call's ``y``; not needed
            otherwise: a continued task's head grows when new labels arrive.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights of the cross-entropy; 0 leaves a row out.

        Returns
        -------
        self : ProgressiveNetworkClassifier
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``task`` names an earlier (frozen) task or several tasks, ``X`` has a
            different number of features than before, or ``y`` has labels outside
            ``classes``.
        """
        self._check_params()
        return self._fit(X, y, task, sample_weight, classes, reset=False)

    def _learn(self, X, y, weight, task, new_task, seed):
        import torch

        from sklearn_papers.nn._progressive import ProgressiveNetwork
        from sklearn_papers.nn._skorch import SoftTargetNet, torch_fit

        device = self._check_params()
        labels = self.task_classes_[task]
        with torch_fit(self, seed=seed, device=device) as run:
            if hasattr(self, "net_"):
                network = self.net_.module_
            else:
                mean = X.mean(axis=0, dtype=np.float64)
                std = X.std(axis=0, dtype=np.float64)
                network = ProgressiveNetwork(
                    X.shape[1], tuple(self.hidden_layer_sizes), adapter=self.adapter,
                    alpha_init=self.alpha_init, norm=self.norm, mean=mean,
                    std=np.where(std > 0, std, 1.0), shared=self.columns == "shared",
                ).to(device)
                self._units = {}
                self.n_parameters_ = []
                self.loss_curve_ = []
            if new_task:
                network.add_task(len(labels))
                network.to(device)
                self._units[task] = list(labels)
            else:  # new labels in the latest task: widen its head
                units = self._units[task]
                units += [c for c in labels if c not in units]
                network.grow_outputs(self.n_tasks_ - 1, len(units))
                network.to(device)
            units = self._units[task]
            index = {c: i for i, c in enumerate(units)}
            targets = np.zeros((len(y), len(units)), dtype=np.float32)
            targets[np.arange(len(y)), [index[c] for c in y]] = 1.0
            run.fit(network, X, targets, sample_weight=weight, append=True,
                    criterion=torch.nn.Identity, net_class=SoftTargetNet,
                    task_index=self.n_tasks_ - 1)
        n_params = sum(p.numel() for p in network.parameters())
        if new_task:
            self.n_parameters_ = self.n_parameters_ + [n_params]
        else:
            self.n_parameters_ = self.n_parameters_[:-1] + [n_params]

    # ------------------------------------------------------------------ inference
    def _row_tasks(self, task, n):
        tasks = check_task(task, n)
        if tasks is None:
            if self.n_tasks_ == 1:
                return [self.tasks_[0]] * n
            raise ValueError(
                f"task is required: this ProgressiveNetworkClassifier has learnt "
                f"{self.n_tasks_} tasks {list(self.tasks_)}, each with its own column and "
                "head; pass task=<id> (one id, or one per row).")
        for i, t in enumerate(tasks):
            if t not in self.task_classes_:
                self._known_task(t, "task" if len(set(tasks)) == 1 else f"task[{i}]")
        return tasks

    def predict_proba(self, X, *, task=None):
        """Class probabilities from each row's task column and head.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Same features as in ``fit``.
        task : int, str or array-like of shape (n_samples,), default=None
            Task id of all rows, or of each row. Required when more than one task has been
            learnt.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), dtype float32
            Columns follow ``classes_``; a row is zero outside its task's labels. A task's
            rows are bit-identical before and after later tasks are learnt.

        Raises
        ------
        ValueError
            If ``task`` is missing (with several tasks learnt) or names an unknown task;
            the message lists the known ids.
        """
        import torch

        X = self._check_predict_X(X)
        tasks = self._row_tasks(task, len(X))
        proba = np.zeros((len(X), len(self.classes_)), dtype=np.float32)
        network = self.net_.module_
        device = next(network.parameters()).device
        network.eval()
        position = {c: i for i, c in enumerate(self.classes_)}
        for key, rows in _groups(tasks).items():
            k = list(self.tasks_).index(key)
            cols = [position[c] for c in self._units[key]]
            with torch.no_grad():
                out = [torch.softmax(network(torch.as_tensor(X[rows[i:i + 4096]])
                                             .to(device), k), dim=1).cpu().numpy()
                       for i in range(0, len(rows), 4096)]
            proba[np.ix_(rows, cols)] = np.concatenate(out)
        return proba

    def predict(self, X, *, task=None):
        """Most probable label of each row under its task's head.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Same features as in ``fit``.
        task : int, str or array-like of shape (n_samples,), default=None
            Task id of all rows, or of each row (required with several tasks).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``task_classes_[task]``.

        Raises
        ------
        ValueError
            If ``task`` is missing or unknown (the message lists the known ids).
        """
        proba = self.predict_proba(X, task=task)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, *, task=None, sample_weight=None):
        """Accuracy of :meth:`predict` (task-incremental when ``task`` is given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test rows.
        y : array-like of shape (n_samples,)
            True labels.
        task : int, str or array-like of shape (n_samples,), default=None
            Task id of all rows or of each row (required with several tasks).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights of the accuracy.

        Returns
        -------
        score : float
            Mean (weighted) accuracy.
        """
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X, task=task),
                                    sample_weight=sample_weight))


def _groups(tasks):
    out = {}
    for i, t in enumerate(tasks):
        out.setdefault(t, []).append(i)
    return {k: np.asarray(v) for k, v in out.items()}
