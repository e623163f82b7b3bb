"""The molecule input of the estimators, in one pass and in this order:

1. read: ``X`` as a 1-D object array of entries, with the row labels of a pandas input
   (:func:`~sklearn_papers.chem._validation.as_molecule_array`, ``row_labels``);
2. parse: SMILES strings and ``Mol`` objects to RDKit molecules, the invalid entries named
   (:func:`~sklearn_papers.chem._validation.parse_molecules`);
3. standardize: the steps of the ``standardize`` parameter
   (:func:`~sklearn_papers.chem._standardize.standardize_parsed`);
4. featurize: the estimator's featurizer on the standardized molecules, with the RDKit
   descriptors of ``descriptors`` (:class:`DescribedGraph`);
5. report: the invalid entries raised or masked (``errors``), and one
   :class:`~sklearn_papers.chem.MultipleFragmentsWarning` without standardization.

Each step runs once per entry. With a ``graph_cache``, steps 2 to 4 run only for the
entries not cached; with ``n_jobs``, steps 2 to 4 run on chunks of entries in joblib
workers (only strings go out and graphs come back). The steps' own modules hold the
primitives; this module holds their order.
"""

import numpy as np

from sklearn_papers.chem._standardize import (
    n_multi_fragment,
    resolve_standardize,
    standardize_parsed,
    warn_multiple_fragments,
)
from sklearn_papers.chem._validation import (
    InvalidMolecule,
    as_molecule_array,
    no_cyclic_gc,
    parse_molecules,
    raise_or_mask,
    row_labels,
)

__all__ = ["DescribedGraph", "molecule_graphs", "parse_and_standardize", "valid_molecules"]


def parse_and_standardize(values, standardize):
    """Steps 2 and 3 on entries: parse ``values``, then apply the ``standardize``
    parameter of an estimator.

    Parameters
    ----------
    values : ndarray of shape (n_samples,), dtype=object
        From :func:`~sklearn_papers.chem._validation.as_molecule_array`.
    standardize : bool or MoleculeStandardizer
        The estimator's parameter.

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
        (for :func:`warn_multiple_fragments`); empty with it.
    """
    mols, invalid = parse_molecules(values)
    steps = resolve_standardize(standardize)
    if steps is None:
        smiles = [v if isinstance(v, str) and m is not None else None
                  for v, m in zip(values, mols)]
        return mols, invalid, smiles, n_multi_fragment(values, mols)
    mols, smiles, failed = standardize_parsed(mols, steps, values)
    if failed:
        invalid = sorted(invalid + [InvalidMolecule(i, values[i], why) for i, why in failed],
                         key=lambda e: e.index)
    return mols, invalid, smiles, []


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


def _parse_and_featurize(values, standardize, fn, kwargs, describe=None):
    """Steps 2 to 4 on entries: parse, standardize, featurize (runs in a joblib worker).

    Returns ``(ok, graphs, invalid, multi)``: the positions of the valid entries, their
    graphs, the invalid entries and the positions of multi-fragment molecules, all
    positions relative to ``values``. With ``describe`` (molecules -> rows of raw
    descriptors, a module-level function: workers pickle it), each graph is a
    :class:`DescribedGraph` holding the raw RDKit descriptors of its (standardized)
    molecule.
    """
    with no_cyclic_gc():
        mols, invalid, smiles, multi = parse_and_standardize(values, standardize)
        ok = [j for j, m in enumerate(mols) if m is not None]
        graphs = fn([mols[j] for j in ok], smiles=[smiles[j] for j in ok], **kwargs)
        if describe is not None:
            raw = describe([mols[j] for j in ok])
            graphs = [DescribedGraph(g, row) for g, row in zip(graphs, raw)]
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
        return _parse_and_featurize(values, standardize, fn, kwargs, describe)
    if in_process:  # in chunks, for the bar
        size = _PROGRESS_CHUNK
        parts = (_parse_and_featurize(values[s:s + size], standardize, fn, kwargs, describe)
                 for s in range(0, len(values), size))
    else:
        size = -(-len(values) // (4 * n_jobs))
        if shown:
            size = min(size, _PROGRESS_CHUNK)
        parts = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_parse_and_featurize)(values[s:s + size], standardize, fn, kwargs,
                                          describe)
            for s in range(0, len(values), size))
    starts = range(0, len(values), size)
    parts = progress(parts, verbose=verbose, n_items=len(values), total=len(starts),
                     desc=f"{type(estimator).__name__} featurizing", unit="chunk")
    ok, graphs, invalid, multi = [], [], [], []
    for s, (p_ok, p_graphs, p_invalid, p_multi) in zip(starts, parts):
        ok.extend(s + j for j in p_ok)
        graphs.extend(p_graphs)
        invalid.extend(type(e)(s + e.index, e.value, e.reason) for e in p_invalid)
        multi.extend(s + j for j in p_multi)
    return ok, graphs, invalid, multi


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
    values = as_molecule_array(X)
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
    labels = row_labels(X)
    valid = raise_or_mask(invalid, len(values), errors=estimator.errors, labels=labels)
    warn_multiple_fragments(multi, values, len(values), type(estimator).__name__,
                            labels=labels)
    return [entry[0] for entry in found if entry is not None], valid


def valid_molecules(estimator, X, *, with_smiles=False):
    """The valid molecules of ``X`` in order and the validity mask (and, with
    ``with_smiles``, the SMILES each was read from, None for a ``Mol`` input): steps 1
    to 3 and 5, for an estimator that featurizes the molecules itself (GROVER's
    pretraining).

    Applies the estimator's ``standardize``; without it, warns once about multi-fragment
    molecules.
    """
    values = as_molecule_array(X)
    mols, invalid, smiles, multi = parse_and_standardize(
        values, estimator._input_params()["standardize"])
    labels = row_labels(X)
    valid = raise_or_mask(invalid, len(values), errors=estimator.errors, labels=labels)
    warn_multiple_fragments(multi, values, len(values), type(estimator).__name__,
                            labels=labels)
    kept = [m for m in mols if m is not None]
    if not with_smiles:
        return kept, valid
    return kept, valid, [s for s, ok in zip(smiles, valid) if ok]
