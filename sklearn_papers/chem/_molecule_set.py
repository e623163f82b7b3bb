"""A regression set of molecules with its featurizations computed once: ECFP bits per
radius at :data:`MAX_BITS` bits, folded to any smaller power of two (Duvenaud et al. 2015
search the fingerprint length; folding makes every length one Morgan computation), and
molecular graphs in a :class:`~sklearn_papers.chem.GraphCache` per process."""

from dataclasses import dataclass, field

import numpy as np

from sklearn_papers.chem._ecfp import _fold_bits

__all__ = []

#: Fingerprint length computed; shorter ones are folded from it (exact for powers of two:
#: RDKit's Morgan generator maps each 32-bit identifier to ``id % fpSize``).
MAX_BITS = 2048

#: ``{(set name, digest of its SMILES): GraphCache}`` of the set this process fits now:
#: parts come set by set, so a worker featurizes each molecule about once instead of
#: being sent the graphs with every part.
_GRAPH_CACHES = {}


@dataclass
class DatasetData:
    """A named regression set: its SMILES and float targets, with the molecules and
    fingerprints computed once."""

    name: str
    smiles: np.ndarray
    y: np.ndarray
    _mols: list = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def mols(self):
        """RDKit molecules, parsed once (raises on invalid SMILES, naming them)."""
        if self._mols is None:
            from sklearn_papers.chem import check_molecules

            self._mols, _ = check_molecules(self.smiles)
        return self._mols

    def bits(self, radius):
        """ECFP bits ``(n_samples, MAX_BITS)`` of ``radius`` (uint8), computed once."""
        if radius not in self._cache:
            from sklearn_papers.chem import CircularFingerprint

            self._cache[radius] = CircularFingerprint(radius, MAX_BITS).transform(self.mols)
        return self._cache[radius]

    def fingerprints(self, radius, n_bits, dtype=np.float64):
        """ECFP bits ``(n_samples, n_bits)``, cached per radius at MAX_BITS and folded."""
        return _fold_bits(self.bits(radius), n_bits).astype(dtype)

    def slim(self, radius=None):
        """A copy holding what one fit needs, sent to a worker with every part: the SMILES,
        the targets and, if given, the bits of ``radius``."""
        cache = {} if radius is None else {radius: self.bits(radius)}
        return DatasetData(self.name, self.smiles, self.y, _cache=cache)

    def graph_cache(self):
        """The :class:`~sklearn_papers.chem.GraphCache` shared by every fit on this set in
        this process (the one of the previous set is cleared)."""
        import hashlib

        from sklearn_papers.chem import GraphCache

        key = (self.name, hashlib.sha1("\n".join(map(str, self.smiles)).encode()).hexdigest())
        if key not in _GRAPH_CACHES:
            for old in _GRAPH_CACHES.values():
                old.clear()
            _GRAPH_CACHES.clear()
            _GRAPH_CACHES[key] = GraphCache()
        return _GRAPH_CACHES[key]
