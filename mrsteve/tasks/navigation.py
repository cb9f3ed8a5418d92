"""The navigation task (appendix "VPT Navigator Ablation Study"): reach an (x, z) goal.

A navigator (anything with ``reset(rng)``, ``act(obs, goal)`` and ``reached(obs, goal)``) walks
from the spawn towards a goal until it is within the success radius or the step budget runs out.
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

from mrsteve.seeding import episode_rng
from mrsteve.spaces import AgentFrame
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


def compact_trajectory(trajectory: np.ndarray, every: int) -> list[list[float]]:
    """Every ``every``-th position of a trajectory and its last one, rounded to 0.01 block: what
    episode records keep for plots."""
    keep = np.asarray(trajectory)[::every]
    if (len(trajectory) - 1) % every:
        keep = np.concatenate([keep, np.asarray(trajectory)[-1:]])
    return np.round(keep, 2).tolist()


def run_navigation(env: Any, navigator: Any, pick_goal: Any, *, seed: int,
                   max_steps: int) -> NavigationEpisode:
    """One episode: ``env.reset(seed=seed)``; ``pick_goal(blocks, start, rng)`` (the task's random
    stream) gives the :class:`NavigationGoal`; the navigator (the agent stream) walks until it
    reaches the goal or ``max_steps`` steps pass."""
    obs, info = env.reset(seed=seed)
    world = env.unwrapped.world
    start = (float(obs["pose"][0]), float(obs["pose"][2]))
    task = pick_goal(world.blocks, start, episode_rng(seed, "task"))
    navigator.reset(episode_rng(seed), info["camera"])
    frame = AgentFrame.of(obs)
    goal = frame.from_world(*task.goal)  # the navigator knows the goal relative to its start

    trajectory = [start]
    success = navigator.reached(frame.view(obs), goal)
    while not success and len(trajectory) <= max_steps:
        obs, *_ = env.step(navigator.act(frame.view(obs), goal))
        trajectory.append((float(obs["pose"][0]), float(obs["pose"][2])))
        success = navigator.reached(frame.view(obs), goal)
    trajectory = np.asarray(trajectory)
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
