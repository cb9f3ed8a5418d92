"""The navigation task (appendix "VPT Navigator Ablation Study"): reach an (x, z) goal.

A navigator (a :class:`~mrsteve.protocols.DestinationAgent`: told a destination, it says when it
has reached it) walks from the spawn towards a goal until it is within the success radius or the step budget runs out.
Metrics per episode: success (as a percentage, so the mean is the success rate) and SPL, success
weighted by ``shortest / max(taken, shortest)``; the taken path is the agent's ground-plane
trajectory until it is within the disc. Where goals come from (and the shortest path, measured on
the true terrain) is the experiment's business (:mod:`mrsteve.eval.navigation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
