"""The claim rules: each outcome reached where it should, the boundary cases, bad input."""

import numpy as np
import pytest

from sklearn_papers.reproduce._claims import (
    HOLDS,
    INCONCLUSIVE,
    NOT_HOLDS,
    Claim,
    judge,
)

BEATS = Claim("A beats B", "accuracy", "paired interval")


def test_paired_interval_holds_fails_and_is_inconclusive():
    b = np.array([0.80, 0.82, 0.81, 0.79, 0.80])
    assert judge(BEATS, b + 0.05 + [0.0, 0.01, -0.01, 0.0, 0.005], b).outcome == HOLDS
    assert judge(BEATS, b - 0.05 + [0.0, 0.01, -0.01, 0.0, 0.005], b).outcome == NOT_HOLDS
    assert judge(BEATS, b + [0.02, -0.02, 0.01, -0.01, 0.0], b).outcome == INCONCLUSIVE


def test_a_lower_error_is_judged_with_the_direction_flipped():
    claim = Claim("A has the lower MSE", "MSE", "paired interval", higher_is_better=False)
    verdict = judge(claim, [0.50, 0.52, 0.49], [0.70, 0.71, 0.69])
    assert verdict.outcome == HOLDS and verdict.estimate > 0


def test_one_seed_is_inconclusive_for_interval_rules():
    verdict = judge(BEATS, [0.9], [0.1])
    assert verdict.outcome == INCONCLUSIVE
    assert "one seed" in verdict.short()


def test_a_small_change_near_the_boundary_does_not_flip_holds_into_does_not_hold():
    # two hosts whose numbers differ by floating-point-sized amounts give the same verdict
    rng = np.random.default_rng(0)
    b = rng.normal(0.7, 0.02, size=3)
    a = b + np.array([0.03, -0.01, 0.0])
    outcomes = {judge(BEATS, a + rng.normal(0, 1e-3, size=3), b).outcome for _ in range(50)}
    assert outcomes == {INCONCLUSIVE}


def test_mean_interval_against_a_threshold():
    claim = Claim("IoU reaches 0.85", "IoU", "mean interval", threshold=0.85)
    assert judge(claim, [0.90, 0.91, 0.92]).outcome == HOLDS
    assert judge(claim, [0.70, 0.71, 0.72]).outcome == NOT_HOLDS
    assert judge(claim, [0.84, 0.86, 0.85]).outcome == INCONCLUSIVE
    lower = Claim("error at most 0.6", "error", "mean interval", threshold=0.6,
                  higher_is_better=False)
    assert judge(lower, [0.50, 0.52, 0.51]).outcome == HOLDS
    assert judge(lower, [0.70, 0.72, 0.71]).outcome == NOT_HOLDS


def test_every_seed_and_equivalence():
    every = Claim("A beats B on every seed", "sharpness", "every seed")
    assert judge(every, [2, 3, 4], [1, 2, 3]).outcome == HOLDS
    assert judge(every, [0, 1, 2], [1, 2, 3]).outcome == NOT_HOLDS
    assert judge(every, [2, 1, 4], [1, 2, 3]).outcome == INCONCLUSIVE
    tie = Claim("A ties with B", "MSE", "equivalence", margin=0.1)
    assert judge(tie, [1.0, 1.01, 0.99, 1.0], [1.0, 1.0, 1.0, 1.01]).outcome == HOLDS
    assert judge(tie, [2.0, 2.01, 1.99, 2.0], [1.0, 1.0, 1.0, 1.01]).outcome == NOT_HOLDS


def test_a_fixed_reference_is_a_scalar():
    assert judge(BEATS, [0.91, 0.92, 0.90], 0.6).outcome == HOLDS


def test_bad_input_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="paired by seed"):
        judge(BEATS, [1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN or inf"):
        judge(BEATS, [1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="no values"):
        judge(BEATS, [], [])
    with pytest.raises(ValueError, match="pass b"):
        judge(BEATS, [1.0, 2.0])
    with pytest.raises(ValueError, match="rule must be one of"):
        Claim("x", "y", "t-test")
    with pytest.raises(ValueError, match="needs a threshold"):
        Claim("x", "y", "mean interval")
    with pytest.raises(ValueError, match="positive margin"):
        Claim("x", "y", "equivalence")


def test_the_table_names_the_rule_next_to_each_verdict():
    from sklearn_papers.reproduce._result import Result

    result = Result()
    rows = result.verdict_rows([judge(BEATS, [0.9, 0.91, 0.92], [0.5, 0.52, 0.5])])
    assert rows[0]["claim"] == "A beats B"
    assert result.verdicts[0].outcome == HOLDS and result.verdicts[0].rule == "paired interval"
    assert result.fill(rows[0]["here"]).startswith("**holds** (paired interval, 90 %")


def test_all_of_and_at_least_combine_the_parts_outcomes():
    from sklearn_papers.reproduce._claims import all_of, at_least

    b = [0.8, 0.81, 0.79]
    yes = judge(BEATS, [0.9, 0.92, 0.91], b)
    no = judge(BEATS, [0.7, 0.69, 0.71], b)
    maybe = judge(BEATS, [0.85, 0.78, 0.8], b)
    assert (yes.outcome, no.outcome, maybe.outcome) == (HOLDS, NOT_HOLDS, INCONCLUSIVE)
    assert all_of(yes, yes) == HOLDS and all_of(yes, maybe) == INCONCLUSIVE
    assert all_of(yes, maybe, no) == NOT_HOLDS
    assert at_least(2, yes, yes, no) == HOLDS
    assert at_least(2, yes, no, no) == NOT_HOLDS  # two of three can no longer hold
    assert at_least(2, yes, maybe, no) == INCONCLUSIVE
    with pytest.raises(ValueError, match="between 1 and the 3 parts"):
        at_least(4, yes, no, maybe)


def test_negation_swaps_holds_and_does_not_hold():
    from sklearn_papers.reproduce._claims import all_of, negation

    b = [0.8, 0.81, 0.79]
    yes = judge(BEATS, [0.9, 0.92, 0.91], b)
    no = judge(BEATS, [0.7, 0.69, 0.71], b)
    maybe = judge(BEATS, [0.85, 0.78, 0.8], b)
    assert (negation(yes), negation(no), negation(maybe)) == (NOT_HOLDS, HOLDS, INCONCLUSIVE)
    assert all_of(negation(no), yes) == HOLDS  # outcomes and verdicts mix


def test_declared_claims_are_found_by_key_and_filled_per_setting():
    from sklearn_papers.reproduce._claims import declare
    from sklearn_papers.reproduce._result import Result

    claims = declare(Claim("L_out beats L_in at {views} views", "accuracy", "paired interval",
                           key="at", arms=("L_out, {views} views", "L_in")),
                     Claim("L_out beats L_in everywhere", "accuracy", "all of", key="all",
                           arms=("L_out", "L_in")))
    at4 = claims["at"].at(views=4)
    assert at4.statement == "L_out beats L_in at 4 views"
    assert at4.arms == ("L_out, 4 views", "L_in")
    with pytest.raises(KeyError, match="views"):
        claims["at"].at(seeds=3)
    with pytest.raises(KeyError, match=r"no claim 'nope'.*\['all', 'at'\]"):
        claims["nope"]
    res = Result()
    part = judge(at4, [2.0, 3.0, 4.0], [1.0, 1.5, 1.0])
    res.verdict(part)
    res.verdict(HOLDS, claim=claims["all"], parts=[part])
    first, combined = res.verdicts
    assert first.arms == ["L_out, 4 views", "L_in"] and first.claim == at4.statement
    assert (combined.claim, combined.rule, combined.arms) == (
        "L_out beats L_in everywhere", "all of", ["L_out", "L_in"])
    assert len(combined.parts) == 1


def test_declare_refuses_missing_or_repeated_keys_and_judge_refuses_combined_claims():
    from sklearn_papers.reproduce._claims import declare

    with pytest.raises(ValueError, match="no key"):
        declare(BEATS)
    keyed = Claim("A beats B", "accuracy", "paired interval", key="ab")
    with pytest.raises(ValueError, match="'ab'"):
        declare(keyed, keyed)
    with pytest.raises(TypeError, match="Claim objects"):
        declare("A beats B")
    with pytest.raises(ValueError, match="at least K of"):
        Claim("A", "m", "most of")
    combined = Claim("A and B", "m", "at least 2 of", key="ab")
    assert combined.combined and not keyed.combined
    with pytest.raises(ValueError, match="made of parts"):
        judge(combined, [1.0, 2.0])
