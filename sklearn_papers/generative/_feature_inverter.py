"""FeatureInverter: images from the features of a fixed network, with the DeePSiM loss."""

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from sklearn_papers.generative._base import _BaseDeePSiM
from sklearn_papers.utils._sklearn_compat import _fit_context, check_is_fitted

__all__ = ["FeatureInverter"]


class FeatureInverter(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _BaseDeePSiM):
    """Invert a fixed network's features to images, trained with the DeePSiM loss.

    Read more in the :doc:`user guide </user_guide/generative>` and on the :doc:`paper page
    </papers/deepsim>`.

    The paper's "inverting AlexNet" experiment (Dosovitskiy & Brox 2016, §5.1): a
    generator (bilinear upsampling + convolution, leaky ReLU 0.3) learns to map the features
    ``C_l(x)`` of layer ``l`` of a fixed comparator network back to the image ``x``, with
    the DeePSiM loss ``lambda_feat * L_feat + lambda_adv * L_adv + lambda_img * L_img``
    (eq. 4; the feature term compares the comparator features of the reconstruction with
    those of the image, the discriminator sees the image and, as in the paper, the features
    it should match). Earlier layers keep more of the image and are inverted more exactly.
    The terms are normalised as in :class:`DeePSiMAutoencoder`.

    :meth:`transform` gives the features ``C_l(X)``, :meth:`inverse_transform` the images
    generated from features (from any source, e.g. ``SupConEmbedder.transform`` when that
    embedder is the comparator), and :meth:`predict` the round trip ``X -> C_l(X) -> image``.

    Parameters
    ----------
    comparator : "auto", fitted estimator or torch.nn.Module, default="auto"
        The network whose features are inverted (and compared); as in
        :class:`DeePSiMAutoencoder`. ``"auto"``: a small CNN trained as a classifier of
        ``y`` when ``fit`` gets ``y``, else frozen random weights.
    comparator_layer : str or None, default=None
        The layer inverted, a submodule name (``"pool1"``, ``"relu2"``, ``"relu3"``,
        ``"head"`` for ``"auto"``); None: ``"relu2"`` for ``"auto"`` (a mid-level layer),
        the output otherwise.
    lambda_img : float, default=1.0
        Weight of the normalised pixel term.
    lambda_feat : float, default=3.0
        Weight of the normalised feature term.
    lambda_adv : float, default=0.1
        Weight of the adversarial term; 0 trains no discriminator.
    image_shape : tuple of int or None, default=None
        As in :class:`DeePSiMAutoencoder`.
    channels : int, default=16
        Channels of the first conv layer of generator and discriminator.
    pause_ratio : float, default=0.1
        Discriminator pause threshold (see :class:`DeePSiMAutoencoder`).
    max_epochs : int, default=20
        Passes over the training images.
    batch_size : int, default=64
        Images per step.
    lr : float, default=2e-3
        Adam learning rate (betas 0.9, 0.999).
    device : str, default="cpu"
        Torch device.
    random_state : int, RandomState instance or None, default=None
        Seeds weights, shuffling, dropout and the comparator classifier; the global RNGs
        are left untouched.
    verbose : int, default=0
        1 prints skorch's epoch table.

    Attributes
    ----------
    net_ : skorch.NeuralNet
        Trained net; ``net_.module_.generator`` maps standardised features to images.
    comparator_ : torch.nn.Module
        The frozen comparator (a private copy).
    comparator_description_ : str
        What it is.
    n_comparator_features_ : int
        Width of the inverted features.
    feature_mean_, feature_scale_ : ndarray of shape (n_comparator_features,)
        Standardisation of the features fed to the generator (training mean and standard
        deviation, 1 where that is 0).
    image_shape_ : tuple of int
        ``(height, width, channels)``.
    data_offset_, data_scale_ : float
        Pixel mapping to ``[0, 1]`` (training minimum and range).
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
    DeePSiMAutoencoder : Encoder and generator trained together with the same loss.

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual
       similarity metrics based on deep networks. NeurIPS 29, eq. 4, §5.1, Fig. 4.
       :doi:`10.48550/arXiv.1602.02644`

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_papers.generative import FeatureInverter
    >>> X, y = load_digits(return_X_y=True)
    >>> inv = FeatureInverter(comparator_layer="pool1", channels=8, max_epochs=1,
    ...                       random_state=0).fit(X[:100])
    >>> features = inv.transform(X[:5])
    >>> features.shape, inv.inverse_transform(features).shape
    ((5, 256), (5, 64))
    """

    _auto_layer = "relu2"

    _parameter_constraints = {**_BaseDeePSiM._parameter_constraints}

    def __init__(self, comparator="auto", *, comparator_layer=None, lambda_img=1.0,
                 lambda_feat=3.0, lambda_adv=0.1, image_shape=None, channels=16,
                 pause_ratio=0.1, max_epochs=20, batch_size=64, lr=2e-3, device="cpu",
                 random_state=None, verbose=0):
        self.comparator = comparator
        self.comparator_layer = comparator_layer
        self.lambda_img = lambda_img
        self.lambda_feat = lambda_feat
        self.lambda_adv = lambda_adv
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
        """Train the generator to invert the comparator's features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, H, W) or (n_samples, H, W, C)
            Training images (float, any range).
        y : array-like of shape (n_samples,), default=None
            Class labels, used only to train ``comparator="auto"`` as a classifier.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of every loss term; a weight of 0 is the same as leaving the image out.

        Returns
        -------
        self : FeatureInverter
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse, has a non-finite pixel (named in the message) or the
            wrong image shape; if ``y`` is not class labels of at least two classes for
            ``comparator="auto"``; if ``comparator_layer`` names no submodule; if the
            comparator fails on image rows; if ``lambda_img``, ``lambda_feat`` and
            ``lambda_adv`` are all 0.
        TypeError
            If ``comparator`` is an estimator without a torch module.
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged); training stops there.
        """
        from sklearn_papers.nn._deepsim import (
            DeePSiMDiscriminator,
            DeePSiMGenerator,
            DeePSiMLoss,
            DeePSiMModel,
        )
        from sklearn_papers.nn._skorch import torch_fit

        X, y, weights, rows, rows01 = self._prepare_fit_data(X, y, sample_weight)
        with torch_fit(self) as run:
            module, layer, kind = self._resolve_comparator(rows, y, weights, run.seed,
                                                           run.device)
            comparator = self._frozen_comparator(module, layer, self.data_offset_,
                                                 self.data_scale_, rows01)
            self.comparator_ = comparator
            feats = self._features01(rows01)
            mean = feats.mean(axis=0, dtype=np.float64)
            std = feats.std(axis=0, dtype=np.float64)
            self.feature_mean_ = mean.astype(np.float32)
            self.feature_scale_ = np.where(std > 0, std, 1.0).astype(np.float32)
            self.n_comparator_features_ = feats.shape[1]
            inputs = (feats - self.feature_mean_) / self.feature_scale_
            shape = self.image_shape_
            generator = DeePSiMGenerator(feats.shape[1], shape, channels=self.channels,
                                         output_mean=float(rows01.mean()))
            disc = (DeePSiMDiscriminator(shape, channels=self.channels,
                                         n_condition=feats.shape[1])
                    if self.lambda_adv > 0 else None)
            loss = DeePSiMLoss(comparator, disc, lambda_feat=self.lambda_feat,
                               lambda_adv=self.lambda_adv, lambda_img=self.lambda_img)
            self._train(
                run, model=DeePSiMModel(generator), loss=loss, inputs=inputs, real01=rows01,
                condition=inputs, weights=weights)
        self.comparator_ = self.net_.criterion_.comparator
        self.comparator_description_ = kind
        self._n_features_out = self.n_comparator_features_
        return self

    def _features01(self, rows01):
        import torch

        param = next(self.comparator_.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
        out = []
        with torch.no_grad():
            for start in range(0, rows01.shape[0], 512):
                batch = torch.as_tensor(rows01[start:start + 512]).to(device)
                out.append(self.comparator_(batch).cpu().numpy())
        return (np.concatenate(out) if out
                else np.empty((0, getattr(self, "n_comparator_features_", 0)), np.float32))

    def transform(self, X):
        """The comparator features ``C_l(X)`` that the generator inverts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, H, W) or (n_samples, H, W, C)
            Images of the training shape.

        Returns
        -------
        features : ndarray of shape (n_samples, n_comparator_features)
            Same float dtype as ``X``.
        """
        check_is_fitted(self)
        X = self._validate_images(X, reset=False)
        feats = self._features01(self._to_unit(np.asarray(X, np.float32)))
        return feats.astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """Images generated from comparator features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_comparator_features)
            Features, e.g. from :meth:`transform`.

        Returns
        -------
        images : ndarray
            In the layout of the ``fit`` input (flat rows or ``(n, H, W[, C])``), same float
            dtype as the features, in the training data's units, within the range ``[min,
            max]`` of the training pixels for any features (a single value when every
            training pixel had it).

        Raises
        ------
        ValueError
            If the features have the wrong width or are not finite.
        """
        from sklearn_papers.utils._sklearn_compat import check_array

        check_is_fitted(self)
        Z = check_array(X, dtype=[np.float64, np.float32], input_name="X")
        if Z.shape[1] != self.n_comparator_features_:
            raise ValueError(f"X has {Z.shape[1]} features but the comparator layer of this "
                             f"FeatureInverter has {self.n_comparator_features_}.")
        inputs = (Z.astype(np.float32) - self.feature_mean_) / self.feature_scale_
        rows01 = self._run_batches(self.net_.module_.generator, inputs, self.n_features_in_)
        return self._format_images(self._from_unit(rows01, Z.dtype))

    def predict(self, X):
        """Reconstruct images from their own comparator features: ``inverse_transform(transform(X))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, H, W) or (n_samples, H, W, C)
            Images of the training shape.

        Returns
        -------
        images : ndarray
            Reconstructions, in the layout of the ``fit`` input.
        """
        return self.inverse_transform(self.transform(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True  # images (n, H, W[, C]) or flat rows
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.non_deterministic = self.random_state is None
        return tags
