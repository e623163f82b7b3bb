"""scikit-learn's own ``NMF(solver="mu")`` as a reference: its objective along the
iterations, measured with this package's divergence."""

import numpy as np


def _sklearn_mu_curve(X, W, H, beta_loss, checkpoints):
    """scikit-learn MU's objective at each of ``checkpoints``, continuing from ``(W, H)``.

    scikit-learn keeps no loss curve, so its solver is run from ``(W, H)`` up to the first
    checkpoint, then on from where it stopped up to the next one, and so on; each stop is
    scored with ``_nmf_kernels._beta_divergence`` (the objective of
    :class:`~sklearn_papers.decomposition.NMF`'s ``loss_curve_``). The caller
    silences scikit-learn's convergence warnings.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Non-negative data.
    W : ndarray of shape (n_samples, n_components), float64
        Starting W (not modified).
    H : ndarray of shape (n_components, n_features), float64
        Starting H (not modified).
    beta_loss : {"frobenius", "kullback-leibler"}
        The objective of both the solver and the score.
    checkpoints : sequence of int
        Total iterations at which to score, strictly increasing, the first >= 1.

    Returns
    -------
    curve : ndarray of shape (len(checkpoints),), float64
        The objective after each checkpoint's number of iterations.
    H : ndarray of shape (n_components, n_features)
        scikit-learn's H after the last checkpoint.

    Raises
    ------
    ValueError
        If ``checkpoints`` is empty or not strictly increasing from at least 1.
    """
    import torch
    from sklearn.decomposition import NMF as SkNMF

    from sklearn_papers.decomposition._nmf_kernels import _beta_divergence, _to_operand

    stops = [int(c) for c in checkpoints]
    if not stops or stops[0] < 1 or any(b <= a for a, b in zip(stops, stops[1:])):
        raise ValueError(f"checkpoints must be strictly increasing iteration counts from 1, "
                         f"got {list(checkpoints)!r}")
    Xop = _to_operand(X, torch.device("cpu"))
    curve, done = [], 0
    for stop in stops:
        model = SkNMF(W.shape[1], beta_loss=beta_loss, solver="mu", init="custom",
                      max_iter=stop - done, tol=0)
        W = model.fit_transform(X, W=W, H=H)
        H = model.components_
        done = stop
        curve.append(_beta_divergence(Xop, torch.from_numpy(W), torch.from_numpy(H),
                                      beta_loss))
    return np.asarray(curve), H
