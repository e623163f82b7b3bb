"""Molecule standardization (RDKit ``rdMolStandardize``) as a transformer, and the
``standardize`` parameter of every molecule estimator: which steps it names, and the
values ``fit`` keeps. The steps run in :mod:`~sklearn_papers.chem._standardization`."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sklearn_papers.chem._molecule_input import prepared_molecules
from sklearn_papers.chem._report import _caller_stacklevel
from sklearn_papers.chem._standardization import standardize_parsed
from sklearn_papers.chem._validation import (
    check_molecule_feature_names,
    set_molecule_input_attributes,
)
from sklearn_papers.utils._sklearn_compat import StrOptions, _fit_context

__all__ = ["MoleculeStandardizer"]


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
        From :func:`~sklearn_papers.chem._parse.parse_molecules`.
    fitted : bool, default=False
        Whether ``estimator`` is the fitted one (prediction) or about to be fitted.
    values : sequence or None, default=None
        The inputs ``mols`` were parsed from (see
        :func:`~sklearn_papers.chem._standardization.standardize_parsed`).

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
        steps = estimator._steps()
    elif "standardize" not in getattr(estimator, "_parameter_constraints", {}):
        return []
    else:
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
        _, smiles, valid = prepared_molecules(X, self._steps(), errors=self.errors,
                                              estimator=type(self).__name__,
                                              verbose=self.verbose)
        out = np.empty((len(valid), 1), dtype=object)
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
