"""InstanceSegmenter: fit/predict contract, input handling, errors, determinism, pickling."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from sklearn_papers.datasets import make_scenes
from sklearn_papers.metrics import symmetric_best_dice
from sklearn_papers.vision import InstanceSegmenter

# input_scale=1.0: the network sees the images as given, on the grid these tests check
SMALL = {"width": 8, "embedding_dim": 4, "max_epochs": 2, "batch_size": 8, "random_state": 0,
         "input_scale": 1.0}


@pytest.fixture(scope="module")
def data():
    return make_scenes(16, image_size=24, max_objects=3, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    return InstanceSegmenter(**SMALL).fit(data.images, data.instance_maps,
                                          semantic_maps=data.semantic_maps)


def test_instance_segmenter_quick(fitted, data):
    assert fitted.n_classes_ == 3 and fitted.n_features_in_ == 3
    assert fitted.n_iter_ == 2 and len(fitted.loss_curve_) == 2
    assert fitted.class_weights_.shape == (4,)
    pred = fitted.predict(data.images[:5])
    assert pred.shape == (5, 24, 24) and pred.dtype == np.int64
    for m in pred:  # consecutive ids
        ids = np.unique(m[m > 0])
        np.testing.assert_array_equal(ids, np.arange(1, ids.size + 1))
    sem = fitted.predict_semantic(data.images[:5])
    assert sem.shape == (5, 24, 24) and set(np.unique(sem)) <= {0, 1, 2, 3}
    np.testing.assert_array_equal(sem > 0, pred > 0)
    found = fitted.predict_instances(data.images[:5])
    for f, m in zip(found, pred):
        assert f["masks"].shape == (f["labels"].size, 24, 24) == (f["scores"].size, 24, 24)
        np.testing.assert_array_equal((f["masks"] * np.arange(1, f["labels"].size + 1)
                                       [:, None, None]).sum(0), m)
    score = fitted.score(data.images[:5], data.instance_maps[:5])
    assert score == pytest.approx(symmetric_best_dice(data.instance_maps[:5], pred))
    sp, cp, emb = fitted.predict_outputs(data.images[:2])
    assert sp.shape == (2, 4, 12, 12) and cp.shape == (2, 12, 12) and emb.shape == (2, 4, 12, 12)
    np.testing.assert_allclose(sp.sum(1), 1, rtol=1e-5)
    proba = fitted.predict_proba(data.images[:2])
    assert proba.shape == (2, 24, 24, 4)
    np.testing.assert_allclose(proba[:, ::2, ::2], np.moveaxis(sp, 1, -1))


def test_image_layouts_and_dtypes_agree(fitted, data):
    images = data.images[:3]
    ref = fitted.predict(images)
    np.testing.assert_array_equal(fitted.predict(np.moveaxis(images, -1, 1)), ref)
    as_uint8 = np.round(images * 255).astype(np.uint8)
    np.testing.assert_array_equal(fitted.predict(as_uint8),
                                  fitted.predict(as_uint8.astype(np.float32) / 255))


@pytest.mark.parametrize("grouping, slic", [("centers", True), ("centers", False),
                                             ("mean_shift", True),
                                             ("connected_components", False)])
def test_groupings_and_upsampling_switch_after_fit(fitted, data, grouping, slic):
    est = pickle.loads(pickle.dumps(fitted)).set_params(grouping=grouping, slic=slic)
    pred = est.predict(data.images[:3])
    assert pred.shape == (3, 24, 24)


def test_connected_components_grouping_splits_only_components(fitted, data):
    from scipy import ndimage

    est = pickle.loads(pickle.dumps(fitted)).set_params(grouping="connected_components",
                                                        slic=False)
    sem = est.predict_semantic(data.images[:4])
    pred = est.predict(data.images[:4])
    for s, p in zip(sem, pred):
        n = sum(ndimage.label(s == c)[1] for c in np.unique(s[s > 0]))
        assert p.max() == n


def test_centre_seeding_never_joins_objects_apart_in_the_image():
    from sklearn_papers.vision._instance_grouping import _group_centers

    sem = np.zeros((8, 12), dtype=np.int64)
    sem[1:4, 1:4] = sem[1:7, 6:11] = 1  # two objects of class 1, apart
    heat = np.zeros(sem.shape, dtype=np.float32)
    heat[2, 2] = 0.9  # one centre, in the left object only
    emb = np.zeros((2,) + sem.shape, dtype=np.float32)  # one embedding for every pixel
    out, classes, scores = _group_centers(sem, heat, emb, 0.7, 1.5)
    # the right object has no centre: it is an instance of its own, not joined to the left
    assert set(np.unique(out[1:4, 1:4])) == {1} and set(np.unique(out[1:7, 6:11])) == {2}
    assert classes == [1, 1] and scores == [pytest.approx(0.9), 0.0]
    # two centres in one object (touching instances) still split it by embedding
    heat[2, 7], heat[5, 9] = 0.8, 0.85
    emb[0, 1:7, 6:9], emb[0, 1:7, 9:11] = -2.0, 2.0
    emb[0, 5, 9] = 2.0
    out, classes, _ = _group_centers(sem, heat, emb, 0.7, 1.5)
    assert len(classes) == 3 and out[2, 7] != out[5, 10] and out[2, 7] != out[2, 2]


def test_predict_scales_keep_the_input_scale_without_centres(fitted, data):
    from sklearn_papers.vision._scales import choose_scale

    assert fitted.object_size_ > 0
    # the choice on sizes: the scale whose objects are closest in size, 1 within a
    # factor 1.25
    assert choose_scale({0.5: 10.0, 1.0: 20.0, 2.0: 40.0}, 10.5) == 0.5
    assert choose_scale({0.5: 10.0, 1.0: 12.0}, 10.5) == 1.0
    assert choose_scale({0.5: float("nan"), 1.0: float("nan")}, 10.5) == 1.0
    # images twice as large, to a model trained too briefly to find confident centres:
    # the sizes alone point to another scale, but nothing confirms its instances, so
    # "auto" keeps the input scale and says why
    big = np.repeat(np.repeat(data.images[:2], 2, axis=1), 2, axis=2)
    auto = pickle.loads(pickle.dumps(fitted))
    own = pickle.loads(pickle.dumps(fitted)).set_params(predict_scales=(1.0,))
    with pytest.warns(UserWarning) as record:
        pred = auto.predict(big)
    messages = [str(r.message) for r in record]
    assert len(messages) == 1, messages
    assert messages[0].startswith("predict_scales kept scale 1 for 2 image(s) in which "
                                  "the network found no confident instance centre at "
                                  "any scale")
    assert f"object_size_={fitted.object_size_:.1f} px" in messages[0]
    assert "X[0] (scale 0.5: " in messages[0] and "max_epochs" in messages[0]
    assert pred.shape == (2, 48, 48)
    np.testing.assert_array_equal(pred, own.predict(big))
    # at their own scale the images keep it
    np.testing.assert_array_equal(auto.predict(data.images[:4]), own.predict(data.images[:4]))
    with pytest.raises(ValueError, match="predict_scales must be 'auto' or a non-empty"):
        clone(fitted).set_params(predict_scales=(0.0,)).fit(data.images, data.instance_maps)


def _scripted_outputs(n_classes, embedding_dim, by_shape):
    """A stand-in for the network's ``_outputs``: per low-resolution shape ``(h, w)``, a
    list of objects ``(row, col, side, centre)`` (squares of ``side`` low-resolution
    pixels, with a confident centre or none), the same for every image of the batch."""
    def outputs(images_p):
        n, _, H, W = images_p.shape
        h, w = H // 2, W // 2
        sem = np.zeros((n, n_classes + 1, h, w), dtype=np.float32)
        sem[:, 0] = 1.0
        heat = np.zeros((n, h, w), dtype=np.float32)
        emb = np.zeros((n, embedding_dim, h, w), dtype=np.float32)
        for k, (r, c, side, centre) in enumerate(by_shape.get((h, w), [])):
            sem[:, 0, r:r + side, c:c + side], sem[:, 1, r:r + side, c:c + side] = 0.0, 1.0
            emb[:, 0, r:r + side, c:c + side] = 10.0 * k  # objects far apart in embedding
            heat[:, r:r + side, c:c + side] = 0.3
            if centre:
                heat[:, r + side // 2, c + side // 2] = 0.95
        return sem, heat, emb
    return outputs


def test_auto_scale_refuses_a_size_match_that_loses_the_objects(fitted, monkeypatch):
    # The failure on dense nuclei: at the input scale the network finds many objects of
    # the training size, each with a confident centre, and joins a few into large
    # instances that dominate the area-weighted typical size; at half scale it joins them
    # into a few instances of about the training size, without centres. The sizes alone
    # pick half scale (4 instances instead of 14); the centres keep the input scale.
    est = pickle.loads(pickle.dumps(fitted))
    est.object_size_ = 8.0  # 4 x 4 low-resolution pixels at output stride 2
    at_1 = [(2 + 6 * (k // 6), 2 + 7 * (k % 6), 4, True) for k in range(12)]
    at_1 += [(14, 2, 16, False), (14, 24, 16, False)]  # 32 x 32 px: joined objects
    at_half = [(2, 2, 4, False), (2, 10, 4, False), (9, 2, 4, False), (9, 10, 4, False)]
    monkeypatch.setattr(est, "_outputs", _scripted_outputs(
        est.n_classes_, est.embedding_dim, {(32, 48): at_1, (16, 24): at_half}))
    X = np.zeros((2, 64, 96, 3), dtype=np.float32)
    with pytest.warns(UserWarning) as record:
        pred = est.predict(X)
    assert len(record) == 1  # one warning per call, naming the images
    message = str(record[0].message)
    assert message.startswith("predict_scales kept scale 1 for 2 image(s)")
    for i in range(2):
        assert (f"X[{i}] (scale 0.5: 8.0 px, 0 centres; scale 1: 32.0 px, 12 centres)"
                in message)
    assert [m.max() for m in pred] == [14, 14]
    own = est.set_params(predict_scales=(1.0,)).predict(X)
    np.testing.assert_array_equal(pred, own)
    # objects twice the training size, found whole but without confident centres at the
    # input scale, with them at half scale: half scale is taken without a warning
    at_1 = [(2 * r, 2 * c, 2 * side, False) for r, c, side, _ in at_half]
    at_half_found = [(r, c, side, True) for r, c, side, _ in at_half]
    monkeypatch.setattr(est, "_outputs", _scripted_outputs(
        est.n_classes_, est.embedding_dim, {(32, 48): at_1, (16, 24): at_half_found}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = est.set_params(predict_scales="auto").predict(X)
    assert [m.max() for m in pred] == [4, 4]
    assert pred.shape == X.shape[:3]  # maps at the input size


def test_auto_scale_warns_when_no_scale_finds_the_training_size(fitted, monkeypatch):
    est = pickle.loads(pickle.dumps(fitted))
    est.object_size_ = 8.0
    # objects of 64 px at the input scale, 32 px at half scale: 4 times the training
    # size and more at every scale tried
    monkeypatch.setattr(est, "_outputs", _scripted_outputs(
        est.n_classes_, est.embedding_dim,
        {(32, 48): [(0, 0, 32, True)], (16, 24): [(0, 0, 16, True)]}))
    with pytest.warns(UserWarning, match=r"In 1 image\(s\) the instances found differ in "
                      r"typical size .* by more than a factor 2 at every scale .*"
                      r"X\[0\] \(scale 0.5: 32.0 px, scale 1: 64.0 px; predicted at scale "
                      r"0.5\)"):
        est.predict(np.zeros((1, 64, 96, 3), dtype=np.float32))


def test_auto_scale_warns_when_no_scale_finds_any_instance(fitted, monkeypatch):
    # Nothing found at any scale (e.g. pixels clipped to the depth seen in fit): the
    # warning says so instead of listing no sizes as if the instances were too large
    est = pickle.loads(pickle.dumps(fitted))
    est.object_size_ = 8.0
    monkeypatch.setattr(est, "_outputs", _scripted_outputs(
        est.n_classes_, est.embedding_dim, {}))
    with pytest.warns(UserWarning) as record:
        pred = est.predict(np.zeros((2, 64, 96, 3), dtype=np.float32))
    assert [m.max() for m in pred] == [0, 0]
    messages = [str(r.message) for r in record]
    assert len(messages) == 1, messages
    assert messages[0].startswith("No instances were found in 2 image(s) at any scale of "
                                  "predict_scales")
    assert "X[0]; X[1]" in messages[0] and "(;" not in messages[0]


def test_scale_is_backed_by_the_centres_found():
    from sklearn_papers.vision._scales import scale_is_backed

    assert scale_is_backed(1.0, {1.0: 30, 0.5: 0})
    assert scale_is_backed(0.5, {1.0: 30, 0.5: 24})  # within a factor 1.25
    assert not scale_is_backed(0.5, {1.0: 30, 0.5: 23})
    # no centre at the scale chosen: nothing confirms its instances are objects
    assert not scale_is_backed(0.5, {1.0: 0, 0.5: 0})
    assert not scale_is_backed(0.5, {1.0: 0, 0.5: 0, 0.25: 4})
    assert scale_is_backed(0.5, {1.0: 0, 0.5: 1})
    assert scale_is_backed(2.0, {1.0: 3})  # not tried: nothing against it
    # every scale between 1 and the one chosen counts: 0.25 finds about as many as
    # scale 1 but clearly fewer than 0.5 (objects joined past the size found at 0.5)
    assert not scale_is_backed(0.25, {0.25: 12, 0.5: 24, 1.0: 14})
    assert scale_is_backed(0.25, {0.25: 20, 0.5: 24, 1.0: 14})
    assert scale_is_backed(0.25, {0.25: 12, 1.0: 14})  # 0.5 not tried
    assert not scale_is_backed(4.0, {1.0: 10, 2.0: 40, 4.0: 20, 0.5: 100})


def test_centres_are_counted_as_centre_seeding_keeps_them():
    from sklearn_papers.vision._instance_grouping import _count_centres, _group_centers

    sem = np.zeros((8, 12), dtype=np.int64)
    sem[1:7, 1:5], sem[1:7, 6:11] = 1, 2
    heat = np.zeros(sem.shape, dtype=np.float32)
    heat[2, 2], heat[5, 3], heat[3, 8] = 0.9, 0.8, 0.75  # two in class 1, one in class 2
    emb = np.zeros((2,) + sem.shape, dtype=np.float32)
    assert _count_centres(sem, heat, emb, 0.7, 1.5) == 2  # the class-1 pair is one object
    emb[0, 5, 3] = 3.0  # now two objects by their embeddings
    assert _count_centres(sem, heat, emb, 0.7, 1.5) == 3
    _, _, scores = _group_centers(sem, heat, emb, 0.7, 1.5)
    assert sum(s > 0.7 for s in scores) == 3
    assert _count_centres(sem, heat, emb, 0.85, 1.5) == 1


def test_same_random_state_same_model_and_global_rng_untouched(data):
    torch.manual_seed(123)
    np.random.seed(123)
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()
    a = InstanceSegmenter(**SMALL).fit(data.images, data.instance_maps)
    pred_a = a.predict(data.images[:4])
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], np_state[1])
    b = InstanceSegmenter(**SMALL).fit(data.images, data.instance_maps)
    assert a.loss_curve_ == b.loss_curve_
    np.testing.assert_array_equal(pred_a, b.predict(data.images[:4]))
    assert a.n_classes_ == 1  # no semantic maps: one class
    c = InstanceSegmenter(**{**SMALL, "random_state": 1}).fit(data.images, data.instance_maps)
    assert a.loss_curve_ != c.loss_curve_


def test_pickle_and_clone(fitted, data):
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(data.images[:3]),
                                  fitted.predict(data.images[:3]))
    fresh = clone(fitted)
    assert fresh.get_params() == fitted.get_params()
    assert not hasattr(fresh, "net_")


def test_sample_weight_zero_equals_leaving_images_out(data):
    params = {**SMALL, "batch_size": 32, "norm": "group", "max_epochs": 2}
    n = 10
    w = np.r_[np.ones(n - 3), np.zeros(3)]
    weighted = InstanceSegmenter(**params).fit(data.images[:n], data.instance_maps[:n],
                                               semantic_maps=data.semantic_maps[:n],
                                               sample_weight=w)
    dropped = InstanceSegmenter(**params).fit(data.images[:n - 3], data.instance_maps[:n - 3],
                                              semantic_maps=data.semantic_maps[:n - 3])
    np.testing.assert_allclose(weighted.loss_curve_, dropped.loss_curve_, rtol=1e-4)
    np.testing.assert_allclose(weighted.class_weights_, dropped.class_weights_)
    out_w = weighted.predict_outputs(data.images[:2])[0]
    out_d = dropped.predict_outputs(data.images[:2])[0]
    np.testing.assert_allclose(out_w, out_d, atol=1e-4)
    with pytest.raises(ValueError, match="sample_weight"):
        InstanceSegmenter(**SMALL).fit(data.images[:4], data.instance_maps[:4],
                                       sample_weight=[1, 1])


def test_empty_images_and_absent_classes_are_handled(data):
    images = data.images[:6].copy()
    inst = data.instance_maps[:6].copy()
    sem = data.semantic_maps[:6].copy()
    inst[0], sem[0] = 0, 0  # an image with no objects
    est = InstanceSegmenter(**{**SMALL, "n_classes": 5}).fit(images, inst, semantic_maps=sem)
    assert est.n_classes_ == 5 and est.class_weights_.shape == (6,)
    assert np.isfinite(est.loss_curve_).all()
    blank = np.full((2, 24, 24, 3), 0.2, dtype=np.float32)
    assert est.predict(blank).shape == (2, 24, 24)


def test_fit_warns_when_no_image_has_an_instance(data):
    images, empty = data.images[:4], np.zeros_like(data.instance_maps[:4])
    with pytest.warns(UserWarning, match=r"y holds no instance in any of its 4 image\(s\)"
                      ) as caught:
        InstanceSegmenter(**{**SMALL, "max_epochs": 1}).fit(images, empty)
    assert caught[0].filename == __file__  # points at the caller's fit
    with warnings.catch_warnings():  # one image with instances is enough
        warnings.filterwarnings("error", message="y holds no instance")
        InstanceSegmenter(**{**SMALL, "max_epochs": 1}).fit(
            images, np.concatenate([empty[:3], data.instance_maps[3:4]]))


def test_odd_image_sizes_are_padded_and_cropped(data):
    est = InstanceSegmenter(**{**SMALL, "output_stride": 4, "max_epochs": 1})
    est.fit(data.images[:4, :23, :21], data.instance_maps[:4, :23, :21])
    assert est.predict(data.images[:2, :19, :22]).shape == (2, 19, 22)


def test_bad_inputs_raise_clear_errors(fitted, data):
    X, y, s = data.images[:4], data.instance_maps[:4], data.semantic_maps[:4]
    est = InstanceSegmenter(**SMALL)
    with pytest.raises(ValueError, match=r"y\[0\] has shape \(20, 24\) but its image is "
                                         r"\(24, 24\)"):
        est.fit(X, y[:, :20])
    with pytest.raises(ValueError, match=r"semantic_maps has 3 maps but there are 4 images"):
        est.fit(X, y, semantic_maps=s[:3])
    with pytest.raises(ValueError, match="integer labels"):
        est.fit(X, y + 0.5)
    with pytest.raises(ValueError, match="negative"):
        est.fit(X, y - 1)
    mixed = s.copy()
    i, r, c = np.argwhere(y > 0)[0]
    mixed[i, r, c] = mixed[i, r, c] % 3 + 1
    with pytest.raises(ValueError, match=f"Image {i}: instance {y[i, r, c]}"):
        est.fit(X, y, semantic_maps=mixed)
    with pytest.raises(ValueError, match="n_classes=2"):
        InstanceSegmenter(**{**SMALL, "n_classes": 2}).fit(X, y, semantic_maps=s)
    with pytest.raises(ValueError, match=r"one image.*X\[None\]"):
        est.fit(X[0], y)
    with pytest.raises(TypeError, match="numeric"):
        est.fit(np.full((2, 8, 8, 3), "a"), y[:2, :8, :8])
    bad = X.copy()
    bad[2, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"X\[2\] has non-finite"):
        est.fit(bad, y)
    with pytest.raises(ValueError, match="delta_v=2"):
        InstanceSegmenter(**{**SMALL, "delta_v": 2.0}).fit(X, y)
    with pytest.raises(ValueError, match="output_stride"):
        InstanceSegmenter(**{**SMALL, "output_stride": 3}).fit(X, y)
    with pytest.raises(ValueError, match="fitted on 3-channel images"):
        fitted.predict(X[..., 0])
    with pytest.raises(ValueError, match=r"X\[1\] has 1 channels but the model was fitted "
                                         "on 3"):
        fitted.predict([X[0], X[1, ..., :1]])
    with pytest.raises(NotFittedError):
        InstanceSegmenter().predict(X)


@pytest.mark.slow
def test_instance_segmenter_overfit():
    # the paper's SLIC upsampling: at output stride 2 on 32 x 32 scenes, nearest
    # neighbour upsampling alone costs the small objects their edges
    data = make_scenes(48, image_size=32, max_objects=4, random_state=0)
    est = InstanceSegmenter(width=16, max_epochs=40, slic=True, random_state=0)
    est.fit(data.images, data.instance_maps, semantic_maps=data.semantic_maps)
    assert est.score(data.images, data.instance_maps) > 0.8


def test_grid_search_with_segmentation_scorer(data):
    from sklearn.model_selection import GridSearchCV

    from sklearn_papers.metrics import make_segmentation_scorer

    search = GridSearchCV(InstanceSegmenter(**{**SMALL, "max_epochs": 1}),
                          {"delta_d": [1.0, 1.5]}, cv=2,
                          scoring=make_segmentation_scorer("mask_average_precision",
                                                           iou_thresholds=0.5))
    search.fit(data.images[:8], data.instance_maps[:8], semantic_maps=data.semantic_maps[:8])
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.predict(data.images[:1]).shape == (1, 24, 24)


def test_huge_instance_ids_are_relabelled_not_tabulated(data):
    X, y = data.images[:4], data.instance_maps[:4].astype(np.int64)
    params = {**SMALL, "max_epochs": 1}
    ref = InstanceSegmenter(**params).fit(X, y)
    big = np.where(y > 0, y + 2**40 + np.arange(4)[:, None, None] * 10**9, 0)
    est = InstanceSegmenter(**params).fit(X, big)  # MemoryError before
    assert est.loss_curve_ == ref.loss_curve_


def test_huge_semantic_label_without_n_classes_raises_naming_the_image(data):
    X, y = data.images[:3], data.instance_maps[:3]
    semantic = (y > 0).astype(np.int64)
    semantic[2][semantic[2] > 0] = 10**9  # an id, not a class: was a 10^9-output head
    with pytest.raises(ValueError, match=r"semantic_maps\[2\] has class 1000000000.*n_classes"):
        InstanceSegmenter(**{**SMALL, "max_epochs": 1}).fit(X, y, semantic_maps=semantic)
    semantic[2][semantic[2] > 0] = 3  # a small label is a class count, as documented
    est = InstanceSegmenter(**{**SMALL, "max_epochs": 1}).fit(X, y, semantic_maps=semantic)
    assert est.n_classes_ == 3


def test_images_of_different_sizes_fit_and_predict_as_lists(fitted, data):
    X, y = data.images[:4], data.instance_maps[:4]
    ragged = [X[0], X[1, :20], X[2, :, :17], X[3]]
    maps = [y[0], y[1, :20], y[2, :, :17], y[3]]
    est = InstanceSegmenter(**{**SMALL, "max_epochs": 1}).fit(ragged, maps)
    pred = est.predict(ragged)
    assert isinstance(pred, list) and [p.shape for p in pred] == [m.shape for m in maps]
    proba = est.predict_proba(ragged[1:3])
    assert [p.shape[:2] for p in proba] == [(20, 24), (24, 17)]
    assert 0 <= est.score(ragged, maps) <= 1
    with pytest.raises(ValueError, match=r"y\[1\] has shape \(24, 24\) but its image is "
                                         r"\(20, 24\)"):
        InstanceSegmenter(**SMALL).fit(ragged, y)
    with pytest.raises(ValueError, match=r"batch of images.*X\[None\]"):
        fitted.predict(X[0])
    assert fitted.predict(X[0][None]).shape == (1, 24, 24)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16, np.int16])
def test_integer_images_up_to_255_are_read_as_0_255(fitted, data, dtype):
    as_uint8 = np.round(data.images[:2] * 255).astype(np.uint8)
    ref = fitted.predict_outputs(as_uint8)
    for a, b in zip(fitted.predict_outputs(as_uint8.astype(dtype)), ref):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fitted.predict_outputs(as_uint8.astype(np.float32) / 255), ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("low, high, match", [
    (-1, 10, r"\[-1, 10\].*0\.\.255 \(8 bits\)"),
    (0, 70000, r"\[0, 70000\].*0\.\.65535 \(16 bits\)"),
])
def test_integer_images_beyond_their_bit_depth_are_refused(data, low, high, match):
    images = np.round(data.images[:3] * 255).astype(np.int64)
    images[2] = 5
    images[2, 0, 0, 0], images[2, 1, 1, 1] = low, high
    with pytest.raises(ValueError, match=r"X\[2\] has integer pixel values in " + match):
        InstanceSegmenter(**SMALL).fit(images, data.instance_maps[:3])


def test_uint64_ids_above_int64_are_reported_as_too_large(data):
    y = data.instance_maps[:2].astype(np.uint64)
    y[1][y[1] > 0] += np.uint64(2**63)
    with pytest.raises(ValueError, match=r"y\[1\] has a label too large "
                                         r"for int64 \(92233720368547758\d\d\)"):
        InstanceSegmenter(**SMALL).fit(data.images[:2], y)


def test_batch_norm_on_one_by_one_outputs_needs_two_images_per_batch():
    rng = np.random.RandomState(0)
    X = rng.rand(3, 2, 2, 3)
    y = np.zeros((3, 2, 2), dtype=int)
    y[:, 0, 0] = 1
    tiny = {"width": 4, "embedding_dim": 2, "max_epochs": 1, "random_state": 0,
            "input_scale": 1.0}
    with pytest.raises(ValueError, match="one image.*norm='batch'"):
        InstanceSegmenter(**tiny, batch_size=1).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="batch_size=1.*norm='group'"):
        InstanceSegmenter(**tiny, batch_size=1).fit(X, y)
    # 3 images in batches of 2: the last batch of one image is dropped
    est = InstanceSegmenter(**tiny, batch_size=2).fit(X, y)
    assert est.predict(X).shape == (3, 2, 2)
    with pytest.raises(ValueError, match="width=4 norm='group' has groups of one channel"):
        InstanceSegmenter(**tiny, batch_size=2, norm="group").fit(X, y)
    assert InstanceSegmenter(**tiny, batch_size=1, norm=None).fit(X[:1], y[:1]).n_iter_ == 1


def test_group_norm_refuses_one_by_one_outputs_at_predict_like_fit():
    rng = np.random.RandomState(0)
    X = rng.rand(2, 6, 6, 3)
    y = np.zeros((2, 6, 6), dtype=int)
    y[:, :3, :3] = 1
    est = InstanceSegmenter(width=8, embedding_dim=2, max_epochs=1, batch_size=2,
                            norm="group", input_scale=1.0, random_state=0).fit(X, y)
    small = rng.rand(1, 2, 2, 3)  # padded to output_stride=2: 1 x 1 outputs
    match = (r"X\[0\] is 2 x 2 pixels.*norm='group' with width=8.*"
             r"more than 2 pixels high or wide")
    for method in ("predict", "predict_outputs", "predict_proba", "predict_semantic",
                   "predict_instances"):
        with pytest.raises(ValueError, match=match):
            getattr(est, method)(small)
    with pytest.raises(ValueError, match=match):
        est.score(small, np.zeros((1, 2, 2), dtype=int))
    assert est.predict(rng.rand(1, 3, 2, 3)).shape == (1, 3, 2)  # 2 x 1 outputs: fine
    # the fitted network's settings decide, not set_params after fit
    with pytest.raises(ValueError, match=match):
        pickle.loads(pickle.dumps(est)).set_params(norm="batch", width=32).predict(small)


@pytest.mark.parametrize("value, match", [
    (2.0**63, r"\[1\] has a label too large for int64: .* = 9\.22"),
    (np.nan, r"\[1\] must hold integer labels; .*\[1\]\[\d+, \d+\] = nan\.$"),
    (2.5, r"\[1\] must hold integer labels; .*\[1\]\[\d+, \d+\] = 2\.5\.$"),
])
def test_float_labels_beyond_int64_or_non_integral_are_refused(data, value, match):
    for key in ("y", "semantic_maps"):
        maps = {"y": data.instance_maps[:2], "semantic_maps": data.semantic_maps[:2]}
        maps[key] = maps[key].astype(np.float64)
        maps[key][1][maps[key][1] > 0] = value
        with pytest.raises(ValueError, match=match):
            InstanceSegmenter(**SMALL).fit(data.images[:2], maps["y"],
                                           semantic_maps=maps["semantic_maps"])


def test_complex_images_are_refused_not_cast():
    # numpy would cast them to real with only a ComplexWarning, dropping the imaginary part
    small = make_scenes(2, image_size=16, max_objects=2, random_state=0)
    with pytest.raises(TypeError, match="real numeric array.*complex"):
        InstanceSegmenter(max_epochs=1).fit(small.images + 1j, small.instance_maps)


def test_ragged_image_list_names_the_odd_map():
    # images of different sizes are accepted; a map whose size differs from its image's
    # is named
    small = make_scenes(2, image_size=16, max_objects=2, random_state=0)
    X = [small.images[0], small.images[1], small.images[1][:8]]
    y = [small.instance_maps[0], small.instance_maps[1], small.instance_maps[1]]
    with pytest.raises(ValueError, match=r"y\[2\] has shape \(16, 16\) but its image is "
                                         r"\(8, 16\)"):
        InstanceSegmenter(max_epochs=1).fit(X, y)


@pytest.mark.parametrize("params, match", [
    ({"grouping": "kmeans"}, "grouping"),
    ({"center_threshold": 5}, "center_threshold"),
    ({"delta_d": -1}, "delta_d"),
    ({"slic": "yes"}, "slic"),
    ({"predict_scales": (1e6,)}, r"predict_scales holds 1000000.0"),
])
def test_parameters_set_after_fit_are_checked_at_predict(fitted, data, params, match):
    # predict reads them: unchecked, an unknown grouping raised a KeyError and the others
    # were used as given (a threshold of 5 finds no centre, a scale of 1e6 asked torch
    # for petabytes)
    est = pickle.loads(pickle.dumps(fitted)).set_params(**params)
    with pytest.raises(ValueError, match=match):
        est.predict(data.images[:1])


def test_output_stride_set_after_fit_does_not_change_predictions(fitted, data):
    # the network's outputs stay at the stride it was trained with; reading the new value
    # upsampled them by the wrong factor
    for stride in (1, 4, 8):
        est = pickle.loads(pickle.dumps(fitted)).set_params(output_stride=stride)
        np.testing.assert_array_equal(est.predict(data.images[:2]),
                                      fitted.predict(data.images[:2]))
        np.testing.assert_array_equal(est.predict_proba(data.images[:2]),
                                      fitted.predict_proba(data.images[:2]))


def test_score_checks_the_truth_before_running_the_network(fitted, data, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the network ran before y was checked")

    monkeypatch.setattr(type(fitted), "_outputs", fail)
    with pytest.raises(TypeError, match=r"y must be one \(H, W\) label map per image"):
        fitted.score(data.images[:2], None)
    with pytest.raises(ValueError, match=r"y has 1 maps but there are 2 images"):
        fitted.score(data.images[:2], data.instance_maps[:1])


def test_mean_shift_grouping_when_no_point_is_near_a_bin_centre():
    # In 16 dimensions, points at 0.74 on every axis lie 2.96 from their bin's centre (0),
    # beyond the bandwidth 1.5: bin seeding finds no neighbourhood; the grouping must
    # still return one instance for the one class.
    from sklearn_papers.vision._instance_grouping import _group_mean_shift

    sem = np.zeros((6, 6), dtype=np.int64)
    sem[1:4, 1:4] = 1
    emb = np.full((16, 6, 6), 0.74, dtype=np.float32)
    out, classes, scores = _group_mean_shift(sem, None, emb, 0.5, 1.5)
    assert classes == [1]
    assert scores == [1.0]
    assert np.array_equal(out, sem)


@pytest.mark.parametrize("scales, match", [
    (("2",), r"predict_scales\[0\] = '2' is the string '2'"),
    ((0.5, None), r"predict_scales\[1\] = None is a NoneType, not a real number"),
    ((1.0, -2.0), r"predict_scales\[1\] = -2.0 is not a finite positive number"),
    ([0.5, float("nan")], r"predict_scales\[1\] = nan is not a finite positive number"),
    ((np.array([0.5, 2.0]),), r"predict_scales\[0\] = array\(\[0.5, 2. \]\) is a ndarray"),
    ((1 + 0j,), r"predict_scales\[0\] = \(1\+0j\) is a complex"),
])
def test_predict_scales_names_the_wrong_entry(fitted, data, scales, match):
    # a string of digits was read as a number by float() and predicted at that scale;
    # the other entries were refused without saying which one was wrong
    est = pickle.loads(pickle.dumps(fitted)).set_params(predict_scales=scales)
    with pytest.raises(ValueError, match=match):
        est.predict(data.images[:1])
    with pytest.raises(ValueError, match=match):
        clone(fitted).set_params(predict_scales=scales).fit(data.images, data.instance_maps)


def test_centre_grouping_compares_each_pixel_with_its_own_components_centres():
    """Each pixel joins the closest centre (in embedding) of its own connected component:
    the same as comparing it with every centre of its class and ruling out the other
    components' ones; components without a centre score their heatmap maximum."""
    from scipy import ndimage

    from sklearn_papers.vision._instance_grouping import _class_centres, _group_centers

    rng = np.random.default_rng(0)
    for _ in range(10):
        sem = (rng.random((30, 40)) < 0.5) * rng.integers(1, 3, (30, 40))
        heat = rng.random((30, 40)).astype(np.float32)
        emb = rng.normal(size=(4, 30, 40)).astype(np.float32)
        out, classes, scores = _group_centers(sem, heat, emb, 0.7, 0.5)
        peaks = (heat >= ndimage.maximum_filter(heat, size=3, mode="constant")) & (
            heat > 0.7) & (sem > 0)
        for c in np.unique(sem[sem > 0]):
            pix = sem == c
            comp, _ = ndimage.label(pix)
            kept = _class_centres(pix, peaks, heat, emb, 0.5)
            centres = np.array([emb[:, r, q] for r, q in kept]).reshape(len(kept), 4)
            owner = np.array([comp[r, q] for r, q in kept], dtype=np.int64)
            ids = {out[r, q] for r, q in kept}
            assert len(ids) == len(kept)
            id_of = np.array([out[r, q] for r, q in kept])
            for r, q in zip(*np.nonzero(pix)):
                mine = owner == comp[r, q]
                if not mine.any():
                    assert out[r, q] not in ids
                    assert scores[out[r, q] - 1] == heat[comp == comp[r, q]].max()
                    continue
                d2 = ((centres - emb[:, r, q]) ** 2).sum(1)
                d2[~mine] = np.inf
                assert out[r, q] == id_of[np.argmin(d2)]
            assert all(classes[i - 1] == c for i in np.unique(out[pix]))


def test_auto_input_scale_rule():
    from sklearn_papers.vision._scales import auto_input_scale

    assert auto_input_scale(6.5, 10) == 2.0  # printed characters at output stride 2
    assert auto_input_scale(17.0, 10) == 1.0  # coins: left as they are
    assert auto_input_scale(10.0, 10) == 1.0
    assert auto_input_scale(1.0, 10) == 4.0  # at most 4
    assert auto_input_scale(float("nan"), 10) == 1.0


def test_input_scale_enlarges_small_objects():
    """Objects under 5 output strides across are seen enlarged; outputs keep the input
    size, and input_scale=1.0 keeps the images as given."""
    small = make_scenes(8, image_size=32, max_objects=8, random_state=0)
    est = InstanceSegmenter(**{**SMALL, "input_scale": "auto"}).fit(small.images,
                                                                     small.instance_maps)
    assert est.object_size_ < 10 and est.input_scale_ == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pred = est.predict(small.images[:2])
        proba = est.predict_proba(small.images[:2])
        outputs = est.predict_outputs(small.images[:2])
        ragged = est.predict([small.images[0], small.images[1][:20, :25]])
    assert pred.shape == (2, 32, 32)
    assert proba.shape == (2, 32, 32, 2)
    np.testing.assert_allclose(proba.sum(-1), 1.0, atol=1e-5)
    assert outputs[0].shape == (2, 2, 32, 32)  # 64 x 64 network input, stride 2
    assert ragged[1].shape == (20, 25)
    fixed = InstanceSegmenter(**SMALL).fit(small.images, small.instance_maps)
    assert fixed.input_scale_ == 1.0
    assert fixed.predict_outputs(small.images[:2])[0].shape == (2, 2, 16, 16)
    with pytest.raises(ValueError, match="input_scale"):
        InstanceSegmenter(input_scale=8.0).fit(small.images, small.instance_maps)
