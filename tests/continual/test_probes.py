"""The replay probes: what a generative replay classifier replays of its first task."""

import numpy as np
import pytest

from sklearn_papers.continual import GenerativeReplayClassifier
from sklearn_papers.continual._probes import _REPLAY_MEASURES, _replay_probes


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
