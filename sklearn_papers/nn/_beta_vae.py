"""The beta-VAE (Higgins et al. 2017): encoder/decoder module, its loss and its skorch net.

Shapes: ``B`` batch size, ``F`` flattened input width, ``D`` latent size (``n_components``),
``(C, H, W)`` the image shape of the convolutional variant (``F = C * H * W``).
"""

import torch
from skorch import NeuralNet
from skorch.utils import to_tensor
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._encoders import conv_block, dense_block, make_norm

__all__ = ["BetaVAELoss", "BetaVAEModule", "BetaVAENet"]


class _ConvEncoder(nn.Module):
    """Stride-2 4x4 convolutions (32 channels) while both sides stay >= 4, then a linear layer.

    Every layer is a shared block of :mod:`sklearn_papers.nn._encoders` (``[layer, norm,
    ReLU]``, the norm left out for ``norm=None``). ``forward``: (B, F) -> (B, hidden);
    records the spatial size after every layer.
    """

    def __init__(self, image_shape, hidden, channels=32, *, norm=None, num_groups=8):
        super().__init__()
        c, h, w = image_shape
        layers, sizes = [], [(h, w)]
        while min(h, w) // 2 >= 4 and len(sizes) <= 4:
            layers += conv_block(c, channels, 4, stride=2, padding=1, norm=norm,
                                 num_groups=num_groups)
            c, h, w = channels, h // 2, w // 2
            sizes.append((h, w))
        self.image_shape = tuple(image_shape)
        self.sizes = sizes
        self.out_channels = c
        self.convs = nn.Sequential(*layers)
        self.fc = nn.Sequential(nn.Flatten(), *dense_block(c * h * w, hidden, norm=norm,
                                                           num_groups=num_groups))

    def forward(self, X):
        return self.fc(self.convs(X.reshape(-1, *self.image_shape)))


class _ConvDecoder(nn.Module):
    """Mirror of :class:`_ConvEncoder`: (B, D) -> (B, F) logits/means, exact output size.

    The same normalisation follows every hidden layer (not the output layer).
    """

    def __init__(self, encoder, n_components, hidden, *, norm=None, num_groups=8):
        super().__init__()
        h, w = encoder.sizes[-1]
        self.start = (encoder.out_channels, h, w)
        self.fc = nn.Sequential(
            *dense_block(n_components, hidden, norm=norm, num_groups=num_groups),
            *dense_block(hidden, encoder.out_channels * h * w, norm=norm, num_groups=num_groups),
        )
        self.sizes = list(reversed(encoder.sizes[:-1]))
        c_in = encoder.out_channels
        n_up = len(self.sizes)
        self.convs = nn.ModuleList(
            nn.Conv2d(c_in, c_in if i < n_up - 1 else encoder.image_shape[0], 3, padding=1)
            for i in range(n_up)
        )
        # identity layers (no parameters) for norm=None
        self.norms = nn.ModuleList(
            make_norm(norm, c_in, num_groups=num_groups, spatial=True) for _ in range(n_up - 1)
        )
        self.n_features = encoder.image_shape[0] * encoder.sizes[0][0] * encoder.sizes[0][1]
        self.out = None if n_up else nn.Linear(encoder.out_channels * h * w, self.n_features)

    def forward(self, z):
        x = self.fc(z)
        if self.out is not None:
            return self.out(x)
        x = x.reshape(-1, *self.start)
        for i, (conv, size) in enumerate(zip(self.convs, self.sizes)):
            x = conv(F.interpolate(x, size=size, mode="nearest"))
            if i < len(self.convs) - 1:
                x = F.relu(self.norms[i](x))
        return x.reshape(x.shape[0], -1)


class BetaVAEModule(nn.Module):
    """Gaussian-encoder VAE with a fully connected or convolutional encoder and decoder.

    Parameters
    ----------
    n_features : int
        Input width ``F``.
    n_components : int
        Latent size ``D``.
    encoder : {"mlp", "conv"}
        ``"mlp"``: two hidden layers of ``hidden`` units; ``"conv"``: see
        :class:`_ConvEncoder` (needs ``image_shape``).
    image_shape : tuple of int or None
        ``(C, H, W)`` for ``encoder="conv"``.
    hidden : int, default=256
        Width of the fully connected layers.
    norm : {"batch", "group", "layer"} or None, default=None
        Normalisation after every hidden layer of the encoder and the decoder (not after
        the posterior head or the output layer), from the shared blocks of
        :mod:`sklearn_papers.nn._encoders`; ``None``: no normalisation (the original
        architecture).
    num_groups : int, default=8
        Groups for ``norm="group"``, an upper bound (see
        :func:`sklearn_papers.nn._encoders.make_norm`).

    Notes
    -----
    ``forward(X)`` takes ``X`` (B, F) float32 and returns ``(out, mu, logvar)``: ``out`` (B,
    F) decoder output (Bernoulli logits or Gaussian means), ``mu`` and ``logvar`` (B, D) the
    posterior parameters. In training mode ``z = mu + exp(logvar / 2) * eps`` (global torch
    RNG, seeded by the caller); in evaluation mode ``z = mu``.
    """

    def __init__(self, n_features, n_components, encoder="mlp", image_shape=None, hidden=256,
                 norm=None, num_groups=8):
        super().__init__()
        blocks = dict(norm=norm, num_groups=num_groups)
        if encoder == "conv":
            self.encoder = _ConvEncoder(tuple(image_shape), hidden, **blocks)
            self.decoder = _ConvDecoder(self.encoder, n_components, hidden, **blocks)
        else:
            self.encoder = nn.Sequential(*dense_block(n_features, hidden, **blocks),
                                         *dense_block(hidden, hidden, **blocks))
            self.decoder = nn.Sequential(*dense_block(n_components, hidden, **blocks),
                                         *dense_block(hidden, hidden, **blocks),
                                         nn.Linear(hidden, n_features))
        self.head = nn.Linear(hidden, 2 * n_components)

    def encode(self, X):
        """(B, F) -> ``mu``, ``logvar`` each (B, D); logvar clamped to [-20, 10]."""
        mu, logvar = self.head(self.encoder(X)).chunk(2, dim=1)
        return mu, logvar.clamp(-20.0, 10.0)

    def decode(self, z):
        """(B, D) -> (B, F) decoder output."""
        return self.decoder(z)

    def forward(self, X):
        mu, logvar = self.encode(X)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu) if self.training else mu
        return self.decode(z), mu, logvar


class BetaVAELoss(nn.Module):
    """Negative beta-ELBO per sample, averaged over the batch (Higgins et al. 2017, Eq. 4).

    ``loss = recon(X, out) + beta * KL(N(mu, diag(exp(logvar))) || N(0, I))``, with
    ``recon`` the Bernoulli negative log-likelihood (binary cross-entropy on logits, summed
    over features) or the unit-variance Gaussian one (half the summed squared error).

    With ``sample_weight`` ``w`` (B,) the batch mean becomes ``sum_b w_b L_b / sum_b w_b``
    (0 when every weight is 0): a sample of weight 0 adds nothing to the loss.

    Parameters
    ----------
    beta : float
        KL weight; ``beta=1`` is the plain VAE bound.
    likelihood : {"bernoulli", "gaussian"}
        Decoder likelihood.

    References
    ----------
    .. [1] Higgins, I., Matthey, L., Pal, A., Burgess, C., Glorot, X., Botvinick, M.,
       Mohamed, S. and Lerchner, A. (2017). beta-VAE: Learning basic visual concepts
       with a constrained variational framework. ICLR, Eq. 4.
    .. [2] Kingma, D. P. and Welling, M. (2014). Auto-encoding variational Bayes. ICLR.
       :arxiv:`1312.6114`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import BetaVAELoss
    >>> X = torch.rand(4, 6)
    >>> out, mu, logvar = torch.zeros(4, 6), torch.zeros(4, 2), torch.zeros(4, 2)
    >>> loss = BetaVAELoss(beta=4.0, likelihood="gaussian")((out, mu, logvar), X)
    >>> bool(torch.isclose(loss, 0.5 * (X ** 2).sum(1).mean()))
    True
    """

    def __init__(self, beta=1.0, likelihood="bernoulli"):
        super().__init__()
        self.beta = float(beta)
        self.likelihood = likelihood

    def forward(self, output, X, sample_weight=None):
        """Negative beta-ELBO of a batch.

        Parameters
        ----------
        output : tuple of torch.Tensor
            ``(out, mu, logvar)``: decoder output ``(B, F)`` (Bernoulli logits or Gaussian
            means) and posterior mean and log-variance ``(B, D)``.
        X : torch.Tensor of shape (B, F)
            The input that was encoded.
        sample_weight : torch.Tensor of shape (B,), default=None
            Non-negative weight of each sample; None: the plain batch mean.

        Returns
        -------
        loss : torch.Tensor of shape ()
            Mean (or weighted mean) over the batch of ``recon + beta * KL``.
        """
        out, mu, logvar = output
        if self.likelihood == "bernoulli":
            recon = F.binary_cross_entropy_with_logits(out, X, reduction="none").sum(dim=1)
        else:
            recon = 0.5 * ((out - X) ** 2).sum(dim=1)
        kl = 0.5 * (mu**2 + logvar.exp() - 1.0 - logvar).sum(dim=1)
        per_sample = recon + self.beta * kl
        if sample_weight is None:
            return per_sample.mean()
        sample_weight = sample_weight.to(per_sample)
        return (sample_weight * per_sample).sum() / sample_weight.sum().clamp(min=1e-12)


class BetaVAENet(NeuralNet):
    """skorch net whose loss compares the module output with the input ``X`` (no ``y``).

    Overrides only ``get_loss`` and ``infer`` (documented extension points); ``forward``
    in evaluation mode returns the first module output, the posterior means being read
    through ``module_.encode``. Sample weights follow skorch's documented recipe: fit on
    ``X = {"X": X, "sample_weight": w}``; the module sees ``X["X"]`` and the criterion is
    called with the batch's weights.
    """

    def infer(self, x, **fit_params):
        if isinstance(x, dict) and "sample_weight" in x:
            x = x["X"]
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        weight = None
        if isinstance(X, dict) and "sample_weight" in X:
            X, weight = X["X"], to_tensor(X["sample_weight"], device=self.device)
        X = X.to(self.device) if isinstance(X, torch.Tensor) else torch.as_tensor(
            X, device=self.device)
        if weight is None:
            return self.criterion_(y_pred, X)
        return self.criterion_(y_pred, X, sample_weight=weight)
