"""Stateless (counter-based) random numbers keyed by the bytes of data rows.

A Monte Carlo score of a row ``x`` should depend on the seed and on ``x`` only, not on which
other rows are scored with it or in which order. Here every random number is a hash of
(seed, bytes of the row, estimate index, sample index, coordinate): the same row always gets
the same draws, and different rows or indices get (pseudo-)independent ones. Everything is
vectorised torch integer arithmetic on any device: no generator state, no loop over rows.

The mixing function is MurmurHash3's 32-bit finaliser ``fmix32`` (Appleby, 2011), a
bijection of ``[0, 2^32)`` with full avalanche; a word ``w`` is absorbed into a state ``h`` as
``fmix32(h ^ fmix32(w ^ salt))``, with a different ``salt`` per purpose so that, e.g., the
uniform drawing an estimate's truncation level never coincides with a sample's noise.
States are 32-bit: two distinct (row, index) pairs share a state with probability
``2^-32``; they then share their draws, which correlates them but leaves each unbiased.

Integers are held in int64 tensors with values in ``[0, 2^32)``. A 32-bit product is formed
from 16-bit halves of the constant, so no int64 product overflows (exact on every backend).
"""

import math

import numpy as np
import torch

__all__ = ["keyed_normal", "keyed_uniform53", "mix", "row_keys"]

_MASK = 0xFFFFFFFF
# Purpose salts (hex digits of pi). Their top 12 bits differ, so ``w ^ salt`` of two purposes
# never coincide for the small indices ``w < 2**20`` used here.
SALT_SEED = 0x243F6A88
SALT_COLUMN = 0x85A308D3
SALT_ESTIMATE = 0x13198A2E
SALT_TRUNCATION = 0x03707344
SALT_SAMPLE = 0xA4093822
SALT_NORMAL = 0x299F31D0


def _mul32(h, c):
    """``(h * c) mod 2**32`` for ``h`` in [0, 2**32) (int64 tensor) and a constant ``c``."""
    lo, hi = c & 0xFFFF, c >> 16
    # h * lo and h * hi are below 2**48: no int64 overflow.
    return (h * lo + (((h * hi) & 0xFFFF) << 16)) & _MASK


def fmix32(h):
    """MurmurHash3's 32-bit finaliser on an int64 tensor of values in [0, 2**32)."""
    h = h ^ (h >> 16)
    h = _mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = _mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


def mix(h, w, salt):
    """Absorb word(s) ``w`` into state(s) ``h`` (broadcasting): ``fmix32(h ^ fmix32(w ^ salt))``.

    Parameters
    ----------
    h : torch.Tensor of int64
        States in [0, 2**32).
    w : torch.Tensor of int64 or int
        Words in [0, 2**32), broadcastable against ``h``.
    salt : int
        Purpose constant (one of the module's ``SALT_*``).

    Returns
    -------
    torch.Tensor of int64
        New states in [0, 2**32), of the broadcast shape.
    """
    w = torch.as_tensor(w, dtype=torch.int64, device=h.device)
    return fmix32(h ^ fmix32(w ^ salt))


def row_keys(X, seed, device="cpu"):
    """One 32-bit key per row of ``X``, a hash of ``seed`` and the row's float64 bytes.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite values; they are hashed as little-endian float64 (so float32 and float64 input
        of the same values get the same key; ``-0.0`` is hashed as ``0.0``).
    seed : int
        Non-negative seed below 2**32.
    device : str or torch.device, default="cpu"
        Device of the returned keys.

    Returns
    -------
    keys : torch.Tensor of int64, shape (n_samples,)
        Values in [0, 2**32); equal rows get equal keys.
    """
    X = np.ascontiguousarray(np.asarray(X, dtype="<f8") + 0.0)
    n = X.shape[0]
    words = torch.as_tensor(X.view("<u4").astype(np.int64).reshape(n, -1), device=device)
    state = fmix32(torch.tensor(int(seed) & _MASK, device=device) ^ SALT_SEED)
    # Column-specific salts make the row hash order-sensitive; the mod-2**32 sum of the
    # hashed words is then finalised (a vectorised alternative to a sequential chain).
    col = mix(state, torch.arange(words.shape[1], device=device), SALT_COLUMN)
    hashed = fmix32(words ^ col)
    return fmix32((hashed.sum(dim=1) & _MASK) ^ state)


def keyed_uniform53(h, stream, salt):
    """Float64 uniforms in (0, 1] on a 2**-53 grid from states ``h`` (two hashed words each).

    Parameters
    ----------
    h : torch.Tensor of int64
        States in [0, 2**32).
    stream : torch.Tensor of int64 or int
        Index of the uniform within its state, broadcastable against ``h``.
    salt : int
        Purpose constant.

    Returns
    -------
    u : torch.Tensor of float64
        ``(m + 1) / 2**53`` with ``m`` the top 27 + 26 bits of the two words; the same grid
        as ``1 - torch.rand(dtype=float64)``.
    """
    stream = torch.as_tensor(stream, dtype=torch.int64, device=h.device)
    hi = mix(h, 2 * stream, salt) >> 5
    lo = mix(h, 2 * stream + 1, salt) >> 6
    return (hi.to(torch.float64) * 2.0**26 + lo.to(torch.float64) + 1.0) * 2.0**-53


def keyed_normal(h, n_dims, dtype=torch.float32):
    """Standard normal draws of shape ``(len(h), n_dims)`` from states ``h`` (Box-Muller).

    Coordinates ``2p`` and ``2p + 1`` come from the radius uniform (53 bits, so ``|z|`` can
    reach 8.6) and the angle uniform (32 bits) of pair ``p``.

    Parameters
    ----------
    h : torch.Tensor of int64, shape (N,)
        States in [0, 2**32).
    n_dims : int
        Number of coordinates per state.
    dtype : torch.dtype, default=torch.float32
        Output dtype (computed in float64 first).

    Returns
    -------
    z : torch.Tensor of shape (N, n_dims)
        Independent ``N(0, 1)`` draws, on ``h``'s device.
    """
    pairs = (int(n_dims) + 1) // 2
    p = torch.arange(pairs, device=h.device)
    hh = h.unsqueeze(-1)
    u_radius = keyed_uniform53(hh, p, SALT_NORMAL)                       # (N, pairs)
    u_angle = (mix(hh, 2 * pairs + p, SALT_NORMAL).to(torch.float64) + 0.5) * 2.0**-32
    radius = torch.sqrt(-2.0 * torch.log(u_radius))
    angle = (2.0 * math.pi) * u_angle
    z = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)
    return z.reshape(h.shape[0], 2 * pairs)[:, : int(n_dims)].to(dtype)
