"""A tiny run of the instance_segmentation experiment: it completes and reports verdicts."""

import numpy as np

from sklearn_papers.reproduce import instance_segmentation
from sklearn_papers.reproduce._registry import RunContext


def test_instance_segmentation_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(instance_segmentation, "_config", lambda quick: dict(
        n_train=8, n_test=6, seeds=1, max_epochs=1, image_size=24,
        params={"width": 4, "embedding_dim": 2, "batch_size": 8}))
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0)
    section = instance_segmentation.EXPERIMENT.run(ctx)
    assert "best Dice" in section.markdown and "AP@0.5" in section.markdown
    assert section.markdown.count("**holds**") + section.markdown.count("**does not hold**") == 4
    assert all(path.is_file() for path in section.figures)
    assert "8 training scenes" in section.shortened


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
