"""Molecule standardization (RDKit ``rdMolStandardize``) as a transformer and as the
``standardize`` step inside every molecule estimator."""

import contextlib
import contextvars
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sklearn_papers.chem._validation import (
    InvalidMolecule,
    as_molecule_array,
    check_molecule_feature_names,
    describe_row,
    no_cyclic_gc,
    parse_molecules,
    raise_or_mask,
    row_labels,
    set_molecule_input_attributes,
)
from sklearn_papers.utils._sklearn_compat import StrOptions, _fit_context

__all__ = ["MoleculeStandardizer", "MultipleFragmentsWarning"]


class MultipleFragmentsWarning(UserWarning):
    """Warning: molecules with several fragments were featurized with all of them.

    Salts, solvates and mixtures (``"CCN.Cl"``) were featurized as they are, counter-ions
    and solvent included. Raised once per call by the molecule estimators with
    ``standardize=False``, naming how many molecules and the first one's index. Pass
    ``standardize=True`` (or put :class:`MoleculeStandardizer` first in the pipeline) to
    keep only the parent molecule, or filter this warning when the fragments are meant.

    References
    ----------
    .. [1] Bento, A. P. et al. (2020). An open source chemical structure curation pipeline
       using RDKit. Journal of Cheminformatics, 12, 51 (the parent-molecule step).
       https://doi.org/10.1186/s13321-020-00456-1

    Examples
    --------
    >>> import warnings
    >>> from sklearn_papers.chem import CircularFingerprint, MultipleFragmentsWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = CircularFingerprint().transform(["CCO", "CCN.Cl"])
    >>> caught[0].category is MultipleFragmentsWarning
    True
    """


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
    that no cleanup step changed, the ``Uncharger`` without charged atoms. ``tests/chem/test_standardize.py`` checks the
    SMILES against ``Cleanup`` and the RDKit objects applied one by one.
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
        From :func:`~sklearn_papers.chem._validation.parse_molecules` (None: invalid).
    steps : tuple of 4 bool
        ``(cleanup, largest_fragment, neutralize, canonical_tautomer)``, as
        :meth:`MoleculeStandardizer._steps` gives.
    values : sequence or None, default=None
        The inputs ``mols`` were parsed from (a string by ``Chem.MolFromSmiles(value)``,
        as :func:`~sklearn_papers.chem._validation.parse_molecules` reads it); inside a
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
    memo = _MEMO.get() if values is not None else None
    with rdBase.BlockLogs(), no_cyclic_gc():
        standardize = _Steps(*steps)
        from sklearn_papers.nn._progress import progress

        for i, mol in progress(enumerate(mols), verbose=verbose, n_items=len(mols),
                               total=len(mols), desc=desc, unit="molecule"):
            if mol is None:
                continue
            key = (tuple(steps), values[i]) if memo is not None and isinstance(
                values[i], str) else None
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


def resolve_standardize(standardize):
    """The standardization steps a ``standardize`` parameter asks for, or None.

    ``False`` → None, ``True`` → the defaults of :class:`MoleculeStandardizer`, a
    ``MoleculeStandardizer`` → its steps (its ``errors`` is not used: the estimator's own
    ``errors`` applies); a tuple of steps (what this returns, as kept by
    :func:`pin_input_params`) → itself.
    """
    if standardize is None:
        return None
    if isinstance(standardize, tuple) and len(standardize) == 4:
        return tuple(bool(v) for v in standardize)
    if isinstance(standardize, (bool, np.bool_)):
        return MoleculeStandardizer()._steps() if standardize else None
    if isinstance(standardize, MoleculeStandardizer):
        standardize._validate_params()
        return standardize._steps()
    raise TypeError(
        "standardize must be a bool or a MoleculeStandardizer instance, got "
        f"{type(standardize).__name__} {standardize!r}."
    )


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


def _caller_stacklevel():
    """``stacklevel`` for a warning raised here that points at the first frame outside
    sklearn_papers, scikit-learn and joblib (the user's call, through any wrappers)."""
    import sys

    frame, level = sys._getframe(1), 1  # level 1: the function calling warnings.warn
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(("sklearn_papers.", "sklearn.", "joblib.")):
            return level
        frame, level = frame.f_back, level + 1
    return level


def warn_multiple_fragments(positions, values, n_samples, estimator, stacklevel=None,
                            labels=None):
    """One :class:`MultipleFragmentsWarning` naming how many and the first one.

    ``stacklevel`` None points the warning at the user's call (the first frame outside
    sklearn_papers and scikit-learn); ``labels``, the input's pandas labels
    (:func:`~sklearn_papers.chem._validation.row_labels`), are named beside the
    position."""
    if not positions:
        return
    if stacklevel is None:
        stacklevel = _caller_stacklevel()
    first = positions[0]
    value = values[first]
    shown = repr(value) if isinstance(value, str) else "<rdkit Mol>"
    if len(shown) > 80:
        shown = shown[:77] + "..."
    warnings.warn(
        f"{len(positions)} of {n_samples} molecule(s) given to {estimator} have more than "
        f"one fragment (first at {describe_row(first, n_samples, labels)}: {shown}); counter-ions, solvents and "
        "mixture components are featurized as part of the molecule. Pass "
        "standardize=True (or put MoleculeStandardizer() first in the pipeline) to keep "
        "the largest organic fragment, neutralized.",
        MultipleFragmentsWarning, stacklevel=stacklevel,
    )


def standardize_input_param(estimator):
    """``{"standardize": (steps, value)}`` of an estimator with a ``standardize``
    parameter, for :func:`pin_input_params` / :func:`input_params_of_fit`."""
    value = getattr(estimator, "standardize", False)
    return {"standardize": (resolve_standardize(value), value)}


def pin_input_params(estimator, params):
    """In ``fit``: keep the parameters that decide how molecules are prepared.

    Parameters
    ----------
    estimator : estimator instance
        Gets the private fitted attribute ``_fit_input_params``.
    params : dict
        ``name -> (resolved, value)``: the value in the form the code uses (hashable,
        comparable: standardization steps, not a ``MoleculeStandardizer`` instance,
        which ``set_params(standardize__neutralize=...)`` could change in place) and the
        parameter as given (named in the warning of :func:`input_params_of_fit`).
    """
    estimator._fit_input_params = {
        name: (resolved, _shown(value)) for name, (resolved, value) in params.items()}


def _shown(value):
    """How a parameter value is named in messages (an estimator instance as it is now:
    it can change in place later)."""
    return repr(value)


def input_params_of_fit(estimator, params):
    """At prediction: the values ``fit`` used, warning when the parameters differ now.

    A model fitted on molecules prepared one way (standardized or not, with or without
    explicit hydrogens) predicts from molecules prepared the same way, whatever
    ``set_params`` changed since: as the vision estimators keep ``image_size`` and
    ``output_stride``. A ``UserWarning`` names each parameter that changed, its value at
    fit and now, and says to fit again to use the new value.

    Parameters
    ----------
    estimator : fitted estimator
        With ``_fit_input_params`` (:func:`pin_input_params`); a model without it (fitted
        by an older version of the package) uses the current values.
    params : dict
        ``name -> (resolved, value)`` of the current parameters.

    Returns
    -------
    resolved : dict
        ``name -> resolved value`` to use.
    """
    pinned = getattr(estimator, "_fit_input_params", None)
    if pinned is None:
        return {name: resolved for name, (resolved, _) in params.items()}
    changed = [name for name, (resolved, _) in params.items()
               if name in pinned and pinned[name][0] != resolved]
    if changed:
        what = "; ".join(f"{name}={pinned[name][1]} in fit, {name}="
                         f"{_shown(params[name][1])} now" for name in changed)
        warnings.warn(
            f"{type(estimator).__name__} prepares molecules as in fit ({what}): the "
            "fitted model learned molecules prepared that way, and a value set after fit "
            "changes nothing until the next fit. Fit it again to use the new value.",
            UserWarning, stacklevel=_caller_stacklevel())
    return {name: pinned[name][0] if name in pinned else resolved
            for name, (resolved, _) in params.items()}


def _standardized_smiles(mols, steps, values=None, **progress):
    """What :class:`MoleculeStandardizer` outputs for parsed molecules: the canonical
    SMILES of each standardized one, and the ``(position, reason)`` of those it refuses
    (standardization failed, or left no parent, or gave a SMILES RDKit cannot read)."""
    _, smiles, failed = standardize_parsed(mols, steps, values, **progress)
    return smiles, failed


def standardization_failures(estimator, mols, *, fitted=False, values=None):
    """The molecules the standardization of the step that first sees them refuses.

    Parameters
    ----------
    estimator : estimator instance
        The wrapped estimator of :class:`~sklearn_papers.chem.SkipInvalidMolecules`: a
        ``Pipeline`` (its first step that is not ``"passthrough"`` or None is looked
        at) or a single estimator. A :class:`MoleculeStandardizer` refuses what its
        ``transform`` refuses; an estimator with a ``standardize`` parameter what that
        standardization refuses (for a fitted one, ``fitted=True``, with the value of its
        ``fit``). Any other step standardizes nothing here.
    mols : list of rdkit.Chem.Mol or None
        From :func:`~sklearn_papers.chem._validation.parse_molecules`.
    fitted : bool, default=False
        Whether ``estimator`` is the fitted one (prediction) or about to be fitted.
    values : sequence or None, default=None
        The inputs ``mols`` were parsed from (see :func:`standardize_parsed`).

    Returns
    -------
    failed : list of (int, str)
        ``(position, reason)``, in position order.
    """
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        steps = [step for _, step in estimator.steps
                 if step is not None and not (isinstance(step, str) and step == "passthrough")]
        if not steps:
            return []
        estimator = steps[0]
    if isinstance(estimator, MoleculeStandardizer):
        return _standardized_smiles(mols, estimator._steps(), values)[1]
    if "standardize" not in getattr(estimator, "_parameter_constraints", {}):
        return []
    steps = resolve_standardize(estimator.standardize)
    pinned = getattr(estimator, "_fit_input_params", None) if fitted else None
    if pinned is not None and "standardize" in pinned:
        steps = pinned["standardize"][0]
    if steps is None:
        return []
    return standardize_parsed(mols, steps, values)[2]


def standardize_constraint():
    """``_parameter_constraints`` entry of a ``standardize`` parameter."""
    return ["boolean", MoleculeStandardizer]


class MoleculeStandardizer(TransformerMixin, BaseEstimator):
    """Standardize molecules: SMILES or ``Mol`` in, canonical SMILES of the parent out.

    Read more in the :doc:`user guide </user_guide/molecules_own_data>`.

    Applies RDKit's ``rdMolStandardize`` steps in the order RDKit recommends, each one a
    parameter:

    1. ``cleanup``: ``rdMolStandardize.Cleanup`` (remove explicit hydrogens, disconnect
       metal atoms from organic ones, normalize functional groups such as nitro or
       N-oxides to one drawing, reionize so the strongest acid carries the charge);
    2. ``largest_fragment``: ``LargestFragmentChooser(preferOrganic=True)`` keeps the
       largest organic fragment (drops counter-ions, salts and solvent of crystallisation:
       ``"CCN.Cl"`` → ``"CCN"``). A molecule of several fragments none of which is
       organic (holds a carbon atom, RDKit's test) has no parent: a salt of inorganic
       ions (``"[Na+].[Cl-]"``, ``"[NH4+].[Cl-]"``, a metal sulfate), or water twice
       (``"O.O"``). RDKit's chooser would keep the largest inorganic part (``"Cl"`` for
       sodium chloride), almost surely not what the user meant to featurize: such an
       entry is an invalid molecule here (see ``errors``). One inorganic species as
       drawn (water, ammonia, ``"[Pt]"``, a lone ion such as ``"[Na+]"``) is kept; a
       metal complex without carbon (cisplatin) is split by ``cleanup`` into inorganic
       parts and is invalid too (``cleanup=False`` keeps it as drawn);
    3. ``neutralize``: ``Uncharger`` adds or removes hydrogens so that charged groups with
       a neutral form become neutral (carboxylates, protonated amines, zwitterions:
       ``"[NH3+]CC(=O)[O-]"`` → ``"NCC(=O)O"``); groups without one (quaternary ammonium,
       nitro) keep their charges;
    4. ``canonical_tautomer``: ``TautomerEnumerator().Canonicalize``, RDKit's canonical
       tautomer (off by default: slower, and it can change stereochemistry and
       aromaticity that the user drew on purpose).

    The output is the canonical isomeric SMILES of the result, one per row, which every
    molecule estimator of :mod:`sklearn_papers.chem` takes as input. The same steps run
    inside those estimators with their ``standardize`` parameter.

    Stateless: ``fit`` only validates, and ``transform`` works without ``fit``.

    Parameters
    ----------
    cleanup : bool, default=True
        Apply ``rdMolStandardize.Cleanup`` first.
    largest_fragment : bool, default=True
        Keep the largest organic fragment of multi-fragment molecules.
    neutralize : bool, default=True
        Neutralize charges where a neutral form exists.
    canonical_tautomer : bool, default=False
        Replace each molecule by RDKit's canonical tautomer.
    errors : {"raise", "nan"}, default="raise"
        Invalid entries (unparsable SMILES, empty strings, None/NaN, non-molecules,
        molecules RDKit cannot standardize, and, with ``largest_fragment``, salts of
        inorganic parts only): ``"raise"`` raises ``ValueError`` naming their index, value
        and reason; ``"nan"`` puts ``NaN`` in their row, which the
        molecule estimators read as a missing molecule (a NaN row with their
        ``errors="nan"``) and :class:`SkipInvalidMolecules` leaves out.
    verbose : int, default=1
        Progress bar (tqdm, on standard error) over the molecules: 0 never, 1 for
        inputs of at least 10,000 molecules, 2 always.

    Attributes
    ----------
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    sklearn_papers.chem.SkipInvalidMolecules : NaN predictions for invalid rows.
    sklearn_papers.chem.check_molecules : The input validation used here.

    References
    ----------
    .. [1] RDKit ``rdMolStandardize``, after Bento, A. P. et al. (2020). An open source
       chemical structure curation pipeline using RDKit. Journal of Cheminformatics, 12,
       51. https://doi.org/10.1186/s13321-020-00456-1

    Examples
    --------
    >>> from sklearn_papers.chem import MoleculeStandardizer
    >>> MoleculeStandardizer().transform(["CCN.Cl", "[NH3+]CC(=O)[O-]", "CC(=O)[O-].[Na+]"])
    array([['CCN'],
           ['NCC(=O)O'],
           ['CC(=O)O']], dtype=object)
    """

    _parameter_constraints = {
        "cleanup": ["boolean"],
        "largest_fragment": ["boolean"],
        "neutralize": ["boolean"],
        "canonical_tautomer": ["boolean"],
        "errors": [StrOptions({"raise", "nan"})],
        "verbose": ["verbose"],
    }

    def __init__(self, *, cleanup=True, largest_fragment=True, neutralize=True,
                 canonical_tautomer=False, errors="raise", verbose=1):
        self.cleanup = cleanup
        self.largest_fragment = largest_fragment
        self.neutralize = neutralize
        self.canonical_tautomer = canonical_tautomer
        self.errors = errors
        self.verbose = verbose

    def _steps(self):
        return (bool(self.cleanup), bool(self.largest_fragment), bool(self.neutralize),
                bool(self.canonical_tautomer))

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
        self : MoleculeStandardizer
            The transformer, with ``n_features_in_`` (and ``feature_names_in_``) set.

        Raises
        ------
        ValueError
            For invalid molecules when ``errors="raise"``, naming index and value.
        """
        self._standardize(X)
        set_molecule_input_attributes(self, X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Validate, then standardize (each molecule is parsed once).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        X_new : ndarray of shape (n_samples, 1), dtype=object
            See :meth:`transform`.
        """
        out = self._standardize(X)
        set_molecule_input_attributes(self, X)
        return out

    def transform(self, X):
        """Standardize the molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects (list, array, Series, one-column
            DataFrame). A bare string is refused rather than split into characters.

        Returns
        -------
        X_new : ndarray of shape (n_samples, 1), dtype=object
            The canonical SMILES of each standardized molecule, in input order; ``NaN``
            for invalid entries when ``errors="nan"``. A molecule whose standardized SMILES
            RDKit cannot read back (organometallics such as ferrocene) counts as invalid,
            here as with the ``standardize`` parameters, so every SMILES given out can be
            read by the next step.

        Raises
        ------
        ValueError
            For a bare string, a wrong shape, no molecules, or (``errors="raise"``)
            invalid molecules, naming their index, value and reason.
        """
        self._validate_params()
        if hasattr(self, "n_features_in_"):
            check_molecule_feature_names(self, X)
        return self._standardize(X)

    def _standardize(self, X):
        values = as_molecule_array(X)
        mols, invalid = parse_molecules(values)
        smiles, failed = _standardized_smiles(mols, self._steps(), values,
                                              verbose=self.verbose, desc=type(self).__name__)
        if failed:
            invalid = sorted(invalid + [InvalidMolecule(i, values[i], why)
                                        for i, why in failed], key=lambda e: e.index)
        valid = raise_or_mask(invalid, len(values), errors=self.errors, labels=row_labels(X))
        out = np.empty((len(values), 1), dtype=object)
        out[:, 0] = [s if ok else np.nan for s, ok in zip(smiles, valid)]
        return out

    def get_feature_names_out(self, input_features=None):
        """The output column's name: the input column's name, else ``"smiles"``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked as scikit-learn checks it; when given (or seen in ``fit``), its one
            name is the output name.

        Returns
        -------
        feature_names_out : ndarray of shape (1,), dtype=object
            The column name.

        Raises
        ------
        ValueError
            If ``input_features`` does not match the names or the number of columns seen
            in ``fit``.
        """
        from sklearn.utils.validation import _check_feature_names_in

        names = _check_feature_names_in(self, input_features, generate_names=False)
        if names is None or len(names) != 1:
            return np.asarray(["smiles"], dtype=object)
        return np.asarray(names, dtype=object)

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
