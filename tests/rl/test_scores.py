"""Scores of RL methods over seeds: finite means, normalized scores, the tuned setting."""

import warnings

import numpy as np

from sklearn_papers.rl._scores import _best_setting, _finite_mean, _normalized_score, _or_nan


def test_finite_mean_leaves_diverged_runs_out_without_a_warning():
    assert _finite_mean([1.0, np.nan, 3.0, np.inf]) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(_finite_mean([np.nan, np.nan]))
        assert np.isnan(_finite_mean([]))


def test_or_nan_turns_a_divergence_into_nan_and_nothing_else():
    def diverge(x):
        raise FloatingPointError("the agents diverged")

    assert np.isnan(_or_nan(diverge, 1))
    assert _or_nan(lambda a, b: a + b, 1, 2) == 3
    try:
        _or_nan(lambda: 1 / 0)
    except ZeroDivisionError:
        pass
    else:
        raise AssertionError("only FloatingPointError becomes NaN")


def test_best_setting_ranks_diverged_settings_last():
    assert _best_setting({"0.3": [0.5, 0.5], "1.0": [1.0, np.nan], "3.0": [np.nan]}) == "1.0"
    assert _best_setting({"a": [np.nan], "b": [-5.0]}) == "b"


def test_normalized_score_is_zero_at_random_and_one_at_the_reference():
    assert _normalized_score(1.0, 1.0, 3.0) == 0.0
    assert _normalized_score(3.0, 1.0, 3.0) == 1.0
    assert _normalized_score(2.0, 1.0, 3.0) == 0.5
    assert np.isnan(_normalized_score(2.0, 1.0, 1.0))
