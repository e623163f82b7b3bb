"""The ``lpg_stock`` experiment (the learned rule on gymnasium's stock environments) end to
end on a tiny configuration, and its pieces."""

import numpy as np

from sklearn_papers.reproduce import lpg_stock
from sklearn_papers.reproduce._registry import RunContext, get_experiments


def _tiny(quick):
    return dict(rules=("widened", "grid"), meta_seeds=2, agent_seeds=2, meta_steps=2,
                n_agents=3, meta_lifetime=3, rule=lpg_stock._RULE, n_train=4, lifetime=2,
                episodes=2, max_steps=10, a2c_lrs=(0.3, 1.0), q_alphas=(0.5,), lpg_lrs=(0.5, 2.0),
                n_restarts=2, restart_lake_slips=lpg_stock._RESTART_SLIPS, n_jobs=1)


def test_lpg_stock_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(lpg_stock, "PROTOCOL", lpg_stock.PROTOCOL.but(**_tiny(True)))
    assert get_experiments()["lpg_stock"] is lpg_stock.EXPERIMENT
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    section = lpg_stock.EXPERIMENT.run(ctx)
    md = section.markdown
    for name in ("FrozenLake, not slippery", "FrozenLake, slippery", "CliffWalking", "Taxi"):
        assert f"| {name} |" in md
    assert "LPG, widened" in md and "(method - random) / (A2C - random)" in md
    # a verdict per environment (claim 1, step size tuned and as meta-trained) and per
    # converging environment (claim 2), then the three claims as a whole
    assert len(section.verdicts) == 4 + 4 + 2 + 3
    whole = [v for v in section.verdicts if v.rule == "all of"]
    assert [len(v.parts) for v in whole] == [4, 4, 2]
    for v in whole:  # a claim made of parts holds only when every part does
        parts = [p.outcome for p in v.parts]
        assert (v.outcome == "holds") == (parts == ["holds"] * len(parts))
    assert {v.rule for v in section.verdicts} == {"mean interval", "all of"}
    assert "LPG, widened, step size 2 |" in md
    assert "best of 2 meta-trainings" in md
    assert "mean interval" in md
    assert "meta_seeds: 3 instead of 4" in lpg_stock.EXPERIMENT.protocol.note(True)
    assert sorted(ctx.computed) == sorted(
        [f"rule/{k}/seed={s}" for k in ("widened", "grid") for s in (0, 1)]
        + [f"baselines/{n}" for n, _, _ in lpg_stock._STOCK])


def test_summary_normalizes_by_tuned_a2c_and_random():
    base = {"random": [0.0, 0.0], "Q-learning": {"0.5": [1.0, 1.0]},
            "A2C": {"0.3": [0.5, 0.5], "1.0": [1.0, np.nan]}}
    baselines = {n: base for n, _, _ in lpg_stock._STOCK}
    part = {"returns": {n: {"0.5": [0.8, 0.4], "2.0": [0.2, 0.2]}
                        for n, _, _ in lpg_stock._STOCK}}
    other = {"returns": {n: {"0.5": [0.0, 0.0], "2.0": [0.9, 0.9]}
                         for n, _, _ in lpg_stock._STOCK}}
    summary = lpg_stock._summary(baselines, {"widened": [part, other], "grid": [part]},
                                 meta_lr=2.0)
    row = summary["CliffWalking"]
    assert row["lr"] == "1.0" and row["a2c"] == 1.0   # NaN runs are left out of the mean
    # the agents' step size is tuned over every run of a rule (mean 0.55 at 2.0 vs 0.3)
    assert row["widened_lr"] == "2.0"
    np.testing.assert_allclose(row["widened_norm"], [0.2, 0.9])
    np.testing.assert_allclose(row["widened_untuned_norm"], [0.2, 0.9])
    assert summary["Taxi"]["grid_lr"] == "0.5"
    np.testing.assert_allclose(summary["Taxi"]["grid_norm"], [0.6])
    np.testing.assert_allclose(summary["Taxi"]["grid_untuned_norm"], [0.2])
    np.testing.assert_allclose(row["a2c_over_q"][0], 1.0)
