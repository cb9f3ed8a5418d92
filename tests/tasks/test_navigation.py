"""The navigation experiment: goals 10-20 blocks away on walkable ground (across the river on
``river``), shortest paths on the true terrain, and the metrics an episode reports."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import mrsteve.env  # noqa: F401
from mrsteve.control.mapping import HeightMap, reachable
from mrsteve.eval.runner import make_specs
from mrsteve.tasks.navigation import (
    METRICS,
    TERRAINS,
    NavigationTaskConfig,
    compact_trajectory,
    navigation_config,
    navigation_episode,
    pick_goal,
)


def start_world(terrain: str, seed: int):
    env = gym.make("mrsteve/Voxel-v0", world=TERRAINS[terrain], obs_size=(8, 8))
    obs, _ = env.reset(seed=seed)
    return env.unwrapped.world.blocks, (float(obs["pose"][0]), float(obs["pose"][2]))


@pytest.mark.parametrize("terrain", ["flat", "mountain", "river"])
def test_goals_are_walkable_reachable_and_10_to_20_blocks_away(terrain):
    blocks, start = start_world(terrain, 0)
    world = HeightMap.from_blocks(blocks)
    dry = reachable(world, start, allow_water=False)
    config = NavigationTaskConfig(terrain=terrain)
    for seed in range(5):
        task = pick_goal(blocks, start, np.random.default_rng(seed), config,
                         across_water=terrain == "river")
        cell = world.cell(*task.goal)
        assert 10 <= math.dist(start, task.goal) <= 20
        assert not world.water[cell] and reachable(world, start)[cell]
        assert dry[cell] != (terrain == "river")  # across the river: no dry way there
        assert task.shortest >= math.dist(start, task.goal) - 3.0 - 1e-9


def test_shortest_path_on_flat_ground_is_the_straight_line_to_the_success_disc():
    blocks, start = start_world("flat", 0)
    task = pick_goal(blocks, start, np.random.default_rng(0), NavigationTaskConfig())
    assert task.shortest == pytest.approx(math.dist(start, task.goal) - 3.0, abs=0.6)


def test_unknown_terrain_or_navigator_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid: flat, plains, mountain, river"):
        NavigationTaskConfig(terrain="swamp")
    with pytest.raises(ValueError, match="valid: depth, straight"):
        NavigationTaskConfig(navigator="vpt")


def test_an_episode_reports_the_metrics_and_its_trajectory():
    (spec,) = make_specs(["navigation/flat"], ["depth"], 1, 7, max_steps=300, obs_size=(24, 40))
    assert navigation_config(spec) == NavigationTaskConfig(
        terrain="flat", navigator="depth", max_steps=300, obs_size=(24, 40))
    record = navigation_episode(spec)
    assert set(METRICS) <= set(record)
    assert record["success_rate"] == 100.0 and 0.5 < record["spl"] <= 1.0
    assert math.dist(record["trajectory"][-1], record["goal"]) <= 3.0
    assert record["trajectory"][0] == [32.5, 32.5]


def test_compact_trajectory_keeps_every_nth_position_and_the_last():
    path = np.arange(14, dtype=float).reshape(7, 2)
    assert compact_trajectory(path, 3) == [[0, 1], [6, 7], [12, 13]]
    assert compact_trajectory(path, 4) == [[0, 1], [8, 9], [12, 13]]
