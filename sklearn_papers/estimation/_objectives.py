"""ELBO, IWAE and SUMO estimates of ``log Z`` from log importance weights (batched torch).

All functions take log-weights ``log w = log p~(x) - log q(x)`` with ``x ~ q`` (for a
partition function ``p~ = exp(-U)``; for a latent-variable model ``log p(x, z) - log q(z | x)``)
and work on any leading batch shape; the last axis holds the samples of one estimate.

Numerical policy: every log-mean-exp goes through ``logsumexp`` /
``logcumsumexp`` (max subtracted first), and ``-inf`` log-weights (zero density) never
produce NaN: an estimate whose weights are all zero is ``-inf``.
"""

import math

import numpy as np
import torch

from sklearn_papers.estimation._truncation import (
    _check_int,
    sample_truncation,
    truncation_survival,
)

__all__ = ["elbo", "iwae", "iwae_cumulative", "sumo", "sumo_sampled"]


def _check_log_w(log_w, *, allow_posinf=False):
    """``log_w`` as a real floating tensor; raises on complex, empty, NaN and ``+inf``.

    NaN and ``+inf`` are found with one reduction (``max`` propagates NaN). With
    ``allow_posinf`` a ``+inf`` is let through (the caller checks where it is) and the
    second return value says whether there is one.
    """
    if not isinstance(log_w, torch.Tensor):
        arr = np.asarray(log_w)
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"log_w must hold real numbers, got an array of dtype {arr.dtype}."
            )
        log_w = torch.as_tensor(arr, dtype=torch.get_default_dtype())
    elif log_w.is_complex():
        raise TypeError(
            f"log_w must be a real tensor, got dtype {log_w.dtype}: log importance weights "
            "are real (log of a non-negative weight)."
        )
    elif not log_w.is_floating_point():
        log_w = log_w.to(torch.get_default_dtype())  # integer / bool log-weights
    if log_w.ndim < 1 or log_w.shape[-1] < 1:
        raise ValueError(
            f"log_w must have at least one sample on its last axis, got shape "
            f"{tuple(log_w.shape)}."
        )
    posinf = False
    if log_w.numel():
        hi = float(log_w.detach().max())
        if math.isnan(hi):
            idx = torch.nonzero(torch.isnan(log_w))[0].tolist()
            raise ValueError(f"log_w contains NaN (first at index {idx}).")
        posinf = hi == math.inf
        if posinf and not allow_posinf:
            _raise_posinf(log_w, "log_w")
    return (log_w, posinf) if allow_posinf else log_w


def _raise_posinf(log_w, what):
    idx = torch.nonzero(torch.isposinf(log_w.detach()))[0].tolist()
    raise ValueError(
        f"{what} contains +inf (first at index {idx}): an infinite importance weight "
        "(infinite target density, or a proposal density of 0 at a drawn point) makes the "
        "estimate undefined."
    )


def elbo(log_w):
    """Evidence lower bound: the mean of the log-weights over the last axis.

    ``E[elbo] = E_q[log p~(x) - log q(x)] <= log Z`` (Jensen); the gap is ``KL(q || p)``.

    Parameters
    ----------
    log_w : torch.Tensor of shape (..., k)
        Log importance weights, ``k`` samples per estimate.

    Returns
    -------
    estimate : torch.Tensor of shape (...,)
        Mean log-weight of each estimate, same dtype and device as ``log_w``; ``-inf`` if
        any of its weights is zero (``log w = -inf``), never NaN.

    Raises
    ------
    ValueError
        If ``log_w`` has no samples or contains NaN or ``+inf``.
    TypeError
        If ``log_w`` is complex.

    See Also
    --------
    iwae : The tighter importance-weighted bound.
    sumo : The unbiased estimator.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import elbo
    >>> elbo(torch.log(torch.tensor([[1.0, 4.0]]))).tolist()  # (log 1 + log 4) / 2
    [0.6931471824645996]
    """
    return _check_log_w(log_w).mean(dim=-1)


def iwae_cumulative(log_w):
    """All importance-weighted bounds ``IWAE_1`` to ``IWAE_k`` of one nested sample stream.

    ``IWAE_j = log((1/j) sum_{i <= j} w_i)`` (Burda et al. 2016; Luo et al. 2020, eq. 2),
    computed for every ``j`` at once with ``logcumsumexp`` (no loop over ``j``).

    Parameters
    ----------
    log_w : torch.Tensor of shape (..., k)
        Log importance weights in sampling order.

    Returns
    -------
    iwae : torch.Tensor of shape (..., k)
        ``iwae[..., j - 1] = IWAE_j``; ``-inf`` while all weights so far are zero.

    Raises
    ------
    ValueError
        If ``log_w`` has no samples or contains NaN or ``+inf``.
    TypeError
        If ``log_w`` is complex.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import iwae_cumulative
    >>> iwae_cumulative(torch.log(torch.tensor([1.0, 3.0]))).exp().tolist()
    [1.0, 2.0]
    """
    log_w = _check_log_w(log_w)
    k = log_w.shape[-1]
    counts = torch.arange(1, k + 1, device=log_w.device, dtype=log_w.dtype)
    return torch.logcumsumexp(log_w, dim=-1) - torch.log(counts)


def iwae(log_w):
    """Importance-weighted bound ``IWAE_k = log((1/k) sum_i w_i)`` over the last axis.

    ``E[IWAE_k] <= E[IWAE_{k+1}] <= log Z`` (Burda et al. 2016): biased low for finite ``k``.

    Parameters
    ----------
    log_w : torch.Tensor of shape (..., k)
        Log importance weights.

    Returns
    -------
    estimate : torch.Tensor of shape (...,)
        ``-inf`` where every weight is zero (never NaN).

    Raises
    ------
    ValueError
        If ``log_w`` has no samples or contains NaN or ``+inf``.
    TypeError
        If ``log_w`` is complex.

    See Also
    --------
    iwae_cumulative : Every ``IWAE_j`` of the same samples.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import iwae
    >>> iwae(torch.log(torch.tensor([[1.0, 3.0]]))).exp().tolist()
    [2.0]
    """
    log_w = _check_log_w(log_w)
    return torch.logsumexp(log_w, dim=-1) - math.log(log_w.shape[-1])


def sumo(log_w, n_terms, *, min_terms=1, kind="paper", alpha=80, decay=0.9, cap=100):
    """SUMO estimates from padded log-weights and their drawn truncation levels.

    For an estimate with truncation level ``K`` (Luo et al. 2020, eq. 8, with ``m`` minimum
    terms as in their section 3.3)::

        SUMO = IWAE_m + sum_{j=1..K} Delta_{m+j-1} / P(K >= j),
        Delta_i = IWAE_{i+1} - IWAE_i,

    which uses the first ``m + K`` log-weights of the estimate's row; entries after that are
    padding and are masked out (never read into the sum, so they may hold any number,
    ``+inf`` included; NaN is refused anywhere). ``E[SUMO] = lim_k E[IWAE_k] = log Z``
    (unbiased) when the series converges absolutely in expectation.

    Parameters
    ----------
    log_w : torch.Tensor of shape (..., L)
        Log importance weights, ``L >= min_terms + max(n_terms)``.
    n_terms : torch.Tensor of int, shape (...,)
        Drawn truncation levels ``K >= 1`` (see :func:`sample_truncation`).
    min_terms : int, default=1
        ``m``, the number of samples always used (``IWAE_m`` is the base of the series).
    kind : {"paper", "harmonic"}, default="paper"
        Truncation distribution the ``K`` were drawn from; it sets the re-weighting
        ``1 / P(K >= j)`` of term ``j`` (see :func:`truncation_survival`).
    alpha : int, default=80
        Where the geometric tail of ``"paper"`` starts.
    decay : float, default=0.9
        Ratio of the geometric tail of ``"paper"``.
    cap : int, default=100
        Largest possible ``K`` of ``"harmonic"``.

    Returns
    -------
    estimate : torch.Tensor of shape (...,)
        ``-inf`` where all ``m + K`` weights are zero; ``+inf`` where ``IWAE_m`` alone is
        ``-inf`` but later weights are not (the series then has an infinite term); never NaN.

    Raises
    ------
    ValueError
        If shapes disagree, ``min_terms < 1``, some ``K < 1``, some ``K`` is impossible
        under ``kind`` (``P(K >= K) = 0``, e.g. ``K > cap`` for ``"harmonic"``), rows are
        too short, or the used log-weights contain NaN or ``+inf`` (NaN anywhere is
        refused; ``+inf`` only in the padding is allowed).
    TypeError
        If ``n_terms`` is not of an integer dtype, ``min_terms`` is not an int or
        ``log_w`` is complex.

    See Also
    --------
    sumo_sampled : Draws ``K`` and the log-weights, bucketed by ``K``, and calls this.

    References
    ----------
    .. [1] Luo, Y., Beatson, A., Norouzi, M., Zhu, J., Duvenaud, D., Adams, R. P. and
       Chen, R. T. Q. (2020). "SUMO: Unbiased Estimation of Log Marginal Probability for
       Latent Variable Models". ICLR 2020. :arxiv:`2004.00353`.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import sumo
    >>> log_w = torch.log(torch.tensor([[1.0, 3.0, 2.0]]))
    >>> # K = 2, m = 1: IWAE_1 + (IWAE_2 - IWAE_1) / 1 + (IWAE_3 - IWAE_2) / (1/2)
    >>> round(sumo(log_w, torch.tensor([2])).item(), 4)
    0.6931
    """
    log_w, posinf = _check_log_w(log_w, allow_posinf=True)
    n_terms = torch.as_tensor(n_terms, device=log_w.device)
    if n_terms.is_floating_point() or n_terms.is_complex() or n_terms.dtype == torch.bool:
        raise TypeError(
            f"n_terms must hold integer truncation levels K, got dtype {n_terms.dtype}."
        )
    m = _check_int(min_terms, "min_terms", 1)
    if n_terms.shape != log_w.shape[:-1]:
        raise ValueError(
            f"n_terms has shape {tuple(n_terms.shape)} but log_w has batch shape "
            f"{tuple(log_w.shape[:-1])}."
        )
    if n_terms.numel() and int(n_terms.min()) < 1:
        raise ValueError(f"every truncation level K must be >= 1, got min {int(n_terms.min())}.")
    k_max = int(n_terms.max()) if n_terms.numel() else 1
    if log_w.shape[-1] < m + k_max:
        raise ValueError(
            f"log_w has {log_w.shape[-1]} samples per estimate but min_terms + max(K) = "
            f"{m + k_max} are needed."
        )
    inv_surv = _inverse_survival(k_max, log_w.device, kind=kind, alpha=alpha, decay=decay,
                                 cap=cap, dtype=log_w.dtype)
    log_w = log_w[..., : m + k_max]
    if posinf:  # +inf is allowed in the padding only (it is never read)
        used = torch.arange(m + k_max, device=log_w.device) < (m + n_terms).unsqueeze(-1)
        if bool((torch.isposinf(log_w) & used).any()):
            _raise_posinf(log_w.masked_fill(~used, 0.0), "log_w")
    return _sumo_padded(log_w, n_terms, m, inv_surv)


def _inverse_survival(k_max, device, *, kind, alpha, decay, cap, dtype=torch.float64):
    """``1 / P(K >= j)`` for ``j = 1..k_max`` in ``dtype``; ValueError if one is not finite.

    A level ``K`` with ``P(K >= K) = 0`` cannot have been drawn from the distribution
    (e.g. ``K > cap`` for ``"harmonic"``); its re-weighting would be ``1/0 = inf``. A
    re-weighting too large for ``dtype`` (far in the geometric tail) would turn the
    series into NaN.
    """
    surv = truncation_survival(torch.arange(1, k_max + 1, device=device), kind=kind,
                               alpha=alpha, decay=decay, cap=cap)
    if not bool(surv[-1] > 0):  # survival is non-increasing: the last is the smallest
        first = int(torch.nonzero(surv == 0)[0]) + 1
        why = (f"kind='harmonic' with cap={cap} never draws K > cap" if kind == "harmonic"
               else f"kind='paper' with alpha={alpha}, decay={decay}: the geometric tail "
                    "underflows to 0 in float64")
        raise ValueError(
            f"truncation level K = {k_max} is impossible: P(K >= {first}) = 0 ({why}). "
            "The K must be drawn from the truncation distribution named by kind, alpha, "
            "decay and cap (see sample_truncation)."
        )
    inv = (1.0 / surv).to(dtype)
    if not bool(torch.isfinite(inv[-1])):
        first = int(torch.nonzero(~torch.isfinite(inv))[0]) + 1
        raise ValueError(
            f"truncation level K = {k_max} is too large for {dtype}: its re-weighting "
            f"1 / P(K >= {first}) = {float(1.0 / surv[first - 1]):.3g} overflows. Such K "
            "are practically never drawn from the paper's distribution"
            + ("; compute in float64." if dtype != torch.float64 else ".")
        )
    return inv


def _iwae_cumulative_unchecked(log_w):
    """``iwae_cumulative`` without input checks, via one exp / cumsum / log pass per row.

    Each row is shifted by its maximum, so every shifted weight is <= 1 and the cumulative
    sums only add non-negative numbers (relative error <= L * eps, as for
    ``logcumsumexp``). Rows holding a finite weight whose shifted exponential is below the
    dtype's smallest normal number (e.g. more than 707 nats below the row maximum in
    float64, 86 in float32), where exp would lose precision or underflow to 0, are
    computed with ``logcumsumexp`` instead (only those rows, so no ``log(0)`` of theirs
    enters the gradient). ``-inf`` weights add exactly 0 and get no gradient (their
    derivative is 0; computing it would give ``0 * inf = NaN``); an all ``-inf`` prefix
    gives ``-inf``.
    """
    k = log_w.shape[-1]
    log_j = torch.log(torch.arange(1, k + 1, device=log_w.device, dtype=log_w.dtype))
    neginf = torch.isneginf(log_w)
    if log_w.requires_grad and bool(neginf.any()):
        log_w = torch.where(neginf, log_w.detach(), log_w)
    shift = log_w.detach().amax(-1, keepdim=True)
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    d = log_w - shift
    floor = math.log(torch.finfo(log_w.dtype).tiny) + 1.0
    risky = ((d < floor) & ~neginf).any(-1)
    if not bool(risky.any()):
        return torch.log(torch.cumsum(torch.exp(d), dim=-1)) + shift - log_j
    safe = torch.nonzero(~risky, as_tuple=True)
    wide = torch.nonzero(risky, as_tuple=True)
    iw = log_w.new_zeros(log_w.shape).index_put(
        safe, torch.log(torch.cumsum(torch.exp(d[safe]), dim=-1)) + shift[safe] - log_j)
    return iw.index_put(wide, torch.logcumsumexp(log_w[wide], dim=-1) - log_j)


def _sumo_padded(log_w, n_terms, m, inv_surv):
    """Core of :func:`sumo` on checked inputs.

    ``log_w`` (..., m + k_max) padded log-weights, ``n_terms`` (...,) int64 K in
    [1, k_max], ``inv_surv`` (k_max,) the weights ``1 / P(K >= j)`` in ``log_w``'s dtype.
    """
    k_max = log_w.shape[-1] - m
    iw = _iwae_cumulative_unchecked(log_w)             # (..., m + k_max): IWAE_1..IWAE_{m+k_max}
    base = iw[..., m - 1]                              # IWAE_m
    prev, nxt = iw[..., m - 1 : -1], iw[..., m:]       # IWAE_{m+j-1}, IWAE_{m+j}; j = 1..k_max
    j = torch.arange(1, k_max + 1, device=log_w.device)
    keep = j <= n_terms.unsqueeze(-1)                  # (..., k_max) mask of the drawn terms
    # Both -inf means "still no mass": a zero increment, not -inf - -inf = NaN.
    both_empty = torch.isneginf(prev) & torch.isneginf(nxt)
    delta = torch.where(keep & ~both_empty, nxt - prev, torch.zeros_like(nxt))
    telescoped = torch.where(torch.isneginf(base), torch.zeros_like(base), base) + (
        delta * inv_surv
    ).sum(-1)
    last = torch.gather(iw, -1, (m + n_terms - 1).unsqueeze(-1)).squeeze(-1)  # IWAE_{m+K}
    inf = torch.full_like(base, math.inf)
    out = torch.where(torch.isneginf(base), inf, telescoped)
    return torch.where(torch.isneginf(last), -inf, out)


def sumo_sampled(log_weight_fn, n_estimates, *, min_terms=1, kind="paper", alpha=80,
                 decay=0.9, cap=100, generator=None, device="cpu", return_cost=False):
    """Draw ``n_estimates`` SUMO estimates: all ``K`` at once, ragged draws, padded and masked.

    The truncation levels ``K`` of all estimates are drawn together; estimate ``i`` then
    needs exactly ``m + K_i`` log-weights, which are requested in **one** call of
    ``log_weight_fn`` (a flat, ragged batch: no sample is wasted on padding, which matters
    because the paper's ``K`` is heavy-tailed: ``E[K] = 5.08`` but the largest of 10^4
    draws is typically above 100). The flat log-weights are scattered into padded arrays,
    one per power-of-two bucket of ``K`` (so padding at most doubles the cheap scalar work),
    and :func:`sumo` masks the padding. No Python loop over estimates.

    Parameters
    ----------
    log_weight_fn : callable
        ``log_weight_fn(rows) -> torch.Tensor of shape (len(rows),)``: one fresh log-weight
        (a number or ``-inf``; never NaN or ``+inf``) per entry of ``rows`` (int64 tensor
        of estimate indices in ``range(n_estimates)``, sorted, each index repeated
        ``m + K_i`` times); a latent-variable model uses ``rows`` to pick the data row of
        each sample.
    n_estimates : int
        Number of estimates, ``>= 0``.
    min_terms : int, default=1
        ``m``, the number of samples every estimate always uses, ``>= 1``.
    kind : {"paper", "harmonic"}, default="paper"
        Truncation distribution of ``K`` (see :func:`truncation_survival`).
    alpha : int, default=80
        Where the geometric tail of ``"paper"`` starts.
    decay : float, default=0.9
        Ratio of the geometric tail of ``"paper"``.
    cap : int, default=100
        Largest possible ``K`` of ``"harmonic"``.
    generator : torch.Generator, default=None
        Draws the ``K`` (the log-weights come from ``log_weight_fn``'s own randomness);
        torch's global generator when None.
    device : str or torch.device, default="cpu"
        Device of the truncation levels and of ``rows``; ``log_weight_fn`` must return its
        log-weights on the device it computes on (the estimates are returned there).
    return_cost : bool, default=False
        Also return the number of log-weights drawn, ``sum_i (m + K_i)``.

    Returns
    -------
    estimates : torch.Tensor of shape (n_estimates,)
        SUMO estimates of ``log Z``, in the dtype and on the device of ``log_weight_fn``'s
        output; differentiable through ``log_weight_fn``; ``-inf``/``+inf`` as in
        :func:`sumo`, never NaN.
    cost : int
        Total number of log-weights drawn, ``sum_i (m + K_i)``; returned only when
        ``return_cost=True``.

    Raises
    ------
    ValueError
        If ``log_weight_fn`` returns the wrong shape, NaN or ``+inf``; if
        ``n_estimates < 0`` or ``min_terms < 1``; if ``device`` is not available.
    TypeError
        If ``n_estimates`` or ``min_terms`` is not an int, ``log_weight_fn`` is not
        callable, or it returns something other than real numbers (numpy arrays and
        integer tensors are converted; complex values, strings, None are refused).

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import sumo_sampled
    >>> g = torch.Generator().manual_seed(0)
    >>> q = torch.distributions.Normal(0.0, 2.0)
    >>> def log_weights(rows):  # target exp(-x^2/2), Z = sqrt(2 pi)
    ...     x = q.sample(rows.shape)
    ...     return -0.5 * x**2 - q.log_prob(x)
    >>> sumo_sampled(log_weights, 20_000, generator=g).shape
    torch.Size([20000])
    """
    n_estimates = _check_int(n_estimates, "n_estimates", 0)
    min_terms = _check_int(min_terms, "min_terms", 1)
    if not callable(log_weight_fn):
        raise TypeError(f"log_weight_fn must be callable, got {type(log_weight_fn).__name__}.")
    k = sample_truncation(n_estimates, kind=kind, alpha=alpha, decay=decay, cap=cap,
                          generator=generator, device=device)
    est, cost = _sumo_ragged(log_weight_fn, k, min_terms=min_terms, kind=kind, alpha=alpha,
                             decay=decay, cap=cap)
    return (est, cost) if return_cost else est


def _as_real_tensor(out, name, what, device, float_dtype=None):
    """What a user callable returned, as a real torch tensor (shape not checked).

    numpy arrays (and lists) of real numbers are converted onto ``device`` (they carry no
    gradient); integer and bool outputs become ``float_dtype`` (torch's default float
    dtype when None). Complex or
    non-numeric outputs raise a TypeError naming the callable ``name`` and the expected
    ``what``.
    """
    if not isinstance(out, torch.Tensor):
        arr = None
        if isinstance(out, (np.ndarray, np.generic, list, tuple)):
            try:
                arr = np.asarray(out)
            except ValueError:  # ragged nested lists
                arr = None
        if arr is None or arr.dtype.kind not in "biuf":
            kind = type(out).__name__ + ("" if arr is None else f" of dtype {arr.dtype}")
            raise TypeError(f"{name} must return {what}, got {kind}.")
        out = torch.as_tensor(arr, device=device)
    if out.is_complex():
        raise TypeError(f"{name} must return {what}, got complex values (dtype {out.dtype}).")
    if not out.is_floating_point():
        out = out.to(torch.get_default_dtype() if float_dtype is None else float_dtype)
    return out


def _as_flat_log_weights(out, rows):
    """Check and convert what ``log_weight_fn(rows)`` returned: a real (n,) tensor.

    See :func:`_as_real_tensor`; a wrong shape is a ValueError.
    """
    n = rows.shape[0]
    out = _as_real_tensor(out, "log_weight_fn",
                          f"a torch.Tensor of real log-weights of shape ({n},)", rows.device)
    if tuple(out.shape) != (n,):
        raise ValueError(
            f"log_weight_fn returned shape {tuple(out.shape)}, expected ({n},)."
        )
    return out


def _sumo_ragged(log_weight_fn, k, *, min_terms, kind, alpha, decay, cap):
    """SUMO estimates for given truncation levels ``k`` (int64, shape (n,)).

    The body of :func:`sumo_sampled` after ``K`` is drawn; callers that draw ``K`` their
    own way (e.g. keyed by data rows) use it directly. Returns ``(estimates, cost)``.
    """
    n_estimates, m = int(k.shape[0]), int(min_terms)
    device = k.device
    counts = m + k                                               # (n,) samples per estimate
    rows = torch.repeat_interleave(counts)  # estimate index of every sample, sorted
    starts = torch.cumsum(counts, 0) - counts
    flat = _as_flat_log_weights(log_weight_fn(rows), rows)
    # Evaluate the series per power-of-two bucket of K (a loop over ~log2(max K) buckets,
    # not over estimates): padding every row to the global max K would make the scalar
    # work ~30x the number of samples with the heavy-tailed K; buckets bound it by 2x.
    # Estimates are grouped by bucket with one stable sort; each bucket gathers its padded
    # (rows, m + 2**b) block straight from the flat log-weights (padding is -inf, masked).
    k_max = int(k.max()) if n_estimates else 1
    inv_surv = _inverse_survival(k_max, device, kind=kind, alpha=alpha, decay=decay, cap=cap,
                                 dtype=flat.dtype).to(flat.device)
    bucket = torch.ceil(torch.log2(k.to(torch.float64))).to(torch.int64)
    order = torch.argsort(bucket, stable=True)
    sizes = torch.bincount(bucket).tolist()
    est = torch.empty(n_estimates, dtype=flat.dtype, device=flat.device)
    # One reduction over the flat weights serves two purposes: refusing NaN / +inf, and the
    # fast path (when every log-weight is finite and they all lie within the dtype's exp
    # range of each other, one shift for all and one exp over the flat weights replace the
    # per-row shift, exp and underflow checks; same sums).
    bounds = _flat_bounds(flat)
    shift = _common_shift(flat, bounds)
    shifted = None if shift is None else torch.exp(flat - shift)
    last = flat.shape[0] - 1
    lo = 0
    for b, size in enumerate(sizes):
        if size == 0:
            continue
        members = order[lo : lo + size]
        lo += size
        width = m + min(2**b, k_max)
        offs = torch.arange(width, device=device)
        if shifted is None:
            valid = offs < counts[members].unsqueeze(-1)
            idx = torch.where(valid, starts[members].unsqueeze(-1) + offs, 0)
            padded = flat[idx.to(flat.device)].masked_fill(~valid.to(flat.device), -math.inf)
            part = _sumo_padded(padded, k[members].to(flat.device), m, inv_surv[: width - m])
        else:
            # Padding reads the next estimates' weights (positive and finite, so every
            # padded partial sum stays finite) and gets weight 0 in the series.
            idx = (starts[members].unsqueeze(-1) + offs).clamp_max_(last)
            part = _sumo_padded_exp(shifted[idx.to(flat.device)], k[members].to(flat.device),
                                    m, inv_surv[: width - m], shift)
        est = est.index_put((members.to(flat.device),), part)
    return est, int(rows.shape[0])


def _flat_bounds(flat):
    """``(min, max)`` of the flat log-weights (0-d tensors, detached), or None when empty.

    Raises ValueError on NaN or ``+inf`` (``aminmax`` propagates NaN), naming
    ``log_weight_fn`` and the first offending sample.
    """
    if flat.numel() == 0:
        return None
    lo, hi = torch.aminmax(flat.detach())
    top = float(hi)
    if math.isnan(top):
        i = int(torch.nonzero(torch.isnan(flat.detach()))[0])
        raise ValueError(
            f"log_weight_fn returned NaN (first at sample {i}); log-weights must be numbers "
            "or -inf (zero density)."
        )
    if top == math.inf:
        _raise_posinf(flat, "log_weight_fn's output")
    return lo, hi


def _common_shift(flat, bounds=None):
    """One shift ``c`` for all log-weights when ``exp(flat - c)`` is safe, else None.

    Safe means every weight is finite and all lie within ``-log(tiny) - 1`` nats of the
    largest (707 in float64, 86 in float32), so each ``exp(log_w - max)`` is a normal
    number (full relative precision, never 0): exactly the condition under which
    :func:`_iwae_cumulative_unchecked` skips its ``logcumsumexp`` fallback, applied once
    to all rows. The shift is detached (it cancels in value and in gradient). ``bounds``
    is ``(min, max)`` of ``flat`` when already computed (see :func:`_flat_bounds`).
    """
    if flat.numel() == 0 or not flat.is_floating_point():
        return None
    lo, hi = torch.aminmax(flat.detach()) if bounds is None else bounds
    floor = math.log(torch.finfo(flat.dtype).tiny) + 1.0
    spread = float(hi - lo)  # NaN (NaN weights) and inf (infinite weights) fail the test
    return hi if spread < -floor else None


def _sumo_padded_exp(e, n_terms, m, inv_surv, shift):
    """:func:`_sumo_padded` from shifted weights ``e = exp(log_w - shift)``.

    ``e`` (rows, m + k_max), every entry a positive normal number (entries after a row's
    ``m + K`` are padding: any such number, masked out); ``n_terms`` (rows,) int64;
    ``inv_surv`` (k_max,); ``shift`` a 0-d tensor.
    """
    k_max = e.shape[-1] - m
    log_j = torch.log(torch.arange(1, m + k_max + 1, device=e.device, dtype=e.dtype))
    iw = torch.log(torch.cumsum(e, dim=-1)) + (shift - log_j)  # IWAE_1..IWAE_{m+k_max}
    delta = iw[..., m:] - iw[..., m - 1 : -1]                # IWAE_{m+j} - IWAE_{m+j-1}
    j = torch.arange(1, k_max + 1, device=e.device)
    weight = torch.where(j <= n_terms.unsqueeze(-1), inv_surv, torch.zeros_like(inv_surv))
    return iw[..., m - 1] + (delta * weight).sum(-1)
