"""The continual experiment: its pieces, and a tiny end-to-end run."""

import numpy as np
import pytest
from scipy import stats

from sklearn_papers.reproduce import continual, get_experiments
from sklearn_papers.reproduce._claims import CONFIDENCE, RULES
from sklearn_papers.reproduce._digits import load_split
from sklearn_papers.reproduce._registry import RunContext

TINY = dict(seeds=1, n_jobs=1, max_epochs=1, generator_steps=2, gan_steps=2, pnn_epochs=1,
            transfer_seeds=2, transfer_epochs=1, low_data_epochs=1, hidden=(8,))


def test_registered_under_its_name():
    assert get_experiments()["continual"] is continual.EXPERIMENT


def test_split_digits_tasks():
    np.testing.assert_array_equal(continual.split_tasks(np.arange(10)),
                                  [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def test_paired_interval_is_the_paired_t_interval():
    rng = np.random.RandomState(0)
    a, b = rng.normal(1, 1, 12), rng.normal(0, 1, 12)
    mean, lo, hi = continual.paired_interval(a, b)
    d = a - b
    ref = stats.t.interval(CONFIDENCE, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert mean == pytest.approx(d.mean())
    assert (lo, hi) == pytest.approx(ref)


def test_tiny_run_writes_verdicts_and_plots(tmp_path, monkeypatch):
    monkeypatch.setattr(continual, "PROTOCOL", continual.PROTOCOL.but(**TINY))
    monkeypatch.setattr(continual, "PROTOCOL_FOLLOWUP",
                        continual.PROTOCOL_FOLLOWUP.but(replay_seeds=1, curve_seeds=2))
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="continual")
    section = continual.run(ctx)
    assert "`continual_followup`" in section.markdown
    outcomes = {v.claim: v.outcome for v in section.verdicts}
    # frozen columns, whatever the budget
    assert outcomes["task 1's predict_proba bit-identical after tasks 2-5"] == "holds"
    assert section.find("bit-identical").rule == "every seed"
    assert set(outcomes) >= {"fine-tuning forgets", "joint training reaches 95 %",
                             "generative replay (VAE) closes 0.75 of the gap",
                             "generative replay (GAN) closes 0.75 of the gap",
                             "prior-focused stays near fine-tuning",
                             "forward transfer: progressive networks beat a fresh column",
                             "progressive networks beat fine-tuning"}
    # one seed: no interval, so no rule reaches "holds" on a paired comparison
    assert section.find("fresh column").outcome == "inconclusive"
    assert all(v.rule in RULES for v in section.verdicts)
    assert all(p.exists() and p.stat().st_size > 0 for p in section.figures)
    # the follow-up, an experiment of its own, reads the main runs kept in this run
    computed = list(ctx.computed)
    ctx.experiment, ctx.computed = "continual_followup", []
    follow = continual.EXPERIMENT_FOLLOWUP.run(ctx)
    assert not any(k.startswith(("ci/", "ft/")) for k in ctx.computed)
    assert sorted(k for k in ctx.computed) == sorted(
        k for k in ctx.computed if k.startswith(("rq/", "tc/"))) and computed
    for text in ["Forward transfer against the labels budget:", "labels per class",
                 "why GAN replay closes less of the gap", "Explanation:", "coverage"]:
        assert text in follow.markdown, text
    assert "the table's runs' in 2/2)" in follow.markdown  # probed runs repeat the table's
    assert "No replay of replay" in follow.markdown  # generators are frozen once trained
    assert {v.claim for v in follow.verdicts} == {
        f"forward transfer with {n} labels per class" for n in (1, 2, 3, 5, 10)}
    assert len(follow.figures) == 2


def test_transfer_curve_at_ten_labels_is_the_main_tables_forward_transfer():
    data = load_split(0)
    one = continual.transfer_curve(*data, seed=3, cfg=TINY, sizes=(10,))[10]
    curve = continual.transfer_curve(*data, seed=3, cfg=TINY, sizes=(1, 10))
    assert curve[10] == one  # same 0-4 networks, same 10 rows per class
    assert set(curve[1]) == set(one)


def test_replay_diagnostics_probe_every_task():
    out = continual.replay_diagnostics("vae", *load_split(0), seed=0, cfg=TINY)
    for key in ("real", "replayed", "oracle", "spread", "coverage", "precision", "distance",
                "drift", "told_apart"):
        assert len(out[key]) == 5, key
    assert out["drift"] == [0.0] * 5  # one frozen generator per class: no replay of replay
    assert 0 <= out["tstr"] <= 1 and 0 <= out["tstr_task1"] <= 1


def test_quick_run_leaves_the_replay_quality_follow_up_to_the_full_mode():
    assert continual.PROTOCOL_FOLLOWUP.settings(True)["replay_seeds"] == 0
    assert "replay_seeds: 0 instead of 5" in continual.PROTOCOL_FOLLOWUP.note(True)
    assert "seeds: 2 instead of 5" in continual.PROTOCOL.note(True)
    assert continual.PROTOCOL_FOLLOWUP.settings(False) == dict(replay_seeds=5, curve_seeds=20)


def test_full_mode_only_note_points_to_a_published_result():
    from sklearn_papers.reproduce._report import full_mode_only

    # docs/results/continual.rst (this checkout) holds the follow-up's full result
    note = full_mode_only("continual", continual._REPLAY_HEADING, "Why?")
    assert note.startswith(f"#### {continual._REPLAY_HEADING}\n\nWhy? ")
    assert "runs in full mode only" in note and "docs/results/continual.rst" in note
    missing = full_mode_only("continual", "Follow-up: not published", "Why?")
    assert "reproduce --only continual` (full mode)" in missing
