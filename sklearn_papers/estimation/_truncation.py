"""Truncation distributions for SUMO's Russian-roulette estimator (Luo et al., 2020).

SUMO keeps the first ``K`` terms of the telescoping series of IWAE bounds, ``K`` drawn from a
discrete distribution on ``{1, 2, ...}``, and re-weights term ``j`` by ``1 / P(K >= j)``.
Everything here is written in terms of the survival function ``S(j) = P(K >= j)``:

* ``"paper"`` (default): ``S(j) = 1/j`` for ``j <= alpha`` and ``(1/alpha) * decay**(j - alpha)``
  beyond, with ``alpha = 80`` and ``decay = 0.9`` (Luo et al. 2020, appendix; the survival
  function is continuous at ``j = alpha``). ``E[K] = H_{alpha-1} + 1/(alpha (1 - decay))``
  (about 5.08), so the expected cost is finite while the early terms keep the harmonic
  weights that make the estimator's variance finite for typical ``Delta_j = O(1/j^2)``.
* ``"harmonic"``: the pure ``S(j) = 1/j`` of Chin-Wei Huang's note, cut at ``cap``. Without a cap
  ``E[K] = sum_j 1/j`` diverges (infinite expected cost), and draws of ``K`` in the
  millions happen; with the cap ``S(j) = 0`` for ``j > cap``, so the estimator is unbiased for
  ``IWAE_{m + cap}`` rather than for ``log Z`` (the dropped tail ``log Z - IWAE_{m+cap}`` is the
  bias, ``O(1/(m + cap))``). It is offered to reproduce the note, not as the default.
"""

import math
from numbers import Integral

import numpy as np
import torch

from sklearn_papers.nn._skorch import check_device

__all__ = ["sample_truncation", "truncation_mean", "truncation_survival"]

_KINDS = ("paper", "harmonic")


def _check_int(value, name, low):
    """``value`` as an int ``>= low``; TypeError for non-integers (floats, bools), else ValueError.

    Accepts Python and numpy integers and 0-d integer tensors. A float such as ``2.5`` is
    refused rather than truncated.
    """
    if isinstance(value, torch.Tensor) and value.ndim == 0 and not (
            value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__}).")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}.")
    return int(value)


def _check_kind(kind, alpha, decay, cap):
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}.")
    if kind == "paper":
        if not (isinstance(alpha, (int, np.integer)) and alpha >= 1):
            raise ValueError(f"alpha must be an int >= 1, got {alpha!r}.")
        if not 0.0 < decay < 1.0:
            raise ValueError(f"decay must lie in (0, 1), got {decay!r}.")
    elif not (isinstance(cap, (int, np.integer)) and cap >= 1):
        raise ValueError(
            f"kind='harmonic' needs an int cap >= 1, got cap={cap!r}; without a cap the "
            "expected number of terms sum_j 1/j is infinite."
        )


def truncation_survival(j, *, kind="paper", alpha=80, decay=0.9, cap=100):
    """Survival function ``S(j) = P(K >= j)`` of a SUMO truncation distribution.

    Parameters
    ----------
    j : int, array-like of int or torch.Tensor
        Term indices, ``j >= 1``.
    kind : {"paper", "harmonic"}, default="paper"
        ``"paper"``: ``1/j`` up to ``alpha``, then ``(1/alpha) decay**(j - alpha)``
        (Luo et al. 2020). ``"harmonic"``: ``1/j`` up to ``cap`` and 0 beyond.
    alpha : int, default=80
        Where the geometric tail starts (``"paper"`` only).
    decay : float, default=0.9
        Ratio of the geometric tail (``"paper"`` only).
    cap : int, default=100
        Largest possible ``K`` (``"harmonic"`` only).

    Returns
    -------
    survival : torch.Tensor of float64
        Same shape as ``j``; 1 for ``j <= 1``.

    Raises
    ------
    ValueError
        For an unknown ``kind`` or out-of-range ``alpha``, ``decay`` or ``cap``.

    References
    ----------
    .. [1] Luo, Y., Beatson, A., Norouzi, M., Zhu, J., Duvenaud, D., Adams, R. P. and
       Chen, R. T. Q. (2020). "SUMO: Unbiased Estimation of Log Marginal Probability for
       Latent Variable Models". ICLR 2020. :arxiv:`2004.00353`.

    Examples
    --------
    >>> from sklearn_papers.estimation import truncation_survival
    >>> [round(s, 5) for s in truncation_survival([1, 2, 80, 81]).tolist()]
    [1.0, 0.5, 0.0125, 0.01125]
    """
    _check_kind(kind, alpha, decay, cap)
    j = torch.as_tensor(j)
    dev = j.device
    j = j.to(torch.float64).clamp(min=1.0)
    if kind == "paper":
        tail = (1.0 / alpha) * torch.pow(torch.tensor(decay, dtype=torch.float64, device=dev),
                                         j - alpha)
        return torch.where(j <= alpha, 1.0 / j, tail)
    return torch.where(j <= cap, 1.0 / j, torch.zeros_like(j))


def sample_truncation(n, *, kind="paper", alpha=80, decay=0.9, cap=100, generator=None,
                      device="cpu"):
    """Draw ``n`` truncation levels ``K >= 1`` by inverting the survival function.

    With ``U ~ Uniform(0, 1]``, ``K = max{j : S(j) >= U}`` has ``P(K >= j) = S(j)`` exactly:
    ``K = floor(1/U)`` where ``S`` is ``1/j``, and
    ``K = alpha + floor(log(alpha U) / log(decay))`` in the geometric tail. No loop over draws.

    Parameters
    ----------
    n : int
        Number of draws, ``>= 0``.
    kind : {"paper", "harmonic"}, default="paper"
        Truncation distribution: ``"paper"`` has ``S(j) = 1/j`` up to ``alpha`` and a
        geometric tail beyond (Luo et al. 2020); ``"harmonic"`` has ``S(j) = 1/j`` up to
        ``cap`` and 0 beyond (see :func:`truncation_survival`).
    alpha : int, default=80
        Where the geometric tail starts (``"paper"`` only); must be >= 1.
    decay : float, default=0.9
        Ratio of the geometric tail (``"paper"`` only); must lie in (0, 1).
    cap : int, default=100
        Largest possible ``K`` (``"harmonic"`` only); must be >= 1.
    generator : torch.Generator, default=None
        Source of randomness (torch's global generator when None).
    device : str or torch.device, default="cpu"
        Device of the output (the uniforms are drawn on the generator's device).

    Returns
    -------
    K : torch.Tensor of int64, shape (n,)
        Truncation levels, each ``>= 1`` (and ``<= cap`` for ``"harmonic"``), distributed
        with ``P(K >= j) = S(j)``.

    Raises
    ------
    ValueError
        For an unknown ``kind``, out-of-range ``alpha``, ``decay`` or ``cap``, ``n < 0``, or
        a device that is not available.
    TypeError
        If ``n`` is not an int (a float such as 2.5 is refused, not truncated).

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.estimation import sample_truncation
    >>> K = sample_truncation(100_000, generator=torch.Generator().manual_seed(0))
    >>> bool(K.min() >= 1), round(K.double().mean().item(), 0)
    (True, 5.0)
    """
    n = _check_int(n, "n", 0)
    _check_kind(kind, alpha, decay, cap)
    device = check_device(device)
    gen_device = generator.device if generator is not None else torch.device("cpu")
    u = 1.0 - torch.rand(n, generator=generator, dtype=torch.float64, device=gen_device)
    return _truncation_from_uniform(u, kind=kind, alpha=alpha, decay=decay, cap=cap).to(device)


def _truncation_from_uniform(u, *, kind, alpha, decay, cap):
    """``K = max{j : S(j) >= u}`` for float64 uniforms ``u`` in (0, 1]: int64, same shape.

    The inverse-survival map of :func:`sample_truncation`, shared with callers that bring
    their own uniforms (e.g. counter-based draws keyed by data rows).
    """
    # floor(1/u) in float64; the tiny epsilon keeps exact reciprocals (u = 1/j) at j.
    harmonic = torch.floor(1.0 / u * (1.0 + 1e-12))
    if kind == "paper":
        tail = alpha + torch.floor(torch.log(alpha * u) / math.log(decay) + 1e-12)
        k = torch.where(u > 1.0 / alpha, torch.clamp(harmonic, max=alpha), tail)
    else:
        k = torch.clamp(harmonic, max=cap)
    return k.clamp(min=1).to(torch.int64)


def truncation_mean(*, kind="paper", alpha=80, decay=0.9, cap=100):
    """Expected truncation level ``E[K] = sum_j P(K >= j)`` (the expected number of extra terms).

    Parameters
    ----------
    kind : {"paper", "harmonic"}, default="paper"
        Truncation distribution (see :func:`truncation_survival`).
    alpha : int, default=80
        Where the geometric tail starts (``"paper"`` only); must be >= 1.
    decay : float, default=0.9
        Ratio of the geometric tail (``"paper"`` only); must lie in (0, 1).
    cap : int, default=100
        Largest possible ``K`` (``"harmonic"`` only); must be >= 1.

    Returns
    -------
    mean : float
        Expected number of series terms beyond ``min_terms``:
        ``H_{alpha-1} + 1/(alpha (1 - decay))`` for ``"paper"`` (``H_n`` is the ``n``-th
        harmonic number) and ``H_cap`` for ``"harmonic"``.

    Raises
    ------
    ValueError
        For an unknown ``kind`` or out-of-range ``alpha``, ``decay`` or ``cap``.

    Examples
    --------
    >>> from sklearn_papers.estimation import truncation_mean
    >>> round(truncation_mean(), 3)
    5.078
    """
    _check_kind(kind, alpha, decay, cap)
    if kind == "paper":
        harmonic = sum(1.0 / j for j in range(1, alpha))
        return harmonic + 1.0 / (alpha * (1.0 - decay))
    return sum(1.0 / j for j in range(1, cap + 1))
