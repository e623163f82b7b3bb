"""BetaVAE: a (beta-)variational autoencoder as a scikit-learn transformer (Higgins et al. 2017)."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_papers.utils._validation import check_sample_weight, common_constraints

__all__ = ["BetaVAE"]

_EVAL_BATCH = 1024


class BetaVAE(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Beta-VAE representation learner: ``transform`` gives posterior means.

    Read more in the :doc:`user guide </user_guide/decomposition>` and on the :doc:`paper
    page </papers/disentanglement>`.

    A variational autoencoder with a diagonal Gaussian encoder ``q(z | x) = N(mu(x),
    diag(sigma^2(x)))``, a standard normal prior and a Bernoulli or Gaussian decoder,
    trained by minimising the negative beta-weighted evidence lower bound (Higgins et al.
    2017, Eq. 4)::

        L(x) = -E_q[log p(x | z)] + beta * KL(q(z | x) || N(0, I))

    ``beta > 1`` presses the posterior towards the factorised prior, which Higgins et al.
    report encourages disentangled codes at some cost in reconstruction; ``beta=1`` is the
    plain VAE (Kingma & Welling 2014). Training uses the reparameterisation trick and Adam.

    Parameters
    ----------
    n_components : int, default=10
        Latent size (dSprites experiments use 10).
    beta : float, default=4.0
        KL weight (``>= 0``); ``1.0`` gives a plain VAE.
    encoder : {"conv", "mlp"}, default="conv"
        ``"conv"``: stride-2 convolutions (4x4, 32 channels) and a mirrored up-sampling
        decoder, for images given as flattened rows; ``"mlp"``: two fully connected hidden
        layers of 256 units, for any numeric features.
    image_shape : tuple of int or None, default=None
        ``(height, width)`` or ``(channels, height, width)`` of the flattened rows, for
        ``encoder="conv"``. ``None`` assumes one square channel (``n_features`` must be a
        perfect square, e.g. 1024 for 32x32 images).
    norm : {"batch", "group", "layer"} or None, default=None
        Normalisation layer after every hidden layer of the encoder and the decoder (never
        after the posterior head or the output layer): batch normalisation, group
        normalisation (Wu & He 2018), layer normalisation, or none (Higgins et al.'s
        architecture, the default). The same shared blocks and choices as
        :class:`~sklearn_papers.contrastive.SupConEmbedder`, so ``norm`` can be
        grid-searched. Batch norm handles a training batch of one sample (it uses the
        running statistics for it); at ``transform`` it always uses the running statistics.
    num_groups : int, default=8
        Groups for ``norm="group"`` (the largest divisor of each layer's width not above
        it; in fully connected layers, also leaving at least 4 channels per group, since a
        group of one value is normalised to a constant and one of two to a sign).
    likelihood : {"auto", "bernoulli", "gaussian"}, default="auto"
        Decoder likelihood. ``"bernoulli"`` (binary cross-entropy; needs ``X`` in [0, 1], as
        for binary images); ``"gaussian"`` (unit variance: half the squared error);
        ``"auto"`` picks Bernoulli when every training value lies in [0, 1].
    max_epochs : int, default=30
        Passes over the training data.
    batch_size : int, default=64
        Mini-batch size.
    lr : float, default=1e-3
        Adam learning rate.
    device : str, default="cpu"
        Torch device (``"cuda"`` when available).
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, shuffling and the reparameterisation noise (the
        global torch RNG is left untouched), and :meth:`sample`.
    verbose : int, default=0
        ``> 0`` prints skorch's per-epoch table.

    Attributes
    ----------
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_`` is a
        :class:`sklearn_papers.nn._beta_vae.BetaVAEModule`.
    likelihood_ : str
        The decoder likelihood used (``"bernoulli"`` or ``"gaussian"``).
    image_shape_ : tuple of int or None
        ``(channels, height, width)`` of the convolutional variant, else None.
    loss_curve_ : list of float
        Mean training loss (negative beta-ELBO per sample, nats) after every epoch.
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn.decomposition.PCA : The linear baseline.
    sklearn_papers.metrics.factor_vae_score : Scores the codes' disentanglement.

    References
    ----------
    .. [1] Higgins, I., Matthey, L., Pal, A., Burgess, C., Glorot, X., Botvinick, M.,
       Mohamed, S., Lerchner, A. (2017). beta-VAE: learning basic visual concepts with a
       constrained variational framework. ICLR.
    .. [2] Kingma, D. P., Welling, M. (2014). Auto-encoding variational Bayes. ICLR.
       :arxiv:`1312.6114`.
    .. [3] Wu, Y., He, K. (2018). Group normalization. ECCV. :arxiv:`1803.08494`.

    Examples
    --------
    >>> from sklearn_papers.datasets import make_shapes
    >>> from sklearn_papers.decomposition import BetaVAE
    >>> X, factors = make_shapes(64, image_size=16, random_state=0)
    >>> vae = BetaVAE(n_components=4, beta=4.0, max_epochs=1, random_state=0).fit(X)
    >>> vae.transform(X).shape
    (64, 4)
    >>> vae.inverse_transform(vae.transform(X[:2])).shape
    (2, 256)
    """

    _parameter_constraints = {
        **common_constraints(),
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "encoder": [StrOptions({"conv", "mlp"})],
        "image_shape": [tuple, list, None],
        "norm": [StrOptions({"batch", "group", "layer"}), None],
        "num_groups": [Interval(Integral, 1, None, closed="left")],
        "likelihood": [StrOptions({"auto", "bernoulli", "gaussian"})],
    }

    def __init__(self, n_components=10, *, beta=4.0, encoder="conv", image_shape=None,
                 norm=None, num_groups=8, likelihood="auto", max_epochs=30, batch_size=64,
                 lr=1e-3, device="cpu", random_state=None, verbose=0):
        self.n_components = n_components
        self.beta = beta
        self.encoder = encoder
        self.image_shape = image_shape
        self.norm = norm
        self.num_groups = num_groups
        self.likelihood = likelihood
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self, X):
        """Rules involving the data: image shape and likelihood."""
        n_features = X.shape[1]
        image_shape = None
        if self.encoder == "conv":
            if self.image_shape is None:
                side = math.isqrt(n_features)
                if side * side != n_features:
                    raise ValueError(
                        f"encoder='conv' with image_shape=None needs square images, but X has "
                        f"{n_features} features (not a perfect square); pass image_shape or "
                        "use encoder='mlp'."
                    )
                image_shape = (1, side, side)
            else:
                shape = tuple(self.image_shape)
                if (len(shape) not in (2, 3)
                        or not all(isinstance(s, Integral) and s >= 1 for s in shape)):
                    raise ValueError(f"image_shape must be (height, width) or (channels, "
                                     f"height, width) of positive ints, got {self.image_shape!r}.")
                image_shape = (1, *shape) if len(shape) == 2 else shape
                if math.prod(image_shape) != n_features:
                    raise ValueError(f"image_shape={tuple(self.image_shape)!r} has "
                                     f"{math.prod(image_shape)} pixels but X has {n_features} "
                                     "features.")
        in_unit = bool(np.all((X >= 0) & (X <= 1)))
        likelihood = self.likelihood
        if likelihood == "auto":
            likelihood = "bernoulli" if in_unit else "gaussian"
        elif likelihood == "bernoulli" and not in_unit:
            bad = np.argwhere((X < 0) | (X > 1))[0]
            raise ValueError(f"likelihood='bernoulli' needs X in [0, 1], but X[{bad[0]}, "
                             f"{bad[1]}] = {float(X[bad[0], bad[1]])!r}; use likelihood='gaussian'.")
        return image_shape, likelihood

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Train the VAE on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; images as flattened rows (row-major) for ``encoder="conv"``.
        y : None
            Ignored (present for API consistency; a factor matrix may be passed through by
            model selection).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample in the training loss (None: all 1): each
            batch minimises ``sum_b w_b L(x_b) / sum_b w_b``, so a sample of weight 0
            adds nothing to the loss (it still takes part in batch-norm statistics, and
            the batches are formed with it).

        Returns
        -------
        self : BetaVAE
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is empty, sparse or not finite, ``image_shape`` does not match, or
            ``likelihood="bernoulli"`` gets values outside [0, 1].
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged); training stops there.

        Examples
        --------
        >>> from sklearn_papers.datasets import make_shapes
        >>> from sklearn_papers.decomposition import BetaVAE
        >>> X, _ = make_shapes(32, image_size=16, random_state=0)
        >>> BetaVAE(2, encoder="mlp", max_epochs=1, random_state=0).fit(X).n_iter_
        1
        """
        from sklearn_papers.nn._beta_vae import BetaVAELoss, BetaVAEModule, BetaVAENet
        from sklearn_papers.nn._skorch import torch_fit

        X = validate_data(self, X, dtype=[np.float64, np.float32])
        sample_weight = check_sample_weight(sample_weight, X)
        image_shape, likelihood = self._check_params(X)
        with torch_fit(self) as run:
            run.fit(
                BetaVAEModule,
                np.array(X, dtype=np.float32),  # writable copy for torch
                sample_weight=sample_weight,
                criterion=BetaVAELoss,
                net_class=BetaVAENet,
                module__n_features=X.shape[1],
                module__n_components=self.n_components,
                module__encoder=self.encoder,
                module__image_shape=image_shape,
                module__norm=self.norm,
                module__num_groups=self.num_groups,
                criterion__beta=float(self.beta),
                criterion__likelihood=likelihood,
            )
        self.likelihood_ = likelihood
        self.image_shape_ = image_shape
        self._n_features_out = self.n_components
        return self

    def _run(self, array, method):
        import torch

        module = self.net_.module_
        device = next(module.parameters()).device
        module.eval()
        out = []
        with torch.no_grad():
            for start in range(0, array.shape[0], _EVAL_BATCH):
                batch = torch.tensor(array[start:start + _EVAL_BATCH], dtype=torch.float32,
                                     device=device)  # a copy: read-only input is fine
                out.append(method(module, batch).cpu().numpy())
        width = self.n_components if method is _encode_mean else self.n_features_in_
        return np.concatenate(out, axis=0) if out else np.empty((0, width), np.float32)

    def transform(self, X):
        """Posterior means ``mu(x)`` of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Same features as in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Same float dtype as ``X`` (float32 or float64). Deterministic.

        Examples
        --------
        >>> from sklearn_papers.datasets import make_shapes
        >>> from sklearn_papers.decomposition import BetaVAE
        >>> X, _ = make_shapes(32, image_size=16, random_state=0)
        >>> BetaVAE(2, encoder="mlp", max_epochs=1, random_state=0).fit(X).transform(X).shape
        (32, 2)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return self._run(X, _encode_mean).astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """Decode codes to the data space (Bernoulli means or Gaussian means).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes, e.g. from :meth:`transform`.

        Returns
        -------
        X_original : ndarray of shape (n_samples, `n_features_in_`)
            Reconstructions, same float dtype as the codes; in [0, 1] for Bernoulli.

        Raises
        ------
        ValueError
            If the codes do not have ``n_components`` columns or are not finite.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_papers.datasets import make_shapes
        >>> from sklearn_papers.decomposition import BetaVAE
        >>> X, _ = make_shapes(32, image_size=16, random_state=0)
        >>> vae = BetaVAE(2, encoder="mlp", max_epochs=1, random_state=0).fit(X)
        >>> vae.inverse_transform(np.zeros((1, 2))).shape
        (1, 256)
        """
        from sklearn_papers.utils._sklearn_compat import check_array

        check_is_fitted(self)
        Z = check_array(X, dtype=[np.float64, np.float32], input_name="X")
        if Z.shape[1] != self.n_components:
            raise ValueError(f"X has {Z.shape[1]} columns but this BetaVAE has "
                             f"n_components={self.n_components}.")
        method = _decode_bernoulli if self.likelihood_ == "bernoulli" else _decode_gaussian
        return self._run(Z, method).astype(Z.dtype, copy=False)

    def sample(self, n_samples=1):
        """Generate observations by decoding draws from the prior ``N(0, I)``.

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples.

        Returns
        -------
        X : ndarray of shape (n_samples, `n_features_in_`), float32
            Decoder means (pixel probabilities for Bernoulli). Draws come from
            ``random_state`` (the same for an int on every call, as in
            ``GaussianMixture.sample``).

        Examples
        --------
        >>> from sklearn_papers.datasets import make_shapes
        >>> from sklearn_papers.decomposition import BetaVAE
        >>> X, _ = make_shapes(32, image_size=16, random_state=0)
        >>> BetaVAE(2, encoder="mlp", max_epochs=1, random_state=0).fit(X).sample(3).shape
        (3, 256)
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}.")
        z = check_random_state(self.random_state).standard_normal(
            (int(n_samples), self.n_components)).astype(np.float32)
        return self.inverse_transform(z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.non_deterministic = self.random_state is None
        return tags


def _encode_mean(module, batch):
    return module.encode(batch)[0]


def _decode_bernoulli(module, batch):
    import torch

    return torch.sigmoid(module.decode(batch))


def _decode_gaussian(module, batch):
    return module.decode(batch)
