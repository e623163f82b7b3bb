"""SUMO estimates per second: our vectorised estimator vs a straightforward numpy loop.

The peer is the loop of Chin-Wei Huang's note with a truncation level drawn per estimate
("per-draw K"), processed in batches of 10 estimates (one numpy call per batch and step):
for each batch it draws 10 independent K_i from the paper's truncation distribution (the
same inverse-survival map as ours), draws a (10, m + max_i K_i, 2) block of samples from
q, computes all IWAE partial sums with ``np.logaddexp.accumulate``, and sums the weighted
increments Delta_{m+j-1} / P(K >= j) for j <= K_i with a mask. Padding to the batch's
largest K means it evaluates somewhat more log-weights than the sum_i (m + K_i) it uses;
ours evaluates exactly sum_i (m + K_i) in one call. Both estimate log Z for the note's
mixture energy with q = N(0, 5I), m = 1, the same number of estimates, one process,
torch limited to one thread.

Each side runs once untimed (warm-up: first-call allocations and lazy initialisation), then
``repeats`` times; the best time of each is reported.

Run: ``.venv/bin/python benchmarks/bench_sumo.py``
"""

import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from sklearn_papers.estimation import sumo_sampled

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


# The same energy in each library, written with products rather than ``** 2``: numpy
# special-cases a square, torch's float64 ``pow`` is about 15x slower than ``x * x``.
def energy_np(x):
    x0, x1 = x[..., 0], x[..., 1]
    d2 = x1 * x1
    a = -((x0 + 2) * (x0 + 2) + d2) / 2 - math.log(2)
    b = -((x0 - 2) * (x0 - 2) + d2) / 8 - math.log(8)
    return -np.logaddexp(a, b)


def energy_torch(x0, x1):
    d2 = x1 * x1
    a = -((x0 + 2) * (x0 + 2) + d2) / 2 - math.log(2)
    b = -((x0 - 2) * (x0 - 2) + d2) / 8 - math.log(8)
    return -torch.logaddexp(a, b)


def survival(j):
    return np.where(j <= 80, 1.0 / j, (1 / 80) * 0.9 ** (j - 80.0))


def numpy_loop(n, rng, m=1, batch=10):
    out = []
    for _ in range(n // batch):
        u = 1.0 - rng.uniform(size=batch)                        # one K per estimate
        tail = 80 + np.floor(np.log(80 * u) / math.log(0.9))
        K = np.where(u > 1 / 80, np.minimum(np.floor(1 / u), 80), tail).astype(int)
        k_max = K.max()
        x = rng.normal(scale=math.sqrt(5), size=(batch, m + k_max, 2))
        log_q = -0.5 * (x * x).sum(-1) / 5 - math.log(2 * math.pi * 5)
        log_w = -energy_np(x) - log_q
        iw = np.logaddexp.accumulate(log_w, axis=1) - np.log(np.arange(1, m + k_max + 1))
        j = np.arange(1, k_max + 1)
        terms = (iw[:, m:] - iw[:, m - 1:-1]) / survival(j)
        out.append(iw[:, m - 1] + np.where(j <= K[:, None], terms, 0.0).sum(1))
    return np.concatenate(out)


def ours(n, seed):
    g = torch.Generator().manual_seed(seed)

    def log_w(rows):
        # One contiguous row per coordinate (torch's elementwise kernels are fastest on
        # contiguous memory); the numpy loop keeps the note's (batch, k, 2) layout.
        x0, x1 = math.sqrt(5) * torch.randn(2, rows.shape[0], generator=g,
                                            dtype=torch.float64)
        log_q = -0.5 * (x0 * x0 + x1 * x1) / 5 - math.log(2 * math.pi * 5)
        return -energy_torch(x0, x1) - log_q

    return sumo_sampled(log_w, n, generator=g).numpy()


def _best_time(fn, repeats):
    """Smallest wall time of ``repeats`` calls after one untimed warm-up call."""
    out = fn(0)
    times = []
    for r in range(repeats):
        t = time.perf_counter()
        out = fn(r + 1)
        times.append(time.perf_counter() - t)
    return min(times), out


def main(n=100_000, repeats=3):
    torch.set_num_threads(1)
    t_loop, a = _best_time(lambda s: numpy_loop(n, np.random.RandomState(s)), repeats)
    t_ours, b = _best_time(lambda s: ours(n, s), repeats)
    print(f"{n} estimates per run, best of {repeats} runs after a warm-up run, one thread")
    print(f"numpy loop (batches of 10): {n / t_loop:12.0f} estimates/s  mean {a.mean():.4f}")
    print(f"sumo_sampled (vectorised):  {n / t_ours:12.0f} estimates/s  mean {b.mean():.4f}")
    print(f"speed-up: {t_loop / t_ours:.1f}x  (log Z = {math.log(2 * math.pi):.4f})")

    from _record import record

    record("sumo", title="SUMO estimates per second, the note's mixture energy",
           peer="numpy loop of Chin-Wei Huang's note (a K per estimate, batches of 10)",
           argv=[], rows=[{
               "what": f"{n} estimates, best of {repeats} after a warm-up, one thread",
               "ours": n / t_ours, "peer": n / t_loop, "unit": "estimates/s",
               "better": "higher"}],
           notes=f"Both estimate log Z = {math.log(2 * math.pi):.4f}: means "
                 f"{b.mean():.4f} (ours) and {a.mean():.4f} (loop).")


if __name__ == "__main__":
    main()
