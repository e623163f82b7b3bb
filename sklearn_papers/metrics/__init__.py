"""Disentanglement scores as scikit-learn style metric functions and scorers.

numpy and scikit-learn only: importing this package never imports torch or RDKit.
"""

from sklearn_papers.metrics._interventional import beta_vae_score, factor_vae_score
from sklearn_papers.metrics._sample_based import (
    dci,
    irs,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)
from sklearn_papers.metrics._scorer import make_disentanglement_scorer

__all__ = [
    "beta_vae_score",
    "dci",
    "factor_vae_score",
    "irs",
    "make_disentanglement_scorer",
    "modularity_explicitness",
    "mutual_info_gap",
    "sap_score",
]
