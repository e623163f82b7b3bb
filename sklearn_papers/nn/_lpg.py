"""Learned Policy Gradient (Oh et al. 2020): the backward-LSTM update rule and batched agents.

Everything works on a batch of ``B`` independent agents at once: agent parameters are dicts
of tensors whose first dimension is the agent, and trajectories are dicts of ``(B, T, ...)``
tensors. The functions are pure (no global RNG: sampling takes a ``torch.Generator``), so
meta-gradients can be checked against finite differences.

Trajectory dict keys: ``obs`` (long ``(B, T)`` or float ``(B, T, D)``), ``actions`` (long
``(B, T)``), ``reward`` (``(B, T)``), ``terminated`` (bool ``(B, T)``: the environment ended the
episode at this step, so the state reached has no future), ``truncated`` (bool ``(B, T)``: a time
limit cut the episode at this step, so the state reached still has a future, bootstrapped from
its value, while the next step of the trajectory belongs to a new episode), ``next_obs`` (as
``obs``: the observation reached, before any reset). Gymnasium's guide "Handling Time Limits"
explains why the two must not be merged: treating a time limit as termination biases every
value and advantage target toward the truncated sum.
"""

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "LPGUpdateRule",
    "MLPAgentNet",
    "TabularAgentNet",
    "a2c_targets",
    "agent_update",
    "entropy",
    "lambda_returns",
    "linear_values",
    "lpg_meta_loss",
    "lpg_targets",
    "rollout",
    "scale_rewards",
    "value_update",
]


class LPGUpdateRule(nn.Module):
    """The learned update rule: a backward LSTM over a trajectory (Oh et al. 2020, Sec. 3).

    Per step it reads the reward ``r_t``, the termination flag ``d_t`` (the paper's input), the
    truncation flag ``u_t`` (a time limit ended the episode; the state reached keeps its
    value), the discount ``gamma``, the probability ``pi(a_t|s_t)`` of the action taken and an embedding
    ``phi`` of the agent's predictions ``y(s_t)`` and ``y(s_t+1)``; the LSTM runs from the
    last step to the first (so every step sees its future), and linear heads give the
    policy target ``pi_hat_t`` (a scalar) and the prediction target ``y_hat_t`` (a vector).

    Parameters
    ----------
    prediction_size : int
        ``m``, the width of ``y``; 0 builds the ablation without predictions (no ``phi``
        inputs, no ``y_hat``).
    hidden_size : int, default=32
        LSTM units (the paper uses 256).
    embed_size : int, default=8
        Width of ``phi(y)`` (the paper uses 16).
    """

    def __init__(self, prediction_size, hidden_size=32, embed_size=8):
        super().__init__()
        self.prediction_size = int(prediction_size)
        n_in = 5
        if self.prediction_size > 0:
            self.phi = nn.Linear(self.prediction_size, embed_size)
            n_in += 2 * embed_size
        self.lstm = nn.LSTM(n_in, hidden_size, batch_first=True)
        self.head_pi = nn.Linear(hidden_size, 1)
        self.head_y = nn.Linear(hidden_size, max(self.prediction_size, 1))

    def forward(self, reward, terminated, truncated, discount, pi_a, y=None, y_next=None):
        """Targets for a batch of trajectories.

        Parameters
        ----------
        reward, terminated, truncated, pi_a : Tensor of shape (B, T)
            Rewards, termination and truncation flags (0/1) and ``pi(a_t|s_t)``.
        discount : float
            The agent's discount ``gamma``.
        y, y_next : Tensor of shape (B, T, m), optional
            ``y(s_t)`` and ``y(s_t+1)``; ignored when ``prediction_size == 0``.

        Returns
        -------
        pi_hat : Tensor of shape (B, T)
        y_hat : Tensor of shape (B, T, m) or None
        """
        dtype = self.head_pi.weight.dtype
        parts = [reward.to(dtype), terminated.to(dtype), truncated.to(dtype),
                 torch.full_like(reward, discount, dtype=dtype), pi_a.to(dtype)]
        if self.prediction_size > 0:
            parts += [self.phi(y.to(dtype)), self.phi(y_next.to(dtype))]
        x = torch.cat([p if p.dim() == 3 else p[..., None] for p in parts], dim=-1)
        h, _ = self.lstm(torch.flip(x, dims=[1]))
        h = torch.flip(h, dims=[1])
        pi_hat = self.head_pi(h)[..., 0]
        y_hat = self.head_y(h) if self.prediction_size > 0 else None
        return pi_hat, y_hat


class TabularAgentNet(nn.Module):
    """Batched tabular agents: a table of action logits and one of predictions per agent.

    Parameters
    ----------
    n_states, n_actions : int
        Table sizes.
    prediction_size : int
        ``m``, columns of the prediction table (0: none).
    """

    def __init__(self, n_states, n_actions, prediction_size):
        super().__init__()
        self.n_states, self.n_actions = int(n_states), int(n_actions)
        self.prediction_size = int(prediction_size)

    def init_params(self, n_agents, generator=None, dtype=torch.float32):
        """Zero tables ``{"logits": (n, S, A), "y": (n, S, m)}`` (uniform policy, as in the paper's
        tabular agents); ``generator`` is unused."""
        return {"logits": torch.zeros(n_agents, self.n_states, self.n_actions, dtype=dtype),
                "y": torch.zeros(n_agents, self.n_states, self.prediction_size, dtype=dtype)}

    def forward(self, params, obs):
        """Logits ``(B, T, A)`` and predictions ``(B, T, m)`` at long ``obs`` of shape (B, T)."""
        logits = torch.gather(params["logits"], 1, obs[..., None].expand(-1, -1, self.n_actions))
        y = torch.gather(params["y"], 1, obs[..., None].expand(-1, -1, self.prediction_size))
        return logits, y


class MLPAgentNet(nn.Module):
    """Batched one-hidden-layer MLP agents with a policy head and a prediction head.

    Parameters
    ----------
    n_inputs : int
        Observation width ``D`` (long observations are one-hot encoded to ``D``).
    n_actions : int
        Number of actions.
    prediction_size : int
        ``m`` (0: none).
    hidden_size : int, default=32
        Hidden units (tanh).
    """

    def __init__(self, n_inputs, n_actions, prediction_size, hidden_size=32):
        super().__init__()
        self.n_inputs, self.n_actions = int(n_inputs), int(n_actions)
        self.prediction_size, self.hidden_size = int(prediction_size), int(hidden_size)

    def init_params(self, n_agents, generator=None, dtype=torch.float32):
        """LeCun-normal weights, zero biases and a zero output layer (uniform policy, y = 0)."""
        n, d, h = n_agents, self.n_inputs, self.hidden_size
        w1 = torch.randn(n, d, h, generator=generator, dtype=torch.float64) / d ** 0.5
        return {"w1": w1.to(dtype), "b1": torch.zeros(n, 1, h, dtype=dtype),
                "w2": torch.zeros(n, h, self.n_actions + self.prediction_size, dtype=dtype),
                "b2": torch.zeros(n, 1, self.n_actions + self.prediction_size, dtype=dtype)}

    def forward(self, params, obs):
        """Logits ``(B, T, A)`` and predictions ``(B, T, m)`` at ``obs`` (B, T[, D])."""
        if not obs.is_floating_point():
            obs = F.one_hot(obs, self.n_inputs)
        x = obs.to(params["w1"].dtype)
        hidden = torch.tanh(torch.bmm(x, params["w1"]) + params["b1"])
        out = torch.bmm(hidden, params["w2"]) + params["b2"]
        return out[..., :self.n_actions], out[..., self.n_actions:]


def entropy(logits):
    """Entropy of ``softmax(logits)`` along the last axis."""
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1)


@torch.no_grad()
def rollout(core, net, params, length, generator=None):
    """Run every agent ``length`` steps in its slot of a batched core; returns a trajectory.

    Actions are sampled from ``softmax(logits)`` with ``generator``; the core resets finished
    environments itself.
    """
    obs, actions, rewards, terms, truncs, nxt = [], [], [], [], [], []
    for _ in range(length):
        o = core.obs
        logits, _ = net(params, o[:, None])
        probs = F.softmax(logits[:, 0].to(torch.float64), -1)
        if not torch.isfinite(probs).all():
            raise FloatingPointError("the agents' policy became non-finite (their parameters "
                                     "diverged); lower the agent's learning rate")
        a = torch.multinomial(probs, 1, generator=generator)[:, 0]
        o2, r, term, trunc = core.step(a)
        obs.append(o)
        actions.append(a)
        rewards.append(r)
        terms.append(term)
        truncs.append(trunc & ~term)
        nxt.append(o2)
    dtype = next(iter(params.values())).dtype
    return {"obs": torch.stack(obs, 1), "actions": torch.stack(actions, 1),
            "reward": torch.stack(rewards, 1).to(dtype),
            "terminated": torch.stack(terms, 1), "truncated": torch.stack(truncs, 1),
            "next_obs": torch.stack(nxt, 1)}


def scale_rewards(traj, scale):
    """Divide each agent's rewards by the largest ``|r|`` it has seen so far.

    ``scale`` (float64, shape (B,)) is every agent's running maximum of ``|r|`` before this
    trajectory (0: no reward seen yet). Returns ``(new_scale, traj)`` where ``new_scale``
    includes this trajectory's rewards and ``traj`` is a copy whose ``reward`` is divided
    by it (left as it is while ``new_scale`` is 0, i.e. all rewards so far were 0), so
    every scaled reward lies in ``[-1, 1]`` whatever the environment's reward unit.
    """
    reward = traj["reward"]
    new_scale = torch.maximum(scale, reward.detach().abs().amax(1).to(scale.dtype))
    divisor = torch.where(new_scale > 0, new_scale, torch.ones_like(new_scale))
    return new_scale, {**traj, "reward": reward / divisor.to(reward.dtype)[:, None]}


def lambda_returns(reward, terminated, truncated, next_values, discount, lam):
    """TD(lambda) returns, cut at termination and bootstrapped through truncation.

    ``G_t = r_t + g_t ((1 - l_t) v(s_t+1) + l_t G_t+1)`` with ``g_t = discount (1 -
    terminated_t)`` (a terminal state has no future) and ``l_t = lam (1 - truncated_t)``
    (after a time limit the trajectory's next step belongs to a new episode, so the
    return of ``s_t+1`` is its value alone: ``G_t = r_t + discount v(s_t+1)``). After the
    last step ``G_T = v(s_T)``. ``next_values`` are ``v(s_t+1)`` of the observations
    reached (before any reset). All arguments ``(B, T)``; the flags bool or 0/1.
    """
    g = discount * (1.0 - terminated.to(reward.dtype))
    lam_t = lam * (1.0 - truncated.to(reward.dtype))
    out = torch.empty_like(reward)
    nxt = next_values[:, -1]
    for t in range(reward.shape[1] - 1, -1, -1):
        nxt = reward[:, t] + g[:, t] * ((1 - lam_t[:, t]) * next_values[:, t]
                                        + lam_t[:, t] * nxt)
        out[:, t] = nxt
    return out


def _encode(obs, n_inputs, dtype):
    return (F.one_hot(obs, n_inputs) if not obs.is_floating_point() else obs).to(dtype)


def value_update(w, traj, discount, lam, lr):
    """One normalised-LMS TD(lambda) step of linear values ``v(s) = x(s) . w`` (``w`` of shape
    (B, D); ``x`` one-hot for index observations). Returns the new ``w`` (no graph)."""
    with torch.no_grad():
        x, x2 = _encode(traj["obs"], w.shape[1], w.dtype), _encode(traj["next_obs"], w.shape[1],
                                                                 w.dtype)
        v, v2 = (x * w[:, None]).sum(-1), (x2 * w[:, None]).sum(-1)
        target = lambda_returns(traj["reward"], traj["terminated"], traj["truncated"], v2,
                                discount, lam)
        step = ((target - v)[..., None] * x).sum(1) / (x * x).sum(-1).mean(1, keepdim=True)
        return w + lr * step


def linear_values(w, obs):
    """``x(obs) . w`` of shape (B, T)."""
    return (_encode(obs, w.shape[1], w.dtype) * w[:, None]).sum(-1)


def _step_weights(net, obs, dtype):
    """Divisor of every step's gradient: its state's visit count in the rollout for tables
    (each visited entry moves by ``lr`` times its mean gradient), else the length ``T``."""
    if isinstance(net, TabularAgentNet):
        counts = torch.zeros(obs.shape[0], net.n_states, dtype=dtype)
        counts.scatter_add_(1, obs, torch.ones(obs.shape, dtype=dtype))
        return counts.gather(1, obs)[..., None]
    return obs.shape[1]


def agent_update(net, params, traj, targets, *, lr, y_weight=1.0, entropy_cost=0.0,
                 create_graph=False):
    """One agent update (Oh et al. 2020, Sec. 3, with a squared error for ``y``).

    With ``pi_hat_t`` and ``y_hat_t`` taken as fixed targets, every agent descends
    ``L(theta) = mean_t[-pi_hat_t log pi(a_t|s_t) + y_weight ||y(s_t) - y_hat_t||^2 / 2
    - entropy_cost H(pi(.|s_t))]`` by one SGD step of size ``lr``. For tabular agents the
    mean is taken per state (each step's term is divided by its state's visit count in the
    rollout instead of ``T``), so every visited table entry moves by ``lr`` times its mean
    gradient and ``lr * y_weight <= 1`` keeps the prediction step a convex combination. The gradient is formed as
    a vector-Jacobian product of the network outputs, so with ``create_graph=True`` the
    new parameters stay differentiable in the targets (the meta-gradient path), while the
    targets' own dependence on ``theta`` is not part of the agent's gradient.

    Parameters
    ----------
    net : TabularAgentNet or MLPAgentNet
    params : dict of Tensor
        Current parameters (first dimension: agent).
    traj : dict of Tensor
        The trajectory the update learns from.
    targets : (Tensor (B, T), Tensor (B, T, m) or None)
        ``pi_hat`` and ``y_hat``.
    lr, y_weight, entropy_cost : float
        Step size, weight of the prediction loss, entropy bonus (0 for LPG; A2C uses it).
    create_graph : bool, default=False
        Keep the graph through the update (meta-training).

    Returns
    -------
    new_params : dict of Tensor
    """
    pi_hat, y_hat = targets
    with torch.enable_grad():
        leaves = {k: (v if v.requires_grad else v.detach().requires_grad_(True))
                  for k, v in params.items()}
        logits, y = net(leaves, traj["obs"])
        T = _step_weights(net, traj["obs"], logits.dtype)
        probs = F.softmax(logits, -1)
        onehot = F.one_hot(traj["actions"], logits.shape[-1]).to(logits.dtype)
        g_logits = -pi_hat[..., None] * (onehot - probs) / T
        if entropy_cost:
            logp = F.log_softmax(logits, -1)
            h = -(probs * logp).sum(-1, keepdim=True)
            g_logits = g_logits + entropy_cost * probs * (logp + h) / T
        outputs, grads_out = [logits], [g_logits]
        if y_hat is not None and y.shape[-1] > 0:
            outputs.append(y)
            grads_out.append(y_weight * (y - y_hat) / T)
        keys = list(leaves)
        grads = torch.autograd.grad(outputs, [leaves[k] for k in keys], grads_out,
                                    create_graph=create_graph, allow_unused=True)
    new = {}
    for k, g in zip(keys, grads):
        p = params[k] if create_graph else params[k].detach()
        new[k] = p if g is None else p - lr * (g if create_graph else g.detach())
    return new


def lpg_targets(rule, net, params, traj, discount, center=False):
    """``(pi_hat, y_hat)`` of the rule on a trajectory of the agents with ``params``; with
    ``center``, ``pi_hat`` minus its mean over each agent's rollout (a baseline: the policy
    step then moves probability between the rollout's actions instead of raising them all)."""
    logits, y = net(params, traj["obs"])
    _, y_next = net(params, traj["next_obs"])
    pi_a = F.softmax(logits, -1).gather(-1, traj["actions"][..., None])[..., 0]
    pi_hat, y_hat = rule(traj["reward"], traj["terminated"], traj["truncated"], discount,
                         pi_a, y, y_next)
    if center:
        pi_hat = pi_hat - pi_hat.mean(1, keepdim=True)
    return pi_hat, y_hat


def a2c_targets(values, next_values, traj, discount, lam):
    """A2C's targets in the same form: ``pi_hat`` = TD(lambda) advantage, ``y_hat`` = return.

    ``values``/``next_values`` of shape (B, T) are ``v(s_t)``, ``v(s_t+1)``.
    """
    ret = lambda_returns(traj["reward"], traj["terminated"], traj["truncated"], next_values,
                         discount, lam)
    return ret - values, ret[..., None]


def lpg_meta_loss(rule, net, params, trajectory, n_inner, values, *, lr, y_weight, discount,
                  lam, entropy_policy, entropy_prediction, l2_policy, l2_prediction,
                  center=False):
    """The meta-loss of one meta-step: ``n_inner`` rule-driven updates, then A2C's loss.

    The agents start at ``params`` and apply the rule to ``trajectory(k, params_k)`` for
    ``k = 0 .. n_inner - 1`` in turn, keeping the graph; on ``trajectory(n_inner,
    params_K)`` the updated agents' policy-gradient objective (advantage ``G^lambda - v``
    with the baseline values ``values(obs)``, no gradient through them) is maximised together
    with the entropy of ``pi`` and of ``softmax(y)``, while the squares of ``pi_hat`` and
    ``y_hat`` are penalised (Oh et al. 2020, Sec. 3, with the squared error for ``y``).
    During meta-training ``trajectory`` samples with the (detached) agents of that moment; a
    test may return fixed trajectories.

    Returns
    -------
    loss : Tensor (scalar)
        Mean over agents.
    new_params : dict of Tensor
        The updated agents (with graph).
    """
    p = params
    reg = 0.0
    for k in range(n_inner):
        traj = trajectory(k, {name: v.detach() for name, v in p.items()})
        pi_hat, y_hat = lpg_targets(rule, net, p, traj, discount, center=center)
        reg = reg + l2_policy * (pi_hat ** 2).mean()
        if y_hat is not None:
            reg = reg + l2_prediction * (y_hat ** 2).mean()
        p = agent_update(net, p, traj, (pi_hat, y_hat), lr=lr, y_weight=y_weight,
                         create_graph=True)
    reg = reg / max(n_inner, 1)
    meta_traj = trajectory(n_inner, {name: v.detach() for name, v in p.items()})
    logits, y = net(p, meta_traj["obs"])
    with torch.no_grad():
        v = values(meta_traj["obs"]).to(logits.dtype)
        v2 = values(meta_traj["next_obs"]).to(logits.dtype)
        adv = lambda_returns(meta_traj["reward"], meta_traj["terminated"],
                             meta_traj["truncated"], v2, discount, lam) - v
    logp_a = F.log_softmax(logits, -1).gather(-1, meta_traj["actions"][..., None])[..., 0]
    loss = -(logp_a * adv).mean() - entropy_policy * entropy(logits).mean() + reg
    if y.shape[-1] > 0:
        loss = loss - entropy_prediction * entropy(y).mean()
    return loss, p
