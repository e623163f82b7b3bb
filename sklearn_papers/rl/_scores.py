"""Scores of reinforcement-learning methods compared over seeds: means that leave diverged
runs out, the normalized score ``(method - random) / (reference - random)`` and the
setting a tuning keeps (Oh et al. 2020 normalize by a tuned A2C, Fig. 4)."""

import numpy as np

__all__ = []


def _finite_mean(values):
    """Mean of the finite values (NaN, without a warning, when there are none)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else float("nan")


def _or_nan(fn, *args):
    """``fn(*args)``, or NaN where the agents diverged (``FloatingPointError``)."""
    try:
        return fn(*args)
    except FloatingPointError:
        return float("nan")


def _best_setting(settings):
    """The key of ``settings`` (``{setting: returns}``) with the best finite mean return;
    a setting whose every run diverged (NaN) comes last."""
    def rank(key):
        mean = _finite_mean(settings[key])
        return np.isfinite(mean), mean

    return max(settings, key=rank)


def _normalized_score(value, random, reference):
    """``(value - random) / (reference - random)``: 0 is the random policy, 1 the reference
    (NaN when both score the same)."""
    return (value - random) / (reference - random) if reference != random else float("nan")
