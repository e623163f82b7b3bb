"""The one factory of skorch nets (:func:`build_net`)."""

import torch
from skorch import NeuralNet

from sklearn_papers.nn._progress import EpochTable, training_verbose
from sklearn_papers.nn._skorch._callbacks import FiniteLossCheck, training_callbacks

__all__ = ["TRAINING_PARAMS", "build_net"]


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
      table without colour codes when stdout is not a terminal, a row for every epoch run and
      the best epoch marked (:class:`~sklearn_papers.nn._progress.EpochTable`).
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
