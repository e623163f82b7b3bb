"""The grover experiment's follow-up of the ESOL claim: its pieces and a tiny end-to-end run."""

import numpy as np
import pytest

from sklearn_papers.reproduce import RunContext, grover
from sklearn_papers.reproduce._result import Result


def test_subset_is_a_seeded_share_of_the_training_part():
    train = np.arange(100, 200)
    a, b = grover._subset(train, 0.25, 3), grover._subset(train, 0.25, 3)
    np.testing.assert_array_equal(a, b)
    assert len(a) == 25 and set(a) <= set(train) and np.all(np.diff(a) > 0)
    assert len(grover._subset(train, 0.01, 0)) == 8  # never fewer than 8 molecules


def _fake(test, train=0.5):
    return {"test": test, "train": train, "loss_curve": [1.0], "cpu_seconds": 1.0,
            "n_train": 10}


def _gap(esol_other, esol_nn):
    gap = {}
    for name, other, nn in (("MOSES (held out)", 0.0, 0.5), ("BBBP", 0.02, 0.3),
                            ("ESOL", esol_other, esol_nn), ("FreeSolv", 0.05, 0.25)):
        gap[name] = {"atom_other/moses-small": other, "nn_tanimoto": np.full(4, nn)}
    return gap


def test_followup_verdicts_follow_the_numbers():
    from sklearn_papers.reproduce._claims import HOLDS, INCONCLUSIVE, NOT_HOLDS

    main = {"grover_finetuned": [1.1, 1.2, 1.15], "grover_scratch": [1.0, 1.0, 1.0]}
    big = {"finetuned": [_fake(0.9), _fake(0.92), _fake(0.88)],
           "scratch": [_fake(1.0), _fake(1.01), _fake(1.0)]}
    curve = {0.1: {"finetuned": [_fake(1.5), _fake(1.52), _fake(1.49)],
                   "scratch": [_fake(1.8), _fake(1.83), _fake(1.79)]}}
    v = grover._followup_verdicts(big, grover._curve(curve, main, 100), _gap(0.01, 0.35))
    assert v["big"].outcome == v["few"].outcome == v["grow"].outcome == HOLDS
    assert v["big"].rule == "paired interval" and v["big"].n_seeds == 3
    assert not v["far_vocab"] and not v["far_nn"]
    assert v["small_gain"] == pytest.approx(-0.15)
    assert v["big_gain"] == pytest.approx(0.1033, abs=1e-4)

    big = {"finetuned": [_fake(1.2), _fake(1.21)], "scratch": [_fake(1.0), _fake(1.02)]}
    curve = {0.1: {"finetuned": [_fake(2.0), _fake(2.05)],
                   "scratch": [_fake(1.8), _fake(1.82)]}}
    main = {model: scores[:2] for model, scores in main.items()}
    v = grover._followup_verdicts(big, grover._curve(curve, main, 100), _gap(0.09, 0.1))
    assert v["big"].outcome == v["few"].outcome == NOT_HOLDS and v["far_vocab"] and v["far_nn"]

    # one seed: no interval, so every seed-dependent answer is inconclusive
    curve = {0.1: {k: x[:1] for k, x in curve[0.1].items()}}
    main = {model: scores[:1] for model, scores in main.items()}
    v = grover._followup_verdicts({k: x[:1] for k, x in big.items()},
                                  grover._curve(curve, main, 100), _gap(0.09, 0.1))
    assert v["big"].outcome == v["few"].outcome == v["grow"].outcome == INCONCLUSIVE


def test_main_claims_are_judged_per_data_set_by_the_paired_interval_rule():
    better = {"grover_finetuned": [0.9, 0.91, 0.92], "grover_scratch": [0.8, 0.82, 0.8],
              "ecfp_rf": [0.95, 0.96, 0.97]}
    lower = {"grover_finetuned": [1.0, 1.02, 1.01], "grover_scratch": [1.2, 1.21, 1.25],
             "ecfp_rf": [0.9, 0.92, 0.93]}
    result = Result()
    grover._main_claims(result, {"BBBP": better, "ESOL": lower, "FreeSolv": lower})
    pre = result.find("pretraining beats no pretraining")
    ecfp = result.find("beats ECFP + random forest on at least two")
    assert pre.outcome == "holds" and pre.rule == "all of"  # every data set: fine-tuned wins
    assert ecfp.outcome == "does not hold" and ecfp.rule == "at least 2 of"  # ECFP wins
    assert [p.outcome for p in pre.parts] == ["holds"] * 3
    assert {p.rule for p in pre.parts} == {"paired interval"}
    assert result.find("ESOL: fine-tuned beats scratch").arms == ["grover_finetuned",
                                                                  "grover_scratch"]


def test_the_followup_is_an_experiment_of_its_own():
    from sklearn_papers.reproduce import get_experiments

    experiments = get_experiments()
    assert experiments["grover_followup"] is grover.EXPERIMENT_FOLLOWUP
    assert experiments["grover"].run is grover.run


def test_followup_runs_end_to_end_and_caches_its_parts(tmp_path, monkeypatch):
    monkeypatch.setattr(grover, "PROTOCOL_FOLLOWUP", grover.PROTOCOL_FOLLOWUP.but(
        seeds=1, fractions=(0.5,), n_ref=20, n_held=10))
    settings = dict(grover.PROTOCOL.settings(True), n_max=40, epochs=1)
    main = {"grover_finetuned": [1.5], "grover_scratch": [1.4]}
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="grover")
    result = Result()
    md, fig, res = grover.followup(ctx, result, settings, (0,), main)
    assert {v.claim for v in result.verdicts} >= {
        "moses-176k fine-tuned beats its architecture from scratch"}
    assert all(v.n == 1 and v.outcome == "inconclusive" for v in result.verdicts)
    assert fig.is_file() and "### Follow-up" in md
    assert set(res["gap"]) == {"MOSES (held out)", "BBBP", "ESOL", "FreeSolv"}
    for row in res["gap"].values():
        assert 0 <= row["atom_other/moses-176k"] <= 1 and row["heavy_atoms"] > 0
        assert np.all((row["nn_tanimoto"] >= 0) & (row["nn_tanimoto"] <= 1))
    assert res["gap"]["MOSES (held out)"]["n_molecules"] == 10
    part = res["big"]["finetuned"][0]
    assert part["n_train"] == 32 and len(part["loss_curve"]) == 1
    assert res["curve"][0.5]["scratch"][0]["n_train"] == 16
    # every follow-up part is cached under a key of its own
    cached = {p.name.split("-")[0] for p in ctx.cache_dir().glob("*.pkl")}
    assert any(c.startswith("followup_ESOL_seed=0_176k_finetuned") for c in cached)
    assert any(c.startswith("followup_domain_gap") for c in cached)
