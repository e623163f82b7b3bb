"""A meta-estimator that fits on the valid molecules and answers NaN for invalid ones."""

import contextlib
import sys
import warnings

import numpy as np
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if

from sklearn_papers.chem._parse import (
    InvalidMolecule,
    as_molecule_array,
    parse_molecules,
    row_labels,
)
from sklearn_papers.chem._report import describe_row, input_rows, raise_or_mask
from sklearn_papers.chem._standardization import standardization_memo
from sklearn_papers.chem._validation import (
    check_molecule_feature_names,
    set_molecule_input_attributes,
)
from sklearn_papers.utils._sklearn_compat import HasMethods, _fit_context, check_is_fitted
from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["SkipInvalidMolecules", "valid_rows_scorer"]


def _inner_has(name):
    """``available_if`` test: the wrapped estimator (fitted or not) has method ``name``."""

    def check(self):
        inner = getattr(self, "estimator_", self.estimator)
        getattr(inner, name)  # AttributeError -> the method is unavailable
        return True

    return check


class SkipInvalidMolecules(MetaEstimatorMixin, BaseEstimator):
    """Fit an estimator on the valid molecules; NaN rows for invalid ones at prediction.

    Read more in the :doc:`user guide </user_guide/molecules_own_data>`.

    A molecule pipeline given a batch with unparsable SMILES, empty cells or missing
    values either stops (``errors="raise"``) or, with ``errors="nan"``, hands NaN
    feature rows to a downstream model that refuses them. This wrapper takes the invalid
    rows out before the wrapped estimator (a molecule estimator or a whole
    ``Pipeline`` starting with one) sees them:

    * ``fit`` fits a clone of ``estimator`` on the valid rows, with their rows of ``y`` and
      ``sample_weight``, and warns (``UserWarning``) how many rows it left out and the
      first ones, with the reason RDKit gave, and which classes (for a classifier) occur
      only on those rows;
    * ``predict``, ``predict_proba``, ``predict_log_proba``, ``decision_function`` and
      ``transform`` (whichever the wrapped estimator has) run it on the valid rows and
      return one row per input row in input order, NaN (``np.nan``) for exactly the
      invalid ones. Numeric outputs come back as float64 (float32 stays float32);
      class labels that are not numbers come back as an object array with ``np.nan``.

    Validity is decided by :func:`~sklearn_papers.chem.check_molecules` (the one parser
    of the package): unparsable SMILES, empty strings, ``None``/NaN, non-molecules and
    molecules with no atoms are invalid; and by the standardization the wrapped
    estimator applies first (its ``standardize`` parameter, or a
    :class:`~sklearn_papers.chem.MoleculeStandardizer` as the first step of a
    ``Pipeline``): molecules it refuses, such as a salt of inorganic parts only
    (``"[Na+].[Cl-]"``, no parent molecule), are invalid too. Each molecule is
    standardized once per call: the wrapped estimator reuses the results of that check
    (for SMILES input). A molecule that the wrapped estimator refuses otherwise (a standardizer deeper
    inside it, a featurizer's own limits) still raises there.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to fit on the valid molecules (cloned in ``fit``); it takes SMILES or
        ``Mol`` objects as ``X``, e.g. ``make_pipeline(CircularFingerprint(), RidgeCV())``.

    Attributes
    ----------
    estimator_ : estimator instance
        The fitted clone of ``estimator``.
    n_left_out_ : int
        Number of invalid rows ``fit`` left out.
    left_out_ : ndarray of shape (n_invalid,), dtype=int64
        Their positions in the ``X`` given to ``fit``.
    classes_ : ndarray of shape (n_classes,)
        The wrapped classifier's classes (classifiers only): those of the valid rows. A
        class that occurs only on invalid rows is not among them (``fit`` warns, naming
        it), since the classifier never saw it.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name, when ``X`` was a one-column DataFrame.

    See Also
    --------
    sklearn_papers.chem.check_molecules : The validation deciding which rows are invalid.
    sklearn_papers.chem.MoleculeStandardizer : Standardize molecules first.

    Notes
    -----
    ``score`` scores the wrapped estimator on the valid rows only. A scoring string
    (``GridSearchCV(scoring="r2")``) calls ``predict`` and meets the NaN rows of invalid
    molecules, which scikit-learn's metrics refuse: every split would score NaN. Wrap
    the scoring in :func:`valid_rows_scorer` to score the valid rows only, with any
    scoring string, list or dict, in ``GridSearchCV``, ``cross_validate`` or
    ``cross_val_score``. Inside those, ``fit`` warns when the split's test rows hold
    invalid molecules and the scorer would meet their NaN rows, naming this fix.

    Inside cross-validation (``GridSearchCV``, ``cross_validate``, ``cross_val_predict``),
    the messages of ``fit`` name rows by their position in the ``X`` given to the search
    (and their pandas label), not by their position within the fold.

    References
    ----------
    .. [1] J. Sieg et al., "MolPipeline: A Python Package for Processing Molecules with
       RDKit in Scikit-learn", J. Chem. Inf. Model., 2024 (its error filter and
       post-prediction wrapper: invalid molecules filtered out before the model, filled
       back as NaN after it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_papers.chem import CircularFingerprint, SkipInvalidMolecules
    >>> X = ["CCO", "CCCO", "c1ccccc1", "CCN", "not a smiles", "CCCl"]
    >>> y = [0.1, 0.3, 1.2, 0.2, 5.0, 0.8]
    >>> model = SkipInvalidMolecules(make_pipeline(CircularFingerprint(n_bits=64), Ridge()))
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     model = model.fit(X, y)
    >>> model.n_left_out_
    1
    >>> np.isnan(model.predict(["CCO", "C1CC", "CCCCO"])).tolist()
    [False, True, False]
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
    }

    def __init__(self, estimator):
        self.estimator = estimator

    def _mask(self, X, *, fitted=True):
        """``X`` as a 1-D object array, its validity mask and the invalid entries: those
        :func:`~sklearn_papers.chem.check_molecules` refuses and those the wrapped
        estimator's standardization refuses (``fitted``: ``estimator_``'s, as fitted;
        else ``estimator``'s)."""
        from sklearn_papers.chem._standardize import standardization_failures

        values = X if isinstance(X, np.ndarray) and X.ndim == 1 and X.dtype == object \
            else as_molecule_array(X)
        mols, invalid = parse_molecules(values)
        inner = self.estimator_ if fitted else self.estimator
        failed = standardization_failures(inner, mols, fitted=fitted, values=values)
        if failed:
            invalid = sorted(invalid + [InvalidMolecule(i, values[i], why)
                                        for i, why in failed], key=lambda e: e.index)
        valid = raise_or_mask(invalid, len(values), errors="nan")
        return values, valid, invalid

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None):
        """Fit a clone of ``estimator`` on the valid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects (list, array, Series, one-column
            DataFrame), some of which may be invalid.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
            Targets; the rows of invalid molecules are left out with them.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; those of the valid rows go to the wrapped estimator's
            ``fit`` as ``sample_weight``. A wrapped ``Pipeline`` gets them as
            ``<last step>__sample_weight`` (its final estimator's weights), or, with
            scikit-learn's metadata routing enabled, as ``sample_weight`` for the steps
            that request it. An estimator that takes no weights raises ``TypeError``.

        Returns
        -------
        self : SkipInvalidMolecules
            Fitted.

        Raises
        ------
        ValueError
            If every molecule is invalid, ``y`` is None around a classifier or a
            regressor, ``y`` / ``sample_weight`` do not have one row per molecule (the
            message gives both lengths), or the weight of a valid molecule is not a
            finite number >= 0 (the message names it).

        Warns
        -----
        UserWarning
            When rows were left out: how many, of how many, and the first few with their
            position in ``X`` (and index label, for a pandas input) and reason. For a
            classifier, also when a class occurs only on left-out rows, naming it.

        Notes
        -----
        Messages of the wrapped estimator about single rows (a molecule it refuses, the
        first multi-fragment molecule) name the row's position in this ``X`` and its
        label, not its position among the valid rows it was given.
        """
        split = _cross_validation_split()
        rows = contextlib.nullcontext()
        if split is not None:  # name rows as the search's X numbers them
            rows = input_rows(split["train"], split["n"], split["labels"])
        with standardization_memo(), rows:
            if split is not None and split["X_test"] is not None:
                self._warn_nan_meets_scorer(split)
            return self._fit(X, y, sample_weight)

    def _warn_nan_meets_scorer(self, split):
        """``UserWarning`` when the test rows of this cross-validation split hold invalid
        molecules and the search's scorer would meet their NaN predictions."""
        if _scores_valid_rows(split["scorer"]):
            return
        try:
            values = as_molecule_array(split["X_test"])
            _, valid, invalid = self._mask(values, fitted=False)
        except (TypeError, ValueError):
            return  # the test rows are not molecules: predict will say so
        if valid.all():
            return
        with input_rows(split["test"], split["n"], split["labels"]):
            first = describe_row(invalid[0].index, len(values), row_labels(split["X_test"]))
        warnings.warn(
            f"{int((~valid).sum())} of the {len(values)} test molecule(s) of this "
            f"cross-validation split are invalid (first: {first}, "
            f"{_short(invalid[0].value)}): SkipInvalidMolecules predicts NaN for them, "
            "and the search's scorer meets those NaN (scikit-learn's metrics refuse "
            "them, so the split scores NaN). Score the valid rows only: pass "
            "scoring=valid_rows_scorer(<your scoring>) (from sklearn_papers.chem).",
            UserWarning, stacklevel=3)

    def _fit(self, X, y, sample_weight):
        y, sample_weight = tensors_to_numpy(y, "y"), tensors_to_numpy(sample_weight,
                                                                        "sample_weight")
        if y is None and (is_classifier(self.estimator) or is_regressor(self.estimator)):
            kind = "classifier" if is_classifier(self.estimator) else "regressor"
            raise ValueError(
                f"SkipInvalidMolecules over a {kind} ({type(self.estimator).__name__}) "
                f"needs y: call fit(X, y) with one target per molecule of X (the targets "
                f"of the invalid molecules are left out with them).")
        values = as_molecule_array(X)
        n = len(values)
        _check_lengths(n, y=y, sample_weight=sample_weight)
        values, valid, invalid = self._mask(values, fitted=False)
        labels = row_labels(X)
        if not valid.any():
            raise ValueError(
                f"Every one of the {n} molecule(s) in X is invalid (first: "
                f"{describe_row(invalid[0].index, n, labels)}, {invalid[0].value!r}: "
                f"{invalid[0].reason}); nothing to fit.")
        keep = np.flatnonzero(valid)
        _check_kept_weights(sample_weight, keep)
        params = {}
        if sample_weight is not None:
            params[_weight_name(self.estimator)] = (
                sample_weight if np.isscalar(sample_weight)
                else _safe_indexing(sample_weight, keep))
        X_valid = _safe_indexing(_as_indexable(X, values), keep)
        y_valid = None if y is None else _safe_indexing(y, keep)
        self.left_out_ = np.flatnonzero(~valid).astype(np.int64)
        self.n_left_out_ = int(len(self.left_out_))
        if self.n_left_out_:
            shown = "; ".join(
                f"{describe_row(e.index, n, labels)}: {_short(e.value)} ({e.reason})"
                for e in invalid[:3])
            more = f"; and {self.n_left_out_ - 3} more" if self.n_left_out_ > 3 else ""
            warnings.warn(
                f"SkipInvalidMolecules left {self.n_left_out_} of {n} invalid molecule(s) "
                f"out of fit: {shown}{more}.", UserWarning, stacklevel=3)
            if y is not None and is_classifier(self.estimator):
                _warn_lost_classes(y, keep, self.left_out_, n, labels)
        self.estimator_ = clone(self.estimator)
        with input_rows(keep, n, labels):
            if y_valid is None:
                self.estimator_.fit(X_valid, **params)
            else:
                self.estimator_.fit(X_valid, y_valid, **params)
        set_molecule_input_attributes(self, X)
        self._y_shape = None if y is None else np.shape(y)[1:]
        return self

    @property
    def classes_(self):
        """The wrapped classifier's classes."""
        check_is_fitted(self)
        return self.estimator_.classes_

    def _rows(self, method, X):
        """Output of ``estimator_.<method>`` on the valid rows, NaN rows elsewhere."""
        check_is_fitted(self)
        check_molecule_feature_names(self, X)
        with standardization_memo():
            return self._rows_in_memo(method, X)

    def _rows_in_memo(self, method, X):
        values, valid, _ = self._mask(X)
        keep = np.flatnonzero(valid)
        if len(keep):
            with input_rows(keep, len(values), row_labels(X)):
                part = getattr(self.estimator_, method)(
                    _safe_indexing(_as_indexable(X, values), keep))
            if hasattr(part, "to_numpy"):  # pandas output of set_output
                part = part.to_numpy()
            part = np.asarray(part)
            shape = part.shape[1:]
        else:
            part, shape = None, self._empty_shape(method)
        dtype = np.float64
        if part is not None:
            if part.dtype.kind == "f":
                dtype = part.dtype
            elif part.dtype.kind not in "iub":
                dtype = object
        out = np.full((len(values),) + tuple(shape), np.nan, dtype=dtype)
        if part is not None:
            out[keep] = part
        return out

    def _empty_shape(self, method):
        """Output shape per row when no row of a batch is valid."""
        if method == "transform":
            try:
                names = self.estimator_.get_feature_names_out()
            except AttributeError:
                # sklearn's message ("... does not provide get_feature_names_out") would
                # be about a method the user did not call
                raise ValueError(
                    "Every molecule in X is invalid, and the wrapped estimator has no "
                    "get_feature_names_out to tell how many columns its transform gives, "
                    "so the NaN rows cannot be shaped. Pass at least one valid molecule, "
                    "or give the last step a get_feature_names_out.") from None
            return (len(names),)
        if method in ("predict_proba", "predict_log_proba"):
            return (len(self.estimator_.classes_),)
        if method == "decision_function":
            n_classes = len(self.estimator_.classes_)
            return () if n_classes == 2 else (n_classes,)
        return tuple(self._y_shape or ())

    @available_if(_inner_has("predict"))
    def predict(self, X):
        """Predict with the wrapped estimator; NaN for invalid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects, some of which may be invalid.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions in input order; ``np.nan`` in the rows of invalid molecules.
        """
        return self._rows("predict", X)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities; NaN rows for invalid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            As the wrapped estimator's, with NaN rows for invalid molecules.
        """
        return self._rows("predict_proba", X)

    @available_if(_inner_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities; NaN rows for invalid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            As the wrapped estimator's, with NaN rows for invalid molecules.
        """
        return self._rows("predict_log_proba", X)

    @available_if(_inner_has("decision_function"))
    def decision_function(self, X):
        """Decision function; NaN rows for invalid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As the wrapped estimator's, with NaN for invalid molecules.
        """
        return self._rows("decision_function", X)

    @available_if(_inner_has("transform"))
    def transform(self, X):
        """Transform with the wrapped estimator; NaN rows for invalid molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            As the wrapped estimator's (float64 for integer outputs), with NaN rows for
            invalid molecules.

        Raises
        ------
        ValueError
            If every molecule is invalid and the wrapped estimator has no
            ``get_feature_names_out`` (the width of the NaN rows is then unknown).
        """
        out = self._rows("transform", X)
        config = getattr(self, "_sklearn_output_config", {}).get("transform", "default")
        if config == "pandas":
            import pandas as pd

            index = X.index if hasattr(X, "iloc") else None
            return pd.DataFrame(out, columns=self.get_feature_names_out(), index=index)
        return out

    @available_if(_inner_has("transform"))
    def set_output(self, *, transform=None):
        """Set the output container of :meth:`transform` (and the wrapped estimator's).

        Parameters
        ----------
        transform : {"default", "pandas"} or None, default=None
            ``"pandas"``: a DataFrame with the wrapped estimator's feature names (the
            index of ``X`` when ``X`` is pandas); ``"default"``: numpy; None: unchanged.

        Returns
        -------
        self : SkipInvalidMolecules
            This estimator.
        """
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise ValueError(
                f"transform must be 'default', 'pandas' or None, got {transform!r}.")
        if hasattr(self.estimator, "set_output"):
            self.estimator.set_output(transform="default")  # wrapped here, on all rows
        self._sklearn_output_config = {"transform": transform}
        return self

    @available_if(_inner_has("transform"))
    def fit_transform(self, X, y=None, sample_weight=None):
        """Fit on the valid molecules, then transform all of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,), default=None
            Targets, if the wrapped estimator uses them.
        sample_weight : array-like of shape (n_samples,), default=None
            As in :meth:`fit`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            See :meth:`transform`.
        """
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    @available_if(_inner_has("get_feature_names_out"))
    def get_feature_names_out(self, input_features=None):
        """The wrapped estimator's output feature names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Passed on.

        Returns
        -------
        feature_names_out : ndarray of str objects
            As the wrapped estimator gives them.
        """
        check_is_fitted(self)
        return self.estimator_.get_feature_names_out(input_features)

    @available_if(_inner_has("score"))
    def score(self, X, y, sample_weight=None):
        """The wrapped estimator's ``score`` on the valid molecules only.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights.

        Returns
        -------
        score : float
            As the wrapped estimator defines it, over the valid rows.

        Raises
        ------
        ValueError
            If ``y`` is None or ``y`` / ``sample_weight`` do not have one row per molecule
            (the message gives both lengths), the weight of a valid molecule is not a
            finite number >= 0, or every molecule is invalid.
        """
        check_is_fitted(self)
        with standardization_memo():
            return self._score(X, y, sample_weight)

    def _score(self, X, y, sample_weight):
        y, sample_weight = tensors_to_numpy(y, "y"), tensors_to_numpy(sample_weight,
                                                                        "sample_weight")
        values = as_molecule_array(X)
        _check_lengths(len(values), y=y, sample_weight=sample_weight, required=True)
        values, valid, _ = self._mask(values)
        keep = np.flatnonzero(valid)
        if not len(keep):
            raise ValueError("Every molecule in X is invalid: nothing to score.")
        _check_kept_weights(sample_weight, keep)
        kwargs = {} if sample_weight is None else {
            "sample_weight": _safe_indexing(sample_weight, keep)}
        with input_rows(keep, len(values), row_labels(X)):
            return self.estimator_.score(_safe_indexing(_as_indexable(X, values), keep),
                                         _safe_indexing(y, keep), **kwargs)

    def __sklearn_tags__(self):
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.transformer_tags = inner.transformer_tags
        tags.target_tags = inner.target_tags
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        tags.non_deterministic = inner.non_deterministic
        return tags


#: scikit-learn functions that fit an estimator on the rows ``train`` of their ``X`` (and
#: score it on the rows ``test``): ``cross_validate`` / ``GridSearchCV``, and
#: ``cross_val_predict``.
_CV_FRAMES = {"_fit_and_score", "_fit_and_predict"}


def _cross_validation_split():
    """The cross-validation split this ``fit`` runs in, read from scikit-learn's frame.

    Returns None outside ``cross_validate``, ``GridSearchCV`` and the like (or when
    scikit-learn's frame does not hold what is looked for); else a dict with ``train``
    and ``test`` (positions in the search's ``X``), ``n`` (its rows), ``labels`` (its
    pandas labels, :func:`row_labels`), ``X_test`` (the split's test rows, or None) and
    ``scorer`` (the search's scorer, or None).
    """
    frame = sys._getframe(2)
    for _ in range(12):  # fit <- _fit_context <- ... <- _fit_and_score
        if frame is None:
            return None
        if (frame.f_code.co_name in _CV_FRAMES and frame.f_globals.get(
                "__name__", "") == "sklearn.model_selection._validation"):
            break
        frame = frame.f_back
    else:
        return None
    local = frame.f_locals
    try:
        from sklearn.utils.validation import _num_samples

        X, train = local["X"], np.asarray(local["train"], dtype=np.int64)
        n = _num_samples(X)
    except (KeyError, TypeError, ValueError):
        return None
    scorer = local.get("scorer") if frame.f_code.co_name == "_fit_and_score" else None
    test = local.get("test")
    X_test = None
    if scorer is not None and test is not None:
        test = np.asarray(test, dtype=np.int64)
        X_test = _safe_indexing(X, test)
    return {"train": train, "test": test, "n": n, "labels": row_labels(X),
            "X_test": X_test, "scorer": scorer}


def _scores_valid_rows(scorer):
    """Whether ``scorer`` (as ``_fit_and_score`` holds it) scores the valid rows only:
    :func:`valid_rows_scorer`'s, or the estimator's own ``score`` (``scoring=None``)."""
    if isinstance(scorer, _ValidRowsScorer):
        return True
    if type(scorer).__name__ == "_PassthroughScorer":
        return True
    inner = getattr(scorer, "_scorers", None)  # _MultimetricScorer
    if isinstance(inner, dict):
        return all(_scores_valid_rows(s) for s in inner.values())
    return False


class _ValidRowsScorer:
    """A scorer scoring :class:`SkipInvalidMolecules` on its valid rows only (see
    :func:`valid_rows_scorer`)."""

    def __init__(self, scoring):
        self.scoring = scoring

    def _inner(self):
        from sklearn.metrics import get_scorer

        if self.scoring is None or callable(self.scoring):
            return self.scoring
        return get_scorer(self.scoring)

    def __repr__(self):
        return f"valid_rows_scorer({self.scoring!r})"

    def __call__(self, estimator, X, y=None, sample_weight=None, **kwargs):
        scorer = self._inner()
        y = tensors_to_numpy(y, "y")
        sample_weight = tensors_to_numpy(sample_weight, "sample_weight")
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        if not isinstance(estimator, SkipInvalidMolecules):
            if scorer is None:
                return estimator.score(X, y, **kwargs)
            return scorer(estimator, X, y, **kwargs)
        check_is_fitted(estimator)
        check_molecule_feature_names(estimator, X)
        with standardization_memo():
            values = as_molecule_array(X)
            _check_lengths(len(values), y=y, sample_weight=sample_weight)
            values, valid, _ = estimator._mask(values)
            keep = np.flatnonzero(valid)
            if not len(keep):
                raise ValueError("Every molecule in X is invalid: nothing to score.")
            if sample_weight is not None:
                _check_kept_weights(sample_weight, keep)
                kwargs["sample_weight"] = _safe_indexing(sample_weight, keep)
            X_valid = _safe_indexing(_as_indexable(X, values), keep)
            y_valid = None if y is None else _safe_indexing(y, keep)
            with input_rows(keep, len(values), row_labels(X)):
                if scorer is None:
                    return estimator.estimator_.score(X_valid, y_valid, **kwargs)
                return scorer(estimator.estimator_, X_valid, y_valid, **kwargs)


def valid_rows_scorer(scoring=None):
    """Score :class:`SkipInvalidMolecules` on the valid molecules only, with any scoring.

    A fitted ``SkipInvalidMolecules`` predicts NaN for invalid molecules, and
    scikit-learn's metrics refuse NaN: with ``scoring="r2"`` every cross-validation
    split that holds an invalid molecule scores NaN. The scorer returned here finds the
    invalid rows as the wrapper does, and scores the fitted wrapped estimator
    (``estimator_``) on the other rows (and their targets and weights) with ``scoring``.
    Given any other estimator it is ``scoring`` itself.

    Parameters
    ----------
    scoring : str, callable, list, tuple, set, dict or None, default=None
        What scikit-learn's ``scoring`` parameter takes: a scorer name
        (``"neg_root_mean_squared_error"``, ``"roc_auc"``; see
        ``sklearn.metrics.get_scorer_names()``), a scorer callable
        ``scorer(estimator, X, y)``, several names (list, tuple or set), or a dict of
        names to names or scorers; None uses the estimator's ``score``.

    Returns
    -------
    scorer : callable or dict
        A scorer ``scorer(estimator, X, y, sample_weight=None)`` for a single scoring;
        a dict of such scorers, under the same names, for several.

    Raises
    ------
    ValueError
        From the returned scorer: every molecule in ``X`` is invalid, or ``y`` /
        ``sample_weight`` do not have one row per molecule. ``scoring`` names no
        scikit-learn scorer (raised here).

    See Also
    --------
    SkipInvalidMolecules.score : The wrapped estimator's ``score`` on the valid rows.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_papers.chem import (CircularFingerprint, SkipInvalidMolecules,
    ...                                  valid_rows_scorer)
    >>> X = ["CCO", "CCCO", "c1ccccc1", "CCN", "not a smiles", "CCCl", "CCCCO", "CC=O"]
    >>> y = [0.1, 0.3, 1.2, 0.2, 5.0, 0.8, 0.5, 0.0]
    >>> model = SkipInvalidMolecules(make_pipeline(CircularFingerprint(n_bits=64), Ridge()))
    >>> search = GridSearchCV(model, {"estimator__ridge__alpha": [0.1, 1.0]}, cv=2,
    ...                       scoring=valid_rows_scorer("neg_root_mean_squared_error"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the rows left out of fit
    ...     search = search.fit(X, y)
    >>> bool(np.isfinite(search.cv_results_["mean_test_score"]).all())
    True
    """
    if isinstance(scoring, (list, tuple, set)):
        names = list(scoring)
        if not all(isinstance(name, str) for name in names) or len(set(names)) != len(
                names):
            raise ValueError(f"A list of scorings must hold distinct scorer names, got "
                             f"{scoring!r}.")
        return {name: valid_rows_scorer(name) for name in names}
    if isinstance(scoring, dict):
        return {name: valid_rows_scorer(value) for name, value in scoring.items()}
    if isinstance(scoring, str):
        from sklearn.metrics import get_scorer

        get_scorer(scoring)  # an unknown name raises here, as scikit-learn says it
    elif scoring is not None and not callable(scoring):
        raise ValueError(f"scoring must be a scorer name, a callable, a list of names, "
                         f"a dict or None, got {type(scoring).__name__} {scoring!r}.")
    return _ValidRowsScorer(scoring)


def _check_lengths(n, *, y=None, sample_weight=None, required=False):
    """``ValueError`` naming both lengths unless ``y`` and ``sample_weight`` (when given)
    have one row per molecule; ``y`` is required with ``required``."""
    from sklearn.utils.validation import _num_samples

    if y is None and required:
        raise ValueError(f"y is required: one target per molecule ({n} molecule(s) in X).")
    for name, arr in (("y", y), ("sample_weight", sample_weight)):
        if arr is None or (name == "sample_weight" and np.isscalar(arr)):
            continue
        try:
            rows = _num_samples(arr)
        except TypeError:
            raise ValueError(
                f"{name} must have one row per molecule ({n} in X), got "
                f"{type(arr).__name__} {arr!r}.") from None
        if rows != n:
            raise ValueError(
                f"X has {n} molecule(s) but {name} has {rows} row(s): give one {name} "
                "value per molecule, in the order of X (invalid molecules included; they "
                "are left out with their rows).")


def _check_kept_weights(sample_weight, keep):
    """``ValueError`` naming the first weight of a valid molecule (position ``keep``) that
    is not a finite number >= 0, or a scalar weight that is not.

    The weights of invalid molecules are dropped with their rows, so they are not
    checked (a NaN weight there is fine). Without this check a negative weight reached
    the wrapped estimator, whose error (``Ridge``: "array must not contain infs or
    NaNs") named neither the weight nor its row.
    """
    from sklearn_papers.utils._validation import first_non_number

    if sample_weight is None:
        return
    fix = ("weights must be finite numbers >= 0 (those of invalid molecules are left "
           "out with their rows and not checked)")
    if np.isscalar(sample_weight):
        if isinstance(sample_weight, (str, bytes)) or not (
                np.isfinite(float(sample_weight)) and float(sample_weight) >= 0):
            raise ValueError(f"sample_weight={sample_weight!r}: {fix}.")
        return
    odd = first_non_number(sample_weight)
    if odd is not None:
        raise ValueError(f"sample_weight holds {odd!r}, not a number: {fix}.")
    weight = np.asarray(sample_weight, dtype=object)
    if weight.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, one weight per molecule; got shape "
                         f"{weight.shape}.")
    kept = np.asarray([np.nan if v is None else v for v in weight[keep]], dtype=np.float64)
    bad = ~np.isfinite(kept) | (kept < 0)
    if bad.any():
        i = int(keep[np.argmax(bad)])
        raise ValueError(f"sample_weight[{i}] = {weight[i]!r} (a valid molecule's weight): "
                         f"{fix}.")


def _warn_lost_classes(y, keep, left_out, n, labels):
    """``UserWarning`` naming the classes that occur only on left-out (invalid) rows: the
    fitted classifier does not know them (they are missing from ``classes_``)."""
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if y.ndim != 1:
        return  # multi-output / multi-task targets: a task without labels raises inside
    try:
        seen = set(np.unique(y[keep]).tolist())
        lost = sorted({v for v in y[left_out].tolist() if v not in seen
                       and not (isinstance(v, float) and v != v)}, key=repr)
    except TypeError:  # labels of mixed types: the classifier will say so
        return
    if lost:
        where = {c: [i for i in left_out.tolist() if y[i] == c] for c in lost}
        named = ", ".join(
            f"{c!r} (only at {describe_row(where[c][0], n, labels)}"
            + (f" and {len(where[c]) - 1} more" if len(where[c]) > 1 else "") + ")"
            for c in lost)
        warnings.warn(
            f"Class(es) {named} occur only on invalid molecule(s) that SkipInvalidMolecules "
            "left out of fit: the fitted classifier does not know them, they are missing "
            "from classes_ and are never predicted. Fix those molecules, or drop the "
            "class(es) from y.", UserWarning, stacklevel=4)


def _short(value):
    shown = "<rdkit Mol>" if type(value).__name__ == "Mol" else repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _weight_name(estimator):
    """The keyword under which ``estimator.fit`` takes row weights: ``sample_weight``, or
    ``<last step>__sample_weight`` for a ``Pipeline`` without metadata routing."""
    from sklearn import get_config
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline) and not get_config().get(
            "enable_metadata_routing", False):
        return f"{estimator.steps[-1][0]}__sample_weight"
    return "sample_weight"


def _as_indexable(X, values):
    """``X`` itself when ``_safe_indexing`` keeps its form (pandas, numpy), else the
    1-D object array of its entries (lists, tuples, other iterables)."""
    if hasattr(X, "iloc") or isinstance(X, np.ndarray):
        return X
    return values
