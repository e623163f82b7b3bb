"""Data-parallel, resumable GROVER pretraining (Rong et al., 2020) with torch.distributed.

One global batch of ``batch_size`` molecules per optimiser step, drawn from a seeded
permutation of the data set for each epoch (the same on every process); process ``r`` of
``W`` takes the molecules ``r, r + W, r + 2W, ...`` of each global batch (a disjoint shard,
as ``torch.utils.data.DistributedSampler`` does for a whole epoch). The model is wrapped in
``DistributedDataParallel``, which all-reduces (averages) the gradients.

So that ``W`` processes take exactly the step one process takes on the same global batch,
the loss of each process is written with the *global* normalisers: every mean of
:func:`~sklearn_papers.nn._grover.grover_pretrain_loss` (over the atoms, bonds, molecules
or label entries of the batch) becomes a sum over the local shard divided by the count
over the whole global batch (one all-reduce of five counts per step), times ``W`` (DDP
divides the summed gradients by ``W``). With ``W = 1`` this is
``grover_pretrain_loss`` itself. The random hop counts of the dyMPNs come from torch's RNG,
re-seeded before every step from ``(seed, epoch, step)``: every process draws the same
hops, and a run resumed from a saved state draws what the uninterrupted run would have.

Nothing here knows about RDKit or scikit-learn: the caller passes a data set whose items
are those of :class:`~sklearn_papers.nn._grover.GroverDataset`.
"""

import math
import time

import numpy as np
import torch
from torch.nn import functional as F

from sklearn_papers.nn._grover._data import collate_grover
from sklearn_papers.nn._skorch import divergence_error

__all__ = ["global_batches", "keep_every_parameter", "pretrain_loss_terms", "step_seed",
           "train_pretrain_ddp"]

#: Order of the global counts in the per-step all-reduce.
_COUNTS = ("atom_labels", "bond_labels", "atom_entries", "bond_entries", "motif_entries")


def global_batches(n_samples, batch_size, *, seed, epoch, rank=0, world_size=1):
    """This process's shard of every global batch of one epoch.

    Parameters
    ----------
    n_samples : int
        Size of the data set.
    batch_size : int
        Molecules per global batch (over all processes).
    seed : int
        With ``epoch``, seeds the permutation (the same on every process).
    epoch : int
    rank : int, default=0
        This process, in ``[0, world_size)``.
    world_size : int, default=1
        Number of processes.

    Returns
    -------
    shards : list of ndarray of int64
        One per step: the indices of this process's molecules of that global batch. A last
        global batch with fewer than ``world_size`` molecules is dropped (every process
        needs at least one molecule per step); with ``world_size=1`` nothing is dropped.
    """
    rng = np.random.default_rng([int(seed), int(epoch)])
    perm = rng.permutation(int(n_samples))
    shards = []
    for start in range(0, int(n_samples), int(batch_size)):
        batch = perm[start:start + int(batch_size)]
        if len(batch) < world_size:
            break
        shards.append(batch[rank::world_size].astype(np.int64))
    return shards


def step_seed(seed, epoch, step):
    """Seed of torch's RNG for one optimiser step (the same on every process).

    Parameters
    ----------
    seed, epoch, step : int

    Returns
    -------
    seed : int
        In ``[0, 2**63)``.
    """
    state = np.random.SeedSequence([int(seed), int(epoch), int(step)]).generate_state(
        1, np.uint64)
    return int(state[0]) % (2 ** 63)


def pretrain_loss_terms(out, atom_labels, bond_labels, motifs, dist_coef=0.1):
    """Sums of GROVER's pretraining loss terms over a shard, and the counts that divide them.

    ``sum(terms[k] / counts[k])`` over the keys equals
    :func:`~sklearn_papers.nn._grover.grover_pretrain_loss` on the same batch; with counts
    summed over the shards of a global batch it is that batch's loss.

    Parameters
    ----------
    out : dict
        :meth:`~sklearn_papers.nn._grover.GroverPretrainModel.forward` output.
    atom_labels : torch.Tensor of shape (N,), int64
    bond_labels : torch.Tensor of shape (E / 2,), int64
    motifs : torch.Tensor of shape (B, n_motifs), float 0/1
    dist_coef : float, default=0.1

    Returns
    -------
    terms : dict of str to torch.Tensor (0-d)
        Keyed like ``counts``: summed negative log-likelihoods of the non-``<pad>`` atom and
        bond labels (both views), summed squared differences of the views' atom and bond
        log-probabilities (times ``dist_coef``), and summed motif cross-entropies plus
        squared differences of the motif probabilities.
    counts : torch.Tensor of shape (5,), float64
        Non-pad atom labels, non-pad bond labels, atom-probability entries ``N x V_atom``,
        bond-probability entries ``E / 2 x V_bond``, motif entries ``B x n_motifs``.
    """
    atom_lp, bond_lp, motif = out["atom"], out["bond"], out["motif"]
    atom = sum(F.nll_loss(p, atom_labels, ignore_index=0, reduction="sum") for p in atom_lp)
    bond = sum(F.nll_loss(p, bond_labels, ignore_index=0, reduction="sum") for p in bond_lp)
    atom_dist = dist_coef * F.mse_loss(atom_lp[0], atom_lp[1], reduction="sum")
    bond_dist = dist_coef * F.mse_loss(bond_lp[0], bond_lp[1], reduction="sum")
    s = [torch.sigmoid(p) for p in motif]
    motif_sum = sum(F.binary_cross_entropy_with_logits(p, motifs, reduction="sum")
                    for p in motif) \
        + F.mse_loss(s[0], s[1], reduction="sum") + F.mse_loss(s[2], s[3], reduction="sum")
    terms = dict(zip(_COUNTS, (atom, bond, atom_dist, bond_dist, motif_sum)))
    counts = torch.tensor([float((atom_labels != 0).sum()), float((bond_labels != 0).sum()),
                           float(atom_lp[0].numel()), float(bond_lp[0].numel()),
                           float(motif[0].numel())], dtype=torch.float64)
    return terms, counts


def keep_every_parameter(loss, module):
    """``loss`` plus zero times every parameter of ``module``.

    DDP all-reduces each parameter's gradient on every process at every step, so every
    parameter must be in the graph even for a shard that leaves part of the model unused
    (e.g. molecules without bonds: the edge view's attention has no rows). The value and
    the gradients are unchanged.

    Parameters
    ----------
    loss : torch.Tensor, 0-d
    module : torch.nn.Module

    Returns
    -------
    loss : torch.Tensor, 0-d
    """
    return loss + sum(p.sum() for p in module.parameters()) * 0.0


def _global_loss(terms, counts):
    """``sum(terms / counts)`` (an empty count contributes nothing)."""
    total = None
    for key, count in zip(_COUNTS, counts.tolist()):
        part = terms[key] / max(count, 1.0)
        total = part if total is None else total + part
    return total


def train_pretrain_ddp(module, dataset, *, max_epochs, batch_size, lr, seed, dist_coef=0.1,
                       device="cpu", rank=0, world_size=1, state=None, save=None,
                       save_every=600.0, should_stop=None, max_seconds=None, progress=None):
    """Pretrain a ``GroverPretrainModel`` data-parallel over ``world_size`` processes.

    Call it in every process of an initialised ``torch.distributed`` process group (or
    in one process with ``world_size=1``, without any group), with the same arguments
    except ``rank``. Adam, constant ``lr``.

    Parameters
    ----------
    module : GroverPretrainModel
        Same initial weights on every process (seed its construction; DDP also broadcasts
        rank 0's weights at the start).
    dataset : sequence
        Items as :class:`~sklearn_papers.nn._grover.GroverDataset` gives them, with labels.
    max_epochs, batch_size : int
        ``batch_size`` is the global batch (all processes together).
    lr : float
    seed : int
        Seeds the permutation of each epoch and the hop counts of each step.
    dist_coef : float, default=0.1
    device : str or torch.device, default="cpu"
        This process's device (``cuda:LOCAL_RANK`` with NCCL).
    rank, world_size : int, default=0, 1
    state : dict, default=None
        A state returned by an earlier call (or passed to ``save``): weights, Adam state,
        epoch and step to continue from, losses so far. None starts at epoch 0.
    save : callable, default=None
        ``save(state)``, called on rank 0 at least every ``save_every`` seconds, when
        stopping early, and after the last step.
    save_every : float, default=600.0
    should_stop : callable, default=None
        ``should_stop() -> bool`` (e.g. a SIGTERM flag); checked after every step and
        combined over the processes, so all stop after the same step.
    max_seconds : float, default=None
        Stop (and save) after the first step past this many seconds of this call (on any
        process: all stop after the same step).
    progress : callable, default=None
        ``progress(epoch, step, n_steps, loss)`` after every step on rank 0.

    Returns
    -------
    state : dict
        ``model`` and ``optimizer`` state dicts (CPU tensors), ``epoch`` and ``step`` (the
        next step to run; ``epoch == max_epochs`` when done), ``step_losses`` (list per
        epoch of the global-batch loss of each step), ``loss_curve`` (mean loss of each
        finished epoch, weighted by batch size), ``done`` (bool), ``seconds`` and
        ``molecules`` of this call.
    """
    import torch.distributed as dist

    distributed = world_size > 1
    device = torch.device(device)
    module.to(device)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    epoch, step, step_losses, step_sizes = 0, 0, [], []
    if state is not None:
        module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        epoch, step = int(state["epoch"]), int(state["step"])
        step_losses = [list(v) for v in state["step_losses"]]
        step_sizes = [list(v) for v in state["step_sizes"]]
    model = module
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(
            module, device_ids=[device.index] if device.type == "cuda" else None)
    model.train()
    start = last_save = time.perf_counter()
    seen, stop = 0, False

    def snapshot(done):
        return {
            "model": {k: v.detach().cpu().clone() for k, v in module.state_dict().items()},
            "optimizer": _cpu(opt.state_dict()),
            "epoch": epoch, "step": step, "done": done,
            "step_losses": step_losses, "step_sizes": step_sizes,
            "loss_curve": [float(np.average(v, weights=w)) for v, w in
                           zip(step_losses, step_sizes) if len(v)][:epoch],
            "seconds": time.perf_counter() - start, "molecules": seen,
        }

    while epoch < max_epochs and not stop:
        shards = global_batches(len(dataset), batch_size, seed=seed, epoch=epoch, rank=rank,
                                world_size=world_size)
        if len(step_losses) <= epoch:
            step_losses.append([])
            step_sizes.append([])
        while step < len(shards):
            idx = shards[step]
            batch, labels = collate_grover([dataset[int(i)] for i in idx])
            batch = batch.to(device)
            labels = {k: None if v is None else v.to(device) for k, v in labels.items()}
            with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                torch.manual_seed(step_seed(seed, epoch, step))
                out = model(**batch.tensors)
            terms, counts = pretrain_loss_terms(out, labels["atom"], labels["bond"],
                                                labels["motif"], dist_coef)
            # counts and this shard's size, summed over the processes
            counts = torch.cat([counts, torch.tensor([float(len(idx))], dtype=torch.float64)])
            if distributed:
                counts = counts.to(device)
                dist.all_reduce(counts)
                counts = counts.cpu()
            loss = _global_loss(terms, counts[:5])
            if distributed:
                loss = keep_every_parameter(loss, module)
            opt.zero_grad()
            (loss * world_size).backward()
            opt.step()
            over_time = max_seconds is not None and time.perf_counter() - start >= max_seconds
            # stopping is decided together (a process alone leaving the loop would leave
            # the others waiting in the next all-reduce)
            stop_flag = over_time or (should_stop is not None and bool(should_stop()))
            report = torch.tensor([float(loss.detach()), float(stop_flag)],
                                  dtype=torch.float64)
            if distributed:
                report = report.to(device)
                dist.all_reduce(report)
                report = report.cpu()
            value = float(report[0])
            if not math.isfinite(value):
                raise divergence_error("GROVER pretraining", value,
                                       f"epoch {epoch + 1}, step {step + 1}",
                                       f"lower lr={lr!r}.")
            step_losses[epoch].append(value)
            step_sizes[epoch].append(int(counts[5]))
            seen += int(counts[5])
            step += 1
            if rank == 0 and progress is not None:
                progress(epoch, step, len(shards), value)
            if report[1] > 0:
                stop = True
                break
            if save is not None and rank == 0 and \
                    time.perf_counter() - last_save >= save_every:
                save(snapshot(False))
                last_save = time.perf_counter()
        if step >= len(shards):
            epoch, step = epoch + 1, 0
    final = snapshot(epoch >= max_epochs)
    if save is not None and rank == 0:
        save(final)
    module.eval()
    return final


def _cpu(obj):
    """Copy of a (nested) optimiser state with every tensor on the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: _cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cpu(v) for v in obj)
    return obj
