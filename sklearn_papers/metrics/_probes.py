"""Linear probes: how well a logistic regression reads each ground-truth factor from codes,
on all training samples or on a few labels per factor value. scikit-learn only."""

from numbers import Integral

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_papers.utils._random import check_random_state
from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._tensors import with_numpy_inputs

__all__ = ["factor_probe_accuracy"]


@with_numpy_inputs
def factor_probe_accuracy(codes_train, factors_train, codes_test, factors_test, *,
                          n_per_value=None, max_iter=2000, random_state=None):
    """Test accuracy of a logistic regression reading each factor from the codes.

    Per factor, a pipeline of :class:`~sklearn.preprocessing.StandardScaler` and
    :class:`~sklearn.linear_model.LogisticRegression` is fitted on the training codes
    (all of them, or ``n_per_value`` samples drawn without replacement for each value of
    the factor) and scored on the test codes. Few labels per value give the few-shot
    downstream accuracy by which van Steenkiste et al. (2019) ask whether disentangled
    representations are more sample efficient; all labels give a plain linear probe of
    what a code holds (Dosovitskiy & Brox 2016 probe autoencoder codes so).

    Parameters
    ----------
    codes_train : array-like or torch.Tensor of shape (n_train, n_codes)
        Codes of the training samples (float; kept in their dtype; tensors are read as
        numpy arrays).
    factors_train : array-like of shape (n_train, n_factors)
        Discrete ground-truth factors of the training samples (any labels a classifier
        takes), each with at least two values.
    codes_test : array-like of shape (n_test, n_codes)
        Codes of the test samples.
    factors_test : array-like of shape (n_test, n_factors)
        Their factors; a value not seen in training counts as an error.
    n_per_value : int >= 1 or None, default=None
        Training samples per factor value (all samples of a value that has fewer); None
        uses every training sample.
    max_iter : int >= 1, default=2000
        ``max_iter`` of the logistic regression.
    random_state : None, int or numpy.random.RandomState, default=None
        Draws the ``n_per_value`` samples (factor by factor, value by value in sorted
        order); unused when ``n_per_value`` is None.

    Returns
    -------
    accuracy : ndarray of shape (n_factors,), float64
        Test accuracy of each factor's probe, a fraction in [0, 1].

    Raises
    ------
    ValueError
        If the codes are not 2-D finite numbers, the factors are not 2-D, the training or
        test codes and factors differ in length, the training and test codes differ in
        width, the factors differ in number, a factor has a single value in training, or
        ``n_per_value`` or ``max_iter`` is not a positive int.

    References
    ----------
    .. [1] van Steenkiste, S., Locatello, F., Schmidhuber, J., Bachem, O. (2019). Are
       disentangled representations helpful for abstract visual reasoning? NeurIPS 32.
    .. [2] Dosovitskiy, A., Brox, T. (2016). Generating images with perceptual similarity
       metrics based on deep networks. NeurIPS 29.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_papers.metrics import factor_probe_accuracy
    >>> rng = np.random.RandomState(0)
    >>> factors = rng.randint(0, 3, size=(200, 2))
    >>> codes = np.c_[factors[:, 0] + 0.1 * rng.randn(200), rng.randn(200)]
    >>> acc = factor_probe_accuracy(codes[:150], factors[:150], codes[150:], factors[150:])
    >>> bool(acc[0] > 0.9), bool(acc[1] < 0.6)
    (True, True)
    """
    for name, value in (("n_per_value", n_per_value), ("max_iter", max_iter)):
        if value is None and name == "n_per_value":
            continue
        if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    Z_train = check_array(codes_train, dtype="numeric", input_name="codes_train")
    Z_test = check_array(codes_test, dtype="numeric", input_name="codes_test")
    f_train = check_array(factors_train, dtype=None, input_name="factors_train")
    f_test = check_array(factors_test, dtype=None, input_name="factors_test")
    for (a_name, a), (b_name, b) in ((("codes_train", Z_train), ("factors_train", f_train)),
                                     (("codes_test", Z_test), ("factors_test", f_test))):
        if a.shape[0] != b.shape[0]:
            raise ValueError(f"{a_name} has {a.shape[0]} samples but {b_name} has "
                             f"{b.shape[0]}; give the factors of the same samples")
    if Z_train.shape[1] != Z_test.shape[1]:
        raise ValueError(f"codes_train has {Z_train.shape[1]} codes per sample but codes_test "
                         f"has {Z_test.shape[1]}")
    if f_train.shape[1] != f_test.shape[1]:
        raise ValueError(f"factors_train has {f_train.shape[1]} factors but factors_test has "
                         f"{f_test.shape[1]}")
    for k in range(f_train.shape[1]):
        if np.unique(f_train[:, k]).size < 2:
            raise ValueError(f"factor {k} takes a single value in factors_train; a probe "
                             "needs at least two (drop that factor)")
    rng = None if n_per_value is None else check_random_state(random_state)
    accs = []
    for k in range(f_train.shape[1]):
        idx = slice(None)
        if rng is not None:
            idx = np.concatenate([
                rng.choice(np.flatnonzero(f_train[:, k] == v),
                           size=min(n_per_value, int(np.sum(f_train[:, k] == v))),
                           replace=False)
                for v in np.unique(f_train[:, k])])
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter))
        clf.fit(Z_train[idx], f_train[idx, k])
        accs.append(clf.score(Z_test, f_test[:, k]))
    return np.asarray(accs, dtype=np.float64)
