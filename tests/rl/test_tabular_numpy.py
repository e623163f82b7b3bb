"""The tabular agents' numpy path against the torch reference of sklearn_papers.nn._lpg."""

import gymnasium
import numpy as np
import pytest
import torch

from sklearn_papers.nn._lpg import (
    TabularAgentNet,
    a2c_targets,
    agent_update,
    lambda_returns,
    value_update,
)
from sklearn_papers.rl import A2C, GymEnvBatch, LearnedPolicyGradient, make_batch
from sklearn_papers.rl._a2c import _standardize
from sklearn_papers.rl._tabular import (
    a2c_update_np,
    lambda_returns_np,
    rollout_np,
    to_torch,
    value_update_np,
)


def _trajectory(rng, B=3, T=12, S=7, A=4):
    term = rng.rand(B, T) < 0.2
    return {"obs": rng.randint(S, size=(B, T)), "actions": rng.randint(A, size=(B, T)),
            "reward": rng.randn(B, T), "terminated": term,
            "truncated": (rng.rand(B, T) < 0.2) & ~term,
            "next_obs": rng.randint(S, size=(B, T))}


def test_lambda_returns_match_torch():
    rng = np.random.RandomState(0)
    traj = _trajectory(rng)
    nv = rng.randn(*traj["reward"].shape)
    ref = lambda_returns(torch.as_tensor(traj["reward"]), torch.as_tensor(traj["terminated"]),
                         torch.as_tensor(traj["truncated"]), torch.as_tensor(nv), 0.9, 0.8)
    got = lambda_returns_np(traj["reward"], traj["terminated"], traj["truncated"], nv, 0.9, 0.8)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("entropy_cost", [0.0, 0.05])
def test_a2c_update_matches_agent_update(normalize, entropy_cost):
    rng = np.random.RandomState(1)
    B, S, A = 3, 7, 4
    traj = _trajectory(rng, B=B, S=S, A=A)
    net = TabularAgentNet(S, A, 1)
    params = {"logits": torch.as_tensor(rng.randn(B, S, A), dtype=torch.float32),
              "y": torch.as_tensor(rng.randn(B, S, 1), dtype=torch.float32)}
    t = to_torch(traj, torch.float32)
    _, y = net(params, t["obs"])
    _, y2 = net(params, t["next_obs"])
    adv, ret = a2c_targets(y[..., 0], y2[..., 0], t, 0.99, 0.9)
    if normalize:
        adv = _standardize(adv)
    ref = agent_update(net, params, t, (adv, ret), lr=0.5, y_weight=0.5,
                       entropy_cost=entropy_cost)
    tables = {k: v.numpy().copy() for k, v in params.items()}
    a2c_update_np(tables["logits"], tables["y"], traj, lr=0.5, y_weight=0.5,
                  entropy_cost=entropy_cost, discount=0.99, lam=0.9,
                  normalize_advantage=normalize)
    for k in tables:
        np.testing.assert_allclose(tables[k], ref[k].numpy(), rtol=1e-4, atol=1e-5)


def test_value_update_matches_torch():
    rng = np.random.RandomState(2)
    traj = _trajectory(rng)
    w = rng.randn(3, 7).astype(np.float32)
    ref = value_update(torch.as_tensor(w), to_torch(traj, torch.float32), 0.99, 0.9, 0.1)
    got = w.copy()
    value_update_np(got, traj, 0.99, 0.9, 0.1)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-4, atol=1e-5)


def test_rollout_np_samples_the_policy():
    """A policy that puts all mass on action 2 takes it; a uniform one covers all actions."""
    env = gymnasium.make("FrozenLake-v1", is_slippery=False)
    core = make_batch([env])
    logits = np.zeros((1, 16, 4), dtype=np.float32)
    logits[..., 2] = 50.0
    traj = rollout_np(core, logits, 6, np.random.default_rng(0))
    assert (traj["actions"] == 2).all()
    np.testing.assert_array_equal(traj["obs"][0, 1:], traj["next_obs"][0, :-1])
    uniform = rollout_np(make_batch([gymnasium.make("FrozenLake-v1")]),
                         np.zeros((1, 16, 4), np.float32), 400, np.random.default_rng(0))
    counts = np.bincount(uniform["actions"].ravel(), minlength=4)
    assert counts.min() > 60  # 100 expected per action


def test_rollout_np_refuses_a_diverged_policy():
    core = GymEnvBatch([gymnasium.make("FrozenLake-v1")])
    with pytest.raises(FloatingPointError, match="non-finite"):
        rollout_np(core, np.full((1, 16, 4), np.nan, np.float32), 3,
                   np.random.default_rng(0))


def test_gym_batch_step_np_matches_step():
    """The numpy and torch steps of one environment batch agree (same seeds)."""
    a = GymEnvBatch([gymnasium.make("FrozenLake-v1") for _ in range(2)], seed=3)
    b = GymEnvBatch([gymnasium.make("FrozenLake-v1") for _ in range(2)], seed=3)
    for t in range(20):
        actions = np.array([t % 4, (t + 1) % 4])
        got, ref = a.step_np(actions), b.step(actions)
        for x, y in zip(got, ref):
            np.testing.assert_array_equal(x, y.numpy())
        np.testing.assert_array_equal(a.obs_np, b.obs.numpy())


def test_fit_warns_when_no_reward_was_met():
    lake = gymnasium.make("FrozenLake-v1", map_name="8x8")
    with pytest.warns(UserWarning, match=r"environments\[0\] \(FrozenLake-v1\) collected no "
                                         r"reward at all in 40 training steps"):
        A2C(lifetime=2, random_state=0).fit(lake)
    rule = LearnedPolicyGradient(n_agents=2, lifetime=4, max_meta_steps=1, prediction_size=2,
                                 hidden_size=4, random_state=0).fit(
        [gymnasium.make("FrozenLake-v1", is_slippery=False)])
    with pytest.warns(UserWarning, match=r"LearnedPolicyGradient: the agent on env "):
        rule.train_agent(gymnasium.make("FrozenLake-v1", map_name="8x8"), n_updates=2)


def test_no_warning_when_rewards_came(recwarn):
    env = gymnasium.make("CliffWalking-v1")  # -1 a step
    A2C(lifetime=2, random_state=0).fit(env)
    assert not [w for w in recwarn if "no reward" in str(w.message)]
