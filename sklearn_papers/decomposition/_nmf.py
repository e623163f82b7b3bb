"""Non-negative matrix factorisation by Lee & Seung's multiplicative updates, in torch."""

# The maths lives in private module-level pure functions (no estimator state) that take
# and return torch tensors on any device, in their own modules: the kernels
# (``_nmf_kernels``), the floored solver (``_nmf_floored``) and scikit-learn's ``"mu"``
# solver (``_nmf_mu``); the estimator only validates, initialises and converts.

import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning

from sklearn_papers.decomposition._nmf_kernels import (
    _beta_divergence,
    _cpu_threads,
    _mean,
    _positivity_floor,
    _to_operand,
    _work,
)
from sklearn_papers.decomposition._nmf_floored import _fit_multiplicative_update
from sklearn_papers.decomposition._nmf_mu import (
    _BETA_ALIASES,
    _BETA_NAMES,
    _beta_to_float,
    _fit_sklearn_mu,
    _init_random_state,
    _sk_beta_divergence,
)
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

    Read more in the :doc:`user guide </user_guide/decomposition>` and on the :doc:`paper
    page </papers/lee_seung>`.

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
