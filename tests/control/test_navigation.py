"""Navigators reach (x, z) goals from pose, depth and semantics (the VPT-Nav stand-in), and the
height map and planner they use."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import mrsteve.env  # noqa: F401
from mrsteve.control.heightmap import BLOCKED, UNKNOWN, HeightMap, walk_levels
from mrsteve.control.planning import GEOMETRIC, distance_to_disc, find_path, plan_path
from mrsteve.control.navigation import DepthNavigator, Navigator, StraightNavigator
from mrsteve.world.content import load_content
from mrsteve.world.layout import WorldLayout

GROUND = 4
"""Feet height on the hand-made floors (the floor's top)."""
OBS_SIZE = (24, 40)
NAVIGATORS = [DepthNavigator, StraightNavigator]


def block(name: str) -> int:
    return load_content().block(name).id


def floor(size: int = 32, height: int = 14) -> np.ndarray:
    """A grass floor inside a wall ring one block thick."""
    blocks = np.zeros((size, height, size), dtype=np.uint8)
    blocks[:, : GROUND - 1, :] = block("dirt")
    blocks[:, GROUND - 1, :] = block("grass_block")
    blocks[0, :, :] = blocks[-1, :, :] = blocks[:, :, 0] = blocks[:, :, -1] = block("wall")
    return blocks


def world(blocks: np.ndarray, spawn=(16.5, 8.5), yaw: float = 0.0):
    """A world function for the environment; spawn on the floor at ``(x, z)``."""
    return lambda rng: WorldLayout("handmade", blocks, (spawn[0], float(GROUND), spawn[1]), yaw)


def step_up(blocks: np.ndarray) -> np.ndarray:
    """The far half of the floor raised by one block (z >= 16)."""
    blocks[1:-1, GROUND, 16:-1] = block("stone")
    return blocks


def channel(blocks: np.ndarray) -> np.ndarray:
    """Water three blocks deep across the floor at z = 14..18, its surface level with the banks."""
    blocks[1:-1, GROUND - 3 : GROUND, 14:19] = block("water")
    return blocks


def river(blocks: np.ndarray, exit_x: int | None = 6) -> np.ndarray:
    """Water across z = 14..18 whose surface is a block below the floor, so its banks cannot be
    climbed from the water, except a shore level with the water on the far bank at
    ``exit_x .. exit_x + 2`` (none when ``None``)."""
    blocks[1:-1, GROUND - 1, 14:19] = 0
    blocks[1:-1, GROUND - 4 : GROUND - 1, 14:19] = block("water")
    if exit_x is not None:
        blocks[exit_x : exit_x + 3, GROUND - 1, 19] = 0
    return blocks


def wall_across(blocks: np.ndarray) -> np.ndarray:
    """A two-block stone wall across z = 16 with a gap only at the right end (x = 26..30)."""
    blocks[1:26, GROUND : GROUND + 2, 16] = block("stone")
    return blocks


def drive(navigator: Navigator, blocks: np.ndarray, goal, steps: int, seed: int = 0, **where):
    """Run ``navigator`` toward ``goal``; returns (reached, trajectory [n, 3] of x, y, z)."""
    env = gym.make("mrsteve/Voxel-v0", world=world(blocks, **where), obs_size=OBS_SIZE)
    obs, info = env.reset(seed=seed)
    navigator.reset(np.random.default_rng(seed), info["camera"])
    path = [obs["pose"][:3].copy()]
    for _ in range(steps):
        if navigator.reached(obs, goal):
            break
        action = navigator.act(obs, goal)
        obs, *_ = env.step(action)
        path.append(obs["pose"][:3].copy())
    return navigator.reached(obs, goal), np.array(path)


@pytest.mark.parametrize("make", NAVIGATORS)
def test_navigators_follow_the_protocol_and_reach_a_goal_on_flat_ground(make):
    navigator = make()
    assert isinstance(navigator, Navigator)
    assert navigator.success_radius == 3.0
    reached, path = drive(navigator, floor(), goal=(24.5, 22.5), steps=150)
    assert reached
    assert math.dist(path[-1][[0, 2]], (24.5, 22.5)) <= 3.0


def test_depth_navigator_climbs_a_one_block_step():
    reached, path = drive(DepthNavigator(), step_up(floor()), goal=(16.5, 26.5), steps=200)
    assert reached
    assert path[-1, 1] >= GROUND + 1 - 1e-6  # up on the raised half


def test_depth_navigator_swims_across_water():
    reached, path = drive(DepthNavigator(), channel(floor()), goal=(16.5, 25.5), steps=300)
    assert reached
    crossed = path[(path[:, 2] > 14) & (path[:, 2] < 19)]
    assert len(crossed) and crossed[:, 1].min() < GROUND  # it was in the water on the way


def test_depth_navigator_finds_the_one_place_to_climb_out_of_a_river_the_straight_one_misses():
    blocks = river(floor())
    reached, path = drive(DepthNavigator(), blocks, goal=(20.5, 25.5), steps=800)
    assert reached
    out = np.flatnonzero(path[:, 2] >= 19.3)[0]  # where it left the water
    assert 6 <= path[out, 0] < 9
    straight, _ = drive(StraightNavigator(), blocks, goal=(20.5, 25.5), steps=800)
    assert not straight


def test_depth_navigator_goes_around_a_two_block_wall_that_stops_the_straight_one():
    blocks = wall_across(floor())
    reached, path = drive(DepthNavigator(), blocks, goal=(12.5, 24.5), steps=400)
    assert reached
    assert path[:, 0].max() > 25  # through the gap at the right end
    straight, _ = drive(StraightNavigator(), blocks, goal=(12.5, 24.5), steps=400)
    assert not straight


def test_depth_navigator_is_deterministic_given_the_generator():
    blocks = wall_across(floor())
    _, first = drive(DepthNavigator(), blocks, goal=(12.5, 24.5), steps=120, seed=3)
    _, second = drive(DepthNavigator(), blocks, goal=(12.5, 24.5), steps=120, seed=3)
    np.testing.assert_array_equal(first, second)


def test_height_map_marks_observed_blocks_at_their_columns():
    blocks = floor()
    blocks[20, GROUND : GROUND + 3, 14] = block("stone")  # a pillar 3 high ahead
    blocks[12:15, GROUND - 1, 13:15] = block("water")  # a pool level with the floor
    blocks[18:21, GROUND + 2, 18:21] = block("oak_leaves")  # a crown with head room under it
    blocks[15, GROUND, 13] = block("tall_grass")  # a plant: not ground
    env = gym.make("mrsteve/Voxel-v0", world=world(blocks), obs_size=(40, 64))
    obs, info = env.reset(seed=0)
    observed = HeightMap((16.5, 8.5), camera=info["camera"])
    observed.integrate(obs)
    truth = HeightMap.from_blocks(blocks)

    seen = observed.ground != UNKNOWN
    ox, oz = observed.origin
    assert seen.sum() > 100
    xs, zs = np.nonzero(seen)
    np.testing.assert_array_equal(observed.ground[seen], truth.ground[xs + ox, zs + oz])
    np.testing.assert_array_equal(observed.water[seen], truth.water[xs + ox, zs + oz])
    assert observed.ground[observed.cell(20.5, 14.5)] == GROUND + 3
    assert observed.water[observed.cell(13.5, 13.5)]
    assert observed.ground[observed.cell(15.5, 13.5)] in (UNKNOWN, GROUND)  # never the plant
    crown = observed.leaves[observed.leaves != 0]
    assert len(crown) and (crown == np.uint64(1 << (GROUND + 2))).all()
    assert observed.levels()[observed.cell(19.5, 19.5)] != BLOCKED  # two blocks of head room


def test_walk_levels_block_columns_whose_leaves_hang_into_the_head_room():
    ground = np.full((3, 3), 5, dtype=np.int16)
    ground[1, 1] = UNKNOWN  # hidden under its own leaves
    leaves = np.zeros((3, 3), dtype=np.uint64)
    leaves[0, 0] = 1 << 6  # one block above the ground: no head room
    leaves[2, 2] = 1 << 7  # two blocks above: walk under it
    leaves[1, 1] = 1 << 5  # ground unknown: its neighbours' ground puts the leaves at the feet
    levels = walk_levels(ground, leaves)
    assert levels[0, 0] == BLOCKED and levels[1, 1] == BLOCKED
    assert levels[2, 2] == 5 and levels[0, 1] == 5


def test_planner_climbs_single_steps_and_goes_around_walls():
    levels = np.full((12, 12), 4, dtype=np.int16)
    levels[:, 6] = 6  # a two-block wall across ...
    levels[10:, 6] = 5  # ... with a one-block step at the end
    water = np.zeros(levels.shape, dtype=np.bool_)
    penalty = np.zeros(levels.shape, dtype=np.float32)
    points, reached = find_path(levels, water, penalty, (0, 0), (2.5, 2.5), (2.5, 10.5), 0.5,
                                GEOMETRIC, smooth=1000)
    assert reached
    cells = np.floor(points).astype(int)
    assert (cells[:, 0] >= 9).any()  # it went round by the step
    assert math.dist(points[-1], (2.5, 10.5)) <= 0.5

    levels[10:, 6] = 6  # no way across any more: the nearest reachable column instead
    points, reached = find_path(levels, water, penalty, (0, 0), (2.5, 2.5), (2.5, 10.5), 0.5)
    assert not reached
    assert math.floor(points[-1][1]) == 5


def test_planner_leaves_water_only_where_the_bank_is_level_with_the_surface():
    truth = HeightMap.from_blocks(river(floor(), exit_x=24))
    points, reached = plan_path(truth, (16.5, 8.5), (16.5, 25.5), 0.5, GEOMETRIC, smooth=1000)
    assert reached
    (leg,) = [n for n in range(len(points) - 1) if points[n, 1] < 19 <= points[n + 1, 1]]
    (x0, z0), (x1, z1) = points[leg], points[leg + 1]
    assert 24 <= x0 + (x1 - x0) * (19 - z0) / (z1 - z0) < 27  # out of the water at the shore
    walled = HeightMap.from_blocks(river(floor(), exit_x=None))
    _, reached = plan_path(walled, (16.5, 8.5), (16.5, 25.5), 0.5, GEOMETRIC)
    assert not reached


def test_planner_crosses_open_ground_in_a_straight_line():
    levels = np.full((30, 30), 4, dtype=np.int16)
    water = np.zeros(levels.shape, dtype=np.bool_)
    points, reached = find_path(levels, water, np.zeros(levels.shape, np.float32), (0, 0),
                                (3.2, 4.1), (25.5, 17.5), 3.0, GEOMETRIC, smooth=1000)
    assert reached and len(points) == 2
    assert distance_to_disc(points, (25.5, 17.5), 3.0) == pytest.approx(
        math.dist((3.2, 4.1), (25.5, 17.5)) - 3.0, abs=0.75)


def test_distance_to_disc_stops_where_the_path_enters_it():
    path = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]])
    assert distance_to_disc(path, (10.0, 10.0), 3.0) == pytest.approx(17.0)
    assert distance_to_disc(path, (0.5, 0.0), 3.0) == 0.0
