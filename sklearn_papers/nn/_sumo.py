"""Trainable proposal distributions q(x) for SUMO log-partition estimation (Luo et al. 2020).

The modules expose the two things an importance sampler needs, ``rsample`` (reparameterised,
so gradients of E[f(x)] flow into q's parameters) and ``log_prob``, plus ``distribution()``
giving an equivalent, detached ``torch.distributions`` object. Shapes: ``d`` is the dimension.
"""

import math

import torch
from torch import nn

__all__ = ["GaussianProposal", "MixtureProposal"]


def _scale_tril(raw, diag_raw):
    """Lower-triangular factor with a positive diagonal (softplus), shape (..., d, d)."""
    tril = torch.tril(raw, diagonal=-1)
    diag = nn.functional.softplus(diag_raw) + 1e-5
    return tril + torch.diag_embed(diag)


def _inv_softplus(y):
    return y + torch.log(-torch.expm1(-y))


class GaussianProposal(nn.Module):
    """Full-covariance Gaussian ``N(loc, L L^T)``, ``L`` lower triangular with softplus diagonal.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    loc : torch.Tensor of shape (d,), default=None
        Initial mean; zeros when None.
    covariance : torch.Tensor of shape (d, d), default=None
        Initial covariance (symmetric positive definite); the identity when None.
    """

    def __init__(self, n_features, loc=None, covariance=None):
        super().__init__()
        d = int(n_features)
        loc = torch.zeros(d) if loc is None else torch.as_tensor(loc, dtype=torch.float32)
        cov = torch.eye(d) if covariance is None else torch.as_tensor(covariance,
                                                                      dtype=torch.float32)
        chol = torch.linalg.cholesky(cov)
        self.loc = nn.Parameter(loc.clone().reshape(d))
        self.tril_raw = nn.Parameter(torch.tril(chol, diagonal=-1).clone())
        self.diag_raw = nn.Parameter(_inv_softplus(torch.diagonal(chol).clamp(min=1e-4)))
        self.n_features = d

    def scale_tril(self):
        """Cholesky factor, shape (d, d)."""
        return _scale_tril(self.tril_raw, self.diag_raw)

    def rsample(self, sample_shape):
        """Reparameterised draws of shape ``(*sample_shape, d)``."""
        eps = torch.randn(*sample_shape, self.n_features, device=self.loc.device,
                          dtype=self.loc.dtype)
        return self.loc + eps @ self.scale_tril().T

    def log_prob(self, x):
        """Log density of ``x`` of shape ``(..., d)``; returns shape ``(...)``."""
        L = self.scale_tril()
        diff = (x - self.loc).unsqueeze(-1)
        sol = torch.linalg.solve_triangular(L, diff.reshape(-1, self.n_features, 1)
                                            .transpose(0, 1).reshape(self.n_features, -1),
                                            upper=False)
        maha = (sol**2).sum(0).reshape(x.shape[:-1])
        logdet = torch.log(torch.diagonal(L)).sum()
        return -0.5 * maha - logdet - 0.5 * self.n_features * math.log(2 * math.pi)

    def forward(self, x):
        return self.log_prob(x)

    def distribution(self):
        """An equivalent, detached ``MultivariateNormal``."""
        return torch.distributions.MultivariateNormal(self.loc.detach().clone(),
                                                      scale_tril=self.scale_tril().detach())


class MixtureProposal(nn.Module):
    """Equal-weight mixture of full-covariance Gaussians.

    The weights stay fixed (``1/n_components``) so that sampling ``component ~ Categorical``
    then ``x = loc_c + L_c eps`` is a valid reparameterisation: the component draw does not
    depend on the trainable parameters, so gradients of ``E_q[f(x)]`` are unbiased.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    n_components : int, default=4
        Number of components.
    generator : torch.Generator, default=None
        Draws the initial means ``loc_c ~ N(0, I)`` (unit covariances).
    """

    def __init__(self, n_features, n_components=4, generator=None):
        super().__init__()
        d, c = int(n_features), int(n_components)
        self.loc = nn.Parameter(torch.randn(c, d, generator=generator))
        self.tril_raw = nn.Parameter(torch.zeros(c, d, d))
        self.diag_raw = nn.Parameter(torch.full((c, d), float(_inv_softplus(torch.tensor(1.0)))))
        self.n_features, self.n_components = d, c

    def scale_tril(self):
        """Cholesky factors, shape (n_components, d, d)."""
        return _scale_tril(self.tril_raw, self.diag_raw)

    def rsample(self, sample_shape):
        """Reparameterised draws of shape ``(*sample_shape, d)``."""
        n = math.prod(sample_shape) if len(sample_shape) else 1
        comp = torch.randint(self.n_components, (n,), device=self.loc.device)
        eps = torch.randn(n, self.n_features, 1, device=self.loc.device, dtype=self.loc.dtype)
        x = self.loc[comp] + (self.scale_tril()[comp] @ eps).squeeze(-1)
        return x.reshape(*sample_shape, self.n_features)

    def log_prob(self, x):
        """Log density of ``x`` of shape ``(..., d)``; returns shape ``(...)``."""
        L = self.scale_tril()                                        # (c, d, d)
        flat = x.reshape(-1, 1, self.n_features) - self.loc          # (n, c, d)
        sol = torch.linalg.solve_triangular(L.unsqueeze(0).expand(flat.shape[0], -1, -1, -1),
                                            flat.unsqueeze(-1), upper=False).squeeze(-1)
        maha = (sol**2).sum(-1)                                      # (n, c)
        logdet = torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
        comp = -0.5 * maha - logdet - 0.5 * self.n_features * math.log(2 * math.pi)
        out = torch.logsumexp(comp, dim=-1) - math.log(self.n_components)
        return out.reshape(x.shape[:-1])

    def forward(self, x):
        return self.log_prob(x)

    def distribution(self):
        """An equivalent, detached ``MixtureSameFamily`` of ``MultivariateNormal``."""
        mix = torch.distributions.Categorical(logits=torch.zeros(self.n_components,
                                                                 device=self.loc.device))
        comp = torch.distributions.MultivariateNormal(self.loc.detach().clone(),
                                                      scale_tril=self.scale_tril().detach())
        return torch.distributions.MixtureSameFamily(mix, comp)
