"""The pieces every experiment shares: seeds, one torch thread, figures."""

import pickle

import pytest

from sklearn_papers.reproduce import RunContext
from sklearn_papers.reproduce._common import (
    draw_figure,
    errorbar,
    in_one_torch_thread,
    one_torch_thread,
    over_seeds,
    run_seeds,
    save_figure,
)


def test_run_seeds_start_at_the_run_seed():
    ctx = RunContext(quick=True, out_dir=".", random_state=7)
    assert run_seeds(ctx, 3) == [7, 8, 9]
    assert run_seeds(0, 1) == [0]
    with pytest.raises(ValueError, match="at least 1"):
        run_seeds(ctx, 0)


def test_over_seeds_pairs_results_with_the_seeds_in_order():
    assert over_seeds(lambda seed, k, *, b: seed * k + b, [3, 1, 2], 10, b=1) == [31, 11, 21]


def _threads():
    import torch

    return torch.get_num_threads()


def test_one_thread_inside_and_the_callers_setting_restored():
    import torch

    before = torch.get_num_threads()
    with one_torch_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    wrapped = in_one_torch_thread(_threads)
    assert wrapped() == 1 and torch.get_num_threads() == before
    assert wrapped.__name__ == "_threads"


def test_a_decorated_part_function_pickles_for_the_worker_processes():
    from sklearn_papers.reproduce import deepsim

    assert pickle.loads(pickle.dumps(deepsim._fit_arm)) is deepsim._fit_arm


def test_save_figure_writes_closes_and_returns_the_path(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    path = save_figure(fig, RunContext(quick=True, out_dir=tmp_path / "out"), "a.png", dpi=20)
    assert path == tmp_path / "out" / "a.png" and path.stat().st_size > 0
    assert not plt.fignum_exists(fig.number)
    fig, _ = plt.subplots()
    assert save_figure(fig, tmp_path / "b", "c.png").is_file()  # a folder works too


def test_draw_figure_draws_mean_and_std_on_new_axes_and_saves(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    drawn = []

    def draw(ax, ax2, values):
        errorbar(ax, [0, 1], values, marker="o")
        drawn.append((ax, ax2))

    path = draw_figure(tmp_path, "d.png", draw, [[1.0, 3.0], [2.0, 2.0]], ncols=2)
    assert path == tmp_path / "d.png" and path.is_file()
    (ax, ax2), = drawn
    assert list(ax.get_lines()[0].get_ydata()) == [2.0, 2.0] and ax is not ax2
    bars = ax.containers[0].lines[2][0].get_segments()  # mean ± std: [1, 3] and [2, 2]
    assert [tuple(seg[:, 1]) for seg in bars] == [(1.0, 3.0), (2.0, 2.0)]


def test_a_protocol_gives_each_mode_its_settings_seeds_and_note(tmp_path):
    from sklearn_papers.reproduce._common import Protocol

    proto = Protocol(full=dict(seeds=5, epochs=60), quick=dict(seeds=2, epochs=8))
    assert proto.settings(False) == dict(seeds=5, epochs=60)
    assert proto.settings(True) == dict(seeds=2, epochs=8)
    ctx = RunContext(quick=True, out_dir=tmp_path, random_state=7)
    assert proto.seeds(ctx) == [7, 8]
    assert proto.note(False) == "" and Protocol(full=dict(seeds=5)).note(True) == ""
    assert proto.note(True) == "seeds: 2 instead of 5; epochs: 8 instead of 60."
    worded = Protocol(full=dict(seeds=5), quick=dict(seeds=2),
                      shortened="{seeds} seeds instead of 5.")
    assert worded.note(True) == "2 seeds instead of 5."
    tiny = proto.but(epochs=1)
    assert tiny.settings(True)["epochs"] == tiny.settings(False)["epochs"] == 1
    with pytest.raises(ValueError, match=r"no settings \['lr'\]"):
        proto.but(lr=1.0)
    with pytest.raises(ValueError, match=r"quick sets \['lr'\]"):
        Protocol(full=dict(seeds=1), quick=dict(lr=1.0))
