"""SkipInvalidMolecules: fit on the valid rows, NaN rows for exactly the invalid ones."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_papers.chem import CircularFingerprint, MPNNRegressor, SkipInvalidMolecules

GOOD = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CCCC", "NCCO"]
BAD = {2: "C1CC", 5: None, 9: "", 13: "CC(C"}


def _with_invalid(good, bad=BAD):
    X, it = [], iter(good)
    for i in range(len(good) + len(bad)):
        X.append(bad[i] if i in bad else next(it))
    return np.array(X, dtype=object)


def _ridge():
    return make_pipeline(CircularFingerprint(n_bits=128), Ridge(alpha=1.0))


def test_fit_uses_the_valid_rows_with_their_targets_and_weights():
    X = _with_invalid(GOOD)
    valid = np.array([i not in BAD for i in range(len(X))])
    y = np.arange(len(X), dtype=float)
    w = np.linspace(0.5, 2.0, len(X))
    with pytest.warns(UserWarning, match=r"left 4 of 16 invalid .*index 2: 'C1CC'"):
        model = SkipInvalidMolecules(_ridge()).fit(X, y, sample_weight=w)
    assert model.n_left_out_ == 4
    np.testing.assert_array_equal(model.left_out_, sorted(BAD))
    reference = _ridge().fit(X[valid], y[valid], ridge__sample_weight=w[valid])
    pred = model.predict(X)
    assert pred.shape == (len(X),) and pred.dtype == np.float64
    assert np.isnan(pred[~valid]).all() and np.isfinite(pred[valid]).all()
    np.testing.assert_array_equal(pred[valid], reference.predict(X[valid]))
    # sample_weight= goes to the wrapped fit, for the valid rows
    est = MPNNRegressor(hidden_size=8, n_steps=1, edge_hidden_size=8, max_epochs=1,
                        batch_size=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        weighted = SkipInvalidMolecules(est).fit(X, y, sample_weight=w)
    reference = clone(est).fit(X[valid], y[valid], sample_weight=w[valid])
    np.testing.assert_allclose(weighted.predict(X[valid]), reference.predict(X[valid]),
                               rtol=1e-6)


def test_predict_proba_and_string_labels():
    X = _with_invalid(GOOD)
    valid = np.array([i not in BAD for i in range(len(X))])
    y = np.where(np.arange(len(X)) % 2 == 0, "active", "inactive").astype(object)
    clf = make_pipeline(CircularFingerprint(n_bits=128), LogisticRegression())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(clf).fit(X, y)
    reference = clone(clf).fit(X[valid], y[valid])
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), 2)
    assert np.isnan(proba[~valid]).all()
    np.testing.assert_array_equal(proba[valid], reference.predict_proba(X[valid]))
    labels = model.predict(X)
    assert labels.dtype == object
    assert all(isinstance(v, float) and np.isnan(v) for v in labels[~valid])
    np.testing.assert_array_equal(labels[valid], reference.predict(X[valid]))
    np.testing.assert_array_equal(model.classes_, ["active", "inactive"])
    dec = model.decision_function(X)
    assert dec.shape == (len(X),) and np.isnan(dec[~valid]).all()
    # a batch where nothing is valid: NaN rows of the right shape
    assert model.predict_proba(["C1CC", None]).shape == (2, 2)
    assert np.isnan(model.predict_proba(["C1CC", None])).all()


def test_transform_nan_rows_and_pandas_output():
    pd = pytest.importorskip("pandas")
    X = _with_invalid(GOOD)
    valid = np.array([i not in BAD for i in range(len(X))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(CircularFingerprint(n_bits=64)).fit(X)
    out = model.transform(X)
    assert out.shape == (len(X), 64) and np.isnan(out[~valid]).all()
    np.testing.assert_array_equal(out[valid], CircularFingerprint(n_bits=64).transform(
        X[valid]))
    assert model.transform(["C1CC"]).shape == (1, 64)
    model.set_output(transform="pandas")
    df = model.transform(pd.Series(X, index=np.arange(len(X)) + 100))
    assert list(df.columns) == list(CircularFingerprint(n_bits=64).get_feature_names_out())
    assert df.index[0] == 100 and df.iloc[2].isna().all()


def test_only_the_inner_methods_are_offered():
    model = SkipInvalidMolecules(_ridge())
    assert hasattr(model, "predict") and not hasattr(model, "predict_proba")
    assert not hasattr(model, "transform")
    assert hasattr(SkipInvalidMolecules(CircularFingerprint()), "transform")
    assert not hasattr(SkipInvalidMolecules(CircularFingerprint()), "predict")


def test_every_row_invalid_raises():
    with pytest.raises(ValueError, match="Every one of the 2 molecule"):
        SkipInvalidMolecules(_ridge()).fit(["C1CC", ""], [1.0, 2.0])


def test_length_mismatch_raises():
    with pytest.raises(ValueError, match=r"y has 3 row\(s\)"):
        SkipInvalidMolecules(_ridge()).fit(["CCO", "CCC"], [1.0, 2.0, 3.0])


def test_grid_search_clone_pickle():
    X = _with_invalid(GOOD)
    y = np.array([len(str(s)) for s in X], dtype=float)
    search = GridSearchCV(SkipInvalidMolecules(_ridge()),
                          {"estimator__ridge__alpha": [0.1, 10.0]}, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y)
    best = search.best_estimator_
    assert best.estimator_.named_steps["ridge"].alpha in (0.1, 10.0)
    loaded = pickle.loads(pickle.dumps(best))
    np.testing.assert_array_equal(loaded.predict(X), best.predict(X))
    cloned = clone(best)
    assert not hasattr(cloned, "estimator_")


def test_graph_estimator_inside():
    X = _with_invalid(GOOD[:8], {1: "C1CC", 4: None})
    valid = np.array([i not in (1, 4) for i in range(len(X))])
    y = np.arange(len(X), dtype=float)
    est = MPNNRegressor(hidden_size=8, n_steps=1, edge_hidden_size=8, max_epochs=2,
                        batch_size=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(est).fit(X, y)
    reference = clone(est).fit(X[valid], y[valid])
    pred = model.predict(X)
    assert np.isnan(pred[~valid]).all()
    np.testing.assert_allclose(pred[valid], reference.predict(X[valid]), rtol=1e-6)


def test_messages_name_positions_and_labels_of_the_users_input():
    pd = pytest.importorskip("pandas")
    from sklearn_papers.chem import MultipleFragmentsWarning

    X = pd.Series(["CCO", "C1CC", "CCN.Cl", "c1ccccc1", "CCC"],
                  index=["a", "b", "c", "d", "e"])
    y = [1.0, 2.0, 3.0, 4.0, 5.0]
    # the estimator alone names position and label
    with pytest.raises(ValueError, match=r"index 1 \(label 'b'\): 'C1CC'"):
        CircularFingerprint().transform(X)
    with pytest.warns(UserWarning) as caught:
        model = SkipInvalidMolecules(_ridge()).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert any("index 1 (label 'b'): 'C1CC'" in m for m in messages), messages
    # the wrapped estimator sees 4 rows; its warning names the row of the user's X
    fragments = [str(w.message) for w in caught if w.category is MultipleFragmentsWarning]
    assert len(fragments) == 1 and "index 2 (label 'c')" in fragments[0], fragments
    with pytest.warns(MultipleFragmentsWarning, match=r"index 2 \(label 'c'\)"):
        model.predict(X)
    # a list has no labels: positions in the user's input
    with pytest.warns(MultipleFragmentsWarning, match=r"first at index 2: 'CCN.Cl'"):
        model.predict(list(X))
    # a default RangeIndex adds nothing to the position
    with pytest.raises(ValueError, match=r"index 1: 'C1CC'"):
        CircularFingerprint().transform(X.reset_index(drop=True))


def test_wrapped_estimator_errors_name_the_users_row():
    from sklearn_papers.chem import MoleculeStandardizer

    # ferrocene parses but its standardized SMILES cannot be read back, so a
    # MoleculeStandardizer refuses it; inside a nested pipeline the wrapper does not look
    # for it, so the row reaches the standardizer: at position 2 of the wrapper's input,
    # position 1 among the valid rows the standardizer is given
    ferrocene = "[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1"
    model = SkipInvalidMolecules(make_pipeline(
        make_pipeline(MoleculeStandardizer(), CircularFingerprint()), Ridge()))
    model.fit(["CCO", "CCN", "CCCl", "CCCC"], [1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=r"index 2: .*cannot read back"):
            model.predict(["C1CC", "CCO", ferrocene, "CCCl"])
    # and a nested wrapper names the row of the outermost input
    outer = SkipInvalidMolecules(SkipInvalidMolecules(model.estimator)).fit(
        ["CCO", "CCN", "CCCl", "CCCC"], [1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=r"index 3: .*cannot read back"):
            outer.predict(["", "C1CC", "CCO", ferrocene])


@pytest.mark.parametrize("first", ["standardizer", "parameter"])
def test_molecules_the_wrapped_standardization_refuses_are_left_out(first):
    from sklearn_papers.chem import MoleculeStandardizer

    # a salt of inorganic parts only has no parent molecule; ferrocene's standardized
    # SMILES cannot be read back: both standardizations refuse both
    ferrocene = "[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1"
    if first == "standardizer":
        inner = make_pipeline(MoleculeStandardizer(), CircularFingerprint(n_bits=64), Ridge())
    else:
        inner = make_pipeline(CircularFingerprint(n_bits=64, standardize=True), Ridge())
    X = ["CCO", "[Na+].[Cl-]", "CCN.Cl", "C1CC", "CCCl", "CCCC", ferrocene]
    y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    with pytest.warns(UserWarning, match=r"left 3 of 7 .*index 1: '\[Na\+\]\.\[Cl-\]' "
                                         r"\(no organic fragment"):
        model = SkipInvalidMolecules(inner).fit(X, y)
    np.testing.assert_array_equal(model.left_out_, [1, 3, 6])
    pred = model.predict(["[Cu+2].[O-]S(=O)(=O)[O-]", "CCO", ferrocene, "CC(=O)[O-].[Na+]"])
    assert np.isnan(pred[0]) and np.isfinite(pred[[1, 3]]).all()
    assert np.isnan(pred[2])


def test_classes_seen_only_on_invalid_rows_warn():
    X = ["CCO", "C1CC", "CCN", "c1ccccc1", "", "CCC"]
    y = ["a", "rare", "a", "b", "rare", "b"]
    clf = make_pipeline(CircularFingerprint(n_bits=64), LogisticRegression())
    with pytest.warns(UserWarning, match=r"Class\(es\) 'rare' \(only at index 1 and 1 more\)"):
        model = SkipInvalidMolecules(clf).fit(X, y)
    np.testing.assert_array_equal(model.classes_, ["a", "b"])
    # no such warning when every class keeps a valid row
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SkipInvalidMolecules(clf).fit(X, ["a", "a", "a", "b", "b", "b"])
    assert not any("Class(es)" in str(w.message) for w in caught)


@pytest.mark.parametrize("method", ["fit", "score"])
def test_lengths_of_y_and_weights_checked_in_fit_and_score(method):
    X = ["CCO", "C1CC", "CCN", "CCC"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(_ridge()).fit(X, [1.0, 2.0, 3.0, 4.0])
    call = getattr(model, method)
    with pytest.raises(ValueError, match=r"X has 4 molecule\(s\) but y has 3 row\(s\)"):
        call(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"X has 4 molecule\(s\) but y has 5 row\(s\)"):
        call(X, [1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(ValueError, match=r"sample_weight has 2 row\(s\)"):
        call(X, [1.0, 2.0, 3.0, 4.0], sample_weight=[1.0, 1.0])
    with pytest.raises(ValueError, match="one row per molecule"):
        call(X, 3.0)


@pytest.mark.parametrize("method", ["fit", "score"])
def test_weights_of_valid_molecules_are_checked_naming_the_row(method):
    # a negative weight reached Ridge, which said "array must not contain infs or NaNs";
    # the weight of an invalid molecule is dropped with its row and may be anything
    X = ["CCO", "C1CC", "CCN", "CCC"]
    y = [1.0, 2.0, 3.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(_ridge()).fit(X, y, sample_weight=[1.0, np.nan, 1, 2])
        call = getattr(model, method)
        with pytest.raises(ValueError, match=r"sample_weight\[2\] = -1.0 \(a valid "
                                             r"molecule's weight\): weights must be finite"):
            call(X, y, sample_weight=[1.0, 1.0, -1.0, 1.0])
        with pytest.raises(ValueError, match=r"sample_weight\[3\] = inf"):
            call(X, y, sample_weight=np.array([1.0, -5.0, 1.0, np.inf]))
        with pytest.raises(ValueError, match=r"sample_weight=-2.0: weights must be finite"):
            call(X, y, sample_weight=-2.0)
        with pytest.raises(ValueError, match=r"sample_weight holds 'a', not a number"):
            call(X, y, sample_weight=["a", 1.0, 1.0, 1.0])


def test_transform_of_only_invalid_molecules_without_feature_names_says_why():
    # the width of the NaN rows comes from get_feature_names_out; without one, sklearn's
    # AttributeError ("does not provide get_feature_names_out") named a method the user
    # did not call
    from sklearn.base import BaseEstimator, TransformerMixin

    class Ones(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def transform(self, X):
            return np.ones((len(X), 3))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SkipInvalidMolecules(make_pipeline(CircularFingerprint(n_bits=8), Ones()))
        model.fit(["CCO", "CCN", "C1CC"])
    assert model.transform(["C1CC", "CCO"]).shape == (2, 3)
    with pytest.raises(ValueError, match=r"Every molecule in X is invalid, and the wrapped "
                                         r"estimator has no get_feature_names_out"):
        model.transform(["C1CC", None])


@pytest.mark.parametrize("first", ["standardizer", "parameter"])
def test_each_molecule_is_standardized_once_per_call(first, monkeypatch):
    from sklearn_papers.chem import MoleculeStandardizer
    from sklearn_papers.chem import _standardization

    calls = []
    original = _standardization._Steps.__call__

    def counted(self, mol):
        calls.append(1)
        return original(self, mol)

    monkeypatch.setattr(_standardization._Steps, "__call__", counted)
    if first == "standardizer":
        inner = make_pipeline(MoleculeStandardizer(), CircularFingerprint(n_bits=64), Ridge())
    else:
        inner = make_pipeline(CircularFingerprint(n_bits=64, standardize=True), Ridge())
    X = ["CCO", "[Na+].[Cl-]", "CCN.Cl", "C1CC", "CCCl", "CCCC", "CC(=O)[O-].[Na+]"]
    y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    with pytest.warns(UserWarning, match="left 2 of 7"):
        model = SkipInvalidMolecules(inner).fit(X, y)
    assert len(calls) == 6  # every parsed molecule once ("C1CC" does not parse)
    calls.clear()
    pred = model.predict(X)
    assert len(calls) == 6
    # the same predictions as the wrapped pipeline standardizing on its own
    keep = [0, 2, 4, 5, 6]
    np.testing.assert_allclose(pred[keep], model.estimator_.predict([X[i] for i in keep]))
    assert np.isnan(pred[[1, 3]]).all()
    # the memo lives for one call only
    assert _standardization._MEMO.get() is None


@pytest.mark.parametrize("second", ["default", "tautomer"])
def test_shared_standardization_gives_the_wrapped_pipelines_predictions(second):
    # a tautomer-canonicalizing standardizer, then a featurizer standardizing again with
    # other steps: the memo keys results by steps, so neither reads the other's
    import pandas as pd
    from rdkit import Chem

    from sklearn_papers.chem import MoleculeStandardizer
    from sklearn_papers.chem import _standardization

    steps = True if second == "default" else MoleculeStandardizer(canonical_tautomer=True)

    def make():
        return make_pipeline(MoleculeStandardizer(canonical_tautomer=second == "default"),
                             CircularFingerprint(n_bits=128, standardize=steps), Ridge())

    smiles = ["Oc1ccccn1", "O=c1cccc[nH]1", "CC(=O)[O-].[Na+]", "[Na+].[Cl-]", "C1CC",
              "Oc1ccccn1", "CC(C)=O", "CC(O)=C", "CCN", "O=C(O)c1ccccc1", "CCCCO"]
    y = np.linspace(0.0, 1.0, len(smiles))
    index = [f"m{i}" for i in range(len(smiles))][::-1]
    X = pd.Series(smiles, index=index)
    with pytest.warns(UserWarning, match="left 2 of 11"):
        model = SkipInvalidMolecules(make()).fit(X, pd.Series(y, index=index))
    assert _standardization._MEMO.get() is None
    keep = [i for i in range(len(smiles)) if i not in (3, 4)]
    plain = make().fit([smiles[i] for i in keep], y[keep])
    # Mol objects for some rows (never memoized), the strings for the others
    X_pred = [Chem.MolFromSmiles(s) if i % 2 and i != 3 and i != 4 else s
              for i, s in enumerate(smiles)]
    for X_in in (X, X_pred):
        pred = model.predict(X_in)
        assert _standardization._MEMO.get() is None
        assert np.isnan(pred[[3, 4]]).all()
        np.testing.assert_array_equal(pred[keep], plain.predict([smiles[i] for i in keep]))


def test_standardization_memo_ends_with_an_error_inside_fit():
    from sklearn_papers.chem import _standardization

    class Failing(Ridge):
        def fit(self, X, y):
            assert _standardization._MEMO.get() is not None  # inside the call
            raise RuntimeError("inner fit failed")

    model = SkipInvalidMolecules(make_pipeline(CircularFingerprint(n_bits=64,
                                                                   standardize=True),
                                               Failing()))
    with pytest.raises(RuntimeError, match="inner fit failed"):
        model.fit(["CCO", "CCN"], [1.0, 2.0])
    assert _standardization._MEMO.get() is None


def _delaney_with_invalid():
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    X, y = X[:60].copy(), y[:60]
    X[[3, 17, 41]] = ["not a smiles", "", "C1CC"]
    return X, y


def test_valid_rows_scorer_scores_a_search_on_the_valid_rows():
    from sklearn.metrics import mean_squared_error
    from sklearn.model_selection import KFold

    from sklearn_papers.chem import valid_rows_scorer

    X, y = _delaney_with_invalid()
    model = SkipInvalidMolecules(_ridge())
    grid = {"estimator__ridge__alpha": [0.1, 10.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plain = GridSearchCV(model, grid, cv=3,
                             scoring="neg_root_mean_squared_error").fit(X, y)
        search = GridSearchCV(model, grid, cv=3, scoring=valid_rows_scorer(
            "neg_root_mean_squared_error")).fit(X, y)
    # a plain scoring string meets the NaN rows: every split scores NaN
    assert np.isnan(plain.cv_results_["mean_test_score"]).all()
    scores = search.cv_results_["split0_test_score"]
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # the score of a split: RMSE of the wrapped model on the valid test rows
    train, test = next(KFold(3).split(X))
    valid = np.array([i not in (3, 17, 41) for i in range(len(X))])
    for score, alpha in zip(scores, grid["estimator__ridge__alpha"]):
        fitted = _ridge().set_params(ridge__alpha=alpha).fit(
            X[train[valid[train]]], y[train[valid[train]]])
        keep = test[valid[test]]
        rmse = mean_squared_error(y[keep], fitted.predict(X[keep])) ** 0.5
        np.testing.assert_allclose(-score, rmse, rtol=1e-10)


def test_valid_rows_scorer_takes_any_scoring_and_other_estimators():
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import cross_validate

    from sklearn_papers.chem import valid_rows_scorer

    X, y = _delaney_with_invalid()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = cross_validate(SkipInvalidMolecules(_ridge()), X, y, cv=3, scoring=
                             valid_rows_scorer(["r2", "neg_mean_absolute_error"]))
        weighted = cross_validate(SkipInvalidMolecules(_ridge()), X, y, cv=3,
                                  scoring=valid_rows_scorer(), params={
                                      "sample_weight": np.ones(len(X))})
    assert np.isfinite(out["test_r2"]).all()
    assert np.isfinite(out["test_neg_mean_absolute_error"]).all()
    assert np.isfinite(weighted["test_score"]).all()
    # any other estimator: the scoring itself
    valid = np.array([i not in (3, 17, 41) for i in range(len(X))])
    plain = _ridge().fit(X[valid], y[valid])
    assert valid_rows_scorer("r2")(plain, X[valid], y[valid]) == get_scorer("r2")(
        plain, X[valid], y[valid])
    with pytest.raises(ValueError, match="not_a_metric"):
        valid_rows_scorer("not_a_metric")
    assert repr(valid_rows_scorer("r2")) == "valid_rows_scorer('r2')"
    assert pickle.loads(pickle.dumps(valid_rows_scorer("r2")))(
        plain, X[valid], y[valid]) == get_scorer("r2")(plain, X[valid], y[valid])


def test_fit_in_a_search_warns_when_nan_predictions_would_meet_the_scorer():
    from sklearn.model_selection import cross_validate

    from sklearn_papers.chem import valid_rows_scorer

    X, y = _delaney_with_invalid()
    model = SkipInvalidMolecules(_ridge())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GridSearchCV(model, {"estimator__ridge__alpha": [1.0]}, cv=3,
                     scoring="neg_root_mean_squared_error").fit(X, y)
    named = [str(w.message) for w in caught if "valid_rows_scorer" in str(w.message)]
    # one per split whose test rows hold an invalid molecule (rows 0-19 and 40-59), naming
    # the first by its position in the X given to the search
    assert len(named) == 2
    assert any("first: index 41, 'C1CC'" in m for m in named)
    assert all("scoring=valid_rows_scorer(<your scoring>)" in m for m in named)
    for scoring in (valid_rows_scorer("neg_root_mean_squared_error"), None,
                    valid_rows_scorer({"a": "r2", "b": "neg_max_error"})):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cross_validate(model, X, y, cv=3, scoring=scoring)
        assert not any("valid_rows_scorer" in str(w.message) for w in caught)


def test_left_out_rows_are_named_as_the_searchs_X_numbers_them():
    import pandas as pd
    from sklearn.model_selection import KFold, cross_val_predict

    X, y = _delaney_with_invalid()
    model = SkipInvalidMolecules(_ridge())
    for data, named in ((X, "index 41: 'C1CC'"),
                        (pd.Series(X, index=[f"m{i}" for i in range(len(X))]),
                         "index 41 (label 'm41'): 'C1CC'")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cross_val_predict(model, data, y, cv=KFold(3))
        left = [str(w.message) for w in caught if "out of fit" in str(w.message)]
        # the first fold's training rows are 20..59: row 41 is the 22nd of them
        assert any(named in m for m in left), left
        assert not any("index 21:" in m for m in left)
