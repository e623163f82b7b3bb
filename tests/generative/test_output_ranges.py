"""The DeePSiM estimators keep their documented output range on degenerate training data:
constant images, one image, one pixel value for the whole set, float32 and image layouts."""

import numpy as np
import pytest

from sklearn_papers.generative import DeePSiMAutoencoder, FeatureInverter

TINY = dict(channels=4, max_epochs=1, batch_size=8, random_state=0)

ESTIMATORS = {
    "autoencoder": lambda: DeePSiMAutoencoder(n_components=2, **TINY),
    "variational": lambda: DeePSiMAutoencoder(n_components=2, variational=True, **TINY),
    "inverter": lambda: FeatureInverter(**TINY),
}


def _degenerate(name):
    rng = np.random.RandomState(0)
    if name == "constant images":  # every image one grey level, levels differ
        return np.repeat(np.linspace(0, 16, 12)[:, None], 64, axis=1)
    if name == "one image":  # float64 values that float32 cannot hold exactly
        return rng.rand(1, 64) * 16 + 0.1
    if name == "one value":
        return np.full((12, 64), 7.0)
    if name == "all zero":
        return np.zeros((12, 64))
    if name == "one value, float32 images":
        return np.full((12, 8, 8), 0.3, dtype=np.float32)
    if name == "one value 0.1, float64 codes to float32":
        return np.full((12, 64), 0.1)
    raise AssertionError(name)


CASES = ["constant images", "one image", "one value", "all zero", "one value, float32 images",
         "one value 0.1, float64 codes to float32"]


def _outputs(est, X, rng):
    """Every image-valued output, for the training images and for far-off inputs."""
    if isinstance(est, FeatureInverter):
        F = est.transform(X)
        outs = [est.predict(X), est.inverse_transform(F + 10 * rng.randn(*F.shape))]
    else:
        Z = est.transform(X)
        far = 10 * rng.randn(5, est.n_components)
        outs = [est.inverse_transform(Z), est.inverse_transform(far),
                est.inverse_transform(far.astype(np.float32))]
        if est.variational:
            outs.append(est.sample(5))
    return outs


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("which", sorted(ESTIMATORS))
def test_generated_images_stay_in_the_training_range(which, case):
    X = _degenerate(case)
    est = ESTIMATORS[which]().fit(X)
    rng = np.random.RandomState(1)
    lo, hi = X.min(), X.max()
    for out in _outputs(est, X, rng):
        assert out.shape[1:] == X.shape[1:]
        assert np.isfinite(out).all()
        if lo == hi:  # the single training value (its nearest, in a coarser dtype)
            np.testing.assert_array_equal(out, np.full(out.shape, lo, dtype=out.dtype))
        else:  # bounds rounded inwards in a coarser dtype: exact comparison in float64
            assert lo <= out.astype(np.float64).min() and out.astype(np.float64).max() <= hi
