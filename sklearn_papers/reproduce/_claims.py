"""Claims of the papers and the rules that judge them: holds, does not hold, inconclusive.

An experiment module declares its claims at its top (``CLAIMS = declare(Claim(...), ...)``)
and ``run`` judges them on per-seed numbers, ``judge(CLAIMS["out_vs_in"], a, b)``, with one
of the :data:`RULES` (docs/reproduce.rst). A borderline result is inconclusive, so that
rounding differences between machines cannot flip a verdict.
"""

import re
import string
from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["CONFIDENCE", "HOLDS", "INCONCLUSIVE", "NOT_HOLDS", "OUTCOMES", "RULES", "Claim",
           "Claims", "Verdict", "all_of", "at_least", "declare", "describe", "judge",
           "negation"]

#: Coverage of the two-sided t intervals of the rules. A directional claim ("A beats B")
#: reads one end of the interval, so it is decided at the one-sided 95 % level.
CONFIDENCE = 0.9

HOLDS, NOT_HOLDS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"

#: The three outcomes of a verdict.
OUTCOMES = (HOLDS, NOT_HOLDS, INCONCLUSIVE)

#: The rules' names, as the report prints them next to each verdict.
RULES = ("paired interval", "mean interval", "every seed", "equivalence")

#: Rules that :func:`judge` does not judge: how a claim's parts combine, or one
#: measurement of a fixed object read against a bound by the experiment.
COMBINED = re.compile(r"^(all of|negation|at least [1-9][0-9]* of|measured once)$")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as an experiment checks it.

    Attributes
    ----------
    statement : str
        The claim in words, e.g. ``"RoIAlign beats RoIPool on AP75"``.
    metric : str
        Name of the metric compared (for the report).
    rule : {"paired interval", "mean interval", "every seed", "equivalence", \
            "all of", "at least K of", "negation"}
        How the numbers are judged (:func:`judge`), or how the parts combine.
    higher_is_better : bool, default=True
        False for an error (MSE): the differences are then ``B - A``.
    margin : float, default=0.0
        The least advantage of A that counts (``"paired interval"``, ``"every seed"``), or
        the half-width of the tie band (``"equivalence"``, positive).
    threshold : float or None, default=None
        For ``"mean interval"``: the value A's mean must reach.
    paper : str, default=""
        What the paper reports, for the report.
    unit : str, default="seeds"
        What one value of ``a`` is (the report says "3 of 3 seeds").
    arms : tuple of str, default=()
        What is compared, the claimed side (A) first.
    key : str, default=""
        Name by which ``run`` finds the claim in its module's :func:`declare`.

    Notes
    -----
    ``statement``, ``metric``, ``paper`` and ``arms`` may hold ``{placeholders}``, filled in
    by :meth:`at` for a claim checked at several settings.
    """

    statement: str
    metric: str
    rule: str
    higher_is_better: bool = True
    margin: float = 0.0
    threshold: float = None
    paper: str = ""
    unit: str = "seeds"
    arms: tuple = ()
    key: str = ""

    def __post_init__(self):
        if self.rule not in RULES and not COMBINED.match(self.rule):
            raise ValueError(f"rule must be one of {RULES}, 'all of', 'at least K of' or "
                             f"'negation' or 'measured once', got {self.rule!r}")
        object.__setattr__(self, "arms", tuple(self.arms))
        if self.rule == "mean interval" and self.threshold is None:
            raise ValueError("the 'mean interval' rule needs a threshold")
        if self.rule == "equivalence" and not self.margin > 0:
            raise ValueError("the 'equivalence' rule needs a positive margin (the tie band)")

    @property
    def combined(self):
        """Whether :func:`judge` does not judge it (made of parts, or measured once)."""
        return self.rule not in RULES

    def at(self, **values):
        """This claim with its ``{placeholders}`` filled in from ``values``; a KeyError
        names a placeholder without a value."""
        def fill(text):
            names = {n for _, n, _, _ in string.Formatter().parse(text) if n}
            missing = names - set(values)
            if missing:
                raise KeyError(f"claim {self.key or self.statement!r} needs a value for "
                               f"{sorted(missing)}")
            return text.format(**values)

        return replace(self, statement=fill(self.statement), metric=fill(self.metric),
                       paper=fill(self.paper), arms=tuple(fill(a) for a in self.arms))


class Claims(dict):
    """The claims an experiment declares, by key; a missing key's KeyError lists them."""

    def __missing__(self, key):
        raise KeyError(f"no claim {key!r} is declared; the claims are {sorted(self)}")


def declare(*claims):
    """``Claims({key: Claim})`` of an experiment module, in order: a ValueError for a
    missing or repeated key, a TypeError for something that is not a :class:`Claim`."""
    found = Claims()
    for claim in claims:
        if not isinstance(claim, Claim):
            raise TypeError(f"declare takes Claim objects, got {claim!r}")
        if not claim.key:
            raise ValueError(f"claim {claim.statement!r} has no key: give key='...'")
        if claim.key in found:
            raise ValueError(f"two claims have the key {claim.key!r}: give each its own")
        found[claim.key] = claim
    return found


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`judge`.

    Attributes
    ----------
    claim : Claim
    outcome : {"holds", "does not hold", "inconclusive"}
    estimate : float
        The mean difference in A's favour, or A's mean (``"mean interval"``).
    interval : tuple of float
        The t interval of ``estimate`` at :data:`CONFIDENCE` (``(nan, nan)`` with one seed).
    n_seeds : int
    wins : int
        Seeds on the claimed side (of ``margin``, or of the threshold).
    numbers : dict
        The values the rule read (``"a"``, ``"b"``, ``"threshold"``).
    """

    claim: Claim
    outcome: str
    estimate: float
    interval: tuple
    n_seeds: int
    wins: int
    numbers: dict = field(default_factory=dict)

    @property
    def rule(self):
        return self.claim.rule

    def short(self, digits=3):
        """The outcome with the rule, estimate, interval and wins (:func:`describe`)."""
        return describe(self.outcome, self.claim.rule, self.estimate, self.interval,
                        self.wins, self.n_seeds, self.claim.unit, digits)


def bold_outcome(text):
    """``"**holds** (paired interval, ...)"`` for ``"holds (paired interval, ...)"``."""
    outcome, paren, rest = text.partition(" (")
    return f"**{outcome}**{paren}{rest}"


def describe(outcome, rule, estimate, interval, wins, n, unit="seeds", digits=3):
    """``"holds (paired interval, 90 %: advantage +0.012 [+0.003, +0.021]; 3 of 3 seeds)"``:
    a verdict's outcome with its rule and numbers."""
    lo, hi = interval
    sign = "" if rule == "mean interval" else "+"  # a mean, or an advantage
    what = f"{'mean' if sign == '' else 'advantage'} {estimate:{sign}.{digits}f}"
    spread = (f" [{lo:{sign}.{digits}f}, {hi:{sign}.{digits}f}]" if np.isfinite(lo) else
              f" (one {unit.rstrip('s')}: no interval)")
    return (f"{outcome} ({rule}, {int(CONFIDENCE * 100)} %: {what}"
            f"{spread}; {wins:,} of {n:,} {unit})")


def _interval(values):
    """The mean of ``values`` and its two-sided t interval at :data:`CONFIDENCE`."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, (float("nan"), float("nan"))
    sem = float(values.std(ddof=1)) / np.sqrt(values.size)
    if sem == 0.0:
        return mean, (mean, mean)
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, values.size - 1)) * sem
    return mean, (mean - half, mean + half)


def _as_seeds(values, name):
    values = np.asarray(values, dtype=float).ravel()
    if values.size == 0:
        raise ValueError(f"{name} holds no values: judge a claim on at least one seed")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} holds NaN or inf ({values.tolist()}): a diverged run must "
                         "be reported, not judged")
    return values


def judge(claim, a, b=None):
    """Judge ``claim`` on per-seed numbers.

    Each rule reads a two-sided t interval at :data:`CONFIDENCE` (none with one seed:
    inconclusive). ``paired interval`` ("A beats B"): of the mean of ``A_s - B_s``; holds
    above ``margin``, does not hold at or below it. ``mean interval`` ("A reaches a
    threshold"): of A's mean, against ``threshold``. ``every seed``: holds when every
    difference exceeds ``margin``, does not hold when none does. ``equivalence`` ("A ties
    with B"): the paired interval inside ``[-margin, margin]`` holds, entirely outside does
    not hold. Anything else is inconclusive.

    Parameters
    ----------
    claim : Claim
    a : array-like of shape (n_seeds,)
        The metric of the claimed side (A), one value per seed.
    b : array-like of shape (n_seeds,), default=None
        The comparison (B), paired with ``a`` by seed; a scalar is a fixed reference (a
        method without randomness). Not used by ``"mean interval"``.

    Returns
    -------
    verdict : Verdict

    Raises
    ------
    ValueError
        For no values, NaN or inf values, unpaired lengths, or a claim made of parts.
    """
    if claim.combined:
        raise ValueError(f"{claim.statement!r} is made of parts ({claim.rule!r}): judge "
                         "its parts and combine them with all_of, at_least or negation")
    a = _as_seeds(a, "a")
    sign = 1.0 if claim.higher_is_better else -1.0
    if claim.rule == "mean interval":
        mean, (lo, hi) = _interval(a)
        t = float(claim.threshold)
        # distances on the claimed side of the threshold are positive
        lo_s, hi_s = sorted((sign * (lo - t), sign * (hi - t)))
        wins = int(np.sum(sign * (a - t) >= 0))
        outcome = (INCONCLUSIVE if not np.isfinite(lo) else
                   HOLDS if lo_s >= 0 else NOT_HOLDS if hi_s < 0 else INCONCLUSIVE)
        return Verdict(claim, outcome, mean, (lo, hi), a.size, wins,
                       {"a": a.tolist(), "threshold": t})
    if b is None:
        raise ValueError(f"the {claim.rule!r} rule compares two arms: pass b")
    b = np.asarray(b, dtype=float)
    b = np.full_like(a, float(b)) if b.ndim == 0 else _as_seeds(b, "b")
    if b.shape != a.shape:
        raise ValueError(f"a and b are paired by seed: got {a.size} and {b.size} values")
    diff = sign * (a - b)
    mean, (lo, hi) = _interval(diff)
    m = float(claim.margin)
    wins = int(np.sum(diff > m))
    if claim.rule == "every seed":
        outcome = HOLDS if wins == a.size else NOT_HOLDS if wins == 0 else INCONCLUSIVE
    elif not np.isfinite(lo):
        outcome = INCONCLUSIVE
    elif claim.rule == "paired interval":
        outcome = HOLDS if lo > m else NOT_HOLDS if hi <= m else INCONCLUSIVE
    else:  # equivalence
        inside = -m <= lo and hi <= m
        outside = lo > m or hi < -m
        outcome = HOLDS if inside else NOT_HOLDS if outside else INCONCLUSIVE
        wins = int(np.sum(np.abs(diff) <= m))
    return Verdict(claim, outcome, mean, (lo, hi), a.size, wins,
                   {"a": a.tolist(), "b": b.tolist()})


def _outcome(part):
    return part if isinstance(part, str) else part.outcome


def negation(verdict):
    """The outcome of the opposite claim: holds and does not hold swap, inconclusive stays."""
    return {HOLDS: NOT_HOLDS, NOT_HOLDS: HOLDS}.get(_outcome(verdict), INCONCLUSIVE)


def all_of(*verdicts):
    """Does not hold when one part does not, holds when every part does, else inconclusive
    (a part is a :class:`Verdict` or an outcome)."""
    outcomes = [_outcome(v) for v in verdicts]
    if NOT_HOLDS in outcomes:
        return NOT_HOLDS
    return HOLDS if all(o == HOLDS for o in outcomes) else INCONCLUSIVE


def at_least(k, *verdicts):
    """The outcome of "at least ``k`` of these parts hold": holds when ``k`` parts hold,
    does not hold when ``k`` cannot be reached, else inconclusive (a ValueError for ``k``
    not between 1 and the number of parts)."""
    if not 1 <= k <= len(verdicts):
        raise ValueError(f"k must be between 1 and the {len(verdicts)} parts, got {k}")
    outcomes = [_outcome(v) for v in verdicts]
    if outcomes.count(HOLDS) >= k:
        return HOLDS
    if len(outcomes) - outcomes.count(NOT_HOLDS) < k:
        return NOT_HOLDS
    return INCONCLUSIVE
