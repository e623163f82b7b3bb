"""backward_transfer: the earlier tasks' score change after the later tasks."""

import numpy as np
import pytest

from sklearn_papers.metrics import backward_transfer


def test_backward_transfer_leaves_the_last_task_out():
    assert backward_transfer([1.0, 0.75, 0.5], [0.5, 0.5, 0.0]) == -0.375
    assert backward_transfer([0.5, 0.5], [0.75, 0.0]) == 0.25  # a later task helped
    assert backward_transfer(np.ones(4), np.ones(4)) == 0.0


@pytest.mark.parametrize("a, b, match", [
    ([1.0, 0.5], [1.0], "got 2 and 1 values"),
    ([1.0], [1.0], "at least two tasks"),
    ([1.0, np.nan], [1.0, 1.0], "just_learnt holds NaN"),
    ([[1.0, 0.5], [1.0, 0.5]], [1.0, 0.5], r"just_learnt must be 1-D.*\(2, 2\)"),
])
def test_backward_transfer_rejects_bad_input(a, b, match):
    with pytest.raises(ValueError, match=match):
        backward_transfer(a, b)
