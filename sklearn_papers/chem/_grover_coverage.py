"""How much of a set of molecules a GROVER checkpoint's context vocabularies cover."""

import os

import numpy as np

from sklearn_papers.chem._validation import check_molecules
from sklearn_papers.utils._sklearn_compat import StrOptions, validate_params

__all__ = ["grover_context_coverage"]


@validate_params(
    {"X": ["array-like"], "pretrained": [str, os.PathLike],
     "errors": [StrOptions({"raise", "skip"})]},
    prefer_skip_nested_validation=True,
)
def grover_context_coverage(X, pretrained="moses-small", *, errors="raise"):
    """Shares of the molecules' atom and bond context labels outside a checkpoint's vocabularies.

    GROVER pretrains by predicting each atom's and bond's context label (Rong et al. 2020,
    Section 4.1: the counts of the neighbouring atoms and bonds, by type, within one hop).
    A label the pretraining molecules did not hold falls into the ``<other>`` class of the
    checkpoint's vocabulary. A large share of ``<other>`` labels on your data says that
    your chemistry lies outside what the checkpoint was pretrained on, so fine-tuning it
    may help less than on molecules like its pretraining set.

    Parameters
    ----------
    X : array-like of shape (n_samples,)
        SMILES strings or RDKit ``Mol`` objects. Each is standardized as
        :class:`GroverFeaturizer` does (implicit hydrogens, canonical atom order).
    pretrained : str or os.PathLike, default="moses-small"
        A shipped checkpoint name (``"moses-small"`` or ``"moses-176k"``) or a folder
        written by :meth:`GroverFeaturizer.save`.
    errors : {"raise", "skip"}, default="raise"
        What to do with an invalid SMILES: raise ``ValueError``, or leave the molecule
        out (``n_molecules`` counts those kept).

    Returns
    -------
    coverage : dict
        ``"atom_other"``, ``"bond_other"``: float in [0, 1], the share of the atoms'
        (bonds') context labels outside the vocabulary (NaN without any atom / bond);
        ``"n_molecules"``, ``"n_atoms"``, ``"n_bonds"``: int, the molecules kept and
        their heavy atoms and bonds in all.

    Raises
    ------
    ValueError
        If ``X`` is empty or not one column of molecules, holds an invalid SMILES (with
        ``errors="raise"``), or ``pretrained`` is not a readable checkpoint (see
        :func:`load_grover_checkpoint`).

    References
    ----------
    .. [1] Rong, Y., Bian, Y., Xu, T., et al. (2020). Self-supervised graph transformer on
       large-scale molecular data. NeurIPS 33.

    Examples
    --------
    >>> from sklearn_papers.chem import grover_context_coverage
    >>> coverage = grover_context_coverage(["CCO", "c1ccccc1C(=O)O", "FC(F)(F)[Si](C)(C)C"])
    >>> coverage["n_molecules"], coverage["n_atoms"]
    (3, 20)
    >>> coverage["atom_other"] > 0  # silicon is not in MOSES
    True
    """
    from sklearn_papers.chem._grover_checkpoint import load_grover_checkpoint
    from sklearn_papers.chem.featurizers._grover_features import ContextVocab

    atoms, bonds, sizes = _context_labels(X, errors=errors)
    config, _ = load_grover_checkpoint(pretrained, heads=False)
    out = {}
    for kind, labels in (("atom", atoms), ("bond", bonds)):
        vocab = ContextVocab.from_itos(config[f"{kind}_vocab"])
        other = vocab.encode(labels) == vocab.other_index
        out[f"{kind}_other"] = float(other.mean()) if len(labels) else float("nan")
    return {**out, "n_molecules": len(sizes), "n_atoms": int(np.sum(sizes)),
            "n_bonds": len(bonds)}


def _context_labels(X, *, errors="raise"):
    """``(atom_labels, bond_labels, n_atoms)``: the GROVER context labels of every atom and
    bond of the molecules of ``X`` (standardized first, as GroverFeaturizer does) and the
    heavy atoms per molecule; ``errors="skip"`` leaves invalid SMILES out."""
    from sklearn_papers.chem.featurizers import standardize_mol
    from sklearn_papers.chem.featurizers._grover_features import (
        atom_context_label,
        bond_context_label,
    )

    mols, _ = check_molecules(X, errors="nan" if errors == "skip" else "raise",
                              nan_hint=False)
    smiles = np.asarray(X, dtype=object).reshape(len(mols), -1)[:, 0]  # a column too
    atoms, bonds, sizes = [], [], []
    for mol, smi in zip(mols, smiles):
        if mol is None:
            continue
        mol = standardize_mol(mol, smi if isinstance(smi, str) else None)
        atoms += [atom_context_label(a) for a in mol.GetAtoms()]
        bonds += [bond_context_label(b) for b in mol.GetBonds()]
        sizes.append(mol.GetNumAtoms())
    return atoms, bonds, np.asarray(sizes)
