"""The ``lpg`` experiment end to end on a tiny configuration."""

from sklearn_papers.reproduce import lpg
from sklearn_papers.reproduce._registry import RunContext


_TINY = lpg.PROTOCOL.but(seeds=2, meta_steps=2, n_train=4, n_test=3, n_large=2, lifetime=3,
                         n_agents=3, mc_steps=100, n_jobs=1)


def test_lpg_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(lpg, "PROTOCOL", _TINY)
    seed_part = lpg._seed_part

    def without_snapshots_for_seed_1(variant, seed, *args):
        # as a part cached before the snapshots were kept: the follow-up re-runs its fit
        value = seed_part(variant, seed, *args)
        if seed == 1:
            value.pop("snapshots", None)
        return value

    monkeypatch.setattr(lpg, "_seed_part", without_snapshots_for_seed_1)
    ctx = RunContext(quick=False, out_dir=tmp_path, verbose=0, experiment="lpg")
    section = lpg.EXPERIMENT.run(ctx)
    md = section.markdown
    for text in ("held-out 5x5", "larger 7x7", "y(s), pooled", "per grid", "LPG / A2C"):
        assert text in md
    # one verdict per claim: ratio, untrained, ablation, probe target (per grid), other
    # discounts (per grid, made of two parts); the pooled probe's are reported beside them
    _check_verdicts(section)
    assert len(section.figures) == 2 and all(p.exists() for p in section.figures)
    assert "`lpg_followup`" in md and "`lpg_stock`" in md
    # the follow-up, an experiment of its own, reads lpg's runs kept in this run
    ctx.experiment, ctx.computed = "lpg_followup", []
    follow = lpg.EXPERIMENT_FOLLOWUP.run(ctx)
    assert sorted(ctx.computed) == ["LPG checkpoints/seed=0", "LPG checkpoints/seed=1"]
    follow_up = follow.markdown
    assert follow_up.startswith("#### Follow-up")
    assert "| 0 (untrained) |" in follow_up and "| 2 |" in follow_up
    assert "1 of the 2 seeds' LPG parts were cached" in follow_up
    assert "meta-training returns exactly: yes" in follow_up
    assert "repeats the probe of `lpg`'s table exactly: yes" in follow_up
    assert "- Why, per grid at 0.99" in follow_up
    assert len(follow.figures) == 1 and follow.figures[0].exists()


def test_lpg_quick_run_leaves_the_follow_up_to_its_own_experiment(tmp_path, monkeypatch):
    monkeypatch.setattr(lpg, "PROTOCOL", _TINY)
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    section = lpg.EXPERIMENT.run(ctx)
    assert "#### Follow-up" not in section.markdown
    _check_verdicts(section)
    assert len(section.figures) == 2 and all(p.exists() for p in section.figures)
    assert ctx.computed and not any(k.startswith("LPG checkpoints/") for k in ctx.computed)
    assert not lpg.EXPERIMENT_FOLLOWUP.in_quick_run


def _check_verdicts(section):
    claims = {v.claim: v for v in section.verdicts}
    assert set(claims) == {
        "LPG reaches 80 % of A2C's return on the held-out grids",
        "LPG beats the untrained rule", "LPG beats the ablation without y",
        "per grid: y is value-like at the training discount (Spearman >= 0.7)",
        "pooled: y is value-like at the training discount (Spearman >= 0.7)",
        "per grid: y's probe higher than the TD value's at other discounts",
        "per grid: the TD value's probe higher at its own discount than at the others",
        "per grid: y carries values at other discounts where the TD(lambda) value does not",
        "pooled: y's probe higher than the TD value's at other discounts",
        "pooled: the TD value's probe higher at its own discount than at the others",
        "pooled: y carries values at other discounts where the TD(lambda) value does not"}
    both = claims["per grid: y carries values at other discounts where the TD(lambda) "
                  "value does not"]
    assert both.rule == "all of" and [p.claim for p in both.parts] == [
        "per grid: y's probe higher than the TD value's at other discounts",
        "per grid: the TD value's probe higher at its own discount than at the others"]
    assert claims["LPG beats the untrained rule"].arms == ["LPG", "untrained rule"]
    # the five headline verdicts are in bold in the report
    md = section.markdown
    assert sum(md.count(f"**{o}") for o in ("holds", "does not hold", "inconclusive")) == 5


def test_checkpoints_of_the_follow_up():
    assert lpg._checkpoints(600) == (0, 150, 300, 600)
    assert lpg._checkpoints(1500) == (0, 150, 300, 600, 1000, 1500)
    assert lpg._checkpoints(2) == (0, 1, 2)

