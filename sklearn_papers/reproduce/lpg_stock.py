"""Oh et al. (2020), follow-up of ``lpg``: does the learned rule generalize to environments
nobody here wrote?

The paper's point is that an update rule meta-learned on simple grid worlds generalizes to
environments it has never seen. Here the test environments are gymnasium's stock
``FrozenLake-v1`` (slippery and not), ``CliffWalking-v1`` and ``Taxi-v4``: never used in
meta-training, with rewards of -1, -10 and -100 that our grid worlds do not have.

Rules (one per meta-training seed), both with the same input pipeline, in meta-training
and on the test environments: every agent's rewards reach the rule divided by the largest
``|r|`` that agent has met so far (``reward_scaling="max_abs"``), so a rule meta-trained on
rewards of one size reads rewards of any size alike; the policy target ``pi_hat`` is
centred over every rollout (``center_policy_target=True``), so that a rule cannot push an
agent's policy to a deterministic one before any reward came; and lifetimes of 500 agent
updates, the test environments' training length:

* *LPG, widened*: meta-trained on a widened distribution of our 5 x 5 grid worlds, as the
  paper widens its training set (:func:`~sklearn_papers.rl.widened_grid_world`). Half of
  its environments are *lakes*: a +1 goal at least half the grid's diameter from the start
  and 1 to 5 holes that end the episode with a reward of 0 or -1 (ending an episode is not
  always good), episodes of 20 to 150 steps, rewards scaled by 0.1 to 100,
  slipperiness 0 to 0.33. The other half are our layouts (dense, sparse, long horizon):
  rewards scaled by 0.1, 1, 10 or 100 and negated a quarter of the time, a per-step reward
  of 0, -0.01 or -0.05 times the scale, episodes of 10 to 150 steps, actions replaced by
  random ones with probability 0 to 0.66;
* *LPG, our grid worlds* (``rules`` of the configuration; not in the default runs, whose
  CPU time goes to the widened rule's three meta-training seeds): meta-trained on
  ``sample_grid_worlds`` alone (the ``lpg`` experiment's training set), for comparison.

Every method trains one tabular agent per environment and agent seed for the same number
of environment steps; the agent is then evaluated greedily (an episode still running after
``max_steps`` steps is cut). A2C's learning rate, tabular Q-learning's step size and the
step size of the agents a learned rule trains (``agent_lr``; the rule, the meta-learned
network, stays as meta-trained) are each tuned on every test environment over a grid of
three (the best mean return there). The rules are also scored at the step size they were
meta-trained with. Scores are normalized as (method - random policy) / (A2C - random
policy).

Meta-training is chaotic: rounding differences between two hosts' floating-point kernels
lead the same seed to different rules (one seed's rule solved the non-slippery lake on one
host and never reached its goal on another), and rules of different seeds differ as
widely; on the slippery lake, about one meta-training in four gives a rule that reaches
tuned A2C there. Each meta-training seed therefore keeps the best of several
meta-trainings (``n_restarts``), judged by the lifetime return of fresh agents on held-out
draws of the widened distribution whose lakes all slip sideways with probability 2/3
(``restart_environments=partial(widened_grid_world, lake_slips=...)``: a dynamics the rule
is never meta-trained on, and never a test environment), and the claims are judged over
the meta-training seeds, whose spread is the uncertainty the verdicts carry. The
configuration (seeds, meta-steps, restarts) is stated in the report.

Claims (shared rules of :mod:`._claims`):

1. The widened rule reaches at least 80 % of tuned A2C's normalized score on every test
   environment (mean interval over meta-training seeds, each seed's score the mean over its
   agent seeds; all environments together by :func:`._claims.all_of`), with the agents'
   step size tuned, and at the meta-training step size.
2. A2C does not lose to tabular Q-learning where both converge (FrozenLake not slippery,
   CliffWalking): per agent seed, A2C's score normalized by Q-learning's, (A2C - random) /
   (Q-learning - random), reaches 0.9 (mean interval).
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
from sklearn_papers.reproduce._registry import Experiment
from sklearn_papers.reproduce._report import format_mean_std
from sklearn_papers.reproduce._result import Result

__all__ = ["EXPERIMENT"]

# (name, gymnasium id, keywords): environments nobody here wrote, never meta-trained on
_STOCK = (("FrozenLake, not slippery", "FrozenLake-v1", {"is_slippery": False}),
          ("FrozenLake, slippery", "FrozenLake-v1", {"is_slippery": True}),
          ("CliffWalking", "CliffWalking-v1", {}),
          ("Taxi", "Taxi-v4", {}))
#: Environments where tabular Q-learning and A2C both converge in the step budget (claim 2).
_CONVERGING = ("FrozenLake, not slippery", "CliffWalking")
_RULES = (("widened", "LPG, widened"), ("grid", "LPG, our grid worlds"))
_TRAIN_DISCOUNT = 0.99
#: The rule's input pipeline, the same in meta-training and on the test environments.
_RULE = {"reward_scaling": "max_abs", "center_policy_target": True}
#: Version of the widened distribution and protocol (part of the records' key).
_DISTRIBUTION = "lakes-and-layouts/2"
#: The held-out environments that choose among a seed's meta-trainings: the widened
#: distribution with every lake slipping sideways with probability 2/3
#: (``widened_grid_world(lake_slips=...)``), a kind of dynamics never meta-trained on.
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
    shortened="{meta_seeds} meta-training seeds x {agent_seeds} agent seeds (full: 4 x 3), "
              "each the best of {n_restarts} meta-trainings (full: 8) of {meta_steps} "
              "meta-steps of {n_agents} agents (full: 2000 of 32), {episodes} evaluation "
              "episodes (full: 100), A2C's learning rate, Q-learning's step size and the "
              "rule's agent step size tuned over {a2c_lrs}, {q_alphas} and {lpg_lrs} (full: "
              "(0.3, 1.0, 3.0), (0.1, 0.5, 1.0) and (0.6, 1.0, 2.0)).",
)


def _held_out_words(lake_slips):
    """The held-out distribution that chooses among the restarts, in words."""
    kinds = ", ".join(f"{'sideways' if sideways else 'to a random action'} with probability "
                      f"{p:.2g}" for p, sideways in lake_slips)
    return (f"the widened distribution with every lake slipping ({kinds}), a dynamics "
            "never meta-trained on")


def _meta_lr():
    """The agents' step size in meta-training (``LearnedPolicyGradient().agent_lr``)."""
    from sklearn_papers.rl import LearnedPolicyGradient

    return LearnedPolicyGradient().agent_lr


def _make_stock(env_id, kwargs):
    import gymnasium

    return gymnasium.make(env_id, **kwargs)


def _policy_returns(act, env, seed, episodes, max_steps):
    """Mean return of ``episodes`` episodes of the policy ``act(state)`` (first reset seeded)."""
    out = []
    for ep in range(episodes):
        state = env.reset(seed=seed if ep == 0 else None)[0]
        total = 0.0
        for _ in range(max_steps):
            state, reward, terminated, truncated, _ = env.step(act(state))
            total += float(reward)
            if terminated or truncated:
                break
        out.append(total)
    return float(np.mean(out))


def _q_learning(env, steps, alpha, seed, *, epsilon=0.1, discount=_TRAIN_DISCOUNT):
    """Tabular Q-learning (epsilon-greedy, ties broken at random) for ``steps`` steps: the
    Q-table. A time limit bootstraps; only termination ends the target."""
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


@in_one_torch_thread
def _baselines_part(name, cfg):
    """The random policy, tabular Q-learning (each step size) and A2C (each learning rate)
    on the stock environment ``name``: ``{"random": [...], "Q-learning": {alpha: [...]},
    "A2C": {lr: [...]}}``, one mean greedy return per agent seed (NaN: diverged)."""
    from sklearn_papers.nn._skorch import torch_seeded
    from sklearn_papers.rl import A2C

    env_id, kwargs = next((i, k) for n, i, k in _STOCK if n == name)
    seeds = range(cfg["agent_seeds"])
    steps, episodes, max_steps = cfg["lifetime"] * 20, cfg["episodes"], cfg["max_steps"]
    env = _make_stock(env_id, kwargs)
    out = {"random": [], "Q-learning": {}, "A2C": {}}
    for s in seeds:
        rng = np.random.RandomState(s)
        out["random"].append(_policy_returns(lambda _: int(rng.randint(env.action_space.n)),
                                             env, 1000 + s, episodes, max_steps))
    for alpha in cfg["q_alphas"]:
        out["Q-learning"][str(alpha)] = [
            _policy_returns(lambda x, q=_q_learning(env, steps, alpha, s): int(np.argmax(q[x])),
                            env, 1000 + s, episodes, max_steps) for s in seeds]
    for lr in cfg["a2c_lrs"]:
        returns = []
        for s in seeds:
            with torch_seeded(s):
                try:
                    a2c = A2C(lr=lr, lifetime=cfg["lifetime"], discount=_TRAIN_DISCOUNT,
                              random_state=s).fit(_make_stock(env_id, kwargs))
                    returns.append(_greedy_return(a2c.agents_[0], env, episodes,
                                                  max_steps, 1000 + s))
                except FloatingPointError:
                    returns.append(float("nan"))
        out["A2C"][str(lr)] = returns
    return out


def _greedy_return(agent, env, episodes, max_steps, seed):
    """Mean greedy episode return of ``agent``; episodes cut at ``max_steps`` steps are part
    of the protocol (a looping policy scores the sum of its first ``max_steps`` rewards), so
    evaluate_policy's warning about them is silenced here."""
    from sklearn_papers.rl import evaluate_policy

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*evaluation episodes were still running")
        return float(np.mean(evaluate_policy(agent, env, episodes, max_episode_steps=max_steps,
                                             random_state=seed)))


@in_one_torch_thread
def _rule_part(kind, seed, cfg):
    """A rule meta-trained with ``seed`` (``kind`` "widened": on
    :func:`~sklearn_papers.rl.widened_grid_world`;
    "grid": on ``sample_grid_worlds(n_train)``) and agents it trains on every stock
    environment with each agent step size of ``cfg["lpg_lrs"]``, evaluated greedily:
    ``{"returns": {env: {step size: [mean return per agent seed]}}, "meta_cpu": s}``."""
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
    for name, env_id, kwargs in _STOCK:
        out["returns"][name] = {}
        for lr in cfg["lpg_lrs"]:
            # the agents' step size only: the rule (the meta-learned network) is unchanged
            est.agent_lr = lr
            returns = out["returns"][name][str(lr)] = []
            for s in range(cfg["agent_seeds"]):
                try:
                    agent = est.train_agent(_make_stock(env_id, kwargs),
                                            n_updates=cfg["lifetime"], random_state=s)
                    returns.append(_greedy_return(
                        agent, _make_stock(env_id, kwargs), cfg["episodes"],
                        cfg["max_steps"], 1000 + s))
                except FloatingPointError:
                    returns.append(float("nan"))
    return out


def _mean(values):
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else float("nan")


def _best(settings):
    """The setting (a key of ``settings``) with the best mean return, NaN runs last."""
    return max(settings, key=lambda k: (np.isfinite(_mean(settings[k])), _mean(settings[k])))


def _normalized(value, random, reference):
    return (value - random) / (reference - random) if reference != random else float("nan")


def _summary(baselines, rules, meta_lr=2.0):
    """Per environment: tuned settings, means, normalized scores and the verdicts' inputs
    (``meta_lr``: the agents' step size in meta-training, the rules' untuned setting)."""
    out = {}
    for name, _, _ in _STOCK:
        base = baselines[name]
        lr, alpha = _best(base["A2C"]), _best(base["Q-learning"])
        rand, a2c, q = (_mean(base["random"]), _mean(base["A2C"][lr]),
                        _mean(base["Q-learning"][alpha]))
        row = dict(lr=lr, alpha=alpha, random=rand, a2c=a2c, a2c_seeds=base["A2C"][lr],
                   q=q, q_seeds=base["Q-learning"][alpha], q_norm=_normalized(q, rand, a2c),
                   a2c_over_q=[_normalized(v, rand, q) for v in base["A2C"][lr]])
        for kind in rules:
            # the agents' step size is tuned as A2C's learning rate is: the best mean
            # return over every run on this environment (meta-training x agent seeds)
            by_lr = {lr: [v for part in rules[kind] for v in part["returns"][name][lr]]
                     for lr in rules[kind][0]["returns"][name]}
            best = _best(by_lr)
            row[f"{kind}_lr"] = best
            for suffix, lr in (("", best), ("_untuned", str(meta_lr))):
                if lr not in by_lr:
                    continue
                per_seed = [_mean(part["returns"][name][lr]) for part in rules[kind]]
                row[kind + suffix] = by_lr[lr]
                row[f"{kind}{suffix}_norm"] = [_normalized(v, rand, a2c) for v in per_seed]
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
                          f"({_mean(s[f'{kind}_norm']):.2f}; step size "
                          f"{float(s[f'{kind}_lr']):g})")
            if f"{kind}_untuned" in s:
                row[f"{label}, step size {meta_lr:g}"] = (
                    f"{format_mean_std(s[f'{kind}_untuned'], 2)} "
                    f"({_mean(s[f'{kind}_untuned_norm']):.2f})")
    return row


def _claims(summary, meta_lr):
    """The verdicts of claim 1 (the widened rule reaches 80 % of tuned A2C: step size
    tuned, and as meta-trained) and claim 2 (A2C does not lose to Q-learning where both
    converge), one per environment, by the mean-interval rule over the seeds."""
    claims1, claims1u, claims2 = [], [], []
    for name, _, _ in _STOCK:
        s = summary[name]
        norm = [v if np.isfinite(v) else -1e9 for v in s["widened_norm"]]
        claims1.append(judge(CLAIMS["reaches"].at(env=name), norm))
        if "widened_untuned_norm" in s:
            norm = [v if np.isfinite(v) else -1e9 for v in s["widened_untuned_norm"]]
            claims1u.append(judge(CLAIMS["reaches_as_trained"].at(lr=meta_lr, env=name),
                                  norm))
        if name in _CONVERGING:
            ratio = [v if np.isfinite(v) else -1e9 for v in s["a2c_over_q"]]
            claims2.append(judge(CLAIMS["a2c_vs_q"].at(env=name), ratio))
    return claims1, claims1u, claims2


def _section(result, cfg, baselines, rules, wall, cpu, records=()):
    meta_lr = _meta_lr()
    summary = _summary(baselines, rules, meta_lr)
    recorded = ""
    if records:
        part_cpu = sum(r.get("cpu_seconds") or 0.0 for r in records)
        recorded = (f"; the {len(records)} parts, kept as text records (`--records`), took "
                    f"{part_cpu / 3600:.1f} CPU hours when they were computed")
    rows = [_row(name, summary[name], rules, meta_lr) for name, _, _ in _STOCK]
    claims1, claims1u, claims2 = _claims(summary, meta_lr)

    def every(parts, key):
        return result.verdict(all_of(*parts), claim=CLAIMS[key], parts=parts)

    a2c_lrs = ", ".join(f"{v:g}" for v in cfg["a2c_lrs"])
    q_alphas = ", ".join(f"{v:g}" for v in cfg["q_alphas"])
    lpg_lrs = ", ".join(f"{v:g}" for v in cfg["lpg_lrs"])
    per_seed = "; ".join(
        f"{name}: " + ", ".join(f"{v:.2f}" for v in summary[name]["widened_norm"])
        for name, _, _ in _STOCK)
    grid_rule = (f"; *LPG, our grid worlds*, meta-trained on {cfg['n_train']} grids of "
                 "`sample_grid_worlds`" if "grid" in rules else "")
    return "\n".join([
        "Test environments (never meta-trained on): gymnasium's FrozenLake-v1 (slippery "
        "and not), CliffWalking-v1 and Taxi-v4. Rules, one per meta-training seed "
        f"({cfg['meta_seeds']} seeds): *LPG, widened*, meta-trained on a widened "
        "distribution of our 5 x 5 grid worlds: half lakes (a far +1 goal, 1 to 5 holes "
        "that end the episode with 0 or -1, rewards scaled by 0.1 to 100, episodes of 20 to "
        "150 steps, slipperiness 0 to 0.33), half our layouts (rewards scaled by 0.1, 1, 10 "
        "or 100 and negated a quarter of the time, a per-step reward of 0, -0.01 or -0.05 "
        "times the scale, episodes of 10 to 150 steps, actions replaced by random ones with "
        f"probability 0 to 0.66){grid_rule}. Every rule reads the agent's rewards divided "
        "by the largest |r| it has met so far (`reward_scaling=\"max_abs\"`), in "
        "meta-training and on the test environments"
        + (", with the policy target centred over every rollout"
           if cfg["rule"].get("center_policy_target") else "") + ". "
        f"Meta-training: {cfg['meta_steps']} meta-steps of {cfg['n_agents']} agents "
        f"(lifetimes of {cfg['meta_lifetime']} updates), the estimator's other defaults"
        + (f"; each rule is the best of {cfg['n_restarts']} meta-trainings "
           "(`n_restarts`) by the lifetime return of fresh agents on "
           f"{cfg['n_agents']} held-out draws of "
           + (_held_out_words(cfg["restart_lake_slips"]) if cfg.get("restart_lake_slips")
              else "its training distribution") + " (kept: "
           + ", ".join(f"restart {part['best_restart'] + 1}" for part in rules["widened"])
           + " of the meta-training seeds)" if cfg.get("n_restarts", 1) > 1
           and "widened" in rules else "") + ". "
        f"Every method trains one tabular agent per environment and agent seed "
        f"({cfg['agent_seeds']} seeds) for {cfg['lifetime'] * 20:,} environment steps "
        f"({cfg['lifetime']} updates of 20 steps; Q-learning: as many steps, epsilon-greedy "
        f"0.1), then plays {cfg['episodes']} greedy episodes (cut at {cfg['max_steps']} "
        f"steps). A2C's learning rate (of {a2c_lrs}) and Q-learning's step size (of "
        f"{q_alphas}) are tuned on each test environment (the best mean return there), "
        f"and so is the step size of the agents a rule trains (of {lpg_lrs}; "
        f"{meta_lr:g} in meta-training): the rule itself, the meta-learned network, is "
        "the same on every environment. "
        "Mean greedy episode return ± std over the seeds (LPG: meta-training x agent "
        "seeds); in brackets the normalized score (method - random) / (A2C - random), "
        "where 1 is tuned A2C and 0 the random policy.",
        "",
        result.table(rows),
        "",
        "Claim 1, the widened rule generalizes (normalized score of each meta-training seed, "
        f"the mean over its agent seeds, at the tuned step size; per seed: {per_seed}); "
        f"the same at the meta-training step size {meta_lr:g}. Claim 2, A2C against "
        "Q-learning where both converge (per agent seed).",
        "",
        result.table(result.verdict_rows(claims1 + claims1u + claims2, digits=2)),
        "",
        f"- The widened rule reaches 80 % of tuned A2C on every test environment (agents' "
        "step size tuned): " + every(claims1, "every")
        + ("; at the meta-training step size: " + every(claims1u, "every_as_trained")
           if claims1u else "") + ".",
        "- A2C does not lose to tabular Q-learning where both converge: "
        + every(claims2, "every_a2c_vs_q") + ".",
        f"- Cost: {cpu:.0f} s of CPU time and {wall:.0f} s wall in this run{recorded}.",
    ]), summary


def run(ctx):
    """Run the experiment; see the module docstring."""
    from sklearn_papers.reproduce._parallel import cached_parts
    from sklearn_papers.rl import A2C, LearnedPolicyGradient

    cfg = PROTOCOL.settings(ctx.quick)
    with one_torch_thread():
        defaults = {"lpg": {k: v for k, v in LearnedPolicyGradient().get_params().items()
                            if k not in ("verbose", "random_state", "n_jobs")},
                    "a2c": {k: v for k, v in A2C().get_params().items()
                            if k not in ("verbose", "random_state", "lr")}}
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
    from sklearn_papers.reproduce._parallel import worker_cpu_seconds

    cpu = time.process_time() - c0 + worker_cpu_seconds()
    rules = {kind: [] for kind in cfg["rules"]}
    for (key_, _, (kind, _, _), _), value in zip(rule_parts, values[:len(rule_parts)]):
        rules[kind].append(value)
    baselines = {name: value for (name, _, _), value in zip(_STOCK, values[len(rule_parts):])}
    result = Result()
    md, _ = _section(result, cfg, baselines, rules, wall, cpu, ctx.records)
    return result.done(md, shortened=PROTOCOL.note(ctx.quick))


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
