"""Independent cached parts of an experiment, run on several worker processes.

Small models train fastest on one torch thread each, so a 2-core machine stays busy only
when independent fits run side by side: :func:`cached_parts` gives each part to a joblib
worker and stores its value through :meth:`RunContext.cached
<sklearn_papers.reproduce.RunContext.cached>` (cache, ``--resume``, reused parts as usual).
"""

import os
from functools import partial

__all__ = []


#: CPU seconds the worker processes spent on parts, which the command line adds to an
#: experiment's CPU time (a live worker's time is not this process's).
_WORKER_CPU = [0.0]


def worker_cpu_seconds():
    """CPU seconds (user + system) that worker processes spent on parts so far."""
    return _WORKER_CPU[0]


def _in_worker(index, func, args):
    """``(index, func(*args), CPU seconds)`` on one torch thread (in a worker process)."""
    import torch

    torch.set_num_threads(1)
    start = os.times()
    value = func(*args)
    end = os.times()
    return index, value, (end.user - start.user) + (end.system - start.system)


def cached_parts(ctx, parts, *, n_jobs=1, progress=None, meanwhile=None, owner=None,
                 share=False):
    """Values of independent parts, computed on ``n_jobs`` processes and cached by ``ctx``.

    Parameters
    ----------
    ctx : RunContext
    parts : list of tuple
        ``(key, func, args, params)``: the value is ``func(*args)``; ``key`` and ``params``
        are those of :meth:`RunContext.cached`. With ``n_jobs > 1``, ``func`` must be a
        module-level function and ``args`` must pickle (pass every setting in ``args``:
        a worker does not see this process's module globals).
    n_jobs : int, default=1
        Worker processes (joblib's loky backend); 1 computes the parts here, in order.
    progress : progress bar, default=None
        ``update(1)`` as each part finishes.
    meanwhile : callable, default=None
        Run here once the parts are handed to the workers (before the parts, with
        ``n_jobs=1``), so that this process does not sit idle.
    owner : str, default=None
        The experiment whose parts these are, when not the current one (a follow-up).
    share : bool, default=False
        Keep the values for a follow-up later in the run (:meth:`RunContext.cached`).

    Returns
    -------
    values : list
        One per part, in the order of ``parts``. Parts cached earlier are read back; each
        computed part is stored as soon as it arrives, so a stopped run loses only those
        still being computed.
    """
    todo = set() if n_jobs == 1 else {i for i, (key, _, _, params) in enumerate(parts)
                                      if not ctx.has_cached(key, params, owner)}
    where = dict(owner=owner, share=share)
    done = {}
    if len(todo) >= 2:
        from joblib import Parallel, delayed

        # unordered, so that a stopped run keeps every finished part; no memory-mapping
        # (a worker would get read-only arrays, which torch warns about)
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered",
                           max_nbytes=None)(delayed(_in_worker)(i, parts[i][1], parts[i][2])
                                            for i in sorted(todo))
        if meanwhile is not None:
            meanwhile()
        for i, value, cpu in results:
            _WORKER_CPU[0] += cpu
            key, _, _, params = parts[i]
            done[i] = ctx.cached(key, lambda value=value: value, params=params,
                                 cpu_seconds=cpu, **where)
            if progress is not None:
                progress.update(1)
    elif meanwhile is not None:
        meanwhile()
    values = []
    for i, (key, func, args, params) in enumerate(parts):
        # read back by ``ctx.cached``, or computed here
        values.append(done[i] if i in done else
                      ctx.cached(key, partial(func, *args), params=params, **where))
        if progress is not None and i not in done:
            progress.update(1)
    return values
