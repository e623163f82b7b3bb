"""Generative models with perceptual losses: DeePSiMAutoencoder, FeatureInverter (Dosovitskiy & Brox 2016)."""

__all__ = []
