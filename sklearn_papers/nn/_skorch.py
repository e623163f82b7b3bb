"""skorch glue shared by every torch estimator: seeding, device checks, net building, the
divergence check, early stopping and the learning-rate schedule, and the net subclasses,
callbacks and losses that more than one model trains with.

Public estimators own a skorch ``NeuralNet`` built inside ``fit`` by :func:`build_net` (see
STYLE.md and CONTRIBUTING.md). This module holds the pieces they all need, so each estimator
file only describes its model; a net subclass that runs one model's own training step stays
beside that model. It imports no family.
"""

import contextlib
import math
import re
import sys

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import Callback, EarlyStopping, LRScheduler, PrintLog
from skorch.utils import to_tensor

from sklearn_papers.nn._graph import GraphBatch
from sklearn_papers.utils._random import check_random_state

__all__ = ["EvenBatchLoader", "EvenBatchSampler", "FiniteLossCheck", "HOLD_AFTER", "LabelledRowsSplit", "PlainPrintLog",
           "SampleWeightedNet", "SampleWeightedTargetLoss", "SoftTargetNet", "WARMUP_EPOCHS",
           "WarmupDecay", "WeightPenaltyNet", "build_net", "check_device",
           "check_early_stopping_size", "divergence_error", "labelled_rows", "loss_curve",
           "n_validation", "pack_sample_weight", "seed_from_random_state",
           "soft_cross_entropy", "spawn_seeds", "torch_seeded", "training_callbacks"]


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


#: The estimator parameters :func:`build_net` reads when handed an ``estimator``.
COMMON_PARAMS = ("max_epochs", "lr", "batch_size", "device", "verbose")

#: The early-stopping and schedule parameters; an estimator with all four gets the
#: callbacks of :func:`training_callbacks` from :func:`build_net`.
TRAINING_PARAMS = ("early_stopping", "validation_fraction", "n_iter_no_change", "lr_schedule")

_DEFAULTS = {"max_epochs": 10, "lr": 1e-3, "batch_size": 64, "device": "cpu", "verbose": 0}

_UNSET = object()


def build_net(module, *, seed, estimator=None, criterion=torch.nn.MSELoss, net_class=None,
              max_epochs=_UNSET, lr=_UNSET, batch_size=_UNSET, optimizer=torch.optim.Adam,
              device=_UNSET, verbose=_UNSET, callbacks=None, labelled=None, noun="sample",
              divergence_hint=None, first_batch_sources=None, **kwargs):
    """Build a skorch net with the package's conventions: the one way every torch
    estimator that trains through skorch makes its net.

    * The common parameters (``max_epochs``, ``lr``, ``batch_size``, ``device``,
      ``verbose``) are read from ``estimator`` where it has them; a keyword given here wins
      (a device already checked by :func:`check_device`, a count of epochs the estimator
      computes).
    * The divergence check :class:`FiniteLossCheck` is always installed, first among the
      callbacks: a fit whose training loss stops being finite raises
      ``FloatingPointError`` at the end of that epoch, with the message of
      :func:`divergence_error`.
    * An estimator with the four training parameters (``early_stopping``,
      ``validation_fraction``, ``n_iter_no_change``, ``lr_schedule``) gets the validation
      split, early stopping and schedule of :func:`training_callbacks` (``labelled``
      names the rows early stopping may hold out).
    * No internal validation split otherwise (``train_split=None``), training batches
      shuffled by a generator seeded from ``seed``, and the inference loader
      (``predict``, ``forward``) given its own generator too, so that no iteration draws
      from the global torch RNG; no progress printing unless ``verbose``, and the epoch
      table without colour codes when stdout is not a terminal (:class:`PlainPrintLog`).
    * Adam and AdamW run their fused kernels on CPU and CUDA (``optimizer__fused=True``:
      one pass over each parameter per step instead of one per elementwise operation; same
      update rule) unless the caller sets ``optimizer__fused``, ``optimizer__foreach`` or
      ``optimizer__differentiable``.

    Parameters
    ----------
    module : torch.nn.Module class or instance
        The model.
    seed : int
        Seeds the training data loader's shuffling (and the validation split).
    estimator : estimator or None, default=None
        The estimator being fitted: the source of the common parameters, of the training
        parameters, and of the name in the divergence message.
    criterion : torch loss class, default=torch.nn.MSELoss
    net_class : skorch.NeuralNet subclass, default=None
        ``skorch.NeuralNet`` when None.
    max_epochs, lr, batch_size, device, verbose
        Passed to skorch; default to the estimator's parameters of the same name, else to
        10, 1e-3, 64, ``"cpu"`` and 0. ``verbose=0`` silences skorch's epoch table.
    optimizer : torch optimiser class, default=torch.optim.Adam
    callbacks : list of (name, callback) or None, default=None
        Further skorch callbacks, after the divergence check and the training callbacks.
    labelled : ndarray of shape (n_samples,), dtype=bool, default=None
        With the training parameters: the rows with a label and a positive weight
        (:func:`labelled_rows`), the only ones early stopping splits. Required then.
    noun : str, default="sample"
        What a training row is, in the early-stopping size error (``"molecule"``).
    divergence_hint, first_batch_sources : str or None, default=None
        Passed to :class:`FiniteLossCheck`.
    **kwargs
        Further skorch parameters (``module__*``, ``optimizer__*``, ``iterator_*``).

    Returns
    -------
    net : skorch.NeuralNet
        Not yet initialised.

    Raises
    ------
    ValueError
        With the training parameters: ``labelled`` is missing, or early stopping would
        leave no row to train on.
    """
    given = {"max_epochs": max_epochs, "lr": lr, "batch_size": batch_size, "device": device,
             "verbose": verbose}
    own = {} if estimator is None else estimator.get_params(deep=False)
    common = {k: (v if v is not _UNSET else own.get(k, _DEFAULTS[k]))
              for k, v in given.items()}
    name = "the estimator" if estimator is None else type(estimator).__name__
    checks = [("finite_loss", FiniteLossCheck(name, hint=divergence_hint,
                                              first_batch_sources=first_batch_sources))]
    if estimator is not None and all(k in own for k in TRAINING_PARAMS):
        if labelled is None:
            raise ValueError(f"build_net: {name} has the training parameters "
                             f"{TRAINING_PARAMS}; pass labelled= (the rows early stopping "
                             "may hold out).")
        options = training_callbacks(estimator, len(labelled), seed, labelled, noun=noun)
        checks += options.pop("callbacks")
        kwargs = {**options, **kwargs}
    from sklearn_papers.nn._progress import EpochTable, training_verbose

    net_class = NeuralNet if net_class is None else net_class
    device = common["device"]
    params = dict(
        module=module,
        criterion=criterion,
        optimizer=optimizer,
        lr=common["lr"],
        max_epochs=common["max_epochs"],
        # a numpy integer (a search grid of np.arange) passes the parameter checks, but
        # torch's samplers take a Python int only
        batch_size=int(common["batch_size"]),
        device=None if device is None else str(device),
        train_split=None,
        verbose=training_verbose(common["verbose"], None if labelled is None
                                 else len(labelled), common["max_epochs"]),
        callbacks=checks + list(callbacks or []),
        iterator_train__shuffle=True,
        iterator_train__generator=torch.Generator().manual_seed(int(seed)),
        # Every DataLoader gets its own generator: iterating one without draws its base
        # seed from the global torch RNG even when it does not shuffle (PyTorch #11062),
        # which would make predict/transform advance the user's RNG.
        iterator_valid__generator=torch.Generator().manual_seed(int(seed)),
    )
    if "callbacks__print_log" not in kwargs:
        params["callbacks__print_log"] = EpochTable
    chosen = {k for k in kwargs if k in ("optimizer__fused", "optimizer__foreach",
                                          "optimizer__differentiable")}
    if (optimizer in (torch.optim.Adam, torch.optim.AdamW) and not chosen
            and torch.device(device or "cpu").type in ("cpu", "cuda")):
        params["optimizer__fused"] = True
    params.update(kwargs)
    return net_class(**params)


_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


class EvenBatchSampler(torch.utils.data.Sampler):
    """Batches of near-equal size: ``n`` rows in ``ceil(n / batch_size)`` batches whose
    sizes differ by at most one, in a fresh random order each pass with ``shuffle``.

    A ``DataLoader`` with ``batch_size`` leaves the remainder ``n % batch_size`` for a last
    batch, which can hold a few rows: a gradient step from them is as large as any other
    and, under batch normalization, their statistics enter the running estimates with the
    full momentum (the neural fingerprint's running estimates then carry the statistics of
    a handful of molecules into prediction).

    Parameters
    ----------
    n_rows : int
        Rows of the data set.
    batch_size : int
        Largest batch.
    shuffle : bool
        Draw a new order from ``generator`` on each pass (``torch.randperm``, as
        ``RandomSampler``), else keep the rows' order.
    generator : torch.Generator or None
        Source of the orders.
    """

    def __init__(self, n_rows, batch_size, shuffle, generator=None):
        self.n_rows, self.batch_size = int(n_rows), int(batch_size)
        self.shuffle, self.generator = bool(shuffle), generator

    def __len__(self):
        return -(-self.n_rows // self.batch_size) if self.n_rows else 0

    def __iter__(self):
        if not self.n_rows:
            return
        order = (torch.randperm(self.n_rows, generator=self.generator) if self.shuffle
                 else torch.arange(self.n_rows))
        yield from (chunk.tolist() for chunk in torch.tensor_split(order, len(self)))


class EvenBatchLoader(torch.utils.data.DataLoader):
    """A ``DataLoader`` over batches of near-equal size (:class:`EvenBatchSampler`), taking
    skorch's ``iterator_train`` arguments (``batch_size``, ``shuffle``, ``generator``,
    ``collate_fn``, ...)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, **kwargs):
        sampler = EvenBatchSampler(len(dataset), batch_size, shuffle, generator)
        super().__init__(dataset, batch_sampler=sampler, generator=generator, **kwargs)


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



def divergence_error(estimator_name, loss, where, hint):
    """The error of a diverged fit, in the one shape every estimator uses.

    ``"<estimator>: the training loss became <loss> at <where> (the network diverged);
    <hint>"``, raised by :class:`FiniteLossCheck` for the nets of :func:`build_net` and by
    the estimators that train by a loop of their own.

    Parameters
    ----------
    estimator_name : str
        The estimator's class name.
    loss : float
        The non-finite loss.
    where : str
        ``"epoch 3"``, ``"meta-step 12"``, ...
    hint : str
        What to change.

    Returns
    -------
    error : FloatingPointError
    """
    return FloatingPointError(f"{estimator_name}: the training loss became {loss} at {where} "
                              f"(the network diverged); {hint}")


class FiniteLossCheck(Callback):
    """skorch callback: ``FloatingPointError`` at the end of the first epoch whose training
    loss is not finite (a diverged network would otherwise go on and predict NaN without a
    word). :func:`build_net` installs it in every net.

    The message is :func:`divergence_error`'s. When the loss of the very first batch was
    already non-finite, it was computed before any optimiser step, so the learning rate is
    not the cause: the message says so and names ``first_batch_sources`` instead.

    Parameters
    ----------
    estimator_name : str, default="the estimator"
        Named in the message.
    hint : str or None, default=None
        What to change, after the net's ``lr``; None: ``"lower lr=<lr>."``.
    first_batch_sources : str or None, default=None
        What may produce non-finite values before any training (``"the input X or the
        encoder"``); None: ``"the input or the targets"``.
    """

    def __init__(self, estimator_name="the estimator", hint=None, first_batch_sources=None):
        self.estimator_name = estimator_name
        self.hint = hint
        self.first_batch_sources = first_batch_sources

    def on_epoch_end(self, net, **kwargs):
        loss = net.history[-1].get("train_loss")
        if loss is None or np.isfinite(loss):
            return
        epoch = len(net.history)
        batches = net.history[0].get("batches") or [{}]
        first = batches[0].get("train_loss")
        if epoch == 1 and first is not None and not np.isfinite(first):
            sources = self.first_batch_sources or "the input or the targets"
            hint = (f"the training loss of the first batch was already non-finite ({first}), "
                    "before any optimiser step, so the learning rate is not the cause: "
                    f"{sources} may produce non-finite values.")
        else:
            hint = self.hint or f"lower lr={net.lr!r}."
        raise divergence_error(self.estimator_name, loss, f"epoch {epoch}", hint)


# --------------------------------------------------------------------- early stopping

#: Warm-up length of ``lr_schedule="warmup_decay"``, in epochs (chemprop's default).
WARMUP_EPOCHS = 2

#: Share of ``max_epochs`` over which ``lr_schedule="warmup_decay_hold"`` warms up and
#: decays to ``lr / 10`` (then holds it).
HOLD_AFTER = 0.5


class WarmupDecay:
    """Factor of the base learning rate at optimiser step ``step`` (for ``LambdaLR``).

    Linear from 0.1 to 1 over ``warmup`` steps, then ``0.1 ** ((step - warmup) /
    (total - warmup))`` down to 0.1 at ``total``; 0.1 afterwards (chemprop's ``NoamLR``
    with ``init_lr = final_lr = max_lr / 10``, Yang et al. 2019). A class, not a lambda,
    so fitted estimators pickle.

    Parameters
    ----------
    warmup : int
        Warm-up steps (0: start at the peak).
    total : int
        Total steps.
    """

    def __init__(self, warmup, total):
        self.warmup = max(int(warmup), 0)
        self.total = max(int(total), self.warmup + 1)

    def __call__(self, step):
        if step < self.warmup:
            return 0.1 + 0.9 * step / self.warmup
        frac = min((step - self.warmup) / (self.total - self.warmup), 1.0)
        return 0.1 ** frac


def n_validation(n_samples, validation_fraction):
    """Number of held-out rows, as ``ShuffleSplit`` counts them (at least 1)."""
    return max(1, math.ceil(validation_fraction * n_samples))


def labelled_rows(target, sample_weight=None):
    """Rows that can enter a loss: at least one labelled (non-NaN) target and, with
    ``sample_weight``, a positive weight.

    Parameters
    ----------
    target : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Float targets (NaN: missing) or integer class codes.
    sample_weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    rows : ndarray of shape (n_samples,), dtype=bool
    """
    target = np.asarray(target)
    target = target.reshape(len(target), -1)
    rows = (~np.isnan(target)).any(axis=1) if target.dtype.kind == "f" else \
        np.ones(len(target), dtype=bool)
    if sample_weight is not None:
        rows &= np.asarray(sample_weight) > 0
    return rows


def check_early_stopping_size(estimator, n_samples, n_labelled=None, noun="sample"):
    """ValueError when too few rows are left to hold some out.

    ``n_labelled``: the rows with a label and a positive weight (default: all
    ``n_samples``); only those are split. ``noun``: what a row is, in the message.
    """
    n_labelled = n_samples if n_labelled is None else n_labelled
    if estimator.early_stopping and n_labelled - n_validation(
            n_labelled, estimator.validation_fraction) < 1:
        what = ("" if n_labelled == n_samples else
                f" ({n_labelled} of the {n_samples} have a label and a positive weight; "
                "only those are split)")
        raise ValueError(
            f"early_stopping=True holds out validation_fraction="
            f"{estimator.validation_fraction} of the {n_labelled} training {noun}(s)"
            f"{what}, which leaves none to train on; give more {noun}s or set "
            "early_stopping=False.")


class LabelledRowsSplit:
    """skorch ``train_split``: a seeded random ``fraction`` of the labelled rows held out.

    Only rows with a label and a positive weight (:func:`labelled_rows`) are split, so
    the held-out rows always carry a validation loss and the rows left to train on always
    carry a training loss; the other rows are dropped (they add nothing to either loss).
    With every row labelled this is skorch's ``ValidSplit(fraction, stratified=False,
    random_state=seed)`` exactly (the same rows, in the same order), and a row of weight
    0 changes nothing, as if it were left out.

    Parameters
    ----------
    fraction : float
        In (0, 1); at least one row is held out.
    seed : int
    rows : ndarray of shape (n_samples,), dtype=bool
        The labelled rows.
    """

    def __init__(self, fraction, seed, rows):
        self.fraction = fraction
        self.seed = seed
        self.rows = rows

    def __call__(self, dataset, y=None, groups=None):
        from sklearn.model_selection import ShuffleSplit

        index = np.flatnonzero(self.rows)
        split = ShuffleSplit(n_splits=1, test_size=self.fraction, random_state=self.seed)
        train, valid = next(iter(split.split(np.arange(len(index)))))
        return (torch.utils.data.Subset(dataset, index[train]),
                torch.utils.data.Subset(dataset, index[valid]))


def training_callbacks(estimator, n_samples, seed, labelled=None, noun="sample"):
    """skorch ``train_split`` and ``callbacks`` of the four training parameters.

    * ``early_stopping`` (scikit-learn's ``MLPRegressor`` names: ``early_stopping``,
      ``validation_fraction``, ``n_iter_no_change``): a seeded random
      ``validation_fraction`` of the labelled rows is held out (:class:`LabelledRowsSplit`),
      training stops once the validation loss has not improved for ``n_iter_no_change``
      epochs, and the weights of the best epoch are restored.
    * ``lr_schedule="warmup_decay"``: per batch, the learning rate rises linearly from
      ``lr / 10`` to ``lr`` over the first :data:`WARMUP_EPOCHS` epochs, then decays
      exponentially back to ``lr / 10`` at the last epoch (:class:`WarmupDecay`);
      ``"warmup_decay_hold"`` reaches ``lr / 10`` at :data:`HOLD_AFTER` of ``max_epochs``
      and holds it, so that the held-out loss can level off within the run and early
      stopping end it; ``"constant"``: no schedule.

    :func:`build_net` calls it for an estimator with these parameters.

    Parameters
    ----------
    estimator : estimator with the four training parameters, ``max_epochs`` and
        ``batch_size``
    n_samples : int
        Training rows.
    seed : int
        Seeds the validation split.
    labelled : ndarray of shape (n_samples,), dtype=bool, default=None
        The rows with a label and a positive weight (:func:`labelled_rows`; default:
        all). Early stopping splits only those.
    noun : str, default="sample"
        What a row is, in the size error of :func:`check_early_stopping_size`.

    Returns
    -------
    options : dict
        ``callbacks`` (a list of (name, callback)) and, with early stopping,
        ``train_split``.
    """
    labelled = np.ones(n_samples, dtype=bool) if labelled is None else np.asarray(labelled)
    n_labelled = int(labelled.sum())
    callbacks = []
    options = {}
    n_train = n_samples
    if estimator.early_stopping and estimator.max_epochs > 0:
        check_early_stopping_size(estimator, n_samples, n_labelled, noun=noun)
        options["train_split"] = LabelledRowsSplit(float(estimator.validation_fraction),
                                                   int(seed), labelled)
        n_train = n_labelled - n_validation(n_labelled, estimator.validation_fraction)
        callbacks.append(("early_stopping", EarlyStopping(
            monitor="valid_loss", patience=int(estimator.n_iter_no_change), threshold=0.0,
            load_best=True, sink=_silent)))
        callbacks.append(("still_improving", StillImprovingWarning(
            type(estimator).__name__, int(estimator.n_iter_no_change))))
    if estimator.lr_schedule in ("warmup_decay", "warmup_decay_hold") and \
            estimator.max_epochs > 0:
        per_epoch = math.ceil(n_train / estimator.batch_size)
        decay_epochs = estimator.max_epochs
        if estimator.lr_schedule == "warmup_decay_hold":
            decay_epochs = min(estimator.max_epochs, max(
                WARMUP_EPOCHS + 1, math.ceil(HOLD_AFTER * estimator.max_epochs)))
        callbacks.append(("lr_schedule", LRScheduler(
            policy=torch.optim.lr_scheduler.LambdaLR, step_every="batch",
            lr_lambda=WarmupDecay(WARMUP_EPOCHS * per_epoch, per_epoch * decay_epochs))))
    options["callbacks"] = callbacks
    return options


class StillImprovingWarning(Callback):
    """skorch callback: a ``ConvergenceWarning`` when training ran all ``max_epochs`` and
    the held-out loss was still improving, its best epoch within the last ``patience``
    epochs (early stopping never got to stop the run; scikit-learn's ``MLPRegressor``
    warns the same way when it reaches ``max_iter``). A patience of ``max_epochs`` or more
    cannot stop a run at all (a run watched for its whole held-out curve): then the best
    epoch must be within the last tenth of the epochs (at least the last one).

    Parameters
    ----------
    estimator_name : str
        Named in the message.
    patience : int
        Early stopping's ``n_iter_no_change``.
    """

    def __init__(self, estimator_name, patience):
        self.estimator_name = estimator_name
        self.patience = patience

    def on_train_end(self, net, **kwargs):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        n_epochs = len(net.history)
        best = [i + 1 for i, row in enumerate(net.history) if row.get("valid_loss_best")]
        window = self.patience if self.patience < net.max_epochs else \
            max(1, math.ceil(0.1 * net.max_epochs))
        if not best or n_epochs < net.max_epochs or best[-1] <= n_epochs - window:
            return
        warnings.warn(
            f"{self.estimator_name}: training ran all max_epochs={net.max_epochs} epochs "
            f"with the held-out loss still improving (best epoch {best[-1]} of {n_epochs}, "
            f"whose weights are kept); a larger max_epochs may fit better.",
            ConvergenceWarning, stacklevel=2)


def _silent(*args, **kwargs):
    """A sink for skorch's early-stopping message (module level: nets pickle)."""


# --------------------------------------------------------------------- nets and losses

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


class WeightPenaltyNet(NeuralNet):
    """skorch ``NeuralNet`` for graph batches, adding an L2 penalty to the loss.

    ``get_loss`` adds ``alpha * mean(w^2)`` over all weights (the L2 prior of Duvenaud et
    al.'s code, ``L2_reg * w.w / len(w)``); ``infer`` moves a
    :class:`~sklearn_papers.nn._graph.GraphBatch` to the device and calls
    ``module(**batch.tensors)``. Only these documented extension points are overridden;
    with ``alpha=0`` and array input it is a plain ``NeuralNet``.

    Parameters
    ----------
    *args, **kwargs
        As for ``skorch.NeuralNet``.
    alpha : float, default=0.0
        Weight of the penalty.
    """

    def __init__(self, *args, alpha=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.alpha = alpha

    def infer(self, x, **fit_params):
        if isinstance(x, GraphBatch):
            return self.module_(**x.to(self.device).tensors, **fit_params)
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        loss = super().get_loss(y_pred, y_true, X=X, training=training)
        if self.alpha and training:
            params = [p for p in self.module_.parameters() if p.requires_grad]
            n = sum(p.numel() for p in params)
            loss = loss + self.alpha * sum((p ** 2).sum() for p in params) / n
        return loss
