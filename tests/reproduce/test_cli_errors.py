"""The command line's errors are one line naming the argument and the fix (exit status 2), and
a damaged cached part is recomputed with a note in the report."""

import os
import subprocess
import sys
import textwrap

import pytest

from sklearn_papers.reproduce import Experiment, Result
from sklearn_papers.reproduce._cli import main

CALLS = []


def _parts(ctx):
    values = []
    for k in range(3):
        def compute(k=k):
            CALLS.append(k)
            return 10 * k
        values.append(ctx.cached(f"part/{k}", compute, params={"k": k}))
    return Result(text=f"values {values}")


@pytest.fixture
def fake(monkeypatch):
    from sklearn_papers.reproduce import _registry

    exp = Experiment(name="fake", title="Fake one", paper="F et al. 2024", run=_parts,
                     records=True)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"fake": exp})
    CALLS.clear()


def _one_error_line(capsys, *words):
    """The stderr of a failed call: exactly one line, holding every word, no traceback."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def _run(argv):
    """``main(argv)``'s exit status, whether returned or raised by argparse."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_out_that_is_a_file(tmp_path, fake, capsys):
    out = tmp_path / "report.txt"
    out.write_text("not a folder")
    assert _run(["reproduce", "--out", str(out), "--verbose", "0"]) == 2
    _one_error_line(capsys, "--out", "is a file", "folder")
    assert CALLS == [] and out.read_text() == "not a folder"


def test_out_that_cannot_be_created(tmp_path, fake, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _run(["reproduce", "--out", str(blocker / "sub" / "dir"), "--verbose", "0"]) == 2
    _one_error_line(capsys, "--out", "cannot create", "give a folder")
    assert CALLS == []


def test_records_that_is_a_file(tmp_path, fake, capsys):
    records = tmp_path / "records.json"
    records.write_text("{}")
    assert _run(["reproduce", "--out", str(tmp_path / "out"), "--records", str(records),
                 "--verbose", "0"]) == 2
    _one_error_line(capsys, "--records", "is a file")
    assert CALLS == []


def test_records_that_cannot_be_created(tmp_path, fake, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _run(["reproduce", "--out", str(tmp_path / "out"), "--records",
                 str(blocker / "records"), "--verbose", "0"]) == 2
    _one_error_line(capsys, "--records", "cannot create")


@pytest.mark.parametrize("option, value, words", [
    ("--seed", "abc", ["--seed", "not an integer", "--seed 0"]),
    ("--seed", "-1", ["--seed", "outside", "--seed 0"]),
    ("--seed", str(2**32), ["--seed", "outside"]),
    ("--verbose", "-2", ["--verbose", "give 0"]),
    ("--verbose", "loud", ["--verbose", "give 0"]),
])
def test_bad_option_values(tmp_path, fake, capsys, option, value, words):
    assert _run(["reproduce", "--out", str(tmp_path), option, value]) == 2
    _one_error_line(capsys, "error:", *words)


def test_unknown_option_and_unknown_experiment(tmp_path, fake, capsys):
    assert _run(["reproduce", "--out", str(tmp_path), "--qiuck"]) == 2
    _one_error_line(capsys, "unrecognized arguments: --qiuck", "--help")
    assert _run(["reproduce", "--out", str(tmp_path), "--only", "nope"]) == 2
    _one_error_line(capsys, "--only", "'nope'", "fake", "--list")


def test_publish_without_a_report(tmp_path, capsys):
    assert _run(["publish", "--report", str(tmp_path / "missing"),
                 "--to", str(tmp_path / "docs")]) == 2
    _one_error_line(capsys, "--report", "REPORT.md", "reproduce")
    assert _run(["publish"]) == 2
    _one_error_line(capsys, "--report")


def test_console_exit_status_and_single_line(tmp_path):
    out = tmp_path / "a-file"
    out.write_text("")
    done = subprocess.run([sys.executable, "-m", "sklearn_papers", "reproduce", "--out",
                           str(out), "--only", "lee_seung"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--out" in done.stderr
    assert "Traceback" not in done.stderr


def _damage(path):
    path.write_bytes(path.read_bytes()[:7])  # a truncated file


def test_damaged_cached_part_is_recomputed_and_noted(tmp_path, fake):
    argv = ["reproduce", "--quick", "--out", str(tmp_path), "--verbose", "0"]
    assert main(argv) == 0
    cache = next((tmp_path / ".cache").glob("*/fake"))
    part = next(p for p in cache.glob("part_1-*.pkl"))
    _damage(part)
    (cache / "_section.pkl").unlink()  # the experiment runs again, part by part
    assert main([*argv, "--resume"]) == 0
    assert CALLS == [0, 1, 2, 1]  # the damaged part only
    text = (tmp_path / "REPORT.md").read_text()
    assert "values [0, 10, 20]" in text
    assert "**Resumed:** 2 of 3 cached parts" in text
    assert f"**Recomputed:** 1 cached part file(s) could not be read back (damaged) and " \
           f"were computed again: `{part.name}`." in text


def test_damaged_record_is_recomputed_and_noted(tmp_path, fake):
    records = tmp_path / "records"
    argv = ["reproduce", "--quick", "--out", str(tmp_path / "out"), "--records",
            str(records), "--verbose", "0"]
    assert main(argv) == 0
    record = next(records.rglob("2.json"))
    _damage(record)
    assert main(argv) == 0
    assert CALLS == [0, 1, 2, 2]
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "values [0, 10, 20]" in text and "`2.json`" in text and "**Recomputed:**" in text


_KILLED_RUN = textwrap.dedent('''
    import os, signal, sys
    from sklearn_papers.reproduce import Experiment, Result, _registry
    from sklearn_papers.reproduce._cli import main

    def run(ctx):
        values = []
        for k in range(3):
            def compute(k=k):
                if k == int(os.environ["KILL_AT"]):
                    os.kill(os.getpid(), signal.SIGKILL)
                with open(os.environ["CALLS"], "a") as fh:
                    fh.write(f"{k} ")
                return 10 * k
            values.append(ctx.cached(f"part/{k}", compute, params={"k": k}))
        return Result(text=f"values {values}")

    exp = Experiment(name="fake", title="Fake", paper="F et al. 2024", run=run)
    _registry.get_experiments = lambda: {"fake": exp}
    sys.exit(main(sys.argv[1:]))
''')


def test_sigkill_then_resume_reuses_finished_parts_and_recomputes_a_damaged_one(tmp_path):
    script = tmp_path / "killed_run.py"
    script.write_text(_KILLED_RUN)
    calls, out = tmp_path / "calls.txt", tmp_path / "out"
    argv = [sys.executable, str(script), "reproduce", "--quick", "--out", str(out),
            "--verbose", "0"]
    env = {**os.environ, "CALLS": str(calls), "KILL_AT": "2"}
    killed = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    assert calls.read_text().split() == ["0", "1"]
    _damage(next(out.glob(".cache/*/fake/part_0-*.pkl")))
    done = subprocess.run([*argv, "--resume"], env={**env, "KILL_AT": "-1"},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().split() == ["0", "1", "0", "2"]
    text = (out / "REPORT.md").read_text()
    assert "values [0, 10, 20]" in text
    assert "**Resumed:** 1 of 3 cached parts" in text and "**Recomputed:** 1" in text


def test_list_with_only_lists_those_and_refuses_unknown_names(capsys):
    from sklearn_papers.reproduce._registry import list_experiments

    name = sorted(list_experiments())[0]
    assert _run(["reproduce", "--list", "--only", name]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(name)
    assert _run(["reproduce", "--list", "--only", "nosuch"]) == 2
    _one_error_line(capsys, "--only", "'nosuch'", name)


def test_version(capsys):
    from sklearn_papers import __version__

    assert _run(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sklearn-papers {__version__}"
