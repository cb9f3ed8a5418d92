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
this module drives any object with ``reset(obs, rng, camera)``, ``observe(obs)``, ``act(obs)``
and ``goal``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mrsteve.seeding import episode_rng
from mrsteve.spaces import Action, AgentFrame, Observation
from mrsteve.tasks.metrics import exploration_score

METRICS = ("map_coverage", "revisit_count")
"""What an exploration episode reports (percent, and revisits per lingered cell)."""

Bounds = tuple[float, float, float, float]
"""``(x_min, z_min, x_max, z_max)`` of a walkable area."""


class Explorer(Protocol):
    """What the exploration loop drives."""

    goal: tuple[float, float] | None

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None: ...

    def observe(self, obs: Observation) -> None: ...

    def act(self, obs: Observation) -> Action: ...


@dataclass(frozen=True)
class ExplorationEpisode:
    """What one exploration episode produced."""

    metrics: dict[str, float]
    trajectory: np.ndarray
    """float[steps + 1, 2]: the (x, z) positions, the start first."""
    goals: np.ndarray
    """float[n, 2]: the distinct goals the explorer chose, in order."""
    blocks: np.ndarray
    """The world's blocks at the end (for plots)."""


def walkable_bounds(blocks: np.ndarray) -> Bounds:
    """``(x_min, z_min, x_max, z_max)`` inside the one-block wall ring of a world."""
    return (1.0, 1.0, float(blocks.shape[0] - 1), float(blocks.shape[2] - 1))


def run_exploration(env: Any, make_explorer: Any, *, seed: int, steps: int, grid: int = 11,
                    linger_steps: int = 300) -> ExplorationEpisode:
    """One episode: ``env.reset(seed=seed)``, then ``make_explorer()`` explores for ``steps``
    steps with the episode's agent generator. The explorer sees the world only through the
    episode's :class:`~mrsteve.spaces.AgentFrame` (it is told nothing of the map: not its size,
    nor its walls); the metrics are measured on the walkable area inside the wall ring."""
    obs, info = env.reset(seed=seed)
    bounds = walkable_bounds(env.unwrapped.world.blocks)
    frame = AgentFrame.of(obs)
    explorer = make_explorer()
    explorer.reset(frame.view(obs), episode_rng(seed), info["camera"])

    trajectory = np.empty((steps + 1, 2))
    trajectory[0] = obs["pose"][0], obs["pose"][2]
    goals: list[tuple[float, float]] = []
    for t in range(steps):
        view = frame.view(obs)
        explorer.observe(view)
        obs, *_ = env.step(explorer.act(view))
        trajectory[t + 1] = obs["pose"][0], obs["pose"][2]
        goal = None if explorer.goal is None else frame.to_world(*explorer.goal)
        if goal is not None and (not goals or goals[-1] != goal):
            goals.append(goal)
    score = exploration_score(
        trajectory, origin=bounds[:2], size=(bounds[2] - bounds[0], bounds[3] - bounds[1]),
        grid=grid, linger_steps=linger_steps,
    )  # fmt: skip
    return ExplorationEpisode(
        metrics={"map_coverage": score.map_coverage, "revisit_count": score.revisit_count},
        trajectory=trajectory,
        goals=np.asarray(goals, dtype=np.float64).reshape(-1, 2),
        blocks=env.unwrapped.world.blocks.copy(),
    )
