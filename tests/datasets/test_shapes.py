"""The procedural dSprites-like ground-truth dataset."""

import numpy as np
import pytest

from sklearn_papers.datasets import Shapes, make_shapes
from sklearn_papers.utils._sklearn_compat import InvalidParameterError


def test_make_shapes_is_deterministic_binary_float32_with_index_factors():
    X, f = make_shapes(200, image_size=16, random_state=0)
    X2, f2 = make_shapes(200, image_size=16, random_state=0)
    assert X.shape == (200, 256) and X.dtype == np.float32 and f.dtype == np.int64
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(f, f2)
    assert set(np.unique(X)) <= {0.0, 1.0}
    assert np.all(X.sum(axis=1) > 0)  # every shape is visible
    assert np.all(f >= 0) and np.all(f < np.asarray(Shapes().factor_sizes))
    X3, _ = make_shapes(200, image_size=16, random_state=1)
    assert not np.array_equal(X, X3)


def test_each_factor_changes_the_image_and_position_moves_the_centroid():
    data = Shapes(image_size=32)
    base = np.array([[2, 3, 1, 7, 7]])
    img = data.sample_observations_from_factors(base)
    for j in range(5):
        other = base.copy()
        other[0, j] = (other[0, j] + 1) % data.factor_sizes[j]
        assert not np.array_equal(img, data.sample_observations_from_factors(other)), j
    cols = np.arange(32)

    def centroid_x(f):
        im = data.sample_observations_from_factors(f).reshape(32, 32)
        return (im.sum(axis=0) * cols).sum() / im.sum()

    right = base.copy()
    right[0, 3] = 12
    assert centroid_x(right) > centroid_x(base) + 5
    # larger scale, more pixels
    small, large = base.copy(), base.copy()
    small[0, 1], large[0, 1] = 0, 5
    assert (data.sample_observations_from_factors(large).sum()
            > 1.5 * data.sample_observations_from_factors(small).sum())


def test_sampling_interface_for_interventional_scores():
    data = Shapes(image_size=16, n_scales=2, n_orientations=3, n_positions=4)
    assert data.factor_sizes == (3, 2, 3, 4, 4)
    rng = np.random.RandomState(0)
    f = data.sample_factors(50, rng)
    assert f.shape == (50, 5)
    X = data.sample_observations_from_factors(f, rng)
    np.testing.assert_array_equal(X, data.sample_observations_from_factors(f))
    values = data.factor_values(f)
    assert np.all((values[:, 1] >= 0.5) & (values[:, 1] <= 1.0))
    assert np.all((values[:, 2] >= 0) & (values[:, 2] < np.pi / 2))
    assert "Shapes(image_size=16" in repr(data)


def test_bad_factors_and_sizes_raise_naming_the_item():
    data = Shapes(image_size=16)
    with pytest.raises(ValueError, match=r"factors\[1, 3\] = 16 .*pos_x"):
        data.sample_observations_from_factors([[0, 0, 0, 0, 0], [0, 0, 0, 16, 0]])
    with pytest.raises(ValueError, match="shape"):
        data.sample_observations_from_factors(np.zeros((2, 4), dtype=int))
    with pytest.raises(ValueError, match="integer"):
        data.sample_observations_from_factors(np.full((1, 5), 0.5))
    with pytest.raises(ValueError, match="image_size"):
        Shapes(image_size=4)
    with pytest.raises(InvalidParameterError, match="n_samples"):
        make_shapes(0)
