"""GROVER's training loop: Adam on shuffled mini-batches with an optional learning-rate
schedule and early stopping on held-out molecules."""

import math

import torch

from sklearn_papers.nn._grover._data import collate_grover


def train_module(module, dataset, loss_fn, *, max_epochs, batch_size, lr, seed, device="cpu",
                 weight_decay=0.0, verbose=0, desc="training", lr_lambda=None,
                 valid_dataset=None, valid_loss_fn=None, n_iter_no_change=None,
                 history=None):
    """Train a module with Adam on shuffled mini-batches; a plain torch loop.

    Optionally with a learning-rate schedule (``lr_lambda``, stepped once per batch) and
    early stopping on ``valid_dataset``: after every epoch the module is evaluated in
    eval mode with ``valid_loss_fn``; training stops when the loss has not improved for
    ``n_iter_no_change`` epochs and the weights of the best epoch are restored.

    Parameters
    ----------
    module : torch.nn.Module
        Called as ``module(**batch.tensors)``.
    dataset : GroverDataset
    loss_fn : callable
        ``loss_fn(output, labels) -> 0-d tensor``; ``labels`` from :func:`collate_grover`
        (on ``device``).
    max_epochs, batch_size : int
    lr : float
    seed : int
        Seeds the shuffling generator (weights and dropout follow torch's RNG: call this
        inside ``torch_seeded``).
    device : torch.device or str, default="cpu"
    weight_decay : float, default=0.0
    verbose : int, default=0
        A tqdm bar over epochs when positive.
    desc : str, default="training"
    lr_lambda : callable, default=None
        ``step -> factor`` of ``lr`` (``torch.optim.lr_scheduler.LambdaLR``), stepped
        after every batch; None keeps ``lr``.
    valid_dataset : GroverDataset, default=None
        Held-out molecules for early stopping.
    valid_loss_fn : callable, default=None
        ``valid_loss_fn(eval_output, labels) -> 0-d tensor``; needed with
        ``valid_dataset``.
    n_iter_no_change : int, default=None
        Patience in epochs (None: run ``max_epochs`` epochs, still restoring the best).
    history : dict, default=None
        When given, ``history["valid_loss"]`` receives the validation loss of each epoch
        and ``history["best_epoch"]`` the (0-based) epoch whose weights are kept.

    Returns
    -------
    loss_curve : list of float
        Mean training loss of each epoch.
    """
    from tqdm.auto import tqdm

    module.to(device).train()
    opt = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=weight_decay)
    sched = None if lr_lambda is None else torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True, collate_fn=collate_grover,
        generator=torch.Generator().manual_seed(int(seed)))
    curve, valid_curve, best, best_state = [], [], None, None
    for epoch in tqdm(range(int(max_epochs)), desc=desc, disable=verbose <= 0, leave=False):
        total, count = 0.0, 0
        for batch, labels in loader:
            batch = batch.to(device)
            labels = {k: None if v is None else v.to(device) for k, v in labels.items()}
            opt.zero_grad()
            loss = loss_fn(module(**batch.tensors), labels)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += float(loss.detach()) * len(batch)
            count += len(batch)
        curve.append(total / max(count, 1))
        if not math.isfinite(curve[-1]):
            raise FloatingPointError(
                f"{desc}: the training loss became {curve[-1]} at epoch {epoch + 1} (the "
                "network diverged); lower lr, or check that the targets are finite and of "
                "a moderate size.")
        if valid_dataset is None:
            continue
        valid_curve.append(_evaluate(module, valid_dataset, valid_loss_fn,
                                     batch_size=batch_size, device=device))
        module.train()
        if best is None or valid_curve[-1] < valid_curve[best]:
            best = epoch
            best_state = {k: v.detach().clone() for k, v in module.state_dict().items()}
        elif n_iter_no_change is not None and epoch - best >= int(n_iter_no_change):
            break
    if best_state is not None:
        module.load_state_dict(best_state)
    if history is not None:
        history["valid_loss"], history["best_epoch"] = valid_curve, best
    module.eval()
    return curve


def _evaluate(module, dataset, loss_fn, *, batch_size, device):
    """Mean of ``loss_fn`` over ``dataset`` in eval mode (weighted by batch size)."""
    module.eval()
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False,
                                         collate_fn=collate_grover,
                                         generator=torch.Generator())
    total, count = 0.0, 0
    with torch.no_grad():
        for batch, labels in loader:
            batch = batch.to(device)
            labels = {k: None if v is None else v.to(device) for k, v in labels.items()}
            total += float(loss_fn(module(**batch.tensors), labels)) * len(batch)
            count += len(batch)
    return total / max(count, 1)
