"""The navigation task (appendix "VPT Navigator Ablation Study"): reach an (x, z) goal.

A navigator (a :class:`~mrsteve.protocols.DestinationAgent`: told a destination, it says when it
has reached it) walks from the spawn towards a goal until it is within the success radius or the step budget runs out.
Metrics per episode: success (as a percentage, so the mean is the success rate) and SPL, success
weighted by ``shortest / max(taken, shortest)``; the taken path is the agent's ground-plane
trajectory until it is within the disc. Goals are drawn on the world's true ground
(:func:`pick_goal`, which the navigation experiment and the learned navigator's training share),
measured by a planner the caller brings (:class:`Ground`: the evaluator's,
:class:`mrsteve.control.path_planning.WorldGround`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mrsteve.protocols import DestinationAgent
from mrsteve.seeding import episode_rng
from mrsteve.tasks.driver import Driver, Trajectory
from mrsteve.tasks.metrics import path_length, spl

METRICS = ("success_rate", "spl")
"""What a navigation episode reports (percent, and SPL in [0, 1])."""


@dataclass(frozen=True)
class NavigationGoal:
    """Where an episode starts and ends, and its shortest path length (blocks)."""

    start: tuple[float, float]
    goal: tuple[float, float]
    shortest: float


class Ground(Protocol):
    """A whole world's ground as :func:`pick_goal` measures it (the true terrain, with the
    game's walking rules)."""

    levels: np.ndarray
    """``int[X, Z]``: each column's walking level."""
    water: np.ndarray
    """``bool[X, Z]``: the columns whose surface is water."""
    height: int
    """The world's height (a level this high is a column with no ground)."""

    def reachable(self, start: tuple[float, float], *, allow_water: bool = True) -> np.ndarray:
        """``bool[X, Z]``: the columns a player at ``start`` can walk (or swim) to."""

    def shortest(self, start: tuple[float, float], goal: tuple[float, float],
                 radius: float) -> float:
        """The shortest walk from ``start`` to the goal column, up to the disc of ``radius``."""


@dataclass(frozen=True)
class GoalRange:
    """Where :func:`pick_goal` may put a goal (the navigation experiment's task carries the
    same three settings)."""

    min_distance: float
    max_distance: float
    """Blocks from the start, at least and at most."""
    success_radius: float = 3.0
    """Blocks from the goal that count as reaching it (the disc the shortest path ends at)."""


def pick_goal(ground: Ground, start: tuple[float, float], rng: np.random.Generator,
              goals: GoalRange, *, across_water: bool = False) -> NavigationGoal:
    """A goal column drawn uniformly with ``rng`` among those that qualify, and the shortest
    path to it: walkable ground (not water, no tree, inside the walls) that the player can
    reach, ``goals.min_distance`` to ``goals.max_distance`` blocks from ``start``; with
    ``across_water``, only where no dry way leads and with its success disc out of the water
    (swim across, then climb out). ``ValueError`` when no column qualifies."""
    levels = ground.levels
    sx, sz = levels.shape
    i, k = np.meshgrid(np.arange(sx), np.arange(sz), indexing="ij")
    distance = np.hypot(i + 0.5 - start[0], k + 0.5 - start[1])
    walkable = (levels > 0) & (levels < ground.height) & ~ground.water
    wall_free = np.zeros_like(walkable)
    wall_free[1:-1, 1:-1] = True
    candidates = (
        walkable & wall_free & ground.reachable(start)
        & (distance >= goals.min_distance) & (distance <= goals.max_distance)
    )  # fmt: skip
    if across_water:  # no dry way there, and the success disc is out of the water
        candidates &= ~ground.reachable(start, allow_water=False)
        wet_i, wet_k = np.nonzero(ground.water)
        near = np.zeros_like(candidates)
        cand_i, cand_k = np.nonzero(candidates)
        if len(wet_i) and len(cand_i):
            gap = np.hypot(cand_i[:, None] - wet_i[None, :], cand_k[:, None] - wet_k[None, :])
            near[cand_i, cand_k] = gap.min(axis=1) <= goals.success_radius + 0.5
        candidates &= ~near
    cells = np.flatnonzero(candidates)
    if len(cells) == 0:
        raise ValueError(
            f"no goal {goals.min_distance:g}-{goals.max_distance:g} blocks from {start} "
            f"on this world{' across water' if across_water else ''}"
        )
    gi, gk = divmod(int(rng.choice(cells)), sz)
    goal = (gi + 0.5, gk + 0.5)
    return NavigationGoal(start, goal, ground.shortest(start, goal, goals.success_radius))


@dataclass(frozen=True)
class NavigationEpisode:
    """What one navigation episode produced."""

    metrics: dict[str, float]
    trajectory: np.ndarray
    """float[n, 2]: the (x, z) positions, the start first."""
    goal: tuple[float, float]
    blocks: np.ndarray


def run_navigation(env: Any, navigator: DestinationAgent, pick_goal: Any, *, seed: int,
                   max_steps: int) -> NavigationEpisode:
    """One episode: ``env.reset(seed=seed)``; ``pick_goal(blocks, start, rng)`` (the task's random
    stream) gives the :class:`NavigationGoal`; the navigator (the agent stream), told the goal in
    its episode frame, walks until it reaches it or ``max_steps`` steps pass."""
    path = Trajectory()
    driver = Driver(env, [path])
    info = driver.reset(seed=seed)
    world = env.unwrapped.world
    task = pick_goal(world.blocks, driver.position, episode_rng(seed, "task"))
    navigator.reset(driver.view, episode_rng(seed), info["camera"])
    navigator.set_destination(driver.frame.from_world(*task.goal))
    success = navigator.reached(driver.view)
    if not success:
        driver.run(navigator.act, steps=max_steps,
                   until=lambda step: navigator.reached(driver.view))
        success = navigator.reached(driver.view)
    trajectory = path.array()
    taken = path_length(trajectory)
    return NavigationEpisode(
        metrics={
            "success_rate": 100.0 * success,
            "spl": spl(success, task.shortest, taken),
            "steps": len(trajectory) - 1,
            "path_length": taken,
            "shortest": task.shortest,
            "final_distance": math.dist(trajectory[-1], task.goal),
        },
        trajectory=trajectory,
        goal=task.goal,
        blocks=world.blocks.copy(),
    )
