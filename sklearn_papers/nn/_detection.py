"""Detection building blocks in pure torch: boxes, IoU, NMS, anchors, RoIAlign and RoIPool.

Boxes are ``(x1, y1, x2, y2)`` in pixels of the image (continuous coordinates: the pixel
``(i, j)`` covers ``[j, j + 1) x [i, i + 1)``). RoIs are ``(K, 5)`` tensors
``(batch_index, x1, y1, x2, y2)``. Everything is vectorised over boxes, RoIs and images: no
Python loop runs over RoIs.

References
----------
He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV, section 3
(RoIAlign) and Fig. 3. Girshick, R. (2015). Fast R-CNN. ICCV (RoIPool, box parametrisation).
Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN. NeurIPS (anchors, RPN).
"""

import math
import operator

import torch

__all__ = [
    "RoIAlign",
    "RoIPool",
    "batched_nms",
    "box_area",
    "box_iou",
    "clip_boxes",
    "decode_boxes",
    "encode_boxes",
    "grid_anchors",
    "nms",
    "nms_mask",
    "roi_align",
    "roi_pool",
]

#: Largest log width/height ratio a decoded delta may have (as in Detectron: log(1000 / 16)).
_MAX_LOG_SCALE = math.log(1000.0 / 16)


# ----------------------------------------------------------------------------- boxes
def _upcast(t):
    """float16 / bfloat16 to float32 (products of coordinates overflow float16 past 65504:
    square boxes of side above about 181 px), other dtypes unchanged, as torchvision does."""
    if t.is_floating_point() and t.dtype in (torch.float16, torch.bfloat16):
        return t.float()
    return t


def box_area(boxes):
    """Areas of ``(..., 4)`` boxes; degenerate boxes (x2 < x1 or y2 < y1) have area 0.

    float16 and bfloat16 boxes are upcast to float32 first (the area of a 256 x 256 box
    overflows float16), so the areas are float32 for them.
    """
    boxes = _upcast(boxes)
    w = (boxes[..., 2] - boxes[..., 0]).clamp(min=0)
    h = (boxes[..., 3] - boxes[..., 1]).clamp(min=0)
    return w * h


def box_iou(a, b):
    """Intersection over union of every pair of boxes.

    Parameters
    ----------
    a : Tensor of shape (..., N, 4)
    b : Tensor of shape (..., M, 4)
        Leading dimensions (e.g. images) broadcast.

    Returns
    -------
    iou : Tensor of shape (..., N, M)
        0 where the union is empty (two zero-area boxes), never NaN. float16 and bfloat16
        boxes are upcast to float32 (areas and unions of boxes above about 181 px
        overflow float16), so the IoU is float32 for them; other dtypes are kept.
    """
    a, b = _upcast(a), _upcast(b)
    lt = torch.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = torch.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    union = box_area(a)[..., :, None] + box_area(b)[..., None, :] - inter
    return torch.where(union > 0, inter / union.clamp(min=torch.finfo(a.dtype).tiny), 0.0)


def encode_boxes(reference, target, weights=(1.0, 1.0, 1.0, 1.0)):
    """Regression targets of ``target`` boxes relative to ``reference`` boxes.

    The parametrisation of Fast/Faster R-CNN: ``dx = wx (x - x_a) / w_a``,
    ``dy = wy (y - y_a) / h_a``, ``dw = ww log(w / w_a)``, ``dh = wh log(h / h_a)`` with box
    centres ``(x, y)`` and sizes ``(w, h)``.

    Parameters
    ----------
    reference, target : Tensor of shape (N, 4)
        Reference boxes (anchors or proposals) must have positive width and height; target
        sizes are clamped to a tiny positive value (a zero-width target gives a finite,
        very negative ``dw``).
    weights : tuple of 4 floats, default=(1, 1, 1, 1)
        ``(wx, wy, ww, wh)``; Fast R-CNN's box head uses ``(10, 10, 5, 5)``.

    Returns
    -------
    deltas : Tensor of shape (N, 4)
    """
    wx, wy, ww, wh = weights
    eps = torch.finfo(reference.dtype).eps
    rw = (reference[:, 2] - reference[:, 0]).clamp(min=eps)
    rh = (reference[:, 3] - reference[:, 1]).clamp(min=eps)
    rx = reference[:, 0] + 0.5 * rw
    ry = reference[:, 1] + 0.5 * rh
    tw = (target[:, 2] - target[:, 0]).clamp(min=eps)
    th = (target[:, 3] - target[:, 1]).clamp(min=eps)
    tx = target[:, 0] + 0.5 * tw
    ty = target[:, 1] + 0.5 * th
    return torch.stack([wx * (tx - rx) / rw, wy * (ty - ry) / rh,
                        ww * torch.log(tw / rw), wh * torch.log(th / rh)], dim=1)


def decode_boxes(reference, deltas, weights=(1.0, 1.0, 1.0, 1.0)):
    """Inverse of :func:`encode_boxes`: boxes from ``reference`` boxes and ``deltas``.

    Parameters
    ----------
    reference : Tensor of shape (N, 4)
    deltas : Tensor of shape (N, 4 * k)
        ``k`` sets of deltas per reference box (e.g. one per class).
    weights : tuple of 4 floats, default=(1, 1, 1, 1)

    Returns
    -------
    boxes : Tensor of shape (N, 4 * k)
        ``dw`` and ``dh`` are clamped at ``log(1000 / 16)`` so that ``exp`` cannot overflow.
    """
    wx, wy, ww, wh = weights
    rw = reference[:, 2] - reference[:, 0]
    rh = reference[:, 3] - reference[:, 1]
    rx = reference[:, 0] + 0.5 * rw
    ry = reference[:, 1] + 0.5 * rh
    d = deltas.reshape(deltas.shape[0], -1, 4)
    cx = d[..., 0] / wx * rw[:, None] + rx[:, None]
    cy = d[..., 1] / wy * rh[:, None] + ry[:, None]
    w = torch.exp((d[..., 2] / ww).clamp(max=_MAX_LOG_SCALE)) * rw[:, None]
    h = torch.exp((d[..., 3] / wh).clamp(max=_MAX_LOG_SCALE)) * rh[:, None]
    out = torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)
    return out.reshape(deltas.shape)


def clip_boxes(boxes, height, width):
    """Clip ``(..., 4)`` boxes to the image ``[0, width] x [0, height]``."""
    x = boxes[..., 0::2].clamp(0, width)
    y = boxes[..., 1::2].clamp(0, height)
    return torch.stack([x[..., 0], y[..., 0], x[..., 1], y[..., 1]], dim=-1)


# ----------------------------------------------------------------------------- NMS
def _check_iou_threshold(iou_threshold):
    try:
        if isinstance(iou_threshold, (str, bytes)):
            raise TypeError
        value = float(iou_threshold)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"iou_threshold must be a real number in [0, 1], got "
                        f"{iou_threshold!r}.") from None
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"iou_threshold must be in [0, 1], got {iou_threshold!r}.")
    return value


def _check_nms_inputs(boxes, scores, groups, iou_threshold, groups_name="groups"):
    """Validate the inputs of :func:`nms` / :func:`batched_nms` (one device sync)."""
    for name, value in (("boxes", boxes), ("scores", scores)) + (
            () if groups is None else ((groups_name, groups),)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must have shape (N, 4), got {tuple(boxes.shape)}.")
    n = boxes.shape[0]
    if scores.shape != (n,):
        raise ValueError(f"scores must have shape ({n},) to match boxes "
                         f"{tuple(boxes.shape)}, got {tuple(scores.shape)}.")
    if groups is not None:
        if groups.shape != (n,):
            raise ValueError(f"{groups_name} must have shape ({n},) to match boxes "
                             f"{tuple(boxes.shape)}, got {tuple(groups.shape)}.")
        if groups.dtype.is_floating_point or groups.dtype.is_complex:
            raise ValueError(f"{groups_name} must be an integer tensor, got dtype "
                             f"{groups.dtype}.")
    if n and not bool(torch.isfinite(boxes).all() & torch.isfinite(scores).all()):
        bad = "boxes" if not bool(torch.isfinite(boxes).all()) else "scores"
        raise ValueError(f"{bad} must be finite (no NaN or inf).")
    return _check_iou_threshold(iou_threshold)


def batched_nms(boxes, scores, groups, iou_threshold):
    """Greedy non-maximum suppression within each group, all groups at once.

    A box is kept when no kept box of the same group with a higher score (ties broken by
    the lower index) overlaps it with IoU above ``iou_threshold``: the result of the
    classic greedy loop. It is computed without a loop over boxes as the fixed point of
    ``keep_j = not any_i(suppresses[i, j] and keep_i)`` on the pairwise IoU matrix, which is
    unique (the relation is triangular in score order) and reached after as many
    vectorised passes as the longest chain of suppressions.

    Parameters
    ----------
    boxes : Tensor of shape (N, 4)
        ``(x1, y1, x2, y2)`` boxes.
    scores : Tensor of shape (N,)
        Higher is better.
    groups : Tensor of shape (N,) of int
        Boxes of different groups (classes, images, or their combination) never suppress
        each other.
    iou_threshold : float
        Boxes with IoU strictly greater than this are suppressed.

    Returns
    -------
    keep : Tensor of shape (n_kept,) of int64
        Indices of the kept boxes, by decreasing score.

    Raises
    ------
    TypeError
        If ``boxes``, ``scores`` or ``groups`` is not a tensor.
    ValueError
        If ``boxes`` is not ``(N, 4)``, ``scores`` or ``groups`` not ``(N,)``, ``groups``
        not integer, ``boxes`` or ``scores`` not finite, or ``iou_threshold`` not in
        ``[0, 1]``.

    See Also
    --------
    nms : One group.

    References
    ----------
    .. [1] Girshick, R., Donahue, J., Darrell, T. and Malik, J. (2014). Rich feature
       hierarchies for accurate object detection and semantic segmentation. CVPR (greedy
       NMS). :doi:`10.1109/CVPR.2014.81`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import batched_nms
    >>> boxes = torch.tensor([[0., 0, 10, 10], [1, 1, 10, 10], [1, 1, 10, 10]])
    >>> batched_nms(boxes, torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 0, 1]), 0.5)
    tensor([0, 2])
    """
    iou_threshold = _check_nms_inputs(boxes, scores, groups, iou_threshold)
    return _batched_nms(boxes, scores, groups, iou_threshold)


def _batched_nms(boxes, scores, groups, iou_threshold):
    """:func:`batched_nms` on validated inputs."""
    n = boxes.shape[0]
    if n == 0:
        return torch.zeros(0, dtype=torch.long, device=boxes.device)
    order = torch.sort(scores, descending=True, stable=True).indices
    keep = nms_mask(boxes[order][None], scores[order][None],
                    torch.ones(1, n, dtype=torch.bool, device=boxes.device),
                    groups[order][None], iou_threshold, presorted=True)[0]
    return order[keep]


#: Most box pairs :func:`nms_mask` compares at once: larger sets go row by row, in blocks
#: of :data:`_NMS_BLOCK` boxes, so that memory stays proportional to the number of boxes.
_NMS_PAIRS = 1 << 22
_NMS_BLOCK = 512


def _suppresses(a, b, ga, gb, iou_threshold):
    """``(..., A, B)`` bool: box ``a[i]`` overlaps box ``b[j]`` of its group by IoU above
    the threshold (``inter > threshold * union``: no division)."""
    x1a, y1a, x2a, y2a = a.unbind(-1)
    x1b, y1b, x2b, y2b = b.unbind(-1)
    iw = (torch.minimum(x2a[..., :, None], x2b[..., None, :])
          - torch.maximum(x1a[..., :, None], x1b[..., None, :])).clamp_(min=0)
    ih = (torch.minimum(y2a[..., :, None], y2b[..., None, :])
          - torch.maximum(y1a[..., :, None], y1b[..., None, :])).clamp_(min=0)
    inter = iw.mul_(ih)
    union = box_area(a)[..., :, None] + box_area(b)[..., None, :] - inter
    sup = inter > union.mul_(iou_threshold)
    sup &= inter > 0
    if ga is not None:
        sup &= ga[..., :, None] == gb[..., None, :]
    return sup


def _greedy_dense(bx, v, g, iou_threshold):
    """Greedy NMS of sorted ``(B, T, 4)`` rows with one ``(B, T, T)`` suppression matrix:
    a box is kept when no kept box before it suppresses it (iterated to the fixed
    point, which is the greedy loop's answer)."""
    t = bx.shape[1]
    sup = _suppresses(bx, bx, g, g, iou_threshold)
    sup &= v[:, :, None] & v[:, None, :]
    sup = torch.triu(sup, diagonal=1).to(torch.float32)
    keep = v.clone()
    for _ in range(t):
        new = v & (torch.bmm(keep.to(torch.float32)[:, None, :], sup)[:, 0] == 0)
        if torch.equal(new, keep):
            break
        keep = new
    return keep


def _greedy_blocked(bx, v, g, iou_threshold):
    """Greedy NMS of one sorted ``(T, 4)`` row in blocks of :data:`_NMS_BLOCK` boxes: each
    block is resolved densely, then its kept boxes suppress the later boxes still
    alive, at most :data:`_NMS_PAIRS` pairs at a time. The same comparisons as
    :func:`_greedy_dense`, so the same answer."""
    t = bx.shape[0]
    alive = v.clone()
    keep = torch.zeros_like(v)
    for s in range(0, t, _NMS_BLOCK):
        e = min(s + _NMS_BLOCK, t)
        gb = None if g is None else g[None, s:e]
        keep[s:e] = _greedy_dense(bx[None, s:e], alive[None, s:e], gb, iou_threshold)[0]
        kept = torch.nonzero(keep[s:e]).flatten() + s
        rest = torch.nonzero(alive[e:]).flatten() + e
        if not len(kept) or not len(rest):
            continue
        step = max(1, _NMS_PAIRS // len(kept))
        for r0 in range(0, len(rest), step):
            r = rest[r0:r0 + step]
            sup = _suppresses(bx[kept], bx[r], None if g is None else g[kept],
                              None if g is None else g[r], iou_threshold).any(0)
            alive[r[sup]] = False
    return keep


def nms_mask(boxes, scores, valid, groups, iou_threshold, *, presorted=False):
    """Greedy NMS of a padded batch of box sets, one set per row, all rows at once.

    Sets of up to about 2000 boxes per row are compared all pairs at once; larger ones
    row by row in blocks of 512 boxes, so that memory grows with the number of boxes,
    not with its square (the same answer either way).

    Parameters
    ----------
    boxes : Tensor of shape (B, T, 4)
    scores : Tensor of shape (B, T)
    valid : Tensor of shape (B, T) of bool
        Padding entries (False) neither are kept nor suppress.
    groups : Tensor of shape (B, T) of int or None
        Within a row, boxes of different groups do not suppress each other.
    iou_threshold : float
    presorted : bool, default=False
        Whether each row is already sorted by decreasing score.

    Returns
    -------
    keep : Tensor of shape (B, T) of bool
        The boxes the greedy loop keeps (see :func:`batched_nms`).
    """
    b, t = scores.shape
    if t == 0:
        return valid.clone()
    if presorted:
        order = torch.arange(t, device=scores.device).expand(b, t)
    else:
        order = torch.sort(torch.where(valid, scores, -torch.inf), dim=1, descending=True,
                           stable=True).indices
    # float16 / bfloat16: areas and unions in float32 (they overflow float16 beyond 65504)
    bx = torch.gather(_upcast(boxes), 1, order[..., None].expand(b, t, 4))
    v = torch.gather(valid, 1, order)
    g = None if groups is None else torch.gather(groups, 1, order)
    if b * t * t <= _NMS_PAIRS:
        keep = _greedy_dense(bx, v, g, iou_threshold)
    else:
        keep = torch.stack([_greedy_blocked(bx[i], v[i], None if g is None else g[i],
                                            iou_threshold) for i in range(b)])
    out = torch.zeros_like(valid)
    out.scatter_(1, order, keep)
    return out


def nms(boxes, scores, iou_threshold):
    """Greedy non-maximum suppression of one set of boxes (see :func:`batched_nms`).

    Parameters
    ----------
    boxes : Tensor of shape (N, 4)
        ``(x1, y1, x2, y2)`` boxes.
    scores : Tensor of shape (N,)
        Higher is better.
    iou_threshold : float
        Boxes with IoU strictly greater than this are suppressed.

    Returns
    -------
    keep : Tensor of shape (n_kept,) of int64
        Indices of the kept boxes, by decreasing score.

    Raises
    ------
    TypeError
        If ``boxes`` or ``scores`` is not a tensor.
    ValueError
        If ``boxes`` is not ``(N, 4)``, ``scores`` not ``(N,)``, either not finite, or
        ``iou_threshold`` not in ``[0, 1]``.

    See Also
    --------
    batched_nms : Several groups (classes, images) at once.

    References
    ----------
    .. [1] Girshick, R., Donahue, J., Darrell, T. and Malik, J. (2014). Rich feature
       hierarchies for accurate object detection and semantic segmentation. CVPR (greedy
       NMS). :doi:`10.1109/CVPR.2014.81`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import nms
    >>> boxes = torch.tensor([[0., 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]])
    >>> nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5)
    tensor([0, 2])
    """
    iou_threshold = _check_nms_inputs(boxes, scores, None, iou_threshold)
    return _batched_nms(boxes, scores, torch.zeros(len(boxes), dtype=torch.long,
                                                  device=boxes.device), iou_threshold)


# ----------------------------------------------------------------------------- anchors
def grid_anchors(feature_size, stride, sizes, aspect_ratios, *, device=None,
                 dtype=torch.float32):
    """Anchor boxes of one feature map.

    Anchor centres sit at the centres of the feature cells, ``((j + 0.5) * stride,
    (i + 0.5) * stride)``; at each cell, one anchor per ``(size, ratio)`` of area
    ``size ** 2`` and height / width ``ratio``.

    Parameters
    ----------
    feature_size : tuple of int
        ``(height, width)`` of the feature map.
    stride : int or float
        Image pixels per feature cell.
    sizes : sequence of float
        Anchor sizes (square root of the area) in image pixels.
    aspect_ratios : sequence of float
        Height / width ratios.
    device, dtype : torch device and dtype of the result.

    Returns
    -------
    anchors : Tensor of shape (height * width * A, 4)
        ``A = len(sizes) * len(aspect_ratios)``, ordered by cell (row-major) then by
        ``(size, ratio)``: the layout of an RPN output ``(A, height, width)`` permuted to
        ``(height, width, A)``.
    """
    h, w = feature_size
    sizes = torch.as_tensor(sizes, dtype=dtype, device=device)
    ratios = torch.as_tensor(aspect_ratios, dtype=dtype, device=device)
    hs = (sizes[:, None] * torch.sqrt(ratios)[None, :]).reshape(-1)
    ws = (sizes[:, None] / torch.sqrt(ratios)[None, :]).reshape(-1)
    base = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
    cy = (torch.arange(h, dtype=dtype, device=device) + 0.5) * stride
    cx = (torch.arange(w, dtype=dtype, device=device) + 0.5) * stride
    cy, cx = torch.meshgrid(cy, cx, indexing="ij")
    centres = torch.stack([cx, cy, cx, cy], dim=-1).reshape(-1, 1, 4)
    return (centres + base[None]).reshape(-1, 4)


# ----------------------------------------------------------------------------- RoIAlign
def _check_rois(features, rois, output_size, spatial_scale):
    """Validate RoI pooling inputs; returns ``(P_h, P_w)``. One device sync on success."""
    for name, value in (("features", features), ("rois", rois)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
    if features.dim() != 4:
        raise ValueError(f"features must be (N, C, H, W), got shape {tuple(features.shape)}.")
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise ValueError(f"rois must be (K, 5) rows (batch_index, x1, y1, x2, y2), got shape "
                         f"{tuple(rois.shape)}.")
    ph, pw = _pair(output_size)
    try:
        if isinstance(spatial_scale, (str, bytes)):
            raise TypeError
        scale = float(spatial_scale)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"spatial_scale must be a real number, got {spatial_scale!r}.") from None
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"spatial_scale must be a finite number > 0, got {spatial_scale!r}.")
    n = features.shape[0]
    if rois.shape[0]:
        r = rois.detach()
        idx = r[:, 0]
        finite = torch.isfinite(r).all() if r.dtype.is_floating_point else True
        integral = (idx == torch.floor(idx)).all() if r.dtype.is_floating_point else True
        in_range = ((idx >= 0) & (idx < n)).all()
        if not bool(finite & integral & in_range):
            if not bool(finite):
                raise ValueError("rois must be finite (no NaN or inf in the batch indices or "
                                 "box coordinates).")
            if not bool(integral):
                raise ValueError("rois[:, 0] must be integer batch indices, got fractional "
                                 "values.")
            raise ValueError(f"rois[:, 0] must be batch indices in [0, {n}), got values in "
                             f"[{int(idx.min())}, {int(idx.max())}].")
    return ph, pw


def _pair(size):
    try:
        pair = (operator.index(size),) * 2
    except TypeError:
        try:
            pair = tuple(operator.index(v) for v in size)
        except TypeError:
            raise TypeError(f"output_size must be an int or a pair of ints, got "
                            f"{size!r}.") from None
    if len(pair) != 2:
        raise TypeError(f"output_size must be an int or a pair of ints, got {size!r}.")
    if pair[0] < 1 or pair[1] < 1:
        raise ValueError(f"output_size must be >= 1, got {size!r}.")
    return pair


def _interpolation_matrix(start, bin_size, n_bins, grid, size):
    """1-D RoIAlign weights ``(K, n_bins, size)``: the weight of each feature cell in each
    bin, averaged over the bin's ``grid`` (K,) sampling points, as in the paper's RoIAlign
    (Detectron's ``bilinear_interpolate``): a point below -1 or above ``size`` contributes
    0 (it lies outside the map); one in [-1, 0] is read at 0; one at or beyond the last
    cell is read at the last cell. A RoI with ``grid == 0`` gets zero weights."""
    k = start.shape[0]
    dtype, device = start.dtype, start.device
    out = torch.zeros(k, n_bins, size, dtype=dtype, device=device)
    n_points = int(grid.max()) if k else 0
    if n_points == 0:
        return out
    g = grid.clamp(min=1).to(dtype)[:, None]
    bins = torch.arange(n_bins, dtype=dtype, device=device)
    points = torch.arange(n_points, dtype=dtype, device=device) + 0.5
    # (K, n_bins, n_points): every sampling point of every bin at once
    coords = (start[:, None, None] + bins[None, :, None] * bin_size[:, None, None]
              + points[None, None] * (bin_size[:, None] / g)[..., None])
    valid = ((coords >= -1.0) & (coords <= size)
             & (points[None] < grid[:, None].to(dtype))[:, None])
    c = coords.clamp(min=0)
    low = torch.floor(c).long()
    at_end = low >= size - 1
    low = torch.where(at_end, torch.full_like(low, size - 1), low)
    high = torch.where(at_end, low, low + 1)
    c = torch.where(at_end, low.to(dtype), c)
    frac = c - low.to(dtype)
    out.scatter_add_(-1, torch.cat([low, high], -1),
                     torch.cat([(1 - frac) * valid, frac * valid], -1))
    return out / g[..., None]


def _roi_align_matrices(boxes, output_size, map_size, spatial_scale, sampling_ratio,
                        aligned):
    """RoIAlign's interpolation matrices ``A_y (K, P_h, H)`` and ``A_x (K, P_w, W)`` of
    ``(K, 4)`` boxes in image coordinates on a map of ``(H, W)`` cells (see
    :func:`roi_align`; inputs already validated)."""
    (ph, pw), (h, w) = output_size, map_size
    k = boxes.shape[0]
    offset = 0.5 if aligned else 0.0
    x1 = boxes[:, 0] * spatial_scale - offset
    y1 = boxes[:, 1] * spatial_scale - offset
    x2 = boxes[:, 2] * spatial_scale - offset
    y2 = boxes[:, 3] * spatial_scale - offset
    rw, rh = x2 - x1, y2 - y1
    if not aligned:
        rw, rh = rw.clamp(min=1.0), rh.clamp(min=1.0)
    bin_h, bin_w = rh / ph, rw / pw
    if sampling_ratio > 0:
        grid_h = torch.full((k,), sampling_ratio, dtype=torch.long, device=boxes.device)
        grid_w = grid_h
    else:  # adaptive, as torchvision: ceil(RoI size / bins) points per bin and axis
        grid_h = torch.ceil(bin_h).long().clamp(min=0)
        grid_w = torch.ceil(bin_w).long().clamp(min=0)
    return (_interpolation_matrix(y1, bin_h, ph, grid_h, h),
            _interpolation_matrix(x1, bin_w, pw, grid_w, w))


def roi_align_crops(images, boxes, output_size, sampling_ratio=2, aligned=True):
    """RoIAlign of one box in each of its own single-channel images (no gradient).

    ``out[k] = roi_align(images[k][None, None], [0, *boxes[k]], output_size)``: the same
    bilinear sampling as :func:`roi_align` at ``spatial_scale=1``, as two batched matrix
    products (no loop over boxes). Used for mask targets, where each RoI reads the mask of
    the object it is matched to.

    Parameters
    ----------
    images : Tensor of shape (K, H, W)
        Floating point.
    boxes : Tensor of shape (K, 4)
        ``(x1, y1, x2, y2)`` in pixels of the images.
    output_size : int
        Side of each crop.
    sampling_ratio : int, default=2
    aligned : bool, default=True

    Returns
    -------
    crops : Tensor of shape (K, output_size, output_size)
        In the dtype of ``images``.
    """
    k, h, w = images.shape
    if k == 0:
        return images.new_zeros((0, output_size, output_size))
    ay, ax = _roi_align_matrices(boxes.detach().to(images.dtype),
                                 (output_size, output_size), (h, w), 1.0,
                                 int(sampling_ratio), aligned)
    with torch.no_grad():
        return torch.bmm(torch.bmm(ay, images), ax.transpose(1, 2))


def _chunks(idx, n_images, per_roi, budget):
    """RoI indices grouped by image, in chunks of at most ``budget // per_roi`` RoIs."""
    m = max(1, budget // max(per_roi, 1))
    order = torch.argsort(idx, stable=True)
    counts = torch.bincount(idx, minlength=n_images).tolist()
    start = 0
    for b, n_b in enumerate(counts):
        for lo in range(start, start + n_b, m):
            yield b, order[lo:min(lo + m, start + n_b)]
        start += n_b


def _image_slots(idx, n_images):
    """Each RoI's slot ``image * m + rank`` in a ``(n_images, m)`` layout of the RoIs
    grouped by image (``rank``: its place among its image's RoIs, ``m``: the most RoIs
    of one image)."""
    counts = torch.bincount(idx, minlength=n_images)
    m = int(counts.max())
    order = torch.argsort(idx, stable=True)
    starts = torch.cumsum(counts, 0) - counts
    slot = torch.empty_like(idx)
    sorted_idx = idx[order]
    slot[order] = sorted_idx * m + torch.arange(len(idx), device=idx.device) \
        - starts[sorted_idx]
    return slot, m


class _SeparableRoIAlign(torch.autograd.Function):
    """``out[k] = A_y[k] F[image_k] A_x[k]^T`` per RoI and channel, with a backward pass
    that never holds one feature-map copy per RoI.

    Forward: per image, one matrix product of all its RoIs' stacked ``A_y`` with the
    image's ``(H, C * W)`` map, then a batched product with ``A_x``. When the
    intermediate ``(N, m, P_h, C, W)`` of all images at once (``m``: the most RoIs of an
    image) fits in ``budget`` elements, the images go through one batched product,
    their RoIs' ``A_y`` zero-padded to ``m``; otherwise image by image, RoIs in chunks
    that keep the intermediate within ``budget``. Backward: the gradient of an image's
    map is ``sum_k A_y[k]^T G[k] A_x[k]``, the sum over RoIs done inside one matrix
    product per image (or chunk), so it is accumulated in a single feature-map-sized
    tensor.
    """

    @staticmethod
    def forward(ctx, features, ay, ax, idx, budget):
        n, c, h, w = features.shape
        k, ph, pw = ay.shape[0], ay.shape[1], ax.shape[1]
        slot, m = _image_slots(idx, n)
        ctx.feature_shape = (n, c, h, w)
        ctx.budget = budget
        ctx.padded = n * m * ph * c * w <= budget
        if ctx.padded:
            ay_pad = ay.new_zeros((n * m, ph, h))
            ay_pad[slot] = ay
            fb = features.permute(0, 2, 1, 3).reshape(n, h, c * w)
            tmp = torch.bmm(ay_pad.reshape(n, m * ph, h), fb)  # (N, m P_h, C W)
            tmp = tmp.reshape(n * m, ph * c, w)[slot]
            out = torch.bmm(tmp, ax.transpose(1, 2)).reshape(k, ph, c, pw)
            ctx.save_for_backward(ay_pad, ax, slot)
            ctx.m = m
            return out.permute(0, 2, 1, 3)
        out = features.new_empty((k, ph, c, pw))
        for b, rows in _chunks(idx, n, ph * c * w, budget):
            fb = features[b].permute(1, 0, 2).reshape(h, c * w)
            tmp = (ay[rows].reshape(-1, h) @ fb).reshape(len(rows), ph * c, w)
            out[rows] = torch.bmm(tmp, ax[rows].transpose(1, 2)).reshape(len(rows), ph, c, pw)
        ctx.save_for_backward(ay, ax, idx)
        return out.permute(0, 2, 1, 3)

    @staticmethod
    def backward(ctx, grad):
        n, c, h, w = ctx.feature_shape
        g_all = grad.permute(0, 2, 1, 3)  # (K, P_h, C, P_w)
        if ctx.padded:
            ay_pad, ax, slot = ctx.saved_tensors
            k, ph, pw = grad.shape[0], grad.shape[2], grad.shape[3]
            t = torch.bmm(g_all.reshape(k, ph * c, pw), ax)  # (K, P_h C, W)
            t_pad = grad.new_zeros((n * ctx.m, ph, c * w))
            t_pad[slot] = t.reshape(k, ph, c * w)
            g_feat = torch.bmm(ay_pad.reshape(n, ctx.m * ph, h).transpose(1, 2),
                               t_pad.reshape(n, ctx.m * ph, c * w))  # (N, H, C W)
            return g_feat.reshape(n, h, c, w).permute(0, 2, 1, 3), None, None, None, None
        ay, ax, idx = ctx.saved_tensors
        k, ph, pw = ay.shape[0], ay.shape[1], ax.shape[1]
        g_feat = grad.new_zeros((n, h, c * w))
        for b, rows in _chunks(idx, n, ph * c * w, ctx.budget):
            g = g_all[rows].reshape(len(rows), ph * c, pw)
            t = torch.bmm(g, ax[rows]).reshape(-1, c * w)  # (m * P_h, C * W)
            g_feat[b] += ay[rows].reshape(-1, h).transpose(0, 1) @ t
        return g_feat.reshape(n, h, c, w).permute(0, 2, 1, 3), None, None, None, None


def roi_align(features, rois, output_size, spatial_scale=1.0, sampling_ratio=2,
              aligned=True):
    """RoIAlign (He et al. 2017, section 3): bilinear sampling without any rounding.

    Each RoI is divided into ``output_size`` bins; in each bin ``sampling_ratio`` x
    ``sampling_ratio`` regularly spaced points are read by bilinear interpolation of the
    four nearest feature cells and averaged. RoI coordinates are only scaled, never
    rounded. Bilinear interpolation on a tensor-product grid is separable, so each RoI's
    output is ``A_y F A_x^T`` with interpolation matrices ``A_y (P_h, H)`` and
    ``A_x (P_w, W)``: matrix products over the RoIs of each image, exact (the same sums as
    the point-by-point definition) and differentiable with respect to the features. Peak
    memory is about four times the output or the batch's feature maps, whichever is
    larger, whatever the number of RoIs (no feature-map copy per RoI, in the forward or
    the backward pass).

    Compared with ``torchvision.ops.roi_align(input, boxes, output_size,
    spatial_scale=1.0, sampling_ratio=-1, aligned=False)``: the same definition and
    arguments (``boxes`` as a ``(K, 5)`` tensor only), but the defaults here are
    ``sampling_ratio=2`` (the paper's 4 points per bin; torchvision's -1 is adaptive,
    ``ceil(RoI size / output_size)`` points, also accepted here) and ``aligned=True``
    (Detectron2's half-pixel correction; torchvision's False is the original
    implementation). Pass ``sampling_ratio=-1, aligned=False`` for torchvision's results.

    Parameters
    ----------
    features : Tensor of shape (N, C, H, W)
        Feature maps of a batch (any float dtype; float64 for exact checks).
    rois : Tensor of shape (K, 5)
        ``(batch_index, x1, y1, x2, y2)`` in image coordinates. Not differentiated.
    output_size : int or tuple of int
        ``(P_h, P_w)`` bins.
    spatial_scale : float, default=1.0
        Feature cells per image pixel (``1 / stride``).
    sampling_ratio : int, default=2
        Sampling points per bin along each axis (the paper uses 4 points per bin, i.e. 2;
        torchvision's default is -1). ``<= 0``: adaptive, ``ceil(roi_height / P_h)`` by
        ``ceil(roi_width / P_w)`` points per bin in feature cells, as torchvision (a
        zero-size RoI then reads no point and outputs 0).
    aligned : bool, default=True
        Shift the scaled box by half a pixel so that a pixel centre ``(j + 0.5)`` of the
        image maps to the centre of the matching feature cell (Detectron2's correction); a
        zero-size box then samples one point (with ``sampling_ratio >= 1``). With False
        (torchvision's default), RoI sizes are clamped to at least one feature cell, as in
        the original implementation.

    Returns
    -------
    out : Tensor of shape (K, C, P_h, P_w)
        The pooled features, in the dtype of ``features``.

    Raises
    ------
    ValueError
        If ``features`` is not 4-D, ``rois`` not ``(K, 5)`` or not finite, a batch index
        is not an integer in ``[0, N)``, ``output_size < 1`` or ``spatial_scale <= 0``.
    TypeError
        If ``sampling_ratio`` is not an integer.

    See Also
    --------
    RoIAlign : Module form.
    roi_pool : The quantised RoIPool it replaces.

    References
    ----------
    .. [1] He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV,
       section 3 and Fig. 3. :doi:`10.1109/ICCV.2017.322`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import roi_align
    >>> features = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> rois = torch.tensor([[0., 0, 0, 4, 4]])   # the whole map
    >>> roi_align(features, rois, 2, sampling_ratio=2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    ph, pw = _check_rois(features, rois, output_size, spatial_scale)
    try:
        if isinstance(sampling_ratio, bool):
            raise TypeError
        sampling_ratio = operator.index(sampling_ratio)
    except TypeError:
        raise TypeError(f"sampling_ratio must be an int (<= 0 for adaptive), got "
                        f"{sampling_ratio!r}.") from None
    return _roi_align(features, rois, (ph, pw), spatial_scale, sampling_ratio, aligned)


def _roi_align(features, rois, output_size, spatial_scale, sampling_ratio, aligned):
    """:func:`roi_align` of validated inputs, ``output_size`` a pair (the detection
    modules' own RoIs: batch indices in range by construction)."""
    ph, pw = output_size
    n, c, h, w = features.shape
    k = rois.shape[0]
    if k == 0:
        return features.new_zeros((0, c, ph, pw))
    rois = rois.detach().to(features.dtype)
    ay, ax = _roi_align_matrices(rois[:, 1:], (ph, pw), (h, w), spatial_scale,
                                 sampling_ratio, aligned)
    idx = rois[:, 0].long()
    # intermediates of at most the batch's feature maps or four outputs, whichever is larger
    budget = max(n * c * h * w, 4 * k * c * ph * pw)
    return _SeparableRoIAlign.apply(features, ay, ax, idx, budget)


def roi_pool(features, rois, output_size, spatial_scale=1.0):
    """RoIPool (Girshick 2015): rounded RoI and bin edges, max over each bin.

    The quantised operation RoIAlign replaces (He et al. 2017, section 3): the scaled RoI
    corners are rounded to feature cells (half away from zero, as C's ``round``), the RoI
    is split into bins whose edges are rounded outwards (floor of the start, ceil of the
    end), and each bin outputs the maximum of its cells; an empty bin outputs 0. The
    gradient goes to one maximal cell per bin (one of them on ties), as in the original
    implementation. Peak memory is a few times the output, whatever the number of RoIs.
    The same definition, arguments and defaults as ``torchvision.ops.roi_pool(input,
    boxes, output_size, spatial_scale=1.0)`` (``boxes`` as a ``(K, 5)`` tensor only).

    Parameters
    ----------
    features : Tensor of shape (N, C, H, W)
        Feature maps of a batch.
    rois : Tensor of shape (K, 5)
        ``(batch_index, x1, y1, x2, y2)`` in image coordinates.
    output_size : int or tuple of int
        ``(P_h, P_w)`` bins.
    spatial_scale : float, default=1.0
        Feature cells per image pixel (``1 / stride``).

    Returns
    -------
    out : Tensor of shape (K, C, P_h, P_w)
        The pooled features.

    Raises
    ------
    ValueError
        If ``features`` is not 4-D, ``rois`` not ``(K, 5)`` or not finite, a batch index
        is not an integer in ``[0, N)``, ``output_size < 1`` or ``spatial_scale <= 0``.

    See Also
    --------
    RoIPool : Module form.
    roi_align : The bilinear, unquantised replacement.

    References
    ----------
    .. [1] Girshick, R. (2015). Fast R-CNN. ICCV, section 2.1.
       :doi:`10.1109/ICCV.2015.169`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import roi_pool
    >>> features = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> roi_pool(features, torch.tensor([[0., 0, 0, 3, 3]]), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    ph, pw = _check_rois(features, rois, output_size, spatial_scale)
    n, c, h, w = features.shape
    k = rois.shape[0]
    if k == 0:
        return features.new_zeros((0, c, ph, pw))
    rois = rois.detach().to(torch.float64)

    def round_half_away(v):  # C's round(), as in the original RoIPool (not half-to-even)
        return torch.sign(v) * torch.floor(v.abs() + 0.5)

    x1 = round_half_away(rois[:, 1] * spatial_scale)
    y1 = round_half_away(rois[:, 2] * spatial_scale)
    x2 = round_half_away(rois[:, 3] * spatial_scale)
    y2 = round_half_away(rois[:, 4] * spatial_scale)
    rw = (x2 - x1 + 1).clamp(min=1)
    rh = (y2 - y1 + 1).clamp(min=1)

    def bin_rows(start, length, n_bins, size):
        """Cell indices ``(K, P, L)`` of each bin, padded to the longest (``L``) by
        repeating the bin's last cell (a repeat leaves a max unchanged), and whether each
        bin has any cell."""
        b = torch.arange(n_bins, dtype=torch.float64, device=features.device)
        lo = (torch.floor(b[None] * (length / n_bins)[:, None]) + start[:, None]).clamp(0, size)
        hi = torch.ceil((b[None] + 1) * (length / n_bins)[:, None]) + start[:, None]
        hi = hi.clamp(0, size)
        lo, span = lo.long(), (hi - lo).long().clamp(min=0)
        longest = max(int(span.max()), 1)
        steps = torch.arange(longest, device=features.device)
        last = (span - 1).clamp(min=0)[..., None]
        return (lo[..., None] + torch.minimum(steps, last)).clamp(0, size - 1), span > 0

    rows, row_any = bin_rows(y1, rh, ph, h)  # (K, P_h, L_h)
    cols, col_any = bin_rows(x1, rw, pw, w)  # (K, P_w, L_w)
    base = rois[:, 0].long()[:, None, None] * (h * w)  # validated by _check_rois
    # Without gradients, one pass over the (few) cells of a bin, each step reading one
    # cell of every bin of every RoI at once (K, P_h, P_w, C), finds each bin's maximal
    # cell (on ties the first by column, then by row); the output is then one gather of
    # those cells, through which the gradient flows to exactly one cell per bin. Peak
    # memory is a few times the output, whatever the number of RoIs.
    table = features.permute(0, 2, 3, 1).reshape(n * h * w, c)
    with torch.no_grad():
        f = table.detach()
        top = cell = None
        for col_step in range(cols.shape[-1]):
            cl = cols[:, :, col_step][:, None, :]  # (K, 1, P_w)
            for row_step in range(rows.shape[-1]):
                flat = base + rows[:, :, row_step][:, :, None] * w + cl  # (K, P_h, P_w)
                v = f[flat]
                if top is None:
                    top, cell = v, flat[..., None].expand_as(v).clone()
                else:
                    better = v > top
                    top = torch.where(better, v, top)
                    cell = torch.where(better, flat[..., None], cell)
    out = torch.gather(table, 0, cell.reshape(-1, c)).reshape(k, ph, pw, c)
    out = out.permute(0, 3, 1, 2)  # (K, C, P_h, P_w)
    empty = ~(row_any[:, :, None] & col_any[:, None, :])  # (K, P_h, P_w)
    return out.masked_fill(empty[:, None], 0.0)


class RoIAlign(torch.nn.Module):
    """RoIAlign layer: bilinear RoI features without rounding (He et al. 2017, section 3).

    Module form of :func:`roi_align`; see it for the definition.

    Parameters
    ----------
    output_size : int or tuple of int
        ``(P_h, P_w)`` bins.
    spatial_scale : float, default=1.0
        Feature cells per image pixel (``1 / stride``).
    sampling_ratio : int, default=2
        Sampling points per bin along each axis; ``<= 0`` adaptive. torchvision's
        ``RoIAlign`` has no default here (its Mask R-CNN passes 2) and defaults
        ``aligned`` to False.
    aligned : bool, default=True
        Half-pixel shift of the scaled boxes (see :func:`roi_align`).

    See Also
    --------
    RoIPool : The quantised layer of Fast R-CNN.

    References
    ----------
    .. [1] He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV,
       section 3. :doi:`10.1109/ICCV.2017.322`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import RoIAlign
    >>> layer = RoIAlign(7, spatial_scale=1 / 8)
    >>> features = torch.randn(2, 16, 8, 8)
    >>> rois = torch.tensor([[0., 4, 4, 40, 30], [1, 0, 0, 64, 64]])
    >>> layer(features, rois).shape
    torch.Size([2, 16, 7, 7])
    """

    def __init__(self, output_size, spatial_scale=1.0, sampling_ratio=2, aligned=True):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, features, rois):
        """Pool every RoI.

        Parameters
        ----------
        features : Tensor of shape (N, C, H, W)
            Feature maps of a batch.
        rois : Tensor of shape (K, 5)
            ``(batch_index, x1, y1, x2, y2)`` in image pixels.

        Returns
        -------
        out : Tensor of shape (K, C, P_h, P_w)
            The pooled features.
        """
        return roi_align(features, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)


class RoIPool(torch.nn.Module):
    """RoIPool layer: rounded RoI bins, max-pooled (Girshick 2015).

    Module form of :func:`roi_pool`; the quantised operation that Mask R-CNN's RoIAlign
    replaces (He et al. 2017, Table 2c).

    Parameters
    ----------
    output_size : int or tuple of int
        ``(P_h, P_w)`` bins.
    spatial_scale : float, default=1.0
        Feature cells per image pixel (``1 / stride``).

    See Also
    --------
    RoIAlign : The bilinear, unquantised layer.

    References
    ----------
    .. [1] Girshick, R. (2015). Fast R-CNN. ICCV, section 2.1.
       :doi:`10.1109/ICCV.2015.169`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import RoIPool
    >>> layer = RoIPool(7, spatial_scale=1 / 8)
    >>> layer(torch.randn(1, 16, 8, 8), torch.tensor([[0., 4, 4, 40, 30]])).shape
    torch.Size([1, 16, 7, 7])
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, features, rois):
        """Pool every RoI.

        Parameters
        ----------
        features : Tensor of shape (N, C, H, W)
            Feature maps of a batch.
        rois : Tensor of shape (K, 5)
            ``(batch_index, x1, y1, x2, y2)`` in image pixels.

        Returns
        -------
        out : Tensor of shape (K, C, P_h, P_w)
            The pooled features.
        """
        return roi_pool(features, rois, self.output_size, self.spatial_scale)
