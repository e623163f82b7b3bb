"""The neural-fingerprint half of the ``duvenaud`` experiment (Duvenaud et al. 2015).

The Table 2 rows "neural FP + linear layer" and "neural FP + neural net" (:data:`NEURAL_SPECS`,
searched like the ECFP rows) and the random-weight fingerprint against ECFP (Section 3).
Setup: docs/papers/duvenaud.rst.
"""

import numpy as np

from sklearn_papers.chem import NeuralFingerprintRegressor
from sklearn_papers.reproduce._common import one_torch_thread, save_figure, subplots
from sklearn_papers.reproduce._duvenaud_search import ModelSpec
from sklearn_papers.reproduce._pinned import pinned

__all__ = ["NEURAL_SPECS", "QUICK_MODELS", "ecfp_correlation"]

#: Neural rows (model keys) run by ``--quick`` per data set: the headline row everywhere,
#: the linear-layer row on solubility only (elsewhere it would add half the run's time).
QUICK_MODELS = {"solubility": ("nf_linear", "nf_mlp"), "malaria": ("nf_mlp",),
                "photovoltaic": ("nf_mlp",)}

#: Fixed configuration used by ``--quick`` (no search).
_QUICK = {"fp_length": 50, "radius": 3, "conv_width": 20, "lr": 1e-2,
          "alpha": float(np.exp(-2)), "max_epochs": 15, "hidden_size": 100}


def _part_data(data, params):
    return data.slim()


def _sampler(linear):
    def sample(rng, quick):
        if quick:
            return {**_QUICK, "hidden_size": 0 if linear else _QUICK["hidden_size"]}
        return {
            "fp_length": int(2 ** rng.integers(4, 8)),           # 16..128
            "radius": int(rng.integers(1, 6)),                     # 1..5
            "conv_width": int(rng.choice([10, 20, 40])),
            "lr": float(10 ** rng.uniform(-3, -1.5)),
            "alpha": float(np.exp(rng.uniform(-6, 0))),
            "max_epochs": 100,
            "hidden_size": 0 if linear else int(rng.choice([50, 100, 200])),
        }
    return sample


def _fit_predict(params, data, train, others, seed):
    # the settings the paper's search leaves fixed are passed explicitly, so that a change
    # of the estimator's defaults does not change this protocol
    model = NeuralFingerprintRegressor(**pinned(NeuralFingerprintRegressor, dict(
        batch_size=100, init_scale="auto", batch_norm=True, random_state=seed,
        graph_cache=data.graph_cache(), **params)))
    with one_torch_thread():  # tiny graph model: one thread is fastest, avoids contention
        model.fit(data.smiles[train], data.y[train])
        return [model.predict(data.smiles[idx]) for idx in others]


_SPACE = ("fp_length 2^4-2^7, radius 1-5, conv_width {10, 20, 40}, Adam lr log-uniform "
          "10^-3..10^-1.5, L2 alpha exp(U(-6, 0)), 100 epochs, batch 100, standardised target")

#: The neural rows of the table (the ECFP rows: ``_duvenaud_search.MODEL_SPECS``).
NEURAL_SPECS = [
    ModelSpec("nf_linear", "neural FP + linear layer (NeuralFingerprintRegressor, "
              "hidden_size=0, end to end)", _sampler(True), _fit_predict, _SPACE, _part_data),
    ModelSpec("nf_mlp", "neural FP + neural net (NeuralFingerprintRegressor, 1 hidden "
              "layer, end to end)", _sampler(False), _fit_predict,
              _SPACE + ", hidden {50, 100, 200}", _part_data),
]


def ecfp_correlation(ctx):
    """``(markdown, figure)``: the Pearson correlation of random neural fingerprint and ECFP
    distances on Delaney (all 1128 molecules, ``--quick``: 400; paper, Section 3, Fig. 3)."""
    from sklearn_papers.chem._fingerprint_correlation import _random_fingerprint_correlation
    from sklearn_papers.datasets import load_delaney

    X, _ = load_delaney(return_X_y=True)
    n = 400 if ctx.quick else len(X)
    r, d_ecfp, d_nf = _random_fingerprint_correlation(X[:n], ctx.random_state)
    fig, ax = subplots(figsize=(4.6, 4.2))
    rng = np.random.default_rng(0)
    show = rng.choice(len(d_ecfp), size=min(20000, len(d_ecfp)), replace=False)
    ax.scatter(d_ecfp[show], d_nf[show], s=2, alpha=0.25, color="C0", rasterized=True)
    ax.set_xlabel("ECFP (radius 4, 2048 bits) Tanimoto distance")
    ax.set_ylabel("random neural FP (2048) min/max distance")
    ax.set_title(f"Delaney, {n} molecules: r = {r:.3f}")
    markdown = (
        f"Pearson correlation of pairwise distances on the first {n} Delaney molecules "
        f"({len(d_ecfp)} pairs): ECFP Tanimoto (radius 4, 2048 bits) against min/max under "
        f"an untrained `NeuralFingerprint(fp_length=2048, radius=4)`: **r = {r:.3f}**.")
    return markdown, save_figure(fig, ctx, "duvenaud_random_nf_vs_ecfp.png", dpi=110)

