"""Is a learned per-state output value-like? Monte-Carlo state values of rollouts and the
Spearman correlations of linear probes to them: Oh et al. (2020)'s analysis of the
prediction ``y``, as measured in docs/papers/lpg.rst."""

import numpy as np

__all__ = []


def monte_carlo_values(obs, reward, done, n_states, discounts, *, n_counted, min_visits=5):
    """Every-visit Monte-Carlo state values of a batch of rollouts, at several discounts.

    A visit's return is the discounted sum of the rewards up to the end of its episode
    (``done``: terminated or truncated; no value is bootstrapped) or of the rollout. Only
    the first ``n_counted`` steps count as visits: the later ones only feed their returns.

    Parameters
    ----------
    obs : ndarray of shape (n_agents, n_steps)
        State index (int, in ``[0, n_states)``) of every step.
    reward : ndarray of shape (n_agents, n_steps)
        Reward (float) of every step.
    done : ndarray of shape (n_agents, n_steps)
        Whether the episode ended at that step (bool).
    n_states : int
        Table width.
    discounts : iterable of float
        Discounts in [0, 1].
    n_counted : int
        Leading steps whose visits count, in ``[1, n_steps]``.
    min_visits : int, default=5
        A state visited fewer times has value NaN.

    Returns
    -------
    values : dict of float to ndarray of shape (n_agents, n_states)
        Per discount, the mean return of each state's visits (float64; NaN: too few).
    counts : ndarray of shape (n_agents, n_states)
        Counted visits of each state (float64).

    Raises
    ------
    ValueError
        If the arrays' shapes differ or ``n_counted`` lies outside ``[1, n_steps]``.
    """
    obs, reward = np.asarray(obs), np.asarray(reward, dtype=np.float64)
    done = np.asarray(done, dtype=bool)
    if not obs.shape == reward.shape == done.shape or obs.ndim != 2:
        raise ValueError(f"obs, reward and done must share one (n_agents, n_steps) shape, "
                         f"got {obs.shape}, {reward.shape} and {done.shape}")
    if not 1 <= n_counted <= obs.shape[1]:
        raise ValueError(f"n_counted must lie in [1, {obs.shape[1]}] (the steps), "
                         f"got {n_counted!r}")
    n_agents = obs.shape[0]
    counts = np.zeros((n_agents, n_states))
    for b in range(n_agents):
        counts[b] = np.bincount(obs[b, :n_counted], minlength=n_states)
    seen = counts >= min_visits
    out = {}
    for g in discounts:
        ret = np.zeros_like(reward)
        nxt = np.zeros(n_agents)
        for t in range(reward.shape[1] - 1, -1, -1):
            nxt = reward[:, t] + g * (1 - done[:, t]) * nxt
            ret[:, t] = nxt
        vals = np.full((n_agents, n_states), np.nan)
        for b in range(n_agents):
            sums = np.bincount(obs[b, :n_counted], weights=ret[b, :n_counted],
                               minlength=n_states)
            vals[b, seen[b]] = sums[seen[b]] / counts[b, seen[b]]
        out[g] = vals
    return out, counts


def probe_spearman(features, target, groups, agents=None):
    """Spearman correlations of out-of-sample ridge probes of ``target`` from ``features``.

    The probe standardizes the features and fits ``RidgeCV`` (13 alphas from 1e-3 to 1e3).

    Parameters
    ----------
    features : ndarray of shape (n_rows, n_features)
        One row per (agent, state), e.g. a learned prediction ``y(s)``.
    target : ndarray of shape (n_rows,)
        The true values (e.g. :func:`monte_carlo_values`).
    groups : ndarray of shape (n_rows,)
        Environment of every row.
    agents : ndarray of shape (n_rows,) or None, default=None
        Which of two agents per environment (0 or 1) a row belongs to.

    Returns
    -------
    pooled : float
        Of a probe cross-validated by environment (``GroupKFold``, at most 4 folds); NaN
        with fewer than two environments.
    per_group : float
        Mean over environments and both directions of a probe fitted on one agent's rows
        and tested on the other's (0 for a constant prediction); NaN with ``agents=None``
        or without an environment of 3 rows per agent and a non-constant target.
    """
    from scipy.stats import spearmanr
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def probe():
        return make_pipeline(StandardScaler(), RidgeCV(np.logspace(-3, 3, 13)))

    n_splits = min(4, len(np.unique(groups)))
    pred = (cross_val_predict(probe(), features, target, groups=groups,
                              cv=GroupKFold(n_splits)) if n_splits >= 2 else None)
    per_grid = []
    for g in np.unique(groups) if agents is not None else ():
        for a in (0, 1):
            fit_on = (groups == g) & (agents == a)
            test_on = (groups == g) & (agents == 1 - a)
            if fit_on.sum() < 3 or test_on.sum() < 3 or np.ptp(target[test_on]) == 0:
                continue
            p = probe().fit(features[fit_on], target[fit_on]).predict(features[test_on])
            per_grid.append(spearmanr(p, target[test_on]).statistic if np.ptp(p) > 0
                            else 0.0)
    return (float(spearmanr(pred, target).statistic) if pred is not None else float("nan"),
            float(np.mean(per_grid)) if per_grid else float("nan"))


def retest_spearman(first, second):
    """How well two Monte-Carlo estimates of the same values agree (a probe's ceiling).

    Parameters
    ----------
    first, second : ndarray of shape (n_agents, n_states)
        Two estimates (NaN: not estimated).

    Returns
    -------
    pooled : float
        Spearman correlation over every cell both estimated (NaN under 3 cells).
    per_agent : float
        Mean of each agent's correlation over its cells, for agents with at least 3 of
        them and non-constant estimates (NaN for none).
    """
    from scipy.stats import spearmanr

    both = ~np.isnan(first) & ~np.isnan(second)
    per_agent = [spearmanr(a[m], b[m]).statistic for a, b, m in zip(first, second, both)
                 if m.sum() >= 3 and np.ptp(a[m]) > 0 and np.ptp(b[m]) > 0]
    pooled = (float(spearmanr(first[both], second[both]).statistic)
              if both.sum() >= 3 else float("nan"))
    return pooled, float(np.mean(per_agent)) if per_agent else float("nan")
