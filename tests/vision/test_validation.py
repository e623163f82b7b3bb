"""Image input of the vision estimators: dtypes, layouts, sizes and one image for a batch."""

import warnings

import numpy as np
import pytest
import torch

from sklearn_papers.datasets import make_scenes
from sklearn_papers.nn._segmenter import JointSegmenterModule
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN
from sklearn_papers.vision._validation import check_images, integer_bit_depth

# input_scale=1.0: network pixels are input pixels in the messages these tests read
TINY_RCNN = dict(anchor_sizes=(4, 8, 16), width=8, max_epochs=1, batch_size=6,
                 rpn_pre_nms_top_n=50, rpn_post_nms_top_n=20, input_scale=1.0,
                 random_state=0)
TINY_SEG = dict(width=8, embedding_dim=2, max_epochs=1, batch_size=6, random_state=0)


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(6, image_size=32, random_state=0)


# ----------------------------------------------------------------------------- dtypes
def test_uint8_bool_and_unit_floats_are_read_in_0_1():
    rng = np.random.RandomState(0)
    u8 = rng.randint(0, 256, size=(2, 9, 9, 3)).astype(np.uint8)
    out = check_images(u8)
    assert len(out) == 2 and out[0].shape == (3, 9, 9) and out[0].dtype == np.float32
    np.testing.assert_array_equal(out[1], np.moveaxis(u8[1], -1, 0) / np.float32(255))
    b = rng.rand(2, 9, 9) > 0.5
    np.testing.assert_array_equal(check_images(b)[0][0], b[0].astype(np.float32))
    f = rng.rand(2, 9, 9).astype(np.float64)
    np.testing.assert_allclose(check_images(f)[1][0], f[1], rtol=1e-7)


def test_uint16_images_are_scaled_by_observed_or_declared_bit_depth():
    rng = np.random.RandomState(0)
    im = rng.randint(0, 4096, size=(2, 9, 9)).astype(np.uint16)
    im[0, 0, 0] = 4095  # 12-bit data stored as uint16
    assert integer_bit_depth(list(im)) == 12
    np.testing.assert_array_equal(check_images(im)[0][0], im[0] / np.float32(4095))
    np.testing.assert_array_equal(check_images(im, bits=16)[0][0],
                                  im[0] / np.float32(65535))
    with pytest.raises(ValueError, match=r"X\[0\] has integer pixel values in \[\d+, 4095\]"
                                         r".*0\.\.1023 \(10 bits\).*bit_depth"):
        check_images(im, bits=10)
    assert integer_bit_depth([np.zeros((3, 3), np.uint8)]) is None  # uint8 is always 8-bit


@pytest.mark.parametrize("low, high, hint", [(0.0, 255.0, "divide by 255"),
                                             (0.0, 1.26, r"clip them to \[0, 1\]"),
                                             (-0.5, 0.5, "rescale it")])
def test_float_images_outside_0_1_raise_with_the_fix_and_the_index(low, high, hint):
    X = np.full((3, 9, 9), 0.5)
    X[2, 0, 0], X[2, 0, 1] = low, high
    with pytest.raises(ValueError, match=rf"X\[2\] has float pixel values .*\[0, 1\]: .*{hint}"):
        check_images(X)
    X[2, 0, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[2\] has non-finite"):
        check_images(X)


@pytest.mark.parametrize("high, bits, hint", [
    (4000.0, None, "12-bit intensities: divide by 4095"),
    (1000.0, None, "10-bit intensities: divide by 1023"),
    (60000.0, None, "16-bit intensities: divide by 65535"),
    (1000.0, 12, "12-bit intensities: divide by 4095"),  # the depth of fit holds it
    (70000.0, None, "rescale it")])
def test_float_images_of_integer_intensities_get_their_bit_depth(high, bits, hint):
    # floats holding 12-bit camera values: dividing by the depth keeps the scaling of
    # fit, a per-image min-max rescaling does not
    X = np.full((2, 9, 9), 0.5)
    X[1, 0, 0], X[1, 0, 1] = 0.0, high
    with pytest.raises(ValueError, match=rf"X\[1\] has float pixel values .*{hint}") as info:
        check_images(X, bits=bits)
    if "bit" in hint:
        assert "image.min()" not in str(info.value)


def test_float_images_in_0_255_are_refused_by_both_estimators(scenes):
    X = scenes.images * 255
    for est in (MaskRCNN(**TINY_RCNN), InstanceSegmenter(**TINY_SEG)):
        with pytest.raises(ValueError, match=r"X\[0\] has float pixel values.*divide by 255"):
            est.fit(X, scenes.instance_maps)


def test_uint16_fit_keeps_its_bit_depth_for_predict(scenes):
    X12 = np.round(scenes.images * 4095).astype(np.uint16)
    est = InstanceSegmenter(**TINY_SEG).fit(X12, scenes.instance_maps)
    assert est.bit_depth_ == 12
    as_float = X12.astype(np.float32) / 4095
    for a, b in zip(est.predict_outputs(X12[:2]), est.predict_outputs(as_float[:2])):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    too_bright = X12[:2].copy()
    too_bright[1, 0, 0, 0] = 5000
    # a depth found in fit: brighter pixels saturate at it, with a warning
    with pytest.warns(UserWarning, match=r"X\[1\] has pixel values up to 5000, beyond the "
                                         r"12-bit range \(0\.\.4095\).*clipped to 4095"):
        clipped = est.predict_outputs(too_bright)
    saturated = too_bright.copy()
    saturated[1, 0, 0, 0] = 4095
    for a, b in zip(clipped, est.predict_outputs(saturated)):
        np.testing.assert_array_equal(a, b)  # the same input to the same network
    # a declared depth is a contract: values beyond it raise
    declared = InstanceSegmenter(**TINY_SEG, bit_depth=12).fit(X12, scenes.instance_maps)
    with pytest.raises(ValueError, match=r"X\[1\] has integer pixel values in \[\d+, 5000\].*"
                                         r"0\.\.4095 \(12 bits\)"):
        declared.predict(too_bright)
    assert InstanceSegmenter(**TINY_SEG, bit_depth=16).fit(
        X12, scenes.instance_maps).bit_depth_ == 16


def test_integer_images_at_predict_after_a_uint8_fit_warn_that_their_depth_is_inferred(
        scenes):
    import warnings

    X8 = np.round(scenes.images * 255).astype(np.uint8)
    X16 = np.round(scenes.images[:2] * 4095).astype(np.uint16)
    for est in (InstanceSegmenter(**TINY_SEG), MaskRCNN(**TINY_RCNN)):
        est.fit(X8, scenes.instance_maps)
        assert est.bit_depth_ is None
        with pytest.warns(UserWarning, match=r"X\[1\] is a uint16 image.*read as 12-bit"
                                             r".*bit_depth=12"):
            est.predict([X8[0], X16[1]])
        def inferred(X, est=est):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est.predict(X)
            return any("no bit depth was kept" in str(w.message) for w in caught)

        assert not inferred([X8[0], X8[1].astype(np.float32) / 255])  # nothing to infer
        # a depth kept from fit is used as it is
        kept = type(est)(**est.get_params()).set_params(bit_depth=16).fit(
            X8, scenes.instance_maps)
        assert not inferred(X16, kept)


def test_mask_rcnn_clips_images_brighter_than_the_depth_found_in_fit(scenes):
    X12 = np.round(scenes.images * 4095).astype(np.uint16)
    est = MaskRCNN(**TINY_RCNN).fit(X12, scenes.instance_maps)
    too_bright = X12[:2].copy()
    too_bright[0, 0, 0, 0] = 65535
    with pytest.warns(UserWarning, match=r"X\[0\] has pixel values up to 65535.*clipped"):
        est.predict_detections(too_bright)


# ----------------------------------------------------------------------------- layouts
def test_lists_of_images_of_different_sizes_and_layouts():
    rng = np.random.RandomState(0)
    items = [rng.rand(10, 12), rng.rand(9, 14, 1), rng.rand(1, 11, 13)]
    out = check_images(items)
    assert [o.shape for o in out] == [(1, 10, 12), (1, 9, 14), (1, 11, 13)]
    with pytest.raises(ValueError, match=r"X\[1\] has 3 channels but X\[0\] has 1"):
        check_images([rng.rand(10, 12), rng.rand(10, 12, 3)])
    with pytest.raises(ValueError, match=r"X\[1\] must be one image of shape"):
        check_images([rng.rand(10, 12), rng.rand(2, 10, 12, 3)])
    with pytest.raises(ValueError, match=r"X\[1\] is 10 x 3 pixels"):
        check_images([rng.rand(10, 12), rng.rand(10, 3)], min_size=8)
    with pytest.raises(ValueError, match="0 images"):
        check_images([])


@pytest.mark.parametrize("shape, n_channels", [((32, 32), None), ((32, 32, 3), None),
                                               ((32, 32, 3), 3), ((3, 32, 32), 3),
                                               ((32, 32, 1), 1)])
def test_one_image_where_a_batch_is_expected_raises_saying_so(shape, n_channels):
    with pytest.raises(ValueError, match=r"one .*image.*X\[None\]"):
        check_images(np.zeros(shape), n_channels=n_channels)


def test_grey_batches_still_work():
    assert len(check_images(np.zeros((5, 32, 32)), n_channels=1)) == 5
    assert len(check_images(np.zeros((1, 32, 32)), n_channels=1)) == 1
    assert len(check_images(np.zeros((3, 16, 16)))) == 3


@pytest.mark.parametrize("grey", [False, True])
def test_estimators_refuse_one_image_for_a_batch(scenes, grey):
    X = scenes.images.mean(-1, keepdims=True) if grey else scenes.images
    y = scenes.instance_maps
    rcnn = MaskRCNN(**TINY_RCNN).fit(X, y)
    seg = InstanceSegmenter(**TINY_SEG).fit(X, y)
    singles = [X[0]] + ([] if grey else [np.moveaxis(X[0], -1, 0)])
    calls = [(rcnn, m) for m in ("predict", "predict_detections")] + [
        (seg, m) for m in ("predict", "predict_proba", "predict_semantic",
                           "predict_instances", "predict_outputs")]
    for one in singles:
        for est, method in calls:
            with pytest.raises(ValueError, match=r"one image.*batch.*X\[None\]"):
                getattr(est, method)(one)
        for est in (rcnn, seg):
            with pytest.raises(ValueError, match=r"one image.*batch.*X\[None\]"):
                est.score(one, y[0])
    for est in (rcnn, seg):
        assert est.predict(X[:1]).shape == (1, 32, 32)
    if grey:
        assert seg.predict(X[:2, ..., 0]).shape == (2, 32, 32)
        assert rcnn.predict(X[:2, ..., 0]).shape == (2, 32, 32)


# ----------------------------------------------------------------------------- sizes
def test_mask_rcnn_fits_images_of_different_sizes_and_predicts_any_size(scenes):
    X = [scenes.images[0], scenes.images[1, :24], scenes.images[2, :, :20], scenes.images[3]]
    y = [scenes.instance_maps[0], scenes.instance_maps[1, :24],
         scenes.instance_maps[2, :, :20], scenes.instance_maps[3]]
    est = MaskRCNN(**{**TINY_RCNN, "anchor_sizes": None}).fit(X, y)
    assert len(est.anchor_sizes_) == 3 and est.anchor_sizes_[0] < est.anchor_sizes_[2]
    lo, hi = est.object_sizes_
    assert 0 < lo <= hi <= 32
    pred = est.predict(X)
    assert [p.shape for p in pred] == [m.shape for m in y]
    big = np.tile(scenes.images[:1], (1, 2, 3, 1))  # (1, 64, 96, 3)
    assert est.predict(big).shape == (1, 64, 96)
    assert 0 <= est.score(X, y) <= 1


def test_mask_rcnn_chooses_anchor_sizes_from_the_training_boxes():
    from sklearn_papers.vision._mask_rcnn import _auto_anchor_sizes

    boxes = np.array([[0, 0, 10, 10], [0, 0, 20, 20], [0, 0, 40, 40]] * 5, dtype=np.float32)
    sizes = _auto_anchor_sizes(boxes)
    assert sizes[0] == pytest.approx(10) and sizes[2] == pytest.approx(40)
    assert sizes[1] == pytest.approx(20)
    same = _auto_anchor_sizes(np.array([[0, 0, 20, 20]] * 4, dtype=np.float32))
    np.testing.assert_allclose(same, [20 / np.sqrt(2), 20, 20 * np.sqrt(2)], rtol=1e-3)


def test_mask_rcnn_warns_about_images_at_an_unlearned_scale(scenes):
    est = MaskRCNN(**TINY_RCNN).fit(scenes.images, scenes.instance_maps)
    big = np.repeat(np.repeat(scenes.images[:1], 3, axis=1), 3, axis=2)  # objects 3x larger
    # no detection can reach a threshold of 1: "no object found" on every image
    est.set_params(instance_score_threshold=1.0)
    # no object found at the training scale: the threshold warning, not the scale one
    with pytest.warns(UserWarning, match="below instance_score_threshold") as record:
        est.predict(scenes.images[:1])
    assert not any("found no object" in str(w.message) for w in record)
    assert not any("px across" in str(w.message) for w in record)
    with pytest.warns(UserWarning, match=r"found no object in X\[0\] \(96 x 96.*9 times"):
        est.predict(big)
    # detections much larger than the training objects: both sizes and the scales named
    est.set_params(instance_score_threshold=0.5)
    size = 3 * est.object_size_
    fake = [{"boxes": np.array([[0, 0, size, size]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    match = (rf"detections in X\[0\] are {size:.1f} px across .*predicted at scale 1\).*"
             rf"object_size_={est.object_size_:.1f} px\); predict_scales='auto' found "
             rf"scale 0.5: 20.0 px \(3 objects\), scale 1: {size:.1f} px \(9 objects\)")
    with pytest.warns(UserWarning, match=match):
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(1.0, {0.5: 20.0, 1.0: size, 2.0: float("nan")},
                          {0.5: 3.0, 1.0: 9.0, 2.0: 0.0})])
    # within a factor 2 at the scale kept, but another scale was closer and refused
    kept = 1.6 * est.object_size_
    fake = [{"boxes": np.array([[0, 0, kept, kept]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    with pytest.warns(UserWarning, match=r"kept scale 1 for X\[0\] .*another scale found "
                                         r"detections closer.*\(2 objects\)"):
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(1.0, {0.5: est.object_size_, 1.0: kept}, {0.5: 2.0, 1.0: 9.0})])
    # a little closer with half the objects (pieces at the kept scale): warned from 5
    # objects on, not below (a few detections give a noisy typical size)
    kept = 1.2 * est.object_size_
    fake = [{"boxes": np.array([[0, 0, kept, kept]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    with pytest.warns(UserWarning, match=r"kept scale 1 for X\[0\] .*\(170 objects\)"):
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(1.0, {0.5: est.object_size_, 1.0: kept}, {0.5: 170.0, 1.0: 340.0})])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(1.0, {0.5: est.object_size_, 1.0: kept}, {0.5: 3.0, 1.0: 7.0})])
    # kept at half scale, where the objects are found: quarter scale joins them into
    # fewer detections of about the training size, which is no sign against the kept one
    fake = [{"boxes": np.array([[0, 0, kept, kept]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    joined = {0.25: est.object_size_, 0.5: kept, 1.0: 2 * kept}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(0.5, joined, {0.25: 12.0, 0.5: 30.0, 1.0: 20.0})])
    # as many there as at the kept scale, and closer by the margin: warned
    wide = 1.6 * est.object_size_
    fake = [{"boxes": np.array([[0, 0, wide, wide]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    with pytest.warns(UserWarning, match=r"kept scale 0.5 for X\[0\]"):
        est._warn_scale(fake, [(np.zeros((3, 32, 32)), (1.0, 1.0))],
                        [(0.5, {**joined, 0.5: wide}, {0.25: 30.0, 0.5: 30.0, 1.0: 20.0})])
    # within a factor 2 of object_size_: no warning
    side = 1.5 * est.object_size_
    near = [{"boxes": np.array([[0, 0, side, side]], dtype=np.float32),
             "scores": np.array([0.9], dtype=np.float32)}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est._warn_scale(near, [(np.zeros((3, 32, 32)), (1.0, 1.0))])


def test_embeddings_hold_pixel_offsets_that_do_not_depend_on_the_image_size():
    """A pixel's embedding is the same in an image and in a larger image that extends it
    at the bottom and right (away from the new border), and shifts by the shift in pixels
    (in units of 32 px) when the content shifts."""
    torch.manual_seed(0)
    net = JointSegmenterModule(3, n_classes=1, width=8, decoder_width=8).eval()
    rng = np.random.RandomState(0)
    big = torch.tensor(rng.rand(1, 3, 128, 128), dtype=torch.float32)
    with torch.no_grad():
        e_small = net(big[:, :, :48, :48])[2]
        e_big = net(big)[2]
        e_shift = net(big[:, :, 16:, 32:])[2]  # content moved up 16 px and left 32 px
    torch.testing.assert_close(e_big[..., :8, :8], e_small[..., :8, :8], rtol=1e-5,
                               atol=1e-5)
    # output stride 2: a shift of 16 px is 8 cells, of 32 px 16 cells
    expected = e_big[..., 16 + 8:24 + 8, 16 + 16:24 + 16].clone()
    expected[:, 0] -= 16 / 32
    expected[:, 1] -= 32 / 32
    torch.testing.assert_close(e_shift[..., 16:24, 16:24], expected, rtol=1e-5, atol=1e-5)


def test_mask_rcnn_proposal_budget_grows_with_the_image_area(scenes, monkeypatch):
    """An image 4 times the training area keeps 4 times the proposals, and an image at
    least 4 after NMS (8 before, per level) per object of the most crowded training
    image; the module's settings are restored afterwards."""
    est = MaskRCNN(**TINY_RCNN).fit(scenes.images, scenes.instance_maps)
    module = est.net_.module_
    seen = []
    detect = module.detect

    def spy(images, owned=None, flip=False):
        seen.append((tuple(images.shape[-2:]), module.rpn_pre_nms_top_n,
                     module.rpn_post_nms_top_n))
        return detect(images, owned, flip)

    monkeypatch.setattr(module, "detect", spy)
    big = np.tile(scenes.images[:1], (1, 2, 2, 1))  # 64 x 64: 4 times the area
    est.set_params(predict_scales=(1.0,), predict_tile_size=None)
    est.predict_detections([scenes.images[0], big[0]])
    most = max(len(np.unique(m)) - 1 for m in scenes.instance_maps)
    assert 4 * most > 20  # the floor is above rpn_post_nms_top_n here
    pre, post = max(50, 8 * most), max(20, 4 * most)
    assert sorted(seen) == [((32, 32), pre, post), ((64, 64), 4 * pre, 4 * post)]
    assert (module.rpn_pre_nms_top_n, module.rpn_post_nms_top_n) == (50, 20)


@pytest.mark.parametrize("item, kind", [(None, "NoneType None"),
                                        ("scene.png", "str 'scene.png'"),
                                        (b"\x89PNG", "bytes")])
def test_a_list_item_that_is_no_array_is_named_with_its_type(item, kind):
    # it was read as a 0-d array: "X[1] must be one image ...; got shape ()", which did
    # not say that a file name or a missing image was passed
    image = np.zeros((8, 8, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=rf"X\[1\] is {kind}.*not an image.*imread"):
        check_images([image, item])
