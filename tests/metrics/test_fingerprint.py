"""minmax_distances: the continuous Tanimoto distance, checked against scipy's Jaccard."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from sklearn_papers.metrics import minmax_distances


def test_minmax_distances_are_jaccard_on_bits():
    bits = np.random.RandomState(0).rand(15, 12) > 0.5
    d = minmax_distances(bits)
    np.testing.assert_allclose(squareform(d, checks=False), pdist(bits, "jaccard"))
    np.testing.assert_array_equal(d, d.T)
    assert np.all(np.diag(d) == 0.0)


def test_minmax_distances_of_real_rows():
    x = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    y = np.array([[1.0, 3.0, 1.0], [0.0, 0.0, 0.0]])
    # 1 - (1 + 1 + 0) / (2 + 3 + 1); an all-zero row is at 1 from any other, 0 from itself
    np.testing.assert_allclose(minmax_distances(x, y), [[1 - 2 / 6, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("args, match", [
    ((np.array([[1.0, -0.5]]),), r"X\[0\] holds a negative value"),
    ((np.ones((2, 2)), np.array([[0.0, 1], [1, -1]])), r"Y\[1\] holds a negative value"),
    ((np.ones((2, 2)), np.ones((2, 3))), "X has 2 features but Y has 3"),
    ((np.array([[np.nan, 1.0]]),), "NaN"),
])
def test_minmax_distances_refuse_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        minmax_distances(*args)


@pytest.mark.parametrize("scale", [1e307, 1e-300])
def test_minmax_distances_do_not_depend_on_the_unit(scale):
    # sums of entries near 1e308 overflowed to inf and gave a distance of 1
    x = np.array([[2.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    y = np.array([[1.0, 3.0, 1.0], [2.0, 0.0, 0.0]])
    np.testing.assert_allclose(minmax_distances(x * scale, y * scale), minmax_distances(x, y),
                               rtol=1e-12)
    assert minmax_distances([[1e308, 1e308]], [[1e308, 0.0]])[0, 0] == pytest.approx(0.5)
