"""The main job's plumbing: registry discovery, report writing and the command line."""

import json
import subprocess
import sys

import pytest

from sklearn_papers.reproduce import Experiment, Result, RunContext, get_experiments
from sklearn_papers.reproduce._cli import main
from sklearn_papers.reproduce._registry import run_experiment
from sklearn_papers.reproduce._report import format_mean_std, write_report


def test_format_mean_std():
    assert format_mean_std([1.0, 3.0]) == "2.00 ± 1.00"
    assert format_mean_std([1.234]) == "1.23"


def test_every_registered_experiment_is_well_formed():
    experiments = get_experiments()
    for name, exp in experiments.items():
        assert exp.name == name and name.islower()
        assert exp.title and exp.paper and callable(exp.run)


def _ok(ctx):
    path = ctx.figure_path("fig.png")
    path.write_bytes(b"\x89PNG")
    return Result(text="| a |\n|---|\n| 1 |", figures=[path], shortened="fewer folds")


def _boom(ctx):
    raise RuntimeError("deliberate failure")


def test_report_lists_results_and_failures(tmp_path):
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    good = Experiment(name="good", title="Good one", paper="A et al. 2020", run=_ok)
    bad = Experiment(name="bad", title="Bad one", paper="B et al. 2021", run=_boom)
    results = [(exp, *run_experiment(exp, ctx)) for exp in (good, bad)]
    assert results[0][3] is None and "deliberate failure" in results[1][3]
    path = write_report(tmp_path, results, quick=True, seconds=1.0)
    text = path.read_text()
    assert "## Good one" in text and "![fig](fig.png)" in text
    assert "fewer folds" in text
    assert "**failed**" in text and "RuntimeError: deliberate failure" in text
    data = json.loads((tmp_path / "REPORT.json").read_text())
    good_entry, bad_entry = data["experiments"]
    assert good_entry["status"] == "ok" and good_entry["result"]["figures"] == ["fig.png"]
    assert bad_entry["status"] == "failed" and bad_entry["result"] is None
    assert data["provenance"]["mode"] == "quick"


def test_cli_list_and_unknown(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in get_experiments():
        assert name in out
    assert main(["reproduce", "--only", "no_such_paper", "--verbose", "0"]) == 2
    assert "unknown experiment" in capsys.readouterr().err


def test_cli_requires_a_command():
    with pytest.raises(SystemExit):
        main([])


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "sklearn_papers", "reproduce", "--list"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_report_header_records_the_exact_command(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import _registry

    good = Experiment(name="good", title="Good one", paper="A et al. 2020", run=_ok)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"good": good})
    argv = ["reproduce", "--quick", "--only", "good", "--out", str(tmp_path),
            "--verbose", "0"]
    assert main(argv) == 0
    header = (tmp_path / "REPORT.md").read_text().splitlines()[2]
    assert "`sklearn-papers reproduce --quick --only good --out " in header


def test_quick_run_of_every_experiment_leaves_out_the_long_ones(tmp_path, monkeypatch, capsys):
    from sklearn_papers.reproduce import _registry

    good = Experiment(name="good", title="Good one", paper="A et al. 2020", run=_ok)
    long = Experiment(name="long", title="Long one", paper="B et al. 2021", run=_ok,
                      in_quick_run=False)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"good": good, "long": long})
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "REPORT.md").read_text()
    assert "## Good one" in text and "Long one" not in text
    printed = capsys.readouterr()
    assert "--only long --quick" in printed.out + printed.err
    assert main(["reproduce", "--quick", "--only", "long", "--out", str(tmp_path / "b"),
                 "--verbose", "0"]) == 0
    assert "## Long one" in (tmp_path / "b" / "REPORT.md").read_text()
    assert main(["reproduce", "--out", str(tmp_path / "c"), "--verbose", "0"]) == 0
    assert "## Long one" in (tmp_path / "c" / "REPORT.md").read_text()
    from sklearn_papers.reproduce.lpg_stock import EXPERIMENT

    assert not EXPERIMENT.in_quick_run


def _interrupt(ctx):
    raise KeyboardInterrupt


def test_interrupted_run_keeps_the_finished_sections(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import _registry

    good = Experiment(name="good", title="Good one", paper="A et al. 2020", run=_ok)
    slow = Experiment(name="slow", title="Slow one", paper="C et al. 2022", run=_interrupt)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"good": good, "slow": slow})
    with pytest.raises(KeyboardInterrupt):
        main(["reproduce", "--quick", "--out", str(tmp_path), "--verbose", "0"])
    text = (tmp_path / "REPORT.md").read_text()
    assert "## Good one" in text and "| slow | C et al. 2022 | not finished" in text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cpu_seconds_counts_a_worker_once_whether_live_or_reaped():
    # A pool worker alive during an experiment and reaped later must count once: the old
    # os.times() children count charged its whole life to the experiment that reaped it.
    import subprocess
    import time

    from sklearn_papers.reproduce._cli import _cpu_seconds

    burn = ("import sys, time\nt = time.process_time()\n"
            "while time.process_time() - t < 0.6:\n    pass\nsys.stdin.read()\n")
    before = _cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE)
    try:
        for _ in range(1200):  # wait (not a time limit) until the child has burnt its CPU
            if _cpu_seconds() - before >= 0.6:
                break
            time.sleep(0.05)
        live = _cpu_seconds() - before
    finally:
        child.communicate(b"")
    reaped = _cpu_seconds() - before
    assert live >= 0.6
    # counted again when reaped would add another 0.6 s
    assert live - 0.05 <= reaped < live + 0.3
