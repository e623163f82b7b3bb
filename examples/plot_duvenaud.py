"""
=====================================================
Neural graph fingerprints on Delaney solubility
=====================================================

Duvenaud et al. (2015) replace the hashing of circular (ECFP) fingerprints by a
differentiable graph network. Left: with large random weights the untrained
:class:`~sklearn_papers.chem.NeuralFingerprint` already behaves like ECFP (the paper's
Section 3). Right: trained end to end, :class:`~sklearn_papers.chem.NeuralFingerprintRegressor`
predicts aqueous solubility of held-out molecules.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.spatial.distance import pdist

from sklearn_papers.chem import (
    CircularFingerprint,
    NeuralFingerprint,
    NeuralFingerprintRegressor,
)
from sklearn_papers.datasets import load_delaney

X, y = load_delaney(return_X_y=True)

# %%
# Random weights: distances track ECFP distances
sub = X[:200]
ecfp = CircularFingerprint(radius=4, n_bits=2048).fit_transform(sub).astype(bool)
nf = NeuralFingerprint(fp_length=2048, radius=4, random_state=0).fit_transform(sub)
nf = nf.astype(np.float64)
d_ecfp = pdist(ecfp, "jaccard")
d_nf = pdist(nf, lambda a, b: 1.0 - np.minimum(a, b).sum() / np.maximum(a, b).sum())
r = np.corrcoef(d_ecfp, d_nf)[0, 1]

# %%
# Trained end to end: a random 80/20 split
rng = np.random.default_rng(0)
order = rng.permutation(len(X))
train, test = order[:900], order[900:]
reg = NeuralFingerprintRegressor(radius=3, lr=1e-2, max_epochs=20, random_state=0)
reg.fit(X[train], y[train])
pred = reg.predict(X[test])
mse = np.mean((pred - y[test]) ** 2)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
ax1.scatter(d_ecfp, d_nf, s=2, alpha=0.3)
ax1.set(xlabel="ECFP Tanimoto distance", ylabel="random neural FP distance",
        title=f"untrained, r = {r:.2f}")
ax2.scatter(y[test], pred, s=8)
lims = [y.min(), y.max()]
ax2.plot(lims, lims, color="0.5", lw=1)
ax2.set(xlabel="measured log10 solubility (mol/L)", ylabel="predicted",
        title=f"trained end to end, test MSE = {mse:.2f}")
fig.tight_layout()
plt.show()
