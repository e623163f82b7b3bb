"""The task contract shared by the continual classifiers: fit order, routing, validation."""

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits
from sklearn.model_selection import GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from sklearn_papers.continual import GenerativeReplayClassifier, ProgressiveNetworkClassifier

FAST = {
    ProgressiveNetworkClassifier: dict(hidden_layer_sizes=(16,), max_epochs=3, lr=1e-2),
    GenerativeReplayClassifier: dict(hidden_layer_sizes=(16,), max_epochs=3, lr=1e-2,
                                     generator_steps=5, generator_hidden=8),
}
CLASSES = list(FAST)


@pytest.fixture(scope="module")
def data():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    return X, y, np.where(y < 5, "first", "second")


@pytest.mark.parametrize("cls", CLASSES)
def test_fit_is_partial_fit_per_task_in_order_of_first_appearance(cls, data):
    X, y, task = data
    order = np.argsort(task == "first", kind="stable")  # rows of "second" come first
    fitted = cls(**FAST[cls], random_state=0).fit(X[order], y[order], task=task[order])
    assert list(fitted.tasks_) == ["second", "first"]
    manual = cls(**FAST[cls], random_state=0)
    for t in ["second", "first"]:
        rows = order[task[order] == t]
        manual.partial_fit(X[rows], y[rows], task=t)
    kw = {"task": "first"} if cls is ProgressiveNetworkClassifier else {}
    np.testing.assert_array_equal(fitted.predict_proba(X, **kw), manual.predict_proba(X, **kw))


@pytest.mark.parametrize("cls", CLASSES)
def test_fit_starts_afresh(cls, data):
    X, y, task = data
    est = cls(**FAST[cls], random_state=0).fit(X, y, task=task)
    est.fit(X[:100], y[:100])
    assert est.n_tasks_ == 1 and list(est.tasks_) == [0]


@pytest.mark.parametrize("cls", CLASSES)
def test_task_is_routed_by_metadata_routing(cls, data):
    X, y, task = data
    with sklearn.config_context(enable_metadata_routing=True):
        est = cls(**FAST[cls], random_state=0).set_fit_request(task=True)
        if cls is ProgressiveNetworkClassifier:
            est = est.set_score_request(task=True)
        pipe = make_pipeline(MinMaxScaler(), est)
        pipe.fit(X, y, task=task)
        assert list(pipe[-1].tasks_) == ["first", "second"]
        groups = np.arange(len(X)) % 3
        result = cross_validate(pipe, X, y, cv=GroupKFold(3),
                                params={"task": task, "groups": groups})
        assert np.all(result["test_score"] > 0.3)


def test_routing_without_a_request_leaves_task_out(data):
    X, y, task = data
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(MinMaxScaler(), ProgressiveNetworkClassifier(**FAST[
            ProgressiveNetworkClassifier]))
        with pytest.raises(Exception, match="task"):
            pipe.fit(X, y, task=task)


@pytest.mark.parametrize("cls", CLASSES)
def test_bad_task_and_labels_raise(cls, data):
    X, y, task = data
    est = cls(**FAST[cls], random_state=0)
    with pytest.raises(ValueError, match=r"task\[1\] is \[1\]"):
        est.fit(X[:3], y[:3], task=[0, [1], 0])
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X[:3], y[:3], task=[0, np.nan, 0])
    est.partial_fit(X[:50], y[:50], task=0)
    with pytest.raises(ValueError, match="labels of different types"):
        est.partial_fit(X[50:60], np.array(["a"] * 10), task=0)
    with pytest.raises(ValueError, match=r"not in classes=\[0, 1\]"):
        est.partial_fit(X[:10], y[:10] * 0 + 5, task=0, classes=[0, 1])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:10, :5], y[:10], task=0)


@pytest.mark.parametrize("cls", CLASSES)
def test_sample_weight_is_validated(cls, data):
    X, y, _ = data
    with pytest.raises(ValueError, match="non-zero|sums to 0"):
        cls(**FAST[cls]).fit(X[:10], y[:10], sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="(?i)negative"):
        cls(**FAST[cls]).fit(X[:10], y[:10], sample_weight=-np.ones(10))


@pytest.mark.parametrize("cls", CLASSES)
def test_a_task_whose_rows_all_weigh_zero_is_named(cls):
    X = np.random.RandomState(0).randn(20, 3)
    y, task = np.array([0, 1] * 10), np.repeat(["a", "b"], 10)
    weight = np.r_[np.ones(10), np.zeros(10)]
    with pytest.raises(ValueError, match="every row of task 'b' has sample_weight 0"):
        cls(**FAST[cls]).fit(X, y, task=task, sample_weight=weight)


@pytest.mark.parametrize("cls", CLASSES)
def test_unseen_labels_without_task_warn_once_naming_them_and_task(cls, data):
    import warnings

    X, y, _ = data
    a, b, c = y < 2, (y == 2) | (y == 3), (y == 4) | (y == 5)
    est = cls(**FAST[cls], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(X[a], y[a])                     # the first call starts task 0
        est.partial_fit(X[a], y[a])                     # known labels continue it
        est.partial_fit(X[b], y[b], task=0)             # named: no warning
    with pytest.warns(UserWarning) as record:
        est.partial_fit(X[c], y[c])
    messages = [str(w.message) for w in record if "never seen" in str(w.message)]
    assert len(messages) == 1
    assert "[4, 5]" in messages[0] and "task=1" in messages[0]
    assert list(est.tasks_) == [0]                      # rows continued the latest task
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(X[c], y[c])                     # seen by now
        est.partial_fit(X[a | (y >= 6)], y[a | (y >= 6)],
                        sample_weight=np.where(y[a | (y >= 6)] >= 6, 0.0, 1.0))
        cls(**FAST[cls], random_state=0).fit(X, y)      # fit: one joint task, no warning
        est.partial_fit(X[y == 6], y[y == 6], task="next")


def test_continual_docs_snippets_run():
    """The ``.. code-block:: python`` snippets of docs/continual.rst run, in order."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "docs" / "continual.rst").read_text()
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", text)
    assert blocks
    namespace = {}
    for block in blocks:
        code = "\n".join(line[4:] for line in block.splitlines())
        exec(compile(code, "docs/continual.rst", "exec"), namespace)


@pytest.mark.parametrize("cls", [ProgressiveNetworkClassifier, GenerativeReplayClassifier])
def test_a_refused_call_leaves_the_estimator_as_it_was(cls):
    X = np.random.RandomState(0).rand(8, 4)
    est = cls(hidden_layer_sizes=(4,), max_epochs=1, random_state=0)
    est.partial_fit(X, [0, 1] * 4, task=0)
    with pytest.raises(ValueError, match="labels of different types"):
        est.partial_fit(X, ["a", "b"] * 4, task=1)
    assert list(est.tasks_) == [0] and set(est.task_classes_) == {0}
    est.partial_fit(X, [2, 3] * 4, task=1)   # the next call works
    assert list(est.tasks_) == [0, 1]
    kwargs = {"task": 1} if cls is ProgressiveNetworkClassifier else {}
    assert est.predict(X, **kwargs).shape == (8,)


@pytest.mark.parametrize("task, same", [(True, 1), (False, 0), (1.0, 1), (np.float64(2.0), 2)])
def test_task_ids_python_equates_with_ints_are_refused(task, same):
    from sklearn_papers.continual._base import check_task

    with pytest.raises(ValueError, match=rf"task ids are ints or strings .*same task as "
                                         rf"{same}"):
        check_task(task, 3)
    with pytest.raises(ValueError, match=r"task\[1\]"):
        check_task([same, task], 2)
    assert check_task([same, "a", np.int64(same)], 3) == [same, "a", same]
