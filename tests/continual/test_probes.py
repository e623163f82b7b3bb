"""The replay probes: what a generative replay classifier replays of its first task."""

import numpy as np
import pytest

from sklearn_papers.continual import GenerativeReplayClassifier, ProgressiveNetworkClassifier
from sklearn_papers.continual._probes import (
    _REPLAY_MEASURES,
    _replay_probes,
    _task_incremental_scores,
    _transfer_curve,
)


def _blobs(n, seed):
    rng = np.random.RandomState(seed)
    y = np.repeat([3, 7, 1, 5], n)  # task 0: classes 3 and 7, task 1: 1 and 5
    centres = {c: rng.uniform(0, 1, 12) for c in (1, 3, 5, 7)}
    X = np.stack([centres[c] for c in y]) + 0.05 * rng.normal(size=(len(y), 12))
    return X.clip(0, 1).astype(np.float32), y


@pytest.mark.parametrize("generator", ["vae", "buffer"])
def test_replay_probes_measure_every_task_on_the_first_tasks_classes(generator):
    X_train, y_train = _blobs(30, 0)
    X_test, y_test = _blobs(10, 1)
    tasks = np.isin(y_train, (1, 5)).astype(int)
    est = GenerativeReplayClassifier(generator=generator, hidden_layer_sizes=(8,),
                                     max_epochs=2, generator_steps=3, random_state=0)
    out = _replay_probes(est, X_train, y_train, X_test, y_test, tasks, n_probe=20,
                         random_state=0)
    assert all(len(out[key]) == 2 for key in _REPLAY_MEASURES)
    assert out["drift"] == [0.0, 0.0]  # one frozen generator per class
    assert 0 <= out["tstr_task1"] <= 1 and 0 <= out["tstr"] <= 1
    assert all(0 <= v <= 1 for key in ("real", "replayed", "oracle", "told_apart")
               for v in out[key])
    assert sorted(est.classes_) == [1, 3, 5, 7]
    if generator == "buffer":  # stored rows: the oracle, trained on them, knows them
        assert out["oracle"] == [1.0, 1.0]


def test_transfer_curve_draws_nested_rows_and_scores_the_target_classes_only():
    X_train, y_train = _blobs(12, 0)
    X_test, y_test = _blobs(5, 1)
    kw = dict(hidden_layer_sizes=(8,), epochs=2, low_data_epochs=2, random_state=0)
    curve = _transfer_curve(X_train, y_train, X_test, y_test, (3, 7), sizes=(1, 4), **kw)
    alone = _transfer_curve(X_train, y_train, X_test, y_test, (3, 7), sizes=(1,), **kw)
    assert curve[1] == alone[1]  # the first row of each class, whatever the largest size
    assert set(curve) == {1, 4}
    for scores in curve.values():
        assert set(scores) == {"progressive", "fine-tuning", "fresh column"}
        # accuracy on 10 test rows of classes 1 and 5: a multiple of 0.1
        assert all(0 <= v <= 1 and round(10 * v, 6) % 1 == 0 for v in scores.values())


@pytest.mark.parametrize("columns", ["per-task", "shared"])
def test_task_incremental_scores_see_frozen_columns_keep_the_first_task(columns):
    X_train, y_train = _blobs(20, 0)
    X_test, y_test = _blobs(8, 1)
    tasks_train, tasks_test = (np.isin(y, (1, 5)).astype(int) for y in (y_train, y_test))
    est = ProgressiveNetworkClassifier(hidden_layer_sizes=(8,), columns=columns,
                                       max_epochs=3, random_state=0)
    out = _task_incremental_scores(est, X_train, y_train, X_test, y_test, tasks_train,
                                   tasks_test)
    assert len(out["just_learnt"]) == len(out["final"]) == len(out["first_task"]) == 2
    assert out["first_task"][-1] == out["final"][0]  # both: task 0 after the last task
    assert out["just_learnt"][-1] == out["final"][-1]
    # a new column per task leaves task 0's outputs alone; a shared one trains them on
    assert out["identical"] is (columns == "per-task")
    if columns == "per-task":
        assert out["first_task"][0] == out["first_task"][1]
