"""How far sets of molecules lie from a GROVER checkpoint's pretraining chemistry: context
labels outside its vocabularies and ECFP4 nearest neighbours in a reference set (Rong et al.
2020 motivate pretraining on molecules like the downstream ones)."""

import numpy as np

__all__ = []


def _ecfp4(smiles):
    """ECFP4 bits (2048) of the molecules of ``smiles`` that RDKit parses."""
    from sklearn_papers.chem import CircularFingerprint, check_molecules

    smiles = np.asarray(smiles, dtype=object)
    smiles = smiles[check_molecules(smiles, errors="nan")[1]]
    return CircularFingerprint(radius=2, n_bits=2048).fit(smiles).transform(smiles)


def _domain_gap(sets, reference, checkpoints):
    """Per named set of SMILES in ``sets``: ``"n_molecules"`` and ``"heavy_atoms"`` (mean
    per molecule) of those RDKit parses, ``"atom_other/<c>"`` and ``"bond_other/<c>"``
    (:func:`~sklearn_papers.chem.grover_context_coverage` of each checkpoint ``c`` of
    ``checkpoints``) and ``"nn_tanimoto"``, each molecule's ECFP4 Tanimoto similarity to
    its nearest neighbour among the SMILES of ``reference`` (ndarray of float)."""
    from sklearn_papers.chem import grover_context_coverage
    from sklearn_papers.metrics import nearest_tanimoto_similarity

    ref = _ecfp4(reference)
    out = {}
    for name, smiles in sets.items():
        cover = {c: grover_context_coverage(smiles, c, errors="skip") for c in checkpoints}
        n, n_atoms = cover[checkpoints[0]]["n_molecules"], cover[checkpoints[0]]["n_atoms"]
        out[name] = {"n_molecules": n, "heavy_atoms": n_atoms / n,
                     "nn_tanimoto": nearest_tanimoto_similarity(_ecfp4(smiles), ref)}
        for c in checkpoints:
            out[name].update({f"{kind}_other/{c}": cover[c][f"{kind}_other"]
                              for kind in ("atom", "bond")})
    return out
