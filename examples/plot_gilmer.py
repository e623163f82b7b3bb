"""
=====================================================
Message passing neural network on ESOL solubility
=====================================================

Gilmer et al. (2017) frame graph networks for molecules as message passing: atoms exchange
messages along bonds for ``n_steps`` steps, update their states with a GRU, and a readout
(set2set) turns the atom states into a molecule vector. Here
:class:`~sklearn_papers.chem.MPNNRegressor` predicts the aqueous solubility of held-out
ESOL molecules (left) and its training loss goes down over the epochs (right). A small
model and few epochs keep the example short; see ``sklearn-papers reproduce --only
gilmer`` for the full protocol.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_papers.chem import MPNNRegressor
from sklearn_papers.datasets import load_delaney

torch.set_num_threads(1)  # small graph batches: one thread is fastest on CPU

X, y = load_delaney(return_X_y=True)

# %%
# A random 80/20 split and a small MPNN (edge network, GRU, set2set)
rng = np.random.default_rng(0)
order = rng.permutation(len(X))
train, test = order[:900], order[900:]
reg = MPNNRegressor(hidden_size=32, n_steps=3, set2set_steps=3, edge_hidden_size=32,
                    max_epochs=25, batch_size=32, lr=5e-3, message="edge_network",
                    readout="set2set", lr_schedule="constant", random_state=0)
reg.fit(X[train], y[train])
pred = reg.predict(X[test])
rmse = np.sqrt(np.mean((pred - y[test]) ** 2))

# %%
# Plot: predicted against measured solubility, and the training loss
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
ax1.scatter(y[test], pred, s=10, alpha=0.7)
lims = [min(y.min(), pred.min()), max(y.max(), pred.max())]
ax1.plot(lims, lims, "k--", lw=1)
ax1.set_xlabel("measured log10 solubility (mol/L)")
ax1.set_ylabel("predicted")
ax1.set_title(f"held-out ESOL molecules, RMSE {rmse:.2f}")
ax2.plot(np.arange(1, reg.n_iter_ + 1), reg.loss_curve_)
ax2.set_xlabel("epoch")
ax2.set_ylabel("training MSE (standardised units)")
ax2.set_title("training loss")
fig.tight_layout()
plt.show()
