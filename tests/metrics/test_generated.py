"""sample_quality: spread, coverage, precision and distance of generated rows."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from sklearn_papers.metrics import sample_quality


def test_sample_quality_of_real_rows_and_of_far_rows():
    X, y = load_digits(return_X_y=True)
    train, test = X[y == 3][:120], X[y == 3][120:]
    same = sample_quality(train, train, test)
    assert same["spread"] == pytest.approx(1.0)
    assert same["coverage"] == 1.0 and same["precision"] == 1.0
    assert same["distance"] == 0.0
    far = sample_quality(train + 100.0, train, test)
    assert far["coverage"] == 0.0 and far["precision"] == 0.0 and far["distance"] > 1
    mean_row = sample_quality(np.repeat(train.mean(0, keepdims=True), 50, 0), train,
                              test)
    assert mean_row["spread"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("kwargs, match", [
    (dict(samples=np.zeros((3, 5))), "same number of features"),
    (dict(real_test=np.full((4, 4), np.nan)), "real_test"),
    (dict(samples=np.zeros((0, 4))), "samples"),
    (dict(k=0), r"k must be an int in \[1, n_train=10\]"),
    (dict(k=11), "k must be an int"),
    (dict(real_train=np.ones((10, 4))), "real_train is constant"),
])
def test_sample_quality_refuses_bad_input(kwargs, match):
    rng = np.random.RandomState(0)
    args = dict(samples=rng.rand(6, 4), real_train=rng.rand(10, 4), real_test=rng.rand(5, 4))
    with pytest.raises(ValueError, match=match):
        sample_quality(**{**args, **kwargs})


def test_sample_quality_refuses_test_rows_that_are_training_rows():
    # the distance ratio divided by zero (inf) when real_test was drawn from real_train
    rng = np.random.RandomState(0)
    train = rng.rand(10, 4)
    with pytest.raises(ValueError, match="every real_test row is also a real_train row"):
        sample_quality(rng.rand(6, 4), train, train[:3])


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_sample_quality_does_not_depend_on_the_unit(scale):
    rng = np.random.RandomState(0)
    rows = rng.rand(6, 4), rng.rand(10, 4), rng.rand(5, 4)
    expected = sample_quality(*rows)
    assert sample_quality(*(a * scale for a in rows)) == pytest.approx(expected, rel=1e-12)


def test_classifier_two_sample_score_tells_far_rows_apart_only():
    from sklearn_papers.metrics import classifier_two_sample_score

    rng = np.random.RandomState(0)
    real = rng.randn(100, 3)
    assert classifier_two_sample_score(real, real + 10, random_state=0) == 1.0
    same = classifier_two_sample_score(real, rng.randn(100, 3), random_state=0)
    assert 0.3 < same < 0.7
    other = rng.randn(100, 3)
    assert (classifier_two_sample_score(real, other, random_state=1)
            == classifier_two_sample_score(real, other, random_state=1))


@pytest.mark.parametrize("kwargs, match", [
    (dict(samples=np.zeros((10, 2))), "same number of features"),
    (dict(samples=np.zeros((3, 3))), "at least cv=5 rows each"),
    (dict(real=np.full((10, 3), np.nan)), "real"),
    (dict(cv=1), "cv must be an int of at least 2"),
])
def test_classifier_two_sample_score_rejects_bad_input(kwargs, match):
    from sklearn_papers.metrics import classifier_two_sample_score

    args = {"real": np.zeros((10, 3)), "samples": np.ones((10, 3)), **kwargs}
    with pytest.raises(ValueError, match=match):
        classifier_two_sample_score(**args)


def test_classifier_two_sample_score_refuses_a_regressor():
    from sklearn.linear_model import LinearRegression

    from sklearn_papers.metrics import classifier_two_sample_score

    rng = np.random.RandomState(0)
    with pytest.raises(TypeError, match="estimator must be a classifier.*LinearRegression"):
        classifier_two_sample_score(rng.randn(20, 2), rng.randn(20, 2),
                                    estimator=LinearRegression())
