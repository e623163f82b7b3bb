"""Benchmark: which lakes in the widened distribution carry the learned rule to gymnasium's
stock environments (the ``lpg_stock`` experiment, one meta-training seed).

Meta-trains one :class:`~sklearn_papers.rl.LearnedPolicyGradient` rule with the
``lpg_stock`` protocol's settings (``reward_scaling="max_abs"``, the centred policy target,
lifetimes of 500 updates, ``--meta-steps`` meta-steps of ``--n-agents`` agents) on the
widened distribution whose lakes slip as ``--lake-slips`` says (a JSON list of ``[p,
sideways]`` pairs drawn uniformly, see :class:`~sklearn_papers.rl.SlipperyActions`;
default: the published set),
then trains agents with it on FrozenLake-v1 (slippery and not), CliffWalking-v1 and Taxi-v4
for ``--agent-seeds`` seeds and evaluates them greedily as ``lpg_stock`` does. Prints each
environment's greedy returns and the normalized score (LPG - random) / (A2C - random), with
random and tuned A2C read from the recorded ``lpg_stock`` baselines (``--baselines``).

Run: ``python benchmarks/bench_lpg_stock_lakes.py [--seed 0] [--lake-slips
'[[0, false], [0.1, false], [0.33, false], [0.6667, true]]']``. One torch thread; about
90 CPU seconds with the defaults.
"""

import argparse
import json
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from sklearn_papers.reproduce import lpg_stock as S
from sklearn_papers.rl._scores import _best_setting, _finite_mean, _normalized_score

_RECORDS = Path(__file__).resolve().parents[1] / "records" / "lpg_stock" / "full-seed0"


def _baselines(folder):
    """``{environment: (random, tuned A2C)}`` mean greedy returns of the recorded parts."""
    out = {}
    for name, _, _ in S._STOCK:
        path = Path(folder) / "baselines" / (name.replace(", ", "_").replace(" ", "_") + ".json")
        value = json.loads(path.read_text())["value"]
        out[name] = (_finite_mean(value["random"]),
                     _finite_mean(value["A2C"][_best_setting(value["A2C"])]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="meta-training seed")
    ap.add_argument("--lake-slips", default=None, help="JSON list of [p, sideways]")
    ap.add_argument("--meta-steps", type=int, default=600)
    ap.add_argument("--n-agents", type=int, default=32)
    ap.add_argument("--agent-seeds", type=int, default=3)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--baselines", default=str(_RECORDS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    from sklearn_papers.rl import LearnedPolicyGradient, widened_grid_world
    from sklearn_papers.rl._widened import LAKE_SLIPS

    base = _baselines(args.baselines)
    slips = (None if args.lake_slips is None
             else tuple((float(p), bool(s)) for p, s in json.loads(args.lake_slips)))
    t0 = time.process_time()
    est = LearnedPolicyGradient(lifetime=500, n_agents=args.n_agents,
                                max_meta_steps=args.meta_steps, discount=S._TRAIN_DISCOUNT,
                                random_state=args.seed, **S._RULE)
    est.fit(partial(widened_grid_world, lake_slips=slips))
    print(f"lake slips {slips or LAKE_SLIPS}, meta-seed {args.seed}: meta-training "
          f"{time.process_time() - t0:.0f} CPU s")
    for name, env_id, kwargs in S._STOCK:
        returns = []
        for s in range(args.agent_seeds):
            agent = est.train_agent(S._make_stock(env_id, kwargs), n_updates=500,
                                    random_state=s)
            returns.append(S._greedy_return(agent, S._make_stock(env_id, kwargs),
                                            args.episodes, 200, 1000 + s))
        rand, a2c = base[name]
        print(f"  {name}: greedy returns {np.round(returns, 2).tolist()}, normalized "
              f"{_normalized_score(_finite_mean(returns), rand, a2c):.2f}", flush=True)


if __name__ == "__main__":
    main()
