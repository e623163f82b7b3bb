"""
=====================================================
GROVER: pretrained molecule embeddings, offline
=====================================================

:class:`~sklearn_papers.chem.GroverFeaturizer` loads the small GROVER checkpoint shipped
with the package (pretrained with GROVER's self-supervised tasks on 15,000 MOSES
molecules; no network needed) and turns molecules into fixed-length embeddings. Left: a
PCA of the embeddings of FreeSolv molecules, coloured by hydration free energy, which the
embeddings never saw. Right: a ridge regression on the frozen embeddings alone
(``descriptors=False, fingerprint_bits=0``), on the default features (the embeddings,
RDKit's 2-D descriptors through CDFs and ECFP4 bits, scaled on the training molecules)
and on ECFP, evaluated on a balanced scaffold split (:class:`~sklearn_papers.chem.ScaffoldSplit`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import RidgeCV
from sklearn.metrics import mean_squared_error
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, ScaffoldSplit
from sklearn_papers.datasets import load_freesolv

X, y = load_freesolv(return_X_y=True)
X = np.asarray(X, dtype=object)
grover = GroverFeaturizer(descriptors=False, fingerprint_bits=0).fit(X[:1])  # embeddings
Z = grover.transform(X)
train, test = next(ScaffoldSplit(method="balanced", random_state=0).split(X))

rmse = {}
for name, featurizer in [("GROVER (frozen)",
                          GroverFeaturizer(descriptors=False, fingerprint_bits=0)),
                         ("GroverFeaturizer()", GroverFeaturizer()),
                         ("ECFP4", CircularFingerprint())]:
    model = make_pipeline(featurizer, StandardScaler(),
                          RidgeCV(alphas=np.logspace(-2, 4, 13)))
    model.fit(X[train], y[train])
    rmse[name] = np.sqrt(mean_squared_error(y[test], model.predict(X[test])))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
P = PCA(n_components=2).fit_transform(StandardScaler().fit_transform(Z))
sc = ax1.scatter(P[:, 0], P[:, 1], c=y, s=8, cmap="viridis")
fig.colorbar(sc, ax=ax1, label="hydration free energy (kcal/mol)")
ax1.set_title("PCA of GROVER embeddings (FreeSolv)")
ax2.bar(list(rmse), list(rmse.values()), color=["C2", "C0", "C1"])
ax2.set_ylabel("test RMSE (kcal/mol), ridge regression")
ax2.set_title("Balanced scaffold split, 20 % test")
fig.tight_layout()
plt.show()
