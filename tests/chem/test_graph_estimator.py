"""What the graph estimators (neural fingerprint, MPNN, GROVER) share: target checks,
input attributes and the invalid-molecule policy, the same for every family."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_papers.chem import (
    MPNN,
    CircularFingerprint,
    GroverClassifier,
    GroverFeaturizer,
    GroverRegressor,
    MPNNClassifier,
    MPNNRegressor,
    NeuralFingerprint,
    NeuralFingerprintClassifier,
    NeuralFingerprintRegressor,
)

NF = dict(fp_length=4, radius=1, conv_width=4, hidden_size=0, batch_size=8, max_epochs=1)
MP = dict(hidden_size=4, n_steps=1, set2set_steps=1, edge_hidden_size=4, batch_size=8,
          max_epochs=1)
GR = dict(hidden_size=8, n_heads=2, depth=1, batch_size=8, max_epochs=1)
GR_FT = dict(GR, ffn_hidden=0, pretrained=None)

CLASSIFIERS = [NeuralFingerprintClassifier(**NF), MPNNClassifier(**MP),
               GroverClassifier(**GR_FT)]
REGRESSORS = [NeuralFingerprintRegressor(**NF), MPNNRegressor(**MP),
              GroverRegressor(**GR_FT, head="finetune")]
# Transformers trained on regression targets when given y (GroverFeaturizer ignores y).
Y_TRANSFORMERS = [NeuralFingerprint(**NF), MPNN(**MP)]
ALL = CLASSIFIERS + REGRESSORS + Y_TRANSFORMERS + [GroverFeaturizer(**GR, pretrained=None)]

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN", "c1ccncc1", "CC(C)O", "C1CCCCC1", "CCCl"]
LABELS = np.arange(len(MOLS)) % 2


def _id(est):
    return type(est).__name__


def _target(est):
    if est in CLASSIFIERS:
        return LABELS
    return np.arange(len(MOLS), dtype=float)


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_id)
def test_multitask_classifier_refuses_unlabelled_tasks(est):
    # Used to train silently: loss_curve_ == [0.0] (MPNN, GROVER) or the penalty alone.
    with pytest.raises(ValueError, match=r"y column\(s\) \[0, 1\] hold no label"):
        clone(est).fit(MOLS, np.full((len(MOLS), 2), np.nan))
    y = np.c_[LABELS, np.full(len(MOLS), np.nan)]
    with pytest.raises(ValueError, match=r"y column\(s\) \[1\] hold no label"):
        clone(est).fit(MOLS, y)


@pytest.mark.parametrize("est", CLASSIFIERS + REGRESSORS + Y_TRANSFORMERS, ids=_id)
def test_one_message_for_unlabelled_columns_in_every_family(est):
    if est in CLASSIFIERS:
        y = np.c_[LABELS, LABELS[::-1], np.full(len(MOLS), np.nan)]
    else:
        y = np.c_[np.arange(8.0), np.full(8, np.nan), np.arange(8.0) ** 2]
    column = 2 if est in CLASSIFIERS else 1
    with pytest.raises(ValueError, match=(
            rf"^y column\(s\) \[{column}\] hold no label: every entry is NaN \(missing\)\. "
            r"Each target column needs at least one labelled molecule")):
        clone(est).fit(MOLS, y)


@pytest.mark.parametrize("est", [CLASSIFIERS[0], REGRESSORS[1]], ids=_id)
def test_unlabelled_column_message_names_left_out_invalid_molecules(est):
    # The only label of column 1 belongs to an invalid molecule (errors="nan").
    X = MOLS + ["C1CC"]
    y = np.c_[np.r_[LABELS, 0], np.r_[np.full(len(MOLS), np.nan), 1.0]]
    with pytest.raises(ValueError, match=r"\[1\] hold no label.*among the valid molecules "
                                         r"\(1 invalid molecule\(s\) were left out"):
        clone(est).set_params(errors="nan").fit(X, y)


@pytest.mark.parametrize("est", CLASSIFIERS + REGRESSORS + Y_TRANSFORMERS, ids=_id)
def test_scalar_y_raises_value_error(est):
    # a scalar y is a user error to name, not an IndexError from indexing its shape
    with pytest.raises(ValueError, match=r"y should be a 1d array.*got a scalar 1\.0"):
        clone(est).fit(MOLS, 1.0)


@pytest.mark.parametrize("est", ALL, ids=_id)
def test_fit_sets_n_features_in_to_one(est):
    y = None if isinstance(est, GroverFeaturizer) else _target(est)
    fitted = clone(est).fit(MOLS, y)
    assert fitted.n_features_in_ == 1 and not hasattr(fitted, "feature_names_in_")
    df = pd.DataFrame({"smiles": MOLS})
    fitted = clone(est).fit(df, y)
    assert fitted.n_features_in_ == 1
    np.testing.assert_array_equal(fitted.feature_names_in_, ["smiles"])
    assert fitted.fit(MOLS, y).n_features_in_ == 1
    assert not hasattr(fitted, "feature_names_in_")  # a stale name is removed on refit


def test_n_features_in_is_one_for_every_molecule_estimator():
    assert CircularFingerprint().fit(MOLS).n_features_in_ == 1
    assert GroverFeaturizer.load("moses-small").n_features_in_ == 1


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_id)
def test_class_seen_only_on_invalid_molecules_warns(est):
    X = MOLS + ["C1CC", "CC(C"]
    y = np.r_[np.where(LABELS == 1, "b", "a"), ["z", "a"]]
    with pytest.warns(UserWarning, match=r"Class\(es\) 'z' \(1 molecule\(s\)\) occur only "
                                         r"among the 2 invalid molecule\(s\)"):
        fitted = clone(est).set_params(errors="nan").fit(X, y)
    assert fitted.classes_.tolist() == ["a", "b"]
    # No warning when every class keeps a valid molecule.
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"Class\(es\)")
        clone(est).set_params(errors="nan").fit(X, np.r_[y[:-2], ["a", "b"]])


@pytest.mark.parametrize("name", ["NeuralFingerprint", "MPNN"])
def test_transformer_in_classification_pipeline(name):
    """Text class labels: a clear error when the transformer would train on them;
    max_epochs=0 keeps random weights and ignores y (a Pipeline always passes y)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import sklearn_papers.chem as chem

    X = ["CCO", "CCN", "c1ccccc1", "CC(=O)O"] * 3
    y = np.array(["p", "n"] * 6)
    est = getattr(chem, name)
    with pytest.raises(ValueError, match="y must hold numbers.*'p'"):
        make_pipeline(est(max_epochs=1, random_state=0), LogisticRegression()).fit(X, y)
    pipe = make_pipeline(est(max_epochs=0, random_state=0), LogisticRegression()).fit(X, y)
    assert pipe[0].n_iter_ == 0
    alone = est(max_epochs=0, random_state=0).fit(X).transform(X)
    np.testing.assert_array_equal(pipe[0].transform(X), alone)


def test_none_in_object_targets_is_a_missing_value():
    """pandas object columns hold missing values as None: masked like NaN (among several
    targets)."""
    from sklearn_papers.chem import MPNNRegressor

    X = ["CCO", "CCN", "c1ccccc1", "CC(=O)O"] * 3
    y_none = np.c_[np.array([1.5, 2.0, None, 4.0] * 3, dtype=object), np.arange(12.0)]
    y_nan = np.c_[np.array([1.5, 2.0, np.nan, 4.0] * 3), np.arange(12.0)]
    kw = dict(hidden_size=8, n_steps=1, max_epochs=2, random_state=0)
    np.testing.assert_array_equal(MPNNRegressor(**kw).fit(X, y_none).predict(X),
                                  MPNNRegressor(**kw).fit(X, y_nan).predict(X))


@pytest.mark.parametrize("name, kwargs, hint", [
    ("GroverRegressor", dict(hidden_size=8, n_heads=2, depth=1, ffn_hidden=0, pretrained=None,
                             head="finetune"),
     "Class labels belong"),
    ("NeuralFingerprintRegressor", dict(), "Class labels belong"),
    ("MPNN", dict(hidden_size=4, n_steps=1, set2set_steps=1, edge_hidden_size=4),
     r"MPNN\(max_epochs=0\)"),
])
def test_text_regression_targets_name_the_estimator_used(name, kwargs, hint):
    import sklearn_papers.chem as chem

    est = getattr(chem, name)(max_epochs=1, batch_size=4, random_state=0, **kwargs)
    with pytest.raises(ValueError, match=rf"y must hold numbers: {name} .*'p'.*{hint}") as e:
        est.fit(["CCO", "CCN", "c1ccccc1", "CC(=O)O"], ["p", "n", "p", "n"])
    others = {"NeuralFingerprint", "MPNN", "Grover"} - {n for n in
                                                       ("NeuralFingerprint", "MPNN", "Grover")
                                                       if name.startswith(n)}
    assert not any(o in str(e.value) for o in others)
