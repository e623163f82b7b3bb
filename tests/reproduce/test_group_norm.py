"""The group_norm follow-up's equal-epoch budgets: equal epochs, the first full run's
cached parts kept, and a tiny end-to-end run."""

import pytest

from sklearn_papers.reproduce import Result, RunContext, group_norm


@pytest.mark.parametrize("quick", [True, False])
def test_equal_epoch_budgets_give_both_batch_sizes_the_same_epochs(quick):
    cfg = group_norm.PROTOCOL_FOLLOWUP.settings(quick)
    small, big = cfg["batch_sizes"]
    budgets = group_norm._equal_epoch_budgets(cfg)
    for steps in budgets.values():
        assert steps[small] * small == steps[big] * big  # images seen = epochs x n_train
    # each budget keeps one batch size's fixed-step runs
    assert budgets["short"][small] == cfg["steps"][small]
    assert budgets["long"][big] == cfg["steps"][big]
    assert group_norm._epochs_of(cfg, big) > group_norm._epochs_of(cfg, small)


def test_fixed_step_parts_keep_the_first_full_runs_cache_files(tmp_path, monkeypatch):
    # The full run's cache (computed before the equal-epoch budgets existed) stays valid:
    # the fixed-step parts keep their keys and params, hence their file names.
    monkeypatch.setattr(group_norm, "_shapes_task", lambda cfg, seed: [None] * 4)
    ctx = RunContext(quick=False, out_dir=tmp_path, verbose=0, experiment="group_norm")
    parts, runs = group_norm._followup_parts(group_norm.PROTOCOL_FOLLOWUP.settings(False),
                                              [0])
    names = {r: ctx._cache_file(key, params).name for (key, *_, params), r in zip(parts, runs)}
    assert names[("batch", 2, 6000, 0)] == "followup_batch_batch=2_seed=0-1d53ef91d707.pkl"
    assert names[("group", 32, 1500, 0)] == "followup_group_batch=32_seed=0-cffd6bcaab73.pkl"
    new = [r for r in runs if r[2] not in (6000, 1500)]
    assert sorted(new) == sorted((n, bs, steps, 0) for n in ("batch", "group")
                                 for bs, steps in ((2, 24000), (32, 375)))


def test_followup_reports_the_equal_epoch_budgets(tmp_path, monkeypatch):
    tiny = dict(n_train=12, n_test=9, steps={2: 6, 4: 2}, seeds=1, batch_sizes=(2, 4),
                channels=(4, 8), budgets=("short", "long"))
    monkeypatch.setattr(group_norm, "PROTOCOL_FOLLOWUP", group_norm.PROTOCOL_FOLLOWUP.but(**tiny))
    monkeypatch.setattr(group_norm, "_N_JOBS", 1)  # in process: no worker start-up
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="group_norm")
    parts, runs = group_norm._followup_parts(tiny, [0, 1])
    # 2 norms x 2 seeds x (2 fixed-step runs + batch 4 at 3 steps + batch 2 at 4 steps)
    assert len(parts) == 16 and len({key for key, *_ in parts}) == 16
    result = Result()
    md, err = group_norm.followup(ctx, result)
    result.done(md)
    budgets = result.find_table("Equal epochs")
    assert [r["budget"] for r in budgets.rows] == [
        "fixed steps (above)", "equal epochs, short", "equal epochs, long"]
    md = result.fill(md)
    assert "##### Equal epochs at both batch sizes" in md
    # fixed steps, equal epochs (short and long), training length (two), batch norm's
    # penalty and group norm at the long budget: each judged by the paired interval
    assert len(result.verdicts) == 1 + 2 + 2 + 2
    for v in result.verdicts:  # one seed; both norms pooled give two values
        assert v.n == (2 if "pooled" in v.claim else 1)
        assert v.outcome == "inconclusive" or v.n == 2
    assert result.find("equal epochs, long: batch norm's error higher").arms == [
        "batch 2", "batch 4"]
    assert "| equal epochs, short | 6 (1.0) | 3 (1.0) |" in md
    assert "| equal epochs, long | 4 (0.7) | 2 (0.7) |" in md
    assert "answers the paper's question: **equal epochs, long**" in md
    assert (tmp_path / group_norm._FOLLOWUP_FIGURE).is_file()
    assert len(err[("group", 2)]) == 1


def test_quick_mode_runs_the_short_budget_only(monkeypatch):
    monkeypatch.setattr(group_norm, "_shapes_task", lambda cfg, seed: [None] * 4)
    cfg = group_norm.PROTOCOL_FOLLOWUP.settings(True)
    assert cfg["budgets"] == ("short",)
    assert group_norm.PROTOCOL_FOLLOWUP.settings(False)["budgets"] == ("short", "long")
    parts, runs = group_norm._followup_parts(cfg, [0])
    small, big = cfg["batch_sizes"]
    # the short budget adds batch 32 at batch 2's epochs, nothing at batch 2
    assert sorted(r for r in runs if r[2] != cfg["steps"][r[1]]) == [
        ("batch", big, cfg["steps"][small] * small // big, 0),
        ("group", big, cfg["steps"][small] * small // big, 0)]
