"""Evaluation of the shipped LPG rule against A2C and tabular Q-learning.

Every method trains one agent per environment and agent seed for ``--steps`` environment
steps, then plays ``--episodes`` greedy episodes (cut at 200 steps); the figure is the mean
greedy episode return over the agent seeds:

* *LPG, shipped rule*: ``LearnedPolicyGradient(pretrained=NAME).fit()`` (no meta-training)
  and ``train_agent(env, n_updates=steps // 20)``;
* *A2C*: :class:`~sklearn_papers.rl.A2C` at its defaults, ``lifetime=steps // 20``;
* *Q-learning*: tabular, epsilon-greedy 0.1, step size 0.5, discount 0.99;
* *random*: the uniform random policy (the normalization's zero).

The normalized score of a method is ``(method - random) / (A2C - random)``: 1 is A2C, 0
the random policy. The test environments are gymnasium's and were never used to make or
choose the rule. Results go to ``sklearn_papers/rl/_pretrained/NAME/evaluation.json``
(the environments page's table is made from it by :func:`table_lines`).

Run: ``python benchmarks/bench_lpg_pretrained.py [--steps 20000] [--seeds 3]``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_lpg_a2c, beside this script

#: (column, gymnasium id, keywords)
ENVIRONMENTS = (("FrozenLake 4x4", "FrozenLake-v1", {"is_slippery": False}),
                ("FrozenLake 4x4 slippery", "FrozenLake-v1", {"is_slippery": True}),
                ("CliffWalking", "CliffWalking-v1", {}),
                ("Taxi", "Taxi-v4", {}),
                ("FrozenLake 8x8 slippery", "FrozenLake-v1", {"map_name": "8x8"}))
#: The environments of the target (at least 0.8 of A2C's normalized return on 3 of them).
TARGET = ("FrozenLake 4x4", "FrozenLake 4x4 slippery", "CliffWalking", "Taxi")
METHODS = ("LPG, shipped rule", "A2C", "Q-learning")
MAX_STEPS = 200
RESULT = Path(__file__).resolve().parents[1] / "sklearn_papers" / "rl" / "_pretrained"


def _greedy(agent, env, episodes, seed):
    from sklearn_papers.rl import evaluate_policy

    return float(np.mean(evaluate_policy(agent, env, episodes, max_episode_steps=MAX_STEPS,
                                         random_state=seed)))


def _random_policy(env, episodes, seed):
    rng = np.random.RandomState(seed)
    out = []
    for ep in range(episodes):
        env.reset(seed=seed if ep == 0 else None)
        total = 0.0
        for _ in range(MAX_STEPS):
            _, reward, terminated, truncated, _ = env.step(int(rng.randint(env.action_space.n)))
            total += float(reward)
            if terminated or truncated:
                break
        out.append(total)
    return float(np.mean(out))


def _q_greedy(env, steps, episodes, seed):
    from bench_lpg_a2c import q_learning

    q = q_learning(env, steps, seed=seed)
    out = []
    for ep in range(episodes):
        state = env.reset(seed=seed if ep == 0 else None)[0]
        total = 0.0
        for _ in range(MAX_STEPS):
            state, reward, terminated, truncated, _ = env.step(int(np.argmax(q[state])))
            total += float(reward)
            if terminated or truncated:
                break
        out.append(total)
    return float(np.mean(out))


def evaluate(name, steps, seeds, episodes, verbose=True, reuse=None):
    """``{column: {method: [mean greedy return per seed], "random": [...]}}``; the
    baselines (random, A2C, Q-learning) are taken from ``reuse`` when given."""
    import gymnasium

    from sklearn_papers.rl import A2C, LearnedPolicyGradient

    rule = LearnedPolicyGradient(pretrained=name).fit()
    out = {}
    for column, env_id, kwargs in ENVIRONMENTS:
        def make(env_id=env_id, kwargs=kwargs):
            return gymnasium.make(env_id, **kwargs)

        row = {m: [] for m in ("random",) + METHODS}
        for s in range(seeds):
            eval_seed = 1000 + s
            agent = rule.train_agent(make(), n_updates=steps // 20, random_state=s)
            row["LPG, shipped rule"].append(_greedy(agent, make(), episodes, eval_seed))
            if reuse is not None:
                continue
            row["random"].append(_random_policy(make(), episodes, eval_seed))
            a2c = A2C(lifetime=steps // 20, random_state=s).fit(make())
            row["A2C"].append(_greedy(a2c.agents_[0], make(), episodes, eval_seed))
            row["Q-learning"].append(_q_greedy(make(), steps, episodes, s))
        if reuse is not None:
            row.update({m: reuse[column][m] for m in ("random", "A2C", "Q-learning")})
        out[column] = row
        if verbose:
            print(column, {k: np.round(v, 2).tolist() for k, v in row.items()}, flush=True)
    return out


def normalized(row, method):
    """``(method - random) / (A2C - random)`` of the seeds' means (NaN if A2C = random)."""
    rand, a2c = np.mean(row["random"]), np.mean(row["A2C"])
    return float((np.mean(row[method]) - rand) / (a2c - rand)) if a2c != rand else float("nan")


def table_lines(result):
    """The environments page's list-table rows (reST) of an ``evaluation.json``; the
    normalized scores in brackets for the :data:`TARGET` environments only (where A2C
    does not beat the random policy clearly, the ratio means little)."""
    lines = ["   * - method", *(f"     - {column}" for column in result["returns"])]
    for method in ("random",) + METHODS:
        lines.append(f"   * - {method}")
        for column, row in result["returns"].items():
            mean = f"{np.mean(row[method]):.2f}"
            norm = ("" if method in ("random", "A2C") or column not in TARGET
                    else f" ({normalized(row, method):.2f})")
            lines.append(f"     - {mean}{norm}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="lpg-widened", help="the shipped rule")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--reuse-baselines", action="store_true",
                        help="take random, A2C and Q-learning from the existing "
                             "evaluation.json (same protocol); train only the rule's agents")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    t0 = time.process_time()
    path = RESULT / args.name / "evaluation.json"
    protocol = {"steps": args.steps, "agent_seeds": args.seeds,
                "episodes": args.episodes, "max_episode_steps": MAX_STEPS,
                "a2c": "A2C() defaults, lifetime = steps // 20",
                "q_learning": "epsilon 0.1, step size 0.5, discount 0.99",
                "lpg": "LearnedPolicyGradient(pretrained=rule).train_agent(env, "
                       "n_updates=steps // 20)",
                "environments": {c: [i, k] for c, i, k in ENVIRONMENTS}}
    reuse = None
    if args.reuse_baselines:
        old = json.loads(path.read_text())
        if old["protocol"] != protocol:
            raise SystemExit(f"{path} was made with another protocol; run without "
                             "--reuse-baselines")
        reuse = old["returns"]
    with warnings.catch_warnings():
        # cut evaluation episodes (a looping policy) and agents without reward are part of
        # the protocol; the table shows their returns
        warnings.simplefilter("ignore", UserWarning)
        returns = evaluate(args.name, args.steps, args.seeds, args.episodes, reuse=reuse)
    scores = {column: {m: normalized(row, m) for m in METHODS}
              for column, row in returns.items()}
    reached = [c for c in TARGET if scores[c]["LPG, shipped rule"] >= 0.8]
    result = {
        "rule": args.name,
        # the command that makes every number (--reuse-baselines only skips recomputing)
        "command": " ".join(["python", "benchmarks/bench_lpg_pretrained.py",
                             *(a for a in (sys.argv[1:] if argv is None else argv)
                               if a != "--reuse-baselines")]),
        "protocol": protocol,
        "returns": returns, "normalized": scores,
        "target": {"environments": list(TARGET), "threshold": 0.8,
                   "reached_on": reached, "met": len(reached) >= 3},
        "cpu_seconds": time.process_time() - t0}
    path.write_text(json.dumps(result, indent=1) + "\n")
    for column in returns:
        print(f"{column}: " + ", ".join(f"{m} {scores[column][m]:.2f}" for m in METHODS))
    print(f"LPG >= 0.8 of A2C on {len(reached)} of {len(TARGET)}: {reached}; wrote {path}")


if __name__ == "__main__":
    main()
