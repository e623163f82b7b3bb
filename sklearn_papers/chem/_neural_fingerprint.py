"""Neural graph fingerprints (Duvenaud et al., 2015): transformer, regressor, classifier."""

from numbers import Integral, Real

import numpy as np

from sklearn_papers.chem._graph_estimator import (
    _GraphClassifierMixin,
    _GraphRegressorMixin,
    _GraphTransformerMixin,
    _FingerprintBranchMixin,
    _SkorchGraphEstimator,
    ensemble_constraints,
    fingerprint_constraints,
)
from sklearn_papers.chem._svr_blend import BLEND_OPTIONS
from sklearn_papers.chem._training import TRAINING_CONSTRAINTS
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["NeuralFingerprint", "NeuralFingerprintClassifier", "NeuralFingerprintRegressor"]

#: The authors' weight scale for trained networks, ``exp(-4)`` (code release, examples).
_TRAINED_INIT_SCALE = float(np.exp(-4))
#: Weight scale of the untrained ("random") fingerprint, large enough that each softmax
#: output layer is close to one-hot, i.e. close to hashing (paper, Section 3, Figure 3).
_RANDOM_INIT_SCALE = 5.0


class _BaseNeuralFingerprint(_FingerprintBranchMixin, _SkorchGraphEstimator):
    """Parameters, featurization and network of the three estimators."""

    _parameter_constraints = {
        **_SkorchGraphEstimator._parameter_constraints,
        **fingerprint_constraints(),
        "fp_length": [Interval(Integral, 1, None, closed="left")],
        "radius": [Interval(Integral, 0, None, closed="left")],
        "conv_width": [Interval(Integral, 1, None, closed="left")],
        "hidden_size": [Interval(Integral, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "init_scale": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "batch_norm": ["boolean"],
        "even_batches": ["boolean"],
        **TRAINING_CONSTRAINTS,
    }

    def __init__(self, fp_length=50, radius=4, conv_width=20, *, hidden_size=100,
                 alpha=float(np.exp(-2)), lr=1e-2, max_epochs=100,
                 batch_size=100, even_batches=True, init_scale="auto", batch_norm=True,
                 early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 device="cpu", errors="raise", standardize=False, graph_cache=None,
                 descriptors=False, fingerprint_bits=0, fingerprint_radius=2,
                 random_state=None, verbose=1, n_jobs=None):
        self.fp_length = fp_length
        self.radius = radius
        self.conv_width = conv_width
        self.hidden_size = hidden_size
        self.alpha = alpha
        self.lr = lr
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.even_batches = even_batches
        self.init_scale = init_scale
        self.batch_norm = batch_norm
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.lr_schedule = lr_schedule
        self.device = device
        self.errors = errors
        self.standardize = standardize
        self.graph_cache = graph_cache
        self.descriptors = descriptors
        self.fingerprint_bits = fingerprint_bits
        self.fingerprint_radius = fingerprint_radius
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _graph_settings(self, inputs=None):
        return ("neural_fingerprint",)

    def _featurizer(self, inputs=None):
        from sklearn_papers.chem.featurizers import mols_to_graphs

        return mols_to_graphs, {}

    def _penalty(self):
        return self.alpha

    def _iterator_options(self):
        from sklearn_papers.nn._skorch import EvenBatchLoader

        return {"iterator_train": EvenBatchLoader} if self.even_batches else {}

    def _network_params(self, default_scale):
        from sklearn_papers.chem.featurizers import (
            duvenaud_atom_features,
            duvenaud_bond_features,
        )

        return dict(
            n_atom_features=duvenaud_atom_features().n_features,
            n_bond_features=duvenaud_bond_features().n_features,
            fp_length=self.fp_length, radius=self.radius, conv_width=self.conv_width,
            batch_norm=self.batch_norm,
            init_scale=default_scale if self.init_scale == "auto" else self.init_scale,
        )

    def _new_module(self, n_outputs):
        """Fingerprint plus prediction head, for training."""
        from sklearn_papers.nn._neural_fingerprint import NeuralFingerprintModel

        return NeuralFingerprintModel(**self._network_params(_TRAINED_INIT_SCALE),
                                      hidden_size=self.hidden_size, n_outputs=n_outputs,
                                      n_mol_features=self._n_mol_features())

    def _embedding(self, module):
        # The untrained transformer's module_ is the bare fingerprint network.
        fn = module.fingerprint if hasattr(module, "fingerprint") else module
        return fn, self.fp_length


class _NeuralFingerprintPredictor(_BaseNeuralFingerprint):
    """The regressor's and classifier's parameters: the transformer's and
    ``ensemble_size`` (the members' fingerprints are not aligned with each other, so the
    transformer has none: averaging them would mix unrelated features)."""

    _parameter_constraints = {
        **_BaseNeuralFingerprint._parameter_constraints,
        **ensemble_constraints(),
    }

    def __init__(self, fp_length=50, radius=4, conv_width=20, *, hidden_size=100,
                 alpha=float(np.exp(-2)), lr=1e-2, max_epochs=100,
                 batch_size=100, even_batches=True, init_scale="auto", batch_norm=True,
                 early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 ensemble_size=1, device="cpu", errors="raise", standardize=False,
                 graph_cache=None, descriptors=False, fingerprint_bits=0,
                 fingerprint_radius=2, random_state=None, verbose=1, n_jobs=None):
        super().__init__(
            fp_length=fp_length, radius=radius, conv_width=conv_width,
            hidden_size=hidden_size, alpha=alpha, lr=lr, max_epochs=max_epochs,
            batch_size=batch_size, even_batches=even_batches, init_scale=init_scale,
            batch_norm=batch_norm, early_stopping=early_stopping,
            validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
            lr_schedule=lr_schedule, device=device, errors=errors,
            standardize=standardize, graph_cache=graph_cache, descriptors=descriptors,
            fingerprint_bits=fingerprint_bits, fingerprint_radius=fingerprint_radius,
            random_state=random_state, verbose=verbose, n_jobs=n_jobs)
        self.ensemble_size = ensemble_size


class NeuralFingerprint(_GraphTransformerMixin, _BaseNeuralFingerprint):
    """Neural graph fingerprint of molecules (Duvenaud et al., 2015), as a transformer.

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/duvenaud>`.

    A differentiable analogue of circular (ECFP) fingerprints. Each atom starts from 62
    features (element, degree, hydrogens, implicit valence, aromaticity); each of
    ``radius`` layers updates every atom from its own state and the sum of its neighbours'
    states and bond features, through a weight matrix chosen by the atom's degree (paper,
    Algorithm 2); after every layer (and on the input) each atom writes a softmax vector of
    length ``fp_length``, and the fingerprint is the sum over atoms and layers.

    ``fit(X)`` without ``y`` keeps the random weights: with a large weight scale each
    softmax is nearly one-hot and the fingerprint behaves like a hashed circular
    fingerprint (the paper's Section 3 / Figure 3 setting). ``fit(X, y)`` trains the
    fingerprint and a prediction head end to end on the (standardised) regression targets
    ``y`` and ``transform`` returns the learned fingerprint.

    Read more in :doc:`/papers/duvenaud`.

    Parameters
    ----------
    fp_length : int, default=50
        Length of the fingerprint (width of each softmax output layer). Cost grows
        linearly with it.
    radius : int, default=4
        Number of convolution layers, the analogue of the ECFP radius (the paper's ``R``).
        Cost is linear in it.
    conv_width : int, default=20
        Width of the hidden atom states. Each layer holds ``6 (conv_width + 6)
        conv_width`` neighbour weights (one matrix per degree 0-5).
    hidden_size : int, default=100
        Width of the hidden layer of the prediction head used when fitting with ``y``
        (0: a linear head). Not used by ``fit(X)`` without ``y``.
    alpha : float, default=exp(-2)
        L2 penalty ``alpha * mean(w^2)`` over all weights added to the training loss (the
        authors' prior). Only used with ``y``.
    lr : float, default=1e-2
        Adam learning rate (the peak of ``lr_schedule``). Only used with ``y``.
    max_epochs : int, default=100
        Training epochs (passes over the data; the defaults' measurement is in
        :doc:`/molecules`). Only used with ``y``. ``0`` keeps the
        untrained (random-weight) fingerprint even when ``y`` is given, as it always is
        inside a ``Pipeline``.
    batch_size : int, default=100
        Molecules per batch, for training and for ``transform``. Results of ``transform``
        do not depend on it.
    even_batches : bool, default=True
        Split each training epoch's molecules into ``ceil(n / batch_size)`` batches of
        near-equal size (902 molecules: ten batches of 90 or 91) instead of full batches
        and a remainder. A remainder of a few molecules gives a gradient step and, with
        ``batch_norm``, running estimates from a handful of rows, which raised the test
        RMSE on ESOL and FreeSolv (:doc:`/molecules`). ``False`` batches as a
        ``DataLoader`` does (the ``duvenaud`` and ``gilmer`` experiments pass it, as
        their records were computed).
    init_scale : float or "auto", default="auto"
        Standard deviation of the Gaussian initial weights. ``"auto"``: ``exp(-4)`` (the
        authors' value) when fitting with ``y``; 5.0 for the untrained fingerprint, large
        enough that it behaves like ECFP.
    batch_norm : bool, default=True
        Normalise each layer's atom states, ``(x - mean) / (std + 1)``, as the authors'
        code does. Without ``y``, ``fit`` estimates the statistics on ``X``.
    early_stopping : bool, default=False
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``).
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default=10
        Epochs without improvement of the validation loss before stopping.
    lr_schedule : {"constant", "warmup_decay"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``: ``lr``
        throughout, as Duvenaud et al. train (the ``duvenaud`` experiment passes it).
    device : str, default="cpu"
        Torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError`` naming them, or (``"nan"``) are left out of
        ``fit`` and give NaN rows in ``transform``.
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
    fingerprint_bits : int or None, default=0
        A fingerprint branch: this many ECFP bits of each molecule (those of
        :class:`~sklearn_papers.chem.CircularFingerprint` with ``n_bits`` and ``radius``
        of these parameters, 0 or 1, on the standardized molecule) joined to the readout
        before the prediction head, before any ``descriptors``, as
        :class:`~sklearn_papers.chem.GroverFeaturizer`'s fingerprint branch joins them.
        0 or None: no branch. A ``graph_cache`` keeps the bits beside the graphs. The
        fitted model keeps the value of ``fit``.
    fingerprint_radius : int, default=2
        Radius of the fingerprint branch's ECFP (2: ECFP4). Used with
        ``fingerprint_bits`` only.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights and batch shuffling; the global torch RNG is not touched.
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
    module_ : torch.nn.Module
        The fingerprint network (``NeuralFingerprintNet``) after ``fit(X)``, or
        fingerprint plus head (``NeuralFingerprintModel``) after ``fit(X, y)``.
    net_ : skorch.NeuralNet or None
        The trained skorch net (None when fitted without ``y``).
    n_outputs_ : int
        Number of regression targets (0 when fitted without ``y``).
    loss_curve_ : list of float
        Training loss (standardised units, with the penalty) after each epoch; empty
        without ``y``.
    validation_loss_curve_ : list of float or None
        Loss on the held-out molecules after each epoch with ``early_stopping``, else
        None.
    n_iter_ : int
        Number of epochs run.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the training molecules;
        None without.
    fingerprint_ : CircularFingerprint or None
        With ``fingerprint_bits``: the fingerprint whose bits join the readout (its
        ``transform`` gives them); None without.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    NeuralFingerprintRegressor : The same network with a regression head.
    NeuralFingerprintClassifier : The same network with a classification head.

    References
    ----------
    .. [1] D. Duvenaud, D. Maclaurin, J. Aguilera-Iparraguirre, R. Gómez-Bombarelli,
       T. Hirzel, A. Aspuru-Guzik and R. P. Adams, "Convolutional Networks on Graphs for
       Learning Molecular Fingerprints", NeurIPS 2015. :arxiv:`1509.09292`.

    Examples
    --------
    >>> from sklearn_papers.chem import NeuralFingerprint
    >>> nf = NeuralFingerprint(fp_length=16, radius=2, random_state=0)
    >>> nf.fit_transform(["CCO", "c1ccccc1", "CC(=O)O"]).shape
    (3, 16)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the fingerprint: random weights without ``y``, trained end to end with it.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_targets), default=None
            Regression targets (NaN entries are left out of the loss). None keeps the
            random weights.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each molecule in the training loss on ``y`` (None:
            all 1); a weight of 0 is the same as leaving the molecule out (up to how the
            remaining molecules are batched). Refused with ``TypeError`` when the network
            is not trained (``y`` None or ``max_epochs=0``): there is nothing to weight.

        Returns
        -------
        self : NeuralFingerprint
            Fitted transformer.

        Examples
        --------
        >>> from sklearn_papers.chem import NeuralFingerprint
        >>> nf = NeuralFingerprint(fp_length=8, random_state=0).fit(["CCO", "CCN"])
        >>> nf.n_iter_
        0
        """
        return self._fit_transformer(X, y, sample_weight)

    def _new_untrained_module(self):
        from sklearn_papers.nn._neural_fingerprint import NeuralFingerprintNet

        return NeuralFingerprintNet(**self._network_params(_RANDOM_INIT_SCALE))

    def _init_untrained(self, module, graphs, device):
        import torch

        from sklearn_papers.nn._graph import graph_loader

        if self.batch_norm and self.radius:
            # Normalisation statistics of X: cumulative averages over one pass.
            for norm in module.norms:
                norm.momentum = None
                norm.reset_running_stats()
            module.train()
            with torch.no_grad():
                # own generator: a loader without one draws from the global RNG
                for batch, _ in graph_loader(graphs, batch_size=self.batch_size,
                                             generator=torch.Generator()):
                    tensors = dict(batch.to(device).tensors)
                    tensors.pop("mol_features", None)  # joined after the fingerprint
                    module(**tensors)
        return module

    def transform(self, X):
        """Compute the fingerprints of molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        X_new : ndarray of shape (n_samples, fp_length), dtype=float32
            Non-negative; each row sums to ``n_atoms * (radius + 1)``. NaN rows for invalid
            molecules when ``errors="nan"``.

        Examples
        --------
        >>> from sklearn_papers.chem import NeuralFingerprint
        >>> nf = NeuralFingerprint(fp_length=8, radius=2, random_state=0).fit(["CCO"])
        >>> float(nf.transform(["CCO"]).sum())  # 3 atoms, 3 softmax layers
        9.0
        """
        return self._transform(X)


class NeuralFingerprintRegressor(_GraphRegressorMixin, _NeuralFingerprintPredictor):
    """Neural graph fingerprint plus a neural-network head, trained end to end.

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/duvenaud>`.

    The paper's "neural FP + neural net" (``hidden_size > 0``) and "neural FP + linear
    layer" (``hidden_size=0``) rows of Table 2. Targets are standardised internally
    (as the authors did) and predictions come back in the original units. Several targets
    are fitted jointly (one output each); NaN targets (missing values) are left out of the
    loss. By default the prediction is the mean of five such networks trained from their
    own seeds (``ensemble_size``); ``ensemble_size=1`` trains one, as the paper does.

    Read more in :doc:`/papers/duvenaud`.

    Parameters
    ----------
    fp_length : int, default=50
        Length of the fingerprint.
    radius : int, default=4
        Number of convolution layers (the paper's ``R``).
    conv_width : int, default=20
        Width of the hidden atom states.
    hidden_size : int, default=100
        Hidden width of the head; 0 for a linear head.
    alpha : float, default=exp(-2)
        L2 penalty ``alpha * mean(w^2)`` over all weights.
    lr : float, default=1e-2
        Adam learning rate (the peak of ``lr_schedule``).
    max_epochs : int, default=100
        Training epochs (the defaults' measurement is in :doc:`/molecules`).
    batch_size : int, default=100
        Largest number of molecules per training batch (see ``even_batches``).
    even_batches : bool, default=True
        Split each training epoch's molecules into ``ceil(n / batch_size)`` batches of
        near-equal size (902 molecules: ten batches of 90 or 91) instead of full batches
        and a remainder. A remainder of a few molecules gives a gradient step and, with
        ``batch_norm``, running estimates from a handful of rows, which raised the test
        RMSE on ESOL and FreeSolv (:doc:`/molecules`). ``False`` batches as a
        ``DataLoader`` does (the ``duvenaud`` and ``gilmer`` experiments pass it, as
        their records were computed).
    init_scale : float or "auto", default="auto"
        Standard deviation of the Gaussian initial weights; ``"auto"`` is ``exp(-4)``.
    batch_norm : bool, default=True
        Authors' batch normalisation after each layer.
    early_stopping : bool, default=False
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``).
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default=10
        Epochs without improvement of the validation loss before stopping.
    lr_schedule : {"constant", "warmup_decay"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``: ``lr``
        throughout, as Duvenaud et al. train (the ``duvenaud`` experiment passes it).
    ensemble_size : int, default=5
        Train this many networks alike, each from its own seed, and predict with the mean
        of their predictions (chemprop's ``ensemble_size``, Yang et al. 2019). Fit time,
        prediction time and memory grow linearly with it: the default trains five
        networks, so a fit takes five times as long as ``ensemble_size=1`` (one
        network, the paper's model). Against one network, five lowered the test RMSE on
        ESOL and FreeSolv (:ref:`molecule_measurements_defaults`); against three, they
        lowered it on MoleculeACE's targets (:doc:`/molecules`). ``random_state`` seeds the whole
        ensemble: member 0 is the network ``ensemble_size=1`` trains, member ``k`` gets the
        ``k``-th ``numpy.random.SeedSequence`` child of member 0's seed, so a larger
        ensemble holds the members of a smaller one.
    blend : {"ecfp_svr"} or None, default=None
        ``"ecfp_svr"``: predict ``(1 - w) * network + w * SVR``, where the SVR is
        MoleculeACE's support vector regression on ECFP4 (radius 2, 1,024 bits; RBF
        kernel, ``C`` and ``gamma`` chosen by 5-fold cross-validation), fitted on the
        same molecules, and ``w`` in [0, 1] minimises the blend's squared error on
        molecules the networks did not train on (the SVR's prediction there: its
        cross-validation fold's that held the molecule out), per target column
        (``blend_weight_``). With ``early_stopping=True`` these are the molecules early
        stopping held out from the first network. Without it and with ``ensemble_size`` >
        1 (the defaults), member ``k`` of the ensemble leaves out its own block of
        ``validation_fraction`` of the molecules (the blocks are disjoint) and trains its
        ``max_epochs`` on the others. Each member then trains on fewer molecules, which
        costs accuracy where the SVR does not help. On potency data of one target the
        blend errs less than the networks alone (:ref:`benchmark-moleculeace`); on ESOL
        and FreeSolv it errs more. With one network and no early stopping, and with None,
        the network predicts alone. :class:`~sklearn_papers.chem.MPNNRegressor` blends by
        default.
    device : str, default="cpu"
        Torch device.
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError``, or (``"nan"``) are left out of ``fit`` and
        predicted as NaN.
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
    fingerprint_bits : int or None, default=0
        A fingerprint branch: this many ECFP bits of each molecule (those of
        :class:`~sklearn_papers.chem.CircularFingerprint` with ``n_bits`` and ``radius``
        of these parameters, 0 or 1, on the standardized molecule) joined to the readout
        before the prediction head, before any ``descriptors``, as
        :class:`~sklearn_papers.chem.GroverFeaturizer`'s fingerprint branch joins them.
        0 or None: no branch. A ``graph_cache`` keeps the bits beside the graphs. The
        fitted model keeps the value of ``fit``.
    fingerprint_radius : int, default=2
        Radius of the fingerprint branch's ECFP (2: ECFP4). Used with
        ``fingerprint_bits`` only.
    random_state : int, RandomState instance or None, default=None
        Seeds weights and shuffling; the global torch RNG is untouched.
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
    module_ : torch.nn.Module
        The trained ``NeuralFingerprintModel``.
        With ``ensemble_size`` > 1, a module holding the trained networks
        (``module_.members``) whose output is their mean; ``net_``, ``loss_curve_``,
        ``validation_loss_curve_`` and ``n_iter_`` are then those of member 0.
    net_ : skorch.NeuralNet
        The skorch net that trained it.
    n_outputs_ : int
        Number of targets.
    loss_curve_ : list of float
        Training loss (standardised MSE plus penalty) after each epoch.
    validation_loss_curve_ : list of float or None
        Loss on the held-out molecules after each epoch with ``early_stopping``, else
        None.
    n_iter_ : int
        Number of epochs run.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the training molecules;
        None without.
    fingerprint_ : CircularFingerprint or None
        With ``fingerprint_bits``: the fingerprint whose bits join the readout (its
        ``transform`` gives them); None without.
    blend_weight_ : ndarray of shape (n_targets,)
        The SVR's weight in each target's prediction, in [0, 1]; all 0 without a blend.
    blend_svr_ : list of sklearn.svm.SVR or None
        With ``blend="ecfp_svr"`` and ``early_stopping``: one fitted SVR per target;
        else None.
    blend_fingerprint_ : CircularFingerprint or None
        The ECFP the SVRs read (radius 2, 1,024 bits); None without a blend.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    NeuralFingerprint : The fingerprint as a transformer.
    NeuralFingerprintClassifier : Classification head.

    References
    ----------
    .. [1] D. Duvenaud et al., "Convolutional Networks on Graphs for Learning Molecular
       Fingerprints", NeurIPS 2015. :arxiv:`1509.09292`.

    Examples
    --------
    >>> from sklearn_papers.chem import NeuralFingerprintRegressor
    >>> X, y = ["CCO", "CCCO", "CCCCO", "c1ccccc1"], [0.0, -0.5, -1.0, -2.0]
    >>> reg = NeuralFingerprintRegressor(max_epochs=5, random_state=0).fit(X, y)
    >>> reg.predict(["CCO"]).shape
    (1,)
    """

    _parameter_constraints = {
        **_NeuralFingerprintPredictor._parameter_constraints,
        "blend": [StrOptions(set(BLEND_OPTIONS)), None],
    }

    def __init__(self, fp_length=50, radius=4, conv_width=20, *, hidden_size=100,
                 alpha=float(np.exp(-2)), lr=1e-2, max_epochs=100,
                 batch_size=100, even_batches=True, init_scale="auto", batch_norm=True,
                 early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 ensemble_size=5, blend=None, device="cpu", errors="raise",
                 standardize=False, graph_cache=None, descriptors=False, fingerprint_bits=0,
                 fingerprint_radius=2, random_state=None, verbose=1, n_jobs=None):
        super().__init__(
            fp_length=fp_length, radius=radius, conv_width=conv_width,
            hidden_size=hidden_size, alpha=alpha, lr=lr, max_epochs=max_epochs,
            batch_size=batch_size, even_batches=even_batches, init_scale=init_scale,
            batch_norm=batch_norm, early_stopping=early_stopping,
            validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
            lr_schedule=lr_schedule, ensemble_size=ensemble_size, device=device,
            errors=errors, standardize=standardize, graph_cache=graph_cache,
            descriptors=descriptors, fingerprint_bits=fingerprint_bits,
            fingerprint_radius=fingerprint_radius, random_state=random_state,
            verbose=verbose, n_jobs=n_jobs)
        self.blend = blend

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train fingerprint and head on molecules ``X`` and targets ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Regression targets. With several targets, NaN marks a missing value (left
            out of the loss and of the standardisation) and each column needs at least
            one finite value; with one, NaN raises ``ValueError`` naming the rows (drop
            or impute them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each molecule (None: all 1): each batch minimises
            ``sum_b w_b l_b / sum_b w_b``. Molecules of weight 0 are left out of the loss
            and of the target standardisation, as if dropped (up to how the remaining
            molecules are batched).

        Returns
        -------
        self : NeuralFingerprintRegressor
            Fitted regressor.

        Examples
        --------
        >>> from sklearn_papers.chem import NeuralFingerprintRegressor
        >>> reg = NeuralFingerprintRegressor(max_epochs=2, random_state=0)
        >>> reg.fit(["CCO", "CCCO", "CCCCO"], [0.0, -0.5, -1.0]).n_iter_
        2
        """
        return self._fit_regression(X, y, sample_weight)

    def predict(self, X):
        """Predict targets in their original units.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions (float64); NaN for invalid molecules when ``errors="nan"``.

        Examples
        --------
        >>> from sklearn_papers.chem import NeuralFingerprintRegressor
        >>> reg = NeuralFingerprintRegressor(max_epochs=2, random_state=0)
        >>> reg.fit(["CCO", "CCCO", "CCCCO"], [0.0, -0.5, -1.0]).predict(["CCO"]).shape
        (1,)
        """
        return self._predict_regression(X)


class NeuralFingerprintClassifier(_GraphClassifierMixin, _NeuralFingerprintPredictor):
    """Neural graph fingerprint plus a classification head, trained end to end.

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/duvenaud>`.

    Three kinds of target:

    * binary (1-D, two classes): one logit, binary cross-entropy;
    * multiclass (1-D, more classes): softmax, cross-entropy;
    * multi-task binary (2-D, 0/1 with NaN for missing labels, as Tox21): one logit per
      task, binary cross-entropy over the labelled entries only.

    Read more in :doc:`/papers/duvenaud`.

    Parameters
    ----------
    fp_length : int, default=50
        Length of the fingerprint.
    radius : int, default=4
        Number of convolution layers (the paper's ``R``).
    conv_width : int, default=20
        Width of the hidden atom states.
    hidden_size : int, default=100
        Hidden width of the head; 0 for a linear head.
    alpha : float, default=exp(-2)
        L2 penalty ``alpha * mean(w^2)`` over all weights.
    lr : float, default=1e-2
        Adam learning rate (the peak of ``lr_schedule``).
    max_epochs : int, default=100
        Training epochs (the defaults' measurement is in :doc:`/molecules`).
    batch_size : int, default=100
        Largest number of molecules per training batch (see ``even_batches``).
    even_batches : bool, default=True
        Split each training epoch's molecules into ``ceil(n / batch_size)`` batches of
        near-equal size (902 molecules: ten batches of 90 or 91) instead of full batches
        and a remainder. A remainder of a few molecules gives a gradient step and, with
        ``batch_norm``, running estimates from a handful of rows, which raised the test
        RMSE on ESOL and FreeSolv (:doc:`/molecules`). ``False`` batches as a
        ``DataLoader`` does (the ``duvenaud`` and ``gilmer`` experiments pass it, as
        their records were computed).
    init_scale : float or "auto", default="auto"
        Standard deviation of the Gaussian initial weights; ``"auto"`` is ``exp(-4)``.
    batch_norm : bool, default=True
        Authors' batch normalisation after each layer.
    early_stopping : bool, default=False
        Hold out a random ``validation_fraction`` of the training molecules (seeded by
        ``random_state``), stop when their loss has not improved for
        ``n_iter_no_change`` epochs, and restore the weights of the best epoch (as
        scikit-learn's ``MLPRegressor``).
    validation_fraction : float, default=0.1
        Share of the training molecules held out with ``early_stopping`` (at least one).
    n_iter_no_change : int, default=10
        Epochs without improvement of the validation loss before stopping.
    lr_schedule : {"constant", "warmup_decay"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"constant"``: ``lr``
        throughout, as Duvenaud et al. train (the ``duvenaud`` experiment passes it).
    ensemble_size : int, default=1
        Train this many networks alike, each from its own seed, and predict with the mean
        of their class probabilities (chemprop's ``ensemble_size``, Yang et al. 2019).
        Fit time, prediction time and memory grow linearly with it. ``random_state``
        seeds the whole ensemble: member 0 is the network ``ensemble_size=1`` trains,
        member ``k`` gets the ``k``-th ``numpy.random.SeedSequence`` child of member 0's
        seed, so a larger ensemble holds the members of a smaller one.
    device : str, default="cpu"
        Torch device.
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError``, or (``"nan"``) are left out of ``fit``;
        their ``predict_proba`` rows are NaN and ``predict`` gives NaN (numeric classes)
        or None (other classes). A class seen only on left-out molecules is missing from
        ``classes_``, with a ``UserWarning`` naming it.
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
    fingerprint_bits : int or None, default=0
        A fingerprint branch: this many ECFP bits of each molecule (those of
        :class:`~sklearn_papers.chem.CircularFingerprint` with ``n_bits`` and ``radius``
        of these parameters, 0 or 1, on the standardized molecule) joined to the readout
        before the prediction head, before any ``descriptors``, as
        :class:`~sklearn_papers.chem.GroverFeaturizer`'s fingerprint branch joins them.
        0 or None: no branch. A ``graph_cache`` keeps the bits beside the graphs. The
        fitted model keeps the value of ``fit``.
    fingerprint_radius : int, default=2
        Radius of the fingerprint branch's ECFP (2: ECFP4). Used with
        ``fingerprint_bits`` only.
    random_state : int, RandomState instance or None, default=None
        Seeds weights and shuffling; the global torch RNG is untouched.
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
    n_outputs_ : int
        Number of network outputs (1 binary, ``n_classes`` multiclass, ``n_tasks``).
    module_ : torch.nn.Module
        The trained ``NeuralFingerprintModel``.
        With ``ensemble_size`` > 1, a module holding the trained networks
        (``module_.members``) whose outputs are the logits of their mean probabilities;
        ``net_``, ``loss_curve_``, ``validation_loss_curve_`` and ``n_iter_`` are then
        those of member 0.
    net_ : skorch.NeuralNet
        The skorch net that trained it.
    loss_curve_ : list of float
        Training loss (cross-entropy plus penalty) after each epoch.
    validation_loss_curve_ : list of float or None
        Loss on the held-out molecules after each epoch with ``early_stopping``, else
        None.
    n_iter_ : int
        Number of epochs run.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the training molecules;
        None without.
    fingerprint_ : CircularFingerprint or None
        With ``fingerprint_bits``: the fingerprint whose bits join the readout (its
        ``transform`` gives them); None without.
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    NeuralFingerprint : The fingerprint as a transformer.
    NeuralFingerprintRegressor : Regression head.

    References
    ----------
    .. [1] D. Duvenaud et al., "Convolutional Networks on Graphs for Learning Molecular
       Fingerprints", NeurIPS 2015. :arxiv:`1509.09292`.

    Examples
    --------
    >>> from sklearn_papers.chem import NeuralFingerprintClassifier
    >>> X, y = ["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], [0, 0, 1, 1]
    >>> clf = NeuralFingerprintClassifier(max_epochs=5, random_state=0).fit(X, y)
    >>> clf.predict_proba(["CCO"]).shape
    (1, 2)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train fingerprint and head on molecules ``X`` and labels ``y``.

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
        self : NeuralFingerprintClassifier
            Fitted classifier.

        Examples
        --------
        >>> from sklearn_papers.chem import NeuralFingerprintClassifier
        >>> clf = NeuralFingerprintClassifier(max_epochs=2, random_state=0)
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
        >>> from sklearn_papers.chem import NeuralFingerprintClassifier
        >>> clf = NeuralFingerprintClassifier(max_epochs=2, random_state=0)
        >>> clf = clf.fit(["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], ["x", "x", "y", "y"])
        >>> clf.predict_proba(["CCO", "CCN"]).shape
        (2, 2)
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
        >>> from sklearn_papers.chem import NeuralFingerprintClassifier
        >>> clf = NeuralFingerprintClassifier(max_epochs=2, random_state=0)
        >>> clf = clf.fit(["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], ["x", "x", "y", "y"])
        >>> clf.predict(["CCO"]).shape
        (1,)
        """
        return self._class_labels(X)
