"""The ``lpg`` experiment end to end on a tiny configuration."""

import numpy as np

from sklearn_papers.reproduce import lpg
from sklearn_papers.reproduce._registry import RunContext


def _tiny(quick):
    return dict(seeds=2, meta_steps=2, n_train=4, n_test=3, n_large=2, lifetime=3,
                n_agents=3, mc_steps=100, n_jobs=1)


def test_lpg_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(lpg, "_config", _tiny)
    section = lpg.EXPERIMENT.run(RunContext(quick=True, out_dir=tmp_path, verbose=0))
    md = section.markdown
    for text in ("held-out 5x5", "larger 7x7", "y(s), pooled", "per grid", "LPG / A2C"):
        assert text in md
    # one verdict per claim: ratio, untrained, ablation, probe target (per grid), other
    # discounts (per grid); the pooled probe is reported without a verdict of its own
    assert md.count("**holds**") + md.count("**does not hold**") + md.count("**tie") == 5
    assert "Pooled across grids" in md and "Pooled: y" in md
    assert len(section.figures) == 2 and all(p.exists() for p in section.figures)
    assert section.shortened


def test_probe_spearman_recovers_a_monotone_signal():
    rng = np.random.RandomState(0)
    target = rng.randn(80)
    features = np.c_[target + 0.01 * rng.randn(80), rng.randn(80)]
    groups, agents = np.repeat(np.arange(4), 20), np.tile(np.repeat([0, 1], 10), 4)
    pooled, per_grid = lpg._probe_spearman(features, target, groups, agents)
    assert pooled > 0.95 and per_grid > 0.95
    pooled, per_grid = lpg._probe_spearman(rng.randn(80, 2), target, groups, agents)
    assert abs(pooled) < 0.5 and abs(per_grid) < 0.5
    assert np.isnan(lpg._probe_spearman(features, target, groups)[1])
