"""Continual classifiers: time per task against a plain torch loop, PNN parameter growth.

Both sides train the same torch modules (``nn._progressive.ProgressiveNetwork``,
``nn._generative_replay.ReplayClassifierModule``) on the same split-digits task with Adam,
the same batch size, epochs and shuffling; the estimator adds validation, skorch's training
loop and bookkeeping. Runs alternate in one process (one torch thread) and the median
ratio is printed. Times are CPU seconds of this process (``time.process_time``): with one
torch thread they equal wall time on an idle machine, and other processes' load on a shared
machine does not enter them.

Run: ``.venv/bin/python benchmarks/bench_continual.py [--repeats 3]``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits

from sklearn_papers.continual import GenerativeReplayClassifier, ProgressiveNetworkClassifier
from sklearn_papers.nn._skorch import soft_cross_entropy
from sklearn_papers.nn._generative_replay import ReplayClassifierModule
from sklearn_papers.nn._progressive import ProgressiveNetwork, count_progressive_parameters

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script

EPOCHS, BATCH, LR = 20, 32, 1e-3


def _tasks():
    X, y = load_digits(return_X_y=True)
    X = X.astype(np.float32)
    return [(X[y // 2 == k], y[y // 2 == k]) for k in range(5)]


def _plain_loop(module_forward, params, X, targets, seed):
    """Adam on soft-target cross-entropy, shuffled minibatches: the reference loop."""
    opt = torch.optim.Adam(params, lr=LR)
    g = torch.Generator().manual_seed(seed)
    Xt, Tt = torch.as_tensor(X), torch.as_tensor(targets)
    for _ in range(EPOCHS):
        order = torch.randperm(len(Xt), generator=g)
        for i in range(0, len(Xt), BATCH):
            idx = order[i:i + BATCH]
            loss = soft_cross_entropy(module_forward(Xt[idx]), Tt[idx]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


def _one_hot(y, labels):
    t = np.zeros((len(y), len(labels)), np.float32)
    t[np.arange(len(y)), np.searchsorted(labels, y)] = 1
    return t


def time_pnn_plain(tasks):
    torch.manual_seed(0)
    X0 = tasks[0][0]
    net = ProgressiveNetwork(64, (64, 64), mean=X0.mean(0), std=np.where(X0.std(0) > 0,
                                                                          X0.std(0), 1))
    out = []
    for k, (X, y) in enumerate(tasks):
        start = time.process_time()
        net.add_task(2)
        net.train()
        _plain_loop(lambda x, k=k: net(x, k), net.trainable_parameters(k), X,
                    _one_hot(y, np.unique(y)), seed=k)
        out.append(time.process_time() - start)
    return out


def time_pnn_estimator(tasks):
    est = ProgressiveNetworkClassifier(hidden_layer_sizes=(64, 64), max_epochs=EPOCHS,
                                       batch_size=BATCH, lr=LR, random_state=0)
    out = []
    for k, (X, y) in enumerate(tasks):
        start = time.process_time()
        est.partial_fit(X, y, task=k)
        out.append(time.process_time() - start)
    return out, est.n_parameters_


def time_replay_plain(tasks):
    """The classifier loop of fine-tuning (no generators): one shared, growing head."""
    torch.manual_seed(0)
    X0 = tasks[0][0]
    module = ReplayClassifierModule(64, (100, 100), 2, mean=X0.mean(0),
                                    std=np.where(X0.std(0) > 0, X0.std(0), 1))
    out = []
    for k, (X, y) in enumerate(tasks):
        start = time.process_time()
        module.grow(2 * (k + 1))
        module.train()
        _plain_loop(module, list(module.parameters()), X, _one_hot(y - 0, np.arange(
            2 * (k + 1))), seed=k)
        out.append(time.process_time() - start)
    return out


def time_replay_estimator(tasks):
    est = GenerativeReplayClassifier(generator=None, max_epochs=EPOCHS, batch_size=BATCH,
                                     lr=LR, random_state=0)
    out = []
    for k, (X, y) in enumerate(tasks):
        start = time.process_time()
        est.partial_fit(X, y, task=k)
        out.append(time.process_time() - start)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    tasks = _tasks()
    # warm-up: imports, first optimiser construction
    ProgressiveNetworkClassifier(max_epochs=1).fit(*tasks[0])
    res = {"pnn plain": [], "pnn estimator": [], "replay plain": [], "replay estimator": []}
    n_params = None
    for _ in range(args.repeats):
        res["pnn plain"].append(time_pnn_plain(tasks))
        times, n_params = time_pnn_estimator(tasks)
        res["pnn estimator"].append(times)
        res["replay plain"].append(time_replay_plain(tasks))
        res["replay estimator"].append(time_replay_estimator(tasks))
    med = {k: np.median(np.asarray(v), axis=0) for k, v in res.items()}
    print(f"CPU time per task (s, median of {args.repeats}; {EPOCHS} epochs, batch {BATCH}, "
          f"~{len(tasks[0][0])} rows per task, one torch thread)")
    print("task  pnn plain  pnn estimator  ratio  |  replay plain  replay estimator  ratio")
    for k in range(5):
        print(f"{k + 1:>4}  {med['pnn plain'][k]:9.3f}  {med['pnn estimator'][k]:13.3f}  "
              f"{med['pnn estimator'][k] / med['pnn plain'][k]:5.2f}  |  "
              f"{med['replay plain'][k]:12.3f}  {med['replay estimator'][k]:16.3f}  "
              f"{med['replay estimator'][k] / med['replay plain'][k]:5.2f}")
    total = {k: v.sum() for k, v in med.items()}
    print(f"all tasks: PNN estimator / plain torch = "
          f"{total['pnn estimator'] / total['pnn plain']:.2f}; generative-replay classifier "
          f"(fine-tuning) / plain torch = {total['replay estimator'] / total['replay plain']:.2f}")
    print("\nPNN parameters after each task (hidden (64, 64), 2 classes per task):")
    for adapter in ("mlp", "linear"):
        counts = count_progressive_parameters(64, (64, 64), [2] * 5, adapter=adapter)
        growth = np.diff([0, *counts])
        print(f"  adapter={adapter!r}: total {counts}; added per task {growth.tolist()}")
    print(f"  estimator (mlp): {n_params}")

    from _record import record

    what = (f"5 split-digits tasks, {EPOCHS} epochs, batch {BATCH}, median of "
            f"{args.repeats}, one torch thread")
    record("continual", title="Continual classifiers: CPU time of all five tasks",
           peer="a plain torch loop over the same modules, optimiser and batches",
           argv=argv, rows=[
               {"what": f"ProgressiveNetworkClassifier, {what}",
                "ours": total["pnn estimator"], "peer": total["pnn plain"], "unit": "CPU s",
                "better": "lower"},
               {"what": f"GenerativeReplayClassifier (generator=None), {what}",
                "ours": total["replay estimator"], "peer": total["replay plain"],
                "unit": "CPU s", "better": "lower"}],
           notes="CPU seconds of this process (time.process_time), so other processes' "
                 "load does not enter them; the estimator adds validation, skorch's "
                 "training loop and bookkeeping.")


if __name__ == "__main__":
    main()
