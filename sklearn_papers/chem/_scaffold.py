"""Scaffold splits of molecules (Bemis & Murcko 1996 scaffolds), as scikit-learn splitters.

Molecules that share a Bemis-Murcko scaffold (ring systems plus the linkers between them)
always land on the same side of a split, so test molecules have scaffolds unseen in
training: the out-of-distribution protocol of MoleculeNet (Wu et al. 2018) and GROVER
(Rong et al. 2020). Acyclic molecules all share the empty scaffold.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import BaseCrossValidator

from sklearn_papers.chem._validation import check_molecules
from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, validate_params
from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["ScaffoldKFold", "ScaffoldSplit", "murcko_scaffolds"]

#: Up to this many atoms RDKit's MurckoScaffold (O(n^3), in C++) is faster than the linear
#: pruning in Python (crossover between about 60 and 110 atoms, timed on two benzenes joined
#: by a branched chain on a loaded 2-core machine); both give the same SMILES.
_RDKIT_MAX_ATOMS = 64


def _two_core(neighbours):
    """Atoms of the 2-core of a graph: what is left after repeatedly deleting atoms of
    degree 0 or 1. Linear in atoms and bonds.

    In a molecule the 2-core holds the ring atoms and the linker atoms on paths between
    rings: an atom on no cycle stays only while it has neighbours on two sides, and each
    side then leads to a ring. That is exactly the set of atoms Bemis and Murcko keep
    (rings plus linkers), which RDKit's ``MurckoDecompose`` finds through the all-pairs
    shortest-path matrix of the molecule, O(n^2) memory and O(n^3) time.

    Parameters
    ----------
    neighbours : list of list of int
        Neighbours of each atom.

    Returns
    -------
    keep : list of bool
        One entry per atom.
    """
    degree = [len(nbrs) for nbrs in neighbours]
    keep = [True] * len(neighbours)
    stack = [i for i, d in enumerate(degree) if d <= 1]
    while stack:
        atom = stack.pop()
        if not keep[atom]:
            continue
        keep[atom] = False
        for nbr in neighbours[atom]:
            if keep[nbr]:
                degree[nbr] -= 1
                if degree[nbr] == 1:
                    stack.append(nbr)
    return keep


def _scaffold_smiles(mol, include_chirality):
    """Bemis-Murcko scaffold SMILES of one RDKit molecule, as RDKit's MurckoScaffold gives.

    The atoms kept are found in linear time (:func:`_two_core`); the rest repeats RDKit's
    ``MurckoDecompose`` step by step (atoms double-bonded to the scaffold stay, hydrogen
    and stereo fix-ups of the scaffold atoms that lose a neighbour), then
    ``GetScaffoldForMol``'s clean-up and ``MolToSmiles``, so the SMILES are RDKit's.
    """
    from rdkit import Chem

    # Neighbours through the atoms: looking bonds up by index (mol.GetBonds()) takes time
    # linear in the molecule per bond in RDKit, quadratic in all.
    neighbours = [[nbr.GetIdx() for nbr in mol.GetAtomWithIdx(i).GetNeighbors()]
                  for i in range(mol.GetNumAtoms())]
    keep = _two_core(neighbours)
    if not any(keep):
        return ""  # acyclic: the empty scaffold, by definition (RDKit #1947)
    res = Chem.RWMol(mol)
    drop = []
    unspecified = Chem.ChiralType.CHI_UNSPECIFIED
    for i in (i for i, kept in enumerate(keep) if not kept):
        atom = res.GetAtomWithIdx(i)
        remove = True
        for nbr in atom.GetNeighbors():
            if not keep[nbr.GetIdx()]:
                continue
            if res.GetBondBetweenAtoms(i, nbr.GetIdx()).GetBondType() == \
                    Chem.BondType.DOUBLE:
                remove = False
                break
            if nbr.GetIsAromatic() and nbr.GetAtomicNum() != 6:
                nbr.SetNumExplicitHs(1)  # aromatic heteroatom: [nH]
            elif nbr.GetIsAromatic() and nbr.GetAtomicNum() == 6 and \
                    nbr.GetFormalCharge() == 1:
                nbr.SetNumExplicitHs(1)  # aromatic carbocation
            elif nbr.GetNoImplicit() or nbr.GetChiralTag() != unspecified:
                nbr.SetNoImplicit(False)
                nbr.SetNumExplicitHs(0)
                nbr.SetChiralTag(unspecified)
        if remove:
            drop.append(i)
    res.BeginBatchEdit()
    for i in drop:
        res.RemoveAtom(i)
    res.CommitBatchEdit()
    scaffold = res.GetMol()
    scaffold.ClearComputedProps()
    scaffold.UpdatePropertyCache()
    Chem.GetSymmSSSR(scaffold)
    return Chem.MolToSmiles(scaffold, bool(include_chirality))


@validate_params(
    {"X": ["array-like"], "include_chirality": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def murcko_scaffolds(X, *, include_chirality=False):
    """Bemis-Murcko scaffold SMILES of each molecule.

    The scaffold (ring systems plus the linkers between them, with atoms double-bonded to
    them) is the one of RDKit's ``MurckoScaffold.MurckoScaffoldSmiles``, the same SMILES,
    found in time about linear in the number of atoms: RDKit builds the all-pairs
    shortest-path matrix (O(n^3) time: 18.6 s for a 1,500-carbon chain with RDKit
    2026.09 on a loaded 2-core machine), while here the acyclic side chains are pruned
    directly, and acyclic molecules give the empty scaffold at once. What remains
    super-linear is RDKit's own work: parsing SMILES with thousands of ring closures,
    deleting atoms (a fixed cost per atom that grows with the molecule) and writing the
    canonical SMILES of a scaffold of thousands of atoms.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects.
    include_chirality : bool, default=False
        Keep stereo marks in the scaffold SMILES.

    Returns
    -------
    scaffolds : ndarray of shape (n_samples,), dtype=object
        Canonical scaffold SMILES; ``""`` for acyclic molecules.

    Raises
    ------
    ValueError
        If an entry of ``X`` is not a valid molecule (index and value named).

    References
    ----------
    .. [1] G. W. Bemis, M. A. Murcko, "The Properties of Known Drugs. 1. Molecular
       Frameworks", J. Med. Chem. 39 (1996). :doi:`10.1021/jm9602928`.

    Examples
    --------
    >>> from sklearn_papers.chem import murcko_scaffolds
    >>> murcko_scaffolds(["Cc1ccccc1O", "CCO", "c1ccccc1CCC1CC1"]).tolist()
    ['c1ccccc1', '', 'c1ccc(CCC2CC2)cc1']
    """
    from rdkit.Chem.Scaffolds import MurckoScaffold

    mols, _ = check_molecules(X, nan_hint=False)
    chirality = bool(include_chirality)
    return np.array([
        # small molecules: RDKit's C++ is faster than the Python pruning, same SMILES
        MurckoScaffold.MurckoScaffoldSmiles(mol=m, includeChirality=chirality)
        if m.GetNumAtoms() <= _RDKIT_MAX_ATOMS else _scaffold_smiles(m, chirality)
        for m in mols], dtype=object)


def _scaffold_groups(X, include_chirality):
    """Index arrays of the scaffold groups, in order of first appearance."""
    scaffolds = murcko_scaffolds(X, include_chirality=include_chirality)
    groups = {}
    for i, s in enumerate(scaffolds):
        groups.setdefault(s, []).append(i)
    return [np.asarray(g, dtype=np.int64) for g in groups.values()], len(scaffolds)


def _ordered_groups(groups, n_samples, big_threshold, method, rng):
    """Groups in the order they are dealt out.

    ``"deterministic"``: largest first (ties: first appearance), MoleculeNet's scaffold
    split. ``"balanced"``: groups larger than ``big_threshold`` first, then the others,
    each part in random order, as chemprop/GROVER's ``scaffold_balanced`` (which shuffles
    both). The small groups' order is drawn first, so that a split whose big groups all
    fit in the training set is the same as when only the small groups were shuffled.
    """
    by_size = sorted(groups, key=lambda g: (-len(g), g[0]))
    if method == "deterministic":
        return by_size
    big = [g for g in by_size if len(g) > big_threshold]
    small = [g for g in by_size if len(g) <= big_threshold]
    small_order = rng.permutation(len(small))
    big_order = rng.permutation(len(big))
    return [big[i] for i in big_order] + [small[i] for i in small_order]


def _class_labels(y):
    """``y`` as a 1-D array when it holds binary or multiclass labels, else None."""
    if y is None:
        return None
    from sklearn.utils.multiclass import type_of_target

    y = tensors_to_numpy(y, "y")

    try:
        kind = type_of_target(y)
    except ValueError:
        return None
    return np.asarray(y).ravel() if kind in ("binary", "multiclass") else None


def _warn_single_class(labels, test, k, method):
    """Warn when the test indices of split ``k`` hold one class of ``labels``."""
    if labels is None or len(labels) <= int(test.max()):
        return
    classes = np.unique(labels[test])
    if len(classes) == 1:
        hint = (" method='balanced' (with a random_state) shuffles the scaffold groups"
                if method == "deterministic" else "")
        warnings.warn(
            f"ScaffoldSplit: the test set of split {k} ({len(test)} molecules) holds only "
            f"class {classes[0]!r}; ROC-AUC and other per-class scores are undefined on "
            f"it.{hint}",
            UserWarning, stacklevel=3,
        )


class ScaffoldSplit(BaseCrossValidator):
    """Train/test split that keeps each Bemis-Murcko scaffold on one side.

    Scaffold groups are dealt into the training set until it holds ``1 - test_size`` of
    the molecules; the rest form the test set.

    * ``method="deterministic"`` (MoleculeNet, Wu et al. 2018): largest groups first, so
      the test set holds the rarest scaffolds. Every split is the same; ``n_splits`` must
      be 1.
    * ``method="balanced"`` (GROVER, Rong et al. 2020, "balanced scaffold split"): groups
      larger than half the test size are dealt first, then the remaining groups; both
      parts are shuffled by ``random_state`` (as in chemprop and GROVER), and each of the
      ``n_splits`` splits draws a new order. Splits can still repeat when the groups leave
      few ways to fill the training set (e.g. very few scaffolds); a ``UserWarning`` says
      so when one of the ``n_splits`` splits repeats an earlier one.

    Usable as ``cv=`` in :class:`~sklearn.model_selection.GridSearchCV` and
    :func:`~sklearn.model_selection.cross_validate` when ``X`` holds molecules.

    Read more in :doc:`/papers/grover`.

    Parameters
    ----------
    n_splits : int, default=1
        Number of train/test splits (only ``"balanced"`` allows more than 1).
    test_size : float, default=0.2
        Fraction of molecules in the test set (reached up to the size of the last group).
    method : {"deterministic", "balanced"}, default="deterministic"
        How scaffold groups are ordered, see above.
    include_chirality : bool, default=False
        Distinguish stereoisomeric scaffolds.
    random_state : int, RandomState instance or None, default=None
        Shuffles the scaffold groups for ``method="balanced"``.

    See Also
    --------
    ScaffoldKFold : K folds of whole scaffold groups.
    sklearn.model_selection.GroupShuffleSplit : The same idea with given groups.

    References
    ----------
    .. [1] Z. Wu et al., "MoleculeNet: a benchmark for molecular machine learning",
       Chem. Sci. 9 (2018). :doi:`10.1039/C7SC02664A`.
    .. [2] Y. Rong et al., "Self-Supervised Graph Transformer on Large-Scale Molecular
       Data", NeurIPS 2020. :arxiv:`2007.02835`.

    Examples
    --------
    >>> from sklearn_papers.chem import ScaffoldSplit
    >>> X = ["c1ccccc1C", "c1ccccc1O", "C1CCCCC1N", "CCO", "c1ccncc1"]
    >>> train, test = next(ScaffoldSplit(test_size=0.4).split(X))
    >>> train.tolist(), test.tolist()
    ([0, 1, 2], [3, 4])
    """

    _parameter_constraints = {
        "n_splits": [Interval(Integral, 1, None, closed="left")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"deterministic", "balanced"})],
        "include_chirality": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_splits=1, *, test_size=0.2, method="deterministic",
                 include_chirality=False, random_state=None):
        self.n_splits = n_splits
        self.test_size = test_size
        self.method = method
        self.include_chirality = include_chirality
        self.random_state = random_state

    def _check(self):
        from sklearn.base import BaseEstimator

        BaseEstimator._validate_params(self)
        if self.method == "deterministic" and self.n_splits != 1:
            raise ValueError(
                f"method='deterministic' gives the same split every time; n_splits must be "
                f"1, got {self.n_splits!r}. Use method='balanced' for several splits."
            )

    def get_params(self, deep=True):
        """Parameters of the splitter, as for an estimator.

        Parameters
        ----------
        deep : bool, default=True
            Ignored (no nested objects).

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return {k: getattr(self, k) for k in self._parameter_constraints}

    def split(self, X, y=None, groups=None):
        """Generate indices of the training and test molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,), default=None
            Not used to form the split. When given class labels (binary or multiclass,
            as ``cross_validate`` passes them), a ``UserWarning`` says when a test set
            holds a single class, where ROC-AUC and similar scores are undefined (e.g.
            the deterministic split of BBBP puts its rarest scaffolds, all of one class,
            in the test set).
        groups : array-like, default=None
            Ignored (the scaffolds are the groups).

        Yields
        ------
        train : ndarray of int
            Training indices, sorted.
        test : ndarray of int
            Test indices, sorted.
        """
        self._check()
        labels = _class_labels(y)
        scaffold_groups, n = _scaffold_groups(X, self.include_chirality)
        if n < 2:
            raise ValueError(f"Cannot split {n} molecule(s) into training and test sets.")
        n_train_target = n * (1.0 - self.test_size)
        rng = check_random_state(self.random_state)
        seen, warned = {}, False
        for k in range(self.n_splits):
            ordered = _ordered_groups(scaffold_groups, n, n * self.test_size / 2,
                                      self.method, rng)
            train, test = [], []
            for g in ordered:
                if len(train) + len(g) <= n_train_target or not train:
                    train.extend(g)
                else:
                    test.extend(g)
            if not test:
                raise ValueError(
                    f"All {n} molecules share too few scaffolds ({len(scaffold_groups)}) to "
                    f"leave a test set with test_size={self.test_size!r}."
                )
            test = np.sort(np.asarray(test, dtype=np.int64))
            first = seen.setdefault(test.tobytes(), k)
            if first != k and not warned:  # once per call to split
                warned = True
                warnings.warn(
                    f"ScaffoldSplit: split {k} repeats split {first}; the {n} molecules "
                    f"form {len(scaffold_groups)} scaffold group(s), which leave few ways "
                    f"to hold out test_size={self.test_size!r} of them. Use fewer splits, "
                    "more molecules or ScaffoldKFold.",
                    UserWarning, stacklevel=2,
                )
            _warn_single_class(labels, test, k, self.method)
            yield np.sort(np.asarray(train, dtype=np.int64)), test

    def _iter_test_indices(self, X=None, y=None, groups=None):
        for _, test in self.split(X, y, groups):
            yield test

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of splits, ``n_splits``.

        Parameters
        ----------
        X, y, groups : object, default=None
            Ignored.

        Returns
        -------
        n_splits : int
            The number of splitting iterations.
        """
        return self.n_splits


class ScaffoldKFold(BaseCrossValidator):
    """K-fold cross-validation over whole Bemis-Murcko scaffold groups.

    Each scaffold group is given, in turn, to the fold with the fewest molecules so far
    (as :class:`~sklearn.model_selection.GroupKFold`). With ``method="deterministic"``
    the groups come largest first; with ``method="balanced"`` the groups larger than half a
    fold come first and the others after them, both parts in an order shuffled by
    ``random_state``, so the folds change with ``random_state`` even when every group is
    large.

    Usable as ``cv=`` in :class:`~sklearn.model_selection.GridSearchCV` when ``X`` holds
    molecules.

    Read more in :doc:`/papers/grover`.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds (at least 2, at most the number of distinct scaffolds).
    method : {"deterministic", "balanced"}, default="deterministic"
        Order in which scaffold groups are dealt, see above.
    include_chirality : bool, default=False
        Distinguish stereoisomeric scaffolds.
    random_state : int, RandomState instance or None, default=None
        Shuffles the scaffold groups for ``method="balanced"``.

    See Also
    --------
    ScaffoldSplit : One (or several) scaffold train/test splits.
    sklearn.model_selection.GroupKFold : The same with given groups.

    References
    ----------
    .. [1] Z. Wu et al., "MoleculeNet: a benchmark for molecular machine learning",
       Chem. Sci. 9 (2018). :doi:`10.1039/C7SC02664A`.
    .. [2] Y. Rong et al., "Self-Supervised Graph Transformer on Large-Scale Molecular
       Data", NeurIPS 2020. :arxiv:`2007.02835`.

    Examples
    --------
    >>> from sklearn_papers.chem import ScaffoldKFold
    >>> X = ["c1ccccc1C", "c1ccccc1O", "C1CCCCC1N", "CCO", "c1ccncc1", "CCN"]
    >>> [test.tolist() for _, test in ScaffoldKFold(n_splits=2).split(X)]
    [[0, 1, 2], [3, 4, 5]]
    """

    _parameter_constraints = {
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "method": [StrOptions({"deterministic", "balanced"})],
        "include_chirality": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_splits=5, *, method="deterministic", include_chirality=False,
                 random_state=None):
        self.n_splits = n_splits
        self.method = method
        self.include_chirality = include_chirality
        self.random_state = random_state

    def get_params(self, deep=True):
        """Parameters of the splitter, as for an estimator.

        Parameters
        ----------
        deep : bool, default=True
            Ignored (no nested objects).

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return {k: getattr(self, k) for k in self._parameter_constraints}

    def _iter_test_indices(self, X=None, y=None, groups=None):
        return iter(self._folds(X)[0])

    def _folds(self, X):
        """Test indices of every fold, and the number of molecules (X parsed once)."""
        from sklearn.base import BaseEstimator

        BaseEstimator._validate_params(self)
        scaffold_groups, n = _scaffold_groups(X, self.include_chirality)
        if len(scaffold_groups) < self.n_splits:
            raise ValueError(
                f"Cannot make n_splits={self.n_splits} scaffold folds from "
                f"{len(scaffold_groups)} distinct scaffold(s) in {n} molecules."
            )
        rng = check_random_state(self.random_state)
        ordered = _ordered_groups(scaffold_groups, n, n / self.n_splits / 2, self.method,
                                  rng)
        folds = [[] for _ in range(self.n_splits)]
        for g in ordered:
            min(folds, key=len).extend(g)
        return [np.sort(np.asarray(fold, dtype=np.int64)) for fold in folds], n

    def split(self, X, y=None, groups=None):
        """Generate indices of the training and test molecules of each fold.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like, default=None
            Ignored.
        groups : array-like, default=None
            Ignored (the scaffolds are the groups).

        Yields
        ------
        train : ndarray of int
            Training indices, sorted.
        test : ndarray of int
            Test indices, sorted.
        """
        folds, n = self._folds(X)
        for test in folds:
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.flatnonzero(mask), test

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of folds, ``n_splits``.

        Parameters
        ----------
        X, y, groups : object, default=None
            Ignored.

        Returns
        -------
        n_splits : int
            The number of folds.
        """
        return self.n_splits
