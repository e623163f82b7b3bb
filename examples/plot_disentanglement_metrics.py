"""
=====================================================
Scoring disentanglement: perfect, rotated and learned
=====================================================

The disentanglement scores of :mod:`sklearn_papers.metrics` compare a representation with
known ground-truth factors. Here we generate dSprites-like images with
:func:`~sklearn_papers.datasets.make_shapes` and score four representations:

* the factors themselves (a perfect code),
* the factors with the two position codes rotated by 45 degrees (entangled, equally
  informative),
* PCA on the pixels,
* a small :class:`~sklearn_papers.decomposition.BetaVAE`.

A perfect code scores near 1 on every score; rotating two codes keeps the information but
lowers every score that rewards axis alignment.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.tree import DecisionTreeClassifier

from sklearn_papers.datasets import Shapes
from sklearn_papers.decomposition import BetaVAE
from sklearn_papers.metrics import (
    dci,
    factor_vae_score,
    irs,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)

data = Shapes(image_size=16)
rng = np.random.RandomState(0)
factors = data.sample_factors(1500, rng)
X = data.sample_observations_from_factors(factors)


def rotate_xy(codes):
    """Rotate the x and y position codes by 45 degrees."""
    codes = np.asarray(codes, dtype=float).copy()
    c = np.cos(np.pi / 4)
    x, y = codes[:, 3].copy(), codes[:, 4].copy()
    codes[:, 3], codes[:, 4] = c * (x - y), c * (x + y)
    return codes


# The interventional FactorVAE score needs a function of images. Render every factor
# combination once, so that an oracle can look the factors up by image. At 16x16 pixels a
# few combinations render identically, so the lookup is near-perfect, not perfect.
_grid_factors = np.stack(np.meshgrid(*[np.arange(s) for s in data.factor_sizes],
                                     indexing="ij"), axis=-1).reshape(-1, 5)
_lookup = {im.tobytes(): f for im, f in
           zip(data.sample_observations_from_factors(_grid_factors), _grid_factors)}


def oracle(images):
    return np.array([_lookup[im.tobytes()] for im in images], dtype=float)


def rotated(images):
    return rotate_xy(oracle(images))

representations = {
    "factors": oracle,
    "rotated x/y": rotated,
    "PCA": PCA(n_components=6, random_state=0).fit(X),
    "beta-VAE": BetaVAE(n_components=6, beta=4.0, encoder="mlp", max_epochs=20, lr=3e-3,
                        random_state=0).fit(X),
}

results = {}
for name, rep in representations.items():
    if name == "factors":
        codes = factors.astype(float)  # the exact factors of the sample
    elif name == "rotated x/y":
        codes = rotate_xy(factors)
    else:
        codes = rep.transform(X)
    results[name] = {
        "MIG": mutual_info_gap(factors, codes),
        "DCI-D": dci(factors, codes, estimator=DecisionTreeClassifier(max_depth=8),
                     random_state=0)["disentanglement"],
        "SAP (cont.)": sap_score(factors, codes, continuous_factors=True),
        "Modularity": modularity_explicitness(factors, codes, random_state=0)["modularity"],
        "IRS": irs(factors, codes),
        "FactorVAE": factor_vae_score(data, rep, batch_size=64, n_train=200, n_eval=100,
                                      n_variance_estimate=1000, random_state=0),
    }
    print(name, {k: round(v, 2) for k, v in results[name].items()})

# %%
# Plot the scores side by side.
metric_names = list(next(iter(results.values())))
width = 0.8 / len(results)
fig, ax = plt.subplots(figsize=(9, 4))
for i, (name, scores) in enumerate(results.items()):
    ax.bar(np.arange(len(metric_names)) + i * width, [scores[m] for m in metric_names],
           width, label=name)
ax.set_xticks(np.arange(len(metric_names)) + 0.4 - width / 2, metric_names)
ax.set_ylabel("score")
ax.set_ylim(0, 1.05)
ax.legend()
ax.set_title("Disentanglement scores of four representations of the shapes data")
fig.tight_layout()
plt.show()
