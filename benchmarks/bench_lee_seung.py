"""NMF multiplicative updates: sklearn_papers (torch) against scikit-learn's solver="mu".

Both run in this process from the same initial W and H (``init="custom"``), for the same
number of iterations (``tol=0``), on

* dense: a 4000 x 2000 low-rank-plus-noise matrix, k = 30, 200 iterations;
* sparse: a bag-of-words-like CSR matrix (documents x words, 5% density, Zipf word
  frequencies, Poisson counts), k = 30, 200 iterations,

for both losses and in float64 and float32. Printed per case: wall time of each, the time
ratio (ours / scikit-learn's), the ratio of final objectives (same float64 definition for
both), and our achieved GFLOP/s (dominant matrix-product flops only: 4 n m k per iteration
for Frobenius, 8 n m k for KL on dense X; 4 nnz k and 8 nnz k for sparse) next to the
machine's measured square-matmul throughput. For dense Frobenius it also prints a bound:
the time the same flops would take at the optimistic ceiling of the skinny (k = 30)
products these updates consist of (measured in cache on one thread, times the threads),
and the time ratio that would give.

Run::

    .venv/bin/python benchmarks/bench_lee_seung.py            # everything (several minutes)
    .venv/bin/python benchmarks/bench_lee_seung.py --only dense --dtype float64
    .venv/bin/python benchmarks/bench_lee_seung.py --quick    # 20 iterations
    .venv/bin/python benchmarks/bench_lee_seung.py --threads 1  # both sides on one thread

On a machine shared with other busy processes, multi-threaded OpenMP code (torch, and
numpy's BLAS) spends most of its time waiting at barriers; ``--threads 1`` then measures
the kernels rather than the scheduler.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.decomposition import NMF as SkNMF

from sklearn_papers.decomposition import NMF

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script
from sklearn_papers.decomposition._nmf import _beta_divergence, _to_operand


def matmul_gflops(dtype, size=2000, repeats=5):
    """Measured torch square-matmul throughput (GFLOP/s) on this machine, now."""
    a = torch.rand(size, size, dtype=dtype)
    torch.mm(a, a)
    start = time.perf_counter()
    for _ in range(repeats):
        torch.mm(a, a)
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9


def skinny_gflops(dtype, m=2000, k=30, rows=128, repeats=200):
    """Optimistic ceiling (GFLOP/s) for the dense products of one NMF iteration.

    Times, on one thread, the two skinny products every multiplicative update is made of
    (``H X_i^T`` and ``W_i^T X_i`` with k = 30 on a cache-resident block of ``rows`` rows
    of ``m`` columns, where they run fastest), and multiplies by the number of torch
    threads (perfect scaling, no memory traffic: nothing real reaches it).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        H = torch.rand(k, m, dtype=dtype)
        Xi = torch.rand(rows, m, dtype=dtype)
        WiT = torch.rand(k, rows, dtype=dtype)
        acc = torch.zeros(k, m, dtype=dtype)
        best = []
        for product in (lambda: torch.mm(H, Xi.T), lambda: acc.addmm_(WiT, Xi)):
            product()
            start = time.perf_counter()
            for _ in range(repeats):
                product()
            best.append((time.perf_counter() - start) / repeats)
        return 2 * 2 * rows * m * k / sum(best) / 1e9 * threads
    finally:
        torch.set_num_threads(threads)


def dense_data(rng, n=4000, m=2000, rank=30):
    """Low-rank non-negative signal plus 10% half-normal noise."""
    signal = rng.rand(n, rank) @ rng.rand(rank, m)
    return signal + 0.1 * signal.mean() * np.abs(rng.randn(n, m))


def bag_of_words(rng, n_docs=10000, n_words=5000, density=0.05, n_topics=50):
    """Documents x words counts: Zipf word popularity mixed with topic preferences."""
    nnz_per_doc = int(density * n_words)
    zipf = 1.0 / np.arange(1, n_words + 1)
    topics = rng.dirichlet(np.full(n_words, 0.05), size=n_topics) + zipf / zipf.sum()
    topics /= topics.sum(1, keepdims=True)
    rows, cols = [], []
    doc_topic = rng.randint(n_topics, size=n_docs)
    for t in range(n_topics):
        docs = np.flatnonzero(doc_topic == t)
        for d in docs:
            words = rng.choice(n_words, size=nnz_per_doc, replace=False, p=topics[t])
            rows.append(np.full(nnz_per_doc, d))
            cols.append(words)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    counts = rng.poisson(1.5, size=rows.size) + 1.0
    return sp.csr_matrix((counts, (rows, cols)), shape=(n_docs, n_words))


def initial_factors(X, k, rng):
    """scikit-learn's "random" init: |N(0, 1)| * sqrt(mean(X) / k)."""
    avg = np.sqrt(X.mean() / k)
    return (avg * np.abs(rng.randn(X.shape[0], k)), avg * np.abs(rng.randn(k, X.shape[1])))


def run_case(name, X, k, loss, n_iter, dtype, peak, ceiling=None):
    rng = np.random.RandomState(0)
    W0, H0 = initial_factors(X, k, rng)
    X, W0, H0 = X.astype(dtype), W0.astype(dtype), H0.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        ours = NMF(k, beta_loss=loss, init="custom", max_iter=n_iter, tol=0)
        W_ours = ours.fit_transform(X, W=W0.copy(), H=H0.copy())
        t_ours = time.perf_counter() - start
        start = time.perf_counter()
        sk = SkNMF(k, beta_loss=loss, solver="mu", init="custom", max_iter=n_iter, tol=0)
        W_sk = sk.fit_transform(X, W=W0.copy(), H=H0.copy())
        t_sk = time.perf_counter() - start
    Xop = _to_operand(X, torch.device("cpu"))
    obj_ours = _beta_divergence(Xop, torch.from_numpy(W_ours),
                                torch.from_numpy(ours.components_), loss)
    obj_sk = _beta_divergence(Xop, torch.from_numpy(W_sk), torch.from_numpy(sk.components_), loss)
    work = X.nnz if sp.issparse(X) else X.shape[0] * X.shape[1]
    flops = (4 if loss == "frobenius" else 8) * work * k * n_iter
    print(f"{name:<7} {loss:<17} {np.dtype(dtype).name:<8} ours {t_ours:7.2f}s  "
          f"sklearn {t_sk:7.2f}s  time ratio {t_ours / t_sk:5.2f}  "
          f"objective ratio {obj_ours / obj_sk:.6f}  ours {flops / t_ours / 1e9:6.1f} GFLOP/s "
          f"(matmul peak {peak:5.1f})", flush=True)
    if ceiling is not None and loss == "frobenius" and not sp.issparse(X):
        t_min = flops / ceiling / 1e9
        print(f"{'':<7} bound: at the skinny-product ceiling ({ceiling:5.1f} GFLOP/s) the "
              f"same flops would take {t_min:5.2f}s, a time ratio of {t_min / t_sk:4.2f} "
              f"at best", flush=True)
    return t_ours, t_sk, obj_ours / obj_sk


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["dense", "sparse"], default=None)
    parser.add_argument("--dtype", choices=["float64", "float32"], default=None)
    parser.add_argument("--loss", choices=["frobenius", "kullback-leibler"], default=None)
    parser.add_argument("--quick", action="store_true", help="20 iterations instead of 200")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch and BLAS threads for both sides (default: torch's and "
                        "numpy's defaults); 1 gives a fair comparison on a loaded machine")
    args = parser.parse_args(argv)
    if args.threads is not None:
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(args.threads)
        threadpool_limits(args.threads)
    n_iter = 20 if args.quick else 200
    rng = np.random.RandomState(0)
    data = {}
    if args.only in (None, "dense"):
        data["dense"] = dense_data(rng)
    if args.only in (None, "sparse"):
        data["sparse"] = bag_of_words(rng)
        print(f"sparse X: {data['sparse'].shape}, density "
              f"{data['sparse'].nnz / np.prod(data['sparse'].shape):.3f}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; k = 30, "
          f"{n_iter} iterations, tol = 0, same initial W, H")
    dtypes = [args.dtype] if args.dtype else ["float64", "float32"]
    rows = []
    losses = [args.loss] if args.loss else ["frobenius", "kullback-leibler"]
    for dtype in dtypes:
        peak = matmul_gflops(getattr(torch, dtype))
        ceiling = skinny_gflops(getattr(torch, dtype))
        for name, X in data.items():
            for loss in losses:
                t_ours, t_sk, objective = run_case(name, X, 30, loss, n_iter,
                                                   np.dtype(dtype), peak, ceiling)
                shape = " x ".join(map(str, X.shape))
                rows.append({"what": f"{name} {shape}, {loss}, {dtype}, k = 30, {n_iter} "
                                     f"iterations (objective ratio {objective:.6f})",
                             "ours": t_ours, "peer": t_sk, "unit": "s", "better": "lower"})

    import sklearn
    from _record import record

    record("nmf", title="NMF multiplicative updates from the same start",
           peer=f"scikit-learn {sklearn.__version__} NMF(solver='mu')", argv=argv, rows=rows,
           notes=f"Wall time of each fit, {torch.get_num_threads()} torch thread(s); the "
                 "objective ratio (ours / scikit-learn's) checks that both reach the same "
                 "fit.")


if __name__ == "__main__":
    main()
