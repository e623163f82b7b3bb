"""Shared setup of the digits experiments: ``load_digits`` (8x8 images, 10 classes), one
stratified 70/30 split and the small conv encoder of :mod:`sklearn_papers.contrastive`."""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sklearn_papers.reproduce._common import one_torch_thread  # noqa: F401 (re-export)

__all__ = []

#: Encoder settings shared by every model of the two experiments.
CONV_ENCODER = dict(encoder="conv", image_shape=(8, 8), n_components=64)


def load_split(random_state):
    """``X_train, X_test, y_train, y_test`` of ``load_digits`` (float32 pixels 0-16),
    stratified 70/30."""
    X, y = load_digits(return_X_y=True)
    X = X.astype(np.float32)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=random_state)


def subsample(X, y, train_size, random_state):
    """Stratified subset of ``train_size`` rows (a count or a fraction) of ``(X, y)``."""
    X_sub, _, y_sub, _ = train_test_split(X, y, train_size=train_size, stratify=y,
                                          random_state=random_state)
    return X_sub, y_sub
