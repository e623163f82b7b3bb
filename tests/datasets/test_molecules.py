"""The bundled molecular data sets: shapes, units, order, containers and descriptions."""

import numpy as np
import pandas as pd
import pytest

from sklearn_papers.datasets import (
    MOLECULEACE_TARGETS,
    load_bbbp,
    load_cep,
    load_delaney,
    load_freesolv,
    load_malaria,
    load_moleculeace,
    load_moses_smiles,
    load_tox21,
)

LOADERS = [
    (load_delaney, 1128, ()),
    (load_malaria, 9999, ()),
    (load_freesolv, 642, ()),
    (load_bbbp, 2039, ()),
    (load_tox21, 7831, (12,)),
]


@pytest.mark.parametrize("loader, n, target_tail", LOADERS)
def test_loader_shapes_and_bunch(loader, n, target_tail):
    bunch = loader()
    assert bunch.data.shape == (n,)
    assert bunch.data.dtype == object
    assert all(isinstance(s, str) and s == s.strip() and s for s in bunch.data)
    assert bunch.target.shape == (n, *target_tail)
    assert bunch.target.dtype == np.float64
    assert bunch.frame is None
    assert bunch.feature_names == ["smiles"]
    assert "Source" in bunch.DESCR and "Licence" in bunch.DESCR
    X, y = loader(return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)


@pytest.mark.parametrize("loader, n, target_tail", LOADERS)
def test_loader_as_frame(loader, n, target_tail):
    bunch = loader(as_frame=True)
    assert isinstance(bunch.frame, pd.DataFrame)
    assert list(bunch.frame.columns) == ["smiles", *bunch.target_names]
    assert isinstance(bunch.data, pd.Series) and len(bunch.data) == n
    X, y = loader(return_X_y=True, as_frame=True)
    assert isinstance(X, pd.Series)
    assert isinstance(y, pd.DataFrame if target_tail else pd.Series)


def test_delaney_values_and_file_order():
    X, y = load_delaney(return_X_y=True)
    # First and last rows of the HIPS file (Amigdalin ... ), in file order.
    assert X[0] == "OCC3OC(OCC2OC(OC(C#N)c1ccccc1)C(O)C(O)C2O)C(O)C(O)C3O"
    assert y[0] == pytest.approx(-0.77)
    assert y.min() == pytest.approx(-11.6) and y.max() == pytest.approx(1.58)
    assert y.mean() == pytest.approx(-3.05, abs=0.01)


def test_malaria_units_are_natural_log_ec50_um():
    _, y = load_malaria(return_X_y=True)
    assert y[0] == pytest.approx(0.73859844346386272)


def test_cep_first_rows_and_subset():
    X_all, y_all = load_cep(return_X_y=True)
    assert X_all.shape == (29978,)
    X, y = load_cep(n_samples=20000, return_X_y=True)
    assert X.shape == (20000,)
    np.testing.assert_array_equal(X, X_all[:20000])
    assert y_all.min() < 0  # negative efficiencies are in the source


def test_tox21_keeps_missing_labels_as_nan():
    bunch = load_tox21()
    assert bunch.target_names[0] == "NR-AR" and bunch.target_names[-1] == "SR-p53"
    missing = np.isnan(bunch.target).sum(axis=0)
    assert missing.min() == 566 and missing.max() == 2021
    observed = bunch.target[~np.isnan(bunch.target)]
    assert set(np.unique(observed)) == {0.0, 1.0}


def test_bbbp_binary_target():
    _, y = load_bbbp(return_X_y=True)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert y.mean() == pytest.approx(0.765, abs=0.001)


def test_moses_has_no_target():
    X, y = load_moses_smiles(n_samples=50, return_X_y=True)
    assert X.shape == (50,) and y is None
    bunch = load_moses_smiles(n_samples=5)
    assert bunch.target is None and bunch.target_names == []


def test_loaders_are_keyword_only_and_validated():
    with pytest.raises(TypeError):
        load_delaney(True)
    with pytest.raises(ValueError, match="return_X_y"):
        load_delaney(return_X_y="yes")
    with pytest.raises(ValueError, match="n_samples"):
        load_cep(n_samples=0)


# rows, test rows, cliff molecules and test cliff molecules of each bundled target
MOLECULEACE_COUNTS = {
    "CHEMBL1862_Ki": (794, 161, 330, 67), "CHEMBL2047_EC50": (631, 128, 245, 50),
    "CHEMBL2147_Ki": (1456, 294, 572, 116), "CHEMBL228_Ki": (1704, 342, 638, 127),
    "CHEMBL231_Ki": (973, 197, 237, 48), "CHEMBL233_Ki": (3142, 630, 1294, 259),
    "CHEMBL236_Ki": (2598, 521, 1017, 204), "CHEMBL237_EC50": (955, 193, 456, 91),
    "CHEMBL238_Ki": (1052, 213, 266, 55), "CHEMBL4792_Ki": (1471, 297, 794, 160),
}


@pytest.mark.parametrize("target", MOLECULEACE_TARGETS)
def test_moleculeace_split_cliffs_and_units(target):
    n, n_test, n_cliff, n_test_cliff = MOLECULEACE_COUNTS[target]
    bunch = load_moleculeace(target)
    assert bunch.data.shape == (n,) and bunch.data.dtype == object
    assert bunch.target.shape == (n,) and bunch.target.dtype == np.float64
    assert bunch.cliff.dtype == bool and bunch.cliff.sum() == n_cliff
    assert bunch.test_indices.shape == (n_test,)
    assert bunch.cliff[bunch.test_indices].sum() == n_test_cliff
    # the split covers every row once
    np.testing.assert_array_equal(
        np.sort(np.concatenate([bunch.train_indices, bunch.test_indices])), np.arange(n))
    # y = -log10(potency / nM)
    np.testing.assert_allclose(bunch.target, -np.log10(bunch.potency_nm), atol=1e-9)
    assert target in bunch.DESCR and "Licence" in bunch.DESCR
    X, y = load_moleculeace(target, return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)


def test_moleculeace_values_file_order_and_frame():
    bunch = load_moleculeace("CHEMBL1862_Ki", as_frame=True)
    assert list(bunch.frame.columns) == ["smiles", "neg_log10_potency_nm", "potency_nm",
                                         "cliff", "split"]
    assert bunch.data.iloc[0] == "Nc1[nH]cnc2nnc(-c3ccc(Cl)cc3)c1-2"
    assert bunch.potency_nm[0] == 500.0
    assert bunch.target.iloc[0] == pytest.approx(-np.log10(500.0))
    assert bunch.frame["split"].iloc[1] == "test" and 1 in bunch.test_indices
    X, y = load_moleculeace("CHEMBL1862_Ki", return_X_y=True, as_frame=True)
    assert isinstance(X, pd.Series) and isinstance(y, pd.Series)


def test_moleculeace_refuses_an_unknown_target():
    with pytest.raises(ValueError, match="CHEMBL2047_EC50"):
        load_moleculeace("CHEMBL218_EC50")


@pytest.mark.parametrize("target, match", [
    ("chembl2047_ec50", r"Did you mean 'CHEMBL2047_EC50'\?"),
    (" CHEMBL2047_EC50\n", r"Did you mean 'CHEMBL2047_EC50'\?"),
    (["CHEMBL2047_EC50"], "must be a str among MOLECULEACE_TARGETS, got .* of type list"),
    (None, "must be a str among MOLECULEACE_TARGETS"),
])
def test_moleculeace_names_the_target_meant(target, match):
    with pytest.raises(ValueError, match=match):
        load_moleculeace(target)


def test_moleculeace_takes_a_numpy_string_and_refuses_a_non_bool_flag():
    assert load_moleculeace(np.str_("CHEMBL2047_EC50"), return_X_y=True)[0].shape == (631,)
    with pytest.raises(ValueError, match="return_X_y"):
        load_moleculeace("CHEMBL2047_EC50", return_X_y="yes")
