"""minmax_distances: the continuous Tanimoto distance, checked against scipy's Jaccard;
nearest_tanimoto_similarity: checked against the pairwise definition."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from sklearn_papers.metrics import minmax_distances, nearest_tanimoto_similarity


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


def _naive_nearest(A, B):
    out = []
    for a in A:
        best = -1.0
        for b in B:
            union = np.sum(a | b)
            best = max(best, np.sum(a & b) / union if union else 1.0)
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize("chunk_size", [1, 3, 512])
def test_nearest_tanimoto_similarity_equals_the_pairwise_definition(chunk_size):
    rng = np.random.default_rng(0)
    A = (rng.random((7, 40)) < 0.2).astype(np.uint8)
    B = (rng.random((11, 40)) < 0.2).astype(np.uint8)
    B[3] = 0  # an empty fingerprint
    A[2] = 0  # empty against empty: 1
    got = nearest_tanimoto_similarity(A, B, chunk_size=chunk_size)
    assert got.shape == (7,) and got.dtype == np.float64
    np.testing.assert_allclose(got, _naive_nearest(A, B), rtol=1e-6)
    np.testing.assert_allclose(got, 1 - minmax_distances(A, B).min(axis=1), rtol=1e-6)
    assert got[2] == 1.0


def test_nearest_tanimoto_similarity_of_a_row_in_the_reference_set_is_one():
    bits = np.random.default_rng(1).random((6, 30)) < 0.3
    np.testing.assert_array_equal(nearest_tanimoto_similarity(bits, bits), np.ones(6))
    assert nearest_tanimoto_similarity([[1, 0, 0]], [[0, 1, 1]])[0] == 0.0


@pytest.mark.parametrize("args, kwargs, match", [
    (([[1, 2]], [[1, 0]]), {}, r"X\[0\] holds a value other than 0 or 1"),
    (([[1, 0]], [[0, 1], [0.5, 1]]), {}, r"Y\[1\] holds a value other than 0 or 1"),
    (([[1, 0]], [[1, 0, 1]]), {}, "X has 2 features but Y has 3"),
    (([[1, 0]], np.zeros((0, 2))), {}, "minimum of 1 is required"),
    (([[1, 0]], [[1, 0]]), {"chunk_size": 0}, "chunk_size must be a positive integer"),
])
def test_nearest_tanimoto_similarity_refuses_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        nearest_tanimoto_similarity(*args, **kwargs)
