"""
=============================================================
Supervised contrastive embedding of digits, with linear probe
=============================================================

:class:`~sklearn_papers.contrastive.SupConEmbedder` trains a small convolutional encoder
on the 8x8 images of :func:`sklearn.datasets.load_digits` with the supervised contrastive
loss of Khosla et al. (2020); :class:`~sklearn_papers.contrastive.CrossEntropyEmbedder`
trains the same encoder with cross-entropy, the paper's baseline. Both are evaluated as in
the paper, with a *linear probe*: a logistic regression on the frozen embedding.

The plot shows a 2-D PCA of each test embedding, coloured by digit.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from sklearn_papers.contrastive import CrossEntropyEmbedder, SupConEmbedder

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)

common = dict(encoder="conv", image_shape=(8, 8), n_components=32, max_epochs=15,
              random_state=0)
embedders = {
    "SupCon (L_out, 2 views)": SupConEmbedder(temperature=0.1, n_views=2, **common),
    "cross-entropy": CrossEntropyEmbedder(**common),
}

# %%
# Linear probe: embedder + logistic regression in one pipeline
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
for ax, (name, embedder) in zip(axes, embedders.items()):
    probe = make_pipeline(embedder, LogisticRegression(max_iter=2000))
    probe.fit(X_train, y_train)
    accuracy = probe.score(X_test, y_test)
    points = PCA(n_components=2).fit_transform(probe[0].transform(X_test))
    ax.scatter(points[:, 0], points[:, 1], c=y_test, cmap="tab10", s=8)
    ax.set_title(f"{name}\nlinear-probe test accuracy {accuracy:.3f}")
    ax.set_xticks([])
    ax.set_yticks([])
    print(f"{name}: {accuracy:.3f}")
fig.suptitle("PCA of test-set embeddings of load_digits")
fig.tight_layout()
plt.show()
