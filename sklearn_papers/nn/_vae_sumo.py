"""The encoder/decoder latent-variable model trained by SUMO (Luo et al. 2020).

``z ~ N(0, I_L)``, ``x | z ~ Bernoulli(sigmoid(f(z)))`` or ``N(mu(z), diag(exp(logvar(z))))``;
amortised proposal ``q(z | x) = N(mu(x), diag(exp(logvar(x))))``. Shapes: ``B`` data rows,
``S`` samples per row, ``d`` features, ``L`` latent dimensions.
"""

import math

import torch
from torch import nn

__all__ = ["SUMOVAEModule"]

_LOG2PI = math.log(2 * math.pi)


class SUMOVAEModule(nn.Module):
    """One-hidden-layer (tanh) Gaussian encoder and Bernoulli or Gaussian decoder.

    Parameters
    ----------
    n_features : int
        ``d``.
    n_components : int
        ``L``, the latent dimension.
    hidden_size : int
        Width of the hidden layer of both networks.
    likelihood : {"bernoulli", "gaussian"}
        Decoder family.
    """

    def __init__(self, n_features, n_components, hidden_size, likelihood):
        super().__init__()
        d, L, h = int(n_features), int(n_components), int(hidden_size)
        out = d if likelihood == "bernoulli" else 2 * d
        self.encoder = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, 2 * L))
        self.decoder = nn.Sequential(nn.Linear(L, h), nn.Tanh(), nn.Linear(h, out))
        self.n_features, self.n_components, self.likelihood = d, L, likelihood

    def encode(self, x):
        """``x`` (B, d) -> posterior mean and log-variance, each (B, L) (log-var in [-10, 10])."""
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        return mu, logvar.clamp(-10.0, 10.0)

    def log_likelihood(self, x, z):
        """``log p(x | z)``: ``x`` (B, d), ``z`` (B, S, L) -> (B, S)."""
        out = self.decoder(z)
        x = x.unsqueeze(1)
        if self.likelihood == "bernoulli":
            # -BCE with logits: x * logit - softplus(logit), exact and overflow free.
            return (x * out - nn.functional.softplus(out)).sum(-1)
        mu, logvar = out.chunk(2, dim=-1)
        logvar = logvar.clamp(-8.0, 8.0)
        return -0.5 * (((x - mu) ** 2) * torch.exp(-logvar) + logvar + _LOG2PI).sum(-1)

    def log_weights(self, x, n_samples):
        """``log p(x, z) - log q(z | x)`` for ``n_samples`` reparameterised ``z``: (B, S)."""
        mu, logvar = self.encode(x)
        std = torch.exp(0.5 * logvar)
        eps = torch.randn(x.shape[0], int(n_samples), self.n_components, device=x.device,
                          dtype=x.dtype)
        z = mu.unsqueeze(1) + std.unsqueeze(1) * eps
        log_q = -0.5 * (eps**2 + logvar.unsqueeze(1) + _LOG2PI).sum(-1)
        log_prior = -0.5 * (z**2 + _LOG2PI).sum(-1)
        return self.log_likelihood(x, z) + log_prior - log_q

    def log_weights_rows(self, x, rows, eps=None):
        """One log-weight per entry of ``rows`` (N,), the data row it belongs to: (N,).

        The encoder runs once on ``x`` (B, d); the ragged draws share it. ``eps`` (N, L) is
        the standard normal noise of the reparameterisation ``z = mu + std * eps``; drawn
        from torch's global generator when None.
        """
        mu, logvar = self.encode(x)
        std = torch.exp(0.5 * logvar)
        if eps is None:
            eps = torch.randn(rows.shape[0], self.n_components, device=x.device, dtype=x.dtype)
        z = mu[rows] + std[rows] * eps
        log_q = -0.5 * (eps**2 + logvar[rows] + _LOG2PI).sum(-1)
        log_prior = -0.5 * (z**2 + _LOG2PI).sum(-1)
        return self.log_likelihood(x[rows], z.unsqueeze(1)).squeeze(1) + log_prior - log_q

    def sample(self, n_samples):
        """Draw ``x`` (n_samples, d) from the model (prior, then decoder)."""
        z = torch.randn(int(n_samples), 1, self.n_components, device=self.decoder[0].weight.device)
        out = self.decoder(z).squeeze(1)
        if self.likelihood == "bernoulli":
            return torch.bernoulli(torch.sigmoid(out))
        mu, logvar = out.chunk(2, dim=-1)
        return mu + torch.exp(0.5 * logvar.clamp(-8.0, 8.0)) * torch.randn_like(mu)

    def forward(self, x):
        return self.encode(x)[0]
