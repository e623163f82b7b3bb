"""Parts of an experiment computed on worker processes: values, order, cache and resume."""

import time

import pytest

from sklearn_papers.reproduce._parallel import cached_parts, worker_cpu_seconds
from sklearn_papers.reproduce._registry import RunContext


def _parts(n):
    # ``pow`` pickles by reference, so a worker process can run it
    return [(f"part={i}", pow, (i, 2), {"i": i}) for i in range(n)]


def test_parts_on_workers_equal_parts_in_process_and_resume(tmp_path):
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="x")
    in_process = cached_parts(ctx, _parts(3), n_jobs=1)
    before = worker_cpu_seconds()
    ctx = RunContext(quick=True, out_dir=tmp_path / "w", verbose=0, experiment="x")
    on_workers = cached_parts(ctx, _parts(3), n_jobs=2)
    assert in_process == on_workers == [0, 1, 4]
    # stored as the workers return them (any order), values in the order of the parts
    assert sorted(ctx.computed) == ["part=0", "part=1", "part=2"]
    assert worker_cpu_seconds() >= before

    # --resume: the cached parts are read back, only the new ones are computed
    ctx = RunContext(quick=True, out_dir=tmp_path / "w", verbose=0, experiment="x",
                     resume=True)
    assert cached_parts(ctx, _parts(5), n_jobs=2) == [0, 1, 4, 9, 16]
    assert [key for key, _ in ctx.reused] == ["part=0", "part=1", "part=2"]
    assert sorted(ctx.computed) == ["part=3", "part=4"]


def test_meanwhile_runs_once_in_this_process(tmp_path):
    calls = []
    for n_jobs in (1, 2):
        ctx = RunContext(quick=True, out_dir=tmp_path / str(n_jobs), verbose=0,
                         experiment="x")
        values = cached_parts(ctx, _parts(2), n_jobs=n_jobs,
                              meanwhile=lambda: calls.append(n_jobs))
        assert values == [0, 1]
    assert calls == [1, 2]


def _slow_failure(seconds):
    time.sleep(seconds)
    raise ValueError("this part fails")


def test_finished_parts_are_stored_when_another_part_fails(tmp_path):
    # part 0 fails after the other worker has finished the quick parts: those are stored
    # all the same, so --resume does not compute them again
    parts = [("bad", _slow_failure, (3.0,), {"i": 0})] + [
        (f"part={i}", pow, (i, 2), {"i": i}) for i in range(1, 4)]
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="x")
    with pytest.raises(ValueError, match="this part fails"):
        cached_parts(ctx, parts, n_jobs=2)
    assert sorted(ctx.computed) == ["part=1", "part=2", "part=3"]
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="x", resume=True)
    assert cached_parts(ctx, parts[1:], n_jobs=2) == [1, 4, 9]
    assert [key for key, _ in ctx.reused] == ["part=1", "part=2", "part=3"]
    assert ctx.computed == []


def test_a_follow_up_reads_the_parts_its_main_experiment_shared_in_this_run(tmp_path):
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="main")
    assert cached_parts(ctx, _parts(2), share=True) == [0, 1]
    assert cached_parts(ctx, _parts(3)[2:]) == [4]  # not shared
    ctx.experiment, ctx.computed = "main_followup", []
    assert cached_parts(ctx, _parts(3), n_jobs=2, owner="main") == [0, 1, 4]
    assert ctx.computed == ["part=2"]  # only the part that was not shared
    # written to the owner's folder, so a later --resume of "main" reads it back
    assert list(ctx.cache_dir("main").glob("part=2-*.pkl"))
    assert not ctx.cache_dir("main_followup").exists()
    # alone (another run), the follow-up computes the main experiment's parts itself
    alone = RunContext(quick=True, out_dir=tmp_path / "alone", verbose=0,
                       experiment="main_followup")
    assert cached_parts(alone, _parts(2), owner="main") == [0, 1]
    assert sorted(alone.computed) == ["part=0", "part=1"]
