"""The mask_rcnn experiment: matched IoU and a tiny end-to-end run."""

import numpy as np
import pytest

from sklearn_papers.metrics import matched_mask_iou
from sklearn_papers.reproduce import mask_rcnn
from sklearn_papers.reproduce._registry import RunContext


def test_matched_iou_of_the_label_maps():
    t = np.zeros((1, 8, 8), dtype=int)
    t[0, :4, :4] = 1
    t[0, 5:, 5:] = 2
    p = np.zeros_like(t)
    p[0, :4, :2] = 1  # IoU 0.5 with instance 1; instance 2 missed
    miou, frac = matched_mask_iou(list(t), list(p))
    assert miou == pytest.approx(0.5) and frac == pytest.approx(0.5)


_TINY = dict(image_size=32, n_train=4, n_test=2, anchors=(4, 8, 16), epochs=1, seeds=1)


def _tiny(monkeypatch, tmp_path, quick):
    protocol = mask_rcnn.PROTOCOL.but(**_TINY, segmenter_epochs=None)
    monkeypatch.setattr(mask_rcnn, "PROTOCOL", protocol)
    monkeypatch.setattr(mask_rcnn, "_N_JOBS", 1)
    ctx = RunContext(quick=quick, out_dir=tmp_path, verbose=0, experiment="mask_rcnn")
    return ctx, mask_rcnn.EXPERIMENT.run(ctx)


def test_tiny_run_writes_a_section_with_the_declared_claims(tmp_path, monkeypatch):
    ctx, section = _tiny(monkeypatch, tmp_path, quick=True)
    assert "RoIAlign better on AP75" in section.markdown and "mask AP" in section.markdown
    assert "`mask_rcnn_followup`" in section.markdown
    claims = {c.statement for c in mask_rcnn.CLAIMS.values()}
    assert {v.claim for v in section.verdicts} == claims - {"RoIAlign better on AP75 with C4"}
    assert section.find("RoIAlign better on AP75").arms == ["FPN, RoIAlign, sigmoid",
                                                            "FPN, RoIPool, sigmoid"]
    assert len(section.figures) == 1 and section.figures[0].exists()
    assert section.shortened.startswith("32 px scenes, 4 training scenes, 1 epochs")
    assert not any(k.startswith("followup/") for k in ctx.computed)


def test_tiny_followup_is_an_experiment_of_its_own(tmp_path, monkeypatch):
    # the control (easy scenes) is the main experiment's parts, computed by it first
    main, section_main = _tiny(monkeypatch, tmp_path, quick=False)
    protocol = mask_rcnn.PROTOCOL_FOLLOWUP.but(**_TINY)
    monkeypatch.setattr(mask_rcnn, "PROTOCOL_FOLLOWUP", protocol)
    assert not mask_rcnn.EXPERIMENT_FOLLOWUP.in_quick_run
    ctx = RunContext(quick=False, out_dir=tmp_path, verbose=0,
                     experiment="mask_rcnn_followup", resume=True)
    section = mask_rcnn.EXPERIMENT_FOLLOWUP.run(ctx)
    assert "| crowded (follow-up) |" in section.markdown
    outcomes = {v.claim: v.outcome for v in section.verdicts}
    assert outcomes["crowded scenes: sigmoid masks better"] == "inconclusive"  # one seed
    assert set(outcomes) <= {c.statement for c in mask_rcnn.CLAIMS_FOLLOWUP.values()}
    assert all(p.exists() for p in section.figures) and len(section.figures) == 1
    assert sorted(ctx.computed) == [f"followup/crowded/FPN, RoIAlign, {loss}/seed=0"
                                    for loss in ("sigmoid", "softmax")]
