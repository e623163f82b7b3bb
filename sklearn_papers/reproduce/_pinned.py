"""Training settings the molecule experiments pin, so that new estimator defaults do not
silently change a protocol.

The graph estimators of :mod:`sklearn_papers.chem` gained a learning-rate schedule, early
stopping and (the neural fingerprint) batches of near-equal size after the ``duvenaud``,
``gilmer`` and ``grover`` protocols were written (with a constant learning rate, no early
stopping and a ``DataLoader``'s full batches and remainder). The experiments pass those settings
explicitly, only to estimators that have them.
"""

__all__ = ["PINNED_TRAINING", "pinned"]

#: The behaviour the protocols were written with. Left out of the cache keys of
#: ``--resume``: parts computed before the parameters existed were trained the same way.
PINNED_TRAINING = dict(lr_schedule="constant", early_stopping=False, even_batches=False)


def pinned(cls, params):
    """``params`` plus the :data:`PINNED_TRAINING` settings that estimator class ``cls``
    accepts (``params`` wins where both set one)."""
    names = set(cls._get_param_names())
    return {**{k: v for k, v in PINNED_TRAINING.items() if k in names}, **params}
