"""Message passing neural networks (Gilmer et al., 2017): regressor, classifier, transformer."""

from numbers import Integral
from operator import methodcaller

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
from sklearn_papers.chem._training import HOLD_TRAINING_CONSTRAINTS
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["MPNN", "MPNNClassifier", "MPNNRegressor", "mpnn_atom_features"]

#: Elements with their own slot in :func:`mpnn_atom_features` (others share "unknown").
MPNN_ATOM_SYMBOLS = (
    "H", "C", "N", "O", "F", "P", "S", "Cl", "Br", "I", "B", "Si", "Se", "Na", "K",
    "Li", "Mg", "Ca", "Fe", "Zn", "Cu", "Al", "As", "Sn", "Hg",
)
_HYBRIDIZATIONS = ("SP", "SP2", "SP3", "SP3D", "SP3D2")


# Getters are module-level, picklable callables (the feature set pickles); ``methodcaller``
# calls the RDKit method without a Python frame per atom.
_symbol = methodcaller("GetSymbol")
_degree = methodcaller("GetDegree")
_formal_charge = methodcaller("GetFormalCharge")
# Implicit and explicit hydrogens plus hydrogen *neighbours*, so an atom gets the same
# count whether its hydrogens are implicit or nodes of the graph.
_n_hydrogens = methodcaller("GetTotalNumHs", includeNeighbors=True)
_aromatic = methodcaller("GetIsAromatic")
_in_ring = methodcaller("IsInRing")


def _hybridization(atom):
    return str(atom.GetHybridization())


def mpnn_atom_features():
    """Atom features for the MPNN, after Gilmer et al. (2017), Table 1.

    The paper's QM9 features (element, aromatic, hybridization sp/sp2/sp3, number of
    hydrogens; acceptor/donor and atomic number are left out here) extended to drug-like
    molecules: element one-hot over ``MPNN_ATOM_SYMBOLS`` plus unknown (26), degree 0-5 (6,
    larger use the last slot), formal charge -1/0/+1 plus other (4), total hydrogens 0-4
    (5, more use the last slot), hybridization SP..SP3D2 plus other (6), aromatic (1), in a
    ring (1): 49 values.

    Returns
    -------
    features : sklearn_papers.chem.featurizers.AtomFeatures
        ``features.n_features == 49``.
    """
    from sklearn_papers.chem.featurizers import AtomFeatures, Flag, OneHot

    return AtomFeatures([
        OneHot("symbol", _symbol, MPNN_ATOM_SYMBOLS, unknown="extra"),
        OneHot("degree", _degree, range(6), unknown="last"),
        OneHot("formal_charge", _formal_charge, (-1, 0, 1), unknown="extra"),
        OneHot("total_hs", _n_hydrogens, range(5), unknown="last"),
        OneHot("hybridization", _hybridization, _HYBRIDIZATIONS, unknown="extra"),
        Flag("aromatic", _aromatic),
        Flag("in_ring", _in_ring),
    ])


def _featurize(mols, explicit_hydrogens, smiles=None):
    """MolGraphs of the MPNN's feature sets; ``None`` entries stay ``None``.

    ``smiles``: the SMILES each molecule was read from, or None (saves work only).
    """
    from rdkit import Chem

    from sklearn_papers.chem.featurizers import (
        duvenaud_bond_features,
        mols_to_graphs,
        standardize_mol,
    )

    smiles = [None] * len(mols) if smiles is None else smiles
    # every spelling -> one canonical heavy-atom graph
    std = [None if mol is None else standardize_mol(mol, s) for mol, s in zip(mols, smiles)]
    if explicit_hydrogens:  # hydrogens become nodes, appended after heavy atoms
        std = [None if mol is None else Chem.AddHs(mol) for mol in std]
    return mols_to_graphs(std, mpnn_atom_features(), duvenaud_bond_features(),
                          standardize=False)


class _BaseMPNN(_FingerprintBranchMixin, _SkorchGraphEstimator):
    """Parameters, featurization and network of the three estimators."""

    _parameter_constraints = {
        **_SkorchGraphEstimator._parameter_constraints,
        **fingerprint_constraints(),
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "n_steps": [Interval(Integral, 0, None, closed="left")],
        "set2set_steps": [Interval(Integral, 1, None, closed="left")],
        "edge_hidden_size": [Interval(Integral, 1, None, closed="left")],
        "message": [StrOptions({"edge_network", "pair", "directed"})],
        "readout": [StrOptions({"set2set", "sum", "mean"})],
        "explicit_hydrogens": ["boolean"],
        **HOLD_TRAINING_CONSTRAINTS,
    }

    def __init__(self, hidden_size=300, *, n_steps=3, set2set_steps=6, edge_hidden_size=128,
                 message="directed", readout="mean", explicit_hydrogens=False,
                 max_epochs=50, batch_size=32, lr=2e-3, early_stopping=True,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 device="cpu", errors="raise", standardize=False, graph_cache=None,
                 descriptors=False, fingerprint_bits=0, fingerprint_radius=2,
                 random_state=None, verbose=1, n_jobs=None):
        self.hidden_size = hidden_size
        self.n_steps = n_steps
        self.set2set_steps = set2set_steps
        self.edge_hidden_size = edge_hidden_size
        self.message = message
        self.readout = readout
        self.explicit_hydrogens = explicit_hydrogens
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
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

    def _current_input_params(self):
        params = super()._current_input_params()
        params["explicit_hydrogens"] = (bool(self.explicit_hydrogens), self.explicit_hydrogens)
        return params

    def _graph_settings(self, inputs=None):
        inputs = self._input_params() if inputs is None else inputs
        return ("mpnn", inputs["explicit_hydrogens"])

    def _featurizer(self, inputs=None):
        inputs = self._input_params() if inputs is None else inputs
        return _featurize, {"explicit_hydrogens": inputs["explicit_hydrogens"]}

    def _new_module(self, n_outputs):
        from sklearn_papers.chem.featurizers import duvenaud_bond_features
        from sklearn_papers.nn._mpnn import MPNNModel

        return MPNNModel(
            n_atom_features=mpnn_atom_features().n_features,
            n_bond_features=duvenaud_bond_features().n_features,
            hidden_size=self.hidden_size, n_steps=self.n_steps, message=self.message,
            readout=self.readout, set2set_steps=self.set2set_steps,
            edge_hidden_size=self.edge_hidden_size, n_outputs=n_outputs,
            n_mol_features=self._n_mol_features(),
        )

    def _embedding(self, module):
        return module.fingerprint, module.encoder.out_features


class _MPNNPredictor(_BaseMPNN):
    """The regressor's and classifier's parameters: the transformer's and
    ``ensemble_size`` (the members' embeddings are not aligned with each other, so the
    transformer has none: averaging them would mix unrelated features)."""

    _parameter_constraints = {
        **_BaseMPNN._parameter_constraints,
        **ensemble_constraints(),
    }

    def __init__(self, hidden_size=300, *, n_steps=3, set2set_steps=6, edge_hidden_size=128,
                 message="directed", readout="mean", explicit_hydrogens=False,
                 max_epochs=50, batch_size=32, lr=2e-3, early_stopping=True,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 ensemble_size=1, device="cpu", errors="raise", standardize=False,
                 graph_cache=None, descriptors=False, fingerprint_bits=0,
                 fingerprint_radius=2, random_state=None, verbose=1, n_jobs=None):
        super().__init__(
            hidden_size=hidden_size, n_steps=n_steps, set2set_steps=set2set_steps,
            edge_hidden_size=edge_hidden_size, message=message, readout=readout,
            explicit_hydrogens=explicit_hydrogens, max_epochs=max_epochs,
            batch_size=batch_size, lr=lr, early_stopping=early_stopping,
            validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
            lr_schedule=lr_schedule, device=device, errors=errors,
            standardize=standardize, graph_cache=graph_cache, descriptors=descriptors,
            fingerprint_bits=fingerprint_bits, fingerprint_radius=fingerprint_radius,
            random_state=random_state, verbose=verbose, n_jobs=n_jobs)
        self.ensemble_size = ensemble_size


class MPNN(_GraphTransformerMixin, _BaseMPNN):
    """Message passing neural network readout of molecules, as a transformer.

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/gilmer>`.

    The MPNN of Gilmer et al. (2017): atoms start from 49 features (element, degree,
    charge, hydrogens, hybridization, aromaticity, ring membership), exchange messages
    along bonds for ``n_steps`` steps (Eq. 1) and update their states (Eq. 2: a GRU for
    the paper's edge-network and pair messages; by default chemprop's directed-bond
    messages with a residual update); the readout (Eq. 3, the mean of the atom states by
    default, or the paper's set2set) turns the atom states into one vector per molecule,
    which :meth:`transform` returns.

    ``fit(X, y)`` trains the network and a regression head end to end on the
    (standardised) targets ``y``, so the readout becomes a learned representation;
    ``fit(X)`` without ``y`` keeps random weights, and so does ``max_epochs=0`` (``y``
    is then ignored, so the untrained featurizer also works inside a classification
    ``Pipeline``, which always passes ``y``).

    Read more in :doc:`/papers/gilmer`.

    Parameters
    ----------
    hidden_size : int, default=300
        ``d``, the width of the atom (or bond) states and of the head's hidden layer.
        Cost grows as ``d^2`` (``d^3`` per edge for the edge network).
    n_steps : int, default=3
        ``T``, the number of message passing steps (weights shared across steps).
    set2set_steps : int, default=6
        Processing steps of the set2set readout (ignored by "sum" and "mean").
    edge_hidden_size : int, default=128
        Hidden width of the message MLP (bond features -> ``d x d`` matrix for the edge
        network, ``(h_v, h_w, e_vw)`` -> message for "pair").
    message : {"edge_network", "pair", "directed"}, default="directed"
        Message function ``M`` (paper Section 5.1); "edge_network" is the paper's best
        on QM9 (with ``hidden_size=64, n_steps=6, readout="set2set"``, the paper's
        model), "pair" its pair message. "directed" (the default): chemprop-style
        directed-bond messages (Yang et al. 2019): states live on directed bonds
        ``v -> w``, start as ``relu(W_i [x_v, e_vw])``, and each
        of the ``n_steps`` steps adds ``W_h`` times the sum of the bond states entering
        ``v`` except ``w -> v``; atom states ``relu(W_o [x_v, sum of entering bond
        states])`` then go to the readout (no GRU).
    readout : {"set2set", "sum", "mean"}, default="mean"
        Readout ``R`` (paper Section 5.3); "set2set" is the paper's best and gives a vector
        of ``2 d`` values, "sum" and "mean" give ``d``.

        The defaults (directed messages, ``d = 300``, 3 steps, mean readout, warm-up
        then decay) are chemprop's D-MPNN shape and schedule inside this framework;
        they were chosen over the paper's model by the search of
        ``benchmarks/search_defaults.py`` on ESOL and FreeSolv (:doc:`/molecules`).
        The step size, batch and patience (``lr=2e-3``, ``batch_size=32``,
        ``n_iter_no_change=10``) replace chemprop's ``1e-3``, 64 and "keep the best
        of 50 epochs": the network, still improving at chemprop's budget, reaches its
        best held-out epoch sooner at equal or lower test error in about the same or
        less CPU time (``benchmarks/bench_gilmer_defaults.py``).
    explicit_hydrogens : bool, default=False
        Put hydrogens in the graph as atoms (the paper's QM9 setting) instead of counting
        them as an atom feature only. The fitted model keeps the value of ``fit``, as
        for ``standardize``.
    max_epochs : int, default=50
        Training epochs (passes over the data).
    batch_size : int, default=32
        Molecules per batch, for training and inference (a last batch of one is fine;
        outputs do not depend on the batching).
    lr : float, default=2e-3
        Adam learning rate (the peak of the schedule).
    early_stopping : bool, default=True
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
        With the defaults, training stops 10 epochs after the best epoch on the
        held-out 10 % (whose weights are kept), or at ``max_epochs=50``.
        ``early_stopping=False`` trains on every molecule and keeps the last epoch.
    lr_schedule : {"constant", "warmup_decay", "warmup_decay_hold"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"warmup_decay_hold"``:
        the same, reaching ``lr / 10`` at half of ``max_epochs`` and holding it for the
        second half, so that with ``early_stopping`` and a patience shorter than that
        half training can end before ``max_epochs``. ``"constant"``:
        ``lr`` throughout.

        ``"warmup_decay_hold"`` ends training sooner on some splits at a slightly higher
        test RMSE (measured on ESOL and FreeSolv with ``lr=3e-3``).
    device : str, default="cpu"
        Torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError`` naming them, or (``"nan"``) are left out of
        ``fit`` and give NaN rows at prediction. A class seen only on left-out molecules
        is missing from a classifier's ``classes_``, with a ``UserWarning`` naming it.
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
        The network (``sklearn_papers.nn._mpnn.MPNNModel``); its ``fingerprint`` method
        gives the readout.
    net_ : skorch.NeuralNet or None
        The skorch net that trained it (None when fitted without ``y``).
    n_outputs_ : int
        Number of regression targets (0 when fitted without ``y``).
    loss_curve_ : list of float
        Training MSE (standardised units) after each epoch; empty without ``y``.
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
    MPNNRegressor : The same network with a regression head.
    MPNNClassifier : The same network with a classification head.
    NeuralFingerprint : Duvenaud et al. (2015), a special case of the framework.

    References
    ----------
    .. [1] J. Gilmer, S. S. Schoenholz, P. F. Riley, O. Vinyals and G. E. Dahl, "Neural
       Message Passing for Quantum Chemistry", ICML 2017. :arxiv:`1704.01212`.
    .. [2] O. Vinyals, S. Bengio and M. Kudlur, "Order Matters: Sequence to sequence for
       sets", ICLR 2016. :arxiv:`1511.06391`.
    .. [3] K. Yang et al., "Analyzing Learned Molecular Representations for Property
       Prediction", J. Chem. Inf. Model. 59(8), 2019 (chemprop's D-MPNN: the
       directed-bond messages and the training of the defaults). :arxiv:`1904.01561`.

    Examples
    --------
    >>> from sklearn_papers.chem import MPNN
    >>> mpnn = MPNN(hidden_size=8, n_steps=2, random_state=0)
    >>> mpnn.fit_transform(["CCO", "c1ccccc1", "CC(=O)O"]).shape
    (3, 8)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the network: random weights without ``y``, trained on ``y`` with it.

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
            remaining molecules are batched and, with ``early_stopping``, which are held
            out). Refused with ``TypeError`` when the network
            is not trained (``y`` None or ``max_epochs=0``): there is nothing to weight.

        Returns
        -------
        self : MPNN
            Fitted transformer.
        """
        return self._fit_transformer(X, y, sample_weight)

    def transform(self, X):
        """Readout vectors of molecules.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components), dtype=float32
            ``n_components`` is ``2 * hidden_size`` for the set2set readout, else
            ``hidden_size``. NaN rows for invalid molecules when ``errors="nan"``.
        """
        return self._transform(X)


class MPNNRegressor(_GraphRegressorMixin, _MPNNPredictor):
    """Message passing neural network regressor (Gilmer et al., 2017).

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/gilmer>`.

    Messages along bonds (Eq. 1) and an update (Eq. 2) shared across ``n_steps`` steps,
    a readout (Eq. 3) and a one-hidden-layer head: by default chemprop's directed-bond
    messages, mean readout, ``d = 300`` and 3 steps; the paper's model is
    ``message="edge_network", readout="set2set", hidden_size=64, n_steps=6``. Trained
    end to end with Adam on the mean squared error. Targets are standardised
    internally (per column) and predictions come back in the original units. Several
    targets are fitted jointly; NaN targets are left out of the loss.

    Read more in :doc:`/papers/gilmer`.

    Parameters
    ----------
    hidden_size : int, default=300
        ``d``, the width of the atom (or bond) states and of the head's hidden layer.
        Cost grows as ``d^2`` (``d^3`` per edge for the edge network).
    n_steps : int, default=3
        ``T``, the number of message passing steps (weights shared across steps).
    set2set_steps : int, default=6
        Processing steps of the set2set readout (ignored by "sum" and "mean").
    edge_hidden_size : int, default=128
        Hidden width of the message MLP (bond features -> ``d x d`` matrix for the edge
        network, ``(h_v, h_w, e_vw)`` -> message for "pair").
    message : {"edge_network", "pair", "directed"}, default="directed"
        Message function ``M`` (paper Section 5.1); "edge_network" is the paper's best
        on QM9 (with ``hidden_size=64, n_steps=6, readout="set2set"``, the paper's
        model), "pair" its pair message. "directed" (the default): chemprop-style
        directed-bond messages (Yang et al. 2019): states live on directed bonds
        ``v -> w``, start as ``relu(W_i [x_v, e_vw])``, and each
        of the ``n_steps`` steps adds ``W_h`` times the sum of the bond states entering
        ``v`` except ``w -> v``; atom states ``relu(W_o [x_v, sum of entering bond
        states])`` then go to the readout (no GRU).
    readout : {"set2set", "sum", "mean"}, default="mean"
        Readout ``R`` (paper Section 5.3); "set2set" is the paper's best and gives a vector
        of ``2 d`` values, "sum" and "mean" give ``d``.

        The defaults (directed messages, ``d = 300``, 3 steps, mean readout, warm-up
        then decay) are chemprop's D-MPNN shape and schedule inside this framework;
        they were chosen over the paper's model by the search of
        ``benchmarks/search_defaults.py`` on ESOL and FreeSolv (:doc:`/molecules`).
        The step size, batch and patience (``lr=2e-3``, ``batch_size=32``,
        ``n_iter_no_change=10``) replace chemprop's ``1e-3``, 64 and "keep the best
        of 50 epochs": the network, still improving at chemprop's budget, reaches its
        best held-out epoch sooner at equal or lower test error in about the same or
        less CPU time (``benchmarks/bench_gilmer_defaults.py``).
    explicit_hydrogens : bool, default=False
        Put hydrogens in the graph as atoms (the paper's QM9 setting) instead of counting
        them as an atom feature only. The fitted model keeps the value of ``fit``, as
        for ``standardize``.
    max_epochs : int, default=50
        Training epochs (passes over the data).
    batch_size : int, default=32
        Molecules per batch, for training and inference (a last batch of one is fine;
        outputs do not depend on the batching).
    lr : float, default=2e-3
        Adam learning rate (the peak of the schedule).
    early_stopping : bool, default=True
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
        With the defaults, training stops 10 epochs after the best epoch on the
        held-out 10 % (whose weights are kept), or at ``max_epochs=50``.
        ``early_stopping=False`` trains on every molecule and keeps the last epoch.
    lr_schedule : {"constant", "warmup_decay", "warmup_decay_hold"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"warmup_decay_hold"``:
        the same, reaching ``lr / 10`` at half of ``max_epochs`` and holding it for the
        second half, so that with ``early_stopping`` and a patience shorter than that
        half training can end before ``max_epochs``. ``"constant"``:
        ``lr`` throughout.

        ``"warmup_decay_hold"`` ends training sooner on some splits at a slightly higher
        test RMSE (measured on ESOL and FreeSolv with ``lr=3e-3``).
    ensemble_size : int, default=1
        Train this many networks alike, each from its own seed, and predict with the mean
        of their predictions (chemprop's ``ensemble_size``, Yang et al. 2019). Fit time,
        prediction time and memory grow linearly with it. ``random_state`` seeds the whole
        ensemble: member 0 is the network ``ensemble_size=1`` trains, member ``k`` gets the
        ``k``-th ``numpy.random.SeedSequence`` child of member 0's seed, so a larger
        ensemble holds the members of a smaller one.
    blend : {"ecfp_svr"} or None, default="ecfp_svr"
        ``"ecfp_svr"``: predict ``(1 - w) * network + w * SVR``, where the SVR is
        MoleculeACE's support vector regression on ECFP4 (radius 2, 1,024 bits; RBF
        kernel, ``C`` and ``gamma`` chosen by 5-fold cross-validation on the training
        molecules), fitted on the same molecules. The weight ``w`` in [0, 1] minimises
        the blend's squared error on the molecules early stopping held out from the first
        network, where the SVR's prediction is that of its cross-validation fold that held
        the molecule out; neither model trained on them. It is computed per target column
        (``blend_weight_``); with fewer than 5 labelled held-out molecules it is 0, and
        with fewer for every target no SVR is fitted. On potency data of one target the
        SVR beats graph networks and their errors differ, so the blend beats both
        (:ref:`benchmark-moleculeace`); where the network is much better and both err
        alike ``w`` is near 0 (:ref:`benchmark-mpnn_blend`). The search adds seconds to a
        minute to ``fit`` for a few thousand molecules; its distance and kernel matrices
        take ``16 n**2`` bytes for ``n`` training molecules. With
        ``early_stopping=False`` and ``ensemble_size`` > 1, member ``k`` of the ensemble
        leaves out its own block of ``validation_fraction`` of the molecules instead (the
        blocks are disjoint) and ``w`` is fitted on each member's predictions for its
        block. With ``early_stopping=False`` and one network, and with None, the network
        predicts alone.
    device : str, default="cpu"
        Torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError`` naming them, or (``"nan"``) are left out of
        ``fit`` and give NaN rows at prediction. A class seen only on left-out molecules
        is missing from a classifier's ``classes_``, with a ``UserWarning`` naming it.
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
        The trained ``sklearn_papers.nn._mpnn.MPNNModel``.
        With ``ensemble_size`` > 1, a module holding the trained networks
        (``module_.members``) whose output is their mean; ``net_``, ``loss_curve_``,
        ``validation_loss_curve_`` and ``n_iter_`` are then those of member 0.
    net_ : skorch.NeuralNet
        The skorch net that trained it.
    n_outputs_ : int
        Number of targets.
    loss_curve_ : list of float
        Training MSE (standardised units) after each epoch.
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
    MPNN : The readout vector as a transformer.
    MPNNClassifier : Classification head.
    NeuralFingerprintRegressor : Duvenaud et al. (2015).

    References
    ----------
    .. [1] J. Gilmer, S. S. Schoenholz, P. F. Riley, O. Vinyals and G. E. Dahl, "Neural
       Message Passing for Quantum Chemistry", ICML 2017. :arxiv:`1704.01212`.
    .. [2] O. Vinyals, S. Bengio and M. Kudlur, "Order Matters: Sequence to sequence for
       sets", ICLR 2016. :arxiv:`1511.06391`.
    .. [3] K. Yang et al., "Analyzing Learned Molecular Representations for Property
       Prediction", J. Chem. Inf. Model. 59(8), 2019 (chemprop's D-MPNN: the
       directed-bond messages and the training of the defaults). :arxiv:`1904.01561`.

    Examples
    --------
    >>> from sklearn_papers.chem import MPNNRegressor
    >>> X, y = ["CCO", "CCCO", "CCCCO", "c1ccccc1"], [0.0, -0.5, -1.0, -2.0]
    >>> reg = MPNNRegressor(hidden_size=8, n_steps=2, max_epochs=3, random_state=0)
    >>> reg.fit(X, y).predict(["CCO"]).shape
    (1,)
    """

    _parameter_constraints = {
        **_MPNNPredictor._parameter_constraints,
        "blend": [StrOptions(set(BLEND_OPTIONS)), None],
    }

    def __init__(self, hidden_size=300, *, n_steps=3, set2set_steps=6, edge_hidden_size=128,
                 message="directed", readout="mean", explicit_hydrogens=False,
                 max_epochs=50, batch_size=32, lr=2e-3, early_stopping=True,
                 validation_fraction=0.1, n_iter_no_change=10, lr_schedule="warmup_decay",
                 ensemble_size=1, blend="ecfp_svr", device="cpu", errors="raise",
                 standardize=False, graph_cache=None, descriptors=False, fingerprint_bits=0,
                 fingerprint_radius=2, random_state=None, verbose=1, n_jobs=None):
        super().__init__(
            hidden_size=hidden_size, n_steps=n_steps, set2set_steps=set2set_steps,
            edge_hidden_size=edge_hidden_size, message=message, readout=readout,
            explicit_hydrogens=explicit_hydrogens, max_epochs=max_epochs,
            batch_size=batch_size, lr=lr, early_stopping=early_stopping,
            validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
            lr_schedule=lr_schedule, ensemble_size=ensemble_size, device=device,
            errors=errors, standardize=standardize, graph_cache=graph_cache,
            descriptors=descriptors, fingerprint_bits=fingerprint_bits,
            fingerprint_radius=fingerprint_radius, random_state=random_state,
            verbose=verbose, n_jobs=n_jobs)
        self.blend = blend

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the MPNN on molecules ``X`` and targets ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Regression targets. With several targets, NaN marks a missing value (left
            out of the loss) and each column needs at least one finite value; with one,
            NaN raises ``ValueError`` naming the rows (drop or impute them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each molecule (None: all 1): each batch minimises
            ``sum_b w_b l_b / sum_b w_b``. Molecules of weight 0 are left out of the loss
            and of the target standardisation, as if dropped (up to how the remaining
            molecules are batched and, with ``early_stopping``, which are held out).

        Returns
        -------
        self : MPNNRegressor
            Fitted regressor.
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
        """
        return self._predict_regression(X)


class MPNNClassifier(_GraphClassifierMixin, _MPNNPredictor):
    """Message passing neural network classifier (Gilmer et al., 2017).

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/gilmer>`.

    The network of :class:`MPNNRegressor` with a classification head. Three kinds of
    target:

    * binary (1-D, two classes): one logit, binary cross-entropy;
    * multiclass (1-D, more classes): softmax, cross-entropy;
    * multi-task binary (2-D, 0/1 with NaN for missing labels, as Tox21): one logit per
      task, binary cross-entropy over the labelled entries only.

    Read more in :doc:`/papers/gilmer`.

    Parameters
    ----------
    hidden_size : int, default=300
        ``d``, the width of the atom (or bond) states and of the head's hidden layer.
        Cost grows as ``d^2`` (``d^3`` per edge for the edge network).
    n_steps : int, default=3
        ``T``, the number of message passing steps (weights shared across steps).
    set2set_steps : int, default=6
        Processing steps of the set2set readout (ignored by "sum" and "mean").
    edge_hidden_size : int, default=128
        Hidden width of the message MLP (bond features -> ``d x d`` matrix for the edge
        network, ``(h_v, h_w, e_vw)`` -> message for "pair").
    message : {"edge_network", "pair", "directed"}, default="directed"
        Message function ``M`` (paper Section 5.1); "edge_network" is the paper's best
        on QM9 (with ``hidden_size=64, n_steps=6, readout="set2set"``, the paper's
        model), "pair" its pair message. "directed" (the default): chemprop-style
        directed-bond messages (Yang et al. 2019): states live on directed bonds
        ``v -> w``, start as ``relu(W_i [x_v, e_vw])``, and each
        of the ``n_steps`` steps adds ``W_h`` times the sum of the bond states entering
        ``v`` except ``w -> v``; atom states ``relu(W_o [x_v, sum of entering bond
        states])`` then go to the readout (no GRU).
    readout : {"set2set", "sum", "mean"}, default="mean"
        Readout ``R`` (paper Section 5.3); "set2set" is the paper's best and gives a vector
        of ``2 d`` values, "sum" and "mean" give ``d``.

        The defaults (directed messages, ``d = 300``, 3 steps, mean readout, warm-up
        then decay) are chemprop's D-MPNN shape and schedule inside this framework;
        they were chosen over the paper's model by the search of
        ``benchmarks/search_defaults.py`` on ESOL and FreeSolv (:doc:`/molecules`).
        The step size, batch and patience (``lr=2e-3``, ``batch_size=32``,
        ``n_iter_no_change=10``) replace chemprop's ``1e-3``, 64 and "keep the best
        of 50 epochs": the network, still improving at chemprop's budget, reaches its
        best held-out epoch sooner at equal or lower test error in about the same or
        less CPU time (``benchmarks/bench_gilmer_defaults.py``).
    explicit_hydrogens : bool, default=False
        Put hydrogens in the graph as atoms (the paper's QM9 setting) instead of counting
        them as an atom feature only. The fitted model keeps the value of ``fit``, as
        for ``standardize``.
    max_epochs : int, default=50
        Training epochs (passes over the data).
    batch_size : int, default=32
        Molecules per batch, for training and inference (a last batch of one is fine;
        outputs do not depend on the batching).
    lr : float, default=2e-3
        Adam learning rate (the peak of the schedule).
    early_stopping : bool, default=True
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
        With the defaults, training stops 10 epochs after the best epoch on the
        held-out 10 % (whose weights are kept), or at ``max_epochs=50``.
        ``early_stopping=False`` trains on every molecule and keeps the last epoch.
    lr_schedule : {"constant", "warmup_decay", "warmup_decay_hold"}, default="warmup_decay"
        ``"warmup_decay"``: per batch, the learning rate rises linearly from ``lr / 10``
        to ``lr`` over the first two epochs, then decays exponentially to ``lr / 10`` at
        ``max_epochs`` (chemprop's schedule, Yang et al. 2019). ``"warmup_decay_hold"``:
        the same, reaching ``lr / 10`` at half of ``max_epochs`` and holding it for the
        second half, so that with ``early_stopping`` and a patience shorter than that
        half training can end before ``max_epochs``. ``"constant"``:
        ``lr`` throughout.

        ``"warmup_decay_hold"`` ends training sooner on some splits at a slightly higher
        test RMSE (measured on ESOL and FreeSolv with ``lr=3e-3``).
    ensemble_size : int, default=1
        Train this many networks alike, each from its own seed, and predict with the mean
        of their class probabilities (chemprop's ``ensemble_size``, Yang et al. 2019).
        Fit time, prediction time and memory grow linearly with it. ``random_state``
        seeds the whole ensemble: member 0 is the network ``ensemble_size=1`` trains,
        member ``k`` gets the ``k``-th ``numpy.random.SeedSequence`` child of member 0's
        seed, so a larger ensemble holds the members of a smaller one.
    device : str, default="cpu"
        Torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError`` naming them, or (``"nan"``) are left out of
        ``fit`` and give NaN rows at prediction. A class seen only on left-out molecules
        is missing from a classifier's ``classes_``, with a ``UserWarning`` naming it.
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
    classes_ : ndarray of shape (n_classes,)
        Class labels; ``[0, 1]`` for multi-task targets.
    n_outputs_ : int
        Number of network outputs (1 binary, ``n_classes`` multiclass, ``n_tasks``).
    module_ : torch.nn.Module
        The trained ``sklearn_papers.nn._mpnn.MPNNModel``.
        With ``ensemble_size`` > 1, a module holding the trained networks
        (``module_.members``) whose outputs are the logits of their mean probabilities;
        ``net_``, ``loss_curve_``, ``validation_loss_curve_`` and ``n_iter_`` are then
        those of member 0.
    net_ : skorch.NeuralNet
        The skorch net that trained it.
    loss_curve_ : list of float
        Training cross-entropy after each epoch.
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
    MPNN : The readout vector as a transformer.
    MPNNRegressor : Regression head.
    NeuralFingerprintClassifier : Duvenaud et al. (2015).

    References
    ----------
    .. [1] J. Gilmer, S. S. Schoenholz, P. F. Riley, O. Vinyals and G. E. Dahl, "Neural
       Message Passing for Quantum Chemistry", ICML 2017. :arxiv:`1704.01212`.
    .. [2] O. Vinyals, S. Bengio and M. Kudlur, "Order Matters: Sequence to sequence for
       sets", ICLR 2016. :arxiv:`1511.06391`.
    .. [3] K. Yang et al., "Analyzing Learned Molecular Representations for Property
       Prediction", J. Chem. Inf. Model. 59(8), 2019 (chemprop's D-MPNN: the
       directed-bond messages and the training of the defaults). :arxiv:`1904.01561`.

    Examples
    --------
    >>> from sklearn_papers.chem import MPNNClassifier
    >>> X, y = ["CCO", "CCCO", "c1ccccc1", "c1ccccc1C"], [0, 0, 1, 1]
    >>> clf = MPNNClassifier(hidden_size=8, n_steps=2, max_epochs=3, random_state=0)
    >>> clf.fit(X, y).predict_proba(["CCO"]).shape
    (1, 2)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the MPNN on molecules ``X`` and labels ``y``.

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
        self : MPNNClassifier
            Fitted classifier.
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
        """
        return self._class_labels(X)
