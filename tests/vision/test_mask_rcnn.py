"""MaskRCNN estimator: fit / predict contract, formats, errors, determinism, pickling."""

import pickle
import re

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_papers.datasets import make_scenes
from sklearn_papers.vision import MaskRCNN

# input_scale=1.0: the network sees the images as given (anchor sizes in their pixels)
TINY = dict(width=8, anchor_sizes=(4, 8, 16), max_epochs=2, batch_size=4,
            rpn_pre_nms_top_n=100, rpn_post_nms_top_n=30, input_scale=1.0, random_state=0)


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(8, image_size=32, n_classes=2, max_objects=3, random_state=0)


@pytest.fixture(scope="module")
def fitted(scenes):
    return MaskRCNN(**TINY).fit(scenes.images, scenes.instance_maps, scenes.semantic_maps)


def _dicts(data):
    return [{"boxes": data.boxes[i], "labels": data.labels[i],
             "masks": np.stack([data.instance_maps[i] == j + 1
                                for j in range(len(data.labels[i]))]).astype(bool)
             if len(data.labels[i]) else np.zeros((0, 32, 32), dtype=bool)}
            for i in range(len(data.labels))]


def test_mask_rcnn_quick_outputs(fitted, scenes):
    assert fitted.n_classes_ == 2 and fitted.classes_.tolist() == [1, 2]
    assert len(fitted.loss_curve_) == fitted.n_iter_ == 2
    assert np.all(np.isfinite(fitted.loss_curve_))
    maps = fitted.predict(scenes.images[:3])
    assert maps.shape == (3, 32, 32) and maps.dtype == np.int64 and maps.min() >= 0
    for m in maps:  # ids 1..k without gaps
        ids = np.unique(m[m > 0])
        assert ids.tolist() == list(range(1, len(ids) + 1))
    dets = fitted.predict_detections(scenes.images[:3])
    assert len(dets) == 3
    for d in dets:
        k = len(d["scores"])
        assert d["boxes"].shape == (k, 4) and d["masks"].shape == (k, 32, 32)
        assert d["masks"].dtype == bool and d["labels"].dtype == np.int64
        assert np.all(np.diff(d["scores"]) <= 0) and k <= fitted.detections_per_image
        assert set(d["labels"].tolist()) <= {1, 2}
        assert np.all(d["boxes"][:, 2] >= d["boxes"][:, 0])
    score = fitted.score(scenes.images, scenes.instance_maps, scenes.semantic_maps)
    assert 0.0 <= score <= 1.0
    assert 0.0 <= fitted.score(scenes.images, scenes.instance_maps) <= 1.0


def test_same_seed_same_model_and_global_rng_untouched(fitted, scenes):
    torch_state = torch.random.get_rng_state()
    np_state = np.random.get_state()[1].copy()
    again = MaskRCNN(**TINY).fit(scenes.images, scenes.instance_maps, scenes.semantic_maps)
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], np_state)
    assert again.loss_curve_ == fitted.loss_curve_
    a = fitted.predict_detections(scenes.images[:2])
    b = again.predict_detections(scenes.images[:2])
    for da, db in zip(a, b):
        np.testing.assert_array_equal(da["scores"], db["scores"])
    other = MaskRCNN(**{**TINY, "random_state": 1}).fit(
        scenes.images, scenes.instance_maps, scenes.semantic_maps)
    assert other.loss_curve_ != fitted.loss_curve_


def test_target_dicts_train_the_same_model_as_maps(fitted, scenes):
    est = MaskRCNN(**TINY).fit(scenes.images, _dicts(scenes))
    assert est.loss_curve_ == fitted.loss_curve_
    # an image without objects may come as empty lists
    empty = [{"boxes": [], "labels": [], "masks": []}] + _dicts(scenes)[1:]
    images = scenes.images.copy()
    images[0] = images[0].mean()
    assert np.isfinite(MaskRCNN(**{**TINY, "max_epochs": 1}).fit(images, empty).loss_curve_).all()


def test_fit_warns_when_no_image_has_an_object(scenes):
    import warnings

    empty = np.zeros_like(scenes.instance_maps[:4])
    est = MaskRCNN(**{**TINY, "max_epochs": 1})
    with pytest.warns(UserWarning, match=r"y holds no object in any of its 4 image\(s\)"
                      ) as caught:
        est.fit(scenes.images[:4], empty)
    assert caught[0].filename == __file__  # points at the caller's fit
    with pytest.warns(UserWarning, match="y holds no object"):  # dicts without boxes
        est.fit(scenes.images[:2], [{"boxes": [], "labels": [], "masks": []}] * 2)
    with warnings.catch_warnings():  # one image with objects is enough
        warnings.filterwarnings("error", message="y holds no object")
        est.fit(scenes.images[:4], np.concatenate([empty[:3], scenes.instance_maps[3:4]]))


def test_channels_first_and_uint8_images(fitted, scenes):
    chw = np.moveaxis(scenes.images[:2], -1, 1)
    np.testing.assert_array_equal(fitted.predict(chw), fitted.predict(scenes.images[:2]))
    u8 = np.round(scenes.images[:2] * 255).astype(np.uint8)
    assert fitted.predict(u8).shape == (2, 32, 32)


def test_pickle_and_clone(fitted, scenes):
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(scenes.images[:2]),
                                  fitted.predict(scenes.images[:2]))
    fresh = clone(fitted)
    assert fresh.get_params() == fitted.get_params() and not hasattr(fresh, "net_")


def test_images_without_objects_train_and_predict_nothing():
    rng = np.random.RandomState(0)
    images = (0.25 + 0.05 * rng.normal(size=(4, 32, 32, 3))).astype(np.float32)
    maps = np.zeros((4, 32, 32), dtype=np.int64)
    with pytest.warns(UserWarning, match="y holds no object"):  # it trains, and says so
        est = MaskRCNN(**{**TINY, "max_epochs": 3}).fit(images, maps)
    assert np.all(np.isfinite(est.loss_curve_)) and est.n_classes_ == 1
    assert est.predict(images).max() == 0
    assert all(len(d["scores"]) == 0 or d["scores"].max() < 0.5
               for d in est.predict_detections(images))
    # a batch mixing empty and non-empty images trains too
    data = make_scenes(4, image_size=32, min_objects=0, max_objects=2, random_state=3)
    assert (data.n_instances == 0).any()
    assert np.isfinite(MaskRCNN(**{**TINY, "max_epochs": 1}).fit(
        data.images, data.instance_maps).loss_curve_).all()


def test_image_size_resizes_for_the_network_and_maps_back(scenes):
    data = make_scenes(4, image_size=40, max_objects=2, random_state=0)
    est = MaskRCNN(**{**TINY, "image_size": 32, "max_epochs": 1}).fit(
        data.images, data.instance_maps)
    assert est.predict(data.images).shape == (4, 40, 40)
    assert all(d["masks"].shape[1:] == (40, 40) for d in est.predict_detections(data.images))


def test_sample_weight_is_refused_by_name(scenes):
    with pytest.raises(TypeError, match="sample_weight"):
        MaskRCNN(**TINY).fit(scenes.images, scenes.instance_maps,
                             sample_weight=np.ones(len(scenes.images)))


@pytest.mark.parametrize("make_bad, match", [
    (lambda d: (d.images, d.instance_maps[:, :30]), r"y\[0\] has shape \(30, 32\)"),
    (lambda d: (d.images, d.instance_maps[:5]), "one .* instance map per image"),
    (lambda d: (d.images, d.instance_maps + 0.5), r"y\[0\] must hold integer labels; "
                                                    r"y\[0\]\[0, 0\] = 0\.5"),
    (lambda d: (d.images, d.instance_maps - 1), "negative"),
    (lambda d: (d.images[..., 0, 0], d.instance_maps), "shape"),
    (lambda d: (d.images, [{"boxes": b} for b in d.boxes]), r"y\[0\] must be a dict"),
    (lambda d: (d.images, d.instance_maps, d.semantic_maps[:, ::-1]), "lies on background"),
])
def test_bad_input_raises_clear_errors(scenes, make_bad, match):
    with pytest.raises(ValueError, match=match):
        MaskRCNN(**TINY).fit(*make_bad(scenes))


def _with(data, i, **fields):
    dicts = _dicts(data)
    dicts[i] = {**dicts[i], **fields}
    return dicts


@pytest.mark.parametrize("bad, match", [
    (lambda d, t: {"masks": t["masks"][:, :30]},
     r"y\[1\]\['masks'\] are 30 x 32 but image X\[1\] is 32 x 32"),
    (lambda d, t: {"masks": t["masks"][:-1]},
     r"y\[1\]\['masks'\] has shape \(\d+, 32, 32\) but y\[1\]\['labels'\] has \d+"),
    (lambda d, t: {"boxes": t["boxes"][:-1]},
     r"y\[1\]\['boxes'\] has shape \(\d+, 4\) but y\[1\]\['labels'\] has \d+"),
    (lambda d, t: {"boxes": t["boxes"] + [0, 0, 40, 0]},
     r"y\[1\]\['boxes'\]\[0\] = .* leaves image X\[1\] \(32 x 32 pixels\)"),
    (lambda d, t: {"boxes": t["boxes"] - [50, 0, 0, 0]}, r"y\[1\]\['boxes'\]\[0\].*leaves"),
    (lambda d, t: {"labels": t["labels"][:, None]}, r"y\[1\]\['labels'\] must be 1-D"),
])
def test_target_dicts_are_checked_against_their_image(scenes, bad, match):
    t = _dicts(scenes)[1]
    with pytest.raises(ValueError, match=match):
        MaskRCNN(**TINY).fit(scenes.images, _with(scenes, 1, **bad(scenes, t)))
    with pytest.raises(TypeError, match=r"y\[1\]\['masks'\] must be a numeric array"):
        MaskRCNN(**TINY).fit(scenes.images, _with(scenes, 1, masks="mask.png"))


def test_target_boxes_a_rounding_off_the_image_are_clipped():
    from sklearn_papers.vision._mask_rcnn import _targets_from_dicts

    masks = np.zeros((1, 10, 12), dtype=bool)
    masks[0, 2:10, 3:12] = True
    (boxes, labels, _), = _targets_from_dicts(
        [{"boxes": [[2.7, 1.9, 12.3, 10.2]], "labels": [1], "masks": masks}], [(10, 12)])
    np.testing.assert_allclose(boxes, [[2.7, 1.9, 12, 10]], rtol=1e-6)  # float32
    assert boxes.dtype == np.float32 and labels.tolist() == [1]


def test_parameter_rules(scenes):
    with pytest.raises(ValueError, match="one anchor size per level"):
        MaskRCNN(**{**TINY, "anchor_sizes": (8, 16)}).fit(scenes.images, scenes.instance_maps)
    with pytest.raises(ValueError, match="n_classes=1"):
        MaskRCNN(**{**TINY, "n_classes": 1}).fit(scenes.images, scenes.instance_maps,
                                                 scenes.semantic_maps)
    with pytest.raises(ValueError, match="semantic_maps cannot be combined"):
        MaskRCNN(**TINY).fit(scenes.images, _dicts(scenes), scenes.semantic_maps)
    with pytest.raises(ValueError, match="positive numbers"):
        MaskRCNN(**{**TINY, "aspect_ratios": (0.0,)}).fit(scenes.images, scenes.instance_maps)
    with pytest.raises(ValueError, match="'mask_image' parameter of MaskRCNN"):
        MaskRCNN(**{**TINY, "mask_image": "global"}).fit(scenes.images, scenes.instance_maps)
    local = MaskRCNN(**{**TINY, "mask_image": "local", "max_epochs": 1}).fit(
        scenes.images, scenes.instance_maps)
    assert local.net_.module_.roi_heads.mask_image_local
    assert local.predict(scenes.images[:2]).shape == scenes.instance_maps[:2].shape


def test_predict_checks_channels(fitted, scenes):
    with pytest.raises(ValueError, match="3"):
        fitted.predict(scenes.images[..., :1])


@pytest.mark.slow
def test_mask_rcnn_overfit():
    data = make_scenes(16, image_size=48, n_classes=2, max_objects=2, touching=0.0,
                       noise=0.02, random_state=0)
    est = MaskRCNN(anchor_sizes=(6, 12, 24), max_epochs=60, batch_size=4,
                   random_state=0).fit(data.images, data.instance_maps, data.semantic_maps)
    assert est.score(data.images, data.instance_maps, data.semantic_maps) > 0.5


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16])
def test_integer_images_up_to_255_are_read_as_0_255_like_uint8(fitted, scenes, dtype):
    u8 = np.round(scenes.images[:2] * 255).astype(np.uint8)
    np.testing.assert_array_equal(fitted.predict(u8.astype(dtype)), fitted.predict(u8))


def test_negative_integer_images_are_refused_naming_the_image(scenes):
    images = np.round(scenes.images[:3] * 255).astype(np.int64)
    images[1, 0, 0, 0] = -3
    with pytest.raises(ValueError, match=r"X\[1\] has integer pixel values in \[-3, \d+\]"):
        MaskRCNN(**TINY).fit(images, scenes.instance_maps[:3])


def test_inferred_class_count_is_capped(scenes):
    X, y, sem = scenes.images[:2], scenes.instance_maps[:2], scenes.semantic_maps[:2]
    with pytest.raises(ValueError, match=r"semantic_maps\[\d\] has class \d+.*at most 1024 "
                                         "classes are inferred"):
        MaskRCNN(**TINY).fit(X, y, sem * 5000)


def test_score_refuses_classes_above_n_classes_and_target_dicts(fitted, scenes):
    with pytest.raises(ValueError, match=r"semantic_maps\[\d\] has class [3-9].*n_classes_=2"):
        fitted.score(scenes.images, scenes.instance_maps, scenes.semantic_maps * 5)
    with pytest.raises(ValueError, match="not target dicts"):
        fitted.score(scenes.images, _dicts(scenes))


def test_segmentation_scorers_use_the_detections(fitted, scenes):
    from sklearn_papers.metrics import make_segmentation_scorer

    scorer = make_segmentation_scorer("mask_average_precision")
    assert scorer(fitted, scenes.images, scenes.instance_maps) == fitted.score(
        scenes.images, scenes.instance_maps)
    with pytest.raises(TypeError, match="MaskRCNN has no predict_semantic"):
        make_segmentation_scorer("semantic_mean_iou")(fitted, scenes.images,
                                                       scenes.semantic_maps)


def test_uint64_ids_above_int64_are_reported_as_too_large(scenes):
    y = scenes.instance_maps[:2].astype(np.uint64)
    y[1][y[1] > 0] += np.uint64(2**63)
    with pytest.raises(ValueError, match=r"y\[1\] has a label too large for int64"):
        MaskRCNN(**TINY).fit(scenes.images[:2], y)


@pytest.mark.parametrize("value, match", [
    (2.0**63, r"y\[1\] has a label too large for int64: y\[1\]\[\d+, \d+\] = 9\.22"),
    (1e30, r"y\[1\] has a label too large for int64: y\[1\]\[\d+, \d+\] = 1e\+30"),
    (np.nan, r"y\[1\] must hold integer labels; y\[1\]\[\d+, \d+\] = nan"),
    (2.5, r"y\[1\] must hold integer labels; y\[1\]\[\d+, \d+\] = 2\.5"),
])
def test_float_labels_beyond_int64_or_non_integral_name_item_and_value(scenes, value, match):
    y = scenes.instance_maps[:2].astype(np.float64)
    y[1][y[1] > 0] = value
    with pytest.raises(ValueError, match=match):
        MaskRCNN(**TINY).fit(scenes.images[:2], y)
    with pytest.raises(ValueError, match=match.replace("y\\[", "semantic_maps\\[")):
        MaskRCNN(**TINY).fit(scenes.images[:2], scenes.instance_maps[:2], y)


def test_complex_images_are_refused_not_cast():
    # numpy would cast them to real with only a ComplexWarning, dropping the imaginary part
    small = make_scenes(2, image_size=16, max_objects=2, random_state=0)
    with pytest.raises(TypeError, match="real numeric array.*complex"):
        MaskRCNN(max_epochs=1).fit(small.images + 1j, small.instance_maps)


def test_ragged_image_list_names_the_odd_map():
    # images of different sizes are accepted; a map whose size differs from its image's
    # is named
    small = make_scenes(2, image_size=16, max_objects=2, random_state=0)
    X = [small.images[0], small.images[1], small.images[1][:8]]
    y = [small.instance_maps[0], small.instance_maps[1], small.instance_maps[1]]
    with pytest.raises(ValueError, match=r"y\[2\] has shape \(16, 16\) but its image is "
                                         r"\(8, 16\)"):
        MaskRCNN(max_epochs=1).fit(X, y)


@pytest.mark.parametrize("max_epochs, batch_size", [(1, 6), (5, 3), (10, 6)])
def test_mask_rcnn_trains_for_any_number_of_steps(max_epochs, batch_size):
    """1, 10 and 10 optimiser steps (the one-cycle schedule's warm-up of 10 % would have
    zero width at 10 steps)."""
    data = make_scenes(6, image_size=32, random_state=0)
    model = MaskRCNN(anchor_sizes=(4, 8, 16), width=8, max_epochs=max_epochs,
                     batch_size=batch_size, random_state=0)
    model.fit(data.images, data.instance_maps)
    assert len(model.loss_curve_) == max_epochs
    assert np.all(np.isfinite(model.loss_curve_))


def test_predict_says_when_every_detection_is_under_the_score_threshold(fitted, scenes):
    import copy
    import warnings as _warnings

    dets = fitted.predict_detections(scenes.images[:2])
    assert any(len(d["scores"]) for d in dets)
    strict = copy.deepcopy(fitted).set_params(instance_score_threshold=1.0)  # none reaches 1
    with pytest.warns(UserWarning, match="below instance_score_threshold=1.0"):
        maps = strict.predict(scenes.images[:2])
    assert not maps.any()
    lenient = copy.deepcopy(fitted).set_params(instance_score_threshold=0.0)
    with _warnings.catch_warnings(record=True) as record:
        _warnings.simplefilter("always")
        lenient.predict(scenes.images[:2])
    assert not any("painted no object" in str(w.message) for w in record)


def test_predict_says_when_confident_detections_have_empty_masks(fitted, scenes,
                                                                  monkeypatch):
    import copy

    est = copy.deepcopy(fitted).set_params(instance_score_threshold=0.0)
    detect = est._detect

    def blank_masks(X):
        dets, images = detect(X)
        for d in dets:
            d["roi_masks"] = np.zeros_like(d["roi_masks"])
        return dets, images

    monkeypatch.setattr(est, "_detect", blank_masks)
    with pytest.warns(UserWarning, match=r"painted no object in X\[0\] and 1 more "
                                         r"image\(s\): its \d+ detection\(s\) scoring "
                                         r"at least instance_score_threshold=0.0 have "
                                         r"empty masks.*max_epochs"):
        maps = est.predict(scenes.images[:2])
    assert not maps.any()


def test_predict_scales_auto_finds_objects_twice_the_training_size():
    """Trained on 48 x 48 scenes, the same scenes at twice the size are detected at half
    scale with ``"auto"`` and scored in input pixels; at their own scale the images keep
    it, and ``(1.0,)`` predicts at the input scale only."""
    import warnings as _warnings

    from sklearn_papers.metrics import mask_average_precision, symmetric_best_dice

    data = make_scenes(16, image_size=48, n_classes=1, max_objects=2, touching=0.0,
                       noise=0.02, random_state=0)
    est = MaskRCNN(width=8, batch_size=4, predict_scales="auto",
                   random_state=0).fit(data.images, data.instance_maps)
    assert MaskRCNN().predict_scales == "auto"
    assert est.object_sizes_[0] <= est.object_size_ <= est.object_sizes_[1]
    X, y = data.images[:4], data.instance_maps[:4]
    big = np.repeat(np.repeat(X, 2, axis=1), 2, axis=2)
    y_big = list(np.repeat(np.repeat(y, 2, axis=1), 2, axis=2))
    own = pickle.loads(pickle.dumps(est)).set_params(predict_scales=(1.0,))
    results = {}
    for name, model in (("auto", est), ("own", own)):
        with _warnings.catch_warnings(record=True) as record:
            _warnings.simplefilter("always")
            dets = model.predict_detections(big)
            maps = model.predict(big)
        assert maps.shape == (4, 96, 96)
        assert all(d["masks"].shape == (len(d["scores"]), 96, 96) for d in dets)
        results[name] = (symmetric_best_dice(y_big, list(maps)),
                         mask_average_precision(y_big, [d["masks"] for d in dets],
                                                pred_scores=[d["scores"] for d in dets]),
                         [str(w.message) for w in record])
    dice, ap, messages = results["auto"]
    assert dice > 0.5 and not any("seen in fit" in m for m in messages)
    assert dice >= results["own"][0] and ap >= results["own"][1]
    # at their own scale the images keep it
    np.testing.assert_array_equal(est.predict(X), own.predict(X))
    with pytest.raises(ValueError, match="predict_scales"):
        clone(est).set_params(predict_scales="big").fit(data.images, data.instance_maps)
    with pytest.raises(ValueError, match="predict_scales must be 'auto' or a non-empty"):
        clone(est).set_params(predict_scales=[-1.0]).fit(data.images, data.instance_maps)


def test_scale_choice_takes_the_training_size_among_scales_that_keep_the_objects():
    """Sizes and counts as models trained on half-resolution coin tiles (boxes 19.5 px)
    find them: the native image (coins twice as large) at half scale; a held-out tile
    at its own scale; crowded nuclei, where scale 2 finds twice as many pieces of about
    the training size, at their own scale."""
    from sklearn_papers.vision._scales import choose_backed_scale

    native = ({0.25: 19.3, 0.5: 22.4, 1.0: 37.7, 2.0: 32.8},
              {0.25: 5.4, 0.5: 23.0, 1.0: 7.4, 2.0: 13.3})
    # 0.25 has the closest size but a quarter of the objects: pieces, not a candidate
    assert choose_backed_scale(*native, 19.5) == 0.5
    # another seed: one detection at scale 1, of about the training size by chance
    one = ({0.25: 14.7, 0.5: 23.0, 1.0: 25.5, 2.0: 25.8}, {0.25: 7.7, 0.5: 23.8, 1.0: 0.6,
                                                            2.0: 6.2})
    assert choose_backed_scale(*one, 19.5) == 0.5
    tile = ({0.5: 16.6, 1.0: 30.3, 2.0: float("nan")}, {0.5: 3.0, 1.0: 4.0, 2.0: 0.0})
    assert choose_backed_scale(*tile, 19.5) == 1.0
    nuclei = ({0.5: 14.5, 1.0: 18.5, 2.0: 32.0}, {0.5: 6.3, 1.0: 23.2, 2.0: 53.0})
    assert choose_backed_scale(*nuclei, 23.5) == 1.0
    # the page of skimage.data.page() at twice the training scale: scale 1 boxes the
    # characters a little larger than in fit, scale 2 cuts them into many pieces of
    # about the training size; only scales below 1 are candidates
    page = ({0.25: 8.05, 0.5: 9.21, 1.0: 10.38, 2.0: 9.21},
            {0.25: 18.0, 0.5: 132.6, 1.0: 103.5, 2.0: 423.1})
    assert choose_backed_scale(*page, 8.77) == 0.5
    # even where the pieces at scale 2 are the closest to the training size
    assert choose_backed_scale({2.0: 9.0, 0.5: 9.3, 1.0: 10.4},
                               {2.0: 420.0, 0.5: 130.0, 1.0: 100.0}, 8.77) == 0.5
    # a held-out page tile at the training scale: scale 2 finds twice as many
    # detections of about the same size (pieces of characters); enlarging needs the
    # margin in size, more detections do not back it
    tile_page = ({0.25: 6.59, 0.5: 16.59, 1.0: 15.18, 2.0: 19.63},
                 {0.25: 1.1, 0.5: 2.5, 1.0: 7.9, 2.0: 16.7})
    assert choose_backed_scale(*tile_page, 17.55) == 1.0
    # objects half the training size, found at scale 2 only
    assert choose_backed_scale({1.0: float("nan"), 2.0: 14.0}, {1.0: 0.0, 2.0: 3.0},
                               15.0) == 2.0
    # a blank tile: nothing at scale 1, specks boxed far from the training size at the
    # other scales; the tile keeps its own scale
    assert choose_backed_scale({0.25: 1.7, 0.5: float("nan"), 1.0: float("nan"), 2.0: 4.0},
                               {0.25: 1.0, 0.5: 0.0, 1.0: 0.0, 2.0: 1.5}, 17.5) == 1.0
    assert choose_backed_scale({1.0: float("nan"), 2.0: 14.0}, {1.0: 0.0, 2.0: 3.0},
                               31.0) == 1.0
    # coins twice the training size: scale 1 cuts them and misses some, scale 0.5 finds
    # each, scale 0.25 joins neighbours into objects of about the training size; 0.25
    # finds as many as scale 1 give or take 1.25, but clearly fewer than 0.5
    joined = ({0.25: 19.2, 0.5: 23.0, 1.0: 37.0, 2.0: 33.0},
              {0.25: 12.0, 0.5: 24.0, 1.0: 14.0, 2.0: 13.0})
    assert choose_backed_scale(*joined, 19.5) == 0.5
    # enlarging: scale 2 backs a choice of 4 only when 4 finds about as many objects
    small = ({1.0: 5.0, 2.0: 9.0, 4.0: 19.0}, {1.0: 10.0, 2.0: 40.0, 4.0: 20.0})
    assert choose_backed_scale(*small, 19.5) == 2.0
    assert choose_backed_scale(small[0], {1.0: 10.0, 2.0: 40.0, 4.0: 35.0}, 19.5) == 4.0
    # nothing found anywhere, or no training size: the input scale
    nothing = {0.5: float("nan"), 1.0: float("nan")}
    assert choose_backed_scale(nothing, {0.5: 0.0, 1.0: 0.0}, 15.0) == 1.0
    assert choose_backed_scale(*native, float("nan")) == 1.0


def test_scale_choice_keeps_a_tile_whose_shrunk_scale_finds_fewer_objects():
    """A held-out coin tile whose coins are larger than the training median: scale 0.5
    brings them closer to the training size, but finds fewer objects than scale 1,
    which keeps them whole; a blank tile keeps its scale when a larger one finds less
    than one object; the other cases keep :func:`choose_backed_scale`'s choice."""
    from sklearn_papers.vision._scales import choose_backed_scale, choose_detection_scale

    tile = ({0.25: 8.9, 0.5: 15.2, 1.0: 31.8, 2.0: 21.7},
            {0.25: 1.59, 0.5: 5.71, 1.0: 6.79, 2.0: 2.81})
    assert choose_backed_scale(*tile, 19.5) == 0.5
    assert choose_detection_scale(*tile, 19.5) == 1.0
    # the native coins image: 0.5 finds many more objects, and is kept
    native = ({0.25: 15.4, 0.5: 23.4, 1.0: 33.6, 2.0: 24.2},
              {0.25: 4.97, 0.5: 23.81, 1.0: 3.26, 2.0: 9.35})
    assert choose_detection_scale(*native, 19.5) == 0.5
    # enlarging is left to choose_backed_scale
    small = ({1.0: 5.0, 2.0: 9.0, 4.0: 19.0}, {1.0: 10.0, 2.0: 40.0, 4.0: 20.0})
    assert choose_detection_scale(*small, 19.5) == 2.0
    # a blank page tile: nothing at scale 1, one detection scoring 0.75 at scale 2
    blank = ({0.5: float("nan"), 1.0: float("nan"), 2.0: 8.9},
             {0.5: 0.0, 1.0: 0.0, 2.0: 0.75})
    assert choose_backed_scale(*blank, 17.5) == 2.0
    assert choose_detection_scale(*blank, 17.5) == 1.0
    # objects half the training size, found at scale 2 only
    assert choose_detection_scale({1.0: float("nan"), 2.0: 14.0}, {1.0: 0.0, 2.0: 3.0},
                                  15.0) == 2.0
    # one object twice the training size, missed at scale 1, found whole at 0.5
    missed = ({0.25: 13.9, 0.5: 21.0, 1.0: float("nan")}, {0.25: 0.99, 0.5: 0.99, 1.0: 0.0})
    assert choose_detection_scale(*missed, 22.0) == 0.5


def test_windows_cover_the_axis_with_half_overlap_and_own_it_once():
    from sklearn_papers.vision._scales import owned_intervals, tile_starts

    assert tile_starts(64, 64) == [0] and tile_starts(40, 64) == [0]
    starts = tile_starts(152, 64)
    assert starts == [0, 32, 64, 88]
    owned = owned_intervals(starts, 64, 152)
    assert owned[0][0] == -np.inf and owned[-1][1] == np.inf
    assert all(a[1] == b[0] for a, b in zip(owned, owned[1:]))  # a partition
    for s, (lo, hi) in zip(starts, owned):
        # each window owns points at least 16 px (a quarter window) from its inner edges
        assert (lo == -np.inf or lo >= s + 16) and (hi == np.inf or hi <= s + 64 - 16)


def test_large_images_are_predicted_in_windows_of_the_training_shape(monkeypatch):
    """An image of more than 4 times the training area runs as windows of the training
    shape, detections in input pixels without duplicates; smaller images run whole and
    ``predict_tile_size=None`` runs every image whole."""
    from sklearn_papers.nn._detection import box_iou

    data = make_scenes(8, image_size=32, n_classes=1, max_objects=3, touching=0.0,
                       random_state=0)
    est = MaskRCNN(**{**TINY, "max_epochs": 8}, predict_scales=(1.0,),
                   instance_score_threshold=0.1).fit(data.images, data.instance_maps)
    module = est.net_.module_
    seen = []
    detect = module.detect

    def spy(images, owned=None, flip=False):
        seen.extend([tuple(images.shape[-2:])] * len(images))
        return detect(images, owned, flip)

    monkeypatch.setattr(module, "detect", spy)
    mosaic = np.concatenate([np.concatenate(list(data.images[r:r + 3]), axis=1)
                             for r in (0, 3)], axis=0)[None]  # 64 x 96: 6 times the area
    dets = est.predict_detections(mosaic)[0]
    assert set(seen) == {(32, 32)} and len(seen) == 3 * 5  # rows 0, 16, 32; 5 columns
    k = len(dets["scores"])
    assert k > 0 and dets["masks"].shape == (k, 64, 96)
    assert np.all(dets["boxes"] >= 0) and np.all(dets["boxes"][:, 2] <= 96)
    assert np.all(np.diff(dets["scores"]) <= 0)
    iou = box_iou(torch.from_numpy(dets["boxes"]), torch.from_numpy(dets["boxes"])).numpy()
    assert np.all(iou[np.triu_indices(k, 1)] <= 0.5)  # no object twice
    assert est.predict(mosaic).shape == (1, 64, 96)
    seen.clear()
    est.predict_detections(data.images[:2])  # the training size: whole
    whole = est.set_params(predict_tile_size=None).predict_detections(mosaic)[0]
    assert seen == [(32, 32)] * 2 + [(64, 96)] and whole["masks"].shape[1:] == (64, 96)
    with pytest.raises(ValueError, match="predict_tile_size"):
        clone(est).set_params(predict_tile_size=8).fit(data.images, data.instance_maps)


@pytest.mark.parametrize("params, match", [
    ({"predict_tile_size": 0}, "predict_tile_size"),
    ({"predict_tile_size": 16.5}, "predict_tile_size"),
    ({"predict_tile_size": "big"}, "predict_tile_size"),
    ({"batch_size": 0}, "batch_size"),
    ({"predict_flip": "yes"}, "predict_flip"),
    ({"detections_per_image": 0}, "detections_per_image"),
    ({"predict_scales": (1e6,)}, r"predict_scales holds 1000000.0: scales above 16"),
    ({"predict_scales": (True,)}, r"predict_scales\[0\] = True is a bool"),
    ({"predict_scales": ("2",)}, r"predict_scales\[0\] = '2' is the string '2'"),
])
def test_parameters_set_after_fit_are_checked_at_predict(fitted, scenes, params, match):
    # predict reads them: unchecked, 0 crashed in a convolution, 16.5 was truncated,
    # batch_size=0 failed in range(), a scale of 1e6 asked torch for 12 PB
    est = pickle.loads(pickle.dumps(fitted)).set_params(**params)
    with pytest.raises(ValueError, match=match):
        est.predict(scenes.images[:1])


def test_score_checks_the_truth_before_running_the_network(fitted, scenes, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the network ran before y was checked")

    monkeypatch.setattr(type(fitted), "_detect_at", fail)
    with pytest.raises(ValueError, match=r"y must give one \(H, W\) map per image \(2\); "
                                         r"got None"):
        fitted.score(scenes.images[:2], None)
    with pytest.raises(ValueError, match=r"got 1 maps"):
        fitted.score(scenes.images[:2], scenes.instance_maps[:1].tolist())
    with pytest.raises(ValueError, match=r"semantic_maps\[0\] has class 9"):
        fitted.score(scenes.images[:2], scenes.instance_maps[:2],
                     np.where(scenes.semantic_maps[:2] > 0, 9, 0))


@pytest.mark.parametrize("params", [{"anchor_sizes": (float("inf"), 8, 16)},
                                    {"anchor_sizes": (True, 8, 16)},
                                    {"aspect_ratios": (float("inf"),)}])
def test_anchor_parameters_must_be_finite_positive_numbers(scenes, params):
    # inf and True were taken for anchor sizes and ratios
    with pytest.raises(ValueError, match="finite positive numbers"):
        MaskRCNN(**{**TINY, **params}).fit(scenes.images, scenes.instance_maps)


def test_soft_masks_and_mixed_targets_are_refused_naming_the_entry(scenes):
    dicts = _dicts(scenes)
    soft = [dict(d, masks=d["masks"] * 0.5) for d in dicts]
    # a mask of 0.5 was read as a full mask
    with pytest.raises(ValueError, match=r"y\[0\]\['masks'\]\[0\] holds values other than "
                                         r"0 and 1"):
        MaskRCNN(**TINY).fit(scenes.images, soft)
    mixed = [dicts[0]] + list(scenes.instance_maps[1:])
    # was "y[0] must be a numeric array of integer labels; got dtype object"
    with pytest.raises(ValueError, match=r"y mixes target dicts \(y\[0\]\) and other "
                                         r"entries \(y\[1\] is a ndarray\)"):
        MaskRCNN(**TINY).fit(scenes.images, mixed)


def test_image_size_set_after_fit_does_not_change_predictions(fitted, scenes):
    # the network learned objects at the scale of fit's image_size; reading the new value
    # at predict resized the images to it
    est = pickle.loads(pickle.dumps(fitted)).set_params(image_size=16)
    np.testing.assert_array_equal(est.predict(scenes.images[:2]),
                                  fitted.predict(scenes.images[:2]))


def test_detection_cap_grows_with_the_image_area_and_warns_when_reached(scenes):
    model = MaskRCNN(**{**TINY, "detections_per_image": 1, "score_threshold": 0.0,
                        "instance_score_threshold": 0.0, "predict_scales": (1.0,)})
    model.fit(scenes.images, scenes.instance_maps)
    with pytest.warns(UserWarning, match=r"kept the 1 best of \d+ detections in X\[0\].*"
                                         r"detections_per_image"):
        small = model.predict_detections(scenes.images[:1])
    assert len(small[0]["scores"]) == 1
    # four training images side by side: four times the area, up to four detections
    big = np.concatenate([np.concatenate(list(scenes.images[:2]), axis=1),
                          np.concatenate(list(scenes.images[2:4]), axis=1)], axis=0)
    with pytest.warns(UserWarning, match=r"kept the 4 best"):
        dets = model.predict_detections(big[None])
    assert len(dets[0]["scores"]) == 4
    # with several scales tried, one warning per image, named by its index in X
    model.set_params(predict_scales=(0.5, 1.0))
    with pytest.warns(UserWarning, match=r"detections in X\[1\]") as record:
        model.predict_detections([scenes.images[0], big])
    assert sum(re.search(r"best of \d+ detections in X\[1\]", str(w.message)) is not None
               for w in record) == 1


def test_grey_batch_and_single_colour_image_get_their_own_messages(fitted, scenes):
    grey = scenes.images[:1, ..., 0]  # (1, 32, 32): one grey image in a batch
    with pytest.raises(ValueError, match=r"batch of grey images, but the model was fitted "
                                         r"on 3-channel images.*np.repeat"):
        fitted.predict(grey)
    with pytest.raises(ValueError, match=r"one image\? .*X\[None\]"):
        fitted.predict(scenes.images[0])


def _dense_paste(masks, boxes, height, width, threshold=0.5):
    """Reference: every mask sampled at every pixel of the image, then cut to its box."""
    import torch.nn.functional as F

    d = masks.shape[0]
    bw = (boxes[:, 2] - boxes[:, 0]).clamp(min=1e-6)
    bh = (boxes[:, 3] - boxes[:, 1]).clamp(min=1e-6)
    u = (torch.arange(width, dtype=torch.float32)[None] + 0.5 - boxes[:, 0:1]) / bw[:, None]
    v = (torch.arange(height, dtype=torch.float32)[None] + 0.5 - boxes[:, 1:2]) / bh[:, None]
    grid = torch.stack([(2 * u - 1)[:, None, :].expand(d, height, width),
                        (2 * v - 1)[:, :, None].expand(d, height, width)], dim=-1)
    val = F.grid_sample(masks[:, None], grid, mode="bilinear", padding_mode="border",
                        align_corners=False)[:, 0]
    inside = ((u >= 0) & (u <= 1))[:, None, :] & ((v >= 0) & (v <= 1))[:, :, None]
    return (val >= threshold) & inside


@pytest.mark.parametrize("block_pixels", [1, 500, 1 << 22])
def test_masks_pasted_box_by_box_equal_masks_sampled_over_the_whole_image(block_pixels):
    """Boxes inside, across and outside the image, degenerate ones included: the crops
    hold exactly what sampling every mask at every pixel gives."""
    from sklearn_papers.nn._mask_rcnn import paste_mask_crops, paste_masks

    gen = torch.Generator().manual_seed(0)
    masks = torch.rand(120, 28, 28, generator=gen)
    lo = torch.rand(120, 2, generator=gen) * 110 - 15
    boxes = torch.cat([lo, lo + torch.rand(120, 2, generator=gen) * 50], 1)
    boxes[:4, 2] = boxes[:4, 0]
    expected = _dense_paste(masks, boxes, 70, 90)
    assert expected.any()
    out = torch.zeros_like(expected)
    for i, (r0, r1, c0, c1), crop in paste_mask_crops(masks, boxes, 70, 90,
                                                      block_pixels=block_pixels):
        assert crop.shape == (r1 - r0, c1 - c0)
        out[i, r0:r1, c0:c1] = crop
    assert torch.equal(out, expected)
    assert torch.equal(paste_masks(masks, boxes, 70, 90), expected)


def test_predict_paints_the_same_maps_as_the_dense_masks_of_predict_detections():
    """``predict`` pastes each detection's mask in its box only; its maps are those
    painted from the full-image masks of ``predict_detections``, for images run whole
    and in windows."""
    from sklearn_papers.vision._mask_rcnn import paint_detections

    data = make_scenes(8, image_size=32, n_classes=1, max_objects=3, touching=0.0,
                       random_state=0)
    est = MaskRCNN(**{**TINY, "max_epochs": 8}, predict_scales=(1.0,),
                   instance_score_threshold=0.1).fit(data.images, data.instance_maps)
    mosaic = np.concatenate([np.concatenate(list(data.images[r:r + 3]), axis=1)
                             for r in (0, 3)], axis=0)[None]
    for X in (data.images[:3], mosaic):
        maps = est.predict(X)
        dets = est.predict_detections(X)
        assert sum(int((d["scores"] >= 0.1).sum()) for d in dets) > 0
        painted = np.stack([paint_detections(d, X.shape[1:3], 0.1, est.mask_threshold)
                            for d in dets])
        np.testing.assert_array_equal(maps, painted)
        assert maps.max() > 0


def test_mask_threshold_is_read_at_prediction_and_masks_shrink_as_it_rises(fitted,
                                                                           scenes):
    """The same detections at each ``mask_threshold``; a higher threshold keeps a subset
    of each mask's pixels (fewer in all), and predict's maps follow it."""
    est = pickle.loads(pickle.dumps(fitted))
    by_threshold = {}
    for t in (0.2, 0.4, 0.8):
        est.set_params(mask_threshold=t)
        by_threshold[t] = (est.predict_detections(scenes.images[:3]),
                           est.predict(scenes.images[:3]))
    sizes = []
    for (lo, lo_maps), (hi, hi_maps) in ((by_threshold[0.2], by_threshold[0.4]),
                                         (by_threshold[0.4], by_threshold[0.8])):
        for a, b in zip(lo, hi):
            np.testing.assert_array_equal(a["scores"], b["scores"])
            assert not (b["masks"] & ~a["masks"]).any()
        sizes.append((sum(int(d["masks"].sum()) for d in lo),
                      sum(int(d["masks"].sum()) for d in hi)))
        assert (lo_maps > 0).sum() >= (hi_maps > 0).sum()
    assert sizes[0][0] > sizes[1][1]
    with pytest.raises(ValueError, match="mask_threshold"):
        est.set_params(mask_threshold=1.0).predict(scenes.images[:1])


def test_predict_flip_averages_the_masks_only(fitted, scenes):
    """``predict_flip`` (read at prediction) keeps every box and score and changes the
    mask probabilities only."""
    est = pickle.loads(pickle.dumps(fitted))
    flipped, _ = est._detect(scenes.images[:3])
    plain, _ = est.set_params(predict_flip=False)._detect(scenes.images[:3])
    for a, b in zip(flipped, plain):
        for k in ("boxes", "scores", "labels", "roi_boxes"):
            np.testing.assert_array_equal(a[k], b[k])
    assert any(len(a["scores"]) for a in plain)
    assert not all(np.allclose(a["roi_masks"], b["roi_masks"]) for a, b in zip(flipped, plain))


@pytest.mark.parametrize("expand", [1.0, 1.5])
def test_masks_cover_the_boxes_enlarged_by_mask_box_expand(expand):
    """Each mask lies within its box enlarged by ``mask_box_expand`` about its centre
    (within the box itself for 1.0); the boxes are returned as detected."""
    data = make_scenes(8, image_size=32, n_classes=1, max_objects=3, touching=0.0,
                       random_state=0)
    est = MaskRCNN(**{**TINY, "max_epochs": 8}, predict_scales=(1.0,), score_threshold=0.0,
                   mask_box_expand=expand).fit(data.images, data.instance_maps)
    assert est.net_.module_.roi_heads.mask_box_expand == expand
    yy, xx = np.mgrid[:32, :32] + 0.5
    n_masks = 0
    for d in est.predict_detections(data.images[:3]):
        assert set(d) == {"boxes", "labels", "scores", "masks"}
        for box, mask in zip(d["boxes"], d["masks"]):
            centre, half = (box[:2] + box[2:]) / 2, (box[2:] - box[:2]) * expand / 2
            inside = ((np.abs(xx - centre[0]) <= half[0] + 1)
                      & (np.abs(yy - centre[1]) <= half[1] + 1))
            assert not (mask & ~inside).any()
            n_masks += int(mask.any())
    assert n_masks > 0


def test_input_scale_enlarges_small_objects():
    """Boxes under 3 finest strides across are seen enlarged: object_size_ is in network
    pixels, predictions in input pixels; input_scale=1.0 keeps the images as given."""
    small = make_scenes(8, image_size=32, max_objects=8, random_state=0)
    params = {**TINY, "anchor_sizes": None, "max_epochs": 1}
    est = MaskRCNN(**{**params, "input_scale": "auto"}).fit(small.images, small.instance_maps)
    fixed = MaskRCNN(**params).fit(small.images, small.instance_maps)
    assert est.input_scale_ == 2.0 and fixed.input_scale_ == 1.0
    assert fixed.object_size_ < 12
    np.testing.assert_allclose(est.object_size_, 2 * fixed.object_size_, rtol=0.1)
    assert est._fit_shape == (64, 64)
    det = est.set_params(predict_scales=(1.0,)).predict_detections(small.images[:2])
    for d in det:
        assert d["masks"].shape[1:] == (32, 32)
        assert np.all(d["boxes"] >= -0.5) and np.all(d["boxes"] <= 32.5)
    assert est.predict(small.images[:2]).shape == (2, 32, 32)
    with pytest.raises(ValueError, match="input_scale"):
        MaskRCNN(input_scale=0.1).fit(small.images, small.instance_maps)
