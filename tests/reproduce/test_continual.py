"""The continual experiment: its pieces, and a tiny end-to-end run."""

import numpy as np
import pytest
from scipy import stats

from sklearn_papers.reproduce import continual, get_experiments
from sklearn_papers.reproduce._registry import RunContext

TINY = dict(seeds=1, n_jobs=1, max_epochs=1, generator_steps=2, gan_steps=2, pnn_epochs=1,
            transfer_seeds=2, transfer_epochs=1, low_data_epochs=1, hidden=(8,))


def test_registered_under_its_issue_name():
    assert get_experiments()["continual"] is continual.EXPERIMENT


def test_split_digits_tasks():
    np.testing.assert_array_equal(continual.split_tasks(np.arange(10)),
                                  [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def test_paired_interval_is_the_paired_t_interval():
    rng = np.random.RandomState(0)
    a, b = rng.normal(1, 1, 12), rng.normal(0, 1, 12)
    mean, lo, hi = continual.paired_interval(a, b)
    d = a - b
    ref = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert mean == pytest.approx(d.mean())
    assert (lo, hi) == pytest.approx(ref)


def test_tiny_run_writes_verdicts_and_plots(tmp_path, monkeypatch):
    monkeypatch.setattr(continual, "_config", lambda quick: TINY)
    section = continual.run(RunContext(quick=True, out_dir=tmp_path, verbose=0))
    for claim in ["Fine-tuning forgets", "Joint training", "closes >= 0.75",
                  "Prior-focused alone", "bit-identical", "per-task heads forgets",
                  "Progressive minus fresh column", "95 % CI"]:
        assert claim in section.markdown, claim
    assert "1/1 runs: **holds**" in section.markdown  # frozen columns, whatever the budget
    assert all(p.exists() and p.stat().st_size > 0 for p in section.figures)
    assert section.shortened
