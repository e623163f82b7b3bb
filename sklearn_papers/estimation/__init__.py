"""estimation family (see DESIGN.md): SUMO (Luo et al. 2020) log-partition / log-likelihood."""

from sklearn_papers.estimation._log_partition import LogPartitionEstimator
from sklearn_papers.estimation._sumo_vae import SUMOVAE
from sklearn_papers.estimation._objectives import elbo, iwae, iwae_cumulative, sumo, sumo_sampled
from sklearn_papers.estimation._truncation import (
    sample_truncation,
    truncation_mean,
    truncation_survival,
)

__all__ = [
    "LogPartitionEstimator",
    "SUMOVAE",
    "elbo",
    "iwae",
    "iwae_cumulative",
    "sample_truncation",
    "sumo",
    "sumo_sampled",
    "truncation_mean",
    "truncation_survival",
]
