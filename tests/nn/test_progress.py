"""The epoch table and the progress bars of long work (sklearn_papers.nn._progress)."""

import numpy as np
import pytest
import torch

from sklearn_papers.nn._progress import PROGRESS_MIN_ITEMS, progress, shows_progress
from sklearn_papers.nn._skorch import build_net


class _Stepped(torch.nn.Module):
    """A linear model whose held-out loss improves, then worsens: early stopping ends it."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)
        torch.nn.init.zeros_(self.linear.weight), torch.nn.init.zeros_(self.linear.bias)

    def forward(self, X):
        return self.linear(X)


def _fit_with_early_stopping(capsys, verbose=1):
    from skorch.callbacks import EarlyStopping
    from skorch.dataset import ValidSplit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 1)).astype(np.float32)
    y = (2 * X + rng.normal(scale=2.0, size=X.shape)).astype(np.float32)
    net = build_net(_Stepped(), seed=0, max_epochs=60, lr=0.5, batch_size=8,
                    verbose=verbose, train_split=ValidSplit(0.25, random_state=0),
                    callbacks=[("early_stopping", EarlyStopping(
                        patience=3, threshold=0.0, load_best=True, sink=lambda *_: None))])
    net.fit(X, y)
    return net, capsys.readouterr().out


def test_epoch_table_has_a_row_for_every_epoch_and_marks_the_best(capsys):
    net, out = _fit_with_early_stopping(capsys)
    n_epochs = len(net.history)
    assert n_epochs < 60  # early stopping ended training
    lines = out.strip().splitlines()
    header, rows, last = lines[0], lines[2:2 + n_epochs], lines[2 + n_epochs:]
    assert "best" in header.split()
    # one row per epoch run, the epoch training stopped at included
    assert [int(row.split()[0]) for row in rows] == list(range(1, n_epochs + 1))
    # "+" on each epoch that lowered the held-out loss; the last "+" is the best epoch
    losses = net.history[:, "valid_loss"]
    improved = [loss < min(losses[:i], default=np.inf) for i, loss in enumerate(losses)]
    assert ["+" in row.split() for row in rows] == improved
    best = int(np.argmin(losses)) + 1
    assert len(last) == 1
    assert f"Stopped after epoch {n_epochs}" in last[0]
    assert f"Best epoch: {best} (valid_loss {min(losses):.4f}), its weights restored" \
        in last[0]


def test_verbose_zero_prints_no_table(capsys):
    _, out = _fit_with_early_stopping(capsys, verbose=0)
    assert out == ""


def test_no_stop_line_when_training_runs_every_epoch(capsys):
    X = torch.linspace(-1, 1, 16).reshape(-1, 1).numpy()
    net = build_net(_Stepped(), seed=0, max_epochs=3, lr=0.1, batch_size=16, verbose=1)
    net.fit(X, 2 * X)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 + 3 and "Stopped" not in lines[-1]
    # without a validation split the training loss is the one marked
    assert all("+" in line.split() for line in lines[2:])


@pytest.mark.parametrize("verbose, n_items, shown", [
    (0, 10**7, False), (False, 10**7, False), (1, PROGRESS_MIN_ITEMS - 1, False),
    (1, PROGRESS_MIN_ITEMS, True), (True, PROGRESS_MIN_ITEMS, True), (2, 1, True),
])
def test_progress_bars_follow_verbose_and_size(verbose, n_items, shown, capsys):
    assert shows_progress(verbose, n_items) == shown
    items = list(progress(range(3), verbose=verbose, n_items=n_items, total=3, desc="Work"))
    assert items == [0, 1, 2]
    captured = capsys.readouterr()
    assert captured.out == ""  # bars go to standard error only
    assert ("Work" in captured.err) == shown
