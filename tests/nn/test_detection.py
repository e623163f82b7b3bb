"""Detection pieces (nn/_detection.py) against naive references written here."""

import itertools
import math

import numpy as np
import pytest
import torch

from sklearn_papers.nn._detection import (
    RoIAlign,
    RoIPool,
    batched_nms,
    box_iou,
    clip_boxes,
    decode_boxes,
    encode_boxes,
    grid_anchors,
    nms,
    nms_mask,
    roi_align,
    roi_pool,
)


# ----------------------------------------------------------------------------- references
def _bilinear(fmap, y, x):
    """One bilinear read of a (C, H, W) map as in the paper's RoIAlign (Detectron's
    bilinear_interpolate): outside [-1, size] -> 0, clamped at the borders."""
    _, h, w = fmap.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return fmap.new_zeros(fmap.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return (hy * hx * fmap[:, y0, x0] + hy * lx * fmap[:, y0, x1]
            + ly * hx * fmap[:, y1, x0] + ly * lx * fmap[:, y1, x1])


def _roi_align_reference(features, rois, out, scale, sr, aligned):
    res = []
    off = 0.5 if aligned else 0.0
    for roi in rois.tolist():
        b = int(roi[0])
        x1, y1, x2, y2 = (v * scale - off for v in roi[1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / out, rw / out
        # sr <= 0: torchvision's adaptive grid, ceil(bin size) points per axis
        gh, gw = (sr, sr) if sr > 0 else (math.ceil(bh), math.ceil(bw))
        cells = []
        for ph, pw in itertools.product(range(out), range(out)):
            acc = features.new_zeros(features.shape[1])
            for iy, ix in itertools.product(range(gh), range(gw)):
                y = y1 + ph * bh + (iy + 0.5) * bh / gh
                x = x1 + pw * bw + (ix + 0.5) * bw / gw
                acc = acc + _bilinear(features[b], y, x)
            cells.append(acc / max(gh * gw, 1))
        res.append(torch.stack(cells, 1).reshape(-1, out, out))
    return torch.stack(res)


def _roi_pool_reference(features, rois, out, scale):
    res = []
    _, c, h, w = features.shape
    for roi in rois.tolist():
        b = int(roi[0])
        # C's round(): half away from zero (Python's round() is half to even)
        x1, y1, x2, y2 = (int(math.copysign(math.floor(abs(v * scale) + 0.5), v * scale))
                          for v in roi[1:])
        rw, rh = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        cell = torch.zeros(c, out, out, dtype=features.dtype)
        cells = []
        for ph, pw in itertools.product(range(out), range(out)):
            hs = min(max(int(math.floor(ph * rh / out)) + y1, 0), h)
            he = min(max(int(math.ceil((ph + 1) * rh / out)) + y1, 0), h)
            ws = min(max(int(math.floor(pw * rw / out)) + x1, 0), w)
            we = min(max(int(math.ceil((pw + 1) * rw / out)) + x1, 0), w)
            if he <= hs or we <= ws:
                cells.append(cell[:, 0, 0] * 0)
            else:
                cells.append(features[b, :, hs:he, ws:we].amax(dim=(1, 2)))
        res.append(torch.stack(cells, 1).reshape(-1, out, out))
    return torch.stack(res)


def _iou_python(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
             + max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1]) - inter)
    return inter / union if union > 0 else 0.0


def _greedy_nms(boxes, scores, thr):
    """The classic loop: take the best remaining box, drop those overlapping it."""
    b, s = boxes.tolist(), scores.tolist()
    order = sorted(range(len(s)), key=lambda i: (-s[i], i))
    keep = []
    for i in order:
        if all(_iou_python(b[i], b[j]) <= thr for j in keep):
            keep.append(i)
    return keep


def _random_rois(rng, n_images, k, size):
    xy = rng.uniform(-3, size + 2, size=(k, 2, 2))
    lo, hi = xy.min(1), xy.max(1)
    rois = np.concatenate([rng.randint(n_images, size=(k, 1)), lo[:, :1], lo[:, 1:],
                           hi[:, :1], hi[:, 1:]], 1)
    rois[0, 3] = rois[0, 1]  # a zero-width box
    rois[1, 1:] = [2.0, 3.0, 2.0, 3.0]  # a point
    return torch.tensor(rois, dtype=torch.float64)


# ----------------------------------------------------------------------------- RoIAlign
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("scale, sr", [(1.0, 2), (0.5, 1), (0.25, 3), (1.0, 0), (0.5, -1)])
def test_roi_align_matches_pointwise_reference_values_and_gradients(aligned, scale, sr,
                                                                    global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    feats = torch.tensor(rng.normal(size=(2, 2, 7, 9)), requires_grad=True)
    rois = _random_rois(rng, 2, 5, 9 / scale)
    out = roi_align(feats, rois, 3, scale, sr, aligned)
    ref = _roi_align_reference(feats, rois, 3, scale, sr, aligned)
    assert out.shape == (5, 2, 3, 3)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=0, atol=1e-12)
    weights = torch.tensor(rng.normal(size=out.shape))
    g, = torch.autograd.grad((out * weights).sum(), feats)
    g_ref, = torch.autograd.grad((ref * weights).sum(), feats)
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=0, atol=1e-12)
    if scale == 1.0:
        assert torch.autograd.gradcheck(
            lambda f: roi_align(f, rois[:3], 2, scale, sr, aligned), (feats,), eps=1e-6)


def test_roi_align_is_exact_on_linear_ramps():
    """Bilinear interpolation reproduces a linear function exactly (away from borders)."""
    h = w = 10
    yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float64),
                            torch.arange(w, dtype=torch.float64), indexing="ij")
    feats = (2 * xx + 3 * yy)[None, None]
    rois = torch.tensor([[0, 2.0, 3.0, 6.0, 7.0]], dtype=torch.float64)
    out = roi_align(feats, rois, 2, 1.0, 2, aligned=True)[0, 0]
    # bin centres: x = 3, 5 ; y = 4, 6 in image coordinates -> cell index - 0.5
    expected = torch.tensor([[2 * 2.5 + 3 * 3.5, 2 * 4.5 + 3 * 3.5],
                             [2 * 2.5 + 3 * 5.5, 2 * 4.5 + 3 * 5.5]], dtype=torch.float64)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-12)


def test_roi_align_module_empty_rois_and_errors():
    feats = torch.zeros(1, 2, 4, 4)
    layer = RoIAlign(3, 0.5, 2, True)
    assert layer(feats, torch.zeros(0, 5)).shape == (0, 2, 3, 3)
    with pytest.raises(ValueError, match="batch indices"):
        layer(feats, torch.tensor([[1.0, 0, 0, 2, 2]]))
    with pytest.raises(ValueError, match=r"\(K, 5\)"):
        layer(feats, torch.zeros(3, 4))
    with pytest.raises(TypeError, match="sampling_ratio"):
        roi_align(feats, torch.zeros(1, 5), 2, sampling_ratio=1.5)
    # adaptive sampling of a zero-size RoI reads no point (torchvision's 0)
    assert not roi_align(torch.ones(1, 2, 4, 4), torch.tensor([[0.0, 1, 1, 1, 1]]), 2,
                         sampling_ratio=0, aligned=True).any()


def test_roi_align_adaptive_sampling_grows_with_the_roi():
    """sampling_ratio <= 0 reads ceil(bin size) points per axis: on a map that is
    quadratic in x (where the number of points matters), a 12-cell-wide RoI in 2 bins
    equals a fixed grid of 6 points, not of 2."""
    xx = torch.arange(16, dtype=torch.float64)[None].expand(16, 16)
    feats = (xx**2)[None, None]
    rois = torch.tensor([[0, 2.0, 2.0, 14.0, 14.0]], dtype=torch.float64)
    adaptive = roi_align(feats, rois, 2, 1.0, -1)
    torch.testing.assert_close(adaptive, roi_align(feats, rois, 2, 1.0, 6), rtol=0,
                               atol=1e-12)
    assert not torch.allclose(adaptive, roi_align(feats, rois, 2, 1.0, 2))


class _LargestTensor:
    """Largest number of elements of any tensor an op makes inside the context."""

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        outer = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for t in torch.utils._pytree.tree_leaves(out):
                    if isinstance(t, torch.Tensor):
                        outer.largest = max(outer.largest, t.numel())
                return out

        self.largest = 0
        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)


@pytest.mark.parametrize("pool", [roi_align, roi_pool])
def test_roi_pooling_memory_does_not_grow_with_rois_times_the_map(pool):
    """No tensor of the forward or backward pass is as large as n_rois x feature map: 500
    RoIs on a 64 x 64 map with 8 channels (500 x 32768 elements) keep every tensor below
    a few times the output (500 x 8 x 7 x 7) or the map itself."""
    rng = np.random.RandomState(0)
    feats = torch.tensor(rng.normal(size=(2, 8, 64, 64)), dtype=torch.float32,
                         requires_grad=True)
    rois = _random_rois(rng, 2, 500, 64).float()
    with _LargestTensor() as probe:
        out = pool(feats, rois, 7)
        out.sum().backward()
    bound = 8 * out.numel() + feats.numel()
    assert probe.largest <= bound
    assert probe.largest < 500 * 8 * 64 * 64 / 10


# ----------------------------------------------------------------------------- RoIPool
@pytest.mark.parametrize("scale", [1.0, 0.5, 0.25])
def test_roi_pool_matches_reference_values_and_gradients(scale, global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    feats = torch.tensor(rng.normal(size=(2, 3, 7, 9)), requires_grad=True)
    rois = _random_rois(rng, 2, 6, 9 / scale)
    rois[2, 1:] = torch.tensor([0.5, 1.5, 2.5, 4.5]) / scale  # exact halves
    out = RoIPool(3, scale)(feats, rois)
    ref = _roi_pool_reference(feats, rois, 3, scale)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    weights = torch.tensor(rng.normal(size=out.shape))
    g, = torch.autograd.grad((out * weights).sum(), feats)
    g_ref, = torch.autograd.grad((ref * weights).sum(), feats)
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), atol=1e-12)


def test_roi_pool_quantises_where_roi_align_does_not():
    """Shifting a box by a fraction of a cell changes RoIAlign's output, not RoIPool's."""
    rng = np.random.RandomState(0)
    feats = torch.tensor(rng.normal(size=(1, 1, 8, 8)))
    a = torch.tensor([[0, 8.0, 8.0, 24.0, 24.0]], dtype=torch.float64)
    b = a + torch.tensor([[0, 1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)  # 1/4 cell
    assert torch.equal(roi_pool(feats, a, 2, 0.25), roi_pool(feats, b, 2, 0.25))
    assert not torch.allclose(roi_align(feats, a, 2, 0.25), roi_align(feats, b, 2, 0.25))


# ----------------------------------------------------------------------------- NMS
def test_nms_matches_brute_force_greedy_loop(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    for _ in range(5):
        n = rng.randint(1, 60)
        xy = rng.uniform(0, 30, size=(n, 2))
        wh = rng.uniform(0, 12, size=(n, 2))
        boxes = torch.tensor(np.concatenate([xy, xy + wh], 1))
        boxes[0, 2] = boxes[0, 0]  # a degenerate box
        scores = torch.tensor(rng.choice(np.arange(10.0), size=n))  # ties included
        for thr in (0.3, 0.5, 0.7):
            assert nms(boxes, scores, thr).tolist() == _greedy_nms(boxes, scores, thr)


def test_batched_nms_separates_groups_and_mask_form_agrees(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    n = 40
    xy = rng.uniform(0, 20, size=(n, 2))
    boxes = torch.tensor(np.concatenate([xy, xy + rng.uniform(1, 10, size=(n, 2))], 1))
    scores = torch.tensor(rng.uniform(size=n))
    groups = torch.tensor(rng.randint(3, size=n))
    kept = set(batched_nms(boxes, scores, groups, 0.5).tolist())
    expected = set()
    for g in range(3):
        idx = torch.nonzero(groups == g).squeeze(1)
        expected |= {int(idx[i]) for i in _greedy_nms(boxes[idx], scores[idx], 0.5)}
    assert kept == expected
    # padded batch form: two rows, the second a copy of the first with padding
    valid = torch.ones(2, n, dtype=torch.bool)
    valid[1, n // 2:] = False
    mask = nms_mask(boxes[None].repeat(2, 1, 1), scores[None].repeat(2, 1), valid,
                    groups[None].repeat(2, 1), 0.5)
    assert set(torch.nonzero(mask[0]).squeeze(1).tolist()) == expected
    half = set()
    for g in range(3):
        idx = torch.nonzero(groups[: n // 2] == g).squeeze(1)
        half |= {int(idx[i]) for i in _greedy_nms(boxes[idx], scores[idx], 0.5)}
    assert set(torch.nonzero(mask[1]).squeeze(1).tolist()) == half


@pytest.mark.parametrize("block, pairs", [(4, 16), (7, 50), (16, 1)])
def test_nms_of_large_sets_in_blocks_keeps_what_the_dense_form_keeps(
        monkeypatch, global_random_seed, block, pairs):
    """Rows too large for one pairwise matrix are resolved block by block, with the same
    answer as the greedy loop, with groups and padding."""
    from sklearn_papers.nn import _detection

    rng = np.random.RandomState(global_random_seed)
    n = 60
    xy = rng.uniform(0, 20, size=(2, n, 2))
    boxes = torch.tensor(np.concatenate([xy, xy + rng.uniform(1, 10, size=(2, n, 2))], -1))
    scores = torch.tensor(rng.choice(np.arange(12.0), size=(2, n)))  # ties included
    groups = torch.tensor(rng.randint(3, size=(2, n)))
    valid = torch.tensor(rng.uniform(size=(2, n)) > 0.2)
    dense = nms_mask(boxes, scores, valid, groups, 0.5)
    monkeypatch.setattr(_detection, "_NMS_BLOCK", block)
    monkeypatch.setattr(_detection, "_NMS_PAIRS", pairs)
    assert torch.equal(nms_mask(boxes, scores, valid, groups, 0.5), dense)
    assert torch.equal(nms_mask(boxes, scores, valid, None, 0.5),
                       nms_mask(boxes, scores, valid, torch.zeros_like(groups), 0.5))
    one = boxes[0, valid[0]]
    assert nms(one, scores[0, valid[0]], 0.5).tolist() == _greedy_nms(
        one, scores[0, valid[0]], 0.5)


def test_nms_of_no_boxes():
    assert nms(torch.zeros(0, 4), torch.zeros(0), 0.5).shape == (0,)


# ----------------------------------------------------------------------------- boxes
def test_box_iou_known_values_and_degenerate_boxes():
    a = torch.tensor([[0.0, 0, 2, 2], [0, 0, 0, 2]])
    b = torch.tensor([[1.0, 1, 3, 3], [0, 0, 2, 2], [0, 0, 0, 2]])
    iou = box_iou(a, b)
    np.testing.assert_allclose(iou.numpy(), [[1 / 7, 1, 0], [0, 0, 0]], atol=1e-7)
    assert torch.isfinite(iou).all()


def test_encode_decode_round_trip(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    ref = rng.uniform(0, 50, size=(30, 2))
    ref = torch.tensor(np.concatenate([ref, ref + rng.uniform(1, 20, size=(30, 2))], 1))
    tgt = rng.uniform(0, 50, size=(30, 2))
    tgt = torch.tensor(np.concatenate([tgt, tgt + rng.uniform(1, 20, size=(30, 2))], 1))
    for weights in ((1.0, 1.0, 1.0, 1.0), (10.0, 10.0, 5.0, 5.0)):
        deltas = encode_boxes(ref, tgt, weights)
        np.testing.assert_allclose(decode_boxes(ref, deltas, weights).numpy(), tgt.numpy(),
                                   atol=1e-10)
    # identity, and k sets of deltas per box
    np.testing.assert_allclose(decode_boxes(ref, torch.zeros(30, 8)).numpy(),
                               ref.repeat(1, 2).numpy(), atol=1e-12)


def test_encode_zero_width_target_is_finite_and_decode_is_clamped():
    ref = torch.tensor([[0.0, 0, 4, 4]])
    tgt = torch.tensor([[1.0, 1, 1, 3]])
    d = encode_boxes(ref, tgt)
    assert torch.isfinite(d).all()
    out = decode_boxes(ref, torch.tensor([[0.0, 0, 1e4, 1e4]]))
    assert torch.isfinite(out).all()


def test_clip_boxes():
    b = torch.tensor([[-2.0, 3, 70, 80]])
    assert clip_boxes(b, 64, 60).tolist() == [[0.0, 3.0, 60.0, 64.0]]


# ----------------------------------------------------------------------------- anchors
def test_anchors_for_a_known_image_size():
    # 16 x 24 image, stride 8 -> a 2 x 3 feature map; 2 sizes x 3 ratios per cell
    anchors = grid_anchors((2, 3), 8, (8, 16), (0.5, 1.0, 2.0), dtype=torch.float64)
    assert anchors.shape == (2 * 3 * 6, 4)
    a = anchors.reshape(2, 3, 6, 4)
    # centres at cell centres
    np.testing.assert_allclose(((a[..., 0] + a[..., 2]) / 2)[0, :, 0].numpy(), [4, 12, 20])
    np.testing.assert_allclose(((a[..., 1] + a[..., 3]) / 2)[:, 0, 0].numpy(), [4, 12])
    w = a[0, 0, :, 2] - a[0, 0, :, 0]
    h = a[0, 0, :, 3] - a[0, 0, :, 1]
    np.testing.assert_allclose((w * h).numpy(), [64] * 3 + [256] * 3, rtol=1e-12)
    np.testing.assert_allclose((h / w).numpy(), [0.5, 1, 2] * 2, rtol=1e-12)
    # size 8, ratio 1 at cell (0, 0) is the cell itself
    np.testing.assert_allclose(a[0, 0, 1].numpy(), [0, 0, 8, 8], atol=1e-12)


# ----------------------------------------------------------------------------- bad input
def _nms_data():
    b = torch.tensor([[0., 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]])
    s = torch.tensor([0.9, 0.8, 0.7])
    return b, s


@pytest.mark.parametrize("call, match", [
    (lambda b, s: nms(b, s[:2], 0.5), r"scores must have shape \(3,\)"),
    (lambda b, s: nms(b, s[:, None], 0.5), r"scores must have shape \(3,\)"),
    (lambda b, s: nms(b[:, :3], s, 0.5), r"boxes must have shape \(N, 4\)"),
    (lambda b, s: nms(b, torch.tensor([0.9, float("nan"), 0.7]), 0.5), "scores must be finite"),
    (lambda b, s: nms(b.clone().fill_(float("inf")), s, 0.5), "boxes must be finite"),
    (lambda b, s: nms(b, s, 2.0), r"iou_threshold must be in \[0, 1\]"),
    (lambda b, s: nms(b, s, -0.1), r"iou_threshold must be in \[0, 1\]"),
    (lambda b, s: nms(b, s, float("nan")), r"iou_threshold must be in \[0, 1\]"),
    (lambda b, s: batched_nms(b, s, torch.tensor([0, 1]), 0.5),
     r"groups must have shape \(3,\)"),
    (lambda b, s: batched_nms(b, s, torch.tensor([0., 1, 1]), 0.5), "groups must be an integer"),
    (lambda b, s: batched_nms(b, s, torch.tensor([0, 1, 1]), 1.5), "iou_threshold"),
])
def test_nms_rejects_bad_input(call, match):
    b, s = _nms_data()
    with pytest.raises(ValueError, match=match):
        call(b, s)


def test_nms_rejects_non_tensors():
    b, s = _nms_data()
    with pytest.raises(TypeError, match="boxes must be a torch.Tensor"):
        nms(b.numpy(), s, 0.5)
    with pytest.raises(TypeError, match="scores must be a torch.Tensor"):
        batched_nms(b, s.numpy(), torch.tensor([0, 0, 1]), 0.5)
    with pytest.raises(TypeError, match="iou_threshold"):
        nms(b, s, "0.5")


def test_nms_valid_edge_cases_still_work():
    b, s = _nms_data()
    assert nms(b, s, 0.0).tolist() == [0, 2]
    assert nms(b, s, 1.0).tolist() == [0, 1, 2]
    assert nms(b[:0], s[:0], 0.5).numel() == 0
    assert batched_nms(b, s, torch.tensor([0, 0, 1]), torch.tensor(0.5)).tolist() == [0, 2]


@pytest.mark.parametrize("pool", [roi_align, roi_pool])
def test_roi_pooling_rejects_bad_input(pool):
    features = torch.randn(2, 3, 8, 8)
    good = torch.tensor([[0., 1, 1, 5, 5], [1, 0, 0, 8, 8]])
    nan = good.clone()
    nan[0, 3] = float("nan")
    with pytest.raises(ValueError, match="rois must be finite"):
        pool(features, nan, 2)
    frac = good.clone()
    frac[1, 0] = 0.5
    with pytest.raises(ValueError, match="integer batch indices"):
        pool(features, frac, 2)
    out = good.clone()
    out[1, 0] = 2
    with pytest.raises(ValueError, match=r"batch indices in \[0, 2\)"):
        pool(features, out, 2)
    for size in (0, (2, 0), -1):
        with pytest.raises(ValueError, match="output_size must be >= 1"):
            pool(features, good, size)
    with pytest.raises(TypeError, match="output_size"):
        pool(features, good, 2.5)
    for scale in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="spatial_scale must be a finite number > 0"):
            pool(features, good, 2, scale)
    assert pool(features, good, (2, 3), 0.5).shape == (2, 3, 2, 3)
    assert pool(features, good, np.int64(2)).shape == (2, 3, 2, 2)


# ----------------------------------------------------------------------------- half precision
# Boxes of about 910 x 665 px whose areas overflow float16 (65504): suppression must not fail
_BIG_BOXES = [[285.35, 185.58, 1193.51, 851.46], [285.15, 188.74, 1192.50, 851.07],
              [279.24, 197.98, 1189.47, 849.20]]
_BIG_SCORES = [0.637, 0.757, 0.397]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_nms_of_large_half_precision_boxes_matches_float32(dtype):
    boxes = torch.tensor(_BIG_BOXES).to(dtype)
    scores = torch.tensor(_BIG_SCORES).to(dtype)
    expected = nms(boxes.float(), scores.float(), 0.2)
    assert expected.tolist() == [1]
    keep = nms(boxes, scores, 0.2)
    assert keep.dtype == torch.int64 and torch.equal(keep, expected)
    keep = batched_nms(boxes, scores, torch.zeros(3, dtype=torch.long), 0.2)
    assert torch.equal(keep, expected)
    two = torch.tensor([[0.0, 0, 200, 200], [1, 1, 201, 201]]).to(dtype)
    assert nms(two, torch.tensor([0.9, 0.8]).to(dtype), 0.5).tolist() == [0]
    assert nms(two.float(), torch.tensor([0.9, 0.8]), 0.5).tolist() == [0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_box_iou_of_large_half_precision_boxes_is_computed_in_float32(dtype):
    boxes = torch.tensor(_BIG_BOXES).to(dtype)
    iou = box_iou(boxes, boxes)
    assert iou.dtype == torch.float32
    expected = box_iou(boxes.float(), boxes.float())  # the same (rounded) coordinates
    torch.testing.assert_close(iou, expected, rtol=1e-6, atol=0)
    torch.testing.assert_close(torch.diagonal(iou), torch.ones(3))
    assert float(iou[0, 1]) > 0.9
