"""DeePSiMAutoencoder: an autoencoder trained with the DeePSiM loss (Dosovitskiy & Brox 2016)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.metaestimators import available_if

from sklearn_papers.generative._base import _BaseDeePSiM
from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    _fit_context,
    check_is_fitted,
)

__all__ = ["DeePSiMAutoencoder"]


def _is_variational(estimator):
    """``sample`` exists only for ``variational=True`` (``hasattr`` is False otherwise:
    a plain autoencoder has no prior over codes)."""
    return bool(estimator.variational)


class DeePSiMAutoencoder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _BaseDeePSiM):
    """Image autoencoder trained with a deep perceptual similarity (DeePSiM) loss.

    Read more in the :doc:`user guide </user_guide/generative>` and on the :doc:`paper page
    </papers/deepsim>`.

    A convolutional encoder maps an image to a small code; an up-convolutional generator
    (bilinear upsampling followed by a convolution, leaky ReLU 0.3, as in the paper) maps the
    code back to an image. Encoder and generator minimise the DeePSiM loss of Dosovitskiy &
    Brox (2016, eq. 4)::

        lambda_feat * L_feat + lambda_adv * L_adv + lambda_img * L_img

    with ``L_feat`` the squared distance between the features of the reconstruction and of
    the image in a fixed *comparator* network (no gradient reaches the comparator's
    parameters), ``L_adv = -log D(G(E(x)))`` from a discriminator trained alongside with the
    GAN loss (strided convolutions, average pooling, dropout, two linear layers; its updates
    are paused while its loss is below ``pause_ratio`` times the generator's adversarial
    loss), and ``L_img`` the pixel squared error. The squared errors are normalised by the
    training images' mean per-pixel variance and the comparator features' mean per-feature
    variance (see :class:`sklearn_papers.nn.DeePSiMLoss`), so the lambdas are weights of
    fractions of variance and transfer from one comparator to another. Adam with betas
    (0.9, 0.999) trains both networks.

    ``lambda_feat=0, lambda_adv=0`` is a plain (pixel-loss) autoencoder. With
    ``variational=True`` the encoder is a Gaussian posterior and a KL term (weight
    ``lambda_kl``) is added: the paper's VAE experiment (§5.2), with :meth:`sample`.

    Parameters
    ----------
    n_components : int, default=8
        Code width.
    comparator : "auto", fitted estimator or torch.nn.Module, default="auto"
        The fixed network ``C`` whose features are compared. ``"auto"``: a small CNN
        (:class:`sklearn_papers.nn.ComparatorCNN`) trained as a classifier of ``y`` when
        ``fit`` gets ``y`` (15 epochs of Adam, lr 1e-3), else left at frozen random weights
        (and never trained when ``lambda_feat=0``, which does not use it). A fitted torch estimator of this package (e.g.
        :class:`~sklearn_papers.contrastive.SupConEmbedder`): its module
        ``net_.module_`` in evaluation mode (the map of its ``transform``). A
        ``torch.nn.Module``: used as given. A fitted estimator or module must map float32
        rows ``(B, n_features)`` in the data's units and layout to features. A private copy
        is used: the given object is never modified.
    comparator_layer : str or None, default=None
        Name of the comparator submodule whose output is compared (as in
        ``named_modules()``, e.g. ``"encoder.features.2"`` for a conv ``SupConEmbedder``);
        None: ``"relu2"`` for ``"auto"`` (the second conv block), the output otherwise.
        ``"head"`` (the classifier's logits) kept class identity better on digits, but made
        the autoencoder collapse to a constant image on ``Shapes``, whose classifier is
        weaker (see the DeePSiM page of the user guide).
    lambda_img : float, default=1.0
        Weight of the normalised pixel term.
    lambda_feat : float, default=3.0
        Weight of the normalised feature term.
    lambda_adv : float, default=0.1
        Weight of the adversarial term (nats); 0 trains no discriminator.
    variational : bool, default=False
        Gaussian encoder, reparameterised codes and a KL term.
    lambda_kl : float, default=1.0
        Weight of ``2 KL(q(z|x) || N(0, I)) / n_features`` (nats per pixel, doubled: with
        ``lambda_kl = lambda_img`` and no other term, the negative ELBO of a Gaussian decoder
        whose variance is the images' mean pixel variance, up to the factor
        ``n_features / 2``). Used only when ``variational=True``.
    image_shape : tuple of int or None, default=None
        ``(height, width)`` or ``(height, width, channels)`` of flat rows, which are
        ``images.reshape(n, -1)`` (row-major, channels last). None: taken from
        ``(n, H, W[, C])`` input; for flat rows, square one-channel images when
        ``n_features`` is a perfect square, else images of one row.
    channels : int, default=16
        Channels of the first conv layer of encoder, generator and discriminator (doubling
        at each coarser resolution, at most 128).
    pause_ratio : float, default=0.1
        Discriminator updates are skipped while its loss is below ``pause_ratio`` times the
        generator's adversarial loss (the paper's threshold).
    max_epochs : int, default=20
        Passes over the training images.
    batch_size : int, default=64
        Images per step.
    lr : float, default=2e-3
        Adam learning rate of both networks (the paper: 2e-4, for far longer training).
    device : str, default="cpu"
        Torch device.
    random_state : int, RandomState instance or None, default=None
        Seeds weights, shuffling, dropout, the comparator classifier and :meth:`sample`;
        the global RNGs are left untouched.
    verbose : int, default=0
        1 prints skorch's epoch table (generator loss, each term, discriminator loss).

    Attributes
    ----------
    net_ : skorch.NeuralNet
        Trained net (:class:`sklearn_papers.nn._deepsim.DeePSiMNet`); ``net_.module_`` holds
        ``encoder`` and ``generator``, ``net_.criterion_`` the loss with the comparator and
        discriminator.
    comparator_ : torch.nn.Module
        The frozen comparator actually used (a private copy;
        :class:`sklearn_papers.nn.FrozenComparator`).
    comparator_description_ : str
        What it is (e.g. ``"auto CNN classifier (10 classes, 15 epochs)"``).
    image_shape_ : tuple of int
        ``(height, width, channels)`` of the images.
    data_offset_, data_scale_ : float
        Pixels are mapped to ``[0, 1]`` as ``(x - data_offset_) / data_scale_`` (training
        minimum and range); reconstructions are mapped back.
    loss_curve_ : list of float
        Mean generator loss of each epoch.
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        Pixels per image.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    FeatureInverter : A generator trained with the same loss to invert comparator features.
    sklearn_papers.decomposition.BetaVAE : A VAE with a pixel likelihood only.

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual
       similarity metrics based on deep networks. NeurIPS 29, eqs. 1-4, §4-5.
       :doi:`10.48550/arXiv.1602.02644`
    .. [2] Kingma, D. P. and Welling, M. (2014). Auto-encoding variational Bayes. ICLR.
       :doi:`10.48550/arXiv.1312.6114`

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_papers.generative import DeePSiMAutoencoder
    >>> X, y = load_digits(return_X_y=True)
    >>> ae = DeePSiMAutoencoder(n_components=4, channels=8, max_epochs=1, random_state=0)
    >>> codes = ae.fit(X[:100]).transform(X[:5])  # fit(X, y) also trains the comparator
    >>> codes.shape, ae.inverse_transform(codes).shape
    ((5, 4), (5, 64))
    """

    _auto_layer = "relu2"

    _parameter_constraints = {
        **_BaseDeePSiM._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "variational": ["boolean"],
        "lambda_kl": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_components=8, *, comparator="auto", comparator_layer=None,
                 lambda_img=1.0, lambda_feat=3.0, lambda_adv=0.1, variational=False,
                 lambda_kl=1.0, image_shape=None, channels=16, pause_ratio=0.1,
                 max_epochs=20, batch_size=64, lr=2e-3, device="cpu", random_state=None,
                 verbose=0):
        self.n_components = n_components
        self.comparator = comparator
        self.comparator_layer = comparator_layer
        self.lambda_img = lambda_img
        self.lambda_feat = lambda_feat
        self.lambda_adv = lambda_adv
        self.variational = variational
        self.lambda_kl = lambda_kl
        self.image_shape = image_shape
        self.channels = channels
        self.pause_ratio = pause_ratio
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Train encoder, generator and discriminator with the DeePSiM loss.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, H, W) or (n_samples, H, W, C)
            Training images, float (any range: mapped to [0, 1] by the training minimum
            and range).
        y : array-like of shape (n_samples,), default=None
            Class labels; used only by ``comparator="auto"``, which is then trained as a
            classifier of ``y`` (otherwise it keeps random weights).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of every loss term (and of the ``"auto"`` comparator's cross-entropy and
            the normalising variances); a weight of 0 is the same as leaving the image out.

        Returns
        -------
        self : DeePSiMAutoencoder
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse, has a non-finite pixel (the message names the image
            and pixel) or images of a shape other than ``image_shape``; if ``y`` is not
            class labels of at least two classes for ``comparator="auto"``; if ``comparator_layer`` names no
            submodule; if the comparator fails on image rows; if ``lambda_img``,
            ``lambda_feat`` and ``lambda_adv`` are all 0 (no loss to train on).
        TypeError
            If ``comparator`` is an estimator without a torch module.
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged); training stops there.
        """
        from sklearn_papers.nn._deepsim import (
            DeePSiMDiscriminator,
            DeePSiMEncoder,
            DeePSiMGenerator,
            DeePSiMLoss,
            DeePSiMModel,
        )
        from sklearn_papers.nn._skorch import torch_fit

        X, y, weights, rows, rows01 = self._prepare_fit_data(X, y, sample_weight)
        with torch_fit(self) as run:
            module, layer, kind = self._resolve_comparator(
                rows, y, weights, run.seed, run.device, train_auto=self.lambda_feat > 0)
            comparator = self._frozen_comparator(module, layer, self.data_offset_,
                                                 self.data_scale_, rows01)
            shape = self.image_shape_
            encoder = DeePSiMEncoder(shape, self.n_components, channels=self.channels,
                                     variational=self.variational)
            generator = DeePSiMGenerator(self.n_components, shape, channels=self.channels,
                                         output_mean=float(rows01.mean()))
            disc = (DeePSiMDiscriminator(shape, channels=self.channels)
                    if self.lambda_adv > 0 else None)
            loss = DeePSiMLoss(comparator, disc, lambda_feat=self.lambda_feat,
                               lambda_adv=self.lambda_adv, lambda_img=self.lambda_img)
            model = DeePSiMModel(generator, encoder, variational=self.variational)
            self._train(
                run, model=model, loss=loss, inputs=rows01, real01=rows01, condition=None,
                weights=weights, lambda_kl=self.lambda_kl if self.variational else 0.0)
        self.comparator_ = self.net_.criterion_.comparator
        self.comparator_description_ = kind
        self._n_features_out = self.n_components
        return self

    def transform(self, X):
        """Codes of images (posterior means when ``variational``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, H, W) or (n_samples, H, W, C)
            Images of the training shape.

        Returns
        -------
        codes : ndarray of shape (n_samples, n_components)
            Same float dtype as ``X`` (float32 or float64). Deterministic.
        """
        check_is_fitted(self)
        X = self._validate_images(X, reset=False)
        module = self.net_.module_
        codes = self._run_batches(lambda b: module.encode(b)[0],
                                  self._to_unit(np.asarray(X, np.float32)), self.n_components)
        return codes.astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """Images generated from codes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes, e.g. from :meth:`transform`.

        Returns
        -------
        images : ndarray
            ``(n_samples, n_features)`` when ``fit`` got flat rows, else ``(n_samples, H,
            W)`` or ``(n_samples, H, W, C)`` as in ``fit``; same float dtype as the codes,
            in the training data's units, within the range ``[min, max]`` of the training
            pixels for any codes (a single value when every training pixel had it).

        Raises
        ------
        ValueError
            If the codes do not have ``n_components`` columns or are not finite.
        """
        from sklearn_papers.utils._sklearn_compat import check_array

        check_is_fitted(self)
        Z = check_array(X, dtype=[np.float64, np.float32], input_name="X")
        if Z.shape[1] != self.n_components:
            raise ValueError(f"X has {Z.shape[1]} columns but this DeePSiMAutoencoder has "
                             f"n_components={self.n_components}.")
        gen = self.net_.module_.generator
        rows01 = self._run_batches(gen, Z, self.n_features_in_)
        return self._format_images(self._from_unit(rows01, Z.dtype))

    @available_if(_is_variational)
    def sample(self, n_samples=1):
        """Generate images by decoding draws from the prior ``N(0, I)`` (variational only).

        Parameters
        ----------
        n_samples : int, default=1
            Number of images.

        Returns
        -------
        images : ndarray
            ``n_samples`` images in the layout of :meth:`inverse_transform`, float32. Draws
            come from ``random_state`` (the same for an int on every call).

        Raises
        ------
        AttributeError
            If ``variational=False`` (a plain autoencoder has no prior to sample; the
            method is then absent: ``hasattr(model, "sample")`` is False).
        ValueError
            If ``n_samples`` is not a positive int.
        """
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}.")
        z = check_random_state(self.random_state).standard_normal(
            (int(n_samples), self.n_components)).astype(np.float32)
        return self.inverse_transform(z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True  # images (n, H, W[, C]) or flat rows
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.non_deterministic = self.random_state is None
        return tags
