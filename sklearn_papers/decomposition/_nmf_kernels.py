"""Kernels of the multiplicative updates of NMF, in torch: the operand of X (dense or
sparse), the products with X, the fused row-block passes and the beta divergences.

Pure module-level functions (no estimator state) taking and returning torch tensors on any
device; the solvers (``_nmf_floored``, ``_nmf_mu``) and the estimator (``_nmf``) use them.
"""

import contextlib
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch

__all__ = []


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
