"""Explorers: valid actions for every explorer, and count-based exploration covers more ground
than the memoryless wanderer and the short-memory direction picker (the paper's Table 1)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mrsteve.env  # noqa: F401
from mrsteve.control.explorers import Explorer, HierarchicalExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionGoalSelector,
    ExplorationConfig,
)
from mrsteve.control.navigation import DepthNavigator, StraightNavigator
from mrsteve.control.wander import WanderExplorer
from mrsteve.tasks.metrics import exploration_score

WALKABLE = (1.0, 1.0, 63.0, 63.0)
"""Inside the walls of the 64 x 64 navigation worlds."""

EXPLORERS = {
    "count-based": lambda: HierarchicalExplorer(
        CountBasedGoalSelector(ExplorationConfig(patch_size=10.0), bounds=WALKABLE),
        DepthNavigator()),
    "count-based-straight": lambda: HierarchicalExplorer(
        lambda: CountBasedGoalSelector(ExplorationConfig(patch_size=10.0), bounds=WALKABLE),
        StraightNavigator()),
    "plan4mc": lambda: HierarchicalExplorer(DirectionGoalSelector(WALKABLE), DepthNavigator()),
    "go-explore": WanderExplorer,
}


def explore(explorer: Explorer, steps: int, world: str = "plains_nav", seed: int = 0):
    """Run an explorer; returns its positions ``[steps + 1, 2]`` and the actions it took."""
    env = gym.make("mrsteve/Voxel-v0", world=world, obs_size=(24, 40))
    obs, info = env.reset(seed=seed)
    explorer.reset(obs, np.random.default_rng(seed), info["camera"])
    positions, actions = [obs["pose"][[0, 2]]], []
    for _ in range(steps):
        explorer.observe(obs)
        action = explorer.act(obs)
        actions.append(action)
        obs, *_ = env.step(action)
        positions.append(obs["pose"][[0, 2]])
    return np.array(positions), actions


def coverage(positions: np.ndarray) -> float:
    return exploration_score(positions, WALKABLE[:2], (62.0, 62.0), grid=8).map_coverage


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorers_give_valid_actions_and_report_their_goal(name):
    explorer = EXPLORERS[name]()
    assert isinstance(explorer, Explorer)
    positions, actions = explore(explorer, 60)
    space = gym.make("mrsteve/Voxel-v0", world="flat").action_space
    for action in actions:
        assert set(action) <= set(space.spaces)
        assert all(action[key] in (0, 1) for key in action if key != "camera")
        assert np.all(np.abs(action["camera"]) <= 180)
    assert np.ptp(positions, axis=0).max() > 2.0  # it went somewhere
    goal = explorer.goal
    if name == "go-explore":
        assert goal is None
    else:
        assert goal is not None and WALKABLE[0] <= goal[0] <= WALKABLE[2]


def test_count_based_exploration_covers_more_than_the_wanderer_and_the_direction_picker():
    covered = {name: coverage(explore(EXPLORERS[name](), 800)[0])
               for name in ("count-based", "go-explore", "plan4mc")}
    assert covered["count-based"] > covered["go-explore"] + 10
    assert covered["count-based"] > covered["plan4mc"] + 10


def test_hierarchical_explorer_hands_the_task_to_its_selector():
    class Selector(CountBasedGoalSelector):
        tasks = []

        def set_task(self, query, threshold):
            self.tasks.append((query, threshold))

    explorer = HierarchicalExplorer(Selector(), StraightNavigator())
    explorer.set_task(np.ones(2, np.float32), 0.5)
    assert len(Selector.tasks) == 1 and Selector.tasks[0][1] == 0.5
    for name in ("count-based", "plan4mc", "go-explore"):
        EXPLORERS[name]().set_task(np.ones(2, np.float32), 0.5)  # task-free explorers ignore it
