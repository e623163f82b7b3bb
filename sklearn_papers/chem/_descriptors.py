"""RDKit's 2-D molecular descriptors, normalized through a fitted per-descriptor CDF."""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sklearn_papers.chem._molecule_input import prepared_molecules
from sklearn_papers.chem._standardize import (
    input_params_of_fit,
    pin_input_params,
    standardize_input_param,
    standardize_constraint,
)
from sklearn_papers.chem._validation import (
    check_molecule_feature_names,
    set_molecule_input_attributes,
)
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    InvalidParameterError,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["RDKitDescriptors"]

#: Value of a descriptor RDKit gives as NaN, after normalization: the middle of [0, 1].
NAN_VALUE = 0.5


def descriptor_names():
    """Names of RDKit's 2-D descriptors (``rdkit.Chem.Descriptors._descList``), in order."""
    from rdkit.Chem import Descriptors

    return [name for name, _ in Descriptors._descList]


def _compute(mols, names):
    """``(len(mols), len(names))`` float64 descriptor values; NaN where RDKit fails."""
    from rdkit import rdBase
    from rdkit.Chem import Descriptors

    table = dict(Descriptors._descList)
    fns = [table[name] for name in names]
    out = np.full((len(mols), len(names)), np.nan)
    with rdBase.BlockLogs(), np.errstate(all="ignore"):
        for i, mol in enumerate(mols):
            if mol is None:
                continue
            for j, fn in enumerate(fns):
                try:
                    out[i, j] = float(fn(mol))
                except Exception:  # noqa: BLE001 - a descriptor RDKit cannot compute: NaN
                    pass
    return out


class RDKitDescriptors(TransformerMixin, BaseEstimator):
    """RDKit's 2-D molecular descriptors, each mapped through its fitted CDF to [0, 1].

    Read more in the :doc:`user guide </user_guide/molecules_own_data>`.

    Computes the descriptors of ``rdkit.Chem.Descriptors`` (molecular weight, logP,
    TPSA, counts of rings, donors and acceptors, E-state indices, charges, fragment
    counts...: 217 in RDKit 2025+) for each molecule. Their scales differ by orders of
    magnitude and several have heavy tails (``Ipc`` reaches 1e30), so, as chemprop's
    ``rdkit_2d_normalized`` features (from descriptastorus) do, each descriptor is passed
    through a cumulative distribution function, here the empirical CDF of the training
    molecules (scikit-learn's ``QuantileTransformer`` with a uniform output on up to 1,000
    quantiles), so every feature lies in [0, 1] and a linear model can use them.

    Non-finite values are handled explicitly: values RDKit gives as NaN (or fails to
    compute) and ±inf are left out when the CDFs are fitted; at transform a NaN becomes
    0.5 (the training median's position), ``+inf`` 1 and ``-inf`` 0; a descriptor that is
    never finite on the training molecules gives 0.5 everywhere. Invalid molecules
    (``errors="nan"``) give rows of NaN, which are the only NaN in the output.

    Parameters
    ----------
    descriptors : list of str or None, default=None
        Names of the descriptors to compute (see ``rdkit.Chem.Descriptors._descList``);
        None: all of them. Fewer descriptors are faster (the whole set takes about 10 ms
        per drug-like molecule).
    normalize : {"cdf", None}, default="cdf"
        ``"cdf"``: each descriptor through its fitted empirical CDF (output in [0, 1]);
        None: the raw values (float64, NaN and ±inf as RDKit gives them; ``fit`` then
        learns nothing).
    standardize : bool or MoleculeStandardizer, default=False
        Standardize each molecule first, as :class:`MoleculeStandardizer` does (so a salt
        gets its parent's descriptors; a salt of inorganic parts only, with no parent, is
        an invalid molecule); with ``False``, a :class:`MultipleFragmentsWarning` says how
        many molecules have several fragments. The fitted CDFs keep the value of ``fit``:
        set after ``fit``, it changes nothing until the next ``fit`` (a ``UserWarning``
        says so in ``transform``).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError`` naming them, or (``"nan"``) are left out of
        ``fit`` and give rows of NaN.
    n_jobs : int or None, default=None
        Joblib workers computing the descriptors (None: 1).

    Attributes
    ----------
    descriptor_names_ : list of str
        The descriptors computed, in output order.
    quantile_transformer_ : sklearn.preprocessing.QuantileTransformer or None
        The fitted CDFs (None with ``normalize=None``).
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name, when ``X`` was a one-column DataFrame.

    See Also
    --------
    sklearn_papers.chem.CircularFingerprint : Substructure fingerprints.

    References
    ----------
    .. [1] K. Yang et al., "Analyzing Learned Molecular Representations for Property
       Prediction", J. Chem. Inf. Model. 59(8), 2019 (chemprop's RDKit features,
       normalized through CDFs by descriptastorus). :arxiv:`1904.01561`.

    Examples
    --------
    >>> from sklearn_papers.chem import RDKitDescriptors
    >>> X = ["CCO", "c1ccccc1", "CC(=O)O", "CCN", "CCCCCC"]
    >>> desc = RDKitDescriptors(descriptors=["MolWt", "TPSA", "NumHDonors"]).fit(X)
    >>> desc.transform(["CCCO"]).round(2)
    array([[0.5, 0.5, 1. ]])
    >>> desc.get_feature_names_out().tolist()
    ['MolWt', 'TPSA', 'NumHDonors']
    """

    _parameter_constraints = {
        "descriptors": [list, None],
        "normalize": [StrOptions({"cdf"}), None],
        "standardize": standardize_constraint(),
        "errors": [StrOptions({"raise", "nan"})],
        "n_jobs": [None, Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right")],
    }

    def __init__(self, descriptors=None, *, normalize="cdf", standardize=False,
                 errors="raise", n_jobs=None):
        self.descriptors = descriptors
        self.normalize = normalize
        self.standardize = standardize
        self.errors = errors
        self.n_jobs = n_jobs

    def _names(self):
        known = descriptor_names()
        if self.descriptors is None:
            return known
        for i, n in enumerate(self.descriptors):
            if not isinstance(n, str):
                raise TypeError(f"descriptors[{i}] is {n!r:.60}; descriptors must be a list "
                                f"of descriptor names (str), e.g. {known[:3]!r}.")
        seen = {}
        for i, n in enumerate(self.descriptors):
            if n in seen:
                raise ValueError(f"descriptors[{i}] = {n!r} repeats descriptors[{seen[n]}]; "
                                 "each descriptor must be named once (a repeated column "
                                 "would repeat its feature name).")
            seen[n] = i
        unknown = [n for n in self.descriptors if n not in set(known)]
        if unknown or not self.descriptors:
            raise ValueError(
                f"Unknown RDKit descriptor name(s) {unknown[:5]!r}; descriptors must be a "
                f"non-empty list of names from rdkit.Chem.Descriptors._descList, e.g. "
                f"{known[:3]!r}." if unknown else "descriptors is an empty list.")
        return list(self.descriptors)

    def _raw(self, X, names, standardize):
        """Raw descriptor rows of the valid molecules and the validity mask
        (``standardize``: the resolved standardization steps, or None)."""
        from joblib import Parallel, delayed, effective_n_jobs

        mols, _, valid = prepared_molecules(X, standardize, errors=self.errors,
                                            estimator=type(self).__name__)
        kept = [m for m in mols if m is not None]
        n = effective_n_jobs(self.n_jobs)
        if n == 1 or len(kept) < 64:
            return _compute(kept, names), valid
        size = -(-len(kept) // (4 * n))
        parts = Parallel(n_jobs=self.n_jobs)(
            delayed(_compute)(kept[i:i + size], names) for i in range(0, len(kept), size))
        return np.concatenate(parts), valid

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Compute the descriptors of ``X`` and fit one CDF per descriptor.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        self : RDKitDescriptors
            Fitted.

        Raises
        ------
        ValueError
            For unknown or repeated descriptor names, or invalid molecules with
            ``errors="raise"``, or when every molecule is invalid.
        TypeError
            If a descriptor name is not a string.
        """
        self._fit(X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit, then transform ``X`` (descriptors computed once).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_descriptors), dtype=float64
            See :meth:`transform`.
        """
        raw, valid = self._fit(X)
        return self._output(raw, valid)

    def _fit(self, X):
        names = self._names()
        params = standardize_input_param(self)
        raw, valid = self._raw(X, names, params["standardize"][0])
        pin_input_params(self, params)
        self._fit_raw(raw, names)
        set_molecule_input_attributes(self, X)
        return raw, valid

    def _fit_raw(self, raw, names):
        """Fit the CDFs on raw descriptor rows (one per valid molecule) of ``names``."""
        from sklearn.preprocessing import QuantileTransformer

        if not len(raw):
            raise ValueError("Every molecule in X is invalid; nothing to fit.")
        self.descriptor_names_ = list(names)
        self.quantile_transformer_ = None
        if self.normalize == "cdf":
            finite = np.where(np.isfinite(raw), raw, np.nan)
            self._never_finite = np.isnan(finite).all(axis=0)
            if len(raw) == 1:
                warnings.warn(
                    "RDKitDescriptors was fitted on one valid molecule: the empirical CDF of "
                    "one point maps each descriptor to 0, 0.5 or 1 (below, equal to, above "
                    "that molecule's value). Fit on the training set for a useful scale.",
                    UserWarning, stacklevel=4)
            with warnings.catch_warnings():
                # a never-finite descriptor is an all-NaN column (0.5 at transform, as
                # documented): numpy's warning about it would name no descriptor
                warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
                self.quantile_transformer_ = QuantileTransformer(
                    n_quantiles=min(1000, len(raw)), output_distribution="uniform",
                    subsample=None).fit(finite)
        return self

    def transform(self, X):
        """The (normalized) descriptors of the molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_descriptors), dtype=float64
            With ``normalize="cdf"``: values in [0, 1] (NaN descriptors 0.5, +inf 1,
            -inf 0); rows of NaN for invalid molecules (``errors="nan"``).

        Raises
        ------
        ValueError
            For invalid molecules with ``errors="raise"``, naming index and value.
        """
        check_is_fitted(self)
        check_molecule_feature_names(self, X)
        standardize = input_params_of_fit(self, standardize_input_param(self))["standardize"]
        raw, valid = self._raw(X, self.descriptor_names_, standardize)
        return self._output(raw, valid)

    def _output(self, raw, valid):
        values = raw
        if self.quantile_transformer_ is not None and not len(raw):
            values = raw  # every molecule invalid (errors="nan"): rows of NaN below
        elif self.quantile_transformer_ is not None and \
                self.quantile_transformer_.n_quantiles_ == 1:
            # the empirical CDF of a single training molecule: a step at its value
            ref = self.quantile_transformer_.quantiles_[0]
            values = np.where(raw > ref, 1.0, np.where(raw < ref, 0.0, NAN_VALUE))
            values[np.isnan(raw) | np.isnan(np.broadcast_to(ref, raw.shape))] = NAN_VALUE
            values[:, self._never_finite] = NAN_VALUE
        elif self.quantile_transformer_ is not None:
            finite = np.isfinite(raw)
            values = self.quantile_transformer_.transform(np.where(finite, raw, np.nan))
            values[np.isnan(values)] = NAN_VALUE  # NaN input and never-finite columns
            values[raw == np.inf] = 1.0
            values[raw == -np.inf] = 0.0
            values[:, self._never_finite] = NAN_VALUE  # no CDF to map through
        out = np.full((len(valid), len(self.descriptor_names_)), np.nan)
        out[valid] = values
        return out

    def get_feature_names_out(self, input_features=None):
        """The descriptor names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked as scikit-learn checks it; the names do not depend on it.

        Returns
        -------
        feature_names_out : ndarray of shape (n_descriptors,), dtype=object
            RDKit's descriptor names, in output order.
        """
        from sklearn.utils.validation import _check_feature_names_in

        check_is_fitted(self)
        _check_feature_names_in(self, input_features, generate_names=False)
        return np.asarray(self.descriptor_names_, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.input_tags.allow_nan = self.errors == "nan"
        tags.transformer_tags.preserves_dtype = []
        tags.non_deterministic = False
        return tags


def descriptors_constraint():
    """``_parameter_constraints`` entry of the graph estimators' ``descriptors``."""
    return ["boolean", RDKitDescriptors]


def check_descriptors_param(estimator):
    """``InvalidParameterError`` (a ``ValueError``) for a ``descriptors`` parameter that is
    neither a bool nor an ``RDKitDescriptors`` instance, naming the accepted values and
    how to choose descriptors by name (scikit-learn's own message names the class by its
    private module path and gives no fix); worded as scikit-learn's messages are."""
    value = getattr(estimator, "descriptors", False)
    if isinstance(value, (bool, np.bool_, RDKitDescriptors)):
        return
    hint = ""
    if isinstance(value, str) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
        hint = (" To join chosen descriptors, name them in an RDKitDescriptors: "
                "descriptors=RDKitDescriptors(descriptors=['MolWt', 'TPSA']) "
                "(names from rdkit.Chem.Descriptors._descList).")
    raise InvalidParameterError(
        f"The 'descriptors' parameter of {type(estimator).__name__} must be True (all of "
        "RDKit's 2-D descriptors, CDF-normalized), False (none) or an "
        f"sklearn_papers.chem.RDKitDescriptors instance. Got {value!r} instead.{hint}")


def resolve_descriptors(descriptors):
    """The ``RDKitDescriptors`` template a ``descriptors`` parameter asks for, or None.

    ``False`` → None, ``True`` → ``RDKitDescriptors()`` (all descriptors, CDF-normalized),
    an ``RDKitDescriptors`` instance → a clone of it (its ``descriptors`` and ``normalize``
    are used; the estimator's own ``standardize``, ``errors`` and ``n_jobs`` apply).
    """
    from sklearn.base import clone

    if descriptors is None:
        return None
    if isinstance(descriptors, (bool, np.bool_)):
        return RDKitDescriptors() if descriptors else None
    if isinstance(descriptors, RDKitDescriptors):
        descriptors._validate_params()
        return clone(descriptors)
    raise TypeError(
        "descriptors must be a bool or an RDKitDescriptors instance, got "
        f"{type(descriptors).__name__} {descriptors!r}.")


def compute_descriptors(mols, names):
    """Raw descriptor rows ``(len(mols), len(names))`` float64 of valid molecules."""
    return _compute(mols, names)


