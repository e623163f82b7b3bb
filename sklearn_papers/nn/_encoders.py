"""Shared MLP and convolutional encoder blocks with a choice of normalisation layer.

The normalisation layer is a first-class, grid-searchable choice (``norm``): batch
normalisation (Ioffe & Szegedy 2015), group normalisation (Wu & He 2018), layer
normalisation (Ba et al. 2016) or none. Every torch model of the package that uses these
blocks exposes the same two parameters, ``norm`` and ``num_groups``.

Tensor shapes are written ``B`` (batch), ``C`` (channels), ``H x W`` (image), ``F``
(input features) and ``D`` (output features).
"""

import math
from numbers import Integral

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "MIN_DENSE_GROUP_SIZE",
    "NORM_OPTIONS",
    "BatchNorm1d",
    "BatchNorm2d",
    "ConvEncoder",
    "MLPEncoder",
    "conv_block",
    "dense_block",
    "group_count",
    "make_norm",
    "precise_batch_norm",
]

#: The values accepted by ``norm`` everywhere in the package.
NORM_OPTIONS = ("batch", "group", "layer", None)

#: Fewest channels per group of a group norm on a fully connected layer ``(B, C)``, where
#: a group holds only its channels: one value normalises to a constant, two to a sign.
MIN_DENSE_GROUP_SIZE = 4


class _SafeBatchNormMixin:
    """Batch norm that does not fail on a batch with one value per channel.

    ``torch.nn.BatchNorm1d`` raises "Expected more than 1 value per channel when
    training" when the last training batch holds a single sample (skorch #477, PyTorch
    #4534). Here such a batch is normalised with the running statistics, as in
    evaluation, and the running statistics are left unchanged. Every other batch is
    treated exactly as by torch.
    """

    def forward(self, x):
        per_channel = x.shape[0] * math.prod(x.shape[2:])
        if self.training and per_channel <= 1:
            return F.batch_norm(
                x, self.running_mean, self.running_var, self.weight, self.bias,
                training=False, momentum=0.0, eps=self.eps,
            )
        return super().forward(x)


class BatchNorm1d(_SafeBatchNormMixin, nn.BatchNorm1d):
    """``torch.nn.BatchNorm1d`` that accepts a training batch of one sample.

    Input ``(B, C)`` or ``(B, C, L)``; output of the same shape. A training batch with a
    single value per channel is normalised with the running statistics.
    """


class BatchNorm2d(_SafeBatchNormMixin, nn.BatchNorm2d):
    """``torch.nn.BatchNorm2d`` that accepts a training batch with one value per channel.

    Input and output ``(B, C, H, W)``.
    """


def group_count(num_channels, num_groups, *, min_group_size=1):
    """Largest divisor of ``num_channels`` not above ``num_groups`` with groups of at
    least ``min_group_size`` channels.

    Group normalisation needs the channel count to be divisible by the number of
    groups; asking for 8 groups over 10 channels gives 5 groups. A group must also hold
    more than one value per sample, or it is normalised to a constant (its only value
    minus its mean is 0): :func:`make_norm` asks for ``min_group_size=4`` on fully
    connected layers, where a group holds only its channels, so that 16 channels with
    ``num_groups=8`` give 4 groups of 4, not 8 groups of 2 (two values normalise to
    +-1, a sign).

    Parameters
    ----------
    num_channels : int
        Channels of the layer (>= 1).
    num_groups : int
        Requested number of groups (>= 1).
    min_group_size : int, default=1
        Fewest channels per group (>= 1). When ``num_channels < min_group_size`` the
        whole layer is one group.

    Returns
    -------
    groups : int
        In ``[1, min(num_groups, num_channels)]``; divides ``num_channels``.

    Raises
    ------
    ValueError
        If an argument is not an int >= 1.
    """
    for name, value in (("num_channels", num_channels), ("num_groups", num_groups),
                        ("min_group_size", min_group_size)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}.")
    num_channels, num_groups = int(num_channels), int(num_groups)
    most = min(num_groups, num_channels // int(min_group_size))
    for g in range(most, 0, -1):
        if num_channels % g == 0:
            return g
    return 1


def make_norm(norm, num_channels, *, num_groups=8, spatial=False):
    """Build a normalisation layer.

    Parameters
    ----------
    norm : {"batch", "group", "layer"} or None
        ``"batch"``: batch normalisation over the batch (and spatial) axes, safe for a
        batch of one (see :class:`BatchNorm1d`). ``"group"``: group normalisation (Wu & He
        2018, eq. 1 with the group set of eq. 7), ``group_count(num_channels, num_groups,
        min_group_size=m)`` groups, with ``m = 1`` for image feature maps (a group also
        spans the spatial positions) and ``m = MIN_DENSE_GROUP_SIZE`` (4) for fully
        connected layers. ``"layer"``: layer normalisation over all channels (and spatial
        positions for images, i.e. group normalisation with one group, as in Wu & He 2018,
        Fig. 2). ``None``: identity.
    num_channels : int
        Channels ``C`` of the input ``(B, C)`` or ``(B, C, H, W)``.
    num_groups : int, default=8
        Requested groups for ``norm="group"`` (an upper bound, see above).
    spatial : bool, default=False
        True for image feature maps ``(B, C, H, W)``.

    Returns
    -------
    layer : torch.nn.Module
        Shape-preserving.

    Raises
    ------
    ValueError
        If ``norm`` is not one of :data:`NORM_OPTIONS`, ``num_channels`` or
        ``num_groups`` is not an int >= 1, or ``norm`` is ``"group"`` or ``"layer"`` on a
        fully connected layer of one channel (every sample would be normalised to the
        same constant).

    Notes
    -----
    Meant for hidden layers. A per-sample normalisation (group or layer) of a model's
    output features would take away what tells samples apart when there are few of them
    (1 feature per group: a constant; 2: a sign), so the encoders of this module never
    normalise their output layer.
    """
    if norm not in NORM_OPTIONS:
        raise ValueError(f"norm={norm!r} is not one of {NORM_OPTIONS}.")
    groups = group_count(num_channels, num_groups)  # validates both
    num_channels = int(num_channels)
    if norm in ("group", "layer") and not spatial and num_channels < 2:
        raise ValueError(
            f"norm={norm!r} on a fully connected layer of {num_channels} channel maps "
            f"every sample to the same value; use a wider layer, norm='batch' or None."
        )
    if norm is None:
        return nn.Identity()
    if norm == "batch":
        return BatchNorm2d(num_channels) if spatial else BatchNorm1d(num_channels)
    if norm == "group":
        if not spatial:
            groups = group_count(num_channels, num_groups,
                                 min_group_size=MIN_DENSE_GROUP_SIZE)
        return nn.GroupNorm(groups, num_channels)
    return nn.GroupNorm(1, num_channels) if spatial else nn.LayerNorm(num_channels)


def dense_block(n_in, n_out, *, norm="batch", num_groups=8):
    """Layers of one fully connected block: ``[Linear, norm, ReLU]``.

    The shared block of every fully connected torch model of the package, so that they all
    accept the same ``norm`` and ``num_groups``.

    Parameters
    ----------
    n_in, n_out : int
        Input and output widths.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation between the linear layer and the ReLU (see :func:`make_norm`);
        ``None`` leaves it out (no layer at all, so a model without normalisation keeps
        the parameter names it had before ``norm`` existed).
    num_groups : int, default=8
        Groups for ``norm="group"``.

    Returns
    -------
    layers : list of torch.nn.Module
        To be spliced into an ``nn.Sequential``: input ``(B, n_in)``, output
        ``(B, n_out)``.
    """
    layers = [nn.Linear(int(n_in), int(n_out))]
    if norm is not None:
        layers.append(make_norm(norm, int(n_out), num_groups=num_groups))
    return [*layers, nn.ReLU()]


def conv_block(c_in, c_out, kernel_size=3, *, stride=1, padding=1, norm="batch",
               num_groups=8):
    """Layers of one convolutional block: ``[Conv2d, norm, ReLU]``.

    Parameters
    ----------
    c_in, c_out : int
        Input and output channels.
    kernel_size, stride, padding : int, default=3, 1, 1
        Passed to ``torch.nn.Conv2d``.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation over the feature map ``(B, c_out, H', W')`` (see :func:`make_norm`
        with ``spatial=True``); ``None`` leaves it out.
    num_groups : int, default=8
        Groups for ``norm="group"``.

    Returns
    -------
    layers : list of torch.nn.Module
        Input ``(B, c_in, H, W)``, output ``(B, c_out, H', W')``.
    """
    layers = [nn.Conv2d(int(c_in), int(c_out), kernel_size, stride=stride, padding=padding)]
    if norm is not None:
        layers.append(make_norm(norm, int(c_out), num_groups=num_groups, spatial=True))
    return [*layers, nn.ReLU()]


class MLPEncoder(nn.Module):
    """Fully connected encoder with a choice of normalisation layer.

    ``[Linear -> norm -> ReLU]`` per hidden layer, then a linear output layer to the
    representation.

    Parameters
    ----------
    n_features : int
        Input width ``F``.
    n_components : int
        Output width ``D`` (the representation).
    hidden_layer_sizes : tuple of int, default=(256,)
        Widths of the hidden blocks.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation after every hidden linear layer (see :func:`make_norm`); never
        after the output layer.
    num_groups : int, default=8
        Groups for ``norm="group"``.

    Notes
    -----
    Input ``(B, F)``, output ``(B, D)``.

    The output layer is a plain ``Linear``, whatever ``norm`` is. No normalisation: a
    per-sample normalisation of ``D`` output features (group or layer norm) maps every
    input to the same point when a group holds one feature and to a sign pattern when it
    holds two. No ReLU either: in Khosla et al. (2020, §3) the representation is a
    ResNet's pooled output after the last block's activation, but there a normalisation
    (and the residual sum) precedes that ReLU and keeps its units alive; an
    unnormalised ``Linear -> ReLU`` left 18-26 of 64 output features identically zero on
    ``load_digits`` (conv encoder, 8 epochs, 3 seeds), and with a small ``D`` any of them
    may be. The representation is thus a linear map of the last hidden block's
    activations (the paper's kind of representation), and a linear probe on it is still
    a linear probe on those.

    References
    ----------
    .. [1] Ioffe, S. and Szegedy, C. (2015). Batch normalization. ICML.
       :arxiv:`1502.03167`
    .. [2] Wu, Y. and He, K. (2018). Group normalization. ECCV.
       :doi:`10.1007/978-3-030-01261-8_1`
    .. [3] Ba, J. L., Kiros, J. R. and Hinton, G. E. (2016). Layer normalization.
       :arxiv:`1607.06450`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import MLPEncoder
    >>> encoder = MLPEncoder(10, 4, hidden_layer_sizes=(32,), norm="group", num_groups=4)
    >>> encoder(torch.randn(6, 10)).shape
    torch.Size([6, 4])
    """

    def __init__(self, n_features, n_components, *, hidden_layer_sizes=(256,), norm="batch",
                 num_groups=8):
        super().__init__()
        widths = [int(n_features), *map(int, hidden_layer_sizes)]
        layers = []
        for w_in, w_out in zip(widths[:-1], widths[1:]):
            layers += dense_block(w_in, w_out, norm=norm, num_groups=num_groups)
        layers.append(nn.Linear(widths[-1], int(n_components)))  # output: no norm, no ReLU
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        """Encode a batch of rows.

        Parameters
        ----------
        x : torch.Tensor of shape (B, F)
            Input rows.

        Returns
        -------
        z : torch.Tensor of shape (B, D)
            The representation.
        """
        return self.layers(x)


class ConvEncoder(nn.Module):
    """Small convolutional encoder for images given as flat rows.

    Blocks of ``[Conv3x3 -> norm -> ReLU]``, a 2x2 max-pool between blocks while the map
    is at least 4 pixels on each side, global average pooling, then a ``Linear`` layer
    to ``n_components``: no normalisation and no ReLU on the output, for the reasons
    given in :class:`MLPEncoder`.

    Parameters
    ----------
    n_features : int
        Input width ``F``; must equal ``prod(image_shape)``.
    n_components : int
        Output width ``D``.
    image_shape : tuple of int
        ``(H, W)`` for one channel or ``(C, H, W)``; rows of ``X`` are reshaped to it in
        C (row-major) order, as ``load_digits().data`` is stored.
    channels : tuple of int, default=(32, 64)
        Output channels of the conv blocks.
    norm : {"batch", "group", "layer"} or None, default="batch"
        Normalisation after every conv (see :func:`make_norm`); never after the final
        linear layer.
    num_groups : int, default=8
        Groups for ``norm="group"``.

    Raises
    ------
    ValueError
        If ``prod(image_shape) != n_features``.

    Notes
    -----
    Input ``(B, F)``, reshaped to ``(B, C, H, W)``; output ``(B, D)``.

    References
    ----------
    .. [1] Wu, Y. and He, K. (2018). Group normalization. ECCV (the norm choices, as in
       :class:`MLPEncoder`). :doi:`10.1007/978-3-030-01261-8_1`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import ConvEncoder
    >>> encoder = ConvEncoder(64, 16, image_shape=(8, 8), norm="group")
    >>> encoder(torch.rand(5, 64)).shape
    torch.Size([5, 16])
    """

    def __init__(self, n_features, n_components, *, image_shape, channels=(32, 64),
                 norm="batch", num_groups=8):
        super().__init__()
        shape = tuple(int(s) for s in image_shape)
        if len(shape) == 2:
            shape = (1, *shape)
        if len(shape) != 3 or math.prod(shape) != int(n_features):
            raise ValueError(
                f"image_shape={tuple(image_shape)!r} does not match n_features={n_features}: "
                f"its product must equal the number of features."
            )
        self.image_shape = shape
        c_in, h, w = shape
        blocks = []
        for i, c_out in enumerate(channels):
            if i > 0 and min(h, w) >= 4:
                blocks.append(nn.MaxPool2d(2))
                h, w = h // 2, w // 2
            blocks += conv_block(c_in, c_out, 3, padding=1, norm=norm, num_groups=num_groups)
            c_in = c_out
        self.features = nn.Sequential(*blocks)
        self.head = nn.Sequential(nn.Linear(c_in, int(n_components)))  # no norm, no ReLU

    def forward(self, x):
        """Encode a batch of images given as flat rows.

        Parameters
        ----------
        x : torch.Tensor of shape (B, F)
            Images as rows, ``F = C * H * W`` (row-major).

        Returns
        -------
        z : torch.Tensor of shape (B, D)
            The representation.
        """
        maps = self.features(x.reshape(x.shape[0], *self.image_shape))
        return self.head(maps.mean(dim=(2, 3)))


def precise_batch_norm(model, X, *, batch_size=250):
    """A copy of ``model`` whose batch norms hold population statistics of ``X``.

    "Precise batch norm": the running averages are reset, then replaced by the
    equal-weight average (``momentum=None``) of the batch statistics of one pass over
    ``X`` in batches of ``batch_size``, in training mode and without gradients. Rows beyond
    the last full batch are left out, so every batch weighs the same and the first
    layer's mean is exactly that of the rows used. ``model`` is left untouched.

    Parameters
    ----------
    model : torch.nn.Module
        Holding batch-norm layers (any subclass of ``torch.nn.modules.batchnorm._BatchNorm``).
    X : array-like of shape (n_samples, ...)
        Inputs of ``model``, float32.
    batch_size : int, default=250
        Rows per batch; at least one full batch is needed.

    Returns
    -------
    precise : torch.nn.Module
        The copy, in training mode (call ``eval()`` to use the statistics).

    Raises
    ------
    ValueError
        If ``X`` holds fewer rows than ``batch_size``.
    """
    import copy

    if len(X) < batch_size:
        raise ValueError(f"precise_batch_norm needs at least one full batch: X has {len(X)} "
                         f"rows, batch_size={batch_size}; lower batch_size")
    precise = copy.deepcopy(model)
    for m in precise.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # equal-weight average over the batches of the pass
    precise.train()
    with torch.no_grad():
        for i in range(0, len(X) - batch_size + 1, batch_size):
            precise(torch.as_tensor(X[i:i + batch_size]))
    return precise


def _batched_error(net, X, y, *, train_mode, batch_size):
    """Classification error (%) of ``net``'s argmax on ``(X, y)``, in batches.

    ``train_mode=True`` runs the net in training mode, so batch norms use each batch's own
    statistics; a last batch of one row is then left out (a batch norm cannot normalise
    it) and the error is over the rows scored. ``net``'s mode is left as set.
    """
    net.train(train_mode)
    wrong = 0
    with torch.no_grad():
        for i in range(0, len(X), batch_size):
            xb = torch.as_tensor(X[i:i + batch_size])
            if len(xb) < 2 and train_mode:
                continue
            wrong += int((net(xb).argmax(1).numpy() != y[i:i + batch_size]).sum())
    n = len(X) - (len(X) % batch_size == 1 and train_mode)
    return 100.0 * wrong / n


def _batch_norm_errors(model, X_train, X_test, y_test, batch_size):
    """Test error (%) of a batch-norm classifier by where its statistics come from.

    ``"running"``: its running averages (eval mode); ``"precise"``: population statistics
    of ``X_train`` (:func:`precise_batch_norm`, batches of at most 250 rows); ``"test
    batches"``: each test batch's own statistics at the training batch size
    ``batch_size`` (training mode, on a copy). Wu & He (2018) compare group norm with batch
    norm under these three. ``model`` is left in eval mode; inputs are float32 arrays.
    """
    import copy

    out = {"running": _batched_error(model, X_test, y_test, train_mode=False, batch_size=500)}
    precise = precise_batch_norm(model, X_train, batch_size=min(250, len(X_train)))
    out["precise"] = _batched_error(precise, X_test, y_test, train_mode=False, batch_size=500)
    out["test batches"] = _batched_error(copy.deepcopy(model), X_test, y_test,
                                         train_mode=True, batch_size=batch_size)
    return out
