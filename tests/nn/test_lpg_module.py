"""LPG torch pieces: the agent update against a hand computation, meta-gradients against
finite differences (float64), the backward LSTM's direction, TD(lambda) returns."""

import numpy as np
import pytest
import torch

from sklearn_papers.nn._lpg import (
    LPGUpdateRule,
    MLPAgentNet,
    TabularAgentNet,
    agent_update,
    lambda_returns,
    linear_values,
    lpg_meta_loss,
    lpg_targets,
    scale_rewards,
)


def _trajectory(gen, B, T, S, A, dtype=torch.float64):
    return {"obs": torch.randint(0, S, (B, T), generator=gen),
            "actions": torch.randint(0, A, (B, T), generator=gen),
            "reward": torch.randn(B, T, generator=gen, dtype=dtype),
            "terminated": torch.rand(B, T, generator=gen) < 0.15,
            "truncated": torch.rand(B, T, generator=gen) < 0.15,
            "next_obs": torch.randint(0, S, (B, T), generator=gen)}


def test_tabular_update_with_fixed_targets_equals_hand_computation():
    gen = torch.Generator().manual_seed(0)
    B, T, S, A, m = 2, 7, 3, 2, 2
    net = TabularAgentNet(S, A, m)
    params = {"logits": torch.randn(B, S, A, generator=gen, dtype=torch.float64),
              "y": torch.randn(B, S, m, generator=gen, dtype=torch.float64)}
    traj = _trajectory(gen, B, T, S, A)
    pi_hat = torch.randn(B, T, generator=gen, dtype=torch.float64)
    y_hat = torch.randn(B, T, m, generator=gen, dtype=torch.float64)
    lr, wy, ent = 0.7, 0.5, 0.1
    new = agent_update(net, params, traj, (pi_hat, y_hat), lr=lr, y_weight=wy, entropy_cost=ent)

    logits, y = params["logits"].numpy().copy(), params["y"].numpy().copy()
    exp_logits, exp_y = logits.copy(), y.copy()
    for b in range(B):
        visits = np.bincount(traj["obs"][b].numpy(), minlength=S)
        for t in range(T):
            s, a = int(traj["obs"][b, t]), int(traj["actions"][b, t])
            n = visits[s]  # tabular agents average each state's gradient over its visits
            z = logits[b, s]
            p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
            # d/dz of log p_a is onehot(a) - p; d/dz of H is -p (log p + H)
            h = -(p * np.log(p)).sum()
            grad_logp = np.eye(A)[a] - p
            grad_h = -p * (np.log(p) + h)
            exp_logits[b, s] += lr / n * (pi_hat[b, t].item() * grad_logp + ent * grad_h)
            exp_y[b, s] += lr / n * wy * (y_hat[b, t].numpy() - y[b, s])
    np.testing.assert_allclose(new["logits"].numpy(), exp_logits, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(new["y"].numpy(), exp_y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("agent", ["tabular", "mlp"])
def test_meta_gradient_equals_finite_differences(agent):
    gen = torch.Generator().manual_seed(1)
    B, T, S, A, m, K = 2, 4, 3, 2, 2, 2
    torch.manual_seed(0)
    rule = LPGUpdateRule(m, hidden_size=5, embed_size=3).double()
    if agent == "tabular":
        net = TabularAgentNet(S, A, m)
        params = {"logits": 0.3 * torch.randn(B, S, A, generator=gen, dtype=torch.float64),
                  "y": 0.3 * torch.randn(B, S, m, generator=gen, dtype=torch.float64)}
    else:
        net = MLPAgentNet(S, A, m, hidden_size=4)
        params = net.init_params(B, generator=gen, dtype=torch.float64)
        params["w2"] = 0.3 * torch.randn(params["w2"].shape, generator=gen, dtype=torch.float64)
    trajs = [_trajectory(gen, B, T, S, A) for _ in range(K + 1)]
    w = torch.randn(B, S, generator=gen, dtype=torch.float64)
    coefs = dict(lr=0.8, y_weight=0.5, discount=0.9, lam=0.8, entropy_policy=0.1,
                 entropy_prediction=0.05, l2_policy=0.01, l2_prediction=0.02)

    def loss():
        return lpg_meta_loss(rule, net, params, lambda k, p: trajs[k], K,
                             lambda o: linear_values(w, o), **coefs)[0]

    rule.zero_grad()
    loss().backward()
    names = [n for n, _ in rule.named_parameters()]
    grads = {n: p.grad.clone() for n, p in rule.named_parameters()}
    assert any(g.abs().max() > 1e-6 for g in grads.values())
    eps = 1e-6
    with torch.no_grad():
        for name in names:
            p = dict(rule.named_parameters())[name]
            flat = p.view(-1)
            for j in torch.randperm(flat.numel(), generator=gen)[:3].tolist():
                old = flat[j].item()
                flat[j] = old + eps
                up = loss().item()
                flat[j] = old - eps
                down = loss().item()
                flat[j] = old
                fd = (up - down) / (2 * eps)
                assert grads[name].view(-1)[j].item() == pytest.approx(fd, rel=1e-5, abs=1e-8), name


def test_rule_is_a_backward_lstm():
    """Changing the last reward changes the targets of every step; changing the first reward
    leaves the later steps' targets alone."""
    torch.manual_seed(0)
    rule = LPGUpdateRule(2, hidden_size=6, embed_size=3)
    B, T = 1, 6
    r, d, pi = torch.zeros(B, T), torch.zeros(B, T), torch.full((B, T), 0.5)
    y = torch.zeros(B, T, 2)
    base, _ = rule(r, d, d, 0.9, pi, y, y)
    r_last = r.clone()
    r_last[0, -1] = 1.0
    r_first = r.clone()
    r_first[0, 0] = 1.0
    last, _ = rule(r_last, d, d, 0.9, pi, y, y)
    first, _ = rule(r_first, d, d, 0.9, pi, y, y)
    assert torch.all((last - base).abs() > 0)
    assert torch.equal(first[0, 1:], base[0, 1:]) and first[0, 0] != base[0, 0]


def test_rule_without_predictions_has_no_y_outputs():
    rule = LPGUpdateRule(0, hidden_size=4)
    pi_hat, y_hat = rule(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 3), 0.99,
                         torch.ones(2, 3))
    assert pi_hat.shape == (2, 3) and y_hat is None
    assert not hasattr(rule, "phi")


def test_lambda_returns_match_a_naive_sum():
    gen = torch.Generator().manual_seed(2)
    r = torch.randn(1, 6, generator=gen, dtype=torch.float64)
    done = torch.zeros(1, 6, dtype=torch.bool)
    done[0, 2] = True
    never = torch.zeros(1, 6, dtype=torch.bool)
    v = torch.randn(1, 6, generator=gen, dtype=torch.float64)
    g, lam = 0.9, 0.7
    out = lambda_returns(r, done, never, v, g, lam)[0]
    # lam = 1 with no bootstrap inside an episode is the discounted sum to the episode end
    mc = lambda_returns(r, done, never, v, g, 1.0)[0]
    assert mc[0].item() == pytest.approx(r[0, 0] + g * r[0, 1] + g * g * r[0, 2])
    assert mc[3].item() == pytest.approx(r[0, 3] + g * r[0, 4] + g**2 * (r[0, 5] + g * v[0, 5]))
    # one-step recursion
    for t in range(5):
        gt = 0.0 if t == 2 else g
        expected = r[0, t] + gt * ((1 - lam) * v[0, t] + lam * out[t + 1])
        assert out[t].item() == pytest.approx(expected.item())


def test_mlp_agents_are_independent_across_the_batch():
    net = MLPAgentNet(5, 3, 2, hidden_size=4)
    params = net.init_params(3, generator=torch.Generator().manual_seed(0))
    obs = torch.randn(3, 7, 5)
    logits, y = net(params, obs)
    one = {k: v[1:2] for k, v in params.items()}
    l1, y1 = net(one, obs[1:2])
    assert torch.allclose(logits[1:2], l1) and torch.allclose(y[1:2], y1)
    assert logits.shape == (3, 7, 3) and y.shape == (3, 7, 2)


def test_lambda_returns_bootstrap_through_a_truncation():
    """At a time limit the return of the state reached is its value: G_t = r_t + g v(s_t+1),
    whatever lambda, and the next step's return (a new episode) does not leak in; at a
    termination nothing follows: G_t = r_t."""
    gen = torch.Generator().manual_seed(3)
    r = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    v = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    cut = torch.zeros(2, 5, dtype=torch.bool)
    cut[:, 2] = True
    never = torch.zeros(2, 5, dtype=torch.bool)
    g = 0.9
    for lam in (0.0, 0.7, 1.0):
        trunc = lambda_returns(r, never, cut, v, g, lam)
        term = lambda_returns(r, cut, never, v, g, lam)
        torch.testing.assert_close(trunc[:, 2], r[:, 2] + g * v[:, 2], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(term[:, 2], r[:, 2], rtol=1e-12, atol=1e-12)
        # the later steps do not see the boundary
        torch.testing.assert_close(trunc[:, 3:], term[:, 3:], rtol=0, atol=0)
    # lambda = 1: the discounted sum of the episode's rewards, then the value at the limit
    mc = lambda_returns(r, never, cut, v, g, 1.0)[0]
    expected = r[0, 0] + g * r[0, 1] + g * g * (r[0, 2] + g * v[0, 2])
    assert mc[0].item() == pytest.approx(expected.item(), rel=1e-12)


def test_the_rule_reads_the_truncation_flag():
    torch.manual_seed(0)
    rule = LPGUpdateRule(2, hidden_size=6, embed_size=3)
    r, zeros, pi = torch.zeros(1, 4), torch.zeros(1, 4), torch.full((1, 4), 0.5)
    y = torch.zeros(1, 4, 2)
    flag = zeros.clone()
    flag[0, 1] = 1.0
    base, _ = rule(r, zeros, zeros, 0.9, pi, y, y)
    term, _ = rule(r, flag, zeros, 0.9, pi, y, y)
    trunc, _ = rule(r, zeros, flag, 0.9, pi, y, y)
    assert not torch.equal(term[0, :2], trunc[0, :2])
    assert not torch.equal(trunc[0, :2], base[0, :2])


def test_scale_rewards_divides_by_each_agents_running_largest_reward():
    scale = torch.zeros(2, dtype=torch.float64)
    traj = {"reward": torch.tensor([[0.0, 0.0], [2.0, -4.0]])}
    scale, out = scale_rewards(traj, scale)
    np.testing.assert_array_equal(scale.numpy(), [0.0, 4.0])
    np.testing.assert_array_equal(out["reward"].numpy(), [[0.0, 0.0], [0.5, -1.0]])
    scale, out = scale_rewards({"reward": torch.tensor([[-3.0, 0.0], [1.0, 0.0]])}, scale)
    np.testing.assert_array_equal(scale.numpy(), [3.0, 4.0])  # a running maximum
    np.testing.assert_array_equal(out["reward"].numpy(), [[-1.0, 0.0], [0.25, 0.0]])
    assert traj["reward"][1, 0] == 2.0  # the caller's trajectory is left as it was


def test_centred_policy_targets_have_zero_mean_over_each_rollout():
    gen = torch.Generator().manual_seed(0)
    B, T, S, A, m = 3, 6, 4, 2, 2
    rule = LPGUpdateRule(m, 8, 4).double()
    net = TabularAgentNet(S, A, m)
    params = {"logits": torch.randn(B, S, A, generator=gen, dtype=torch.float64),
              "y": torch.randn(B, S, m, generator=gen, dtype=torch.float64)}
    traj = _trajectory(gen, B, T, S, A)
    raw, y_hat = lpg_targets(rule, net, params, traj, 0.9)
    centred, y_hat2 = lpg_targets(rule, net, params, traj, 0.9, center=True)
    np.testing.assert_allclose(centred.mean(1).detach().numpy(), 0.0, atol=1e-12)
    np.testing.assert_allclose((raw - centred).std(1).detach().numpy(), 0.0, atol=1e-12)
    torch.testing.assert_close(y_hat, y_hat2)
