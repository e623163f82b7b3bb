"""Step 3 of the molecule input (:mod:`~sklearn_papers.chem._molecule_input`): RDKit's
``rdMolStandardize`` steps on parsed molecules, each molecule once per call and per set of
steps.

The transformer :class:`~sklearn_papers.chem.MoleculeStandardizer` and the
``standardize`` parameters name the steps (:mod:`~sklearn_papers.chem._standardize`);
this module applies them (:func:`standardize_entries`). A leaf: it imports only
:mod:`~sklearn_papers.chem._parse` (:class:`~sklearn_papers.chem._parse.InvalidMolecule`,
:func:`~sklearn_papers.chem._parse.no_cyclic_gc`).
"""

import contextlib
import contextvars

from sklearn_papers.chem._parse import InvalidMolecule, no_cyclic_gc

__all__ = ["n_multi_fragment", "standardization_memo", "standardize_entries",
           "standardize_parsed"]

#: Reason given for a mixture of inorganic fragments when the parent is to be kept.
NO_PARENT_REASON = (
    "no organic fragment: a salt or mixture of inorganic parts has no parent molecule "
    "(the largest organic fragment) to keep; fix the entry, or keep every fragment with "
    "MoleculeStandardizer(largest_fragment=False)")


#: Reason given for one molecule as drawn that cleanup split into inorganic parts only
#: (a metal complex such as cisplatin): not a salt, and keeping every fragment would not
#: keep the molecule drawn.
NO_PARENT_DISCONNECTED_REASON = (
    "no organic fragment: one molecule as drawn, but cleanup disconnected its metal atoms, "
    "leaving inorganic parts only, none of which is a parent molecule (the largest "
    "organic fragment) to keep; fix the entry, or keep it as drawn with "
    "MoleculeStandardizer(cleanup=False)")


#: Reason given for a molecule whose standardized form RDKit cannot read back from its
#: SMILES (``{smiles}``): the same verdict on every standardization route.
UNREADABLE_REASON = (
    "standardization gave {smiles}, which RDKit cannot read back (its rings do not "
    "kekulize, as with the neutralized ligands of a metallocene such as ferrocene); "
    "featurize it as drawn (standardize=False), keep the complex whole "
    "(MoleculeStandardizer(largest_fragment=False)), or leave it out")


class _NoParent(ValueError):
    """A multi-fragment molecule without an organic fragment, when the parent is kept."""


def _no_organic_fragment(mol):
    """Whether ``mol`` has several fragments and no carbon atom in any of them.

    RDKit's ``LargestFragmentChooser(preferOrganic=True)`` calls a fragment organic when
    it holds a carbon atom, and falls back to the largest inorganic fragment when none
    does (``"[Na+].[Cl-]"`` would become ``"Cl"``). A single fragment is the molecule the
    user drew, organic or not (water, ammonia, a metal atom, a lone ion), and is kept.
    """
    from rdkit import Chem

    if len(Chem.GetMolFrags(mol)) < 2:
        return False
    return not any(atom.GetAtomicNum() == 6 for atom in mol.GetAtoms())


#: SMARTS of the atoms RDKit's ``Reionizer`` may change a molecule for: its charge
#: corrections act on unbonded atoms (metal ions, a lone ``[Cl]``), its acid-base swaps on
#: charged atoms; any element outside the organic subset of SMILES is searched too. A
#: molecule without such an atom is left unchanged, and the reionizer is not run on it.
_REIONIZER_SITES = ("[!#1&!#5&!#6&!#7&!#8&!#9&!#14&!#15&!#16&!#17&!#34&!#35&!#53,"
                    "!+0,D0]")

#: SMARTS of the atoms any step of ``Cleanup`` after ``RemoveHs`` may change a molecule
#: for: the reionizer's sites (above; they hold every metal atom the ``MetalDisconnector``
#: acts on), and the atoms of the ``Normalizer``'s transforms that need no charged atom:
#: a sulfoxide's sulfur, an N-oxide drawn ``n=O``, a nitro-like group drawn with two double
#: bonds, an azide or diazo group drawn with a triple bond. Every other transform matches
#: a charged atom. A molecule without such an atom is left unchanged by the three steps.
_CLEANUP_SITES = (_REIONIZER_SITES[:-1]
                  + ",$([#16;X3]=[#8]),$([#7,#15,#33,#51;X3](=[#8,#16,#34,#52])"
                    "=[#8,#16,#34,#52]),$([#7;a]=[#8]),$([#7]#[#7])]")


class _Steps:
    """The ``rdMolStandardize`` objects of one set of steps, built once per call (their
    construction costs more than applying them to a small molecule).

    ``rdMolStandardize.Cleanup(mol)`` is ``RemoveHs``, ``MetalDisconnector``, then
    ``Normalizer`` and ``Reionizer`` (both built from ``CleanupParameters`` on every call,
    which parses their SMARTS each time) and ``AssignStereochemistry(cleanIt=True,
    force=True)``. Here the same objects are built once and applied in the same order,
    and the steps that leave a molecule unchanged are skipped: ``RemoveHs`` without
    hydrogen atoms (the parsed molecule is already sanitized), the ``Reionizer`` on a
    molecule of organic elements without charged, radical or unbonded atoms, the
    ``MetalDisconnector`` and the ``Normalizer`` too when no atom matches
    :data:`_CLEANUP_SITES` either, the ``LargestFragmentChooser`` on a single fragment
    that no cleanup step changed, the ``Uncharger`` without charged atoms.
    ``tests/chem/test_standardize.py`` checks the SMILES against ``Cleanup`` and the RDKit
    objects applied one by one.
    """

    def __init__(self, cleanup, largest_fragment, neutralize, canonical_tautomer):
        from rdkit import Chem
        from rdkit.Chem.MolStandardize import rdMolStandardize

        self.hydrogen = Chem.MolFromSmarts("[#1]")
        self.charged = Chem.MolFromSmarts("[!+0]")
        self.reionizer_sites = Chem.MolFromSmarts(_REIONIZER_SITES)
        self.cleanup_sites = Chem.MolFromSmarts(_CLEANUP_SITES)
        self.cleanup = cleanup
        if cleanup:
            params = rdMolStandardize.CleanupParameters()
            self.disconnector = rdMolStandardize.MetalDisconnector()
            self.normalizer = rdMolStandardize.NormalizerFromParams(params)
            self.reionizer = rdMolStandardize.Reionizer()
        self.chooser = (rdMolStandardize.LargestFragmentChooser(preferOrganic=True)
                        if largest_fragment else None)
        self.uncharger = rdMolStandardize.Uncharger() if neutralize else None
        self.tautomers = (rdMolStandardize.TautomerEnumerator() if canonical_tautomer
                          else None)

    def _cleanup(self, mol):
        """``rdMolStandardize.Cleanup(mol)``, as a new molecule."""
        from rdkit import Chem

        has_h = mol.HasSubstructMatch(self.hydrogen)
        mol = Chem.RWMol(Chem.RemoveHs(mol) if has_h else mol)
        self.disconnector.DisconnectInPlace(mol)
        self.normalizer.normalizeInPlace(mol)
        if mol.HasSubstructMatch(self.reionizer_sites):
            self.reionizer.reionizeInPlace(mol)
        Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
        return mol

    def __call__(self, mol):
        """The standardized form of one sanitized molecule, as a new molecule.

        Raises :class:`_NoParent` when the parent is to be kept and no fragment is
        organic."""
        from rdkit import Chem

        drawn = mol
        # whether ``mol`` is still a sanitized molecule that no step changed: then a
        # single fragment is its own largest fragment (``choose`` would copy it)
        unchanged = True
        if self.cleanup:
            if mol.HasSubstructMatch(self.hydrogen) or mol.HasSubstructMatch(
                    self.cleanup_sites):
                mol, unchanged = self._cleanup(mol), False
            else:  # nothing to remove, disconnect, normalize or reionize
                mol = Chem.RWMol(mol)
                Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
        if self.chooser is not None and (not unchanged or len(Chem.GetMolFrags(mol)) > 1):
            if _no_organic_fragment(mol):
                raise _NoParent(NO_PARENT_DISCONNECTED_REASON
                                if len(Chem.GetMolFrags(drawn)) == 1 else NO_PARENT_REASON)
            mol = self.chooser.choose(mol)
        if self.uncharger is not None and mol.HasSubstructMatch(self.charged):
            mol = self.uncharger.uncharge(mol)
        if self.tautomers is not None:
            mol = self.tautomers.Canonicalize(mol)
        return Chem.Mol(mol) if mol is drawn else mol


#: Results of ``standardize_parsed`` kept for the length of a ``standardization_memo``
#: block, keyed by ``(steps, input SMILES)``; None outside such a block.
_MEMO = contextvars.ContextVar("standardization_memo", default=None)


@contextlib.contextmanager
def standardization_memo():
    """Standardize each input SMILES at most once per set of steps inside this block.

    :class:`~sklearn_papers.chem.SkipInvalidMolecules` standardizes a batch to find the
    molecules the wrapped estimator's standardization refuses, and the wrapped estimator
    then standardizes the valid ones again; inside this block the second pass reads the
    first one's results. The memo lives only as long as the block (one ``fit``,
    ``predict`` or ``transform`` call), so it holds at most one batch, as canonical
    SMILES (a molecule is read again from its SMILES when the memo gives it out, as the
    first pass reads it).
    """
    token = _MEMO.set({} if _MEMO.get() is None else _MEMO.get())
    try:
        yield
    finally:
        _MEMO.reset(token)


def standardize_parsed(mols, steps, values=None, *, verbose=0, desc=None):
    """Standardize parsed molecules; the failures become invalid entries.

    Parameters
    ----------
    mols : list of rdkit.Chem.Mol or None
        From :func:`~sklearn_papers.chem._parse.parse_molecules` (None: invalid).
    steps : tuple of 4 bool
        ``(cleanup, largest_fragment, neutralize, canonical_tautomer)``, as
        :meth:`MoleculeStandardizer._steps` gives.
    values : sequence or None, default=None
        The inputs ``mols`` were parsed from (a string by ``Chem.MolFromSmiles(value)``,
        as :func:`~sklearn_papers.chem._parse.parse_molecules` reads it); inside a
        :func:`standardization_memo` block the results for string inputs are kept and
        reused under ``(steps, value)``.
    verbose : int, default=0
        A progress bar over the molecules (:func:`~sklearn_papers.nn._progress.progress`),
        labelled ``desc``.
    desc : str or None, default=None

    Returns
    -------
    mols : list of rdkit.Chem.Mol or None
        Each valid molecule re-read (``Chem.MolFromSmiles``) from the canonical SMILES of
        its standardized form, so a molecule and its salt give the very same ``Mol``.
    smiles : list of str or None
        That canonical SMILES (None where the molecule is invalid).
    failed : list of (int, str)
        ``(position, reason)`` of the molecules RDKit could not standardize, that have
        no parent (several fragments, none organic, when the largest fragment is kept),
        or whose standardized SMILES RDKit cannot read back (organometallics such as
        ferrocene, whose neutralized rings do not kekulize; :data:`UNREADABLE_REASON`).
        Every route (``MoleculeStandardizer``, the ``standardize`` parameters,
        ``SkipInvalidMolecules``) refuses exactly these.
    """
    from rdkit import Chem, rdBase

    out, smiles, failed = [None] * len(mols), [None] * len(mols), []
    memo = _MEMO.get()
    with rdBase.BlockLogs(), no_cyclic_gc():
        standardize = _Steps(*steps)
        from sklearn_papers.nn._progress import progress

        for i, mol in progress(enumerate(mols), verbose=verbose, n_items=len(mols),
                               total=len(mols), desc=desc, unit="molecule"):
            if mol is None:
                continue
            keyed = memo is not None and values is not None and isinstance(values[i], str)
            key = (tuple(steps), values[i]) if keyed else None
            if key is not None and key in memo:
                text, reason = memo[key]
                if reason is not None:
                    failed.append((i, reason))
                else:  # read again from its SMILES, as below
                    out[i] = Chem.MolFromSmiles(text)
                    smiles[i] = text
                continue
            reason = None
            try:
                std = standardize(mol)
                text = Chem.MolToSmiles(std)
                # a string input that is its own standardized SMILES was read just so
                # (``parse_molecules``) into ``mol``, which no step modifies
                new = mol if values is not None and text and text == values[i] else (
                    Chem.MolFromSmiles(text) if text else None)
            except _NoParent as exc:
                reason = str(exc)
            except Exception as exc:  # noqa: BLE001 - RDKit raises several exception types
                first = (str(exc).strip().splitlines() or ["no reason given"])[0]
                reason = f"standardization failed: {first}"
            else:
                if new is None and std.GetNumAtoms():
                    reason = UNREADABLE_REASON.format(smiles=text)
                elif new is None or new.GetNumAtoms() == 0:
                    reason = "standardization left no atoms"
            if key is not None:
                # the SMILES only (a few dozen bytes, against kilobytes for a Mol)
                memo[key] = (None, reason) if reason is not None else (text, None)
            if reason is not None:
                failed.append((i, reason))
                continue
            out[i], smiles[i] = new, text
    return out, smiles, failed


def n_multi_fragment(values, mols):
    """Positions of the molecules made of more than one fragment.

    A SMILES without ``.`` is one connected molecule, so only strings with a dot and
    ``Mol`` inputs are looked at (``Chem.GetMolFrags``).
    """
    from rdkit import Chem

    found = []
    for i, (value, mol) in enumerate(zip(values, mols)):
        if mol is None or (isinstance(value, str) and "." not in value):
            continue
        if len(Chem.GetMolFrags(mol)) > 1:
            found.append(i)
    return found


def standardize_entries(values, mols, invalid, steps, *, verbose=0, desc=None):
    """Step 3 on parsed entries: apply the standardization ``steps``.

    Parameters
    ----------
    values : ndarray of shape (n_samples,), dtype=object
        The entries as read (:func:`~sklearn_papers.chem._parse.read_molecules`).
    mols : list of rdkit.Chem.Mol or None
        Their molecules (:func:`~sklearn_papers.chem._parse.parse_molecules`).
    invalid : list of InvalidMolecule
        The entries that failed to parse.
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
        (:func:`n_multi_fragment`, for the report step); empty with it.
    """
    if steps is None:
        smiles = [value if isinstance(value, str) and mol is not None else None
                  for value, mol in zip(values, mols)]
        return mols, invalid, smiles, n_multi_fragment(values, mols)
    mols, smiles, failed = standardize_parsed(mols, steps, values, verbose=verbose,
                                              desc=desc)
    if failed:
        invalid = sorted(invalid + [InvalidMolecule(i, values[i], why) for i, why in failed],
                         key=lambda e: e.index)
    return mols, invalid, smiles, []
