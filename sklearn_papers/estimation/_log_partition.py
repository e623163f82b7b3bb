"""LogPartitionEstimator: ELBO, IWAE or SUMO estimates of log Z for an energy function."""

import math
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, DensityMixin

from sklearn_papers.estimation._objectives import _as_real_tensor, elbo, iwae, sumo_sampled
from sklearn_papers.nn._skorch import estimator_inference, torch_fit
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
_PARETO_K_MAX = 0.7    # PSIS reliability threshold of the weights' tail shape


def _variance(estimates):
    """Sample variance of the estimates; ``inf`` when any is infinite (worst possible)."""
    if not np.isfinite(estimates).all():
        return math.inf
    return float(np.var(estimates, ddof=1))


def _pareto_k(log_w):
    """Pareto shape ``k_hat`` of the upper tail of importance weights (PSIS diagnostic).

    Fits a generalised Pareto distribution to the ``M = ceil(min(n / 5, 3 sqrt(n)))``
    largest weights (exceedances over the next largest) with the profile-posterior
    method of Zhang and Stephens (2009) and its weak prior towards 0.5, as in Pareto
    smoothed importance sampling (Vehtari et al. 2024). ``k_hat < 0.5``: finite-variance
    weights; ``k_hat > 0.7``: so heavy-tailed that importance-sampling estimates and their
    standard errors are unreliable at any practical sample size. Works on log-weights
    (shifted by their maximum, so no overflow); ``-inf`` entries (zero weights) are
    dropped. Returns NaN when fewer than 5 tail weights exist.
    """
    lw = np.asarray(log_w, dtype=np.float64)
    lw = lw[np.isfinite(lw)]
    m = int(math.ceil(min(0.2 * lw.shape[0], 3.0 * math.sqrt(lw.shape[0]))))
    if m < 5:
        return math.nan
    lw = np.sort(lw - lw.max())
    x = np.exp(lw[-m:]) - math.exp(lw[-m - 1])          # ascending exceedances
    if not x[-1] > 0:
        return -math.inf                                 # all tail weights equal
    grid = 30 + int(math.sqrt(m))
    with np.errstate(all="ignore"):  # ties (e.g. float32 weights) can give 0/0: NaN below
        b = 1.0 - np.sqrt(grid / (np.arange(1, grid + 1) - 0.5))
        b = b / (3.0 * x[int(m / 4 + 0.5) - 1]) + 1.0 / x[-1]
        k = np.log1p(-b[:, None] * x).mean(axis=1)
        profile = m * (np.log(-b / k) - k - 1.0)
        top = profile.max()                               # posterior weights, no overflow
        post = np.exp(profile - top - np.log(np.exp(profile - top).sum()))
        keep = post >= 10 * np.finfo(float).eps
        b_post = np.sum(b[keep] * post[keep]) / post[keep].sum()
        k_post = np.log1p(-b_post * x).mean()
    k_hat = (m * k_post + 10 * 0.5) / (m + 10)
    return float(k_hat) if np.isfinite(k_hat) else math.nan


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

    Read more in the :doc:`user guide </user_guide/estimation>` and on the :doc:`paper page
    </papers/sumo>`.

    Draws ``x ~ q`` from a proposal and forms log-weights ``log w = -U(x) - log q(x)``. The ELBO
    (mean of ``log w``) and ``IWAE_k = log mean_k w`` are lower bounds in expectation; SUMO
    (Luo et al. 2020, eq. 8) randomly truncates the telescoping series
    ``IWAE_m + sum_j Delta_{m+j-1} / P(K >= j)`` and is unbiased for ``log Z``.

    When ``fit_proposal`` the proposal is first tuned by minimising SUMO's variance with
    reparameterised gradients (the paper's encoder objective, section 3.2: ``E[SUMO^2]``,
    whose gradient is the variance's because ``E[SUMO] = log Z`` does not depend on ``q``).
    Each step minimises the batch variance ``mean_i (S_i - mean(S).detach())^2`` of 256
    estimates: its expected gradient is ``(1 - 1/256)`` times that of ``E[SUMO^2]`` (the
    same direction), without the zero-mean term ``2 log Z grad S_i`` whose noise grows with
    ``|log Z|`` (see ``_tune``). Because a finite batch rarely sees SUMO's heavy tail, the
    tuning can still make ``q`` worse (e.g. lighter-tailed than the target, or away from an
    already exact start); the tuned proposal is therefore kept only if the sample variance
    of ``n_estimates`` fresh estimates of ``method`` is lower with it than with the initial
    proposal (a warning says when it is not), and ``log_partition_`` then comes from
    another ``n_estimates`` fresh estimates of the kept proposal (choosing on the same draws
    would bias the mean low). The tail of the kept proposal's importance weights is checked
    with the Pareto ``k_hat`` of PSIS (Vehtari et al. 2024); above 0.7 a warning says that
    the estimate and its standard error are unreliable.

    Parameters
    ----------
    energy : callable
        ``energy(x) -> u``: maps a float32 tensor of shape ``(n, d)`` to a tensor of shape
        ``(n,)`` with real ``U(x)`` (``+inf`` for zero density is allowed; NaN, ``-inf``
        (infinite density) and complex values are refused). Must be made of differentiable
        torch operations when ``fit_proposal=True``. Example:
        ``lambda x: 0.5 * (x**2).sum(1)`` (``Z = (2 pi)^(d/2)``). Where ``U = +inf`` on part
        of a Gaussian proposal's mass, estimates whose samples all fall there are infinite
        and ``fit`` raises; raise ``min_terms`` (or ``k``) or pass a proposal restricted to
        the support.
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
        Tune the proposal by minimising SUMO's variance before estimating (kept only if it
        lowers the measured variance, see above).
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
        The kept proposal (tuned, or the initial one when tuning did not help), detached.
    variance_ : dict
        Sample variance of one estimate of ``method``, each on ``n_estimates`` fresh
        estimates: ``"before"`` with the initial proposal, ``"tuned"`` with the proposal at
        the end of tuning, ``"after"`` of ``estimates_`` (the kept proposal). ``inf`` when
        some estimates were infinite. Without tuning all three come from the same draws.
    tuning_accepted_ : bool or None
        Whether the tuned proposal was kept (its variance was lower); None without tuning.
    tuned_proposal_ : torch.distributions.Distribution or None
        The proposal at the end of tuning, detached, whether kept or not (``proposal_``
        when ``tuning_accepted_``); None without tuning.
    pareto_k_ : float
        Pareto ``k_hat`` of the upper tail of ``n_estimates`` importance weights of the
        kept proposal (Vehtari et al. 2024): below 0.5 the weights have finite variance,
        above 0.7 (a warning) they are too heavy-tailed for reliable estimates; NaN if it
        cannot be fitted (e.g. many tied weights).
    loss_curve_ : list of float
        Batch variance of the SUMO estimates at each tuning step (NaN for a step with
        fewer than 2 finite estimates, which is skipped); empty without tuning.
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
    .. [3] Vehtari, A., Simpson, D., Gelman, A., Yao, Y. and Gabry, J. (2024). "Pareto
       Smoothed Importance Sampling". JMLR 25(72). :arxiv:`1507.02646`.

    Examples
    --------
    >>> import math
    >>> from sklearn_papers.estimation import LogPartitionEstimator
    >>> # exp(-|x - 1|^2) in 2-d: Z = pi; the proposal starts at N(0, I) and is tuned
    >>> est = LogPartitionEstimator(lambda x: ((x - 1.0)**2).sum(1), n_features=2,
    ...                             max_iter=50, n_estimates=2000, random_state=0).fit()
    >>> est.tuning_accepted_, est.variance_["tuned"] < est.variance_["before"]
    (True, True)
    >>> abs(est.log_partition_ - math.log(math.pi)) < 4 * est.log_partition_stderr_ + 0.01
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
        try:
            value = self.energy(x)
        except RuntimeError as err:
            if not (x.requires_grad and "requires grad" in str(err)):
                raise
            # e.g. an energy written with numpy calls x.numpy() on the autograd tensor
            raise ValueError(
                "energy(x) failed on a tensor that requires grad (proposal tuning "
                "differentiates through U(x)): fit_proposal=True needs an energy written "
                "with differentiable torch operations (not numpy), or use "
                f"fit_proposal=False. The energy raised: {err}"
            ) from err
        u = _as_real_tensor(value, "energy",
                            "a tensor (or array) of real numbers U(x) (the target density "
                            "is exp(-U(x)))", x.device, float_dtype=x.dtype)
        if tuple(u.shape) != (x.shape[0],):
            raise ValueError(
                f"energy must map a tensor of shape (n, d) = {tuple(x.shape)} to shape "
                f"(n,) = ({x.shape[0]},), got shape {tuple(u.shape)}."
            )
        low = float(u.detach().min()) if u.numel() else 0.0  # min propagates NaN
        if math.isnan(low):
            i = int(torch.nonzero(torch.isnan(u))[0])
            raise ValueError(
                f"energy returned NaN at sample {i}, x = {x[i].detach().cpu().tolist()}; "
                "U(x) must be a number or +inf (zero density)."
            )
        if low == -math.inf:
            i = int(torch.nonzero(torch.isneginf(u))[0])
            raise ValueError(
                f"energy returned -inf at sample {i}, x = {x[i].detach().cpu().tolist()}: "
                "an infinite density exp(-U(x)), for which no importance-sampling estimate "
                "of log Z is defined. U(x) must be a number or +inf (zero density)."
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
            If ``energy`` returns a wrong shape, NaN, ``-inf``, or a non-differentiable
            output while tuning; if a string proposal has no ``n_features``; if some of the
            final estimates are infinite (their samples fell where ``U = +inf``).
        TypeError
            If ``energy`` returns complex or non-numeric values.

        Warns
        -----
        UserWarning
            When tuning did not lower the variance (the initial proposal is kept), and
            when the kept proposal's importance weights are heavy-tailed
            (``pareto_k_ > 0.7``).
        """
        from tqdm.auto import tqdm

        n = int(self.n_estimates)
        with torch_fit(self) as run:
            dev, seed = run.device, run.seed
            generator = torch.Generator(device=dev).manual_seed(seed)
            cpu_gen = torch.Generator().manual_seed(seed)
            q, d = self._make_proposal(dev, cpu_gen)
            with torch.no_grad():
                self._energy(q.rsample((8,)))                       # shape / NaN check
            before = self._chunked(q, n, generator, dev)
            v_before = _variance(before)
            self.loss_curve_ = []
            self.n_iter_ = 0
            self.tuning_accepted_ = None
            self.tuned_proposal_ = None
            v_tuned = v_before
            after = before
            if self.fit_proposal and self.max_iter > 0:
                start = {k: v.detach().clone() for k, v in q.state_dict().items()}
                self._tune(q, generator, dev, tqdm)
                self.tuned_proposal_ = q.distribution()
                # Keep the tuned proposal only if it measurably helps: the variance of the
                # estimator on fresh draws, with the same budget as the initial one.
                tuned = self._chunked(q, n, generator, dev)
                v_tuned = _variance(tuned)
                self.tuning_accepted_ = bool(v_tuned < v_before)
                if not self.tuning_accepted_:
                    q.load_state_dict(start)
                # Fresh estimates from the kept proposal: reusing the draws the choice was
                # made on would favour sets with few large estimates (a downward bias).
                after = self._chunked(q, n, generator, dev)
            with torch.no_grad():
                pareto_k = _pareto_k(torch.cat([
                    self._log_weights(q, (min(_CHUNK, n - i),)).double().cpu()
                    for i in range(0, n, _CHUNK)]).numpy())
        self._check_finite(after)
        if self.tuning_accepted_ is False:
            warnings.warn(
                f"Proposal tuning did not lower the sample variance of the {self.method} "
                f"estimate ({n} fresh estimates each: {v_before:.4g} with the initial "
                f"proposal, {v_tuned:.4g} with the tuned one), so the initial proposal is "
                "kept. This happens when the start is already (nearly) exact, or when the "
                "tuning drove q's tails lighter than the target's; use fit_proposal=False "
                "to skip tuning, or another lr / max_iter / proposal.",
                UserWarning,
                stacklevel=3,
            )
        if pareto_k > _PARETO_K_MAX:
            warnings.warn(
                f"The importance weights exp(-U(x)) / q(x) of the proposal are heavy-tailed "
                f"(Pareto k_hat = {pareto_k:.2f} > {_PARETO_K_MAX} on {n} draws; Vehtari et "
                "al. 2024): the rare large weights that carry much of Z are barely sampled, "
                f"so log_partition_ = {float(np.mean(after)):.4g} and its standard error are "
                "unreliable (typically too low). Use a proposal closer to, and wider than, "
                "exp(-U) (or more tuning steps).",
                UserWarning,
                stacklevel=3,
            )
        self.pareto_k_ = pareto_k
        self._q = q
        self.proposal_ = q.distribution()
        self.n_features_in_ = d
        self.estimates_ = after
        self.log_partition_ = float(np.mean(after))
        self.log_partition_stderr_ = float(np.std(after, ddof=1) / math.sqrt(n))
        self.variance_ = {"before": v_before, "tuned": v_tuned,
                          "after": float(np.var(after, ddof=1))}
        return self

    def _tune(self, q, generator, dev, tqdm):
        """Adam on the batch variance of SUMO, ``mean_i (S_i - mean(S).detach())^2``.

        Its expected gradient is ``(1 - 1/B)`` times that of the paper's ``E[SUMO^2]``
        (section 3.2): ``E[S_i] = log Z`` for every ``q``, so ``grad E[S_j] = 0`` and the
        cross terms ``E[S_j grad S_i]`` (``j != i``, independent) vanish; only the ``j = i``
        term of the detached mean survives, ``(1/B) E[S_i grad S_i]``. The same direction,
        but without the ``2 log Z grad S_i`` term whose expectation is 0 and whose noise
        grows with ``|log Z|`` (it dominated the gradient once ``|log Z| >> std(SUMO)``).
        """
        params = list(q.parameters())
        opt = torch.optim.Adam(params, lr=self.lr)
        for _ in tqdm(range(int(self.max_iter)), disable=self.verbose <= 0,
                      desc="tuning proposal (Var[SUMO])", leave=False):
            opt.zero_grad()
            est = self._sumo(q, _TUNE_BATCH, generator, dev, need_grad=True)
            est = est[torch.isfinite(est)]
            self.n_iter_ += 1
            if est.shape[0] < 2:  # no variance to measure in this batch
                self.loss_curve_.append(math.nan)
                continue
            loss = ((est - est.mean().detach()) ** 2).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, _GRAD_CLIP)
            opt.step()
            self.loss_curve_.append(float(loss.detach()))

    def _check_finite(self, estimates):
        """ValueError explaining infinite estimates (zero-density regions of the energy)."""
        bad = ~np.isfinite(estimates)
        if not bad.any():
            return
        n_pos, n_neg = int(np.sum(estimates == np.inf)), int(np.sum(estimates == -np.inf))
        n = estimates.shape[0]
        if self.method == "sumo":
            m = int(self.min_terms)
            parts = []
            if n_pos:
                parts.append(f"{n_pos} are +inf (all of their first min_terms={m} samples fell "
                             "where the energy is +inf, so IWAE_m = -inf and a later term of "
                             "the series is infinite)")
            if n_neg:
                parts.append(f"{n_neg} are -inf (all of their min_terms + K samples fell "
                             "there)")
            why = " and ".join(parts)
            fix = "raise min_terms"
        elif self.method == "iwae":
            why = f"all k={int(self.k)} samples of each of them fell where the energy is +inf"
            fix = "raise k"
        else:
            why = ("their sample fell where the energy is +inf (the ELBO is -inf as soon as "
                   "q puts mass where exp(-U) = 0)")
            fix = "use method='iwae' or 'sumo'"
        raise ValueError(
            f"{int(bad.sum())} of {n} {self.method} estimates of log Z are infinite: {why}. "
            "Their mean would be infinite or NaN. The proposal puts mass where exp(-U) is "
            f"0; {fix}, or pass a proposal restricted to the support of exp(-U) with "
            "fit_proposal=False."
        )

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
        with estimator_inference(self) as dev, torch.no_grad():
            x = torch.as_tensor(X, dtype=torch.float32, device=dev)
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
        with estimator_inference(self, seeded=True), torch.no_grad():
            x = self.proposal_.sample((int(n_samples),))
        return x.reshape(int(n_samples), -1).double().cpu().numpy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.non_deterministic = self.random_state is None
        return tags
