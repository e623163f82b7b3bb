"""Lee & Seung's multiplicative updates with a positivity floor (Gillis & Glineur 2012):
the default solver of :class:`~sklearn_papers.decomposition.NMF` (Frobenius and
Kullback-Leibler losses), in torch."""

import contextlib
import math

import torch

from sklearn_papers.decomposition._nmf_kernels import (
    _CHUNK_CPU,
    _CHUNK_CUDA,
    _EPS,
    _SparseX,
    _dot64,
    _frobenius_from_h_side,
    _frobenius_from_w_side,
    _fused_frobenius_pass,
    _fused_kl_pass,
    _kl_dense_pass,
    _kl_sparse_pass,
    _multiply_update,
    _one_torch_thread,
    _penalty,
    _row_blocks,
    _sparse_wt_x,
    _sparse_x_ht,
    _wt_x,
    _x_ht,
    _x_values,
)

__all__ = []


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
            # avoids waking its pool for every small op (bench_lee_seung.py's sparse X,
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
