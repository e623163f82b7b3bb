"""SupConEmbedder: supervised contrastive representation learning (Khosla et al. 2020)."""

from numbers import Integral, Real

from sklearn_papers.contrastive._base import _BaseEmbedder
from sklearn_papers.utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["SupConEmbedder"]


class SupConEmbedder(_BaseEmbedder):
    """Representation learned with the supervised contrastive (SupCon) loss.

    Read more in the :doc:`user guide </user_guide/contrastive>` and on the :doc:`paper page
    </papers/supcon>`.

    An encoder and a projection head are trained on ``n_views`` augmented views of every
    sample with the SupCon loss (Khosla et al. 2020): for each view, the other views of
    the same sample and all views of samples of the same class are positives, every other
    view is a negative. After training the projection head is discarded, as in the
    paper, and :meth:`transform` returns the encoder output. The paper's evaluation is a
    *linear probe*: ``make_pipeline(SupConEmbedder(...), LogisticRegression())``.

    With L2-normalised projections ``z`` and ``s_ia = z_i . z_a / temperature``, the loss
    of anchor ``i`` is, for ``variant="out"`` (eq. 2),
    ``-1/|P(i)| sum_{p in P(i)} log(exp(s_ip) / sum_{a != i} exp(s_ia))`` and for
    ``variant="in"`` (eq. 3) the mean over ``P(i)`` moves inside the log. The loss is
    averaged over the anchors that have at least one positive (see
    :func:`sklearn_papers.nn._supcon.supcon_loss`).

    Parameters
    ----------
    encoder : {"mlp", "conv"} or callable, default="mlp"
        ``"mlp"``: fully connected blocks (256 hidden units). ``"conv"``: a small
        convolutional network on rows reshaped to ``image_shape``. A callable (e.g. a
        ``torch.nn.Module`` class) is called as ``encoder(n_features=F,
        n_components=D)`` and must return a module mapping ``(B, F)`` float32 tensors to
        ``(B, D)``.
    n_components : int, default=64
        Width of the representation returned by :meth:`transform`.
    projection_dim : int, default=128
        Output width of the projection head ``Linear -> ReLU -> Linear`` used only in
        training (128 in the paper).
    temperature : float, default=0.1
        ``tau`` of eqs. 2-3 (the paper uses 0.1 for its best ImageNet result).
    variant : {"out", "in"}, default="out"
        L_out (eq. 2, the paper's recommendation) or L_in (eq. 3).
    n_views : int, default=2
        Augmented views per sample in each batch (the paper uses 2; more are allowed).
        With one view, a sample alone in its class in a batch has no positive and is left
        out of that batch's loss.
    augment : "default", callable or None, default="default"
        How a random view is drawn from a batch of raw rows. ``"default"``: for images
        (``image_shape`` given) a random rotation up to 10 degrees, shift up to 1 pixel
        and Gaussian pixel noise (0.1 x the pixel std); for tabular ``X``, Gaussian noise
        (0.1 x each feature's std) and random masking of 10 % of the entries to the
        feature mean. A callable maps a float32 ``torch.Tensor`` of shape
        ``(B, n_features)`` to one of the same shape; draw randomness from torch's RNG so
        that ``random_state`` controls it. None: views are identical (no augmentation).
    image_shape : tuple of int, default=None
        ``(H, W)`` or ``(C, H, W)`` of the images stored as rows of ``X`` (row-major),
        e.g. ``(8, 8)`` for ``load_digits``. Needed by ``encoder="conv"`` and by the
        image augmentations.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation layer in every hidden encoder block: batch norm, group norm (Wu &
        He 2018), layer norm or none. Batch norm handles a last batch of one sample. The
        encoder's output layer (a ``Linear`` to ``n_components``) has neither a norm nor
        a ReLU, so that group or layer norm cannot map every sample to the same point and
        no output feature is stuck at zero when ``n_components`` is small (see
        :class:`sklearn_papers.nn._encoders.MLPEncoder`).
    num_groups : int, default=8
        Groups for ``norm="group"`` (the largest divisor of each layer's width not above
        it; in fully connected layers, also leaving at least 4 channels per group, since a
        group of one value is normalised to a constant and one of two to a sign).
    max_epochs : int, default=100
        Passes over the training data.
    batch_size : int, default=256
        Samples per batch (each contributes ``n_views`` rows to the loss).
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
        The trained net; ``net_.module_.encoder`` is the encoder, ``net_.module_.head``
        the (unused after training) projection head.
    loss_curve_ : list of float
        Mean training loss of each epoch.
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    CrossEntropyEmbedder : The paper's baseline, the same encoder trained with
        cross-entropy.

    References
    ----------
    .. [1] Khosla, P., Teterwak, P., Wang, C., Sarna, A., Tian, Y., Isola, P.,
       Maschinot, A., Liu, C. and Krishnan, D. (2020). Supervised contrastive learning.
       NeurIPS 33, eqs. 2-3, Table 2. :doi:`10.48550/arXiv.2004.11362`
    .. [2] Wu, Y. and He, K. (2018). Group normalization. ECCV.
       :doi:`10.1007/978-3-030-01261-8_1`

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_papers.contrastive import SupConEmbedder
    >>> X, y = load_digits(return_X_y=True)
    >>> probe = make_pipeline(
    ...     SupConEmbedder(encoder="conv", image_shape=(8, 8), n_components=16,
    ...                    max_epochs=2, random_state=0),
    ...     LogisticRegression(max_iter=500))
    >>> probe.fit(X[:300], y[:300]).predict(X[300:305]).shape
    (5,)
    """

    _parameter_constraints = {
        **_BaseEmbedder._parameter_constraints,
        "projection_dim": [Interval(Integral, 1, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "variant": [StrOptions({"out", "in"})],
        "n_views": [Interval(Integral, 1, None, closed="left")],
    }

    _one_class_reason = ("since with one class every other view is a positive and there are no "
                         "negatives: the loss is minimised by mapping every sample to the same "
                         "point.")

    def __init__(self, *, encoder="mlp", n_components=64, projection_dim=128,
                 temperature=0.1, variant="out", n_views=2, augment="default",
                 image_shape=None, norm="batch", num_groups=8, max_epochs=100,
                 batch_size=256, lr=1e-3, weight_decay=1e-4, device="cpu",
                 random_state=None, verbose=0):
        self.encoder = encoder
        self.n_components = n_components
        self.projection_dim = projection_dim
        self.temperature = temperature
        self.variant = variant
        self.n_views = n_views
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
        """Train the encoder and projection head with the SupCon loss.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (float; images as rows when ``image_shape`` is given).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (None: all 1). Each view of the sample
            counts that many times as anchor, positive and member of every contrast set
            (see :func:`sklearn_papers.nn.supcon_loss`), and the weights enter the
            standardisation and augmentation statistics, so a weight of 0 is the same as
            leaving the sample out: such rows are dropped before training, and classes
            are counted among the rows of positive weight.

        Returns
        -------
        self : SupConEmbedder
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse or not finite, ``y`` is continuous or has one class
            among the rows of positive weight (there are no negatives, and the loss is
            minimised by mapping every sample to the same point), ``image_shape`` does not
            match the number of features, or a callable ``augment`` does not return a finite
            ``torch.Tensor`` of the input's shape.
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged); training stops there.
        """
        from sklearn_papers.nn._supcon import SupConLoss, SupConModel

        X, y, sample_weight = self._validate_fit_data(X, y, sample_weight)
        return self._fit_net(
            X, y,
            criterion=SupConLoss,
            criterion_params={"temperature": self.temperature, "variant": self.variant},
            module_class=SupConModel,
            sample_weight=sample_weight,
            module_params={"projection_dim": self.projection_dim, "n_views": self.n_views},
        )
