"""factor_step_distances: exact values on a dataset whose observations are its factors,
representations that read one factor, invariances and input errors."""

import numpy as np
import pytest
from sklearn.utils import check_random_state

from sklearn_papers.datasets import Shapes
from sklearn_papers.metrics import factor_step_distances
from sklearn_papers.utils._sklearn_compat import InvalidParameterError


class _Grid:
    """Observations are the factors themselves, as floats."""

    factor_sizes = (3, 4, 5)

    def sample_factors(self, n, random_state=None):
        rng = check_random_state(random_state)
        return np.column_stack([rng.randint(s, size=n) for s in self.factor_sizes])

    def sample_observations_from_factors(self, factors, random_state=None):
        return np.asarray(factors, dtype=float)


def _reference(n=500):
    return _Grid().sample_observations_from_factors(_Grid().sample_factors(n, 1))


def test_each_kind_of_step_moves_its_factor_as_documented():
    data, reference = _Grid(), _reference()
    scale = reference.var(axis=0).mean()
    d = factor_step_distances(data, None, reference, n_pairs=300, categorical=[0],
                              cyclic=[2], random_state=0)
    base = data.sample_factors(300, 0)
    # ordinal factor 1: every pair is one value apart in one of the three columns
    np.testing.assert_allclose(d[1] * scale * 3, 1.0)
    # cyclic factor 2: one step up, the top value wraps to 0
    step = np.where(base[:, 2] == 4, -4.0, 1.0)
    np.testing.assert_allclose(d[2] * scale * 3, np.mean(step ** 2))
    # categorical factor 0: always another value, so at least one apart
    assert d[0] * scale * 3 >= 1.0


def test_same_seed_same_pairs_and_scale_invariance():
    data, reference = _Grid(), _reference()
    d = factor_step_distances(data, None, reference, n_pairs=200, random_state=3)
    np.testing.assert_allclose(
        factor_step_distances(data, lambda X: 10 * X + 1, reference, n_pairs=200,
                              random_state=3), d)
    assert not np.allclose(
        factor_step_distances(data, None, reference, n_pairs=200, categorical=[0],
                              random_state=3)[0], d[0])


def test_a_representation_that_reads_one_factor_moves_with_it_only():
    data = Shapes(16, n_scales=3, n_orientations=4, n_positions=6)
    reference = data.sample_observations_from_factors(data.sample_factors(400, 0))
    cols = np.arange(16)

    def centre_x(X):
        img = X.reshape(len(X), 16, 16)
        return ((img.sum(axis=1) * cols).sum(axis=1) / img.sum(axis=(1, 2)))[:, None]

    d = factor_step_distances(data, centre_x, reference, n_pairs=300, categorical=[0],
                              cyclic=[2], random_state=0)
    names = list(data.factor_names)
    assert d[names.index("pos_y")] < 0.1 * d[names.index("pos_x")]
    assert d.argmax() == names.index("pos_x")
    pixels = factor_step_distances(data, None, reference, n_pairs=300, random_state=0)
    assert pixels.shape == (5,) and pixels.dtype == np.float64 and np.all(pixels > 0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(categorical=[3]), "categorical must hold factor indices in \\[0, 3\\)"),
    (dict(cyclic=[True]), "cyclic must hold factor indices"),
    (dict(categorical=[1], cyclic=[1]), "both categorical and cyclic"),
])
def test_bad_factor_indices_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        factor_step_distances(_Grid(), None, _reference(), n_pairs=5, **kwargs)


def test_other_errors_name_the_argument_and_the_fix():
    data, reference = _Grid(), _reference()
    with pytest.raises(ValueError, match="constant on reference"):
        factor_step_distances(data, lambda X: np.ones((len(X), 2)), reference)
    with pytest.raises(ValueError, match="at least two values"):
        factor_step_distances(Shapes(16, n_scales=1), None, np.random.rand(5, 256))
    with pytest.raises(ValueError, match="reference"):
        factor_step_distances(data, None, reference[:1])
    with pytest.raises(InvalidParameterError, match="n_pairs"):
        factor_step_distances(data, None, reference, n_pairs=0)
    with pytest.raises(InvalidParameterError, match="dataset"):
        factor_step_distances(object(), None, reference)
