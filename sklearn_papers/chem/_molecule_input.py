"""The molecule input of the estimators, in one pass and in this order:

1. read: ``X`` as a 1-D object array of entries, with the row labels of a pandas input
   (:func:`~sklearn_papers.chem._parse.as_molecule_array`,
   :func:`~sklearn_papers.chem._parse.row_labels`);
2. parse: SMILES strings and ``Mol`` objects to RDKit molecules, the invalid entries named
   (:func:`~sklearn_papers.chem._parse.parse_molecules`);
3. standardize: the steps of the ``standardize`` parameter
   (:func:`~sklearn_papers.chem._standardization.standardize_parsed`);
4. featurize: the estimator's featurizer on the standardized molecules, with the RDKit
   descriptors of ``descriptors`` (:class:`DescribedGraph`);
5. report: the invalid entries raised or masked (``errors``), and one
   :class:`~sklearn_papers.chem.MultipleFragmentsWarning` without standardization
   (:func:`~sklearn_papers.chem._report.report_entries`).

Each step runs once per entry. :func:`prepared_molecules` runs steps 1, 2, 3 and 5 for
the estimators that featurize the molecules themselves; :func:`molecule_graphs` runs the
five for the graph estimators. With a ``graph_cache``, steps 2 to 4 run only for the
entries not cached; with ``n_jobs``, steps 2 to 4 run on chunks of entries in joblib
workers (only strings go out and graphs come back). The steps' primitives live in leaf
modules that import nothing of this one; this module holds their order.
"""

from sklearn_papers.chem._parse import (
    InvalidMolecule,
    as_molecule_array,
    no_cyclic_gc,
    parse_molecules,
    row_labels,
)
from sklearn_papers.chem._report import report_entries
from sklearn_papers.chem._standardization import n_multi_fragment, standardize_parsed

__all__ = ["DescribedGraph", "molecule_graphs", "parse_and_standardize",
           "prepared_molecules", "valid_molecules"]


def parse_and_standardize(values, steps, *, verbose=0, desc=None):
    """Steps 2 and 3 on entries: parse ``values``, then apply the standardization
    ``steps``.

    Parameters
    ----------
    values : ndarray of shape (n_samples,), dtype=object
        From :func:`~sklearn_papers.chem._parse.as_molecule_array`.
    steps : tuple of 4 bool or None
        The resolved ``standardize`` parameter
        (:func:`~sklearn_papers.chem._standardize.resolve_standardize`); None: no
        standardization.
    verbose : int, default=0
        A progress bar over the standardization, labelled ``desc``.
    desc : str or None, default=None

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None
    invalid : list of InvalidMolecule
        Unparsable entries and molecules RDKit could not standardize, in input order.
    smiles : list of str or None
        The SMILES each molecule was read from by ``Chem.MolFromSmiles`` (the input string,
        or the canonical SMILES of the standardized form; None for ``Mol`` inputs without
        standardization), for the featurizers' shortcuts.
    multi : list of int
        Without standardization, the positions of the molecules with several fragments
        (for the report step); empty with it.
    """
    mols, invalid = parse_molecules(values)
    if steps is None:
        smiles = [v if isinstance(v, str) and m is not None else None
                  for v, m in zip(values, mols)]
        return mols, invalid, smiles, n_multi_fragment(values, mols)
    mols, smiles, failed = standardize_parsed(mols, steps, values, verbose=verbose,
                                              desc=desc)
    if failed:
        invalid = sorted(invalid + [InvalidMolecule(i, values[i], why) for i, why in failed],
                         key=lambda e: e.index)
    return mols, invalid, smiles, []


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
        As :func:`parse_and_standardize` gives them.
    valid : ndarray of shape (n_samples,), dtype=bool

    Raises
    ------
    ValueError
        For a bare string, a wrong shape, no entries, or (``errors="raise"``) invalid
        entries, naming their index, value and reason.
    TypeError
        For sparse matrices, torch tensors and non-array-like input.
    """
    values, labels = as_molecule_array(X), row_labels(X)
    mols, invalid, smiles, multi = parse_and_standardize(values, steps, verbose=verbose,
                                                         desc=estimator)
    valid = report_entries(invalid, multi, values, errors=errors, estimator=estimator,
                           labels=labels)
    return mols, smiles, valid


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
        mols, invalid, smiles, multi = parse_and_standardize(values, standardize)
        ok = [i for i, mol in enumerate(mols) if mol is not None]
        graphs = fn([mols[i] for i in ok], smiles=[smiles[i] for i in ok], **kwargs)
        if describe is not None:
            raw = describe([mols[i] for i in ok])
            graphs = [DescribedGraph(g, row) for g, row in zip(graphs, raw)]
    if start:
        ok = [start + i for i in ok]
        invalid = [InvalidMolecule(start + e.index, e.value, e.reason) for e in invalid]
        multi = [start + i for i in multi]
    return ok, graphs, invalid, multi


def _featurize_entries(estimator, values, names, inputs):
    """:func:`_parse_and_featurize` of ``values`` (with the descriptors ``names``, computed
    by the estimator's ``_describer``, and its ``_input_params`` ``inputs``), over ``n_jobs`` joblib workers for
    ``_MIN_PARALLEL`` entries or more (each parses and featurizes its chunk), in this
    process otherwise. With a progress bar (the estimator's ``verbose``), the entries go
    in chunks of at most ``_PROGRESS_CHUNK``."""
    from joblib import Parallel, delayed, effective_n_jobs

    from sklearn_papers.nn._progress import progress, shows_progress

    standardize = inputs["standardize"]
    fn, kwargs = estimator._featurizer(inputs)
    describe = None if names is None else estimator._describer(names)
    n_jobs = effective_n_jobs(getattr(estimator, "n_jobs", None))
    verbose = getattr(estimator, "verbose", 0)
    shown = shows_progress(verbose, len(values))
    in_process = n_jobs == 1 or len(values) < _MIN_PARALLEL
    if in_process and not shown:
        return _parse_and_featurize(values, 0, standardize, fn, kwargs, describe)
    if in_process:  # in chunks, for the bar
        size = _PROGRESS_CHUNK
        starts = range(0, len(values), size)
        chunks = (_parse_and_featurize(values[start:start + size], start, standardize, fn,
                                       kwargs, describe) for start in starts)
    else:
        size = -(-len(values) // (4 * n_jobs))
        if shown:
            size = min(size, _PROGRESS_CHUNK)
        starts = range(0, len(values), size)
        chunks = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_parse_and_featurize)(values[start:start + size], start, standardize,
                                          fn, kwargs, describe) for start in starts)
    chunks = progress(chunks, verbose=verbose, n_items=len(values), total=len(starts),
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
        Its hooks ``_input_params``, ``_descriptor_names``, ``_describer``,
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
    values, labels = as_molecule_array(X), row_labels(X)
    inputs = estimator._input_params(fitted)
    cache = getattr(estimator, "graph_cache", None)
    settings = None
    names = estimator._descriptor_names(fitted)
    if cache is None:
        found = [None] * len(values)
    else:
        settings = (estimator._graph_settings(inputs), inputs["standardize"],
                    None if names is None else tuple(names))
        found = cache._lookup(settings, values)
    missing = [i for i, entry in enumerate(found) if entry is None]
    invalid, multi = [], [i for i, e in enumerate(found) if e is not None and e[1]]
    if missing:
        sub = values[missing] if cache is not None else values
        ok, graphs, sub_invalid, sub_multi = _featurize_entries(estimator, sub, names,
                                                                inputs)
        several = set(sub_multi)
        entries = [(g, j in several) for g, j in zip(graphs, ok)]
        for j, entry in zip(ok, entries):
            found[missing[j]] = entry
        if cache is not None:
            cache._store_graphs(settings, [sub[j] for j in ok], entries)
        invalid = [type(e)(missing[e.index], e.value, e.reason) for e in sub_invalid]
        multi = sorted(multi + [missing[j] for j in sub_multi])
    valid = report_entries(invalid, multi, values, errors=estimator.errors,
                           estimator=type(estimator).__name__, labels=labels)
    return [entry[0] for entry in found if entry is not None], valid


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
