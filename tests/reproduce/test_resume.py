"""``--resume``: finished parts cached in the output folder are read back, and said so."""

import pytest

from sklearn_papers.reproduce import Experiment, Result, RunContext
from sklearn_papers.reproduce._cli import main
from sklearn_papers.reproduce._registry import _LineProgress, format_seconds

CALLS = []


def _parts(ctx, fail_at=None):
    values = []
    with ctx.progress(total=3, desc="fake") as bar:
        for k in range(3):
            def compute(k=k):
                if k == fail_at:
                    raise KeyboardInterrupt  # the run is stopped here
                CALLS.append(k)
                return 10 * k
            values.append(ctx.cached(f"part/{k}", compute, params={"k": k}))
            bar.update(1)
    return Result(text=f"values {values}")


@pytest.fixture
def fake(monkeypatch):
    from sklearn_papers.reproduce import _registry

    state = {"fail_at": None}
    exp = Experiment(name="fake", title="Fake one", paper="F et al. 2024",
                     run=lambda ctx: _parts(ctx, state["fail_at"]))
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"fake": exp})
    CALLS.clear()
    return state


def _argv(tmp_path, *extra):
    return ["reproduce", "--quick", "--out", str(tmp_path), "--verbose", "0", *extra]


def test_resume_skips_the_parts_an_interrupted_run_finished(tmp_path, fake):
    fake["fail_at"] = 2
    with pytest.raises(KeyboardInterrupt):
        main(_argv(tmp_path))
    assert CALLS == [0, 1]
    fake["fail_at"] = None
    assert main(_argv(tmp_path, "--resume")) == 0
    assert CALLS == [0, 1, 2]  # only the unfinished part ran again
    text = (tmp_path / "REPORT.md").read_text()
    assert "values [0, 10, 20]" in text
    assert "**Resumed:** 2 of 3 cached parts" in text
    assert "`part/0` (20" in text and "`part/1` (20" in text  # with their dates


def test_without_resume_everything_is_recomputed(tmp_path, fake):
    assert main(_argv(tmp_path)) == 0
    assert main(_argv(tmp_path)) == 0
    assert CALLS == [0, 1, 2, 0, 1, 2]
    assert "Resumed" not in (tmp_path / "REPORT.md").read_text()


def test_a_finished_experiment_is_reused_whole(tmp_path, fake):
    assert main(_argv(tmp_path)) == 0
    assert main(_argv(tmp_path, "--resume")) == 0
    assert CALLS == [0, 1, 2]
    text = (tmp_path / "REPORT.md").read_text()
    assert "values [0, 10, 20]" in text and "whole section was read back" in text
    # the header does not claim this run computed everything; the CPU time is kept
    assert "computed by this run" not in text and "by the earlier run it names" in text
    assert "| CPU time (s) |" in text
    # a full run does not read the quick run's cache
    assert main(["reproduce", "--out", str(tmp_path), "--verbose", "0", "--resume"]) == 0
    assert CALLS == [0, 1, 2, 0, 1, 2]


def test_cached_recomputes_when_params_or_seed_change(tmp_path):
    calls = []
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, resume=True, experiment="x")
    assert ctx.cached("a", lambda: calls.append(1) or 1, params={"lr": 0.1}) == 1
    assert ctx.cached("a", lambda: calls.append(2) or 2, params={"lr": 0.1}) == 1
    assert ctx.cached("a", lambda: calls.append(3) or 3, params={"lr": 0.2}) == 3
    other = RunContext(quick=True, out_dir=tmp_path, verbose=0, resume=True,
                       experiment="x", random_state=1)
    assert other.cached("a", lambda: calls.append(4) or 4, params={"lr": 0.1}) == 4
    assert calls == [1, 3, 4]
    assert [k for k, _ in ctx.reused] == ["a"]


def test_line_progress_shows_elapsed_and_time_left(tmp_path, capsys):
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=1, experiment="x")
    bar = _LineProgress(ctx, total=4, desc="x")
    bar.min_interval = 0.0
    bar.update(1)
    line = bar.line()
    assert line.startswith("[x] 1/4, ") and "elapsed" in line and "left" in line
    bar.update(3)
    assert "left" not in bar.line()


def test_format_seconds():
    assert format_seconds(45) == "45s"
    assert format_seconds(750) == "12m30s"
    assert format_seconds(3900) == "1h05m"


def test_report_header_records_commit_date_and_machine(tmp_path, fake):
    assert main(_argv(tmp_path)) == 0
    header = (tmp_path / "REPORT.md").read_text().splitlines()[:8]
    assert header[2].startswith("Generated 20") and " UTC by `sklearn-papers" in header[2]
    assert any(line.startswith("Commit: ") for line in header)
    machine = [line for line in header if line.startswith("Machine: ")]
    assert machine and "CPU(s)" in machine[0] and "load average" in machine[0]
    text = (tmp_path / "REPORT.md").read_text()
    assert "| time (s) | CPU time (s) |" in text


def _warns(ctx):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    for _ in range(50):
        with warnings.catch_warnings():  # as scikit-learn's fit does: resets the registry
            warnings.simplefilter("default")
            warnings.warn("lbfgs failed to converge", ConvergenceWarning)
    return Result(text="ok")


def test_a_warning_raised_in_a_loop_is_shown_once(tmp_path, monkeypatch, capsys):
    from sklearn_papers.reproduce import _registry

    exp = Experiment(name="noisy", title="Noisy", paper="N et al. 2024", run=_warns)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"noisy": exp})
    import warnings

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    # the first one goes through (here to the recorder), the 49 repeats are only counted
    assert sum("lbfgs failed" in str(w.message) for w in shown) == 1
    assert "49 x ConvergenceWarning" in capsys.readouterr().out


def test_a_finished_section_is_rerun_when_its_code_changed(tmp_path, fake, monkeypatch):
    from sklearn_papers.reproduce import _cli

    assert main(_argv(tmp_path)) == 0
    monkeypatch.setattr(_cli, "_source_digest", lambda exp: "edited")
    assert main(_argv(tmp_path, "--resume")) == 0
    # the section is rebuilt, its parts (same settings) still come from the cache
    assert CALLS == [0, 1, 2]
    assert "**Resumed:** 3 of 3 cached parts" in (tmp_path / "REPORT.md").read_text()
