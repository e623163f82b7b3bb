"""Supervised contrastive learning (Khosla et al. 2020): loss, augmentations, models.

Tensor shapes: ``B`` batch, ``V`` views per sample, ``F`` input features, ``D`` encoder
output (representation), ``P`` projection width, ``K`` classes.

Everything here is torch; the estimators that use it live in
:mod:`sklearn_papers.contrastive`.
"""

import math

import torch
from skorch.dataset import unpack_data
from skorch.utils import to_tensor
from torch import nn
from torch.nn import functional as F

from sklearn_papers.nn._skorch import SampleWeightedNet

__all__ = [
    "CrossEntropyModel",
    "ImageAugment",
    "SupConLoss",
    "SupConModel",
    "TabularAugment",
    "TrainingOutputNet",
    "WeightedCrossEntropyLoss",
    "supcon_loss",
]


def _check_temperature(temperature, base_temperature=None):
    for name, value in (("temperature", temperature), ("base_temperature", base_temperature)):
        if value is None and name == "base_temperature":
            continue
        try:
            if isinstance(value, (str, bytes)):
                raise TypeError
            v = float(value)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name} must be a real number > 0, got {value!r}.") from None
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")


def supcon_loss(features, labels=None, *, temperature=0.1, base_temperature=None,
                variant="out", contrast_mode="all", sample_weight=None):
    """Supervised contrastive loss, L_out (eq. 2) or L_in (eq. 3) of Khosla et al. 2020.

    For every anchor view ``i`` with positives ``P(i)`` (the other views of the same
    sample and every view of a sample with the same label) and contrast set ``A(i)``
    (every view except ``i`` itself), with ``z`` the L2-normalised features and
    ``s_ia = z_i . z_a / temperature``:

    * ``variant="out"`` (eq. 2): ``l_i = -1/|P(i)| sum_{p in P(i)} [s_ip - logsumexp_{a in A(i)} s_ia]``;
    * ``variant="in"`` (eq. 3): ``l_i = -[logsumexp_{p in P(i)} s_ip - log|P(i)| - logsumexp_{a in A(i)} s_ia]``.

    The loss is the mean of ``l_i`` over the anchors that have at least one positive,
    times ``temperature / base_temperature`` when ``base_temperature`` is given.

    With ``sample_weight`` ``w``, every view of sample ``b`` counts ``w_b`` times as an
    anchor, a positive and a member of the contrast set (frequency weights):
    ``sum_{a in A(i)} exp(s_ia)`` becomes ``sum_{a in A(i)} w_a exp(s_ia)``, the mean over
    ``P(i)`` a ``w``-weighted mean, and the mean over anchors a ``w``-weighted mean. A
    sample of weight 0 then changes nothing, exactly as if it were left out of the batch;
    unit weights give the unweighted loss.

    Parameters
    ----------
    features : torch.Tensor of shape (B, V, D) or (B, V, ...)
        Projections of ``V`` views of ``B`` samples; trailing dimensions are flattened.
        They are L2-normalised here, so any scale is accepted (unnormalised features
        are a known source of NaN in the reference implementation, SupContrast #50).
    labels : torch.Tensor of shape (B,), default=None
        Class of each sample (any dtype comparable with ``==``). None: each sample is
        its own class, which is SimCLR's NT-Xent loss (Chen et al. 2020).
    temperature : float, default=0.1
        ``tau`` of eqs. 2-3.
    base_temperature : float, default=None
        When given, the loss is multiplied by ``temperature / base_temperature`` (the
        reference code's rescaling, with 0.07 there). None: no rescaling, the loss is
        exactly eq. 2 or 3 averaged over anchors.
    variant : {"out", "in"}, default="out"
        Mean over positives outside (eq. 2) or inside (eq. 3) the log.
    contrast_mode : {"all", "one"}, default="all"
        ``"all"``: every view is an anchor. ``"one"``: only the first view of each
        sample is an anchor (contrasted against all views).
    sample_weight : torch.Tensor of shape (B,), default=None
        Non-negative weight of each sample (see above). None: unit weights.

    Returns
    -------
    loss : torch.Tensor of shape ()
        Finite for finite input. Zero (still attached to the graph, with zero gradient)
        when no anchor has a positive, e.g. one view and all labels distinct.

    Raises
    ------
    ValueError
        If ``features`` has fewer than 3 dimensions or no sample or view,
        ``temperature`` or ``base_temperature`` is not > 0, ``labels`` is not an
        integer tensor of shape (B,),
        ``sample_weight`` is not of shape (B,), or ``variant`` / ``contrast_mode`` is
        unknown.

    Notes
    -----
    **Anchors without positives.** A sample that is alone in its class in the batch,
    seen through a single view, has ``P(i) = {}``; eq. 2 then divides 0 by 0
    (SupContrast #141). Here such anchors are *left out of the mean*: the loss is the
    average over anchors that have positives. The two well-known implementations differ:

    * SupContrast (``losses.py`` after PR #142) sets those anchors' loss to zero and
      *keeps them in the denominator* of the mean, so the loss shrinks as more anchors
      lack positives;
    * pytorch-metric-learning's ``SupConLoss`` also gives them zero but *drops* them
      through its ``AvgNonZeroReducer`` (which drops any anchor whose loss is exactly
      zero); it returns zero when the batch has no positive pair *or no negative pair*,
      so a batch of one class contributes nothing there, while here it gives the finite
      loss ``log(|A(i)|) - mean log-softmax`` of eq. 2 with an empty negative set.

    With ``labels`` given, every anchor with a positive, at least one negative in the
    batch and ``base_temperature=None``, the value equals pytorch-metric-learning's on
    the flattened ``(B * V, D)`` features with repeated labels.

    References
    ----------
    .. [1] Khosla, P., Teterwak, P., Wang, C., Sarna, A., Tian, Y., Isola, P.,
       Maschinot, A., Liu, C. and Krishnan, D. (2020). Supervised contrastive learning.
       NeurIPS 33. :doi:`10.48550/arXiv.2004.11362`
    .. [2] Chen, T., Kornblith, S., Norouzi, M. and Hinton, G. (2020). A simple
       framework for contrastive learning of visual representations. ICML.

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import supcon_loss
    >>> features = torch.randn(8, 2, 16, generator=torch.Generator().manual_seed(0))
    >>> labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    >>> loss = supcon_loss(features, labels, temperature=0.1)
    >>> loss.shape, bool(loss > 0)
    (torch.Size([]), True)
    """
    if features.ndim < 3:
        raise ValueError(
            f"features must have shape (batch, n_views, dim), got {tuple(features.shape)}."
        )
    if features.shape[0] == 0 or features.shape[1] == 0:
        raise ValueError(f"features must hold at least one sample and one view, got shape "
                         f"{tuple(features.shape)}.")
    _check_temperature(temperature, base_temperature)
    if variant not in ("out", "in"):
        raise ValueError(f"variant={variant!r} is not one of ('out', 'in').")
    if contrast_mode not in ("all", "one"):
        raise ValueError(f"contrast_mode={contrast_mode!r} is not one of ('all', 'one').")
    n_samples, n_views = features.shape[0], features.shape[1]
    device = features.device
    z = F.normalize(features.reshape(n_samples * n_views, -1), dim=1)  # (B*V, D), sample-major
    if labels is None:
        groups = torch.arange(n_samples, device=device)
    else:
        labels = torch.as_tensor(labels, device=device)
        if labels.shape != (n_samples,):
            raise ValueError(
                f"labels must have shape ({n_samples},) to match features "
                f"{tuple(features.shape)}, got {tuple(labels.shape)}."
            )
        if labels.dtype.is_floating_point or labels.dtype.is_complex:
            raise ValueError(f"labels must be integer class labels, got dtype {labels.dtype}.")
        groups = labels
    groups = groups.repeat_interleave(n_views)  # (B*V,)
    weight = None
    if sample_weight is not None:
        sample_weight = torch.as_tensor(sample_weight, device=device, dtype=z.dtype)
        if sample_weight.shape != (n_samples,):
            raise ValueError(
                f"sample_weight must have shape ({n_samples},) to match features "
                f"{tuple(features.shape)}, got {tuple(sample_weight.shape)}."
            )
        weight = sample_weight.repeat_interleave(n_views)  # (B*V,)
    if contrast_mode == "all":
        anchor_idx = torch.arange(n_samples * n_views, device=device)
    else:
        anchor_idx = torch.arange(n_samples, device=device) * n_views
    is_self = anchor_idx[:, None] == torch.arange(n_samples * n_views, device=device)[None, :]
    positive = (groups[anchor_idx][:, None] == groups[None, :]) & ~is_self  # (A, B*V)
    if weight is None:
        n_pos = positive.sum(dim=1)
        keep = n_pos > 0
    else:
        n_pos = (positive * weight[None, :]).sum(dim=1)  # weighted count of positives
        keep = (n_pos > 0) & (weight[anchor_idx] > 0)
    if not bool(keep.any()):
        return features.sum() * 0.0
    # Only anchors with a positive enter the computation, so no 0/0 and no row where
    # every logit is masked can ever occur.
    anchor_idx, positive, is_self, n_pos = (anchor_idx[keep], positive[keep], is_self[keep],
                                             n_pos[keep])
    logits = z[anchor_idx] @ z.T / temperature  # (A, B*V)
    # log w_a added to the logits weights the sums of exp (log 0 = -inf drops a term).
    log_w = 0.0 if weight is None else torch.log(weight)[None, :]
    log_denominator = torch.logsumexp((logits + log_w).masked_fill(is_self, -math.inf),
                                      dim=1)
    pos_weight = positive if weight is None else positive * weight[None, :]
    if variant == "out":
        mean_pos_logit = (logits * pos_weight).sum(dim=1) / n_pos
        per_anchor = log_denominator - mean_pos_logit
    else:
        log_mean_pos = (torch.logsumexp((logits + log_w).masked_fill(~positive, -math.inf),
                                        dim=1)
                        - torch.log(n_pos.to(logits.dtype)))
        per_anchor = log_denominator - log_mean_pos
    if weight is None:
        loss = per_anchor.mean()
    else:
        anchor_weight = weight[anchor_idx]
        loss = (anchor_weight * per_anchor).sum() / anchor_weight.sum()
    if base_temperature is not None:
        loss = loss * (temperature / base_temperature)
    return loss


class SupConLoss(nn.Module):
    """Supervised contrastive loss as a module (Khosla et al. 2020, eqs. 2 and 3).

    See :func:`supcon_loss` for the definition, the handling of anchors without
    positives and how it differs from SupContrast and pytorch-metric-learning.

    Parameters
    ----------
    temperature : float, default=0.1
        ``tau``.
    base_temperature : float, default=None
        None: no ``tau / tau_base`` rescaling.
    variant : {"out", "in"}, default="out"
        L_out (eq. 2) or L_in (eq. 3).
    contrast_mode : {"all", "one"}, default="all"
        Which views are anchors.

    See Also
    --------
    supcon_loss : The same loss as a function.

    Notes
    -----
    ``forward(features, labels=None, sample_weight=None)``: ``features`` ``(B, V, D)``,
    ``labels`` ``(B,)`` or None (NT-Xent), ``sample_weight`` ``(B,)`` or None; returns a
    scalar. As a drop-in for pytorch-metric-learning's ``SupConLoss``, which takes
    flattened ``(B * V, D)`` embeddings, reshape them to ``(B, V, D)`` first.

    References
    ----------
    .. [1] Khosla, P., Teterwak, P., Wang, C., Sarna, A., Tian, Y., Isola, P.,
       Maschinot, A., Liu, C. and Krishnan, D. (2020). Supervised contrastive learning.
       NeurIPS 33, eqs. 2-3. :doi:`10.48550/arXiv.2004.11362`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import SupConLoss
    >>> encoder = torch.nn.Linear(10, 16)
    >>> x = torch.randn(8, 10, generator=torch.Generator().manual_seed(0))
    >>> views = torch.stack([encoder(x), encoder(x + 0.1)], dim=1)  # (B, V, D)
    >>> loss = SupConLoss(temperature=0.1)(views, torch.tensor([0, 1] * 4))
    >>> loss.backward()
    >>> encoder.weight.grad.shape
    torch.Size([16, 10])
    """

    def __init__(self, temperature=0.1, *, base_temperature=None, variant="out",
                 contrast_mode="all"):
        super().__init__()
        _check_temperature(temperature, base_temperature)
        self.temperature = temperature
        self.base_temperature = base_temperature
        self.variant = variant
        self.contrast_mode = contrast_mode

    def forward(self, features, labels=None, sample_weight=None):
        """Loss of ``features`` ``(B, V, D)`` with ``labels`` ``(B,)`` or None.

        Parameters
        ----------
        features : torch.Tensor of shape (B, V, D)
            Projections of ``V`` views of ``B`` samples.
        labels : torch.Tensor of shape (B,), default=None
            Class of each sample; None: each sample is its own class (NT-Xent).
        sample_weight : torch.Tensor of shape (B,), default=None
            Non-negative frequency weight of each sample; a weight of 0 is the same as
            leaving the sample out of the batch (see :func:`supcon_loss`).

        Returns
        -------
        loss : torch.Tensor of shape ()
            The loss averaged over anchors (see :func:`supcon_loss`).
        """
        return supcon_loss(features, labels, temperature=self.temperature,
                           base_temperature=self.base_temperature, variant=self.variant,
                           contrast_mode=self.contrast_mode, sample_weight=sample_weight)


class WeightedCrossEntropyLoss(nn.CrossEntropyLoss):
    """``torch.nn.CrossEntropyLoss`` with optional per-sample weights.

    ``forward(input, target, sample_weight=None)``: ``input`` ``(B, K)`` logits,
    ``target`` ``(B,)`` class indices, ``sample_weight`` ``(B,)`` non-negative or None.
    With weights the loss is ``sum_b w_b l_b / sum_b w_b`` (0 when every weight is 0), so
    a sample of weight 0 is the same as one left out of the batch; without, it is the
    parent class's loss.
    """

    def forward(self, input, target, sample_weight=None):
        if sample_weight is None:
            return super().forward(input, target)
        per_sample = F.cross_entropy(input, target, weight=self.weight,
                                     ignore_index=self.ignore_index, reduction="none",
                                     label_smoothing=self.label_smoothing)
        sample_weight = torch.as_tensor(sample_weight, dtype=per_sample.dtype,
                                        device=per_sample.device)
        return (sample_weight * per_sample).sum() / sample_weight.sum().clamp(min=1e-12)


class TabularAugment(nn.Module):
    """Random view of tabular rows: Gaussian feature noise and random feature masking.

    ``x' = m * (x + noise * std * eps) + (1 - m) * mean`` with ``eps ~ N(0, 1)`` and
    ``m ~ Bernoulli(1 - mask_prob)`` per entry: a masked feature is replaced by its
    training mean. Randomness comes from torch's RNG (seeded by the estimator).

    Parameters
    ----------
    mean, std : torch.Tensor of shape (F,)
        Per-feature training mean and standard deviation (in the units of ``X``).
    noise : float, default=0.1
        Noise standard deviation as a fraction of each feature's ``std``.
    mask_prob : float, default=0.1
        Probability that an entry is masked.

    See Also
    --------
    ImageAugment : The image augmentation.

    Notes
    -----
    Input and output ``(B, F)``. Noise and masking are common augmentations for tabular
    contrastive learning (e.g. SCARF, Bahri et al. 2022, corrupts features by replacing
    them); Khosla et al. (2020) use image augmentations only.

    References
    ----------
    .. [1] Khosla, P. et al. (2020). Supervised contrastive learning. NeurIPS 33, §4
       (augmented views). :doi:`10.48550/arXiv.2004.11362`
    .. [2] Bahri, D., Jiang, H., Tay, Y. and Metzler, D. (2022). SCARF: Self-supervised
       contrastive learning using random feature corruption. ICLR.
       :arxiv:`2106.15147`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import TabularAugment
    >>> augment = TabularAugment(torch.zeros(3), torch.ones(3), noise=0.1, mask_prob=0.2)
    >>> augment(torch.ones(4, 3)).shape
    torch.Size([4, 3])
    """

    def __init__(self, mean, std, *, noise=0.1, mask_prob=0.1):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        self.noise = float(noise)
        self.mask_prob = float(mask_prob)

    def forward(self, x):
        """One random view of ``x`` (torch's global RNG; seed it for reproducibility).

        Parameters
        ----------
        x : torch.Tensor of shape (B, F)
            Raw rows, in the units of ``mean`` and ``std``.

        Returns
        -------
        view : torch.Tensor of shape (B, F)
            Noisy rows with about ``mask_prob`` of the entries set to the feature mean.
        """
        out = x + self.noise * self.std * torch.randn_like(x)
        if self.mask_prob > 0:
            keep = torch.rand_like(x) >= self.mask_prob
            out = torch.where(keep, out, self.mean.expand_as(out))
        return out


class ImageAugment(nn.Module):
    """Random view of images given as flat rows: shift, small rotation, noise.

    One random affine map per image (rotation up to ``max_rotation`` degrees, shift up to
    ``max_shift`` pixels on each axis; bilinear resampling, zero padding, so the
    background is assumed to be 0 as in ``load_digits``), then Gaussian pixel noise.

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W)`` or ``(C, H, W)``.
    scale : float
        Typical pixel magnitude (training standard deviation of ``X``), the unit of
        ``noise``.
    max_shift : float, default=1.0
        In pixels.
    max_rotation : float, default=10.0
        In degrees.
    noise : float, default=0.1
        Noise standard deviation as a fraction of ``scale``.

    See Also
    --------
    TabularAugment : The augmentation for tabular rows.

    Notes
    -----
    Input and output ``(B, C*H*W)``. A light version, for small images such as
    ``load_digits``, of the crops, flips and colour changes of Khosla et al. (2020).

    References
    ----------
    .. [1] Khosla, P. et al. (2020). Supervised contrastive learning. NeurIPS 33, §4
       (augmented views). :doi:`10.48550/arXiv.2004.11362`

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import ImageAugment
    >>> augment = ImageAugment((8, 8), scale=1.0)
    >>> augment(torch.rand(5, 64)).shape
    torch.Size([5, 64])
    """

    def __init__(self, image_shape, scale, *, max_shift=1.0, max_rotation=10.0, noise=0.1):
        super().__init__()
        shape = tuple(int(s) for s in image_shape)
        self.image_shape = (1, *shape) if len(shape) == 2 else shape
        self.scale = float(scale)
        self.max_shift = float(max_shift)
        self.max_rotation = float(max_rotation)
        self.noise = float(noise)

    def forward(self, x):
        """One random view of ``x`` (torch's global RNG; seed it for reproducibility).

        Parameters
        ----------
        x : torch.Tensor of shape (B, C*H*W)
            Images as flat rows (row-major), background 0.

        Returns
        -------
        view : torch.Tensor of shape (B, C*H*W)
            Rotated, shifted and noisy images.
        """
        n = x.shape[0]
        _, h, w = self.image_shape
        img = x.reshape(n, *self.image_shape)
        angle = (torch.rand(n, device=x.device) * 2 - 1) * math.radians(self.max_rotation)
        shift = (torch.rand(n, 2, device=x.device) * 2 - 1) * self.max_shift
        cos, sin = torch.cos(angle), torch.sin(angle)
        theta = torch.stack([
            torch.stack([cos, -sin, shift[:, 0] * 2 / w], dim=1),
            torch.stack([sin, cos, shift[:, 1] * 2 / h], dim=1),
        ], dim=1).to(x.dtype)  # (B, 2, 3), normalised coordinates
        grid = F.affine_grid(theta, list(img.shape), align_corners=False)
        out = F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros",
                            align_corners=False)
        out = out + self.noise * self.scale * torch.randn_like(out)
        return out.reshape(n, -1)


class _Standardize(nn.Module):
    """``(x - mean) / std`` with fixed buffers; shapes broadcast against ``(B, F)``."""

    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x):
        return (x - self.mean) / self.std


def _build_encoder(encoder, n_features, n_components, image_shape, norm, num_groups,
                   encoder_kwargs):
    from sklearn_papers.nn._encoders import ConvEncoder, MLPEncoder

    if encoder == "mlp":
        return MLPEncoder(n_features, n_components, norm=norm, num_groups=num_groups,
                          **encoder_kwargs)
    if encoder == "conv":
        return ConvEncoder(n_features, n_components, image_shape=image_shape, norm=norm,
                           num_groups=num_groups, **encoder_kwargs)
    return encoder(n_features=n_features, n_components=n_components, **encoder_kwargs)


class _EncoderModel(nn.Module):
    """Standardise -> encoder; ``forward`` is the representation ``(B, F) -> (B, D)``."""

    def __init__(self, *, n_features, n_components, encoder="mlp", image_shape=None,
                 norm="batch", num_groups=8, mean=0.0, std=1.0, augment=None,
                 encoder_kwargs=None):
        super().__init__()
        self.standardize = _Standardize(mean, std)
        self.encoder = _build_encoder(encoder, n_features, n_components, image_shape, norm,
                                      num_groups, dict(encoder_kwargs or {}))
        self.augment = augment

    def forward(self, x):
        """Representation ``(B, D)`` of raw input ``(B, F)`` (no augmentation)."""
        return self.encoder(self.standardize(x))

    def _view(self, x):
        return x if self.augment is None else self.augment(x)


class SupConModel(_EncoderModel):
    """Encoder + projection head trained with the SupCon loss (Khosla et al. 2020, §3).

    Parameters
    ----------
    n_features : int
        Input width ``F``.
    n_components : int
        Representation width ``D`` (encoder output).
    projection_dim : int, default=128
        Projection width ``P``; the head is ``Linear(D, D) -> ReLU -> Linear(D, P)``, as
        the paper's one-hidden-layer MLP.
    n_views : int, default=2
        Augmented views per sample in :meth:`training_output`.
    encoder : {"mlp", "conv"} or callable, default="mlp"
        A callable is called as ``encoder(n_features=F, n_components=D, **encoder_kwargs)``
        and must return a module mapping ``(B, F)`` to ``(B, D)``.
    image_shape : tuple of int, default=None
        For ``encoder="conv"``.
    norm : {"batch", "group", "layer"} or None, default="batch"
    num_groups : int, default=8
    mean, std : float or torch.Tensor of shape (F,)
        Standardisation applied before the encoder.
    augment : callable, default=None
        ``(B, F) -> (B, F)`` random view of raw input; None gives identical views.
    encoder_kwargs : dict, default=None
        Extra arguments of the encoder.

    Notes
    -----
    ``forward``: ``(B, F) -> (B, D)``, the representation (no augmentation, no head).
    ``training_output``: ``(B, F) -> (B, V, P)`` projections of ``V`` augmented views.
    """

    def __init__(self, *, n_features, n_components, projection_dim=128, n_views=2, **kwargs):
        super().__init__(n_features=n_features, n_components=n_components, **kwargs)
        self.n_views = int(n_views)
        self.head = nn.Sequential(nn.Linear(n_components, n_components), nn.ReLU(),
                                  nn.Linear(n_components, projection_dim))

    def training_output(self, x):
        """Projections ``(B, V, P)`` of ``V = n_views`` random views of ``x`` ``(B, F)``."""
        n = x.shape[0]
        views = torch.cat([self._view(x) for _ in range(self.n_views)], dim=0)  # (V*B, F)
        proj = self.head(self(views))  # (V*B, P), view-major
        return proj.reshape(self.n_views, n, -1).transpose(0, 1)


class CrossEntropyModel(_EncoderModel):
    """The paper's baseline: the same encoder with a linear classifier, cross-entropy.

    Parameters are those of :class:`SupConModel` without the head ones, plus
    ``n_classes`` (``K``).

    Notes
    -----
    ``forward``: ``(B, F) -> (B, D)``; ``training_output``: ``(B, F) -> (B, K)`` logits of
    one augmented view.
    """

    def __init__(self, *, n_features, n_components, n_classes, **kwargs):
        super().__init__(n_features=n_features, n_components=n_components, **kwargs)
        self.classifier = nn.Linear(n_components, n_classes)

    def training_output(self, x):
        """Logits ``(B, K)`` of one random view of ``x`` ``(B, F)``."""
        return self.classifier(self(self._view(x)))


class TrainingOutputNet(SampleWeightedNet):
    """skorch net whose training step uses ``module_.training_output``.

    Only ``train_step_single`` is overridden (a documented skorch extension point): the
    loss is computed on the module's training output (augmented views and projection head
    for :class:`SupConModel`, logits for :class:`CrossEntropyModel`), while ``forward``
    returns the representation ``(B, D)``. Sample weights reach the criterion as in
    :class:`~sklearn_papers.nn._skorch.SampleWeightedNet`: fit on
    ``X = {"X": X, "sample_weight": w}``; the criterion is then called as
    ``criterion(y_pred, y_true, sample_weight=w_batch)``.
    """

    def train_step_single(self, batch, **fit_params):
        """One training step on ``batch = (X (B, F), y (B,))``; returns loss and output.

        ``X`` may be a dict ``{"X": (B, F), "sample_weight": (B,)}``.
        """
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        Xi = to_tensor(Xi, device=self.device)
        x = Xi["X"] if isinstance(Xi, dict) else Xi
        y_pred = self.module_.training_output(x)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        return {"loss": loss, "y_pred": y_pred}
