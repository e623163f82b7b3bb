"""GenerativeReplayClassifier: replay really runs, sampling, class-incremental heads."""

import pickle
from unittest import mock

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from sklearn_papers.continual import GenerativeReplayClassifier

FAST = dict(hidden_layer_sizes=(32,), max_epochs=8, batch_size=32, lr=3e-3,
            generator_steps=60, n_latent=4, generator_hidden=32)


@pytest.fixture(scope="module")
def split():
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    return X, y, (y >= 5).astype(int)  # two tasks: digits 0-4, then 5-9


@pytest.fixture(scope="module")
def replayed(split):
    # Module-scoped: do not mutate.
    X, y, task = split
    return GenerativeReplayClassifier(**FAST, random_state=0).fit(X, y, task=task)


def _task0_accuracy(est, split):
    X, y, task = split
    return est.score(X[task == 0], y[task == 0])


def test_generative_replay_quick(replayed, split):
    X, y, task = split
    np.testing.assert_array_equal(replayed.classes_, np.arange(10))
    proba = replayed.predict_proba(X)
    assert proba.shape == (len(X), 10) and proba.dtype == np.float32
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    assert len(replayed.generators_) == 10
    assert {(e["task"], e["label"]) for e in replayed.generators_} == {
        (int(t), int(c)) for t, c in zip(task, y)}
    assert len(replayed.loss_curve_) == 16 and replayed.n_iter_ == 8


def test_replay_really_runs_and_prevents_forgetting(replayed, split):
    X, y, task = split
    n_new = int((task == 1).sum())
    assert replayed.n_replayed_[0] == 0
    assert abs(replayed.n_replayed_[1] - n_new) <= 5  # one class-mean's worth per old class
    ft = GenerativeReplayClassifier(**FAST, generator=None, random_state=0).fit(X, y, task=task)
    assert ft.n_replayed_ == [0, 0] and ft.generators_ == []
    # fine-tuning forgets task 0 in the class-incremental setting; replay keeps much of it
    assert _task0_accuracy(ft, split) < 0.2
    assert _task0_accuracy(replayed, split) > _task0_accuracy(ft, split) + 0.3


def test_every_generator_is_trained(replayed):
    from sklearn_papers.nn._generative_replay import ClassVAE

    for entry in replayed.generators_:
        fresh = ClassVAE(64, 4, 32)
        assert entry["n_rows"] > 0
        assert not np.allclose(entry["model"].log_var.detach().numpy(),
                               fresh.log_var.detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_samples_have_the_input_shape_dtype_and_class(split, dtype):
    X, y, task = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 1}, random_state=3)
    est.partial_fit(X[task == 0].astype(dtype), y[task == 0], task=0)
    Xs, ys = est.sample(12, y=2)
    assert Xs.shape == (12, 64) and Xs.dtype == dtype and np.isfinite(Xs).all()
    np.testing.assert_array_equal(ys, 2)
    # the class-2 samples look like class 2 more than like the other classes
    means = np.array([X[y == c].mean(0) for c in range(5)])
    dist = ((Xs.mean(0) - means) ** 2).sum(1)
    assert np.argmin(dist) == 2


def test_sample_is_deterministic_under_random_state(replayed):
    a, ya = replayed.sample(20)
    b, yb = replayed.sample(20)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ya, yb)
    assert set(ya) <= set(range(10))
    other = clone(replayed).set_params(random_state=1)
    other.__dict__.update({k: v for k, v in replayed.__dict__.items() if k.endswith("_")
                           or k.startswith("_")})
    assert not np.array_equal(other.sample(20)[0], a)


def test_sample_errors(replayed, split):
    X, y, _ = split
    with pytest.raises(ValueError, match="label 42"):
        replayed.sample(3, y=42)
    with pytest.raises(ValueError, match="3 labels"):
        replayed.sample(3, y=[1, 2])
    ft = GenerativeReplayClassifier(**{**FAST, "max_epochs": 1}, generator=None).fit(X, y)
    with pytest.raises(ValueError, match="generator=None"):
        ft.sample(2)


def test_new_classes_arrive_without_a_classes_list(split):
    X, y, _ = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 2, "generator_steps": 10},
                                     random_state=0)
    for labels in ([0], [1, 2], [3]):  # one task, continued with new labels
        rows = np.isin(y, labels)
        est.partial_fit(X[rows], y[rows], task=0)
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 3])
    assert est.n_tasks_ == 1 and est.predict_proba(X[:3]).shape == (3, 4)
    est.partial_fit(X[y == 9], y[y == 9], task="next")  # a single-class task
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 3, 9])
    assert est.n_replayed_[-1] > 0


def test_string_labels_and_unsorted_arrival(split):
    X, y, task = split
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven",
                      "eight", "nine"])[y]
    est = GenerativeReplayClassifier(**FAST, generator="buffer", random_state=0)
    est.fit(X, names, task=1 - task)  # digits 5-9 first
    assert list(est.classes_) == sorted(set(names))
    pred = est.predict(X)
    assert pred.dtype.kind == "U" and np.mean(pred == names) > 0.7


@pytest.mark.parametrize("params", [dict(generator="gan"), dict(prior="previous"),
                                    dict(generator="gan", prior="previous", distill=True)])
def test_other_configurations_run(split, params):
    X, y, task = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 2, "generator_steps": 10},
                                     **params, random_state=0).fit(X, y, task=task)
    assert np.isfinite(est.loss_curve_).all()
    assert est.predict(X[:5]).shape == (5,)


def test_prior_previous_anchors_to_the_last_posterior(split):
    X, y, task = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 2}, generator=None,
                                     prior="previous", random_state=0)
    est.partial_fit(X[task == 0], y[task == 0], task=0)
    first = est.net_.module_.layers[0]
    mu = first.weight_mu.detach().clone()
    est.partial_fit(X[task == 1][:5], y[task == 1][:5], task=1)
    np.testing.assert_array_equal(first.prior_weight_mu.numpy(), mu.numpy())


def test_distilled_replay_uses_soft_labels(split):
    X, y, task = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 2, "generator_steps": 20},
                                     distill=True, random_state=0)
    est.partial_fit(X[task == 0], y[task == 0], task=0)
    est.partial_fit(X[task == 1], y[task == 1], task=1)
    _, targets = est._replay(50, 10, {c: c for c in range(10)}, seed=0)
    np.testing.assert_allclose(targets.sum(1), 1, rtol=1e-5)
    assert np.all(targets[:, 5:] == 0) and (targets.max(1) < 1).any()


def test_pickle_mid_sequence_continues_where_it_stopped(split):
    X, y, task = split
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 2, "generator_steps": 10},
                                     random_state=0)
    est.partial_fit(X[task == 0], y[task == 0], task=0)
    copy = pickle.loads(pickle.dumps(est))
    for e in (est, copy):
        e.partial_fit(X[task == 1], y[task == 1], task=1)
    np.testing.assert_array_equal(est.predict_proba(X), copy.predict_proba(X))
    np.testing.assert_array_equal(est.sample(5)[0], copy.sample(5)[0])
    assert not hasattr(clone(est), "classes_")


def test_zero_weight_equals_dropping_the_row(split):
    X, y, task = split
    w = np.ones(len(X))
    w[1::4] = 0
    p = {**FAST, "max_epochs": 2, "generator_steps": 10}
    a = GenerativeReplayClassifier(**p, random_state=0).fit(X, y, task=task, sample_weight=w)
    b = GenerativeReplayClassifier(**p, random_state=0).fit(X[w > 0], y[w > 0],
                                                            task=task[w > 0])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.sample(4)[0], b.sample(4)[0])


def test_samples_are_clipped_to_the_range_seen_in_fit(replayed, split):
    import torch

    X, y, _ = split
    np.testing.assert_array_equal(replayed.data_min_, X.min(0))
    np.testing.assert_array_equal(replayed.data_max_, X.max(0))
    Xs, _ = replayed.sample(300)
    assert (Xs >= X.min(0)).all() and (Xs <= X.max(0)).all()
    # the generators' own draws leave the range (so the clipping is what keeps Xs in it)
    raw = replayed._draw(replayed.generators_[0], 300, torch.Generator().manual_seed(0))
    assert ((raw < X.min(0)) | (raw > X.max(0))).any()
    # partial_fit widens the range with each task's rows
    est = GenerativeReplayClassifier(**{**FAST, "max_epochs": 1, "generator_steps": 5},
                                     random_state=0)
    est.partial_fit(X[:50] / 2, y[:50], task=0)
    np.testing.assert_array_equal(est.data_max_, (X[:50] / 2).max(0))
    est.partial_fit(X[50:100], y[50:100], task=1)
    np.testing.assert_array_equal(est.data_max_, np.maximum(X[:50] / 2, X[50:100]).max(0))
    assert (est.sample(100)[0] <= est.data_max_).all()


def test_proportional_split_stays_within_one_row_of_each_quota():
    from sklearn_papers.continual._generative_replay_classifier import _proportional_split

    for total, counts in [(16, np.full(21, 16.0)), (16, np.full(10, 5.0)), (7, [1, 2, 4]),
                          (100, [3, 0, 97]), (0, [1, 1])]:
        counts = np.asarray(counts, dtype=float)
        share = _proportional_split(total, counts, np.random.default_rng(0))
        quota = total * counts / counts.sum()
        assert share.sum() == total
        assert np.all(np.abs(share - quota) < 1), (share, quota)
        np.testing.assert_array_equal(
            share, _proportional_split(total, counts, np.random.default_rng(0)))
    # ties go to a random subset, not always to the first sources
    shares = [_proportional_split(16, np.full(21, 16.0), np.random.default_rng(s))
              for s in range(4)]
    assert len({tuple(s) for s in shares}) > 1


def _long_stream(n_tasks):
    """The field stream: tasks of 32 rows (16 per label), features shifted by 0.2 per task.

    Returns the estimator, its pickle size after 11 and 21 tasks and the ``(task, label, rows)``
    of every generator draw of the last call.
    """
    est = GenerativeReplayClassifier(hidden_layer_sizes=(8,), max_epochs=1, generator_steps=5,
                                     generator_hidden=8, n_latent=2, random_state=0)
    rng = np.random.RandomState(0)
    y = np.r_[np.zeros(16), np.ones(16)].astype(int)
    sizes, drawn = {}, []
    original = GenerativeReplayClassifier._draw

    def draw(self, src, n, g):
        drawn.append((src["task"], int(src["label"]), n))
        return original(self, src, n, g)

    for t in range(n_tasks):
        X = rng.randn(32, 4) + 0.2 * t
        if t < n_tasks - 1:
            est.partial_fit(X, y, task=t)
        else:
            with mock.patch.object(GenerativeReplayClassifier, "_draw", draw):
                est.partial_fit(X, y, task=t)
        if t + 1 in (11, 21):
            sizes[t + 1] = len(pickle.dumps(est))
    return est, sizes, drawn


def test_replay_is_shared_by_every_earlier_task_of_a_long_stream():
    est, sizes, drawn = _long_stream(22)
    for label in (0, 1):
        rows = {t: n for t, lab, n in drawn if lab == label}
        assert sum(rows.values()) == 16  # one call's mean class size
        assert len(rows) >= 8 and max(rows.values()) <= 5, rows
        assert set(rows) <= set(range(21))
    # the split is seeded: a refit replays from the same generators
    assert sorted(_long_stream(22)[2]) == sorted(drawn)
    # replay per call is flat, and the pickle grows no faster than the stream
    assert est.n_replayed_ == [0] + [32] * 21
    assert sizes[21] <= 2.5 * sizes[11]


DEGENERATE = {
    "one value": (np.full((10, 4), 3.0), np.r_[np.zeros(5), np.ones(5)]),
    # float64 values that float32 (the network's precision) cannot hold exactly
    "one row per class": (np.random.RandomState(0).randn(2, 4) + 0.1, np.array([0, 1])),
    "constant rows": (np.repeat(np.linspace(0, 1, 10)[:, None], 4, axis=1),
                      np.r_[np.zeros(5), np.ones(5)]),
}


@pytest.mark.parametrize("generator", ["vae", "gan", "buffer"])
@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_samples_stay_in_the_training_range_on_degenerate_data(case, generator):
    X, y = DEGENERATE[case]
    est = GenerativeReplayClassifier(hidden_layer_sizes=(4,), max_epochs=1, generator=generator,
                                     generator_steps=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.data_min_, X.min(0))
    np.testing.assert_array_equal(est.data_max_, X.max(0))
    Xs, _ = est.sample(50)
    assert Xs.dtype == X.dtype and np.isfinite(Xs).all()
    assert (Xs >= X.min(0)).all() and (Xs <= X.max(0)).all()
    proba = est.predict_proba(X)
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
