"""Continual learning: ProgressiveNetworkClassifier (Rusu et al. 2016) and
GenerativeReplayClassifier (Farquhar & Gal 2018).

Both follow one task contract: ``partial_fit(X, y, *, task=None)`` learns one task at a time,
``fit(X, y, *, task=ids)`` learns the tasks of ``X`` in order of first appearance, and
``task`` is routable through scikit-learn's metadata routing (``set_fit_request(task=True)``).
"""

from sklearn_papers.continual._generative_replay_classifier import GenerativeReplayClassifier
from sklearn_papers.continual._progressive_network_classifier import (
    ProgressiveNetworkClassifier,
)

__all__ = ["GenerativeReplayClassifier", "ProgressiveNetworkClassifier"]
