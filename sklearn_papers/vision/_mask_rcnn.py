"""MaskRCNN: instance segmentation by detection (He et al. 2017), trained from scratch."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from sklearn_papers.utils._tensors import tensors_to_numpy
from sklearn_papers.vision._scales import (
    FAR_FROM_TRAINING_SIZE,
    MAX_INPUT_SCALE,
    MIN_RESCALED_SIDE,
    SCALE_MARGIN,
    auto_input_scale,
    check_predict_scales,
    choose_detection_scale,
    owned_intervals,
    rescaled_shape,
    resize_image,
    size_gap,
    tile_starts,
    typical_size,
)
from sklearn_papers.vision._validation import (
    MAX_INFERRED_CLASSES,
    check_images,
    check_label_map,
    integer_bit_depth,
    pad_images,
    targets_from_dicts as _targets_from_dicts,
    targets_from_maps as _targets_from_maps,
    warn_inferred_bit_depth,
)

__all__ = ["MaskRCNN"]

#: Smallest image side MaskRCNN takes (the backbone's coarsest stride is 16).
_MIN_SIZE = 8
#: ``input_scale="auto"`` enlarges the images until the typical training box is at
#: least this many strides of the finest feature map across (4 with ``"fpn"``, 8 with
#: ``"c4"``): smaller objects cover one or two feature cells and their masks are lost.
_MIN_OBJECT_STRIDES = 3
#: Objects (summed scores) another scale must find before ``predict`` reads its having
#: fewer detections than the kept scale, closer to ``object_size_``, as a sign that the
#: kept scale cuts objects into pieces (a few detections give a noisy typical size).
_MIN_OBJECTS_FOR_PIECES = 5.0


def _joins_past(scale, kept, counts):
    """Whether ``scale`` lies beyond the ``kept`` scale, away from 1, and finds clearly
    fewer objects there (less than ``1 / 1.25`` as many): shrinking (or enlarging) past
    the objects' own scale joins (or cuts) them, so its detections of about the
    training size are no sign against the kept scale (coins twice the training size
    kept at 0.5: 0.25 joins them)."""
    if kept == 1.0 or np.sign(np.log(scale)) != np.sign(np.log(kept)) or abs(
            np.log(scale)) <= abs(np.log(kept)):
        return False
    return SCALE_MARGIN * counts.get(scale, 0.0) < counts.get(kept, 0.0)
#: At prediction, proposals kept after the RPN's NMS per object of the most crowded
#: training image (twice as many before it, per level), when the budgets
#: ``rpn_post_nms_top_n`` and ``rpn_pre_nms_top_n`` are lower: one proposal per object
#: leaves each object one chance of a box that overlaps it well.
_PROPOSALS_PER_OBJECT = 4
#: With ``predict_tile_size="auto"``, network inputs of more than this many times the
#: area of the training images are predicted in windows of the training images' shape.
_TILE_AREA = 4.0


def _per_image(maps, n, name):
    """A list of ``n`` per-image maps from an array ``(n, H, W)`` or a list."""
    maps = tensors_to_numpy(maps, name)
    items = list(maps) if isinstance(maps, (list, tuple)) or (
        isinstance(maps, np.ndarray) and maps.ndim == 3) else None
    if items is None or len(items) != n:
        got = (f"{len(items)} maps" if items is not None else
               f"shape {maps.shape}" if hasattr(maps, "shape") else f"{maps!r:.80}")
        raise ValueError(f"{name} must give one (H, W) map per image ({n}); got {got}.")
    return items


def _pad_targets(targets, shape):
    """Targets of all images in arrays padded to ``g`` objects and ``shape`` pixels."""
    n = len(targets)
    g = max([1] + [len(t[1]) for t in targets])
    boxes = np.zeros((n, g, 4), dtype=np.float32)
    labels = np.zeros((n, g), dtype=np.int64)
    masks = np.zeros((n, g) + shape, dtype=np.uint8)
    for i, (b, lab, m) in enumerate(targets):
        k = len(lab)
        boxes[i, :k], labels[i, :k] = b, lab
        masks[i, :k, : m.shape[1], : m.shape[2]] = m
    return boxes, labels, masks


def _auto_anchor_sizes(boxes):
    """Three anchor sizes (pixels) from training boxes ``(k, 4)``: the 10th and 90th
    percentiles of ``sqrt(width * height)`` and their geometric mean, spread to a factor
    of at least 2 around that mean (factor sqrt(2) between neighbours)."""
    wh = np.clip(boxes[:, 2:] - boxes[:, :2], 1.0, None)
    size = np.sqrt(wh[:, 0] * wh[:, 1])
    lo, hi = np.percentile(size, [10, 90])
    mid = float(np.sqrt(lo * hi))
    if hi / lo < 2.0:
        lo, hi = mid / np.sqrt(2.0), mid * np.sqrt(2.0)
    return tuple(round(float(v), 2) for v in (lo, mid, hi))


def paint_detections(detections, shape, threshold, mask_threshold=0.5):
    """One image's instance label map from its detections (what ``predict`` returns).

    Parameters
    ----------
    detections : dict
        One image's detections, with ``"scores"`` (ndarray of shape (k,), sorted by
        decreasing score) and either ``"masks"`` (bool ndarray of shape (k, H, W)) or
        ``"boxes"`` (float ndarray of shape (k, 4), ``(x1, y1, x2, y2)`` in pixels of
        the map) with ``"roi_masks"`` (float ndarray of shape (k, M, M), each box's mask
        probabilities), which are pasted box by box, thresholded at ``mask_threshold``,
        into the boxes ``"roi_boxes"`` (float ndarray of shape (k, 4)) when given, else
        ``"boxes"``.
    shape : tuple of int
        ``(H, W)``.
    threshold : float
        Detections scoring below it are not painted.
    mask_threshold : float or "auto", default=0.5
        Mask probability from which a pixel of a pasted ``"roi_masks"`` belongs to its
        detection (``"auto"``: each mask's own, see ``MaskRCNN``).

    Returns
    -------
    label_map : ndarray of shape (H, W), int64
        0 for background; the detections painted lowest score first (the best on top),
        ids ``1 .. k'`` by decreasing score without gaps (a detection fully covered by
        better ones leaves no id).
    """
    label_map = np.zeros(tuple(shape), dtype=np.int64)
    keep = np.nonzero(detections["scores"] >= threshold)[0]
    if "masks" in detections:
        for rank in keep[::-1]:
            label_map[detections["masks"][rank]] = rank + 1
    elif len(keep):
        import torch

        from sklearn_papers.nn._mask_rcnn import paste_mask_crops

        order = keep[::-1]
        crops = paste_mask_crops(
            torch.from_numpy(np.ascontiguousarray(detections["roi_masks"][order])),
            torch.from_numpy(np.ascontiguousarray(
                detections.get("roi_boxes", detections["boxes"])[order])), *shape,
            threshold=mask_threshold)
        for j, (r0, r1, c0, c1), crop in crops:
            label_map[r0:r1, c0:c1][crop.numpy()] = order[j] + 1
    ids = np.unique(label_map)
    ids = ids[ids > 0]
    lut = np.zeros(len(detections["scores"]) + 1, dtype=np.int64)
    lut[ids] = np.arange(1, len(ids) + 1)
    return lut[label_map]


def _with_masks(detections, shape, mask_threshold=0.5):
    """Detections as :meth:`MaskRCNN.predict_detections` returns them: the RoI masks
    pasted into ``(k, H, W)`` boolean masks of an image of ``shape``, thresholded at
    ``mask_threshold``."""
    import torch

    from sklearn_papers.nn._mask_rcnn import paste_masks

    out = {k: v for k, v in detections.items() if k not in ("roi_masks", "roi_boxes")}
    out["masks"] = paste_masks(torch.from_numpy(detections["roi_masks"]), torch.from_numpy(
        detections.get("roi_boxes", detections["boxes"])), *shape,
        threshold=mask_threshold).numpy()
    return out


def _warmup_fraction(steps, fraction=0.1):
    """``pct_start`` of torch's ``OneCycleLR`` for ``steps`` optimiser steps: ``fraction``,
    unless its warm-up phase would end at step 0 (``fraction * steps - 1 == 0``, e.g. 10
    steps), a phase of zero width on which torch divides by zero; the warm-up then lasts
    two steps (``2 / steps``). One step has no warm-up phase to speak of and works as is."""
    if steps > 1 and float(fraction * steps) - 1 == 0:
        return 2.0 / steps
    return fraction


class MaskRCNN(BaseEstimator):
    """Mask R-CNN instance segmentation (He et al. 2017), in pure torch, from scratch.

    Read more in the :doc:`user guide </user_guide/images>` and on the :doc:`paper page
    </papers/mask_rcnn>`.

    A small GroupNorm ResNet-style backbone (one feature map, ``"c4"``, or a feature
    pyramid, ``"fpn"``), a region proposal network on anchors, RoIAlign (or RoIPool) of
    each proposal, a box head (classification and class-specific box regression) and a
    fully convolutional mask head predicting one 28 x 28 mask per class (from the
    features and, with ``mask_image``, the image's own pixels). Trained with
    ``L = L_cls + L_box + L_mask`` plus the RPN's objectness and box losses; the mask loss
    is the per-class sigmoid binary cross-entropy on positive RoIs, the target being the
    ground-truth mask inside the RoI (section 3 of the paper). Inference keeps the top
    proposals, scores and refines them per class, applies NMS per class, runs the mask
    head on the kept detections and pastes the masks, thresholded at ``mask_threshold``,
    into the image.

    Parameters
    ----------
    n_classes : int or None, default=None
        Object classes (background excluded). None takes the largest class seen in
        ``fit`` (1 without ``semantic_maps``: class-agnostic instances); a largest class
        above 1024 then raises (relabel the classes to ``1..K`` or pass ``n_classes``).
    backbone : {"c4", "fpn"}, default="fpn"
        ``"c4"``: one feature map at stride 8, all anchor sizes on it (the paper's
        single-map ResNet-C4 design, at our scale). ``"fpn"``: levels at strides 4, 8, 16,
        one anchor size per level, RoIs assigned to levels by size (Lin et al. 2017).
    roi_op : {"align", "pool"}, default="align"
        RoIAlign (bilinear, no rounding; the paper's) or RoIPool (rounded, max; the
        paper's ablation, Table 2c).
    mask_loss : {"sigmoid", "softmax"}, default="sigmoid"
        Per-class sigmoid masks (the paper's) or a per-pixel softmax over background and
        the classes (its ablation, Table 2b).
    mask_image : {True, "local", False}, default=True
        The mask head also reads the image itself, resampled over each RoI at the
        head's resolution (14 x 14, RoIAlign of the normalised image), beside the
        features. Features are at least 4 pixels apart: for objects a few feature cells
        across, such as printed characters, the pixels give the boundaries. True: the
        pixels as the network reads them (normalised by the training images' mean and
        standard deviation). ``"local"``: each RoI's pixels standardised by their own
        mean and standard deviation (plus half the training images' pixel standard
        deviation), so that edges are placed against the brightness and contrast around
        the object, as a local threshold does: masks of objects lit more brightly or
        darkly than in ``fit`` keep their edges, but faint marks the detector boxes get
        masks too. False: the paper's head, features only.
    mask_box_expand : float, default=1.5
        Factor by which the mask branch enlarges each box about its centre: it is
        trained on the positive RoIs so enlarged and predicts each detection's mask over
        its enlarged box, so that a mask reaches past a box that falls a pixel or two
        short of its object (boxes of small objects are rarely exact). ``"boxes"`` are
        returned as detected. 1.0: the box itself (the paper's).
    anchor_sizes : tuple of float or None, default=None
        Anchor sizes (square root of the area) in pixels of the network input (with
        ``"fpn"``: one per level, three levels). None chooses three sizes from the boxes
        seen in ``fit``: the 10th and 90th percentiles of the boxes' sizes and their
        geometric mean, spread to at least a factor of 2 (see :attr:`anchor_sizes_`).
    aspect_ratios : tuple of float, default=(0.5, 1.0, 2.0)
        Anchor height / width ratios.
    rpn_pre_nms_top_n : int, default=100
        Proposals kept per image and level before the RPN's NMS (IoU 0.7), for an image
        the size of the largest training image; at prediction an image ``k`` times its
        area keeps ``k`` times as many, and at least 8 per object of the most crowded
        training image.
    rpn_post_nms_top_n : int, default=50
        Proposals kept per image after it (training and inference; at prediction at
        least 4 per object of the most crowded training image, then scaled with the
        image area as ``rpn_pre_nms_top_n``; the paper's 1000 to 2000 are for COCO
        images with many more objects than these scenes).
    detections_per_image : int, default=100
        Most detections returned per image of the training images' size (the paper:
        100); at prediction an image ``k`` times the area of the largest training image
        keeps up to ``k`` times as many (a whole slide predicted after fitting on tiles
        keeps as many per tile), and a warning says when more confident detections than
        that were found.
    score_threshold : float, default=0.05
        Detections scoring below it are discarded before NMS.
    instance_score_threshold : float, default=0.5
        Detections scoring below it are left out of :meth:`predict`'s label maps
        (:meth:`predict_detections` and :meth:`score` use every detection above
        ``score_threshold``, as COCO's AP does).
    mask_threshold : "auto" or float, default="auto"
        Mask probability from which a pixel belongs to a detection's mask, when the
        masks are pasted into the image. ``"auto"``: each mask's own threshold, the one
        that maximises its expected IoU given its probabilities (``J / (1 + J)``, ``J``
        the mask's expected IoU; Lipton et al. 2014): 0.5 for a crisp mask, lower for
        one unsure at its edges, such as the masks of small objects unlike the training
        ones, where one pixel changes the overlap most. Read at prediction time. 0.5:
        the paper's.
    image_size : int or None, default=None
        Side the images are resized to (bilinear) for the network; outputs are mapped
        back to the input size. None runs at the input size (images of different sizes
        in one ``fit`` are padded at the bottom and right to the largest; the padding
        is background).
    input_scale : "auto" or float, default="auto"
        Factor by which the network input (after ``image_size``) is enlarged (bilinear),
        in ``fit`` and at prediction; boxes and masks come back in input pixels.
        ``"auto"``: the smallest integer factor (at most 4) that makes the typical
        training box (``sqrt(width * height)``, the median weighted by area) at least 3
        strides of the finest feature map across (12 pixels with ``"fpn"``, 24 with
        ``"c4"``), 1 for larger objects. Smaller objects, such as printed characters
        about 8 pixels across, cover one or two feature cells: their boxes and masks
        are coarse and neighbours merge. A factor ``f`` costs about ``f ** 2`` times the
        time and memory. A number in [0.25, 4] fixes the factor (``1.0``: the network
        sees the images as given). The fitted factor is :attr:`input_scale_`;
        :attr:`object_size_`, :attr:`object_sizes_` and :attr:`anchor_sizes_` are in
        pixels of the enlarged network input.
    predict_scales : "auto" or sequence of float, default="auto"
        Scales at which :meth:`predict`, :meth:`predict_detections` and :meth:`score`
        run each image through the network (resized, bilinear and antialiased, on top of
        ``image_size``; boxes and masks come back in input pixels). Each image keeps its
        own scale unless another moves its objects towards the training size (scales
        below 1 when the detections at scale 1 are larger than ``object_size_``, above
        1 when smaller), finds at least 1 / 1.25 as many objects as scale 1 and as
        every scale tried between (the sum of the scores of the detections scoring at
        least ``instance_score_threshold``) and either its detections are closer in typical size to the boxes seen in ``fit``
        (``object_size_``) by more than a factor 1.25, or (scales below 1) it finds
        1.25 times as many objects with detections at least as close in size; among
        such scales, the closest in size. A scale below 1 is kept only if it finds at
        least as many objects as scale 1 (shrinking keeps large objects whole), and
        where scale 1 finds none, another scale only if its detections are within a
        factor 2 of ``object_size_`` and, for a larger scale, it finds at least one
        (scores summing to 1). At a
        wrong scale a detector finds pieces of large objects or
        groups of small ones, boxed near the training sizes. ``"auto"``:
        0.25, 0.5, 1 and 2 (objects up to 4 times larger or 2 times smaller than in
        ``fit``); ``(1.0,)`` runs the input scale only. The input scale is always a
        candidate: ``(2.0,)`` compares scales 1 and 2; to predict at another scale
        only, resize the images before predicting. Scales that make the network input
        smaller than 16 pixels a side are skipped. Read at prediction time. Each scale
        other than 1 costs one more pass through the network (scale 2 four times the
        pixels), so ``"auto"`` predicts about 5 times slower than ``(1.0,)``; pass
        ``(1.0,)`` when the images are at the training scale. Objects much smaller than
        in ``fit`` are the weak case: the network can box groups of them at about the
        training size, and the image then keeps its own scale; enlarge such images
        before predicting.
    predict_tile_size : "auto", int or None, default="auto"
        Windows the network input (after ``image_size`` and the scale) is predicted in:
        windows of this side overlapping by half a window, each keeping the detections
        whose box centre is closer to its centre than to any other window's, then
        class-wise NMS (IoU 0.5) over the windows; masks are pasted into the whole
        image. ``"auto"``: windows of the shape of the (largest) training image, for
        inputs more than 4 times its area, which run as the training images did (a
        network trained on tiles finds fewer objects in a whole image many times their
        size); smaller inputs run whole. None: inputs always run whole. An int: windows
        of that side for every larger input. Objects more than half a window across can
        be cut. Read at prediction time.
    predict_flip : bool, default=True
        Test-time flip averaging of the masks: each detection's mask logits are the
        mean of its own and those of its box mirrored on the image mirrored left to
        right, mirrored back (boxes and scores come from the image as given). Masks of
        small objects then depend less on one pass's errors at their edges; prediction
        runs the backbone and the mask head twice. False: one pass (the paper's). Read
        at prediction time.
    bit_depth : int or None, default=None
        Bits of integer images other than uint8 (uint8 is read as 0-255): they are
        divided by ``2 ** bit_depth - 1``. None: the smallest of 8, 10, 12, 14 and 16
        bits that holds the largest value of the training images (12-bit microscopy
        data stored as uint16 reads as 12-bit), kept for ``predict``
        (:attr:`bit_depth_`); an image brighter than that depth at prediction
        has its values above ``2 ** bit_depth_ - 1`` clipped to it, with a
        ``UserWarning``. A declared depth is kept as is: values beyond it raise. Fitted
        on uint8 or float images only (no depth kept), integer images of another dtype
        at prediction are read by the depth their own batch needs, with a
        ``UserWarning`` naming the first.
    width : int, default=16
        Channels of the first backbone stage (the others and the heads use twice that).
    max_epochs : int, default=40
        Passes over the training images.
    batch_size : int, default=8
        Images per step (also the inference batch).
    lr : float, default=3e-3
        Peak AdamW learning rate of a one-cycle schedule (10 % warm-up, cosine decay).
    weight_decay : float, default=1e-4
        AdamW weight decay.
    device : str, default="cpu"
        Torch device, e.g. ``"cuda"``.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, anchor / RoI sampling and batch shuffling; the global
        torch, numpy and Python RNGs are left untouched.
    verbose : int, default=0
        1 prints skorch's table of the training loss per epoch.

    Attributes
    ----------
    n_classes_ : int
        Object classes of the model.
    classes_ : ndarray of shape (n_classes,)
        The class labels ``1 .. n_classes_``.
    n_channels_ : int
        Image channels seen in ``fit``.
    anchor_sizes_ : tuple of float
        Anchor sizes used (``anchor_sizes``, or those chosen from the training boxes).
    input_scale_ : float
        Factor by which the network sees the images enlarged (``input_scale``, or the
        one ``"auto"`` chose from the training boxes).
    object_sizes_ : tuple of float
        Smallest and largest ``sqrt(width * height)`` of the training boxes, in network
        pixels.
    object_size_ : float
        Typical size of the training boxes, ``sqrt(width * height)`` in network pixels,
        the median weighted by area; NaN without boxes. ``predict_scales`` matches the
        confident detections' boxes to it, and :meth:`predict` warns when their typical
        size is more than a factor 2 from it.
    bit_depth_ : int or None
        Bit depth of integer images other than uint8 (``bit_depth`` or the one found in
        ``fit``; None when ``fit`` saw none, and ``predict`` then finds its own).
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_`` is the
        :class:`~sklearn_papers.nn._mask_rcnn.MaskRCNNModule`.
    loss_curve_ : list of float
        Mean training loss (sum of the five losses) of each epoch.
    n_iter_ : int
        Number of epochs run.

    See Also
    --------
    sklearn_papers.metrics.mask_average_precision : The metric of :meth:`score`.
    sklearn_papers.datasets.make_scenes : Scenes with instance ground truth.

    References
    ----------
    .. [1] He, K., Gkioxari, G., Dollar, P. and Girshick, R. (2017). Mask R-CNN. ICCV,
       section 3, Table 2. :doi:`10.1109/ICCV.2017.322`
    .. [2] Ren, S., He, K., Girshick, R. and Sun, J. (2015). Faster R-CNN: towards
       real-time object detection with region proposal networks. NeurIPS.
       :doi:`10.48550/arXiv.1506.01497`
    .. [3] Lin, T.-Y., Dollar, P., Girshick, R., He, K., Hariharan, B. and Belongie, S.
       (2017). Feature pyramid networks for object detection. CVPR.
       :doi:`10.1109/CVPR.2017.106`

    Examples
    --------
    >>> from sklearn_papers.datasets import make_scenes
    >>> from sklearn_papers.vision import MaskRCNN
    >>> data = make_scenes(8, image_size=32, random_state=0)
    >>> model = MaskRCNN(max_epochs=1, random_state=0)
    >>> model.fit(data.images, data.instance_maps, data.semantic_maps).predict(
    ...     data.images[:2]).shape
    (2, 32, 32)
    """

    _parameter_constraints = {
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
        "backbone": [StrOptions({"c4", "fpn"})],
        "roi_op": [StrOptions({"align", "pool"})],
        "mask_loss": [StrOptions({"sigmoid", "softmax"})],
        "mask_image": ["boolean", StrOptions({"local"})],
        "mask_box_expand": [Interval(Real, 1, 4, closed="both")],
        "anchor_sizes": [tuple, list, None],
        "aspect_ratios": [tuple, list],
        "rpn_pre_nms_top_n": [Interval(Integral, 1, None, closed="left")],
        "rpn_post_nms_top_n": [Interval(Integral, 1, None, closed="left")],
        "detections_per_image": [Interval(Integral, 1, None, closed="left")],
        "score_threshold": [Interval(Real, 0, 1, closed="left")],
        "instance_score_threshold": [Interval(Real, 0, 1, closed="both")],
        "mask_threshold": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="neither")],
        "image_size": [Interval(Integral, 16, None, closed="left"), None],
        "input_scale": [StrOptions({"auto"}),
                        Interval(Real, 1 / MAX_INPUT_SCALE, MAX_INPUT_SCALE, closed="both")],
        "predict_scales": [StrOptions({"auto"}), tuple, list],
        "predict_tile_size": [StrOptions({"auto"}), Interval(Integral, 16, None,
                                                             closed="left"), None],
        "predict_flip": ["boolean"],
        "bit_depth": [Interval(Integral, 1, 16, closed="both"), None],
        "width": [Interval(Integral, 8, None, closed="left")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, *, n_classes=None, backbone="fpn", roi_op="align",
                 mask_loss="sigmoid", mask_image=True, mask_box_expand=1.5,
                 anchor_sizes=None,
                 aspect_ratios=(0.5, 1.0, 2.0), rpn_pre_nms_top_n=100,
                 rpn_post_nms_top_n=50, detections_per_image=100, score_threshold=0.05,
                 instance_score_threshold=0.5, mask_threshold="auto", image_size=None,
                 input_scale="auto",
                 predict_scales="auto",
                 predict_tile_size="auto", predict_flip=True, bit_depth=None, width=16,
                 max_epochs=40,
                 batch_size=8, lr=3e-3, weight_decay=1e-4, device="cpu", random_state=None,
                 verbose=0):
        self.n_classes = n_classes
        self.backbone = backbone
        self.roi_op = roi_op
        self.mask_loss = mask_loss
        self.mask_image = mask_image
        self.mask_box_expand = mask_box_expand
        self.anchor_sizes = anchor_sizes
        self.aspect_ratios = aspect_ratios
        self.rpn_pre_nms_top_n = rpn_pre_nms_top_n
        self.rpn_post_nms_top_n = rpn_post_nms_top_n
        self.detections_per_image = detections_per_image
        self.score_threshold = score_threshold
        self.instance_score_threshold = instance_score_threshold
        self.mask_threshold = mask_threshold
        self.image_size = image_size
        self.input_scale = input_scale
        self.predict_scales = predict_scales
        self.predict_tile_size = predict_tile_size
        self.predict_flip = predict_flip
        self.bit_depth = bit_depth
        self.width = width
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _check_params(self):
        check_predict_scales(self.predict_scales)
        for name in ("anchor_sizes", "aspect_ratios"):
            vals = getattr(self, name)
            if vals is None:
                continue
            if len(vals) == 0 or not all(
                    isinstance(v, Real) and not isinstance(v, (bool, np.bool_))
                    and np.isfinite(v) and v > 0 for v in vals):
                raise ValueError(f"{name} must be a non-empty sequence of finite positive "
                                 f"numbers, got {vals!r}.")
        if self.backbone == "fpn" and self.anchor_sizes is not None and \
                len(self.anchor_sizes) != 3:
            raise ValueError(f"backbone='fpn' has 3 levels and takes one anchor size per "
                             f"level; anchor_sizes={self.anchor_sizes!r} has "
                             f"{len(self.anchor_sizes)}.")

    def _network_shape(self, shape, scale=1.0, *, fitting=None):
        """Network ``(h, w)`` of an image of ``shape`` at a prediction ``scale``, with the
        ``image_size`` and :attr:`input_scale_` of the fitted model. In ``fit``,
        ``fitting`` is the input scale being fitted, and ``image_size`` is read from the
        parameters (set after fit, it does not change the scale the network learned)."""
        if fitting is not None:
            size, scale = self.image_size, scale * fitting
        else:
            size = getattr(self, "_fit_image_size", self.image_size)
            scale = scale * getattr(self, "input_scale_", 1.0)
        base = shape if size is None else (size, size)
        return tuple(int(v) for v in base) if scale == 1.0 else rescaled_shape(base, scale)

    def _to_network(self, image, scale=1.0, *, fitting=None):
        """Resize one ``(C, H, W)`` float32 image to the network size (``image_size``,
        times ``scale`` and the input scale); returns it and the scale ``(sy, sx)`` from
        input to network pixels."""
        h, w = image.shape[-2:]
        shape = self._network_shape((h, w), scale, fitting=fitting)
        if shape == (h, w):
            return image, (1.0, 1.0)
        input_scale = fitting if fitting is not None else getattr(self, "input_scale_", 1.0)
        if scale != 1.0 or input_scale != 1.0:
            return resize_image(image, shape), (shape[0] / h, shape[1] / w)
        import torch
        import torch.nn.functional as F

        out = F.interpolate(torch.from_numpy(image[None]), size=shape, mode="bilinear",
                            align_corners=False)[0].numpy()
        return out, (shape[0] / h, shape[1] / w)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, semantic_maps=None):
        """Train the network.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W), or list of images
            Images; channels last is canonical; a list may hold images of different sizes
            (``(H, W)``, ``(H, W, C)`` or ``(C, H, W)``), at least 8 x 8 pixels. uint8
            is read as 0-255, other integer dtypes (uint16, ...) by their bit depth (see
            ``bit_depth``), bool as 0/1 and floats must lie in [0, 1] (a ``ValueError``
            names the image otherwise).
        y : array-like of shape (n, H, W) of int, list of n maps, or list of n dicts
            Instance label maps (0 = background, each other id one object), or detection
            annotations: one dict per image with ``"boxes"`` (k, 4) float
            ``(x1, y1, x2, y2)`` in pixels (max exclusive) inside the image (boxes
            leaving it by at most half a pixel are clipped to it), ``"labels"`` (k,) int
            in ``1 .. n_classes`` and ``"masks"`` (k, H, W) bool (or 0/1) of the image's
            size. An image without objects is a valid negative example.
        semantic_maps : array-like of shape (n, H, W) of int or None, default=None
            Class of each pixel (0 = background, ``1 .. n_classes``); an instance takes
            the majority class of its pixels. None (with maps): one object class. Not
            used with dicts.

        Returns
        -------
        self : MaskRCNN
            Fitted estimator.

        Raises
        ------
        ValueError
            If shapes disagree (the message names the image), maps hold negative or
            non-integer labels, a dict lacks a key, its boxes, labels and masks differ in
            number, a mask differs from its image in size or holds values other than 0
            and 1, or a box leaves its image (the message names ``y[i]`` and the field),
            ``y`` mixes dicts and maps, a label exceeds ``n_classes`` (or 1024 with
            ``n_classes=None``), ``semantic_maps`` is given with dicts, or
            ``anchor_sizes`` or ``aspect_ratios`` holds a value that is not a finite
            positive number.
        TypeError
            If a dict's field is not numeric.
        FloatingPointError
            If the training loss becomes non-finite.

        Warns
        -----
        UserWarning
            If ``y`` holds no object in any image.
        """
        import torch

        from sklearn_papers.nn._mask_rcnn import MaskRCNNModule
        from sklearn_papers.nn._skorch import torch_fit

        self._check_params()
        images = check_images(X, name="X", min_size=_MIN_SIZE, bits=self.bit_depth)
        shapes = [im.shape[1:] for im in images]
        n, c = len(images), images[0].shape[0]
        dict_input = isinstance(y, (list, tuple)) and len(y) > 0 \
            and all(isinstance(t, dict) for t in y)
        if isinstance(y, (list, tuple)) and not dict_input and any(
                isinstance(t, dict) for t in y):
            i = next(i for i, t in enumerate(y) if isinstance(t, dict))
            j = next(j for j, t in enumerate(y) if not isinstance(t, dict))
            raise ValueError(f"y mixes target dicts (y[{i}]) and other entries (y[{j}] is a "
                             f"{type(y[j]).__name__}); pass one dict per image, or one "
                             "instance map per image.")
        if dict_input:
            if semantic_maps is not None:
                raise ValueError("semantic_maps cannot be combined with target dicts: the "
                                 "dicts' 'labels' give the classes.")
            targets = _targets_from_dicts(y, shapes)
        else:
            targets = _targets_from_maps(y, semantic_maps, shapes)
        max_label = max([1] + [int(t[1].max()) for t in targets if len(t[1])])
        if self.n_classes is None and max_label > MAX_INFERRED_CLASSES:
            i = next(i for i, t in enumerate(targets) if len(t[1]) and t[1].max() == max_label)
            where = "y" if dict_input else "semantic_maps"
            raise ValueError(
                f"{where}[{i}] has class {max_label}: with n_classes=None that would mean "
                f"{max_label} object classes (a head of {max_label + 1} outputs). Relabel "
                f"the classes to 1..K, or pass n_classes explicitly (at most "
                f"{MAX_INFERRED_CLASSES} classes are inferred).")
        n_classes = max_label if self.n_classes is None else int(self.n_classes)
        if max_label > n_classes:
            raise ValueError(f"the data has class {max_label} but n_classes={n_classes}.")
        # input scale: from the training boxes in pixels of image_size
        sizes = []
        for im, (b, _, _) in zip(images, targets):
            h, w = im.shape[1:]
            fy, fx = (1.0, 1.0) if self.image_size is None else (self.image_size / h,
                                                                  self.image_size / w)
            sizes.append(np.sqrt(np.prod(np.clip(b[:, 2:] - b[:, :2], 1, None)
                                         * np.array([fx, fy]), 1)))
        sizes = np.concatenate(sizes) if sizes else np.zeros(0)
        if self.input_scale == "auto":
            finest = 4 if self.backbone == "fpn" else 8
            input_scale = auto_input_scale(typical_size(sizes, sizes**2),
                                           _MIN_OBJECT_STRIDES * finest)
        else:
            input_scale = float(self.input_scale)
        # network input: each image resized to image_size and by the input scale, or all
        # padded (bottom, right) to the largest; padding is background
        net_images, net_targets = [], []
        for im, (b, lab, m) in zip(images, targets):
            xi, (sy, sx) = self._to_network(im, fitting=input_scale)
            if (sy, sx) != (1.0, 1.0):
                b = b * np.array([sx, sy, sx, sy], dtype=np.float32)
                if len(lab):
                    mt = torch.from_numpy(m[:, None].astype(np.float32))
                    mt = torch.nn.functional.interpolate(mt, size=xi.shape[-2:],
                                                         mode="bilinear", align_corners=False)
                    m = mt[:, 0].numpy() >= 0.5
                else:
                    m = np.zeros((0,) + xi.shape[-2:], dtype=bool)
            net_images.append(xi)
            net_targets.append((b, lab, m))
        net_shape = tuple(int(v) for v in np.max([xi.shape[1:] for xi in net_images], axis=0))
        x = pad_images(net_images, net_shape)
        boxes, labels, masks = _pad_targets(net_targets, net_shape)
        all_boxes = np.concatenate([t[0] for t in net_targets])
        if not len(all_boxes):
            warnings.warn(
                f"y holds no object in any of its {n} image(s) (every label map 0, the "
                f"background, or no box in any dict), so MaskRCNN learns no object and "
                f"what it predicts comes from no example. Check the targets (0 = "
                f"background, a positive id per object).", UserWarning, stacklevel=3)
        if self.anchor_sizes is None:
            anchor_sizes = (_auto_anchor_sizes(all_boxes) if len(all_boxes)
                            else (8.0, 16.0, 32.0))
        else:
            anchor_sizes = tuple(float(v) for v in self.anchor_sizes)
        pixels = np.concatenate([xi.reshape(c, -1) for xi in net_images], axis=1)
        mean = pixels.mean(axis=1, dtype=np.float64)
        std = pixels.std(axis=1, dtype=np.float64)
        std = np.where(std > 0, std, 1.0)

        steps = self.max_epochs * -(-n // self.batch_size)
        from skorch.callbacks import GradientNormClipping, LRScheduler

        from sklearn_papers.nn._mask_rcnn import LossOutputNet

        with torch_fit(self) as run:
            run.fit(
                MaskRCNNModule,
                {"images": x, "boxes": boxes, "labels": labels, "masks": masks},
                net_class=LossOutputNet,
                optimizer=torch.optim.AdamW,
                callbacks=[
                    ("clip", GradientNormClipping(gradient_clip_value=10.0)),
                    ("schedule", LRScheduler(policy=torch.optim.lr_scheduler.OneCycleLR,
                                             max_lr=self.lr, total_steps=steps,
                                             pct_start=_warmup_fraction(steps),
                                             step_every="batch")),
                ],
                optimizer__weight_decay=self.weight_decay,
                optimizer__foreach=True,  # one kernel per step for all tensors (CPU too)
                module__n_classes=n_classes,
                module__in_channels=c,
                module__width=self.width,
                module__fpn=self.backbone == "fpn",
                module__roi_op=self.roi_op,
                module__mask_loss=self.mask_loss,
                module__mask_image=self.mask_image,
                module__mask_box_expand=float(self.mask_box_expand),
                module__anchor_sizes=anchor_sizes,
                module__aspect_ratios=tuple(self.aspect_ratios),
                module__rpn_pre_nms_top_n=self.rpn_pre_nms_top_n,
                module__rpn_post_nms_top_n=self.rpn_post_nms_top_n,
                module__detections_per_image=self.detections_per_image,
                module__score_threshold=self.score_threshold,
                module__mean=mean.tolist(),
                module__std=std.tolist(),
            )
        self.n_classes_ = n_classes
        self.classes_ = np.arange(1, n_classes + 1)
        self.n_channels_ = c
        self.anchor_sizes_ = anchor_sizes
        self.input_scale_ = input_scale
        self.bit_depth_ = self.bit_depth if self.bit_depth is not None else \
            integer_bit_depth(X if isinstance(X, (list, tuple)) else list(
                np.asarray(tensors_to_numpy(X, "X"))))
        sizes = np.sqrt(np.prod(np.clip(all_boxes[:, 2:] - all_boxes[:, :2], 1, None), 1))
        self.object_sizes_ = ((float(sizes.min()), float(sizes.max())) if len(sizes)
                              else (float("nan"), float("nan")))
        self.object_size_ = typical_size(sizes, sizes**2)
        self._fit_area = float(max(xi.shape[1] * xi.shape[2] for xi in net_images))
        self._fit_objects = int(max(len(t[1]) for t in net_targets))
        self._fit_shape = net_shape
        self._fit_image_size = self.image_size
        return self

    # ------------------------------------------------------------------ inference
    def _check_predict_images(self, X):
        check_is_fitted(self)
        # parameters read at prediction time (predict_scales, predict_tile_size,
        # thresholds, batch_size) may have been set after fit
        self._validate_params()
        check_predict_scales(self.predict_scales)
        images = check_images(X, name="X", n_channels=self.n_channels_, min_size=_MIN_SIZE,
                              bits=self.bit_depth_, clip_integers=self.bit_depth is None)
        warn_inferred_bit_depth(X, self.bit_depth_)
        return images

    def _detect(self, X, images=None):
        """Per-image detections at input resolution: list of dicts of numpy arrays, and
        the validated images (``images``, when already validated, stand for ``X``)."""
        if images is None:
            images = self._check_predict_images(X)
        scales = check_predict_scales(self.predict_scales)
        out, prepared, dropped = self._detect_at(images, 1.0)
        target = getattr(self, "object_size_", float("nan"))
        tried = None
        if scales != (1.0,) and np.isfinite(target):
            counts = [{1.0: self._confident_count(d)} for d in out]
            sizes = [{1.0: self._confident_size(d, p[1])} for d, p in zip(out, prepared)]
            found = {}
            for scale in scales:
                if scale == 1.0:
                    continue
                members = [i for i, im in enumerate(images) if min(self._network_shape(
                    im.shape[1:], scale)) >= max(MIN_RESCALED_SIDE, _MIN_SIZE)]
                if not members:
                    continue
                det, prep, drop = self._detect_at([images[i] for i in members], scale)
                found[scale] = dict(zip(members, zip(det, prep, drop)))
                for i, d, p in zip(members, det, prep):
                    counts[i][scale] = self._confident_count(d)
                    sizes[i][scale] = self._confident_size(d, p[1])
            tried = []
            for i in range(len(images)):
                scale = choose_detection_scale(sizes[i], counts[i], target)
                tried.append((scale, sizes[i], counts[i]))
                if scale != 1.0:
                    out[i], prepared[i], dropped[i] = found[scale][i]
        for i, d in enumerate(dropped):
            if d is not None:
                warnings.warn(
                    f"MaskRCNN kept the {d[0]} best of {d[1]} detections in X[{i}], more "
                    f"than {d[0]} of them scoring above instance_score_threshold: objects "
                    f"are being dropped. Raise detections_per_image (now "
                    f"{self.detections_per_image} per training-image area).",
                    UserWarning, stacklevel=3)
        self._warn_scale(out, prepared, tried)
        return out, images

    def _confident_count(self, detections):
        """Sum of the scores of the detections scoring at least
        ``instance_score_threshold``: the number of objects they are expected to hold."""
        scores = detections["scores"]
        return float(scores[scores >= self.instance_score_threshold].sum())

    def _confident_size(self, detections, network_scale):
        """Typical size (:func:`~sklearn_papers.vision._scales.typical_size`, weighted
        by area) of the boxes of the detections scoring at least
        ``instance_score_threshold``, in network pixels (``network_scale``: ``(sy, sx)``
        from input to network pixels); NaN without such detections."""
        sy, sx = network_scale
        boxes = detections["boxes"][detections["scores"] >= self.instance_score_threshold]
        sides = np.clip(boxes[:, 2:] - boxes[:, :2], 1, None) * np.array([sx, sy])
        sizes = np.sqrt(np.prod(sides, 1))
        return typical_size(sizes, sizes**2)

    def _tile_shape(self, shape):
        """Network ``(h, w)`` of the windows a network input of ``shape`` is predicted
        in: the whole input unless ``predict_tile_size`` asks for windows (``"auto"``:
        the training images' shape, for inputs more than ``_TILE_AREA`` times their
        area)."""
        h, w = shape
        size = self.predict_tile_size
        fit_shape = getattr(self, "_fit_shape", None)
        if size is None or (size == "auto" and (fit_shape is None or h * w <= _TILE_AREA
                                                * fit_shape[0] * fit_shape[1])):
            return h, w
        th, tw = fit_shape if size == "auto" else (int(size), int(size))
        return min(h, int(th)), min(w, int(tw))

    def _detect_at(self, images, scale):
        """Detections (at input resolution) of validated images run through the network
        at ``scale``, the network inputs with their scales, and per image ``(cap, found)``
        when more confident detections than the cap were found (else None).

        A network input larger than the tile shape (:meth:`_tile_shape`) is run as
        windows of that shape overlapping by half a window; each window keeps the
        detections whose box centre is closer to its centre than to any other window's,
        and class-wise NMS (``box_nms_threshold`` of the module) removes an object found
        by two windows."""
        import torch

        from sklearn_papers.nn._detection import nms_mask
        from sklearn_papers.nn._mask_rcnn._roi_heads import expand_boxes

        module = self.net_.module_
        module.eval()
        dev = next(module.parameters()).device
        prepared = [self._to_network(im, scale) for im in images]
        # windows of each network input: (image, row, column, shape, owned rows, owned
        # columns)
        windows = []
        for i, (xi, _) in enumerate(prepared):
            h, w = xi.shape[1:]
            th, tw = self._tile_shape((h, w))
            rows, cols = tile_starts(h, th), tile_starts(w, tw)
            for r, own_r in zip(rows, owned_intervals(rows, th, h)):
                for c, own_c in zip(cols, owned_intervals(cols, tw, w)):
                    windows.append((i, r, c, (th, tw), own_r, own_c))
        # windows of one shape go through the network together
        groups = {}
        for k, win in enumerate(windows):
            groups.setdefault(win[3], []).append(k)
        found = [[] for _ in images]
        base = (module.rpn_pre_nms_top_n, module.rpn_post_nms_top_n)
        base_cap = module.roi_heads.detections_per_img
        floor = _PROPOSALS_PER_OBJECT * getattr(self, "_fit_objects", 0)
        budget_base = (max(base[0], 2 * floor), max(base[1], floor))
        for (th, tw), members in groups.items():
            # proposal and detection budgets per training-image area: an input k times
            # larger keeps k times the proposals and detections, as many per object as a
            # training image
            factor = max(1.0, th * tw / self._fit_area)
            budget = tuple(int(np.ceil(b * factor)) for b in budget_base)
            for start in range(0, len(members), self.batch_size):
                chunk = [windows[k] for k in members[start:start + self.batch_size]]
                xb = np.stack([prepared[i][0][:, r:r + th, c:c + tw]
                               for i, r, c, *_ in chunk])
                module.rpn_pre_nms_top_n, module.rpn_post_nms_top_n = budget
                # one more than kept, to tell when the cap drops objects
                module.roi_heads.detections_per_img = int(np.ceil(base_cap * factor)) + 1
                # each window's masks only for the detections it owns
                owned = (torch.tensor([[c, r] for _, r, c, *_ in chunk], dtype=torch.float32,
                                      device=dev),
                         torch.tensor([[*own_r, *own_c] for *_, own_r, own_c in chunk],
                                      dtype=torch.float32, device=dev))
                try:
                    with torch.no_grad():
                        det = module.detect(torch.from_numpy(xb).to(dev), owned,
                                            flip=bool(self.predict_flip))
                finally:
                    module.rpn_pre_nms_top_n, module.rpn_post_nms_top_n = base
                    module.roi_heads.detections_per_img = base_cap
                det = {k: v.cpu() for k, v in det.items()}
                for j, (i, r, c, _, own_r, own_c) in enumerate(chunk):
                    v = det["valid"][j]
                    boxes = det["boxes"][j][v] + torch.tensor([c, r, c, r],
                                                              dtype=torch.float32)
                    cx = (boxes[:, 0] + boxes[:, 2]) / 2
                    cy = (boxes[:, 1] + boxes[:, 3]) / 2
                    own = ((cy >= own_r[0]) & (cy < own_r[1]) & (cx >= own_c[0])
                           & (cx < own_c[1]))
                    found[i].append((boxes[own], det["scores"][j][v][own],
                                     det["labels"][j][v][own], det["masks"][j][v][own]))
        out, dropped = [], []
        for i, parts in enumerate(found):
            boxes, scores, labels, masks = (torch.cat(x) for x in zip(*parts))
            if len(parts) > 1 and len(scores):
                # an object found by two windows, its box centre on either side
                keep = nms_mask(boxes[None], scores[None], torch.ones_like(
                    scores[None], dtype=torch.bool), labels[None],
                    module.box_nms_threshold)[0]
                boxes, scores, labels, masks = (x[keep] for x in (boxes, scores, labels,
                                                                  masks))
            cap = self._detection_cap(prepared[i][0].shape[1:])
            confident = int((scores >= self.instance_score_threshold).sum())
            dropped.append((cap, len(scores)) if confident > cap else None)
            order = torch.argsort(-scores, stable=True)[:cap]
            sy, sx = prepared[i][1]
            boxes = boxes[order] / torch.tensor([sx, sy, sx, sy])
            # the RoI masks stay at their own resolution; they are pasted box by box
            # into the image when painted or returned
            out.append({"boxes": boxes.numpy().astype(np.float32),
                        "labels": labels[order].numpy().astype(np.int64),
                        "scores": scores[order].numpy().astype(np.float32),
                        "roi_masks": masks[order].numpy().astype(np.float32),
                        "roi_boxes": expand_boxes(
                            boxes, module.roi_heads.mask_box_expand).numpy().astype(
                                np.float32)})
        return out, prepared, dropped

    def _detection_cap(self, shape):
        """Most detections kept for a network input of ``shape``: ``detections_per_image``
        per training-image area (at least ``detections_per_image``)."""
        factor = max(1.0, shape[0] * shape[1] / self._fit_area)
        return int(np.ceil(self.detections_per_image * factor))

    def _warn_scale(self, detections, prepared, tried=None):
        """Warn when the detections (or their absence) suggest objects at a scale the
        model has not seen in ``fit``: none found in a large image, or a typical size
        (:meth:`_confident_size`) more than a factor 2 from :attr:`object_size_`, or
        another scale whose detections were closer to it by more than a factor 1.25, or
        closer with at least 5 objects but 1.25 times fewer than the kept scale (whose
        extra detections are then likely pieces of objects larger than in ``fit``).
        A scale beyond the kept one, away from 1, that finds clearly fewer objects is
        not compared: it joins (or cuts) the objects the kept scale finds.
        ``tried``: per image, the scale kept, and the typical size and the number of
        objects at each scale tried."""
        lo, hi = self.object_sizes_
        target = getattr(self, "object_size_", float("nan"))
        if not np.isfinite(lo):
            return
        for i, (d, (xi, (sy, sx))) in enumerate(zip(detections, prepared)):
            area = xi.shape[1] * xi.shape[2]
            confident = d["scores"] >= self.instance_score_threshold
            if not confident.any() and area >= 4 * self._fit_area:
                warnings.warn(
                    f"MaskRCNN found no object in X[{i}] ({xi.shape[1]} x {xi.shape[2]} "
                    f"network pixels, {area / self._fit_area:.0f} times the largest "
                    f"training image). If its objects are larger or smaller than those "
                    f"seen in fit ({lo:.0f} to {hi:.0f} px across), rescale the image so "
                    f"that they match (or set image_size), or fit on images at this "
                    f"scale.", UserWarning, stacklevel=4)
                continue
            if not confident.any():
                continue  # no size to compare; predict's threshold warning covers it
            size = self._confident_size(d, (sy, sx))
            scale, sizes, counts = tried[i] if tried is not None else (
                1.0, {1.0: size}, {})
            gap = size_gap(size, target)
            at = ", ".join(
                f"scale {s:g}: {v:.1f} px" + (f" ({counts[s]:.0f} objects)" if s in counts
                                              else "")
                for s, v in sorted(sizes.items()) if np.isfinite(v))
            if gap > np.log(FAR_FROM_TRAINING_SIZE):
                warnings.warn(
                    f"MaskRCNN's detections in X[{i}] are {size:.1f} px across (typical "
                    f"size in network pixels, predicted at scale {scale:g}), more than a "
                    f"factor {FAR_FROM_TRAINING_SIZE:g} from the objects seen in fit "
                    f"(object_size_={target:.1f} px); predict_scales="
                    f"{self.predict_scales!r} found {at}. Objects at another scale are "
                    f"often missed or split: resize the image so that its objects are "
                    f"about object_size_ across, or fit on objects of their size.",
                    UserWarning, stacklevel=4)
            elif any(size_gap(v, target) + np.log(SCALE_MARGIN) < gap
                     or (size_gap(v, target) < gap
                         and counts.get(s, 0.0) >= _MIN_OBJECTS_FOR_PIECES
                         and counts.get(s, 0.0) * SCALE_MARGIN < counts.get(scale, 0.0))
                     for s, v in sizes.items()
                     if s != scale and not _joins_past(s, scale, counts)):
                # closer in size by a margin; or closer, with fewer objects than the kept
                # scale, whose extra detections are then likely pieces of larger objects
                warnings.warn(
                    f"MaskRCNN kept scale {scale:g} for X[{i}] ({size:.1f} px across, "
                    f"object_size_={target:.1f} px) although another scale found "
                    f"detections closer to the size seen in fit, but fewer objects or "
                    f"objects the kept scale does not back: predict_scales="
                    f"{self.predict_scales!r} found {at} (typical sizes in network "
                    f"pixels). If the objects of this image are larger or smaller than "
                    f"those seen in fit, resize it before predicting.", UserWarning,
                    stacklevel=4)

    def predict_detections(self, X):
        """Detections of each image: boxes, classes, scores and masks.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        detections : list of n dicts
            ``"boxes"`` (k, 4) float32 ``(x1, y1, x2, y2)`` in input pixels, ``"labels"``
            (k,) int64 in ``1 .. n_classes_``, ``"scores"`` (k,) float32 in (0, 1],
            decreasing, and ``"masks"`` (k, H, W) bool (may overlap). ``k`` is at most
            ``detections_per_image``; 0 where nothing scores above ``score_threshold``.

        Warns
        -----
        UserWarning
            When an image at least 4 times the area of the largest training image has no
            detection scoring ``instance_score_threshold``, or the typical size of those
            detections, at the scale kept, differs from :attr:`object_size_` by more
            than a factor 2, or another scale of ``predict_scales`` found detections
            closer to it by more than a factor 1.25 (or closer, with at least 5 objects
            but 1.25 times fewer than the scale kept: pieces of larger objects) but was
            not taken (the message names the sizes and numbers of objects at each
            scale tried and ``predict_scales``): objects at a scale the model has not
            learned.
        """
        dets, images = self._detect(X)
        return [_with_masks(d, im.shape[1:], self.mask_threshold)
                for d, im in zip(dets, images)]

    def predict(self, X):
        """Instance label maps.

        Detections scoring at least ``instance_score_threshold`` are painted from the
        lowest score to the highest, so an overlapped pixel goes to the most confident
        one; ids are ``1 .. k`` by decreasing score.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        instance_maps : ndarray of shape (n, H, W), int64, or list of n arrays
            0 for background; a list of ``(H_i, W_i)`` maps when the images differ in
            size.

        Warns
        -----
        UserWarning
            As :meth:`predict_detections`, and when no detection of an image reaches
            ``instance_score_threshold``.

        Notes
        -----
        Each detection's mask is pasted within its box only, so memory grows with the
        image's pixels, not with pixels times detections (:meth:`predict_detections`
        returns full-image masks, ``k * H * W`` booleans).
        """
        dets, images = self._detect(X)
        unpainted = [(i, float(d["scores"].max())) for i, d in enumerate(dets)
                     if len(d["scores"]) and d["scores"].max() < self.instance_score_threshold]
        if unpainted:
            i, best = unpainted[0]
            more = f" and {len(unpainted) - 1} more image(s)" if len(unpainted) > 1 else ""
            warnings.warn(
                f"MaskRCNN.predict painted no object in X[{i}]{more}: its best detection "
                f"scores {best:.2f}, below instance_score_threshold="
                f"{self.instance_score_threshold}. Lower instance_score_threshold, or see "
                "every detection with its score in predict_detections; low scores on every "
                "image usually mean the model needs more training.", UserWarning,
                stacklevel=2)
        maps = [paint_detections(d, images[i].shape[1:], self.instance_score_threshold,
                                 self.mask_threshold) for i, d in enumerate(dets)]
        blank = [(i, int((d["scores"] >= self.instance_score_threshold).sum()))
                 for i, (d, m) in enumerate(zip(dets, maps))
                 if not m.any() and (d["scores"] >= self.instance_score_threshold).any()]
        if blank:
            i, n = blank[0]
            more = f" and {len(blank) - 1} more image(s)" if len(blank) > 1 else ""
            warnings.warn(
                f"MaskRCNN.predict painted no object in X[{i}]{more}: its {n} detection(s) "
                f"scoring at least instance_score_threshold={self.instance_score_threshold} "
                f"have empty masks (no pixel of their boxes reaches mask_threshold="
                f"{self.mask_threshold!r}). On an image without objects these are "
                "marks the mask head does not take for objects; on images with objects "
                "the mask head usually needs more training (max_epochs). "
                "predict_detections gives the boxes and scores.", UserWarning,
                stacklevel=2)
        if all(m.shape == maps[0].shape for m in maps):
            return np.stack(maps)
        return maps

    def score(self, X, y, semantic_maps=None):
        """Mask AP@[.5:.95] (COCO) of the detections.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).
        y : array-like of shape (n, H, W) of int, or list of n maps
            True instance maps (0 = background). Target dicts (which :meth:`fit` takes)
            are refused: the AP needs non-overlapping instance maps.
        semantic_maps : array-like of shape (n, H, W) of int or None, default=None
            True classes (``0 .. n_classes_``); with them the AP is class-aware (averaged
            over classes), without it is class-agnostic.

        Returns
        -------
        score : float
            In [0, 1], greater is better (NaN if no image has an instance).

        Raises
        ------
        ValueError
            If ``y`` is a list of target dicts, shapes disagree, a map holds negative or
            non-integer labels, or ``semantic_maps`` has a class above ``n_classes_``
            (the message names the image and the class).
        """
        from sklearn_papers.metrics import mask_average_precision

        check_is_fitted(self)
        if isinstance(y, (list, tuple)) and any(isinstance(t, dict) for t in y):
            raise ValueError("MaskRCNN.score takes y as instance maps of shape (n, H, W) "
                             "(0 = background), not target dicts: the AP needs one "
                             "non-overlapping instance map per image. Paint the masks "
                             "into label maps, or score predict_detections(X) yourself.")
        # the truth is checked against the images before the network runs
        images = self._check_predict_images(X)
        shapes = [im.shape[1:] for im in images]
        y = [check_label_map(m, f"y[{i}]", s) for i, (m, s) in enumerate(
            zip(_per_image(y, len(shapes), "y"), shapes))]
        targets = None
        if semantic_maps is not None:
            targets = _targets_from_maps(y, semantic_maps, shapes)
            for i, t in enumerate(targets):
                if len(t[1]) and t[1].max() > self.n_classes_:
                    raise ValueError(f"semantic_maps[{i}] has class {int(t[1].max())} but "
                                     f"the model was fitted with n_classes_="
                                     f"{self.n_classes_} (classes 1..{self.n_classes_}).")
        dets = [_with_masks(d, im.shape[1:], self.mask_threshold)
                for d, im in zip(self._detect(X, images)[0], images)]
        kwargs = {}
        if targets is not None:
            kwargs = {"true_labels": [t[1] for t in targets],
                      "pred_labels": [d["labels"] for d in dets]}
        return float(mask_average_precision(
            y, [d["masks"] for d in dets], pred_scores=[d["scores"] for d in dets],
            max_detections=self.detections_per_image, **kwargs))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.target_tags.required = True
        tags.non_deterministic = self.device != "cpu"
        return tags
