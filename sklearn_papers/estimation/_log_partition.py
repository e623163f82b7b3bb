"""LogPartitionEstimator: ELBO, IWAE or SUMO estimates of log Z for an energy function."""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, DensityMixin

from sklearn_papers.estimation._objectives import elbo, iwae, sumo_sampled
from sklearn_papers.nn._skorch import check_device, seed_from_random_state, torch_seeded
from sklearn_papers.nn._sumo import GaussianProposal, MixtureProposal
from sklearn_papers.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = ["LogPartitionEstimator"]

_TUNE_BATCH = 256      # SUMO estimates per proposal-tuning step
_CHUNK = 1 << 15       # estimates per chunk when estimating (bounds memory)
_GRAD_CLIP = 10.0      # the second moment of SUMO is heavy-tailed; clip its gradients


class _FixedProposal:
    """A user ``torch.distributions.Distribution`` used as given (no tuning)."""

    def __init__(self, dist):
        self.dist = dist

    def rsample(self, sample_shape):
        if self.dist.has_rsample:
            return self.dist.rsample(sample_shape)
        return self.dist.sample(sample_shape)

    def log_prob(self, x):
        return self.dist.log_prob(x)

    def distribution(self):
        return self.dist

    def parameters(self):
        return iter(())


def _as_vector_distribution(dist):
    """Make a distribution's event shape ``(d,)``; returns ``(dist, d)``."""
    if len(dist.event_shape) == 0 and len(dist.batch_shape) == 1:
        dist = torch.distributions.Independent(dist, 1)
    if len(dist.event_shape) != 1 or len(dist.batch_shape) != 0:
        raise ValueError(
            "proposal must be a distribution over vectors (event_shape (d,), empty "
            f"batch_shape), got event_shape={tuple(dist.event_shape)}, "
            f"batch_shape={tuple(dist.batch_shape)}."
        )
    return dist, int(dist.event_shape[0])


class LogPartitionEstimator(DensityMixin, BaseEstimator):
    """Estimate ``log Z = log ∫ exp(-U(x)) dx`` with ELBO, IWAE or SUMO importance sampling.

    Draws ``x ~ q`` from a proposal and forms log-weights ``log w = -U(x) - log q(x)``. The ELBO
    (mean of ``log w``) and ``IWAE_k = log mean_k w`` are lower bounds in expectation; SUMO
    (Luo et al. 2020, eq. 8) randomly truncates the telescoping series
    ``IWAE_m + sum_j Delta_{m+j-1} / P(K >= j)`` and is unbiased for ``log Z``. When
    ``fit_proposal`` the proposal is first tuned by minimising the second moment ``E[SUMO^2]``
    with reparameterised gradients, which equals minimising SUMO's variance because
    ``E[SUMO] = log Z`` does not depend on ``q`` (the paper's encoder objective, section 3.2).

    Parameters
    ----------
    energy : callable
        ``energy(x) -> u``: maps a float32 tensor of shape ``(n, d)`` to a tensor of shape
        ``(n,)`` with ``U(x)`` (``+inf`` for zero density is allowed, NaN is not). Must be
        made of differentiable torch operations when ``fit_proposal=True``. Example:
        ``lambda x: 0.5 * (x**2).sum(1)`` (``Z = (2 pi)^(d/2)``).
    proposal : {"gaussian", "mixture"} or torch.distributions.Distribution, default="gaussian"
        ``"gaussian"``: full-covariance Gaussian started at ``N(0, I)``. ``"mixture"``: equal
        weight mixture of 4 full-covariance Gaussians, means started at ``N(0, I)`` draws.
        A distribution (with ``rsample``/``sample`` and ``log_prob``, event shape ``(d,)``) is
        used as given when ``fit_proposal=False``; otherwise it is the starting point of a
        full-covariance Gaussian matched to its mean and covariance (exactly for a
        ``MultivariateNormal``, else from 4096 draws).
    method : {"sumo", "iwae", "elbo"}, default="sumo"
        Estimator reported in ``log_partition_``.
    k : int, default=5
        Samples per estimate for ``method="iwae"``; ignored otherwise (``"elbo"`` uses one
        sample per estimate, ``"sumo"`` ``min_terms + K``).
    n_estimates : int, default=10000
        Number of independent estimates averaged into ``log_partition_``.
    min_terms : int, default=1
        ``m``, the samples SUMO always uses (``IWAE_m`` is the base of its series); the
        truncation level ``K`` follows the paper's distribution (``P(K >= j) = 1/j`` up to
        80, then geometric with ratio 0.9; ``E[K] = 5.08``).
    fit_proposal : bool, default=True
        Tune the proposal by minimising ``E[SUMO^2]`` before estimating.
    max_iter : int, default=300
        Adam steps of proposal tuning, 256 SUMO estimates per step.
    lr : float, default=0.02
        Adam learning rate of proposal tuning.
    n_features : int, default=None
        Dimension ``d`` for the string proposals (required with them); read from the
        distribution otherwise.
    random_state : int, RandomState instance or None, default=None
        Seeds every draw (torch's global RNG is left untouched).
    device : str or torch.device, default="cpu"
        Torch device of the proposal and samples; ``energy`` must accept tensors on it.
    verbose : int, default=0
        Progress bar during tuning when > 0.

    Attributes
    ----------
    log_partition_ : float
        Mean of the ``n_estimates`` estimates of ``log Z``.
    log_partition_stderr_ : float
        Standard error of that mean (sample std / sqrt(n_estimates)); for SUMO, whose
        estimates are heavy-tailed, treat it as indicative.
    estimates_ : ndarray of shape (n_estimates,)
        The individual estimates (float64).
    proposal_ : torch.distributions.Distribution
        The (tuned) proposal, detached.
    variance_ : dict
        ``{"before": v0, "after": v1}``: sample variance of one estimate of ``method``
        with the initial and the final proposal (equal when ``fit_proposal=False``).
    loss_curve_ : list of float
        Mean ``SUMO^2`` of each tuning step (empty without tuning).
    n_iter_ : int
        Tuning steps run.
    n_features_in_ : int
        Dimension ``d`` of the energy's domain.

    See Also
    --------
    SUMOVAE : SUMO-trained latent-variable density model for data.
    sklearn_papers.estimation.sumo : The estimator as a tensor function.

    References
    ----------
    .. [1] Luo, Y., Beatson, A., Norouzi, M., Zhu, J., Duvenaud, D., Adams, R. P. and
       Chen, R. T. Q. (2020). "SUMO: Unbiased Estimation of Log Marginal Probability for
       Latent Variable Models". ICLR 2020. :arxiv:`2004.00353`.
    .. [2] Burda, Y., Grosse, R. and Salakhutdinov, R. (2016). "Importance Weighted
       Autoencoders". ICLR 2016. :arxiv:`1509.00519`.

    Examples
    --------
    >>> from sklearn_papers.estimation import LogPartitionEstimator
    >>> est = LogPartitionEstimator(lambda x: 0.5 * (x**2).sum(1), n_features=2,
    ...                             max_iter=20, n_estimates=2000, random_state=0).fit()
    >>> abs(est.log_partition_ - 1.8379) < 4 * est.log_partition_stderr_ + 0.01
    True
    """

    _parameter_constraints = {
        "energy": [callable],
        "proposal": [StrOptions({"gaussian", "mixture"}), HasMethods(["log_prob", "sample"])],
        "method": [StrOptions({"sumo", "iwae", "elbo"})],
        "k": [Interval(Integral, 1, None, closed="left")],
        "n_estimates": [Interval(Integral, 2, None, closed="left")],
        "min_terms": [Interval(Integral, 1, None, closed="left")],
        "fit_proposal": ["boolean"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "n_features": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "device": [str, torch.device],
        "verbose": ["verbose"],
    }

    def __init__(self, energy, *, proposal="gaussian", method="sumo", k=5, n_estimates=10000,
                 min_terms=1, fit_proposal=True, max_iter=300, lr=0.02, n_features=None,
                 random_state=None, device="cpu", verbose=0):
        self.energy = energy
        self.proposal = proposal
        self.method = method
        self.k = k
        self.n_estimates = n_estimates
        self.min_terms = min_terms
        self.fit_proposal = fit_proposal
        self.max_iter = max_iter
        self.lr = lr
        self.n_features = n_features
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    # ------------------------------------------------------------------ building blocks
    def _make_proposal(self, dev, generator):
        if isinstance(self.proposal, str):
            if self.n_features is None:
                raise ValueError(
                    f"proposal={self.proposal!r} needs n_features (the dimension of x)."
                )
            d = int(self.n_features)
            if self.proposal == "gaussian":
                return GaussianProposal(d).to(dev), d
            return MixtureProposal(d, n_components=4, generator=generator).to(dev), d
        dist, d = _as_vector_distribution(self.proposal)
        if self.n_features is not None and int(self.n_features) != d:
            raise ValueError(f"n_features={self.n_features} but the proposal has dimension {d}.")
        if not self.fit_proposal:
            return _FixedProposal(dist), d
        if isinstance(dist, torch.distributions.MultivariateNormal):
            loc, cov = dist.mean, dist.covariance_matrix
        else:
            draws = dist.sample((4096,)).reshape(4096, d).to(torch.float32)
            loc, cov = draws.mean(0), torch.cov(draws.T).reshape(d, d) + 1e-6 * torch.eye(d)
        return GaussianProposal(d, loc=loc.detach().cpu(), covariance=cov.detach().cpu()).to(
            dev), d

    def _energy(self, x, *, need_grad=False):
        """Evaluate and check the energy on ``x`` of shape (n, d); returns shape (n,)."""
        u = self.energy(x)
        if not isinstance(u, torch.Tensor):
            u = torch.as_tensor(np.asarray(u), device=x.device)
        if tuple(u.shape) != (x.shape[0],):
            raise ValueError(
                f"energy must map a tensor of shape (n, d) = {tuple(x.shape)} to shape "
                f"(n,) = ({x.shape[0]},), got shape {tuple(u.shape)}."
            )
        if not torch.is_floating_point(u):
            u = u.to(x.dtype)
        nan = torch.isnan(u)
        if nan.any():
            i = int(torch.nonzero(nan)[0])
            raise ValueError(
                f"energy returned NaN at sample {i}, x = {x[i].detach().cpu().tolist()}; "
                "U(x) must be a number or +inf (zero density)."
            )
        if need_grad and not u.requires_grad:
            raise ValueError(
                "energy(x) is not differentiable with respect to x (no autograd graph); "
                "fit_proposal=True needs an energy written with torch operations, or use "
                "fit_proposal=False."
            )
        return u

    def _log_weights(self, q, shape, *, need_grad=False):
        """Log-weights of shape ``shape`` from fresh draws of ``q``."""
        x = q.rsample(shape)
        flat = x.reshape(-1, x.shape[-1])
        u = self._energy(flat, need_grad=need_grad).reshape(shape)
        return -u - q.log_prob(x).reshape(shape)

    def _estimates(self, q, n, generator, dev, *, need_grad=False):
        """``n`` estimates of ``self.method``, shape (n,)."""
        if self.method == "elbo":
            return elbo(self._log_weights(q, (n, 1), need_grad=need_grad))
        if self.method == "iwae":
            return iwae(self._log_weights(q, (n, int(self.k)), need_grad=need_grad))
        return self._sumo(q, n, generator, dev, need_grad=need_grad)

    def _sumo(self, q, n, generator, dev, *, need_grad=False):
        return sumo_sampled(
            lambda rows: self._log_weights(q, (rows.shape[0],), need_grad=need_grad),
            n, min_terms=int(self.min_terms), generator=generator, device=dev,
        )

    def _chunked(self, q, n, generator, dev):
        out = []
        with torch.no_grad():
            for start in range(0, n, _CHUNK):
                out.append(self._estimates(q, min(_CHUNK, n - start), generator, dev)
                           .double().cpu())
        return torch.cat(out).numpy()

    # ------------------------------------------------------------------ public API
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Tune the proposal (if ``fit_proposal``) and estimate ``log Z``.

        Parameters
        ----------
        X : None
            Ignored: the target is defined by ``energy``, not by data.
        y : None
            Ignored.

        Returns
        -------
        self : LogPartitionEstimator
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``energy`` returns a wrong shape, NaN, or a non-differentiable output while
            tuning; if a string proposal has no ``n_features``.
        """
        from tqdm.auto import tqdm

        dev = check_device(self.device)
        seed = seed_from_random_state(self.random_state)
        n = int(self.n_estimates)
        with torch_seeded(seed, dev):
            generator = torch.Generator(device=dev).manual_seed(seed)
            cpu_gen = torch.Generator().manual_seed(seed)
            q, d = self._make_proposal(dev, cpu_gen)
            with torch.no_grad():
                self._energy(q.rsample((8,)))                       # shape / NaN check
            before = self._chunked(q, n, generator, dev)
            self.loss_curve_ = []
            self.n_iter_ = 0
            if self.fit_proposal and self.max_iter > 0:
                params = list(q.parameters())
                opt = torch.optim.Adam(params, lr=self.lr)
                for _ in tqdm(range(int(self.max_iter)), disable=self.verbose <= 0,
                              desc="tuning proposal (E[SUMO^2])", leave=False):
                    opt.zero_grad()
                    est = self._sumo(q, _TUNE_BATCH, generator, dev, need_grad=True)
                    finite = torch.isfinite(est)
                    loss = (est[finite] ** 2).mean()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(params, _GRAD_CLIP)
                    opt.step()
                    self.loss_curve_.append(float(loss.detach()))
                    self.n_iter_ += 1
                after = self._chunked(q, n, generator, dev)
            else:
                after = before
        self._q = q
        self.proposal_ = q.distribution()
        self.n_features_in_ = d
        self.estimates_ = after
        self.log_partition_ = float(np.mean(after))
        self.log_partition_stderr_ = float(np.std(after, ddof=1) / math.sqrt(n))
        self.variance_ = {"before": float(np.var(before, ddof=1)),
                          "after": float(np.var(after, ddof=1))}
        return self

    def score_samples(self, X):
        """Normalised log density ``-U(x) - log Z_hat`` of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_features_in_`)
            Points.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Log density in nats (float64) under ``exp(-U) / Z_hat`` with
            ``Z_hat = exp(log_partition_)``; ``-inf`` where ``U = +inf``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        dev = check_device(self.device)
        x = torch.as_tensor(X, dtype=torch.float32, device=dev)
        with torch.no_grad():
            u = self._energy(x)
        return -u.double().cpu().numpy() - self.log_partition_

    def score(self, X, y=None):
        """Mean normalised log density of ``X`` (see :meth:`score_samples`).

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_features_in_`)
            Points.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Mean of :meth:`score_samples` over the rows of ``X``, in nats.
        """
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples=1):
        """Draw from the (tuned) proposal ``q``, an approximation of ``exp(-U) / Z``.

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws. With an int ``random_state`` repeated calls return the same draws.

        Returns
        -------
        X : ndarray of shape (n_samples, `n_features_in_`)
            Draws from ``proposal_`` as float64 (only approximately distributed as
            ``exp(-U) / Z``; use importance weights to correct).

        Raises
        ------
        ValueError
            If ``n_samples`` is not a positive int.
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}.")
        dev = check_device(self.device)
        with torch_seeded(seed_from_random_state(self.random_state), dev), torch.no_grad():
            x = self.proposal_.sample((int(n_samples),))
        return x.reshape(int(n_samples), -1).double().cpu().numpy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.non_deterministic = self.random_state is None
        return tags
