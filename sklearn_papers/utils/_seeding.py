"""Seeds for the generators one fit owns: an int from ``random_state``, independent
sub-seeds, and a block run under a seeded torch RNG that leaves the global one untouched.

torch is imported only by :func:`torch_seeded`, so importing this module does not import it.
"""

import contextlib

import numpy as np

from sklearn_papers.utils._random import check_random_state

__all__ = ["seed_from_random_state", "spawn_seeds", "torch_seeded"]


def seed_from_random_state(random_state):
    """Turn a scikit-learn ``random_state`` into one int seed for torch.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        As in scikit-learn. ``None`` draws from numpy's global generator, so unseeded
        runs differ, as users expect.

    Returns
    -------
    seed : int
        In ``[0, 2**31 - 1)``.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def spawn_seeds(seed, n):
    """``n`` independent int seeds derived from ``seed`` by ``numpy.random.SeedSequence``.

    The sub-seeds of the generators one fit owns (initialisation, shuffling, draws): child
    ``k`` is ``SeedSequence(seed).spawn(n)[k]``, so seeds for different jobs are
    statistically independent, unlike offsets such as ``seed + 1`` that make the streams of
    neighbouring seeds overlap; from an int ``seed``, child ``k`` does not depend on ``n``
    (a ``SeedSequence`` given as ``seed`` goes on numbering its children across calls).

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Non-negative int (as from :func:`seed_from_random_state`) or a sequence spawned
        before.
    n : int
        Number of seeds.

    Returns
    -------
    seeds : list of int
        Each in ``[0, 2**31 - 1)``, valid for ``torch.manual_seed``,
        ``torch.Generator.manual_seed`` and ``numpy.random.default_rng``.
    """
    parent = seed if isinstance(seed, np.random.SeedSequence) else \
        np.random.SeedSequence(int(seed))
    return [int(child.generate_state(1, dtype=np.uint32)[0] % np.iinfo(np.int32).max)
            for child in parent.spawn(int(n))]


@contextlib.contextmanager
def torch_seeded(seed, device="cpu"):
    """Run a block with torch's RNG seeded, restoring the global RNG afterwards.

    Weight initialisation, dropout and random augmentations inside the block are
    reproducible, and the caller's global torch RNG state is untouched.

    Parameters
    ----------
    seed : int
        Seed for ``torch.manual_seed``.
    device : str or torch.device, default="cpu"
        When a CUDA device, its RNG is forked and seeded too.
    """
    import torch

    dev = torch.device(device)
    cuda_devices = []
    if dev.type == "cuda":
        cuda_devices = [dev.index if dev.index is not None else torch.cuda.current_device()]
    with torch.random.fork_rng(devices=cuda_devices):
        torch.manual_seed(seed)
        yield
