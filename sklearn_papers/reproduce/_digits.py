"""Shared setup of the digits experiments ``supcon`` and ``group_norm``.

Both use ``sklearn.datasets.load_digits`` (8x8 images, 10 classes) with one fixed
stratified 70/30 train/test split and the same small conv encoder of
:mod:`sklearn_papers.contrastive`.
"""


import numpy as np

from sklearn_papers.reproduce._common import one_torch_thread  # noqa: F401 (re-export)

__all__ = []

#: Encoder settings shared by every model of the two experiments.
CONV_ENCODER = dict(encoder="conv", image_shape=(8, 8), n_components=64)


def load_split(random_state):
    """``X_train, X_test, y_train, y_test`` of ``load_digits`` (float32 pixels 0-16),
    stratified 70/30."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X.astype(np.float32)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=random_state)


def subsample(X, y, train_size, random_state):
    """Stratified subset of ``train_size`` rows (a count or a fraction) of ``(X, y)``."""
    from sklearn.model_selection import train_test_split

    X_sub, _, y_sub, _ = train_test_split(X, y, train_size=train_size, stratify=y,
                                          random_state=random_state)
    return X_sub, y_sub


def verdict(a, b, claim="A beats B", metric="", *, margin=0.0):
    """The claim "A beats B" (higher is better) on per-seed numbers paired by seed, judged
    by the shared ``paired interval`` rule (:mod:`._claims`). For a lower-is-better metric
    pass the negated values.

    Returns
    -------
    verdict : Verdict
        For :meth:`~._result.Result.verdict`.
    """
    from sklearn_papers.reproduce._claims import Claim, judge

    return judge(Claim(claim, metric, "paired interval", margin=margin), a, b)
