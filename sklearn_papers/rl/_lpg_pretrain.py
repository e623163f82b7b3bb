"""Meta-train candidate LPG rules, choose one on held-out environments, write it as a
shipped rule (``sklearn_papers/rl/_pretrained/<name>/``).

Protocol:

1. *Meta-training*: one :class:`LearnedPolicyGradient` fit per seed of ``--seeds`` on
   :func:`widened_grid_world` (a sampler: every agent lifetime draws a fresh 5 x 5 grid
   world), with the settings of :data:`META_SETTINGS` and ``--meta-steps`` meta-gradient
   steps (``--stage train``, one process per call). Each candidate is saved in
   ``--work`` as it finishes (a rerun skips the candidates already there).
2. *Selection*: every candidate trains fresh agents (``lifetime`` updates, the same seeds
   for every candidate) on :data:`N_HELD_OUT` held-out draws of the widened distribution
   whose lakes all slip sideways two times in three. That dynamics is never meta-trained
   on, and none of these environments is an evaluation environment. Each environment's
   lifetime return is divided by the largest ``|return|`` any candidate reached there;
   the candidate with the largest mean is shipped.

Run ``python -m sklearn_papers.rl._lpg_pretrain --help``; ``benchmarks/bench_lpg_pretrained.py``
evaluates the shipped rule against A2C and tabular Q-learning.
"""

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = []

#: Meta-training settings of every candidate (the ``lpg_stock`` experiment's rule).
META_SETTINGS = dict(lifetime=500, n_agents=32, max_meta_steps=2000, discount=0.99,
                     reward_scaling="max_abs", center_policy_target=True)
#: Held-out selection: lakes slipping sideways with probability 2/3.
LAKE_SLIPS = ((2 / 3, True),)
N_HELD_OUT = 32
HELD_OUT_SEED = 2020


def _held_out_envs():
    from sklearn_papers.rl import widened_grid_world

    rng = np.random.RandomState(HELD_OUT_SEED)
    return [widened_grid_world(rng, lake_slips=LAKE_SLIPS) for _ in range(N_HELD_OUT)]


def meta_train(seeds, work, meta_steps, verbose=1):
    """Fit and save one candidate per seed (skipping those already in ``work``), with
    ``meta_steps`` meta-gradient steps."""
    import torch

    from sklearn_papers.rl import LearnedPolicyGradient, widened_grid_world

    work.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        path = work / f"seed={seed}.pt"
        if path.exists():
            continue
        t0 = time.process_time()
        est = LearnedPolicyGradient(**{**META_SETTINGS, "max_meta_steps": meta_steps},
                                    random_state=seed, verbose=verbose)
        est.fit(widened_grid_world)
        cpu = time.process_time() - t0
        est.verbose = 0
        tmp = work / f"seed={seed}.tmp.pt"
        est.save(tmp)
        tmp.rename(path)
        (work / f"seed={seed}.json").write_text(json.dumps(
            {"seed": seed, "meta_steps": meta_steps, "cpu_seconds": cpu,
             "torch_threads": torch.get_num_threads(),
             "final_training_returns": float(np.mean(est.training_returns_[-32:]))}))
        if verbose:
            print(f"candidate seed={seed}: {cpu:.0f} s CPU", flush=True)


def _held_out_returns(path):
    """Lifetime returns of the candidate ``path``'s fresh agents on the held-out
    environments (kept beside it, ``seed=N.held_out.json``, for later selections)."""
    from sklearn_papers.rl import LearnedPolicyGradient

    cache = path.with_suffix(".held_out.json")
    key = {"n": N_HELD_OUT, "seed": HELD_OUT_SEED, "lake_slips": LAKE_SLIPS}
    if cache.exists():
        saved = json.loads(cache.read_text())
        if saved["key"] == json.loads(json.dumps(key)):
            return saved["returns"]
    with warnings.catch_warnings():  # a held-out agent without reward scores 0: expected
        warnings.filterwarnings("ignore", message=".*collected no reward")
        returns = LearnedPolicyGradient.load(path).set_params(verbose=0).lifetime_returns(
            _held_out_envs(), random_state=HELD_OUT_SEED).tolist()
    cache.write_text(json.dumps({"key": key, "returns": returns}))
    return returns


def select(work):
    """Held-out scores of the candidates in ``work``: ``(seeds, scores, returns)``."""
    paths = sorted(work.glob("seed=*[0-9].pt"), key=lambda p: int(p.stem.split("=")[1]))
    seeds = [int(p.stem.split("=")[1]) for p in paths]
    if not seeds:
        raise SystemExit(f"no candidate rules in {work}; run with --stage train first")
    returns = np.array([_held_out_returns(p) for p in paths])
    top = np.abs(returns).max(axis=0)
    scores = np.divide(returns, top, out=np.zeros_like(returns), where=top > 0).mean(axis=1)
    return seeds, scores, returns


def write_shipped(work, out):
    """Select among the candidates and write ``out/rule.pt`` and ``out/config.json``."""
    import sklearn_papers
    import torch

    from sklearn_papers.rl import LearnedPolicyGradient

    seeds, scores, _ = select(work)
    best = int(np.argmax(scores))
    est = LearnedPolicyGradient.load(work / f"seed={seeds[best]}.pt").set_params(verbose=0)
    out.mkdir(parents=True, exist_ok=True)
    est.save(out / "rule.pt")
    runs = [json.loads((work / f"seed={s}.json").read_text()) for s in seeds]
    cpu = [run["cpu_seconds"] for run in runs]
    steps = sorted({run["meta_steps"] for run in runs})
    if len(steps) > 1:
        raise SystemExit(f"the candidates in {work} ran {steps} meta-steps; give them one")
    steps = steps[0]
    config = {
        "format": "sklearn_papers.rl.pretrained", "format_version": 1,
        "params": {k: v for k, v in est.get_params().items()
                   if k not in ("random_state", "verbose", "n_jobs", "device")},
        "provenance": {
            "command": (f"python -m sklearn_papers.rl._lpg_pretrain --meta-steps {steps} "
                        f"--seeds {' '.join(map(str, seeds))}"),
            "meta_training": {"environments": "widened_grid_world (a sampler: a fresh draw "
                              "for every agent lifetime)",
                              "settings": {**META_SETTINGS, "max_meta_steps": steps},
                              "other_parameters": "LearnedPolicyGradient defaults"},
            "candidate_seeds": seeds,
            "selection": {
                "protocol": "the candidate whose fresh agents collect the largest mean "
                            "normalized lifetime return on held-out environments: each "
                            "environment's return divided by the largest |return| any "
                            "candidate reached there",
                "environments": f"{N_HELD_OUT} draws of widened_grid_world(rng, "
                                f"lake_slips=[(2/3, True)]), rng = RandomState("
                                f"{HELD_OUT_SEED}): lakes slipping sideways, never "
                                "meta-trained on and never an evaluation environment",
                "agent_updates": META_SETTINGS["lifetime"],
                "agent_random_state": HELD_OUT_SEED,
                "scores": {str(s): float(v) for s, v in zip(seeds, scores)},
                "selected_seed": seeds[best]},
            "meta_training_cpu_seconds": {str(s): float(c) for s, c in zip(seeds, cpu)},
            "torch_threads": 1, "torch": torch.__version__,
            "sklearn_papers": sklearn_papers.__version__, "python": platform.python_version()},
    }
    (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    return config


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("train", "select", "all"), default="all")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(8)),
                        help="meta-training seeds of the candidates (default 0 to 7)")
    parser.add_argument("--meta-steps", type=int, default=META_SETTINGS["max_meta_steps"])
    parser.add_argument("--work", type=Path, default=Path("lpg_candidates"),
                        help="folder of the candidate rules")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "_pretrained" / "lpg-widened")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.stage in ("train", "all"):
        meta_train(args.seeds, args.work, args.meta_steps)
    if args.stage in ("select", "all"):
        config = write_shipped(args.work, args.out)
        print(json.dumps(config["provenance"]["selection"]["scores"]))


if __name__ == "__main__":
    main()
