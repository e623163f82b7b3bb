"""Do random neural fingerprints track ECFP? Duvenaud et al. (2015), Section 3, Fig. 3:
pairwise distances under an untrained :class:`~sklearn_papers.chem.NeuralFingerprint`
against ECFP Tanimoto distances."""

import numpy as np

__all__ = []


def _random_fingerprint_correlation(X, random_state):
    """``(r, d_ecfp, d_nf)``: the Pearson correlation ``r`` (float) of the pairwise
    distances of the molecules ``X`` (SMILES) under ECFP (radius 4, 2048 bits; Tanimoto,
    ``d_ecfp``) and an untrained ``NeuralFingerprint(fp_length=2048, radius=4,
    conv_width=20, random_state=random_state)`` (min/max, ``d_nf``); both condensed,
    ndarray of shape (n * (n - 1) / 2,)."""
    from scipy.spatial.distance import pdist, squareform

    from sklearn_papers.chem import CircularFingerprint, NeuralFingerprint
    from sklearn_papers.metrics import minmax_distances

    ecfp = CircularFingerprint(radius=4, n_bits=2048).fit_transform(X).astype(bool)
    nf = NeuralFingerprint(fp_length=2048, radius=4, conv_width=20,
                           random_state=random_state).fit_transform(X).astype(np.float64)
    d_ecfp = pdist(ecfp, "jaccard")
    d_nf = squareform(minmax_distances(nf), checks=False)
    return float(np.corrcoef(d_ecfp, d_nf)[0, 1]), d_ecfp, d_nf
