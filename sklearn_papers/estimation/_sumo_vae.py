"""SUMOVAE: a latent-variable density estimator trained with SUMO (Luo et al. 2020)."""

import copy
import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    DensityMixin,
    TransformerMixin,
)

from sklearn_papers.estimation._keyed_random import (
    SALT_ESTIMATE,
    SALT_SAMPLE,
    SALT_TRUNCATION,
    keyed_normal,
    keyed_uniform53,
    mix,
    row_keys,
)
from sklearn_papers.estimation._objectives import _sumo_ragged, iwae, sumo_sampled
from sklearn_papers.estimation._truncation import _truncation_from_uniform, truncation_mean
from sklearn_papers.nn._skorch import (
    check_device,
    divergence_error,
    estimator_inference,
    seed_from_random_state,
    torch_fit,
)
from sklearn_papers.nn._vae_sumo import SUMOVAEModule
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_papers.utils._validation import check_sample_weight

__all__ = ["SUMOVAE"]

_GRAD_CLIP = 10.0
_EVAL_BATCH = 256
# The truncation distribution of training and scoring: the paper's (sumo_sampled's defaults).
_TRUNCATION = dict(kind="paper", alpha=80, decay=0.9, cap=100)


def _mean(values, weight):
    """Mean of ``values`` (n,), weighted by ``weight`` (n,) when given (0 if all 0)."""
    if weight is None:
        return values.mean()
    return (weight * values).sum() / weight.sum().clamp(min=1e-12)


def _check_unit_interval(X, why):
    """ValueError naming the first entry of ``X`` outside [0, 1], prefixed by ``why``."""
    bad = np.argwhere((X < 0) | (X > 1))
    if len(bad):
        i, j = bad[0]
        raise ValueError(f"{why}; X[{i}, {j}] = {float(X[i, j])!r}.")


class SUMOVAE(ClassNamePrefixFeaturesOutMixin, TransformerMixin, DensityMixin, BaseEstimator):
    """Variational autoencoder density model trained with the unbiased SUMO objective.

    Read more in the :doc:`user guide </user_guide/estimation>` and on the :doc:`paper page
    </papers/sumo>`.

    A latent-variable model ``p(x) = ∫ p(x | z) N(z; 0, I) dz`` with an amortised Gaussian
    encoder ``q(z | x)``. With ``objective="sumo"`` the decoder maximises SUMO, an unbiased
    estimate of ``log p(x)`` (Luo et al. 2020, eq. 8), and the encoder minimises SUMO's
    variance (section 3.2); each gets its own gradient from one forward pass. The encoder
    loss is ``mean_i (S_i - mean_j S_j)^2`` over a batch with the mean detached: since
    ``E[S_i] = log p(x_i)`` does not depend on the encoder, its expected gradient is
    ``(1 - 1/B)`` times that of the paper's ``E[S_i^2]``, without the noise term
    ``2 log p(x_i) grad S_i`` (``log p(x)`` is about -22 nats on binarised digits). ``objective="iwae"`` trains the same model on ``IWAE_k`` (Burda et al.
    2016), by default at the same expected number of samples, ``k = min_terms + E[K]``.

    Continuous ``X`` is standardised internally (the Jacobian is added back, so scores
    are densities of the original ``X``); binary ``X`` is modelled as Bernoulli.

    Parameters
    ----------
    n_components : int, default=8
        Latent dimension ``L``; also the width of :meth:`transform`'s output.
    hidden_size : int, default=128
        Width of the single tanh hidden layer of encoder and decoder.
    likelihood : {"auto", "bernoulli", "gaussian"}, default="auto"
        Decoder family; ``"auto"`` picks Bernoulli when every value of ``X`` is 0 or 1.
    objective : {"sumo", "iwae"}, default="sumo"
        Training objective.
    k : int, default=None
        Samples per data point of IWAE training; None means ``round(min_terms + E[K])``
        (6 with the defaults), the expected cost of SUMO. Ignored for ``"sumo"``.
    min_terms : int, default=1
        ``m``: samples SUMO always uses; truncation follows the paper's distribution.
    n_mc : int, default=10
        SUMO estimates averaged per row by :meth:`score_samples`.
    max_iter : int, default=50
        Training epochs.
    batch_size : int, default=64
        Rows per gradient step.
    lr : float, default=1e-3
        Adam learning rate (encoder and decoder).
    random_state : int, RandomState instance or None, default=None
        Seeds weights, shuffling, latent draws and truncation levels; torch's global RNG
        is left untouched.
    device : str or torch.device, default="cpu"
        Torch device.
    verbose : int, default=0
        Progress bar over epochs when > 0.

    Attributes
    ----------
    module_ : SUMOVAEModule
        The trained torch model (float32). It is trained by a loop of its own, not a
        skorch net (the encoder descends the estimator's variance while the decoder
        ascends its mean, two gradients rather than one loss's), so there is no ``net_``.
    likelihood_ : str
        Decoder family used.
    mean_ : ndarray of shape (`n_features_in_`,)
        Standardisation offset (zeros for Bernoulli).
    scale_ : ndarray of shape (`n_features_in_`,)
        Standardisation scale (ones for Bernoulli).
    loss_curve_ : list of float
        Mean training objective (``-SUMO`` or ``-IWAE_k``, nats per row) of each epoch.
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen in fit; only when ``X`` has string column names.

    See Also
    --------
    LogPartitionEstimator : SUMO for an energy function without data.

    References
    ----------
    .. [1] Luo, Y., Beatson, A., Norouzi, M., Zhu, J., Duvenaud, D., Adams, R. P. and
       Chen, R. T. Q. (2020). "SUMO: Unbiased Estimation of Log Marginal Probability for
       Latent Variable Models". ICLR 2020. :arxiv:`2004.00353`.
    .. [2] Burda, Y., Grosse, R. and Salakhutdinov, R. (2016). "Importance Weighted
       Autoencoders". ICLR 2016. :arxiv:`1509.00519`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.estimation import SUMOVAE
    >>> X = np.random.RandomState(0).normal(size=(200, 2))
    >>> vae = SUMOVAE(n_components=2, hidden_size=16, max_iter=5, random_state=0).fit(X)
    >>> vae.score_samples(X[:3]).shape, vae.transform(X[:3]).shape
    ((3,), (3, 2))
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "likelihood": [StrOptions({"auto", "bernoulli", "gaussian"})],
        "objective": [StrOptions({"sumo", "iwae"})],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "min_terms": [Interval(Integral, 1, None, closed="left")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "device": [str, torch.device],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=8, *, hidden_size=128, likelihood="auto", objective="sumo",
                 k=None, min_terms=1, n_mc=10, max_iter=50, batch_size=64, lr=1e-3,
                 random_state=None, device="cpu", verbose=0):
        self.n_components = n_components
        self.hidden_size = hidden_size
        self.likelihood = likelihood
        self.objective = objective
        self.k = k
        self.min_terms = min_terms
        self.n_mc = n_mc
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.lr = lr
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    def _k(self):
        if self.k is not None:
            return int(self.k)
        return int(round(self.min_terms + truncation_mean()))

    def _to_tensor(self, X):
        """Standardise and move to the device as float32, shape (n, d)."""
        Z = (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_
        return torch.as_tensor(Z, dtype=torch.float32, device=check_device(self.device))

    def _log_jacobian(self):
        return -float(np.sum(np.log(self.scale_)))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Train encoder and decoder on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; binary (0/1) for a Bernoulli decoder.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (None: all 1). Each batch maximises the
            weighted mean ``sum_b w_b S_b / sum_b w_b`` of the per-row estimates (SUMO
            or IWAE), the SUMO encoder minimises their weighted variance, and the
            Gaussian standardisation uses weighted moments, so a sample of weight 0 adds
            nothing to the objective (the batches are still formed with it, and it
            still draws random numbers).

        Returns
        -------
        self : SUMOVAE
            Fitted estimator.

        Raises
        ------
        ValueError
            If ``likelihood="bernoulli"`` and a value lies outside [0, 1] (its position
            is named), or the usual ``validate_data`` errors (NaN, inf, empty, sparse).
        FloatingPointError
            At the end of the first epoch whose training loss is not finite (the
            network diverged; lower ``lr``).
        """
        from tqdm.auto import tqdm

        X = validate_data(self, X, dtype=[np.float64, np.float32])
        sample_weight = check_sample_weight(sample_weight, X)
        binary = bool(np.isin(X, (0.0, 1.0)).all())
        self.likelihood_ = ("bernoulli" if binary else "gaussian") if self.likelihood == "auto" \
            else self.likelihood
        d = X.shape[1]
        if self.likelihood_ == "bernoulli":
            _check_unit_interval(X, "likelihood='bernoulli' needs X in [0, 1]")
            self.mean_, self.scale_ = np.zeros(d), np.ones(d)
        else:
            if sample_weight is None:
                self.mean_, scale = X.mean(axis=0), X.std(axis=0)
            else:
                self.mean_ = np.average(X, axis=0, weights=sample_weight)
                scale = np.sqrt(np.average((X - self.mean_) ** 2, axis=0,
                                           weights=sample_weight))
            self.scale_ = np.where(scale > 1e-12 * np.maximum(1.0, np.abs(self.mean_)), scale, 1.0)
        n, m = X.shape[0], int(self.min_terms)
        with torch_fit(self) as run:
            dev = run.device
            data = self._to_tensor(X)
            weight = None if sample_weight is None else torch.as_tensor(
                sample_weight, dtype=torch.float32, device=dev)
            generator = torch.Generator(device=dev).manual_seed(run.seed)
            module = SUMOVAEModule(d, self.n_components, self.hidden_size,
                                   self.likelihood_).to(dev)
            enc = list(module.encoder.parameters())
            dec = list(module.decoder.parameters())
            opt = torch.optim.Adam(enc + dec, lr=self.lr)
            self.loss_curve_ = []
            for epoch in tqdm(range(int(self.max_iter)), disable=self.verbose <= 0,
                          desc=f"SUMOVAE ({self.objective})", leave=False):
                perm = torch.randperm(n, generator=generator, device=dev)
                total = 0.0
                for start in range(0, n, int(self.batch_size)):
                    idx = perm[start:start + int(self.batch_size)]
                    xb = data[idx]
                    wb = None if weight is None else weight[idx]
                    opt.zero_grad()
                    if self.objective == "sumo":
                        est = sumo_sampled(lambda rows, xb=xb: module.log_weights_rows(xb, rows),
                                           xb.shape[0], min_terms=m, generator=generator,
                                           device=dev)
                        finite = torch.isfinite(est)
                        est, wb = est[finite], None if wb is None else wb[finite]
                        dec_grads = torch.autograd.grad(-_mean(est, wb), dec,
                                                        retain_graph=True)
                        centred = est - _mean(est, wb).detach()  # see the class docstring
                        enc_grads = torch.autograd.grad(_mean(centred**2, wb), enc)
                        for p, g in zip(dec + enc, dec_grads + enc_grads):
                            p.grad = g
                    else:
                        est = iwae(module.log_weights(xb, self._k()))
                        (-_mean(est, wb)).backward()
                    torch.nn.utils.clip_grad_norm_(enc, _GRAD_CLIP)
                    torch.nn.utils.clip_grad_norm_(dec, _GRAD_CLIP)
                    opt.step()
                    total += -float((est if wb is None else wb * est).detach().sum())
                self.loss_curve_.append(total / (n if weight is None else float(weight.sum())))
                if not math.isfinite(self.loss_curve_[-1]):
                    raise divergence_error(type(self).__name__, self.loss_curve_[-1],
                                           f"epoch {epoch + 1}", f"lower lr={self.lr!r}.")
        self.module_ = module.eval()
        self.n_iter_ = int(self.max_iter)
        self._n_features_out = int(self.n_components)
        return self

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32])

    def _sumo_scores(self, X, n_mc):
        """(n,) float64 SUMO estimates of log p(x), averaged over ``n_mc`` per row.

        Each row's random numbers (its ``n_mc`` truncation levels and all its latent noise)
        are hashes of the seed, the row's own values, the estimate index and the sample
        index (``_keyed_random``), and the model is evaluated in float64 (a copy of the
        float32 ``module_``). A row's score therefore does not depend on the other rows
        scored with it or on their order, up to float64 rounding of batched matmuls.
        """
        dev = check_device(self.device)
        module = copy.deepcopy(self.module_).to(torch.float64)
        data = torch.as_tensor((np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_,
                               dtype=torch.float64, device=dev)
        keys = row_keys(X, seed_from_random_state(self.random_state), device=dev)
        n, m, latent = data.shape[0], int(self.min_terms), int(self.n_components)
        est_index = torch.arange(n_mc, device=dev)
        out = np.empty(n)
        with torch.no_grad():
            for start in range(0, n, _EVAL_BATCH):
                xb = data[start:start + _EVAL_BATCH]
                # (b * n_mc,) states of the estimates; estimate e belongs to row e // n_mc.
                est_state = mix(keys[start:start + _EVAL_BATCH].unsqueeze(1), est_index,
                                SALT_ESTIMATE).reshape(-1)
                k = _truncation_from_uniform(keyed_uniform53(est_state, 0, SALT_TRUNCATION),
                                             **_TRUNCATION)
                first = torch.cumsum(m + k, 0) - (m + k)   # flat index of each estimate's 1st

                def log_weight_fn(rows, xb=xb, est_state=est_state, first=first):
                    pos = torch.arange(rows.shape[0], device=dev) - first[rows]
                    eps = keyed_normal(mix(est_state[rows], pos, SALT_SAMPLE), latent,
                                       dtype=torch.float64)
                    return module.log_weights_rows(xb, rows // n_mc, eps=eps)

                est, _ = _sumo_ragged(log_weight_fn, k, min_terms=m, **_TRUNCATION)
                out[start:start + xb.shape[0]] = est.reshape(-1, n_mc).mean(1).cpu().numpy()
        return out + self._log_jacobian()

    def _iwae_scores(self, X, k, batch_samples=200_000):
        """(n,) float64 ``IWAE_k`` lower bounds of log p(x) (for evaluation)."""
        data = self._to_tensor(X)
        n = data.shape[0]
        rows = max(1, batch_samples // int(k))
        out = np.empty(n)
        with estimator_inference(self, seeded=True), torch.no_grad():
            for start in range(0, n, rows):
                xb = data[start:start + rows]
                out[start:start + xb.shape[0]] = iwae(self.module_.log_weights(xb, k)).double().cpu()
        return out + self._log_jacobian()

    def score_samples(self, X):
        """Unbiased SUMO estimates of ``log p(x)``, averaged over ``n_mc`` draws per row.

        The random numbers of a row (truncation levels and latent noise) are derived from
        ``random_state`` and the row's own values only (a counter-based hash), so a row
        gets the same score whichever rows are scored with it and in whatever order; equal
        rows get equal scores. The model is evaluated in float64 for this.

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_features_in_`)
            Points.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Estimates of ``log p(x)`` in nats (float64), density of the original
            (unstandardised) ``X``; never NaN (``-inf`` only if every weight underflows).

        Raises
        ------
        ValueError
            If ``X`` has NaN/inf or the wrong width, or, for a Bernoulli model, values
            outside [0, 1] (the message names the first one).
        """
        X = self._check_X(X)
        if self.likelihood_ == "bernoulli":
            _check_unit_interval(X, "the model was fitted with likelihood='bernoulli', "
                                    "whose density is defined on [0, 1] only")
        return self._sumo_scores(X, int(self.n_mc))

    def score(self, X, y=None):
        """Mean of :meth:`score_samples` (higher is better, for model selection).

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_features_in_`)
            Points.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Mean SUMO estimate of ``log p(x)`` over the rows of ``X``, in nats.
        """
        return float(np.mean(self.score_samples(X)))

    def transform(self, X):
        """Posterior means ``E_q[z | x]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_features_in_`)
            Points.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Same float dtype as ``X``.
        """
        X = self._check_X(X)
        with torch.no_grad():
            mu = self.module_.encode(self._to_tensor(X))[0]
        return mu.cpu().numpy().astype(X.dtype, copy=False)

    def sample(self, n_samples=1):
        """Draw new points from the model.

        Parameters
        ----------
        n_samples : int, default=1
            Number of points. With an int ``random_state`` repeated calls give the same.

        Returns
        -------
        X : ndarray of shape (n_samples, `n_features_in_`)
            In the units of the training data (0/1 for Bernoulli).

        Raises
        ------
        ValueError
            If ``n_samples`` is not a positive int.
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}.")
        with estimator_inference(self, seeded=True), torch.no_grad():
            x = self.module_.sample(int(n_samples)).double().cpu().numpy()
        return x * self.scale_ + self.mean_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.non_deterministic = self.random_state is None
        return tags
