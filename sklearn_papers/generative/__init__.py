"""Generative models with perceptual losses: DeePSiMAutoencoder, FeatureInverter (Dosovitskiy & Brox 2016)."""

from sklearn_papers.generative._deepsim_autoencoder import DeePSiMAutoencoder
from sklearn_papers.generative._feature_inverter import FeatureInverter

__all__ = ["DeePSiMAutoencoder", "FeatureInverter"]
