"""Unbounded worlds: chunks generated from the seed as the player walks (mrsteve.world.chunks)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mrsteve.env import make_env
from mrsteve.world.chunks import (
    CHUNK,
    WATER_LEVEL,
    WINDOW_CHUNKS,
    ChunkGenerator,
    ChunkRandom,
)
from mrsteve.world.content import load_content
from mrsteve.world.recipes import WORLD_RECIPES, build_layout
from mrsteve.world.render import Renderer
from mrsteve.world.world import Controls, World

UNBOUNDED = "plains_unbounded"
CONTENT = load_content()
LOG = CONTENT.block("oak_log").id
LEAVES = CONTENT.block("oak_leaves").id
WATER = CONTENT.block("water").id


def stitched(generator: ChunkGenerator, cx0: int, cz0: int, n: int) -> np.ndarray:
    """The n x n chunks from ``(cx0, cz0)`` side by side."""
    blocks = np.zeros((n * CHUNK, 64, n * CHUNK), np.uint8)
    for a in range(n):
        for b in range(n):
            blocks[a * CHUNK:(a + 1) * CHUNK, :, b * CHUNK:(b + 1) * CHUNK] = \
                generator.chunk(cx0 + a, cz0 + b)[0]
    return blocks


def make_world(seed: int = 3) -> World:
    rng = np.random.default_rng(seed)
    return World(build_layout(UNBOUNDED, rng), rng)


def walk(world: World, steps: int, **keys) -> None:
    controls = Controls(forward=True, **keys)
    for _ in range(steps):
        world.step(controls)


def world_frame_mobs(world: World) -> np.ndarray:
    ox, oz = world.origin
    records = world.mobs.records
    points = np.stack([records["x"] + ox, records["z"] + oz], axis=1)
    return points[np.lexsort(points.T[::-1])]


@pytest.mark.parametrize("seed", [0, 12345])
def test_a_chunk_is_the_same_whatever_order_chunks_are_generated_in(seed):
    forward = ChunkGenerator(seed)
    backward = ChunkGenerator(seed)
    keys = [(a, b) for a in range(-2, 3) for b in range(-2, 3)]
    first = {key: forward.chunk(*key) for key in keys}
    for key in reversed(keys):
        blocks, animals = backward.chunk(*key)
        np.testing.assert_array_equal(blocks, first[key][0])
        np.testing.assert_array_equal(animals, first[key][1])
    assert not np.array_equal(first[(0, 0)][0], ChunkGenerator(seed + 1).chunk(0, 0)[0])


def test_chunk_random_depends_only_on_its_key():
    a = ChunkRandom(7, "trees", -3, 5)
    first = np.concatenate([a.random(3), a.random(4)])
    np.testing.assert_array_equal(ChunkRandom(7, "trees", -3, 5).random(7), first)
    assert not np.array_equal(ChunkRandom(7, "trees", -3, 6).random(7), first)
    assert ((first >= 0) & (first < 1)).all()


def test_ground_is_seamless_across_chunk_borders():
    """The stitched chunks' ground is the column function's everywhere, and neighbouring
    columns never differ by more than a jumpable block."""
    generator = ChunkGenerator(4)
    blocks = stitched(generator, -2, -2, 4)
    x, z = np.meshgrid(np.arange(-32, 32), np.arange(-32, 32), indexing="ij")
    cols = generator.columns(x, z)
    ii, kk = np.indices(x.shape)
    np.testing.assert_array_equal(blocks[ii, cols.level - 1, kk], cols.top)
    level = cols.level.astype(int)
    assert np.abs(np.diff(level, axis=0)).max() <= 1
    assert np.abs(np.diff(level, axis=1)).max() <= 1
    # still water fills the wet columns up to one level everywhere
    wet_top = blocks[ii, WATER_LEVEL - 1, kk] == WATER
    np.testing.assert_array_equal(wet_top, cols.wet)


def test_tree_crowns_continue_into_the_neighbouring_chunk():
    generator = ChunkGenerator(11)
    for cx in range(-6, 6):
        for cz in range(-6, 6):
            trees = generator.decoration(cx, cz).trees
            near_edge = trees[(trees[:, 0] - cx * CHUNK) == CHUNK - 1]
            if len(near_edge):
                _, z, trunk, level = near_edge[0]
                east = generator.chunk(cx + 1, cz)[0]
                # the crown's wide layers reach two columns east of the trunk
                crown = east[:2, level + trunk - 3:level + trunk - 1, z - cz * CHUNK]
                assert (crown == LEAVES).any()
                assert generator.chunk(cx, cz)[0][CHUNK - 1, level, z - cz * CHUNK] == LOG
                return
    pytest.fail("no tree at a chunk's east edge in 144 chunks")


def test_worlds_lists_the_unbounded_world_and_check_env_passes():
    assert WORLD_RECIPES[UNBOUNDED].size is None
    env = make_env(world=UNBOUNDED, obs_size=(8, 8))
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_vector_envs_step_unbounded_worlds():
    envs = gym.vector.SyncVectorEnv(
        [lambda: make_env(world=UNBOUNDED, obs_size=(8, 8))] * 2)
    obs, _ = envs.reset(seed=[1, 2])
    assert not np.array_equal(obs["rgb"][0], obs["rgb"][1])
    for _ in range(3):
        obs, *_ = envs.step(envs.action_space.sample())
    assert obs["pose"].shape == (2, 5)
    envs.close()


def test_walking_across_chunk_borders_moves_the_window_and_keeps_the_pose_continuous():
    env = make_env(world=UNBOUNDED, obs_size=(8, 8))
    obs, _ = env.reset(seed=5)
    world = env.unwrapped.world
    poses = [obs["pose"]]
    for _ in range(400):
        obs, *_ = env.step({"forward": 1, "sprint": 1, "jump": 1})
        poses.append(obs["pose"])
    poses = np.array(poses)
    assert world.origin != (0, 0), "the window never moved"
    steps = np.hypot(*np.diff(poses[:, [0, 2]], axis=0).T)
    assert steps.max() < 1.0  # no jump in the reported frame when the window moves
    # the player is always in the middle two chunks, the view distance from every edge
    x, _, z = world.position
    low, high = (WINDOW_CHUNKS // 2 - 1) * CHUNK, (WINDOW_CHUNKS // 2 + 1) * CHUNK
    assert low <= x < high and low <= z < high
    env.close()


def test_moving_the_window_changes_nothing_the_player_sees_or_the_mobs_do():
    """The same view and the same mobs in the world frame before and after the window moves:
    rendering, raycasts and mobs work across the chunks' seams."""
    world = make_world(8)
    renderer = Renderer(24, 32, content=world.content)
    before = renderer.render(world.blocks, world.eye, world.yaw, world.pitch, world.mob_boxes(),
                             heights=world.heights, origin=world.origin).rgb.copy()
    target = world.target()
    mobs = world_frame_mobs(world)
    inside = len(mobs)
    world.window.move(world, 1, -1)
    after = renderer.render(world.blocks, world.eye, world.yaw, world.pitch, world.mob_boxes(),
                            heights=world.heights, origin=world.origin).rgb
    # the same picture, up to float rounding of a pixel or two at a surface's edge
    assert np.abs(after.astype(int) - before).max() <= 2
    assert (after != before).any(axis=-1).mean() < 0.01
    moved = world.target()
    assert moved.kind == target.kind and moved.distance == pytest.approx(target.distance)
    if target.kind == "block":
        assert np.subtract(moved.cell, target.cell).tolist() == [-CHUNK, 0, CHUNK]
    # mobs of the chunks that left are kept aside, the others stay where they were
    kept = sum(len(m) for m in world.window.store.mobs.values())
    stayed = world_frame_mobs(world)
    assert kept + sum((np.abs(mobs - row).sum(axis=1) < 1e-9).any() for row in stayed) == inside
    assert all((np.abs(mobs - row).sum(axis=1) < 1e-9).any() for row in stayed)


def test_a_chunk_left_and_revisited_is_identical_with_the_players_changes_kept():
    world = make_world(9)
    x, _, z = world.position
    i, k = int(x) + 2, int(z)
    column = world.blocks[i, :, k]
    j = int(np.flatnonzero(world.solid[column]).max())
    world.blocks[i, j, k] = 0  # the player dug here
    world.blocks[i + 1, j + 1, k] = CONTENT.block("planks").id  # and built there
    snapshot = world.blocks.copy()
    mobs = world_frame_mobs(world)
    ox, oz = world.origin
    world.window.move(world, WINDOW_CHUNKS, 0)  # every chunk leaves
    assert 1 <= len(world.window.store.blocks) <= 2  # only the changed chunks are kept
    world.window.move(world, -WINDOW_CHUNKS, 0)  # and comes back
    assert world.origin == (ox, oz)
    np.testing.assert_array_equal(world.blocks, snapshot)
    np.testing.assert_array_equal(world_frame_mobs(world), mobs)


def test_a_straight_walk_of_2000_blocks_keeps_memory_bounded():
    """Teleported along +x a block per step (over whatever stands there), the world
    keeps one window of chunks, remembers no blocks (nothing changed) and only the animals
    that walked out with their chunks."""
    world = make_world(10)
    shape = world.blocks.shape
    start = world.frame_pose[0]
    for _ in range(2000):
        x, _, z = world.position
        world.teleport(x + 1.0, z)
        world.step(Controls())
    assert world.frame_pose[0] - start >= 2000 - 1
    assert world.blocks.shape == shape
    store = world.window.store
    assert len(store.blocks) == 0
    assert len(store.visited) <= (2000 // CHUNK + WINDOW_CHUNKS + 2) * WINDOW_CHUNKS
    kept = sum(len(m) for m in store.mobs.values())
    assert kept + len(world.mobs) < 0.5 * len(store.visited)  # 0.1 packs of 4 per chunk at most


def test_a_teleport_beyond_the_loaded_chunks_is_refused_in_the_reported_frame():
    env = make_env(world=UNBOUNDED, obs_size=(8, 8))
    env.reset(seed=2)
    world = env.unwrapped.world
    world.window.move(world, 3, 0)  # the loaded chunks have moved east by 48 blocks
    with pytest.raises(ValueError, match=r"outside the chunks loaded around the player: x must "
                                         r"be in \[48, 208\)"):
        env.unwrapped.apply_commands({"teleport": {"x": 10.0, "z": 80.0}})
    env.unwrapped.apply_commands({"teleport": {"x": 120.5, "z": 80.5}})
    assert env.unwrapped.world.frame_pose[0] == 120.5
    env.close()
