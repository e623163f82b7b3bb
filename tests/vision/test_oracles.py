"""Oracle label maps: the true maps through a grouping or an upsampling step."""

import numpy as np

from sklearn_papers.vision._oracles import _at_stride, _components_oracle, _stride_round_trip


def test_at_stride_takes_each_blocks_most_frequent_label_of_the_padded_map():
    maps = np.zeros((1, 5, 5), dtype=np.int64)
    maps[0, :2, :2] = 3  # the whole first block
    maps[0, 2:4, 2:4] = [[1, 1], [1, 2]]  # label 1 wins the centre block
    maps[0, 4, 4] = 5  # padding repeats the corner: the last block is all 5
    low = _at_stride(maps, 2)
    assert low.shape == (1, 3, 3)
    assert low[0, 0, 0] == 3 and low[0, 1, 1] == 1 and low[0, 2, 2] == 5
    assert low[0, 0, 2] == 0


def test_components_oracle_merges_touching_objects_of_one_class():
    sem = np.zeros((1, 8, 8), dtype=np.int64)
    sem[0, :4, :2] = 1
    sem[0, :4, 2:4] = 1  # touches the first object: one component
    sem[0, 6:, 6:] = 2
    full = _components_oracle(sem)
    assert full.shape == sem.shape and full.dtype.kind == "i"
    assert len(np.unique(full[0, :4, :4])) == 1 and full[0, 0, 0] > 0
    assert len(np.unique(full[full > 0])) == 2
    np.testing.assert_array_equal(full > 0, sem > 0)
    low = _components_oracle(sem, 2)  # blocks aligned with the objects: the same maps
    np.testing.assert_array_equal(low > 0, sem > 0)
    assert len(np.unique(low[low > 0])) == 2


def test_stride_round_trip_keeps_maps_aligned_with_the_stride():
    rng = np.random.RandomState(0)
    true = np.zeros((2, 16, 16), dtype=np.int64)
    true[:, :8, :8], true[:, 8:, 8:] = 1, 2
    images = rng.uniform(size=(2, 16, 16, 3)).astype(np.float32)
    nearest, slic = _stride_round_trip(true, images, 4)
    assert nearest.shape == slic.shape == true.shape
    np.testing.assert_array_equal(nearest, true)
    unaligned = np.roll(true, 1, axis=2)  # edges inside a block: nearest loses pixels
    assert (_stride_round_trip(unaligned, images, 4)[0] != unaligned).any()
