"""Navigators reach (x, z) goals from pose, depth and semantics (the VPT-Nav stand-in)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nav_worlds import GROUND, channel, floor, river, step_up, wall_across, world

from mrsteve.control.navigation import DepthNavigator, Navigator, NavigatorConfig, StraightNavigator
from mrsteve.env import make_env
from mrsteve.world.camera import Camera

OBS_SIZE = (24, 40)
NAVIGATORS = [DepthNavigator, StraightNavigator]


def drive(navigator: Navigator, blocks: np.ndarray, goal, steps: int, seed: int = 0, **where):
    """Run ``navigator`` toward ``goal``; returns (reached, trajectory [n, 3] of x, y, z)."""
    env = make_env(world=world(blocks, **where), obs_size=OBS_SIZE)
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


def test_depth_navigator_detours_after_no_progress_steps_without_getting_closer():
    """The progress rule (:class:`~mrsteve.control.motion.ProgressTracker`): standing still in
    front of a far goal, it steers straight at it until ``no_progress_steps`` steps passed
    without getting ``progress_gain`` closer, then turns away on a detour."""
    camera = Camera(*OBS_SIZE)
    navigator = DepthNavigator(NavigatorConfig(no_progress_steps=5, detour_steps=4))
    navigator.reset(np.random.default_rng(0), camera)
    obs = {"pose": np.array([16.5, float(GROUND), 8.5, 0.0, 10.0]),
           "depth": np.full(OBS_SIZE, np.inf, np.float32),
           "semantic": np.zeros(OBS_SIZE, np.uint8)}  # fmt: skip
    turns = [float(navigator.act(obs, (16.5, 28.5))["camera"][1]) for _ in range(7)]
    assert turns[:5] == [0.0] * 5  # the goal is straight ahead (+z)
    assert abs(turns[5]) == 10.0  # the detour turns at the largest turn per step


def test_depth_navigator_judges_a_walk_it_only_watches():
    """``replan`` plans from the watched pose and gives the verdict ``blocked`` would: a goal
    beyond the floor's wall is found out once the wall is in view; a goal inside never is."""
    env = make_env(world=world(floor()), obs_size=OBS_SIZE)
    obs, info = env.reset(seed=0)
    watcher = DepthNavigator()
    watcher.reset(np.random.default_rng(0), info["camera"])
    with pytest.raises(RuntimeError, match="no goal yet"):
        watcher.replan(obs)
    walker = StraightNavigator()
    walker.reset(np.random.default_rng(0), info["camera"])
    verdicts = {}
    for goal in ((16.5, 40.5), (16.5, 24.5)):  # beyond the wall at z = 31; inside
        obs, _ = env.reset(seed=0)
        watcher.reset(np.random.default_rng(0), info["camera"])
        watcher.blocked(obs, goal)
        judged = []
        for _ in range(40):
            obs, *_ = env.step(walker.act(obs, goal))
            judged.append(watcher.replan(obs))
            assert watcher.blocked(obs, goal) == judged[-1]
        verdicts[goal] = judged
    assert verdicts[(16.5, 40.5)][-1] and not any(verdicts[(16.5, 24.5)])
