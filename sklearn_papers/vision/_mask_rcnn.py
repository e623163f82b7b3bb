"""MaskRCNN: instance segmentation by detection (He et al. 2017), trained from scratch."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from sklearn_papers.vision._instance_segmenter import _MAX_INFERRED_CLASSES, _pixel_scale

__all__ = ["MaskRCNN"]


# ----------------------------------------------------------------------------- input checks
def _check_images(images, name="images"):
    """``(n, C, H, W)`` float32 in about [0, 1] from (n, H, W), (n, H, W, C) or (n, C, H, W).

    Channels last is canonical (what :func:`~sklearn_papers.datasets.make_scenes` returns);
    a 4-D array is read as channels first only when its second axis has at most 4 entries
    and its last more than 4 (as :class:`InstanceSegmenter` reads it). Integer images (any
    dtype) are read as 0-255 and divided by 255, as :class:`InstanceSegmenter` does.
    """
    if hasattr(images, "toarray") or hasattr(images, "tocsr"):
        raise TypeError(f"{name} must be a dense array of images, not a sparse matrix.")
    if isinstance(images, (list, tuple)) and len(images):
        items = [np.asarray(im) for im in images]
        for i, im in enumerate(items[1:], 1):
            if im.shape != items[0].shape:
                raise ValueError(f"{name} must all have one shape: {name}[0] has shape "
                                 f"{items[0].shape} but {name}[{i}] has {im.shape}.")
        images = np.stack(items)
    arr = np.asarray(images)
    if arr.dtype == object or np.iscomplexobj(arr) or not (
            np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}.")
    if arr.ndim == 3:
        arr = arr[..., None]
    if arr.ndim != 4:
        raise ValueError(f"{name} must have shape (n, H, W), (n, H, W, C) or (n, C, H, W); "
                         f"got shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 images).")
    if arr.shape[1] <= 4 < arr.shape[-1]:  # the rule of InstanceSegmenter
        arr = np.moveaxis(arr, 1, -1)
    if min(arr.shape[1:3]) < 8:
        raise ValueError(f"{name} must be at least 8 x 8 pixels (after reading the channel "
                         f"axis), got {arr.shape[1]} x {arr.shape[2]}.")
    divisor = 255.0 if _pixel_scale(arr, name) != 1.0 else 1.0
    out = np.ascontiguousarray(np.moveaxis(arr, -1, 1), dtype=np.float32) / np.float32(divisor)
    if not np.isfinite(out).all():
        i = int(np.argwhere(~np.isfinite(out))[0, 0])
        raise ValueError(f"{name}[{i}] has non-finite values.")
    return out


def _check_label_map(arr, name, shape):
    arr = np.asarray(arr)
    if arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape} but its image is {shape}.")
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating):
            raise ValueError(f"{name} must hold non-negative integer labels, got dtype "
                             f"{arr.dtype}.")
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            pos = tuple(int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"{name} must hold integer labels; {name}"
                             f"[{', '.join(map(str, pos))}] = {float(arr[pos])!r}.")
        big = np.abs(arr) >= 2.0**63  # would overflow int64 (the cast is undefined)
        if big.any():
            pos = tuple(int(v) for v in np.argwhere(big)[0])
            raise ValueError(f"{name} has a label too large for int64: {name}"
                             f"[{', '.join(map(str, pos))}] = {float(arr[pos])!r}; labels must be "
                             "below 2**63.")
        arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} has negative labels (min {int(arr.min())}); 0 is the "
                         f"background.")
    if arr.size and np.issubdtype(arr.dtype, np.unsignedinteger) and (
            arr.max() > np.iinfo(np.int64).max):
        raise ValueError(f"{name} has a label too large for int64 ({int(arr.max())}); "
                         f"labels must be at most {np.iinfo(np.int64).max}.")
    return arr.astype(np.int64, copy=False)


def _targets_from_maps(instance_maps, semantic_maps, n, shape):
    """Per-image (boxes, labels, masks) from instance and optional semantic maps."""
    inst = list(instance_maps) if not isinstance(instance_maps, np.ndarray) or \
        instance_maps.ndim == 3 else None
    if inst is None or len(inst) != n:
        got = getattr(instance_maps, "shape", None) or len(inst or [])
        raise ValueError(f"y must give one (H, W) instance map per image ({n}); got "
                         f"{got}.")
    sem = None
    if semantic_maps is not None:
        sem = list(semantic_maps)
        if len(sem) != n:
            raise ValueError(f"semantic_maps has {len(sem)} maps but there are {n} images.")
    out = []
    for i in range(n):
        m = _check_label_map(inst[i], f"y[{i}]", shape)
        ids = np.unique(m)
        ids = ids[ids > 0]
        masks = m[None] == ids[:, None, None]
        if sem is None:
            labels = np.ones(len(ids), dtype=np.int64)
        else:
            s = _check_label_map(sem[i], f"semantic_maps[{i}]", shape)
            labels = np.empty(len(ids), dtype=np.int64)
            for j, mk in enumerate(masks):
                # majority class (smallest on ties), without a table as large as the class
                classes, counts = np.unique(s[mk], return_counts=True)
                counts[classes == 0] = 0
                if counts.sum() == 0:
                    raise ValueError(f"instance {ids[j]} of y[{i}] lies on "
                                     f"background (class 0) of semantic_maps[{i}].")
                labels[j] = int(classes[np.argmax(counts)])
        out.append((_boxes_of(masks), labels, masks))
    return out


def _boxes_of(masks):
    """Tight ``(x1, y1, x2, y2)`` boxes (max exclusive) of ``(k, H, W)`` masks."""
    k = masks.shape[0]
    boxes = np.zeros((k, 4), dtype=np.float32)
    for j in range(k):
        ys, xs = np.nonzero(masks[j])
        boxes[j] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    return boxes


def _targets_from_dicts(targets, n, shape):
    if len(targets) != n:
        raise ValueError(f"y has {len(targets)} target dicts but there are {n} images.")
    out = []
    for i, t in enumerate(targets):
        if not isinstance(t, dict) or not {"boxes", "labels", "masks"} <= set(t):
            keys = sorted(t) if isinstance(t, dict) else type(t).__name__
            raise ValueError(f"y[{i}] must be a dict with keys 'boxes', 'labels' and "
                             f"'masks'; got {keys}.")
        masks = np.asarray(t["masks"])
        labels = np.asarray(t["labels"])
        boxes = np.asarray(t["boxes"], dtype=np.float32)
        k = labels.shape[0] if labels.ndim == 1 else -1
        if k == 0:  # an image without objects: empty lists are fine
            masks = np.zeros((0,) + shape, dtype=bool) if masks.size == 0 else masks
            boxes = np.zeros((0, 4), dtype=np.float32) if boxes.size == 0 else boxes
        if labels.ndim != 1 or boxes.shape != (k, 4) or masks.shape != (k,) + shape:
            raise ValueError(
                f"y[{i}]: 'boxes' must be (k, 4), 'labels' (k,) and 'masks' (k, H, W) "
                f"with the image's (H, W) = {shape}; got {boxes.shape}, {labels.shape} and "
                f"{masks.shape}.")
        if k and (not np.issubdtype(labels.dtype, np.integer) or labels.min() < 1):
            raise ValueError(f"y[{i}]['labels'] must be integers >= 1 (0 is the "
                             f"background), got {labels.tolist()}.")
        if k and (not np.isfinite(boxes).all()
                  or (boxes[:, 2] < boxes[:, 0]).any() or (boxes[:, 3] < boxes[:, 1]).any()):
            j = int(np.argmax(~np.isfinite(boxes).all(1) | (boxes[:, 2] < boxes[:, 0])
                              | (boxes[:, 3] < boxes[:, 1])))
            raise ValueError(f"y[{i}]['boxes'][{j}] = {boxes[j].tolist()} is not a box "
                             f"(x1, y1, x2, y2) with x2 >= x1 and y2 >= y1.")
        out.append((boxes, labels.astype(np.int64), masks.astype(bool)))
    return out


def _pad_targets(targets, shape):
    n = len(targets)
    g = max([1] + [len(t[1]) for t in targets])
    boxes = np.zeros((n, g, 4), dtype=np.float32)
    labels = np.zeros((n, g), dtype=np.int64)
    masks = np.zeros((n, g) + shape, dtype=np.uint8)
    for i, (b, lab, m) in enumerate(targets):
        k = len(lab)
        boxes[i, :k], labels[i, :k], masks[i, :k] = b, lab, m
    return boxes, labels, masks


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

    A small GroupNorm ResNet-style backbone (one feature map, ``"c4"``, or a feature
    pyramid, ``"fpn"``), a region proposal network on anchors, RoIAlign (or RoIPool) of
    each proposal, a box head (classification and class-specific box regression) and a
    fully convolutional mask head predicting one 28 x 28 mask per class. Trained with
    ``L = L_cls + L_box + L_mask`` plus the RPN's objectness and box losses; the mask loss
    is the per-class sigmoid binary cross-entropy on positive RoIs, the target being the
    ground-truth mask inside the RoI (section 3 of the paper). Inference keeps the top
    proposals, scores and refines them per class, applies NMS per class, runs the mask
    head on the kept detections and pastes the masks, thresholded at 0.5, into the image.

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
    anchor_sizes : tuple of float, default=(8, 16, 32)
        Anchor sizes in pixels of the network input (with ``"fpn"``: one per level).
    aspect_ratios : tuple of float, default=(0.5, 1.0, 2.0)
        Anchor height / width ratios.
    rpn_pre_nms_top_n : int, default=100
        Proposals kept per image and level before the RPN's NMS (IoU 0.7).
    rpn_post_nms_top_n : int, default=50
        Proposals kept per image after it (training and inference; the paper's 1000 to
        2000 are for COCO images with many more objects than these scenes).
    detections_per_image : int, default=100
        Most detections returned per image (the paper: 100).
    score_threshold : float, default=0.05
        Detections scoring below it are discarded before NMS.
    instance_score_threshold : float, default=0.5
        Detections scoring below it are left out of :meth:`predict`'s label maps
        (:meth:`predict_detections` and :meth:`score` use every detection above
        ``score_threshold``, as COCO's AP does).
    image_size : int or None, default=None
        Side the images are resized to (bilinear) for the network; outputs are mapped
        back to the input size. None runs at the input size.
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
    >>> model = MaskRCNN(anchor_sizes=(4, 8, 16), max_epochs=1, random_state=0)
    >>> model.fit(data.images, data.instance_maps, data.semantic_maps).predict(
    ...     data.images[:2]).shape
    (2, 32, 32)
    """

    _parameter_constraints = {
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
        "backbone": [StrOptions({"c4", "fpn"})],
        "roi_op": [StrOptions({"align", "pool"})],
        "mask_loss": [StrOptions({"sigmoid", "softmax"})],
        "anchor_sizes": [tuple, list],
        "aspect_ratios": [tuple, list],
        "rpn_pre_nms_top_n": [Interval(Integral, 1, None, closed="left")],
        "rpn_post_nms_top_n": [Interval(Integral, 1, None, closed="left")],
        "detections_per_image": [Interval(Integral, 1, None, closed="left")],
        "score_threshold": [Interval(Real, 0, 1, closed="left")],
        "instance_score_threshold": [Interval(Real, 0, 1, closed="both")],
        "image_size": [Interval(Integral, 16, None, closed="left"), None],
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
                 mask_loss="sigmoid", anchor_sizes=(8, 16, 32),
                 aspect_ratios=(0.5, 1.0, 2.0), rpn_pre_nms_top_n=100,
                 rpn_post_nms_top_n=50, detections_per_image=100, score_threshold=0.05,
                 instance_score_threshold=0.5, image_size=None, width=16, max_epochs=40,
                 batch_size=8, lr=3e-3, weight_decay=1e-4, device="cpu", random_state=None,
                 verbose=0):
        self.n_classes = n_classes
        self.backbone = backbone
        self.roi_op = roi_op
        self.mask_loss = mask_loss
        self.anchor_sizes = anchor_sizes
        self.aspect_ratios = aspect_ratios
        self.rpn_pre_nms_top_n = rpn_pre_nms_top_n
        self.rpn_post_nms_top_n = rpn_post_nms_top_n
        self.detections_per_image = detections_per_image
        self.score_threshold = score_threshold
        self.instance_score_threshold = instance_score_threshold
        self.image_size = image_size
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
        for name in ("anchor_sizes", "aspect_ratios"):
            vals = getattr(self, name)
            if len(vals) == 0 or not all(isinstance(v, Real) and v > 0 for v in vals):
                raise ValueError(f"{name} must be a non-empty sequence of positive numbers, "
                                 f"got {vals!r}.")
        if self.backbone == "fpn" and len(self.anchor_sizes) != 3:
            raise ValueError(f"backbone='fpn' has 3 levels and takes one anchor size per "
                             f"level; anchor_sizes={self.anchor_sizes!r} has "
                             f"{len(self.anchor_sizes)}.")

    def _to_network(self, x):
        """Resize ``(n, C, H, W)`` float32 images to the network size; returns the scale
        ``(sy, sx)`` from input to network pixels too."""
        h, w = x.shape[-2:]
        if self.image_size is None or (h, w) == (self.image_size, self.image_size):
            return x, (1.0, 1.0)
        import torch
        import torch.nn.functional as F

        out = F.interpolate(torch.from_numpy(x), size=(self.image_size, self.image_size),
                            mode="bilinear", align_corners=False).numpy()
        return out, (self.image_size / h, self.image_size / w)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, semantic_maps=None):
        """Train the network.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W)
            Images; channels last is canonical. Any integer dtype (uint8, uint16, int32,
            int64, ...) is read as 8-bit intensities in 0-255 and divided by 255 (values
            outside 0-255 raise a ``ValueError`` naming the image); float images (about
            0-1) are used as given.
        y : array-like of shape (n, H, W) of int, or list of n dicts
            Instance label maps (0 = background, each other id one object), or detection
            annotations: one dict per image with ``"boxes"`` (k, 4) float
            ``(x1, y1, x2, y2)`` in pixels (max exclusive), ``"labels"`` (k,) int in
            ``1 .. n_classes`` and ``"masks"`` (k, H, W) bool. An image without objects
            is a valid negative example.
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
            non-integer labels, a dict lacks a key, a label exceeds ``n_classes`` (or
            1024 with ``n_classes=None``), or ``semantic_maps`` is given with dicts.
        FloatingPointError
            If the training loss becomes non-finite.
        """
        import torch

        from sklearn_papers.nn._mask_rcnn import MaskRCNNModule
        from sklearn_papers.nn._skorch import (
            build_net,
            check_device,
            loss_curve,
            seed_from_random_state,
            torch_seeded,
        )

        self._check_params()
        x = _check_images(X, "X")
        n, c, h, w = x.shape
        dict_input = isinstance(y, (list, tuple)) and len(y) > 0 \
            and all(isinstance(t, dict) for t in y)
        if dict_input:
            if semantic_maps is not None:
                raise ValueError("semantic_maps cannot be combined with target dicts: the "
                                 "dicts' 'labels' give the classes.")
            targets = _targets_from_dicts(y, n, (h, w))
        else:
            targets = _targets_from_maps(y, semantic_maps, n, (h, w))
        max_label = max([1] + [int(t[1].max()) for t in targets if len(t[1])])
        if self.n_classes is None and max_label > _MAX_INFERRED_CLASSES:
            i = next(i for i, t in enumerate(targets) if len(t[1]) and t[1].max() == max_label)
            where = "y" if dict_input else "semantic_maps"
            raise ValueError(
                f"{where}[{i}] has class {max_label}: with n_classes=None that would mean "
                f"{max_label} object classes (a head of {max_label + 1} outputs). Relabel "
                f"the classes to 1..K, or pass n_classes explicitly (at most "
                f"{_MAX_INFERRED_CLASSES} classes are inferred).")
        n_classes = max_label if self.n_classes is None else int(self.n_classes)
        if max_label > n_classes:
            raise ValueError(f"the data has class {max_label} but n_classes={n_classes}.")
        x, (sy, sx) = self._to_network(x)
        boxes, labels, masks = _pad_targets(targets, (h, w))
        if (sy, sx) != (1.0, 1.0):
            boxes = boxes * np.array([sx, sy, sx, sy], dtype=np.float32)
            mt = torch.from_numpy(masks.reshape(-1, 1, h, w).astype(np.float32))
            mt = torch.nn.functional.interpolate(mt, size=x.shape[-2:], mode="bilinear",
                                                 align_corners=False)
            masks = (mt.numpy() >= 0.5).astype(np.uint8).reshape(n, -1, *x.shape[-2:])
        mean = x.mean(axis=(0, 2, 3), dtype=np.float64)
        std = x.std(axis=(0, 2, 3), dtype=np.float64)
        std = np.where(std > 0, std, 1.0)

        device = check_device(self.device)
        seed = seed_from_random_state(self.random_state)
        steps = self.max_epochs * -(-n // self.batch_size)
        from skorch.callbacks import GradientNormClipping, LRScheduler

        from sklearn_papers.nn._mask_rcnn import LossOutputNet

        with torch_seeded(seed, device):
            net = build_net(
                MaskRCNNModule,
                seed=seed,
                net_class=LossOutputNet,
                max_epochs=self.max_epochs,
                lr=self.lr,
                batch_size=self.batch_size,
                optimizer=torch.optim.AdamW,
                device=device,
                verbose=self.verbose,
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
                module__anchor_sizes=tuple(self.anchor_sizes),
                module__aspect_ratios=tuple(self.aspect_ratios),
                module__rpn_pre_nms_top_n=self.rpn_pre_nms_top_n,
                module__rpn_post_nms_top_n=self.rpn_post_nms_top_n,
                module__detections_per_image=self.detections_per_image,
                module__score_threshold=self.score_threshold,
                module__mean=mean.tolist(),
                module__std=std.tolist(),
            )
            net.fit({"images": x, "boxes": boxes, "labels": labels, "masks": masks}, None)
        self.net_ = net
        self.loss_curve_ = loss_curve(net)
        self.n_iter_ = len(self.loss_curve_)
        if not np.all(np.isfinite(self.loss_curve_)):
            raise FloatingPointError(f"training loss became non-finite (loss_curve_="
                                     f"{self.loss_curve_}); lower lr={self.lr!r}.")
        self.n_classes_ = n_classes
        self.classes_ = np.arange(1, n_classes + 1)
        self.n_channels_ = c
        self._image_shape = (h, w)
        return self

    # ------------------------------------------------------------------ inference
    def _detect(self, X):
        """Per-image detections at input resolution: list of dicts of numpy arrays."""
        import torch

        from sklearn_papers.nn._mask_rcnn import paste_masks

        check_is_fitted(self)
        x = _check_images(X, "X")
        if x.shape[1] != self.n_channels_:
            raise ValueError(f"X has {x.shape[1]} channels but the model was fitted "
                             f"on {self.n_channels_}.")
        h, w = x.shape[-2:]
        xn, (sy, sx) = self._to_network(x)
        module = self.net_.module_
        module.eval()
        dev = next(module.parameters()).device
        scale = torch.tensor([sx, sy, sx, sy])
        out = []
        for start in range(0, len(xn), self.batch_size):
            det = module.detect(torch.from_numpy(xn[start:start + self.batch_size]).to(dev))
            det = {k: v.cpu() for k, v in det.items()}
            for i in range(det["valid"].shape[0]):
                v = det["valid"][i]
                boxes = det["boxes"][i][v] / scale
                masks = paste_masks(det["masks"][i][v], boxes, h, w)
                out.append({"boxes": boxes.numpy().astype(np.float32),
                            "labels": det["labels"][i][v].numpy().astype(np.int64),
                            "scores": det["scores"][i][v].numpy().astype(np.float32),
                            "masks": masks.numpy()})
        return out

    def predict_detections(self, X):
        """Detections of each image: boxes, classes, scores and masks.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W)
            Images with the channels seen in ``fit``.

        Returns
        -------
        detections : list of n dicts
            ``"boxes"`` (k, 4) float32 ``(x1, y1, x2, y2)`` in input pixels, ``"labels"``
            (k,) int64 in ``1 .. n_classes_``, ``"scores"`` (k,) float32 in (0, 1],
            decreasing, and ``"masks"`` (k, H, W) bool (may overlap). ``k`` is at most
            ``detections_per_image``; 0 where nothing scores above ``score_threshold``.
        """
        return self._detect(X)

    def predict(self, X):
        """Instance label maps.

        Detections scoring at least ``instance_score_threshold`` are painted from the
        lowest score to the highest, so an overlapped pixel goes to the most confident
        one; ids are ``1 .. k`` by decreasing score.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W)
            Images with the channels seen in ``fit``.

        Returns
        -------
        instance_maps : ndarray of shape (n, H, W), int64
            0 for background.
        """
        dets = self._detect(X)
        x_shape = _check_images(X, "X").shape[-2:]
        maps = np.zeros((len(dets),) + tuple(x_shape), dtype=np.int64)
        for i, d in enumerate(dets):
            keep = np.nonzero(d["scores"] >= self.instance_score_threshold)[0]
            for rank in keep[::-1]:  # lowest score first, the best painted last
                maps[i][d["masks"][rank]] = rank + 1
            # ids 1..k without gaps (some detections may be fully covered)
            ids = np.unique(maps[i])
            ids = ids[ids > 0]
            lut = np.zeros(len(d["scores"]) + 1, dtype=np.int64)
            lut[ids] = np.arange(1, len(ids) + 1)
            maps[i] = lut[maps[i]]
        return maps

    def score(self, X, y, semantic_maps=None):
        """Mask AP@[.5:.95] (COCO) of the detections.

        Parameters
        ----------
        X : array-like of shape (n, H, W, C), (n, C, H, W) or (n, H, W)
            Images with the channels seen in ``fit``.
        y : array-like of shape (n, H, W) of int
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
        dets = self._detect(X)
        x_shape = _check_images(X, "X").shape[-2:]
        kwargs = {}
        if semantic_maps is not None:
            targets = _targets_from_maps(y, semantic_maps, len(dets),
                                         tuple(x_shape))
            for i, t in enumerate(targets):
                if len(t[1]) and t[1].max() > self.n_classes_:
                    raise ValueError(f"semantic_maps[{i}] has class {int(t[1].max())} but "
                                     f"the model was fitted with n_classes_="
                                     f"{self.n_classes_} (classes 1..{self.n_classes_}).")
            kwargs = {"true_labels": [t[1] for t in targets],
                      "pred_labels": [d["labels"] for d in dets]}
        return float(mask_average_precision(
            y, [d["masks"] for d in dets], pred_scores=[d["scores"] for d in dets],
            max_detections=self.detections_per_image, **kwargs))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.non_deterministic = self.device != "cpu"
        return tags
