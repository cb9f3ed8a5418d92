"""VoxelEnv: Gymnasium's checks on every world, determinism, actions, set-up commands, errors."""

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mrsteve.env import make_env
from mrsteve.env.voxel_env import BUTTONS, DEFAULT_OBS_SIZE, VoxelEnv
from mrsteve.world.content import load_content
from mrsteve.world.layout import WorldLayout
from mrsteve.world.recipes import WORLD_RECIPES

SMALL = (24, 32)


def make(world="flat", **kwargs) -> VoxelEnv:
    return make_env(world=world, obs_size=kwargs.pop("obs_size", SMALL), **kwargs)


@pytest.mark.parametrize("world", list(WORLD_RECIPES))
def test_gymnasium_check_env_passes_on_every_world(world):
    env = make(world)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds (depth of the sky) are intended
        check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)


def test_gymnasium_check_env_passes_with_rendering():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make(render_mode="rgb_array").unwrapped)


def rollout(seed: int, steps: int = 100) -> list[dict]:
    env = make("map2")
    env.action_space.seed(seed)
    observations = [env.reset(seed=seed)[0]]
    for _ in range(steps):
        observations.append(env.step(env.action_space.sample())[0])
    return observations


def test_the_same_seed_gives_the_same_rollout():
    first, second, other = rollout(7), rollout(7), rollout(8)
    for a, b in zip(first, second):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    assert any(not np.array_equal(a["rgb"], c["rgb"]) for a, c in zip(first, other))


def test_observations_follow_the_documented_layout():
    env = make(obs_size=(20, 30))
    obs, info = env.reset(seed=0)
    world = env.unwrapped.world
    assert obs["rgb"].shape == (20, 30, 3) and obs["rgb"].dtype == np.uint8
    assert obs["depth"].shape == (20, 30) and obs["semantic"].shape == (20, 30)
    np.testing.assert_array_equal(obs["pose"], world.pose)
    np.testing.assert_array_equal(info["start_pose"], env.unwrapped.start_pose)
    assert obs["inventory"].shape == (len(load_content().items),)
    assert env.unwrapped.item_names == load_content().item_names
    assert VoxelEnv().obs_size == DEFAULT_OBS_SIZE


def test_pitching_up_shows_sky_and_a_cow_in_front_shows_cow_pixels():
    env = make()
    env.reset(seed=0)
    x, _, z = env.unwrapped.world.position
    obs, *_ = env.step({"camera": np.array([-90.0, 0.0])})
    sky = load_content().semantic_id("sky")
    assert (obs["semantic"] == sky).all() and np.isinf(obs["depth"]).all()
    obs, _ = env.reset(
        seed=0,
        options={
            "spawn_mobs": [{"kind": "cow", "x": x, "z": z + 3, "roam": 0.0}],
            "teleport": {"x": x, "z": z, "yaw": 0.0, "pitch": 10.0},
        },
    )
    cow = load_content().semantic_id("cow")
    assert (obs["semantic"] == cow).sum() > 20


def test_actions_move_the_player_and_missing_keys_mean_no_op():
    env = make()
    obs, _ = env.reset(seed=0)
    start = obs["pose"].copy()
    obs, *_ = env.step({})
    np.testing.assert_array_equal(obs["pose"], start)
    for _ in range(20):
        obs, *_ = env.step({"forward": 1})
    assert np.hypot(*(obs["pose"][[0, 2]] - start[[0, 2]])) > 3
    obs, *_ = env.step({"camera": np.array([10.0, 30.0], dtype=np.float32)})
    assert obs["pose"][3] == pytest.approx(start[3] + 30) and obs["pose"][4] == pytest.approx(10)


def test_attacking_the_floor_reports_the_dirt_in_info():
    env = make()
    env.reset(seed=0, options={"teleport": {"x": 20.5, "z": 20.5, "pitch": 60.0, "yaw": 0.0}})
    gained = {}
    for _ in range(30):
        obs, reward, terminated, truncated, info = env.step({"attack": 1})
        assert reward == 0.0 and not terminated and not truncated
        for item, n in info["inventory_changes"].items():
            gained[item] = gained.get(item, 0) + n
    assert gained == {"dirt": 1}
    assert obs["inventory"][env.unwrapped.item_names.index("dirt")] == 1


def test_equip_holds_an_item_and_use_fills_a_bucket_at_a_pond():
    env = make("find_water")
    env.reset(seed=0)
    world = env.unwrapped.world
    x, z = world.layout.landmarks["water"]  # the pond's centre
    i, k = int(x), int(z)
    surface = int(np.flatnonzero(world.water[world.blocks[i, :, k]]).max())
    env.reset(
        seed=0,
        options={
            "give": {"bucket": 1},
            "teleport": {"x": x, "z": z - 2.0, "y": surface + 2.0, "yaw": 0.0, "pitch": 60.0},
        },
    )
    bucket = env.unwrapped.item_names.index("bucket")
    env.step({"equip": bucket + 1})
    assert env.unwrapped.world.inventory.held_item == "bucket"
    _, _, _, _, info = env.step({"use": 1})
    assert info["inventory_changes"] == {"bucket": -1, "water_bucket": 1}


def test_reset_options_set_up_the_world():
    env = make()
    obs, _ = env.reset(
        seed=0,
        options={
            "give": {"bucket": 2, "dirt": 3},
            "equip": "bucket",
            "teleport": {"x": 10.5, "z": 12.5, "yaw": 90.0, "pitch": 20.0},
            "spawn_mobs": [{"kind": "sheep", "x": 15.5, "z": 15.5, "count": 2}],
            "schedule": [{"step": 3, "kind": "spawn_mob", "mob": "spider", "x": 20.0, "z": 20.0}],
        },
    )
    world = env.unwrapped.world
    assert world.inventory.as_dict() == {"bucket": 2, "dirt": 3}
    assert world.inventory.held_item == "bucket"
    assert obs["pose"][[0, 2, 3, 4]].tolist() == [10.5, 12.5, 90.0, 20.0]
    assert [world.mobs.kind_name(i) for i in range(len(world.mobs))] == ["sheep", "sheep"]
    events = [env.step({})[4]["events"] for _ in range(3)]
    assert [e.kind for e in events[2]] == ["spawned"]
    env.unwrapped.apply_commands({"give": {"sand": 1}, "clear": ["dirt"]})  # mid-episode
    assert env.unwrapped.world.inventory.as_dict() == {"bucket": 2, "sand": 1}
    env.unwrapped.apply_commands({"give": {"dirt": 3}, "clear": True})  # clear runs before give
    assert env.unwrapped.world.inventory.as_dict() == {"dirt": 3}


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"gift": {}},
            ValueError,
            "unknown reset option 'gift'; known: clear, give, equip, teleport, spawn_mobs, "
            "schedule",
        ),
        ({"give": {"diamond": 1}}, ValueError, "unknown item 'diamond'; known: bucket"),
        ({"give": {"dirt": -1}}, ValueError, "non-negative integer"),
        ({"give": ["dirt"]}, TypeError, "mapping"),
        ({"clear": "dirt"}, TypeError, "list of item names"),
        ({"equip": "pickaxe"}, ValueError, "unknown item 'pickaxe'; known: bucket"),
        ({"teleport": {"x": 1e6, "z": 5.0}}, ValueError, "outside the world"),
        ({"teleport": {"x": 5.0}}, ValueError, "x and z"),
        ({"teleport": {"x": 5.0, "z": 5.0, "pitch": 120.0}}, ValueError, r"\[-90, 90\]"),
        ({"spawn_mobs": [{"kind": "dragon", "x": 5, "z": 5}]}, ValueError, "known: cow"),
        ({"spawn_mobs": [{"kind": "cow", "x": 5, "z": 5, "speed": 2}]}, ValueError,
         "unknown 'spawn_mobs' field 'speed'; known: kind"),
        ({"spawn_mobs": [{"kind": "cow"}]}, ValueError, "missing"),
        (
            {"schedule": [{"step": 5, "kind": "flood", "x": 5, "z": 5}]},
            ValueError,
            "spawn_mob, explode",
        ),
        (
            {"schedule": [{"step": -1, "kind": "explode", "x": 5, "z": 5}]},
            ValueError,
            "non-negative",
        ),
        ({"schedule": [{"step": 1, "kind": "spawn_mob", "x": 5, "z": 5}]}, ValueError, "mob kind"),
        (
            {"schedule": [{"step": 1, "kind": "explode", "x": 5, "z": 5, "block": "tnt"}]},
            ValueError,
            "unknown block 'tnt'; known: air",
        ),
        ("give dirt", TypeError, "mapping"),
        ({"cut_trees": "all"}, ValueError, "unknown cut_trees 'all'; known: eye, foot"),
    ],
)
def test_bad_reset_options_raise_clear_errors(options, error, message):
    with pytest.raises(error, match=message):
        make().reset(seed=0, options=options)


@pytest.mark.parametrize(
    ("action", "error", "message"),
    [
        ({"fly": 1}, ValueError, "unknown action key 'fly'; known: forward, back"),
        ({"forward": 2}, ValueError, "0 or 1"),
        ({"camera": np.array([0.0, 200.0])}, ValueError, r"\[-180, 180\]"),
        ({"camera": np.array([np.nan, 0.0])}, ValueError, "camera"),
        ({"camera": 5.0}, ValueError, "camera"),
        ({"equip": 99}, ValueError, "0 keeps the held item"),
        ([1, 0, 0], TypeError, "dict with keys"),
    ],
)
def test_bad_actions_raise_clear_errors(action, error, message):
    env = make()
    env.reset(seed=0)
    with pytest.raises(error, match=message):
        env.unwrapped.step(action)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"world": "nether"}, "unknown world 'nether'; known: map1"),
        ({"obs_size": (0, 64)}, "two positive integers"),
        ({"obs_size": (64,)}, "two positive integers"),
        ({"obs_size": (10_000, 64)}, "height"),
        ({"max_steps": 0}, "positive integer or None"),
        ({"noop_steps": -1}, "non-negative integer"),
        ({"render_mode": "human"}, "unknown render_mode .*rgb_array"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VoxelEnv(**kwargs)
    with pytest.raises(TypeError, match="recipe name"):
        VoxelEnv(world=3)


def test_max_steps_truncates_and_noop_steps_run_after_reset():
    env = make(max_steps=3, noop_steps=5)
    env.reset(seed=0)
    assert env.unwrapped.world.t == 5
    truncations = [env.step({})[3] for _ in range(3)]
    assert truncations == [False, False, True]


def test_render_returns_a_copy_of_the_rgb_frame():
    env = make(render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    frame = env.render()
    np.testing.assert_array_equal(frame, obs["rgb"])
    frame[:] = 0
    assert obs["rgb"].any()
    assert make().unwrapped.render() is None


def test_a_custom_world_function_builds_the_world():
    def tiny_world(rng: np.random.Generator) -> WorldLayout:
        blocks = np.zeros((8, 8, 8), dtype=np.uint8)
        blocks[:, 0, :] = load_content().block("stone").id
        return WorldLayout("tiny", blocks, (4.5, 1.0, 4.5))

    env = VoxelEnv(world=tiny_world, obs_size=SMALL)
    obs, _ = env.reset(seed=0)
    assert obs["pose"][:3].tolist() == [4.5, 1.0, 4.5]
    assert env.world_name == "tiny_world"


def test_buttons_are_minerls():
    assert BUTTONS == (
        "forward",
        "back",
        "left",
        "right",
        "jump",
        "sneak",
        "sprint",
        "attack",
        "use",
    )


def open_at_a_side(blocks, i, j, k) -> bool:
    return any(blocks[i + di, j, k + dk] == 0 for di, dk in ((1, 0), (-1, 0), (0, 1), (0, -1)))


@pytest.mark.parametrize("how", ["eye", "foot"])
def test_cut_trees_takes_the_logs_a_player_standing_by_a_tree_reaches_first(how):
    """eye: each trunk loses its second log from the foot, the one at a standing player's eye
    level; foot: each keeps its foot log and the logs inside the leaves, none other open at a
    side."""
    whole = make(world="long_instruction")
    whole.reset(seed=3)
    cut = make(world="long_instruction")
    cut.reset(seed=3, options={"cut_trees": how})
    log = whole.unwrapped.world.content.block("oak_log").id
    before, after = whole.unwrapped.world.blocks, cut.unwrapped.world.blocks
    trunks = {(int(i), int(k)) for i, _, k in np.argwhere(before == log)}
    assert trunks == {(int(i), int(k)) for i, _, k in np.argwhere(after == log)}
    for i, k in trunks:
        was, left = np.flatnonzero(before[i, :, k] == log), np.flatnonzero(after[i, :, k] == log)
        assert left[0] == was[0]  # the foot log stays
        if how == "eye":
            assert sorted(set(was) - set(left)) == [was[0] + 1]
        else:
            assert sorted(set(was) - set(left)) == [j for j in was[1:]
                                                    if open_at_a_side(before, i, j, k)]
            assert not any(open_at_a_side(after, i, j, k) for j in left[1:])
    changed = {tuple(cell) for cell in np.argwhere(before != after)}
    assert changed and all(before[cell] == log and after[cell] == 0 for cell in changed)
