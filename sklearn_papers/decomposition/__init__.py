"""decomposition family (see DESIGN.md): NMF (Lee & Seung 2001) and BetaVAE."""

from sklearn_papers.decomposition._beta_vae import BetaVAE
from sklearn_papers.decomposition._nmf import NMF

__all__ = ["BetaVAE", "NMF"]
