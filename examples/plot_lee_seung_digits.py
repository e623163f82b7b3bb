"""
=========================================================
NMF of handwritten digits: Frobenius and KL, parts bases
=========================================================

Factorise scikit-learn's 8 x 8 digit images (X, 1797 x 64, counts 0-16) into 16
non-negative basis images with Lee & Seung's multiplicative updates, for both of their
objectives, and plot the objective after every iteration (non-increasing, their
Theorems 1 and 2) beside the learnt bases.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits

from sklearn_papers.decomposition import NMF

X = load_digits().data
models = {
    loss: NMF(n_components=16, beta_loss=loss, max_iter=200, tol=0, random_state=0).fit(X)
    for loss in ("frobenius", "kullback-leibler")
}

fig = plt.figure(figsize=(11, 4.5))
ax = fig.add_subplot(1, 3, 1)
for loss, model in models.items():
    curve = model.loss_curve_
    ax.plot(range(1, len(curve) + 1), [c / curve[0] for c in curve], label=loss)
ax.set(xscale="log", xlabel="iteration", ylabel="objective / objective after 1 iteration",
       title="Objective never increases")
ax.legend()
for col, (loss, model) in enumerate(models.items()):
    grid = model.components_.reshape(4, 4, 8, 8).transpose(0, 2, 1, 3).reshape(32, 32)
    ax = fig.add_subplot(1, 3, col + 2)
    ax.imshow(grid, cmap="gray_r", interpolation="nearest")
    ax.set(xticks=[], yticks=[], title=f"16 bases, {loss}\n"
           f"reconstruction error {model.reconstruction_err_:.4g}")
fig.tight_layout()
plt.show()
