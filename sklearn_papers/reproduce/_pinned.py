"""Training settings the molecule experiments pin (constant learning rate, no early stopping,
full batches and a remainder, one network, no SVR blend), so that new estimator defaults do
not change a protocol."""

__all__ = ["PINNED_TRAINING", "pinned"]

#: The behaviour the protocols were written with; left out of the cache keys of ``--resume``
#: (parts computed before the parameters existed were trained the same way).
PINNED_TRAINING = dict(lr_schedule="constant", early_stopping=False, even_batches=False,
                       ensemble_size=1, blend=None)


def pinned(cls, params):
    """``params`` plus the :data:`PINNED_TRAINING` settings that estimator class ``cls``
    accepts (``params`` wins where both set one)."""
    names = set(cls._get_param_names())
    return {**{k: v for k, v in PINNED_TRAINING.items() if k in names}, **params}
