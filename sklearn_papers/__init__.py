"""Methods from well-known machine-learning papers as scikit-learn estimators.

Subpackages are imported lazily, so ``import sklearn_papers`` stays fast and does not
import torch or RDKit; ``sklearn_papers.chem`` (for example) is loaded on first access.
"""

import importlib

__version__ = "0.1.0"

_SUBMODULES = [
    "chem",
    "continual",
    "contrastive",
    "datasets",
    "decomposition",
    "estimation",
    "generative",
    "metrics",
    "nn",
    "reproduce",
    "rl",
    "utils",
    "vision",
]

__all__ = ["__version__", *_SUBMODULES]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"sklearn_papers.{name}")
    raise AttributeError(f"module 'sklearn_papers' has no attribute {name!r}")


def __dir__():
    return __all__
