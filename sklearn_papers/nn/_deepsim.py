"""DeePSiM (Dosovitskiy & Brox 2016): generator, discriminator, comparator, the loss, its net.

The DeePSiM generator loss (Dosovitskiy & Brox 2016, eq. 4) is a weighted sum of three terms:

* a feature term ``||C(G(x)) - C(y)||^2``, with ``C`` a fixed *comparator* network (no
  gradient ever reaches its parameters; the gradient flows *through* it to the generator);
* an adversarial term ``-log D(G(x))`` from a discriminator ``D`` trained alongside with the
  standard GAN loss (the learned natural-image prior, eqs. 2-3);
* a pixel term ``||G(x) - y||^2`` that stabilises training.

Here the two squared distances are **normalised**: the pixel term is the mean squared error per
pixel divided by the training images' mean per-pixel variance, and the feature term is the
mean squared error per comparator feature divided by the comparator features' mean
per-feature variance over the training images. Both are thus fractions of variance (1.0 is the
error of predicting the mean image or the mean feature vector), whatever the comparator's
width or activation scale, and the adversarial term is in nats (``log 2 = 0.69`` when ``D``
cannot tell). The paper's weights (``lambda_feat = 0.01``, ``lambda_adv = 100``,
``lambda_img = 2e-6``, §4) are tuned to AlexNet's feature scale and 227x227 images; weights of
the normalised terms transfer from one comparator to another.

Shapes: ``B`` batch, ``(C, H, W)`` channels-first images inside the networks, ``F = C * H * W``
flattened pixels, ``D`` code width, ``K`` comparator feature width. Images at the module
boundary are flat rows in *the layout of the user's data* (``(H, W, C)`` row-major, i.e.
``images.reshape(B, -1)``), see :func:`rows_to_images`.
"""

import math

import torch
from skorch import NeuralNet
from torch import nn
from torch.nn import functional as F

__all__ = [
    "LEAK",
    "ComparatorCNN",
    "ComparatorNet",
    "DeePSiMDiscriminator",
    "DeePSiMEncoder",
    "DeePSiMGenerator",
    "DeePSiMLoss",
    "DeePSiMModel",
    "DeePSiMNet",
    "FrozenComparator",
    "deepsim_train_step",
    "images_to_rows",
    "resolution_chain",
    "rows_to_images",
]

#: Negative slope of every leaky ReLU of the generator, encoder and discriminator (paper, §4).
LEAK = 0.3


def resolution_chain(height, width, *, min_side=4):
    """Spatial sizes from the image down to the coarsest map, halving (rounded up).

    Halving continues while both sides stay ``>= min_side`` after halving: ``(8, 8)`` gives
    ``[(8, 8), (4, 4)]``, ``(32, 32)`` gives four sizes down to ``(4, 4)``, and a one-row
    image ``(1, F)`` is never halved.

    Parameters
    ----------
    height, width : int
        Image size.
    min_side : int, default=4
        Smallest side of the coarsest map.

    Returns
    -------
    sizes : list of tuple of int
        ``[(H, W), ..., (h_min, w_min)]``.
    """
    sizes = [(int(height), int(width))]
    h, w = sizes[0]
    while min(math.ceil(h / 2), math.ceil(w / 2)) >= min_side and min(h, w) >= 2 * min_side:
        h, w = math.ceil(h / 2), math.ceil(w / 2)
        sizes.append((h, w))
    return sizes


def rows_to_images(rows, image_shape):
    """Flat rows ``(B, F)`` in ``(H, W, C)`` row-major layout -> ``(B, C, H, W)``.

    Parameters
    ----------
    rows : torch.Tensor of shape (B, F)
    image_shape : tuple of int
        ``(H, W, C)``.

    Returns
    -------
    images : torch.Tensor of shape (B, C, H, W)
    """
    h, w, c = image_shape
    return rows.reshape(rows.shape[0], h, w, c).permute(0, 3, 1, 2)


def images_to_rows(images):
    """``(B, C, H, W)`` -> flat rows ``(B, H * W * C)`` in ``(H, W, C)`` row-major layout."""
    return images.permute(0, 2, 3, 1).reshape(images.shape[0], -1)


def _widths(n_levels, channels, max_channels=128):
    return [min(int(channels) * 2**k, max_channels) for k in range(n_levels)]


class DeePSiMEncoder(nn.Module):
    """Convolutional encoder: image -> code (the autoencoder's ``E``).

    ``Conv3x3 -> LReLU(0.3)`` at full resolution, then one stride-2 ``Conv3x3 -> LReLU`` per
    step of :func:`resolution_chain` (channels doubling from ``channels``, at most 128), then a
    ``Linear`` layer to the code (``2 * n_components`` outputs for a variational encoder:
    means and log-variances).

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W, C)``.
    n_components : int
        Code width ``D``.
    channels : int, default=32
        Channels of the first layer.
    variational : bool, default=False
        Output means and log-variances.

    Notes
    -----
    ``forward``: ``(B, F)`` float32 rows in ``[0, 1]`` -> ``(B, D)`` (or ``(B, 2 D)``).
    """

    def __init__(self, image_shape, n_components, *, channels=32, variational=False):
        super().__init__()
        h, w, c = (int(s) for s in image_shape)
        self.image_shape = (h, w, c)
        sizes = resolution_chain(h, w)
        widths = _widths(len(sizes), channels)
        layers = [nn.Conv2d(c, widths[0], 3, padding=1), nn.LeakyReLU(LEAK)]
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Conv2d(c_in, c_out, 3, stride=2, padding=1), nn.LeakyReLU(LEAK)]
        self.convs = nn.Sequential(*layers)
        hl, wl = sizes[-1]
        self.fc = nn.Linear(widths[-1] * hl * wl, int(n_components) * (2 if variational else 1))

    def forward(self, rows):
        maps = self.convs(rows_to_images(rows, self.image_shape))
        return self.fc(maps.flatten(1))


class DeePSiMGenerator(nn.Module):
    """Up-convolutional generator ``G``: vector -> image (pixel scale ``[0, 1]``).

    ``Linear -> LReLU(0.3)`` to the coarsest map of :func:`resolution_chain`, then per step
    up an *up-convolution* as in the paper: bilinear upsampling to the next size followed by
    ``Conv3x3 -> LReLU(0.3)`` (channels halving), then ``Conv3x3 -> LReLU`` and a ``Conv3x3``
    to the image channels (linear by default, see ``output``).

    Parameters
    ----------
    n_inputs : int
        Input width (the code, or the comparator features for feature inversion).
    image_shape : tuple of int
        ``(H, W, C)`` of the output.
    channels : int, default=32
        Channels at full resolution (doubling per coarser level, at most 128).
    output_mean : float, default=0.5
        The output layer's bias starts at ``output_mean`` (at ``logit(output_mean)`` for a
        sigmoid output), so that the first images have the data's mean brightness: with
        sparse images (mostly 0) a generator starting at 0.5 first pushes every output
        down, and a sigmoid output then sits in its flat tail, where it learns slowly.
    output : {"linear", "sigmoid"}, default="linear"
        ``"linear"``: unbounded outputs (the pixel scale is ``[0, 1]``; clip them for
        display); they never saturate. ``"sigmoid"``: outputs in ``(0, 1)``.

    Notes
    -----
    ``forward``: ``(B, n_inputs)`` -> ``(B, F)`` rows in the ``(H, W, C)`` layout.

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 2016. arXiv:1602.02644.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import DeePSiMGenerator
    >>> G = DeePSiMGenerator(4, (8, 8, 1), channels=8)
    >>> G(torch.zeros(2, 4)).shape
    torch.Size([2, 64])
    """

    def __init__(self, n_inputs, image_shape, *, channels=32, output_mean=0.5,
                 output="linear"):
        super().__init__()
        h, w, c = (int(s) for s in image_shape)
        self.image_shape = (h, w, c)
        sizes = resolution_chain(h, w)
        widths = _widths(len(sizes), channels)
        self.sizes = sizes
        hl, wl = sizes[-1]
        self.start = (widths[-1], hl, wl)
        self.fc = nn.Sequential(nn.Linear(int(n_inputs), widths[-1] * hl * wl),
                                nn.LeakyReLU(LEAK))
        ups = []
        for level in range(len(sizes) - 1, 0, -1):
            ups.append(nn.Sequential(nn.Conv2d(widths[level], widths[level - 1], 3, padding=1),
                                     nn.LeakyReLU(LEAK)))
        self.ups = nn.ModuleList(ups)
        self.refine = nn.Sequential(nn.Conv2d(widths[0], widths[0], 3, padding=1),
                                    nn.LeakyReLU(LEAK))
        self.out = nn.Conv2d(widths[0], c, 3, padding=1)
        if output not in ("linear", "sigmoid"):
            raise ValueError(f"output must be 'linear' or 'sigmoid', got {output!r}.")
        self.output = output
        m = float(output_mean)
        if output == "sigmoid":
            m = min(max(m, 1e-3), 1 - 1e-3)
            m = math.log(m / (1 - m))
        with torch.no_grad():
            self.out.bias.fill_(m)

    def forward(self, z):
        x = self.fc(z).reshape(z.shape[0], *self.start)
        for up, size in zip(self.ups, reversed(self.sizes[:-1])):
            x = up(F.interpolate(x, size=size, mode="bilinear", align_corners=False))
        out = self.out(self.refine(x))
        return images_to_rows(torch.sigmoid(out) if self.output == "sigmoid" else out)


class DeePSiMDiscriminator(nn.Module):
    """Discriminator ``D``: image (and optionally a condition vector) -> real/fake logit.

    As in the paper (§4): strided convolutions with leaky ReLU (0.3), global average pooling,
    dropout, two linear layers. ``Conv3x3`` at full resolution, one stride-2 ``Conv3x3`` per
    step of :func:`resolution_chain`, average pooling, then ``Dropout(0.5) -> Linear(., 256)
    -> LReLU -> Dropout(0.5) -> Linear(256, 1)``. With ``n_condition > 0`` a condition vector
    (the comparator features, for feature inversion) passes through ``Linear(n_condition,
    256) -> LReLU`` and is concatenated with the pooled image features before the two layers.

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W, C)``.
    channels : int, default=32
        Channels of the first layer (doubling per level, at most 128).
    n_condition : int, default=0
        Width of the condition vector; 0 for an unconditional discriminator.
    hidden : int, default=256
        Width of the hidden linear layer.
    dropout : float, default=0.5
        Dropout probability.

    Notes
    -----
    ``forward(rows, condition=None)``: ``(B, F)`` rows in ``[0, 1]`` (and ``(B,
    n_condition)``) -> ``(B,)`` logits.

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 2016. arXiv:1602.02644.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import DeePSiMDiscriminator
    >>> D = DeePSiMDiscriminator((8, 8, 1), channels=8, hidden=16)
    >>> D(torch.rand(3, 64)).shape
    torch.Size([3])
    """

    def __init__(self, image_shape, *, channels=32, n_condition=0, hidden=256, dropout=0.5):
        super().__init__()
        h, w, c = (int(s) for s in image_shape)
        self.image_shape = (h, w, c)
        sizes = resolution_chain(h, w)
        widths = _widths(len(sizes), channels)
        layers = [nn.Conv2d(c, widths[0], 3, padding=1), nn.LeakyReLU(LEAK)]
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Conv2d(c_in, c_out, 3, stride=2, padding=1), nn.LeakyReLU(LEAK)]
        self.convs = nn.Sequential(*layers)
        self.n_condition = int(n_condition)
        self.condition = (nn.Sequential(nn.Linear(self.n_condition, hidden), nn.LeakyReLU(LEAK))
                          if self.n_condition else None)
        width = widths[-1] + (hidden if self.n_condition else 0)
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(width, hidden),
                                  nn.LeakyReLU(LEAK), nn.Dropout(dropout), nn.Linear(hidden, 1))

    def forward(self, rows, condition=None):
        pooled = self.convs(rows_to_images(rows, self.image_shape)).mean(dim=(2, 3))
        if self.condition is not None:
            if condition is None:
                raise ValueError(f"this discriminator is conditional (n_condition="
                                 f"{self.n_condition}); pass condition.")
            pooled = torch.cat([pooled, self.condition(condition)], dim=1)
        return self.head(pooled).squeeze(1)


class ComparatorCNN(nn.Module):
    """Small CNN used as the comparator of ``comparator="auto"``, optionally a classifier.

    ``conv1 (3x3, c1) -> relu1 -> pool1 (2x2 max, when both sides >= 4) -> conv2 (3x3, c2)
    -> relu2 -> pool2 -> conv3 (3x3, c2) -> relu3``, then global average pooling and a
    ``Linear`` classification ``head``. The input is standardised inside (``mean``, ``std``
    scalars of the training pixels), so it takes rows in the data's own units. The named
    layers (``"relu1"``, ``"pool1"``, ``"relu2"``, ...) are the feature layers a
    :class:`FrozenComparator` can compare.

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W, C)``.
    n_classes : int, default=0
        Width of the classification head (0: no head; ``forward`` returns the pooled
        ``relu3`` features).
    channels : tuple of int, default=(16, 32)
        ``(c1, c2)``.
    mean, std : float, default=0.0, 1.0
        Input standardisation.

    Notes
    -----
    ``forward``: ``(B, F)`` rows -> ``(B, n_classes)`` logits (or ``(B, c2)`` features).

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 2016. arXiv:1602.02644.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import ComparatorCNN
    >>> C = ComparatorCNN((8, 8, 1), n_classes=10, channels=(4, 8))
    >>> C(torch.rand(2, 64)).shape
    torch.Size([2, 10])
    """

    def __init__(self, image_shape, *, n_classes=0, channels=(16, 32), mean=0.0, std=1.0):
        super().__init__()
        h, w, c = (int(s) for s in image_shape)
        self.image_shape = (h, w, c)
        c1, c2 = (int(v) for v in channels)
        pool1 = min(h, w) >= 4
        pool2 = min(h // 2 if pool1 else h, w // 2 if pool1 else w) >= 4
        self.conv1 = nn.Conv2d(c, c1, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2) if pool1 else nn.Identity()
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2) if pool2 else nn.Identity()
        self.conv3 = nn.Conv2d(c2, c2, 3, padding=1)
        self.relu3 = nn.ReLU()
        self.head = nn.Linear(c2, int(n_classes)) if n_classes else nn.Identity()
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))

    def forward(self, rows):
        x = rows_to_images((rows - self.mean) / self.std, self.image_shape)
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        x = self.relu3(self.conv3(x))
        return self.head(x.mean(dim=(2, 3)))


class _Captured(Exception):  # noqa: N818 - control flow, not an error
    """Raised by the capture hook to stop the forward pass once the layer has run."""


class FrozenComparator(nn.Module):
    """A fixed comparator ``C``: features of one layer of a frozen torch module.

    The wrapped module's parameters get ``requires_grad=False`` and it stays in evaluation
    mode whatever ``train()`` is called with (batch-norm statistics and dropout never
    change), so the DeePSiM loss passes gradients *through* it to the generator while its
    parameters stay bit-identical. Wrap a copy if the module is used elsewhere.

    Parameters
    ----------
    module : torch.nn.Module
        Maps flat image rows ``(B, F)`` *in the data's units and layout* to anything; e.g. the
        encoder of a fitted :class:`~sklearn_papers.contrastive.SupConEmbedder`
        (``embedder.net_.module_.encoder``), or a :class:`ComparatorCNN`.
    layer : str or None, default=None
        Name of the submodule (as in ``module.named_modules()``) whose output is compared;
        None compares the module's output. The forward pass stops once that layer has run.
    offset, scale : float, default=0.0, 1.0
        The comparator sees ``rows * scale + offset``: the generator works in ``[0, 1]`` and
        this maps its output back to the data's units.

    Raises
    ------
    ValueError
        If ``layer`` names no submodule (the message lists the available names).

    Notes
    -----
    ``forward``: ``(B, F)`` -> ``(B, K)`` float32 features (flattened).

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 2016. arXiv:1602.02644.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import ComparatorCNN, FrozenComparator
    >>> C = FrozenComparator(ComparatorCNN((8, 8, 1), channels=(4, 8)), layer="relu1")
    >>> C(torch.rand(2, 64)).shape
    torch.Size([2, 256])
    >>> any(p.requires_grad for p in C.parameters())
    False
    """

    def __init__(self, module, layer=None, *, offset=0.0, scale=1.0):
        super().__init__()
        if layer is not None:
            names = [n for n, _ in module.named_modules() if n]
            if layer not in names:
                raise ValueError(f"comparator layer {layer!r} is not a submodule of "
                                 f"{type(module).__name__}; available: {names}.")
        self.module = module
        self.layer = layer
        self.offset = float(offset)
        self.scale = float(scale)
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.module.eval()

    def train(self, mode=True):
        """Keep the wrapped module in evaluation mode (``mode`` is ignored for it)."""
        self.training = bool(mode)
        self.module.eval()
        return self

    def forward(self, rows):
        x = rows * self.scale + self.offset
        if self.layer is None:
            return self.module(x).flatten(1)
        captured = {}

        def hook(_module, _inputs, output):
            captured["out"] = output
            raise _Captured

        handle = self.module.get_submodule(self.layer).register_forward_hook(hook)
        try:
            self.module(x)
        except _Captured:
            pass
        finally:
            handle.remove()
        if "out" not in captured:
            raise RuntimeError(f"comparator layer {self.layer!r} was not called in the "
                               "forward pass.")
        return captured["out"].flatten(1)


def _weighted_mean(values, sample_weight):
    if sample_weight is None:
        return values.mean()
    return (values * sample_weight).sum() / sample_weight.sum().clamp_min(1e-12)


class DeePSiMLoss(nn.Module):
    """The DeePSiM generator loss with normalised terms, and the discriminator's loss.

    ``loss(fake, real) = lambda_feat * L_feat + lambda_adv * L_adv + lambda_img * L_img``
    (Dosovitskiy & Brox 2016, eq. 4), per sample, averaged over the batch (weighted by
    ``sample_weight`` when given):

    * ``L_feat = mean_k (C(fake)_k - C(real)_k)^2 / feat_scale`` (eq. 1);
    * ``L_adv = -log sigmoid(D(fake))``, the non-saturating generator loss (eq. 3);
    * ``L_img = mean_j (fake_j - real_j)^2 / img_scale``.

    ``feat_scale`` and ``img_scale`` are the mean per-feature and per-pixel variances of the
    training images (:meth:`calibrate` computes them), so ``L_feat`` and ``L_img`` are
    fractions of variance whatever the comparator; ``L_adv`` is in nats. The discriminator is
    trained with :meth:`discriminator_loss`, ``-log sigmoid(D(real)) - log(1 -
    sigmoid(D(fake)))`` (eq. 2). Use it in your own loop::

        loss = DeePSiMLoss(FrozenComparator(cnn), DeePSiMDiscriminator(shape))
        loss.calibrate(real_rows)
        d_loss = loss.discriminator_loss(fake.detach(), real)   # step D's optimiser
        g_loss = loss(fake, real)                               # step G's optimiser

    Parameters
    ----------
    comparator : torch.nn.Module
        Fixed comparator ``C`` (rows ``(B, F)`` -> ``(B, K)``), e.g. a
        :class:`FrozenComparator`. Its parameters should not require gradients.
    discriminator : torch.nn.Module or None, default=None
        ``D`` (rows, condition) -> ``(B,)`` logits, e.g. :class:`DeePSiMDiscriminator`;
        None (or ``lambda_adv=0``) drops the adversarial term.
    lambda_feat, lambda_adv, lambda_img : float, default=1.0, 0.1, 1.0
        Weights of the normalised terms.
    feat_scale, img_scale : float, default=1.0, 1.0
        Normalisers of the squared errors (set by :meth:`calibrate`).

    Notes
    -----
    ``forward(fake, real, *, real_features=None, condition=None, sample_weight=None)``:
    ``fake``, ``real`` ``(B, F)``; ``real_features`` ``(B, K)`` precomputed ``C(real)``
    (computed when None); ``condition`` the discriminator's condition; ``sample_weight``
    ``(B,)``. Returns a scalar.

    References
    ----------
    .. [1] Dosovitskiy, A. and Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 2016. arXiv:1602.02644.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import (ComparatorCNN, DeePSiMDiscriminator, DeePSiMLoss,
    ...                                FrozenComparator)
    >>> comparator = FrozenComparator(ComparatorCNN((8, 8, 1), channels=(4, 8)), "relu2")
    >>> loss = DeePSiMLoss(comparator, DeePSiMDiscriminator((8, 8, 1), channels=8, hidden=16))
    >>> real, fake = torch.rand(4, 64), torch.rand(4, 64, requires_grad=True)
    >>> loss(fake, real).backward()
    >>> fake.grad.shape
    torch.Size([4, 64])
    """

    def __init__(self, comparator, discriminator=None, *, lambda_feat=1.0, lambda_adv=0.1,
                 lambda_img=1.0, feat_scale=1.0, img_scale=1.0):
        super().__init__()
        self.comparator = comparator
        self.discriminator = discriminator
        self.lambda_feat = float(lambda_feat)
        self.lambda_adv = float(lambda_adv)
        self.lambda_img = float(lambda_img)
        self.feat_scale = float(feat_scale)
        self.img_scale = float(img_scale)

    @property
    def adversarial(self):
        """Whether the adversarial term is on (a discriminator and ``lambda_adv > 0``)."""
        return self.discriminator is not None and self.lambda_adv > 0

    @torch.no_grad()
    def calibrate(self, real, *, sample_weight=None, batch_size=512):
        """Set ``img_scale`` and ``feat_scale`` from training images.

        Parameters
        ----------
        real : torch.Tensor of shape (N, F)
            Training images (the generator's units).
        sample_weight : torch.Tensor of shape (N,) or None, default=None
            Weighted variances when given.
        batch_size : int, default=512
            Rows per comparator call.

        Returns
        -------
        self : DeePSiMLoss
        """
        feats = torch.cat([self.comparator(real[i:i + batch_size])
                           for i in range(0, real.shape[0], batch_size)])
        self.img_scale = _mean_variance(real, sample_weight)
        self.feat_scale = _mean_variance(feats, sample_weight)
        return self

    def terms(self, fake, real, *, real_features=None, condition=None, sample_weight=None):
        """The three normalised terms, unweighted by the lambdas.

        Returns
        -------
        terms : dict of str to torch.Tensor
            ``{"feat": L_feat, "adv": L_adv, "img": L_img}`` (scalars; ``adv`` is 0 when the
            adversarial term is off).
        """
        if real_features is None:
            with torch.no_grad():
                real_features = self.comparator(real)
        feat = ((self.comparator(fake) - real_features) ** 2).mean(dim=1) / self.feat_scale
        img = ((fake - real) ** 2).mean(dim=1) / self.img_scale
        out = {"feat": _weighted_mean(feat, sample_weight),
               "img": _weighted_mean(img, sample_weight)}
        if self.adversarial:
            adv = F.softplus(-self.discriminator(fake, condition))
            out["adv"] = _weighted_mean(adv, sample_weight)
        else:
            out["adv"] = fake.new_zeros(())
        return out

    def forward(self, fake, real, *, real_features=None, condition=None, sample_weight=None):
        t = self.terms(fake, real, real_features=real_features, condition=condition,
                       sample_weight=sample_weight)
        total = self.lambda_img * t["img"]
        if self.lambda_feat:
            total = total + self.lambda_feat * t["feat"]
        if self.adversarial:
            total = total + self.lambda_adv * t["adv"]
        return total

    def discriminator_loss(self, fake, real, *, condition=None, sample_weight=None):
        """GAN loss of the discriminator (eq. 2): real rows labelled 1, generated ones 0.

        Parameters
        ----------
        fake : torch.Tensor of shape (B, F)
            Generated rows (detach them: the generator is not updated by this loss).
        real : torch.Tensor of shape (B, F)
        condition : torch.Tensor of shape (B, n_condition) or None, default=None
        sample_weight : torch.Tensor of shape (B,) or None, default=None

        Returns
        -------
        loss : torch.Tensor
            Scalar, in nats (``2 log 2`` when ``D`` outputs 0.5 everywhere).
        """
        per_sample = (F.softplus(-self.discriminator(real, condition))
                      + F.softplus(self.discriminator(fake, condition)))
        return _weighted_mean(per_sample, sample_weight)


def _mean_variance(values, sample_weight=None):
    """Mean over columns of the (weighted) column variances; 1.0 when that is 0."""
    values = values.double()
    if sample_weight is None:
        var = values.var(dim=0, unbiased=False).mean()
    else:
        w = sample_weight.double() / sample_weight.double().sum()
        mean = (w[:, None] * values).sum(0)
        var = (w[:, None] * (values - mean) ** 2).sum(0).mean()
    var = float(var)
    return var if var > 1e-12 and math.isfinite(var) else 1.0


class DeePSiMModel(nn.Module):
    """The trained part: an optional encoder and the generator (the discriminator lives in
    the loss).

    Parameters
    ----------
    generator : torch.nn.Module
        ``(B, n_inputs)`` -> ``(B, F)``.
    encoder : torch.nn.Module or None, default=None
        ``(B, F)`` -> ``(B, D)`` (or ``(B, 2 D)`` when ``variational``); None for feature
        inversion (the generator reads the inputs directly).
    variational : bool, default=False
        The encoder outputs means and log-variances; in training mode the code is sampled
        with the reparameterisation trick (Kingma & Welling 2014), in evaluation mode it is
        the mean.

    Notes
    -----
    ``forward(inputs)`` returns ``(fake, mu, logvar)`` (``logvar`` None unless
    variational; ``mu`` is the code, or the inputs without encoder).
    """

    def __init__(self, generator, encoder=None, *, variational=False):
        super().__init__()
        self.generator = generator
        self.encoder = encoder
        self.variational = bool(variational)

    def encode(self, inputs):
        """Inputs -> ``(mu, logvar)``; logvar clamped to [-20, 10], None if not variational."""
        if self.encoder is None:
            return inputs, None
        out = self.encoder(inputs)
        if not self.variational:
            return out, None
        mu, logvar = out.chunk(2, dim=1)
        return mu, logvar.clamp(-20.0, 10.0)

    def forward(self, inputs):
        mu, logvar = self.encode(inputs)
        z = mu
        if logvar is not None and self.training:
            z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.generator(z), mu, logvar


def deepsim_train_step(model, loss, opt_g, opt_d, inputs, real, *, real_features=None,
                       condition=None, sample_weight=None, lambda_kl=0.0, pause_ratio=0.1):
    """One DeePSiM training step: a discriminator update (unless paused), a generator update.

    The discriminator is updated on ``(G(x).detach(), real)`` unless its loss is below
    ``pause_ratio`` times the generator's adversarial loss ("training of the discriminator
    is paused while it is too good", §4); then the generator (and encoder) minimise the
    DeePSiM loss, plus ``lambda_kl * 2 KL / F`` for a variational model.

    Parameters
    ----------
    model : DeePSiMModel
    loss : DeePSiMLoss
    opt_g, opt_d : torch.optim.Optimizer
        Optimisers of ``model`` and of ``loss.discriminator`` (``opt_d`` unused when the
        adversarial term is off).
    inputs, real : torch.Tensor
        ``(B, .)`` model inputs and ``(B, F)`` target rows.
    real_features, condition, sample_weight : torch.Tensor or None
        See :class:`DeePSiMLoss`.
    lambda_kl : float, default=0.0
        KL weight for a variational model (KL in nats per sample, times ``2 / F``: with
        ``lambda_kl = lambda_img`` and no other term this is the negative ELBO of a
        Gaussian decoder whose variance is the data's mean pixel variance, divided by
        ``F / 2``).
    pause_ratio : float, default=0.1
        Discriminator pause threshold.

    Returns
    -------
    step : dict
        ``loss`` (generator loss, tensor), ``fake`` (detached), ``d_loss`` (float),
        ``d_updated`` (bool) and the float terms ``feat``, ``adv``, ``img``, ``kl``.
    """
    fake, mu, logvar = model(inputs)
    out = {"d_loss": float("nan"), "d_updated": False}
    if loss.adversarial:
        disc = loss.discriminator
        disc.requires_grad_(True)
        d_loss = loss.discriminator_loss(fake.detach(), real, condition=condition,
                                         sample_weight=sample_weight)
        out["d_loss"] = float(d_loss.detach())
        last_adv = getattr(loss, "_last_adv", None)
        if last_adv is None or out["d_loss"] >= pause_ratio * last_adv:
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()
            out["d_updated"] = True
        disc.requires_grad_(False)
    terms = loss.terms(fake, real, real_features=real_features, condition=condition,
                       sample_weight=sample_weight)
    total = loss.lambda_img * terms["img"]
    if loss.lambda_feat:
        total = total + loss.lambda_feat * terms["feat"]
    if loss.adversarial:
        total = total + loss.lambda_adv * terms["adv"]
        loss._last_adv = float(terms["adv"].detach())
    kl = None
    if logvar is not None:
        kl_per = 0.5 * (mu**2 + logvar.exp() - 1.0 - logvar).sum(dim=1) * (2.0 / real.shape[1])
        kl = _weighted_mean(kl_per, sample_weight)
        total = total + lambda_kl * kl
    opt_g.zero_grad(set_to_none=True)
    total.backward()
    opt_g.step()
    if loss.discriminator is not None:
        loss.discriminator.requires_grad_(True)
    out.update(loss=total.detach(), fake=fake.detach(),
               **{k: float(v.detach()) for k, v in terms.items()},
               kl=float(kl.detach()) if kl is not None else 0.0)
    return out


class DeePSiMNet(NeuralNet):
    """skorch net training a :class:`DeePSiMModel` with a :class:`DeePSiMLoss` criterion.

    Customised through skorch's documented override points only: ``initialize_optimizer``
    builds a second optimiser, ``optimizer_discriminator_`` (same class and settings), for
    the criterion's discriminator, and ``train_step`` runs :func:`deepsim_train_step`.
    ``X`` is a dict with ``"inputs"``, ``"real"`` (target rows in ``[0, 1]``) and optionally
    ``"real_features"``, ``"condition"`` and ``"sample_weight"``.

    Parameters
    ----------
    *args, lambda_kl=0.0, pause_ratio=0.1, **kwargs
        ``lambda_kl`` and ``pause_ratio`` as in :func:`deepsim_train_step`; the rest goes to
        ``skorch.NeuralNet``.
    """

    def __init__(self, *args, lambda_kl=0.0, pause_ratio=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.lambda_kl = lambda_kl
        self.pause_ratio = pause_ratio

    def initialize_optimizer(self, *args, **kwargs):
        named = self.module_.named_parameters()
        pgroups, kw = self.get_params_for_optimizer("optimizer", named)
        self.optimizer_ = self.optimizer(*pgroups, **kw)
        disc = self.criterion_.discriminator
        if disc is not None:
            pgroups, kw = self.get_params_for_optimizer("optimizer", disc.named_parameters())
            self.optimizer_discriminator_ = self.optimizer(*pgroups, **kw)
        else:
            self.optimizer_discriminator_ = None
        return self

    def train_step(self, batch, **fit_params):
        Xi, _ = batch
        Xi = {k: v.to(self.device) for k, v in Xi.items()}
        self._set_training(True)
        step = deepsim_train_step(
            self.module_, self.criterion_, self.optimizer_, self.optimizer_discriminator_,
            Xi["inputs"], Xi["real"], real_features=Xi.get("real_features"),
            condition=Xi.get("condition"), sample_weight=Xi.get("sample_weight"),
            lambda_kl=self.lambda_kl, pause_ratio=self.pause_ratio)
        for key in ("d_loss", "feat", "adv", "img", "kl"):
            self.history.record_batch(key, step[key])
        self.history.record_batch("d_updated", step["d_updated"])
        return {"loss": step["loss"], "y_pred": step["fake"]}


class ComparatorNet(NeuralNet):
    """skorch net training a :class:`ComparatorCNN` as a classifier (the ``"auto"``
    comparator): per-row cross-entropy of the class codes ``y``, averaged, or with
    ``X["sample_weight"]`` weighted as ``sum_b w_b CE_b / sum_b w_b``.

    Customised through skorch's documented override points only: ``infer`` calls the
    module on ``X["X"]`` and ``get_loss`` computes the loss above. ``X`` is a dict with
    ``"X"`` (flat image rows) and optionally ``"sample_weight"``.
    """

    def infer(self, x, **fit_params):
        x = x["X"] if isinstance(x, dict) else x
        return self.module_(x.to(self.device))

    def get_loss(self, y_pred, y_true, X=None, training=False):
        per = F.cross_entropy(y_pred, y_true.to(y_pred.device), reduction="none")
        w = X.get("sample_weight") if isinstance(X, dict) else None
        if w is None:
            return per.mean()
        w = w.to(y_pred.device)
        return (per * w).sum() / w.sum()
