"""Circular (Morgan / ECFP / FCFP) fingerprints as a scikit-learn transformer."""

import re
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sklearn_papers.chem._molecule_input import prepared_molecules
from sklearn_papers.chem._parse import (
    InvalidMolecule,
    as_molecule_array,
    parse_molecules,
    row_labels,
)
from sklearn_papers.chem._report import report_entries
from sklearn_papers.chem._standardization import standardize_parsed
from sklearn_papers.chem._standardize import resolve_standardize, standardize_constraint
from sklearn_papers.chem._validation import (
    check_molecule_feature_names,
    set_molecule_input_attributes,
)
from sklearn_papers.nn._progress import progress
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["CircularFingerprint"]

#: Default number of molecules per batch when ``batch_size=None`` and work is split.
_MAX_BATCH = 2048

#: Largest ``n_bits``: 2**24 positions are 16 MiB per molecule as uint8 (64 MiB as counts or
#: float32). A molecule sets at most a few hundred identifiers, so collisions are already rare
#: at 2**16; above 2**24 the dense output, not the chemistry, is what grows.
_MAX_BITS = 2**24


def _physical_memory():
    """Bytes of physical memory, or None where the platform does not say."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_output_memory(n, n_bits, dtype):
    """MemoryError before allocating an output larger than the machine's memory."""
    need = int(n) * int(n_bits) * np.dtype(dtype).itemsize
    have = _physical_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"CircularFingerprint would need {need / 2**30:.1f} GiB for its dense output of "
            f"shape ({n}, {n_bits}) {np.dtype(dtype)}, more than this machine's "
            f"{have / 2**30:.1f} GiB of memory; pass sparse=True (only the bits set are "
            "stored), lower n_bits or transform fewer molecules at a time.")


class _SparseRows:
    """Rows of one batch as CSR parts, filled molecule by molecule (``out[i] = mol``).

    Bits come from ``GetFingerprint(mol).GetOnBits()`` (sorted), counts from
    ``GetCountFingerprint(mol).GetNonzeroElements()`` (sorted here): the positions and
    values the dense ``GetFingerprintAsNumPy`` / ``GetCountFingerprintAsNumPy`` rows hold.
    """

    def __init__(self, n_rows, n_bits, dtype, gen, use_counts):
        self.n_rows, self.n_bits, self.dtype = n_rows, n_bits, dtype
        self.gen, self.use_counts = gen, use_counts
        self.rows = {}

    def __setitem__(self, i, mol):
        if self.use_counts:
            found = self.gen.GetCountFingerprint(mol).GetNonzeroElements()
            keys = sorted(found)
            self.rows[i] = (keys, [found[k] for k in keys])
        else:
            self.rows[i] = (self.gen.GetFingerprint(mol).GetOnBits(), None)

    def to_csr(self):
        from scipy import sparse

        lengths = np.zeros(self.n_rows + 1, dtype=np.int64)
        for i, (keys, _) in self.rows.items():
            lengths[i + 1] = len(keys)
        indptr = np.cumsum(lengths)
        indices = np.empty(indptr[-1], dtype=np.int32)
        data = np.ones(indptr[-1], dtype=self.dtype)
        for i, (keys, counts) in self.rows.items():
            indices[indptr[i]:indptr[i + 1]] = keys
            if counts is not None:
                data[indptr[i]:indptr[i + 1]] = counts
        out = sparse.csr_matrix((data, indices, indptr), shape=(self.n_rows, self.n_bits))
        out.has_sorted_indices = True
        return out


def _fingerprint_batch(values, start, radius, n_bits, use_counts, use_features,
                       use_chirality, dtype, steps=None, sparse=False):
    """Parse and fingerprint one batch (runs in a joblib worker).

    Each SMILES is parsed and fingerprinted in one pass, so molecules are freed at once.
    Without ``use_chirality`` the parse skips stereo perception: ``Chem.MolFromSmiles`` =
    parse, remove explicit H atoms (which sanitizes) or sanitize, then assign
    stereochemistry, and non-chiral Morgan invariants (atomic number, degree, total H
    count, charge, isotope, ring membership, bond types) do not depend on the last step,
    which is about a fifth of the parse time. ``Mol`` inputs, and every entry that is
    not a non-empty string or fails here, go through :func:`parse_molecules`, the one
    place that decides validity and words the error, so validity and messages are those
    of the rest of the package (and ``Mol`` inputs get the hydrogen handling of
    ``MolFromSmiles`` there). ``tests/chem/test_ecfp.py`` checks bit-for-bit equality
    with fingerprints of ``Chem.MolFromSmiles`` molecules.

    With standardization steps (``steps``, see ``_standardization.standardize_parsed``) every
    entry is parsed by :func:`parse_molecules`, standardized, and fingerprinted.

    With ``sparse`` the rows are collected as CSR parts (:class:`_SparseRows`) and no
    dense row is made.

    Returns
    -------
    out : ndarray or scipy.sparse.csr_matrix of shape (len(values), n_bits)
        Fingerprints; rows of invalid entries are zero (empty when sparse).
    invalid : list of InvalidMolecule
        With indices shifted by ``start`` (global positions in the whole input).
    multi : list of int
        Global positions of the valid molecules with more than one fragment (empty with
        standardization).
    """
    from rdkit import Chem, rdBase
    from rdkit.Chem import rdFingerprintGenerator

    inv_gen = rdFingerprintGenerator.GetMorganFeatureAtomInvGen() if use_features else None
    # RDKit's Boost signature takes Python ints only (a GridSearchCV grid gives numpy ints)
    gen = rdFingerprintGenerator.GetMorganGenerator(
        radius=int(radius), fpSize=int(n_bits), includeChirality=bool(use_chirality),
        atomInvariantsGenerator=inv_gen,
    )
    if sparse:
        out = _SparseRows(len(values), n_bits, dtype, gen, use_counts)
        as_numpy = None
        finish = out.to_csr
    else:
        out = np.zeros((len(values), n_bits), dtype=dtype)
        as_numpy = gen.GetCountFingerprintAsNumPy if use_counts else gen.GetFingerprintAsNumPy
        finish = lambda: out  # noqa: E731

    def put(i, mol):
        if as_numpy is None:
            out[i] = mol
        else:
            out[i] = as_numpy(mol)

    if steps is not None:
        mols, invalid = parse_molecules(values)
        mols, _, failed = standardize_parsed(mols, steps, values)
        for i, mol in enumerate(mols):
            if mol is not None:
                put(i, mol)
        invalid = invalid + [InvalidMolecule(i, values[i], why) for i, why in failed]
        invalid = sorted((type(e)(e.index + start, e.value, e.reason) for e in invalid),
                         key=lambda e: e.index)
        return finish(), invalid, []
    get_frags = Chem.GetMolFrags
    multi = []
    from_smiles, sanitize, remove_hs = Chem.MolFromSmiles, Chem.SanitizeMol, Chem.RemoveHs
    has_space = re.compile(r"\s").search
    slow = []
    with rdBase.BlockLogs():
        for i, value in enumerate(values):
            if type(value) is not str or not value or has_space(value):
                slow.append(i)  # parse_molecules decides (whitespace: see there)
                continue
            if use_chirality:  # stereo perception matters: the full MolFromSmiles path
                mol = from_smiles(value)
                if mol is None or mol.GetNumAtoms() == 0:
                    slow.append(i)
                    continue
            else:
                mol = from_smiles(value, sanitize=False)
                if mol is None or mol.GetNumAtoms() == 0:
                    slow.append(i)
                    continue
                try:
                    if "H" in value:  # maybe explicit H atoms: remove as MolFromSmiles does
                        mol = remove_hs(mol, implicitOnly=False, updateExplicitCount=True,
                                        sanitize=True)
                    else:
                        sanitize(mol)
                except Exception:  # noqa: BLE001 - RDKit sanitization error; reported below
                    slow.append(i)
                    continue
            put(i, mol)
            if "." in value and len(get_frags(mol)) > 1:  # no dot: one fragment
                multi.append(i + start)
    invalid = []
    if slow:
        sub = np.empty(len(slow), dtype=object)
        sub[:] = [values[i] for i in slow]
        mols, sub_invalid = parse_molecules(sub)
        for i, mol in zip(slow, mols):
            if mol is not None:
                put(i, mol)
                if len(get_frags(mol)) > 1:
                    multi.append(i + start)
        invalid = [type(e)(slow[e.index] + start, e.value, e.reason) for e in sub_invalid]
    return finish(), invalid, sorted(multi)


def morgan_bits(mols, radius, n_bits, dtype=np.uint8):
    """ECFP bits of valid RDKit molecules, as :class:`CircularFingerprint` with its
    defaults (``use_counts``, ``use_features`` and ``use_chirality`` False) gives them.

    Parameters
    ----------
    mols : sequence of rdkit.Chem.Mol
        Valid molecules.
    radius, n_bits : int
        As in :class:`CircularFingerprint`.
    dtype : numpy dtype, default=np.uint8

    Returns
    -------
    bits : ndarray of shape (len(mols), n_bits)
        0 or 1.
    """
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=int(radius), fpSize=int(n_bits))
    out = np.zeros((len(mols), int(n_bits)), dtype=dtype)
    for i, mol in enumerate(mols):
        out[i] = gen.GetFingerprintAsNumPy(mol)
    return out


def _stack_sparse(parts, valid):
    """One CSR matrix from the batches' ones; invalid rows hold NaN in every column,
    as in the dense output."""
    from scipy import sparse

    out = parts[0] if len(parts) == 1 else sparse.vstack(parts, format="csr")
    if valid.all():
        return out
    n, n_bits = out.shape
    bad = ~valid  # invalid rows are empty here: give each n_bits stored NaN values
    lengths = np.diff(out.indptr)
    lengths[bad] = n_bits
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.empty(indptr[-1], dtype=out.indices.dtype)
    data = np.full(indptr[-1], np.nan, dtype=out.dtype)
    rows = np.repeat(np.arange(n), lengths)
    is_bad = bad[rows]
    indices[~is_bad] = out.indices
    data[~is_bad] = out.data
    indices[is_bad] = np.tile(np.arange(n_bits, dtype=indices.dtype), int(bad.sum()))
    result = sparse.csr_matrix((data, indices, indptr), shape=out.shape)
    result.has_sorted_indices = True
    return result


class CircularFingerprint(TransformerMixin, BaseEstimator):
    """Extended-connectivity (Morgan) circular fingerprints: ECFP, FCFP, bits or counts.

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/ecfp>`.

    Each heavy atom starts with an integer identifier (its invariants); ``radius`` rounds
    of updates combine an atom's identifier with its neighbours' (and bond types), so the
    identifier at round ``r`` describes the circular substructure of radius ``r`` around
    the atom. All identifiers of all rounds are hashed into ``n_bits`` positions. This is
    the "circular fingerprint" baseline of Duvenaud et al. (2015), Algorithm 1, which
    their neural fingerprint makes differentiable. ECFP with diameter ``2 * radius`` is
    called ECFP4 for ``radius=2``. Computed with RDKit's Morgan fingerprint generator.

    The transformer is stateless: ``fit`` only validates, and ``transform`` works
    without ``fit``.

    RDKit ``Mol`` inputs are read as their SMILES would be: explicit hydrogen atoms (from
    ``Chem.AddHs``, conformer pipelines, or SDF files read with ``removeHs=False``) are
    removed with ``Chem.RemoveHs``, as ``Chem.MolFromSmiles`` removes them, and an
    unsanitized ``Mol`` is sanitized, both on a copy (the input is not modified). So
    ``mol``, ``Chem.AddHs(mol)`` and ``Chem.MolToSmiles(mol)`` give the same
    fingerprint. Hydrogens that ``MolFromSmiles`` keeps too (isotopes such as ``[2H]``,
    ``[H][H]``) stay atoms of the graph. Use RDKit's generator directly to fingerprint a
    graph with hydrogen atoms.

    Parameters
    ----------
    radius : int, default=2
        Number of update rounds (ECFP diameter is ``2 * radius``). 0 keeps only the
        atom invariants.
    n_bits : int, default=2048
        Length of the fingerprint (RDKit's ``fpSize``), from 1 to 2**24; identifiers are
        folded into it by modulo. The bound keeps the dense output at most 16 MiB per
        molecule (64 MiB for counts or ``errors="nan"``): a molecule sets at most a few
        hundred identifiers, so longer fingerprints add memory, not information.
    use_counts : bool, default=False
        If True, each position counts how many substructure occurrences hashed to it;
        otherwise it is 1 when any did.
    use_features : bool, default=False
        If True, use pharmacophoric feature invariants (donor, acceptor, aromatic,
        halogen, basic, acidic) instead of the atom's element and connectivity: FCFP.
    use_chirality : bool, default=False
        If True, include the CIP chirality label in the atom invariants, so enantiomers
        (e.g. L- and D-alanine) get different fingerprints.
    standardize : bool or MoleculeStandardizer, default=False
        Standardize each molecule before fingerprinting it: ``True`` applies
        :class:`MoleculeStandardizer`'s default steps (cleanup, keep the largest organic
        fragment, neutralize charges), a ``MoleculeStandardizer`` its own steps (its
        ``errors`` is not used). Then a salt and its parent, or the charged and neutral
        forms of an acid or amine, get the same fingerprint. With ``False`` molecules are
        fingerprinted as given, and a :class:`MultipleFragmentsWarning` (a
        ``UserWarning``) says, once per call, how many have several fragments and where
        the first is. The default is ``False`` because standardizing did not change
        cross-validated scores on the bundled sets (see the "Your own molecules" guide)
        while it costs time. A salt or mixture of inorganic parts only
        (``"[Na+].[Cl-]"``) has no parent to keep and is an invalid molecule (see
        ``errors``). Read at every call (the fingerprint learns nothing in ``fit``).
    errors : {"raise", "nan"}, default="raise"
        Invalid entries (unparsable SMILES, empty strings, None/NaN, non-molecules):
        ``"raise"`` raises ``ValueError`` naming their index, value and RDKit's reason;
        ``"nan"`` returns a row of NaN for each, in place (rows are never dropped).
    sparse : bool, default=False
        If True, return a ``scipy.sparse.csr_matrix`` holding the same values as the
        dense output: memory grows with the bits set (about 5 bytes each, some 45 per
        ECFP4 molecule), not with ``n_bits``. Scikit-learn's sparse-aware models
        (``LogisticRegression``, ``Ridge``, ``SVR``, ``RandomForestClassifier``) take it
        as it is. Invalid rows with ``errors="nan"`` hold NaN in every column, as the
        dense output does, so each one costs ``n_bits`` stored values.
    n_jobs : int, default=None
        Number of joblib workers over batches of molecules (parsing and fingerprinting
        happen in the worker). None means 1 unless in a ``joblib.parallel_backend``
        context; -1 means all processors. The output does not depend on it.
    batch_size : int, default=None
        Molecules per batch. None splits the input evenly over the workers, in batches
        of at most 2048 molecules. The output does not depend on it.
    verbose : int, default=1
        Progress bar (tqdm, on standard error) over batches: 0 never, 1 for inputs of
        at least 10,000 molecules, 2 always.

    Attributes
    ----------
    n_features_in_ : int
        Always 1: the input is one column of molecules (a 1-D array counts as one
        column, as a ``ColumnTransformer`` column selection would give).
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    sklearn_papers.chem.check_molecules : The input validation used here.

    Notes
    -----
    Output dtype: ``uint8`` for bits, ``uint32`` for counts (RDKit's count type), and
    ``float32`` whenever ``errors="nan"`` (so that invalid rows can hold NaN; it is exact
    for counts below 2**24). The dtype depends only on the parameters, never on the data.

    Without ``use_chirality`` the SMILES are parsed without stereo perception, which does
    not change the bits (tested against ``Chem.MolFromSmiles``) and saves about a fifth of
    the time.

    References
    ----------
    .. [1] Rogers, D. and Hahn, M. (2010). Extended-connectivity fingerprints. Journal of
       Chemical Information and Modeling, 50(5), 742-754. https://doi.org/10.1021/ci100050t
    .. [2] Duvenaud, D., Maclaurin, D., Aguilera-Iparraguirre, J., Gomez-Bombarelli, R.,
       Hirzel, T., Aspuru-Guzik, A. and Adams, R. P. (2015). Convolutional networks on
       graphs for learning molecular fingerprints. NeurIPS 28, Algorithm 1.
       https://doi.org/10.48550/arXiv.1509.09292

    Examples
    --------
    >>> from sklearn_papers.chem import CircularFingerprint
    >>> fp = CircularFingerprint(radius=2, n_bits=1024)
    >>> X = fp.transform(["CCO", "c1ccccc1", "CC(=O)O"])
    >>> X.shape, X.dtype
    ((3, 1024), dtype('uint8'))
    >>> X.sum(axis=1).tolist()  # bits set per molecule
    [6, 3, 7]
    >>> fp.get_feature_names_out()[:2]
    array(['ecfp4_0', 'ecfp4_1'], dtype=object)
    """

    _parameter_constraints = {
        "radius": [Interval(Integral, 0, None, closed="left")],
        "n_bits": [Interval(Integral, 1, _MAX_BITS, closed="both")],
        "use_counts": ["boolean"],
        "use_features": ["boolean"],
        "use_chirality": ["boolean"],
        "standardize": standardize_constraint(),
        "errors": [StrOptions({"raise", "nan"})],
        "sparse": ["boolean"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right"), None],  # joblib: not 0
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        radius=2,
        n_bits=2048,
        *,
        use_counts=False,
        use_features=False,
        use_chirality=False,
        standardize=False,
        errors="raise",
        sparse=False,
        n_jobs=None,
        batch_size=None,
        verbose=1,
    ):
        self.radius = radius
        self.n_bits = n_bits
        self.use_counts = use_counts
        self.use_features = use_features
        self.use_chirality = use_chirality
        self.standardize = standardize
        self.errors = errors
        self.sparse = sparse
        self.n_jobs = n_jobs
        self.batch_size = batch_size
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate the parameters and the molecules (nothing is learned).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        self : CircularFingerprint
            The transformer, with ``n_features_in_`` (and ``feature_names_in_``) set.

        Raises
        ------
        ValueError
            For invalid molecules when ``errors="raise"``, naming index and value.
        """
        prepared_molecules(X, resolve_standardize(self.standardize), errors=self.errors,
                           estimator=type(self).__name__)
        set_molecule_input_attributes(self, X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Validate, then fingerprint (each SMILES is parsed once).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        X_new : ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_bits)
            See :meth:`transform`.
        """
        out = self._transform(X)
        set_molecule_input_attributes(self, X)
        return out

    def transform(self, X):
        """Compute the fingerprints.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects (list, array, Series, one-column
            DataFrame). A bare string is refused rather than split into characters.

        Returns
        -------
        X_new : ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_bits)
            ``uint8`` bits, ``uint32`` counts, or ``float32`` with NaN rows for invalid
            molecules when ``errors="nan"``; a CSR matrix of the same values with
            ``sparse=True``.

        Raises
        ------
        ValueError
            For a bare string, a wrong shape, no molecules, or (``errors="raise"``)
            invalid molecules, naming their index, value and RDKit's reason.
        MemoryError
            Before computing anything, if the dense output of shape
            ``(n_samples, n_bits)`` would not fit in the machine's physical memory
            (saying how much it needs; pass ``sparse=True`` to store only the bits set).
        """
        self._validate_params()
        if hasattr(self, "n_features_in_"):  # fitted: the column name must match fit's
            check_molecule_feature_names(self, X)
        return self._transform(X)

    def _output_dtype(self):
        if self.errors == "nan":
            return np.float32
        return np.uint32 if self.use_counts else np.uint8

    def _transform(self, X):
        from joblib import Parallel, delayed, effective_n_jobs

        values, labels = as_molecule_array(X), row_labels(X)
        n = len(values)
        if not self.sparse:
            _check_output_memory(n, self.n_bits, self._output_dtype())
        n_jobs = max(1, min(effective_n_jobs(self.n_jobs), n))
        batch = self.batch_size or min(_MAX_BATCH, -(-n // n_jobs))
        starts = range(0, n, batch)
        args = (self.radius, self.n_bits, self.use_counts, self.use_features,
                self.use_chirality, self._output_dtype(),
                resolve_standardize(self.standardize), bool(self.sparse))
        if n_jobs == 1:
            results = (_fingerprint_batch(values[s:s + batch], s, *args) for s in starts)
        else:
            results = Parallel(n_jobs=n_jobs, return_as="generator")(
                delayed(_fingerprint_batch)(values[s:s + batch], s, *args) for s in starts
            )
        results = progress(results, verbose=self.verbose, n_items=n, total=len(starts),
                           desc=type(self).__name__, unit="batch")
        parts, invalid, multi = [], [], []
        for out, bad, several in results:
            parts.append(out)
            invalid.extend(bad)
            multi.extend(several)
        valid = report_entries(invalid, multi, values, errors=self.errors,
                               estimator=type(self).__name__, labels=labels)
        if self.sparse:
            return _stack_sparse(parts, valid)
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if not valid.all():
            out[~valid] = np.nan
        return out

    def get_feature_names_out(self, input_features=None):
        """Output feature names: ``ecfp{2*radius}_{i}`` (``fcfp...`` with features).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked as scikit-learn checks it (it must equal ``feature_names_in_`` when
            ``fit`` saw a DataFrame, and have ``n_features_in_`` = 1 entries after ``fit``);
            the names do not depend on it (the output does not map to input columns).

        Returns
        -------
        feature_names_out : ndarray of shape (n_bits,), dtype=object
            ``ecfp4_0`` ... ``ecfp4_{n_bits-1}`` for ``radius=2``.

        Raises
        ------
        ValueError
            If ``input_features`` does not match the names or the number of columns seen
            in ``fit``.
        """
        from sklearn.utils.validation import _check_feature_names_in

        _check_feature_names_in(self, input_features, generate_names=False)
        prefix = f"{'fcfp' if self.use_features else 'ecfp'}{2 * self.radius}"
        if self.use_counts:
            prefix += "_count"
        return np.asarray([f"{prefix}_{i}" for i in range(self.n_bits)], dtype=object)

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.input_tags.allow_nan = self.errors == "nan"
        tags.transformer_tags.preserves_dtype = []
        tags.non_deterministic = False
        return tags


def _fold_bits(fingerprints, n_bits):
    """Fold Morgan bit vectors to ``n_bits`` positions: bit ``j`` goes to ``j % n_bits``.

    RDKit's Morgan generator sets bit ``id % fpSize`` of each 32-bit identifier, so for a
    power of two ``n_bits`` dividing the width, folding the bits of a wider fingerprint
    equals computing the narrower one. Duvenaud et al. (2015) search the fingerprint
    length; every length is folded from one 2048-bit fingerprint per radius.

    Parameters
    ----------
    fingerprints : ndarray of shape (n_samples, width)
        0/1 bits (any numeric dtype), e.g. of :class:`CircularFingerprint`.
    n_bits : int
        A divisor of ``width``.

    Returns
    -------
    folded : ndarray of shape (n_samples, n_bits), the dtype of ``fingerprints``
        The OR (maximum) over the positions ``j`` with ``j % n_bits`` equal.

    Raises
    ------
    ValueError
        If ``fingerprints`` is not 2-D or ``n_bits`` is not a positive divisor of its width.
    """
    fingerprints = np.asarray(fingerprints)
    if fingerprints.ndim != 2:
        raise ValueError(f"fingerprints must be 2-D (n_samples, width), got shape "
                         f"{fingerprints.shape}")
    n, width = fingerprints.shape
    if isinstance(n_bits, bool) or not isinstance(n_bits, Integral) or n_bits < 1 \
            or width % n_bits:
        raise ValueError(f"n_bits={n_bits} does not divide the fingerprint width {width}; "
                         "pass a positive divisor (a power of two for 2**k bits)")
    return fingerprints.reshape(n, width // n_bits, n_bits).max(axis=1)
