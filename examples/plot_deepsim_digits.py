"""
======================================================================
Perceptual (DeePSiM) autoencoder on digits: pixel loss vs DeePSiM loss
======================================================================

:class:`~sklearn_papers.generative.DeePSiMAutoencoder` compresses the 8x8 images of
:func:`sklearn.datasets.load_digits` to a 4-d code. With the pixel loss alone
(``lambda_feat=0, lambda_adv=0``) the reconstructions are blurry averages; the DeePSiM loss
of Dosovitskiy & Brox (2016) adds a feature term (distances between the features of a
fixed comparator CNN, here trained on the digit labels) and an adversarial term (a
discriminator trained alongside), which make them sharper.

The plot shows test images (top row) and the two sets of reconstructions, with the
sharpness ratio (mean absolute pixel gradient of the reconstructions over that of the real
images; 1.0 is as sharp as real) and the pixel mean squared error.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sklearn_papers.generative import DeePSiMAutoencoder

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.25,
                                                    stratify=y, random_state=0)


def sharpness(rows):
    images = rows.reshape(-1, 8, 8)
    return np.abs(np.diff(images, axis=2)).mean() + np.abs(np.diff(images, axis=1)).mean()


# the comparator's logits ("head") are compared, as in the reproduction on digits
common = dict(n_components=4, max_epochs=8, comparator_layer="head", random_state=0)
models = {
    "pixel loss only": DeePSiMAutoencoder(lambda_feat=0.0, lambda_adv=0.0, **common),
    "DeePSiM (pixel + feature + adversarial)": DeePSiMAutoencoder(**common),
}

# %%
# Fit both on the same images (the labels train the comparator of the DeePSiM model)
rows = [X_test[:10]]
titles = ["test images"]
for name, model in models.items():
    model.fit(X_train, y_train)
    recon = model.inverse_transform(model.transform(X_test))
    ratio = sharpness(recon) / sharpness(X_test)
    mse = ((recon - X_test) ** 2).mean()
    rows.append(recon[:10])
    titles.append(f"{name}: sharpness {ratio:.2f}, MSE {mse:.4f}")
    print(titles[-1])

fig, axes = plt.subplots(3, 1, figsize=(7, 3.2))
for ax, images, title in zip(axes, rows, titles):
    ax.imshow(np.concatenate([r.reshape(8, 8) for r in images], axis=1), cmap="gray",
              vmin=0, vmax=1)
    ax.set_title(title, fontsize=9)
    ax.axis("off")
fig.tight_layout()
plt.show()
