"""Torch losses and layers of the package, for your own training loops.

Every name below is a plain ``torch.nn.Module`` or function on tensors, usable without
scikit-learn, e.g. ``from sklearn_papers.nn import SupConLoss``. The estimators of the
families use the same objects. Everything else in ``sklearn_papers.nn`` (skorch glue,
datasets, collate functions, whole models) is private.

The names are loaded on first access (PEP 562), so importing a private module of this
package (``sklearn_papers.nn._skorch``) does not import every loss and layer.

To export another loss or layer: add ``"Name": "_module"`` to ``_EXPORTS`` below.
"""

import importlib

# public name -> private module of sklearn_papers.nn that defines it
_EXPORTS = {
    "BetaVAELoss": "_beta_vae",
    "ComparatorCNN": "_deepsim",
    "ConvEncoder": "_encoders",
    "DeePSiMDiscriminator": "_deepsim",
    "DeePSiMGenerator": "_deepsim",
    "DeePSiMLoss": "_deepsim",
    "DiscriminativeLoss": "_discriminative",
    "FrozenComparator": "_deepsim",
    "ImageAugment": "_supcon",
    "JointSegmenterModule": "_segmenter",
    "MLPEncoder": "_encoders",
    "RoIAlign": "_detection",
    "RoIPool": "_detection",
    "SupConLoss": "_supcon",
    "TabularAugment": "_supcon",
    "batched_nms": "_detection",
    "nms": "_detection",
    "roi_align": "_detection",
    "roi_pool": "_detection",
    "supcon_loss": "_supcon",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"sklearn_papers.nn.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sklearn_papers.nn' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
