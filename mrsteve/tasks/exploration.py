"""The paper's exploration experiment (Section 4.1, Table 1; appendix "Exploration Experiments
Details").

An explorer starts at the centre of Map 1 (``map1``: 100 x 100 blocks inside a wall, a stone
mountain, a pond in a hollow, trees) and explores for 6,000 steps. Metrics
(:func:`~mrsteve.tasks.metrics.exploration_score`):

- ``map_coverage``: the percentage of the cells of an 11 x 11 grid the trajectory enters. The grid
  divides the walkable area inside the wall ring (98 x 98 blocks, cells of about 8.9 blocks);
- ``revisit_count``: over the cells where the agent spent more than 300 steps, the mean number of
  times it came back to the cell after leaving it.

Explorers (:data:`EXPLORERS`, the columns of Table 1 with the paper's figures in
:data:`PAPER_RESULTS`): ``count-based`` (MrSteve: count-based goals over our VPT-Nav stand-in),
``count-based-straight`` (count-based goals over a navigator without terrain skills, for the
paper's DQN low level), ``plan4mc`` (Plan4MC's direction-picking high level over our navigator),
``plan4mc-straight`` (Plan4MC: both its levels' stand-ins) and ``go-explore`` (STEVE-1 told to
"go explore"). See :mod:`mrsteve.control.explorers` for how each stands in for the original. The
hierarchical explorers know the walkable area (the paper sizes the visitation map to the map:
L = 120, G = 15 on 100 x 100) and tile their goal patches over it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import gymnasium as gym
import numpy as np

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.control.explorers import Explorer, HierarchicalExplorer
from mrsteve.control.goals import (
    Bounds,
    CountBasedGoalSelector,
    DirectionConfig,
    DirectionGoalSelector,
    ExplorationConfig,
)
from mrsteve.control.navigation import (
    DepthNavigator,
    Navigator,
    NavigatorConfig,
    StraightNavigator,
)
from mrsteve.control.visitation import VisitationConfig
from mrsteve.control.wander import WanderConfig, WanderExplorer
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.tasks.metrics import exploration_score
from mrsteve.tasks.navigation import check_choice

METRICS = ("map_coverage", "revisit_count")
"""What an exploration episode reports (percent, and revisits per lingered cell)."""


@dataclass(frozen=True)
class ExplorationTaskConfig:
    """One exploration episode's set-up (the paper's values)."""

    agent: str = "count-based"
    """A key of :data:`EXPLORERS`."""
    world: str = "map1"
    """The world recipe (the paper: Map 1, 100 x 100 with walls)."""
    steps: int = 6000
    """Steps of exploration (the paper: 6K)."""
    patch_size: float = 15.0
    """Goal patch side G of the count-based selector (the paper: 15 on 100 x 100 maps)."""
    grid: int = 11
    """Cells per side of the coverage grid (the paper: 11 x 11)."""
    linger_steps: int = 300
    """Revisit Count counts the cells where the agent spent more steps than this (the paper:
    300)."""
    trajectory_every: int = 5
    """The record keeps every this-many-th position of the trajectory (for plots)."""
    obs_size: tuple[int, int] = DEFAULT_OBS_SIZE
    """``(height, width)`` of the observations."""

    def __post_init__(self) -> None:
        check_choice("agent", self.agent, EXPLORERS)
        if min(self.steps, self.grid, self.trajectory_every) < 1 or not self.patch_size > 0:
            raise ValueError(f"steps, grid and trajectory_every must be >= 1 and patch_size > 0, "
                             f"got {self}")


def walkable_bounds(blocks: np.ndarray) -> Bounds:
    """``(x_min, z_min, x_max, z_max)`` inside the one-block wall ring of a world."""
    return (1.0, 1.0, float(blocks.shape[0] - 1), float(blocks.shape[2] - 1))


ExplorerFactory = Callable[[Bounds, ExplorationTaskConfig], Explorer]
"""Builds an explorer for a world's walkable bounds."""


def _count_based(navigator: Callable[[], Navigator]) -> ExplorerFactory:
    def make(bounds: Bounds, config: ExplorationTaskConfig) -> Explorer:
        selector = CountBasedGoalSelector(ExplorationConfig(patch_size=config.patch_size),
                                          VisitationConfig(), bounds)
        return HierarchicalExplorer(selector, navigator())
    return make


def _direction(navigator: Callable[[], Navigator]) -> ExplorerFactory:
    def make(bounds: Bounds, config: ExplorationTaskConfig) -> Explorer:
        return HierarchicalExplorer(DirectionGoalSelector(bounds, DirectionConfig()), navigator())
    return make


EXPLORERS: dict[str, ExplorerFactory] = {
    "count-based": _count_based(DepthNavigator),
    "count-based-straight": _count_based(StraightNavigator),
    "plan4mc": _direction(DepthNavigator),
    "plan4mc-straight": _direction(StraightNavigator),
    "go-explore": lambda bounds, config: WanderExplorer(WanderConfig()),
}
"""Explorer factories by agent name."""

PAPER_RESULTS = {
    "count-based": (84.42, 0.38),  # Count-based + VPT-Nav (ours)
    "count-based-straight": (31.83, 4.47),  # Count-based + DQN
    "plan4mc": (29.82, 4.72),  # RNN-based + VPT-Nav
    "plan4mc-straight": (16.36, 6.2),  # RNN-based + DQN (Plan4MC)
    "go-explore": (50.77, 2.68),  # STEVE-1 "go explore"
}
"""Table 1 of the paper, ``(map coverage %, revisit count)`` for the column each agent stands in
for."""


def component_configs(config: ExplorationTaskConfig) -> dict:
    """The configurations of an explorer's parts, for the saved run configuration."""
    agent = config.agent
    if agent == "go-explore":
        return {"wander": asdict(WanderConfig())}
    if agent.startswith("count-based"):
        high = {"goal_selector": asdict(ExplorationConfig(patch_size=config.patch_size)),
                "visitation": asdict(VisitationConfig())}
    else:
        high = {"direction": asdict(DirectionConfig())}
    navigator = "straight" if agent.endswith("-straight") else "depth"
    return {**high, "navigator": navigator, "navigator_config": asdict(NavigatorConfig())}


def run_exploration(config: ExplorationTaskConfig, seed: int) -> dict:
    """One episode: the world and the explorer seeded from ``seed``, ``config.steps`` steps.

    Returns ``{"metrics", "trajectory" (float[steps + 1, 2]), "goals" (float[n, 2], the distinct
    goals in order), "blocks"}``."""
    env = gym.make("mrsteve/Voxel-v0", world=config.world, obs_size=config.obs_size)
    obs, info = env.reset(seed=seed)
    blocks = env.unwrapped.world.blocks
    bounds = walkable_bounds(blocks)
    explorer = EXPLORERS[config.agent](bounds, config)
    explorer.reset(obs, np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0]),
                   info["camera"])

    trajectory = np.empty((config.steps + 1, 2))
    trajectory[0] = obs["pose"][0], obs["pose"][2]
    goals: list[tuple[float, float]] = []
    for t in range(config.steps):
        explorer.observe(obs)
        obs, *_ = env.step(explorer.act(obs))
        trajectory[t + 1] = obs["pose"][0], obs["pose"][2]
        if explorer.goal is not None and (not goals or goals[-1] != explorer.goal):
            goals.append(explorer.goal)
    blocks = env.unwrapped.world.blocks.copy()
    env.close()
    score = exploration_score(
        trajectory, origin=bounds[:2], size=(bounds[2] - bounds[0], bounds[3] - bounds[1]),
        grid=config.grid, linger_steps=config.linger_steps,
    )  # fmt: skip
    return {
        "metrics": {"map_coverage": score.map_coverage, "revisit_count": score.revisit_count},
        "trajectory": trajectory,
        "goals": np.asarray(goals, dtype=np.float64).reshape(-1, 2),
        "blocks": blocks,
    }
