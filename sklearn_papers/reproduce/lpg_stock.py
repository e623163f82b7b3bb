"""Oh et al. (2020), follow-up of ``lpg``: does the learned rule generalize to gymnasium's
stock FrozenLake, CliffWalking and Taxi, environments nobody here wrote?

Checks that a rule meta-trained on a widened distribution of our grid worlds reaches 80 %
of tuned A2C there, and that A2C does not lose to tabular Q-learning where both converge.

Claims: CLAIMS below; setup: docs/papers/lpg.rst.
"""

import time
import warnings
from functools import partial

import numpy as np

from sklearn_papers.reproduce._claims import Claim, all_of, declare, judge
from sklearn_papers.reproduce._common import (
    Protocol,
    in_one_torch_thread,
    one_torch_thread,
    run_seeds,
)
from sklearn_papers.reproduce._parallel import cached_parts, worker_cpu_seconds
from sklearn_papers.reproduce._records import records_note
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result
from sklearn_papers.reproduce.lpg import _TRAIN_DISCOUNT, _defaults
from sklearn_papers.rl._scores import _best_setting, _finite_mean, _normalized_score, _or_nan

__all__ = ["EXPERIMENT"]

# (name, gymnasium id, keywords): environments nobody here wrote, never meta-trained on
_STOCK = (("FrozenLake, not slippery", "FrozenLake-v1", {"is_slippery": False}),
          ("FrozenLake, slippery", "FrozenLake-v1", {"is_slippery": True}),
          ("CliffWalking", "CliffWalking-v1", {}),
          ("Taxi", "Taxi-v4", {}))
#: Environments where tabular Q-learning and A2C both converge in the step budget (claim 2).
_CONVERGING = ("FrozenLake, not slippery", "CliffWalking")
_RULES = (("widened", "LPG, widened"), ("grid", "LPG, our grid worlds"))
#: The rule's input pipeline, the same in meta-training and on the test environments.
_RULE = {"reward_scaling": "max_abs", "center_policy_target": True}
#: Version of the widened distribution and protocol (part of the records' key).
_DISTRIBUTION = "lakes-and-layouts/2"
#: How the lakes of the held-out draws that choose among the restarts slip:
#: ``widened_grid_world(lake_slips=...)``, sideways with probability 2/3.
_RESTART_SLIPS = ((2 / 3, True),)
_LPG_NORM = "(LPG - random) / (A2C - random)"

#: Per test environment ``{env}``, then each claim over every environment.
CLAIMS = declare(
    Claim("LPG, widened reaches 80 % of tuned A2C on {env}", _LPG_NORM, "mean interval",
          threshold=0.8, paper="generalizes (Fig. 4, 5)", key="reaches"),
    Claim("LPG, widened, step size {lr:g} (as meta-trained) reaches 80 % of tuned A2C on "
          "{env}", _LPG_NORM, "mean interval", threshold=0.8, key="reaches_as_trained"),
    Claim("A2C does not lose to Q-learning on {env}", "(A2C - random) / (Q-learning - random)",
          "mean interval", threshold=0.9, key="a2c_vs_q"),
    Claim("the widened rule reaches 80 % of tuned A2C on every test environment, agents' "
          "step size tuned", "", "all of", key="every"),
    Claim("the widened rule reaches 80 % of tuned A2C on every test environment, at the "
          "meta-training step size", "", "all of", key="every_as_trained"),
    Claim("A2C does not lose to tabular Q-learning where both converge", "", "all of",
          key="every_a2c_vs_q"),
)

#: ``lifetime``: agent updates of 20 steps on a test environment (the same number of
#: environment steps for every method).
PROTOCOL = Protocol(
    full=dict(rules=("widened",), meta_seeds=4, agent_seeds=3, meta_steps=2000,
              n_agents=32, meta_lifetime=500, rule=_RULE, n_train=24, lifetime=500,
              episodes=100, max_steps=200, a2c_lrs=(0.3, 1.0, 3.0),
              q_alphas=(0.1, 0.5, 1.0), lpg_lrs=(0.6, 1.0, 2.0), n_restarts=8,
              restart_lake_slips=_RESTART_SLIPS, n_jobs=2),
    quick=dict(meta_seeds=3, meta_steps=300, n_agents=16, episodes=20, a2c_lrs=(0.3, 1.0),
               q_alphas=(0.5, 1.0), lpg_lrs=(0.6, 2.0), n_restarts=2),
)


def _make_stock(env_id, kwargs):
    import gymnasium

    return gymnasium.make(env_id, **kwargs)


@in_one_torch_thread
def _baselines_part(name, cfg):
    """``{"random": [...], "Q-learning": {alpha: [...]}, "A2C": {lr: [...]}}`` on the stock
    environment ``name``: one mean greedy return per agent seed (NaN: diverged)."""
    from sklearn_papers.nn._skorch import torch_seeded
    from sklearn_papers.rl import A2C, q_learning
    from sklearn_papers.rl._q_learning import policy_returns

    env_id, kwargs = next((i, k) for n, i, k in _STOCK if n == name)
    seeds = range(cfg["agent_seeds"])
    episodes, max_steps = cfg["episodes"], cfg["max_steps"]
    env = _make_stock(env_id, kwargs)

    def random_return(s):
        rng = np.random.RandomState(s)
        return policy_returns(lambda _: int(rng.randint(env.action_space.n)), env, 1000 + s,
                              episodes, max_steps)

    def q_return(alpha, s):
        q = q_learning(env, cfg["lifetime"] * 20, learning_rate=alpha, epsilon=0.1,
                       discount=_TRAIN_DISCOUNT, random_state=s)
        return policy_returns(lambda x: int(np.argmax(q[x])), env, 1000 + s, episodes,
                              max_steps)

    def a2c_return(lr, s):
        with torch_seeded(s):
            a2c = A2C(lr=lr, lifetime=cfg["lifetime"], discount=_TRAIN_DISCOUNT,
                      random_state=s).fit(_make_stock(env_id, kwargs))
            return _greedy_return(a2c.agents_[0], env, episodes, max_steps, 1000 + s)

    return {"random": [random_return(s) for s in seeds],
            "Q-learning": {str(a): [q_return(a, s) for s in seeds] for a in cfg["q_alphas"]},
            "A2C": {str(lr): [_or_nan(a2c_return, lr, s) for s in seeds]
                    for lr in cfg["a2c_lrs"]}}


def _greedy_return(agent, env, episodes, max_steps, seed):
    """Mean greedy episode return of ``agent``, episodes cut at ``max_steps`` steps (silently)."""
    from sklearn_papers.rl import evaluate_policy

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*evaluation episodes were still running")
        return float(np.mean(evaluate_policy(agent, env, episodes, max_episode_steps=max_steps,
                                             random_state=seed)))


@in_one_torch_thread
def _rule_part(kind, seed, cfg):
    """A rule meta-trained with ``seed`` (``kind`` "widened" or "grid") and the agents it
    trains on every stock environment with each agent step size, evaluated greedily:
    ``{"returns": {env: {step size: [mean return per agent seed]}}, ...}``."""
    from sklearn_papers.rl import LearnedPolicyGradient, sample_grid_worlds, widened_grid_world

    t0 = time.process_time()
    est = LearnedPolicyGradient(lifetime=cfg["meta_lifetime"], n_agents=cfg["n_agents"],
                                max_meta_steps=cfg["meta_steps"], discount=_TRAIN_DISCOUNT,
                                n_restarts=cfg.get("n_restarts", 1), random_state=seed,
                                **cfg["rule"])
    held_out = None
    if cfg.get("n_restarts", 1) > 1 and cfg.get("restart_lake_slips"):
        held_out = partial(widened_grid_world,
                           lake_slips=[tuple(v) for v in cfg["restart_lake_slips"]])
    est.fit(widened_grid_world if kind == "widened"
            else sample_grid_worlds(cfg["n_train"], random_state=seed),
            restart_environments=held_out)
    out = {"returns": {}, "meta_cpu": time.process_time() - t0,
           "restart_scores": (None if est.restart_scores_ is None
                              else [float(v) for v in est.restart_scores_]),
           "best_restart": int(est.best_restart_)}

    def lpg_return(env_id, kwargs, s):
        agent = est.train_agent(_make_stock(env_id, kwargs), n_updates=cfg["lifetime"],
                                random_state=s)
        return _greedy_return(agent, _make_stock(env_id, kwargs), cfg["episodes"],
                              cfg["max_steps"], 1000 + s)

    for name, env_id, kwargs in _STOCK:
        out["returns"][name] = {}
        for lr in cfg["lpg_lrs"]:
            est.agent_lr = lr  # the agents' step size only: the rule is unchanged
            out["returns"][name][str(lr)] = [_or_nan(lpg_return, env_id, kwargs, s)
                                             for s in range(cfg["agent_seeds"])]
    return out


def _summary(baselines, rules, meta_lr=2.0):
    """Per environment: tuned settings, means, normalized scores and the verdicts' inputs
    (``meta_lr``: the agents' step size in meta-training, the rules' untuned setting)."""
    out = {}
    for name, _, _ in _STOCK:
        base = baselines[name]
        lr, alpha = _best_setting(base["A2C"]), _best_setting(base["Q-learning"])
        rand, a2c, q = (_finite_mean(base["random"]), _finite_mean(base["A2C"][lr]),
                        _finite_mean(base["Q-learning"][alpha]))
        row = dict(lr=lr, alpha=alpha, random=rand, a2c=a2c, a2c_seeds=base["A2C"][lr],
                   q=q, q_seeds=base["Q-learning"][alpha], q_norm=_normalized_score(q, rand, a2c),
                   a2c_over_q=[_normalized_score(v, rand, q) for v in base["A2C"][lr]])
        for kind in rules:
            # the agents' step size is tuned as A2C's learning rate is: the best mean
            # return over every run on this environment (meta-training x agent seeds)
            by_lr = {lr: [v for part in rules[kind] for v in part["returns"][name][lr]]
                     for lr in rules[kind][0]["returns"][name]}
            best = _best_setting(by_lr)
            row[f"{kind}_lr"] = best
            for suffix, lr in (("", best), ("_untuned", str(meta_lr))):
                if lr not in by_lr:
                    continue
                per_seed = [_finite_mean(part["returns"][name][lr]) for part in rules[kind]]
                row[kind + suffix] = by_lr[lr]
                row[f"{kind}{suffix}_norm"] = [_normalized_score(v, rand, a2c) for v in per_seed]
        out[name] = row
    return out


def _row(name, s, rules, meta_lr):
    """The table row of one environment from its summary ``s`` (:func:`_summary`)."""
    row = {"environment": name, "random": f"{s['random']:.2f}",
           "Q-learning (tuned)": f"{format_mean_std(s['q_seeds'], 2)} ({s['q_norm']:.2f}; "
                                 f"alpha {float(s['alpha']):g})",
           "A2C (tuned)": f"{format_mean_std(s['a2c_seeds'], 2)} (lr {float(s['lr']):g})"}
    for kind, label in _RULES:
        if kind in rules:
            row[label] = (f"{format_mean_std(s[kind], 2)} "
                          f"({_finite_mean(s[f'{kind}_norm']):.2f}; step size "
                          f"{float(s[f'{kind}_lr']):g})")
            if f"{kind}_untuned" in s:
                row[f"{label}, step size {meta_lr:g}"] = (
                    f"{format_mean_std(s[f'{kind}_untuned'], 2)} "
                    f"({_finite_mean(s[f'{kind}_untuned_norm']):.2f})")
    return row


def _claims(summary, meta_lr):
    """``{key: verdicts}``: per claim over every environment (its :data:`CLAIMS` key), the
    verdicts per environment; a NaN seed counts as a loss."""
    def finite(values):
        return [v if np.isfinite(v) else -1e9 for v in values]

    claims = {"every": [], "every_as_trained": [], "every_a2c_vs_q": []}
    for name, _, _ in _STOCK:
        s = summary[name]
        claims["every"].append(judge(CLAIMS["reaches"].at(env=name), finite(s["widened_norm"])))
        if "widened_untuned_norm" in s:
            claims["every_as_trained"].append(judge(
                CLAIMS["reaches_as_trained"].at(lr=meta_lr, env=name),
                finite(s["widened_untuned_norm"])))
        if name in _CONVERGING:
            claims["every_a2c_vs_q"].append(judge(CLAIMS["a2c_vs_q"].at(env=name),
                                                  finite(s["a2c_over_q"])))
    return claims


def _section(result, cfg, baselines, rules, wall, cpu, records=()):
    """The report's markdown."""
    from sklearn_papers.rl import LearnedPolicyGradient

    meta_lr = LearnedPolicyGradient().agent_lr  # the agents' step size in meta-training
    summary = _summary(baselines, rules, meta_lr)
    claims = _claims(summary, meta_lr)
    kept = (f", each the best of {cfg['n_restarts']} meta-trainings (kept: "
            + ", ".join(f"restart {part['best_restart'] + 1}" for part in rules["widened"])
            + ")" if cfg.get("n_restarts", 1) > 1 and "widened" in rules else "")
    lines = result.block(
        f"Mean greedy episode return ± std over the seeds ({cfg['meta_seeds']} meta-training "
        f"x {cfg['agent_seeds']} agent seeds for LPG), after {cfg['lifetime'] * 20:,} "
        "environment steps per agent; in brackets the normalized score (method - random) / "
        f"(A2C - random) and the tuned setting. Rules: {cfg['meta_steps']} meta-steps of "
        f"{cfg['n_agents']} agents{kept}.",
        [_row(name, summary[name], rules, meta_lr) for name, _, _ in _STOCK])
    lines += result.block(
        "Claim 1 per test environment (each meta-training seed's normalized score); claim 2 "
        "per converging environment (per agent seed).",
        result.verdict_rows([v for parts in claims.values() for v in parts], digits=2))
    lines += [result.verdict_line(all_of(*parts), claim=CLAIMS[key], parts=parts)
              for key, parts in claims.items() if parts]
    lines.append(f"- Cost: {cpu:.0f} s of CPU time and {wall:.0f} s wall in this run."
                 + (f" {records_note(records, 'parts')}" if records else ""))
    return "\n".join(lines)


def run(ctx):
    """Run the experiment; see the module docstring."""
    from sklearn_papers.rl import A2C, LearnedPolicyGradient

    cfg = PROTOCOL.settings(ctx.quick)
    with one_torch_thread():
        defaults = {"lpg": _defaults(LearnedPolicyGradient()),
                    "a2c": _defaults(A2C(), ("verbose", "random_state", "lr"))}
        key = {"cfg": cfg, "defaults": defaults, "distribution": _DISTRIBUTION,
               "stock": [[n, i, sorted(k.items())] for n, i, k in _STOCK]}
        seeds = run_seeds(ctx, cfg["meta_seeds"])
        rule_parts = [(f"rule/{kind}/seed={seed}", _rule_part, (kind, seed, cfg), key)
                      for kind in cfg["rules"] for seed in seeds]
        base_parts = [(f"baselines/{name}", _baselines_part, (name, cfg), key)
                      for name, _, _ in _STOCK]
        t0, c0 = time.perf_counter(), time.process_time()
        with ctx.progress(total=len(rule_parts) + len(base_parts),
                          desc="lpg_stock: parts") as bar:
            values = cached_parts(ctx, rule_parts + base_parts, n_jobs=cfg["n_jobs"],
                                  progress=bar)
        wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + worker_cpu_seconds()
    rules = {kind: [] for kind in cfg["rules"]}
    for (_, _, (kind, _, _), _), value in zip(rule_parts, values):
        rules[kind].append(value)
    baselines = {name: value for (name, _, _), value in zip(_STOCK, values[len(rule_parts):])}
    result = Result()
    return result.done(_section(result, cfg, baselines, rules, wall, cpu, ctx.records),
                       shortened=PROTOCOL.note(ctx.quick))


EXPERIMENT = Experiment(
    name="lpg_stock",
    title="Learned Policy Gradient on environments nobody here wrote (gymnasium's "
          "FrozenLake, CliffWalking, Taxi)",
    paper="Oh, Hessel, Czarnecki, Xu, van Hasselt, Singh & Silver 2020, Discovering "
          "Reinforcement Learning Algorithms, NeurIPS",
    run=run,
    claims=CLAIMS,
    protocol=PROTOCOL,
    records=True,
    # its quick protocol (3 meta-trainings x 3 agent seeds) takes about 10 CPU minutes
    in_quick_run=False,
)
