"""Pairwise distances of random neural fingerprints against ECFP's."""

import numpy as np
from scipy.spatial.distance import pdist

from sklearn_papers.chem import CircularFingerprint
from sklearn_papers.chem._fingerprint_correlation import _random_fingerprint_correlation
from sklearn_papers.datasets import load_delaney


def test_correlation_of_the_condensed_distances():
    X = load_delaney(return_X_y=True)[0][:40]
    r, d_ecfp, d_nf = _random_fingerprint_correlation(X, 0)
    assert d_ecfp.shape == d_nf.shape == (40 * 39 // 2,)
    ecfp = CircularFingerprint(radius=4, n_bits=2048).fit_transform(X).astype(bool)
    np.testing.assert_allclose(d_ecfp, pdist(ecfp, "jaccard"))
    assert np.all((d_nf >= 0) & (d_nf <= 1))
    assert r == np.corrcoef(d_ecfp, d_nf)[0, 1] and 0 < r <= 1
    # the random weights come from random_state alone
    again = _random_fingerprint_correlation(X, 0)
    np.testing.assert_array_equal(again[2], d_nf)
    assert not np.array_equal(_random_fingerprint_correlation(X, 1)[2], d_nf)
