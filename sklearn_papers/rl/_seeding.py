"""Sub-seeds of the RL estimators, spawned from one seed by ``numpy.random.SeedSequence``."""

import numpy as np

__all__ = ["spawn_seeds"]


def spawn_seeds(seed, n):
    """``n`` independent seeds for sub-generators, spawned from ``seed``.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        An int starts a new ``SeedSequence``; a ``SeedSequence`` spawns its next children
        (so repeated calls on one sequence give new seeds, deterministically).
    n : int
        Number of seeds.

    Returns
    -------
    seeds : list of int
        Each in ``[0, 2**31 - 1)`` (valid for ``torch.Generator.manual_seed``,
        ``numpy.random.RandomState`` and ``gymnasium.Env.reset``), from the children
        ``SeedSequence(seed).spawn(n)``.
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    return [int(child.generate_state(1)[0] % (2**31 - 1)) for child in seq.spawn(int(n))]
