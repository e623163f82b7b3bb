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
    """The values of independent ``parts``, in order, computed on ``n_jobs`` processes
    (joblib's loky backend; 1 computes them here) and cached by ``ctx``.

    A part is ``(key, func, args, params)``: its value is ``func(*args)``; ``key``,
    ``params``, ``owner`` and ``share`` are those of :meth:`RunContext.cached`. With
    ``n_jobs > 1``, ``func`` must be a module-level function and ``args`` must pickle and
    hold every setting (a worker does not see this process's module globals). Each part
    is stored as it arrives, so a stopped run loses only those still being computed.
    ``progress.update(1)`` is called as each part finishes; ``meanwhile()`` runs here once
    the parts are handed to the workers (before them with ``n_jobs=1``).
    """
    todo = set() if n_jobs == 1 else {i for i, (key, _, _, params) in enumerate(parts)
                                      if not ctx.has_cached(key, params, owner)}
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
                                 cpu_seconds=cpu, owner=owner, share=share)
            if progress is not None:
                progress.update(1)
    elif meanwhile is not None:
        meanwhile()
    values = []
    for i, (key, func, args, params) in enumerate(parts):
        # read back by ``ctx.cached``, or computed here
        values.append(done[i] if i in done else
                      ctx.cached(key, partial(func, *args), params=params, owner=owner,
                                 share=share))
        if progress is not None and i not in done:
            progress.update(1)
    return values
