"""GROVER's inputs and self-supervised labels (Rong et al., 2020), as numpy.

* :func:`grover_atom_features` (151 values per atom) and :func:`grover_bond_features` (14
  values per bond), built from the package's feature blocks (:class:`OneHot`, :class:`Flag`)
  plus two block kinds GROVER needs: a real-valued :class:`Scalar` (atomic mass / 100) and a
  :class:`SmartsFlag` (the atom matches a molecule-level SMARTS pattern: H-bond donor,
  acceptor, acidic, basic).
* Contextual property labels (paper, Section 4.1, "contextual property prediction"): an
  atom's label is its element followed by its sorted one-hop neighbour keys
  ``"<element>-<bond type>"`` with counts, e.g. ``"C_C-SINGLE1_O-DOUBLE1_O-SINGLE1"`` for
  the carboxyl carbon of aspirin; a bond's label is its ``(type-stereo-direction)`` followed
  by the keys of the bonds around it. :class:`ContextVocab` maps labels to integers with
  ``<pad>`` (0) and ``<other>`` (1).
* Graph-level motifs (paper, Section 4.1, "graph-level motif prediction"): presence of the
  85 RDKit ``fr_*`` functional-group descriptors listed in :data:`GROVER_MOTIFS` (GROVER's
  list; it is every ``fr_*`` descriptor of RDKit, in RDKit's order).

Nothing here imports torch.
"""

from collections import Counter
from operator import methodcaller

import numpy as np

from sklearn_papers.chem.featurizers._features import AtomFeatures, BondFeatures, Flag, OneHot

__all__ = [
    "GROVER_MOTIFS",
    "ContextVocab",
    "RingSizeFlags",
    "Scalar",
    "SmartsFlag",
    "atom_context_label",
    "bond_context_label",
    "grover_atom_features",
    "grover_bond_features",
    "grover_graph",
    "grover_graphs",
    "motif_labels",
]

#: The 85 RDKit functional-group counts GROVER turns into 0/1 motif labels (the ``fr_*``
#: descriptors of ``rdkit.Chem.Fragments``; GROVER's ``task_labels.RDKIT_PROPS``).
GROVER_MOTIFS = (
    "fr_Al_COO", "fr_Al_OH", "fr_Al_OH_noTert", "fr_ArN", "fr_Ar_COO", "fr_Ar_N",
    "fr_Ar_NH", "fr_Ar_OH", "fr_COO", "fr_COO2", "fr_C_O", "fr_C_O_noCOO", "fr_C_S",
    "fr_HOCCN", "fr_Imine", "fr_NH0", "fr_NH1", "fr_NH2", "fr_N_O", "fr_Ndealkylation1",
    "fr_Ndealkylation2", "fr_Nhpyrrole", "fr_SH", "fr_aldehyde", "fr_alkyl_carbamate",
    "fr_alkyl_halide", "fr_allylic_oxid", "fr_amide", "fr_amidine", "fr_aniline",
    "fr_aryl_methyl", "fr_azide", "fr_azo", "fr_barbitur", "fr_benzene",
    "fr_benzodiazepine", "fr_bicyclic", "fr_diazo", "fr_dihydropyridine", "fr_epoxide",
    "fr_ester", "fr_ether", "fr_furan", "fr_guanido", "fr_halogen", "fr_hdrzine",
    "fr_hdrzone", "fr_imidazole", "fr_imide", "fr_isocyan", "fr_isothiocyan", "fr_ketone",
    "fr_ketone_Topliss", "fr_lactam", "fr_lactone", "fr_methoxy", "fr_morpholine",
    "fr_nitrile", "fr_nitro", "fr_nitro_arom", "fr_nitro_arom_nonortho", "fr_nitroso",
    "fr_oxazole", "fr_oxime", "fr_para_hydroxylation", "fr_phenol",
    "fr_phenol_noOrthoHbond", "fr_phos_acid", "fr_phos_ester", "fr_piperdine",
    "fr_piperzine", "fr_priamide", "fr_prisulfonamd", "fr_pyridine", "fr_quatN",
    "fr_sulfide", "fr_sulfonamd", "fr_sulfone", "fr_term_acetylene", "fr_tetrazole",
    "fr_thiazole", "fr_thiocyan", "fr_thiophene", "fr_unbrch_alkane", "fr_urea",
)

#: SMARTS of GROVER's four pharmacophore flags (its ``molgraph.py``; the usual RDKit
#: definitions of H-bond donors/acceptors and acidic/basic groups).
HBOND_DONOR_SMARTS = "[$([N;!H0;v3,v4&+1]),$([O,S;H1;+0]),n&H1&+0]"
HBOND_ACCEPTOR_SMARTS = (
    "[$([O,S;H1;v2;!$(*-*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),$([N;v3;!$(N-*=[O,N,P,S])]),"
    "n&H0&+0,$([o,s;+0;!$([o,s]:n);!$([o,s]:c:n)])]"
)
ACIDIC_SMARTS = "[$([C,S](=[O,S,P])-[O;H1,-1])]"
BASIC_SMARTS = (
    "[#7;+,$([N;H2&+0][$([C,a]);!$([C,a](=O))]),$([N;H1&+0]([$([C,a]);!$([C,a](=O))])"
    "[$([C,a]);!$([C,a](=O))]),$([N;H0&+0]([C;!$(C(=O))])([C;!$(C(=O))])[C;!$(C(=O))])]"
)


class Scalar:
    """A single real-valued feature.

    Parameters
    ----------
    name : str
        The feature name.
    getter : callable
        ``getter(atom_or_bond) -> float``. Must be picklable (module-level function).
    """

    n_features = 1

    def __init__(self, name, getter):
        self.name = name
        self.getter = getter

    @property
    def feature_names(self):
        return [self.name]


def _match_params():
    """Substructure-search settings of :meth:`SmartsFlag.molecule_rows`: RDKit's defaults
    (at most 1000 matches) without the de-duplication of matches, which sorts and compares
    every match. The four GROVER patterns match single atoms, so no two matches hold the
    same atoms and the matches are exactly those of the default search."""
    global _MATCH_PARAMS
    if _MATCH_PARAMS is None:
        from rdkit import Chem

        params = Chem.SubstructMatchParameters()
        params.uniquify = False
        params.maxMatches = 1000
        _MATCH_PARAMS = params
    return _MATCH_PARAMS


_MATCH_PARAMS = None


class SmartsFlag:
    """0/1 feature: the atom belongs to a match of a SMARTS pattern in its molecule.

    The matches are computed once per molecule (all atoms of one call must come from the
    same molecule, as :func:`~sklearn_papers.chem.featurizers.mol_to_graph` guarantees).

    Parameters
    ----------
    name : str
        The feature name.
    smarts : str
        The SMARTS pattern; every atom of every match is flagged.
    """

    n_features = 1

    def __init__(self, name, smarts):
        self.name = name
        self.smarts = smarts
        self._pattern = None

    @property
    def feature_names(self):
        return [self.name]

    def matched_atoms(self, mol):
        """Set of atom indices of ``mol`` that lie in a match."""
        from rdkit import Chem

        if self._pattern is None:
            self._pattern = Chem.MolFromSmarts(self.smarts)
        return {i for match in mol.GetSubstructMatches(self._pattern) for i in match}

    def molecule_rows(self, mol):
        """ndarray of shape (n_atoms, 1), float32: the flag of every atom of ``mol``."""
        from rdkit import Chem

        if self._pattern is None:
            self._pattern = Chem.MolFromSmarts(self.smarts)
        rows = np.zeros((mol.GetNumAtoms(), 1), dtype=np.float32)
        matched = [i for match in mol.GetSubstructMatches(self._pattern, _match_params())
                   for i in match]
        rows[matched, 0] = 1.0
        return rows

    def __getstate__(self):
        return {"name": self.name, "smarts": self.smarts, "_pattern": None}


class RingSizeFlags:
    """0/1 features: the atom lies in a ring of each given size (one column per size).

    Read once per molecule from RDKit's ring information (the rings ``Atom.IsInRingSize``
    looks at), rather than one RDKit call per atom and size.

    Parameters
    ----------
    sizes : sequence of int
        Ring sizes, one column each, named ``"ring_size_<k>"``.
    """

    def __init__(self, sizes):
        self.sizes = tuple(int(k) for k in sizes)

    @property
    def n_features(self):
        return len(self.sizes)

    @property
    def feature_names(self):
        return [f"ring_size_{k}" for k in self.sizes]

    def molecule_rows(self, mol):
        """ndarray of shape (n_atoms, len(sizes)), float32: the flags of every atom."""
        column = {k: j for j, k in enumerate(self.sizes)}
        per_atom = np.zeros((mol.GetNumAtoms(), len(self.sizes)), dtype=np.float32)
        for ring in mol.GetRingInfo().AtomRings():
            j = column.get(len(ring))
            if j is not None:
                per_atom[list(ring), j] = 1.0
        return per_atom

    def flags(self, mol, items):
        """ndarray of shape (len(items), len(sizes)), float32."""
        return self.molecule_rows(mol)[[it.GetIdx() for it in items]]


class GroverAtomFeatures(AtomFeatures):
    """An :class:`AtomFeatures` set that also accepts :class:`Scalar` and
    :class:`SmartsFlag` blocks.

    Parameters
    ----------
    blocks : list of OneHot, Flag, Scalar, SmartsFlag or RingSizeFlags
        Each block reads an RDKit ``Atom``.
    """


# Getters: module-level, picklable callables (joblib workers pickle the feature sets);
# ``methodcaller`` calls the RDKit method without a Python frame per atom.
_atomic_num = methodcaller("GetAtomicNum")
_total_degree = methodcaller("GetTotalDegree")
_formal_charge = methodcaller("GetFormalCharge")
_chiral_tag = methodcaller("GetChiralTag")  # an int enum: looked up as its int value
_total_hs = methodcaller("GetTotalNumHs")
_aromatic = methodcaller("GetIsAromatic")
_conjugated = methodcaller("GetIsConjugated")
_in_ring = methodcaller("IsInRing")
_stereo = methodcaller("GetStereo")  # an int enum, as _chiral_tag


def _hybridization(atom):
    return str(atom.GetHybridization())


def _mass(atom):
    return atom.GetMass() * 0.01


def _implicit_valence_getter():
    from rdkit import Chem

    return methodcaller("GetValence", Chem.ValenceType.IMPLICIT)


def _false(item):
    return False


def _bond_type(bond):
    return str(bond.GetBondType())


def grover_atom_features():
    """GROVER's 151 atom features (Rong et al. 2020, code release ``molgraph.py``).

    In order: atomic number 1-100 plus unknown (101); total degree (hydrogens included)
    0-5 plus unknown (7); formal charge -2..2 plus unknown (6); chiral tag 0-3 plus unknown
    (5); total hydrogens 0-4 plus unknown (6); hybridisation SP, SP2, SP3, SP3D, SP3D2 plus
    unknown (6); aromatic (1); atomic mass / 100 (1, real-valued); implicit valence 0-6
    plus unknown (8); H-bond acceptor, H-bond donor, acidic, basic (4, SMARTS matches);
    member of a ring of size 3, 4, 5, 6, 7, 8 (6).

    The formal-charge block is a plain one-hot code. The authors' helper indexes a
    negative-valued choice list by the raw value, which sends charge -1 to the "unknown"
    slot and charge -2 to the slot of charge 0; we do not reproduce that accident (the
    width, 6, is the same).

    Returns
    -------
    features : GroverAtomFeatures
        ``features.n_features == 151``.
    """
    return GroverAtomFeatures([
        OneHot("atomic_num", _atomic_num, range(1, 101), unknown="extra"),
        OneHot("total_degree", _total_degree, range(6), unknown="extra"),
        OneHot("formal_charge", _formal_charge, (-2, -1, 0, 1, 2), unknown="extra"),
        OneHot("chiral_tag", _chiral_tag, range(4), unknown="extra"),
        OneHot("total_hs", _total_hs, range(5), unknown="extra"),
        OneHot("hybridization", _hybridization, ("SP", "SP2", "SP3", "SP3D", "SP3D2"),
               unknown="extra"),
        Flag("aromatic", _aromatic),
        Scalar("mass/100", _mass),
        OneHot("implicit_valence", _implicit_valence_getter(), range(7), unknown="extra"),
        SmartsFlag("hbond_acceptor", HBOND_ACCEPTOR_SMARTS),
        SmartsFlag("hbond_donor", HBOND_DONOR_SMARTS),
        SmartsFlag("acidic", ACIDIC_SMARTS),
        SmartsFlag("basic", BASIC_SMARTS),
        RingSizeFlags(range(3, 9)),
    ])


def grover_bond_features():
    """GROVER's 14 bond features (Rong et al. 2020, code release ``molgraph.py``).

    In order: "no bond" flag (always 0 for a real bond; GROVER's padding slot) (1); single,
    double, triple, aromatic (4); conjugated (1); in ring (1); stereo code 0-5 plus unknown
    (7). GROVER's directed-bond input is the source atom's 151 features followed by these
    14 (165 values); the graph model builds it from the
    :class:`~sklearn_papers.chem.featurizers.MolGraph` edge index.

    Returns
    -------
    features : BondFeatures
        ``features.n_features == 14``.
    """
    return BondFeatures([
        Flag("no_bond", _false),
        OneHot("bond_type", _bond_type, ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC"),
               unknown="ignore"),
        Flag("conjugated", _conjugated),
        Flag("in_ring", _in_ring),
        OneHot("stereo", _stereo, range(6), unknown="extra"),
    ])


def atom_context_label(atom):
    """Contextual property label of an atom: element plus its one-hop neighbourhood.

    ``"<symbol>"`` followed, for each distinct ``"<neighbour symbol>-<bond type>"`` key in
    sorted order, by ``"_<key><count>"`` (Rong et al. 2020, Section 4.1 and Figure 3).

    Parameters
    ----------
    atom : rdkit.Chem.Atom

    Returns
    -------
    label : str
        E.g. ``"C_C-SINGLE1_O-DOUBLE1_O-SINGLE1"``; ``"C"`` for methane's carbon.
    """
    keys = Counter(
        f"{bond.GetOtherAtom(atom).GetSymbol()}-{bond.GetBondType()}"
        for bond in atom.GetBonds()
    )
    return atom.GetSymbol() + "".join(f"_{k}{keys[k]}" for k in sorted(keys))


def _bond_name(bond):
    return f"({bond.GetBondType()}-{bond.GetStereo()}-{bond.GetBondDir()})"


def bond_context_label(bond):
    """Contextual property label of a bond: its own type plus the bonds around it.

    ``"(<type>-<stereo>-<direction>)"`` followed, for each distinct key
    ``"<end atom symbol>-(<type>-<stereo>-<direction>)"`` of the other bonds at either end
    (sorted), by ``"_<key><count>"`` (Rong et al. 2020, Section 4.1; GROVER's
    ``bond_to_vocab``).

    Parameters
    ----------
    bond : rdkit.Chem.Bond

    Returns
    -------
    label : str
        E.g. ``"(DOUBLE-STEREONONE-NONE)_C-(SINGLE-STEREONONE-NONE)2"`` for the C=O of
        acetic acid.
    """
    ends = (bond.GetBeginAtom(), bond.GetEndAtom())
    own = {a.GetIdx() for a in ends}
    keys = Counter(
        f"{end.GetSymbol()}-{_bond_name(other)}"
        for end in ends
        for other in end.GetBonds()
        if other.GetOtherAtomIdx(end.GetIdx()) not in own
    )
    return _bond_name(bond) + "".join(f"_{k}{keys[k]}" for k in sorted(keys))


def motif_labels(mol):
    """Presence (1) or absence (0) of GROVER's 85 functional-group motifs.

    Parameters
    ----------
    mol : rdkit.Chem.Mol

    Returns
    -------
    labels : ndarray of shape (85,), dtype=float32
        Column ``j`` is 1 when RDKit's ``GROVER_MOTIFS[j]`` count is positive.
    """
    from rdkit.Chem import Fragments

    return np.fromiter((getattr(Fragments, name)(mol) > 0 for name in GROVER_MOTIFS),
                       dtype=np.float32, count=len(GROVER_MOTIFS))


def grover_graph(mol, atom_features=None, bond_features=None):
    """Featurize one molecule for GROVER: graph plus its self-supervised labels.

    The molecule is standardised first (implicit hydrogens, canonical atom order, see
    :func:`~sklearn_papers.chem.featurizers.standardize_mol`) and the labels are computed
    on that same form, so they line up with the graph's atoms and bonds.

    Parameters
    ----------
    mol : rdkit.Chem.Mol
    atom_features, bond_features : feature sets, default=None
        :func:`grover_atom_features` and :func:`grover_bond_features` when None.

    Returns
    -------
    graph : MolGraph
        151 atom features; 14 bond features per directed edge (edges ``2k``, ``2k + 1``
        are bond ``k``).
    atom_labels : list of str
        :func:`atom_context_label` of each atom.
    bond_labels : list of str
        :func:`bond_context_label` of each bond ``k``.
    motifs : ndarray of shape (85,), dtype=float32
        :func:`motif_labels`.
    """
    return grover_graphs([mol], atom_features, bond_features)[0]


def grover_graphs(mols, atom_features=None, bond_features=None, *, smiles=None):
    """:func:`grover_graph` of several molecules, their graphs featurized together.

    Parameters
    ----------
    mols : list of rdkit.Chem.Mol
    atom_features, bond_features : feature sets, default=None
        As in :func:`grover_graph`.
    smiles : list of (str or None), default=None
        The SMILES each molecule was read from, if any (saves work; see
        :func:`~sklearn_papers.chem.featurizers.standardize_mol`).

    Returns
    -------
    results : list of tuple
        ``(graph, atom_labels, bond_labels, motifs)`` per molecule, as :func:`grover_graph`.
    """
    from sklearn_papers.chem.featurizers._graph import mols_to_graphs, standardize_mol

    atom_features = grover_atom_features() if atom_features is None else atom_features
    bond_features = grover_bond_features() if bond_features is None else bond_features
    smiles = [None] * len(mols) if smiles is None else smiles
    mols = [standardize_mol(m, s) for m, s in zip(mols, smiles)]
    graphs = mols_to_graphs(mols, atom_features, bond_features, standardize=False)
    return [(graph, [atom_context_label(a) for a in mol.GetAtoms()],
             [bond_context_label(b) for b in mol.GetBonds()], motif_labels(mol))
            for graph, mol in zip(graphs, mols)]


class ContextVocab:
    """Vocabulary of contextual property labels, with ``<pad>`` (0) and ``<other>`` (1).

    Labels seen at least ``min_freq`` times get their own index, most frequent first (ties
    broken alphabetically, as GROVER's ``TorchVocab``); every other label maps to
    ``<other>``.

    Parameters
    ----------
    counts : mapping of str to int
        Label frequencies.
    min_freq : int, default=1
        Least frequency for a label to get its own index.
    max_size : int or None, default=None
        Most labels kept besides the two specials.

    Attributes
    ----------
    itos : list of str
        Index to label; ``itos[0] == "<pad>"``, ``itos[1] == "<other>"``.
    stoi : dict of str to int
        Label to index.
    """

    PAD, OTHER = "<pad>", "<other>"
    pad_index, other_index = 0, 1

    def __init__(self, counts, *, min_freq=1, max_size=None):
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        kept = [w for w, c in ordered if c >= max(int(min_freq), 1)
                and w not in (self.PAD, self.OTHER)]
        if max_size is not None:
            kept = kept[: int(max_size)]
        self.itos = [self.PAD, self.OTHER] + kept
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def from_itos(cls, itos):
        """Rebuild a vocabulary from its ``itos`` list (as saved in JSON)."""
        itos = list(itos)
        if itos[:2] != [cls.PAD, cls.OTHER]:
            raise ValueError(f"A vocabulary must start with {cls.PAD!r}, {cls.OTHER!r}; got "
                             f"{itos[:2]!r}.")
        vocab = cls({})
        vocab.itos = itos
        vocab.stoi = {w: i for i, w in enumerate(itos)}
        return vocab

    def __len__(self):
        return len(self.itos)

    def encode(self, labels):
        """Indices of labels, ``<other>`` (1) for unknown ones.

        Returns
        -------
        codes : ndarray of shape (len(labels),), dtype=int64
        """
        return np.fromiter((self.stoi.get(w, self.other_index) for w in labels),
                           dtype=np.int64, count=len(labels))

    def __repr__(self):
        return f"ContextVocab(n_labels={len(self)})"
