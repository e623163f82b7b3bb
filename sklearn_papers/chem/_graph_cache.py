"""A bounded, shared cache of molecule graphs for the graph estimators."""

import threading
import uuid
from collections import OrderedDict
from numbers import Integral

__all__ = ["GraphCache"]

#: Stores that unpickled caches of this process can attach to: ``token -> _Store``. Only
#: the most recent few are kept here (each cache object holds its own store anyway), so
#: the registry itself never grows without bound.
_REGISTRY = OrderedDict()
_REGISTRY_SIZE = 4
_REGISTRY_LOCK = threading.Lock()


class _Store:
    """The least-recently-used table behind a :class:`GraphCache` (thread-safe)."""

    def __init__(self):
        self.table = OrderedDict()
        self.lock = threading.Lock()
        self.hits = 0
        self.misses = 0


def _attach(token):
    """The store of ``token`` in this process, created (and registered) if needed."""
    with _REGISTRY_LOCK:
        store = _REGISTRY.get(token)
        if store is None:
            store = _REGISTRY[token] = _Store()
        _REGISTRY.move_to_end(token)
        while len(_REGISTRY) > _REGISTRY_SIZE:
            _REGISTRY.popitem(last=False)
    return store


class GraphCache:
    """Molecule graphs featurized once, shared by the graph estimators that are given it.

    Pass one ``GraphCache`` as the ``graph_cache`` parameter of
    :class:`NeuralFingerprint`, :class:`MPNN`, :class:`GroverFeaturizer` (and their
    regressors and classifiers). Each estimator then looks up the graph of every SMILES
    string it featurizes (in ``fit``, ``transform``, ``predict``) before parsing it, and
    stores the graphs it computes. The key is the SMILES string as given, the estimator's
    featurizer settings (the feature sets and, for the MPNN, ``explicit_hydrogens``) and
    its ``standardize`` setting, so estimators whose graphs differ never share an entry,
    and estimators of one family with different network parameters do. Inside one
    ``GridSearchCV`` the clones of an estimator share the cache (``clone`` and
    ``copy.deepcopy`` return the cache itself), so every molecule is featurized once
    over all folds and parameter points.

    Bounded: at most ``max_molecules`` graphs are kept, the least recently used ones are
    dropped first. Measured on ESOL (13 heavy atoms per molecule on average), a graph
    takes about 4.4 kB (neural fingerprint), 3.7 kB (MPNN) or 9.9 kB (GROVER); a graph
    grows about linearly with the molecule, so the default of 100,000 drug-like molecules
    (25-30 heavy atoms) holds at most about 1-2 GB. :attr:`nbytes` says what it holds.

    What it does not do:

    * ``Mol`` inputs, and invalid entries, are not cached (they are featurized each
      time): the key is the SMILES string.
    * Pickling keeps ``max_molecules`` and an identity, never the graphs: a saved model
      does not carry them. An unpickled cache in a process that already holds the
      original (or another copy unpickled earlier there) shares its graphs, so the worker
      processes of ``GridSearchCV(n_jobs=k)`` each build one cache that their tasks
      share; in a fresh process it starts empty. For that, each process keeps the
      graphs of its 4 most recently made or unpickled caches reachable after the cache
      objects are gone: :meth:`clear` frees them at once.
    * Entries never go stale: graphs depend only on the key.

    Parameters
    ----------
    max_molecules : int, default=100_000
        Most graphs kept (per featurizer setting together); at least 1.

    Attributes
    ----------
    hits : int
        Lookups answered from the cache since it was made (in this process).
    misses : int
        Lookups of SMILES strings that had to be featurized.

    See Also
    --------
    sklearn_papers.chem.NeuralFingerprint : A graph estimator taking ``graph_cache``.

    References
    ----------
    .. [1] E. Heid et al., "Chemprop: A Machine Learning Package for Chemical Property
       Prediction", J. Chem. Inf. Model. 64(1), 2024 (featurize each molecule once and
       keep its graph for every epoch and model). https://doi.org/10.1021/acs.jcim.3c01250

    Examples
    --------
    >>> from sklearn_papers.chem import GraphCache, MPNN
    >>> cache = GraphCache(max_molecules=1000)
    >>> X = ["CCO", "c1ccccc1", "CC(=O)O"]
    >>> _ = MPNN(hidden_size=8, graph_cache=cache, random_state=0).fit(X)
    >>> _ = MPNN(hidden_size=16, graph_cache=cache, random_state=0).fit(X)
    >>> len(cache), cache.hits, cache.misses
    (3, 3, 3)
    """

    def __init__(self, max_molecules=100_000):
        if isinstance(max_molecules, bool) or not isinstance(max_molecules, Integral) \
                or max_molecules < 1:
            raise ValueError(
                f"max_molecules must be an int >= 1, got {max_molecules!r}.")
        self.max_molecules = int(max_molecules)
        self._token = uuid.uuid4().hex
        self._store = _attach(self._token)

    # -- sharing: clone/deepcopy give the cache itself, pickling never carries graphs ----
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        return {"max_molecules": self.max_molecules, "_token": self._token}

    def __setstate__(self, state):
        self.max_molecules = state["max_molecules"]
        self._token = state["_token"]
        self._store = _attach(self._token)

    def __repr__(self):
        return f"GraphCache(max_molecules={self.max_molecules})"

    # -- public -----------------------------------------------------------------------
    def __len__(self):
        return len(self._store.table)

    @property
    def hits(self):
        return self._store.hits

    @property
    def misses(self):
        return self._store.misses

    @property
    def nbytes(self):
        """Bytes of the numpy arrays of the cached graphs (int)."""
        import numpy as np

        with self._store.lock:
            entries = list(self._store.table.values())
        def size(obj):
            if isinstance(obj, np.ndarray):
                return obj.nbytes
            if isinstance(obj, tuple):
                return sum(size(p) for p in obj)
            if hasattr(obj, "__dict__"):  # a graph with its descriptors, GROVER graphs
                return sum(size(p) for p in vars(obj).values())
            return 0

        return sum(size(graph) for graph, _ in entries)

    def clear(self):
        """Drop every cached graph and reset :attr:`hits` and :attr:`misses`."""
        with self._store.lock:
            self._store.table.clear()
            self._store.hits = self._store.misses = 0

    # -- used by the estimators --------------------------------------------------------
    def _lookup(self, settings, values):
        """For each entry of ``values``: ``(graph, n_fragments > 1)`` or None."""
        store = self._store
        out = [None] * len(values)
        with store.lock:
            table = store.table
            for i, value in enumerate(values):
                if not isinstance(value, str):
                    continue
                key = (settings, str(value))
                entry = table.get(key)
                if entry is None:
                    store.misses += 1
                    continue
                table.move_to_end(key)
                store.hits += 1
                out[i] = entry
        return out

    def _store_graphs(self, settings, smiles, entries):
        """Keep ``(graph, multi_fragment)`` of each SMILES string (others skipped)."""
        store = self._store
        with store.lock:
            table = store.table
            for value, entry in zip(smiles, entries):
                if not isinstance(value, str):
                    continue
                key = (settings, str(value))
                table[key] = entry
                table.move_to_end(key)
            while len(table) > self.max_molecules:
                table.popitem(last=False)
