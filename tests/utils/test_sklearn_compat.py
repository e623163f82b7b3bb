"""Parameter constraints: numbers given as bools are errors, not 0 or 1."""

import numpy as np
import pytest

from sklearn_papers.chem import CircularFingerprint
from sklearn_papers.decomposition import NMF
from sklearn_papers.utils._sklearn_compat import Interval, InvalidParameterError


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_interval_is_not_satisfied_by_a_bool(value):
    from numbers import Integral, Real

    assert not Interval(Integral, 0, None, closed="left").is_satisfied_by(value)
    assert not Interval(Real, 0, None, closed="left").is_satisfied_by(value)
    assert Interval(Integral, 0, None, closed="left").is_satisfied_by(1)


@pytest.mark.parametrize("est, name", [(CircularFingerprint(n_bits=True), "n_bits"),
                                       (CircularFingerprint(radius=True), "radius"),
                                       (NMF(n_components=True), "n_components")])
def test_estimators_name_the_parameter_given_a_bool(est, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter .* Got True"):
        est.fit(["CCO", "c1ccccc1"] if isinstance(est, CircularFingerprint)
                else np.ones((4, 3)))


def test_metrics_name_the_argument_that_is_not_a_2d_array():
    from sklearn_papers.metrics import (
        classifier_two_sample_score,
        factor_probe_accuracy,
        nearest_tanimoto_similarity,
    )

    with pytest.raises(ValueError, match="^X: Expected 2D array"):
        nearest_tanimoto_similarity([1, 0, 1], [[1, 0, 1]])
    with pytest.raises(ValueError, match=r"^Y: Found array with 0 sample\(s\)"):
        nearest_tanimoto_similarity([[1, 0, 1]], np.zeros((0, 3)))
    with pytest.raises(ValueError, match="^samples: Expected 2D array"):
        classifier_two_sample_score(np.ones((10, 1)), np.ones(10))
    with pytest.raises(ValueError, match="^factors_test: Expected 2D array"):
        factor_probe_accuracy(np.ones((10, 2)), np.ones((10, 1)), np.ones((5, 2)), np.ones(5))
