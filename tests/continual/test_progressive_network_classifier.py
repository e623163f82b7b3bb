"""ProgressiveNetworkClassifier: frozen columns, task routing, growth, bad input."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from sklearn_papers.continual import ProgressiveNetworkClassifier
from sklearn_papers.nn._progressive import count_progressive_parameters

FAST = dict(hidden_layer_sizes=(16, 8), max_epochs=3, batch_size=32, lr=1e-2)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:450], y[:450]


@pytest.fixture(scope="module")
def three_tasks(digits):
    X, y = digits
    task = np.minimum(y // 3, 2)  # 0-2, 3-5, 6-9
    return X, y, task


@pytest.fixture(scope="module")
def fitted(three_tasks):
    # Module-scoped: do not mutate.
    X, y, task = three_tasks
    return ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X, y, task=task)


def test_progressive_network_quick(fitted, three_tasks):
    X, y, task = three_tasks
    assert fitted.n_tasks_ == 3 and list(fitted.tasks_) == [0, 1, 2]
    np.testing.assert_array_equal(fitted.classes_, np.arange(10))
    np.testing.assert_array_equal(fitted.task_classes_[2], [6, 7, 8, 9])
    assert len(fitted.loss_curve_) == 9 and fitted.n_iter_ == 3
    proba = fitted.predict_proba(X, task=task)
    assert proba.shape == (len(X), 10) and proba.dtype == np.float32
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    assert np.all(proba[task == 0][:, 3:] == 0)  # zero outside the row's task
    assert fitted.score(X, y, task=task) > 0.8


def test_task_one_predictions_are_bit_identical_after_later_tasks(three_tasks):
    X, y, task = three_tasks
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0)
    pnn.partial_fit(X[task == 0], y[task == 0], task="a")
    before = pnn.predict_proba(X, task="a")
    state = {k: v.clone() for k, v in pnn.net_.module_.columns[0].state_dict().items()}
    for t, name in [(1, "b"), (2, "c")]:
        pnn.partial_fit(X[task == t], y[task == t], task=name)
        after = pnn.predict_proba(X, task="a")
        np.testing.assert_array_equal(after[:, :3], before[:, :3])
        assert np.all(after[:, 3:] == 0)
    for k, v in pnn.net_.module_.columns[0].state_dict().items():
        assert v.equal(state[k]), k


def test_shared_columns_baseline_forgets(three_tasks):
    X, y, task = three_tasks
    pnn = ProgressiveNetworkClassifier(**FAST, columns="shared", random_state=0)
    pnn.partial_fit(X[task == 0], y[task == 0], task=0)
    before = pnn.predict_proba(X, task=0)
    pnn.partial_fit(X[task == 1], y[task == 1], task=1)
    assert not np.array_equal(pnn.predict_proba(X, task=0), before)
    assert pnn.n_parameters_[1] - pnn.n_parameters_[0] == 8 * 3 + 3  # one more head


@pytest.mark.parametrize("adapter", ["mlp", "linear"])
def test_parameter_count_grows_as_the_paper_says(three_tasks, adapter):
    X, y, task = three_tasks
    pnn = ProgressiveNetworkClassifier(**{**FAST, "max_epochs": 1}, adapter=adapter,
                                       random_state=0).fit(X, y, task=task)
    assert pnn.n_parameters_ == count_progressive_parameters(64, (16, 8), (3, 3, 4),
                                                             adapter=adapter)
    assert pnn.n_parameters_ == sorted(pnn.n_parameters_)


def test_missing_or_unknown_task_raises_naming_the_known_ids(fitted, three_tasks):
    X = three_tasks[0][:5]
    with pytest.raises(ValueError, match=r"task is required.*\[0, 1, 2\]"):
        fitted.predict(X)
    with pytest.raises(ValueError, match=r"unknown task 7 .*\[0, 1, 2\]"):
        fitted.predict(X, task=7)
    with pytest.raises(ValueError, match=r"unknown task 'x' at task\[1\]"):
        fitted.predict_proba(X, task=[0, "x", 0, 0, 0])
    with pytest.raises(ValueError, match="one task id or one per row"):
        fitted.predict(X, task=[0, 1])


def test_one_task_needs_no_id(digits):
    X, y = digits
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X, y)
    np.testing.assert_array_equal(pnn.predict(X[:20]), pnn.predict(X[:20], task=0))
    assert list(pnn.tasks_) == [0]


def test_string_labels_string_tasks_and_a_single_class_task(digits):
    X, y = digits
    labels = np.array(["zero", "one", "two"] + ["many"] * 7)[y]
    task = np.where(y < 3, "small", "big")
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X, labels, task=task)
    assert list(pnn.tasks_) == ["small", "big"]  # order of first appearance (y[0] == 0)
    np.testing.assert_array_equal(pnn.task_classes_["big"], ["many"])
    assert set(pnn.predict(X, task="big")) == {"many"}
    assert pnn.score(X[y < 3], labels[y < 3], task="small") > 0.8


def test_new_labels_in_the_latest_task_grow_its_head(digits):
    X, y = digits
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0)
    pnn.partial_fit(X[y < 2], y[y < 2], task=0)
    pnn.partial_fit(X[(y >= 2) & (y < 4)], y[(y >= 2) & (y < 4)], task=1)
    n = pnn.n_parameters_[1]
    pnn.partial_fit(X[y == 4], y[y == 4], task=1)  # a new label in the latest task
    np.testing.assert_array_equal(pnn.task_classes_[1], [2, 3, 4])
    assert pnn.n_parameters_[1] > n and len(pnn.n_parameters_) == 2
    assert set(pnn.predict(X, task=1)) <= {2, 3, 4}


def test_earlier_tasks_are_frozen_for_partial_fit(fitted, three_tasks):
    X, y, task = three_tasks
    pnn = pickle.loads(pickle.dumps(fitted))
    with pytest.raises(ValueError, match=r"task 0 is finished.*latest task \(2\)"):
        pnn.partial_fit(X[task == 0], y[task == 0], task=0)
    with pytest.raises(ValueError, match="one task at a time"):
        pnn.partial_fit(X, y, task=task)


def test_pickle_mid_sequence_continues_where_it_stopped(three_tasks):
    X, y, task = three_tasks
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0)
    pnn.partial_fit(X[task == 0], y[task == 0], task=0)
    copy = pickle.loads(pickle.dumps(pnn))
    assert clone(pnn).__dict__.keys() == ProgressiveNetworkClassifier(
        **FAST, random_state=0).__dict__.keys()
    for est in (pnn, copy):
        est.partial_fit(X[task == 1], y[task == 1], task=1)
    np.testing.assert_array_equal(pnn.predict_proba(X, task=1), copy.predict_proba(X, task=1))
    # and a whole fit is one partial_fit per task
    seq = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(
        X[task < 2], y[task < 2], task=task[task < 2])
    np.testing.assert_array_equal(seq.predict_proba(X, task=1), pnn.predict_proba(X, task=1))


def test_zero_weight_equals_dropping_the_row(digits):
    X, y = digits
    w = np.ones(len(X))
    w[::3] = 0
    a = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X, y, sample_weight=w)
    b = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X[w > 0], y[w > 0])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = ProgressiveNetworkClassifier(**FAST, random_state=0).fit(X, y, sample_weight=w + 1)
    assert not np.array_equal(c.predict_proba(X), b.predict_proba(X))


def test_bad_parameters_raise(digits):
    X, y = digits
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        ProgressiveNetworkClassifier(hidden_layer_sizes=(0,)).fit(X, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        ProgressiveNetworkClassifier(hidden_layer_sizes=()).fit(X, y)
    with pytest.raises(ValueError, match="task must be one task id or one per row"):
        ProgressiveNetworkClassifier(**FAST).fit(X, y, task=[0, 1])


@pytest.mark.parametrize("case", ["one value", "one row per class", "constant rows"])
def test_probabilities_stay_in_range_on_degenerate_data(case):
    X, y = {
        "one value": (np.full((10, 4), 3.0), np.r_[np.zeros(5), np.ones(5)]),
        "one row per class": (np.random.RandomState(0).randn(2, 4), np.array([0, 1])),
        "constant rows": (np.repeat(np.linspace(0, 1, 10)[:, None], 4, axis=1),
                          np.r_[np.zeros(5), np.ones(5)]),
    }[case]
    pnn = ProgressiveNetworkClassifier(**FAST, random_state=0)
    pnn.fit(X, y, task=np.where(np.arange(len(y)) < len(y) // 2, 0, 1))
    for task in (0, 1):
        proba = pnn.predict_proba(X, task=task)
        assert np.isfinite(proba).all() and (proba >= 0).all() and (proba <= 1).all()
        np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
