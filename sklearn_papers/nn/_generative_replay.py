"""Pieces of variational generative experience replay (Farquhar & Gal 2018).

* :class:`MeanFieldLinear` / :class:`ReplayClassifierModule`: the classifier, either a plain
  MLP or a mean-field Gaussian (Bayes-by-backprop) one whose prior can be reset to its
  current posterior (the prior-focused half of the paper's objective, as in variational
  continual learning). Its output layer grows when new classes arrive.
* :class:`ClassVAE`, :class:`ClassGAN`: small generative models of *one class of one task*
  (the paper keeps one GAN per class per task); :class:`GeneratorNet` fits one of them
  through skorch, so every generator that exists has been trained.

Everything works on standardised inputs; the estimator scales in and out. No scikit-learn.
"""

import itertools
import math

import torch
from skorch import NeuralNet
from torch import nn

__all__ = ["ClassGAN", "ClassVAE", "GeneratorNet", "MeanFieldLinear", "ReplayClassifierModule",
           "generator_step"]


class MeanFieldLinear(nn.Module):
    """Linear layer with a factorised Gaussian posterior over weights and biases.

    ``q(w) = N(mu, exp(logvar))`` per entry, prior ``p(w) = N(prior_mu, exp(prior_logvar))``
    (buffers; initially ``N(0, prior_std^2)``). In training mode the output is sampled with
    the local reparameterisation trick (Kingma et al. 2015) from torch's RNG; in evaluation
    mode it is the mean ``x mu_W^T + mu_b``.

    Parameters
    ----------
    in_features, out_features : int
    prior_std : float, default=1.0
        Standard deviation of the initial prior.
    init_logvar : float, default=-9.0
        Initial posterior log-variance (std ~0.011), small as in variational continual
        learning, so that training starts close to a deterministic net.
    """

    def __init__(self, in_features, out_features, prior_std=1.0, init_logvar=-9.0):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.prior_std, self.init_logvar = float(prior_std), float(init_logvar)
        ref = nn.Linear(in_features, out_features)  # the usual initialisation of the means
        self.weight_mu = nn.Parameter(ref.weight.detach().clone())
        self.bias_mu = nn.Parameter(ref.bias.detach().clone())
        self.weight_logvar = nn.Parameter(torch.full_like(self.weight_mu, self.init_logvar))
        self.bias_logvar = nn.Parameter(torch.full_like(self.bias_mu, self.init_logvar))
        prior_logvar = 2 * math.log(self.prior_std)
        self.register_buffer("prior_weight_mu", torch.zeros_like(self.weight_mu))
        self.register_buffer("prior_bias_mu", torch.zeros_like(self.bias_mu))
        self.register_buffer("prior_weight_logvar", torch.full_like(self.weight_mu, prior_logvar))
        self.register_buffer("prior_bias_logvar", torch.full_like(self.bias_mu, prior_logvar))

    def forward(self, x):
        mean = x @ self.weight_mu.T + self.bias_mu
        if not self.training:
            return mean
        var = (x * x) @ self.weight_logvar.exp().T + self.bias_logvar.exp()
        return mean + var.sqrt() * torch.randn_like(mean)

    def kl(self):
        """``KL(q || p)`` summed over every weight and bias (a scalar tensor)."""
        total = 0.0
        for name in ("weight", "bias"):
            mu, logvar = getattr(self, f"{name}_mu"), getattr(self, f"{name}_logvar")
            pmu, plogvar = (getattr(self, f"prior_{name}_mu"),
                            getattr(self, f"prior_{name}_logvar"))
            total = total + 0.5 * (plogvar - logvar + (logvar.exp() + (mu - pmu) ** 2)
                                   / plogvar.exp() - 1).sum()
        return total

    @torch.no_grad()
    def posterior_to_prior(self):
        """Make the current posterior the prior of the next task."""
        for name in ("weight", "bias"):
            getattr(self, f"prior_{name}_mu").copy_(getattr(self, f"{name}_mu"))
            getattr(self, f"prior_{name}_logvar").copy_(getattr(self, f"{name}_logvar"))

    def grow(self, n_outputs):
        """Return a copy with ``n_outputs`` output units; the new units get the usual mean
        initialisation, the initial log-variance, and the initial prior."""
        n_old = self.out_features
        new = MeanFieldLinear(self.in_features, n_outputs, self.prior_std, self.init_logvar)
        new = new.to(self.weight_mu.device).train(self.training)
        with torch.no_grad():
            for name in ("weight_mu", "bias_mu", "weight_logvar", "bias_logvar",
                         "prior_weight_mu", "prior_bias_mu", "prior_weight_logvar",
                         "prior_bias_logvar"):
                getattr(new, name)[:n_old] = getattr(self, name)
        return new


class ReplayClassifierModule(nn.Module):
    """MLP classifier on standardised inputs, plain or mean-field Gaussian.

    Parameters
    ----------
    n_features : int
    hidden_layer_sizes : tuple of int
    n_outputs : int
        Initial number of classes (grows with :meth:`grow`).
    bayesian : bool, default=False
        Mean-field Gaussian layers (:class:`MeanFieldLinear`) instead of ``nn.Linear``.
    prior_std : float, default=1.0
        Initial prior std of the Bayesian layers.
    mean, std : array-like of shape (n_features,), default=None
        Input standardisation buffers.

    Notes
    -----
    ``forward(X)`` maps ``(B, n_features)`` float32 to ``(B, n_outputs)`` logits.
    ``penalty()`` is ``kl_scale * KL(q || p)`` for the Bayesian net (``kl_scale`` is set by
    the estimator to one over the number of training rows) and 0 otherwise.
    """

    def __init__(self, n_features, hidden_layer_sizes, n_outputs, *, bayesian=False,
                 prior_std=1.0, mean=None, std=None):
        super().__init__()
        self.bayesian = bool(bayesian)
        self.prior_std = float(prior_std)
        mean = torch.zeros(n_features) if mean is None else torch.as_tensor(mean)
        std = torch.ones(n_features) if std is None else torch.as_tensor(std)
        self.register_buffer("mean", mean.detach().clone().float())
        self.register_buffer("std", std.detach().clone().float())
        sizes = [int(n_features), *map(int, hidden_layer_sizes), int(n_outputs)]
        self.layers = nn.ModuleList(self._linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.kl_scale = 0.0

    def _linear(self, a, b):
        return MeanFieldLinear(a, b, self.prior_std) if self.bayesian else nn.Linear(a, b)

    @property
    def n_outputs(self):
        """Current number of output units."""
        return self.layers[-1].out_features

    def grow(self, n_outputs):
        """Widen the output layer to ``n_outputs`` units, keeping the existing ones."""
        from sklearn_papers.nn._progressive import grow_linear

        last = self.layers[-1]
        self.layers[-1] = last.grow(n_outputs) if self.bayesian else grow_linear(last, n_outputs)

    def forward(self, X, sample_weight=None):
        h = (X - self.mean) / self.std
        for layer in self.layers[:-1]:
            h = torch.relu(layer(h))
        return self.layers[-1](h)

    def kl(self):
        """Total ``KL(q || p)`` of the Bayesian layers (0 for a plain net)."""
        if not self.bayesian:
            return torch.zeros(())
        return sum(layer.kl() for layer in self.layers)

    def penalty(self):
        """``kl_scale * KL(q || p)`` (0 for a plain net)."""
        if not self.bayesian or self.kl_scale == 0:
            return 0.0
        return self.kl_scale * self.kl()

    def posterior_to_prior(self):
        """Prior of the next task := current posterior (no-op for a plain net)."""
        if self.bayesian:
            for layer in self.layers:
                layer.posterior_to_prior()


class ClassVAE(nn.Module):
    """VAE of one class: Gaussian encoder, Gaussian decoder with a learned variance per
    feature (Kingma & Welling 2014).

    Parameters
    ----------
    n_features : int
    n_latent : int, default=8
    hidden : int, default=64

    Notes
    -----
    ``loss(x)`` returns the per-row negative ELBO ``(B,)`` (up to the constant
    ``n_features/2 log 2 pi``); ``sample(n, generator)`` decodes ``z ~ N(0, I)`` to the
    decoder mean ``(n, n_features)``.
    """

    def __init__(self, n_features, n_latent=8, hidden=64):
        super().__init__()
        self.n_latent = int(n_latent)
        self.encoder = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * n_latent))
        self.decoder = nn.Sequential(nn.Linear(n_latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, n_features))
        self.log_var = nn.Parameter(torch.zeros(n_features))

    def loss(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        z = mu + (0.5 * logvar).exp() * torch.randn_like(mu)
        x_hat = self.decoder(z)
        nll = 0.5 * (((x - x_hat) ** 2) / self.log_var.exp() + self.log_var).sum(dim=1)
        kl = 0.5 * (mu ** 2 + logvar.exp() - 1 - logvar).sum(dim=1)
        return nll + kl

    @torch.no_grad()
    def sample(self, n, generator=None):
        z = torch.randn(n, self.n_latent, generator=generator,
                        device=self.log_var.device, dtype=self.log_var.dtype)
        return self.decoder(z)


class ClassGAN(nn.Module):
    """GAN of one class (Goodfellow et al. 2014), non-saturating generator loss.

    Parameters
    ----------
    n_features : int
    n_latent : int, default=8
    hidden : int, default=64

    Notes
    -----
    ``sample(n, generator)`` maps ``z ~ N(0, I)`` through the generator to
    ``(n, n_features)``.
    """

    def __init__(self, n_features, n_latent=8, hidden=64):
        super().__init__()
        self.n_latent = int(n_latent)
        self.generator = nn.Sequential(nn.Linear(n_latent, hidden), nn.ReLU(),
                                       nn.Linear(hidden, hidden), nn.ReLU(),
                                       nn.Linear(hidden, n_features))
        self.discriminator = nn.Sequential(nn.Linear(n_features, hidden), nn.LeakyReLU(0.2),
                                           nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                           nn.Linear(hidden, 1))

    @torch.no_grad()
    def sample(self, n, generator=None):
        weight = self.generator[0].weight
        z = torch.randn(n, self.n_latent, generator=generator, device=weight.device,
                        dtype=weight.dtype)
        return self.generator(z)


def generator_step(model, optimizer, optimizer_discriminator, xb, wb):
    """One training step of a :class:`ClassVAE` or :class:`ClassGAN` on a batch of rows.

    VAE: one Adam step on the weighted negative ELBO ``mean_b(w_b * loss_b)``. GAN: one
    step of the discriminator (weighted loss on the real rows, plain on the fakes), then
    one of the generator (non-saturating loss); the latent draws come from torch's RNG.

    Parameters
    ----------
    model : ClassVAE or ClassGAN
    optimizer : torch.optim.Optimizer
        Of the VAE's parameters, or of the GAN's generator.
    optimizer_discriminator : torch.optim.Optimizer or None
        Of the GAN's discriminator (None for a VAE).
    xb : torch.Tensor of shape (B, n_features)
        Standardised rows.
    wb : torch.Tensor of shape (B,)
        Their weights.

    Returns
    -------
    loss : torch.Tensor of shape ()
        Detached: the VAE's loss, or the GAN's discriminator loss.
    """
    if isinstance(model, ClassGAN):
        bce = nn.functional.binary_cross_entropy_with_logits
        fake = model.generator(torch.randn(len(xb), model.n_latent, device=xb.device))
        real_logit = model.discriminator(xb).squeeze(1)
        fake_logit = model.discriminator(fake.detach()).squeeze(1)
        loss_d = ((wb * bce(real_logit, torch.ones_like(real_logit), reduction="none")).mean()
                  + bce(fake_logit, torch.zeros_like(fake_logit)))
        optimizer_discriminator.zero_grad()
        loss_d.backward()
        optimizer_discriminator.step()
        gen_logit = model.discriminator(fake).squeeze(1)
        loss_g = bce(gen_logit, torch.ones_like(gen_logit))
        optimizer.zero_grad()
        loss_g.backward()
        optimizer.step()
        return loss_d.detach()
    loss = (wb * model.loss(xb)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


class _StepBudget:
    """The training batches of a :class:`GeneratorNet`'s loader, each pass cut where the
    net reaches ``n_steps`` (skorch iterates one loader object over every epoch)."""

    def __init__(self, loader, net):
        self.loader, self.net = loader, net

    def __iter__(self):
        left = max(int(self.net.n_steps) - self.net.steps_done_, 0)
        return itertools.islice(iter(self.loader), left)

    def __len__(self):
        return len(self.loader)


class GeneratorNet(NeuralNet):
    """skorch net fitting a :class:`ClassVAE` or :class:`ClassGAN` to the rows of one class
    for ``n_steps`` optimiser steps (:func:`generator_step`).

    Customised through skorch's documented override points: ``initialize_optimizer``
    builds the GAN's second optimiser, ``optimizer_discriminator_`` (same class and
    settings; None for a VAE), ``train_step`` runs :func:`generator_step`, and
    ``get_iterator`` ends the last epoch at the ``n_steps``-th step. ``X`` is a dict with
    ``"X"`` (standardised rows) and optionally ``"sample_weight"`` (default: ones). An
    epoch is a pass over the rows (batches of :class:`~sklearn_papers.nn._skorch.PassBatchLoader`); set
    ``max_epochs`` to ``ceil(n_steps / batches per pass)``.

    Parameters
    ----------
    *args, **kwargs
        As for ``skorch.NeuralNet``.
    n_steps : int
        Optimiser steps (for the GAN: steps of each player).
    """

    def __init__(self, *args, n_steps, **kwargs):
        super().__init__(*args, **kwargs)
        self.n_steps = n_steps

    def initialize_optimizer(self, *args, **kwargs):
        gan = isinstance(self.module_, ClassGAN)
        named = (self.module_.generator if gan else self.module_).named_parameters()
        pgroups, kw = self.get_params_for_optimizer("optimizer", named)
        self.optimizer_ = self.optimizer(*pgroups, **kw)
        self.optimizer_discriminator_ = None
        if gan:
            named = self.module_.discriminator.named_parameters()
            pgroups, kw = self.get_params_for_optimizer("optimizer", named)
            self.optimizer_discriminator_ = self.optimizer(*pgroups, **kw)
        self.steps_done_ = 0
        return self

    def get_iterator(self, dataset, training=False):
        loader = super().get_iterator(dataset, training=training)
        return _StepBudget(loader, self) if training else loader

    def train_step(self, batch, **fit_params):
        Xi, _ = batch
        xb = Xi["X"].to(self.device)
        wb = Xi["sample_weight"].to(self.device) if "sample_weight" in Xi else \
            torch.ones(len(xb), device=xb.device)
        self._set_training(True)
        loss = generator_step(self.module_, self.optimizer_, self.optimizer_discriminator_,
                              xb, wb)
        self.steps_done_ += 1
        return {"loss": loss, "y_pred": None}
