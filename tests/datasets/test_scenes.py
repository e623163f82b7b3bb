"""make_scenes: shapes, exact ground truth, determinism, touching objects."""

import numpy as np
import pytest
from scipy import ndimage

from sklearn_papers.datasets import make_scenes


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(30, image_size=48, random_state=0)


def test_make_scenes_shapes_and_dtypes(scenes):
    assert scenes.images.shape == (30, 48, 48, 3)
    assert scenes.images.dtype == np.float32
    assert scenes.images.min() >= 0 and scenes.images.max() <= 1
    assert scenes.semantic_maps.shape == scenes.instance_maps.shape == (30, 48, 48)
    assert len(scenes.boxes) == len(scenes.labels) == 30
    assert scenes.class_names[0] == "background" and len(scenes.class_names) == 4


def test_make_scenes_ground_truth_is_consistent(scenes):
    for i in range(30):
        inst, lab = scenes.instance_maps[i], scenes.labels[i]
        k = scenes.n_instances[i]
        assert lab.shape == (k,) and scenes.boxes[i].shape == (k, 4)
        np.testing.assert_array_equal(np.unique(inst[inst > 0]), np.arange(1, k + 1))
        np.testing.assert_array_equal(scenes.semantic_maps[i],
                                      np.concatenate([[0], lab])[inst])
        assert np.all((lab >= 1) & (lab <= 3))
        for j in range(k):
            ys, xs = np.nonzero(inst == j + 1)
            np.testing.assert_array_equal(scenes.boxes[i][j],
                                          [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])


def test_make_scenes_is_deterministic():
    a = make_scenes(5, image_size=32, random_state=3)
    b = make_scenes(5, image_size=32, random_state=3)
    c = make_scenes(5, image_size=32, random_state=4)
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.instance_maps, b.instance_maps)
    assert not np.array_equal(a.instance_maps, c.instance_maps)


def test_touching_objects_defeat_connected_components():
    data = make_scenes(30, image_size=48, touching=1.0, min_objects=3, random_state=1)
    apart = make_scenes(30, image_size=48, touching=0.0, min_objects=3, random_state=1)
    assert data.has_touching.mean() > 0.8
    assert apart.has_touching.mean() < data.has_touching.mean()
    merged = 0
    for i in np.flatnonzero(data.has_touching):
        n_components = sum(ndimage.label(data.semantic_maps[i] == c)[1] for c in (1, 2, 3))
        assert n_components < data.n_instances[i]
        merged += 1
    assert merged > 0


def test_has_touching_matches_a_naive_check(scenes):
    for i in range(30):
        inst, lab = scenes.instance_maps[i], scenes.labels[i]
        found = False
        for j in range(1, lab.size + 1):
            grown = ndimage.binary_dilation(inst == j)
            others = np.unique(inst[grown & (inst != j) & (inst > 0)])
            found |= bool(np.any(lab[others - 1] == lab[j - 1]))
        assert found == scenes.has_touching[i]


def test_min_objects_zero_allows_empty_images_and_overlap_runs():
    data = make_scenes(40, image_size=32, min_objects=0, max_objects=1, random_state=0)
    assert (data.n_instances == 0).any() and (data.n_instances == 1).any()
    empty = np.flatnonzero(data.n_instances == 0)[0]
    assert data.boxes[empty].shape == (0, 4) and not data.instance_maps[empty].any()
    occluded = make_scenes(10, image_size=32, overlap=True, max_objects=8, random_state=0)
    assert occluded.n_instances.max() >= 1


@pytest.mark.parametrize("kwargs, match", [
    ({"n_classes": 7}, "n_classes"),
    ({"image_size": 8}, "image_size"),
    ({"touching": 1.5}, "touching"),
    ({"min_objects": 4, "max_objects": 2}, "min_objects=4"),
])
def test_make_scenes_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_scenes(2, **kwargs)
