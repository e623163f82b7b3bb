"""Find the package's public estimators (used by the common tests and the docs)."""

import importlib
import inspect

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]

_FAMILIES = ["chem", "continual", "contrastive", "decomposition", "estimation", "generative",
             "metrics", "rl", "vision"]


def all_estimators():
    """Return ``[(name, class), ...]`` for every public estimator, sorted by name.

    An estimator is public when its family's ``__all__`` lists it.

    Returns
    -------
    estimators : list of (str, type)
    """
    found = {}
    for family in _FAMILIES:
        module = importlib.import_module(f"sklearn_papers.{family}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[name] = obj
    return sorted(found.items())
