"""Unnormalised densities with a known normaliser, for checking log-partition estimators."""

import math

__all__ = []

#: log Z of :func:`_mixture_energy`: log(2 pi).
MIXTURE_LOG_Z = math.log(2 * math.pi)


def _mixture_energy(x):
    """Energy ``U(x)`` of 0.5 N([-2, 0], I) + 0.5 N([2, 0], 4I), scaled so that
    ``Z = integral of exp(-U) = 2 pi`` (the target of Chin-Wei Huang's note on SUMO, used
    by Luo et al. 2020's estimators). ``x``: tensor (n, 2); returns a tensor (n,)."""
    import torch

    d2 = x[:, 1] ** 2
    a = -((x[:, 0] + 2) ** 2 + d2) / 2 - math.log(2)
    b = -((x[:, 0] - 2) ** 2 + d2) / 8 - math.log(8)
    return -torch.logaddexp(a, b)
