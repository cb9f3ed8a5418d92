"""Explorers: valid actions for every explorer, and count-based exploration covers more ground
than the memoryless wanderer and the short-memory direction picker (the paper's Table 1)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mrsteve.env  # noqa: F401
from mrsteve.control.explorers import (
    CountBasedProposer,
    DirectionConfig,
    DirectionProposer,
    Explorer,
    HierarchicalExplorer,
    WanderExplorer,
    patch_bounds,
)
from mrsteve.control.goals import ExplorationConfig
from mrsteve.control.navigation import DepthNavigator, StraightNavigator
from mrsteve.tasks.metrics import exploration_score

WALKABLE = (1.0, 1.0, 63.0, 63.0)
"""Inside the walls of the 64 x 64 navigation worlds."""

EXPLORERS = {
    "count-based": lambda: HierarchicalExplorer(
        CountBasedProposer(ExplorationConfig(patch_size=10.0), bounds=WALKABLE), DepthNavigator()),
    "count-based-straight": lambda: HierarchicalExplorer(
        CountBasedProposer(ExplorationConfig(patch_size=10.0), bounds=WALKABLE),
        StraightNavigator()),
    "plan4mc": lambda: HierarchicalExplorer(DirectionProposer(WALKABLE), DepthNavigator()),
    "go-explore": WanderExplorer,
}


def explore(explorer: Explorer, steps: int, world: str = "plains_nav", seed: int = 0):
    """Run an explorer; returns its positions ``[steps + 1, 2]`` and the actions it took."""
    env = gym.make("mrsteve/Voxel-v0", world=world, obs_size=(24, 40))
    obs, _ = env.reset(seed=seed)
    explorer.reset(obs, np.random.default_rng(seed))
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


def test_count_based_proposer_paints_what_the_agent_sees_and_aims_at_unseen_patches():
    proposer = CountBasedProposer(ExplorationConfig(patch_size=10.0), bounds=WALKABLE)
    pose = (32.5, 16.0, 32.5, 0.0, 0.0)  # facing +z
    proposer.reset(pose, np.random.default_rng(0))
    proposer.observe(pose)
    visitation = proposer.visitation
    assert visitation.count_at(32.5, 38.5) == 1 and visitation.count_at(32.5, 26.5) == 0
    goal = proposer.propose(pose, 0)
    assert goal != (32.5, 32.5) and np.hypot(goal[0] - 32.5, goal[1] - 32.5) <= 15


def test_goal_patches_are_anchored_on_the_start_and_centred_inside_the_walls():
    x_min, z_min, x_max, z_max = patch_bounds((1.0, 1.0, 99.0, 99.0), (50.5, 50.5), 15.0)
    assert (x_min, x_max) == (-2.0, 103.0) and (z_min, z_max) == (-2.0, 103.0)
    centres = [x_min + 7.5 + 15 * k for k in range(7)]
    assert centres[0] == 5.5 and centres[-1] == 95.5 and 50.5 in centres


def test_direction_proposer_moves_to_a_neighbouring_cell_it_has_not_just_visited():
    chosen = set()
    for seed in range(12):
        proposer = DirectionProposer((0.0, 0.0, 110.0, 110.0), DirectionConfig(grid=11, memory=4))
        proposer.reset((55.0, 0.0, 55.0, 0.0, 0.0), np.random.default_rng(seed))  # cell (5, 5)
        proposer.observe((45.0, 0.0, 55.0, 0.0, 0.0))  # then (4, 5)
        proposer.observe((45.0, 0.0, 65.0, 0.0, 0.0))  # then (4, 6)
        goal = proposer.propose((45.0, 0.0, 65.0, 0.0, 0.0), 0)
        cell = proposer.cell(*goal)
        assert goal == (cell[0] * 10 + 5.0, cell[1] * 10 + 5.0)  # a cell centre
        chosen.add(cell)
    assert chosen == {(3, 6), (4, 7), (5, 6)}  # never back north to (4, 5)


def test_direction_proposer_stays_on_its_grid():
    proposer = DirectionProposer((0.0, 0.0, 110.0, 110.0))
    proposer.reset((5.0, 0.0, 5.0, 0.0, 0.0), np.random.default_rng(0))  # corner cell (0, 0)
    goal = proposer.propose((5.0, 0.0, 5.0, 0.0, 0.0), 0)
    assert proposer.cell(*goal) in {(1, 0), (0, 1)}
