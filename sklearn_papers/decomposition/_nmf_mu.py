"""scikit-learn's ``solver="mu"`` in torch: any beta, its thresholds and its stopping
rule (:class:`~sklearn_papers.decomposition.NMF` with ``solver="sklearn-mu"``)."""

import warnings

import numpy as np
import torch

from sklearn_papers.decomposition._nmf_kernels import (
    _CHUNK_CPU,
    _CHUNK_CUDA,
    _SparseX,
    _dot64,
    _penalty,
    _sparse_wt_x,
    _sparse_x_ht,
    _wt_x,
    _x_ht,
    _x_values,
)

__all__ = []


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
