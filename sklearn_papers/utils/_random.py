"""Random generators from ``random_state`` that never touch the global numpy RNG."""

import numbers

import numpy as np

__all__ = ["check_random_state"]


def check_random_state(seed):
    """A ``numpy.random.RandomState`` for ``seed``, as scikit-learn's ``check_random_state``
    except for ``None``.

    ``None`` gives a new generator seeded from the operating system's entropy instead of
    numpy's global singleton, so that drawing from it leaves ``np.random``'s global state
    as it was (scikit-learn's function returns the singleton itself).

    Parameters
    ----------
    seed : None, int or numpy.random.RandomState
        None: fresh entropy; an int: a new generator seeded with it; a RandomState: itself
        (its state advances as it is used).

    Returns
    -------
    rng : numpy.random.RandomState

    Raises
    ------
    ValueError
        For anything else (a float, a string, a ``numpy.random.Generator``).
    """
    if seed is None:
        return np.random.RandomState(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.RandomState(int(seed))
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(f"random_state must be None, an int or a numpy RandomState; got "
                     f"{seed!r} of type {type(seed).__name__}")
