"""scikit-learn's own NMF tests, run against ``sklearn_papers.decomposition.NMF``.

The tests are those of the installed scikit-learn (``sklearn/decomposition/tests/
test_nmf.py``), imported, not copied. Every test function there is listed below either as
applying to our class with ``solver="mu"`` (``APPLY``) or as not applying, with the reason
(``NOT_APPLICABLE``); a test function that appears in neither table fails
``test_every_scikit_learn_nmf_test_is_classified``, so a new scikit-learn test is noticed.

Each applying test runs once per parametrisation that uses ``NMF`` with ``solver="mu"``
(or no solver), with our class in place of scikit-learn's: the ``Estimator`` parameter is
replaced, and so is the module's global ``NMF`` (for the tests that build ``NMF(...)``
themselves). In this module ``NMF`` defaults to ``solver="mu"``, scikit-learn's solver of
these updates (scikit-learn's own default is coordinate descent, which we do not
implement). ``KNOWN_DIFFERENCES`` lists the cases that fail, with the reason; they run as
strict expected failures. docs/papers/lee_seung.rst lists the outcome.
"""

import inspect
import warnings

import numpy as np
import pytest
from _pytest.mark.structures import ParameterSet

from sklearn_papers.decomposition import NMF as PapersNMF

sk_tests = pytest.importorskip("sklearn.decomposition.tests.test_nmf")
SkNMF = sk_tests.NMF


class NMF(PapersNMF):
    """Our NMF with ``solver="mu"`` by default; named ``NMF`` like scikit-learn's class, so
    that ``get_feature_names_out`` gives the same ``nmf0, nmf1, ...``."""

    def __init__(self, n_components="auto", *, solver="mu", beta_loss="frobenius", init=None,
                 max_iter=200, tol=1e-4, alpha_W=0.0, alpha_H="same", l1_ratio=0.0,
                 random_state=None, shuffle=False, device="cpu", verbose=0):
        super().__init__(n_components, solver=solver, beta_loss=beta_loss, init=init,
                         max_iter=max_iter, tol=tol, alpha_W=alpha_W, alpha_H=alpha_H,
                         l1_ratio=l1_ratio, random_state=random_state, shuffle=shuffle,
                         device=device, verbose=verbose)


#: scikit-learn tests that apply to our class with solver="mu" (the parts that call
#: MiniBatchNMF, non_negative_factorization or private helpers keep scikit-learn's own).
APPLY = [
    "test_convergence_warning",
    "test_parameter_checking",
    "test_nmf_fit_nn_output",
    "test_nmf_fit_close",
    "test_nmf_true_reconstruction",
    "test_nmf_transform",
    "test_nmf_transform_custom_init",
    "test_nmf_inverse_transform",
    "test_n_components_greater_n_features",
    "test_nmf_sparse_input",
    "test_nmf_sparse_transform",
    "test_non_negative_factorization_consistency",
    "test_nmf_regularization",
    "test_nmf_dtype_match",
    "test_nmf_float32_float64_consistency",
    "test_nmf_custom_init_dtype_error",
    "test_nmf_minibatchnmf_equivalence",
    "test_feature_names_out",
    "test_nmf_n_components_auto",
    "test_nmf_custom_init_shape_error",
    "test_nmf_smoke",
]

_PRIVATE = "tests scikit-learn's private helpers in sklearn.decomposition._nmf, not the class"
_FUNCTION = ("tests the function non_negative_factorization only (not provided here; "
             "its class counterpart is covered by test_non_negative_factorization_consistency)")
_MINIBATCH = "tests MiniBatchNMF only (not provided here)"
NOT_APPLICABLE = {
    "test_initialize_nn_output": _PRIVATE,
    "test_initialize_close": _PRIVATE,
    "test_initialize_variants": _PRIVATE,
    "test_beta_divergence": _PRIVATE,
    "test_special_sparse_dot": _PRIVATE,
    "test_nmf_underflow": _PRIVATE + " (our own test of the same case: "
                          "test_kl_reconstruction_error_with_a_subnormal_entry)",
    "test_minibatch_nmf_transform": _MINIBATCH,
    "test_mbnmf_inverse_transform": _MINIBATCH,
    "test_minibatch_nmf_negative_beta_loss": _MINIBATCH,
    "test_minibatch_nmf_partial_fit": _MINIBATCH,
    "test_minibatch_nmf_verbose": _MINIBATCH,
    "test_non_negative_factorization_checking": _FUNCTION,
    "test_nmf_multiplicative_update_sparse": _FUNCTION,
    "test_nmf_negative_beta_loss": _FUNCTION,
    "test_nmf_decreasing": _FUNCTION,
    "test_nmf_non_negative_factorization_n_components_auto": _FUNCTION,
    "test_nmf_n_components_auto_no_h_update": _FUNCTION,
    "test_nmf_w_h_not_used_warning": _FUNCTION,
}

#: Cases that fail with our class, and why (run as strict expected failures).
KNOWN_DIFFERENCES = {
    "test_parameter_checking": (
        "NMF(solver='cd', beta_loss=1.0) raises ValueError with our message (coordinate "
        "descent is not implemented; use sklearn.decomposition.NMF(solver='cd')), not "
        "scikit-learn's 'Invalid beta_loss parameter: solver 'cd' does not handle "
        "beta_loss = 1.0'; every other check of the test passes "
        "(test_parameter_checking_passes_apart_from_coordinate_descent)"),
}


def _parametrizations(func):
    """Every keyword combination of ``func``'s ``parametrize`` marks, and its other marks."""
    marks = getattr(func, "pytestmark", [])
    combos = [{}]
    for mark in reversed([m for m in marks if m.name == "parametrize"]):
        names = mark.args[0]
        names = ([n.strip() for n in names.split(",")] if isinstance(names, str)
                 else list(names))
        expanded = []
        for combo in combos:
            for value in mark.args[1]:
                value = value.values if isinstance(value, ParameterSet) else value
                values = tuple(value) if len(names) > 1 else (value,)
                expanded.append({**combo, **dict(zip(names, values))})
        combos = expanded
    return combos, [m for m in marks if m.name == "filterwarnings"]


def _applies(kwargs):
    """The case uses scikit-learn's NMF (not MiniBatchNMF) with solver="mu" or no solver."""
    if "Estimator" in kwargs and kwargs["Estimator"] is not SkNMF:
        return False
    solver = kwargs.get("solver", "mu")
    solver = solver.get("solver", "mu") if isinstance(solver, dict) else solver
    return solver == "mu"


def _case_id(name, kwargs):
    parts = []
    for key, value in kwargs.items():
        if key == "Estimator":
            continue
        if isinstance(value, dict):
            parts += [f"{k}={v}" for k, v in value.items()]
            continue
        parts.append(f"{key}={getattr(value, '__name__', value)}")
    return f"{name}[{'-'.join(parts)}]" if parts else name


def _cases():
    for name in APPLY:
        func = getattr(sk_tests, name)
        combos, marks = _parametrizations(func)
        for kwargs in combos:
            if not _applies(kwargs):
                continue
            case_marks = list(marks)
            if name in KNOWN_DIFFERENCES:
                case_marks.append(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name],
                                                    strict=True))
            yield pytest.param(name, kwargs, id=_case_id(name, kwargs), marks=case_marks)


@pytest.mark.parametrize("name, kwargs", list(_cases()))
def test_scikit_learn_nmf_test_passes_with_our_class(name, kwargs, monkeypatch):
    monkeypatch.setattr(sk_tests, "NMF", NMF)
    kwargs = {k: (NMF if v is SkNMF else v) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        # scikit-learn's own runs ignore these (its conftest and the tests' marks)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        getattr(sk_tests, name)(**kwargs)


def test_every_scikit_learn_nmf_test_is_classified():
    names = {n for n, f in inspect.getmembers(sk_tests, inspect.isfunction)
             if n.startswith("test_") and f.__module__ == sk_tests.__name__}
    assert not set(APPLY) & set(NOT_APPLICABLE)
    assert names == set(APPLY) | set(NOT_APPLICABLE), names ^ (set(APPLY) | set(NOT_APPLICABLE))


def test_every_applying_test_runs_at_least_one_case():
    ran = {p.values[0] for p in _cases()}
    assert ran == set(APPLY)
    assert np.all([isinstance(p.values[1], dict) for p in _cases()])


def test_parameter_checking_passes_apart_from_coordinate_descent(monkeypatch):
    """scikit-learn's test_parameter_checking without its solver='cd' check."""
    cd_check = ('''    with pytest.raises(ValueError, match=msg):
        NMF(solver="cd", beta_loss=1.0).fit(A)
''')
    source = inspect.getsource(sk_tests.test_parameter_checking)
    assert cd_check in source
    source = source.replace(cd_check, "")
    source = source[source.index("def test_parameter_checking"):]  # without decorators
    namespace = {**vars(sk_tests), "NMF": NMF}
    exec(compile(source, sk_tests.__file__, "exec"), namespace)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*cannot update zeros", category=UserWarning)
        namespace["test_parameter_checking"]()
