"""CrossEntropyEmbedder: the cross-entropy baseline of Khosla et al. 2020."""

from sklearn_papers.contrastive._base import _BaseEmbedder
from sklearn_papers.utils._sklearn_compat import _fit_context

__all__ = ["CrossEntropyEmbedder"]


class CrossEntropyEmbedder(_BaseEmbedder):
    """Representation of an encoder trained with softmax cross-entropy.

    Read more in the :doc:`user guide </user_guide/contrastive>` and on the :doc:`paper page
    </papers/supcon>`.

    The baseline of Khosla et al. (2020): the same encoder as :class:`SupConEmbedder`,
    followed by a linear classifier, trained with cross-entropy on one augmented view per
    sample. :meth:`transform` returns the encoder output (the classifier is dropped), so
    both embedders are compared by the same linear probe,
    ``make_pipeline(CrossEntropyEmbedder(...), LogisticRegression())``.

    Parameters
    ----------
    encoder : {"mlp", "conv"} or callable, default="mlp"
        As in :class:`SupConEmbedder`.
    n_components : int, default=64
        Width of the representation returned by :meth:`transform`.
    augment : "default", callable or None, default="default"
        One random view per sample and batch; as in :class:`SupConEmbedder`.
    image_shape : tuple of int, default=None
        ``(H, W)`` or ``(C, H, W)``; needed by ``encoder="conv"``.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation layer in every hidden encoder block (group norm: Wu & He 2018); the
        output layer is never normalised, as in :class:`SupConEmbedder`.
    num_groups : int, default=8
        Groups for ``norm="group"``, an upper bound, as in :class:`SupConEmbedder`.
    max_epochs : int, default=100
        Passes over the training data.
    batch_size : int, default=256
        Samples per batch.
    lr : float, default=1e-3
        AdamW learning rate.
    weight_decay : float, default=1e-4
        AdamW weight decay.
    device : str, default="cpu"
        Torch device, e.g. ``"cuda"``.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, augmentations and batch shuffling; the global torch
        RNG is left untouched.
    verbose : int, default=0
        1 prints skorch's table of the training loss per epoch.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen in ``fit``.
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_.classifier`` is the dropped linear layer.
    loss_curve_ : list of float
        Mean training cross-entropy of each epoch.
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    SupConEmbedder : The same encoder trained with the supervised contrastive loss.

    References
    ----------
    .. [1] Khosla, P., Teterwak, P., Wang, C., Sarna, A., Tian, Y., Isola, P.,
       Maschinot, A., Liu, C. and Krishnan, D. (2020). Supervised contrastive learning.
       NeurIPS 33, Table 2 (cross-entropy rows). :doi:`10.48550/arXiv.2004.11362`

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_papers.contrastive import CrossEntropyEmbedder
    >>> X, y = load_digits(return_X_y=True)
    >>> emb = CrossEntropyEmbedder(n_components=8, max_epochs=2, random_state=0)
    >>> emb.fit_transform(X[:200], y[:200]).shape
    (200, 8)
    """

    _parameter_constraints = {**_BaseEmbedder._parameter_constraints}

    _one_class_reason = ("since with one class the cross-entropy loss is zero and the encoder is "
                         "never trained.")

    def __init__(self, *, encoder="mlp", n_components=64, augment="default", image_shape=None,
                 norm="batch", num_groups=8, max_epochs=100, batch_size=256, lr=1e-3,
                 weight_decay=1e-4, device="cpu", random_state=None, verbose=0):
        self.encoder = encoder
        self.n_components = n_components
        self.augment = augment
        self.image_shape = image_shape
        self.norm = norm
        self.num_groups = num_groups
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the encoder and a linear classifier with cross-entropy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (float; images as rows when ``image_shape`` is given).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (None: all 1). It weights each sample's
            cross-entropy (``sum_b w_b l_b / sum_b w_b`` per batch) and the
            standardisation and augmentation statistics, so a weight of 0 is the same as
            leaving the sample out: such rows are dropped before training, and classes
            are counted among the rows of positive weight.

        Returns
        -------
        self : CrossEntropyEmbedder
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse or not finite, ``y`` is continuous or has one class
            among the rows of positive weight (the cross-entropy loss would be zero and
            nothing would be learned), ``image_shape`` does not match the number of
            features, or a callable ``augment`` does not return a finite ``torch.Tensor`` of
            the input's shape.
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged); training stops there.
        """
        from sklearn_papers.nn._supcon import CrossEntropyModel, WeightedCrossEntropyLoss

        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight)
        return self._fit_net(
            X, y,
            criterion=WeightedCrossEntropyLoss,
            criterion_params={},
            module_class=CrossEntropyModel,
            sample_weight=sample_weight,
            module_params={"n_classes": len(self.classes_)},
        )
