"""A tiny run of the instance_segmentation experiment: it completes and reports verdicts."""

import numpy as np
import pytest

from sklearn_papers.reproduce import instance_segmentation
from sklearn_papers.reproduce._registry import RunContext


_TINY = dict(n_train=8, n_test=6, seeds=1, max_epochs=1, image_size=24,
             params={"width": 4, "embedding_dim": 2, "batch_size": 8})


def _tiny(monkeypatch):
    protocol = instance_segmentation.PROTOCOL.but(**_TINY)
    monkeypatch.setattr(instance_segmentation, "PROTOCOL", protocol)
    monkeypatch.setattr(instance_segmentation, "_N_JOBS", 1)


def test_instance_segmentation_experiment_tiny(tmp_path, monkeypatch):
    _tiny(monkeypatch)
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    section = instance_segmentation.EXPERIMENT.run(ctx)
    assert "best Dice" in section.markdown and "AP@0.5" in section.markdown
    # four claims, each with a verdict of the shared rules (two made of two parts, which
    # are kept too); one seed gives no interval, so no paired or mean claim is decided
    claims = [v for v in section.verdicts if v.rule in ("all of", "mean interval",
                                                         "paired interval")]
    assert len(section.verdicts) == 8 and len(claims) == 8
    assert [v.rule for v in section.verdicts if not v.judged] == ["all of", "all of"]
    declared = {c.statement for c in instance_segmentation.CLAIMS.values()}
    assert {v.claim for v in section.verdicts} == declared
    assert section.find("SLIC raises boundary F").arms == [
        instance_segmentation._VARIANTS[0][0], instance_segmentation._VARIANTS[1][0]]
    judged = [v for v in section.verdicts if v.judged]
    assert all(v.n == 1 and v.interval == [None, None] for v in judged)
    assert all(v.outcome == "inconclusive" for v in judged)
    assert section.markdown.count("(one seed: no interval)") >= 3
    assert all(path.is_file() for path in section.figures)
    assert "8 training scenes" in section.shortened
    assert "`instance_segmentation_followup`" in section.markdown
    assert "Follow-up 1" not in section.markdown


def test_follow_ups_are_an_experiment_of_their_own(tmp_path, monkeypatch):
    _tiny(monkeypatch)
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    section = instance_segmentation.EXPERIMENT_FOLLOWUP.run(ctx)
    assert "Follow-up 1" in section.markdown and "BF @ 0 px" in section.markdown
    assert "the same fits, same seeds and scenes" in section.markdown
    assert ctx.computed == ["seed=0"]  # alone, it computes the main experiment's part
    assert len(section.figures) == 1 and section.figures[0].is_file()


def test_follow_ups_read_the_main_fits_of_the_same_run(tmp_path, monkeypatch):
    _tiny(monkeypatch)
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0,
                     experiment="instance_segmentation")
    instance_segmentation.EXPERIMENT.run(ctx)
    assert ctx.computed == ["seed=0"]
    ctx.experiment, ctx.computed = "instance_segmentation_followup", []
    section = instance_segmentation.EXPERIMENT_FOLLOWUP.run(ctx)
    assert ctx.computed == []  # one fit per seed serves both experiments
    assert "Follow-up 1" in section.markdown


def test_evaluate_variants_scores_the_same_network(tmp_path):
    from sklearn_papers.datasets import make_scenes
    from sklearn_papers.vision import InstanceSegmenter

    data = make_scenes(6, image_size=24, max_objects=3, random_state=0)
    est = InstanceSegmenter(width=4, embedding_dim=2, max_epochs=1, random_state=0)
    est.fit(data.images, data.instance_maps, semantic_maps=data.semantic_maps)
    res = instance_segmentation.evaluate_variants(est, data)
    for label, *_ in instance_segmentation._VARIANTS:
        assert 0 <= res[label]["sbd"] <= 1 and res[label]["seconds"] > 0
    assert est.get_params()["grouping"] == "centers"  # restored
    assert np.isfinite(res["forward_seconds"])
