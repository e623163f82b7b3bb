"""Continual learning: ProgressiveNetworkClassifier (Rusu et al. 2016), GenerativeReplayClassifier (Farquhar & Gal 2018)."""

__all__ = []
