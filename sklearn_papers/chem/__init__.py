"""Estimators that take molecules (SMILES strings or RDKit ``Mol`` objects) as ``X``."""

from sklearn_papers.chem._ecfp import CircularFingerprint
from sklearn_papers.chem._grover import (
    GroverClassifier,
    GroverFeaturizer,
    GroverRegressor,
    load_grover_checkpoint,
)
from sklearn_papers.chem._mpnn import MPNN, MPNNClassifier, MPNNRegressor
from sklearn_papers.chem._neural_fingerprint import (
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
)
from sklearn_papers.chem._scaffold import ScaffoldKFold, ScaffoldSplit, murcko_scaffolds
from sklearn_papers.chem._validation import check_molecules

__all__ = [
    "CircularFingerprint",
    "GroverClassifier",
    "GroverFeaturizer",
    "GroverRegressor",
    "MPNN",
    "MPNNClassifier",
    "MPNNRegressor",
    "NeuralFingerprint",
    "NeuralFingerprintClassifier",
    "NeuralFingerprintRegressor",
    "ScaffoldKFold",
    "ScaffoldSplit",
    "check_molecules",
    "load_grover_checkpoint",
    "murcko_scaffolds",
]
