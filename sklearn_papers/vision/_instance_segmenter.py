"""InstanceSegmenter: real-time joint semantic and instance segmentation (Milioto et al. 2019)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_papers.metrics._segmentation import symmetric_best_dice
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from sklearn_papers.utils._tensors import tensors_to_numpy
from sklearn_papers.utils._validation import check_sample_weight
from sklearn_papers.vision._instance_grouping import (
    _GROUPINGS,
    _SLIC_COMPACTNESS,
    _SLIC_PIXELS_PER_SEGMENT,
    _center_heatmap,
    _count_centres,
    _instance_size,
    _mode_downsample,
    _pad_to,
    _relabel,
    _upsample,
)
from sklearn_papers.vision._scales import (
    FAR_FROM_TRAINING_SIZE,
    MAX_INPUT_SCALE,
    MIN_RESCALED_SIDE,
    SCALE_MARGIN,
    auto_input_scale,
    check_predict_scales,
    choose_scale,
    rescaled_shape,
    resize_image,
    resize_labels,
    scale_is_backed,
    size_gap,
    typical_size,
)
from sklearn_papers.vision._validation import (
    MAX_INFERRED_CLASSES,
    check_images,
    check_label_maps,
    integer_bit_depth,
    warn_inferred_bit_depth,
)

__all__ = ["InstanceSegmenter"]


# ----------------------------------------------------------------------------- validation
#: Smallest image side InstanceSegmenter takes.
_MIN_SIZE = 2
#: ``input_scale="auto"`` enlarges the images until the typical training object is at
#: least this many output strides across: the gaps between neighbouring objects then
#: span output pixels, so that the semantic map keeps them apart.
_MIN_OBJECT_STRIDES = 5


def _pad_images_edge(images, shape):
    """``(n, C, H, W)`` array of ``(C, H_i, W_i)`` images padded at the bottom and right to
    ``shape`` with their edge values."""
    return np.stack([np.pad(im, ((0, 0), (0, shape[0] - im.shape[1]),
                                 (0, shape[1] - im.shape[2])), mode="edge")
                     for im in images])


def _pad_maps(maps, shape):
    """``(n, H, W)`` int64 array of label maps padded with background (0) to ``shape``."""
    out = np.zeros((len(maps),) + tuple(shape), dtype=np.int64)
    for i, m in enumerate(maps):
        out[i, : m.shape[0], : m.shape[1]] = m
    return out


def _group_norm_one_value(norm, width, stride, padded_shape):
    """Whether ``norm="group"`` would normalise one value per group: the network outputs
    are 1 x 1 (padded images of ``stride x stride`` pixels) and a norm layer (encoder
    ``width``, decoder ``max(8, width // 2)`` channels, ``min(8, channels)`` groups) has
    groups of one channel."""
    if norm != "group" or padded_shape[0] * padded_shape[1] != stride * stride:
        return False
    return min(c // min(8, c) for c in (width, max(8, width // 2))) == 1


def _instance_classes(instance, semantic):
    """Class of every instance of one image; raises if an instance spans two classes."""
    fg = instance > 0
    ids, inverse = np.unique(instance[fg], return_inverse=True)
    classes = semantic[fg]
    lo = np.full(ids.size, np.iinfo(np.int64).max)
    hi = np.full(ids.size, -1)
    np.minimum.at(lo, inverse, classes)
    np.maximum.at(hi, inverse, classes)
    return ids, lo, hi



def _listed(items, most=5):
    """``items`` joined, the first ``most`` of them and how many more."""
    shown = "; ".join(items[:most])
    return shown if len(items) <= most else f"{shown}; and {len(items) - most} more"


def _warn_scales(refused, far, target, empty=(), unchecked=()):
    """The warnings of ``predict_scales`` for one call of a predict method (stack: the
    public method, ``_segment``, this function)."""
    if unchecked:
        warnings.warn(
            f"predict_scales kept scale 1 for {len(unchecked)} image(s) in which the "
            f"network found no confident instance centre at any scale: the instances "
            f"found (closer in size to those seen in fit, object_size_={target:.1f} px, "
            f"at another scale) are not confirmed as objects, so their sizes cannot "
            f"tell the objects' scale: {_listed(list(unchecked))}. Typical sizes are in "
            f"pixels of the rescaled image. The model may need more training "
            f"(max_epochs), or the images differ from those of fit; if their objects "
            f"are larger or smaller than object_size_, resize them before predicting. "
            f"predict_scales=(1.0,) predicts at the input scale only.",
            UserWarning, stacklevel=4)
    if empty:
        warnings.warn(
            f"No instances were found in {len(empty)} image(s) at any scale of "
            f"predict_scales: {_listed(list(empty))}. The objects may be far from the "
            f"size seen in fit (object_size_={target:.1f} px), or the images unlike "
            f"those of fit (brightness, contrast, bit depth, colour channels).",
            UserWarning, stacklevel=4)
    if refused:
        warnings.warn(
            f"predict_scales kept scale 1 for {len(refused)} image(s) in which another "
            f"scale found instances closer in size to those seen in fit "
            f"(object_size_={target:.1f} px) but no confident instance centre, or "
            f"fewer (less than 1 / {SCALE_MARGIN:g} of those at scale 1 or at a scale "
            f"between), as when the "
            f"network joins objects into instances of about the training size: "
            f"{_listed(refused)}. Typical sizes are in pixels of the rescaled image. If "
            f"the objects of such an image are larger or smaller than those seen in "
            f"fit, resize it before predicting; predict_scales=(1.0,) predicts at the "
            f"input scale only.", UserWarning, stacklevel=4)
    if far:
        warnings.warn(
            f"In {len(far)} image(s) the instances found differ in typical size from "
            f"those seen in fit (object_size_={target:.1f} px) by more than a factor "
            f"{FAR_FROM_TRAINING_SIZE:g} at every scale of predict_scales (sizes in "
            f"pixels of the rescaled image): {_listed(far)}. Resize such images so that "
            f"their objects are about object_size_ across, or fit on objects of their "
            f"size.", UserWarning, stacklevel=4)


# ----------------------------------------------------------------------------- estimator
class InstanceSegmenter(BaseEstimator):
    """Joint semantic and instance segmentation with centre seeding and pixel embeddings.

    Read more in the :doc:`user guide </user_guide/images>` and on the :doc:`paper page
    </papers/instance_segmentation>`.

    A shared convolutional encoder feeds three decoders at ``1 / output_stride`` of the
    input resolution (Milioto et al. 2019): semantic class logits trained with
    class-weighted cross-entropy (weights ``1 / ln(1.02 + f_c)`` of the class pixel
    frequencies ``f_c``, as in ENet), an instance-centre heatmap trained with a
    focal-modulated binary cross-entropy (exponent ``gamma``, against the
    over-representation of the background; Gaussian targets, 1 at each instance's
    innermost pixel and its 8-neighbours) and per-pixel embeddings trained with the discriminative
    loss (:class:`sklearn_papers.nn.DiscriminativeLoss`, De Brabandere et al. 2017).

    Inference (:meth:`predict`): the semantic map masks the other two outputs per class;
    local maxima of the heatmap above ``center_threshold`` are centres; a centre whose
    embedding lies closer than ``delta_d`` to a stronger centre's is a duplicate and
    dropped; every pixel of the class joins the centre with the closest embedding among
    the centres of its connected component of the class (objects apart in the image are
    never merged; a component without a centre is one instance). The low-resolution maps
    are upsampled to the input size by nearest neighbour or by the majority vote of SLIC
    superpixels of the image (``slic=True``).

    Parameters
    ----------
    n_classes : int or None, default=None
        Number of object classes (labels ``1..n_classes`` of ``semantic_maps``; 0 is the
        background). None: the largest label in ``fit``'s semantic maps (1 when they
        are not given: every instance is of class 1); a largest label above 1024 then
        raises (relabel the classes to ``1..K`` or pass ``n_classes``).
    embedding_dim : int, default=8
        Dimension of the pixel embeddings (the paper uses 32; 8 suffices for a few
        objects per image).
    delta_v : float, default=0.5
        Pull margin of the discriminative loss. Also used to decide duplicates at
        inference, see ``delta_d``.
    delta_d : float, default=1.5
        Push margin of the discriminative loss (instance means are pushed at least
        ``2 * delta_d`` apart). At inference, centres closer than ``delta_d`` in
        embedding space are duplicates, and it is the mean-shift bandwidth of
        ``grouping="mean_shift"``.
    center_threshold : float in (0, 1), default=0.7
        Heatmap probability above which a local maximum is a centre (the paper: 0.7).
    gamma : float, default=2.0
        Focusing exponent of the centre heatmap's cross-entropy; 0 is plain
        cross-entropy.
    output_stride : {1, 2, 4, 8}, default=2
        Downsampling factor of the network outputs.
    slic : bool, default=False
        Upsample the low-resolution maps with SLIC superpixels (``skimage.segmentation.
        slic``: superpixels of about 16 pixels, compactness 40 in Lab space, smoothing
        0.5 pixel; the paper's upsampling) instead of nearest neighbour. Read at
        prediction time, so it can be switched on a fitted estimator with
        ``set_params``. Off by default: on the grey, textured coins photograph
        (``examples/plot_instance_segmentation_coins.py``) nearest neighbour scores higher best Dice and mask
        AP on held-out tiles than SLIC, whose superpixels straddle the coins' edges.
    grouping : {"centers", "mean_shift", "connected_components"}, default="centers"
        How pixels of a class become instances: the paper's centre seeding; mean-shift
        of the embeddings without the centre head (De Brabandere et al. 2017); or
        connected components of the semantic map (no instance heads). Read at
        prediction time.
    predict_scales : "auto" or sequence of float, default="auto"
        Scales at which :meth:`predict`, :meth:`predict_instances`,
        :meth:`predict_semantic` and :meth:`score` segment each image (resized,
        bilinear and antialiased; the maps come back at the input size by nearest
        neighbour). Each image keeps the scale whose instances are closest in size to
        those seen in ``fit`` (:attr:`object_size_`; sizes are ``sqrt(area)``, the median
        weighted by area, in pixels of the rescaled image): its own scale unless another
        is closer by more than a factor 1.25 and finds instance centres, at least
        ``1 / 1.25`` as many as its own scale and as every scale tried between (local
        maxima of the centre heatmap above ``center_threshold``, duplicates dropped as
        in centre seeding, whatever the ``grouping``). The sizes alone can mislead: a
        network shown objects smaller than those it learned, or joining touching
        objects, makes instances of about or above the training size, and such joined
        objects lose their centres. When the scale closest in size finds fewer
        centres, or none, the image keeps its own scale, and a ``UserWarning`` names it
        with both scales (in its own words when no scale finds a centre, as with a
        briefly trained model); another names the images whose instances differ from
        ``object_size_`` by more than a factor 2 at every scale tried (one warning of
        each kind per call). ``"auto"``: 0.25, 0.5, 1 and 2
        (objects up to 4 times larger or 2 times smaller than in ``fit``); ``(1.0,)``
        predicts at the input scale only, without these checks. The input scale is
        always a candidate: ``(2.0,)`` compares scales 1 and 2; to predict at another
        scale only, resize the images before predicting. Scales that make an image
        smaller than 16 pixels a side are skipped. Read at prediction time. Each scale
        other than 1 costs one more pass through the network (scale 2 four times the
        pixels); ``(1.0,)`` is the fastest. A model trained on tiles at one scale thus
        segments whole images at another (e.g. ``examples/plot_instance_segmentation_coins.py``: trained on
        half-resolution tiles, it segments the photograph at its native resolution).
    input_scale : "auto" or float, default="auto"
        Factor by which the images are enlarged (bilinear) before the network, in ``fit``
        and at prediction; the maps come back at the input size (nearest neighbour).
        ``"auto"``: the smallest integer factor (at most 4) that makes the typical
        training object (:attr:`object_size_`) at least 5 output strides across (10
        pixels at ``output_stride=2``), 1 for larger objects. Small objects, such as
        printed characters about 6 pixels across, are otherwise lost: the gaps between
        them are thinner than an output pixel, and neighbours join into one instance. A
        factor ``f`` costs about ``f ** 2`` times the time and memory. A number in
        [0.25, 4] fixes the factor (``1.0``: the network sees the images as given).
        The fitted factor is :attr:`input_scale_`.
    norm : {"batch", "group"} or None, default="batch"
        Normalisation after every convolution. With ``"batch"`` and images so small
        that the outputs are 1 x 1 (at most ``output_stride`` pixels a side), a
        training batch needs two images: a last batch of one image is dropped from
        each epoch, and a single training image or ``batch_size=1`` raises; ``"group"``
        then needs ``width >= 32`` (two channels per group): with a smaller width,
        ``fit`` and every predict method (and ``score``) raise a ``ValueError`` on such
        images.
    bit_depth : int or None, default=None
        Bits of integer images other than uint8 (uint8 is read as 0-255): they are
        divided by ``2 ** bit_depth - 1``. None: the smallest of 8, 10, 12, 14 and 16
        bits that holds the largest value of the training images (12-bit microscopy
        data stored as uint16 reads as 12-bit), kept for prediction
        (:attr:`bit_depth_`); an image brighter than that depth at prediction
        has its values above ``2 ** bit_depth_ - 1`` clipped to it, with a
        ``UserWarning``. A declared depth is kept as is: values beyond it raise. Fitted
        on uint8 or float images only (no depth kept), integer images of another dtype
        at prediction are read by the depth their own batch needs, with a
        ``UserWarning`` naming the first.
    width : int, default=16
        Channels of the shared encoder (each decoder has ``max(8, width // 2)``).
    max_epochs : int, default=30
        Passes over the training images.
    batch_size : int, default=16
        Images per batch.
    lr : float, default=3e-3
        Adam learning rate.
    device : str, default="cpu"
        Torch device, e.g. ``"cuda"``.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and batch shuffling; the global RNGs are left
        untouched.
    verbose : int, default=0
        1 prints skorch's table of the training loss per epoch.

    Attributes
    ----------
    n_classes_ : int
        Number of object classes.
    n_features_in_ : int
        Number of image channels seen in ``fit`` (the network is fully convolutional
        and its embeddings hold offsets in pixels: image height and width may change
        between ``fit`` and ``predict``, e.g. fit on tiles and predict whole images).
    bit_depth_ : int or None
        Bit depth of integer images other than uint8 (``bit_depth`` or the one found in
        ``fit``; None when ``fit`` saw none, and prediction then finds its own).
    object_size_ : float
        Typical size of the training instances, ``sqrt(area)`` in pixels, the median
        weighted by area (the size of the instance a typical object pixel belongs to);
        NaN without instances. ``predict_scales`` matches it.
    input_scale_ : float
        Factor by which the network sees the images enlarged (``input_scale``, or the
        one ``"auto"`` chose from :attr:`object_size_`).
    class_weights_ : ndarray of shape (n_classes + 1,)
        Cross-entropy weight of the background and of each class.
    net_ : skorch.NeuralNet
        The trained net; ``net_.module_`` is a
        :class:`sklearn_papers.nn.JointSegmenterModule`.
    loss_curve_ : list of float
        Mean training loss of each epoch.
    n_iter_ : int
        Number of epochs run.

    See Also
    --------
    sklearn_papers.nn.DiscriminativeLoss : The embedding loss.
    sklearn_papers.metrics.symmetric_best_dice : The score of :meth:`score`.
    sklearn_papers.datasets.make_scenes : Scenes with touching objects to train on.

    Notes
    -----
    Images: ``(n, H, W, C)`` (channels last) is the canonical layout; ``(n, C, H, W)``
    is accepted when ``C <= 4 < W``, and ``(n, H, W)`` is one channel; a list may hold
    images of different sizes (``fit`` pads them at the bottom and right to the largest,
    with their edge values and background labels; the predict methods then return
    lists). uint8 images are read as 0-255, other integer dtypes by their bit depth
    (``bit_depth``), bool as 0/1, and float images must lie in [0, 1] (a ``ValueError``
    names the image otherwise). One image given where a batch is expected raises and
    says to pass ``X[None]``. H and W need not be multiples of ``output_stride`` (images
    are padded at the bottom and right, outputs cropped).

    References
    ----------
    .. [1] Milioto, A., Mandtler, L., Stachniss, C. (2019). Fast instance and semantic
       segmentation exploiting local connectivity, metric learning, and one-shot
       detection for robotics. IEEE International Conference on Robotics and
       Automation (ICRA).
    .. [2] De Brabandere, B., Neven, D., Van Gool, L. (2017). Semantic instance
       segmentation with a discriminative loss function. CVPR Workshops.
       https://arxiv.org/abs/1708.02551
    .. [3] Achanta, R., Shaji, A., Smith, K., Lucchi, A., Fua, P., Suesstrunk, S.
       (2012). SLIC superpixels compared to state-of-the-art superpixel methods. IEEE
       TPAMI 34(11), 2274-2282. https://doi.org/10.1109/TPAMI.2012.120

    Examples
    --------
    >>> from sklearn_papers.datasets import make_scenes
    >>> from sklearn_papers.vision import InstanceSegmenter
    >>> data = make_scenes(16, image_size=32, random_state=0)
    >>> seg = InstanceSegmenter(width=8, max_epochs=1, random_state=0)
    >>> seg = seg.fit(data.images, data.instance_maps, semantic_maps=data.semantic_maps)
    >>> seg.predict(data.images[:2]).shape
    (2, 32, 32)
    """

    _parameter_constraints = {
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "delta_v": [Interval(Real, 0, None, closed="left")],
        "delta_d": [Interval(Real, 0, None, closed="neither")],
        "center_threshold": [Interval(Real, 0, 1, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "output_stride": [Options(Integral, {1, 2, 4, 8})],
        "slic": ["boolean"],
        "grouping": [StrOptions(set(_GROUPINGS))],
        "predict_scales": [StrOptions({"auto"}), tuple, list],
        "input_scale": [StrOptions({"auto"}),
                        Interval(Real, 1 / MAX_INPUT_SCALE, MAX_INPUT_SCALE, closed="both")],
        "norm": [StrOptions({"batch", "group"}), None],
        "bit_depth": [Interval(Integral, 1, 16, closed="both"), None],
        "width": [Interval(Integral, 1, None, closed="left")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, *, n_classes=None, embedding_dim=8, delta_v=0.5, delta_d=1.5,
                 center_threshold=0.7, gamma=2.0, output_stride=2, slic=False,
                 grouping="centers", predict_scales="auto", input_scale="auto",
                 norm="batch", bit_depth=None,
                 width=16, max_epochs=30,
                 batch_size=16,
                 lr=3e-3, device="cpu", random_state=None, verbose=0):
        self.n_classes = n_classes
        self.embedding_dim = embedding_dim
        self.delta_v = delta_v
        self.delta_d = delta_d
        self.center_threshold = center_threshold
        self.gamma = gamma
        self.output_stride = output_stride
        self.slic = slic
        self.grouping = grouping
        self.predict_scales = predict_scales
        self.input_scale = input_scale
        self.norm = norm
        self.bit_depth = bit_depth
        self.width = width
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _scales(self):
        """``predict_scales`` checked (each entry named when wrong), as a sorted tuple."""
        return check_predict_scales(self.predict_scales)

    def _check_params(self):
        self._scales()
        if self.delta_v >= self.delta_d:
            raise ValueError(f"delta_v={self.delta_v!r} must be smaller than "
                             f"delta_d={self.delta_d!r} (pull margin inside push margin).")

    def _validate_fit_data(self, X, y, semantic_maps, sample_weight):
        image_list = check_images(X, name="X", min_size=_MIN_SIZE, bits=self.bit_depth)
        shapes = [im.shape[1:] for im in image_list]
        # images of different sizes: padded at the bottom and right to the largest (edge
        # values), the padding being background
        shape = tuple(int(v) for v in np.max(shapes, axis=0))
        images = _pad_images_edge(image_list, shape)
        instance = _pad_maps(check_label_maps(y, "y", shapes), shape)
        if not instance.any():
            warnings.warn(
                f"y holds no instance in any of its {len(instance)} image(s): every label "
                f"is 0, the background, so {type(self).__name__} learns no object and "
                f"what it predicts comes from no example. Check the label maps (0 = "
                f"background, a positive id per object).", UserWarning, stacklevel=4)
        if semantic_maps is None:
            semantic = (instance > 0).astype(np.int64)
        else:
            semantic = _pad_maps(check_label_maps(semantic_maps, "semantic_maps", shapes),
                                 shape)
            for i in range(images.shape[0]):
                ids, lo, hi = _instance_classes(instance[i], semantic[i])
                mixed = np.flatnonzero((lo != hi) | (lo == 0))
                if mixed.size:
                    k = mixed[0]
                    what = ("background (class 0) pixels" if lo[k] == 0
                            else f"pixels of classes {lo[k]} and {hi[k]}")
                    raise ValueError(f"Image {i}: instance {ids[k]} of y covers {what} in "
                                     "semantic_maps; each instance must lie inside one "
                                     "object class.")
        top = int(semantic.max())
        if self.n_classes is None:
            if top > MAX_INFERRED_CLASSES:
                i = int(np.argmax(semantic.reshape(len(semantic), -1).max(1)))
                raise ValueError(
                    f"semantic_maps[{i}] has class {top}: with n_classes=None that would "
                    f"mean {top} object classes (a head of {top + 1} outputs). Relabel the "
                    f"classes to 1..K, or pass n_classes explicitly (at most "
                    f"{MAX_INFERRED_CLASSES} classes are inferred).")
            n_classes = max(1, top)
        else:
            n_classes = int(self.n_classes)
            if top > n_classes:
                i = int(np.argwhere(semantic.reshape(len(semantic), -1).max(1) > n_classes
                                    )[0][0])
                raise ValueError(f"semantic_maps[{i}] has class {int(semantic[i].max())} "
                                 f"but n_classes={n_classes}.")
        sample_weight = check_sample_weight(sample_weight, images)
        self.bit_depth_ = self.bit_depth if self.bit_depth is not None else \
            integer_bit_depth(X if isinstance(X, (list, tuple)) else list(
                np.asarray(tensors_to_numpy(X, "X"))))
        return images, instance, semantic, n_classes, sample_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, semantic_maps=None, sample_weight=None):
        """Train the encoder and the three decoders.

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Training images (a list may hold images of different sizes): uint8 read as
            0-255, other integer dtypes by their bit depth (``bit_depth``), bool as 0/1,
            float in [0, 1].
        y : array-like of shape (n_images, H, W), or list of maps
            Instance maps: 0 for background, a positive id per instance (ids need not be
            consecutive; an image may have no instance). Integer-valued.
        semantic_maps : array-like of shape (n_images, H, W) or None, default=None
            Class of every pixel (0 = background, ``1..n_classes``). Each instance must
            lie inside one class. None: every instance is of class 1.
        sample_weight : array-like of shape (n_images,) or None, default=None
            Non-negative weight of each image in the loss (the batch loss is the
            weighted mean of the images' losses) and in the class frequencies of the
            cross-entropy weights; 0 leaves the image out of the gradient.

        Returns
        -------
        self : InstanceSegmenter
            Fitted estimator.

        Raises
        ------
        ValueError
            If the images are empty, not finite or of an unknown layout; the maps'
            shapes differ from the images'; a map holds negative or non-integer labels;
            an instance spans two classes or background; a class exceeds
            ``n_classes`` (or 1024 with ``n_classes=None``); ``delta_v >= delta_d``; the
            weights are invalid; or ``norm="batch"`` would normalise one value per
            channel (outputs of 1 x 1 and one image or ``batch_size=1``), or
            ``norm="group"`` one value per group (outputs of 1 x 1, ``width < 32``).
        TypeError
            If an input is not numeric or sparse.
        FloatingPointError
            If the training loss becomes non-finite.

        Warns
        -----
        UserWarning
            If ``y`` holds no instance in any image (every label 0).
        """
        self._check_params()
        images, instance, semantic, n_classes, sample_weight = self._validate_fit_data(
            X, y, semantic_maps, sample_weight)
        # ids 1..k per image: later look-up tables are as large as k, not the biggest id
        instance = np.stack([_relabel(m) for m in instance])
        areas = np.concatenate([np.bincount(m.ravel())[1:] for m in instance])
        areas = areas[areas > 0]
        object_size = typical_size(np.sqrt(areas), areas)
        input_scale = (auto_input_scale(object_size, _MIN_OBJECT_STRIDES
                                        * int(self.output_stride))
                       if self.input_scale == "auto" else float(self.input_scale))
        if input_scale != 1.0:  # the network sees the images enlarged
            shape = rescaled_shape(images.shape[2:], input_scale)
            images = np.stack([resize_image(im, shape) for im in images])
            instance = np.stack([resize_labels(m, shape) for m in instance])
            semantic = np.stack([resize_labels(m, shape) for m in semantic])
            instance = np.stack([_relabel(m) for m in instance])
        stride = int(self.output_stride)
        images_p = _pad_to(images, stride)
        instance_p = _pad_to(instance, stride)
        semantic_p = _pad_to(semantic, stride)
        if images_p.shape != images.shape:  # padded pixels are background
            H, W = images.shape[2:]
            instance_p[:, H:], instance_p[:, :, W:] = 0, 0
            semantic_p[:, H:], semantic_p[:, :, W:] = 0, 0
        inst_low = _mode_downsample(instance_p, stride)
        sem_low = _mode_downsample(semantic_p, stride)
        for i in range(len(inst_low)):  # an instance's low-resolution pixels keep its class
            ids, lo, _ = _instance_classes(instance_p[i], semantic_p[i])
            # class of each low-resolution pixel's instance, looked up among the image's ids
            where = np.searchsorted(ids, inst_low[i]).clip(0, max(ids.size - 1, 0))
            cls = lo[where] if ids.size else np.zeros_like(inst_low[i])
            sem_low[i] = np.where(inst_low[i] > 0, cls, sem_low[i])
            inst_low[i] = _relabel(inst_low[i])
        center = np.stack([_center_heatmap(m) for m in inst_low])
        self.n_classes_ = n_classes
        self.n_features_in_ = images.shape[1]
        self.class_weights_ = self._class_weights(sem_low, n_classes, sample_weight)
        self.object_size_ = object_size
        self.input_scale_ = input_scale
        self._fit_net(images_p, {"semantic": sem_low, "center": center,
                                 "instance": inst_low}, sample_weight)
        return self

    @staticmethod
    def _class_weights(sem_low, n_classes, sample_weight):
        counts = np.zeros(n_classes + 1)
        w = np.ones(len(sem_low)) if sample_weight is None else sample_weight
        for m, wi in zip(sem_low, w):
            counts += wi * np.bincount(m.ravel(), minlength=n_classes + 1)[: n_classes + 1]
        freq = counts / max(counts.sum(), 1e-12)
        return 1.0 / np.log(1.02 + freq)

    def _fit_net(self, images, targets, sample_weight):
        from sklearn_papers.nn._segmenter import (
            JointSegmentationLoss,
            JointSegmenterModule,
            SegmenterNet,
        )
        from sklearn_papers.nn._skorch import torch_fit

        # BatchNorm in training needs more than one value per channel: with 1 x 1 outputs
        # a batch of one image has one. Drop such a last batch; refuse a single image.
        stride = int(self.output_stride)
        extra = {}
        n = len(images)
        one_by_one = images.shape[2] * images.shape[3] == stride * stride
        decoder_width = max(8, self.width // 2)
        if _group_norm_one_value(self.norm, self.width, stride, images.shape[2:]):
            raise ValueError(
                f"X has images of {images.shape[2]} x {images.shape[3]} pixels (after "
                f"padding to output_stride={stride}), so their outputs are 1 x 1, and with "
                f"width={self.width} norm='group' has groups of one channel: it cannot "
                "normalise one value per group. Pass larger images, a smaller "
                "output_stride, width >= 32, or norm=None.")
        if self.norm == "batch" and one_by_one:
            if min(int(self.batch_size), n) == 1:
                what = "one image" if n == 1 else f"batch_size={self.batch_size}"
                raise ValueError(
                    f"X has images of {images.shape[2]} x {images.shape[3]} pixels (after "
                    f"padding to output_stride={stride}), so their outputs are 1 x 1, and "
                    f"with {what} a training batch holds one image: norm='batch' cannot "
                    "normalise one value per channel. Pass at least 2 images and "
                    "batch_size >= 2, larger images, a smaller output_stride, or "
                    "norm='group'.")
            if n % int(self.batch_size) == 1:
                extra["iterator_train__drop_last"] = True
        # Per-channel moments, weighted by image so that a weight of 0 leaves it out.
        w = np.ones(len(images)) if sample_weight is None else sample_weight
        per_image = images.mean(axis=(2, 3), dtype=np.float64)  # (n, C)
        per_image_sq = (images.astype(np.float64) ** 2).mean(axis=(2, 3))
        mean = np.average(per_image, axis=0, weights=w)
        var = np.average(per_image_sq, axis=0, weights=w) - mean**2
        std = np.sqrt(np.maximum(var, 0))
        std = np.where(std > 1e-6, std, 1.0)
        targets = {k: (v.astype(np.float32) if k == "center" else v.astype(np.int64))
                   for k, v in targets.items()}
        with torch_fit(self) as run:
            run.fit(
                JointSegmenterModule,
                images,
                targets,
                sample_weight=sample_weight,
                criterion=JointSegmentationLoss,
                net_class=SegmenterNet,
                module__in_channels=images.shape[1],
                module__n_classes=self.n_classes_,
                module__embedding_dim=self.embedding_dim,
                module__width=self.width,
                module__decoder_width=decoder_width,
                module__output_stride=int(self.output_stride),
                module__norm=self.norm,
                module__mean=mean.astype(np.float32),
                module__std=std.astype(np.float32),
                criterion__class_weights=self.class_weights_.astype(np.float32),
                criterion__gamma=self.gamma,
                criterion__delta_v=self.delta_v,
                criterion__delta_d=self.delta_d,
                **extra,
            )

    # ------------------------------------------------------------------ inference
    def _check_predict_images(self, X):
        """Validated images: a list of float32 ``(C, H, W)`` arrays."""
        check_is_fitted(self)
        # parameters read at prediction time (grouping, slic, center_threshold, delta_d,
        # predict_scales) may have been set after fit
        self._validate_params()
        self._scales()
        images = check_images(X, name="X", n_channels=self.n_features_in_,
                              min_size=_MIN_SIZE, bits=self.bit_depth_,
                              clip_integers=self.bit_depth is None)
        warn_inferred_bit_depth(X, self.bit_depth_)
        # the rule of fit, for the fitted network (set_params after fit does not change it)
        norm = getattr(self.net_, "module__norm", self.norm)
        width = getattr(self.net_, "module__width", self.width)
        stride = self._stride()
        for i, im in enumerate(images):
            H, W = im.shape[1:]
            net_shape = self._network_shape((H, W))
            padded = tuple(-(-v // stride) * stride for v in net_shape)
            if _group_norm_one_value(norm, width, stride, padded):
                raise ValueError(
                    f"X[{i}] is {H} x {W} pixels: padded to output_stride={stride} its "
                    f"network outputs are 1 x 1, and norm='group' with width={width} has "
                    f"groups of one channel, which cannot normalise one value per group "
                    f"(fit refuses such images too). Images must be more than {stride} "
                    f"pixels high or wide.")
        return images

    def _network_shape(self, shape):
        """``(h, w)`` the network sees an image of ``shape`` at (:attr:`input_scale_`)."""
        scale = getattr(self, "input_scale_", 1.0)
        return tuple(shape) if scale == 1.0 else rescaled_shape(shape, scale)

    def _to_network(self, image):
        """One ``(C, H, W)`` image enlarged by :attr:`input_scale_` for the network."""
        return resize_image(image, self._network_shape(image.shape[1:]))

    def _stride(self):
        """Output stride of the fitted network (``output_stride`` set after fit does not
        change the network: its outputs stay at the stride it was trained with)."""
        return int(getattr(self.net_, "module__output_stride", self.output_stride))

    def _batches(self, images):
        """Indices of the images grouped by shape (one network pass per group)."""
        groups = {}
        for i, im in enumerate(images):
            groups.setdefault(im.shape, []).append(i)
        return list(groups.values())

    def predict_outputs(self, X):
        """Network outputs at the output stride (before grouping and upsampling).

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        semantic_proba : ndarray of shape (n_images, n_classes + 1, h, w), float32
            Softmax class probabilities (background first); ``h = ceil(round(H *
            input_scale_) / output_stride)``: the network sees the images enlarged by
            :attr:`input_scale_`.
        center_proba : ndarray of shape (n_images, h, w), float32
            Instance-centre heatmap (sigmoid).
        embedding : ndarray of shape (n_images, embedding_dim, h, w), float32
            Pixel embeddings; the first two dimensions hold the cell's row and column
            in units of 32 input pixels plus a learned offset.

        When the images differ in size, each output is a list of per-image arrays.
        """
        images = [self._to_network(im) for im in self._check_predict_images(X)]
        stride = self._stride()
        outputs = [None] * len(images)
        for members in self._batches(images):
            sem, cen, emb = self._outputs(_pad_to(np.stack([images[i] for i in members]),
                                                  stride))
            for j, i in enumerate(members):
                outputs[i] = (sem[j], cen[j], emb[j])
        if all(im.shape == images[0].shape for im in images):
            return tuple(np.stack([o[k] for o in outputs]) for k in range(3))
        return tuple([o[k] for o in outputs] for k in range(3))

    def _outputs(self, images_p):
        import torch

        sem, cen, emb = self.net_.forward(images_p, training=False, device="cpu")
        return (torch.softmax(sem, 1).numpy(), torch.sigmoid(cen).numpy(), emb.numpy())

    def _segment(self, X, images=None):
        """Per image: full-resolution instance map, instance classes and scores, at the
        scale of ``predict_scales`` whose objects match the size seen in ``fit``
        (``images``, when already validated, stand for ``X``)."""
        if images is None:
            images = self._check_predict_images(X)
        scales = self._scales()
        target = getattr(self, "object_size_", float("nan"))
        if scales == (1.0,) or not np.isfinite(target):
            return [r[:3] for r in self._segment_images(images, count_centres=False)]
        results = self._segment_images(images)
        sizes = [{1.0: _instance_size(r[0])} for r in results]
        centres = [{1.0: r[3]} for r in results]
        found = {1.0: results}
        for scale in scales:
            if scale == 1.0:
                continue
            shapes = [rescaled_shape(im.shape[1:], scale) for im in images]
            members = [i for i, sh in enumerate(shapes) if min(sh) >= MIN_RESCALED_SIDE]
            if not members:
                continue
            out = self._segment_images([resize_image(images[i], shapes[i]) for i in members])
            found[scale] = dict(zip(members, out))
            for i, r in zip(members, out):
                sizes[i][scale] = _instance_size(r[0])
                centres[i][scale] = r[3]
        chosen, refused, far, empty, unchecked = [], [], [], [], []
        for i, image in enumerate(images):
            scale = choose_scale(sizes[i], target)
            if not any(np.isfinite(v) for v in sizes[i].values()):
                empty.append(f"X[{i}]")
            elif not scale_is_backed(scale, centres[i]):
                if any(centres[i].values()):
                    refused.append(
                        f"X[{i}] (scale {scale:g}: {sizes[i][scale]:.1f} px, "
                        f"{centres[i][scale]} centres; scale 1: {sizes[i][1.0]:.1f} px, "
                        f"{centres[i][1.0]} centres)")
                else:
                    unchecked.append(f"X[{i}] (" + ", ".join(
                        f"scale {s:g}: {v:.1f} px" for s, v in sorted(sizes[i].items())
                        if np.isfinite(v)) + ")")
                scale = 1.0
            elif min(size_gap(v, target) for v in sizes[i].values()) > np.log(
                    FAR_FROM_TRAINING_SIZE):
                far.append(f"X[{i}] (" + ", ".join(
                    f"scale {s:g}: {v:.1f} px" for s, v in sorted(sizes[i].items())
                    if np.isfinite(v)) + f"; predicted at scale {scale:g})")
            if scale == 1.0:
                chosen.append(results[i][:3])
                continue
            inst, classes, scores, _ = found[scale][i]
            up = resize_labels(inst, image.shape[1:])
            kept = np.unique(up[up > 0])
            chosen.append((_relabel(up), classes[kept - 1], scores[kept - 1]))
        _warn_scales(refused, far, target, empty, unchecked)
        return chosen

    def _segment_images(self, images, count_centres=True):
        """:meth:`_segment` at the images' own scale; per image also the number of
        centres the centre head finds (:func:`_count_centres`; None when
        ``count_centres`` is false)."""
        stride = self._stride()
        group = _GROUPINGS[self.grouping]
        results = [None] * len(images)
        shapes = [im.shape[1:] for im in images]
        images = [self._to_network(im) for im in images]
        for members in self._batches(images):
            sem_p, cen, emb = self._outputs(_pad_to(np.stack([images[i] for i in members]),
                                                    stride))
            H, W = images[members[0]].shape[1:]
            n_segments = max(1, int(round(H * W / _SLIC_PIXELS_PER_SEGMENT)))
            for j, i in enumerate(members):
                sem = sem_p[j].argmax(0)
                low, classes, scores = group(sem, cen[j], emb[j], self.center_threshold,
                                             self.delta_d)
                up = _upsample(low, stride, (H, W), images[i], self.slic and stride > 1,
                               n_segments, _SLIC_COMPACTNESS)
                if (H, W) != tuple(shapes[i]):  # back to the input size
                    up = resize_labels(up, shapes[i])
                kept = np.unique(up[up > 0])
                inst = _relabel(up)
                n_centres = _count_centres(sem, cen[j], emb[j], self.center_threshold,
                                           self.delta_d) if count_centres else None
                results[i] = (inst, np.array([classes[k - 1] for k in kept], dtype=np.int64),
                              np.array([scores[k - 1] for k in kept], dtype=float),
                              n_centres)
        return results

    @staticmethod
    def _stack_or_list(maps):
        if all(m.shape == maps[0].shape for m in maps):
            return np.stack(maps)
        return maps

    def predict_proba(self, X):
        """Per-pixel class probabilities of the semantic decoder, at the input size.

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        proba : ndarray of shape (n_images, H, W, n_classes + 1), float32
            Softmax over background (index 0) and the classes, upsampled from the output
            stride by nearest neighbour (no SLIC) and brought back from the network's
            size (:attr:`input_scale_`) by nearest neighbour; rows sum to 1. A list of
            ``(H_i, W_i, n_classes + 1)`` arrays when the images differ in size.
        """
        images = self._check_predict_images(X)
        shapes = [im.shape[1:] for im in images]
        images = [self._to_network(im) for im in images]
        stride = self._stride()
        out = [None] * len(images)
        for members in self._batches(images):
            proba = self._outputs(_pad_to(np.stack([images[i] for i in members]), stride))[0]
            proba = np.repeat(np.repeat(proba, stride, axis=2), stride, axis=3)
            H, W = images[members[0]].shape[1:]
            for j, i in enumerate(members):
                p = proba[j, :, :H, :W]
                if (H, W) != tuple(shapes[i]):  # nearest neighbour, as resize_labels
                    h, w = shapes[i]
                    rows = np.minimum(((np.arange(h) + 0.5) * H / h).astype(np.int64), H - 1)
                    cols = np.minimum(((np.arange(w) + 0.5) * W / w).astype(np.int64), W - 1)
                    p = p[:, rows[:, None], cols[None, :]]
                out[i] = np.ascontiguousarray(np.moveaxis(p, 0, -1))
        return self._stack_or_list(out)

    def predict(self, X):
        """Instance label maps.

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        instance_maps : ndarray of shape (n_images, H, W), int64, or list
            0 for background, instances ``1..k`` per image; a list of ``(H_i, W_i)``
            maps when the images differ in size.
        """
        return self._stack_or_list([inst for inst, _, _ in self._segment(X)])

    def predict_semantic(self, X):
        """Semantic (class) maps, consistent with :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        semantic_maps : ndarray of shape (n_images, H, W), int64, or list
            0 for background, else the class ``1..n_classes_`` of the pixel's instance;
            a list of ``(H_i, W_i)`` maps when the images differ in size.
        """
        out = []
        for inst, classes, _ in self._segment(X):
            out.append(np.concatenate([[0], classes])[inst])
        return self._stack_or_list(out)

    def predict_instances(self, X):
        """Instances as masks with their class and confidence (for mask AP).

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W), or list of images
            Images with the channels seen in ``fit``, of any size (a batch, even of one
            image: ``X[None]``).

        Returns
        -------
        instances : list of n_images dicts
            ``"masks"``: bool ndarray (k, H, W); ``"labels"``: int64 ndarray (k,), the
            classes; ``"scores"``: float ndarray (k,), the centre heatmap value of each
            instance's seed (``grouping="centers"``), the share of the class's pixels
            (``"mean_shift"``) or 1 (``"connected_components"``).
        """
        found = []
        for inst, classes, scores in self._segment(X):
            masks = inst[None] == np.arange(1, classes.size + 1)[:, None, None]
            found.append({"masks": masks, "labels": classes, "scores": scores})
        return found

    def score(self, X, y):
        """Mean symmetric best Dice of :meth:`predict` against instance maps ``y``.

        Parameters
        ----------
        X : array-like of shape (n_images, H, W, C), (n_images, C, H, W) or \
                (n_images, H, W)
            Images.
        y : array-like of shape (n_images, H, W)
            True instance maps.

        Returns
        -------
        score : float
            In [0, 1], greater is better (see
            :func:`sklearn_papers.metrics.symmetric_best_dice`).
        """
        images = self._check_predict_images(X)  # y is checked before the network runs
        true = check_label_maps(y, "y", [im.shape[1:] for im in images])
        pred = [inst for inst, _, _ in self._segment(X, images)]
        return symmetric_best_dice(true, pred)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.target_tags.required = True
        return tags
