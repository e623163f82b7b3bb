"""Lee & Seung (2001): multiplicative updates never increase the NMF objective.

Checks Theorems 1 and 2 (Euclidean and KL objectives non-increasing) on ``load_digits``,
beside scikit-learn's ``NMF(solver="mu")`` from the same start.
Claims: CLAIMS below; setup: docs/papers/lee_seung.rst.
"""

import time
import warnings
from dataclasses import replace
from itertools import product

import numpy as np

from sklearn_papers.reproduce._claims import Claim, declare, judge
from sklearn_papers.reproduce._common import Protocol, save_figure, subplots
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT"]

N_COMPONENTS = 16
LOSSES = ["frobenius", "kullback-leibler"]

#: Per loss and implementation: every iteration's decrease above ``-1e-12 f_0`` (rounding).
CLAIMS = declare(
    Claim("{loss}, {who}: the objective never increases", "objective decrease per iteration",
          "every seed", unit="iterations", paper="Theorems 1 and 2", key="non_increasing",
          arms=("{who}",)),
)

PROTOCOL = Protocol(full=dict(n_iter=1000), quick=dict(n_iter=200),
                    shortened="{n_iter} iterations instead of 1000.")


def _non_increasing(curve, loss, who):
    """Every iteration's decrease above ``-1e-12 f_0`` (rounding), rule ``every seed``."""
    curve = np.asarray(curve, dtype=float)
    claim = replace(CLAIMS["non_increasing"].at(loss=loss, who=who), margin=-1e-12 * curve[0])
    return judge(claim, curve[:-1] - curve[1:], 0.0)


def _timed_fit(model, X, W0, H0):
    """Fit ``model`` from copies of ``(W0, H0)``; the seconds it took."""
    start = time.perf_counter()
    model.fit(X, W=W0.copy(), H=H0.copy())
    return time.perf_counter() - start


def _plot_curves(ctx, curves, checkpoints):
    """The objective of both implementations against the iteration, one panel per loss."""
    fig, axes = subplots(1, 2, figsize=(10, 3.6))
    for ax, loss in zip(axes, LOSSES):
        ours_curve, sk_curve = curves[loss]
        it = np.arange(1, len(ours_curve) + 1)
        ax.plot(it, ours_curve, lw=2.5, label="sklearn_papers.NMF (torch)")
        ax.plot(checkpoints, sk_curve, "o--", ms=3, lw=1.2, label="scikit-learn solver='mu'")
        ax.set(xscale="log", yscale="log", xlabel="iteration", ylabel="objective",
               title=f"{loss} on load_digits, k={N_COMPONENTS}")
        ax.legend()
    return save_figure(fig, ctx, "lee_seung_objective.png", dpi=110)


def _plot_bases(ctx, bases, n_iter):
    """The basis images (rows of H) of both implementations and both losses."""
    fig, axes = subplots(4, 16, figsize=(12, 3.4))
    for r, (loss, who) in enumerate(product(LOSSES, (0, 1))):
        H = bases[loss][who]
        for c in range(N_COMPONENTS):
            axes[r, c].imshow(H[c].reshape(8, 8), cmap="gray_r", interpolation="nearest")
            axes[r, c].set(xticks=[], yticks=[])
        name = "ours" if who == 0 else "sklearn"
        axes[r, 0].set_ylabel(f"{'Frob' if loss == 'frobenius' else 'KL'}\n{name}",
                              rotation=0, ha="right", va="center", fontsize=8)
    fig.suptitle(f"NMF basis images (rows of H) on load_digits after {n_iter} iterations")
    return save_figure(fig, ctx, "lee_seung_bases.png", dpi=110, tight=False)


def run(ctx):
    """Run the experiment; see the module docstring."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import NMF as SkNMF
    from threadpoolctl import threadpool_limits

    from sklearn_papers.decomposition import NMF
    from sklearn_papers.decomposition._nmf_reference import _sklearn_mu_curve
    from sklearn_papers.utils._sklearn_compat import _initialize_nmf

    n_iter = PROTOCOL.settings(ctx.quick)["n_iter"]
    checkpoints = np.unique(np.geomspace(1, n_iter, 25).round().astype(int))
    X = load_digits().data.astype(np.float64)
    W0, H0 = _initialize_nmf(X, N_COMPONENTS, init="nndsvda", random_state=ctx.random_state)
    rows, curves, bases = [], {}, {}
    res = Result()
    for loss in ctx.progress(LOSSES, desc="lee_seung"):
        ours = NMF(N_COMPONENTS, beta_loss=loss, init="custom", max_iter=n_iter, tol=0)
        t_ours = _timed_fit(ours, X, W0, H0)
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            t_sk = _timed_fit(SkNMF(N_COMPONENTS, beta_loss=loss, solver="mu", init="custom",
                                    max_iter=n_iter, tol=0), X, W0, H0)
            sk_curve, sk_H = _sklearn_mu_curve(X, W0.copy(), H0.copy(), loss, checkpoints)
        ours_curve = np.asarray(ours.loss_curve_)
        curves[loss] = (ours_curve, sk_curve)
        bases[loss] = (ours.components_, sk_H)
        for who, curve, secs in [("sklearn_papers.NMF (every iteration)", ours_curve, t_ours),
                                 (f"sklearn NMF(solver='mu') ({len(checkpoints)} checkpoints)",
                                  sk_curve, t_sk)]:
            rows.append({
                "loss": loss, "implementation": who,
                "final objective": f"{curve[-1]:.6g}",
                "largest increase (any iteration)": f"{max(np.diff(curve).max(), 0.0):.2e}",
                "non-increasing (paper: Thm 1/2)": res.verdict(
                    _non_increasing(curve, loss, who), style="plain"),
                "fit time (s)": f"{secs:.2f}",
            })
        ctx.log(f"lee_seung {loss}: ours {ours_curve[-1]:.6g} in {t_ours:.2f}s, "
                f"sklearn {sk_curve[-1]:.6g} in {t_sk:.2f}s")

    curve_png = _plot_curves(ctx, curves, checkpoints)
    basis_png = _plot_bases(ctx, bases, n_iter)
    markdown = "\n\n".join([
        "### Objective after every multiplicative update, load_digits "
        f"({X.shape[0]} x {X.shape[1]})",
        f"k = {N_COMPONENTS}, {n_iter} iterations, tol = 0, one NNDSVDa start, one thread.",
        res.table(rows),
    ])
    return res.done(markdown, figures=[curve_png, basis_png],
                    shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="lee_seung",
    title="Lee & Seung (2001): NMF multiplicative updates, both losses",
    paper="Lee & Seung (2001), Algorithms for Non-negative Matrix Factorization, NIPS 13",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
)
