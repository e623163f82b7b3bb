"""The discriminative loss for pixel embeddings (De Brabandere, Neven & Van Gool 2017)."""

import torch
from torch import nn

__all__ = ["DiscriminativeLoss", "safe_norm"]


def safe_norm(x, dim=-1):
    """Euclidean norm along ``dim`` whose gradient is 0, not NaN, where the norm is 0.

    ``torch.linalg.vector_norm`` has the gradient ``x / |x|``, NaN at ``x = 0`` (a pixel
    exactly at its instance mean, two equal means). The square root is taken only of
    positive squared norms; the value is exact everywhere.

    Parameters
    ----------
    x : torch.Tensor
        Any shape.
    dim : int, default=-1
        Dimension to reduce.

    Returns
    -------
    norm : torch.Tensor
        ``x``'s shape without ``dim``.
    """
    squared = (x * x).sum(dim)
    positive = squared > 0
    root = torch.sqrt(torch.where(positive, squared, torch.ones_like(squared)))
    return torch.where(positive, root, torch.zeros_like(squared))


class DiscriminativeLoss(nn.Module):
    """Discriminative loss of per-pixel embeddings given instance maps.

    For each image with ``C`` instances (background pixels, id 0, take no part), with
    ``mu_c`` the mean embedding of instance ``c`` and ``N_c`` its pixel count
    (De Brabandere et al. 2017, Eq. 1-4):

    * pull (variance) term ``1/C sum_c 1/N_c sum_{i in c} [|mu_c - x_i| - delta_v]_+^2``;
    * push (distance) term ``1/(C(C-1)/2) sum_{c < c'} [2 delta_d - |mu_c - mu_c'|]_+^2``
      over unordered pairs of distinct instances (no diagonal, each pair once; 0 when
      ``C <= 1``);
    * regularisation ``1/C sum_c |mu_c|``;

    and the image's loss is ``alpha * pull + beta * push + gamma * reg`` (0 for an image
    without instances). The batch loss is the mean over images, or the
    ``sample_weight``-weighted mean. Norms use :func:`safe_norm`, so gradients stay
    finite when a pixel sits exactly on its mean. The loss depends on instance ids only
    through which pixels share one: it is invariant to relabelling.

    Parameters
    ----------
    delta_v : float, default=0.5
        Pull margin: pixels closer than this to their mean are not pulled.
    delta_d : float, default=1.5
        Push margin: means further apart than ``2 * delta_d`` are not pushed.
    alpha : float, default=1.0
        Weight of the pull term.
    beta : float, default=1.0
        Weight of the push term.
    gamma : float, default=0.001
        Weight of the regularisation of the means towards the origin.

    Raises
    ------
    ValueError
        At construction if ``delta_v < 0``, ``delta_d <= 0`` or ``delta_v >= delta_d``;
        in ``forward`` if ``instance_maps`` is not an integer tensor or holds negative ids.

    Notes
    -----
    Shapes: ``forward(embedding, instance_maps, sample_weight=None)`` with ``embedding``
    of shape (B, D, H, W) float, ``instance_maps`` (B, H, W) integer ids (0 =
    background), ``sample_weight`` (B,) non-negative or None. Returns a scalar. The
    computation is vectorised over the pixels of an image; images are looped over.

    References
    ----------
    .. [1] De Brabandere, B., Neven, D., Van Gool, L. (2017). Semantic instance
       segmentation with a discriminative loss function. CVPR Workshops.
       https://arxiv.org/abs/1708.02551

    Examples
    --------
    >>> import torch
    >>> from sklearn_papers.nn import DiscriminativeLoss
    >>> embedding = torch.zeros(1, 2, 1, 2)          # two one-pixel instances, same point
    >>> instances = torch.tensor([[[1, 2]]])
    >>> float(DiscriminativeLoss()(embedding, instances))   # push term (2 * 1.5 - 0)^2
    9.0
    """

    def __init__(self, delta_v=0.5, delta_d=1.5, alpha=1.0, beta=1.0, gamma=0.001):
        super().__init__()
        if not delta_v >= 0:
            raise ValueError(f"delta_v={delta_v!r} must be >= 0.")
        if not delta_d > 0:
            raise ValueError(f"delta_d={delta_d!r} must be > 0.")
        if delta_v >= delta_d:
            raise ValueError(f"delta_v={delta_v!r} must be smaller than "
                             f"delta_d={delta_d!r} (pull margin inside push margin).")
        self.delta_v = float(delta_v)
        self.delta_d = float(delta_d)
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.gamma = float(gamma)

    def terms(self, embedding, instance_map):
        """Pull, push and regularisation terms of one image.

        Parameters
        ----------
        embedding : torch.Tensor of shape (D, H, W)
            Pixel embeddings of one image.
        instance_map : torch.Tensor of shape (H, W), int
            Instance ids, 0 = background.

        Returns
        -------
        pull, push, reg : torch.Tensor scalars
            Zero tensors connected to ``embedding``'s graph when the image has no
            instance (push also when it has one).
        """
        dim = embedding.shape[0]
        flat = embedding.reshape(dim, -1).T  # (P, D)
        ids = instance_map.reshape(-1)
        fg = ids > 0
        zero = embedding.sum() * 0.0  # keeps the graph (and device, dtype)
        if not bool(fg.any()):
            return zero, zero, zero
        x = flat[fg]
        _, inverse, counts = torch.unique(ids[fg], return_inverse=True, return_counts=True)
        n_inst = counts.numel()
        sums = torch.zeros(n_inst, dim, dtype=x.dtype, device=x.device).index_add_(0, inverse, x)
        means = sums / counts[:, None].to(x.dtype)
        dist = safe_norm(means[inverse] - x)
        hinge = torch.clamp(dist - self.delta_v, min=0.0) ** 2
        per_inst = torch.zeros(n_inst, dtype=x.dtype, device=x.device).index_add_(0, inverse,
                                                                                 hinge)
        pull = (per_inst / counts.to(x.dtype)).mean()
        if n_inst > 1:
            a, b = torch.triu_indices(n_inst, n_inst, offset=1, device=x.device)
            gap = safe_norm(means[a] - means[b])
            push = (torch.clamp(2 * self.delta_d - gap, min=0.0) ** 2).mean()
        else:
            push = zero
        reg = safe_norm(means).mean()
        return pull, push, reg

    def forward(self, embedding, instance_maps, sample_weight=None):
        """Mean (or ``sample_weight``-weighted mean) loss over the images of a batch.

        Parameters
        ----------
        embedding : torch.Tensor of shape (B, D, H, W)
            Pixel embeddings, float.
        instance_maps : torch.Tensor of shape (B, H, W), int
            Instance id of every pixel, 0 = background (ids need not be consecutive).
        sample_weight : torch.Tensor of shape (B,) or None, default=None
            Non-negative weight of each image; None averages the images equally.

        Returns
        -------
        loss : torch.Tensor scalar
            ``alpha * pull + beta * push + gamma * reg`` averaged over the images.
        """
        if embedding.dim() != 4 or instance_maps.dim() != 3:
            raise ValueError(f"embedding must be (B, D, H, W) and instance_maps (B, H, W); got "
                             f"{tuple(embedding.shape)} and {tuple(instance_maps.shape)}.")
        if (embedding.shape[0] != instance_maps.shape[0]
                or embedding.shape[2:] != instance_maps.shape[1:]):
            raise ValueError(f"embedding {tuple(embedding.shape)} and instance_maps "
                             f"{tuple(instance_maps.shape)} disagree in batch size or H, W.")
        if instance_maps.dtype.is_floating_point or instance_maps.dtype.is_complex:
            raise ValueError(f"instance_maps must hold integer instance ids, got dtype "
                             f"{instance_maps.dtype}.")
        if instance_maps.numel() and bool((instance_maps < 0).any()):
            raise ValueError(f"instance_maps must hold non-negative ids (0 = background), got "
                             f"minimum {int(instance_maps.min())}.")
        losses = []
        for e, m in zip(embedding, instance_maps):
            pull, push, reg = self.terms(e, m)
            losses.append(self.alpha * pull + self.beta * push + self.gamma * reg)
        losses = torch.stack(losses)
        if sample_weight is None:
            return losses.mean()
        w = sample_weight.to(losses.dtype).reshape(-1)
        return (w * losses).sum() / torch.clamp(w.sum(), min=torch.finfo(losses.dtype).tiny)
