"""An experiment's result as data: tables and verdicts kept beside the text, rendered and
read back."""

import json

import numpy as np
import pytest

from sklearn_papers.reproduce._claims import HOLDS, INCONCLUSIVE, Claim, all_of, judge
from sklearn_papers.reproduce._result import Result, VerdictRecord

BEATS = Claim("A beats B", "accuracy", "paired interval")


def _result():
    result = Result()
    yes = judge(BEATS, [0.9, 0.92, 0.91], [0.8, 0.79, 0.81])
    maybe = judge(Claim("A reaches 0.85", "accuracy", "mean interval", threshold=0.85),
                  [0.9, 0.8, 0.86])
    text = "\n".join([
        "### Scores", "",
        result.table([{"model": "A", "accuracy": 0.91, "note": None},
                      {"model": "B|C", "accuracy": np.float64(0.8), "note": "`x`"}]), "",
        "- A beats B: " + result.verdict(yes, arms=("A", "B")) + " here.",
        "- Again: " + result.verdict(yes, style="outcome") + "; "
        + result.verdict(maybe, arms=("A",), style="plain", digits=2) + ".",
        "- Both: " + result.verdict(all_of(yes, maybe), claim="both", parts=[yes, maybe],
                                    rule="all of", style="parts"),
    ])
    return result.done(text, shortened="fewer seeds")


def test_markdown_fills_in_tables_and_verdicts():
    md = _result().markdown
    assert "| model | accuracy | note |\n|---|---|---|\n| A | 0.910 |  |\n| B\\|C | 0.800 | `x` |" \
        in md
    assert "- A beats B: **holds (paired interval, 90 %: advantage +0.110 [" in md
    assert "- Again: **holds** (paired interval" in md
    assert "inconclusive (mean interval, 90 %: mean 0.85 [" in md
    assert "- Both: **inconclusive** (holds (paired interval" in md
    assert "[[" not in md


def test_the_same_verdict_is_kept_once_with_its_record():
    result = _result()
    assert [v.outcome for v in result.verdicts] == [HOLDS, INCONCLUSIVE, INCONCLUSIVE]
    first = result.verdicts[0]
    assert first.claim == "A beats B" and first.arms == ["A", "B"]
    assert first.rule == "paired interval" and first.metric == "accuracy"
    assert first.n == 3 and first.wins == 3 and first.numbers["b"] == [0.8, 0.79, 0.81]
    assert first.estimate == pytest.approx(0.11)
    assert [p.outcome for p in result.verdicts[2].parts] == [HOLDS, INCONCLUSIVE]
    assert result.find("both").rule == "all of"
    with pytest.raises(KeyError, match="2 verdicts"):
        result.find("A")


def test_json_round_trip_renders_the_same_markdown():
    result = _result()
    data = json.loads(json.dumps(result.to_dict()))
    back = Result.from_dict(data)
    assert back.markdown == result.markdown
    assert data["tables"][0]["title"] == "Scores"
    assert data["verdicts"][0]["section"] == "Scores"
    assert back.find_table("Scores").rows[1]["accuracy"] == 0.8
    columns, rows = back.shown(back.tables[0])
    assert rows[1] == ["B|C", "0.800", "x"]


def test_a_verdict_without_numbers_needs_its_claim_and_a_valid_outcome():
    with pytest.raises(ValueError, match="needs the claim"):
        Result().verdict(HOLDS)
    with pytest.raises(ValueError, match="outcome must be one of"):
        VerdictRecord(claim="x", outcome="maybe", rule="all of")
    with pytest.raises(TypeError, match="Verdict or an outcome"):
        Result().verdict(0.5, claim="x")


def test_one_seed_verdict_has_no_interval_in_json():
    result = Result()
    result.verdict(judge(BEATS, [0.9], [0.8]))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdicts"][0]["interval"] == [None, None]
    assert "(one seed: no interval)" in Result.from_dict(data).verdicts[0].render()


def test_block_is_caption_table_and_one_line_per_verdict():
    result = Result()
    yes = judge(BEATS, [0.9, 0.92, 0.91], [0.8, 0.79, 0.81])
    lines = result.block("Scores of A and B.", [{"model": "A", "accuracy": 0.91}], [yes],
                         style="outcome", digits=2)
    assert lines[:4] == ["Scores of A and B.", "", "[[table:0]]", ""]
    assert lines[4] == "- A beats B: [[verdict:0:outcome]]" and lines[5] == ""
    md = result.done("\n".join(lines)).markdown
    assert "- A beats B: **holds** (paired interval, 90 %: advantage +0.11 [" in md
    both = result.verdict_line(all_of(yes), claim=Claim("A wins twice", "", "all of"),
                               parts=[yes])
    assert both.startswith("- A wins twice: [[verdict:1]]")
    assert result.block("No verdicts.", [{"a": 1}])[-2:] == ["[[table:1]]", ""]
