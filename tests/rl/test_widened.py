"""The widened meta-training distribution and slippery actions."""

from functools import partial

import numpy as np
import pytest

from sklearn_papers.rl import GridWorld, SlipperyActions, widened_grid_world
from sklearn_papers.rl._widened import _path_exists


def _is_lake(env):
    return any(o[3] == 1.0 and o[2] <= 0.0 for o in env.unwrapped.objects)


def test_widened_grid_worlds_vary_rewards_lengths_and_slipperiness():
    rng = np.random.RandomState(0)
    envs = [widened_grid_world(rng) for _ in range(40)]
    lengths = {e.unwrapped.max_steps for e in envs}
    assert len(lengths) >= 4 and {e.unwrapped.height for e in envs} == {5}
    assert any(isinstance(e, SlipperyActions) for e in envs)
    rewards = set()
    for e in envs[:10]:
        e.reset(seed=0)
        rewards |= {e.step(t % 4)[1] for t in range(30)}
    assert min(rewards) <= -1 and max(rewards) >= 1


def test_widened_distribution_has_lakes_whose_holes_end_episodes_without_reward():
    rng = np.random.RandomState(0)
    envs = [widened_grid_world(rng) for _ in range(40)]
    lakes = [e for e in envs if _is_lake(e)]
    assert 10 <= len(lakes) <= 30
    for env in lakes:
        grid = env.unwrapped
        goals = [(int(o[0]), int(o[1])) for o in grid.objects if o[2] > 0]
        holes = {(int(o[0]), int(o[1])) for o in grid.objects if o[2] <= 0 and o[3] == 1.0}
        start = tuple(int(v) for v in grid.start)
        assert goals and all(_path_exists(5, 5, start, g, holes) for g in goals)


def test_draws_follow_the_random_state():
    def layout(env):
        grid = env.unwrapped
        return str((grid.start, np.asarray(grid.objects).tolist(), grid.max_steps))

    assert layout(widened_grid_world(3)) == layout(widened_grid_world(3))
    assert len({layout(widened_grid_world(s)) for s in range(6)}) > 1


def test_lakes_can_slip_sideways_as_frozenlake():
    # FrozenLake's own slipperiness (a step slides to either side of the action two times in
    # three, never back) on our lakes, through the lakes' slip set
    sampler = partial(widened_grid_world, lake_slips=((2 / 3, True),))
    rng = np.random.RandomState(0)
    lakes = [e for e in (sampler(rng) for _ in range(30)) if _is_lake(e)]
    assert lakes
    for env in lakes:
        assert isinstance(env, SlipperyActions) and env.sideways
        env.reset(seed=0)
        moves = np.array([env.action(3) for _ in range(600)])  # "right"
        assert set(moves.tolist()) == {0, 1, 3}  # never the opposite move
        assert 0.55 < np.mean(moves != 3) < 0.78


def test_sideways_slips_move_at_right_angles():
    env = SlipperyActions(GridWorld(), 1.0, sideways=True)
    env.reset(seed=0)
    assert {env.action(0) for _ in range(50)} == {2, 3}
    assert {env.action(2) for _ in range(50)} == {0, 1}
    never = SlipperyActions(GridWorld(), 0.0)
    never.reset(seed=0)
    assert [never.action(a) for a in range(4)] == [0, 1, 2, 3]


@pytest.mark.parametrize("kwargs, match", [
    ({"lake_slips": ()}, "non-empty sequence of \\(p, sideways\\) pairs"),
    ({"lake_slips": ((1.5, True),)}, "p in \\[0, 1\\]"),
    ({"lake_slips": (0.3,)}, "non-empty sequence of \\(p, sideways\\) pairs"),
])
def test_bad_lake_slips_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        widened_grid_world(0, **kwargs)


def test_slippery_actions_checks_its_arguments():
    import gymnasium

    with pytest.raises(ValueError, match="probability in \\[0, 1\\]"):
        SlipperyActions(GridWorld(), -0.1)
    with pytest.raises(ValueError, match="Discrete\\(4\\)"):
        SlipperyActions(gymnasium.make("Taxi-v4"), 0.5, sideways=True)
    with pytest.raises(ValueError, match="Discrete action space"):
        SlipperyActions(gymnasium.make("Pendulum-v1"), 0.5)


def test_a_rule_meta_trains_on_the_sampler():
    from sklearn_papers.rl import LearnedPolicyGradient

    est = LearnedPolicyGradient(n_agents=3, lifetime=6, inner_steps=2, rollout_length=6,
                                max_meta_steps=2, hidden_size=8, embedding_size=4,
                                prediction_size=3, reward_scaling="max_abs",
                                center_policy_target=True, random_state=0)
    est.fit(widened_grid_world)
    assert est.n_iter_ == 2 and np.all(np.isfinite(est.loss_curve_))


@pytest.mark.parametrize("lake_slips, match", [
    ([(0.5, "False")], r"lake_slips\[0\] has sideways='False'"),  # bool("False") is True
    ([(0.0, False), (0.5, None)], r"lake_slips\[1\] has sideways=None"),
    ([(0.5, 2)], r"sideways=2; it must be True"),
    ([("0.5", True)], "p in \\[0, 1\\]"),
    ([(True, True)], "p in \\[0, 1\\]"),
    ("ab", "non-empty sequence of \\(p, sideways\\) pairs"),
])
def test_lake_slips_of_the_wrong_types_are_refused(lake_slips, match):
    with pytest.raises(ValueError, match=match):
        widened_grid_world(0, lake_slips=lake_slips)


def test_slippery_actions_checks_argument_types_and_keeps_the_action_space_start():
    import gymnasium

    with pytest.raises(ValueError, match="probability in \\[0, 1\\], got True"):
        SlipperyActions(GridWorld(), True)
    with pytest.raises(ValueError, match="sideways must be True or False, got 'no'"):
        SlipperyActions(GridWorld(), 0.5, sideways="no")
    assert SlipperyActions(GridWorld(), np.int64(1)).p == 1.0

    class Shifted(gymnasium.ActionWrapper):  # actions 1 .. 4
        def __init__(self, env):
            super().__init__(env)
            self.action_space = gymnasium.spaces.Discrete(4, start=1)

        def action(self, action):
            return action - 1

    for sideways in (False, True):
        env = SlipperyActions(Shifted(GridWorld()), 1.0, sideways=sideways)
        env.reset(seed=0)
        slipped = {env.action(1) for _ in range(100)}  # "up"
        assert slipped <= {1, 2, 3, 4}
        if sideways:
            assert slipped == {3, 4}  # left and right
