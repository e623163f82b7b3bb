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
from itertools import repeat
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
    "grover_mols_to_graphs",
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


_hybridization_enum = methodcaller("GetHybridization")
_bond_double = methodcaller("GetBondTypeAsDouble")


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
    from sklearn_papers.chem.featurizers._graph import (
        _standardize,
        _graphs_in_chunks,
        mols_to_graphs,
    )

    smiles = [None] * len(mols) if smiles is None else smiles
    standard = [_standardize(m, s) for m, s in zip(mols, smiles)]
    mols = [m for m, _ in standard]
    if atom_features is None and bond_features is None:
        graphs = _graphs_in_chunks(mols, [s for _, s in standard], _grover_chunk,
                                  standardize=False)
    else:
        atom_features = grover_atom_features() if atom_features is None else atom_features
        bond_features = grover_bond_features() if bond_features is None else bond_features
        graphs = mols_to_graphs(mols, atom_features, bond_features, standardize=False)
    return [(graph, [atom_context_label(a) for a in mol.GetAtoms()],
             [bond_context_label(b) for b in mol.GetBonds()], motif_labels(mol))
            for graph, mol in zip(graphs, mols)]


# -- fast path of the default feature sets ----------------------------------------------------


def grover_mols_to_graphs(mols, smiles=None):
    """``mols_to_graphs(mols, grover_atom_features(), grover_bond_features(),
    smiles=smiles)``, computed with fewer RDKit calls: the same arrays, bit for bit.

    The generic path calls one RDKit getter per atom (bond) and feature block; here

    * total degree is read as heavy-atom degree (from the edge index) plus total
      hydrogens (RDKit's own definition of ``Atom.GetTotalDegree``);
    * atomic mass is a per-element table (``PeriodicTable.GetAtomicWeight``, what
      ``Atom.GetMass`` returns for an atom without an isotope) unless the SMILES the
      molecule was read from names an isotope (``[13C]``);
    * chiral tags and bond stereo are read only for molecules whose SMILES has ``@``
      (``/``, ``\\``): without them the parser sets none, so every tag is 0;
    * bond types come from ``Bond.GetBondTypeAsDouble`` (1, 2, 3, 1.5) unless the SMILES
      has a dative bond (``->``), which shares the value of a single bond;
    * enumerations are looked up as integers (no string conversion per atom), the
      SMARTS flags and ring sizes are written once per chunk of molecules;
    * a SMARTS flag's substructure search is skipped for a molecule that has none of
      the elements every match of its pattern contains (N, O or S for the H-bond donor
      and acceptor, O for acidic, N for basic): it could match nothing there.

    Molecules not read from a known SMILES (RDKit corner cases of
    :func:`~sklearn_papers.chem.featurizers.standardize_mol`) take the per-atom calls for
    all of these.

    Parameters
    ----------
    mols : list of rdkit.Chem.Mol or None
        As returned by :func:`sklearn_papers.chem.check_molecules`.
    smiles : list of (str or None), default=None
        The SMILES each molecule was read from by ``Chem.MolFromSmiles`` (None for a
        molecule given as a ``Mol``).

    Returns
    -------
    graphs : list of MolGraph or None
        None where ``mols`` has None.
    """
    from sklearn_papers.chem.featurizers._graph import _graphs_in_chunks

    return _graphs_in_chunks(mols, smiles, _grover_chunk)


class _Tables:
    """Lookups of the fast path, built once per process from the default feature sets
    (so the column layout cannot drift from :func:`grover_atom_features`)."""

    def __init__(self):
        from rdkit import Chem

        atoms, bonds = grover_atom_features(), grover_bond_features()
        self.n_atom, self.n_bond = atoms.n_features, bonds.n_features
        offsets, off = {}, 0
        for block in atoms.blocks:
            offsets[getattr(block, "name", type(block).__name__)] = (off, block)
            off += block.n_features
        self.atom = offsets
        offsets, off = {}, 0
        for block in bonds.blocks:
            offsets[block.name] = (off, block)
            off += block.n_features
        self.bond = offsets
        self.smarts = [b for b in atoms.blocks if isinstance(b, SmartsFlag)]
        self.rings = next(b for b in atoms.blocks if isinstance(b, RingSizeFlags))
        self.implicit_valence = _implicit_valence_getter()
        table = Chem.GetPeriodicTable()
        self.weight = np.array([table.GetAtomicWeight(z) for z in range(119)])
        names = Chem.HybridizationType.names
        _, hyb = self.atom["hybridization"]
        self.hybridization = {int(names[c]): i for i, c in enumerate(hyb.choices)}
        _, btype = self.bond["bond_type"]
        doubles = {"SINGLE": 1.0, "DOUBLE": 2.0, "TRIPLE": 3.0, "AROMATIC": 1.5}
        self.bond_double = {doubles[c]: i for i, c in enumerate(btype.choices)}
        for name in ("atomic_num", "total_degree", "formal_charge", "chiral_tag",
                     "total_hs", "implicit_valence"):
            choices = self.atom[name][1].choices
            assert choices == tuple(range(choices[0], choices[0] + len(choices))), name
        choices = self.bond["stereo"][1].choices
        assert choices == tuple(range(len(choices)))


_TABLES = None


def _tables():
    global _TABLES
    if _TABLES is None:
        _TABLES = _Tables()
    return _TABLES


def _slots(values, block):
    """One-hot slot of integer values for an integer-choice :class:`OneHot` block whose
    choices are consecutive (its ``_index`` lookup, vectorised); -1 for no slot."""
    low, n = block.choices[0], len(block.choices)
    fallback = {"extra": n, "last": n - 1, "ignore": -1}[block.unknown]
    slot = values - low
    return np.where((slot >= 0) & (slot < n), slot, fallback)


def _calls(items, getter, where, dtype=np.int64, fill=0):
    """``getter`` of the items at the positions ``where`` (bool mask), ``fill`` elsewhere."""
    out = np.full(len(items), fill, dtype=dtype)
    index = np.flatnonzero(where)
    if len(index):
        out[index] = np.fromiter(map(getter, [items[i] for i in index]), dtype=dtype,
                                 count=len(index))
    return out


_ISOTOPE = None

#: Atomic numbers one of which every match of each SMARTS flag contains (read off the
#: patterns above): the acceptor and donor alternatives are all N, O or S atoms (aliphatic
#: or aromatic), the acidic pattern needs an O ([O;H1,-1]), the basic one is rooted at #7.
#: The fast path skips the substructure search of a molecule without any of them.
_SMARTS_ELEMENTS = {"hbond_acceptor": (7, 8, 16), "hbond_donor": (7, 8, 16),
                    "acidic": (8,), "basic": (7,)}


def _grover_chunk(mols, sources):
    """GROVER MolGraphs of standardized molecules (``sources``: the SMILES each was read
    from, or None), bit for bit those of the generic feature sets."""
    import re

    from sklearn_papers.chem.featurizers._features import molecule_items
    from sklearn_papers.chem.featurizers._graph import _split_graphs

    global _ISOTOPE
    if _ISOTOPE is None:
        _ISOTOPE = re.compile(r"\[\d")
    tab = _tables()
    atoms, n_atoms = molecule_items(mols, "atoms")
    bonds, n_bonds = molecule_items(mols, "bonds")
    n, m = len(atoms), len(bonds)
    unknown = [s is None for s in sources]
    # per-molecule: what the SMILES says the molecule cannot have
    chiral = np.repeat([u or "@" in s for u, s in zip(unknown, sources)], n_atoms)
    isotope = np.repeat([u or _ISOTOPE.search(s) is not None
                         for u, s in zip(unknown, sources)], n_atoms)
    stereo = np.repeat([u or "/" in s or "\\" in s or "@" in s
                        for u, s in zip(unknown, sources)], n_bonds)
    dative = np.repeat([u or "<" in s or ">" in s for u, s in zip(unknown, sources)],
                       n_bonds)

    begin = np.fromiter(map(methodcaller("GetBeginAtomIdx"), bonds), dtype=np.int64, count=m)
    end = np.fromiter(map(methodcaller("GetEndAtomIdx"), bonds), dtype=np.int64, count=m)
    atom_start = np.concatenate([[0], np.cumsum(n_atoms)])
    shift = np.repeat(atom_start[:-1], n_bonds)
    heavy_degree = np.bincount(np.concatenate([begin + shift, end + shift]), minlength=n)

    z = np.fromiter(map(_atomic_num, atoms), dtype=np.int64, count=n)
    hs = np.fromiter(map(_total_hs, atoms), dtype=np.int64, count=n)
    charge = np.fromiter(map(_formal_charge, atoms), dtype=np.int64, count=n)
    hyb = np.fromiter(map(tab.hybridization.get, map(_hybridization_enum, atoms),
                          repeat(-2)), dtype=np.int64, count=n)
    aromatic = np.fromiter(map(_aromatic, atoms), dtype=bool, count=n)
    valence = np.fromiter(map(tab.implicit_valence, atoms), dtype=np.int64, count=n)
    tags = _calls(atoms, _chiral_tag, chiral)
    known_z = (z >= 0) & (z < len(tab.weight))
    mass = _calls(atoms, _mass, isotope | ~known_z, dtype=np.float64)
    plain = ~isotope & known_z
    mass[plain] = tab.weight[z[plain]] * 0.01

    x = np.zeros((n, tab.n_atom), dtype=np.float32)
    rows = np.arange(n)
    for name, values in (("atomic_num", z), ("total_degree", heavy_degree + hs),
                         ("formal_charge", charge), ("chiral_tag", tags),
                         ("total_hs", hs), ("implicit_valence", valence)):
        off, block = tab.atom[name]
        slot = _slots(values, block)
        hit = slot >= 0
        x[rows[hit], off + slot[hit]] = 1.0
    off, block = tab.atom["hybridization"]
    x[rows, off + np.where(hyb == -2, len(block.choices), hyb)] = 1.0
    x[:, tab.atom["aromatic"][0]] = aromatic
    x[:, tab.atom["mass/100"][0]] = mass
    params = _match_params()
    mol_of_atom = np.repeat(np.arange(len(mols)), n_atoms)
    starts = atom_start[:-1].tolist()
    for block in tab.smarts:
        if block._pattern is None:
            from rdkit import Chem

            block._pattern = Chem.MolFromSmarts(block.smarts)
        off = tab.atom[block.name][0]
        needed = _SMARTS_ELEMENTS.get(block.name)
        if needed is None:
            searched = range(len(mols))
        else:  # a molecule without any of these elements has no match: not searched
            present = np.zeros(len(mols), dtype=bool)
            present[mol_of_atom[np.isin(z, needed)]] = True
            searched = np.flatnonzero(present).tolist()
        matched = [starts[k] + i for k in searched
                   for match in mols[k].GetSubstructMatches(block._pattern, params)
                   for i in match]
        x[matched, off] = 1.0
    off = tab.atom["RingSizeFlags"][0]
    column = {k: j for j, k in enumerate(tab.rings.sizes)}
    ring_rows, ring_cols = [], []
    for mol, start in zip(mols, atom_start[:-1].tolist()):
        for ring in mol.GetRingInfo().AtomRings():
            j = column.get(len(ring))
            if j is not None:
                ring_rows.extend([start + i for i in ring])
                ring_cols.extend([j] * len(ring))
    x[ring_rows, [off + j for j in ring_cols]] = 1.0

    e = np.zeros((m, tab.n_bond), dtype=np.float32)
    brows = np.arange(m)
    off, block = tab.bond["bond_type"]
    btype = np.full(m, -1, dtype=np.int64)
    fast = np.flatnonzero(~dative)
    if len(fast):
        btype[fast] = np.fromiter(
            map(tab.bond_double.get, map(_bond_double, [bonds[i] for i in fast]), repeat(-1)),
            dtype=np.int64, count=len(fast))
    slow = np.flatnonzero(dative)
    if len(slow):
        btype[slow] = block.columns([bonds[i] for i in slow])
    hit = btype >= 0
    e[brows[hit], off + btype[hit]] = 1.0
    e[:, tab.bond["conjugated"][0]] = np.fromiter(map(_conjugated, bonds), dtype=bool, count=m)
    e[:, tab.bond["in_ring"][0]] = np.fromiter(map(_in_ring, bonds), dtype=bool, count=m)
    off, block = tab.bond["stereo"]
    slot = _slots(_calls(bonds, _stereo, stereo), block)
    hit = slot >= 0
    e[brows[hit], off + slot[hit]] = 1.0
    return _split_graphs(x, e, begin, end, n_atoms, n_bonds)


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
