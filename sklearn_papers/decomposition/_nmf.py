"""Non-negative matrix factorisation by Lee & Seung's multiplicative updates, in torch."""

# The maths lives in private module-level pure functions (no estimator state) that take
# and return torch tensors on any device; the estimator only validates, initialises and
# converts. Tests import the functions directly.

import contextlib
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn_papers.nn._skorch import check_device
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    _initialize_nmf,
    check_array,
    check_is_fitted,
    validate_data,
)

__all__ = ["NMF"]

#: Relative floor kept on every entry of W and H (Gillis & Glineur 2012): the factors stay
#: strictly positive, so no update divides by zero and no entry locks at exactly zero. The
#: floor is ``_EPS * sqrt(mean(X))`` (see :func:`_positivity_floor`).
_EPS = 1e-12


def _mean(X):
    """Mean of all entries of dense or sparse X, in float64 (0 for an empty X)."""
    return float(X.mean(dtype=np.float64)) if X.shape[0] * X.shape[1] else 0.0


def _positivity_floor(mean):
    """The floor ``eps`` of W and H for data of mean ``mean``: ``1e-12 * sqrt(mean)``.

    The factors of ``c X`` are ``sqrt(c)`` times those of X, so a floor on the same scale
    keeps the updates equivariant: from initial factors scaled by ``sqrt(c)`` (``init=
    "random"``, ``"nndsvd"``, ``"custom"``; not ``"nndsvda"``/``"nndsvdar"``, whose
    scikit-learn fill values scale like ``c``), ``NMF`` of ``c X`` is ``sqrt(c)`` times
    ``NMF`` of X while the products stay within the dtype's range (an absolute floor
    would dominate the factors of data around 1e-24). ``1e-12`` when X is all zero.
    """
    return _EPS * math.sqrt(mean) if mean > 0 else _EPS

#: Elements per block of the fused dense KL pass (log, dot and divide while the block is
#: in cache). On CUDA the blocks are larger: launch overhead, not cache, is what counts.
_CHUNK_CPU = 1 << 18
_CHUNK_CUDA = 1 << 24

#: Below this many multiply-adds per matrix product (n_samples * n_features * k), the
#: updates run on one CPU thread: the products are too small to split, and switching
#: between torch's and MKL's thread pools for every small op cost up to ~1 ms per op
#: (measured 0.07 s vs 23 s for 200 iterations on a 30 x 20 X on a loaded 2-core box).
_SMALL_WORK = 1 << 22

#: Target size in bytes of one row block of X in the fused dense CPU kernels (about a
#: core's L2 cache): 1 MiB is 64 rows of a 2000-column float64 X.
_BLOCK_BYTES = 1 << 20


@contextlib.contextmanager
def _one_torch_thread():
    """Run a block with torch's intra-op thread count set to 1, restoring afterwards."""
    previous = torch.get_num_threads()
    if previous > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if previous > 1:
            torch.set_num_threads(previous)


@contextlib.contextmanager
def _cpu_threads(work, device):
    """Run a block on one torch CPU thread when ``work`` is small, restoring afterwards."""
    previous = torch.get_num_threads()
    single = device.type == "cpu" and work < _SMALL_WORK and previous > 1
    if single:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if single:
            torch.set_num_threads(previous)


def _work(X):
    """Entries of X the kernels stream over: stored entries when sparse, else all."""
    return X.nnz if sp.issparse(X) else X.shape[0] * X.shape[1]


class _SparseX(NamedTuple):
    """A sparse X on the device, ready for the multiplicative updates.

    Attributes
    ----------
    X : torch.Tensor, sparse CSR of shape (n_samples, n_features)
    XT : torch.Tensor or None, sparse CSR of shape (n_features, n_samples)
        The transpose, stored once so that ``W.T @ X`` is a CSR product too (None on
        the CPU, where ``csr`` serves both products).
    perm : torch.Tensor of int64, shape (nnz,), or None
        ``XT.values() == X.values()[perm]``: moves values computed on X's stored
        entries (such as ``X / (WH)``) into XT's order (None on the CPU).
    csr : scipy.sparse.csr_matrix or None
        On the CPU, X as a scipy CSR matrix sharing ``X.values()``'s memory (its int32 /
        int64 index arrays are scipy's own). scipy's single-threaded CSR products
        (``X @ H.T`` and, through the CSC view ``X.T``, ``X.T @ W``) are faster than
        torch's CPU CSR ``mm`` for these shapes, with identical float64 results (the
        same per-entry summation order). None on other devices.
    """

    X: torch.Tensor
    XT: torch.Tensor | None
    perm: torch.Tensor | None
    csr: sp.csr_matrix | None = None


# --------------------------------------------------------------------------------------
# torch kernels (pure functions; W and H are updated in place and returned)
# --------------------------------------------------------------------------------------


def _to_operand(X, device):
    """Turn a validated numpy / scipy X into a dense tensor or a :class:`_SparseX`.

    Dense X that is C-contiguous on the CPU is shared with numpy, never copied. Sparse X
    stays sparse: only its nnz values and indices are moved (scikit-learn #15242).
    """
    if not sp.issparse(X):
        with warnings.catch_warnings():  # read-only input (memmap) is only ever read
            warnings.filterwarnings("ignore", message=".*not writable.*")
            return torch.from_numpy(np.ascontiguousarray(X)).to(device)
    X = sp.csr_matrix(X)  # copy-free for CSR; CSC is converted (nnz-sized)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    n, m = X.shape
    if device.type == "cpu":
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not writable.*")
            values = torch.from_numpy(X.data)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
            Xt = torch.sparse_csr_tensor(
                torch.from_numpy(X.indptr.astype(np.int64)),
                torch.from_numpy(X.indices.astype(np.int64)),
                values, size=(n, m), check_invariants=False,
            )
        return _SparseX(Xt, None, None, X)
    # the transpose's value order, by transposing the positions 0..nnz-1
    pos = sp.csr_matrix((np.arange(X.nnz, dtype=np.int64), X.indices, X.indptr), shape=X.shape)
    pos_t = sp.csr_matrix(pos.T)
    pos_t.sort_indices()
    perm = torch.from_numpy(pos_t.data.astype(np.int64)).to(device)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not writable.*")
        values = torch.from_numpy(X.data).to(device)

    def csr(indptr, indices, vals, shape):
        return torch.sparse_csr_tensor(
            torch.from_numpy(indptr.astype(np.int64)).to(device),
            torch.from_numpy(indices.astype(np.int64)).to(device),
            vals, size=shape, check_invariants=False,
        )

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
        Xt = csr(X.indptr, X.indices, values, (n, m))
        XTt = csr(pos_t.indptr, pos_t.indices, values[perm], (m, n))
    return _SparseX(Xt, XTt, perm)


def _x_values(Xop):
    """The stored values of X (all of X when dense), as a 1-D tensor."""
    return Xop.X.values() if isinstance(Xop, _SparseX) else Xop.reshape(-1)


def _dot64(a, b):
    """``sum(a * b)`` accumulated in float64, as a 0-d float64 tensor."""
    return torch.dot(a.reshape(-1).double(), b.reshape(-1).double())


def _scipy_csr(Xop, values):
    """A scipy CSR matrix on X's pattern (CPU) holding ``values`` (shared, not copied)."""
    return sp.csr_matrix((values.numpy(), Xop.csr.indices, Xop.csr.indptr),
                         shape=Xop.csr.shape, copy=False)


def _x_ht(Xop, H):
    """``X @ H.T``, shape (n_samples, n_components), for dense or CSR X.

    Dense X is multiplied as ``(H @ X.T).T``: with MKL that layout was about 1.5x faster
    than ``X @ H.T`` for tall X and small k on our 2-core test machine.
    """
    if Xop.layout == torch.sparse_csr:
        return torch.mm(Xop, H.T)
    return torch.mm(H, Xop.T).T


def _sparse_x_ht(Xop, values, H):
    """``A @ H.T`` for the sparse A on X's pattern with stored ``values`` (X's or R's)."""
    if Xop.csr is not None:
        return torch.from_numpy(_scipy_csr(Xop, values) @ np.ascontiguousarray(H.numpy().T))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
        A = torch.sparse_csr_tensor(Xop.X.crow_indices(), Xop.X.col_indices(), values,
                                    size=Xop.X.shape, check_invariants=False)
    return torch.mm(A, H.T)


def _sparse_wt_x(Xop, values, W):
    """``W.T @ A`` for the sparse A on X's pattern with stored ``values`` (X's or R's)."""
    if Xop.csr is not None:  # A.T is a CSC view of the same arrays
        return torch.from_numpy(_scipy_csr(Xop, values).T @ W.numpy()).T
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
        AT = torch.sparse_csr_tensor(
            Xop.XT.crow_indices(), Xop.XT.col_indices(),
            (Xop.XT.values() if values.data_ptr() == Xop.X.values().data_ptr()
             else values[Xop.perm]),
            size=Xop.XT.shape, check_invariants=False,
        )
    return torch.mm(AT, W).T


def _wt_x(Xop, W):
    """``W.T @ X``, shape (n_components, n_features)."""
    if isinstance(Xop, _SparseX):
        return _sparse_wt_x(Xop, Xop.X.values(), W)
    return torch.mm(W.T, Xop)


def _penalty(W, H, l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H):
    """Regularisation added to the objective (scikit-learn's scaling), 0-d float64."""
    out = torch.zeros((), dtype=torch.float64, device=W.device)
    if l1_reg_W:
        out = out + l1_reg_W * W.sum(dtype=torch.float64)
    if l1_reg_H:
        out = out + l1_reg_H * H.sum(dtype=torch.float64)
    if l2_reg_W:
        out = out + 0.5 * l2_reg_W * _dot64(W, W)
    if l2_reg_H:
        out = out + 0.5 * l2_reg_H * _dot64(H, H)
    return out


def _multiply_update(A, numerator, denominator, l1_reg, l2_reg, eps):
    """``A <- max(A * numerator / (denominator + l1 + l2 * A), eps)``, in place.

    Lee & Seung's multiplicative step with scikit-learn's L1/L2 terms in the denominator
    and the positivity floor ``eps``. ``numerator`` is overwritten.
    """
    if l1_reg or l2_reg:
        denominator = denominator + l1_reg
        if l2_reg:
            denominator = denominator.add(A, alpha=l2_reg)
    numerator.div_(denominator)
    return A.mul_(numerator).clamp_min_(eps)


def _frobenius_from_w_side(sq_norm_x, XHt, HHt, W):
    """``0.5 * ||X - WH||_F^2`` from ``X H^T`` and ``H H^T`` (no n x m work), float64."""
    cross = _dot64(XHt, W)
    quad = _dot64(HHt, torch.mm(W.T, W))
    return 0.5 * (sq_norm_x - 2.0 * cross + quad)


def _frobenius_from_h_side(sq_norm_x, WtX, WtW, H, HHt):
    """``0.5 * ||X - WH||_F^2`` from ``W^T X``, ``W^T W`` and ``H H^T``, float64."""
    return 0.5 * (sq_norm_x - 2.0 * _dot64(WtX, H) + _dot64(WtW, HHt))


def _kl_dense_pass(X, W, H, buf, scratch, *, with_log, divide):
    """``buf <- X / (W @ H)`` for dense X; optionally ``sum(X * log(W @ H))``.

    One matmul into the preallocated ``buf`` (n x m), then one pass over X in row blocks:
    while a block is in cache its log is dotted with X (objective) and it is divided into
    X in place (update). No n x m temporary is allocated.

    Returns
    -------
    buf : torch.Tensor of shape (n_samples, n_features)
        ``X / (WH)`` when ``divide``, else ``WH``.
    x_log_wh : 0-d float64 tensor or None
        ``sum(X * log(WH))`` when ``with_log``.
    """
    torch.mm(W, H, out=buf)
    if not with_log:
        if divide:
            torch.div(X, buf, out=buf)
        return buf, None
    n, m = X.shape
    rows = max(1, scratch.numel() // m)
    acc = torch.zeros((), dtype=torch.float64, device=X.device)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        Xb, Bb = X[start:stop], buf[start:stop]
        Lb = scratch[: Bb.numel()].view(Bb.shape)
        torch.log(Bb, out=Lb)
        acc += torch.dot(Xb.reshape(-1), Lb.reshape(-1)).double()
        if divide:
            torch.div(Xb, Bb, out=Bb)
    return buf, acc


def _kl_sparse_pass(Xop, W, H, *, with_log, divide):
    """``R = X / (W @ H)`` on X's stored entries only, as a CSR tensor like X.

    ``W @ H`` is evaluated only where X has stored entries (``torch.sparse.sampled_addmm``,
    an SDDMM), so memory stays O(nnz + (n + m) k): the dense n x m product is never
    formed (scikit-learn #15242).

    Returns
    -------
    R : torch.Tensor, sparse CSR of shape (n_samples, n_features)
        Values ``X / (WH)`` when ``divide``, else ``WH``, on X's sparsity pattern.
    x_log_wh : 0-d float64 tensor or None
        ``sum(X * log(WH))`` over the stored entries when ``with_log``.
    """
    R = torch.sparse.sampled_addmm(Xop.X, W, H, beta=0.0)
    vals = R.values()
    xv = Xop.X.values()
    acc = torch.dot(xv, torch.log(vals)).double() if with_log else None
    if divide:
        torch.div(xv, vals, out=vals)
    return R, acc


class _RowBlocks:
    """Cache-sized row blocks of a dense CPU X, split between worker threads.

    The fused kernels (:func:`_fused_frobenius_pass`, :func:`_fused_kl_pass`) stream
    over X once per iteration: the rows of W update independently given H, so each row
    block ``X_i`` is used for ``W_i``'s update and then, while still in cache, for the
    H-update numerator with the new ``W_i``. The rows are cut into ``n_workers``
    contiguous ranges, each processed by its own thread on one torch thread with its own
    accumulators; the accumulators are summed in a fixed order, so the result does not
    depend on thread timing.

    Parameters
    ----------
    X : torch.Tensor of shape (n_samples, n_features)
        Dense, C-contiguous, on the CPU.
    k : int
        Number of components.
    block_rows : int
        Rows per block.
    n_workers : int
        Threads (at most one per row range).
    scratch : int, default=0
        Number of ``(block_rows, n_features)`` scratch buffers per worker.
    """

    def __init__(self, X, k, block_rows, n_workers, scratch=0):
        n, m = X.shape
        self.X = X
        self.block_rows = block_rows
        n_workers = max(1, min(n_workers, -(-n // block_rows)))
        self.ranges = [(j * n // n_workers, (j + 1) * n // n_workers) for j in range(n_workers)]
        self.acc = [torch.empty(k, m, dtype=X.dtype) for _ in self.ranges]
        self.scratch = [[torch.empty(block_rows * m, dtype=X.dtype) for _ in range(scratch)]
                        for _ in self.ranges]
        self._pool = ThreadPoolExecutor(n_workers) if n_workers > 1 else None

    def blocks(self, j):
        """``(start, stop)`` of the row blocks of worker ``j``."""
        lo, hi = self.ranges[j]
        return [(s, min(hi, s + self.block_rows)) for s in range(lo, hi, self.block_rows)]

    def run(self, fn):
        """``[fn(j) for j in workers]``, in parallel when there are several workers."""
        if self._pool is None:
            return [fn(0)]
        return list(self._pool.map(fn, range(len(self.ranges))))

    def summed_acc(self):
        """Sum of the workers' ``(k, n_features)`` accumulators (into the first one)."""
        out = self.acc[0]
        for other in self.acc[1:]:
            out.add_(other)
        return out

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()


def _fused_frobenius_pass(blocks, W, H, HHt, l1_reg_W, l2_reg_W, eps, with_cross=False):
    """One pass over dense X: update W (Frobenius rule) and accumulate ``W_new^T X``.

    For each row block: ``P = X_i H^T``, ``W_i <- max(eps, W_i * P / (W_i H H^T + l1 +
    l2 W_i))``, then ``W_i^T X_i`` (with the new ``W_i``) is added to the worker's
    accumulator. The result equals ``W_new^T X`` of the unfused alternating update.

    Returns
    -------
    WtX : torch.Tensor of shape (n_components, n_features)
        ``W^T X`` with the updated W.
    cross : 0-d float64 tensor or None
        ``<X H^T, W_old>`` (the old W entering the pass) when ``with_cross``.
    """
    X = blocks.X

    def work(j):
        acc = blocks.acc[j].zero_()
        cross = torch.zeros((), dtype=torch.float64) if with_cross else None
        for start, stop in blocks.blocks(j):
            Xi, Wi = X[start:stop], W[start:stop]
            P = torch.mm(H, Xi.T).T  # (rows, k); this layout was faster with MKL
            if with_cross:
                cross += _dot64(P, Wi)
            _multiply_update(Wi, P, torch.mm(Wi, HHt), l1_reg_W, l2_reg_W, eps)
            acc.addmm_(Wi.T, Xi)
        return cross

    crosses = blocks.run(work)
    return blocks.summed_acc(), (sum(crosses) if with_cross else None)


def _fused_kl_pass(blocks, W, H, H_sum, l1_reg_W, l2_reg_W, eps, update=True):
    """One pass over dense X: KL objective term, W update and the H-update numerator.

    For each row block, with ``B = W_i H`` of the W entering the pass: add
    ``sum X_i log B`` to the objective term; when ``update``,
    ``W_i <- max(eps, W_i * ((X_i / B) H^T) / (rowsum(H)^T + l1 + l2 W_i))``, then
    ``B = W_i H`` again with the new ``W_i`` and ``W_i^T (X_i / B)`` is added to the
    worker's accumulator. Two ``(block_rows, n_features)`` scratch buffers per worker
    hold ``B`` and its log; no n x m temporary is formed. CPU only.

    Returns
    -------
    x_log_wh : 0-d float64 tensor
        ``sum(X * log(W_old H))``.
    numerator : torch.Tensor of shape (n_components, n_features) or None
        ``W_new^T (X / (W_new H))`` when ``update``.
    """
    X = blocks.X
    m = X.shape[1]
    H_sum_row = H_sum.unsqueeze(0)

    def work(j):
        acc = blocks.acc[j].zero_() if update else None
        buf, logs = blocks.scratch[j]
        buf_np, logs_np = buf.numpy(), logs.numpy()
        x_log = torch.zeros((), dtype=torch.float64)
        for start, stop in blocks.blocks(j):
            Xi, Wi = X[start:stop], W[start:stop]
            size = (stop - start) * m
            B = buf[:size].view(stop - start, m)
            L = logs[:size].view(B.shape)
            torch.mm(Wi, H, out=B)
            # numpy's SIMD log: about 3x faster than torch.log on our CPUs (0.78 vs
            # 2.3 ns per float64), and it releases the GIL; the kernel is CPU-only
            np.log(buf_np[:size], out=logs_np[:size])
            x_log += torch.dot(Xi.reshape(-1), L.reshape(-1)).double()
            if not update:
                continue
            torch.div(Xi, B, out=B)
            _multiply_update(Wi, torch.mm(B, H.T), H_sum_row, l1_reg_W, l2_reg_W, eps)
            torch.mm(Wi, H, out=B)
            torch.div(Xi, B, out=B)
            acc.addmm_(Wi.T, B)
        return x_log

    x_log = sum(blocks.run(work))
    return x_log, (blocks.summed_acc() if update else None)


def _row_blocks(Xop, k, update_H, block_rows, n_workers, n_scratch):
    """The :class:`_RowBlocks` of the fused kernel, or None for the unfused kernels.

    The fused kernel runs for dense X on the CPU when H is updated and, with
    ``block_rows="auto"``, when ``n_samples * n_features * k`` is at least
    ``_SMALL_WORK``; ``block_rows=None`` never fuses, an int forces the fused kernel with
    that many rows per block (tests). ``n_workers=None`` uses torch's thread count.
    """
    if (block_rows is None or not update_H or isinstance(Xop, _SparseX)
            or Xop.device.type != "cpu" or Xop.numel() == 0):
        return None
    n, m = Xop.shape
    if block_rows == "auto":
        if n * m * k < _SMALL_WORK:
            return None
        block_rows = max(1, _BLOCK_BYTES // (m * Xop.element_size()))
    if n_workers is None:
        n_workers = torch.get_num_threads()
    return _RowBlocks(Xop.contiguous(), k, int(block_rows), int(n_workers), n_scratch)


def _beta_divergence(Xop, W, H, beta_loss):
    """Beta divergence of X and WH (1/2 squared Frobenius, or generalised KL), float64.

    Exact definition, accumulated in float64 in row blocks (no n x m temporary beyond a
    block): ``0.5 * ||X - WH||_F^2`` for Frobenius; ``sum(X log(X / WH) - X + WH)`` with
    ``0 log 0 = 0`` for KL. For sparse X only stored entries are visited.

    Parameters
    ----------
    Xop : torch.Tensor or _SparseX
    W : torch.Tensor of shape (n_samples, n_components)
    H : torch.Tensor of shape (n_components, n_features)
    beta_loss : {"frobenius", "kullback-leibler"}

    Returns
    -------
    divergence : float
    """
    W64, H64 = W.double(), H.double()
    if isinstance(Xop, _SparseX):
        xv = Xop.X.values().double()
        X64 = torch.sparse_csr_tensor(Xop.X.crow_indices(), Xop.X.col_indices(), xv,
                                      size=Xop.X.shape, check_invariants=False)
        if beta_loss == "frobenius":
            sq = torch.dot(xv, xv)
            cross = _dot64(torch.mm(X64, H64.T), W64)
            quad = _dot64(torch.mm(W64.T, W64), torch.mm(H64, H64.T))
            return _checked_divergence(0.5 * (sq - 2.0 * cross + quad))
        wh = torch.sparse.sampled_addmm(X64, W64, H64, beta=0.0).values()
        sum_wh = torch.dot(W64.sum(0), H64.sum(1))
        res = _x_log_x_over_wh(xv, wh).sum() - xv.sum() + sum_wh
        return _checked_divergence(res)
    n, m = Xop.shape
    rows = max(1, (_CHUNK_CUDA if Xop.is_cuda else 1 << 20) // m)
    acc = torch.zeros((), dtype=torch.float64, device=Xop.device)
    for start in range(0, n, rows):
        Xb = Xop[start:start + rows].double()
        WHb = W64[start:start + rows] @ H64
        if beta_loss == "frobenius":
            acc += 0.5 * ((Xb - WHb) ** 2).sum()
        else:
            acc += (_x_log_x_over_wh(Xb, WHb) - Xb + WHb).sum()
    return _checked_divergence(acc)


def _x_log_x_over_wh(X, WH):
    """``X log(X / WH)`` entrywise, as ``xlogy(X, X) - xlogy(X, WH)`` (float64 tensors).

    ``0 log(0 / WH) = 0`` even where ``WH = 0`` (factors from other solvers may hold 0).
    The ratio ``X / WH`` is never formed: for a subnormal X entry (1e-323) it underflows
    to 0 and its log is -inf, while each log here is finite and the term is about 1e-320.
    """
    return torch.special.xlogy(X, X) - torch.special.xlogy(X, WH)


def _checked_divergence(value):
    """A divergence tensor as a float >= 0; a non-finite one raises instead of hiding.

    Rounding can leave a divergence of (nearly) exact factors a little below 0; that is
    reported as 0. A non-finite value (``WH = 0`` where ``X > 0``, or an overflow) raises
    ``ValueError``.
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(
            f"the beta divergence of X and W @ H is {value}: W @ H is 0 where X > 0, or "
            "the products overflow. Rescale X, or use factors that are positive wherever "
            "X is.")
    return max(value, 0.0)


def _fit_multiplicative_update(Xop, W, H, *, beta_loss="frobenius", max_iter=200, tol=1e-4,
                               l1_reg_W=0.0, l1_reg_H=0.0, l2_reg_W=0.0, l2_reg_H=0.0,
                               update_H=True, eps=_EPS, verbose=0, block_rows="auto",
                               n_workers=None):
    """Lee & Seung (2001) multiplicative updates, W then H, for Frobenius or KL.

    Frobenius (Lee & Seung 2001, update rule (4), Theorem 1)::

        W <- max(eps, W * (X H^T) / (W H H^T + l1_W + l2_W W))
        H <- max(eps, H * (W^T X) / (W^T W H + l1_H + l2_H H))

    Generalised KL divergence (update rule (5), Theorem 2)::

        W <- max(eps, W * ((X / WH) H^T) / (1 rowsum(H)^T + l1_W + l2_W W))
        H <- max(eps, H * (W^T (X / WH)) / (colsum(W) 1^T + l1_H + l2_H H))

    Each step minimises a separable convex auxiliary function of the block; the floor
    ``eps`` is the minimiser of that function over ``[eps, inf)``, so the objective is
    non-increasing at every iteration (Gillis & Glineur 2012, Sec. 2).

    For dense X on the CPU (above a small size) one iteration is a single pass over X in
    cache-sized row blocks (:func:`_fused_frobenius_pass`, :func:`_fused_kl_pass`): the
    rows of W update independently given H, so each block of X serves ``W_i``'s update
    and then, with the new ``W_i``, the H-update numerator. The iterates are those of
    the alternating updates above (W with the old H, then H with the new W); only the
    summation order of ``W^T X`` differs. The blocks are shared between
    ``torch.get_num_threads()`` Python threads, each running torch on one thread
    (torch's thread count is set to 1 for the duration and restored afterwards).

    Parameters
    ----------
    Xop : torch.Tensor of shape (n_samples, n_features) or _SparseX
        Non-negative data on the device.
    W : torch.Tensor of shape (n_samples, n_components)
        Initial W, entries >= eps; updated in place.
    H : torch.Tensor of shape (n_components, n_features)
        Initial H, entries >= eps; updated in place when ``update_H``.
    beta_loss : {"frobenius", "kullback-leibler"}, default="frobenius"
    max_iter : int, default=200
    tol : float, default=1e-4
        Every 10 iterations, stop when the decrease of ``sqrt(2 * divergence)`` since the
        last check, relative to its value at the initialisation, is below ``tol``
        (scikit-learn's criterion). ``tol=0`` runs ``max_iter`` iterations.
    l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H : float, default=0.0
        Scaled regularisation strengths (see ``NMF``).
    update_H : bool, default=True
        False solves for W only (``transform``).
    eps : float, default=1e-12
        Positivity floor.
    verbose : int, default=0
        A tqdm bar over iterations when > 0.
    block_rows : "auto", int or None, default="auto"
        Rows per block of the fused one-pass kernel (dense CPU X, ``update_H`` only):
        ``"auto"`` fuses problems of at least ``_SMALL_WORK`` multiply-adds with blocks
        of about ``_BLOCK_BYTES``; an int forces the fused kernel; None never fuses.
    n_workers : int or None, default=None
        Threads sharing the row blocks of the fused kernel; None is
        ``torch.get_num_threads()``.

    Returns
    -------
    W : torch.Tensor of shape (n_samples, n_components)
    H : torch.Tensor of shape (n_components, n_features)
    n_iter : int
        Iterations run.
    losses : list of float
        Objective (divergence plus regularisation) after each iteration.
    """
    from tqdm.auto import tqdm

    sparse = isinstance(Xop, _SparseX)
    xv = _x_values(Xop)
    reg = (l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H)
    losses = []
    state = {"init": None, "prev": None}

    def record(div, pen=None):
        """Store the loss of the current (W, H); return True when converged.

        ``pen`` is the penalty of that (W, H) when W has already moved on.
        """
        losses.append(div + (_penalty(W, H, *reg) if pen is None else pen))
        n_done = len(losses)
        if tol > 0 and n_done % 10 == 0:
            error = math.sqrt(2.0 * max(float(div), 0.0))
            if (state["prev"] - error) / state["init"] < tol:
                return True
            state["prev"] = error
        return False

    def start(div):
        state["init"] = state["prev"] = math.sqrt(2.0 * max(float(div), 0.0)) or 1.0

    blocks = _row_blocks(Xop, H.shape[0], update_H, block_rows, n_workers,
                         n_scratch=0 if beta_loss == "frobenius" else 2)
    bar = tqdm(total=max_iter, desc="NMF", disable=verbose <= 0, leave=False)
    with contextlib.ExitStack() as stack:
        if blocks is not None:
            stack.callback(blocks.close)
            stack.enter_context(_one_torch_thread())
        elif (sparse and Xop.csr is not None
              and sum(Xop.csr.shape) * H.shape[0] <= Xop.csr.nnz):
            # the sparse products run on one thread in scipy; when the dense
            # (n + m) k^2 products cost no more than they do, torch on one thread too
            # avoids waking its pool for every small op (bench_nmf.py's sparse X,
            # 200 Frobenius iterations, float64, 2-core box at load ~1.7: 44.9 s with
            # torch CSR products on 2 threads, 10.1 s with this)
            stack.enter_context(_one_torch_thread())
        if beta_loss == "frobenius":
            _frobenius_loop(Xop, W, H, blocks, xv, sparse, max_iter, update_H, reg, eps,
                            start, record, bar)
        else:
            _kl_loop(Xop, W, H, blocks, xv, sparse, max_iter, update_H, reg, eps, tol,
                     start, record, bar)
    bar.close()
    n_iter = len(losses)
    return W, H, n_iter, [float(v) for v in losses]


def _frobenius_loop(Xop, W, H, blocks, xv, sparse, max_iter, update_H, reg, eps, start,
                    record, bar):
    """The Frobenius iterations of :func:`_fit_multiplicative_update` (in place)."""
    l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H = reg
    sq_norm_x = torch.dot(xv, xv).double()
    HHt = torch.mm(H, H.T)
    XHt = None
    for n_iter in range(1, max_iter + 1):
        if blocks is not None:  # one fused pass: W update and W_new^T X
            first = n_iter == 1
            WtW_old = torch.mm(W.T, W) if first else None
            WtX, cross = _fused_frobenius_pass(blocks, W, H, HHt, l1_reg_W, l2_reg_W,
                                               eps, with_cross=first)
            if first:  # the objective at the initialisation, from the same pass
                start(0.5 * (sq_norm_x - 2.0 * cross + _dot64(HHt, WtW_old)))
        else:
            if XHt is None or update_H:
                XHt = (_sparse_x_ht(Xop, xv, H) if sparse else _x_ht(Xop, H))
            if n_iter == 1:
                start(_frobenius_from_w_side(sq_norm_x, XHt, HHt, W))
            num = XHt.clone() if not update_H else XHt
            _multiply_update(W, num, torch.mm(W, HHt), l1_reg_W, l2_reg_W, eps)
            WtX = _wt_x(Xop, W) if update_H else None
        if update_H:
            WtW = torch.mm(W.T, W)
            # (a copy: W^T X is needed again for the objective below)
            _multiply_update(H, WtX.clone(memory_format=torch.contiguous_format),
                             torch.mm(WtW, H), l1_reg_H, l2_reg_H, eps)
            HHt = torch.mm(H, H.T)
            # objective of the new (W, H) without an n x m pass: W^T X was computed
            # with the new W, and it is bilinear in H
            div = _frobenius_from_h_side(sq_norm_x, WtX, WtW, H, HHt)
        else:
            div = _frobenius_from_w_side(sq_norm_x, XHt, HHt, W)
        bar.update(1)
        if record(div):
            break


def _kl_loop(Xop, W, H, blocks, xv, sparse, max_iter, update_H, reg, eps, tol, start,
             record, bar):
    """The KL iterations of :func:`_fit_multiplicative_update` (in place)."""
    l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H = reg
    sum_x = xv.sum(dtype=torch.float64)
    xlogx = torch.special.xlogy(xv, xv).sum(dtype=torch.float64)
    if not sparse and blocks is None:
        buf = torch.empty_like(Xop)
        chunk = _CHUNK_CUDA if Xop.is_cuda else _CHUNK_CPU
        scratch = torch.empty(min(Xop.numel(), max(chunk, Xop.shape[1])),
                              dtype=Xop.dtype, device=Xop.device)

    def ratio(with_log, divide=True):
        if sparse:
            return _kl_sparse_pass(Xop, W, H, with_log=with_log, divide=divide)
        return _kl_dense_pass(Xop, W, H, buf, scratch, with_log=with_log, divide=divide)

    def kl(x_log_wh, H_sum):
        # sum X log(X/WH) - X + WH, with sum(WH) = colsum(W) . rowsum(H)
        return xlogx - x_log_wh - sum_x + _dot64(W.sum(0), H_sum)

    converged = False
    for it in range(1, max_iter + 1):
        H_sum = H.sum(1)
        if blocks is not None:
            # one fused pass: objective of the (W, H) entering this iteration, the W
            # update, and the H-update numerator with the new W
            pen, W_sum = _penalty(W, H, *reg), W.sum(0)
            W_prev = W.clone() if tol > 0 and it > 1 else None
            x_log_wh, num = _fused_kl_pass(blocks, W, H, H_sum, l1_reg_W, l2_reg_W, eps)
            div = xlogx - x_log_wh - sum_x + _dot64(W_sum, H_sum)
            if it == 1:
                start(div)
            elif record(div, pen):
                W.copy_(W_prev)  # converged before this iteration: undo its W update
                converged = True
                break
            _multiply_update(H, num, W.sum(0).unsqueeze(1), l1_reg_H, l2_reg_H, eps)
            bar.update(1)
            continue
        R, x_log_wh = ratio(with_log=True)
        div = kl(x_log_wh, H_sum)  # objective of the (W, H) entering this iteration
        if it == 1:
            start(div)
        elif record(div):
            converged = True
            break
        num = _sparse_x_ht(Xop, R.values(), H) if sparse else _x_ht(R, H)
        _multiply_update(W, num, H_sum.unsqueeze(0), l1_reg_W, l2_reg_W, eps)
        if update_H:
            R, _ = ratio(with_log=False)
            num = _sparse_wt_x(Xop, R.values(), W) if sparse else torch.mm(W.T, R)
            _multiply_update(H, num.contiguous(), W.sum(0).unsqueeze(1), l1_reg_H,
                             l2_reg_H, eps)
        bar.update(1)
    if not converged:
        if blocks is not None:
            x_log_wh, _ = _fused_kl_pass(blocks, W, H, H.sum(1), l1_reg_W, l2_reg_W, eps,
                                         update=False)
        else:
            _, x_log_wh = ratio(with_log=True, divide=False)
        record(kl(x_log_wh, H.sum(1)))


# --------------------------------------------------------------------------------------
# scikit-learn's solver="mu", in torch (any beta; its thresholds and stopping rule)
# --------------------------------------------------------------------------------------

#: scikit-learn's multiplicative-update constants: ``_SK_EPSILON`` (float32's epsilon)
#: replaces small ``WH`` entries and zero denominators, and X entries at or below it are
#: left out of its beta divergence; entries of W (beta < 1) and H (beta <= 1) below
#: ``_SK_ZERO`` (float64's epsilon) are set to 0 after each update.
_SK_EPSILON = float(np.finfo(np.float32).eps)
_SK_ZERO = float(np.finfo(np.float64).eps)

#: Names of the beta divergences (scikit-learn's aliases).
_BETA_ALIASES = {"frobenius": 2.0, "kullback-leibler": 1.0, "itakura-saito": 0.0}
#: The losses of the floored solver, by beta.
_BETA_NAMES = {2.0: "frobenius", 1.0: "kullback-leibler"}


def _init_random_state(random_state):
    """``random_state`` for scikit-learn's ``_initialize_nmf``: as given, except None, which
    becomes a fresh int seed from the operating system's entropy (scikit-learn would draw
    from numpy's global generator). An int is passed as an int, so that every generator the
    initialisation makes (its randomized SVD, its random fill) starts from it, as in
    scikit-learn."""
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    return random_state


def _beta_to_float(beta_loss):
    """``beta_loss`` as a float (``"frobenius"`` 2, ``"kullback-leibler"`` 1,
    ``"itakura-saito"`` 0)."""
    return float(_BETA_ALIASES.get(beta_loss, beta_loss)) if isinstance(beta_loss, str) \
        else float(beta_loss)


def _mu_gamma(beta):
    """Exponent of the majorise-minimise step (Fevotte & Idier 2011), as scikit-learn."""
    if beta < 1:
        return 1.0 / (2.0 - beta)
    if beta > 2:
        return 1.0 / (beta - 1.0)
    return 1.0


def _row_block_size(m, device):
    return max(1, (_CHUNK_CUDA if device.type == "cuda" else _CHUNK_CPU) // max(m, 1))


def _wh_at_x(Xop, W, H):
    """``W @ H`` where X is stored: the dense product, or its values on X's pattern."""
    if isinstance(Xop, _SparseX):
        return torch.sparse.sampled_addmm(Xop.X, W, H, beta=0.0).values()
    return torch.mm(W, H)


def _mu_ratio(xv, wh, beta):
    """``X * WH**(beta - 2)`` on X's entries, with small ``WH`` replaced as scikit-learn
    does (``wh`` is overwritten)."""
    if beta < 2:
        wh.clamp_min_(_SK_EPSILON)
    if beta == 1:
        return torch.div(xv.reshape(wh.shape), wh, out=wh)
    if beta == 0:
        wh.reciprocal_().pow_(2)
    else:
        wh.pow_(beta - 2)
    return wh.mul_(xv.reshape(wh.shape))


def _wh_power_products(W, H, beta, *, side):
    """``(WH)**(beta - 1) @ H^T`` (``side="w"``) or ``W^T @ (WH)**(beta - 1)``
    (``side="h"``), over every entry of ``WH`` in row blocks (small entries raised to
    ``_SK_EPSILON`` first when ``beta < 1``)."""
    n, m = W.shape[0], H.shape[1]
    rows = _row_block_size(m, W.device)
    out = (torch.empty((n, H.shape[0]), dtype=W.dtype, device=W.device) if side == "w"
           else torch.zeros((W.shape[1], m), dtype=W.dtype, device=W.device))
    for start in range(0, n, rows):
        Wb = W[start:start + rows]
        WHb = torch.mm(Wb, H)
        if beta < 1:
            WHb.clamp_min_(_SK_EPSILON)
        WHb.pow_(beta - 1)
        if side == "w":
            out[start:start + rows] = torch.mm(WHb, H.T)
        else:
            out.addmm_(Wb.T, WHb)
    return out


def _mu_finish(A, numerator, denominator, l1_reg, l2_reg, gamma):
    """``A *= (numerator / denominator') ** gamma`` with scikit-learn's regularised
    denominator (zeros replaced by ``_SK_EPSILON``); ``numerator`` is overwritten."""
    if l1_reg > 0:
        denominator = denominator + l1_reg
    if l2_reg > 0:
        denominator = denominator + l2_reg * A
    denominator = torch.where(denominator == 0, _SK_EPSILON, denominator)
    numerator.div_(denominator)
    if gamma != 1:
        numerator.pow_(gamma)
    return A.mul_(numerator)


def _mu_update_w(Xop, W, H, beta, l1_reg, l2_reg, gamma, cache, update_H):
    """scikit-learn's ``_multiplicative_update_w``; ``cache`` keeps ``X H^T``, ``H H^T``
    and ``rowsum(H)`` while H is fixed."""
    sparse = isinstance(Xop, _SparseX)
    if beta == 2:
        if cache.get("XHt") is None:
            cache["XHt"] = _sparse_x_ht(Xop, Xop.X.values(), H) if sparse else _x_ht(Xop, H)
        numerator = cache["XHt"] if update_H else cache["XHt"].clone()
        if cache.get("HHt") is None:
            cache["HHt"] = torch.mm(H, H.T)
        denominator = torch.mm(W, cache["HHt"])
    else:
        R = _mu_ratio(_x_values(Xop), _wh_at_x(Xop, W, H), beta)
        numerator = (_sparse_x_ht(Xop, R, H) if sparse else torch.mm(R, H.T)).contiguous()
        if beta == 1:
            if cache.get("H_sum") is None:
                cache["H_sum"] = H.sum(1)
            denominator = cache["H_sum"].unsqueeze(0)
        else:
            denominator = _wh_power_products(W, H, beta, side="w")
    return _mu_finish(W, numerator, denominator, l1_reg, l2_reg, gamma)


def _mu_update_h(Xop, W, H, beta, l1_reg, l2_reg, gamma):
    """scikit-learn's ``_multiplicative_update_h`` (batch form)."""
    sparse = isinstance(Xop, _SparseX)
    if beta == 2:
        numerator = _wt_x(Xop, W).contiguous()
        denominator = torch.mm(torch.mm(W.T, W), H)
    else:
        R = _mu_ratio(_x_values(Xop), _wh_at_x(Xop, W, H), beta)
        numerator = (_sparse_wt_x(Xop, R, W) if sparse else torch.mm(W.T, R)).contiguous()
        if beta == 1:
            W_sum = W.sum(0)
            W_sum = torch.where(W_sum == 0, 1.0, W_sum)
            denominator = W_sum.unsqueeze(1)
        else:
            denominator = _wh_power_products(W, H, beta, side="h")
    return _mu_finish(H, numerator, denominator, l1_reg, l2_reg, gamma)


def _sk_beta_divergence(Xop, W, H, beta):
    """scikit-learn's ``_beta_divergence`` (the objective its ``solver="mu"`` reports),
    accumulated in float64.

    Frobenius is ``0.5 * ||X - WH||_F^2``. For other beta, entries of X at or below
    ``_SK_EPSILON`` are left out of the sums over X, and ``WH`` there is raised to at
    least ``_SK_EPSILON``; for beta not in (0, 1, 2) the sum of ``WH ** beta`` runs over
    every entry.
    """
    W64, H64 = W.double(), H.double()
    sparse = isinstance(Xop, _SparseX)
    if beta == 2:
        if sparse:
            xv = Xop.X.values().double()
            quad = _dot64(torch.mm(W64.T, W64), torch.mm(H64, H64.T))
            cross = _dot64(_sparse_x_ht(Xop, xv, H64), W64)
            return float(0.5 * (torch.dot(xv, xv) + quad - 2.0 * cross))
        acc = torch.zeros((), dtype=torch.float64, device=W.device)
        rows = _row_block_size(Xop.shape[1], W.device)
        for start in range(0, Xop.shape[0], rows):
            diff = Xop[start:start + rows].double() - W64[start:start + rows] @ H64
            acc += torch.dot(diff.reshape(-1), diff.reshape(-1))
        return float(0.5 * acc)
    n, m = Xop.X.shape if sparse else Xop.shape
    rows = _row_block_size(m, W.device)
    acc = torch.zeros((), dtype=torch.float64, device=W.device)
    sum_wh_beta = torch.zeros((), dtype=torch.float64, device=W.device)
    generic = beta not in (0, 1)

    def add(xv, wh):
        """Sums over X's entries: entries at or below _SK_EPSILON are left out."""
        keep = xv > _SK_EPSILON
        wh = wh.clamp_min(_SK_EPSILON)
        if beta == 1:
            term = xv * torch.log(xv / wh) - xv
        elif beta == 0:
            div = xv / wh
            term = div - torch.log(div)
        else:
            term = xv ** beta - beta * xv * wh ** (beta - 1)
        return torch.where(keep, term, 0.0).sum()

    if sparse:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
            X64 = torch.sparse_csr_tensor(Xop.X.crow_indices(), Xop.X.col_indices(),
                                          Xop.X.values().double(), size=Xop.X.shape,
                                          check_invariants=False)
        acc += add(X64.values(), torch.sparse.sampled_addmm(X64, W64, H64,
                                                            beta=0.0).values())
        if generic:  # sum of WH ** beta over every entry, in row blocks
            for start in range(0, n, rows):
                sum_wh_beta += ((W64[start:start + rows] @ H64) ** beta).sum()
    else:
        for start in range(0, n, rows):
            WHb = W64[start:start + rows] @ H64
            acc += add(Xop[start:start + rows].double(), WHb)
            if generic:
                sum_wh_beta += (WHb ** beta).sum()
    if beta == 1:
        return float(acc + _dot64(W64.sum(0), H64.sum(1)))
    if beta == 0:
        return float(acc - n * m)
    return float((acc + sum_wh_beta * (beta - 1)) / (beta * (beta - 1)))


def _fit_sklearn_mu(Xop, W, H, *, beta, max_iter=200, tol=1e-4, l1_reg_W=0.0, l1_reg_H=0.0,
                    l2_reg_W=0.0, l2_reg_H=0.0, update_H=True, verbose=0):
    """scikit-learn's ``solver="mu"`` (``_fit_multiplicative_update``) for any beta.

    The same updates in the same order as scikit-learn 1.6+ (W then H; its thresholds
    ``_SK_EPSILON`` and ``_SK_ZERO``; the exponent ``gamma`` of Fevotte & Idier outside
    ``1 <= beta <= 2``), run as torch tensor code on X's device, dense or sparse. Every
    10 iterations (``tol > 0``) it stops when the decrease of ``sqrt(2 * divergence)``
    since the last check, divided by its value at the start, is below ``tol``.

    Parameters
    ----------
    Xop : torch.Tensor or _SparseX
    W, H : torch.Tensor
        Initial factors (updated in place; H only when ``update_H``).
    beta : float
    max_iter, tol, l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H, update_H, verbose
        As :func:`_fit_multiplicative_update`.

    Returns
    -------
    W, H : torch.Tensor
    n_iter : int
    losses : list of float
        scikit-learn's divergence plus the penalty after every 10th iteration and after
        the last one (evaluating it every iteration would cost as much as the updates).
    """
    from tqdm.auto import tqdm

    gamma = _mu_gamma(beta)
    reg = (l1_reg_W, l1_reg_H, l2_reg_W, l2_reg_H)
    with np.errstate(all="ignore"):  # scikit-learn's arithmetic, 0/0 included
        error_at_init = np.sqrt(2 * np.float64(max(_sk_beta_divergence(Xop, W, H, beta), 0)))
    previous = error_at_init
    losses, cache = [], {}
    bar = tqdm(total=max_iter, desc="NMF", disable=verbose <= 0, leave=False)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        _mu_update_w(Xop, W, H, beta, l1_reg_W, l2_reg_W, gamma, cache, update_H)
        if beta < 1:
            W.masked_fill_(W < _SK_ZERO, 0.0)
        if update_H:
            _mu_update_h(Xop, W, H, beta, l1_reg_H, l2_reg_H, gamma)
            cache.clear()
            if beta <= 1:
                H.masked_fill_(H < _SK_ZERO, 0.0)
        bar.update(1)
        if n_iter % 10 and n_iter < max_iter:
            continue
        # every 10 iterations and after the last: the objective, and scikit-learn's test
        div = _sk_beta_divergence(Xop, W, H, beta)
        losses.append(div + float(_penalty(W, H, *reg)))
        if tol > 0 and n_iter % 10 == 0:
            with np.errstate(all="ignore"):
                error = np.sqrt(2 * np.float64(max(div, 0)))
                if (previous - error) / error_at_init < tol:
                    break
            previous = error
    bar.close()
    return W, H, n_iter, losses


# --------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------


def _check_non_negative(X, whom):
    """Raise a ValueError naming the smallest entry and its (row, column) if it is < 0."""
    if sp.issparse(X):
        data = X.data
        if data.size == 0:
            return
        k = int(np.argmin(data))
        value = data[k]
        if value >= 0:
            return
        major = int(np.searchsorted(X.indptr, k, side="right") - 1)
        minor = int(X.indices[k])
        row, col = (major, minor) if X.format == "csr" else (minor, major)
    else:
        if X.size == 0:
            return
        k = int(np.argmin(X))
        value = X.flat[k]
        if value >= 0:
            return
        row, col = (int(i) for i in np.unravel_index(k, X.shape))
    raise ValueError(
        f"Negative values in data passed to {whom}: NMF needs X >= 0, but the smallest "
        f"(most negative) entry is {float(value)!r} at row {row}, column {col}."
    )


def _check_custom(A, shape, dtype, name):
    """Validate a user-given initial W or H: shape, finite, non-negative; cast to
    ``dtype`` (None keeps the given dtype). Shape errors use scikit-learn's wording."""
    if A is None:
        raise ValueError(f"init='custom' needs both W and H; {name} is None.")
    A = check_array(A, dtype="numeric" if dtype is None else dtype, input_name=name)
    for axis, which in ((0, "first"), (1, "second")):
        if A.shape[axis] != shape[axis]:
            raise ValueError(
                f"Array with wrong {which} dimension passed to NMF (input {name}). Expected "
                f"{shape[axis]}, but got {A.shape[axis]} (init='custom': {name} has shape "
                f"{A.shape}, expected {shape}).")
    _check_non_negative(A, f"NMF (initial {name})")
    return A


# --------------------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------------------


def _check_finite_factors(X, *factors):
    """Refuse non-finite factors: products of X, W and H left the dtype's range."""
    if all(bool(torch.isfinite(f).all()) for f in factors):
        return
    x_max = float(abs(X).max())
    # The factors scale like sqrt(X) and the updates multiply three of them: near the
    # bottom of the range their products underflow to 0 (0/0 = NaN), near the top they
    # overflow.
    info = np.finfo(X.dtype)
    tiny = x_max <= float(info.tiny) ** (1.0 / 3.0) * 1e3
    what = ("underflowed" if tiny else "overflowed")
    size = "small" if tiny else "large"
    hint = " (or use float64)" if tiny and X.dtype == np.float32 else ""
    raise ValueError(
        f"NMF's multiplicative updates {what} in {X.dtype} (non-finite factors): X's "
        f"largest entry {x_max:.3g} is too {size} for products of X, W and H. Rescale X"
        f"{hint}, e.g. fit X / c; the factors of X are then W * sqrt(c) and H * sqrt(c) "
        "(without regularization)."
    )


class NMF(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Non-negative matrix factorisation with Lee & Seung's multiplicative updates.

    Finds non-negative ``W`` (n_samples, n_components) and ``H`` (n_components,
    n_features) with ``X ~ W H`` by minimising, for ``beta_loss="frobenius"``,

    .. math::

        L(W, H) = \tfrac12 \|X - WH\|_F^2 + \text{penalty}(W, H),

    or for ``beta_loss="kullback-leibler"`` the generalised (unnormalised) KL
    divergence :math:`D(X \| WH) = \sum_{ij} X_{ij} \log \frac{X_{ij}}{(WH)_{ij}}
    - X_{ij} + (WH)_{ij}` plus the same penalty, with

    .. math::

        \text{penalty} = \alpha_W \rho\, m \|W\|_1 + \alpha_H \rho\, n \|H\|_1
        + \tfrac12 \alpha_W (1-\rho)\, m \|W\|_F^2 + \tfrac12 \alpha_H (1-\rho)\, n \|H\|_F^2

    (:math:`\rho` = ``l1_ratio``, ``n`` = n_samples, ``m`` = n_features; scikit-learn's
    scaling). W and H are updated alternately by the multiplicative rules of Lee & Seung
    (2001), update rules (4) (Frobenius) and (5) (KL), under which the objective is
    non-increasing (their Theorems 1 and 2). The kernels are torch code that runs on the
    CPU or a CUDA device, on dense X or on scipy sparse X (where ``X / (WH)`` is
    evaluated only on the stored entries, never densifying X).

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rank ``k`` of the factorisation. ``"auto"`` (scikit-learn's default) and None keep
        all features (``k = n_features``), except with ``init="custom"``, where ``k`` is
        read from ``H``. Values above ``min(n_samples, n_features)`` are allowed with
        ``init=None`` (which then uses ``"random"``, as scikit-learn does) and
        ``"random"``/``"custom"``; the SVD-based inits raise ``ValueError`` for them.
    solver : {"floored-mu", "mu", "cd"}, default="floored-mu"
        ``"floored-mu"``: Lee & Seung's updates with every entry of W and H kept at or
        above a positivity floor (see Notes), for ``beta_loss`` 2 and 1, with fused
        one-pass CPU kernels. ``"mu"``: scikit-learn's ``NMF(solver="mu")``, the same
        iterates (its thresholds, its zeroing of small entries, its exponent for other
        beta, its stopping rule and ``reconstruction_err_``) for any ``beta_loss``, as
        torch code; see the user guide for the scikit-learn tests it passes and where it
        differs. ``"cd"`` raises ``ValueError``: coordinate descent is
        ``sklearn.decomposition.NMF(solver="cd")``.
    beta_loss : float or {"frobenius", "kullback-leibler", "itakura-saito"}, default="frobenius"
        The beta divergence minimised: 2 (``"frobenius"``, half the squared Frobenius
        norm), 1 (``"kullback-leibler"``, the generalised KL divergence), 0
        (``"itakura-saito"``) or any other float (Fevotte & Idier 2011). Values other
        than 2 and 1 need ``solver="mu"``, and values <= 0 need X without zeros.
    init : {"random", "nndsvd", "nndsvda", "nndsvdar", "custom"}, default=None
        Initialisation, with scikit-learn's meaning (its own initialiser is called):
        None is ``"nndsvda"`` when ``n_components <= min(n_samples, n_features)``, else
        ``"random"``; ``"random"`` draws ``|N(0, 1)| * sqrt(mean(X) / k)``; the NNDSVD
        variants (Boutsidis & Gallopoulos 2008) differ in how SVD zeros are filled (left
        at zero, the mean of X, or small random values); ``"custom"`` uses the ``W`` and
        ``H`` passed to ``fit``. For data with ``mean(X) < 1``, NNDSVD's threshold for
        setting small entries to zero (scikit-learn's absolute ``1e-6``) is scaled by
        ``sqrt(mean(X))``, so small-valued data keeps its SVD start; at ``mean(X) >= 1``
        the initialisation is scikit-learn's exactly (including NNDSVDa's fill value
        ``mean(X)``, which does not scale like the factors: only ``"random"``,
        ``"nndsvd"`` and ``"custom"`` make the fit exactly scale-equivariant). Entries below the floor
        ``eps = 1e-12 * sqrt(mean(X))`` are then raised to it (see Notes).
    max_iter : int, default=200
        Maximum number of iterations (one iteration updates W, then H).
    tol : float, default=1e-4
        Every 10 iterations, stop when the decrease of ``sqrt(2 * divergence)`` since the
        previous check, divided by its value at the initialisation, is below ``tol``
        (scikit-learn's criterion). ``tol=0`` always runs ``max_iter`` iterations.
    alpha_W : float, default=0.0
        Regularisation strength on W (multiplied by n_features, as in scikit-learn).
    alpha_H : float or "same", default="same"
        Regularisation strength on H (multiplied by n_samples); ``"same"`` uses
        ``alpha_W``.
    l1_ratio : float, default=0.0
        Mix between L1 (1.0) and squared L2 (0.0) penalties, in ``[0, 1]``.
    random_state : int, RandomState instance or None, default=None
        Seeds the ``"random"`` and ``"nndsvdar"`` inits and the randomized SVD of the
        NNDSVD inits. The updates themselves are deterministic.
    shuffle : bool, default=False
        Accepted for scikit-learn's signature; it orders coordinate descent's updates
        and has no effect on the multiplicative updates (as in scikit-learn with
        ``solver="mu"``).
    device : str or torch.device, default="cpu"
        Where the kernels run (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...). Outputs are
        numpy arrays on the host whatever the device.
    verbose : int, default=0
        Greater than 0 shows a progress bar over iterations.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The factor ``H``; same dtype as the training X (float32 or float64).
    n_components_ : int
        Number of components used.
    reconstruction_err_ : float
        ``sqrt(2 * divergence(X, W H))`` at the end of the fit, without the penalty; for
        Frobenius this is ``||X - WH||_F`` (scikit-learn's definition; with
        ``solver="mu"`` its divergence exactly, see Notes). Computed in float64 from the
        final factors.
    n_iter_ : int
        Number of iterations run.
    loss_curve_ : list of float
        Objective (divergence plus penalty) after every iteration; ``loss_curve_[i]`` is
        the value after ``i + 1`` iterations. Non-increasing (up to rounding). With
        ``solver="mu"``: after every 10th iteration (where scikit-learn tests for
        convergence) and after the last one, ``ceil(n_iter_ / 10)`` values.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``; only when X has string column names.

    See Also
    --------
    sklearn.decomposition.NMF : The scikit-learn NMF (coordinate descent or the same
        multiplicative updates in numpy).
    sklearn.decomposition.TruncatedSVD : Unconstrained low-rank approximation.

    Notes
    -----
    **Zeros (solver="floored-mu").** A multiplicative update cannot move an entry that is
    exactly zero, and divides by zero when a row or column of the factors vanishes. Here
    every entry of W and H is kept at or above ``eps = 1e-12 * sqrt(mean(X))``
    (``1e-12`` for an all-zero X) after the initialisation and after every update,
    ``A <- max(eps, A * num / den)`` (Gillis & Glineur 2012). Because each update
    minimises a separable convex majoriser, the floored update is still the majoriser's
    minimiser over ``A >= eps``, so the objective stays non-increasing, and limit points
    are stationary points of the problem constrained to ``A >= eps``. All-zero rows or
    columns of X give rows of W / columns of H equal to ``eps``.

    **solver="mu"** follows scikit-learn instead: it leaves zeros of the initialisation
    in place for good (hence its warning with ``init="nndsvd"``), replaces a zero
    denominator and entries of ``WH`` below float32's epsilon by ``1.19e-7`` (beta < 2),
    sets entries of W (beta < 1) and H (beta <= 1) below float64's epsilon to exactly 0
    after each update, and leaves X entries below ``1.19e-7`` out of the divergence it
    reports. From the same initialisation, the two solvers follow the same iterates while
    no entry comes near these thresholds. ``loss_curve_`` has scikit-learn's divergence
    plus the penalty at its convergence checks.

    **Precision.** float32 X is factorised in float32 (half the memory, about twice the
    speed); the objective values of ``loss_curve_`` and ``reconstruction_err_`` are
    accumulated in float64. int and other dtypes are converted to float64.

    **Speed.** For dense X on the CPU each iteration reads X once, in cache-sized row
    blocks shared between ``torch.get_num_threads()`` Python threads (torch itself runs
    on one thread during the fit; the setting is restored afterwards). The iterates are
    those of the alternating updates; see the user guide for measurements.

    References
    ----------
    .. [1] Lee, D. D. and Seung, H. S. (2001). Algorithms for non-negative matrix
       factorization. Advances in Neural Information Processing Systems 13, 556-562.
    .. [2] Lee, D. D. and Seung, H. S. (1999). Learning the parts of objects by
       non-negative matrix factorization. Nature 401, 788-791.
       :doi:`10.1038/44565`
    .. [3] Gillis, N. and Glineur, F. (2012). Accelerated multiplicative updates and
       hierarchical ALS algorithms for nonnegative matrix factorization. Neural
       Computation 24(4), 1085-1105. :doi:`10.1162/NECO_a_00256`
    .. [4] Boutsidis, C. and Gallopoulos, E. (2008). SVD based initialization: a head
       start for nonnegative matrix factorization. Pattern Recognition 41(4), 1350-1362.
       :doi:`10.1016/j.patcog.2007.09.010`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.decomposition import NMF
    >>> X = np.array([[1, 1], [2, 1], [3, 1.2], [4, 1], [5, 0.8], [6, 1]])
    >>> model = NMF(n_components=2, init="random", random_state=0, max_iter=500)
    >>> W = model.fit_transform(X)
    >>> W.shape, model.components_.shape
    ((6, 2), (2, 2))
    >>> bool(np.all(np.diff(model.loss_curve_) <= 1e-12))
    True
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None,
                         StrOptions({"auto"})],
        "solver": [StrOptions({"floored-mu", "mu", "cd"})],
        "beta_loss": [StrOptions(set(_BETA_ALIASES)), Real],
        "init": [StrOptions({"random", "nndsvd", "nndsvda", "nndsvdar", "custom"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "alpha_W": [Interval(Real, 0, None, closed="left")],
        "alpha_H": [Interval(Real, 0, None, closed="left"), StrOptions({"same"})],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
        "shuffle": ["boolean"],
        "device": [str, torch.device],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components="auto", *, solver="floored-mu", beta_loss="frobenius",
                 init=None, max_iter=200, tol=1e-4, alpha_W=0.0, alpha_H="same",
                 l1_ratio=0.0, random_state=None, shuffle=False, device="cpu", verbose=0):
        self.n_components = n_components
        self.solver = solver
        self.beta_loss = beta_loss
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.alpha_W = alpha_W
        self.alpha_H = alpha_H
        self.l1_ratio = l1_ratio
        self.random_state = random_state
        self.shuffle = shuffle
        self.device = device
        self.verbose = verbose

    def _check_params(self, X, H):
        """Derive ``_n_components`` and ``_beta_loss``; check rules joining parameters."""
        if self.solver == "cd":
            raise ValueError(
                "solver='cd' (coordinate descent) is not implemented by "
                "sklearn_papers.decomposition.NMF, which runs multiplicative updates only "
                "(solver='mu': scikit-learn's, for any beta_loss; solver='floored-mu': "
                "with a positivity floor, for beta_loss 'frobenius' and "
                "'kullback-leibler'). For coordinate descent use "
                "sklearn.decomposition.NMF(solver='cd').")
        self._beta_loss = _beta_to_float(self.beta_loss)
        if not np.isfinite(self._beta_loss):
            raise ValueError(f"beta_loss must be finite (e.g. 2, 1, 0.5, 0, -1 or "
                             f"'frobenius', 'kullback-leibler', 'itakura-saito'), got "
                             f"{self.beta_loss!r}")
        if self.solver == "floored-mu" and self._beta_loss not in (1.0, 2.0):
            raise ValueError(
                f"beta_loss={self.beta_loss!r} needs solver='mu' (scikit-learn's "
                "multiplicative updates, for any beta); solver='floored-mu' minimises the "
                "two losses of Lee & Seung: 'frobenius' (2) and 'kullback-leibler' (1).")
        n_samples, n_features = X.shape
        k = self.n_components
        if k is None or k == "auto":
            k = np.shape(H)[0] if (self.init == "custom" and H is not None) else n_features
        if self.init in ("nndsvd", "nndsvda", "nndsvdar") and k > min(n_samples, n_features):
            raise ValueError(
                f"init = {self.init!r} can only be used when n_components <= "
                f"min(n_samples, n_features) = {min(n_samples, n_features)}, got "
                f"n_components={k}; use init='random' (or init=None, which falls back "
                "to it).")
        if self.solver == "mu" and self.init == "nndsvd":
            warnings.warn(
                "The multiplicative update ('mu') solver cannot update zeros present in the "
                "initialization, and so leads to poorer results when used jointly with "
                "init='nndsvd'. You may try init='nndsvda' or init='nndsvdar' instead "
                "(or solver='floored-mu', which keeps every entry positive).",
                UserWarning, stacklevel=3)
        self._n_components = int(k)

    def _check_zeros_for_beta(self, X):
        """scikit-learn's refusal of beta_loss <= 0 on X with zeros (solver='mu')."""
        if self._beta_loss <= 0 and (X.min() == 0):
            raise ValueError(
                "When beta_loss <= 0 and X contains zeros, the solver may diverge. Please "
                "add small values to X, or use a positive beta_loss.")

    def _regularization(self, X):
        """scikit-learn's scaled (l1_W, l1_H, l2_W, l2_H)."""
        n_samples, n_features = X.shape
        alpha_H = self.alpha_W if self.alpha_H == "same" else self.alpha_H
        return (n_features * self.alpha_W * self.l1_ratio,
                n_samples * alpha_H * self.l1_ratio,
                n_features * self.alpha_W * (1.0 - self.l1_ratio),
                n_samples * alpha_H * (1.0 - self.l1_ratio))

    def _initial_factors(self, X, W, H, eps, mean):
        """Initial (W, H) as numpy arrays of X's dtype, floored at ``eps``; ``mean`` is
        ``mean(X)``."""
        n_samples, n_features = X.shape
        k = self._n_components
        if self.init == "custom":
            W = _check_custom(W, (n_samples, k), X.dtype, "W")
            H = _check_custom(H, (k, n_features), X.dtype, "H")
            W, H = W.copy(), H.copy()
        else:
            if W is not None or H is not None:
                warnings.warn("W and H are used only with init='custom'; they are ignored.",
                              RuntimeWarning, stacklevel=3)
            # scikit-learn's NNDSVD sets entries below an absolute 1e-6 to zero; for data
            # with mean(X) < 1 the threshold shrinks with the factors' scale sqrt(mean(X)),
            # otherwise data around 1e-16 loses every entry (a rank-one start).
            threshold = 1e-6 * min(1.0, math.sqrt(mean)) if mean > 0 else 1e-6
            W, H = _initialize_nmf(X, k, init=self.init, eps=threshold,
                                   random_state=_init_random_state(self.random_state))
            W, H = W.astype(X.dtype, copy=False), H.astype(X.dtype, copy=False)
        return np.maximum(W, eps), np.maximum(H, eps)

    def _sklearn_initial_factors(self, X, W, H):
        """Initial (W, H) exactly as scikit-learn's ``NMF(solver="mu")`` makes them."""
        n_samples, n_features = X.shape
        k = self._n_components
        if self.init == "custom":
            W = _check_custom(W, (n_samples, k), None, "W")
            H = _check_custom(H, (k, n_features), None, "H")
            if H.dtype != X.dtype or W.dtype != X.dtype:
                raise TypeError(f"H and W should have the same dtype as X. Got H.dtype = "
                                f"{H.dtype} and W.dtype = {W.dtype}.")
            for A, name in ((W, "W"), (H, "H")):
                if np.max(A) == 0:
                    raise ValueError(f"Array passed to NMF (input {name}) is full of zeros.")
            return W.copy(), H.copy()
        if W is not None or H is not None:
            warnings.warn("When init!='custom', provided W or H are ignored. Set "
                          "init='custom' to use them as initialization.", RuntimeWarning,
                          stacklevel=3)
        W, H = _initialize_nmf(X, k, init=self.init, random_state=_init_random_state(self.random_state))
        return W.astype(X.dtype, copy=False), H.astype(X.dtype, copy=False)

    def fit(self, X, y=None, W=None, H=None):
        """Learn the factors of X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data (CSR or CSC when sparse; never densified).
        y : Ignored
            Not used, present for API consistency.
        W : array-like of shape (n_samples, n_components), default=None
            Initial W when ``init="custom"``.
        H : array-like of shape (n_components, n_features), default=None
            Initial H when ``init="custom"``.

        Returns
        -------
        self : NMF
            The fitted estimator.
        """
        self.fit_transform(X, W=W, H=H)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, W=None, H=None):
        """Learn the factors of X and return W.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data (CSR or CSC when sparse; never densified).
        y : Ignored
            Not used, present for API consistency.
        W : array-like of shape (n_samples, n_components), default=None
            Initial W when ``init="custom"``.
        H : array-like of shape (n_components, n_features), default=None
            Initial H when ``init="custom"``.

        Returns
        -------
        W : ndarray of shape (n_samples, n_components)
            The factor W, same dtype as X (float32 or float64).

        Raises
        ------
        ValueError
            If X has a negative entry (the message names the smallest one and its row
            and column), NaN or inf; if an SVD init is asked for with
            ``n_components > min(n_samples, n_features)``; or if X is so large that the
            updates overflow (non-finite factors).
        """
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=[np.float64, np.float32])
        _check_non_negative(X, "NMF.fit")
        self._check_params(X, H)
        device = check_device(self.device)
        l1_W, l1_H, l2_W, l2_H = self._regularization(X)
        if self.solver == "mu":
            self._check_zeros_for_beta(X)
            W0, H0 = self._sklearn_initial_factors(X, W, H)
            eps = None
        else:
            mean = _mean(X)
            eps = _positivity_floor(mean)
            W0, H0 = self._initial_factors(X, W, H, eps, mean)
        with _cpu_threads(_work(X) * self._n_components, device):
            Xop = _to_operand(X, device)
            Wt, Ht = torch.from_numpy(W0).to(device), torch.from_numpy(H0).to(device)
            if self.solver == "mu":
                Wt, Ht, n_iter, losses = _fit_sklearn_mu(
                    Xop, Wt, Ht, beta=self._beta_loss, max_iter=self.max_iter, tol=self.tol,
                    l1_reg_W=l1_W, l1_reg_H=l1_H, l2_reg_W=l2_W, l2_reg_H=l2_H,
                    update_H=True, verbose=self.verbose)
            else:
                Wt, Ht, n_iter, losses = _fit_multiplicative_update(
                    Xop, Wt, Ht, beta_loss=_BETA_NAMES[self._beta_loss],
                    max_iter=self.max_iter, tol=self.tol, l1_reg_W=l1_W, l1_reg_H=l1_H,
                    l2_reg_W=l2_W, l2_reg_H=l2_H, update_H=True, eps=eps,
                    verbose=self.verbose)
            _check_finite_factors(X, Wt, Ht)
            if self.solver == "mu":
                divergence = _sk_beta_divergence(Xop, Wt, Ht, self._beta_loss)
            else:
                divergence = _beta_divergence(Xop, Wt, Ht, _BETA_NAMES[self._beta_loss])
        if n_iter == self.max_iter and self.tol > 0:
            warnings.warn(f"Maximum number of iterations {self.max_iter} reached. Increase "
                          "it to improve convergence.", ConvergenceWarning, stacklevel=2)
        self.reconstruction_err_ = math.sqrt(2.0 * max(divergence, 0.0))
        self.components_ = Ht.cpu().numpy()
        self.n_components_ = self.components_.shape[0]
        self.n_iter_ = n_iter
        self.loss_curve_ = losses
        return Wt.cpu().numpy()

    def transform(self, X):
        """Find W for new X with H fixed to ``components_``.

        Runs the W update alone (up to ``max_iter`` iterations, same ``tol``), starting
        from the constant ``sqrt(mean(X) / n_components)`` as scikit-learn does.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data.

        Returns
        -------
        W : ndarray of shape (n_samples, n_components)
            Same dtype as X (float32 or float64).

        Raises
        ------
        ValueError
            If X has a negative entry, NaN or inf, the wrong number of features, or
            is so large that the updates overflow.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=[np.float64, np.float32], reset=False)
        _check_non_negative(X, "NMF.transform")
        device = check_device(self.device)
        k = self.n_components_
        mean = _mean(X)
        avg = math.sqrt(mean / k)
        l1_W, _, l2_W, _ = self._regularization(X)
        if self.solver == "mu":  # scikit-learn's start and iterates
            self._check_zeros_for_beta(X)
            W0 = np.full((X.shape[0], k), avg, dtype=X.dtype)
            H = self.components_.astype(X.dtype, copy=False)
        else:
            eps = _positivity_floor(mean)
            W0 = np.full((X.shape[0], k), max(avg, eps), dtype=X.dtype)
            H = np.maximum(self.components_.astype(X.dtype, copy=False), eps)
        with _cpu_threads(_work(X) * k, device):
            Xop = _to_operand(X, device)
            Wt, Ht = torch.from_numpy(W0).to(device), torch.from_numpy(H.copy()).to(device)
            if self.solver == "mu":
                Wt, _, _, _ = _fit_sklearn_mu(
                    Xop, Wt, Ht, beta=self._beta_loss, max_iter=self.max_iter, tol=self.tol,
                    l1_reg_W=l1_W, l2_reg_W=l2_W, update_H=False, verbose=self.verbose)
            else:
                Wt, _, _, _ = _fit_multiplicative_update(
                    Xop, Wt, Ht, beta_loss=_BETA_NAMES[self._beta_loss],
                    max_iter=self.max_iter, tol=self.tol, l1_reg_W=l1_W, l2_reg_W=l2_W,
                    update_H=False, eps=eps, verbose=self.verbose)
        _check_finite_factors(X, Wt)
        return Wt.cpu().numpy()

    def inverse_transform(self, X):
        """Map W back to data space: ``X @ components_``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_components)
            Transformed data (W).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``W @ H``.

        Raises
        ------
        ValueError
            If X does not have ``n_components_`` columns.
        """
        check_is_fitted(self)
        X = check_array(X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
        if X.shape[1] != self.n_components_:
            raise ValueError(f"X has {X.shape[1]} columns; inverse_transform expects "
                             f"n_components_={self.n_components_}.")
        return np.asarray(X @ self.components_.astype(X.dtype, copy=False))

    @property
    def _n_features_out(self):
        """Number of output features (components)."""
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
