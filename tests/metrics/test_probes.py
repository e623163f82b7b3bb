"""factor_probe_accuracy: linear probes of factors from codes."""

import numpy as np
import pytest

from sklearn_papers.metrics import factor_probe_accuracy


def _data(n=240, seed=0):
    rng = np.random.RandomState(seed)
    factors = rng.randint(0, 3, size=(n, 2))
    # code 0 holds factor 0 (nearly noiseless); code 1 is noise, independent of both factors
    codes = np.c_[factors[:, 0] + 0.05 * rng.randn(n), rng.randn(n)]
    return codes[:160], factors[:160], codes[160:], factors[160:]


def test_reads_the_factor_a_code_holds_and_not_the_other():
    acc = factor_probe_accuracy(*_data())
    assert acc.shape == (2,) and acc.dtype == np.float64
    assert acc[0] == 1.0
    assert acc[1] < 0.6  # chance is 1/3


def test_few_labels_per_value_draw_from_the_random_state():
    data = _data()
    a = factor_probe_accuracy(*data, n_per_value=2, random_state=0)
    b = factor_probe_accuracy(*data, n_per_value=2, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(a, b)
    # more labels than a value has: all of them, the same as no subsampling
    full = factor_probe_accuracy(*data)
    many = factor_probe_accuracy(*data, n_per_value=10_000, random_state=0)
    np.testing.assert_allclose(many, full, atol=1e-12)


def test_few_labels_use_that_many_samples_per_value(monkeypatch):
    from sklearn.pipeline import Pipeline

    seen = []
    fit = Pipeline.fit

    def spy(self, X, y=None, **kw):
        seen.append(np.unique(y, return_counts=True)[1])
        return fit(self, X, y, **kw)

    monkeypatch.setattr(Pipeline, "fit", spy)
    factor_probe_accuracy(*_data(), n_per_value=3, random_state=0)
    assert [c.tolist() for c in seen] == [[3, 3, 3], [3, 3, 3]]


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_per_value=0), "n_per_value must be a positive int"),
    (dict(n_per_value=2.5), "n_per_value must be a positive int"),
    (dict(max_iter=True), "max_iter must be a positive int"),
])
def test_bad_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        factor_probe_accuracy(*_data(), **kwargs)


def test_bad_arrays_are_named():
    z_tr, f_tr, z_te, f_te = _data()
    with pytest.raises(ValueError, match="codes_train has 160 samples but factors_train has"):
        factor_probe_accuracy(z_tr, f_tr[:-1], z_te, f_te)
    with pytest.raises(ValueError, match="codes_test has 80 samples but factors_test has"):
        factor_probe_accuracy(z_tr, f_tr, z_te, f_te[:-1])
    with pytest.raises(ValueError, match="codes_train has 2 codes per sample but codes_test has 1"):
        factor_probe_accuracy(z_tr, f_tr, z_te[:, :1], f_te)
    with pytest.raises(ValueError, match="factors_train has 2 factors but factors_test has 1"):
        factor_probe_accuracy(z_tr, f_tr, z_te, f_te[:, :1])
    with pytest.raises(ValueError, match="factor 1 takes a single value"):
        factor_probe_accuracy(z_tr, np.c_[f_tr[:, 0], np.zeros(160)], z_te, f_te)
    bad = z_tr.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="codes_train"):
        factor_probe_accuracy(bad, f_tr, z_te, f_te)
    with pytest.raises(ValueError, match="2D"):
        factor_probe_accuracy(z_tr, f_tr[:, 0], z_te, f_te)
