"""Index splits of the papers' protocols: seeded random splits and contiguous folds."""

import numpy as np
import pytest

from sklearn_papers.datasets._splits import _contiguous_folds, _random_split


@pytest.mark.parametrize("n_samples", [10, 1128, 23])
def test_folds_are_contiguous_chunks_test_i_validation_next(n_samples):
    chunks = np.array_split(np.arange(n_samples), 5)
    folds = _contiguous_folds(n_samples)
    assert len(folds) == 5
    for i, (train, val, test) in enumerate(folds):
        np.testing.assert_array_equal(test, chunks[i])
        np.testing.assert_array_equal(val, chunks[(i + 1) % 5])
        others = [chunks[j] for j in range(5) if j not in (i, (i + 1) % 5)]
        np.testing.assert_array_equal(train, np.concatenate(others))
        assert np.all(np.diff(train) > 0), "training rows keep file order"
        everything = np.sort(np.concatenate([train, val, test]))
        np.testing.assert_array_equal(everything, np.arange(n_samples))
    # every chunk is the test chunk exactly once
    np.testing.assert_array_equal(np.sort(np.concatenate([f[2] for f in folds])),
                                  np.arange(n_samples))


def test_three_folds_train_on_one_chunk():
    folds = _contiguous_folds(9, n_folds=3)
    np.testing.assert_array_equal(folds[2][0], [3, 4, 5])  # test 6-8, validation 0-2
    np.testing.assert_array_equal(folds[2][1], [0, 1, 2])


@pytest.mark.parametrize("args, match", [
    ((4,), r"n_samples must be an integer >= 5, got 4"),
    ((10, 2), r"n_folds must be an integer >= 3"),
    ((10.0,), r"n_samples must be an integer"),
])
def test_folds_refuse_bad_sizes(args, match):
    with pytest.raises(ValueError, match=match):
        _contiguous_folds(*args)


@pytest.mark.parametrize("n_samples", [1, 10, 1128])
def test_random_split_is_a_seeded_partition(n_samples):
    train, val, test = _random_split(n_samples, seed=3)
    assert (len(train), len(val)) == (round(0.8 * n_samples), round(0.1 * n_samples))
    np.testing.assert_array_equal(np.sort(np.concatenate([train, val, test])),
                                  np.arange(n_samples))
    again = _random_split(n_samples, seed=3)
    for a, b in zip((train, val, test), again):
        np.testing.assert_array_equal(a, b)
    # the permutation of numpy's generator, cut in order
    perm = np.random.default_rng(3).permutation(n_samples)
    np.testing.assert_array_equal(np.concatenate([train, val, test]), perm)


def test_random_split_takes_other_fractions_and_seeds():
    train, val, test = _random_split(100, seed=0, fractions=(0.5, 0.2, 0.3))
    assert (len(train), len(val), len(test)) == (50, 20, 30)
    assert not np.array_equal(_random_split(100, seed=1)[0], _random_split(100, seed=2)[0])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_samples": 0}, "n_samples must be an integer >= 1"),
    ({"fractions": (0.8, 0.2)}, "fractions must be 3 non-negative shares"),
    ({"fractions": (0.8, 0.3, -0.1)}, "fractions must be 3 non-negative shares"),
    ({"fractions": (0.8, 0.1, 0.2)}, "summing to 1"),
])
def test_random_split_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _random_split(**{"n_samples": 10, "seed": 0, **kwargs})
