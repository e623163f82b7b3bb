"""A graph regressor's network blended with MoleculeACE's SVR on ECFP.

On potency data of one target (MoleculeACE, van Tilborg et al., J. Chem. Inf. Model.
2022) an RBF support vector regression on ECFP4 bits beats graph networks, yet the two
make different errors, so a weighted mean of both can beat either. The SVR's weight is
fitted on molecules neither model trained on: those early stopping held out from the
network, where the SVR's prediction is the one of its cross-validation fold that held the
molecule out. Where the network is much better and both err alike the weight is 0.
"""

import numpy as np

__all__ = ["BLEND_OPTIONS", "blend_share", "fit_svr_blend", "predict_svr_blend",
           "svr_search_scored"]

#: Values of a graph regressor's ``blend`` parameter.
BLEND_OPTIONS = ("ecfp_svr",)

#: The SVR's grid, MoleculeACE's: ``C`` in units of the targets, ``gamma`` in units of
#: one over the squared distance of ECFP bits.
SVR_C = (1.0, 10.0, 100.0, 1000.0, 10000.0)
SVR_GAMMA = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)

#: Fewest held-out molecules (with a label) the SVR's weight is fitted on; with fewer,
#: that target's weight is 0 (the network alone).
MIN_HELD_OUT = 5

#: ECFP of the SVR: radius 2, 1024 bits (MoleculeACE's).
ECFP_RADIUS, ECFP_BITS = 2, 1024


def svr_search_scored(F, t, w, verbose=0, desc=None):
    """An RBF ``SVR`` (``epsilon=0.1``) fitted on features ``F`` and targets ``t``
    (weights ``w`` or None), its ``C`` and ``gamma`` chosen on the grid by the mean over
    5 folds of the (weighted) validation RMSE, and that mean.

    ``verbose``, ``desc``: a progress bar over the grid's ``gamma`` values, labelled
    ``desc``, as the estimators show their work (:func:`~sklearn_papers.nn._progress.progress`).

    MoleculeACE's search, with its folds (``StratifiedKFold(shuffle=True,
    random_state=42)`` on whether a target is at least the median; deterministic). The
    first of the grid's order (``C`` major) among ties. With fewer than 2 rows no search
    is run (``C=10``, ``gamma=0.01``) and the score is ``inf``.

    scikit-learn's libsvm wrapper draws a seed from numpy's global generator at every
    fit (unused by epsilon-SVR); the global state is restored afterwards.

    Returns
    -------
    svr : sklearn.svm.SVR
        Fitted on all rows with the chosen parameters.
    cv_rmse : float
        The chosen parameters' mean validation RMSE over the folds, in units of ``t``.
    oof : ndarray of shape (len(t),)
        Each row's prediction by the chosen parameters' SVR of the fold that held it out
        (NaN without a search).
    """
    state = np.random.get_state()
    try:
        return _svr_grid_fit(F, t, w, verbose, desc)
    finally:
        np.random.set_state(state)


def _svr_grid_fit(F, t, w, verbose=0, desc=None):
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.svm import SVR

    from sklearn_papers.nn._progress import progress

    n = len(t)
    d2 = euclidean_distances(F, squared=True)
    best, score, oof = (10.0, 1e-2), np.inf, np.full(n, np.nan)
    n_splits = min(5, n)
    if n_splits >= 2:
        above = (t >= np.median(t)).astype(int)
        cv = (StratifiedKFold(n_splits, shuffle=True, random_state=42)
              if np.bincount(above, minlength=2).min() >= n_splits
              else KFold(n_splits, shuffle=True, random_state=42))
        folds = list(cv.split(F, above))
        scores = {}
        for g in progress(SVR_GAMMA, verbose=verbose, n_items=n, total=len(SVR_GAMMA),
                          desc=desc, unit="gamma"):
            K = np.exp(-g * d2)
            for C in SVR_C:
                errors = []
                for tr, va in folds:
                    svr = SVR(kernel="precomputed", C=C, epsilon=0.1)
                    svr.fit(K[np.ix_(tr, tr)], t[tr], None if w is None else w[tr])
                    sq = (svr.predict(K[np.ix_(va, tr)]) - t[va]) ** 2
                    if w is not None and w[va].sum() > 0:
                        errors.append(np.sqrt(np.average(sq, weights=w[va])))
                    elif w is None:
                        errors.append(np.sqrt(np.mean(sq)))
                scores[C, g] = float(np.mean(errors)) if errors else np.inf
        best = min(((C, g) for C in SVR_C for g in SVR_GAMMA), key=lambda k: scores[k])
        score = scores[best]
        K = np.exp(-best[1] * d2)
        for tr, va in folds:
            svr = SVR(kernel="precomputed", C=best[0], epsilon=0.1)
            svr.fit(K[np.ix_(tr, tr)], t[tr], None if w is None else w[tr])
            oof[va] = svr.predict(K[np.ix_(va, tr)])
    C, g = best
    return SVR(kernel="rbf", C=C, gamma=g, epsilon=0.1).fit(F, t, w), score, oof


def blend_share(network_errors, svr_errors, weights=None):
    """The SVR's share ``w`` in [0, 1] that minimises the (weighted) squared error of
    ``(1 - w) * network + w * SVR`` on held-out molecules, given both models' errors
    there (prediction minus truth). Least squares on one unknown: it accounts for how
    alike the two models err, so a much weaker SVR whose errors follow the network's gets
    0. Equal errors give 0."""
    e_n = np.asarray(network_errors, dtype=np.float64)
    d = e_n - np.asarray(svr_errors, dtype=np.float64)
    weights = np.ones_like(d) if weights is None else np.asarray(weights, dtype=np.float64)
    denominator = float(np.sum(weights * d * d))
    if denominator <= 0:
        return 0.0
    return float(np.clip(np.sum(weights * e_n * d) / denominator, 0.0, 1.0))


def _fingerprint(estimator):
    from sklearn.base import clone

    from sklearn_papers.chem._ecfp import CircularFingerprint

    standardize = estimator.standardize
    return CircularFingerprint(
        radius=ECFP_RADIUS, n_bits=ECFP_BITS,
        standardize=standardize if isinstance(standardize, bool) else clone(standardize),
        errors="nan", n_jobs=estimator.n_jobs, verbose=0)


def _ecfp(fingerprint, X):
    """Float64 ECFP rows of molecules ``X`` (NaN rows for invalid ones); ``X`` is read as
    a plain column, whatever its container (the regressor checks feature names). The
    regressor has already warned about molecules of several fragments."""
    import warnings

    from sklearn_papers.chem._parse import as_molecule_array
    from sklearn_papers.chem._report import MultipleFragmentsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MultipleFragmentsWarning)
        return np.asarray(fingerprint.transform(as_molecule_array(X)), dtype=np.float64)


def _ecfp_rows(fingerprint, X, n_valid):
    """The float64 ECFP rows of the valid molecules of ``X`` (those the graphs hold)."""
    F = _ecfp(fingerprint, X)
    rows = ~np.isnan(F).any(axis=1)
    if rows.sum() != n_valid:
        raise RuntimeError(
            f"The SVR blend found {int(rows.sum())} molecules with an ECFP but the network "
            f"{n_valid} graphs; set blend=None to use the network alone.")
    return F[rows], rows


def fit_svr_blend(estimator, X, target, weight, n_valid, validation):
    """Fit the blend of a fitted graph regressor: sets ``blend_fingerprint_``,
    ``blend_svr_`` and ``blend_weight_``.

    Parameters
    ----------
    estimator : graph regressor
        Fitted network; its ``blend`` is ``"ecfp_svr"``.
    X : array-like of shape (n_samples,)
        The molecules ``fit`` got.
    target : ndarray of shape (n_valid, n_outputs)
        Targets of the valid molecules in their units, NaN where missing (or of weight 0).
    weight : ndarray of shape (n_valid,) or None
    n_valid : int
        Number of valid molecules (the graphs).
    validation : tuple of (ndarray of int, ndarray) or None
        The rows (of the valid molecules) early stopping held out from the first network,
        and that network's predictions there, in target units, shape
        ``(len(rows), n_outputs)``. None: no rows were held out; the network is used
        alone (``blend_weight_`` all 0, ``blend_svr_`` None).
    """
    n_outputs = target.shape[1]
    estimator.blend_fingerprint_ = estimator.blend_svr_ = None
    estimator.blend_weight_ = np.zeros(n_outputs)
    if validation is None:
        return
    held_out, held_out_pred = validation
    labelled = ~np.isnan(target)
    if weight is not None:
        labelled &= (np.asarray(weight) > 0)[:, None]
    if labelled[held_out].sum(axis=0).max() < MIN_HELD_OUT:
        return  # too few held-out molecules for any target: the network alone, no search
    from sklearn_papers.chem._parse import as_molecule_array

    fingerprint = _fingerprint(estimator).fit(as_molecule_array(X))
    F, _ = _ecfp_rows(fingerprint, X, n_valid)
    svrs, shares = [], np.zeros(n_outputs)
    for j in range(n_outputs):
        counted = ~np.isnan(target[:, j])
        if weight is not None:
            counted &= np.asarray(weight) > 0
        rows = np.flatnonzero(counted)
        w = None if weight is None else np.asarray(weight, dtype=np.float64)[rows]
        svr, _, oof = svr_search_scored(
            F[rows], target[rows, j], w, verbose=estimator.verbose,
            desc=f"{type(estimator).__name__} SVR search")
        svrs.append(svr)
        position = np.full(len(counted), -1)
        position[rows] = np.arange(len(rows))
        seen = counted[held_out]
        at = position[held_out[seen]]
        if seen.sum() < MIN_HELD_OUT or np.isnan(oof[at]).any():
            continue  # too few molecules to fit the weight on: the network alone
        truth = target[held_out[seen], j]
        w_seen = None if weight is None else np.asarray(weight, dtype=np.float64)[
            held_out[seen]]
        shares[j] = blend_share(held_out_pred[seen, j] - truth, oof[at] - truth, w_seen)
    estimator.blend_fingerprint_ = fingerprint
    estimator.blend_svr_ = svrs
    estimator.blend_weight_ = shares


def predict_svr_blend(estimator, X, pred):
    """``pred`` (the network's, shape (n_samples, n_outputs) or (n_samples,), NaN rows
    for invalid molecules) blended with the SVR: ``(1 - w) * network + w * SVR`` per
    output, ``w`` = ``blend_weight_``."""
    if getattr(estimator, "blend_svr_", None) is None:
        return pred
    out = np.array(pred, dtype=np.float64, copy=True)
    flat = out.ndim == 1
    out2 = out.reshape(len(out), -1)
    valid = ~np.isnan(out2).any(axis=1)
    if valid.any():
        F = _ecfp(estimator.blend_fingerprint_, X)[valid]
        for j, (svr, share) in enumerate(zip(estimator.blend_svr_, estimator.blend_weight_)):
            if share > 0:
                out2[valid, j] = (1 - share) * out2[valid, j] + share * svr.predict(F)
    out = out2.ravel() if flat else out2
    return out.astype(np.asarray(pred).dtype, copy=False)
