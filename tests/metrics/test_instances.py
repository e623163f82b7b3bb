"""Per-instance scores of instance masks: other classes' share of a box, best same-class IoU."""

import numpy as np
import pytest

from sklearn_papers.metrics import _instances, instance_best_iou, other_class_share


def test_other_class_share_counts_the_pixels_of_other_classes_in_each_box():
    sem = np.zeros((1, 8, 8), dtype=int)
    sem[0, 0:4, 0:4] = 1        # instance 1, box [0, 0, 4, 4]
    sem[0, 2:4, 4:8] = 2        # instance 2, box [4, 2, 8, 4]
    sem[0, 3, 3] = 2            # one pixel of class 2 inside box 1
    boxes = [np.array([[0.0, 0, 4, 4], [4, 2, 8, 4], [0, 0, 4, 4]])]
    labels = [np.array([1, 2, 2])]  # the third box, of class 2, holds 15 class-1 pixels
    share = other_class_share(sem, boxes, labels)
    np.testing.assert_allclose(share, [1 / 16, 0.0, 15 / 16])


def test_instance_best_iou_takes_the_best_detection_of_the_instances_class():
    inst = np.zeros((1, 4, 4), dtype=int)
    inst[0, :2, :2] = 1
    inst[0, 2:, 2:] = 2
    half, full, other = (np.zeros((4, 4), bool) for _ in range(3))
    half[:2, :1] = True          # IoU 0.5 with instance 1
    full[:2, :2] = True          # IoU 1 with instance 1, but scored below the threshold
    other[2:, 2:] = True         # covers instance 2 exactly, but with the wrong class
    dets = [{"masks": np.stack([half, full, other]), "scores": np.array([0.9, 0.3, 0.8]),
             "labels": np.array([1, 1, 1])}]
    ious = instance_best_iou(inst, [np.array([1, 2])], dets, threshold=0.5)
    np.testing.assert_allclose(ious, [0.5, 0.0])


def test_mismatched_inputs_name_the_fix():
    sem = np.zeros((1, 4, 4), dtype=int)
    with pytest.raises(ValueError, match="one entry per image"):
        other_class_share(sem, [np.zeros((0, 4))] * 2, [np.zeros(0)] * 2)
    with pytest.raises(ValueError, match="one label per box"):
        other_class_share(sem, [np.zeros((2, 4))], [np.array([1])])
    inst = np.ones((1, 4, 4), dtype=int)
    dets = [{"masks": np.zeros((0, 4, 4), bool), "scores": np.zeros(0),
             "labels": np.zeros(0, int)}]
    with pytest.raises(ValueError, match="one label per instance id"):
        instance_best_iou(inst, [np.array([], int)], dets)
    assert instance_best_iou(inst, [np.array([1])], dets).tolist() == [0.0]


def test_touching_pairs_groups_and_matches():
    inst = np.array([[1, 1, 2, 0, 4],
                     [1, 1, 2, 0, 4],
                     [0, 3, 3, 0, 0]])
    labels = np.array([1, 1, 1, 2])  # instance 4 is of another class
    pairs = _instances.touching_pairs(inst, labels)
    assert pairs == {(1, 2): 2, (1, 3): 1, (2, 3): 1}
    assert _instances.touching_group_sizes(pairs, 4).tolist() == [3, 3, 3, 1]
    assert _instances.touching_group_sizes({}, 2).tolist() == [1, 1]
    merged = np.where(inst == 4, 2, (inst > 0).astype(int))  # 1-3 under one mask
    match, dice = _instances.best_dice_match(inst, merged)
    assert match[1:].tolist() == [1, 1, 1, 2]
    assert dice[1] == pytest.approx(2 * 4 / (4 + 8)) and dice[4] == 1.0


def test_nearest_upsample_repeats_and_cuts():
    low = np.array([[1, 2], [3, 4]])
    up = _instances.nearest_upsample(low, 2, (3, 4))
    assert up.tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4]]


def test_touching_measures_count_merged_pairs_per_prediction():
    true = np.zeros((2, 6, 6), dtype=np.int64)
    true[0, :3, :2], true[0, :3, 2:4] = 1, 2  # one touching pair, contact 3
    true[0, 5, 5] = 3  # alone
    true[1, :2, :2] = 1  # no touching pair in the second map
    labels = [np.array([1, 1, 2]), np.array([1])]
    merged = np.where(true[:1] > 0, 1, 0)
    merged[0, 5, 5] = 2
    pred = {"exact": true, "merged": np.concatenate([merged, true[1:]])}
    pairs, instances = _instances.touching_measures(true, labels, [3, 1], pred)
    np.testing.assert_array_equal(pairs["contact"], [3])
    assert pairs["contact"].dtype == np.int64
    np.testing.assert_array_equal(pairs["exact"]["merged"], [False])
    np.testing.assert_array_equal(pairs["merged"]["merged"], [True])
    np.testing.assert_allclose(pairs["exact"]["dice"], [1.0])
    np.testing.assert_allclose(pairs["merged"]["dice"], [2 * 6 / (6 + 12)])
    np.testing.assert_array_equal(instances["group"], [2, 2, 1, 1])
    np.testing.assert_allclose(instances["exact"], [1, 1, 1, 1])
    np.testing.assert_allclose(instances["merged"], [2 * 6 / 18, 2 * 6 / 18, 1, 1])
    empty, _ = _instances.touching_measures(true[1:], labels[1:], [1],
                                            {k: v[1:] for k, v in pred.items()})
    assert empty["contact"].size == 0 and empty["exact"]["merged"].size == 0
