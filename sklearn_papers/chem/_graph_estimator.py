"""Plumbing shared by the graph-network estimators (neural fingerprint, MPNN, GROVER).

Each family keeps what is its own: parameters, featurizer, network and docstrings. What
they all do alike lives here once: the settings of molecules to graphs (whose steps run in
``_molecule_input``), the seeded training wiring, batched inference with NaN rows for
invalid molecules, target encoding and the tags.
The public classes keep thin ``fit``/``predict``/``transform`` methods (for their
docstrings) that call the ``_fit_*`` / ``_predict_*`` bodies of the mixins below.
"""

import contextvars
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)

from sklearn_papers.chem._targets import (
    MSE_LOSS,
    _require_numeric_targets,
    check_labelled_columns,
    classification_criterion,
    destandardize_outputs,
    encode_classification_targets,
    predict_from_proba,
    proba_from_logits,
    standardize_targets,
    training_range,
    warn_extrapolation,
)
from sklearn_papers.chem._descriptors import (
    check_descriptors_param,
    descriptors_constraint,
    resolve_descriptors,
)
from sklearn_papers.chem._graph_cache import GraphCache
from sklearn_papers.chem._molecule_input import (
    described_graphs,
    molecule_graphs,
    set_molecule_input_attributes,
    valid_molecules,
)
from sklearn_papers.chem._standardize import (
    input_params_of_fit,
    pin_input_params,
    standardize_constraint,
    standardize_input_param,
)
from sklearn_papers.chem._training import DIVERGENCE_HINT
from sklearn_papers.chem._parse import no_cyclic_gc
from sklearn_papers.chem._report import describe_row
from sklearn_papers.chem._validation import check_molecule_feature_names
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, check_is_fitted
from sklearn_papers.utils._tensors import tensors_to_numpy
from sklearn_papers.utils._validation import common_constraints

__all__ = []

#: Inside ``fit_transform``: ``(estimator, X, graphs, valid)``, the prepared graphs of the
#: molecules ``fit`` was given, which ``transform`` of the very same ``X`` reads instead
#: of parsing and featurizing them again; None outside.
_FIT_GRAPHS = contextvars.ContextVar("sklearn_papers_fit_graphs", default=None)


def _require_molecules(items):
    if not len(items):
        raise ValueError("Every molecule in X is invalid; nothing to fit.")


def _require_y(estimator, y):
    if y is None:
        raise ValueError(
            f"This {type(estimator).__name__} estimator requires y to be passed, but the "
            "target y is None."
        )


def _as_target_array(y):
    """``y`` as a numpy array of at least one dimension (ValueError for a scalar)."""
    y = tensors_to_numpy(y, "y")
    y = _pandas_target(y) if hasattr(y, "to_numpy") else np.asarray(y)
    if y.ndim == 0:
        raise ValueError(
            "y should be a 1d array of shape (n_samples,) or a 2d array of shape "
            f"(n_samples, n_targets), got a scalar {y.item()!r} (an array of shape ()) "
            "instead: give one target per molecule."
        )
    return y


def _pandas_target(y):
    """A pandas Series / DataFrame target as numpy; nullable numeric or boolean columns
    (``Int64``, ``Float64``, ``boolean``) with ``pd.NA`` become float64 with NaN
    (missing), as scikit-learn's ``check_array`` converts them."""
    import pandas as pd

    columns = [y[c] for c in y.columns] if hasattr(y, "columns") else [y]
    types = pd.api.types
    nullable = [types.is_extension_array_dtype(c.dtype)
                and (types.is_numeric_dtype(c.dtype) or types.is_bool_dtype(c.dtype))
                for c in columns]
    if not any(nullable):
        return y.to_numpy()
    if bool(np.asarray(y.isna()).any()):
        return y.to_numpy(dtype=np.float64, na_value=np.nan)
    dtype = np.result_type(*[getattr(c.dtype, "numpy_dtype", c.dtype) for c in columns])
    return y.to_numpy(dtype=dtype)


def _nan_target_rows(y):
    """Positions of the rows of a numeric target ``y`` that hold NaN (``None`` counts as
    NaN in an object array); none for a target that is not numeric (text targets are
    refused by name later)."""
    values = np.asarray(y)
    if values.dtype.kind == "O":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            return np.empty(0, dtype=np.int64)
    if values.dtype.kind not in "fc" or not len(values):
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.isnan(values.reshape(len(values), -1)).any(axis=1))


def _refuse_nan_targets(rows, n_samples, what, fix):
    """``ValueError`` naming the rows of ``y`` that hold NaN (the first five), ``what``
    needs and the ``fix``."""
    if not len(rows):
        return
    shown = ", ".join(describe_row(i, n_samples) for i in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    raise ValueError(
        f"y holds NaN in {len(rows)} of {n_samples} row(s) ({shown}{more}); {what}. "
        f"{fix}")


def _refuse_nan_in_one_target(estimator, y, valid, weight):
    """With one target column, refuse NaN on the rows that count (valid molecules with a
    positive weight), naming them: a missing label needs several targets."""
    if y.ndim > 1 and y.shape[1] > 1:
        return
    counted = valid.copy()
    if weight is not None:
        counted[valid] = weight > 0
    _refuse_nan_targets(
        np.intersect1d(_nan_target_rows(y), np.flatnonzero(counted)), len(y),
        f"{type(estimator).__name__} fits one target, which every molecule needs",
        "Drop those rows (or impute their targets); NaN marks a missing "
        "value only among several targets (a 2-D y).")


def _valid_weights(sample_weight, valid):
    """``sample_weight`` (validated, float64) of the valid molecules, or None."""
    from sklearn_papers.utils._validation import check_sample_weight

    weight = check_sample_weight(sample_weight, valid)
    if weight is None:
        return None
    weight = weight[valid]
    if not weight.sum() > 0:
        raise ValueError("sample_weight is 0 for every valid molecule: nothing to fit.")
    return weight


def _zero_weight_rows_missing(y, weight):
    """Float targets with the rows of weight 0 set to NaN (missing), so that they are left
    out of the target standardisation as well as of the loss: weight 0 = row left out."""
    y = np.asarray(y)
    if weight is None or not (weight == 0).any() or y.dtype.kind not in "fiub":
        return y  # (text targets are refused by standardize_targets)
    y = np.array(y, dtype=np.float64)
    y[weight == 0] = np.nan
    return y


def _warn_left_out_classes(y, y_left_out):
    """Warn about class labels seen only on invalid molecules left out of fit."""
    y, y_left_out = np.asarray(y), np.asarray(y_left_out)
    if not len(y_left_out) or y.ndim > 2 or (y.ndim == 2 and y.shape[1] != 1):
        return  # nothing left out, or multi-task (an unlabelled task raises instead)
    y, y_left_out = y.reshape(-1), y_left_out.reshape(-1)
    if y_left_out.dtype.kind in "fc":
        y_left_out = y_left_out[~np.isnan(y_left_out)]
    try:
        lost, counts = np.unique(y_left_out[~np.isin(y_left_out, y)], return_counts=True)
    except TypeError:  # labels of mixed types: check_classification_targets will say so
        return
    if lost.size:
        named = ", ".join(f"{c!r} ({k} molecule(s))"
                          for c, k in zip(lost.tolist(), counts.tolist()))
        warnings.warn(
            f"Class(es) {named} occur only among the {len(y_left_out)} invalid "
            "molecule(s) left out of fit with errors='nan'; they are missing from "
            "classes_ and are never predicted.",
            UserWarning, stacklevel=5,  # user -> _fit_context -> fit -> mixin -> here
        )


class _GraphEstimator(BaseEstimator):
    """Molecules in, a torch network on their graphs: data, training wiring, inference.

    Subclasses define ``__init__`` (with at least the parameters of
    ``_parameter_constraints`` below) and these hooks:

    * ``_featurizer(inputs=None)``: ``(fn, kwargs)``, a module-level function (joblib
      workers pickle it) with ``fn(mols, smiles=None, **kwargs)`` giving the graphs of a
      list of valid molecules, in order; ``smiles`` lists the SMILES each was read from
      (None for ``Mol`` inputs), which the featurizers may use to skip work (same graphs);
    * ``_graph_settings(inputs=None)``: what the graphs depend on (the
      :class:`GraphCache` key);

    ``inputs`` is the dict of :meth:`_input_params` (None: the current parameters). A
    subclass with more parameters deciding its graphs (MPNN's ``explicit_hydrogens``)
    adds them in ``_current_input_params`` and reads them from ``inputs``, so that the
    fitted model keeps the values of ``fit``.
    * ``_new_module(n_outputs)``: the network with ``n_outputs`` outputs (called under
      the seeded torch RNG);
    * ``_fit_module(run, module, graphs, target, loss)``: train it in the fit ``run``
      (:func:`~sklearn_papers.nn._skorch.torch_fit`, which sets ``net_``,
      ``loss_curve_`` and ``n_iter_``) and return the trained module; ``loss`` is
      ``MSE_LOSS`` or a loss name of
      :func:`~sklearn_papers.chem._targets.encode_classification_targets`;
    * ``_embedding(module)``: ``(fn, width)``, the function giving one vector of
      ``width`` values per molecule (used by ``transform``).
    """

    _parameter_constraints = {
        **common_constraints(min_epochs=0),
        "errors": [StrOptions({"raise", "nan"})],
        "standardize": standardize_constraint(),
        "graph_cache": [None, GraphCache],
        "descriptors": descriptors_constraint(),
        "n_jobs": [None, Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right")],  # joblib: not 0
    }

    def _validate_params(self):
        # a bad ``descriptors`` gets a message naming the accepted values and the fix
        check_descriptors_param(self)
        super()._validate_params()

    # -- data ----------------------------------------------------------------------------
    def _graph_settings(self, inputs=None):
        """What the graphs depend on besides the SMILES: a hashable tuple (the feature
        sets' name and settings; the cache key of :class:`GraphCache`)."""
        return (type(self).__name__,)

    def _current_input_params(self):
        """``name -> (resolved, value)`` of the parameters that decide how molecules are
        prepared for the network (kept at ``fit``, see
        :func:`~sklearn_papers.chem._standardize.input_params_of_fit`): ``standardize``
        and ``descriptors`` (whose fitted ``descriptors_`` is what prediction uses)."""
        params = standardize_input_param(self)
        value = getattr(self, "descriptors", False)
        template = resolve_descriptors(value)
        params["descriptors"] = (
            None if template is None else (tuple(template._names()), template.normalize),
            value)
        return params

    def _input_params(self, fitted=False):
        """``name -> value`` of :meth:`_current_input_params` to prepare molecules with:
        the current ones, or (``fitted``) those of ``fit``, with a ``UserWarning`` naming
        any changed since."""
        current = self._current_input_params()
        if fitted:
            return input_params_of_fit(self, current)
        return {name: resolved for name, (resolved, _) in current.items()}

    def _pin_input_params(self):
        """In ``fit``: keep the parameters of :meth:`_current_input_params`."""
        pin_input_params(self, self._current_input_params())

    def _descriptor_names(self, fitted=False):
        """Names of the RDKit descriptors ``descriptors`` asks for, or None; with
        ``fitted``, those of the fitted ``descriptors_`` (the network's input width was
        set by them: ``descriptors`` changed after fit does not change it)."""
        if fitted:
            fitted_descriptors = getattr(self, "descriptors_", None)
            return (None if fitted_descriptors is None
                    else list(fitted_descriptors.descriptor_names_))
        template = resolve_descriptors(getattr(self, "descriptors", False))
        return None if template is None else template._names()

    def _mol_features_key(self, fitted=False):
        """What the raw molecule-level rows of the graphs hold, hashable (part of the
        :class:`GraphCache` key), or None for none: the names of the descriptors."""
        names = self._descriptor_names(fitted)
        return None if names is None else tuple(names)

    def _describer(self, names):
        """The function giving the raw molecule-level rows ``names`` (from
        :meth:`_mol_features_key`) of a list of molecules (picklable, for the
        featurization workers): the descriptors ``names``."""
        from functools import partial

        from sklearn_papers.chem._descriptors import compute_descriptors

        return partial(compute_descriptors, names=names)

    def _mol_feature_rows(self, raw):
        """The features the network sees, from the raw rows ``(n, width)`` of
        :meth:`_describer`: the descriptors normalized by ``descriptors_``."""
        return self.descriptors_._output(raw, np.ones(len(raw), dtype=bool))

    def _n_mol_features(self):
        """Width of the molecule-level features joined to the readout (0: none)."""
        fitted = getattr(self, "descriptors_", None)
        return 0 if fitted is None else len(fitted.descriptor_names_)

    def _fit_descriptors(self, raw):
        """Fit ``descriptors_`` (the CDFs) on the raw descriptor rows of the training
        molecules, or set it to None without ``descriptors``."""
        template = resolve_descriptors(getattr(self, "descriptors", False))
        if template is None:
            self.descriptors_ = None
            return self
        self.descriptors_ = template._fit_raw(np.asarray(raw, dtype=np.float64),
                                              template._names())
        self.descriptors_.n_features_in_ = 1
        return self

    def _described(self, graphs, *, fit, counted=None):
        """Graphs with their normalized descriptors (float32) as ``mol_features``:
        :func:`~sklearn_papers.chem._molecule_input.described_graphs`.

        With ``fit``, first fits ``descriptors_`` on them (on the rows where the boolean
        mask ``counted`` is True, when it is given and holds any). Without
        ``descriptors`` the graphs come back as they are.
        """
        return described_graphs(self, graphs, fit=fit, counted=counted)

    def _featurize_mols(self, mols, smiles=None):
        """Graphs of valid molecules, in order, in this process (current parameters)."""
        fn, kwargs = self._featurizer()
        return fn(mols, smiles=smiles, **kwargs)

    def _molecules(self, X, *, with_smiles=False):
        """The valid molecules of ``X`` in order, and the validity mask (and, with
        ``with_smiles``, the SMILES each was read from, None for a ``Mol`` input):
        :func:`~sklearn_papers.chem._molecule_input.valid_molecules`."""
        return valid_molecules(self, X, with_smiles=with_smiles)

    def _graphs(self, X, *, fitted=False):
        """Graphs of the valid molecules of ``X`` in order, and the validity mask
        (``fitted``: with the settings of ``fit``, for prediction):
        :func:`~sklearn_papers.chem._molecule_input.molecule_graphs`."""
        return molecule_graphs(self, X, fitted=fitted)

    def _fit_graphs(self, X, y, sample_weight=None, *, one_target_labelled=False):
        """Graphs of the valid molecules, their rows of ``y``, the rows left out and the
        weights of the valid molecules (None without ``sample_weight``).

        With ``one_target_labelled``, a 1-D (or one-column) ``y`` with NaN on a valid
        molecule of positive weight raises ``ValueError`` naming the rows.

        Sets ``n_features_in_`` (and ``feature_names_in_``) and keeps the parameters that
        decide the graphs (:meth:`_pin_input_params`). ``y`` None stays None;
        otherwise the third value holds the rows of ``y`` of the invalid molecules
        (``errors="nan"``), empty when there are none.
        """
        self._pin_input_params()
        graphs, valid = self._graphs(X)
        weight = _valid_weights(sample_weight, valid)
        left_out = None
        if y is not None:
            y = _as_target_array(y)
            if y.shape[0] != len(valid):
                raise ValueError(f"X has {len(valid)} molecules but y has {y.shape[0]} rows.")
            if one_target_labelled:
                _refuse_nan_in_one_target(self, y, valid, weight)
            y, left_out = y[valid], y[~valid]
        _require_molecules(graphs)
        # descriptor CDFs from the rows that count: a weight-0 row is a row left out
        counted = None if weight is None else np.asarray(weight) > 0
        graphs = described_graphs(self, graphs, fit=True, counted=counted)
        set_molecule_input_attributes(self, X)
        memo = _FIT_GRAPHS.get()
        if memo is not None and memo[0] is self:
            _FIT_GRAPHS.set((self, X, graphs, valid))
        return graphs, y, left_out, weight

    def _standardise(self, y, n_left_out=0):
        """Check float targets (NaN: missing), store mean/std, return float32 2-D."""
        check_labelled_columns(y, n_left_out=n_left_out)
        target, self._y_mean, self._y_std, self._y_1d = standardize_targets(
            y, allow_nan=True, require_labels=True, estimator=type(self).__name__,
            transformer=not isinstance(self, RegressorMixin))
        self.n_outputs_ = target.shape[1]
        return target

    # -- torch ---------------------------------------------------------------------------
    def _train(self, graphs, target, n_outputs, loss, sample_weight=None):
        """Build the network under the seeded RNG, train it on ``target``, store it.

        With ``ensemble_size`` > 1 (the predictors' parameter), train that many networks
        from the seeds of :func:`~sklearn_papers.chem._ensemble.member_seeds` and store
        them as one :class:`~sklearn_papers.chem._ensemble.MeanOfMembers`; ``net_``,
        ``loss_curve_``, ``n_iter_`` and ``validation_loss_curve_`` are then those of
        the first member (the network of ``ensemble_size=1``).
        """
        from sklearn_papers.nn._skorch import torch_fit
        from sklearn_papers.utils._seeding import seed_from_random_state

        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        n_members = getattr(self, "ensemble_size", 1)
        self._held_out_rows = self._member_held_out_rows = None
        if n_members == 1:
            with torch_fit(self) as run:
                module = self._new_module(n_outputs)
                module = self._fit_module(run, module, graphs, target, loss, **weighted)
            self.module_ = module.to(run.device).eval()
            self.n_outputs_ = n_outputs
            return self
        from sklearn_papers.chem._ensemble import MeanOfMembers, member_seeds

        fit_seed = seed_from_random_state(self.random_state)
        held_out = self._member_held_out(target, sample_weight, n_members, loss, fit_seed)
        members, first = [], None
        for k, seed in enumerate(member_seeds(fit_seed, n_members)):
            kept = graphs, target, weighted
            if held_out is not None:
                keep = np.ones(len(graphs), dtype=bool)
                keep[held_out[k]] = False
                kept = ([g for g, on in zip(graphs, keep) if on], target[keep],
                        {} if sample_weight is None
                        else {"sample_weight": np.asarray(sample_weight)[keep]})
            with torch_fit(self, seed=seed) as run:
                module = self._new_module(n_outputs)
                module = self._fit_module(run, module, kept[0], kept[1], loss, **kept[2])
            members.append(module.to(run.device).eval())
            if first is None:
                first = (self.net_, self.loss_curve_, self.n_iter_,
                         getattr(self, "validation_loss_curve_", None),
                         getattr(self, "_held_out_rows", None))
        (self.net_, self.loss_curve_, self.n_iter_, self.validation_loss_curve_,
         self._held_out_rows) = first
        self._member_held_out_rows = held_out
        combine = "mean" if loss == MSE_LOSS else (
            "softmax" if getattr(self, "_task", None) == "multiclass" else "sigmoid")
        self.module_ = MeanOfMembers(members, combine).to(run.device).eval()
        self.n_outputs_ = n_outputs
        return self

    def _member_held_out(self, target, sample_weight, n_members, loss, seed):
        """The rows each ensemble member leaves out of its training, or None.

        Only for a regressor with a ``blend`` and ``early_stopping=False``: then the blend's
        weight needs predictions on molecules a network did not train on, and early
        stopping holds none out. Member ``k`` leaves out the ``k``-th of disjoint, seeded
        random blocks of ``validation_fraction`` of the labelled rows (smaller blocks when
        the members would need more rows than there are) and trains its full
        ``max_epochs`` on the others; the ensemble as a whole trains on every row.
        """
        from sklearn_papers.nn._skorch._callbacks import labelled_rows, n_validation

        if (loss != MSE_LOSS or n_members < 2 or self.early_stopping
                or getattr(self, "blend", None) is None):
            return None
        rows = np.flatnonzero(labelled_rows(target, sample_weight))
        size = min(n_validation(len(rows), self.validation_fraction),
                   len(rows) // (n_members + 1))
        if size < 1:
            return None
        rows = np.random.default_rng(seed).permutation(rows)
        return [np.sort(rows[k * size:(k + 1) * size]) for k in range(n_members)]

    def _run(self, X, part="output"):
        """Run the fitted network on molecules ``X`` in batches of ``batch_size``.

        ``part="output"`` gives the ``n_outputs_`` network outputs, ``"embedding"`` the
        vectors of ``_embedding``. Returns float32 rows, NaN rows for invalid molecules
        (``errors="nan"``).
        """
        check_is_fitted(self)
        check_molecule_feature_names(self, X)
        with no_cyclic_gc():
            return self._run_graphs(X, part)

    def _run_graphs(self, X, part):
        from sklearn_papers.nn._skorch import estimator_inference

        memo = _FIT_GRAPHS.get()
        if memo is not None and len(memo) == 4 and memo[0] is self and memo[1] is X:
            graphs, valid = memo[2], memo[3]
        else:
            graphs, valid = self._graphs(X, fitted=True)
            graphs = self._described(graphs, fit=False)
        with estimator_inference(self) as device:
            module = self.module_.to(device).eval()
            if part == "output":
                fn, width = module, self.n_outputs_
            else:
                fn, width = self._embedding(module)
                if self._n_mol_features():
                    fn, width = _EmbeddingWithFeatures(fn), width + self._n_mol_features()
            out = np.full((len(valid), width), np.nan, dtype=np.float32)
            if len(graphs):
                out[valid] = self._forward_rows(fn, graphs, device, width)
        return out

    def _forward_rows(self, fn, graphs, device, width):
        """``(len(graphs), width)`` float32 rows of ``fn`` on the (valid) graphs, in their
        order, batched by ``batch_size``, without gradients."""
        import torch

        from sklearn_papers.nn._graph import graph_loader
        from sklearn_papers.nn._progress import progress

        chunks = []
        with torch.no_grad():
            # own generator: a loader without one draws from the global RNG
            loader = graph_loader(graphs, batch_size=self.batch_size,
                                  generator=torch.Generator())
            for batch, _ in progress(loader, verbose=self.verbose, n_items=len(graphs),
                                     total=len(loader), desc=type(self).__name__,
                                     unit="batch"):
                chunks.append(fn(**batch.to(device).tensors).float().cpu().numpy())
        return np.concatenate(chunks)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags


class _EmbeddingWithFeatures:
    """An embedding function whose rows are followed by the batch's ``mol_features``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, mol_features, **tensors):
        import torch

        emb = self.fn(**tensors)
        return torch.cat([emb, mol_features.to(emb.dtype)], dim=1)


def ensemble_constraints():
    """``_parameter_constraints`` entry of the predictors' ``ensemble_size`` (the
    number of networks :meth:`_GraphEstimator._train` trains and averages)."""
    return {"ensemble_size": [Interval(Integral, 1, None, closed="left")]}


def fingerprint_constraints():
    """``_parameter_constraints`` entries of ``fingerprint_bits`` and
    ``fingerprint_radius`` (:class:`_FingerprintBranchMixin`)."""
    return {
        # CircularFingerprint's bound on n_bits; 0 or None: no fingerprint branch
        "fingerprint_bits": [None, Interval(Integral, 0, 2**24, closed="both")],
        "fingerprint_radius": [Interval(Integral, 0, None, closed="left")],
    }


def _fingerprint_and_descriptor_rows(mols, n_bits, radius, names=None):
    """Raw molecule-level rows of valid molecules: their ECFP bits (``n_bits`` columns, 0
    or 1; :func:`~sklearn_papers.chem._ecfp.morgan_bits`), then the raw descriptors
    ``names`` when given (float32 without descriptors, float64 with them)."""
    from sklearn_papers.chem._descriptors import compute_descriptors
    from sklearn_papers.chem._ecfp import morgan_bits

    bits = morgan_bits(mols, radius=radius, n_bits=n_bits, dtype=np.float32)
    if names is None:
        return bits
    return np.hstack([bits, compute_descriptors(mols, names)])


class _FingerprintBranchMixin:
    """A fingerprint branch: ECFP bits of each molecule joined to the graph readout
    before the prediction head (with the descriptors of ``descriptors``, after the bits),
    as GROVER's featurizer joins them to its embedding.

    For estimators with ``fingerprint_bits`` (0 or None: none) and
    ``fingerprint_radius`` parameters. The bits are those of
    :class:`~sklearn_papers.chem.CircularFingerprint` (``fingerprint_``) on the molecule
    the graph is made of (standardized with ``standardize``); a ``graph_cache`` keeps
    them beside the graphs.
    """

    def _fingerprint_settings(self, fitted=False):
        """``(n_bits, radius)`` of the fingerprint branch, or None without one (with
        ``fitted``: those of ``fit``; :meth:`_input_params` warns about a change)."""
        pinned = getattr(self, "_fit_input_params", None) if fitted else None
        if pinned is not None and "fingerprint" in pinned:
            return pinned["fingerprint"][0]
        return self._current_input_params()["fingerprint"][0]

    def _current_input_params(self):
        params = super()._current_input_params()
        bits = self.fingerprint_bits or 0
        resolved = (int(bits), int(self.fingerprint_radius)) if bits else None
        params["fingerprint"] = (resolved, (self.fingerprint_bits, self.fingerprint_radius))
        return params

    def _pin_input_params(self):
        from sklearn.base import clone

        from sklearn_papers.chem._ecfp import CircularFingerprint

        super()._pin_input_params()
        settings = self._fingerprint_settings()
        standardize = self.standardize
        self.fingerprint_ = None if settings is None else CircularFingerprint(
            radius=settings[1], n_bits=settings[0],
            standardize=standardize if isinstance(standardize, bool) else clone(standardize),
            errors=self.errors, n_jobs=self.n_jobs)

    def _mol_features_key(self, fitted=False):
        names = super()._mol_features_key(fitted)
        settings = self._fingerprint_settings(fitted)
        return names if settings is None else ("ecfp", *settings, names)

    def _describer(self, names):
        if not names or names[0] != "ecfp":
            return super()._describer(names)
        from functools import partial

        _, n_bits, radius, descriptor_names = names
        return partial(_fingerprint_and_descriptor_rows, n_bits=n_bits, radius=radius,
                       names=descriptor_names)

    def _n_fingerprint_bits(self):
        fitted = getattr(self, "fingerprint_", None)
        return 0 if fitted is None else int(fitted.n_bits)

    def _fit_descriptors(self, raw):
        return super()._fit_descriptors(raw[:, self._n_fingerprint_bits():])

    def _mol_feature_rows(self, raw):
        n_bits = self._n_fingerprint_bits()
        if getattr(self, "descriptors_", None) is None:
            return raw[:, :n_bits]
        return np.hstack([raw[:, :n_bits].astype(np.float32),
                          super()._mol_feature_rows(raw[:, n_bits:]).astype(np.float32)])

    def _n_mol_features(self):
        return super()._n_mol_features() + self._n_fingerprint_bits()


class _SkorchGraphEstimator(_GraphEstimator):
    """A graph estimator whose network is trained by a skorch net (``net_``)."""

    def _penalty(self):
        """Weight of the L2 penalty on all weights (``WeightPenaltyNet``'s ``alpha``)."""
        return 0.0

    def _iterator_options(self):
        """Extra ``build_net`` arguments for the training batches (none by default)."""
        return {}

    def _fit_module(self, run, module, graphs, target, loss, sample_weight=None):
        from sklearn_papers.nn._graph import GraphDataset, collate_graph_targets
        from sklearn_papers.nn._neural_fingerprint import MaskedMSELoss
        from sklearn_papers.nn._skorch import (
            WeightPenaltyNet,
            labelled_rows,
        )

        criterion = MaskedMSELoss if loss == MSE_LOSS else classification_criterion(loss)
        # early stopping splits only the rows with a label and a positive weight
        labelled = labelled_rows(target, sample_weight)
        weighted = {}
        if sample_weight is not None:  # the weights travel as a last target column
            from sklearn_papers.nn._skorch import SampleWeightedTargetLoss, pack_sample_weight

            criterion, weighted = SampleWeightedTargetLoss, {"criterion__loss": loss}
            target = pack_sample_weight(target, sample_weight)
        # WeightPenaltyNet feeds a GraphBatch to ``module(**batch.tensors)``; with alpha=0
        # it is a plain skorch NeuralNet. build_net reads the training parameters and
        # installs the divergence check, early stopping and the LR schedule.
        net = run.fit(
            module, GraphDataset(graphs, target), criterion=criterion,
            net_class=WeightPenaltyNet, alpha=self._penalty(), labelled=labelled,
            noun="molecule", divergence_hint=DIVERGENCE_HINT.format(
                lr=self.lr),
            iterator_train__collate_fn=collate_graph_targets,
            iterator_valid__collate_fn=collate_graph_targets, **weighted,
            **self._iterator_options(),
        )
        self.validation_loss_curve_ = (
            [float(v) for v in net.history[:, "valid_loss"]]
            if self.early_stopping and self.max_epochs else None)
        split = getattr(net, "train_split", None)
        self._held_out_rows = split.indices()[1] if hasattr(split, "indices") else None
        return net.module_


class _FitTransformWarnsOnce:
    """``fit_transform`` as ``fit`` then ``transform``, with one multi-fragment warning;
    a graph estimator's ``transform`` reads the graphs ``fit`` prepared, so each
    molecule is parsed and featurized once."""

    def _fit_then_transform(self, X, y, fit_kwargs):
        from sklearn_papers.chem._report import MultipleFragmentsWarning

        token = _FIT_GRAPHS.set((self,))
        try:
            self.fit(X, y, **fit_kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MultipleFragmentsWarning)
                return self.transform(X)
        finally:
            _FIT_GRAPHS.reset(token)

    def fit_transform(self, X, y=None, sample_weight=None):
        """Fit on ``X`` (and ``y``), then transform ``X``.

        The same as ``fit(X, y, sample_weight=sample_weight).transform(X)``, except that a
        :class:`~sklearn_papers.chem.MultipleFragmentsWarning` is given once, by ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_targets), default=None
            Targets, as ``fit`` takes them.
        sample_weight : array-like of shape (n_samples,), default=None
            As ``fit`` takes them.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            As :meth:`transform` gives it.
        """
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self._fit_then_transform(X, y, kwargs)


class _GraphTransformerMixin(ClassNamePrefixFeaturesOutMixin, _FitTransformWarnsOnce,
                             TransformerMixin):
    """The network as a featurizer (for a :class:`_SkorchGraphEstimator`).

    ``fit`` keeps random weights without ``y`` or with ``max_epochs=0`` (so the untrained
    network works inside a Pipeline, which always passes ``y``) and trains on regression
    targets ``y`` otherwise; ``transform`` gives the molecule vectors of ``_embedding``.
    """

    def _keeps_random_weights(self, y):
        return y is None or self.max_epochs == 0

    def _new_untrained_module(self):
        return self._new_module(1)

    def _init_untrained(self, module, graphs, device):
        """Finish the untrained network on the fitted graphs (nothing by default)."""
        return module

    def _fit_transformer(self, X, y, sample_weight=None):
        if sample_weight is not None and self._keeps_random_weights(y):
            raise TypeError(
                f"sample_weight is used only when {type(self).__name__} trains its network "
                "on a target y (y given and max_epochs > 0); without training the weights "
                "would have no effect."
            )
        graphs, y, left_out, weight = self._fit_graphs(X, y, sample_weight)
        if self._keeps_random_weights(y):
            self._fit_untrained(graphs)
        else:
            y = _zero_weight_rows_missing(y, weight)
            self._train(graphs, self._standardise(y, len(left_out)), self.n_outputs_,
                        MSE_LOSS, weight)
        self._n_features_out = self._embedding(self.module_)[1] + self._n_mol_features()
        return self

    def _fit_untrained(self, graphs):
        from sklearn_papers.nn._skorch import torch_fit, torch_inference

        with torch_fit(self) as run:
            module = self._new_untrained_module().to(run.device)
        with torch_inference():
            self.module_ = self._init_untrained(module, graphs, run.device).eval()
        self.net_ = None
        self.n_outputs_ = 0
        self.validation_loss_curve_ = None
        self.loss_curve_ = []
        self.n_iter_ = 0
        return self

    def _transform(self, X):
        return self._run(X, "embedding")


class _GraphRegressorMixin(RegressorMixin):
    """Regression on standardised targets (NaN: missing, left out of the loss)."""

    def _fit_regression(self, X, y, sample_weight=None):
        _require_y(self, y)
        graphs, y, left_out, weight = self._fit_graphs(X, y, sample_weight,
                                                       one_target_labelled=True)
        counted = _zero_weight_rows_missing(y, weight)
        target = self._standardise(counted, len(left_out))
        self._y_low_, self._y_high_ = training_range(counted)
        self._train(graphs, target, self.n_outputs_, MSE_LOSS, weight)
        if "blend" in self.get_params(deep=False):
            self._fit_blend(X, graphs, counted, weight)
        return self

    def _fit_blend(self, X, graphs, counted, weight):
        """The SVR blend of ``blend="ecfp_svr"`` (:mod:`~sklearn_papers.chem._svr_blend`):
        its weight from the first network's predictions on the molecules early stopping
        held out."""
        from sklearn_papers.chem._ensemble import MeanOfMembers
        from sklearn_papers.chem._svr_blend import fit_svr_blend
        from sklearn_papers.nn._skorch import estimator_inference

        target = np.asarray(counted, dtype=np.float64).reshape(len(graphs), -1)
        if self.blend is None:
            self.blend_fingerprint_ = self.blend_svr_ = None
            self.blend_weight_ = np.zeros(target.shape[1])
            return
        module = self.module_
        members = module.members if isinstance(module, MeanOfMembers) else [module]
        held_out = getattr(self, "_member_held_out_rows", None)
        if held_out is None:  # early stopping's rows of the first network
            rows = getattr(self, "_held_out_rows", None)
            held_out = [] if rows is None else [rows]
        all_rows, all_pred = [], []
        with estimator_inference(self) as device:
            for member, rows in zip(members, held_out):
                if len(rows):
                    out = self._forward_rows(member.to(device).eval(),
                                             [graphs[i] for i in rows], device,
                                             self.n_outputs_)
                    all_rows.append(np.asarray(rows))
                    all_pred.append(destandardize_outputs(
                        out, self._y_mean, self._y_std, False).reshape(len(rows), -1))
        validation = ((np.concatenate(all_rows), np.concatenate(all_pred))
                      if all_rows else None)
        fit_svr_blend(self, X, target, weight, len(graphs), validation)

    def _predict_regression(self, X):
        pred = destandardize_outputs(self._run(X), self._y_mean, self._y_std, self._y_1d)
        if getattr(self, "blend_svr_", None) is not None:
            from sklearn_papers.chem._svr_blend import predict_svr_blend

            pred = predict_svr_blend(self, X, pred)
        if getattr(self, "_y_low_", None) is not None:
            warn_extrapolation(pred, self._y_low_, self._y_high_, type(self).__name__)
        return pred

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination :math:`R^2` of ``predict(X)`` against ``y``.

        scikit-learn's ``r2_score`` (``RegressorMixin.score``), with ``y`` and
        ``sample_weight`` also accepted as torch tensors.

        Parameters
        ----------
        X : array-like of shape (n_samples,)
            SMILES strings or RDKit molecules.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the molecules.

        Returns
        -------
        score : float
            :math:`R^2`; 1 is a perfect prediction.

        Raises
        ------
        ValueError
            If ``y`` holds text or NaN, naming the entry or the rows, or if ``X`` holds
            invalid molecules (``errors="nan"``), naming the rows.
        """
        y = tensors_to_numpy(y, "y")
        if y is not None:
            y = _as_target_array(y)
            _require_numeric_targets(y, type(self).__name__)
            _refuse_nan_targets(_nan_target_rows(y), len(y),
                                "score compares each prediction with its true target",
                                "Drop those rows of X and y (or impute their targets) "
                                "before scoring.")
        from sklearn.metrics import r2_score

        pred = self.predict(X)
        invalid = np.flatnonzero(np.isnan(np.asarray(pred, dtype=np.float64)).reshape(
            len(pred), -1).any(axis=1))
        if len(invalid):
            shown = ", ".join(map(str, invalid[:5])) + (", ..." if len(invalid) > 5 else "")
            raise ValueError(
                f"{len(invalid)} molecule(s) of X are invalid (rows {shown}): with "
                f"errors='nan' their predictions are NaN, which R^2 cannot score. Drop those "
                f"rows before scoring, or wrap the regressor in SkipInvalidMolecules and "
                f"score with valid_rows_scorer(<your scoring>) (both from sklearn_papers.chem).")
        return float(r2_score(y, pred,
                              sample_weight=tensors_to_numpy(sample_weight, "sample_weight")))


class _GraphClassifierMixin(ClassifierMixin):
    """Binary, multiclass or multi-task binary (0/1/NaN) classification."""

    def _fit_classification(self, X, y, sample_weight=None):
        _require_y(self, y)
        graphs, y, left_out, weight = self._fit_graphs(X, y, sample_weight)
        check_labelled_columns(y, n_left_out=len(left_out))
        _warn_left_out_classes(y, left_out)
        self._task, self.classes_, target, n_outputs, loss = encode_classification_targets(y)
        return self._train(graphs, target, n_outputs, loss, weight)

    def _class_proba(self, X):
        return proba_from_logits(self._run(X), self._task)

    def _class_labels(self, X):
        return predict_from_proba(self.predict_proba(X), self._task, self.classes_)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against ``y``.

        For a binary or multiclass target this is scikit-learn's ``accuracy_score``. For
        a multi-task target (0 / 1, NaN or ``pd.NA`` where a label is missing) it is the
        mean over tasks of the accuracy on the molecules labelled for that task, so the
        data ``fit`` accepts can be scored and cross-validated; for ROC-AUC use
        :data:`sklearn_papers.metrics.masked_roc_auc_scorer`.

        Parameters
        ----------
        X : array-like of shape (n_samples,)
            SMILES strings or RDKit molecules.
        y : array-like of shape (n_samples,) or (n_samples, n_tasks)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the molecules.

        Returns
        -------
        score : float
            In [0, 1]; an invalid molecule (``errors="nan"``) counts as wrong.
        """
        check_is_fitted(self)
        if self._task != "multitask":
            return super().score(X, y, sample_weight=sample_weight)
        y = np.asarray(_as_target_array(y), dtype=np.float64)
        y = y.reshape(len(y), -1)
        pred = np.asarray(self.predict(X), dtype=np.float64).reshape(len(y), -1)
        if y.shape != pred.shape:
            raise ValueError(f"y has shape {y.shape} but the estimator predicts "
                             f"{pred.shape[1]} task(s).")
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        scores = []
        for j in range(y.shape[1]):
            rows = ~np.isnan(y[:, j])
            if rows.any() and w[rows].sum() > 0:
                scores.append(np.average(pred[rows, j] == y[rows, j], weights=w[rows]))
        if not scores:
            raise ValueError("y has no label (every entry is NaN): nothing to score.")
        return float(np.mean(scores))
