"""Grid worlds and delayed chains: gymnasium API, and the batched cores against the reference."""

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from sklearn_papers.rl import (
    BatchedChain,
    BatchedGridWorld,
    DelayedChain,
    GridWorld,
    GymEnvBatch,
    make_batch,
    make_grid_world,
    sample_grid_worlds,
)
from sklearn_papers.utils._seeding import spawn_seeds


@pytest.mark.parametrize("observation", ["index", "features"])
@pytest.mark.parametrize("kind", ["dense", "sparse", "long_horizon"])
def test_grid_world_passes_check_env(kind, observation):
    import warnings

    env = make_grid_world(kind, random_state=3, observation=observation, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # without gymnasium.make there is no spec to re-make the env in other render modes
        warnings.filterwarnings("ignore", message=".*environment not having a spec")
        check_env(env, skip_render_check=False)


@pytest.mark.parametrize("observation", ["index", "features"])
def test_delayed_chain_passes_check_env(observation):
    check_env(DelayedChain(length=4, noise=0.5, observation=observation))


def _reference_loop(envs, actions, uniforms, n_uniform_cols):
    """Step each gymnasium env on its own with the same uniforms, resetting when done."""
    out = []
    for i, env in enumerate(envs):
        env.reset(seed=0)
        rows = []
        for t in range(actions.shape[0]):
            u = uniforms[t, i][: n_uniform_cols(env)]
            obs, r, term, trunc, _ = env._step_with(int(actions[t, i]), u)
            rows.append((np.asarray(obs, dtype=np.float64), r, term, trunc))
            if term or trunc:
                env.reset()
        out.append(rows)
    return out


@pytest.mark.parametrize("observation", ["index", "features"])
def test_batched_grid_world_steps_like_the_reference_loop(observation):
    envs = sample_grid_worlds(6, random_state=0, observation=observation)
    core = BatchedGridWorld(envs)
    rng = np.random.default_rng(0)
    n_steps = 400
    actions = rng.integers(0, 4, size=(n_steps, len(envs)))
    uniforms = rng.random((n_steps, len(envs), core.n_objects, 2))
    ref = _reference_loop(envs, actions, uniforms, lambda e: e.n_objects)
    n_done = 0
    for t in range(n_steps):
        obs, r, term, trunc = core.step(actions[t], uniforms[t])
        for i in range(len(envs)):
            o, rr, te, tr = ref[i][t]
            np.testing.assert_array_equal(obs[i].numpy().astype(np.float64), o)
            assert r[i].item() == rr and term[i].item() == te and trunc[i].item() == tr
            n_done += te or tr
    assert n_done > 10  # resets were exercised


@pytest.mark.parametrize("observation", ["index", "features"])
def test_batched_chain_steps_like_the_reference_loop(observation):
    envs = [DelayedChain(length=4, good_branch=g, noise=n, observation=observation)
            for g, n in [(0, 0.0), (1, 0.3), (1, 0.0)]]
    core = BatchedChain(envs)
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 2, size=(60, 3))
    uniforms = rng.random((60, 3, 1))
    ref = _reference_loop(envs, actions, uniforms, lambda e: 1)
    for t in range(60):
        obs, r, term, trunc = core.step(actions[t], uniforms[t])
        for i in range(3):
            o, rr, te, tr = ref[i][t]
            np.testing.assert_array_equal(obs[i].numpy().astype(np.float64), o)
            assert r[i].item() == pytest.approx(rr) and term[i].item() == te and not tr


def test_gym_env_batch_matches_stepping_envs_by_hand():
    envs = [DelayedChain(length=3, good_branch=1, noise=0.2) for _ in range(2)]
    batch = GymEnvBatch(envs, seed=5)
    twins = [DelayedChain(length=3, good_branch=1, noise=0.2) for _ in range(2)]
    for e, s in zip(twins, spawn_seeds(5, 2)):  # the batch spawns its reset seeds
        e.reset(seed=s)
    for t in range(7):
        obs, r, term, _ = batch.step([1, 0])
        for i, e in enumerate(twins):
            o, rr, te, tr, _ = e.step([1, 0][i])
            assert obs[i].item() == o and r[i].item() == rr and term[i].item() == te
            if te or tr:
                e.reset()


def test_make_batch_picks_the_core():
    grids = sample_grid_worlds(2, random_state=0)
    assert isinstance(make_batch(grids), BatchedGridWorld)
    assert isinstance(make_batch([DelayedChain(), DelayedChain(good_branch=1)]), BatchedChain)
    mixed = make_batch([grids[0], GridWorld(height=3, width=3, objects=[(1, 1, 1, 1, 0)])])
    assert isinstance(mixed, GymEnvBatch)


def test_batched_core_draws_uniforms_from_its_generator():
    envs = sample_grid_worlds(3, random_state=0)
    runs = []
    for _ in range(2):
        core = BatchedGridWorld(envs, generator=torch.Generator().manual_seed(0))
        runs.append(torch.stack([core.step(torch.tensor([3, 1, 0]))[1] for _ in range(30)]))
    assert torch.equal(runs[0], runs[1])


def test_sample_grid_worlds_held_out_set_is_disjoint():
    train = sample_grid_worlds(9, random_state=0)
    test = sample_grid_worlds(9, random_state=1, exclude=train)
    keys = {(e.start, tuple(e.objects)) for e in train}
    assert not keys & {(e.start, tuple(e.objects)) for e in test}
    assert len(keys) == 9
    assert {e.n_objects for e in train} == {1, 3, 4}


@pytest.mark.parametrize("kwargs, match", [
    (dict(objects=[(5, 0, 1.0, 1.0, 0.0)]), r"objects\[0\] at \(5.0, 0.0\) lies outside"),
    (dict(objects=[(1, 1, 1.0, 1.0, 0.0), (1, 1, 0.5, 0.0, 0.0)]), r"objects\[1\].*shares"),
    (dict(objects=[(1, 1, 1.0, 2.0, 0.0)]), r"objects\[0\] has probabilities"),
    (dict(start=(9, 9)), "start"),
    (dict(observation="pixels"), "observation"),
    (dict(height=0), "height"),
])
def test_grid_world_rejects_bad_layouts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GridWorld(**kwargs)


def test_batched_grid_world_rejects_mixed_sizes():
    with pytest.raises(ValueError, match="same height, width"):
        BatchedGridWorld([GridWorld(), GridWorld(height=3, width=3,
                                                 objects=[(1, 1, 1, 1, 0)])])


def test_step_rejects_an_invalid_action():
    env = GridWorld()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action 7"):
        env.step(7)


def test_batched_grid_world_widens_for_an_env_with_more_objects():
    sparse = make_grid_world("sparse", random_state=0)
    dense = make_grid_world("dense", random_state=1)
    core = BatchedGridWorld([sparse, sparse])
    assert core.n_objects == 1
    core.set_env(1, dense)
    assert core.n_objects == 4 and core.present[1].sum() == 4 and core.present[0].sum() == 1
    ref = BatchedGridWorld([sparse, dense])
    u = np.random.default_rng(0).random((50, 2, 4, 2))
    for t in range(50):
        a = [t % 4, (t // 3) % 4]
        for x, y in zip(core.step(a, u[t]), ref.step(a, u[t])):
            assert torch.equal(x, y)


def test_gym_env_batch_shifts_discrete_spaces_with_a_start():
    import gymnasium

    env = gymnasium.wrappers.TransformObservation(
        DelayedChain(length=3), lambda o: o + 5, gymnasium.spaces.Discrete(5, start=5))
    env = gymnasium.wrappers.TransformAction(
        env, lambda a: a - 2, gymnasium.spaces.Discrete(2, start=2))
    batch = GymEnvBatch([env], seed=0)
    assert batch.obs.tolist() == [0]
    # agent action 1 -> env action 3 -> inner action 1: branch 1, state 3
    assert batch.step([1])[0].tolist() == [3]


def test_long_horizon_layout_redraws_central_starts():
    # a start in the centre of a 5 x 5 grid has no cell far enough for the goal
    for seed in range(60):
        env = make_grid_world("long_horizon", random_state=seed)
        goal = env.objects[0]
        dist = abs(goal[0] - env.start[0]) + abs(goal[1] - env.start[1])
        assert dist >= 0.6 * (env.height + env.width - 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(height=0), r"height must be a positive int, got 0"),
    (dict(width=-2), r"width must be a positive int, got -2"),
    (dict(height=2.5), r"height must be a positive int, got 2.5"),
    (dict(height=1, width=1), r"'dense' grid world needs at least 5 cells.*height=1, width=1"),
    (dict(kind="dense", height=2, width=2), r"at least 5 cells to hold the start and four"),
    (dict(kind="sparse", height=1, width=1), r"'sparse' grid world needs at least 2 cells"),
    (dict(kind="long_horizon", height=2, width=3), r"height \+ width >= 6.*height=2, width=3"),
    (dict(kind="long_horizon", height=1, width=4), r"height \+ width >= 6"),
])
def test_make_grid_world_rejects_grids_too_small_for_the_layout(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_grid_world(**kwargs)


@pytest.mark.parametrize("kind, height, width", [
    ("dense", 1, 5), ("sparse", 1, 2), ("long_horizon", 1, 5), ("long_horizon", 2, 4),
    ("long_horizon", 3, 3)])
def test_the_smallest_accepted_grids_always_hold_their_layout(kind, height, width):
    n_objects = {"dense": 4, "sparse": 1, "long_horizon": 3}[kind]
    for seed in range(40):
        env = make_grid_world(kind, height=height, width=width, random_state=seed)
        assert env.n_objects == n_objects


@pytest.mark.parametrize("n", [0, -1, 2.0, True])
def test_sample_grid_worlds_rejects_a_bad_count(n):
    with pytest.raises(ValueError, match=r"n must be an int >= 1"):
        sample_grid_worlds(n)


def test_sample_grid_worlds_checks_the_size_for_every_kind():
    assert len(sample_grid_worlds(2, kinds=("sparse",), height=2, width=2, random_state=0)) == 2
    with pytest.raises(ValueError, match="'long_horizon'"):
        sample_grid_worlds(2, kinds=("sparse", "long_horizon"), height=2, width=2)
    with pytest.raises(ValueError, match="kinds"):
        sample_grid_worlds(2, kinds=())
    with pytest.raises(ValueError, match="'maze'"):
        sample_grid_worlds(2, kinds=("dense", "maze"))


@pytest.mark.parametrize("env", [
    GridWorld(height=3, width=3, objects=[(2, 2, 1.0, 1.0, 0.0)]), DelayedChain(length=3)],
    ids=["grid", "chain"])
def test_step_before_reset_raises(env):
    import copy

    import gymnasium

    env = copy.deepcopy(env)
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call .*reset\(\) before step"):
        env.step(0)
    env.reset(seed=0)
    env.step(0)  # fine once reset


def test_sampled_grid_world_needs_reset_before_step():
    import gymnasium

    env = sample_grid_worlds(1, height=3, width=3, random_state=0)[0]
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)


def test_render_before_reset_raises_and_draws_the_episode_after():
    import gymnasium

    env = GridWorld(height=2, width=3, start=(0, 0), objects=[(1, 2, 1.0, 0.0, 0.0)],
                    render_mode="ansi")
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"GridWorld\.reset\(\) before "
                                                          r"render\(\)"):
        env.render()
    env.reset(seed=0)
    assert env.render() == "A..\n..0"
    env.step(3)
    assert env.render() == ".A.\n..0"


_REGISTERED = [
    ("sklearn_papers/GridWorld-v0", {}),
    ("sklearn_papers/RandomGridWorld-v0", dict(kind="dense")),
    ("sklearn_papers/RandomGridWorld-v0", dict(kind="sparse", random_state=0)),
    ("sklearn_papers/RandomGridWorld-v0", dict(kind="long_horizon", observation="features")),
]


@pytest.mark.parametrize("env_id, kwargs", _REGISTERED,
                         ids=["grid", "dense", "sparse", "long-horizon-features"])
def test_registered_grid_worlds_render_as_text_through_gymnasium_make(env_id, kwargs):
    import gymnasium

    import sklearn_papers.rl  # noqa: F401  (registers the ids)

    env = gymnasium.make(env_id, render_mode="ansi", **kwargs)
    assert env.unwrapped.render_mode == "ansi"
    env.reset(seed=0)
    picture = env.render()
    assert picture.count("A") == 1 and len(picture.splitlines()) == env.unwrapped.height
    assert env.metadata["render_fps"] > 0


@pytest.mark.parametrize("env_id, kwargs", _REGISTERED + [("sklearn_papers/DelayedChain-v0", {})],
                         ids=["grid", "dense", "sparse", "long-horizon-features", "chain"])
def test_registered_environments_pass_check_env_with_the_render_check(env_id, kwargs):
    import warnings

    import gymnasium

    env = gymnasium.make(env_id, **kwargs).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=False)


def test_makers_pass_render_mode_on_and_reject_unknown_modes():
    assert make_grid_world("sparse", random_state=0, render_mode="ansi").render_mode == "ansi"
    envs = sample_grid_worlds(2, random_state=0, render_mode="ansi")
    assert [e.render_mode for e in envs] == ["ansi", "ansi"]
    with pytest.raises(ValueError, match=r"render_mode must be None or one of \['ansi'\]"):
        GridWorld(render_mode="human")
    with pytest.raises(ValueError, match=r"render_mode must be None or one of \[\]"):
        DelayedChain(render_mode="ansi")
