"""The exploration task (Section 4.1, Table 1; appendix "Exploration Experiments Details").

An explorer starts at the centre of a walled map and explores for a number of steps; the task
records its ground-plane trajectory and the goals it chose. Metrics
(:func:`~mrsteve.tasks.metrics.exploration_score`):

- ``map_coverage``: the percentage of the cells of an 11 x 11 grid the trajectory enters. The grid
  divides the walkable area inside the wall ring (98 x 98 blocks on Map 1, cells of about 8.9
  blocks);
- ``revisit_count``: over the cells where the agent spent more than 300 steps, the mean number of
  times it came back to the cell after leaving it.

Which explorers run, and on what, is the experiment's business (:mod:`mrsteve.eval.exploration`);
this module drives any agent whose decisions carry the exploration goal
(:class:`mrsteve.protocols.Decision`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve.protocols import Agent
from mrsteve.seeding import episode_rng
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step, Trajectory
from mrsteve.tasks.metrics import exploration_score

METRICS = ("map_coverage", "revisit_count")
"""What an exploration episode reports (percent, and revisits per lingered cell)."""

Bounds = tuple[float, float, float, float]
"""``(x_min, z_min, x_max, z_max)`` of a walkable area."""


@dataclass(frozen=True)
class ExplorationEpisode:
    """What one exploration episode produced."""

    metrics: dict[str, float]
    trajectory: np.ndarray
    """float[steps + 1, 2]: the world (x, z) positions, the start first."""
    goals: np.ndarray
    """float[n, 2]: the distinct goals the explorer chose, in order (world (x, z))."""
    blocks: np.ndarray
    """The world's blocks at the end (for plots)."""


class GoalTrace(EpisodeCallback):
    """The distinct exploration goals of the decisions, in order, in world coordinates."""

    def __init__(self) -> None:
        self.goals: list[tuple[float, float]] = []

    def on_reset(self, env, obs, frame) -> None:
        self.frame, self.goals = frame, []

    def on_step(self, step: Step) -> None:
        if step.decision.goal is not None:
            goal = self.frame.to_world(*step.decision.goal)
            if not self.goals or self.goals[-1] != goal:
                self.goals.append(goal)


def walkable_bounds(blocks: np.ndarray) -> Bounds:
    """``(x_min, z_min, x_max, z_max)`` inside the one-block wall ring of a world."""
    return (1.0, 1.0, float(blocks.shape[0] - 1), float(blocks.shape[2] - 1))


def square_bounds(centre: tuple[float, float], side: float) -> Bounds:
    """``(x_min, z_min, x_max, z_max)`` of the square of ``side`` blocks centred on ``centre``."""
    x, z = centre
    return (x - side / 2, z - side / 2, x + side / 2, z + side / 2)


def run_exploration(env: Any, agent: Agent, *, seed: int, steps: int, grid: int = 11,
                    linger_steps: int = 300, area: float | None = None) -> ExplorationEpisode:
    """One episode: ``env.reset(seed=seed)``, then ``agent`` (an explorer) explores for ``steps``
    steps with the episode's agent generator. It sees the world only in the episode frame (it is
    told nothing of the map: not its size, nor its walls); the metrics are measured on the
    walkable area inside the wall ring, or with ``area`` on the square of that side centred on
    the start (an unbounded world's measure)."""
    trajectory, goals = Trajectory(), GoalTrace()
    driver = Driver(env, [trajectory, goals])
    info = driver.reset(seed=seed)
    if area is not None:
        bounds = square_bounds(driver.position, area)
    elif env.unwrapped.world.window is not None:
        raise ValueError("an unbounded world has no walls to measure coverage inside: give the "
                         "side of the square around the start to measure (area)")
    else:
        bounds = walkable_bounds(env.unwrapped.world.blocks)
    agent.reset(driver.view, episode_rng(seed), info["camera"])
    driver.run(agent.act, steps=steps)
    path = trajectory.array()
    score = exploration_score(
        path, origin=bounds[:2], size=(bounds[2] - bounds[0], bounds[3] - bounds[1]),
        grid=grid, linger_steps=linger_steps,
    )  # fmt: skip
    return ExplorationEpisode(
        metrics={"map_coverage": score.map_coverage, "revisit_count": score.revisit_count},
        trajectory=path,
        goals=np.asarray(goals.goals, dtype=np.float64).reshape(-1, 2),
        blocks=env.unwrapped.world.blocks.copy(),
    )
