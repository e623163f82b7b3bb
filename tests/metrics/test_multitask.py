"""masked_roc_auc_score / masked_roc_auc_scorer: ROC-AUC per task over labelled rows."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sklearn_papers.metrics import masked_roc_auc_score, masked_roc_auc_scorer

Y = np.array([[0, 1, 1], [1, np.nan, 1], [0, 0, np.nan], [1, 1, 1], [np.nan, 0, 1]])
P = np.array([[0.1, 0.9, 0.3], [0.8, 0.5, 0.2], [0.3, 0.2, 0.9], [0.7, 0.4, 0.6],
              [0.5, 0.6, 0.1]])


def test_each_task_is_scored_on_its_labelled_rows_and_one_class_tasks_are_skipped():
    per_task = masked_roc_auc_score(Y, P, average=None)
    rows0, rows1 = ~np.isnan(Y[:, 0]), ~np.isnan(Y[:, 1])
    assert per_task[0] == roc_auc_score(Y[rows0, 0], P[rows0, 0])
    assert per_task[1] == roc_auc_score(Y[rows1, 1], P[rows1, 1])
    assert np.isnan(per_task[2])  # task 2 has only class 1 among its labels
    assert masked_roc_auc_score(Y, P) == pytest.approx(np.mean(per_task[:2]))
    # one task: a two-column predict_proba is accepted, pd.NA is a missing label
    pd = pytest.importorskip("pandas")
    y = pd.Series([0, 1, pd.NA, 1], dtype="Int64")
    proba = np.column_stack([1 - P[:4, 0], P[:4, 0]])
    assert masked_roc_auc_score(y, proba) == roc_auc_score([0, 1, 1], P[[0, 1, 3], 0])


@pytest.mark.parametrize("y_true, y_score, match", [
    (Y[:, :2], P, "shape"),
    (np.where(np.isnan(Y), np.nan, 2 * Y), P, r"y_true\[0, 1\] = 2.0"),
    (Y, np.where(np.eye(5, 3) > 0, np.nan, P), r"y_score\[0, 0\] = nan"),
    (np.ones((3, 2)), np.ones((3, 2)), "No task has both classes"),
])
def test_bad_input_is_named(y_true, y_score, match):
    with pytest.raises(ValueError, match=match):
        masked_roc_auc_score(y_true, y_score)
    with pytest.raises(ValueError, match="average"):
        masked_roc_auc_score(Y, P, average="micro")


def test_the_scorer_passes_every_task_of_a_two_class_estimator():
    class Fixed:
        classes_ = np.array([0, 1])

        def predict_proba(self, X):
            return P[X]

    assert masked_roc_auc_scorer(Fixed(), np.arange(5), Y) == masked_roc_auc_score(Y, P)


def test_complex_scores_are_refused_not_cast():
    # the cast to float dropped the imaginary part with only a ComplexWarning
    with pytest.raises(ValueError, match="y_score must hold real numbers"):
        masked_roc_auc_score([0, 1], np.array([1j, 2.0]))
