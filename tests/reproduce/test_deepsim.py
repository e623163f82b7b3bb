"""The ``deepsim`` experiment end to end on a tiny configuration."""

import numpy as np

from sklearn_papers.reproduce import deepsim
from sklearn_papers.reproduce._registry import RunContext


def _tiny(quick):
    return dict(seeds=1, n_jobs=1, max_train=60,
                digits=dict(epochs=1, channels=4, code=2, layer="head", comparator_epochs=2),
                shapes=dict(n=120, epochs=1, channels=4, code=2, layer="relu2",
                            comparator_epochs=2),
                inversion=dict(epochs=1, channels=4), iterations=2)


def test_deepsim_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(deepsim, "_config", _tiny)
    section = deepsim.EXPERIMENT.run(RunContext(quick=True, out_dir=tmp_path, verbose=0))
    md = section.markdown
    for heading in ("digits: autoencoders", "shapes: autoencoders", "Feature inversion",
                    "Iterated encoding-decoding"):
        assert heading in md
    assert md.count("**holds**") + md.count("**does not hold**") == 2 * 6 + 2
    assert "logistic regression (standardised codes)" in md  # the shapes code probes
    assert len(section.figures) == 4 and all(p.exists() for p in section.figures)
    assert section.shortened


def test_sharpness_ratio_of_a_blurred_image_is_below_one():
    rng = np.random.RandomState(0)
    images = (rng.rand(5, 8, 8) > 0.5).astype(float)
    blurred = (images + np.roll(images, 1, 1) + np.roll(images, 1, 2)) / 3
    assert deepsim.sharpness(blurred.reshape(5, -1), (8, 8)) < deepsim.sharpness(
        images.reshape(5, -1), (8, 8))
