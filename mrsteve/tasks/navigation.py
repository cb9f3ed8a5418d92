"""The paper's low-level navigation experiment (appendix "VPT Navigator Ablation Study").

A navigator starts at a terrain's spawn and must come within 3 blocks of a goal 10 to 20 blocks
away. Terrains (``TERRAINS``) are the embedded world's test maps: ``flat``, ``plains`` (world
``plains_nav``), ``mountain`` and ``river``. Metrics per episode: success (as a percentage, so the
mean is the success rate) and SPL, success weighted by ``shortest / max(taken, shortest)``.

The evaluator, unlike the navigator, reads the world's blocks:

- the goal is the centre of a column of walkable ground (not water, no tree, inside the walls) at
  10 to 20 blocks from the spawn, that the player can reach; on ``river`` it must lie across the
  water (no dry path leads there) with its success disc on land (swim across, then climb out);
- the shortest path length is planned on the true height map of the world
  (:meth:`~mrsteve.control.heightmap.HeightMap.from_blocks`) with the walking rules of the game (steps
  up of one block, drops, swimming): A* over columns with plain distances, straightened by string
  pulling (so open ground counts as a straight line), measured up to where it enters the success
  disc. The taken path is the agent's ground-plane trajectory until it is within the disc.

The paper does not state the time limit: we give ``max_steps = 1000`` steps (50 s of game time),
about five times what walking 20 blocks takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.control.heightmap import HeightMap
from mrsteve.control.planning import GEOMETRIC, distance_to_disc, plan_path, reachable
from mrsteve.control.navigation import (
    DepthNavigator,
    Navigator,
    NavigatorConfig,
    StraightNavigator,
)
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.tasks.metrics import path_length, spl

TERRAINS = {"flat": "flat", "plains": "plains_nav", "mountain": "mountain", "river": "river"}
"""Terrain names of the experiment and the world recipes they run on."""

NAVIGATORS = {"depth": DepthNavigator, "straight": StraightNavigator}
"""Navigators by name: ``depth`` (the VPT-Nav stand-in) and ``straight`` (the paper's heuristic)."""

METRICS = ("success_rate", "spl")
"""What a navigation episode reports (percent, and SPL in [0, 1])."""

PAPER_RESULTS = {
    # (SPL, success rate %) per terrain, appendix Table "Performance of different Low-Level
    # Navigators": the heuristic and VPT-Nav (KL = 1e-4).
    "straight": {"flat": (0.962, 100), "plains": (0.906, 94), "mountain": (0.188, 100),
                 "river": (0.000, 0)},
    "depth": {"flat": (0.849, 96), "plains": (0.780, 88), "mountain": (0.157, 100),
              "river": (0.274, 87)},
}  # fmt: skip
"""The paper's figures the results table prints beside ours (``depth`` stands for VPT-Nav)."""


@dataclass(frozen=True)
class NavigationTaskConfig:
    """One navigation episode's set-up."""

    terrain: str = "flat"
    """A key of :data:`TERRAINS`."""
    navigator: str = "depth"
    """A key of :data:`NAVIGATORS`."""
    min_distance: float = 10.0
    """Least distance from the spawn to the goal in blocks (the paper: 10)."""
    max_distance: float = 20.0
    """Largest distance from the spawn to the goal in blocks (the paper: 20)."""
    max_steps: int = 1000
    """Steps before the episode fails (not stated in the paper; 1000 = 50 s)."""
    success_radius: float = 3.0
    """Success within this many blocks of the goal (the paper: 3)."""
    trajectory_every: int = 2
    """The record keeps every this-many-th position of the trajectory (for plots)."""
    obs_size: tuple[int, int] = DEFAULT_OBS_SIZE
    """``(height, width)`` of the observations."""

    def __post_init__(self) -> None:
        check_choice("terrain", self.terrain, TERRAINS)
        check_choice("navigator", self.navigator, NAVIGATORS)
        if not 0 < self.min_distance <= self.max_distance:
            raise ValueError(f"need 0 < min_distance <= max_distance, got {self.min_distance}, "
                             f"{self.max_distance}")
        if self.max_steps < 1 or self.trajectory_every < 1 or not self.success_radius > 0:
            raise ValueError(f"max_steps and trajectory_every must be >= 1 and success_radius "
                             f"> 0, got {self}")


def check_choice(what: str, value: str, choices) -> None:
    """Raise ``ValueError`` naming the valid choices when ``value`` is not one of them."""
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; valid: {', '.join(choices)}")


def compact_trajectory(trajectory: np.ndarray, every: int) -> list[list[float]]:
    """Every ``every``-th position of a trajectory and its last one, rounded to 0.01 block: what
    episode records keep for plots."""
    keep = np.asarray(trajectory)[::every]
    if (len(trajectory) - 1) % every:
        keep = np.concatenate([keep, np.asarray(trajectory)[-1:]])
    return np.round(keep, 2).tolist()


@dataclass(frozen=True)
class NavigationGoal:
    """Where an episode starts and ends, and its shortest path length (blocks)."""

    start: tuple[float, float]
    goal: tuple[float, float]
    shortest: float


def make_navigator(name: str, success_radius: float = 3.0) -> Navigator:
    """A navigator of :data:`NAVIGATORS` by name."""
    check_choice("navigator", name, NAVIGATORS)
    return NAVIGATORS[name](NavigatorConfig(success_radius=success_radius))


def pick_goal(
    blocks: np.ndarray,
    start: tuple[float, float],
    rng: np.random.Generator,
    config: NavigationTaskConfig,
    *,
    across_water: bool = False,
) -> NavigationGoal:
    """A goal column for an episode (module docstring), drawn uniformly with ``rng`` among those
    that qualify, and the shortest path to it."""
    world = HeightMap.from_blocks(blocks)
    levels = world.levels()
    sx, sz = levels.shape
    i, k = np.meshgrid(np.arange(sx), np.arange(sz), indexing="ij")
    distance = np.hypot(i + 0.5 - start[0], k + 0.5 - start[1])
    walkable = (levels > 0) & (levels < blocks.shape[1]) & ~world.water
    wall_free = np.zeros_like(walkable)
    wall_free[1:-1, 1:-1] = True
    candidates = (
        walkable & wall_free & reachable(world, start)
        & (distance >= config.min_distance) & (distance <= config.max_distance)
    )  # fmt: skip
    if across_water:  # no dry way there, and the success disc is out of the water
        candidates &= ~reachable(world, start, allow_water=False)
        wet_i, wet_k = np.nonzero(world.water)
        near = np.zeros_like(candidates)
        cand_i, cand_k = np.nonzero(candidates)
        if len(wet_i) and len(cand_i):
            gap = np.hypot(cand_i[:, None] - wet_i[None, :], cand_k[:, None] - wet_k[None, :])
            near[cand_i, cand_k] = gap.min(axis=1) <= config.success_radius + 0.5
        candidates &= ~near
    cells = np.flatnonzero(candidates)
    if len(cells) == 0:
        raise ValueError(
            f"no goal {config.min_distance:g}-{config.max_distance:g} blocks from {start} "
            f"on this world{' across water' if across_water else ''}"
        )
    gi, gk = divmod(int(rng.choice(cells)), sz)
    goal = (gi + 0.5, gk + 0.5)
    # the walk to the goal column itself, measured up to where it enters the success disc
    path, reached = plan_path(world, start, goal, 0.5, GEOMETRIC, smooth=levels.size)
    if not reached:
        raise RuntimeError(f"goal {goal} is reachable, yet the planner found no path to it")
    return NavigationGoal(start, goal, distance_to_disc(path, goal, config.success_radius))


def run_navigation(config: NavigationTaskConfig, seed: int) -> dict:
    """One episode: the world and the goal from ``seed``, the navigator until success or
    ``max_steps``. Returns ``{"metrics", "trajectory" (float[n, 2]), "goal", "blocks"}``."""
    env = gym.make("mrsteve/Voxel-v0", world=TERRAINS[config.terrain], obs_size=config.obs_size)
    goal_seed, navigator_seed = np.random.SeedSequence(seed).spawn(2)
    obs, info = env.reset(seed=seed)
    world = env.unwrapped.world
    start = (float(obs["pose"][0]), float(obs["pose"][2]))
    task = pick_goal(world.blocks, start, np.random.default_rng(goal_seed), config,
                     across_water=config.terrain == "river")
    navigator = make_navigator(config.navigator, config.success_radius)
    navigator.reset(np.random.default_rng(navigator_seed), info["camera"])

    trajectory = [start]
    success = navigator.reached(obs, task.goal)
    while not success and len(trajectory) <= config.max_steps:
        obs, *_ = env.step(navigator.act(obs, task.goal))
        trajectory.append((float(obs["pose"][0]), float(obs["pose"][2])))
        success = navigator.reached(obs, task.goal)
    trajectory = np.asarray(trajectory)
    taken = path_length(trajectory)
    blocks = world.blocks.copy()
    env.close()
    return {
        "metrics": {
            "success_rate": 100.0 * success,
            "spl": spl(success, task.shortest, taken),
            "steps": len(trajectory) - 1,
            "path_length": taken,
            "shortest": task.shortest,
            "final_distance": math.dist(trajectory[-1], task.goal),
        },
        "trajectory": trajectory,
        "goal": task.goal,
        "blocks": blocks,
    }
