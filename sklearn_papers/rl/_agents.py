"""Trained agents returned by ``train_agent``: tabular and small-MLP policies with predictions."""

import numpy as np
import torch

from sklearn_papers.utils._sklearn_compat import check_array
from sklearn_papers.utils._tensors import tensors_to_numpy

__all__ = ["MLPAgent", "TabularAgent"]


def _check_indices(observations, n_states):
    """Validate 1-D integer state indices in ``[0, n_states)``; return a long tensor."""
    obs = np.asarray(tensors_to_numpy(observations, "observations"))
    if obs.ndim != 1:
        raise ValueError(f"observations must be a 1-D array of state indices, got shape "
                         f"{obs.shape}")
    if obs.size and not np.issubdtype(obs.dtype, np.integer):
        if not np.issubdtype(obs.dtype, np.number) or not np.all(np.mod(obs, 1) == 0):
            raise ValueError("observations must be integer state indices")
    obs = obs.astype(np.int64)
    bad = np.flatnonzero((obs < 0) | (obs >= n_states))
    if bad.size:
        raise ValueError(f"observations[{bad[0]}] = {obs[bad[0]]} is not a state index in "
                         f"[0, {n_states})")
    return torch.as_tensor(obs)


class _Agent:
    """Shared predict / predict_proba / predict_values of the trained agents."""

    def __init__(self, net, params, *, lifetime_return, n_updates, td_values=None):
        self.net = net
        self.params = {k: v.detach().clone() for k, v in params.items()}
        self.lifetime_return_ = float(lifetime_return)
        self.n_updates_ = int(n_updates)
        self.td_values_ = td_values

    @property
    def n_actions(self):
        """Number of actions."""
        return self.net.n_actions

    def _outputs(self, observations):
        obs = self._check_observations(observations)
        with torch.no_grad():
            logits, y = self.net({k: v[None] for k, v in self.params.items()}, obs[None])
        return logits[0].to(torch.float64), y[0].to(torch.float64)

    def predict_proba(self, observations):
        """Action probabilities ``pi(a|s)``.

        Parameters
        ----------
        observations : array-like
            See the class docstring for the shape and dtype.

        Returns
        -------
        proba : ndarray of shape (n_observations, n_actions)
            Rows sum to 1 (float64).
        """
        logits, _ = self._outputs(observations)
        return torch.softmax(logits, -1).numpy()

    def predict(self, observations):
        """Greedy actions ``argmax_a pi(a|s)``.

        Parameters
        ----------
        observations : array-like
            See the class docstring.

        Returns
        -------
        actions : ndarray of shape (n_observations,)
            Action indices (int64).
        """
        return self.predict_proba(observations).argmax(1)

    def predict_values(self, observations):
        """The agent's prediction vector ``y(s)`` (for A2C agents, the value ``v(s)``).

        Parameters
        ----------
        observations : array-like
            See the class docstring.

        Returns
        -------
        y : ndarray of shape (n_observations, prediction_size)
            The predictions (float64).
        """
        _, y = self._outputs(observations)
        return y.numpy()


class TabularAgent(_Agent):
    """A tabular agent: one row of action logits and one of predictions per state.

    Returned by ``train_agent`` of :class:`LearnedPolicyGradient` and :class:`A2C` for
    environments with ``Discrete`` observations.

    Parameters
    ----------
    net : sklearn_papers.nn._lpg.TabularAgentNet
        Table sizes.
    params : dict of Tensor
        ``{"logits": (n_states, n_actions), "y": (n_states, prediction_size)}``.
    lifetime_return : float
        Sum of the rewards collected while training.
    n_updates : int
        Updates it was trained for.
    td_values : ndarray of shape (n_states,), default=None
        A TD(lambda) value of its policy learned alongside (not used by the agent; the
        reproduction compares it with ``y``).

    Attributes
    ----------
    lifetime_return_ : float
        Sum of the rewards collected while training.
    n_updates_ : int
        Agent updates of its lifetime.
    td_values_ : ndarray or None
        TD(lambda) values learned alongside (LPG agents).

    Notes
    -----
    ``observations`` are state indices: int array-like of shape ``(n,)`` in
    ``[0, n_states)``.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33.
       :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import A2C, GridWorld
    >>> agent = A2C(lifetime=20, random_state=0).train_agent(GridWorld(height=3, width=3,
    ...     objects=[(2, 2, 1.0, 1.0, 0.0)]))
    >>> agent.predict_proba([0, 4]).shape
    (2, 4)
    """

    @property
    def n_states(self):
        """Number of states."""
        return self.net.n_states

    def _check_observations(self, observations):
        return _check_indices(observations, self.n_states)


class MLPAgent(_Agent):
    """A small MLP agent (one tanh hidden layer, a policy head and a prediction head).

    Returned by ``train_agent`` for environments with 1-D ``Box`` observations (or with
    ``agent="mlp"``, which one-hot encodes ``Discrete`` ones).

    Parameters
    ----------
    net : sklearn_papers.nn._lpg.MLPAgentNet
        Layer sizes.
    params : dict of Tensor
        ``w1 (D, H), b1 (1, H), w2 (H, A + m), b2 (1, A + m)``.
    lifetime_return : float
        Sum of the rewards collected while training.
    n_updates : int
        Updates it was trained for.
    td_values : ndarray, default=None
        Weights of a linear TD(lambda) value learned alongside (LPG agents).
    discrete_inputs : bool, default=False
        The environment had ``Discrete`` observations (one-hot encoded).

    Attributes
    ----------
    lifetime_return_ : float
        Sum of the rewards collected while training.
    n_updates_ : int
        Agent updates of its lifetime.
    td_values_ : ndarray or None
        Linear TD(lambda) value weights learned alongside (LPG agents).

    Notes
    -----
    ``observations`` are float array-like of shape ``(n, n_inputs)``, or state indices of shape
    ``(n,)`` when the environment had ``Discrete`` observations.

    References
    ----------
    .. [1] Oh, J. et al. (2020). Discovering reinforcement learning algorithms. NeurIPS 33.
       :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import A2C, DelayedChain
    >>> env = DelayedChain(length=3, observation="features")
    >>> agent = A2C(lifetime=10, random_state=0).train_agent(env)
    >>> agent.predict([[1.0, 0, 0, 0, 0]]).shape
    (1,)
    """

    def __init__(self, net, params, *, lifetime_return, n_updates, td_values=None,
                 discrete_inputs=False):
        super().__init__(net, params, lifetime_return=lifetime_return, n_updates=n_updates,
                         td_values=td_values)
        self.discrete_inputs = bool(discrete_inputs)

    def _check_observations(self, observations):
        if self.discrete_inputs:
            return _check_indices(observations, self.net.n_inputs)
        obs = check_array(tensors_to_numpy(observations, "observations"), dtype=np.float32,
                          input_name="observations")
        if obs.shape[1] != self.net.n_inputs:
            raise ValueError(f"observations have {obs.shape[1]} features, the agent expects "
                             f"{self.net.n_inputs}")
        return torch.as_tensor(obs)
