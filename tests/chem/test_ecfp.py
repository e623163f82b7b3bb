"""CircularFingerprint: agreement with RDKit, invalid input, parallelism, composition."""

import warnings

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem, rdBase
from rdkit.Chem import rdFingerprintGenerator
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import CircularFingerprint
from sklearn_papers.chem._ecfp import _fold_bits
from sklearn_papers.datasets import load_delaney, load_tox21
from sklearn_papers.utils._sklearn_compat import InvalidParameterError

L_ALANINE = "C[C@@H](N)C(=O)O"
D_ALANINE = "C[C@H](N)C(=O)O"


@pytest.fixture(scope="module")
def delaney():
    return load_delaney(return_X_y=True)


@pytest.fixture(scope="module")
def tox21_smiles():
    return load_tox21(return_X_y=True)[0]


def _rdkit_reference(smiles, radius, n_bits, counts=False, features=False, chirality=False):
    """RDKit's own Morgan fingerprints, molecule by molecule, from Chem.MolFromSmiles."""
    inv = rdFingerprintGenerator.GetMorganFeatureAtomInvGen() if features else None
    gen = rdFingerprintGenerator.GetMorganGenerator(
        radius=radius, fpSize=n_bits, atomInvariantsGenerator=inv, includeChirality=chirality
    )
    rows = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        fp = gen.GetCountFingerprint(mol) if counts else gen.GetFingerprint(mol)
        row = np.zeros(n_bits, dtype=np.int64)
        if counts:
            for bit, count in fp.GetNonzeroElements().items():
                row[bit] = count
        else:
            row[list(fp.GetOnBits())] = 1
        rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize(
    "radius, n_bits, kwargs",
    [
        (2, 2048, {}),
        (1, 512, {}),
        (3, 1024, {"use_counts": True}),
        (2, 1024, {"use_features": True}),
        (2, 1024, {"use_chirality": True}),
        (2, 1024, {"use_features": True, "use_counts": True, "use_chirality": True}),
        (0, 64, {}),
    ],
)
def test_matches_rdkit_morgan_bit_for_bit_on_delaney(delaney, radius, n_bits, kwargs):
    X, _ = delaney
    ours = CircularFingerprint(radius, n_bits, **kwargs).transform(X)
    ref = _rdkit_reference(
        X, radius, n_bits, counts=kwargs.get("use_counts", False),
        features=kwargs.get("use_features", False),
        chirality=kwargs.get("use_chirality", False),
    )
    assert ours.shape == (len(X), n_bits)
    np.testing.assert_array_equal(ours, ref)


def test_matches_rdkit_on_tox21_and_flags_exactly_the_unparsable(tox21_smiles):
    # Tox21 holds salts, metals, charges and explicit hydrogens: a harder parsing test.
    X = tox21_smiles[:2000].tolist() + tox21_smiles[2000:].tolist()[::4]
    with rdBase.BlockLogs():
        parsable = np.array([Chem.MolFromSmiles(s) is not None for s in X])
    ours = CircularFingerprint(2, 1024, errors="nan").transform(X)
    np.testing.assert_array_equal(np.isnan(ours).all(axis=1), ~parsable)
    ref = _rdkit_reference(np.asarray(X)[parsable], 2, 1024)
    np.testing.assert_array_equal(ours[parsable], ref)


def test_mol_objects_give_the_same_rows_as_smiles(delaney):
    X = delaney[0][:50]
    mols = [Chem.MolFromSmiles(s) for s in X]
    for kwargs in ({}, {"use_chirality": True}):
        fp = CircularFingerprint(n_bits=512, **kwargs)
        np.testing.assert_array_equal(fp.transform(mols), fp.transform(X))


@pytest.mark.parametrize(
    "kwargs", [{}, {"use_chirality": True}, {"use_counts": True}, {"use_features": True}])
def test_mol_with_explicit_hydrogens_gives_the_rows_of_its_smiles(delaney, kwargs):
    # Chem.AddHs(MolFromSmiles("c1ccccc1O")) gave 14 bits against 11 from the SMILES,
    # 4 in common: H atoms were fingerprinted as graph atoms.
    X = list(delaney[0][:40]) + ["c1ccccc1O", "C[C@@H](N)C(=O)O", "[NH4+].[Cl-]",
                                 "F/C=C/F", "[2H]C([2H])([2H])O"]
    with_h = [Chem.AddHs(Chem.MolFromSmiles(s)) for s in X]
    from_sdf = [Chem.MolFromMolBlock(Chem.MolToMolBlock(m), removeHs=False)
                for m in with_h[-5:]]
    fp = CircularFingerprint(n_bits=1024, **kwargs)
    ours = fp.transform(X)
    np.testing.assert_array_equal(fp.transform(with_h), ours)
    np.testing.assert_array_equal(fp.transform(from_sdf), ours[-5:])
    # and the SMILES rows are still RDKit's own, bit for bit
    ref = _rdkit_reference(X, 2, 1024, counts=kwargs.get("use_counts", False),
                           features=kwargs.get("use_features", False),
                           chirality=kwargs.get("use_chirality", False))
    np.testing.assert_array_equal(ours, ref)
    assert with_h[0].GetNumAtoms() > with_h[0].GetNumHeavyAtoms()  # inputs left alone


def test_output_dtypes_follow_the_parameters():
    X = ["CCO", "c1ccccc1"]
    assert CircularFingerprint().transform(X).dtype == np.uint8
    counts = CircularFingerprint(use_counts=True).transform(["CCCCCCCC"])
    assert counts.dtype == np.uint32 and counts.max() > 1
    # errors="nan" always gives float32, even when every molecule is valid
    assert CircularFingerprint(errors="nan").transform(X).dtype == np.float32


def test_chirality_separates_enantiomers_only_when_asked():
    off = CircularFingerprint().transform([L_ALANINE, D_ALANINE])
    on = CircularFingerprint(use_chirality=True).transform([L_ALANINE, D_ALANINE])
    np.testing.assert_array_equal(off[0], off[1])
    assert not np.array_equal(on[0], on[1])


def test_fcfp_differs_from_ecfp():
    # Pyridine and benzene share ring features in FCFP far more than in ECFP.
    X = ["c1ccccc1O", "c1ccncc1"]
    assert not np.array_equal(CircularFingerprint().transform(X),
                              CircularFingerprint(use_features=True).transform(X))


def test_tox21_aluminium_smiles_raise_naming_index_and_reason(tox21_smiles, capfd):
    with pytest.raises(ValueError, match=r"8 of 7831 molecule\(s\) in X are invalid") as info:
        CircularFingerprint().transform(tox21_smiles)
    msg = str(info.value)
    assert "index 1322: 'NC(=O)NC1N=C(O[AlH3](O)O)NC1=O'" in msg
    assert "Explicit valence" in msg and "and 3 more" in msg
    assert "NoneType" not in msg and "Boost" not in msg
    out, err = capfd.readouterr()
    assert "valence" not in err and "valence" not in out, "RDKit log leaked"


def test_tox21_aluminium_smiles_give_nan_rows_in_place(tox21_smiles):
    out = CircularFingerprint(n_bits=256, errors="nan").transform(tox21_smiles)
    nan_rows = np.flatnonzero(np.isnan(out).any(axis=1))
    assert len(nan_rows) == 8 and all("[AlH3]" in tox21_smiles[i] for i in nan_rows)
    assert np.isnan(out[nan_rows]).all()
    good = np.setdiff1d(np.arange(len(tox21_smiles)), nan_rows)[:100]
    np.testing.assert_array_equal(
        out[good], CircularFingerprint(n_bits=256).transform(tox21_smiles[good])
    )


def test_n_jobs_and_batch_size_do_not_change_the_output(tox21_smiles):
    X = tox21_smiles[:1500]
    serial = CircularFingerprint(n_bits=512, errors="nan").transform(X)
    for kwargs in ({"n_jobs": 2}, {"n_jobs": 2, "batch_size": 97}, {"batch_size": 7}):
        out = CircularFingerprint(n_bits=512, errors="nan", **kwargs).transform(X)
        np.testing.assert_array_equal(out, serial)


def test_parallel_errors_report_global_indices(tox21_smiles):
    with pytest.raises(ValueError, match="index 1322: "):
        CircularFingerprint(n_jobs=2, batch_size=300).transform(tox21_smiles[:2000])


def test_feature_names_and_pandas_output():
    fp = CircularFingerprint(radius=3, n_bits=16, use_features=True, use_counts=True)
    names = fp.get_feature_names_out()
    assert names[0] == "fcfp6_count_0" and names[-1] == "fcfp6_count_15"
    df = fp.set_output(transform="pandas").fit_transform(pd.Series(["CCO", "CCN"]))
    assert list(df.columns) == list(names) and df.shape == (2, 16)


def test_feature_names_out_checks_input_features_as_scikit_learn_does():
    fp = CircularFingerprint(n_bits=4).fit(pd.DataFrame({"smiles": ["CCO", "CCC"]}))
    assert list(fp.get_feature_names_out(["smiles"])) == [f"ecfp4_{i}" for i in range(4)]
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        fp.get_feature_names_out(["other"])
    with pytest.raises(ValueError, match="input_features should have length equal"):
        CircularFingerprint(n_bits=4).fit(["CCO"]).get_feature_names_out(["a", "b"])


def test_fit_sets_input_attributes_and_is_stateless():
    fp = CircularFingerprint(n_bits=32)
    out_unfitted = fp.transform(["CCO"])
    fp.fit(pd.DataFrame({"smiles": ["CCO", "CCC"]}))
    assert fp.n_features_in_ == 1
    assert list(fp.feature_names_in_) == ["smiles"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(fp.transform(["CCO"]), out_unfitted)
    fp.fit(["CCO"])
    assert not hasattr(fp, "feature_names_in_")


def test_fit_raises_on_invalid_molecules_and_bad_params():
    with pytest.raises(ValueError, match="index 1: 'C1CC'"):
        CircularFingerprint().fit(["CCO", "C1CC"])
    CircularFingerprint(errors="nan").fit(["CCO", "C1CC"])
    with pytest.raises(InvalidParameterError, match="'radius' parameter"):
        CircularFingerprint(radius=-1).transform(["CCO"])
    with pytest.raises(InvalidParameterError, match="'errors' parameter"):
        CircularFingerprint(errors="ignore").fit_transform(["CCO"])


def test_verbose_shows_progress_and_zero_is_silent(capfd):
    X = ["CCO"] * 20
    CircularFingerprint(batch_size=5).transform(X)
    assert capfd.readouterr().err == ""
    CircularFingerprint(batch_size=5, verbose=2).transform(X)
    assert "CircularFingerprint" in capfd.readouterr().err


def test_pipeline_grid_search_n_jobs_2(delaney):
    X, y = delaney[0][:240], delaney[1][:240]
    pipe = make_pipeline(CircularFingerprint(n_bits=256), Ridge())
    search = GridSearchCV(pipe, {"circularfingerprint__radius": [1, 2]},
                          cv=KFold(3), n_jobs=2).fit(X, y)
    assert search.best_params_["circularfingerprint__radius"] in (1, 2)
    assert np.isfinite(search.predict(X[:5])).all()


def test_grid_search_runs_on_a_dask_local_cluster(delaney):
    distributed = pytest.importorskip("dask.distributed")
    from joblib import parallel_backend

    X, y = delaney[0][:120], delaney[1][:120]
    pipe = make_pipeline(CircularFingerprint(n_bits=128), Ridge())
    grid = {"circularfingerprint__radius": [1, 2], "ridge__alpha": [0.1, 10.0]}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            with distributed.get_task_stream(client) as tasks:
                with parallel_backend("dask"):
                    search = GridSearchCV(pipe, grid, cv=KFold(2), n_jobs=-1).fit(X, y)
            # The 8 fits (4 candidates x 2 folds) ran as tasks on the cluster.
            assert len(tasks.data) >= 8
    expected = GridSearchCV(pipe, grid, cv=KFold(2)).fit(X, y)
    assert search.best_params_ == expected.best_params_
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               expected.cv_results_["mean_test_score"])


def test_unsanitized_mol_gives_the_same_row_as_its_smiles():
    # Used to raise RDKit's RuntimeError (implicit valence never computed).
    mol = Chem.MolFromSmiles("c1ccccc1O", sanitize=False)
    fp = CircularFingerprint(n_bits=128)
    np.testing.assert_array_equal(fp.transform([mol]), fp.transform(["c1ccccc1O"]))


@pytest.mark.parametrize("n_bits", [2**24 + 1, 2**31])
def test_n_bits_above_2_to_the_24_is_refused_before_allocating(n_bits):
    for method in ("fit", "transform", "fit_transform"):
        with pytest.raises(InvalidParameterError, match="n_bits"):
            getattr(CircularFingerprint(n_bits=n_bits), method)(["CCO"])


def test_output_larger_than_memory_raises_memory_error_saying_how_much(monkeypatch):
    from sklearn_papers.chem import _ecfp

    monkeypatch.setattr(_ecfp, "_physical_memory", lambda: 2**20)  # a 1 MiB machine
    fp = CircularFingerprint(n_bits=2**16, use_counts=True)
    with pytest.raises(MemoryError, match=r"need 0\.1 GiB .*\(512, 65536\) uint32"):
        fp.transform(["CCO"] * 512)
    assert fp.transform(["CCO"] * 2).shape == (2, 2**16)  # 0.5 MiB fits


@pytest.mark.parametrize("kwargs", [
    {}, {"use_counts": True}, {"use_features": True, "use_chirality": True},
    {"standardize": True, "errors": "nan"}, {"errors": "nan"},
    {"use_counts": True, "errors": "nan"},
])
def test_sparse_output_holds_the_dense_values(tox21_smiles, kwargs):
    from scipy import sparse

    X = tox21_smiles[:300].tolist() + ["not a smiles", None, "CCN.Cl", "[Na+].[Cl-]"]
    if kwargs.get("errors") != "nan":
        X = X[:-4] + ["CCN.Cl", "[Na+].[Cl-]"]  # valid without standardization
    with rdBase.BlockLogs(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the multi-fragment warning
        dense = CircularFingerprint(2, 1024, **kwargs).transform(X)
        csr = CircularFingerprint(2, 1024, sparse=True, batch_size=97,
                                  **kwargs).transform(X)
    assert sparse.issparse(csr) and csr.format == "csr"
    assert csr.dtype == dense.dtype and csr.shape == dense.shape
    assert csr.has_sorted_indices
    np.testing.assert_array_equal(csr.toarray(), dense)  # NaN rows compare equal
    finite = ~np.isnan(dense.astype(np.float64)).any(axis=1)
    # only the bits set are stored for valid molecules
    assert csr[np.flatnonzero(finite)].nnz == np.count_nonzero(dense[finite])


def test_sparse_output_stores_only_the_bits_set(delaney):
    X, _ = delaney
    csr = CircularFingerprint(2, 2**20, sparse=True).transform(X)
    dense_bits = CircularFingerprint(2, 2048).transform(X).sum()
    # a million positions per molecule, yet the storage follows the bits set
    stored = csr.data.nbytes + csr.indices.nbytes + csr.indptr.nbytes
    assert csr.nnz < 2 * dense_bits
    assert stored < 6 * csr.nnz + 8 * (len(X) + 1)


@pytest.mark.parametrize("model", ["logistic", "ridge", "svr"])
def test_sparse_fingerprints_in_a_pipeline_match_dense(delaney, model):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVR

    X, y = delaney
    X, y = X[:400], y[:400]
    if model == "logistic":
        make, target = (lambda: LogisticRegression(max_iter=2000)), y > np.median(y)
    elif model == "ridge":
        make, target = (lambda: Ridge(alpha=1.0, solver="sparse_cg", tol=1e-10)), y
    else:
        make, target = (lambda: SVR(C=1.0)), y
    dense = make_pipeline(CircularFingerprint(n_bits=1024), make()).fit(X, target)
    sparse_fit = make_pipeline(CircularFingerprint(n_bits=1024, sparse=True),
                               make()).fit(X, target)
    np.testing.assert_allclose(sparse_fit.predict(X[:50]).astype(float),
                               dense.predict(X[:50]).astype(float), rtol=1e-5, atol=1e-6)


def test_sparse_large_n_bits_skips_the_dense_memory_check(monkeypatch):
    import sklearn_papers.chem._ecfp as ecfp

    monkeypatch.setattr(ecfp, "_physical_memory", lambda: 1000)
    with pytest.raises(MemoryError, match="sparse=True"):
        CircularFingerprint(n_bits=2048).transform(["CCO"])
    assert CircularFingerprint(n_bits=2048, sparse=True).transform(["CCO"]).nnz > 0


@pytest.mark.parametrize("radius, n_bits", [(1, 16), (2, 512), (4, 64)])
def test_folding_wide_bits_equals_rdkit_at_the_smaller_size(radius, n_bits):
    smiles = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CCC2(CC1)OCCO2", "N#Cc1ccncc1"]
    wide = CircularFingerprint(radius=radius, n_bits=2048).fit_transform(smiles)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    ref = np.array([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles])
    folded = _fold_bits(wide, n_bits)
    assert folded.shape == (len(smiles), n_bits) and folded.dtype == wide.dtype
    np.testing.assert_array_equal(folded, ref)


def test_fold_bits_is_an_or_over_positions_with_equal_remainder():
    bits = np.array([[1, 0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]], dtype=np.uint8)
    np.testing.assert_array_equal(_fold_bits(bits, 4), [[1, 1, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(_fold_bits(bits, 8), bits)


@pytest.mark.parametrize("fingerprints, n_bits, match", [
    (np.zeros((2, 2048), dtype=np.uint8), 1000, "does not divide"),
    (np.zeros((2, 2048), dtype=np.uint8), 0, "does not divide"),
    (np.zeros(2048, dtype=np.uint8), 64, "must be 2-D"),
])
def test_fold_bits_refuses_bad_input(fingerprints, n_bits, match):
    with pytest.raises(ValueError, match=match):
        _fold_bits(fingerprints, n_bits)


def test_numpy_integer_settings_from_a_grid_give_the_python_int_fingerprint():
    from sklearn_papers.chem import CircularFingerprint

    smiles = ["CCO", "c1ccccc1O"]
    ref = CircularFingerprint(radius=2, n_bits=64).fit_transform(smiles)
    got = CircularFingerprint(radius=np.int64(2), n_bits=np.int64(64)).fit_transform(smiles)
    np.testing.assert_array_equal(got, ref)
