"""The Memory Tasks (paper Section 4.3 and appendix "Memory Tasks"): a scripted exploration phase,
then image goal navigation with a limited memory.

In the exploration phase (3K steps) a fixed route, the same for every agent, drives the player and
the agent only watches (``agent.observe(obs, t)``: every frame is written to its memory, capacity
2K). The route stays at one or two places, then travels:

- **Find Water** (``find-water``): 500 steps watching the pond, then travel;
- **Find Zombies' Death Spot** (``zombie-spot``): 1K steps watching burning zombies (they burn for
  500 steps and vanish, so the place shows two scenes), then travel;
- **Find First-Visited House** (``first-house``): 100 steps at the first house, then the second,
  look-alike house until step 2K, then travel.

The image goal is the encoder's embedding of a 16-frame clip the agent saw in the goal's window
(the clip of that window in which the goal's classes fill most of the view: the water, the burning
zombies, the first house), given to the agent as the query instead of a text prompt
(``agent.set_goal(embedding, threshold, t)``, with the encoder's calibrated ``image_goal``
threshold).

Success (:func:`arrival`) is judged by the evaluator from the player's positions, the same rule for
every agent, STEVE-1 included: the player reaches the goal's place, coming within ``radius = 3``
blocks of it, within ``task_steps`` steps of the task phase (which ends there). The goal's place is
where the player stood when it saw the goal's clip: the paper's Memory Tasks are "navigation tasks
reaching the location of the previously seen experience frame" (Figure 6), where "an agent should
navigate to the location of the given image" (Section 4.3), and an experience frame
``x_t = {e_t, l_t, t}`` keeps the position ``l_t`` it was seen from. The radius is the paper's for
reaching a goal location ("When the agent reaches the goal location within 3 blocks, it is
considered a success", appendix on VPT-Nav), and reaching ends a navigation task there as it
does here. ``dwell`` asks for that many steps in a row inside instead (beyond the paper, which
gives the agent no stop action and states no dwell; default 1: reaching).

The route itself is the experiment's (:mod:`mrsteve.eval.memory_tasks`: it walks with a navigator,
which this layer does not import); this module runs an episode with any route object that has
``reset(obs, world, rng, camera)`` and ``act(obs, t)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mrsteve.naming import lookup
from mrsteve.perception import Encoder
from mrsteve.protocols import GoalAgent
from mrsteve.seeding import episode_rng
from mrsteve.spaces import Action, AgentFrame, Observation
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step, Trajectory
from mrsteve.tasks.outcomes import TaskOutcome


@dataclass(frozen=True)
class Stay:
    """One stay of the route: watch ``landmark`` from a spot until step ``until``."""

    landmark: str
    until: int


@dataclass(frozen=True)
class MemoryTask:
    """One Memory Task: its world, its stays (then travel until the phase ends) and its goal."""

    name: str
    title: str
    world: str
    stays: tuple[Stay, ...]
    goal: str
    """The landmark the image goal shows; its place is the goal's place."""
    goal_classes: tuple[str, ...]
    """Semantic classes the goal clip is chosen to show most of."""
    goal_window: int
    """The goal clip ends before this step (while the goal is in view: the zombies burn 500)."""


MEMORY_TASKS: dict[str, MemoryTask] = {
    task.name: task
    for task in (
        MemoryTask("find-water", "Find Water", "find_water", (Stay("water", 500),), "water",
                   ("water",), 500),
        MemoryTask("zombie-spot", "Find Zombies' Death Spot", "zombie_spot",
                   (Stay("zombies", 1000),), "zombies", ("burning_zombie",), 500),
        MemoryTask("first-house", "Find First-Visited House", "two_houses",
                   (Stay("house_1", 100), Stay("house_2", 2000)), "house_1", ("planks",), 100),
    )
}
"""The three Memory Tasks by command name."""

METRICS = ("success_rate", "kept_goal", "task_steps")
"""Per episode: success (0 or 100), whether the memory held a frame matching the goal seen within
the radius of the goal's place when the task phase began (0 or 100; 0 without memory), and, of a
success, the task-phase steps until the player arrived at the goal's place to stay."""


def memory_task(name: str) -> MemoryTask:
    """The Memory Task called ``name`` (a clear error naming the accepted ones)."""
    return lookup(MEMORY_TASKS, name, "memory task")


class Route(Protocol):
    """The scripted exploration route (reads the world; the same for every agent)."""

    def reset(self, obs: Observation, world: Any, rng: np.random.Generator, camera: Any) -> None: ...

    def act(self, obs: Observation, t: int) -> Action: ...


@dataclass
class MemoryTaskEpisode:
    """What one Memory Task episode produced."""

    metrics: dict[str, float | None]
    goal_t: int
    """The step whose clip is the image goal."""
    goal: np.ndarray
    """The image goal embedding."""
    goal_place: tuple[float, float]
    """World ``(x, z)`` where the player stood when it saw the goal's clip: the goal's place."""
    landmark: tuple[float, float]
    """World ``(x, z)`` of the landmark the goal shows (for plots)."""
    trajectory: np.ndarray
    """float[n, 2]: world ``(x, z)`` of every step, the start first."""
    explore_steps: int


def goal_share(semantic: np.ndarray, class_ids: np.ndarray) -> float:
    """The share of the view the goal's classes fill."""
    return float(np.isin(semantic, class_ids).mean())


def near(x: float, z: float, places: Sequence[tuple[float, float]], radius: float) -> bool:
    """Whether ``(x, z)`` lies within ``radius`` blocks of one of ``places``."""
    return any(math.hypot(x - px, z - pz) <= radius for px, pz in places)


def arrival(positions: np.ndarray, place: tuple[float, float], radius: float,
            dwell: int) -> int | None:
    """The first index ``i`` of ``positions`` (``float[n, 2]``) such that ``positions[i:i +
    dwell]`` all lie within ``radius`` blocks of ``place``: when the player arrived to stay;
    ``None`` if it never stayed that long (it never came, or walked through and on)."""
    offset = np.asarray(positions, dtype=np.float64) - np.asarray(place, dtype=np.float64)
    inside = np.einsum("nk,nk->n", offset, offset) <= radius * radius
    if len(inside) < dwell:
        return None
    counts = np.concatenate([[0], np.cumsum(inside)])
    stays = np.flatnonzero(counts[dwell:] - counts[:-dwell] == dwell)
    return int(stays[0]) if len(stays) else None


def kept_goal(agent: GoalAgent, frame: AgentFrame, goal: np.ndarray, threshold: float,
              places: Sequence[tuple[float, float]], radius: float) -> bool:
    """Whether ``agent`` remembers a frame matching ``goal`` seen within ``radius`` of one of
    ``places`` (world ``(x, z)``; ``frame``: the episode's; an agent without memory recalls
    nothing)."""
    return any(near(*frame.to_world(x, z), places, radius)
               for x, z in agent.recall(goal, threshold))


def run_memory_task(
    env: Any,
    agent: GoalAgent,
    task: MemoryTask,
    route: Route,
    encoder: Encoder,
    *,
    seed: int,
    explore_steps: int = 3000,
    task_steps: int = 3000,
    radius: float = 3.0,
    dwell: int = 1,
    callbacks: Sequence[EpisodeCallback] = (),
) -> MemoryTaskEpisode:
    """One episode: ``env.reset(seed=seed)``; ``route`` drives the exploration phase while the
    agent watches (``agent.observe``); ``encoder`` (the agent's kind) embeds the clips of the
    goal's window and the best one becomes the image goal (``agent.set_goal`` with its
    ``image_goal`` threshold); then the agent acts until the player has stayed within ``radius``
    blocks of where the goal's clip was seen for ``dwell`` steps in a row (success), or
    ``task_steps`` steps have passed (module docstring). The route draws from the episode's
    ``task`` stream, the agent from its ``agent`` stream. ``callbacks`` watch the driver's
    steps, and the goal phase as a task (``item``: the Memory Task's name) from the step the
    goal is given."""
    if (explore_steps <= task.goal_window or task_steps < 1 or not radius > 0
            or not 1 <= dwell <= task_steps):
        raise ValueError(f"need explore_steps > {task.goal_window} (the goal's window), "
                         f"task_steps >= 1, radius > 0 and 1 <= dwell <= task_steps, got "
                         f"{explore_steps}, {task_steps}, {radius}, {dwell}")
    path = Trajectory()
    driver = Driver(env, [path, *callbacks])
    info = driver.reset(seed=seed)
    world = env.unwrapped.world
    landmark = tuple(float(v) for v in world.layout.landmarks[task.goal])
    agent.reset(driver.view, episode_rng(seed), info["camera"])
    route.reset(driver.obs, world, episode_rng(seed, "task"), info["camera"])
    class_ids = np.array([world.content.semantic_id(name) for name in task.goal_classes])
    clips = GoalClips(encoder, class_ids, task.goal_window)

    def watch(view: Observation, t: int) -> Action:
        """The exploration phase: the agent watches, the route drives."""
        agent.observe(view, t)
        clips.observe(view, driver.obs, t)
        return route.act(driver.obs, t)

    driver.run(watch, steps=explore_steps)
    if clips.best is None or clips.best[0] == 0.0:
        raise RuntimeError(f"{task.name}: the route never showed {task.goal_classes} in the "
                           f"first {task.goal_window} steps (seed {seed})")
    _, goal_t, goal = clips.best
    place = path.points[goal_t]  # where the player stood when it saw the clip ending at goal_t
    threshold = encoder.thresholds.image_goal
    kept = kept_goal(agent, driver.frame, goal, threshold, (place,), radius)

    agent.set_goal(goal, threshold, explore_steps)
    phase = TaskOutcome(task.name, explore_steps)
    for callback in callbacks:
        callback.on_task_start(phase)
    inside = int(near(*driver.position, (place,), radius))  # steps in a row at the goal's place

    def stayed(step: Step) -> bool:
        nonlocal inside
        inside = inside + 1 if near(*driver.position, (place,), radius) else 0
        return inside >= dwell

    if inside < dwell:
        driver.run(agent.act, steps=task_steps, until=stayed)
    arrived = arrival(path.array()[explore_steps:], place, radius, dwell)
    phase.end, phase.success = driver.t, arrived is not None
    for callback in callbacks:
        callback.on_task_end(phase)
    metrics: dict[str, float | None] = {
        "success_rate": 0.0 if arrived is None else 100.0,
        "kept_goal": 100.0 if kept else 0.0,
        "task_steps": None if arrived is None else float(arrived),
    }
    return MemoryTaskEpisode(metrics, goal_t, goal, place, landmark, path.array(), explore_steps)


class GoalClips:
    """The image goal's choice: over the goal's window, the clip (as the agent's ``encoder``
    embeds it) in which the goal's classes fill most of the view."""

    def __init__(self, encoder: Encoder, class_ids: np.ndarray, window_steps: int) -> None:
        self.encoder, self.class_ids = encoder, class_ids
        self.shares = np.zeros(window_steps)
        self.best: tuple[float, int, np.ndarray] | None = None
        encoder.reset()

    def observe(self, view: Observation, obs: Observation, t: int) -> None:
        """Step ``t`` seen (only the goal's window counts): ``view`` is what the agent's encoder
        sees, ``obs`` the environment's observation, whose semantic frame judges the clip."""
        if t >= len(self.shares):
            return
        embedding = self.encoder.observe(view)  # the clip ending at t
        self.shares[t] = goal_share(obs["semantic"], self.class_ids)
        window = self.encoder.window
        if t + 1 >= window:
            share = float(self.shares[t + 1 - window:t + 1].mean())
            if self.best is None or share > self.best[0]:
                self.best = (share, t, embedding.copy())


def world_of(task: MemoryTask) -> Mapping[str, Any]:
    """The :func:`~mrsteve.env.make_env` arguments of ``task``'s episodes
    (no no-op steps: the zombies burn from step 0)."""
    return {"world": task.world}
