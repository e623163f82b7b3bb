"""Estimators that take molecules (SMILES strings or RDKit ``Mol`` objects) as ``X``."""

from sklearn_papers.chem._descriptors import RDKitDescriptors
from sklearn_papers.chem._ecfp import CircularFingerprint
from sklearn_papers.chem._graph_cache import GraphCache
from sklearn_papers.chem._grover import GroverFeaturizer
from sklearn_papers.chem._grover_finetune import GroverClassifier, GroverRegressor
from sklearn_papers.chem._grover_checkpoint import load_grover_checkpoint
from sklearn_papers.chem._grover_coverage import grover_context_coverage
from sklearn_papers.chem._mpnn import MPNN, MPNNClassifier, MPNNRegressor
from sklearn_papers.chem._neural_fingerprint import (
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
)
from sklearn_papers.chem._report import MultipleFragmentsWarning
from sklearn_papers.chem._standardize import MoleculeStandardizer
from sklearn_papers.chem._skip_invalid import SkipInvalidMolecules, valid_rows_scorer
from sklearn_papers.chem._scaffold import ScaffoldKFold, ScaffoldSplit, murcko_scaffolds
from sklearn_papers.chem._targets import ExtrapolationWarning
from sklearn_papers.chem._validation import check_molecules

__all__ = [
    "CircularFingerprint",
    "ExtrapolationWarning",
    "GraphCache",
    "GroverClassifier",
    "GroverFeaturizer",
    "GroverRegressor",
    "MPNN",
    "MPNNClassifier",
    "MPNNRegressor",
    "MoleculeStandardizer",
    "MultipleFragmentsWarning",
    "NeuralFingerprint",
    "NeuralFingerprintClassifier",
    "NeuralFingerprintRegressor",
    "RDKitDescriptors",
    "ScaffoldKFold",
    "ScaffoldSplit",
    "SkipInvalidMolecules",
    "check_molecules",
    "grover_context_coverage",
    "load_grover_checkpoint",
    "murcko_scaffolds",
    "valid_rows_scorer",
]
