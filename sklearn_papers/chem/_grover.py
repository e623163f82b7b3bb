"""GROVER (Rong et al., 2020): the pretrained molecular featurizer, and what the fine-tuning
estimators (``_grover_finetune``) share with it: featurization and the encoder."""

import os
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from sklearn_papers.chem._graph_estimator import (
    _FIT_GRAPHS,
    _FitTransformWarnsOnce,
    _GraphEstimator,
    _require_molecules,
)
from sklearn_papers.chem._grover_checkpoint import (
    ARCH,
    load_grover_checkpoint,
    write_checkpoint,
)
from sklearn_papers.chem._molecule_input import described_graphs
from sklearn_papers.chem._validation import set_molecule_input_attributes
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    _fit_context,
    check_is_fitted,
)

__all__ = ["GroverFeaturizer"]


# -- featurization (module level: joblib workers pickle these) ------------------------------
def _graphs_chunk(mols, with_labels, smiles=None):
    from sklearn_papers.chem.featurizers._grover_features import (
        grover_graphs,
        grover_mols_to_graphs,
    )

    # the default feature sets (151 atom / 14 bond features), through their fast path
    if with_labels:
        return grover_graphs(mols, smiles=smiles)
    return grover_mols_to_graphs(mols, smiles=smiles)


def _featurize(mols, *, with_labels, n_jobs, smiles=None):
    """GROVER graphs (and labels) of valid molecules, in order, possibly in parallel.

    ``smiles``: the SMILES each molecule was read from (None for ``Mol`` inputs), or None;
    it only saves work (see ``standardize_mol``).
    """
    from joblib import Parallel, delayed, effective_n_jobs

    n = effective_n_jobs(n_jobs)
    if n == 1 or len(mols) < 64:
        return _graphs_chunk(mols, with_labels, smiles)
    size = -(-len(mols) // (4 * n))
    chunks = Parallel(n_jobs=n_jobs)(
        delayed(_graphs_chunk)(mols[i:i + size], with_labels,
                               None if smiles is None else smiles[i:i + size])
        for i in range(0, len(mols), size))
    return [g for chunk in chunks for g in chunk]


class _BaseGrover(_GraphEstimator):
    """Parameters and GTransformer encoder shared by the GROVER estimators."""

    _parameter_constraints = {
        **_GraphEstimator._parameter_constraints,
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "depth": [Interval(Integral, 1, None, closed="left")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "dist_coef": [Interval(Real, 0, None, closed="left")],
        "pretrained": [None, str, os.PathLike],
        "n_jobs": [None, Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right")],  # joblib: not 0
    }

    def _graph_settings(self, inputs=None):
        return ("grover",)

    def _featurizer(self, inputs=None):
        return _graphs_chunk, {"with_labels": False}

    def _forward_rows(self, fn, graphs, device, width):
        """Rows of ``fn`` on the graphs, as :meth:`_GraphEstimator._forward_rows`, but
        the molecules are batched in order of size (``batch_size`` per batch; similar
        sizes pad the per-molecule attention least) under ``torch.inference_mode`` and the
        rows are put back in the order of ``graphs``. The same values as batching in input
        order, up to float32 round-off: every molecule is computed independently of its
        batch."""
        import torch

        from sklearn_papers.nn._graph import collate_graphs
        from sklearn_papers.nn._grover import inference_scratch

        sizes = np.fromiter((g.atom_features.shape[0] for g in graphs), dtype=np.int64,
                            count=len(graphs))
        order = np.argsort(sizes, kind="stable")
        rows = np.empty((len(graphs), width), dtype=np.float32)
        from sklearn_papers.nn._progress import progress

        step = int(self.batch_size)
        starts = range(0, len(order), step)
        with torch.inference_mode(), inference_scratch():
            for start in progress(starts, verbose=self.verbose, n_items=len(graphs),
                                  total=len(starts), desc=type(self).__name__,
                                  unit="batch"):
                index = order[start:start + step]
                batch = collate_graphs([graphs[i] for i in index]).to(device)
                rows[index] = fn(**batch.tensors).float().cpu().numpy()
        return rows

    def _arch(self, config):
        """Architecture parameters: the checkpoint's when there is one, else ours."""
        if config is not None:
            arch = {k: int(config["params"][k]) for k in ARCH}
            import inspect

            defaults = inspect.signature(type(self).__init__).parameters
            ignored = [f"{k}={getattr(self, k)!r}" for k in ARCH
                       if getattr(self, k) != defaults[k].default and getattr(self, k) != arch[k]]
            if ignored:
                import warnings

                warnings.warn(
                    f"{', '.join(ignored)} ignored: the architecture comes from the checkpoint "
                    f"pretrained={self.pretrained!r} ("
                    + ", ".join(f"{k}={v}" for k, v in arch.items())
                    + "); set pretrained=None to train that architecture from scratch.",
                    UserWarning, stacklevel=4)
            return arch
        return {k: int(getattr(self, k)) for k in ARCH}

    def _new_encoder(self, arch):
        from sklearn_papers.chem.featurizers._grover_features import (
            grover_atom_features,
            grover_bond_features,
        )
        from sklearn_papers.nn._grover import GTransformer

        return GTransformer(grover_atom_features().n_features,
                            grover_bond_features().n_features, dropout=self.dropout, **arch)


class GroverFeaturizer(ClassNamePrefixFeaturesOutMixin, _FitTransformWarnsOnce, TransformerMixin,
                       _BaseGrover):
    """GROVER molecule embeddings with self-supervised pretraining (Rong et al., 2020).

    Read more in the :doc:`user guide </molecules>` and on the :doc:`paper page
    </papers/grover>`.

    A graph transformer (GTransformer) reads each molecule twice: a node view over atoms
    and an edge view over directed bonds. In every transformer block, the queries, keys and
    values of each attention head come from a message-passing network with a random
    number of hops in training (dyMPN); attention runs among the atoms (or directed bonds)
    of each molecule. The embedding is the mean over atoms of the node-view and edge-view
    atom embeddings, concatenated (``2 * hidden_size`` values). RDKit's 2-D descriptors
    follow by default (``descriptors=True``), each through a CDF fitted on the molecules
    given to ``fit``. Then, by default, a fingerprint branch: ECFP4 bits (Rogers & Hahn,
    2010; ``fingerprint_bits=1024``, ``fingerprint_radius=2``) as they are, with the
    embedding and descriptors before them standardized on the molecules given to ``fit``
    and scaled so that their mean squared distance between those molecules equals the
    bits'. Neither block then outweighs the other in a distance (an RBF kernel, a
    nearest-neighbour search).

    With its defaults this is a pretrained featurizer: ``fit`` loads the checkpoint shipped
    with the package (``pretrained="moses-small"``, no network needed), checks the
    molecules of ``X``, fits the descriptors' CDFs and the blocks' scaling on them and
    trains nothing (``max_epochs=0``), so a Pipeline or a cross-validation refits it at
    the cost of featurizing its training molecules (the descriptors: about 10 ms per
    drug-like molecule). ``descriptors=False, fingerprint_bits=0`` gives the embeddings
    alone: ``fit`` then only loads and checks, in milliseconds.

    Training is asked for explicitly with ``max_epochs > 0``: with a checkpoint, ``fit``
    continues pretraining it on ``X`` (the checkpoint's vocabularies are kept); with
    ``pretrained=None`` it pretrains from scratch on ``X`` (Section 4.1): each atom and
    bond predicts its contextual property label (its one-hop neighbourhood as a string,
    e.g. ``"C_C-SINGLE1_O-DOUBLE1_O-SINGLE1"``; vocabularies built from ``X`` with
    ``<pad>``/``<other>`` and ``min_freq``) from both views, the molecule predicts which of
    85 RDKit functional groups it contains (binary cross-entropy), and the two views are
    pulled together by an agreement term. ``pretrained=None`` with ``max_epochs=0`` keeps
    random weights.

    Read more in :doc:`/papers/grover`.

    Parameters
    ----------
    hidden_size : int, default=64
        Width ``H`` of the hidden states; the embedding has ``2 H`` values. Ignored (taken
        from the checkpoint) when ``pretrained`` is set, as are ``n_layers``, ``n_heads``
        and ``depth``.
    n_layers : int, default=1
        Transformer blocks per view.
    n_heads : int, default=2
        Attention heads per block; each owns three dyMPNs (query, key, value).
    depth : int, default=3
        Mean number of dyMPN hops (drawn from a truncated normal around it in training;
        exactly ``depth`` in ``transform``).
    dropout : float, default=0.0
        Dropout rate in training.
    min_freq : int, default=1
        Least count of a contextual label in ``X`` for it to get its own class; rarer
        labels are predicted as ``<other>``. Not used with ``pretrained`` (the checkpoint's
        vocabularies are kept).
    dist_coef : float, default=0.1
        Weight of the agreement between the two views' label predictions.
    max_epochs : int, default=0
        Pretraining epochs over ``X`` (after loading ``pretrained``, if set). 0: no
        training, ``fit`` only loads ``pretrained`` (or keeps random weights without it).
    batch_size : int, default=32
        Molecules per batch, in training and in ``transform`` (which batches molecules in
        order of size and returns the rows in the order of ``X``).
    lr : float, default=1e-3
        Adam learning rate.
    pretrained : str, path or None, default="moses-small"
        ``"moses-small"``: the default checkpoint shipped with the package (hidden size
        64, pretrained on 15,000 MOSES molecules, see :doc:`/papers/grover`).
        ``"moses-176k"``: the bigger shipped checkpoint (hidden size 144, two blocks per
        view, one epoch over all 176,074 bundled MOSES molecules; 288-dimensional
        embeddings that beat ECFP4 under scaffold cross-validation on ESOL, FreeSolv,
        BBBP and Tox21, at about 2.5 times the featurization time). A folder written by
        :meth:`save`.
        None: a new model with the architecture parameters above, pretrained from scratch
        on ``X`` for ``max_epochs`` epochs.
    device : str, default="cpu"
        Torch device (``"cuda"`` for a GPU).
    errors : {"raise", "nan"}, default="raise"
        Invalid molecules raise ``ValueError``, or (``"nan"``) are skipped by ``fit`` and
        get NaN rows from ``transform``.
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
    descriptors : bool or RDKitDescriptors, default=True
        Molecule-level features joined after the embedding, as chemprop's
        ``rdkit_2d_normalized`` features and GROVER's fine-tuning do: ``True`` uses
        RDKit's 2-D descriptors (all of them) through
        :class:`~sklearn_papers.chem.RDKitDescriptors`' per-descriptor CDF (values in
        [0, 1]), an ``RDKitDescriptors`` instance its ``descriptors`` and ``normalize``
        (its ``standardize``, ``errors`` and ``n_jobs`` are not used: this estimator's
        apply, so the descriptors are those of the standardized molecule), ``False`` the
        embedding alone. The CDFs are fitted in ``fit`` on the molecules given to it
        (``descriptors_``) and applied in ``transform``; a ``graph_cache`` keeps the raw
        descriptors beside the graphs. Computing them costs about 10 ms per drug-like
        molecule, ten times the embedding. ``True`` by default: through the same linear
        model, the embeddings with descriptors beat ECFP4 under scaffold
        cross-validation on ESOL, FreeSolv, BBBP and Tox21, and the embeddings alone do
        not on FreeSolv and BBBP (:ref:`benchmark-grover_frozen`). Fit on the training
        molecules (a few hundred or more): CDFs fitted on a handful of molecules map
        each descriptor to a few steps.
    fingerprint_bits : int or None, default=1024
        Length of the ECFP bits joined last
        (:class:`~sklearn_papers.chem.CircularFingerprint`, bits, not counts; at most
        2**24); 0 or None: no fingerprint branch, and the embedding and descriptors are
        given unscaled. With the branch, ``fit`` standardizes the embedding and
        descriptors on its molecules (``embedding_scaler_``) and multiplies them by
        ``embedding_weight_``, so that their mean squared distance between those
        molecules equals that of the bits. 1024 bits by default: on MoleculeACE's ten
        bundled targets the default featurizer + an RBF SVR beats ECFP + the same SVR
        (:ref:`benchmark-moleculeace`), and + a linear model it beats ECFP4 under
        scaffold cross-validation on ESOL, FreeSolv, BBBP and Tox21
        (:ref:`benchmark-grover_featurizer_scaffold`). A linear model after a
        ``StandardScaler``, which undoes the scaling, scored higher with
        ``fingerprint_bits=0`` on all four sets (same page): prefer it there.
    fingerprint_radius : int, default=2
        ECFP radius (diameter ``2 * radius``: 2 gives ECFP4). Used with
        ``fingerprint_bits`` only.
    random_state : int, RandomState instance or None, default=None
        Seeds weights, dropout, hop counts and shuffling; the global torch RNG is untouched.
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
        The ``GroverPretrainModel`` (encoder plus pretraining heads), in eval mode.
    encoder_ : torch.nn.Module
        Its ``GTransformer`` encoder.
    atom_vocab_ : ContextVocab
        Vocabulary of atom contextual labels.
    bond_vocab_ : ContextVocab
        Vocabulary of bond contextual labels.
    embedding_dim_ : int
        Width of ``transform``'s output, ``2 * hidden_size`` of the model.
    loss_curve_ : list of float
        Pretraining loss after each epoch run by this ``fit`` (with ``pretrained``, the
        checkpoint's own curve is in ``checkpoint_config_["loss_curve"]``).
    n_iter_ : int
        Number of epochs run by this ``fit``.
    descriptors_ : RDKitDescriptors or None
        With ``descriptors``: the descriptors' CDFs, fitted on the molecules given to
        ``fit``; None without.
    fingerprint_ : CircularFingerprint or None
        With ``fingerprint_bits``: the fingerprint of the last block; None without.
    embedding_scaler_ : sklearn.preprocessing.StandardScaler or None
        With ``fingerprint_bits``: the standardization of the embedding and descriptors,
        fitted on the molecules given to ``fit``; None without.
    embedding_weight_ : float or None
        With ``fingerprint_bits``: the factor of the standardized embedding and
        descriptors (1 when the bits or they do not vary over the ``fit`` molecules);
        None without.
    checkpoint_config_ : dict or None
        The loaded checkpoint's ``config.json`` (None without ``pretrained``).
    n_features_in_ : int
        Always 1: the input is one column of molecules.
    feature_names_in_ : ndarray of shape (1,)
        The input column's name. Defined only when ``X`` is a one-column DataFrame with
        a string column name.

    See Also
    --------
    GroverRegressor : Fine-tunes the encoder with a regression head.
    GroverClassifier : Fine-tunes the encoder with a classification head.
    NeuralFingerprint : Learned fingerprints without pretraining.

    References
    ----------
    .. [1] Y. Rong, Y. Bian, T. Xu, W. Xie, Y. Wei, W. Huang, J. Huang, "Self-Supervised
       Graph Transformer on Large-Scale Molecular Data", NeurIPS 2020.
       :arxiv:`2007.02835`.
    .. [2] D. Rogers, M. Hahn, "Extended-Connectivity Fingerprints", J. Chem. Inf.
       Model. 50(5), 742-754, 2010.

    Examples
    --------
    >>> from sklearn_papers.chem import GroverFeaturizer
    >>> X = ["CCO", "CCCO", "CCCCO", "c1ccccc1", "c1ccccc1O", "CC(=O)O"]
    >>> grover = GroverFeaturizer().fit(X)  # the shipped checkpoint, CDFs, scaling
    >>> Z = grover.transform(["CCO", "c1ccccc1O"])
    >>> n_descriptors = len(grover.descriptors_.descriptor_names_)
    >>> Z.shape[1] == grover.embedding_dim_ + n_descriptors + 1024
    True
    >>> GroverFeaturizer(descriptors=False, fingerprint_bits=0).fit(X).transform(
    ...     ["CCO"]).shape  # the embedding alone
    (1, 128)
    >>> from sklearn.linear_model import RidgeCV
    >>> from sklearn.pipeline import make_pipeline
    >>> model = make_pipeline(GroverFeaturizer(), RidgeCV())
    >>> model.fit(["CCO", "CCCO", "CCCCO", "c1ccccc1"], [0.0, -0.5, -1.0, -2.0]).predict(
    ...     ["CCCCCO"]).shape
    (1,)
    """

    _parameter_constraints = {
        **_BaseGrover._parameter_constraints,
        "min_freq": [Interval(Integral, 1, None, closed="left")],
        # CircularFingerprint's bound on n_bits; 0 or None: no fingerprint branch
        "fingerprint_bits": [None, Interval(Integral, 0, 2**24, closed="both")],
        "fingerprint_radius": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, hidden_size=64, *, n_layers=1, n_heads=2, depth=3, dropout=0.0,
                 min_freq=1, dist_coef=0.1, max_epochs=0, batch_size=32, lr=1e-3,
                 pretrained="moses-small", device="cpu", errors="raise", standardize=False,
                 graph_cache=None, descriptors=True, fingerprint_bits=1024,
                 fingerprint_radius=2, random_state=None, verbose=1, n_jobs=None):
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.depth = depth
        self.dropout = dropout
        self.min_freq = min_freq
        self.dist_coef = dist_coef
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.pretrained = pretrained
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

    def fit_transform(self, X, y=None):
        """Fit (load or pretrain the encoder), then transform ``X``.

        The same as ``fit(X, y).transform(X)``, except that a
        :class:`~sklearn_papers.chem.MultipleFragmentsWarning` is given once, by ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.
        y : None
            Ignored.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            As :meth:`transform` gives it.
        """
        return self._fit_then_transform(X, y, {})

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Load ``pretrained`` (and continue pretraining on ``X`` if ``max_epochs > 0``).

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects; no labels are needed.
        y : None
            Ignored.

        Returns
        -------
        self : GroverFeaturizer
            Fitted featurizer.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverFeaturizer
        >>> GroverFeaturizer().fit(["CCO", "CC(=O)O"]).n_iter_  # loaded, not trained
        0
        >>> est = GroverFeaturizer(pretrained=None, hidden_size=8, max_epochs=1,
        ...                        random_state=0)
        >>> est.fit(["CCO", "CC(=O)O", "c1ccccc1"]).n_iter_  # pretrained from scratch
        1
        """
        from collections import Counter

        from sklearn_papers.chem.featurizers._grover_features import GROVER_MOTIFS, ContextVocab
        from sklearn_papers.nn._grover import (
            GroverDataset,
            GroverNet,
            GroverPretrainModel,
            PretrainCriterion,
            collate_labelled,
        )
        from sklearn_papers.nn._progress import training_verbose
        from sklearn_papers.nn._skorch import check_device, torch_fit

        start = time.perf_counter()
        device = check_device(self.device)
        self._pin_input_params()
        graphs = mols = None
        if self.fingerprint_bits or self._descriptor_names() is not None:
            # the graphs (with the raw descriptors; from graph_cache if set) of X, once:
            # the descriptors' CDFs and the scaling of the blocks are fitted on them, and
            # fit_transform's transform reads them again
            graphs, valid = self._graphs(X)
            _require_molecules(graphs)
            set_molecule_input_attributes(self, X)
            graphs = described_graphs(self, graphs, fit=True)
            memo = _FIT_GRAPHS.get()
            if memo is not None and memo[0] is self:
                _FIT_GRAPHS.set((self, X, graphs, valid))
        else:
            mols, _ = self._molecules(X)
            _require_molecules(mols)
            set_molecule_input_attributes(self, X)
            self.descriptors_ = None
        config, state = (None, None) if self.pretrained is None else \
            load_grover_checkpoint(self.pretrained)
        if mols is None and (config is None or self.max_epochs > 0):
            from sklearn_papers.chem._report import MultipleFragmentsWarning

            with warnings.catch_warnings():  # the graphs' featurization has said so
                warnings.simplefilter("ignore", MultipleFragmentsWarning)
                mols, _ = self._molecules(X)
        # Loading a checkpoint without training needs no graphs: fit only checks X.
        data = [] if config is not None and self.max_epochs == 0 else \
            _featurize(mols, with_labels=True, n_jobs=self.n_jobs)
        if config is not None:
            atom_vocab = ContextVocab.from_itos(config["atom_vocab"])
            bond_vocab = ContextVocab.from_itos(config["bond_vocab"])
        else:
            atom_vocab = ContextVocab(Counter(w for d in data for w in d[1]),
                                      min_freq=self.min_freq)
            bond_vocab = ContextVocab(Counter(w for d in data for w in d[2]),
                                      min_freq=self.min_freq)
        self.net_, self.loss_curve_, self.n_iter_ = None, [], 0
        with torch_fit(self, device=device) as run:
            module = GroverPretrainModel(self._new_encoder(self._arch(config)),
                                         len(atom_vocab), len(bond_vocab), len(GROVER_MOTIFS))
            if state is not None:
                module.load_state_dict(state)
            if self.max_epochs > 0:
                dataset = GroverDataset(
                    [d[0] for d in data], [atom_vocab.encode(d[1]) for d in data],
                    [bond_vocab.encode(d[2]) for d in data], np.stack([d[3] for d in data]))
                module = run.fit(
                    module, dataset, criterion=PretrainCriterion, net_class=GroverNet,
                    verbose=training_verbose(self.verbose, len(dataset), self.max_epochs),
                    criterion__dist_coef=float(self.dist_coef),
                    iterator_train__collate_fn=collate_labelled).module_
        self.module_ = module.to(device).eval()
        self.encoder_ = module.encoder
        self.atom_vocab_, self.bond_vocab_ = atom_vocab, bond_vocab
        self.embedding_dim_ = module.encoder.embedding_dim
        self._n_features_out = self.embedding_dim_ + self._n_mol_features()
        self.checkpoint_config_ = config
        self.fingerprint_ = self.embedding_scaler_ = self.embedding_weight_ = None
        if self.fingerprint_bits:
            self._fit_fingerprint(X, graphs, valid)
        self._fit_seconds = time.perf_counter() - start
        self._n_fit_molecules = len(mols) if mols is not None else len(graphs)
        return self

    def _fit_fingerprint(self, X, graphs, valid):
        """Fit the fingerprint branch on the training molecules: ``fingerprint_``, and the
        standardization and weight of the embedding and descriptors."""
        from sklearn.base import clone
        from sklearn.preprocessing import StandardScaler

        from sklearn_papers.chem._ecfp import CircularFingerprint

        memo = _FIT_GRAPHS.get()
        token = _FIT_GRAPHS.set((self, X, graphs, valid))
        try:
            rest = self._run(X, "embedding")[valid].astype(np.float64)
        finally:
            if memo is None or memo[0] is not self:  # fit_transform's transform reads them
                _FIT_GRAPHS.reset(token)
        standardize = self.standardize
        self.fingerprint_ = CircularFingerprint(
            radius=self.fingerprint_radius, n_bits=self.fingerprint_bits,
            standardize=standardize if isinstance(standardize, bool) else clone(standardize),
            errors="nan", n_jobs=self.n_jobs, verbose=0)
        bits = self._fingerprint_rows(X)[valid].astype(np.float64)
        p_on = bits.mean(axis=0)
        bits_d2 = 2.0 * float(np.sum(p_on * (1.0 - p_on)))
        self.embedding_scaler_ = StandardScaler().fit(rest)
        rest_d2 = 2.0 * float(np.sum(np.var(self.embedding_scaler_.transform(rest), axis=0)))
        self.embedding_weight_ = (float(np.sqrt(bits_d2 / rest_d2))
                                  if bits_d2 > 0 and rest_d2 > 0 else 1.0)
        self._n_features_out += int(self.fingerprint_bits)

    def _fingerprint_rows(self, X):
        """The fingerprint bits of ``X`` (float32; NaN rows for invalid molecules)."""
        from sklearn_papers.chem._report import MultipleFragmentsWarning

        with warnings.catch_warnings():
            # the graphs' featurization has already said so
            warnings.simplefilter("ignore", MultipleFragmentsWarning)
            return self.fingerprint_.transform(X)

    def transform(self, X):
        """Molecule embeddings.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, 1)
            SMILES strings or RDKit ``Mol`` objects.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out), dtype=float32
            Mean node-view atom embedding followed by mean edge-view atom embedding
            (``embedding_dim_`` values), then, with ``descriptors``, the normalized
            descriptors (``len(descriptors_.descriptor_names_)`` values), both
            standardized and scaled with ``fingerprint_bits``, then the
            ``fingerprint_bits`` ECFP bits (0 or 1). NaN rows for invalid molecules when
            ``errors="nan"``.

        Examples
        --------
        >>> from sklearn_papers.chem import GroverFeaturizer
        >>> est = GroverFeaturizer(descriptors=False, fingerprint_bits=0).fit(["CCO"])
        >>> est.transform(["CCO", "OCC"]).shape
        (2, 128)
        """
        rows = self._run(X, "embedding")
        if getattr(self, "fingerprint_", None) is None:
            return rows
        invalid = np.isnan(rows).any(axis=1)
        out = np.hstack([self.embedding_scaler_.transform(rows) * self.embedding_weight_,
                         self._fingerprint_rows(X)]).astype(np.float32)
        out[invalid] = np.nan
        return out

    def get_feature_names_out(self, input_features=None):
        """Output feature names, block by block.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked as scikit-learn checks it (it must equal ``feature_names_in_`` when
            ``fit`` saw a DataFrame); the names do not depend on it.

        Returns
        -------
        feature_names_out : ndarray of shape (n_features_out,), dtype=object
            ``groverfeaturizer0`` ... for the embedding, RDKit's descriptor names with
            ``descriptors``, then ``ecfp4_0`` ... (``ecfp{2 * fingerprint_radius}``) with
            the fingerprint branch.
        """
        from sklearn.utils.validation import _check_feature_names_in

        check_is_fitted(self)
        _check_feature_names_in(self, input_features, generate_names=False)
        names = [f"{type(self).__name__.lower()}{i}" for i in range(self.embedding_dim_)]
        if getattr(self, "descriptors_", None) is not None:
            names += list(self.descriptors_.descriptor_names_)
        if getattr(self, "fingerprint_", None) is not None:
            names += list(self.fingerprint_.get_feature_names_out())
        return np.asarray(names, dtype=object)

    def save(self, path):
        """Write the fitted model to a folder (format documented in
        :func:`load_grover_checkpoint`).

        Parameters
        ----------
        path : str or os.PathLike
            Folder to create (or overwrite files in).

        Returns
        -------
        path : pathlib.Path
            The folder.
        """
        import torch

        import sklearn_papers

        check_is_fitted(self)
        params = {k: v for k, v in self.get_params().items()
                  if isinstance(v, (int, float, str, type(None)))
                  and k not in ("pretrained", "descriptors", "fingerprint_bits",
                                "fingerprint_radius")}
        params.update(self._arch(self.checkpoint_config_))  # the model's own architecture
        loss_curve = list(self.loss_curve_)
        training = {
            "n_molecules": int(getattr(self, "_n_fit_molecules", 0)),
            "seconds": float(getattr(self, "_fit_seconds", 0.0)),
            "torch": torch.__version__,
            "sklearn_papers": getattr(sklearn_papers, "__version__", "unknown"),
        }
        previous = self.checkpoint_config_
        if previous is not None:
            # Keep the loaded checkpoint's history: a model loaded and not trained keeps
            # its training record; continued pretraining appends a leg to it.
            before = dict(previous.get("training", {}))
            legs = before.pop("legs", None) or ([before] if before else [])
            if self.n_iter_ == 0:
                loss_curve = list(previous.get("loss_curve", []))
                training = dict(previous.get("training", {}))
            else:
                loss_curve = list(previous.get("loss_curve", [])) + loss_curve
                training["legs"] = legs + [dict(training, epochs=int(self.n_iter_))]
        return write_checkpoint(path, params=params, atom_vocab=self.atom_vocab_.itos,
                                bond_vocab=self.bond_vocab_.itos,
                                embedding_dim=self.embedding_dim_, loss_curve=loss_curve,
                                training=training, state_dict=self.module_.state_dict())

    @classmethod
    def load(cls, path, **params):
        """Load a featurizer written by :meth:`save` (or a shipped checkpoint name).

        Parameters
        ----------
        path : str or os.PathLike
            Folder, or ``"moses-small"``.
        **params : dict
            Parameters to override (``device``, ``batch_size``, ``n_jobs``, ...).

        Returns
        -------
        featurizer : GroverFeaturizer
            Fitted; ``transform`` gives the saved model's embeddings, without descriptors
            or fingerprint branch (their CDFs and scaling need molecules:
            ``GroverFeaturizer(pretrained=path).fit(X)`` fits them on ``X``). Its
            ``pretrained`` parameter is ``path``, ``max_epochs`` is 0, ``descriptors`` is
            False and ``fingerprint_bits`` is 0, so refitting reloads the same weights.
        """
        config, _ = load_grover_checkpoint(path)
        saved = {k: v for k, v in config["params"].items() if k in cls().get_params()}
        est = cls(**{**saved, "pretrained": str(path), "max_epochs": 0,
                     "descriptors": False, "fingerprint_bits": 0, **params})
        est._validate_params()
        return est._fit_loaded()

    def _fit_loaded(self):
        from sklearn_papers.chem.featurizers._grover_features import GROVER_MOTIFS, ContextVocab
        from sklearn_papers.nn._grover import GroverPretrainModel

        if self._descriptor_names() is not None:
            raise ValueError(
                "descriptors=... needs molecules to fit the descriptors' CDFs on: load the "
                "featurizer without it, or use GroverFeaturizer(pretrained=path, "
                "descriptors=...).fit(X).")
        if self.fingerprint_bits:
            raise ValueError(
                f"fingerprint_bits={self.fingerprint_bits!r} needs molecules to fit the "
                "scaling of the blocks on: load the featurizer with fingerprint_bits=0, or "
                "use GroverFeaturizer(pretrained=path).fit(X).")
        config, state = load_grover_checkpoint(self.pretrained)
        atom_vocab = ContextVocab.from_itos(config["atom_vocab"])
        bond_vocab = ContextVocab.from_itos(config["bond_vocab"])
        module = GroverPretrainModel(self._new_encoder(self._arch(config)), len(atom_vocab),
                                     len(bond_vocab), len(GROVER_MOTIFS))
        module.load_state_dict(state)
        self.module_ = module.eval()
        self.encoder_ = module.encoder
        self.atom_vocab_, self.bond_vocab_ = atom_vocab, bond_vocab
        self.embedding_dim_ = module.encoder.embedding_dim
        self._n_features_out = self.embedding_dim_
        self.n_features_in_ = 1  # one column of molecules, as after fit
        self.descriptors_ = None
        self.fingerprint_ = self.embedding_scaler_ = self.embedding_weight_ = None
        self._pin_input_params()
        self.loss_curve_, self.n_iter_ = [], 0
        self.checkpoint_config_ = config
        return self

    def _embedding(self, module):
        return module.encoder.embed, module.encoder.embedding_dim

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags
