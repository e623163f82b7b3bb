"""skorch glue shared by every torch estimator: seeding, device checks, net building, and
the net subclasses, callbacks and losses that more than one model trains with.

Public estimators own a skorch ``NeuralNet`` built inside ``fit`` (see STYLE.md). This module
holds the pieces they all need, so each estimator file only describes its model; a net
subclass that runs one model's own training step stays beside that model.
"""

import contextlib
import re
import sys

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import Callback, PrintLog
from skorch.utils import to_tensor

from sklearn_papers.utils._random import check_random_state

__all__ = ["FiniteLossCheck", "PlainPrintLog", "SampleWeightedNet", "SampleWeightedTargetLoss",
           "SoftTargetNet", "build_net", "check_device", "loss_curve", "pack_sample_weight",
           "seed_from_random_state", "soft_cross_entropy", "spawn_seeds", "torch_seeded"]


def seed_from_random_state(random_state):
    """Turn a scikit-learn ``random_state`` into one int seed for torch.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        As in scikit-learn. ``None`` draws from numpy's global generator, so unseeded
        runs differ, as users expect.

    Returns
    -------
    seed : int
        In ``[0, 2**31 - 1)``.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def spawn_seeds(seed, n):
    """``n`` independent int seeds derived from ``seed`` by ``numpy.random.SeedSequence``.

    The sub-seeds of the generators one fit owns (initialisation, shuffling, draws): child
    ``k`` is ``SeedSequence(seed).spawn(n)[k]``, so seeds for different jobs are
    statistically independent, unlike offsets such as ``seed + 1`` that make the streams of
    neighbouring seeds overlap; from an int ``seed``, child ``k`` does not depend on ``n``
    (a ``SeedSequence`` given as ``seed`` goes on numbering its children across calls).

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Non-negative int (as from :func:`seed_from_random_state`) or a sequence spawned
        before.
    n : int
        Number of seeds.

    Returns
    -------
    seeds : list of int
        Each in ``[0, 2**31 - 1)``, valid for ``torch.manual_seed``,
        ``torch.Generator.manual_seed`` and ``numpy.random.default_rng``.
    """
    parent = seed if isinstance(seed, np.random.SeedSequence) else \
        np.random.SeedSequence(int(seed))
    return [int(child.generate_state(1, dtype=np.uint32)[0] % np.iinfo(np.int32).max)
            for child in parent.spawn(int(n))]


def check_device(device):
    """Validate a torch device string and return a ``torch.device``.

    Parameters
    ----------
    device : str or torch.device
        ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``.

    Returns
    -------
    device : torch.device

    Raises
    ------
    ValueError
        If the string is not a device, is a device type other than cpu, cuda and mps
        (``"meta"``, ``"xla"``, ...: the estimators train and predict on real tensors), or
        CUDA is asked for on a machine without it.
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a torch device: {exc}") from None
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device={device!r} is a {dev.type!r} device; the estimators run "
                         "on 'cpu', 'cuda', 'cuda:N' or 'mps' only.")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available on this machine "
            f"(torch {torch.__version__}); use device='cpu'."
        )
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device={device!r} was requested but MPS is not available.")
    return dev


@contextlib.contextmanager
def torch_seeded(seed, device="cpu"):
    """Run a block with torch's RNG seeded, restoring the global RNG afterwards.

    Weight initialisation, dropout and random augmentations inside the block are
    reproducible, and the caller's global torch RNG state is untouched.

    Parameters
    ----------
    seed : int
        Seed for ``torch.manual_seed``.
    device : str or torch.device, default="cpu"
        When a CUDA device, its RNG is forked and seeded too.
    """
    dev = torch.device(device)
    cuda_devices = []
    if dev.type == "cuda":
        cuda_devices = [dev.index if dev.index is not None else torch.cuda.current_device()]
    with torch.random.fork_rng(devices=cuda_devices):
        torch.manual_seed(seed)
        yield


def build_net(module, *, seed, criterion=torch.nn.MSELoss, net_class=None, max_epochs=10,
              lr=1e-3, batch_size=64, optimizer=torch.optim.Adam, device="cpu", verbose=0,
              callbacks=None, **kwargs):
    """Build a skorch net with the package's conventions.

    No internal validation split (``train_split=None``), training batches shuffled by a
    generator seeded from ``seed``, and the inference loader (``predict``, ``forward``)
    given its own generator too, so that no iteration draws from the global torch RNG;
    no progress printing unless ``verbose``, and the epoch table without colour codes
    when stdout is not a terminal (:class:`PlainPrintLog`). Adam and AdamW
    run their fused kernels on CPU and CUDA (``optimizer__fused=True``: one pass over each
    parameter per step instead of one per elementwise operation; same update rule) unless
    the caller sets ``optimizer__fused``, ``optimizer__foreach`` or
    ``optimizer__differentiable``.

    Parameters
    ----------
    module : torch.nn.Module class or instance
        The model.
    seed : int
        Seeds the training data loader's shuffling.
    criterion : torch loss class, default=torch.nn.MSELoss
    net_class : skorch.NeuralNet subclass, default=None
        ``skorch.NeuralNet`` when None.
    max_epochs, lr, batch_size, optimizer, device, callbacks
        Passed to skorch.
    verbose : int, default=0
        0 silences skorch's epoch table.
    **kwargs
        Further skorch parameters (``module__*``, ``optimizer__*``, ``iterator_*``).

    Returns
    -------
    net : skorch.NeuralNet
        Not yet initialised.
    """
    net_class = NeuralNet if net_class is None else net_class
    params = dict(
        module=module,
        criterion=criterion,
        optimizer=optimizer,
        lr=lr,
        max_epochs=max_epochs,
        batch_size=batch_size,
        device=None if device is None else str(device),
        train_split=None,
        verbose=int(verbose),
        callbacks=callbacks,
        iterator_train__shuffle=True,
        iterator_train__generator=torch.Generator().manual_seed(int(seed)),
        # Every DataLoader gets its own generator: iterating one without draws its base
        # seed from the global torch RNG even when it does not shuffle (PyTorch #11062),
        # which would make predict/transform advance the user's RNG.
        iterator_valid__generator=torch.Generator().manual_seed(int(seed)),
    )
    if "callbacks__print_log" not in kwargs:
        params["callbacks__print_log"] = PlainPrintLog
    chosen = {k for k in kwargs if k in ("optimizer__fused", "optimizer__foreach",
                                          "optimizer__differentiable")}
    if (optimizer in (torch.optim.Adam, torch.optim.AdamW) and not chosen
            and torch.device(device or "cpu").type in ("cpu", "cuda")):
        params["optimizer__fused"] = True
    params.update(kwargs)
    return net_class(**params)


_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _stdout_is_terminal():
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return False


class PlainPrintLog(PrintLog):
    """skorch's epoch table (:class:`skorch.callbacks.PrintLog`), without colour codes
    when standard output is not a terminal.

    skorch colours the best value of each column with ANSI escape codes whatever the
    output; in a pipe, a log file or a notebook capture they show up as ``[32m``-style
    garbage. The table is otherwise unchanged: ``tabulate`` aligns the columns on the
    visible text, so removing the codes keeps the layout. :func:`build_net` uses it as
    the ``print_log`` callback (same parameters as ``PrintLog``).
    """

    def table(self, row):
        text = super().table(row)
        return text if _stdout_is_terminal() else _ANSI_CODE.sub("", text)


def loss_curve(net):
    """Training loss after every epoch of a fitted skorch net, as a list of floats."""
    return [float(v) for v in net.history[:, "train_loss"]]



class FiniteLossCheck(Callback):
    """skorch callback: ``FloatingPointError`` once an epoch's training loss is not finite
    (a diverged network would otherwise go on and predict NaN without a word).

    Parameters
    ----------
    estimator_name : str
        Named in the message.
    """

    def __init__(self, estimator_name="the estimator"):
        self.estimator_name = estimator_name

    def on_epoch_end(self, net, **kwargs):
        loss = net.history[-1].get("train_loss")
        if loss is not None and not np.isfinite(loss):
            raise FloatingPointError(
                f"{self.estimator_name}: the training loss became {loss} at epoch "
                f"{len(net.history)} (the network diverged); lower lr, or check that the "
                "targets are finite and of a moderate size.")


def pack_sample_weight(target, sample_weight):
    """Targets with the sample weights as a last column, for :class:`SampleWeightedTargetLoss`.

    Carrying the weights inside ``y`` lets them follow every row through shuffling,
    batching and validation splits of any dataset and collate function unchanged.

    Parameters
    ----------
    target : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Float targets (NaN: missing) or int64 class codes.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights.

    Returns
    -------
    packed : ndarray of shape (n_samples, n_targets + 1), dtype float32
        Class codes are stored as floats (exact below 2**24).
    """
    target = np.asarray(target)
    target = target.reshape(len(target), -1).astype(np.float32)
    return np.column_stack([target, np.asarray(sample_weight, dtype=np.float32)])


class SampleWeightedTargetLoss(torch.nn.Module):
    """Per-sample-weighted loss on targets packed by :func:`pack_sample_weight`.

    The last target column holds the weight ``w_b`` of each sample. With per-entry losses
    ``l_bt`` and the labelled-entry mask ``m_bt`` (NaN targets are missing), the loss is
    ``sum_bt w_b m_bt l_bt / sum_bt w_b m_bt`` (0 when that sum is 0), so a sample of
    weight 0 counts as if it were left out, and unit weights give the unweighted masked
    mean.

    Parameters
    ----------
    loss : {"mse", "bce", "cross_entropy"}, default="mse"
        Squared error, binary cross-entropy on logits (both per entry, NaN targets left
        out), or softmax cross-entropy on class codes (one per sample).
    """

    def __init__(self, loss="mse"):
        super().__init__()
        if loss not in ("mse", "bce", "cross_entropy"):
            raise ValueError(f"loss={loss!r} is not one of 'mse', 'bce', 'cross_entropy'.")
        self.loss = loss

    def forward(self, input, target):
        """Weighted loss of ``input`` ``(B, T)`` against packed ``target`` ``(B, T' + 1)``.

        Parameters
        ----------
        input : torch.Tensor of shape (B, T)
            Network outputs (predictions or logits).
        target : torch.Tensor of shape (B, T + 1) or (B, 2)
            Targets then weights; for ``"cross_entropy"``, class codes then weights.

        Returns
        -------
        loss : torch.Tensor of shape ()
        """
        target = target.to(input.device)
        weight = target[:, -1].to(input.dtype)
        if self.loss == "cross_entropy":
            per_sample = torch.nn.functional.cross_entropy(
                input, target[:, 0].long(), reduction="none")
            return (weight * per_sample).sum() / weight.sum().clamp(min=1e-12)
        target = target[:, :-1].to(input.dtype).view_as(input)
        mask = ~torch.isnan(target)
        clean = torch.nan_to_num(target)
        if self.loss == "mse":
            per_entry = (input - clean) ** 2
        else:
            per_entry = torch.nn.functional.binary_cross_entropy_with_logits(
                input, clean, reduction="none")
        entry_weight = weight[:, None] * mask
        per_entry = torch.where(mask, per_entry, torch.zeros_like(per_entry))
        return (entry_weight * per_entry).sum() / entry_weight.sum().clamp(min=1e-12)


class SampleWeightedNet(NeuralNet):
    """skorch net whose criterion receives the batch's sample weights.

    Only ``get_loss`` is overridden (a documented skorch extension point), following
    skorch's recipe for sample weights (its FAQ: "How do I use sample weights?"): fit on
    ``X = {"X": X, "sample_weight": w}``; the criterion is then called as
    ``criterion(y_pred, y_true, sample_weight=w_batch)``, and as ``criterion(y_pred,
    y_true)`` when ``X`` carries no weights. ``y`` may be an array or a dict of arrays,
    which skorch batches alike.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The criterion's loss, with the batch's sample weights when ``X`` has them."""
        y_true = to_tensor(y_true, device=self.device)
        if isinstance(X, dict) and "sample_weight" in X:
            weight = to_tensor(X["sample_weight"], device=self.device)
            return self.criterion_(y_pred, y_true, sample_weight=weight)
        return self.criterion_(y_pred, y_true)


def soft_cross_entropy(logits, targets):
    """Per-row cross-entropy ``-sum_c t_c log softmax(z)_c``.

    Parameters
    ----------
    logits : torch.Tensor of shape (B, C)
    targets : torch.Tensor of shape (B, C)
        Rows summing to one.

    Returns
    -------
    torch.Tensor of shape (B,)
    """
    return -(targets * torch.log_softmax(logits, dim=1)).sum(dim=1)


class SoftTargetNet(NeuralNet):
    """skorch net minimising ``mean_b(w_b * CE_b) + module.penalty()``.

    ``w`` are the per-row weights from ``X["sample_weight"]`` (normalised by the estimator
    to mean one over the training rows), ``CE`` is :func:`soft_cross_entropy` and
    ``penalty`` an optional term of the module (the KL divergence to the prior of a
    variational classifier, already divided by the number of training rows). Only
    parameters with ``requires_grad`` reach the optimiser, so frozen columns of a
    progressive network are not even visited by it.

    Parameters
    ----------
    *args, **kwargs
        As for ``skorch.NeuralNet``.
    task_index : int or None, default=None
        With an int, the module is called as ``module(X, task_index)`` (the head of a
        multi-head module, such as one column of a progressive network); with None, as
        skorch calls it (``module(**X)`` for a dict ``X``).
    """

    def __init__(self, *args, task_index=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.task_index = task_index

    def infer(self, x, **fit_params):
        if self.task_index is None:
            return super().infer(x, **fit_params)
        x = to_tensor(x, device=self.device)
        return self.module_(x["X"] if isinstance(x, dict) else x, self.task_index)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = y_true.to(y_pred.device)
        ce = soft_cross_entropy(y_pred, y_true)
        if isinstance(X, dict) and X.get("sample_weight") is not None:
            ce = ce * X["sample_weight"].to(ce.device)
        loss = ce.mean()
        penalty = getattr(self.module_, "penalty", None)
        if callable(penalty):
            loss = loss + penalty()
        return loss

    def get_all_learnable_params(self):
        for name, param in self.module_.named_parameters():
            if param.requires_grad:
                yield name, param
