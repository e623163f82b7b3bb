"""RDKitDescriptors: RDKit 2-D descriptors through fitted per-descriptor CDFs."""

import numpy as np
import pytest
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import RDKitDescriptors
from sklearn_papers.chem._descriptors import descriptor_names

TRAIN = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
         "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CCCCCCCC", "NCCO"]


def test_all_descriptors_in_unit_interval_with_names():
    est = RDKitDescriptors().fit(TRAIN)
    out = est.transform(TRAIN + ["CC(C)(C)c1ccc(O)cc1"])
    names = est.get_feature_names_out()
    assert out.shape == (len(TRAIN) + 1, len(descriptor_names())) == (out.shape[0],
                                                                        len(names))
    assert "MolWt" in names and "TPSA" in names
    assert np.isfinite(out).all() and out.min() >= 0 and out.max() <= 1


def test_cdf_follows_the_training_ranks():
    est = RDKitDescriptors(descriptors=["MolWt", "HeavyAtomCount"]).fit(TRAIN)
    out = est.transform(TRAIN)
    order = np.argsort([len(s) for s in TRAIN])
    weights = RDKitDescriptors(descriptors=["MolWt"], normalize=None).fit_transform(TRAIN)
    # the CDF is monotone: ranks of the normalized values equal those of the raw ones
    np.testing.assert_array_equal(np.argsort(out[:, 0], kind="stable"),
                                  np.argsort(weights[:, 0], kind="stable"))
    assert out[:, 0].min() == 0.0 and out[:, 0].max() == 1.0
    # beyond the training range: clipped to 0 and 1
    far = est.transform(["C", "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"])
    np.testing.assert_array_equal(far[:, 0], [0.0, 1.0])
    assert len(order) == len(TRAIN)


def test_non_finite_descriptors_are_explicit():
    names = ["BCUT2D_MWHI", "MolWt"]  # BCUT2D is NaN for a molecule without bonds
    raw = RDKitDescriptors(descriptors=names, normalize=None).fit_transform(
        ["[Na+]", "CCO"])
    assert np.isnan(raw[0, 0]) and np.isfinite(raw[1]).all()
    est = RDKitDescriptors(descriptors=names).fit(TRAIN + ["[Na+]"])
    out = est.transform(["[Na+]", "CCO"])
    assert out[0, 0] == 0.5  # NaN descriptor: the middle of [0, 1]
    assert np.isfinite(out).all()
    # +inf and -inf: the ends
    values = est._output(np.array([[np.inf, 50.0], [-np.inf, 50.0]]), np.ones(2, bool))
    np.testing.assert_array_equal(values[:, 0], [1.0, 0.0])
    # a descriptor never finite on the training molecules: 0.5 everywhere
    only_ions = RDKitDescriptors(descriptors=names).fit(["[Na+]", "[K+]", "[Li+]"])
    np.testing.assert_array_equal(only_ions.transform(["CCO", "[Na+]"])[:, 0], 0.5)


def test_a_never_finite_descriptor_fits_without_numpy_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's "All-NaN slice encountered"
        est = RDKitDescriptors(descriptors=["BCUT2D_MWHI", "MolWt"]).fit(
            ["[Na+]", "[K+]", "[Li+]"])
        np.testing.assert_array_equal(est.transform(["CCO"])[:, 0], 0.5)


def test_invalid_molecules():
    with pytest.raises(ValueError, match="index 1"):
        RDKitDescriptors(descriptors=["MolWt"]).fit(["CCO", "C1CC"])
    est = RDKitDescriptors(descriptors=["MolWt"], errors="nan").fit(TRAIN + ["C1CC"])
    out = est.transform(["CCO", None, "CCC"])
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()
    with pytest.raises(ValueError, match="Unknown RDKit descriptor"):
        RDKitDescriptors(descriptors=["MolWeight"]).fit(TRAIN)


def test_standardize_gives_the_parent_descriptors():
    est = RDKitDescriptors(descriptors=["MolWt", "TPSA"], standardize=True).fit(TRAIN)
    out = est.transform(["CC(=O)[O-].[Na+]", "CC(=O)O"])
    np.testing.assert_array_equal(out[0], out[1])


def test_linear_model_learns_from_them():
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    X, y = X[:300], y[:300]
    pipe = make_pipeline(RDKitDescriptors(descriptors=["MolLogP", "MolWt", "TPSA",
                                                       "NumRotatableBonds",
                                                       "FractionCSP3"]),
                         RidgeCV())
    r2 = cross_val_score(pipe, X, y, cv=3).mean()
    assert r2 > 0.6, r2  # logP alone explains most of aqueous solubility


def test_all_invalid_rows_give_nan_rows_with_errors_nan():
    est = RDKitDescriptors(["MolWt"], errors="nan").fit(["CCO", "CC"])
    out = est.transform(["xx", "C1CC"])
    assert out.shape == (2, 1) and np.isnan(out).all()


def test_one_training_molecule_gives_a_step_cdf_and_a_warning():
    with pytest.warns(UserWarning, match="fitted on one valid molecule"):
        est = RDKitDescriptors(["MolWt"]).fit(["CCO"])
    np.testing.assert_array_equal(est.transform(["C", "CCO", "CCCCCCCC"]).ravel(),
                                  [0.0, 0.5, 1.0])


def test_descriptors_names_a_repeated_or_non_string_descriptor():
    # a repeated name gave two identical columns with the same feature name
    with pytest.raises(ValueError, match=r"descriptors\[2\] = 'MolWt' repeats "
                                         r"descriptors\[0\]"):
        RDKitDescriptors(["MolWt", "TPSA", "MolWt"]).fit(["CCO", "CCN"])
    with pytest.raises(TypeError, match=r"descriptors\[1\] is \['TPSA'\]"):
        RDKitDescriptors(["MolWt", ["TPSA"]]).fit(["CCO", "CCN"])
