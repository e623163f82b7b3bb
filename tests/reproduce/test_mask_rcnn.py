"""The mask_rcnn experiment: box AP against known cases, and a tiny end-to-end run."""

import numpy as np
import pytest

from sklearn_papers.reproduce import mask_rcnn
from sklearn_papers.reproduce._registry import RunContext


def _det(boxes, scores, labels):
    return {"boxes": np.asarray(boxes, dtype=float), "scores": np.asarray(scores, dtype=float),
            "labels": np.asarray(labels)}


def test_box_average_precision_known_cases():
    gt = [np.array([[0.0, 0, 10, 10], [20, 20, 30, 30]])]
    lab = [np.array([1, 1])]
    perfect = _det(gt[0], [0.9, 0.8], [1, 1])
    assert mask_rcnn.box_average_precision(gt, lab, [perfect]) == pytest.approx(1.0)
    # one object found, one missed: recall 0.5 at precision 1 -> 51 of 101 points
    half = _det(gt[0][:1], [0.9], [1])
    assert mask_rcnn.box_average_precision(gt, lab, [half]) == pytest.approx(51 / 101)
    # wrong class: nothing matches
    wrong = _det(gt[0], [0.9, 0.8], [2, 2])
    assert mask_rcnn.box_average_precision(gt, lab, [wrong]) == 0.0
    # a box shifted to IoU 0.6 counts at thresholds 0.5 and 0.55 only
    shifted = _det([[0.0, 0, 10, 10], [20, 20, 32.5, 30]], [0.9, 0.8], [1, 1])
    iou = 100 / 125
    n_ok = int(np.sum(np.linspace(0.5, 0.95, 10) <= iou + 1e-12))
    expected = (n_ok * 1.0 + (10 - n_ok) * 51 / 101) / 10
    assert mask_rcnn.box_average_precision(gt, lab, [shifted]) == pytest.approx(expected)


def test_matched_iou():
    t = np.zeros((1, 8, 8), dtype=int)
    t[0, :4, :4] = 1
    t[0, 5:, 5:] = 2
    p = np.zeros_like(t)
    p[0, :4, :2] = 1  # IoU 0.5 with instance 1; instance 2 missed
    miou, frac = mask_rcnn._matched_iou(t, p)
    assert miou == pytest.approx(0.5) and frac == pytest.approx(0.5)


def test_tiny_run_writes_a_section(tmp_path, monkeypatch):
    tiny = dict(mask_rcnn._config(True), image_size=32, n_train=4, n_test=2,
                anchors=(4, 8, 16), epochs=1, seeds=1, segmenter_epochs=None, n_jobs=1)
    monkeypatch.setattr(mask_rcnn, "_config", lambda quick: tiny)
    section = mask_rcnn.EXPERIMENT.run(RunContext(quick=True, out_dir=tmp_path, verbose=0))
    assert "RoIAlign vs RoIPool" in section.markdown and "mask AP" in section.markdown
    assert all(p.exists() for p in section.figures)
