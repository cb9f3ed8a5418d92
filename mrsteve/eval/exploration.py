"""The Exploration experiment (Section 4.1, Table 1; appendix "Exploration Experiments Details").

An explorer starts at the centre of Map 1 (``map1``: 100 x 100 blocks inside a wall, a stone
mountain, a pond in a hollow, trees) and explores for 6,000 steps; the task
(:mod:`mrsteve.tasks.exploration`) scores Map Coverage and Revisit Count.

Explorers (:data:`EXPLORERS`, the columns of Table 1 with the paper's figures in
:data:`PAPER_RESULTS`): ``count-based`` (MrSteve: count-based goals over our VPT-Nav stand-in),
``count-based-straight`` (count-based goals over a navigator without terrain skills, for the
paper's DQN low level), ``plan4mc`` (Plan4MC's direction-picking high level over our navigator),
``plan4mc-straight`` (Plan4MC: both its levels' stand-ins) and ``go-explore`` (STEVE-1 told to
"go explore"). See :mod:`mrsteve.control.explorers` for how each stands in for the original. No
explorer knows the map: the count-based ones tile the visitation map (128 x 128 around the start,
growing) with G = 15 patches (the paper's setting for 100 x 100 maps) and give up goals their
navigator finds out of reach (behind the walls); the metrics are measured by the task on the
walkable area inside the walls.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.config import ExplorerConfig
from mrsteve.agent.factory import build_explorer
from mrsteve.control.goals import DirectionConfig, ExplorationConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.wander import WanderConfig, WanderExplorer
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.eval.experiment import Experiment, config_from_options
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.sweep import EpisodeSpec, Group, Record
from mrsteve.naming import choose, lookup
from mrsteve.tasks.exploration import METRICS, run_exploration
from mrsteve.tasks.navigation import compact_trajectory

EXPLORERS: dict[str, ExplorerConfig | WanderConfig] = {
    "count-based": ExplorerConfig("count-based", "depth"),
    "count-based-straight": ExplorerConfig("count-based", "straight"),
    "plan4mc": ExplorerConfig("plan4mc", "depth"),
    "plan4mc-straight": ExplorerConfig("plan4mc", "straight"),
    "go-explore": WanderConfig(),
}
"""Explorer configurations by agent name (the goal patch side G is set by the experiment)."""

PAPER_RESULTS = {
    "count-based": (84.42, 0.38),  # Count-based + VPT-Nav (ours)
    "count-based-straight": (31.83, 4.47),  # Count-based + DQN
    "plan4mc": (29.82, 4.72),  # RNN-based + VPT-Nav
    "plan4mc-straight": (16.36, 6.2),  # RNN-based + DQN (Plan4MC)
    "go-explore": (50.77, 2.68),  # STEVE-1 "go explore"
}
"""Table 1 of the paper, ``(map coverage %, revisit count)`` for the column each agent stands in
for."""


@dataclass(frozen=True)
class ExplorationTaskConfig:
    """The Exploration experiment's set-up (the paper's values)."""

    agent: str = "count-based"
    """Explorer: count-based, count-based-straight, plan4mc, plan4mc-straight, go-explore
    (comma-separated, or 'all')."""
    steps: int = 6000
    """Steps per episode (the paper: 6K)."""
    world: str = "map1"
    """The world recipe (the paper: Map 1, 100 x 100 with walls)."""
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
        choose(self.agent, list(EXPLORERS), "agent")
        if min(self.steps, self.grid, self.trajectory_every) < 1 or not self.patch_size > 0:
            raise ValueError(f"steps, grid and trajectory_every must be >= 1 and patch_size > 0, "
                             f"got {self}")

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(EXPLORERS), "agent")


def explorer_config(config: ExplorationTaskConfig) -> ExplorerConfig | WanderConfig:
    """The configuration of ``config.agent``'s explorer (one agent); the Plan4MC-style grid cells
    are 0.6 G (its 11 x 11 grid over a 100 x 100 map)."""
    explorer = lookup(EXPLORERS, config.agent, "agent")
    if isinstance(explorer, WanderConfig):
        return explorer
    return replace(explorer, goals=ExplorationConfig(patch_size=config.patch_size),
                   direction=DirectionConfig(cell_size=0.6 * config.patch_size))


def component_configs(config: ExplorationTaskConfig) -> dict[str, Any]:
    """The configuration tree of an explorer, for the saved run configuration."""
    explorer = explorer_config(config)
    if isinstance(explorer, WanderConfig):
        return {"kind": "go-explore", "wander": asdict(explorer)}
    tree = asdict(explorer)
    if explorer.kind != "plan4mc":
        tree.pop("direction")
    else:
        tree.pop("goals"), tree.pop("visitation")
    return {**tree, "navigator_config": asdict(NavigatorConfig())}


def exploration_run(config: ExplorationTaskConfig, seed: int):
    """One episode of ``config.agent`` (one agent), seeded with ``seed``
    (:class:`~mrsteve.tasks.exploration.ExplorationEpisode`)."""

    def make_explorer():
        explorer = explorer_config(config)
        if isinstance(explorer, WanderConfig):
            return WanderExplorer(explorer)
        return build_explorer(explorer, navigator=NavigatorConfig())

    env = gym.make("mrsteve/Voxel-v0", world=config.world, obs_size=config.obs_size)
    try:
        return run_exploration(env, make_explorer, seed=seed, steps=config.steps,
                               grid=config.grid, linger_steps=config.linger_steps)
    finally:
        env.close()


def exploration_episode(spec: EpisodeSpec) -> Record:
    """The episode function: metrics, goals and the trajectory (every ``trajectory_every``-th
    position, rounded to 0.01 block)."""
    config = config_from_options(ExplorationTaskConfig, dict(spec.options), agent=spec.agent)
    episode = exploration_run(config, spec.seed)
    return {
        **episode.metrics,
        "trajectory": compact_trajectory(episode.trajectory, config.trajectory_every),
        "goals": np.round(episode.goals, 2).tolist(),
    }


class Exploration(Experiment):
    """Exploration (paper Table 1): Map Coverage and Revisit Count on Map 1.

    The explorer starts at the centre of Map 1 and explores for --steps steps. Map Coverage is the
    percentage of an 11 x 11 grid over the walkable area (inside the walls) that the trajectory
    enters; Revisit Count the mean number of returns to the cells where it spent over 300 steps.
    """

    name = "exploration"
    config_type = ExplorationTaskConfig
    options = ("agent", "steps")
    default_episodes = 20
    episode = staticmethod(exploration_episode)

    def groups(self, config: ExplorationTaskConfig) -> list[Group]:
        groups = []
        for name in config.agents:
            one = replace(config, agent=name)
            options = {k: v for k, v in asdict(one).items() if k != "agent"}
            groups.append(Group("exploration", name, name,
                                {"task": asdict(one), "agent": component_configs(one)}, options))
        return groups

    def metrics(self, config: ExplorationTaskConfig) -> tuple[str, ...]:
        return METRICS

    def table(self, config, groups, summaries) -> str:
        rows = []
        for group in groups:
            summary = summaries[(group.task, group.agent)]
            coverage, revisits = PAPER_RESULTS[group.agent]
            rows.append([group.agent, format_metric(summary["map_coverage"]),
                         format_metric(summary["revisit_count"]), f"{coverage:.2f}",
                         f"{revisits:.2f}"])
        return format_table(["agent", "map coverage %", "revisit count", "paper coverage %",
                             "paper revisits"], rows)

    def plot_episode(self, record: Record, path: Path) -> None:
        from mrsteve.eval.plots import save_trajectory_plot, world_blocks

        world = ExplorationTaskConfig().world if "world" not in record else record["world"]
        save_trajectory_plot(
            path, world_blocks(world, record["seed"]), record["trajectory"], goals=record["goals"],
            title=f"{record['agent']}, seed {record['seed']}: coverage "
                  f"{record['map_coverage']:.1f} %, revisits {record['revisit_count']:.2f}",
        )  # fmt: skip


EXPLORATION = Exploration()
