"""Index splits of the papers' protocols: a seeded random train / validation / test split
and contiguous folds with a validation chunk."""

from numbers import Integral, Real

import numpy as np

__all__ = []


def _check_n_samples(n_samples, at_least):
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) \
            or n_samples < at_least:
        raise ValueError(f"n_samples must be an integer >= {at_least}, got {n_samples!r}")


def _random_split(n_samples, seed, fractions=(0.8, 0.1, 0.1)):
    """Seeded random train / validation / test indices, as MoleculeNet's random split.

    Gilmer et al. (2017) and the MoleculeNet peers they are compared with score ESOL and
    FreeSolv on random 80 / 10 / 10 splits.

    Parameters
    ----------
    n_samples : int
        Number of rows, at least 1.
    seed : int
        Seeds ``numpy.random.default_rng``, whose permutation of the rows is cut.
    fractions : tuple of 3 floats, default=(0.8, 0.1, 0.1)
        Shares of training and validation rows (each rounded to the nearest integer); the
        test part holds the rest. Non-negative, summing to 1.

    Returns
    -------
    train, validation, test : ndarray of int64
        Disjoint row indices covering ``range(n_samples)``, each in permuted order.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive integer, or ``fractions`` is not 3 non-negative
        numbers summing to 1.
    """
    _check_n_samples(n_samples, 1)
    if (len(fractions) != 3 or not all(isinstance(f, Real) and f >= 0 for f in fractions)
            or not np.isclose(sum(fractions), 1.0)):
        raise ValueError(f"fractions must be 3 non-negative shares (train, validation, "
                         f"test) summing to 1, got {fractions!r}")
    perm = np.random.default_rng(seed).permutation(n_samples)
    n_train = int(round(fractions[0] * n_samples))
    n_val = int(round(fractions[1] * n_samples))
    return perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]


def _contiguous_folds(n_samples, n_folds=5):
    """Folds of contiguous chunks of rows in file order, a validation chunk in each.

    The protocol of Duvenaud et al. (2015): chunk ``i`` is fold ``i``'s test part, chunk
    ``i + 1`` (cyclically) its validation part for choosing hyper-parameters, and the other
    chunks its training part.

    Parameters
    ----------
    n_samples : int
        Number of rows, kept in file order; at least ``n_folds``.
    n_folds : int, default=5
        Number of chunks (``numpy.array_split`` sizes), at least 3.

    Returns
    -------
    folds : list of ``n_folds`` tuples (train, validation, test) of ndarray of int64
        Fold ``i``: test chunk ``i``, validation chunk ``(i + 1) % n_folds``, training the
        remaining chunks in file order.

    Raises
    ------
    ValueError
        If ``n_folds`` is not an integer >= 3 or ``n_samples`` one >= ``n_folds``.
    """
    if isinstance(n_folds, bool) or not isinstance(n_folds, Integral) or n_folds < 3:
        raise ValueError(f"n_folds must be an integer >= 3 (a test, a validation and a "
                         f"training chunk), got {n_folds!r}")
    _check_n_samples(n_samples, n_folds)
    chunks = np.array_split(np.arange(n_samples), n_folds)
    folds = []
    for i in range(n_folds):
        val = (i + 1) % n_folds
        train = np.concatenate([c for j, c in enumerate(chunks) if j not in (i, val)])
        folds.append((train, chunks[val], chunks[i]))
    return folds
