"""The molecule input of the estimators, in one pass and in this order:

1. read: ``X`` as a 1-D object array of entries, with the row labels of a pandas input
   (:func:`~sklearn_papers.chem._parse.read_molecules`);
2. parse: SMILES strings and ``Mol`` objects to RDKit molecules, the invalid entries named
   (:func:`~sklearn_papers.chem._parse.parse_molecules`);
3. standardize: the steps of the ``standardize`` parameter
   (:func:`~sklearn_papers.chem._standardization.standardize_entries`);
4. featurize: the estimator's featurizer on the standardized molecules, with the RDKit
   descriptors of ``descriptors`` (:class:`DescribedGraph`);
5. report: the invalid entries raised or masked (``errors``), and one
   :class:`~sklearn_papers.chem.MultipleFragmentsWarning` without standardization
   (:func:`~sklearn_papers.chem._report.report_entries`).

Each step runs once per entry. :func:`prepared_molecules` runs steps 1, 2, 3 and 5 for
the estimators that featurize the molecules themselves; :func:`molecule_graphs` runs the
five for the graph estimators, and :func:`described_graphs` gives their graphs the
normalized descriptors. With a ``graph_cache``, steps 2 to 4 run only for the entries not
cached; with ``n_jobs``, steps 2 to 4 run on chunks of entries in joblib workers (only
strings go out and graphs come back). In ``fit``, :func:`set_molecule_input_attributes`
records the input's column. The steps' primitives live in leaf modules that import
nothing of this one; this module holds their order.
"""

import numpy as np

from sklearn_papers.chem._parse import (
    InvalidMolecule,
    no_cyclic_gc,
    parse_molecules,
    read_molecules,
)
from sklearn_papers.chem._report import report_entries
from sklearn_papers.chem._standardization import standardize_entries

__all__ = ["DescribedGraph", "described_graphs", "molecule_graphs", "prepared_molecules",
           "set_molecule_input_attributes", "valid_molecules"]


def prepared_molecules(X, steps, *, errors, estimator, verbose=0):
    """Steps 1, 2, 3 and 5: the molecules of ``X`` read, parsed, standardized and
    reported, for an estimator that featurizes them itself.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects, as the user gave them.
    steps : tuple of 4 bool or None
        The resolved ``standardize`` parameter (None: no standardization; a warning then
        names the molecules of several fragments).
    errors : {"raise", "nan"}
        The estimator's ``errors``.
    estimator : str
        The estimator's class name (messages, progress bar).
    verbose : int, default=0
        A progress bar over the standardization.

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None, length n_samples
        None where the entry is invalid.
    smiles : list of str or None, length n_samples
        As :func:`~sklearn_papers.chem._standardization.standardize_entries` gives them.
    valid : ndarray of shape (n_samples,), dtype=bool

    Raises
    ------
    ValueError
        For a bare string, a wrong shape, no entries, or (``errors="raise"``) invalid
        entries, naming their index, value and reason.
    TypeError
        For sparse matrices, torch tensors and non-array-like input.
    """
    values, labels = read_molecules(X)
    mols, invalid = parse_molecules(values)
    mols, invalid, smiles, multi = standardize_entries(values, mols, invalid, steps,
                                                       verbose=verbose, desc=estimator)
    valid = report_entries(invalid, multi, values, errors=errors, estimator=estimator,
                           labels=labels)
    return mols, smiles, valid


def valid_molecules(estimator, X, *, with_smiles=False):
    """The valid molecules of ``X`` in order and the validity mask (and, with
    ``with_smiles``, the SMILES each was read from, None for a ``Mol`` input): steps 1
    to 3 and 5 (:func:`prepared_molecules`) with the estimator's ``standardize`` and
    ``errors``, for an estimator that featurizes the molecules itself (GROVER's
    pretraining).
    """
    mols, smiles, valid = prepared_molecules(
        X, estimator._input_params()["standardize"], errors=estimator.errors,
        estimator=type(estimator).__name__)
    kept = [m for m in mols if m is not None]
    if not with_smiles:
        return kept, valid
    return kept, valid, [s for s, ok in zip(smiles, valid) if ok]


#: Fewer molecules than this are featurized in the calling process whatever ``n_jobs``:
#: starting workers and sending them the SMILES and the graphs back costs more
#: (``benchmarks/bench_featurization_n_jobs.py``; the "Your own molecules" guide).
_MIN_PARALLEL = 512

#: Molecules per chunk of featurization when a progress bar follows it.
_PROGRESS_CHUNK = 1024


class DescribedGraph:
    """A molecule's graph with one row of molecule-level features (``mol_features``).

    Reads as the graph it wraps (``atom_features``, ``edge_index``...), so the collate
    functions batch it as any graph; :func:`~sklearn_papers.nn._graph.collate_graphs`
    stacks the ``mol_features`` rows into the batch's ``mol_features`` tensor.

    Parameters
    ----------
    graph : MolGraph
        The graph.
    mol_features : ndarray of shape (n_mol_features,)
        Raw descriptors (from the featurizer and the cache) or their normalized values
        (what the network sees).
    """

    def __init__(self, graph, mol_features):
        self.graph = graph
        self.mol_features = mol_features

    def __getattr__(self, name):
        if name.startswith("__") or name in ("graph", "mol_features"):
            raise AttributeError(name)
        return getattr(self.graph, name)


def _parse_and_featurize(values, start, standardize, fn, kwargs, describe=None):
    """Steps 2 to 4 on the entries ``values``, which start at position ``start`` of the
    input: parse, standardize, featurize (runs in a joblib worker).

    Returns ``(ok, graphs, invalid, multi)``: the positions of the valid entries, their
    graphs, the invalid entries and the positions of multi-fragment molecules, all
    positions in the input (shifted by ``start``). With ``describe`` (molecules -> rows
    of raw descriptors, a module-level function: workers pickle it), each graph is a
    :class:`DescribedGraph` holding the raw RDKit descriptors of its (standardized)
    molecule.
    """
    with no_cyclic_gc():
        mols, invalid = parse_molecules(values)
        mols, invalid, smiles, multi = standardize_entries(values, mols, invalid,
                                                           standardize)
        ok = [i for i, mol in enumerate(mols) if mol is not None]
        graphs = fn([mols[i] for i in ok], smiles=[smiles[i] for i in ok], **kwargs)
        if describe is not None:
            raw = describe([mols[i] for i in ok])
            graphs = [DescribedGraph(graph, row) for graph, row in zip(graphs, raw)]
    if start:
        ok = [start + i for i in ok]
        invalid = [InvalidMolecule(start + e.index, e.value, e.reason) for e in invalid]
        multi = [start + i for i in multi]
    return ok, graphs, invalid, multi


def _featurize_entries(estimator, values, names, inputs):
    """:func:`_parse_and_featurize` of ``values`` (with the molecule-level features
    ``names`` of the estimator's ``_mol_features_key``, computed by its ``_describer``,
    and its ``_input_params`` ``inputs``), in chunks.

    Over ``n_jobs`` joblib workers for ``_MIN_PARALLEL`` entries or more (each parses and
    featurizes its chunk), in this process otherwise (one chunk). Whether a progress bar
    shows (the estimator's ``verbose``) is decided here, once; with one, the chunks hold
    at most ``_PROGRESS_CHUNK`` entries."""
    from joblib import Parallel, delayed, effective_n_jobs

    from sklearn_papers.nn._progress import progress, shows_progress

    standardize = inputs["standardize"]
    fn, kwargs = estimator._featurizer(inputs)
    describe = None if names is None else estimator._describer(names)
    n_jobs = effective_n_jobs(getattr(estimator, "n_jobs", None))
    verbose = getattr(estimator, "verbose", 0)
    n = len(values)
    shown = shows_progress(verbose, n)
    in_process = n_jobs == 1 or n < _MIN_PARALLEL
    size = n if in_process else -(-n // (4 * n_jobs))
    if shown:
        size = min(size, _PROGRESS_CHUNK)
    starts = range(0, n, size)
    if in_process:
        chunks = (_parse_and_featurize(values[start:start + size], start, standardize, fn,
                                       kwargs, describe) for start in starts)
    else:
        chunks = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_parse_and_featurize)(values[start:start + size], start, standardize,
                                          fn, kwargs, describe) for start in starts)
    if shown:
        chunks = progress(chunks, verbose=verbose, n_items=n, total=len(starts),
                          desc=f"{type(estimator).__name__} featurizing", unit="chunk")
    found = ([], [], [], [])  # ok, graphs, invalid, multi: the chunks' in order
    for chunk in chunks:
        for whole, part in zip(found, chunk):
            whole.extend(part)
    return found


def molecule_graphs(estimator, X, *, fitted=False):
    """Graphs of the valid molecules of ``X`` in order, and the validity mask: steps 1 to
    5 for a graph estimator (``fitted``: with the settings of ``fit``, for prediction).

    With the estimator's ``graph_cache``, the graphs of SMILES strings already featurized
    with the same settings come from it, and only the others are parsed and featurized.

    Parameters
    ----------
    estimator : graph estimator
        Its hooks ``_input_params``, ``_mol_features_key``, ``_describer``,
        ``_graph_settings`` and ``_featurizer`` decide the steps; its ``errors`` the report.
    X : array-like of shape (n_samples,) or (n_samples, 1)
        SMILES strings or RDKit ``Mol`` objects.
    fitted : bool, default=False
        Prepare the molecules as in ``fit`` (the parameters kept then).

    Returns
    -------
    graphs : list
        One graph (:class:`DescribedGraph` with descriptors) per valid molecule.
    valid : ndarray of shape (n_samples,), dtype=bool
    """
    values, labels = read_molecules(X)
    inputs = estimator._input_params(fitted)
    cache = getattr(estimator, "graph_cache", None)
    settings = None
    names = estimator._mol_features_key(fitted)
    if cache is None:
        found = [None] * len(values)
    else:
        settings = (estimator._graph_settings(inputs), inputs["standardize"], names)
        found = cache._lookup(settings, values)
    missing = [i for i, entry in enumerate(found) if entry is None]
    invalid, multi = [], [i for i, e in enumerate(found) if e is not None and e[1]]
    if missing:
        ok, graphs, sub_invalid, sub_multi = _featurize_entries(
            estimator, values if cache is None else values[missing], names, inputs)
        several = set(sub_multi)
        entries = [(graph, j in several) for graph, j in zip(graphs, ok)]
        for j, entry in zip(ok, entries):
            found[missing[j]] = entry
        if cache is not None:
            cache._store_graphs(settings, [values[missing[j]] for j in ok], entries)
        invalid = [type(e)(missing[e.index], e.value, e.reason) for e in sub_invalid]
        multi = sorted(multi + [missing[j] for j in sub_multi])
    valid = report_entries(invalid, multi, values, errors=estimator.errors,
                           estimator=type(estimator).__name__, labels=labels)
    return [entry[0] for entry in found if entry is not None], valid


def described_graphs(estimator, graphs, *, fit, counted=None):
    """Graphs with their normalized descriptors (float32) as ``mol_features``: the end of
    step 4 for a graph estimator with ``descriptors``.

    Parameters
    ----------
    estimator : graph estimator
        Its hook ``_mol_feature_rows`` normalizes the raw rows (with ``descriptors_``);
        with ``fit``, its hook ``_fit_descriptors`` fits them first.
    graphs : list
        From :func:`molecule_graphs`: :class:`DescribedGraph` with raw descriptors, or
        plain graphs without ``descriptors``.
    fit : bool
        Fit ``descriptors_`` on the graphs' raw rows (the training molecules).
    counted : ndarray of shape (len(graphs),), dtype=bool, default=None
        With ``fit``, the rows the fit reads (those of positive weight) when it holds
        some but not all; None: every row.

    Returns
    -------
    graphs : list
        :class:`DescribedGraph` with the normalized rows, or the graphs as they came
        (``descriptors_`` set to None with ``fit``) without descriptors.
    """
    if not graphs or not isinstance(graphs[0], DescribedGraph):
        if fit:
            estimator.descriptors_ = None
        return graphs
    raw = np.stack([graph.mol_features for graph in graphs])
    if fit:
        use = counted is not None and np.any(counted) and not np.all(counted)
        estimator._fit_descriptors(raw[np.asarray(counted)] if use else raw)
    rows = estimator._mol_feature_rows(raw).astype(np.float32, copy=False)
    return [DescribedGraph(graph.graph, row) for graph, row in zip(graphs, rows)]


def set_molecule_input_attributes(estimator, X):
    """Set ``n_features_in_`` (and ``feature_names_in_``) of a molecule estimator in fit.

    Every molecule estimator takes one column of molecules, so ``n_features_in_`` is
    always 1 (a 1-D array counts as one column, as a ``ColumnTransformer`` column
    selection gives). ``feature_names_in_`` is the column's name when ``X`` is a
    one-column DataFrame with a string column name, and is removed otherwise (a stale
    one from an earlier fit).

    Parameters
    ----------
    estimator : estimator instance
        Modified in place.
    X : array-like of shape (n_samples,) or (n_samples, 1)
        The molecules ``fit`` was given (already validated).
    """
    estimator.n_features_in_ = 1
    columns = getattr(X, "columns", None)
    if columns is not None and len(columns) == 1 and isinstance(columns[0], str):
        estimator.feature_names_in_ = np.asarray(list(columns), dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
