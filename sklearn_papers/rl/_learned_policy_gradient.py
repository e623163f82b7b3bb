"""LearnedPolicyGradient: a meta-learned reinforcement-learning update rule (Oh et al. 2020)."""

import copy
import json
import warnings
from numbers import Integral, Real
from pathlib import Path

import gymnasium
import numpy as np
import torch
from joblib import Parallel, delayed, effective_n_jobs

from sklearn_papers.nn._lpg import (
    LPGUpdateRule,
    linear_values,
    lpg_meta_loss,
    lpg_targets,
    rollout,
    scale_rewards,
    value_update,
)
from sklearn_papers.nn._skorch import check_device, divergence_error, torch_fit, torch_seeded
from sklearn_papers.rl._base import _VALUE_LR, _assign, _BaseRLEstimator, _make_net
from sklearn_papers.rl._batched import GymEnvBatch, _batchable, make_batch
from sklearn_papers.rl._env_checks import check_environment, check_environments
from sklearn_papers.rl._episodes import (
    SCORE_MAX_STEPS,
    _episode_returns,
    check_greedy,
    warn_cut_episodes,
)
from sklearn_papers.utils._seeding import spawn_seeds
from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

__all__ = ["LearnedPolicyGradient"]

_FORMAT = "sklearn_papers.rl.LearnedPolicyGradient/2"
#: Rules shipped with the package (``sklearn_papers/rl/_pretrained/<name>/``: ``rule.pt``
#: written by :meth:`LearnedPolicyGradient.save`, ``config.json`` with its provenance),
#: made by ``python -m sklearn_papers.rl._lpg_pretrain``.
PRETRAINED = ("lpg-widened",)
#: Parameters that decide how the rule reads rewards and shapes targets: meta-training
#: fixes them for the rule (a change after fit warns and is not used).
_RULE_SETTINGS = ("reward_scaling", "center_policy_target")


class _Draws:
    """``draw(n)``: ``n`` environments and their names, from the list ``envs`` (slots
    assigned with ``rng``) or from ``sampler(rng)`` (each draw checked as it comes); an
    object, not a closure, so that it pickles into joblib's workers."""

    def __init__(self, rng, label, sampler, envs):
        self.rng, self.label, self.sampler, self.envs = rng, label, sampler, envs
        self.count = 0

    def __call__(self, n):
        if self.sampler is None:
            idx = _assign(len(self.envs), n, self.rng)
            return [self.envs[i] for i in idx], [f"environments[{i}]" for i in idx]
        out, names = [], []
        for _ in range(n):
            env = self.sampler(self.rng)
            name = f"{self.label} {self.count}"
            check_environment(env, where=name)
            self.count += 1
            out.append(env)
            names.append(name)
        return out, names


def _one_restart(est, k, seed, draw, envs, held_out, held_names, val_seed):
    """Meta-training ``k`` of ``est.fit`` (seeded with ``seed``) and the lifetime returns
    of fresh agents its rule trains on the held-out environments: ``((module_,
    loss_curve_, training_returns_, n_iter_), returns)``. Runs in ``est``'s process or in
    one of joblib's workers."""
    if est.verbose:
        print(f"LearnedPolicyGradient: meta-training {k + 1} of {est.n_restarts}")
    with torch_seeded(seed):
        est._meta_train(est._new_rule(), draw, seed, envs)
    run = (est.module_, est.loss_curve_, est.training_returns_, est.n_iter_)
    return run, est._held_out_returns(held_out, held_names, val_seed)


def _slot_env(env, where, others, *, from_list):
    """The environment an agent's slot steps: a deep copy of one from the user's list (those
    are never stepped), or a sampler's new environment itself unless it already fills
    another slot (``others``), then a copy; a ``ValueError`` naming ``where`` if the copy
    fails."""
    if not from_list and all(o.unwrapped is not env.unwrapped for o in others):
        return env
    try:
        return copy.deepcopy(env)
    except Exception as exc:  # any failure of a user object's __deepcopy__ / pickling
        raise ValueError(
            f"{where} cannot be copied for the agents' slots (copy.deepcopy raised "
            f"{type(exc).__name__}: {exc}); LearnedPolicyGradient gives every agent its own "
            "copy of the environment it draws. Pass a sampler instead, a callable "
            "environments(rng) that makes a new environment on every call.") from exc


def _is_sampler(environments):
    """Whether ``environments`` is a sampler ``environments(rng)``: a callable that is not
    an environment, nor an environment class (its instances are environments; the class
    is refused with a hint by :func:`check_environments`)."""
    if isinstance(environments, type) and issubclass(environments, gymnasium.Env):
        return False
    return callable(environments) and not isinstance(environments, gymnasium.Env)


class LearnedPolicyGradient(_BaseRLEstimator):
    """Learned Policy Gradient (LPG): an update rule meta-learned from a population of agents.

    Read more in the :doc:`user guide </user_guide/environments>` and on the :doc:`paper
    page </papers/lpg>`.

    The agent has a policy ``pi(a|s)`` and a prediction vector ``y(s)`` of width
    ``prediction_size`` whose meaning is not fixed in advance. The update rule is a backward
    LSTM (:class:`sklearn_papers.nn._lpg.LPGUpdateRule`) that reads, for every step of a
    rollout, ``r_t``, the termination flag, the truncation (time-limit) flag, ``gamma``,
    ``pi(a_t|s_t)``, ``phi(y(s_t))`` and ``phi(y(s_t+1))``, and outputs a scalar ``pi_hat_t``
    and a vector ``y_hat_t``. The agent takes one SGD step on ``mean_t[-pi_hat_t log
    pi(a_t|s_t) + prediction_weight ||y(s_t) - y_hat_t||^2 / 2]`` (the paper's agent update,
    with a squared error in place of the KL divergence of a softmax ``y``). The truncation
    flag is not among the paper's inputs: after a time limit the state reached still has a
    future, and the rule can only bootstrap through it if it can tell a time limit from a
    termination.

    :meth:`fit` meta-trains the rule's parameters ``eta``: ``n_agents`` agents, each living
    in an environment drawn from ``environments`` for ``lifetime`` updates (then replaced by
    a fresh agent in a new draw; ages are staggered), are updated ``inner_steps`` times by the
    rule with the computation graph kept; the updated agents' A2C objective on a new rollout
    is then back-propagated through those updates into ``eta``, with the paper's
    stabilisers: entropy bonuses for ``pi`` and ``softmax(y)`` (``entropy_policy``,
    ``entropy_prediction``) and L2 penalties on ``pi_hat`` and ``y_hat`` (``l2_policy``,
    ``l2_prediction``). The meta-objective's baseline is a TD(lambda) value learned beside
    each agent, used only by the meta-gradient.

    Parameters
    ----------
    prediction_size : int, default=8
        ``m``, the width of ``y`` (the paper uses 30); 0 gives the ablation without
        predictions (the rule sees no ``y`` and emits no ``y_hat``).
    hidden_size : int, default=32
        LSTM units of the rule (the paper: 256).
    embedding_size : int, default=8
        Width of the embedding ``phi(y)`` (the paper: 16).
    lifetime : int, default=100
        Agent updates in a lifetime, in meta-training and in :meth:`train_agent` /
        :meth:`score`.
    n_agents : int, default=32
        Agents updated in parallel in meta-training (one environment each).
    inner_steps : int, default=5
        Agent updates unrolled per meta-gradient (the paper: 5).
    rollout_length : int, default=20
        Environment steps per agent update (the paper: 20).
    agent_lr : float, default=2.0
        SGD step size of the agent update (the update averages over the rollout's steps).
    prediction_weight : float, default=0.1
        Weight of the ``y`` loss in the agent update. A tabular ``y(s)`` moves a fraction
        ``agent_lr * prediction_weight`` (0.2 with the defaults) of the way to the mean of
        its targets in the rollout in each update, so ``y`` averages its targets over
        several updates; 0.5 (all the way) learns faster in short meta-trainings but gave
        a less value-like ``y`` (the docs page lists the measurements).
    discount : float, default=0.99
        ``gamma``, an input of the rule and the discount of the meta-objective.
    td_lambda : float, default=0.9
        ``lambda`` of the meta-objective's TD(lambda) advantage.
    meta_lr : float, default=1e-3
        Adam step size of the rule's parameters.
    entropy_policy : float, default=0.01
        Meta-level bonus for the updated agents' policy entropy.
    entropy_prediction : float, default=0.001
        Meta-level bonus for the entropy of ``softmax(y)``.
    l2_policy : float, default=0.001
        Penalty on ``pi_hat^2``.
    l2_prediction : float, default=0.001
        Penalty on ``||y_hat||^2``.
    max_grad_norm : float, default=1.0
        Clip of the meta-gradient's norm.
    max_meta_steps : int, default=600
        Meta-gradient steps of :meth:`fit`. On the package's grid worlds, which are
        stepped together in one tensor operation, about a minute of CPU time with the
        other defaults on one torch thread (``benchmarks/bench_lpg.py`` prints the rate);
        any other gymnasium environment is stepped one at a time through its ``step``,
        many times fewer steps per second (the Benchmarks page), so meta-training on it
        takes two or more times longer.
    n_restarts : int, default=1
        Independent meta-trainings; the rule whose fresh agents collect the most reward
        on held-out environments is kept. Meta-training is chaotic: rules of different
        seeds (and of one seed on two hosts, whose floating-point kernels round
        differently) can differ widely on environments never meta-trained on. The
        held-out score removes rules that fail outright, but ranks the others only
        loosely in the order of their scores on unseen environments (the ``lpg_stock``
        experiment's docs page gives the measurements). The
        held-out environments are ``n_agents`` fresh draws of a sampler (never used in
        meta-training; an object it returns again is copied), or copies of the objects of
        the list ``environments`` (each object once; the objects are never stepped); each
        rule trains one agent per environment for ``lifetime`` updates (the same seeds for
        every rule), each environment's lifetime return is divided by the largest
        ``|return|`` any rule reached there (so every environment counts alike, whatever
        its reward unit), and the rule with the largest mean is kept. The first
        meta-training is the one ``n_restarts=1`` gives (for a sampler, when it draws
        from the ``rng`` it is given: the held-out draws come first, from a generator of
        their own). Costs ``n_restarts`` meta-trainings.
    reward_scaling : {"none", "max_abs"}, default="none"
        What the rule reads as ``r_t``. ``"none"``: the environment's reward.
        ``"max_abs"``: every agent's rewards divided by the largest ``|r|`` that agent
        has met so far in its lifetime (this rollout included; rewards pass unchanged
        while all have been 0), so the rule's reward input lies in ``[-1, 1]`` whatever
        the environment's reward unit, and a rule meta-trained on rewards of one size
        applies to rewards of any other. The same scaling is applied in meta-training
        (also to the meta-objective, so environments of large rewards do not dominate
        the meta-gradient) and whenever the rule trains an agent; lifetime returns and
        evaluation returns are always in the environment's own reward. The fitted rule
        keeps the value of ``fit``: set after ``fit`` (or on a loaded rule), it changes
        nothing until the next ``fit`` (a ``UserWarning`` says so when the rule is used).
    center_policy_target : bool, default=False
        Subtract from ``pi_hat`` its mean over each agent's rollout before the agent
        update, in meta-training and whenever the rule trains an agent (a baseline, as
        A2C's advantages are centred): the rule can then only move probability between
        the actions of a rollout, and a rule whose ``pi_hat`` leans positive where no
        reward comes cannot make an agent's policy deterministic before it found one.
        Needs ``rollout_length >= 2`` (over one step the centred target is 0; a
        ``ValueError`` says so when training starts). Kept from ``fit`` as
        ``reward_scaling`` is.
    agent : {"auto", "tabular", "mlp"}, default="auto"
        ``"auto"``: tabular agents for ``Discrete`` observations, MLP agents for 1-D ``Box``.
    agent_hidden_size : int, default=32
        Hidden units of the MLP agent.
    n_jobs : int or None, default=None
        Worker processes (joblib) running the ``n_restarts`` meta-trainings side by side;
        None: one after another in this process; -1: one per CPU. Each meta-training is
        seeded on its own, so the kept rule is the one ``n_jobs=None`` keeps (up to the
        rounding of floating-point kernels run on other thread counts); the environments,
        or the sampler, are pickled into every worker (``cloudpickle``: lambdas work).
        No effect with ``n_restarts=1``.
    device : str, default="cpu"
        Torch device (validated; the rule and agents are small and run on CPU).
    random_state : int, RandomState instance or None, default=None
        Seeds the rule's initialisation, environment draws, action sampling and the
        environments' randomness; the global RNGs are left untouched.
    verbose : int, default=0
        1 shows a progress bar with the meta-loss and recent lifetime returns.
    pretrained : str or None, default=None
        The name of a rule shipped with the package: ``"lpg-widened"`` (the environments
        page of the user guide gives how it was made and its scores). :meth:`fit` then
        loads it, offline, and meta-trains nothing
        (its ``environments`` are not used and may be None); :meth:`train_agent`,
        :meth:`score` and :meth:`lifetime_returns` train agents with it. The rule brings
        its architecture and input pipeline (``prediction_size``, ``hidden_size``,
        ``embedding_size``, ``reward_scaling``, ``center_policy_target``): other values
        set here are not used (``fit`` warns). The agents' parameters (``agent_lr``,
        ``lifetime``, ``rollout_length``, ``discount``) are this estimator's.
        ``pretrained_config_`` holds the rule's provenance: the command that made it,
        its meta-training settings and seeds, and how it was chosen.

    Attributes
    ----------
    module_ : sklearn_papers.nn._lpg.LPGUpdateRule
        The meta-trained update rule (float32, CPU); the estimator trains it with its own
        meta-gradient loop, so it keeps the module itself (no skorch ``net_``).
    loss_curve_ : list of float
        Meta-loss at every meta-step.
    training_returns_ : ndarray of shape (n_finished,)
        Lifetime returns of the agents whose lifetime ended during meta-training, in order.
    n_iter_ : int
        Meta-steps run (by the kept rule).
    restart_scores_ : ndarray of shape (n_restarts,) or None
        Held-out score of each meta-training (see ``n_restarts``): the mean over the
        held-out environments of its lifetime return divided by the largest ``|return|``
        any meta-training reached there, between -1 and 1 and comparable only between the
        restarts of one fit; None when ``n_restarts=1``. When every restart's agents
        collect the same returns there, the scores are equal, restart 0 is kept and
        ``fit`` warns.
    best_restart_ : int
        Index of the kept meta-training (0 when ``n_restarts=1``).
    pretrained_config_ : dict or None
        With ``pretrained``: the shipped rule's ``config.json`` (parameters and
        provenance); None otherwise.

    See Also
    --------
    A2C : The hand-designed baseline in the same API.

    Notes
    -----
    :meth:`save` writes one file read back by :meth:`load` with
    ``torch.load(weights_only=True)`` (no pickled code, only tensors, strings and ints): a
    dict ``{"format": str, "config": JSON string of the estimator's parameters,
    "state_dict": the rule's tensors}``, with ``"restart_scores"`` (a float64 tensor) and
    ``"best_restart"`` (an int) when the rule was kept from ``n_restarts > 1``.

    References
    ----------
    .. [1] Oh, J., Hessel, M., Czarnecki, W. M., Xu, Z., van Hasselt, H., Singh, S. and
       Silver, D. (2020). Discovering reinforcement learning algorithms. NeurIPS 33,
       Sec. 3 (the rule, the agent update and the meta-gradient). :doi:`10.48550/arXiv.2007.08794`

    Examples
    --------
    >>> from sklearn_papers.rl import LearnedPolicyGradient, sample_grid_worlds
    >>> train = sample_grid_worlds(4, random_state=0)
    >>> lpg = LearnedPolicyGradient(n_agents=4, lifetime=10, max_meta_steps=2,
    ...                             random_state=0).fit(train)
    >>> agent = lpg.train_agent(train[0], n_updates=5)
    >>> agent.predict_values([0, 1]).shape
    (2, 8)
    """

    _parameter_constraints = {
        **_BaseRLEstimator._parameter_constraints,
        "prediction_size": [Interval(Integral, 0, None, closed="left")],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "embedding_size": [Interval(Integral, 1, None, closed="left")],
        "n_agents": [Interval(Integral, 1, None, closed="left")],
        "inner_steps": [Interval(Integral, 1, None, closed="left")],
        "agent_lr": [Interval(Real, 0, None, closed="neither")],
        "prediction_weight": [Interval(Real, 0, None, closed="left")],
        "td_lambda": [Interval(Real, 0, 1, closed="both")],
        "meta_lr": [Interval(Real, 0, None, closed="neither")],
        "entropy_policy": [Interval(Real, 0, None, closed="left")],
        "entropy_prediction": [Interval(Real, 0, None, closed="left")],
        "l2_policy": [Interval(Real, 0, None, closed="left")],
        "l2_prediction": [Interval(Real, 0, None, closed="left")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "max_meta_steps": [Interval(Integral, 0, None, closed="left")],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "reward_scaling": [StrOptions({"none", "max_abs"})],
        "center_policy_target": ["boolean"],
        "n_jobs": [None, Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right")],  # joblib: not 0
        "pretrained": [None, str],
    }

    def __init__(self, *, prediction_size=8, hidden_size=32, embedding_size=8, lifetime=100,
                 n_agents=32, inner_steps=5, rollout_length=20, agent_lr=2.0,
                 prediction_weight=0.1, discount=0.99, td_lambda=0.9, meta_lr=1e-3,
                 entropy_policy=0.01, entropy_prediction=0.001, l2_policy=0.001,
                 l2_prediction=0.001, max_grad_norm=1.0, max_meta_steps=600, n_restarts=1,
                 reward_scaling="none", center_policy_target=False, agent="auto",
                 agent_hidden_size=32, n_jobs=None, device="cpu", random_state=None,
                 verbose=0, pretrained=None):
        self.prediction_size = prediction_size
        self.hidden_size = hidden_size
        self.embedding_size = embedding_size
        self.lifetime = lifetime
        self.n_agents = n_agents
        self.inner_steps = inner_steps
        self.rollout_length = rollout_length
        self.agent_lr = agent_lr
        self.prediction_weight = prediction_weight
        self.discount = discount
        self.td_lambda = td_lambda
        self.meta_lr = meta_lr
        self.entropy_policy = entropy_policy
        self.entropy_prediction = entropy_prediction
        self.l2_policy = l2_policy
        self.l2_prediction = l2_prediction
        self.max_grad_norm = max_grad_norm
        self.max_meta_steps = max_meta_steps
        self.n_restarts = n_restarts
        self.reward_scaling = reward_scaling
        self.center_policy_target = center_policy_target
        self.agent = agent
        self.agent_hidden_size = agent_hidden_size
        self.n_jobs = n_jobs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.pretrained = pretrained

    # --- hooks of _BaseRLEstimator
    def _prediction_size(self):
        rule = getattr(self, "module_", None)
        return self.prediction_size if rule is None else rule.prediction_size

    def _targets(self, net, params, traj):
        return lpg_targets(self.module_, net, params, traj, self.discount,
                           center=self._rule_settings()["center_policy_target"])

    def _update_kwargs(self, net=None):
        return dict(lr=self.agent_lr, y_weight=self.prediction_weight)

    def _scales_rewards(self):
        return self._rule_settings()["reward_scaling"] == "max_abs"

    def _rule_settings(self):
        """``reward_scaling`` and ``center_policy_target`` as the rule uses them: the
        values it was meta-trained with once fitted (or loaded), the current ones before."""
        pinned = getattr(self, "_fit_rule_settings", None)
        if pinned is not None:
            return pinned
        return {name: getattr(self, name) for name in _RULE_SETTINGS}

    def _check_rollout_params(self):
        if self._rule_settings()["center_policy_target"] and self.rollout_length == 1:
            # pi_hat minus its mean over a rollout of one step is 0
            raise ValueError(
                "center_policy_target=True subtracts from pi_hat its mean over each "
                "rollout; with rollout_length=1 the policy target is 0 at every step and "
                "the agents' policies never learn (in meta-training nor after). Use "
                "rollout_length >= 2 (the default is 20), or center_policy_target=False.")

    def _check_ready(self):
        check_is_fitted(self, "module_")
        # parameters set after fit (agent_lr, lifetime, ...) are read here: check them
        self._validate_params()
        pinned = self._rule_settings()
        if self.pretrained is not None and getattr(self, "pretrained_config_", None):
            return  # the shipped rule's settings; fit said which values it does not use
        changed = [name for name in _RULE_SETTINGS if getattr(self, name) != pinned[name]]
        if changed:
            what = "; ".join(f"{name}={pinned[name]!r} in fit, {name}="
                             f"{getattr(self, name)!r} now" for name in changed)
            warnings.warn(
                f"{type(self).__name__}'s rule keeps the settings it was meta-trained with "
                f"({what}): it learned to read rewards and to shape policy targets that "
                "way, and a value set after fit changes nothing until the next fit. Fit "
                "again to meta-train a rule with the new value.", UserWarning, stacklevel=3)

    def _new_rule(self):
        return LPGUpdateRule(self.prediction_size, self.hidden_size, self.embedding_size)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, environments=None, y=None, *, restart_environments=None):
        """Meta-train the update rule on a list or a sampler of environments.

        With ``pretrained``, load the shipped rule instead (nothing is meta-trained and
        ``environments`` is not used).

        Parameters
        ----------
        environments : list of gymnasium.Env, gymnasium.vector.SyncVectorEnv, callable or None
            Meta-training environments (e.g. from :func:`sample_grid_worlds`); every new
            agent lifetime draws one. A callable ``environments(rng)`` taking a
            ``numpy.random.RandomState`` and returning an environment is a sampler, called
            for every new lifetime. All must share the action count and observation kind
            and width; tabular agents are sized for the largest ``Discrete`` space of a
            list, or of a sampler's first ``n_agents`` draws (a later, larger draw raises).
            The package's grid worlds (one size) and chains (one length) run in a batched
            core that only reads their parameters; any other environment is deep-copied
            (``copy.deepcopy``) for every agent slot it is drawn for, so one environment can
            serve all ``n_agents`` agents and the objects in the list are never stepped; a
            sampler's environments are stepped as they are, and copied only when the
            sampler returns an object that already fills another slot.
        y : None
            Ignored.
        restart_environments : list of gymnasium.Env, or callable, default=None
            With ``n_restarts > 1``: the held-out environments that choose among the
            meta-trainings, in place of those taken from ``environments`` (``n_agents``
            draws of a sampler, or copies of a list's objects, as described there), e.g.
            a sampler of the kind of dynamics the rule must handle without being trained
            on them directly. Never used in meta-training. Like ``environments``, they
            share one action count and observation kind and width among themselves (one
            batch of agents); their sizes may differ from the meta-training
            environments', as the rule reads no state or action count.

        Returns
        -------
        self : LearnedPolicyGradient
            Fitted estimator.

        Raises
        ------
        TypeError, ValueError
            If an environment is not a gymnasium environment with ``Discrete`` actions and
            ``Discrete`` or 1-D ``Box`` observations, does not fit the agents' sizes, cannot
            be deep-copied, or returns a non-finite reward, a non-finite ``Box``
            observation or an observation outside its ``Discrete`` space (the message
            names ``environments[i]`` or ``restart_environments[i]``, or the sampler's
            draw); or if ``restart_environments`` is given with ``n_restarts=1``; or
            if ``environments`` is None without ``pretrained``, ``pretrained`` names no
            shipped rule, or ``restart_environments`` is given with ``pretrained``.
        FloatingPointError
            If the meta-loss becomes non-finite.

        Warns
        -----
        UserWarning
            With ``n_restarts > 1``, if the held-out environments cannot tell the
            meta-trainings apart (every one's agents collect the same lifetime returns
            there): restart 0 is kept. With ``pretrained``, if an architecture or
            input-pipeline parameter is set to a value the shipped rule does not use.
        """
        if self.pretrained is not None:
            check_device(self.device)
            return self._load_pretrained(restart_environments)
        if environments is None:
            raise ValueError("fit needs environments to meta-train the rule on (a list of "
                             "gymnasium environments or a sampler), or pretrained="
                             f"{PRETRAINED[0]!r} to load a shipped rule.")
        with torch_fit(self) as run:
            return self._fit(environments, run.seed, restart_environments)

    def _fit(self, environments, seed, restart_environments):
        # the rule keeps these for good: later set_params changes warn (_check_ready)
        self._fit_rule_settings = {name: getattr(self, name) for name in _RULE_SETTINGS}
        self._check_rollout_params()
        if restart_environments is not None and self.n_restarts == 1:
            raise ValueError(
                "restart_environments choose among the meta-trainings of n_restarts > 1; "
                "with n_restarts=1 there is nothing to choose. Set n_restarts (e.g. 3) or "
                "leave restart_environments out.")
        envs = sampler = None
        if _is_sampler(environments):
            sampler = environments
        else:
            envs = check_environments(environments, allow_aliases=True)

        def make_draw(rng, label="environments(rng) draw", sampler=sampler):
            return _Draws(rng, label, sampler, envs)

        if self.n_restarts == 1:
            with torch_seeded(seed):
                self._meta_train(self._new_rule(), make_draw(np.random.RandomState(seed)),
                                 seed, envs)
            self.restart_scores_, self.best_restart_ = None, 0
            self.pretrained_config_ = None
            return self
        # restart 0 is the meta-training of n_restarts=1; the other restarts and the
        # held-out environments get sub-seeds of their own
        subs = spawn_seeds(seed, self.n_restarts + 1)
        seeds, val_seed = [seed, *subs[1:self.n_restarts]], subs[self.n_restarts]
        # the held-out environments get their own objects, as the agents' slots do in
        # meta-training: copies of the list's objects (each object once; a list may name
        # one twice), or a sampler's draws, copied where one returns an object again
        held_out = []
        held_sampler, held_envs, held_label = sampler, envs, "environments"
        if restart_environments is not None:
            held_label = "restart_environments"
            if _is_sampler(restart_environments):
                held_sampler, held_envs = restart_environments, None
            else:
                held_sampler = None
                held_envs = check_environments(restart_environments, allow_aliases=True,
                                               name="restart_environments")
        if held_sampler is None:
            firsts = {}
            for i, env in enumerate(held_envs):
                firsts.setdefault(id(env), (env, f"{held_label}[{i}]"))
            held_names = [name for _, name in firsts.values()]
            for env, name in firsts.values():
                held_out.append(_slot_env(env, name, held_out, from_list=True))
        else:
            draws, held_names = make_draw(np.random.RandomState(val_seed),
                                          f"held-out {held_label}(rng) draw",
                                          sampler=held_sampler)(self.n_agents)
            # one batch of agents, as a list's held-out environments are
            check_environments(draws, f"held-out {held_label}(rng)", allow_aliases=True)
            for env, name in zip(draws, held_names):
                held_out.append(_slot_env(env, name, held_out, from_list=False))
        if self.verbose and self.n_jobs not in (None, 1):
            print(f"LearnedPolicyGradient: {self.n_restarts} meta-trainings on "
                  f"{effective_n_jobs(self.n_jobs)} worker processes")
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_one_restart)(self, k, s, make_draw(np.random.RandomState(s)), envs,
                                  held_out, held_names, val_seed)
            for k, s in enumerate(seeds))
        runs = [run for run, _ in results]
        returns = [ret for _, ret in results]
        returns = np.asarray(returns, dtype=np.float64)
        top = np.abs(returns).max(axis=0)
        scores = np.divide(returns, top, out=np.zeros_like(returns),
                           where=top > 0).mean(axis=1)
        best = int(np.argmax(scores))
        if np.all(returns == returns[0]):
            warnings.warn(
                f"The {self.n_restarts} meta-trainings' agents collected the same lifetime "
                f"return on every held-out environment ({held_label}), so their "
                f"restart_scores_ are equal and restart 0 was kept: those environments "
                f"cannot tell the rules apart (no agent met a reward within its lifetime, "
                f"or every step pays the same reward, as in CartPole-v1). Pass "
                f"restart_environments on which the rules' agents differ, or a longer "
                f"lifetime.", UserWarning, stacklevel=4)
        self.module_, self.loss_curve_, self.training_returns_, self.n_iter_ = runs[best]
        self.restart_scores_, self.best_restart_ = scores, best
        self.pretrained_config_ = None
        return self

    def _load_pretrained(self, restart_environments):
        """``fit`` with ``pretrained``: the shipped rule, its settings and provenance."""
        if restart_environments is not None:
            raise ValueError("restart_environments choose among meta-trainings; with "
                             f"pretrained={self.pretrained!r} fit meta-trains nothing. "
                             "Leave restart_environments out.")
        if self.pretrained not in PRETRAINED:
            raise ValueError(f"pretrained={self.pretrained!r} is not a rule shipped with "
                             f"the package; the shipped rules are {list(PRETRAINED)}.")
        from importlib.resources import files

        folder = Path(str(files("sklearn_papers.rl") / "_pretrained" / self.pretrained))
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        rule = type(self).load(folder / "rule.pt")
        defaults = type(self)().get_params()
        ignored = [f"{name}={getattr(self, name)!r} (the rule's: {config['params'][name]!r})"
                   for name in _RULE_SETTINGS + ("prediction_size", "hidden_size",
                                                 "embedding_size")
                   if getattr(self, name) != defaults[name]
                   and getattr(self, name) != config["params"][name]]
        if ignored:
            warnings.warn(f"pretrained={self.pretrained!r} brings its own architecture and "
                          f"input pipeline; {', '.join(ignored)} not used.", UserWarning,
                          stacklevel=3)
        self._fit_rule_settings = dict(rule._fit_rule_settings)
        self.module_ = rule.module_
        self.loss_curve_, self.training_returns_, self.n_iter_ = [], np.zeros(0), 0
        self.restart_scores_, self.best_restart_ = None, 0
        self.pretrained_config_ = config
        return self

    def _held_out_returns(self, envs, names, seed):
        """Lifetime returns of fresh agents trained by the current rule on the held-out
        environments (errors name ``names[i]``: the user's list item or sampler draw)."""
        with torch_seeded(seed):
            _, returns = self._train_agents(envs, self.lifetime, seed, desc="agents",
                                            names=names, warn_idle=False)
        return returns

    def _meta_train(self, rule, draw, seed, envs=None):
        gen_seed, env_seed = spawn_seeds(seed, 2)
        gen = torch.Generator().manual_seed(gen_seed)
        first, names = draw(self.n_agents)
        if envs is None:  # a sampler: its first draws must agree with each other
            check_environments(first, "environments(rng)", allow_aliases=True)
        # every agent steps its own copy of an environment the loop core steps in place
        # (two agents on one object would interrupt each other's episodes); the batched
        # cores only read the environments' parameters
        loop = _batchable(list(first) + list(envs or [])) is None
        slots = first
        if loop:
            slots = []
            for env, name in zip(first, names):
                slots.append(_slot_env(env, name, slots, from_list=envs is not None))
        core = make_batch(slots, generator=gen, seed=env_seed, names=names,
                          compatible_with=envs or ())
        net = _make_net(core, self.agent, self.prediction_size, self.agent_hidden_size)
        params = net.init_params(self.n_agents, generator=gen)
        d = getattr(net, "n_inputs", None) or net.n_states
        value_w = torch.zeros(self.n_agents, d)
        running = torch.zeros(self.n_agents, dtype=torch.float64)
        age = torch.as_tensor([(i * self.lifetime) // self.n_agents
                               for i in range(self.n_agents)])
        opt = torch.optim.Adam(rule.parameters(), lr=self.meta_lr)
        losses, finished = [], []
        state = {"value_w": value_w,
                 "scale": torch.zeros(self.n_agents, dtype=torch.float64)}

        def trajectory(k, p):
            traj = rollout(core, net, p, self.rollout_length, gen)
            running.add_(traj["reward"].sum(1).to(torch.float64))
            if self._scales_rewards():
                state["scale"], traj = scale_rewards(traj, state["scale"])
            state["value_w"] = value_update(state["value_w"], traj, self.discount,
                                            self.td_lambda, _VALUE_LR)
            return traj

        def values(obs):
            return linear_values(state["value_w"], obs)

        coefs = dict(lr=self.agent_lr, y_weight=self.prediction_weight,
                     discount=self.discount, lam=self.td_lambda,
                     entropy_policy=self.entropy_policy,
                     entropy_prediction=self.entropy_prediction, l2_policy=self.l2_policy,
                     l2_prediction=self.l2_prediction,
                     center=self._fit_rule_settings["center_policy_target"])
        steps = range(self.max_meta_steps)
        bar = None
        if self.verbose:
            from tqdm.auto import tqdm

            steps = bar = tqdm(steps, desc="LPG meta-training", leave=False)
        for step in steps:
            loss, new_params = lpg_meta_loss(rule, net, params, trajectory, self.inner_steps,
                                             values, **coefs)
            if not torch.isfinite(loss):
                raise divergence_error(
                    type(self).__name__, loss.item(), f"meta-step {step + 1}",
                    f"lower meta_lr={self.meta_lr!r} or agent_lr={self.agent_lr!r}.")
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(rule.parameters(), self.max_grad_norm)
            opt.step()
            losses.append(float(loss.detach()))
            params = {k: v.detach() for k, v in new_params.items()}
            age += self.inner_steps
            ended = torch.nonzero(age >= self.lifetime)[:, 0].tolist()
            if ended:
                fresh = net.init_params(len(ended), generator=gen)
                new_envs, new_names = draw(len(ended))
                for env, name in zip(new_envs, new_names):
                    core.check_fits(env, name)
                params = {k: v.clone() for k, v in params.items()}
                for j, i in enumerate(ended):
                    finished.append(float(running[i]))
                    running[i] = 0.0
                    age[i] = 0
                    state["value_w"][i] = 0.0
                    state["scale"][i] = 0.0
                    for k in params:
                        params[k][i] = fresh[k][j]
                    if isinstance(core, GymEnvBatch):
                        others = core.envs[:i] + core.envs[i + 1:]
                        core.set_env(i, _slot_env(new_envs[j], new_names[j], others,
                                                  from_list=envs is not None),
                                     name=new_names[j])
                    else:
                        core.set_env(i, new_envs[j])
            if bar is not None and step % 10 == 0:
                recent = np.mean(finished[-self.n_agents:]) if finished else float("nan")
                bar.set_postfix(meta_loss=f"{losses[-1]:.3f}", lifetime_return=f"{recent:.2f}")
        rule.eval()
        for p in rule.parameters():
            p.requires_grad_(False)
        self.module_ = rule
        self.loss_curve_ = losses
        self.training_returns_ = np.asarray(finished, dtype=np.float64)
        self.n_iter_ = len(losses)

    def score(self, environments, y=None, *, n_episodes=None, greedy=True):
        """Mean lifetime return, or episode return, of fresh agents trained by the rule.

        The fitted object is the update rule, so it is scored by the agents it trains: one
        fresh agent per environment learns with the rule for ``lifetime`` updates of
        ``rollout_length`` steps. By default the score is the paper's metric, their
        lifetime return, the sum of every reward each agent collected while learning (Oh
        et al. 2020, Sec. 3). With ``n_episodes``, each trained agent then plays
        ``n_episodes`` whole episodes in its environment without learning (as
        :func:`evaluate_policy`, cut at 1000 steps with a warning) and the score is the
        mean episode return, comparable with :meth:`A2C.score`.

        Parameters
        ----------
        environments : gymnasium.Env, list of gymnasium.Env or gymnasium.vector.SyncVectorEnv
            Evaluation environments (e.g. held-out grid worlds), each object once.
        y : None
            Ignored (``GridSearchCV`` passes it).
        n_episodes : int or None, default=None
            None: the lifetime return. An int: episodes per trained agent.
        greedy : bool, default=True
            With ``n_episodes``: True, the most probable action; False, actions sampled
            from the policy (seeded by ``random_state``).

        Returns
        -------
        score : float
            Mean lifetime return, or mean episode return; higher is better.

        Raises
        ------
        TypeError, ValueError
            As :meth:`lifetime_returns`; ``n_episodes`` not None or a positive int
            (ValueError), ``greedy`` not a bool (TypeError, also without ``n_episodes``).

        Warns
        -----
        UserWarning
            Once per call, if evaluation episodes were cut at 1000 steps.
        """
        check_greedy(greedy)  # before the agents train (also when n_episodes is None)
        if n_episodes is None:
            return float(np.mean(self.lifetime_returns(environments)))
        if (isinstance(n_episodes, (bool, np.bool_)) or not isinstance(n_episodes, Integral)
                or n_episodes < 1):
            raise ValueError(f"n_episodes must be None (the lifetime return) or a positive "
                             f"int, got {n_episodes!r}")
        self._check_ready()
        envs = self._check_envs(environments)
        with torch_fit(self) as run:
            agents, _ = self._train_agents(envs, self.lifetime, run.seed, desc="agents")
        returns, cut = [], 0
        eval_seeds = spawn_seeds(run.seed, len(envs))
        for i, (agent, env) in enumerate(zip(agents, envs)):
            r, c = _episode_returns(agent, env, n_episodes, greedy=greedy,
                                    max_episode_steps=SCORE_MAX_STEPS,
                                    random_state=eval_seeds[i], where=f"environments[{i}]",
                                    count_cut=True)
            returns.append(r)
            cut += c
        warn_cut_episodes(cut, n_episodes * len(envs), SCORE_MAX_STEPS,
                          "score cuts them there; evaluate_policy(rule.train_agent(env), "
                          "env, max_episode_steps=...) sets the cut")
        return float(np.mean(np.concatenate(returns)))

    # --- persistence
    def _config(self):
        params = self.get_params()
        shipped = getattr(self, "pretrained_config_", None)
        if self.pretrained is not None and shipped:  # the values the shipped rule uses
            params.update({name: shipped["params"][name] for name in _RULE_SETTINGS + (
                "prediction_size", "hidden_size", "embedding_size")})
        if not (params["random_state"] is None or isinstance(params["random_state"], Integral)):
            params["random_state"] = None
        return params

    def save(self, path):
        """Write the learned rule and this estimator's parameters to one safe file.

        Parameters
        ----------
        path : str or path-like
            Target file (``.pt`` by convention).

        Returns
        -------
        path : pathlib.Path
            The written file. It holds ``{"format", "config", "state_dict"}`` and, after
            ``n_restarts > 1``, ``"restart_scores"`` and ``"best_restart"`` (strings,
            tensors and ints only); it is read with ``torch.load(path, weights_only=True)``.

        Raises
        ------
        ValueError
            If ``path`` is a directory or its folder does not exist.
        """
        check_is_fitted(self, "module_")
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{str(path)!r} is a directory; save needs a file path such as "
                             f"{str(path / 'rule.pt')!r}.")
        if not path.parent.is_dir():
            raise ValueError(f"cannot write {str(path)!r}: its folder {str(path.parent)!r} "
                             "does not exist.")
        blob = {"format": _FORMAT, "config": json.dumps(self._config()),
                "state_dict": {k: v.detach().cpu().clone()
                               for k, v in self.module_.state_dict().items()}}
        scores = getattr(self, "restart_scores_", None)
        if scores is not None:
            blob["restart_scores"] = torch.as_tensor(np.asarray(scores, dtype=np.float64))
            blob["best_restart"] = int(self.best_restart_)
        torch.save(blob, path)
        return path

    @classmethod
    def load(cls, path):
        """Read a file written by :meth:`save` (``torch.load(weights_only=True)``).

        Parameters
        ----------
        path : str or path-like
            A file from :meth:`save`.

        Returns
        -------
        estimator : LearnedPolicyGradient
            With the saved parameters, ``module_``, ``restart_scores_`` and
            ``best_restart_`` (``loss_curve_`` and ``training_returns_`` are not saved:
            empty).

        Raises
        ------
        FileNotFoundError
            If there is no file at ``path``.
        ValueError
            If ``path`` is a directory, or the file is not in this format or is damaged
            (not readable by torch, a bad config, weights of other shapes).
        """
        import pickle
        import struct

        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{str(path)!r} is a directory, not a LearnedPolicyGradient "
                             "rule file written by save.")
        if not path.exists():
            raise FileNotFoundError(f"no LearnedPolicyGradient rule file at {str(path)!r}.")
        try:
            blob = torch.load(path, weights_only=True, map_location="cpu")
        except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, KeyError,
                AttributeError, ImportError, IndexError, TypeError, struct.error,
                UnicodeDecodeError, OverflowError, MemoryError) as exc:
            # torch's own text (chained below) may suggest weights_only=False: never here.
            kind = type(exc).__name__ if type(exc).__module__ == "builtins" else (
                f"{type(exc).__module__}.{type(exc).__name__}")
            raise ValueError(f"{str(path)!r} is not a LearnedPolicyGradient rule file "
                             f"that torch can read (format {_FORMAT!r}; torch raised "
                             f"{kind}); it is damaged or of another kind. "
                             "Save the rule again with LearnedPolicyGradient.save.") from exc
        fmt = blob.get("format") if isinstance(blob, dict) else None
        if isinstance(fmt, str) and fmt != _FORMAT and fmt.startswith(_FORMAT.rsplit("/", 1)[0]):
            raise ValueError(f"{str(path)!r} holds a LearnedPolicyGradient rule in format "
                             f"{fmt!r}; this version reads {_FORMAT!r}, whose rule also reads "
                             "the truncation flag (its weights have another shape). Meta-train "
                             "the rule again with fit and save it.")
        if fmt != _FORMAT:
            raise ValueError(f"{str(path)!r} is not a LearnedPolicyGradient rule file (format "
                             f"{_FORMAT!r})")
        try:
            est = cls(**json.loads(blob["config"]))
            est._fit_rule_settings = {name: getattr(est, name) for name in _RULE_SETTINGS}
            est._validate_params()
            with torch_seeded(0):  # initial weights, replaced by the file's below
                rule = est._new_rule()
            rule.load_state_dict(blob["state_dict"])
            scores, best = blob.get("restart_scores"), blob.get("best_restart", 0)
            if scores is not None:
                scores = scores.numpy().astype(np.float64)
                if scores.ndim != 1 or not 0 <= int(best) < scores.shape[0]:
                    raise ValueError(f"restart_scores of shape {tuple(scores.shape)} with "
                                     f"best_restart={best!r}")
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as exc:
            raise ValueError(f"{str(path)!r} is a damaged LearnedPolicyGradient rule file "
                             f"({type(exc).__name__}: {str(exc)[:200]}). Save the rule again "
                             "with LearnedPolicyGradient.save.") from exc
        rule.eval()
        for p in rule.parameters():
            p.requires_grad_(False)
        est.module_ = rule
        est.loss_curve_ = []
        est.training_returns_ = np.zeros(0)
        est.n_iter_ = 0
        est.restart_scores_, est.best_restart_ = scores, int(best)
        est.pretrained_config_ = None
        return est

    def untrained(self, random_state=None):
        """A copy with a freshly initialised, not meta-trained rule (a baseline).

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Seeds the rule's initialisation; this estimator's ``random_state`` when None.

        Returns
        -------
        estimator : LearnedPolicyGradient
            A clone of this estimator's parameters with a random ``module_``.
        """
        from sklearn.base import clone

        est = clone(self)
        with torch_fit(self, random_state=random_state):
            rule = est._new_rule()
        rule.eval()
        for p in rule.parameters():
            p.requires_grad_(False)
        est.module_ = rule
        est.loss_curve_, est.training_returns_, est.n_iter_ = [], np.zeros(0), 0
        est.restart_scores_, est.best_restart_ = None, 0
        est.pretrained_config_ = None
        return est
