"""Environments the package did not write: time limits, aliasing, bad observations, spaces,
registration with gymnasium, vector environments and evaluation of fitted agents."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from sklearn_papers.rl import A2C, LearnedPolicyGradient

TINY = dict(prediction_size=3, hidden_size=8, embedding_size=4, n_agents=2, lifetime=6,
            inner_steps=2, rollout_length=6, max_meta_steps=3, random_state=0)


class _Endless(gymnasium.Env):
    """One state, two actions, reward 1 on every step; the episode ends after ``limit`` steps
    by truncation (a time limit), by termination, or never (``limit=None``)."""

    def __init__(self, limit=10, terminate=False):
        self.observation_space = spaces.Discrete(1)
        self.action_space = spaces.Discrete(2)
        self.limit, self.terminate = limit, terminate

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        end = self.limit is not None and self.t >= self.limit
        return 0, 1.0, end and self.terminate, end and not self.terminate, {}


@pytest.mark.parametrize("kwargs, low, high", [
    (dict(limit=None), 9.0, 11.0),               # 1 / (1 - 0.9) = 10
    (dict(limit=10), 8.5, 11.0),                 # the clock does not change the state's future
    (dict(limit=10, terminate=True), 0.0, 7.0),  # a real end: the 10-step discounted sum, 6.5
], ids=["no-limit", "time-limit", "termination"])
def test_a2c_bootstraps_values_through_a_time_limit(kwargs, low, high):
    a2c = A2C(lifetime=150, discount=0.9, random_state=0).fit(_Endless(**kwargs))
    value = a2c.agents_[0].predict_values([0])[0, 0]
    assert low <= value <= high, value


def _lake(slippery=False):
    return gymnasium.make("FrozenLake-v1", is_slippery=slippery)


# --- one environment object in two places

def test_a2c_refuses_one_environment_object_in_two_places():
    env = _lake()
    with pytest.raises(ValueError, match=r"environments\[1\] is the same object as "
                                         r"environments\[0\].*copy.deepcopy"):
        A2C(lifetime=2, random_state=0).fit([env, env])
    # two wrappers around one environment are one environment too
    inner = _lake().unwrapped
    wrapped = [gymnasium.wrappers.TimeLimit(inner, 50), gymnasium.wrappers.TimeLimit(inner, 50)]
    with pytest.raises(ValueError, match=r"environments\[1\] wraps the same environment as "
                                         r"environments\[0\]"):
        A2C(lifetime=2, random_state=0).fit(wrapped)
    with pytest.raises(ValueError, match=r"environments\[2\] is the same object"):
        A2C(lifetime=2, random_state=0).lifetime_returns([env, _lake(), env])


def test_a2c_on_separate_copies_learns_as_on_independent_environments():
    a = A2C(lifetime=150, random_state=0).fit([_lake(), _lake()])
    b = A2C(lifetime=150, random_state=0).fit([_lake(), _lake()])
    np.testing.assert_array_equal(a.lifetime_returns_, b.lifetime_returns_)
    # each agent reached the goal many times (a random policy: about 5 times in 3,000 steps;
    # in 1,200 steps about one agent in five never meets the goal and learns nothing)
    assert a.lifetime_returns_.min() > 10


def test_lpg_gives_every_agent_its_own_copy_of_one_environment():
    env = _lake()
    one = LearnedPolicyGradient(**TINY).fit([env])
    two = LearnedPolicyGradient(**TINY).fit([_lake(), _lake()])
    np.testing.assert_allclose(one.loss_curve_, two.loss_curve_, rtol=1e-6)
    assert not hasattr(env.unwrapped, "s") or env.unwrapped.s is None  # never stepped


def test_loop_core_refuses_one_object_in_two_slots():
    from sklearn_papers.rl import GymEnvBatch

    env = _lake()
    with pytest.raises(ValueError, match="batch slots 0 and 1 hold the same environment"):
        GymEnvBatch([env, env])


class _Unpicklable(_Endless):
    def __deepcopy__(self, memo):
        raise TypeError("cannot copy this environment")


def test_lpg_names_an_environment_it_cannot_copy():
    with pytest.raises(ValueError, match=r"environments\[0\] cannot be copied.*sampler"):
        LearnedPolicyGradient(**TINY).fit([_Unpicklable()])
    # a sampler that makes new environments works
    LearnedPolicyGradient(**TINY).fit(lambda rng: _Unpicklable())


# --- observations outside the declared Discrete space

class _Returns(gymnasium.Env):
    """Discrete(5) observations, two actions, reward 1, five steps; returns ``value``."""

    def __init__(self, value):
        self.observation_space = spaces.Discrete(5)
        self.action_space = spaces.Discrete(2)
        self.value = value

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.value, {}

    def step(self, action):
        self.t += 1
        return self.value, 1.0, self.t >= 5, False, {}


@pytest.mark.parametrize("make", [
    lambda: A2C(lifetime=3, random_state=0),
    lambda: LearnedPolicyGradient(**TINY)], ids=["a2c", "lpg"])
@pytest.mark.parametrize("value", [2.7, "3", 5, -1, np.float64(2.0), np.array([1])],
                         ids=["float", "string", "too-large", "negative", "numpy-float",
                              "1-d-array"])
def test_observations_outside_the_discrete_space_are_named(make, value):
    with pytest.raises(ValueError, match=r"environments\[0\] returned the observation .* "
                                         r"outside its observation space Discrete\(5\)"):
        make().fit([_Returns(value)])


@pytest.mark.parametrize("value", [3, np.int64(3), np.int8(3), np.array(3)],
                         ids=["int", "int64", "int8", "0-d-array"])
def test_integer_observations_of_any_integer_type_are_accepted(value):
    a2c = A2C(lifetime=3, random_state=0).fit(_Returns(value))
    assert a2c.lifetime_returns_[0] == 60.0


# --- spaces and sizes across a list, a sampler or a vector environment

def test_a2c_trains_environments_with_different_action_counts_in_one_fit():
    from sklearn_papers.rl import DelayedChain, GridWorld

    def grid():
        return GridWorld(height=3, width=3, objects=[(2, 2, 1.0, 1.0, 0.0)])

    a2c = A2C(lifetime=5, random_state=0).fit([grid(), DelayedChain(length=3), _lake()])
    assert [agent.n_actions for agent in a2c.agents_] == [4, 2, 4]
    # the environments with the first kind of spaces train as they would without the chain
    alone = A2C(lifetime=5, random_state=0).fit([grid(), _lake()])
    for i, j in ((0, 0), (2, 1)):
        np.testing.assert_array_equal(a2c.agents_[i].predict_proba(np.arange(16)),
                                      alone.agents_[j].predict_proba(np.arange(16)))


def test_tables_are_sized_for_the_largest_discrete_space_of_a_list():
    small = gymnasium.make("FrozenLake-v1", map_name="4x4", is_slippery=False)
    large = gymnasium.make("FrozenLake-v1", map_name="8x8", is_slippery=False)
    a2c = A2C(lifetime=3, random_state=0).fit([small, large])
    assert [agent.n_states for agent in a2c.agents_] == [64, 64]
    LearnedPolicyGradient(**TINY).fit([small, large])


def test_a_sampler_whose_later_draws_do_not_fit_the_agents_is_named():
    from sklearn_papers.rl import make_grid_world

    def grids(rng):  # the first two draws are 4 x 4, the third 5 x 5
        grids.calls += 1
        size = 4 if grids.calls <= 2 else 5
        return make_grid_world("sparse", height=size, width=size, random_state=grids.calls)

    grids.calls = 0
    with pytest.raises(ValueError, match=r"environments\(rng\) draw 2 is a 5 x 5 GridWorld.*"
                                         r"4 x 4 GridWorlds.*fix height and width"):
        LearnedPolicyGradient(**{**TINY, "max_meta_steps": 5}).fit(grids)

    def lakes(rng):
        lakes.calls += 1
        return gymnasium.make("FrozenLake-v1", map_name="4x4" if lakes.calls <= 2 else "8x8")

    lakes.calls = 0
    with pytest.raises(ValueError, match=r"environments\(rng\) draw 2 has .*Discrete\(64\).*"
                                         r"up to 16 states"):
        LearnedPolicyGradient(**{**TINY, "max_meta_steps": 5}).fit(lakes)


def test_a_sync_vector_environment_is_a_list_of_its_sub_environments():
    vec = gymnasium.make_vec("FrozenLake-v1", num_envs=2, vectorization_mode="sync",
                             is_slippery=False)
    a2c = A2C(lifetime=30, random_state=0).fit(vec)
    listed = A2C(lifetime=30, random_state=0).fit([_lake(), _lake()])
    np.testing.assert_array_equal(a2c.lifetime_returns_, listed.lifetime_returns_)
    assert a2c.score(vec) == listed.score([_lake(), _lake()])
    LearnedPolicyGradient(**TINY).fit(vec)


def test_other_vector_environments_are_refused_with_the_fix():
    from gymnasium.vector import VectorEnv
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    vec = gymnasium.make_vec("FrozenLake-v1", num_envs=2, vectorization_mode="sync")
    with pytest.raises(ValueError, match=r"wrapped in RecordEpisodeStatistics.*wrappers="):
        A2C(lifetime=2).fit(RecordEpisodeStatistics(vec))

    class OtherVectorEnv(VectorEnv):  # stands for AsyncVectorEnv's out-of-process envs
        pass

    with pytest.raises(ValueError, match=r"is a OtherVectorEnv.*vectorization_mode='sync'"):
        A2C(lifetime=2).fit(OtherVectorEnv())


@pytest.mark.parametrize("bad, error, match", [
    ("FrozenLake-v1", TypeError, r"pass gymnasium.make\('FrozenLake-v1'\)"),
    ([_Endless], TypeError, r"environments\[0\] is the class _Endless.*_Endless\(\)"),
    (["FrozenLake-v1"], TypeError, r"environments\[0\] is the string"),
], ids=["id-string", "class", "string-in-list"])
def test_common_mistakes_get_the_fix_in_the_message(bad, error, match):
    with pytest.raises(error, match=match):
        A2C(lifetime=2).fit(bad)


# --- evaluation of the fitted agents

def test_score_evaluates_the_fitted_agents_greedily_by_default():
    from sklearn_papers.rl import evaluate_policy

    a2c = A2C(lifetime=100, random_state=0).fit([_lake(), _lake()])
    assert a2c.score([_lake(), _lake()]) == 1.0   # both reach the goal on every episode
    assert a2c.score(_lake()) == 1.0               # one environment for every agent
    returns = evaluate_policy(a2c.agents_[0], _lake(), n_episodes=4, random_state=0)
    np.testing.assert_array_equal(returns, np.ones(4))
    sampled = evaluate_policy(a2c.agents_[0], _lake(), n_episodes=20, greedy=False,
                              random_state=0)
    assert sampled.shape == (20,) and set(np.unique(sampled)) <= {0.0, 1.0}
    again = evaluate_policy(a2c.agents_[0], _lake(), n_episodes=20, greedy=False,
                            random_state=0)
    np.testing.assert_array_equal(sampled, again)
    assert a2c.score([_lake(), _lake(), _lake()]) == 1.0  # held-out environments
    with pytest.raises(ValueError, match=r"this A2C holds 2 agents.*agents_\[0\]"):
        evaluate_policy(a2c, _lake())


def test_score_leaves_the_fitted_agents_unchanged():
    a2c = A2C(lifetime=20, random_state=0).fit(_lake())
    before = a2c.agents_[0].predict_proba(np.arange(16))
    first = a2c.score(_lake())
    assert first in (0.0, 1.0)  # greedy on a deterministic lake: every episode alike
    assert a2c.score(_lake()) == first
    np.testing.assert_array_equal(a2c.agents_[0].predict_proba(np.arange(16)), before)


class _CountingLake(gymnasium.Wrapper):
    """FrozenLake that counts its resets (one per evaluation episode)."""

    def __init__(self):
        super().__init__(_lake())
        self.resets = 0

    def reset(self, **kwargs):
        self.resets += 1
        return self.env.reset(**kwargs)


@pytest.mark.parametrize("n_held_out", [1, 3, 5])
def test_score_deals_the_episodes_round_robin_over_held_out_environments(n_held_out):
    a2c = A2C(lifetime=5, random_state=0).fit([_lake(), _lake()])
    held_out = [_CountingLake() for _ in range(n_held_out)]
    a2c.score(held_out, n_episodes=5)
    counts = [env.resets for env in held_out]
    assert sum(counts) == 10  # 2 agents x 5 episodes
    assert max(counts) - min(counts) <= 1, counts  # an equal share each


def test_score_pairs_agent_i_with_environment_i_when_the_counts_agree():
    a2c = A2C(lifetime=5, random_state=0).fit([_lake(), _lake(), _lake()])
    envs = [_CountingLake() for _ in range(3)]
    a2c.score(envs, n_episodes=4)
    assert [env.resets for env in envs] == [4, 4, 4]
    with pytest.raises(ValueError, match="n_episodes must be a positive int"):
        a2c.score(envs, n_episodes=0)


def test_cross_validation_scores_every_fold_of_uneven_environment_lists():
    from sklearn.model_selection import GridSearchCV, cross_val_score

    lakes = [_lake() for _ in range(7)]  # folds of 3, 2 and 2 held-out environments
    scores = cross_val_score(A2C(lifetime=30, random_state=0), lakes, cv=3,
                             error_score="raise")
    assert scores.shape == (3,) and np.isfinite(scores).all()
    search = GridSearchCV(A2C(lifetime=30, random_state=0), {"lr": [0.01, 0.5]}, cv=3,
                          error_score="raise").fit(lakes)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_evaluate_policy_cuts_endless_episodes_and_checks_the_spaces():
    from sklearn_papers.rl import evaluate_policy

    a2c = A2C(lifetime=2, random_state=0).fit(_Endless(limit=None))
    with pytest.warns(UserWarning, match=r"2 of 2 evaluation episodes were still running "
                                         r"after 7 steps.*max_episode_steps"):
        returns = evaluate_policy(a2c.agents_[0], _Endless(limit=None), n_episodes=2,
                                  max_episode_steps=7)
    np.testing.assert_array_equal(returns, [7.0, 7.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # episodes that end by themselves: no warning
        np.testing.assert_array_equal(
            evaluate_policy(a2c.agents_[0], _Endless(limit=5), n_episodes=2,
                            max_episode_steps=7), [5.0, 5.0])
    with pytest.warns(UserWarning, match=r"A2C.score cuts them there"):
        assert a2c.score(_Endless(limit=None), n_episodes=1) == 1000.0
    with pytest.raises(ValueError, match=r"env has 4 actions.*trained with 2"):
        evaluate_policy(a2c.agents_[0], _lake())
    with pytest.raises(ValueError, match=r"n_episodes must be a positive int"):
        evaluate_policy(a2c.agents_[0], _Endless(), n_episodes=0)


def test_evaluate_policy_trains_an_agent_with_a_fitted_rule():
    from sklearn_papers.rl import evaluate_policy

    lpg = LearnedPolicyGradient(**TINY).fit([_lake()])
    returns = evaluate_policy(lpg, _lake(), n_episodes=3, random_state=0)
    assert returns.shape == (3,) and np.all(np.isfinite(returns))


class _OldGymAPI(_Endless):
    """Written for the old gym API: step returns four values, reset the observation."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0] if self.old_reset else super().reset(seed=seed)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated or truncated, info


@pytest.mark.parametrize("old_reset, match", [
    (False, r"environments\[1\] returned 4 values from step\(\).*old gym API"),
    (True, r"environments\[1\] returned 0 from reset\(\).*\(observation, info\)")],
    ids=["step", "reset"])
def test_environments_of_the_old_gym_api_are_named(old_reset, match):
    env = _OldGymAPI()
    env.old_reset = old_reset
    with pytest.raises(ValueError, match=match):
        A2C(lifetime=2, random_state=0).fit([_Endless(), env])


# --- parameters of the evaluation and the training calls

@pytest.mark.parametrize("greedy", ["no", 0, 1, None, "False"])
def test_evaluation_refuses_a_greedy_that_is_not_a_bool(greedy):
    from sklearn_papers.rl import evaluate_policy

    a2c = A2C(lifetime=2, random_state=0).fit(_Endless())
    with pytest.raises(TypeError, match=r"greedy must be True .* or False .*got"):
        evaluate_policy(a2c.agents_[0], _Endless(), greedy=greedy)
    with pytest.raises(TypeError, match=r"greedy must be True"):
        a2c.score(_Endless(), greedy=greedy)
    assert evaluate_policy(a2c.agents_[0], _Endless(), 1, greedy=np.True_).shape == (1,)


@pytest.mark.parametrize("value", [True, 2.0, -1, "5"])
def test_n_updates_must_be_a_count(value):
    a2c = A2C(lifetime=2, random_state=0)
    with pytest.raises(ValueError, match=r"n_updates must be a non-negative int"):
        a2c.train_agent(_Endless(), n_updates=value)
    with pytest.raises(ValueError, match=r"n_updates must be a non-negative int"):
        a2c.lifetime_returns([_Endless()], n_updates=value)


class _Rewarding(_Endless):
    """``_Endless`` whose reward is ``reward``."""

    def __init__(self, reward):
        super().__init__()
        self.reward = reward

    def step(self, action):
        obs, _, terminated, truncated, info = super().step(action)
        return obs, self.reward, terminated, truncated, info


@pytest.mark.parametrize("reward", [1e31, -1e39, float(np.finfo(np.float64).max)])
def test_rewards_too_large_for_the_agents_are_named_with_the_fix(reward):
    from sklearn_papers.rl import evaluate_policy

    with pytest.raises(ValueError, match=r"environments\[1\] returned the reward .* float32"
                                         r".*TransformReward"):
        A2C(lifetime=2, random_state=0).fit([_Endless(), _Rewarding(reward)])
    agent = A2C(lifetime=2, random_state=0).fit(_Endless()).agents_[0]
    with pytest.raises(ValueError, match=r"env returned the reward .*TransformReward"):
        evaluate_policy(agent, _Rewarding(reward), 1)


def test_rewards_up_to_the_limit_train():
    a2c = A2C(lifetime=3, random_state=0).fit(_Rewarding(1e30))
    assert np.isfinite(a2c.lifetime_returns_).all()


class _OutOfBounds(gymnasium.Env):
    """A 1-D Box of declared bounds [-1, 1] whose observations reach ``value``."""

    def __init__(self, value=5.0):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.value = value

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return np.array([0.5, self.value], dtype=np.float32), 1.0, False, False, {}


def test_box_observations_outside_the_bounds_warn_once_naming_the_environment():
    import warnings

    from sklearn_papers.rl import evaluate_policy

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a2c = A2C(lifetime=3, random_state=0).fit([_OutOfBounds(0.5), _OutOfBounds(5.0)])
    bounds = [w for w in caught if "outside the bounds" in str(w.message)]
    assert len(bounds) == 1, [str(w.message) for w in caught]
    message = str(bounds[0].message)
    assert "environments[1]" in message and "feature 1 is 5" in message
    assert "TransformObservation" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_policy(a2c.agents_[1], _OutOfBounds(5.0), 2, max_episode_steps=3)
    assert any("env returned an observation from step() outside" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # observations inside the bounds: no such warning
        evaluate_policy(a2c.agents_[0], _OutOfBounds(0.5), 2, max_episode_steps=3)
    assert not [w for w in caught if "outside the bounds" in str(w.message)]


# --- A2C's defaults on stock environments

def test_a2c_defaults_find_the_safe_path_of_cliff_walking():
    # raw advantages of a -100 reward made the tabular policy deterministic before it had
    # explored: a greedy policy that loops until cut (-200), with every learning rate
    env = gymnasium.make("CliffWalking-v1")
    a2c = A2C(lifetime=500, random_state=0).fit(env)
    assert a2c.score(env, n_episodes=1) >= -17  # the optimum is -13, the safe path -17
    raw = A2C(lifetime=500, normalize_advantage=False, random_state=0).fit(env)
    assert raw.score(env, n_episodes=1) <= -100


def test_a2c_default_learning_rate_depends_on_the_agent_kind():
    cart = gymnasium.make("CartPole-v1")
    a2c = A2C(lifetime=100, random_state=0).fit(cart)  # an MLP agent; lr 3 diverged here
    assert np.isfinite(a2c.agents_[0].predict_proba(np.zeros((1, 4)))).all()
    assert a2c._learning_rate(a2c.agents_[0].net) == 0.03
    lake = A2C(lifetime=2, random_state=0).fit(_lake())
    assert lake._learning_rate(lake.agents_[0].net) == 0.5
    assert A2C(lr=2.0)._learning_rate(a2c.agents_[0].net) == 2.0


@pytest.mark.parametrize("normalize", [True, False])
def test_standardized_advantages_make_the_policy_step_independent_of_the_reward_scale(
        normalize):
    from gymnasium.wrappers import TransformReward

    def fit(scale):
        env = TransformReward(_lake(), lambda r: r * scale - scale / 64)
        return A2C(lifetime=30, normalize_advantage=normalize, random_state=0).fit(env)

    # a power of two scales every sum exactly: the standardized advantages are equal
    small, large = fit(1.0), fit(64.0)
    p_small = small.agents_[0].predict_proba(np.arange(16))
    p_large = large.agents_[0].predict_proba(np.arange(16))
    if normalize:
        np.testing.assert_allclose(p_large, p_small, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(large.agents_[0].predict_values(np.arange(16)),
                                   64 * small.agents_[0].predict_values(np.arange(16)),
                                   rtol=1e-4, atol=1e-4)
    else:
        assert np.abs(p_large - p_small).max() > 0.1


@pytest.mark.parametrize("reward", ["1", b"1", np.str_("0.5")])
def test_a_reward_given_as_text_is_refused_naming_the_environment(reward):
    # float("1") read it as the number 1: agents trained, and were scored, on rewards of
    # the wrong type without a word
    from sklearn_papers.rl import evaluate_policy

    match = r"environments\[1\] returned the reward .*, a (str|bytes)_?, from step\(\).*float"
    with pytest.raises(TypeError, match=match):
        A2C(lifetime=2, random_state=0).fit([_Endless(), _Rewarding(reward)])
    with pytest.raises(TypeError, match=match):
        LearnedPolicyGradient(n_agents=2, lifetime=2, max_meta_steps=1,
                              random_state=0).fit([_Endless(), _Rewarding(reward)])
    agent = A2C(lifetime=2, random_state=0).fit(_Endless()).agents_[0]
    with pytest.raises(TypeError, match=r"env returned the reward .*TransformReward"):
        evaluate_policy(agent, _Rewarding(reward), 1)


class _StopAfterOneEpisode(_Endless):
    """``_Endless`` (episodes of 3 steps) that raises ``_Stopped`` when a second episode
    begins: shows how far a call got."""

    def __init__(self):
        super().__init__(limit=3)
        self.n_resets = 0

    def reset(self, *, seed=None, options=None):
        self.n_resets += 1
        if self.n_resets > 1:
            raise _Stopped
        return super().reset(seed=seed, options=options)


class _Stopped(Exception):
    pass


def test_a_very_large_n_episodes_starts_playing():
    # an array of n_episodes returns was allocated first: numpy's MemoryError before any
    # episode was played
    from sklearn_papers.rl import evaluate_policy

    agent = A2C(lifetime=2, random_state=0).fit(_Endless()).agents_[0]
    with pytest.raises(_Stopped):
        evaluate_policy(agent, _StopAfterOneEpisode(), 10**15)
    a2c = A2C(lifetime=2, random_state=0).fit(_Endless())
    with pytest.raises(_Stopped):
        a2c.score(_StopAfterOneEpisode(), n_episodes=10**15)


def test_round_robin_counts_match_dealing_the_episodes_one_by_one():
    # A2C.score with other environments than agents counted the episodes of each
    # environment in a loop over every episode (minutes for 10**9 episodes before the
    # first was played); the counts are now computed directly
    from sklearn_papers.rl._a2c import _round_robin_counts

    for n_agents in range(1, 4):
        for n_envs in range(1, 5):
            for n_episodes in range(1, 9):
                expected = np.zeros((n_agents, n_envs), dtype=int)
                for i in range(n_agents):
                    for k in range(n_episodes):
                        expected[i, (i * n_episodes + k) % n_envs] += 1
                np.testing.assert_array_equal(
                    _round_robin_counts(n_agents, n_envs, n_episodes), expected)
    counts = _round_robin_counts(2, 3, 10**15)
    assert counts.sum() == 2 * 10**15 and counts.max() - counts.min() == 1
