"""sharpness_measures: four measures of how sharp images are, relative to real ones."""

import numpy as np
import pytest

from sklearn_papers.metrics import image_sharpness, sharpness_measures
from sklearn_papers.metrics._image import _blurred


def _squares(n=6, size=12):
    real = np.zeros((n, size, size))
    real[:, 3:9, 3:9] = 1.0  # squares: sharp edges, flat elsewhere
    return real


def test_sharpness_measures_rank_blur_and_noise():
    real = _squares()
    same = sharpness_measures(real, real)
    assert all(np.isclose(same[k], 1.0)
               for k in ("gradient", "edge gradient", "high-frequency power"))
    blurred = sharpness_measures(_blurred(real, 1.0), real)
    for key in ("edge gradient", "high-frequency power"):
        assert blurred[key] < 0.9 * same[key]
    # the mean absolute gradient is a total variation, which blurring an isolated
    # monotone edge keeps: only the edge and spectral measures see the blur
    assert abs(blurred["gradient"] - 1.0) < 0.05
    noisy = sharpness_measures(real + 0.3 * np.random.RandomState(0).rand(*real.shape), real)
    assert noisy["flat gradient"] > same["flat gradient"] + 0.1  # texture where real is flat


def test_sharpness_measures_gradient_is_the_image_sharpness_ratio():
    rng = np.random.RandomState(1)
    real, images = rng.rand(4, 5, 7), rng.rand(4, 5, 7)
    got = sharpness_measures(images.reshape(4, -1), real.reshape(4, -1), (5, 7))
    assert got["gradient"] == pytest.approx(image_sharpness(images) / image_sharpness(real))
    assert got == sharpness_measures(images, real)


@pytest.mark.parametrize("call, match", [
    (lambda r: sharpness_measures(r[:2], r), "one real image per image"),
    (lambda r: sharpness_measures(r, np.ones_like(r)), "real_images are constant"),
    (lambda r: sharpness_measures(r, r[:, :, :, None]), "real_images must have shape"),
    (lambda r: sharpness_measures(r, r, edge_quantile=1.0), "edge_quantile"),
    (lambda r: sharpness_measures(r, r, hf_cutoff=0.7), r"hf_cutoff must be a number in \(0, 0.5\)"),
    (lambda r: sharpness_measures(np.full_like(r, np.nan), r), "images holds NaN"),
])
def test_sharpness_measures_refuse_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(_squares(3, 8))


@pytest.mark.parametrize("call, match", [
    (lambda r: sharpness_measures(r[:, :1], r[:, :1]), "1 x 12 pixels"),
    (lambda r: sharpness_measures(r[:, :, :1], r[:, :, :1]), "12 x 1 pixels"),
    (lambda r: sharpness_measures(r, r, hf_cutoff=0.45), "no spectral power above hf_cutoff"),
])
def test_sharpness_measures_refuse_too_small_or_smooth_real_images(call, match):
    with pytest.raises(ValueError, match=match):
        call(_squares(3, 12)[:, :, :] * 0 + np.cos(np.pi * np.arange(12) / 6.0))


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_sharpness_measures_do_not_depend_on_the_unit(scale):
    rng = np.random.RandomState(0)
    images, real = rng.rand(3, 8, 8), _squares(3, 8) + 0.1 * rng.rand(3, 8, 8)
    expected = sharpness_measures(images, real)
    got = sharpness_measures(images * scale, real * scale)
    assert got == pytest.approx(expected, rel=1e-12)


def test_image_sharpness_of_rows_is_lower_after_a_blur():
    rng = np.random.RandomState(0)
    images = (rng.rand(5, 8, 8) > 0.5).astype(float)
    blurred = (images + np.roll(images, 1, 1) + np.roll(images, 1, 2)) / 3
    # rows with image_shape, as autoencoders give them, equal the images themselves
    assert image_sharpness(blurred.reshape(5, -1), (8, 8)) == image_sharpness(blurred)
    assert image_sharpness(blurred.reshape(5, -1), (8, 8)) < image_sharpness(
        images.reshape(5, -1), (8, 8))


def test_blurred_rows_are_the_blurred_images_and_a_constant_image_stays():
    images = _squares(3, 8) + 0.1 * np.random.RandomState(0).rand(3, 8, 8)
    rows = _blurred(images.reshape(3, -1), 1.0, (8, 8))
    assert rows.shape == (3, 64)
    np.testing.assert_allclose(rows.reshape(3, 8, 8), _blurred(images, 1.0))
    assert image_sharpness(rows, (8, 8)) < 0.8 * image_sharpness(images)
    np.testing.assert_allclose(_blurred(np.full((2, 5, 5), 0.3), 2.0), 0.3)
