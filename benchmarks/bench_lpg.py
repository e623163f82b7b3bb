"""Benchmark: the batched grid-world core against gymnasium, and LPG meta-training speed.

1. Environment steps/s of :class:`~sklearn_papers.rl.BatchedGridWorld` stepping ``--envs``
   grid worlds in one tensor operation, against the same :class:`~sklearn_papers.rl.GridWorld`
   environments stepped one by one with ``env.step`` (and reset when done) in a Python loop,
   and against ``gymnasium.vector.SyncVectorEnv`` over them; same random actions; ratios
   printed (batched / loop; target: >> 1).
2. Meta-training speed of :class:`~sklearn_papers.rl.LearnedPolicyGradient` with its defaults
   (32 agents, 5 unrolled updates of 20 steps per meta-step) on 24 random 5 x 5 grids:
   meta-steps/s and environment steps/s inside meta-training, after one warm-up step, in
   wall time and in CPU time (the CPU-time rate is what an idle single core would give).

Run: ``python benchmarks/bench_lpg.py [--envs 256] [--steps 200] [--meta-steps 20]``.
One torch thread. The environment rates are recorded in ``benchmarks/results/lpg.json``
(the docs' Benchmarks pages); the meta-training rate, which has no peer, is printed only.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _loop_steps_per_s(envs, actions):
    for i, env in enumerate(envs):
        env.reset(seed=i)
    start = time.perf_counter()
    for t in range(actions.shape[0]):
        for i, env in enumerate(envs):
            _, _, term, trunc, _ = env.step(int(actions[t, i]))
            if term or trunc:
                env.reset()
    return actions.size / (time.perf_counter() - start)


def _sync_vector_steps_per_s(envs, actions):
    import gymnasium

    vec = gymnasium.vector.SyncVectorEnv([(lambda e=e: e) for e in envs])
    vec.reset(seed=0)
    start = time.perf_counter()
    for t in range(actions.shape[0]):
        vec.step(actions[t])
    elapsed = time.perf_counter() - start
    vec.close()
    return actions.size / elapsed


def _batched_steps_per_s(envs, actions):
    from sklearn_papers.rl import BatchedGridWorld

    core = BatchedGridWorld(envs, generator=torch.Generator().manual_seed(0))
    acts = torch.as_tensor(actions)
    core.step(acts[0])
    start = time.perf_counter()
    for t in range(acts.shape[0]):
        core.step(acts[t])
    return actions.size / (time.perf_counter() - start)


def _gymnasium_version():
    import gymnasium

    return gymnasium.__version__


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--meta-steps", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    from sklearn_papers.rl import LearnedPolicyGradient, sample_grid_worlds

    grids = sample_grid_worlds(24, random_state=0)
    envs = [grids[i % len(grids)] for i in range(args.envs)]
    envs = [type(e)(height=e.height, width=e.width, objects=e.objects, start=e.start,
                    max_steps=e.max_steps) for e in envs]  # separate state per slot
    actions = np.random.default_rng(0).integers(0, 4, size=(args.steps, args.envs))
    batched = _batched_steps_per_s(envs, actions)
    loop = _loop_steps_per_s(envs, actions)
    sync = _sync_vector_steps_per_s(envs, actions)
    print(f"grid-world env steps/s, {args.envs} envs x {args.steps} steps (one thread):")
    print(f"  batched core      {batched:12,.0f}")
    print(f"  gymnasium loop    {loop:12,.0f}   batched / loop = {batched / loop:.1f}x")
    print(f"  SyncVectorEnv     {sync:12,.0f}   batched / SyncVectorEnv = {batched / sync:.1f}x")

    from _record import record

    what = f"{args.envs} grid worlds x {args.steps} random actions, one thread"
    record("lpg", title="Grid-world steps per second: batched core against stepping one by one",
           peer=f"the same GridWorld environments stepped one by one (gymnasium "
                f"{_gymnasium_version()})",
           rows=[{"what": f"{what}; peer: a Python loop over env.step", "ours": batched,
                  "peer": loop, "unit": "steps/s", "better": "higher"},
                 {"what": f"{what}; peer: gymnasium.vector.SyncVectorEnv", "ours": batched,
                  "peer": sync, "unit": "steps/s", "better": "higher"}],
           argv=argv, notes="Both take the same random actions; BatchedGridWorld steps "
                            "every environment in one tensor operation, with automatic "
                            "resets.")

    lpg = LearnedPolicyGradient(max_meta_steps=1, random_state=0).fit(grids)  # warm-up
    lpg.set_params(max_meta_steps=args.meta_steps)
    start, cpu = time.perf_counter(), time.process_time()
    lpg.fit(grids)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    env_steps = args.meta_steps * lpg.n_agents * lpg.rollout_length * (lpg.inner_steps + 1)
    print(f"LPG meta-training (defaults: {lpg.n_agents} agents, {lpg.inner_steps} unrolled "
          f"updates x {lpg.rollout_length} steps + 1 meta rollout):")
    print(f"  {args.meta_steps / elapsed:.2f} meta-steps/s, {env_steps / elapsed:,.0f} env "
          f"steps/s ({elapsed:.1f} s wall, {cpu:.1f} s CPU for {args.meta_steps} meta-steps; "
          f"{args.meta_steps / cpu:.2f} meta-steps per CPU second)")


if __name__ == "__main__":
    main()
