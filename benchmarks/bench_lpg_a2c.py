"""Benchmark: CPU time per environment step of A2C against a numpy tabular Q-learner.

The peer is tabular Q-learning written in numpy (epsilon-greedy 0.1, step size 0.5), one
agent stepping one gymnasium ``FrozenLake-v1`` (slippery 4 x 4) through ``env.step``: the
cheapest learner of a table. Ours: :class:`~sklearn_papers.rl.A2C` at its defaults
training one agent per environment, with 1 environment and with ``--batch`` environments
given to one ``fit`` (a list of ``gymnasium.make`` environments; the agents act and update
in numpy together, the environments are stepped one by one through ``env.step``). Both
run in this process, one torch thread, alternating ``--repeats`` times; the figure is the
median of the process CPU time per environment step, and the printed ratio is A2C / Q
(target: at most 3 with a batch of environments).

Run: ``python benchmarks/bench_lpg_a2c.py [--steps 20000] [--batch 16] [--repeats 3]``.
Recorded in ``benchmarks/results/a2c.json``.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def q_learning(env, steps, *, alpha=0.5, epsilon=0.1, discount=0.99, seed=0):
    """Tabular Q-learning for ``steps`` environment steps; returns the Q-table."""
    rng = np.random.RandomState(seed)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    state = env.reset(seed=seed)[0]
    for _ in range(steps):
        row = q[state]
        action = (rng.randint(len(row)) if rng.rand() < epsilon
                  else int(rng.choice(np.flatnonzero(row == row.max()))))
        nxt, reward, terminated, truncated, _ = env.step(action)
        target = reward + (0.0 if terminated else discount * q[nxt].max())
        q[state, action] += alpha * (target - q[state, action])
        state = env.reset()[0] if terminated or truncated else nxt
    return q


def _cpu_per_step(fn, steps):
    start = time.process_time()
    fn()
    return (time.process_time() - start) / steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000,
                        help="environment steps per agent (a multiple of 20)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import gymnasium

    from sklearn_papers.rl import A2C

    torch.set_num_threads(1)

    def make():
        return gymnasium.make("FrozenLake-v1", is_slippery=True)

    lifetime = args.steps // 20
    runs = {"q": [], "a2c_1": [], "a2c_batch": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an agent that met no goal warns; not timed here
        A2C(lifetime=5, random_state=0).fit(make())  # warm-up (imports, first calls)
        for r in range(args.repeats):
            runs["q"].append(_cpu_per_step(lambda: q_learning(make(), args.steps, seed=r),
                                           args.steps))
            runs["a2c_1"].append(_cpu_per_step(
                lambda: A2C(lifetime=lifetime, random_state=r).fit(make()), lifetime * 20))
            runs["a2c_batch"].append(_cpu_per_step(
                lambda: A2C(lifetime=lifetime, random_state=r).fit(
                    [make() for _ in range(args.batch)]), lifetime * 20 * args.batch))
    med = {k: float(np.median(v)) * 1e6 for k, v in runs.items()}
    for key, label in (("a2c_1", "1 environment"),
                       ("a2c_batch", f"{args.batch} environments")):
        print(f"A2C, {label}: {med[key]:.1f} us of CPU per step; Q-learning "
              f"{med['q']:.1f} us; ratio A2C / Q = {med[key] / med['q']:.2f}")
    from _record import record

    what = f"FrozenLake-v1 slippery, {args.steps} steps per agent, median of {args.repeats}"
    record("a2c", title="A2C's CPU time per environment step against numpy tabular "
                        "Q-learning",
           peer=f"tabular Q-learning in numpy, one environment (gymnasium "
                f"{gymnasium.__version__})",
           rows=[{"what": f"A2C with 1 environment, {what}", "ours": med["a2c_1"],
                  "peer": med["q"], "unit": "us of CPU per step", "better": "lower"},
                 {"what": f"A2C with {args.batch} environments in one fit, {what}",
                  "ours": med["a2c_batch"], "peer": med["q"], "unit": "us of CPU per step",
                  "better": "lower"}],
           argv=argv, notes="Process CPU time per environment step, both in one process "
                            "on one torch thread. Both step gymnasium's environment "
                            "through env.step.")


if __name__ == "__main__":
    main()
