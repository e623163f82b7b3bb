"""Tests of NMF (Lee & Seung 2001 multiplicative updates) against a naive numpy oracle,
the paper's monotonicity theorem, scikit-learn, and dtypes, shapes, sparse input and bad values."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.decomposition import NMF as SkNMF
from sklearn.exceptions import ConvergenceWarning

from sklearn_papers.decomposition import NMF
from sklearn_papers.decomposition import _nmf, _nmf_floored, _nmf_kernels

LOSSES = ["frobenius", "kullback-leibler"]
EPS = 1e-12


# ------------------------------------------------------------------------------------
# a naive numpy implementation written from the paper (the oracle)
# ------------------------------------------------------------------------------------


def naive_objective(X, W, H, loss, l1W=0.0, l1H=0.0, l2W=0.0, l2H=0.0):
    WH = W @ H
    if loss == "frobenius":
        div = 0.5 * np.sum((X - WH) ** 2)
    else:
        pos = X > 0
        div = np.sum(X[pos] * np.log(X[pos] / WH[pos])) - X.sum() + WH.sum()
    pen = l1W * W.sum() + l1H * H.sum() + 0.5 * l2W * np.sum(W**2) + 0.5 * l2H * np.sum(H**2)
    return div + pen


def floor_of(X):
    """The documented positivity floor: 1e-12 * sqrt(mean(X)) (1e-12 for all-zero X)."""
    mean = np.asarray(X, dtype=np.float64).mean()
    return EPS * np.sqrt(mean) if mean > 0 else EPS


def naive_mu(X, W, H, loss, n_iter, l1W=0.0, l1H=0.0, l2W=0.0, l2H=0.0, eps=None):
    """Lee & Seung's rules (4) and (5), W then H, each entry floored at ``eps``
    (the estimator's floor of X when None)."""
    X, W, H = (np.array(A, dtype=np.float64) for A in (X, W, H))
    EPS = floor_of(X) if eps is None else eps  # noqa: N806 (the floor, as in the paper)
    W, H = np.maximum(W, EPS), np.maximum(H, EPS)
    losses = []
    for _ in range(n_iter):
        if loss == "frobenius":
            W = np.maximum(W * (X @ H.T) / (W @ (H @ H.T) + l1W + l2W * W), EPS)
            H = np.maximum(H * (W.T @ X) / ((W.T @ W) @ H + l1H + l2H * H), EPS)
        else:
            W = np.maximum(W * ((X / (W @ H)) @ H.T) / (H.sum(1)[None, :] + l1W + l2W * W),
                           EPS)
            H = np.maximum(H * (W.T @ (X / (W @ H))) / (W.sum(0)[:, None] + l1H + l2H * H),
                           EPS)
        losses.append(naive_objective(X, W, H, loss, l1W, l1H, l2W, l2H))
    return W, H, np.array(losses)


def _data(seed, shape=(25, 12), zeros=0.3):
    rng = np.random.RandomState(seed)
    X = rng.rand(*shape) * 3
    X[rng.rand(*shape) < zeros] = 0.0
    return X


def _init(X, k, seed):
    rng = np.random.RandomState(seed + 1)
    avg = np.sqrt(X.mean() / k)
    return avg * np.abs(rng.randn(X.shape[0], k)), avg * np.abs(rng.randn(k, X.shape[1]))


# ------------------------------------------------------------------------------------
# the kernels against the oracle
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_iter", [1, 2, 30])
def test_iterates_equal_naive_numpy_oracle(loss, sparse, n_iter, global_random_seed):
    X = _data(global_random_seed)
    W0, H0 = _init(X, 4, global_random_seed)
    model = NMF(4, beta_loss=loss, init="custom", max_iter=n_iter, tol=0)
    W = model.fit_transform(sp.csr_matrix(X) if sparse else X, W=W0, H=H0)
    W_ref, H_ref, losses_ref = naive_mu(X, W0, H0, loss, n_iter)
    assert_allclose(W, W_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(model.components_, H_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(model.loss_curve_, losses_ref, rtol=1e-10)
    assert model.n_iter_ == n_iter == len(model.loss_curve_)


@pytest.mark.parametrize("loss", LOSSES)
def test_regularised_iterates_equal_oracle_with_sklearn_scaling(loss, global_random_seed):
    X = _data(global_random_seed)
    n, m = X.shape
    W0, H0 = _init(X, 3, global_random_seed)
    alpha_W, alpha_H, rho = 0.02, 0.05, 0.3
    model = NMF(3, beta_loss=loss, init="custom", max_iter=15, tol=0, alpha_W=alpha_W,
                alpha_H=alpha_H, l1_ratio=rho)
    W = model.fit_transform(X, W=W0, H=H0)
    # scikit-learn's scaling: W terms by n_features, H terms by n_samples
    W_ref, H_ref, losses_ref = naive_mu(
        X, W0, H0, loss, 15, l1W=m * alpha_W * rho, l1H=n * alpha_H * rho,
        l2W=m * alpha_W * (1 - rho), l2H=n * alpha_H * (1 - rho))
    assert_allclose(W, W_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(model.components_, H_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(model.loss_curve_, losses_ref, rtol=1e-10)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("block_rows, n_workers", [(7, 1), (7, 2), (1, 3), (100, 2)])
@pytest.mark.parametrize("regularised", [False, True])
def test_fused_row_block_kernel_equals_naive_oracle(loss, block_rows, n_workers, regularised,
                                                    global_random_seed):
    """The one-pass kernel (dense CPU X) gives the alternating updates' iterates."""
    X = _data(global_random_seed)  # 25 rows: blocks of 7 leave a ragged last block
    W0, H0 = _init(X, 4, global_random_seed)
    reg = (0.3, 0.2, 0.1, 0.4) if regularised else (0.0, 0.0, 0.0, 0.0)
    threads = torch.get_num_threads()
    W, H, n_iter, losses = _nmf._fit_multiplicative_update(
        torch.from_numpy(X), torch.from_numpy(np.maximum(W0, EPS)),
        torch.from_numpy(np.maximum(H0, EPS)), beta_loss=loss, max_iter=20, tol=0,
        l1_reg_W=reg[0], l1_reg_H=reg[1], l2_reg_W=reg[2], l2_reg_H=reg[3],
        block_rows=block_rows, n_workers=n_workers)
    W_ref, H_ref, losses_ref = naive_mu(X, W0, H0, loss, 20, *reg, eps=EPS)
    assert_allclose(W.numpy(), W_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(H.numpy(), H_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(losses, losses_ref, rtol=1e-10)
    assert n_iter == 20
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize("loss", LOSSES)
def test_fused_kernel_stops_where_the_unfused_one_does(loss):
    """With tol > 0 the fused KL pass undoes the W update of the iteration it stops at."""
    X = _data(2, shape=(30, 12))
    W0, H0 = _init(X, 3, 2)
    runs = [_nmf._fit_multiplicative_update(
        torch.from_numpy(X), torch.from_numpy(W0.copy()), torch.from_numpy(H0.copy()),
        beta_loss=loss, max_iter=1000, tol=1e-3, l2_reg_W=0.1, block_rows=rows, n_workers=2)
        for rows in (None, 4)]
    (W_a, H_a, n_a, loss_a), (W_b, H_b, n_b, loss_b) = runs
    assert n_a == n_b < 1000
    assert_allclose(W_b.numpy(), W_a.numpy(), rtol=1e-12, atol=1e-14)
    assert_allclose(H_b.numpy(), H_a.numpy(), rtol=1e-12, atol=1e-14)
    assert_allclose(loss_b, loss_a, rtol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_estimator_uses_fused_kernel_above_small_work(loss, monkeypatch):
    """``block_rows="auto"`` fuses dense problems above ``_SMALL_WORK``, not sparse ones."""
    X = _data(3, shape=(40, 30))
    W0, H0 = _init(X, 3, 3)
    calls = []
    original = (_nmf_floored._fused_frobenius_pass if loss == "frobenius"
                else _nmf_floored._fused_kl_pass)
    name = original.__name__

    def spy(*args, **kwargs):
        calls.append(args[0].block_rows)
        return original(*args, **kwargs)

    monkeypatch.setattr(_nmf_floored, name, spy)  # the solver calls the fused passes
    monkeypatch.setattr(_nmf_kernels, "_SMALL_WORK", 40 * 30 * 3)
    monkeypatch.setattr(_nmf_kernels, "_BLOCK_BYTES", 30 * 8 * 16)  # 16 rows per block
    model = NMF(3, beta_loss=loss, init="custom", max_iter=10, tol=0)
    W = model.fit_transform(X, W=W0, H=H0)
    assert calls and set(calls) == {16}
    W_ref, H_ref, losses_ref = naive_mu(X, W0, H0, loss, 10)
    assert_allclose(W, W_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(model.loss_curve_, losses_ref, rtol=1e-10)
    calls.clear()
    NMF(3, beta_loss=loss, init="custom", max_iter=2, tol=0).fit(sp.csr_matrix(X), W=W0, H=H0)
    model.transform(X)  # H fixed: W^T X is never needed
    assert not calls


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_beta_divergence_kernel_matches_oracle(loss, sparse):
    X = _data(3)
    W, H = _init(X, 3, 3)
    Xop = _nmf._to_operand(sp.csr_matrix(X) if sparse else X, torch.device("cpu"))
    got = _nmf._beta_divergence(Xop, torch.from_numpy(W), torch.from_numpy(H), loss)
    assert_allclose(got, naive_objective(X, W, H, loss), rtol=1e-12)


# ------------------------------------------------------------------------------------
# Lee & Seung's Theorems 1 and 2: the objective never increases
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("alpha_W", [0.0, 0.01])
def test_objective_is_non_increasing_every_iteration(loss, fmt, alpha_W, global_random_seed):
    X = _data(global_random_seed, shape=(30, 20), zeros=0.5)
    X = X if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(X)
    model = NMF(5, beta_loss=loss, init="random", max_iter=150, tol=0, alpha_W=alpha_W,
                l1_ratio=0.5, random_state=global_random_seed).fit(X)
    curve = np.asarray(model.loss_curve_)
    assert curve.shape == (150,)
    assert np.all(np.diff(curve) <= 1e-12 * curve[0]), np.diff(curve).max()
    assert curve[-1] < curve[0]


@pytest.mark.parametrize("loss", LOSSES)
def test_loss_curve_ends_at_reconstruction_error(loss):
    X = _data(1)
    model = NMF(4, beta_loss=loss, max_iter=40, tol=0, random_state=0).fit(X)
    assert_allclose(model.loss_curve_[-1], 0.5 * model.reconstruction_err_**2, rtol=1e-9)


# ------------------------------------------------------------------------------------
# recovery, precision, agreement with scikit-learn
# ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def planted():
    """An exact rank-3 non-negative X = W H with a unique NMF (separable factors)."""
    rng = np.random.RandomState(0)
    W = rng.rand(30, 3)
    W[:3] = np.eye(3)
    H = rng.rand(3, 20)
    H[:, :3] = np.eye(3)
    return W @ H, H


@pytest.mark.parametrize("loss, max_iter, rel_err, h_err", [
    ("kullback-leibler", 2000, 1e-5, 1e-6),
    ("frobenius", 2000, 5e-3, 2e-2),
])
def test_recovers_planted_exact_factorisation(planted, loss, max_iter, rel_err, h_err):
    X, H_true = planted
    model = NMF(3, beta_loss=loss, init="nndsvda", max_iter=max_iter, tol=0,
                random_state=0).fit(X)
    assert model.reconstruction_err_ / np.linalg.norm(X) < rel_err
    # rows of H match the planted ones up to order and scale
    H = model.components_ / model.components_.sum(1, keepdims=True)
    H_ref = H_true / H_true.sum(1, keepdims=True)
    dist = np.abs(H[:, None, :] - H_ref[None]).sum(-1)
    assert sorted(dist.argmin(1)) == [0, 1, 2]
    assert dist.min(1).max() < h_err


@pytest.mark.parametrize("loss", LOSSES)
def test_float32_and_float64_agree(loss, global_random_seed):
    X = _data(global_random_seed, shape=(40, 15))
    W0, H0 = _init(X, 4, global_random_seed)
    m64 = NMF(4, beta_loss=loss, init="custom", max_iter=100, tol=0)
    m32 = NMF(4, beta_loss=loss, init="custom", max_iter=100, tol=0)
    W64 = m64.fit_transform(X, W=W0, H=H0)
    W32 = m32.fit_transform(X.astype(np.float32), W=W0.astype(np.float32),
                            H=H0.astype(np.float32))
    assert W32.dtype == m32.components_.dtype == np.float32
    assert_allclose(m32.reconstruction_err_, m64.reconstruction_err_, rtol=1e-4)
    assert_allclose(W32 @ m32.components_, W64 @ m64.components_, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("init", ["random", "nndsvda", "nndsvdar"])
def test_same_init_and_iterates_as_sklearn_mu(loss, init):
    """Init options mean what scikit-learn's do; from there the iterates coincide."""
    X = _data(0, shape=(30, 12), zeros=0.2)
    ours = NMF(4, beta_loss=loss, init=init, max_iter=50, tol=0, random_state=0)
    theirs = SkNMF(4, beta_loss=loss, init=init, solver="mu", max_iter=50, tol=0,
                   random_state=0)
    assert_allclose(ours.fit_transform(X), theirs.fit_transform(X), rtol=1e-7, atol=1e-9)
    assert_allclose(ours.components_, theirs.components_, rtol=1e-7, atol=1e-9)
    assert_allclose(ours.reconstruction_err_, theirs.reconstruction_err_, rtol=1e-9)


@pytest.mark.parametrize("loss", LOSSES)
def test_tol_stops_at_the_same_iteration_as_sklearn(loss):
    X = _data(2, shape=(30, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = NMF(3, beta_loss=loss, tol=1e-3, max_iter=1000, random_state=0).fit(X)
        theirs = SkNMF(3, beta_loss=loss, solver="mu", tol=1e-3, max_iter=1000,
                       random_state=0).fit(X)
    assert ours.n_iter_ == theirs.n_iter_ < 1000
    assert len(ours.loss_curve_) == ours.n_iter_


def test_nndsvd_zeros_are_lifted_not_locked():
    """scikit-learn's MU keeps NNDSVD's zeros for good; the epsilon floor lets them move."""
    X = _data(4, shape=(30, 12), zeros=0.0)
    model = NMF(5, init="nndsvd", max_iter=200, tol=0, random_state=0)
    W = model.fit_transform(X)
    assert W.min() >= floor_of(X) and model.components_.min() >= floor_of(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sk = SkNMF(5, init="nndsvd", solver="mu", max_iter=200, tol=0, random_state=0).fit(X)
    assert (sk.components_ == 0).any()
    assert model.reconstruction_err_ <= sk.reconstruction_err_ * (1 + 1e-9)


# ------------------------------------------------------------------------------------
# dtypes, shapes, sparse input, bad values
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
def test_float32_input_keeps_float32(loss):
    X64 = np.random.RandomState(0).uniform(size=(25, 7))
    errs = {}
    for dtype in (np.float32, np.float64):
        X = X64.astype(dtype)
        model = NMF(n_components=3, beta_loss=loss, max_iter=300, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            W = model.fit_transform(X)
            Wt = model.transform(X)
        assert W.dtype == model.components_.dtype == Wt.dtype == dtype
        assert model.inverse_transform(W).dtype == dtype
        errs[dtype] = model.reconstruction_err_ / np.linalg.norm(X64)
    assert_allclose(errs[np.float32], errs[np.float64], rtol=0.02)
    Xi = (X64 * 10).astype(np.int64)
    assert NMF(3, max_iter=5, tol=0).fit_transform(Xi).dtype == np.float64


def test_more_components_than_min_dimension():
    X = np.random.RandomState(0).rand(3, 5)
    model = NMF(n_components=4, max_iter=20, tol=0, random_state=0)
    W = model.fit_transform(X)  # default init falls back to random, as in scikit-learn
    assert W.shape == (3, 4) and model.components_.shape == (4, 5)
    assert np.isfinite(W).all()
    assert NMF(4, init="random", max_iter=5, tol=0).fit_transform(X).shape == (3, 4)
    for init in ("nndsvd", "nndsvda", "nndsvdar"):
        with pytest.raises(ValueError, match=r"n_components.*init|init.*n_components"):
            NMF(n_components=4, init=init).fit(X)


@pytest.mark.parametrize("loss", LOSSES)
def test_sparse_and_dense_give_the_same_factors(loss):
    rng = np.random.RandomState(0)
    X = rng.rand(40, 15)
    X[rng.rand(40, 15) < 0.7] = 0.0
    kw = dict(n_components=4, beta_loss=loss, max_iter=200, tol=0, random_state=0)
    dense = NMF(**kw)
    W_dense = dense.fit_transform(X)
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
        model = NMF(**kw)
        W = model.fit_transform(fmt(X))
        assert_allclose(W, W_dense, rtol=1e-4, atol=1e-10)
        assert_allclose(model.components_, dense.components_, rtol=1e-4, atol=1e-10)
        assert_allclose(model.transform(fmt(X)), dense.transform(X), rtol=1e-4, atol=1e-10)


_SPARSE_KL_SCRIPT = textwrap.dedent("""
    import resource
    import numpy as np
    import scipy.sparse as sp
    from sklearn_papers.decomposition import NMF

    rng = np.random.default_rng(0)  # density 1e-3, built without any dense temporary
    n, m, nnz = 20000, 5000, 100000
    X = sp.csr_matrix((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, m, nnz))),
                      shape=(n, m))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model = NMF(n_components=5, beta_loss="kullback-leibler", max_iter=20, tol=0,
                init="random", random_state=0)
    W = model.fit_transform(X)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert np.isfinite(W).all() and W.shape == (20000, 5)
    print((after - before) / 1024.0)
""")


def test_sparse_kl_does_not_densify():
    """20000 x 5000 CSR at density 1e-3: dense X alone would be 800 MB."""
    out = subprocess.run([sys.executable, "-c", _SPARSE_KL_SCRIPT], capture_output=True,
                         text=True, check=True)
    growth_mb = float(out.stdout.strip().splitlines()[-1])
    assert growth_mb < 400, f"peak RSS grew by {growth_mb:.0f} MB"


@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix, sp.csc_matrix])
def test_negative_entry_is_named(fmt):
    X = np.random.RandomState(0).rand(6, 5)
    X[3, 2] = -0.5
    match = r"Negative values.*negative\) entry is -0\.5 at row 3, column 2"
    with pytest.raises(ValueError, match=match):
        NMF(2).fit(fmt(X))
    good = NMF(2, max_iter=10, tol=0).fit(np.abs(X))
    with pytest.raises(ValueError, match=match):
        good.transform(fmt(X))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix])
def test_nan_and_inf_are_rejected(bad, fmt):
    X = np.random.RandomState(0).rand(6, 5)
    X[1, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        NMF(2).fit(fmt(X))
    good = NMF(2, max_iter=10, tol=0).fit(np.where(np.isfinite(X), X, 1.0))
    with pytest.raises(ValueError, match="NaN|infinity"):
        good.transform(fmt(X))


@pytest.mark.parametrize("loss", LOSSES)
def test_uint16_counts_equal_float64_cast(loss):
    counts = np.random.RandomState(0).randint(0, 60001, size=(20, 8)).astype(np.uint16)
    assert counts.max() > 32767  # would wrap round in a 16-bit signed type
    kw = dict(n_components=3, beta_loss=loss, max_iter=50, tol=0, random_state=0)
    W16 = NMF(**kw).fit_transform(counts)
    W64 = NMF(**kw).fit_transform(counts.astype(np.float64))
    assert W16.dtype == np.float64
    assert_array_equal(W16, W64)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_all_zero_rows_and_columns_give_finite_output(loss, sparse):
    X = _data(0, shape=(12, 9))
    X[4] = 0.0
    X[:, 6] = 0.0
    Xin = sp.csr_matrix(X) if sparse else X
    model = NMF(3, beta_loss=loss, max_iter=100, tol=0, random_state=0)
    W = model.fit_transform(Xin)
    assert np.isfinite(W).all() and np.isfinite(model.components_).all()
    assert np.isfinite(model.reconstruction_err_)
    assert_allclose(W[4], floor_of(X), rtol=1e-6)
    assert_allclose(model.components_[:, 6], floor_of(X), rtol=1e-6)
    assert np.isfinite(model.transform(np.zeros((2, 9)))).all()


# ------------------------------------------------------------------------------------
# API
# ------------------------------------------------------------------------------------


def test_transform_and_inverse_transform():
    X = _data(5, shape=(30, 10), zeros=0.0)
    model = NMF(4, max_iter=500, tol=1e-6, random_state=0).fit(X)
    W = model.transform(X)
    assert W.shape == (30, 4) and W.min() > 0
    assert_allclose(model.inverse_transform(W), W @ model.components_)
    # the fixed-H problem is convex per row: transform reconstructs as well as fit did
    err = np.linalg.norm(X - model.inverse_transform(W))
    assert err <= model.reconstruction_err_ * 1.01
    with pytest.raises(ValueError, match="n_components_=4"):
        model.inverse_transform(np.ones((2, 3)))


def test_same_random_state_same_result_and_global_rngs_untouched():
    X = _data(6)
    np_state = np.random.get_state()[1].copy()
    torch_state = torch.get_rng_state().clone()
    a = NMF(3, init="random", max_iter=20, random_state=7).fit_transform(X)
    b = NMF(3, init="random", max_iter=20, random_state=7).fit_transform(X)
    assert_array_equal(a, b)
    assert_array_equal(np.random.get_state()[1], np_state)
    assert torch.equal(torch.get_rng_state(), torch_state)


def test_feature_names_and_pandas_output():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_data(7, shape=(10, 4)), columns=["a", "b", "c", "d"])
    model = NMF(2, max_iter=20, tol=0, random_state=0).set_output(transform="pandas")
    out = model.fit_transform(X)
    assert list(out.columns) == ["nmf0", "nmf1"]
    assert list(model.get_feature_names_out()) == ["nmf0", "nmf1"]
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
    assert model.n_features_in_ == 4 and model.n_components_ == 2


def test_n_components_none_keeps_all_features_and_custom_reads_h():
    X = _data(8, shape=(10, 4))
    assert NMF(max_iter=5, tol=0).fit(X).n_components_ == 4
    W0, H0 = _init(X, 2, 8)
    assert NMF(init="custom", max_iter=5, tol=0).fit(X, W=W0, H=H0).n_components_ == 2


def test_custom_init_errors_and_ignored_factors_warning():
    X = _data(9, shape=(10, 4))
    W0, H0 = _init(X, 2, 9)
    with pytest.raises(ValueError, match="needs both W and H"):
        NMF(2, init="custom").fit(X, H=H0)
    with pytest.raises(ValueError, match="W has shape"):
        NMF(2, init="custom").fit(X, W=W0[:5], H=H0)
    with pytest.raises(ValueError, match="negative"):
        NMF(2, init="custom").fit(X, W=-W0, H=H0)
    with pytest.warns(RuntimeWarning, match="init='custom'"):
        NMF(2, max_iter=5, tol=0).fit(X, W=W0, H=H0)


def test_max_iter_reached_warns():
    with pytest.warns(ConvergenceWarning, match="Maximum number of iterations 2"):
        NMF(2, max_iter=2, tol=1e-12).fit(_data(10))


def test_device_is_validated():
    X = _data(11)
    with pytest.raises(ValueError, match="not a torch device"):
        NMF(2, device="not-a-device").fit(X)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            NMF(2, device="cuda").fit(X)


def test_verbose_shows_progress(capsys):
    NMF(2, max_iter=5, tol=0, verbose=1).fit(_data(12))
    assert "NMF" in capsys.readouterr().err


def test_torch_thread_setting_is_restored():
    before = torch.get_num_threads()
    NMF(2, max_iter=3, tol=0).fit(_data(13))
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e200), (np.float32, 1e30)])
def test_overflowing_updates_raise_instead_of_returning_non_finite_factors(dtype, scale):
    # Products of X, W and H overflow for entries this large; fit_transform must not return
    # inf/NaN factors silently (as scikit-learn's solver="mu" does).
    X = (np.random.RandomState(0).rand(10, 5) * scale).astype(dtype)
    with pytest.raises(ValueError, match=r"updates overflowed in .*largest entry .*Rescale X"):
        NMF(2, max_iter=20, tol=0, random_state=0).fit_transform(X)


def test_overflowing_transform_raises():
    rng = np.random.RandomState(0)
    model = NMF(2, max_iter=20, tol=0, random_state=0).fit(rng.rand(10, 5).astype(np.float32))
    with pytest.raises(ValueError, match="updates overflowed in float32"):
        model.transform(np.full((3, 5), 3e38, dtype=np.float32))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("scale", [1e-24, 1e-12, 1e12, 1e24])
def test_scale_equivariance(loss, scale):
    """NMF(c X) = sqrt(c) NMF(X): the floor scales with the data, so tiny or huge X
    is factorised as well as X itself (an absolute 1e-12 floor dominated factors of
    data around 1e-24: relative error 4.4 instead of 0.33)."""
    X = _data(3, shape=(30, 8), zeros=0.0)
    # init="random" (|N(0,1)| sqrt(mean(X) / k)) is equivariant; scikit-learn's NNDSVD
    # initialisers, which we call unchanged, threshold at an absolute 1e-6
    kw = dict(beta_loss=loss, init="random", max_iter=300, tol=0, random_state=0)
    ref = NMF(3, **kw)
    W = ref.fit_transform(X)
    model = NMF(3, **kw)
    W_c = model.fit_transform(X * scale)
    assert_allclose(W_c, np.sqrt(scale) * W, rtol=1e-6)
    assert_allclose(model.components_, np.sqrt(scale) * ref.components_, rtol=1e-6)
    rel = (np.linalg.norm(X * scale - W_c @ model.components_)
           / np.linalg.norm(X * scale))
    assert rel == pytest.approx(np.linalg.norm(X - W @ ref.components_) / np.linalg.norm(X),
                                rel=1e-6)
    assert_allclose(model.transform(X * scale), np.sqrt(scale) * ref.transform(X),
                    rtol=1e-6)


@pytest.mark.parametrize("loss", LOSSES)
def test_tiny_data_with_default_init_factorises_as_well(loss):
    """With the default (NNDSVDa) init, data around 1e-24 still gets a factorisation
    about as good as the same data at unit scale (field report: relative error 4.4 with
    an absolute floor, 0.45 for scikit-learn, 0.33 at unit scale)."""
    X = np.random.RandomState(0).rand(30, 8)
    errors = []
    for scale in (1.0, 1e-24):
        model = NMF(3, beta_loss=loss, max_iter=300, tol=0, random_state=0)
        W = model.fit_transform(X * scale)
        errors.append(np.linalg.norm(X * scale - W @ model.components_)
                      / np.linalg.norm(X * scale))
    assert errors[1] <= 1.1 * errors[0], errors


def test_underflow_is_reported_as_underflow():
    """float32 data around 1e-30: products of three factors underflow; say so."""
    X = (np.random.RandomState(0).rand(30, 12) * 1e-30).astype(np.float32)
    with pytest.raises(ValueError, match="underflowed in float32.*too small.*float64"):
        NMF(3, init="random", random_state=0, max_iter=50).fit(X)
    model = NMF(3, init="random", random_state=0, max_iter=50).fit(X.astype(np.float64))
    assert np.isfinite(model.components_).all()


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_kl_reconstruction_error_with_a_subnormal_entry(container):
    # X / WH underflows to 0 at a subnormal X entry; its log must not make the error -inf
    X = np.abs(np.random.RandomState(0).randn(10, 3)) * 10
    X_zero = X.copy()
    X_zero[0, 0] = 0.0
    X[0, 0] = 1e-323
    model = NMF(1, beta_loss="kullback-leibler", random_state=0).fit(container(X))
    zero = NMF(1, beta_loss="kullback-leibler", random_state=0).fit(container(X_zero))
    assert model.reconstruction_err_ > 11
    assert_allclose(model.reconstruction_err_, zero.reconstruction_err_, rtol=1e-7)
    assert_allclose(model.reconstruction_err_, np.sqrt(2 * model.loss_curve_[-1]), rtol=1e-7)
    ref = SkNMF(1, beta_loss="kullback-leibler", solver="mu", random_state=0).fit(X)
    assert_allclose(model.reconstruction_err_, ref.reconstruction_err_, rtol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
def test_beta_divergence_of_subnormal_entries_is_finite_and_non_finite_raises(sparse):
    rng = np.random.RandomState(1)
    W, H = rng.rand(6, 2) + 0.1, rng.rand(2, 5) + 0.1
    X = W @ H
    X[1, 2] = 5e-324
    X[3, 4] = 2.2e-310
    Xop = _nmf._to_operand(sp.csr_matrix(X) if sparse else X, torch.device("cpu"))
    got = _nmf._beta_divergence(Xop, torch.from_numpy(W), torch.from_numpy(H),
                                "kullback-leibler")
    assert_allclose(got, naive_objective(np.where(X < 1e-300, 0, X), W, H,
                                         "kullback-leibler"), rtol=1e-10)
    W[1] = 0.0  # WH = 0 where X > 0: the divergence is infinite, never reported as 0
    with pytest.raises(ValueError, match="divergence of X and W @ H is inf"):
        _nmf._beta_divergence(Xop, torch.from_numpy(W), torch.from_numpy(H),
                              "kullback-leibler")


# ------------------------------------------------------------------------------------
# solver="mu": scikit-learn's iterates, any beta
# ------------------------------------------------------------------------------------

BETAS = [2.0, "kullback-leibler", "itakura-saito", 0.5, 1.5, 3.0, -0.5]


@pytest.mark.parametrize("beta_loss", BETAS)
@pytest.mark.parametrize("init", ["random", "nndsvda", "nndsvdar"])
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_solver_mu_gives_scikit_learns_iterates(beta_loss, init, container):
    rng = np.random.RandomState(0)
    X = np.abs(rng.randn(12, 7))
    if _nmf._beta_to_float(beta_loss) <= 0:
        X += 0.1  # scikit-learn refuses zeros for beta <= 0
    else:
        X[X < 0.3] = 0.0
    kw = dict(n_components=4, solver="mu", beta_loss=beta_loss, init=init, alpha_W=0.05,
              l1_ratio=0.3, max_iter=60, tol=1e-3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = NMF(**kw)
        theirs = SkNMF(**kw)
        W, W_ref = ours.fit_transform(container(X)), theirs.fit_transform(container(X))
        T, T_ref = ours.transform(container(X)), theirs.transform(container(X))
    assert ours.n_iter_ == theirs.n_iter_
    # float64, the same operations in another summation order: agreement to ~1e-12
    assert_allclose(W, W_ref, rtol=1e-9, atol=1e-12)
    assert_allclose(ours.components_, theirs.components_, rtol=1e-9, atol=1e-12)
    if _nmf._beta_to_float(beta_loss) != 1:  # KL with L1: see the test below
        assert_allclose(T, T_ref, rtol=1e-9, atol=1e-12)
    assert_allclose(ours.reconstruction_err_, theirs.reconstruction_err_, rtol=1e-9)
    assert len(ours.loss_curve_) == -(-ours.n_iter_ // 10)  # every 10th and the last
    assert_allclose(ours.loss_curve_[-1] - float(_nmf_kernels._penalty(
        torch.from_numpy(W), torch.from_numpy(ours.components_),
        *ours._regularization(X))), ours.reconstruction_err_**2 / 2, rtol=1e-9)


def test_solver_mu_float32_stays_float32_and_close_to_scikit_learn():
    X = np.abs(np.random.RandomState(1).randn(20, 6)).astype(np.float32)
    kw = dict(n_components=3, solver="mu", beta_loss=1, max_iter=50, tol=0, random_state=0)
    ours, theirs = NMF(**kw), SkNMF(**kw)
    W, W_ref = ours.fit_transform(X), theirs.fit_transform(X)
    assert W.dtype == np.float32 and ours.components_.dtype == np.float32
    # float32 updates: rounding grows over 50 iterations (float32 eps is 1.2e-7)
    assert_allclose(W, W_ref, rtol=1e-3, atol=1e-5)


def test_solver_mu_csc_input_equals_dense():
    # scikit-learn's mu pairs a CSC X's values with W H on CSR positions for beta != 2,
    # so its CSC fit differs from its dense one; ours gives the dense fit
    rng = np.random.RandomState(42)
    X = np.abs(rng.randn(10, 10))
    X[:, ::2] = 0.0
    kw = dict(n_components=5, solver="mu", beta_loss="kullback-leibler", init="random",
              max_iter=40, tol=0, random_state=1)
    dense = NMF(**kw).fit(X)
    csc = NMF(**kw).fit(sp.csc_matrix(X))
    assert_allclose(csc.components_, dense.components_, rtol=1e-10, atol=1e-13)
    assert_allclose(csc.reconstruction_err_, dense.reconstruction_err_, rtol=1e-10)


def test_solver_mu_reports_scikit_learns_kl_error_with_a_subnormal_entry():
    X = np.abs(np.random.RandomState(0).randn(10, 3)) * 10
    X[0, 0] = 1e-323
    for container in (np.asarray, sp.csr_matrix):
        model = NMF(1, solver="mu", beta_loss="kullback-leibler", random_state=0)
        model.fit(container(X))
        ref = SkNMF(1, solver="mu", beta_loss="kullback-leibler", random_state=0).fit(X)
        assert_allclose(model.reconstruction_err_, ref.reconstruction_err_, rtol=1e-9)


def test_solver_and_beta_loss_refusals_name_the_alternative():
    X = np.abs(np.random.RandomState(0).randn(6, 4))
    with pytest.raises(ValueError, match=r"sklearn\.decomposition\.NMF\(solver='cd'\)"):
        NMF(2, solver="cd").fit(X)
    with pytest.raises(ValueError, match="beta_loss=0.5 needs solver='mu'"):
        NMF(2, beta_loss=0.5).fit(X)
    X[0, 0] = 0.0
    with pytest.raises(ValueError, match="When beta_loss <= 0 and X contains zeros"):
        NMF(2, solver="mu", beta_loss="itakura-saito").fit(X)
    model = NMF(2, solver="mu", beta_loss=0).fit(X + 1.0)
    with pytest.raises(ValueError, match="When beta_loss <= 0 and X contains zeros"):
        model.transform(X)
    with pytest.raises(TypeError, match="same dtype as X"):
        NMF(2, solver="mu", init="custom").fit(X, W=np.ones((6, 2), np.float32),
                                               H=np.ones((2, 4)))
    with pytest.raises(ValueError, match="full of zeros"):
        NMF(2, solver="mu", init="custom").fit(X, W=np.zeros((6, 2)), H=np.ones((2, 4)))
    with pytest.warns(UserWarning, match="cannot update zeros"):
        NMF(2, solver="mu", init="nndsvd", max_iter=5, tol=0).fit(X)


@pytest.mark.parametrize("solver", ["floored-mu", "mu"])
def test_n_components_auto_is_the_default(solver):
    X = np.abs(np.random.RandomState(0).randn(8, 5))
    assert NMF().n_components == "auto"
    assert NMF(solver=solver, max_iter=5, tol=0).fit(X).n_components_ == 5
    W0, H0 = np.full((8, 2), 0.5), np.full((2, 5), 0.5)
    model = NMF(solver=solver, init="custom", max_iter=5, tol=0).fit(X, W=W0, H=H0)
    assert model.n_components_ == 2


def test_solver_mu_kl_transform_keeps_the_l1_term_fixed():
    # scikit-learn's KL W-update adds l1 to its cached rowsum(H) in place, so in
    # transform (H fixed, the cache kept) the L1 term grows by l1 every iteration. Ours
    # adds it once: W converges to a stationary point of the penalised objective, where
    # (X / WH) H^T = rowsum(H) + l1 + l2 W on the positive entries of W.
    rng = np.random.RandomState(0)
    X = np.abs(rng.randn(15, 6)) + 0.1
    model = NMF(3, solver="mu", beta_loss=1, alpha_W=0.02, l1_ratio=0.5, max_iter=600,
                tol=0, random_state=0).fit(X)
    W = model.transform(X)
    H = model.components_
    l1, _, l2, _ = model._regularization(X)
    grad_ratio = ((X / (W @ H)) @ H.T) / (H.sum(1)[None, :] + l1 + l2 * W)
    assert (W > 1e-3).sum() > 10
    assert_allclose(grad_ratio[W > 1e-3], 1.0, rtol=1e-4)
    theirs = SkNMF(3, solver="mu", beta_loss=1, alpha_W=0.02, l1_ratio=0.5, max_iter=600,
                   tol=0, random_state=0).fit(X)
    assert_allclose(theirs.components_, H, rtol=1e-8, atol=1e-12)  # fit agrees
    assert not np.allclose(theirs.transform(X), W, rtol=1e-3)  # its transform does not


def test_nmf_docs_snippets_run():
    """The ``.. code-block:: python`` snippets of docs/papers/lee_seung.rst run."""
    import pathlib
    import re

    path = pathlib.Path(__file__).parents[2] / "docs" / "papers" / "lee_seung.rst"
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", path.read_text())
    assert len(blocks) >= 2
    for block in blocks:
        code = "\n".join(line[4:] for line in block.splitlines())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            exec(compile(code, str(path), "exec"), {})


@pytest.mark.parametrize("solver", ["floored-mu", "mu"])
@pytest.mark.parametrize("case", ["constant", "one sample", "all zero", "constant rows"])
def test_factors_stay_non_negative_and_finite_on_degenerate_data(solver, case):
    X = {"constant": np.full((8, 5), 7.0),
         "one sample": np.abs(np.random.RandomState(0).randn(1, 5)),
         "all zero": np.zeros((8, 5)),
         "constant rows": np.repeat(np.linspace(0, 2, 8)[:, None], 5, axis=1)}[case]
    for beta in (2, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = NMF(1, solver=solver, beta_loss=beta, max_iter=30, random_state=0)
            W = model.fit_transform(X)
            T = model.transform(X)
        for A in (W, model.components_, T, model.inverse_transform(W)):
            assert np.isfinite(A).all() and (A >= 0).all()
        assert np.isfinite(model.reconstruction_err_) and model.reconstruction_err_ >= 0
        # rank-one data is reproduced
        assert_allclose(model.inverse_transform(W), X, atol=1e-6 * max(1.0, X.max()))


@pytest.mark.parametrize("solver", ["floored-mu", "mu"])
@pytest.mark.parametrize("init", ["random", "nndsvda", "nndsvdar"])
def test_random_state_none_leaves_the_global_numpy_rng_alone(solver, init):
    X = np.random.RandomState(0).rand(6, 4)
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    NMF(2, solver=solver, init=init, max_iter=2).fit(X)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


@pytest.mark.parametrize("beta", [np.inf, -np.inf, np.nan])
def test_non_finite_beta_loss_is_refused(beta):
    X = np.random.RandomState(0).rand(6, 4)
    with pytest.raises(ValueError, match="beta_loss must be finite"):
        NMF(2, solver="mu", beta_loss=beta, max_iter=2).fit(X)
