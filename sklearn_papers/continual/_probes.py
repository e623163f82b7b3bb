"""Probes of the continual learners: the scores of a task-incremental learner after each
task, what a GenerativeReplayClassifier replays of its first task while it learns the later
ones (Farquhar & Gal 2018), and the forward transfer of a ProgressiveNetworkClassifier's
column to a new task with few labels (Rusu et al. 2016).
"""

import copy

import numpy as np

from sklearn_papers.metrics import classifier_two_sample_score, sample_quality

#: The measures :func:`_replay_probes` takes after every task, in its dict's order.
_REPLAY_MEASURES = ("real", "replayed", "oracle", "spread", "coverage", "precision",
                   "distance", "drift", "told_apart")


def _task_incremental_scores(est, X_train, y_train, X_test, y_test, tasks_train, tasks_test):
    """Learn the tasks in order with ``est``, scoring every task given its id.

    Parameters
    ----------
    est : ProgressiveNetworkClassifier
        Unfitted, or any classifier of the package's task contract whose ``score`` and
        ``predict_proba`` take ``task``.
    X_train, X_test : ndarray of shape (n_train, n_features), (n_test, n_features)
    y_train, y_test : ndarray of shape (n_train,), (n_test,)
        Class labels.
    tasks_train, tasks_test : ndarray of shape (n_train,), (n_test,), int
        Task of each row; tasks ``0, 1, ...`` are learnt in this order.

    Returns
    -------
    scores : dict
        ``"just_learnt"``: accuracy on each task's test rows right after learning it;
        ``"final"``: the same after the last task; ``"first_task"``: accuracy on task 0's
        test rows after each task; ``"identical"``: whether task 0's probabilities of
        its classes on every test row stayed bit-identical (frozen columns).
    """
    def score(k):
        rows = tasks_test == k
        return est.score(X_test[rows], y_test[rows], task=k)

    first_classes = np.unique(y_train[tasks_train == 0])
    n_tasks = int(tasks_train.max()) + 1
    out = {"just_learnt": [], "first_task": [], "identical": True}
    reference = None
    for k in range(n_tasks):
        rows = tasks_train == k
        est.partial_fit(X_train[rows], y_train[rows], task=k)
        out["just_learnt"].append(score(k))
        proba = est.predict_proba(X_test, task=0)[:, np.isin(est.classes_, first_classes)]
        reference = proba if reference is None else reference
        out["identical"] &= bool(np.array_equal(proba, reference))
        out["first_task"].append(score(0))
    out["final"] = [score(k) for k in range(n_tasks)]
    return out


def _replay_probes(est, X_train, y_train, X_test, y_test, tasks, *, n_probe, random_state):
    """Learn the tasks in order with ``est`` and probe its replay of the first task after each.

    Parameters
    ----------
    est : GenerativeReplayClassifier
        Unfitted, with a generator (``"vae"``, ``"gan"`` or ``"buffer"``).
    X_train, X_test : ndarray of shape (n_train, n_features), (n_test, n_features)
    y_train, y_test : ndarray of shape (n_train,), (n_test,), int
        Class labels.
    tasks : ndarray of shape (n_train,), int
        Task of each training row; tasks ``0, 1, ...`` are learnt in this order.
    n_probe : int
        Replayed rows drawn per class of task 0 (the same draws after every task).
    random_state : int
        Seed of the two-sample classifier's folds.

    Returns
    -------
    probes : dict
        Per measure of ``_REPLAY_MEASURES``, a list with a float per task: ``real``,
        the accuracy on the test rows of task 0's classes; ``replayed`` and ``oracle``,
        the accuracy of ``est`` and of an SVC trained on every real training row on the
        replayed rows; ``spread``, ``coverage``, ``precision``, ``distance``:
        :func:`~sklearn_papers.metrics.sample_quality` per class, averaged;
        ``told_apart``: :func:`~sklearn_papers.metrics.classifier_two_sample_score`
        against task 0's real training rows; ``drift``: mean absolute change (pixels) of
        the replayed rows since task 0. And ``"tstr"``, ``"tstr_task1"``: accuracy on all
        test rows and on task 0's of an SVC trained on a replayed row per training row.
    """
    from sklearn.svm import SVC

    first_classes = np.unique(y_train[tasks == 0])
    oracle = SVC().fit(X_train, y_train)
    first = np.isin(y_test, first_classes)
    labels = np.repeat(first_classes, n_probe)
    out = {key: [] for key in _REPLAY_MEASURES}
    reference = None
    for k in range(int(tasks.max()) + 1):
        rows = tasks == k
        est.partial_fit(X_train[rows], y_train[rows], task=k)
        out["real"].append(est.score(X_test[first], y_test[first]))
        # unclipped: what replay trains on
        X_hat, _ = est._sample(len(labels), labels, clip=False)
        reference = X_hat if reference is None else reference
        out["drift"].append(float(np.abs(X_hat - reference).mean()))
        out["replayed"].append(est.score(X_hat, labels))
        out["oracle"].append(oracle.score(X_hat, labels))
        q = [sample_quality(X_hat[labels == c], X_train[y_train == c], X_test[y_test == c])
             for c in first_classes]
        for key in ("spread", "coverage", "precision", "distance"):
            out[key].append(float(np.mean([qc[key] for qc in q])))
        out["told_apart"].append(classifier_two_sample_score(
            X_train[np.isin(y_train, first_classes)], X_hat, random_state=random_state))
    classes, counts = np.unique(y_train, return_counts=True)
    y_syn = np.repeat(classes, counts)
    X_syn, _ = est._sample(len(y_syn), y_syn, clip=False)
    tstr = SVC().fit(X_syn, y_syn)
    out["tstr"] = tstr.score(X_test, y_test)
    out["tstr_task1"] = tstr.score(X_test[first], y_test[first])
    return out


def _transfer_curve(X_train, y_train, X_test, y_test, source_classes, *, sizes,
                    hidden_layer_sizes, epochs, low_data_epochs, random_state):
    """Forward transfer against the labels budget: a new task learnt from a few labels.

    A column learns the rows of ``source_classes`` (``epochs`` epochs); copies of it then
    learn the other classes, the target task, from the first ``n`` training rows of each
    target class (a random order per class, ``low_data_epochs`` epochs), as a new column
    (``"progressive"``) or by fine-tuning the same one (``"fine-tuning"``); a fresh
    network learns the same rows alone (``"fresh column"``).

    Parameters
    ----------
    X_train, X_test : ndarray of shape (n_train, n_features), (n_test, n_features)
    y_train, y_test : ndarray of shape (n_train,), (n_test,), int
        Class labels.
    source_classes : array-like of int
        The classes of the first task; every other class is the target task's.
    sizes : sequence of int
        Labels per target class; the rows of a smaller size are among those of a larger.
    hidden_layer_sizes : tuple of int
    epochs, low_data_epochs : int
        Epochs of the first task and of the target task.
    random_state : int
        Seed of the networks and of the rows drawn.

    Returns
    -------
    accuracy : dict
        ``{n: {"progressive": float, "fine-tuning": float, "fresh column": float}}``:
        accuracy on the test rows of the target classes.
    """
    from sklearn_papers.continual import ProgressiveNetworkClassifier

    source = np.isin(y_train, source_classes)
    test = ~np.isin(y_test, source_classes)
    rng = np.random.RandomState(random_state)
    # a draw without replacement is a prefix of a permutation: the first n rows of a class
    # are the same for any number drawn
    draws = [rng.choice(np.flatnonzero(y_train == c), max(sizes), replace=False)
             for c in np.unique(y_train[~source])]
    low = {n: np.concatenate([d[:n] for d in draws]) for n in sizes}
    common = dict(hidden_layer_sizes=hidden_layer_sizes, random_state=random_state)
    out = {n: {} for n in sizes}
    for name, columns in [("progressive", "per-task"), ("fine-tuning", "shared")]:
        est = ProgressiveNetworkClassifier(**common, columns=columns, max_epochs=epochs)
        est.partial_fit(X_train[source], y_train[source], task="source")
        est.set_params(max_epochs=low_data_epochs)
        for n in sizes:
            copy_n = copy.deepcopy(est)
            copy_n.partial_fit(X_train[low[n]], y_train[low[n]], task="target")
            out[n][name] = copy_n.score(X_test[test], y_test[test], task="target")
    for n in sizes:
        fresh = ProgressiveNetworkClassifier(**common, max_epochs=low_data_epochs)
        fresh.fit(X_train[low[n]], y_train[low[n]])
        out[n]["fresh column"] = fresh.score(X_test[test], y_test[test])
    return out
