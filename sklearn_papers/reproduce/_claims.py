"""Claims of the papers and the rules that judge them: holds, does not hold, inconclusive.

Every experiment states what it checks as a :class:`Claim` (what is compared, on which
metric, in which direction, with what margin) and judges it on per-seed numbers with one of
a few named rules, so that every verdict in the report is reached the same way and says
which rule reached it:

``paired interval``
    "A beats B": the per-seed differences ``d_s = A_s - B_s`` (signed so that positive
    favours A), a two-sided Student-t interval of their mean at :data:`CONFIDENCE`. Holds
    when the whole interval is above ``margin``; does not hold when the whole interval is at
    or below ``margin``; inconclusive otherwise (also with one seed: no spread, no interval).
``mean interval``
    "A reaches a threshold": the t interval of A's mean over seeds against ``threshold``.
    Holds when the interval is on the claimed side of the threshold, does not hold when it
    is on the other side, inconclusive when it contains the threshold.
``every seed``
    "A beats B on every seed": holds when every paired difference exceeds ``margin``, does
    not hold when none does, inconclusive when some do.
``equivalence``
    "A ties with B": the paired interval lies inside ``[-margin, margin]`` (holds), or
    entirely outside it (does not hold); otherwise inconclusive.

A borderline result is inconclusive on every machine, rather than "holds" on one CPU and
"does not hold" on another: small floating-point differences between hosts move a mean,
and an interval that straddles the boundary says the run cannot decide.

A claim made of parts names how its parts combine instead of a rule: ``"all of"``
(:func:`all_of`), ``"at least K of"`` (:func:`at_least`) or ``"negation"``
(:func:`negation`); :func:`judge` refuses it, its outcome comes from those functions. A
claim on one measurement of a fixed object (no seeds) has the rule ``"measured once"``:
the experiment compares the value with its bound.

Declaring the claims
--------------------
An experiment module declares the claims it checks at its top, as data, before any code::

    CLAIMS = declare(
        Claim("L_out >= L_in (2 views)", "linear-probe test accuracy (%)",
              "paired interval", key="out_vs_in",
              arms=("SupCon L_out, 2 views", "SupCon L_in, 2 views"),
              paper="78.7 vs 67.4 top-1 (ImageNet, Table 1)"),
        Claim("L_out beats L_in at {views} views", "linear-probe accuracy",
              "paired interval", key="ahead_at", arms=("L_out", "L_in")),
        Claim("L_out beats L_in at every number of views", "linear-probe accuracy",
              "all of", key="ahead", arms=("L_out", "L_in")),
    )

and ``run`` judges them by key: ``judge(CLAIMS["out_vs_in"], a, b)``; a claim checked at
several settings has ``{placeholders}`` filled by :meth:`Claim.at`
(``CLAIMS["ahead_at"].at(views=4)``). :meth:`~._result.Result.verdict` takes the arms and
the words from the claim, so the report, ``REPORT.json`` and the tests name each claim as
it is declared, and the declarations list every claim an experiment can return.
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

#: Rules of claims that :func:`judge` does not judge: how the parts of a claim made of
#: parts combine (``K`` a positive count), or ``"measured once"``, one measurement of a
#: fixed object (no seeds, so no interval) read against a bound by the experiment.
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
        How the numbers are judged, or how the parts of a claim made of parts combine
        (module docstring).
    higher_is_better : bool, default=True
        Direction of the metric: for an error (MSE, error rate) set False, and the
        differences are taken as ``B - A``.
    margin : float, default=0.0
        For ``"paired interval"`` and ``"every seed"``: the least advantage of A, in metric
        units, that counts. For ``"equivalence"``: the half-width of the tie band (must be
        positive).
    threshold : float or None, default=None
        For ``"mean interval"``: the value A's mean must reach (``>=`` when higher is
        better, ``<=`` otherwise).
    paper : str, default=""
        What the paper reports, for the report.
    unit : str, default="seeds"
        What one value of ``a`` is (the report says "3 of 3 seeds"): ``"seeds"`` for per-seed
        numbers, e.g. ``"estimates"`` when the values are independent draws of one
        estimator, ``"starts"`` for starting points.
    arms : tuple of str, default=()
        What is compared, the claimed side (A) first; the verdict records list them.
    key : str, default=""
        Short name by which ``run`` finds the claim in its module's :func:`declare`
        (e.g. ``"out_vs_in"``).

    Notes
    -----
    ``statement``, ``metric``, ``paper`` and ``arms`` may hold ``{placeholders}`` for a
    claim checked at several settings; :meth:`at` fills them in.
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
        """Whether :func:`judge` does not judge it: a claim made of parts (its outcome
        comes from :func:`all_of`, :func:`at_least` or :func:`negation`) or one
        ``"measured once"``."""
        return self.rule not in RULES

    def at(self, **values):
        """This claim with the ``{placeholders}`` of its statement, metric, paper and arms
        filled in from ``values``.

        Raises
        ------
        KeyError
            When a placeholder has no value (the message names it).
        """
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
    """The claims an experiment declares, by key (what :func:`declare` returns).

    A missing key raises a KeyError that lists the declared keys.
    """

    def __missing__(self, key):
        raise KeyError(f"no claim {key!r} is declared; the claims are {sorted(self)}")


def declare(*claims):
    """The claims of an experiment module, by their keys, in order.

    Parameters
    ----------
    *claims : Claim
        Each with a distinct, non-empty ``key``.

    Returns
    -------
    claims : Claims
        ``{key: Claim}``.

    Raises
    ------
    ValueError
        For a claim without a key, or two claims with one key.
    TypeError
        For something that is not a :class:`Claim`.
    """
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
        The mean difference in A's favour (paired rules), or A's mean (``"mean interval"``).
    interval : tuple of float
        The t interval of ``estimate`` at :data:`CONFIDENCE` (``(nan, nan)`` with one seed).
    n_seeds : int
    wins : int
        Seeds on which A is ahead by more than ``margin`` (paired rules), or on the claimed
        side of the threshold.
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

    def text(self, digits=3):
        """One line: outcome in bold, the rule, the estimate with its interval and the
        seeds that favour the claim."""
        outcome, rest = self.short(digits).split(" (", 1)
        return f"**{outcome}** ({rest}"

    def short(self, digits=3):
        """:meth:`text` without markup."""
        return describe(self.outcome, self.claim.rule, self.estimate, self.interval,
                        self.wins, self.n_seeds, self.claim.unit, digits)


def describe(outcome, rule, estimate, interval, wins, n, unit="seeds", digits=3):
    """``"holds (paired interval, 90 %: advantage +0.012 [+0.003, +0.021]; 3 of 3 seeds)"``:
    a verdict's outcome with its rule and numbers (what :meth:`Verdict.short` and the
    verdict records of :mod:`._result` write)."""
    lo, hi = interval
    if rule == "mean interval":
        what = f"mean {estimate:.{digits}f}"
    else:
        what = f"advantage {estimate:+.{digits}f}"
    spread = (f" [{lo:+.{digits}f}, {hi:+.{digits}f}]" if np.isfinite(lo) else
              f" (one {unit.rstrip('s')}: no interval)")
    if rule == "mean interval":
        spread = spread.replace("+", "")
    return (f"{outcome} ({rule}, {int(CONFIDENCE * 100)} %: {what}"
            f"{spread}; {wins:,} of {n:,} {unit})")


def _interval(values):
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
        For no values, NaN or inf values, or unpaired lengths, and for a claim made of
        parts (combine its parts' verdicts with :func:`all_of`, :func:`at_least` or
        :func:`negation`).
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
    """The outcome of the opposite claim ("A is no better than B by more than ``margin``"
    for "A beats B by more than ``margin``"): holds where ``verdict`` does not hold and
    the other way round; inconclusive stays inconclusive."""
    return {HOLDS: NOT_HOLDS, NOT_HOLDS: HOLDS}.get(_outcome(verdict), INCONCLUSIVE)


def all_of(*verdicts):
    """The outcome of a claim made of several parts that must all hold: does not hold when
    one part does not, holds when every part does, else inconclusive. A part is a
    :class:`Verdict` or an outcome (e.g. of :func:`negation`)."""
    outcomes = [_outcome(v) for v in verdicts]
    if NOT_HOLDS in outcomes:
        return NOT_HOLDS
    return HOLDS if all(o == HOLDS for o in outcomes) else INCONCLUSIVE


def at_least(k, *verdicts):
    """The outcome of "at least ``k`` of these parts hold" (e.g. "beats ECFP on at least two
    of three data sets"): holds when ``k`` parts hold, does not hold when so many parts do
    not hold that ``k`` cannot be reached, else inconclusive.

    Raises
    ------
    ValueError
        When ``k`` is not between 1 and the number of parts.
    """
    if not 1 <= k <= len(verdicts):
        raise ValueError(f"k must be between 1 and the {len(verdicts)} parts, got {k}")
    outcomes = [_outcome(v) for v in verdicts]
    if outcomes.count(HOLDS) >= k:
        return HOLDS
    if len(outcomes) - outcomes.count(NOT_HOLDS) < k:
        return NOT_HOLDS
    return INCONCLUSIVE
