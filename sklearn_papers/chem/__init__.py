"""Estimators that take molecules (SMILES strings or RDKit ``Mol`` objects) as ``X``."""

from sklearn_papers.chem._validation import check_molecules

__all__ = ["check_molecules"]
