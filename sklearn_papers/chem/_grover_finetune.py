"""GROVER (Rong et al., 2020) fine-tuned: the regressor and the classifier."""

from numbers import Integral

import numpy as np

from sklearn_papers.chem._graph_estimator import (
    _GraphClassifierMixin,
    _GraphRegressorMixin,
)
from sklearn_papers.chem._grover import _BaseGrover
from sklearn_papers.chem._grover_checkpoint import load_grover_checkpoint
from sklearn_papers.chem._svr_blend import svr_search_scored
from sklearn_papers.chem._targets import BCE_LOSS, CROSS_ENTROPY_LOSS, MSE_LOSS
from sklearn_papers.chem._training import DIVERGENCE_HINT, TRAINING_CONSTRAINTS
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
)

__all__ = ["GroverClassifier", "GroverRegressor"]

#: ``grover_finetune_loss`` task of each loss name of ``_graph_estimator``.
_FINETUNE_TASKS = {MSE_LOSS: "regression", BCE_LOSS: "binary", CROSS_ENTROPY_LOSS: "multiclass"}


def _same(value, default):
    """Whether a parameter is at its default value (an estimator instance never is)."""
    plain = (bool, int, float, str, type(None))
    if not isinstance(value, plain) or not isinstance(default, plain):
        return False
    return isinstance(value, bool) == isinstance(default, bool) and value == default


def _svr_search(F, t, w):
    """MoleculeACE's SVR search on features ``F`` (:func:`svr_search_scored`): the SVR
    head's grid is ``C`` in units of the targets, ``gamma`` in units of one over the
    squared distance of GroverFeaturizer's features (scaled to the ECFP bits')."""
    return svr_search_scored(F, t, w)[0]


class _GroverFinetune(_BaseGrover):
    """Fine-tuning: encoder (pretrained or fresh) plus one head per view, trained on y."""

    _parameter_constraints = {
        **_BaseGrover._parameter_constraints,
        "ffn_hidden": [Interval(Integral, 0, None, closed="left")],
        "readout": [StrOptions({"mean", "self_attention"})],
        **TRAINING_CONSTRAINTS,
    }

    def __init__(self, hidden_size=64, *, n_layers=1, n_heads=2, depth=3, dropout=0.0,
                 ffn_hidden=64, readout="mean", dist_coef=0.1, max_epochs=30, batch_size=32,
                 lr=1e-3, early_stopping=False, validation_fraction=0.1, n_iter_no_change=10,
                 lr_schedule="constant", pretrained="moses-small", device="cpu",
                 errors="raise", standardize=False, graph_cache=None, descriptors=False,
                 random_state=None, verbose=1, n_jobs=None):
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.depth = depth
        self.dropout = dropout
        self.ffn_hidden = ffn_hidden
        self.readout = readout
        self.dist_coef = dist_coef
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.lr_schedule = lr_schedule
        self.pretrained = pretrained
        self.device = device
        self.errors = errors
        self.standardize = standardize
        self.graph_cache = graph_cache
        self.descriptors = descriptors
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _new_module(self, n_outputs):
        """The checkpoint's encoder (or a fresh one) with one head per view."""
        from sklearn_papers.nn._grover import GroverFinetuneModel

        config, state = (None, None) if self.pretrained is None else \
            load_grover_checkpoint(self.pretrained, heads=False)
        encoder = self._new_encoder(self._arch(config))
        if state is not None:
            encoder.load_state_dict({k[len("encoder."):]: v for k, v in state.items()
                                     if k.startswith("encoder.")})
        return GroverFinetuneModel(encoder, n_outputs, readout=self.readout,
                                   ffn_hidden=self.ffn_hidden, dropout=self.dropout,
                                   n_mol_features=self._n_mol_features())

    def _fit_module(self, run, module, graphs, target, loss, sample_weight=None):
        from sklearn_papers.nn._grover import (
            FinetuneCriterion,
            GroverDataset,
            GroverNet,
            collate_labelled,
        )
        from sklearn_papers.nn._skorch import labelled_rows, pack_sample_weight

        # early stopping splits only the rows with a label and a positive weight
        labelled = labelled_rows(target, sample_weight)
        if sample_weight is not None:  # the weights travel as a last target column
            target = pack_sample_weight(target, sample_weight)
        # The validation split, early stopping with the best epoch restored, the LR
        # schedule and the divergence check are the skorch callbacks of every graph model.
        net = run.fit(
            module, GroverDataset(list(graphs), y=target), criterion=FinetuneCriterion,
            net_class=GroverNet, labelled=labelled, noun="molecule",
            divergence_hint=DIVERGENCE_HINT.format(lr=self.lr),
            criterion__task=_FINETUNE_TASKS[loss],
            criterion__dist_coef=float(self.dist_coef),
            criterion__weighted=sample_weight is not None,
            iterator_train__collate_fn=collate_labelled,
            iterator_valid__collate_fn=collate_labelled)
        self.validation_loss_curve_ = (
            [float(v) for v in net.history[:, "valid_loss"]]
            if self.early_stopping and self.max_epochs else None)
        return net.module_.eval()


class GroverRegressor(_GraphRegressorMixin, _GroverFinetune):
    """GROVER encoder with a fine-tuned head, an SVR on its frozen features, or both.

    Rong et al. (2020).

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/grover>`.

    By default (``head="ensemble"``) the prediction is the mean of two models fitted on
    the same molecules: the SVR head and the fine-tuned network described below.

    With ``head="svr"`` the pretrained encoder stays frozen: the features of
    :class:`GroverFeaturizer` at its defaults (the embedding, RDKit's 2-D descriptors
    through CDFs and ECFP4 bits, the blocks scaled on the training molecules) go through
    an RBF support vector regression with MoleculeACE's search (van Tilborg et al.,
    2022): ``epsilon=0.1``, ``C`` in {1, 10, ..., 10000} (units of ``y``) and ``gamma``
    in {1e-6, 1e-5, ..., 0.1} chosen by the mean validation RMSE of 5-fold
    cross-validation on the training molecules, stratified on whether a target is at
    least their median (``random_state=42``). Under five molecules it uses one fold per
    molecule; when a side of the median has fewer molecules than folds, plain ``KFold``;
    with one molecule, ``C=10, gamma=0.01``. Deterministic: with a checkpoint,
    ``random_state`` changes nothing (with ``pretrained=None`` it seeds the random
    encoder). Several targets get one SVR each, on the molecules that have a label.

    The fine-tuned network (``head="finetune"``, and half of the default ensemble): the
    pretrained GTransformer (or a fresh one with ``pretrained=None``) and two
    feed-forward heads, one on each view's pooled atom embeddings, are trained end to end
    on the standardised targets; the loss is the sum of both heads' mean squared errors
    plus ``dist_coef`` times their disagreement (Section 4.2), and the prediction is the
    mean of the two heads. Several targets are fitted jointly; NaN targets (missing
    labels) are left out of the loss.

    The default ``lr_schedule="warmup_decay"`` (chemprop's warm-up then decay) was chosen
    by ``benchmarks/search_defaults.py`` on ESOL and FreeSolv (random 80/20 splits, seeds
    0-2): mean test RMSE 0.670 and 1.141 against 0.702 and 1.129 with a constant learning
    rate (:doc:`/molecules`).

    Read more in :doc:`/papers/grover`.

    Parameters
    ----------
    hidden_size : int, default=64
        Width of the hidden states. Ignored (taken from the checkpoint) when ``pretrained``
        is set, as are ``n_layers``, ``n_heads`` and ``depth``.
    head : {"ensemble", "finetune", "svr"}, default="ensemble"
        ``"ensemble"``: the unweighted mean of the two models below (an average of two
        unlike models, as in Dietterich, 2000, "Ensemble Methods in Machine Learning").
        Its network is the one ``head="finetune"`` trains with the same parameters and
        ``random_state``, its SVR the one of ``head="svr"``; a fit costs the sum of
        both. ``"finetune"``: the encoder and two feed-forward heads trained end to end,
        alone. ``"svr"``: an SVR searched on the frozen encoder's
        :class:`GroverFeaturizer` features (see above), alone: no network is trained,
        the fine-tuning parameters (``dropout`` to ``lr_schedule``, and
        ``descriptors``: the featurizer joins its own) are not used, and a
        ``UserWarning`` names those set away from their defaults. The ensemble is the
        default: on MoleculeACE's ten bundled targets it beats SVR on ECFP, at less CPU
        than chemprop (:ref:`benchmark-moleculeace`). Under scaffold cross-validation on
        ESOL and FreeSolv it errs less than the network alone, even with
        ``max_epochs=60`` (:ref:`benchmark-grover_heads_scaffold`). ``"svr"`` alone
        costs about a quarter of the ensemble's CPU and also beats SVR on ECFP on
        MoleculeACE's targets, but errs more on FreeSolv (the same pages).
    n_layers : int, default=1
        Transformer blocks per view.
    n_heads : int, default=2
        Attention heads per block.
    depth : int, default=3
        Mean number of dyMPN hops.
    dropout : float, default=0.0
        Dropout rate in training (encoder and heads).
    ffn_hidden : int, default=64
        Hidden width of each view's prediction head; 0 for a linear head.
    readout : {"mean", "self_attention"}, default="mean"
        Pooling of atom embeddings per molecule: mean, or GROVER's self-attentive pooling
        (Eq. 6).
    dist_coef : float, default=0.1
        Weight of the disagreement between the two views' predictions in the loss.
    max_epochs : int, default=30
        Fine-tuning epochs (ignored with ``head="svr"``). The network's training is
        nearly all of an ensemble fit's CPU, in proportion to ``max_epochs``: 30 epochs
        keep the default ensemble under chemprop's CPU on MoleculeACE's targets
        (:ref:`benchmark-moleculeace`). The fine-tuned network alone errs less after 60
        epochs than after 30 (mean test RMSE 0.654 against 0.670 log mol/L on ESOL,
        1.078 against 1.151 kcal/mol on FreeSolv, random 80/20 splits, seeds 0-2):
        set ``max_epochs=60`` with ``head="finetune"``.
    batch_size : int, default=32
        Molecules per batch (a last batch of one is fine); ``predict`` batches molecules
        in order of size and returns the rows in the order of ``X``.
    lr : float, default=1e-3
        Adam learning rate (encoder and heads; the peak of the schedule).
    early_stopping : bool, default=False
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``). Only molecules with a label (not NaN) and a
        positive ``sample_weight`` are split, so a weight of 0 still equals leaving the
        molecule out. Ignored with ``max_epochs=0``.
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default=10
        Epochs without improvement of the validation loss before stopping.
    lr_schedule : {"constant", "warmup_decay"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``:
        ``lr`` throughout.
    pretrained : str, path or None, default="moses-small"
        Checkpoint whose encoder weights start the fine-tuning; None trains the same
        architecture from random weights (the paper's "no pretraining" ablation).
    device : str, default="cpu"
        Torch device.
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError``, or (``"nan"``) are left out of ``fit`` and
        predicted as NaN. A class seen only on left-out molecules is missing from the
        classifier's ``classes_``, with a ``UserWarning`` naming it.
    standardize : bool or MoleculeStandardizer, default=False
        Standardize each molecule before featurizing it, in ``fit`` and at prediction:
        ``True`` applies :class:`~sklearn_papers.chem.MoleculeStandardizer`'s default steps
        (cleanup, keep the largest organic fragment, neutralize charges), a
        ``MoleculeStandardizer`` its own steps (its ``errors`` is not used; this
        estimator's applies). A salt and its parent, or the charged and neutral forms of an
        acid or amine, then give the same graph. With ``False`` molecules are featurized
        as given, and a :class:`~sklearn_papers.chem.MultipleFragmentsWarning` (a
        ``UserWarning``) says, once per call, how many have several fragments and where
        the first is. ``False`` by default: standardizing did not change scores on the
        bundled sets (:doc:`/user_guide/molecules_own_data`). With the parent kept, a salt
        or mixture of inorganic parts only (``"[Na+].[Cl-]"``) has no parent and is an
        invalid molecule (see ``errors``). The fitted model keeps the value of ``fit``:
        set after ``fit``, it changes nothing until the next ``fit`` (a ``UserWarning``
        says so at prediction).
    graph_cache : GraphCache or None, default=None
        A :class:`~sklearn_papers.chem.GraphCache` to read the graphs of SMILES already
        featurized (with the same feature settings) from, and to store new ones in; clones
        share it, so a ``GridSearchCV`` featurizes each molecule once. None: featurize on
        every call.
    descriptors : bool or RDKitDescriptors, default=False
        Molecule-level features joined to the graph readout before the prediction head,
        as chemprop's ``rdkit_2d_normalized`` features and GROVER's fine-tuning do:
        ``True`` uses RDKit's 2-D descriptors (all of them) through
        :class:`~sklearn_papers.chem.RDKitDescriptors`' per-descriptor CDF (values in
        [0, 1]), an ``RDKitDescriptors`` instance its ``descriptors`` and ``normalize``
        (its ``standardize``, ``errors`` and ``n_jobs`` are not used: this estimator's
        apply, so the descriptors are those of the standardized molecule). The CDFs are
        fitted in ``fit`` on the training molecules only (``descriptors_``) and applied
        at prediction; a ``graph_cache`` keeps the raw descriptors beside the graphs.
        A transformer's ``transform`` gives its embedding followed by these features.
        Computing them costs about 10 ms per drug-like molecule.
    random_state : int, RandomState instance or None, default=None
        Seeds heads, dropout, hop counts and shuffling; the global torch RNG is untouched.
    verbose : int, default=1
        Progress: 0 shows nothing; 1 the epoch table of a training of at least
        100,000 molecule-epochs (molecules times ``max_epochs``) and a progress bar
        (standard error) when featurizing or predicting at least 10,000 molecules;
        2 both whatever the size.
    n_jobs : int or None, default=None
        Joblib workers parsing and featurizing the molecules (None: 1, -1: all
        processors); the graphs, so the results, do not depend on it. Inputs under 512
        molecules are featurized in-process; worth it only for thousands of molecules on
        idle cores (:doc:`/user_guide/molecules_own_data`).

    Attributes
    ----------
    module_ : torch.nn.Module or None
        The trained ``GroverFinetuneModel`` (``net_.module_``); None with ``head="svr"``.
    net_ : skorch.NeuralNet or None
        The skorch net that trained it; None with ``head="svr"``.
    featurizer_ : GroverFeaturizer or None
        With ``head="svr"`` or ``"ensemble"``: the fitted featurizer; None with
        ``head="finetune"``.
    svr_ : list of sklearn.svm.SVR or None
        With ``head="svr"`` or ``"ensemble"``: one fitted SVR per target (its ``C`` and
        ``gamma`` those the search chose); None with ``head="finetune"``.
    n_outputs_ : int
        Number of targets.
    loss_curve_ : list of float
        Training loss after each epoch (standardised units); empty with ``head="svr"``.
    validation_loss_curve_ : list of float or None
        Loss on the held-out molecules after each epoch with ``early_stopping``, else
        None.
    n_iter_ : int
        Number of epochs run.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the training molecules;
        None without.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    GroverFeaturizer : The pretrained embeddings as a transformer.
    GroverClassifier : Classification head.

    References
    ----------
    .. [1] Y. Rong et al., "Self-Supervised Graph Transformer on Large-Scale Molecular
       Data", NeurIPS 2020. :arxiv:`2007.02835`.

    Examples
    --------
    >>> from sklearn_papers.chem import GroverRegressor
    >>> X, y = ["CCO", "CCCO", "CCCCO", "c1ccccc1"], [0.0, -0.5, -1.0, -2.0]
    >>> reg = GroverRegressor(head="svr").fit(X, y)  # SVR on the frozen features
    >>> reg.predict(["CCO"]).shape
    (1,)
    >>> both = GroverRegressor(max_epochs=2, random_state=0).fit(X, y)  # the ensemble
    >>> both.n_iter_, len(both.svr_)
    (2, 1)
    """

    _parameter_constraints = {
        **_GroverFinetune._parameter_constraints,
        "head": [StrOptions({"svr", "finetune", "ensemble"})],
    }

    # Its own signature for the default schedule (chemprop's warm-up then decay won on ESOL
    # and cost 1 % on FreeSolv: benchmarks/search_defaults.py) and the head.
    def __init__(self, hidden_size=64, *, head="ensemble", n_layers=1, n_heads=2, depth=3,
                 dropout=0.0, ffn_hidden=64, readout="mean", dist_coef=0.1, max_epochs=30,
                 batch_size=32, lr=1e-3, early_stopping=False, validation_fraction=0.1,
                 n_iter_no_change=10, lr_schedule="warmup_decay", pretrained="moses-small",
                 device="cpu", errors="raise", standardize=False, graph_cache=None,
                 descriptors=False, random_state=None, verbose=1, n_jobs=None):
        self.head = head
        super().__init__(
            hidden_size, n_layers=n_layers, n_heads=n_heads, depth=depth, dropout=dropout,
            ffn_hidden=ffn_hidden, readout=readout, dist_coef=dist_coef,
            max_epochs=max_epochs, batch_size=batch_size, lr=lr,
            early_stopping=early_stopping, validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change, lr_schedule=lr_schedule,
            pretrained=pretrained, device=device, errors=errors, standardize=standardize,
            graph_cache=graph_cache, descriptors=descriptors, random_state=random_state,
            verbose=verbose, n_jobs=n_jobs)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the head(s) on molecules ``X`` and targets ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Regression targets. With several targets, NaN marks a missing label; with
            one, NaN raises ``ValueError`` naming the rows (drop or impute them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each molecule (None: all 1): each batch minimises
            ``sum_b w_b l_b / sum_b w_b``. Molecules of weight 0 are left out of the loss
            and of the target standardisation, as if dropped (up to how the remaining
            molecules are batched).

        Returns
        -------
        self : GroverRegressor
            Fitted regressor.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverRegressor
        >>> reg = GroverRegressor(head="finetune", pretrained=None, hidden_size=8,
        ...                       max_epochs=2, random_state=0)
        >>> reg.fit(["CCO", "CCCO", "CCCCO"], [0.0, -0.5, -1.0]).n_iter_
        2
        """
        if self.head == "svr":
            self._warn_unused_finetuning_params()
            self._fit_svr_head(X, y, sample_weight)
            self.net_ = self.module_ = None
            self.loss_curve_, self.validation_loss_curve_, self.n_iter_ = [], None, 0
            self.descriptors_ = self.featurizer_.descriptors_
            return self
        self.featurizer_ = self.svr_ = None
        self._fit_regression(X, y, sample_weight)
        if self.head == "ensemble":
            # the network first, so that it draws from random_state as head="finetune" does
            self._fit_svr_head(X, y, sample_weight)
        return self

    #: Parameters of the fine-tuned network only (the SVR head does not read them).
    _FINETUNING_PARAMS = ("dropout", "ffn_hidden", "readout", "dist_coef", "max_epochs", "lr",
                          "early_stopping", "validation_fraction", "n_iter_no_change",
                          "lr_schedule", "descriptors")

    def _warn_unused_finetuning_params(self):
        import inspect
        import warnings

        defaults = inspect.signature(type(self).__init__).parameters
        set_ = [f"{k}={getattr(self, k)!r}" for k in self._FINETUNING_PARAMS
                if not _same(getattr(self, k), defaults[k].default)]
        if set_:
            warnings.warn(
                f"{', '.join(set_)} ignored: they set the fine-tuned network, and head='svr' "
                "fits an SVR on the frozen encoder's GroverFeaturizer features; set "
                "head='finetune' or head='ensemble' to fine-tune.", UserWarning, stacklevel=3)

    def _fit_svr_head(self, X, y, sample_weight):
        """``head="svr"``: the frozen encoder's :class:`GroverFeaturizer` features, then
        one searched SVR per target."""
        from sklearn_papers.chem._graph_estimator import (
            _as_target_array,
            _refuse_nan_in_one_target,
            _require_y,
            _valid_weights,
            _zero_weight_rows_missing,
        )
        from sklearn_papers.chem._grover import GroverFeaturizer
        from sklearn_papers.chem._targets import training_range
        from sklearn_papers.chem._validation import set_molecule_input_attributes

        _require_y(self, y)
        self.featurizer_ = GroverFeaturizer(
            self.hidden_size, n_layers=self.n_layers, n_heads=self.n_heads,
            depth=self.depth, max_epochs=0, batch_size=self.batch_size,
            pretrained=self.pretrained, device=self.device, errors=self.errors,
            standardize=self.standardize, graph_cache=self.graph_cache,
            random_state=self.random_state, verbose=self.verbose, n_jobs=self.n_jobs)
        F = self.featurizer_.fit_transform(X)
        set_molecule_input_attributes(self, X)
        valid = ~np.isnan(F).any(axis=1)
        y = _as_target_array(y)
        if y.shape[0] != len(valid):
            raise ValueError(f"X has {len(valid)} molecules but y has {y.shape[0]} rows.")
        weight = _valid_weights(sample_weight, valid)
        _refuse_nan_in_one_target(self, y, valid, weight)
        kept = valid.copy()
        if weight is not None:
            kept[valid] = weight > 0
        if not kept[valid].all():
            # weight 0 leaves a molecule out: of the featurizer's fit too
            from sklearn.utils import _safe_indexing

            self.featurizer_.fit(_safe_indexing(X, np.flatnonzero(kept)))
            F = self.featurizer_.transform(X)
        n_left_out = int((~valid).sum())
        y = _zero_weight_rows_missing(y[valid], weight)
        self._standardise(y, n_left_out)  # checks y; the SVRs fit it in its own units
        target = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        self._y_low_, self._y_high_ = training_range(y)
        F = F[valid].astype(np.float64)
        self.svr_ = []
        for j in range(target.shape[1]):
            rows = ~np.isnan(target[:, j])
            self.svr_.append(_svr_search(F[rows], target[rows, j],
                                         None if weight is None else weight[rows]))
        return self

    def _head_predictions(self, X):
        """``{head: predictions of shape (n_samples, n_targets)}`` of each fitted head
        (``"svr"``, and ``"finetune"`` with ``head="ensemble"``), in the targets' units,
        without the extrapolation warning."""
        from sklearn_papers.chem._targets import destandardize_outputs

        out = {"svr": self._predict_svr_head(X)}
        if self.module_ is not None:
            network = destandardize_outputs(self._run(X), self._y_mean, self._y_std, False)
            out["finetune"] = np.asarray(network, dtype=np.float64).reshape(
                out["svr"].shape)
        return out

    def _predict_svr_head(self, X):
        """The SVR head's predictions, shape (n_samples, n_targets), NaN rows for
        invalid molecules."""
        F = self.featurizer_.transform(X).astype(np.float64)
        valid = ~np.isnan(F).any(axis=1)
        out = np.full((len(F), len(self.svr_)), np.nan)
        if valid.any():
            out[valid] = np.column_stack([svr.predict(F[valid]) for svr in self.svr_])
        return out

    def predict(self, X):
        """Predict targets in their original units.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Float64; NaN for invalid molecules when ``errors="nan"``.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverRegressor
        >>> reg = GroverRegressor(head="finetune", pretrained=None, hidden_size=8,
        ...                       max_epochs=1, random_state=0).fit(["CCO", "CCCO"], [0.0, 1.0])
        >>> reg.predict(["CCO", "CCCCO"]).shape
        (2,)
        """
        if getattr(self, "svr_", None) is None:
            return self._predict_regression(X)
        from sklearn_papers.chem._targets import warn_extrapolation
        from sklearn_papers.utils._sklearn_compat import check_is_fitted

        check_is_fitted(self)
        pred = np.mean(list(self._head_predictions(X).values()), axis=0)
        if self._y_1d:
            pred = pred[:, 0]
        warn_extrapolation(pred, self._y_low_, self._y_high_, type(self).__name__)
        return pred


class GroverClassifier(_GraphClassifierMixin, _GroverFinetune):
    """GROVER encoder fine-tuned with a classification head (Rong et al., 2020).

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/grover>`.

    As :class:`GroverRegressor`, with cross-entropy losses. Three kinds of target: binary
    (one logit), multiclass (softmax) and multi-task binary (2-D 0/1 with NaN for missing
    labels, as Tox21; one logit per task, masked loss).

    Read more in :doc:`/papers/grover`.

    Parameters
    ----------
    hidden_size : int, default=64
        Width of the hidden states. Ignored (taken from the checkpoint) when ``pretrained``
        is set, as are ``n_layers``, ``n_heads`` and ``depth``.
    n_layers : int, default=1
        Transformer blocks per view.
    n_heads : int, default=2
        Attention heads per block.
    depth : int, default=3
        Mean number of dyMPN hops.
    dropout : float, default=0.0
        Dropout rate in training (encoder and heads).
    ffn_hidden : int, default=64
        Hidden width of each view's prediction head; 0 for a linear head.
    readout : {"mean", "self_attention"}, default="mean"
        Pooling of atom embeddings per molecule: mean, or GROVER's self-attentive pooling
        (Eq. 6).
    dist_coef : float, default=0.1
        Weight of the disagreement between the two views' predictions in the loss.
    max_epochs : int, default=30
        Fine-tuning epochs.
    batch_size : int, default=32
        Molecules per batch (a last batch of one is fine); ``predict`` batches molecules
        in order of size and returns the rows in the order of ``X``.
    lr : float, default=1e-3
        Adam learning rate (encoder and heads; the peak of the schedule).
    early_stopping : bool, default=False
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``). Only molecules with a label (not NaN) and a
        positive ``sample_weight`` are split, so a weight of 0 still equals leaving the
        molecule out. Ignored with ``max_epochs=0``.
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default=10
        Epochs without improvement of the validation loss before stopping.
    lr_schedule : {"constant", "warmup_decay"}, default="constant"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``:
        ``lr`` throughout.
    pretrained : str, path or None, default="moses-small"
        Checkpoint whose encoder weights start the fine-tuning; None trains the same
        architecture from random weights (the paper's "no pretraining" ablation).
    device : str, default="cpu"
        Torch device.
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError``, or (``"nan"``) are left out of ``fit`` and
        predicted as NaN. A class seen only on left-out molecules is missing from the
        classifier's ``classes_``, with a ``UserWarning`` naming it.
    standardize : bool or MoleculeStandardizer, default=False
        Standardize each molecule before featurizing it, in ``fit`` and at prediction:
        ``True`` applies :class:`~sklearn_papers.chem.MoleculeStandardizer`'s default steps
        (cleanup, keep the largest organic fragment, neutralize charges), a
        ``MoleculeStandardizer`` its own steps (its ``errors`` is not used; this
        estimator's applies). A salt and its parent, or the charged and neutral forms of an
        acid or amine, then give the same graph. With ``False`` molecules are featurized
        as given, and a :class:`~sklearn_papers.chem.MultipleFragmentsWarning` (a
        ``UserWarning``) says, once per call, how many have several fragments and where
        the first is. ``False`` by default: standardizing did not change scores on the
        bundled sets (:doc:`/user_guide/molecules_own_data`). With the parent kept, a salt
        or mixture of inorganic parts only (``"[Na+].[Cl-]"``) has no parent and is an
        invalid molecule (see ``errors``). The fitted model keeps the value of ``fit``:
        set after ``fit``, it changes nothing until the next ``fit`` (a ``UserWarning``
        says so at prediction).
    graph_cache : GraphCache or None, default=None
        A :class:`~sklearn_papers.chem.GraphCache` to read the graphs of SMILES already
        featurized (with the same feature settings) from, and to store new ones in; clones
        share it, so a ``GridSearchCV`` featurizes each molecule once. None: featurize on
        every call.
    descriptors : bool or RDKitDescriptors, default=False
        Molecule-level features joined to the graph readout before the prediction head,
        as chemprop's ``rdkit_2d_normalized`` features and GROVER's fine-tuning do:
        ``True`` uses RDKit's 2-D descriptors (all of them) through
        :class:`~sklearn_papers.chem.RDKitDescriptors`' per-descriptor CDF (values in
        [0, 1]), an ``RDKitDescriptors`` instance its ``descriptors`` and ``normalize``
        (its ``standardize``, ``errors`` and ``n_jobs`` are not used: this estimator's
        apply, so the descriptors are those of the standardized molecule). The CDFs are
        fitted in ``fit`` on the training molecules only (``descriptors_``) and applied
        at prediction; a ``graph_cache`` keeps the raw descriptors beside the graphs.
        A transformer's ``transform`` gives its embedding followed by these features.
        Computing them costs about 10 ms per drug-like molecule.
    random_state : int, RandomState instance or None, default=None
        Seeds heads, dropout, hop counts and shuffling; the global torch RNG is untouched.
    verbose : int, default=1
        Progress: 0 shows nothing; 1 the epoch table of a training of at least
        100,000 molecule-epochs (molecules times ``max_epochs``) and a progress bar
        (standard error) when featurizing or predicting at least 10,000 molecules;
        2 both whatever the size.
    n_jobs : int or None, default=None
        Joblib workers parsing and featurizing the molecules (None: 1, -1: all
        processors); the graphs, so the results, do not depend on it. Inputs under 512
        molecules are featurized in-process; worth it only for thousands of molecules on
        idle cores (:doc:`/user_guide/molecules_own_data`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; ``[0, 1]`` for multi-task targets.
    module_ : torch.nn.Module
        The trained ``GroverFinetuneModel`` (``net_.module_``).
    net_ : skorch.NeuralNet
        The skorch net that trained it.
    n_outputs_ : int
        Number of network outputs (1 binary, ``n_classes`` multiclass, ``n_tasks``).
    loss_curve_ : list of float
        Training loss after each epoch.
    validation_loss_curve_ : list of float or None
        Loss on the held-out molecules after each epoch with ``early_stopping``, else
        None.
    n_iter_ : int
        Number of epochs run.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the training molecules;
        None without.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    GroverFeaturizer : The pretrained embeddings as a transformer.
    GroverRegressor : Regression head.

    References
    ----------
    .. [1] Y. Rong et al., "Self-Supervised Graph Transformer on Large-Scale Molecular
       Data", NeurIPS 2020. :arxiv:`2007.02835`.

    Examples
    --------
    >>> from sklearn_papers.chem import GroverClassifier
    >>> X, y = ["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], [0, 0, 1, 1]
    >>> clf = GroverClassifier(max_epochs=2, random_state=0).fit(X, y)
    >>> clf.predict_proba(["CCO"]).shape
    (1, 2)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fine-tune on molecules ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_tasks)
            Class labels, or 0/1/NaN multi-task labels (NaN: missing); every task
            column needs at least one label, else ``ValueError`` names the column.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each molecule (None: all 1): each batch minimises
            ``sum_b w_b l_b / sum_b w_b``; a weight of 0 leaves the molecule out of the
            loss (its label still counts in ``classes_``, as in scikit-learn).

        Returns
        -------
        self : GroverClassifier
            Fitted classifier.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverClassifier
        >>> clf = GroverClassifier(pretrained=None, hidden_size=8, max_epochs=2,
        ...                        random_state=0)
        >>> clf.fit(["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], [0, 0, 1, 1]).classes_
        array([0, 1])
        """
        return self._fit_classification(X, y, sample_weight)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes) or (n_samples, n_tasks)
            Columns follow ``classes_``; for multi-task targets, the probability of label 1
            for each task. NaN rows for invalid molecules (``errors="nan"``).

        Examples
        --------
        >>> from sklearn_papers.chem import GroverClassifier
        >>> clf = GroverClassifier(pretrained=None, hidden_size=8, max_epochs=1,
        ...                        random_state=0).fit(["CCO", "c1ccccc1"], [0, 1])
        >>> clf.predict_proba(["CCO"]).shape
        (1, 2)
        """
        return self._class_proba(X)

    def predict(self, X):
        """Predict class labels (multi-task: 0/1 per task).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_tasks)
            Labels from ``classes_``. Invalid molecules (``errors="nan"``) give NaN when the
            classes are numeric, else None.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverClassifier
        >>> clf = GroverClassifier(pretrained=None, hidden_size=8, max_epochs=1,
        ...                        random_state=0).fit(["CCO", "c1ccccc1"], ["a", "b"])
        >>> clf.predict(["CCO", "c1ccccc1O"]).shape
        (2,)
        """
        return self._class_labels(X)
