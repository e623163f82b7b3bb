"""Independent cached parts of an experiment, run on several worker processes.

The quick experiments train many small models, each on one torch thread (per-step overhead
dominates at these sizes, and extra intra-op threads only wait on each other). A 2-core
machine then keeps one core idle unless independent fits run side by side:
:func:`cached_parts` gives each part to a joblib worker process and stores the results
through :meth:`RunContext.cached <sklearn_papers.reproduce.RunContext.cached>`, so the cache,
``--resume`` and the report's list of reused parts work as for parts computed in process.
"""

from functools import partial

__all__ = []


#: CPU seconds the worker processes spent on parts (summed as their values arrive); the
#: command line adds them to an experiment's CPU time, since a worker's own CPU time is not
#: that of this process (nor of a finished child while the worker pool lives on).
_WORKER_CPU = [0.0]


def worker_cpu_seconds():
    """CPU seconds (user + system) that worker processes spent on parts so far."""
    return _WORKER_CPU[0]


def _in_worker(func, args, kwargs):
    """``(func(*args, **kwargs), CPU seconds it took)`` with one torch intra-op thread (in
    a worker process)."""
    import os

    import torch

    torch.set_num_threads(1)
    start = os.times()
    value = func(*args, **kwargs)
    end = os.times()
    return value, (end.user - start.user) + (end.system - start.system)


def _in_worker_indexed(index, func, args):
    """``(index, value, CPU seconds)`` of :func:`_in_worker` (results arrive unordered)."""
    value, cpu = _in_worker(func, args, {})
    return index, value, cpu


def cached_parts(ctx, parts, *, n_jobs=1, progress=None, meanwhile=None, owner=None,
                 share=False):
    """Values of independent parts, computed on ``n_jobs`` processes and cached by ``ctx``.

    Parameters
    ----------
    ctx : RunContext
    parts : list of tuple
        ``(key, func, args, params)``: the part's value is ``func(*args)``; ``key`` and
        ``params`` are those of :meth:`RunContext.cached`. With ``n_jobs > 1``, ``func``
        must be a module-level function and ``args`` must pickle: they travel to a worker
        process, which does not see changes made to module globals in this one (pass
        every setting in ``args``).
    n_jobs : int, default=1
        Worker processes (joblib's loky backend, one torch thread each). 1 computes every
        part in this process, in order.
    progress : progress bar, default=None
        ``update(1)`` is called as each part finishes (with ``n_jobs > 1``, in the order
        the workers finish them; parts read back from the cache after those).
    meanwhile : callable, default=None
        ``meanwhile()`` is run in this process once the parts are handed to the workers,
        before their values are collected (other work of the experiment, so that this
        process does not sit idle); with ``n_jobs=1``, before the parts are computed.
    owner : str, default=None
        The experiment whose parts these are, when not the current one (a follow-up
        reading its main experiment's parts), see :meth:`RunContext.cached`.
    share : bool, default=False
        Keep the values for a follow-up run later in the same run (:meth:`RunContext.cached`).

    Returns
    -------
    values : list
        One per part, in the order of ``parts``; parts cached by an earlier run (with
        ``--resume``) are read back and not recomputed. Each computed part is stored as
        soon as its worker returns it, so stopping the run loses only the parts still
        being computed.
    """
    values = []
    todo = set() if n_jobs == 1 else {i for i, (key, _, _, params) in enumerate(parts)
                                      if not ctx.has_cached(key, params, owner)}
    where = dict(owner=owner, share=share)
    if len(todo) < 2:  # in this process, in order (cached parts are read back)
        if meanwhile is not None:
            meanwhile()
        for key, func, args, params in parts:
            values.append(ctx.cached(key, partial(func, *args), params=params, **where))
            if progress is not None:
                progress.update(1)
        return values
    from joblib import Parallel, delayed

    # values are stored as they arrive (unordered), so that a run stopped part-way keeps
    # every finished part for ``--resume``; no memory-mapping of large arguments (a worker
    # would get read-only arrays, which torch warns about when it wraps them)
    results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", max_nbytes=None)(
        delayed(_in_worker_indexed)(i, func, args) for i, (_, func, args, _) in
        enumerate(parts) if i in todo)
    if meanwhile is not None:
        meanwhile()
    done = {}
    for i, value, cpu in results:
        _WORKER_CPU[0] += cpu
        key, _, _, params = parts[i]
        done[i] = ctx.cached(key, lambda value=value: value, params=params, cpu_seconds=cpu,
                             **where)
        if progress is not None:
            progress.update(1)
    for i, (key, func, args, params) in enumerate(parts):
        if i in done:
            values.append(done[i])
            continue
        # read back by ``ctx.cached`` (computed here if the file is unreadable)
        values.append(ctx.cached(key, partial(func, *args), params=params, **where))
        if progress is not None:
            progress.update(1)
    return values
