"""ELBO / IWAE / SUMO tensor functions against naive re-implementations and known answers."""

import math

import numpy as np
import pytest
import torch

from sklearn_papers.estimation import (
    elbo,
    iwae,
    iwae_cumulative,
    sample_truncation,
    sumo,
    sumo_sampled,
)


def _naive_survival(j, alpha=80, decay=0.9):
    return 1.0 / j if j <= alpha else (1.0 / alpha) * decay ** (j - alpha)


def _naive_iwae(w):
    return math.log(sum(w) / len(w))


def _naive_sumo(log_w_row, K, m):
    """The telescoping sum written out with explicit loops over terms."""
    w = [math.exp(v) for v in log_w_row]
    total = _naive_iwae(w[:m])
    for j in range(1, K + 1):
        delta = _naive_iwae(w[: m + j]) - _naive_iwae(w[: m + j - 1])
        total += delta / _naive_survival(j)
    return total


def test_iwae_cumulative_matches_naive_loop(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    log_w = rng.normal(scale=3.0, size=(4, 7))
    got = iwae_cumulative(torch.tensor(log_w)).numpy()
    want = [[_naive_iwae(np.exp(row[: j + 1])) for j in range(7)] for row in log_w]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(iwae(torch.tensor(log_w)).numpy(), np.array(want)[:, -1])
    np.testing.assert_allclose(elbo(torch.tensor(log_w)).numpy(), log_w.mean(1))


@pytest.mark.parametrize("m", [1, 3])
def test_sumo_matches_naive_double_loop(global_random_seed, m):
    rng = np.random.RandomState(global_random_seed)
    K = np.array([1, 2, 5, 79, 80, 81, 95])
    log_w = rng.normal(scale=1.5, size=(len(K), m + K.max()))
    got = sumo(torch.tensor(log_w), torch.tensor(K), min_terms=m).numpy()
    want = [_naive_sumo(log_w[i], int(K[i]), m) for i in range(len(K))]
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_sumo_equals_hand_computed_telescoping_sum():
    w = torch.tensor([[1.0, 3.0, 2.0, 4.0]])
    # IWAE_1 = 0, IWAE_2 = IWAE_3 = log 2, IWAE_4 = log 2.5; m = 1, K = 3:
    # 0 + (log 2 - 0) / 1 + 0 / (1/2) + (log 2.5 - log 2) / (1/3)
    want = math.log(2) + 3 * math.log(1.25)
    assert sumo(torch.log(w), torch.tensor([3])).item() == pytest.approx(want, rel=1e-6)


def test_sumo_ignores_padding_even_if_not_finite():
    log_w = torch.tensor([[0.0, 1.0, float("nan"), float("inf")]])
    with pytest.raises(ValueError, match="NaN"):
        sumo(log_w, torch.tensor([1]))
    log_w = torch.tensor([[0.0, 1.0, float("inf"), float("inf")]])
    assert torch.isfinite(sumo(log_w, torch.tensor([1])))


def test_sumo_sampled_equals_padded_sumo_with_same_draws(global_random_seed):
    """The ragged driver gives the same estimates as padding by hand with the same K."""
    n, m = 50, 2
    rng = np.random.RandomState(global_random_seed)
    pool = torch.tensor(rng.normal(size=10_000))
    calls = []

    def log_weight_fn(rows):
        calls.append(rows.clone())
        return pool[: rows.shape[0]]

    got = sumo_sampled(log_weight_fn, n, min_terms=m,
                       generator=torch.Generator().manual_seed(global_random_seed))
    K = sample_truncation(n, generator=torch.Generator().manual_seed(global_random_seed))
    assert len(calls) == 1 and calls[0].shape[0] == int((K + m).sum())
    starts = np.concatenate([[0], np.cumsum((K + m).numpy())[:-1]])
    want = [_naive_sumo(pool[s: s + m + k].numpy(), int(k), m) for s, k in zip(starts, K)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-8)


@pytest.mark.parametrize("spread", [1.0, 900.0])
def test_sumo_sampled_shared_shift_path_equals_per_row_path(spread, monkeypatch):
    """Finite weights within exp range take the one-shift path; values and gradients
    equal the general per-row path (a 900-nat spread in float64 must take the general one).
    """
    from sklearn_papers.estimation import _objectives

    rng = np.random.RandomState(0)
    pool = torch.tensor(spread * rng.normal(size=5_000), requires_grad=True)
    n = 300

    def run():
        pool.grad = None
        est = sumo_sampled(lambda rows: pool[: rows.shape[0]] * 1.0, n, min_terms=2,
                           generator=torch.Generator().manual_seed(3))
        est.sum().backward()
        return est.detach().clone(), pool.grad.clone()

    assert (_objectives._common_shift(pool) is None) == (spread > 100)
    fast, fast_grad = run()
    monkeypatch.setattr(_objectives, "_common_shift", lambda flat, bounds=None: None)
    slow, slow_grad = run()
    assert torch.isfinite(fast).all() and torch.isfinite(fast_grad).all()
    torch.testing.assert_close(fast, slow, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(fast_grad, slow_grad, rtol=1e-10, atol=1e-10)


def test_zero_weights_give_finite_gradients():
    """-inf log-weights (zero density) contribute nothing, in value and in gradient."""
    pool = torch.zeros(2_000, dtype=torch.float64)
    pool[::7] = -math.inf
    pool.requires_grad_(True)
    est = sumo_sampled(lambda rows: pool[: rows.shape[0]] * 1.0, 200,
                       generator=torch.Generator().manual_seed(0))
    assert not torch.isnan(est).any()
    est[torch.isfinite(est)].sum().backward()
    finite = torch.isfinite(pool.detach())
    assert torch.isfinite(pool.grad[finite]).all()
    assert (pool.grad[~finite] == 0).all()


def test_all_zero_weights_give_minus_inf_not_nan():
    """logsumexp over all -inf must give -inf, never NaN."""
    log_w = torch.full((3, 6), -math.inf)
    assert torch.isneginf(iwae(log_w)).all()
    assert torch.isneginf(iwae_cumulative(log_w)).all()
    assert torch.isneginf(sumo(log_w, torch.tensor([1, 2, 5]))).all()
    partial = torch.tensor([[-math.inf, -math.inf, 0.0, 0.0], [0.0, -math.inf, 0.0, 1.0]])
    out = sumo(partial, torch.tensor([3, 3]), min_terms=1)
    assert not torch.isnan(out).any()


def test_large_magnitude_log_weights_are_stable():
    """Exponentiating without subtracting the max would overflow here."""
    log_w = torch.tensor([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]],
                         dtype=torch.float32)
    out = sumo(log_w, torch.tensor([2, 2]))
    assert torch.isfinite(out).all()
    assert iwae(log_w)[0].item() == pytest.approx(
        1000 + math.log((1 + math.e + math.exp(-1)) / 3), rel=1e-6)


@pytest.mark.parametrize("dtype, gap", [(torch.float64, 1000.0), (torch.float32, 120.0)])
def test_widely_spread_log_weights_match_shifted_naive_sum(dtype, gap):
    """A weight far below its row's maximum must not underflow to an empty prefix.

    IWAE_1 = -gap here is finite; exponentiating relative to the row maximum would give
    exp(-gap) = 0 (then IWAE_1 = -inf and SUMO = +inf). Reference: log-sum-exp with the
    prefix maximum subtracted, term by term.
    """
    log_w = torch.tensor([[-gap, 0.0, -3.0, 1.0], [0.5, -gap, 2.0, -1.0]], dtype=dtype)
    K = torch.tensor([3, 2])

    def log_iwae(v):
        top = max(v)
        return top + math.log(sum(math.exp(x - top) for x in v) / len(v))

    want = []
    for row, k in zip(log_w.double().tolist(), K.tolist()):
        total = log_iwae(row[:1])
        for j in range(1, k + 1):
            total += (log_iwae(row[: 1 + j]) - log_iwae(row[:j])) / _naive_survival(j)
        want.append(total)
    got = sumo(log_w, K)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.double().numpy(), want, rtol=1e-5 if dtype == torch.float32
                               else 1e-10)


def test_sumo_is_unbiased_for_linear_gaussian_latent_model(global_random_seed):
    """z ~ N(0,1), x | z ~ N(a z, s^2): log p(x) = log N(x; 0, a^2 + s^2) exactly.

    Proposal q(z) = N(0.5 x, 1.5) (not the posterior). The mean of the SUMO estimates
    matches log p(x) within 4 standard errors (1e5 estimates), while IWAE_6 (same expected cost) is
    biased low by more than 4 standard errors.
    """
    a, s, x = 1.5, 0.5, 1.2
    log_px = -0.5 * (math.log(2 * math.pi * (a * a + s * s)) + x * x / (a * a + s * s))
    q_loc, q_var = 0.5 * x, 1.5
    torch_gen = torch.Generator().manual_seed(global_random_seed)

    def log_normal(v, loc, var):
        return -0.5 * (math.log(2 * math.pi * var) + (v - loc) ** 2 / var)

    def log_w(shape):
        z = q_loc + math.sqrt(q_var) * torch.randn(shape, generator=torch_gen,
                                                    dtype=torch.float64)
        return log_normal(x, a * z, s * s) + log_normal(z, 0.0, 1.0) - log_normal(z, q_loc, q_var)

    n = 100_000
    est = sumo_sampled(lambda rows: log_w(rows.shape), n,
                       generator=torch.Generator().manual_seed(global_random_seed)).numpy()
    se = est.std(ddof=1) / math.sqrt(n)
    assert abs(est.mean() - log_px) < 4 * se + 1e-4
    iw = iwae(log_w((n, 6))).numpy()
    assert iw.mean() < log_px - 4 * iw.std(ddof=1) / math.sqrt(n)


def test_shape_and_value_errors():
    with pytest.raises(ValueError, match="at least one sample"):
        iwae(torch.zeros(3, 0))
    with pytest.raises(ValueError, match="min_terms"):
        sumo(torch.zeros(2, 4), torch.tensor([1, 1]), min_terms=0)
    with pytest.raises(ValueError, match="samples per estimate"):
        sumo(torch.zeros(2, 3), torch.tensor([1, 5]))
    with pytest.raises(ValueError, match="batch shape"):
        sumo(torch.zeros(2, 3), torch.tensor([1]))
    with pytest.raises(ValueError, match="returned shape"):
        sumo_sampled(lambda rows: torch.zeros(3), 4)


def test_integer_log_weights_are_treated_as_floats():
    # elbo crashed inside torch (mean() of an int64 tensor) while iwae accepted them.
    log_w = torch.tensor([[1, 2, 4]])
    expected = torch.tensor([[1.0, 2.0, 4.0]])
    assert torch.allclose(elbo(log_w), elbo(expected))
    assert torch.allclose(iwae(log_w), iwae(expected))


def test_float_truncation_levels_are_a_clear_type_error():
    # A float n_terms must not reach torch.gather and fail there.
    with pytest.raises(TypeError, match="n_terms must hold integer truncation levels"):
        sumo(torch.zeros(2, 4), torch.tensor([1.0, 2.0]))


_INF = math.inf


@pytest.mark.parametrize("fn", [elbo, iwae, iwae_cumulative,
                                lambda lw: sumo(lw, torch.tensor([1]))])
def test_plus_inf_log_weights_are_a_clear_error(fn):
    # elbo([[-inf, inf]]) and sumo([[1, inf, 2]], K=[1]) would otherwise return NaN.
    for log_w in ([[-_INF, _INF]], [[1.0, _INF, 2.0]]):
        with pytest.raises(ValueError, match=r"contains \+inf \(first at index \[0, 1\]\)"):
            fn(torch.tensor(log_w))


def test_plus_inf_from_log_weight_fn_is_a_clear_error():
    with pytest.raises(ValueError, match=r"log_weight_fn's output contains \+inf"):
        sumo_sampled(lambda rows: torch.where(rows == 1, _INF, 0.0), 5)


def test_nan_from_log_weight_fn_is_a_clear_error():
    # NaN from the callback must not give NaN estimates silently (sumo() refuses NaN too)
    with pytest.raises(ValueError, match="log_weight_fn returned NaN"):
        sumo_sampled(lambda rows: torch.full((rows.shape[0],), math.nan), 3)
    with pytest.raises(ValueError, match="log_weight_fn returned NaN"):
        sumo_sampled(lambda rows: torch.where(rows == 2, math.nan, 0.0), 4)


@pytest.mark.parametrize("fn", [elbo, iwae, iwae_cumulative,
                                lambda lw: sumo(lw, torch.tensor([1]))])
def test_complex_log_weights_are_a_type_error(fn):
    # not complex numbers from elbo / iwae, nor a NotImplementedError from sumo
    with pytest.raises(TypeError, match="log_w must be a real tensor"):
        fn(torch.tensor([[1.0 + 1j, 2.0, 0.5]]))
    with pytest.raises(TypeError, match="real numbers"):
        fn(np.array([[1.0 + 1j, 2.0, 0.5]]))


@pytest.mark.parametrize("min_terms, error", [(0, ValueError), (-1, ValueError),
                                              (1.7, TypeError), (2.0, TypeError),
                                              (True, TypeError)])
def test_min_terms_is_checked_by_every_entry_point(min_terms, error):
    # sumo_sampled must not fail inside torch (RuntimeError / IndexError), nor sumo
    # truncate 1.7 to 1 silently.
    with pytest.raises(error, match="min_terms"):
        sumo(torch.zeros(1, 6), torch.tensor([1]), min_terms=min_terms)
    with pytest.raises(error, match="min_terms"):
        sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), 3, min_terms=min_terms)


@pytest.mark.parametrize("n, error", [(2.5, TypeError), (-1, ValueError), (None, TypeError)])
def test_n_estimates_must_be_a_non_negative_int(n, error):
    with pytest.raises(error, match="n_estimates"):
        sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), n)
    assert sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), np.int64(3)).shape == (3,)
    assert sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), 0).shape == (0,)


def test_log_weight_fn_outputs_are_converted_or_refused_clearly():
    """numpy arrays, lists and integer tensors are real numbers: converted, same estimates."""
    def run(convert):
        return sumo_sampled(lambda rows: convert((rows % 3).double()), 50, min_terms=2,
                            generator=torch.Generator().manual_seed(0))

    want = run(lambda t: t)
    for convert in (lambda t: t.numpy(), lambda t: t.tolist(), lambda t: t.long()):
        torch.testing.assert_close(run(convert).double(), want, rtol=1e-5, atol=1e-5)
    for bad, what in [(lambda t: None, "NoneType"), (lambda t: "x", "str"),
                      (lambda t: np.array(["a"] * t.shape[0]), "ndarray of dtype <U1")]:
        with pytest.raises(TypeError, match=f"log_weight_fn must return .*got {what}"):
            run(bad)
    with pytest.raises(TypeError, match="log_weight_fn must return .*real log-weights.*complex"):
        run(lambda t: t.to(torch.complex128))
    with pytest.raises(TypeError, match="log_weight_fn must be callable"):
        sumo_sampled(None, 3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_device_is_a_value_error():
    # a ValueError, not torch's AssertionError "Torch not compiled with CUDA enabled"
    with pytest.raises(ValueError, match="CUDA is not available"):
        sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), 3, device="cuda")
    with pytest.raises(ValueError, match="not a torch device"):
        sumo_sampled(lambda rows: torch.zeros(rows.shape[0]), 3, device="gpu0")


def test_truncation_level_impossible_under_kind_is_an_error():
    # K = 3 with kind="harmonic", cap=2 has probability 0; its weight would be +inf.
    log_w = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    with pytest.raises(ValueError, match=r"K = 3 is impossible.*cap=2"):
        sumo(log_w, torch.tensor([3]), kind="harmonic", cap=2)
    assert torch.isfinite(sumo(log_w, torch.tensor([2]), kind="harmonic", cap=2)).all()
    with pytest.raises(ValueError, match="geometric tail underflows"):
        sumo(torch.zeros(1, 9001), torch.tensor([9000]))


def test_truncation_level_too_large_for_the_dtype_raises():
    with pytest.raises(ValueError, match="too large for torch.float32.*float64"):
        sumo(torch.zeros(1, 901), torch.tensor([900]))
    with pytest.raises(ValueError, match="too large for torch.float64"):
        sumo(torch.zeros(1, 6801, dtype=torch.float64), torch.tensor([6800]))
    assert torch.isfinite(sumo(torch.zeros(1, 901, dtype=torch.float64), torch.tensor([900])))
