"""Estimator checks for molecule-input estimators (SMILES strings or RDKit ``Mol`` as ``X``).

scikit-learn's ``parametrize_with_checks`` skips every data-driven check for estimators
whose tags say ``two_d_array=False``, since it can only generate numeric data. For
molecule estimators :func:`molecule_estimator_checks` therefore yields

* scikit-learn's data-free API checks, run directly;
* our molecule checks, generic for transformers, regressors and classifiers: the target
  is picked from the estimator's tags (a float target for regressors, binary labels for
  classifiers, none for transformers) and the output method is ``transform`` when the
  estimator has one, else ``predict``. Each check uses about ten molecules.

Each check's docstring states the behaviour it requires.
"""

import pickle
import re
import sys
from functools import partial

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_param_validation,
    check_parameters_default_constructible,
    check_set_params,
)

__all__ = ["molecule_estimator_checks"]

#: Ten small, valid, varied molecules: the training set of the checks.
MOLECULES = [
    "CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1",
    "CC(C)O", "C1CCCCC1", "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1",
]
#: Other molecules, to fit a clone on different data.
OTHER_MOLECULES = [
    "CCCC", "c1ccc2ccccc2c1", "CC(C)(C)O", "NCCO", "c1ccsc1",
    "CC#N", "O=C1CCCCC1", "Cc1ccccc1", "CCCl", "OCCO",
]
#: Invalid SMILES: an unclosed ring, an unclosed branch, an over-valent carbon.
BAD_SMILES = ["C1CC", "CC(C", "CC(C)(C)(C)(C)C"]
#: Missing entries.
MISSING = ["", None, float("nan")]
#: Texts that must never reach a user: leaked low-level errors.
_LEAKS = re.compile(r"NoneType|Boost|Python argument types|C\+\+ signature")

# scikit-learn's checks that need no data, so they work for any input type.
# check_param_validation fits on numeric data with *invalid* parameters only; it works
# because our estimators validate parameters (in _fit_context) before touching X.
_SKLEARN_API_CHECKS = [
    check_estimator_cloneable,
    check_estimator_repr,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_get_params_invariance,
    check_set_params,
    check_do_not_raise_errors_in_init_or_set_params,
    check_param_validation,
]


def _target(estimator, X):
    """A target suited to the estimator: float for regressors, 0/1 labels for classifiers."""
    n = len(X)
    if is_regressor(estimator):
        return np.array([len(str(s)) for s in X], dtype=np.float64)
    if is_classifier(estimator):
        return np.arange(n) % 2
    return None


def _output_method(estimator):
    """transform for transformers; predict_proba for classifiers (continuous, so rows of
    different molecules can be told apart); predict otherwise."""
    if hasattr(estimator, "transform"):
        return "transform"
    if is_classifier(estimator) and hasattr(estimator, "predict_proba"):
        return "predict_proba"
    return "predict"


def _fit(estimator, X=MOLECULES):
    y = _target(estimator, X)
    return estimator.fit(X) if y is None else estimator.fit(X, y)


def _numeric(out):
    """Outputs as float64. A transformer that outputs molecules (SMILES, as
    ``MoleculeStandardizer``) is read through 2048-bit ECFP4 counts, NaN rows kept, so the
    checks compare the molecules it gives."""
    out = np.asarray(out)
    if out.dtype != object:
        return np.asarray(out, dtype=np.float64)
    from sklearn_papers.chem import CircularFingerprint

    rows = out.reshape(len(out), -1)[:, 0]
    missing = np.array([not isinstance(v, str) for v in rows])
    fp = np.full((len(rows), 2048), np.nan)
    if (~missing).any():
        fp[~missing] = CircularFingerprint(use_counts=True).transform(
            np.asarray(rows[~missing], dtype=object))
    return fp


def _outputs_molecules(fitted):
    return np.asarray(_raw_out(fitted, ["CCO"])).dtype == object


def _raw_out(estimator, X):
    return getattr(estimator, _output_method(estimator))(X)


def _out(estimator, X):
    return _numeric(_raw_out(estimator, X))


def _lenient(estimator):
    """Whether the estimator answers invalid molecules with NaN rows by design (its
    ``allow_nan`` input tag, e.g. ``SkipInvalidMolecules``) rather than raising."""
    return "errors" not in estimator.get_params(deep=False) and \
        get_tags(estimator).input_tags.allow_nan


def _fitted(estimator, **params):
    est = clone(estimator)
    if params:
        est.set_params(**params)
    return _fit(est)


def _as_2d(a):
    return a.reshape(len(a), -1)


def _assert_no_leak(message):
    assert not _LEAKS.search(message), f"low-level error text leaked: {message!r}"


def check_rows_out_finite(estimator):
    """As many finite output rows as input molecules, in order."""
    est = _fitted(estimator)
    for X in (MOLECULES, MOLECULES[:3], MOLECULES[:1]):
        out = _out(est, X)
        assert out.shape[0] == len(X), f"{len(X)} molecules in, {out.shape[0]} rows out"
        assert np.isfinite(out).all(), "non-finite output for valid molecules"


def check_invalid_smiles_raises(estimator):
    """One invalid SMILES raises ValueError naming it, at fit and at output.

    Estimators that answer invalid molecules with NaN rows by design are checked by
    :func:`check_invalid_smiles_nan` instead."""
    if _lenient(estimator):
        return
    est = _fitted(estimator)
    for bad in BAD_SMILES:
        X = ["CCO", bad, "c1ccccc1"]
        with _raises(ValueError) as info:
            _out(est, X)
        msg = str(info)
        assert bad in msg and "index 1" in msg, msg
        _assert_no_leak(msg)
        with _raises(ValueError) as info:
            _fit(clone(estimator), MOLECULES + [bad])
        assert bad in str(info), str(info)
        _assert_no_leak(str(info))


def check_invalid_smiles_nan(estimator):
    """Lenient mode: errors="nan" gives a NaN row; other rows equal the good alone."""
    if "errors" in estimator.get_params(deep=False):
        est = _fitted(estimator, errors="nan")
    elif _lenient(estimator):
        est = _fitted(estimator)
    else:
        return
    good = _2d_out(est, ["CCO", "c1ccccc1"])
    for bad in BAD_SMILES + MISSING:
        out = _2d_out(est, ["CCO", bad, "c1ccccc1"])
        assert out.shape[0] == 3
        assert np.isnan(out[1]).all(), f"row of invalid {bad!r} is not all NaN"
        np.testing.assert_allclose(out[[0, 2]], good, rtol=1e-5, atol=1e-6)


def _2d_out(est, X):
    return _as_2d(_out(est, X))


def check_missing_entries(estimator):
    """Empty string, None and NaN raise ValueError naming the index, no crash.

    (NaN rows instead for estimators that answer invalid molecules with NaN by design.)"""
    if _lenient(estimator):
        return
    est = _fitted(estimator)
    for entry in MISSING:
        with _raises(ValueError) as info:
            _out(est, ["CCO", entry])
        msg = str(info)
        assert "index 1" in msg, msg
        assert re.search(r"empty|missing|None|nan", msg), msg
        _assert_no_leak(msg)


def check_single_atom_molecules(estimator):
    """Bond-less molecules give finite rows; methane and water differ."""
    est = clone(estimator)
    _fit(est, MOLECULES + ["C", "O"])
    out = _2d_out(est, ["C", "O", "N", "[Na+]", "[Cl-]"])
    assert out.shape[0] == 5 and np.isfinite(out).all()
    assert not np.array_equal(out[0], out[1]), "methane and water got identical rows"


def check_same_molecule_same_row(estimator):
    """Four spellings of ethanol give identical rows; stereo honoured if asked."""
    est = _fitted(estimator)
    out = _2d_out(est, ["CCO", "OCC", "[CH3][CH2][OH]", "[H]OC([H])([H])C([H])([H])[H]"])
    for row in out[1:]:
        np.testing.assert_allclose(row, out[0], rtol=1e-6, atol=1e-7)
    if "use_chirality" not in estimator.get_params():
        return
    alanines = ["C[C@@H](N)C(=O)O", "C[C@H](N)C(=O)O"]
    off = _2d_out(_fitted(estimator, use_chirality=False), alanines)
    np.testing.assert_array_equal(off[0], off[1])
    on = _2d_out(_fitted(estimator, use_chirality=True), alanines)
    assert not np.array_equal(on[0], on[1]), "enantiomers identical with use_chirality=True"


def check_input_containers(estimator):
    """Series, one-column DataFrame, 1-D and (n, 1) object arrays give the list result.

    Transformers also work inside a ``ColumnTransformer`` with ``remainder="passthrough"``.
    """
    import pandas as pd
    from sklearn.compose import ColumnTransformer

    est = _fitted(estimator)
    X = MOLECULES[:4]
    expected = _out(est, X)
    df = pd.DataFrame({"smiles": X, "x": np.arange(len(X), dtype=float)})
    containers = {
        "Series": df["smiles"],
        "one-column DataFrame": df[["smiles"]],
        "1-D object array": np.array(X, dtype=object),
        "(n, 1) object array": np.array(X, dtype=object).reshape(-1, 1),
        "tuple": tuple(X),
    }
    for name, container in containers.items():
        np.testing.assert_array_equal(_out(est, container), expected, err_msg=name)
    if hasattr(estimator, "transform"):
        ct = ColumnTransformer([("mol", clone(estimator), ["smiles"])], remainder="passthrough")
        y = _target(estimator, X)
        Xt = ct.fit_transform(df, y)
        width = _as_2d(np.asarray(_raw_out(est, X))).shape[1]  # raw: SMILES are 1 column
        assert Xt.shape == (len(X), width + 1), Xt.shape


def check_bare_string_refused(estimator):
    """A bare string raises ValueError (never split into 'C', 'C', 'O')."""
    est = _fitted(estimator)
    with _raises(ValueError) as info:
        _out(est, "CCO")
    assert "CCO" in str(info), str(info)
    assert _out(est, ["CCO"]).shape[0] == 1


def check_clone_and_independence(estimator):
    """Clone keeps params; unfitted -> NotFittedError; a refit clone shares nothing."""
    params = estimator.get_params(deep=False)
    cloned = clone(estimator)
    for key, value in cloned.get_params(deep=False).items():
        assert repr(value) == repr(params[key]), key
    if get_tags(estimator).requires_fit:
        with _raises(NotFittedError):
            _out(clone(estimator), MOLECULES[:2])
    est = _fitted(estimator)
    before = _out(est, MOLECULES)
    other = clone(est)
    _fit(other, OTHER_MOLECULES)
    np.testing.assert_array_equal(_out(est, MOLECULES), before)


def check_pickle_round_trip(estimator):
    """A pickled and unpickled fitted estimator gives identical output."""
    est = _fitted(estimator)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(_out(loaded, MOLECULES), _out(est, MOLECULES))


def check_n_jobs_invariance(estimator):
    """``n_jobs=2`` gives exactly the output of ``n_jobs=1``."""
    if "n_jobs" not in estimator.get_params():
        return
    one = _out(_fitted(estimator, n_jobs=1), MOLECULES)
    two = _out(_fitted(estimator, n_jobs=2), MOLECULES)
    np.testing.assert_array_equal(one, two)


def check_feature_names_and_pandas_output(estimator):
    """Unique feature names matching the width; pandas output with those columns."""
    if not hasattr(estimator, "get_feature_names_out"):
        return
    est = _fitted(estimator)
    out = _2d_out(est, MOLECULES[:3])
    names = est.get_feature_names_out()
    width = _as_2d(np.asarray(_raw_out(est, MOLECULES[:3]))).shape[1]
    assert len(names) == width, (len(names), width)
    assert len(set(names)) == len(names), "feature names are not unique"
    est_pd = clone(estimator).set_output(transform="pandas")
    _fit(est_pd)
    df = est_pd.transform(MOLECULES[:3])
    assert type(df).__name__ == "DataFrame", type(df)
    assert list(df.columns) == list(names)
    np.testing.assert_array_equal(_numeric(df.to_numpy()), out)


def check_determinism(estimator):
    """Two output calls are identical; same random_state gives the same result."""
    est = _fitted(estimator)
    np.testing.assert_array_equal(_out(est, MOLECULES), _out(est, MOLECULES))
    if "random_state" not in estimator.get_params():
        return
    outs = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        if "torch" in sys.modules:
            sys.modules["torch"].manual_seed(global_seed)
        outs.append(_out(_fitted(estimator, random_state=0), MOLECULES))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-7)


def check_pipeline_and_grid_search(estimator):
    """Works in a ``Pipeline`` searched by ``GridSearchCV(n_jobs=2)``."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint

    X = np.array(MOLECULES + OTHER_MOLECULES, dtype=object)
    if hasattr(estimator, "transform"):
        # a transformer that outputs molecules is followed by a fingerprint
        steps = [clone(estimator)]
        if _outputs_molecules(_fitted(estimator)):
            steps.append(CircularFingerprint(n_bits=256))
        if is_classifier(estimator):
            y = np.arange(len(X)) % 2
            search = GridSearchCV(make_pipeline(*steps, LogisticRegression()),
                                  {"logisticregression__C": [0.1, 1.0]}, cv=2, n_jobs=2)
        else:
            y = np.array([len(s) for s in X], dtype=float)
            search = GridSearchCV(make_pipeline(*steps, Ridge()),
                                  {"ridge__alpha": [0.1, 1.0]}, cv=2, n_jobs=2)
    else:
        y = _target(estimator, X)
        name, value = next(iter(sorted(estimator.get_params(deep=False).items())))
        search = GridSearchCV(make_pipeline(clone(estimator)),
                              {f"{type(estimator).__name__.lower()}__{name}": [value]},
                              cv=2, n_jobs=2)
    search.fit(X, y)
    pred = np.asarray(search.predict(X[:3]), dtype=float)
    assert pred.shape[0] == 3 and np.isfinite(pred).all()


class _Raises:
    """Minimal ``pytest.raises`` (so this module does not need pytest at import time)."""

    def __init__(self, exc):
        self.exc = exc
        self.value = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            raise AssertionError(f"did not raise {self.exc.__name__}")
        if not issubclass(exc_type, self.exc):
            return False
        self.value = exc
        return True

    def __str__(self):
        return str(self.value)


def _raises(exc):
    return _Raises(exc)


_MOLECULE_CHECKS = [
    check_rows_out_finite,
    check_invalid_smiles_raises,
    check_invalid_smiles_nan,
    check_missing_entries,
    check_single_atom_molecules,
    check_same_molecule_same_row,
    check_input_containers,
    check_bare_string_refused,
    check_clone_and_independence,
    check_pickle_round_trip,
    check_n_jobs_invariance,
    check_feature_names_and_pandas_output,
    check_determinism,
    check_pipeline_and_grid_search,
]


def molecule_estimator_checks(estimator):
    """Yield ``(check_name, check)`` pairs for a molecule-input estimator.

    Parameters
    ----------
    estimator : estimator instance
        Takes SMILES strings / RDKit ``Mol`` objects as ``X``. Transformers are checked
        through ``transform``, others through ``predict``; the fit target follows the
        estimator's tags (regressor, classifier, or none).

    Yields
    ------
    check_name : str
        The check function's name.
    check : callable
        ``check(estimator)``; raises ``AssertionError`` (or the exception under test)
        on failure. Checks clone the estimator and never modify it.

    Examples
    --------
    >>> from sklearn_papers.chem import CircularFingerprint
    >>> from sklearn_papers.chem.estimator_checks import molecule_estimator_checks
    >>> names = [name for name, _ in molecule_estimator_checks(CircularFingerprint())]
    >>> names[0], names[-1]
    ('check_estimator_cloneable', 'check_pipeline_and_grid_search')
    """
    name = type(estimator).__name__
    for check in _SKLEARN_API_CHECKS:
        yield check.__name__, partial(check, name)
    for check in _MOLECULE_CHECKS:
        yield check.__name__, check
