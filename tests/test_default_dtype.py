"""Every estimator computes in float32 whatever torch's global default dtype.

Scientific code often sets ``torch.set_default_dtype(torch.float64)`` (botorch, pyro). The
estimators build and run their networks in float32 all the same (``nn._skorch.torch_fit``
and ``torch_inference``), so that their modules match the float32 arrays they are fed and
their results do not depend on the caller's default. Walks every estimator registered in
``tests/_estimators.py`` (fitted on the data of ``tests/test_rng_side_effects.py``): fit
and every inference method under a float64 default give the results of a float32 default.
"""

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose

from tests.test_fitted_attributes import _NAMES
from tests.test_rng_side_effects import _calls


@pytest.fixture
def float64_default():
    """torch's default dtype set to float64 for the test, restored afterwards."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def _arrays(value):
    """The numbers in ``value`` (arrays, tensors, scalars, through lists, tuples, dicts
    and objects' attributes), as a flat list of numpy arrays."""
    if isinstance(value, torch.Tensor):
        return [value.detach().cpu().numpy()]
    if isinstance(value, np.ndarray):
        return [value] if value.dtype != object else [a for v in value for a in _arrays(v)]
    if isinstance(value, (bool, int, float, np.number)):
        return [np.asarray(value)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    if isinstance(value, dict):
        return [a for k in sorted(value, key=str) for a in _arrays(value[k])]
    if hasattr(value, "__dict__"):
        return _arrays(vars(value))
    return []


def _results(name):
    """The training losses and the outputs of every inference method of ``name``."""
    est, (fit_args, fit_kwargs), methods = _calls(name)
    est.fit(*fit_args, **fit_kwargs)
    out = {"loss_curve_": _arrays(getattr(est, "loss_curve_", []))}
    for method, (args, kwargs) in methods.items():
        if hasattr(est, method) and args is not None:
            out[method] = _arrays(getattr(est, method)(*args, **kwargs))
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", _NAMES)
def test_a_float64_default_dtype_gives_the_float32_results(name, request):
    assert torch.get_default_dtype() == torch.float32
    expected = _results(name)
    request.getfixturevalue("float64_default")
    got = _results(name)
    assert torch.get_default_dtype() == torch.float64  # the estimators restore it
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert len(got[key]) == len(expected[key]), f"{name}.{key}"
        for a, b in zip(got[key], expected[key]):
            assert a.dtype == b.dtype, f"{name}.{key}: {a.dtype} instead of {b.dtype}"
            # the same float32 operations on the same shapes: equal up to rounding
            tol = 1e-5 if a.dtype == np.float32 else 1e-7
            assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{name}.{key}")
