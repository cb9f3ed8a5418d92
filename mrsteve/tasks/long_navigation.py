"""Long-Navigation (paper Section 4.4, appendix "Long-Horizon Tasks"): image-goal navigation on the
200 x 200 ``long_navigation`` map after a 16K-step scripted exploration phase.

- **Exploration phase** (the same for every agent, driven by the evaluator, which reads the
  world's landmarks and scheduled events): 2K steps at each of the six scenes in the paper's order
  (burning zombies, water, sugar cane that blows up, spider spawn, trees, house). Each visit starts
  with a teleport to a viewpoint :attr:`RouteConfig.standoff` blocks from the scene, on the side
  of the map centre (the angle jittered per seed), facing it; the agent then looks around the
  scene (its yaw sweeping back and forth), and up at the sky for the visit's last steps (so that
  no clip spans two places across the teleport). The paper's 16K steps include the travel
  between the scenes; the teleports skip it, so the phase is 12K steps. The agent observes every step through
  ``agent.observe(obs, t)`` (its memory written through its normal path) and chooses nothing.
- **Goal frames**: the encoder's clip embeddings of each scene's early steps, as the paper: the
  first :attr:`RouteConfig.goal_steps` steps of the visit (after the clip window has left the
  previous scene), before the sugar cane blows up, after the spiders appear. The evaluator
  embeds them with its own encoder of the agent's kind, from the frames the agent saw.
- **Task phase**: until ``steps``, image goals one after another, each a random scene and a
  random one of its goal frames (the task stream); the agent is told
  ``agent.set_goal(embedding, threshold, t)`` with the encoder's calibrated ``image_goal``
  threshold. A goal is reached when the agent stands within :attr:`NavigationTaskConfig.radius`
  blocks of where its frame was seen, and given up after ``goal_limit`` steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve.perception import Encoder
from mrsteve.protocols import GoalAgent
from mrsteve.seeding import episode_rng
from mrsteve.spaces import Action, Observation
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step
from mrsteve.tasks.outcomes import TaskOutcome

WORLD = "long_navigation"
SCENES = ("zombies", "water", "sugar_cane", "spiders", "trees", "house")
"""The six scenes in the paper's order (landmarks of the ``long_navigation`` world)."""
STEPS = 500_000
CAPACITY = 20_000


@dataclass(frozen=True)
class RouteConfig:
    """The scripted exploration phase."""

    visit_steps: int = 2000
    """Steps at each scene (the paper: 2K)."""
    standoff: float = 10.0
    """Blocks from the scene's centre to the viewpoint."""
    jitter: float = 30.0
    """The viewpoint's bearing from the scene is the map centre's, turned by up to this many
    degrees either way (per seed)."""
    sweep: float = 40.0
    """The yaw sweeps this many degrees either side of the scene."""
    sweep_period: int = 240
    """Steps of one sweep back and forth."""
    pitch: float = 10.0
    """Camera pitch while looking (degrees down)."""
    sky_steps: int = 30
    """The last steps of each visit look up at the sky (pitch :attr:`sky_pitch`), so that no clip
    window holds two places across a teleport (a walking agent's window changes gradually)."""
    sky_pitch: float = -70.0
    settle_steps: int = 40
    """Steps after arriving before goal frames count (the clip window must hold the scene)."""
    goal_steps: int = 500
    """Goal frames: this many steps of each scene's early part."""

    def __post_init__(self) -> None:
        if (min(self.visit_steps, self.sweep_period, self.goal_steps) < 1
                or min(self.settle_steps, self.sky_steps) < 0):
            raise ValueError(f"visit_steps, sweep_period and goal_steps must be >= 1, "
                             f"settle_steps >= 0, got {self}")
        if (self.settle_steps + self.goal_steps + self.sky_steps > self.visit_steps
                or self.standoff <= 0):
            raise ValueError(f"settle_steps + goal_steps + sky_steps must fit in visit_steps and "
                             f"standoff be "
                             f"positive, got {self}")

    @property
    def steps(self) -> int:
        """Length of the exploration phase: 6 x 2K = 12K (the paper's 16K includes its travel
        between the scenes, which the teleports skip)."""
        return len(SCENES) * self.visit_steps


@dataclass(frozen=True)
class Visit:
    """One scene of the route: where the agent stands and when its goal frames are."""

    scene: str
    start: int
    viewpoint: tuple[float, float]
    yaw: float
    """Heading from the viewpoint to the scene."""
    phase: float
    """Start of the yaw sweep, as a fraction of a period."""
    goal_window: tuple[int, int]
    """Steps ``[first, last)`` whose frames are goal frames."""


def _free(world: Any, x: float, z: float) -> bool:
    """Whether the player can stand at ``(x, z)``: on the ground, out of water."""
    saved = world.player.copy(), world.yaw, world.pitch
    try:
        world.teleport(x, z)
        fx, fy, fz = world.position
        return not world.water[world.blocks[int(fx), int(fy), int(fz)]]
    except ValueError:
        return False
    finally:
        world.player[:] = saved[0]
        world.yaw, world.pitch = saved[1], saved[2]


_TURNS = np.radians([0.0, *(sign * step for step in range(15, 181, 15) for sign in (1, -1))])
"""Turns of the viewpoint's bearing tried in order when the first is not free."""


def plan_route(world: Any, rng: np.random.Generator, config: RouteConfig = RouteConfig(), *,
               offset: int | None = None) -> list[Visit]:
    """The visits of the exploration phase on ``world`` (its landmarks and scheduled events),
    the route's step 0 being the world's step ``offset`` (default: its current one); viewpoint
    bearings and sweep phases draw from ``rng``."""
    offset = world.t if offset is None else offset
    landmarks = world.layout.landmarks
    missing = [scene for scene in SCENES if scene not in landmarks]
    if missing:
        raise ValueError(f"world {world.layout.name!r} lacks the scenes {missing}; Long-Navigation "
                         f"needs landmarks {', '.join(SCENES)}")
    cx, cz = (size / 2 for size in world.layout.size)
    visits = []
    for index, scene in enumerate(SCENES):
        sx, sz = landmarks[scene]
        start = index * config.visit_steps
        base = math.atan2(cz - sz, cx - sx)
        jitter = math.radians(float(rng.uniform(-config.jitter, config.jitter)))
        phase = float(rng.uniform())
        for turn in _TURNS:
            bearing = base + jitter + float(turn)
            x, z = sx + config.standoff * math.cos(bearing), sz + config.standoff * math.sin(bearing)
            if _free(world, x, z):
                break
        else:
            raise ValueError(f"no free viewpoint {config.standoff} blocks from {scene}")
        # Minecraft yaw: 0 faces +z, 90 faces -x
        yaw = math.degrees(math.atan2(-(sx - x), sz - z))
        visits.append(Visit(scene, start, (x, z), yaw, phase,
                            goal_window(world, scene, start, config, offset)))
    return visits


def goal_window(world: Any, scene: str, start: int, config: RouteConfig, offset: int = 0
                ) -> tuple[int, int]:
    """Steps of ``scene``'s early frames within its visit from ``start``: the first
    ``goal_steps`` after settling, ending before a block explosion at the scene, starting at a mob
    spawn there (the world's step ``offset`` is the route's step 0)."""
    first, last = start + config.settle_steps, start + config.settle_steps + config.goal_steps
    sx, sz = world.layout.landmarks[scene]
    end = start + config.visit_steps
    for event in world.pending_events:
        step = event.step - offset
        if not start <= step < end or math.hypot(event.x - sx, event.z - sz) > 15.0:
            continue
        if event.kind == "explode":
            last = min(last, step)
        elif event.kind == "spawn_mob":
            first = step + config.settle_steps
            last = min(end, first + config.goal_steps)
    if last <= first:
        raise ValueError(f"{scene}: no goal frames in steps [{first}, {last})")
    return first, last


def look_action(visit: Visit, yaw: float, pitch: float, t: int, config: RouteConfig) -> Action:
    """The scripted look-around at step ``t`` of the visit: turn toward the sweep's heading (at
    the visit's end, up at the sky)."""
    local = (t - visit.start) / config.sweep_period + visit.phase
    want = visit.yaw + config.sweep * math.sin(2 * math.pi * local)
    d_yaw = (want - yaw + 180.0) % 360.0 - 180.0
    sky = t - visit.start >= config.visit_steps - config.sky_steps
    d_pitch = (config.sky_pitch if sky else config.pitch) - pitch
    return {"camera": np.clip([d_pitch, d_yaw], -15.0, 15.0).astype(np.float32)}


@dataclass
class GoalFrames:
    """The goal frames of the exploration phase: per scene the steps, clip embeddings and world
    positions ``(x, z)`` where they were seen."""

    steps: dict[str, list[int]]
    embeddings: dict[str, list[np.ndarray]]
    positions: dict[str, list[tuple[float, float]]]


WAIT: Action = {"camera": np.zeros(2, dtype=np.float32)}


def teleport(env: Any, visit: Visit, config: RouteConfig) -> None:
    """Move the player to ``visit``'s viewpoint, facing the scene."""
    x, z = visit.viewpoint
    env.unwrapped.apply_commands({"teleport": {"x": x, "z": z, "yaw": visit.yaw,
                                               "pitch": config.pitch}})


def explore(driver: Driver, agent: GoalAgent, encoder: Encoder, visits: Sequence[Visit],
            config: RouteConfig) -> GoalFrames:
    """Drive the scripted route; the agent observes each step; returns the goal frames
    (embedded by ``encoder`` from the agent's view)."""
    goals = GoalFrames({s: [] for s in SCENES}, {s: [] for s in SCENES}, {s: [] for s in SCENES})
    world = driver.env.unwrapped.world

    def route(view: Observation, t: int) -> Action:
        visit = visits[t // config.visit_steps]
        agent.observe(view, t)
        embedding = encoder.observe(view)
        first, last = visit.goal_window
        if first <= t < last:
            goals.steps[visit.scene].append(t)
            goals.embeddings[visit.scene].append(embedding)
            goals.positions[visit.scene].append(driver.position)
        if (t + 1) % config.visit_steps == 0 and t + 1 < config.steps:
            teleport(driver.env, visits[(t + 1) // config.visit_steps], config)
            return WAIT  # the step's observation is the next scene's first
        return look_action(visit, world.yaw, world.pitch, t, config)

    driver.run(route, steps=config.steps)
    return goals


def run_long_navigation(env: Any, agent: GoalAgent, encoder: Encoder, seed: int, *,
                        steps: int = STEPS, goal_limit: int = 20_000, radius: float = 5.0,
                        route: RouteConfig = RouteConfig(),
                        callbacks: Sequence[EpisodeCallback] = ()) -> dict[str, Any]:
    """One Long-Navigation episode of ``steps`` steps (exploration phase included) on ``env``
    (the ``long_navigation`` world, no no-op steps): its record. ``encoder`` embeds the goal
    frames (a fresh encoder of the agent's kind); ``callbacks`` see the episode from the first
    scene on (``on_reset`` there, then every step), and each goal as a task ("go to the
    <scene>", ended when reached or given up)."""
    if steps <= route.steps:
        raise ValueError(f"steps must exceed the exploration phase's {route.steps}, got {steps}")
    if goal_limit < 1 or radius <= 0:
        raise ValueError(f"goal_limit must be >= 1 and radius > 0, got {goal_limit}, {radius}")
    rng = episode_rng(seed, "task")
    driver = Driver(env)
    info = driver.reset(seed=seed)
    world = env.unwrapped.world
    visits = plan_route(world, rng, route, offset=world.t + 1)
    teleport(env, visits[0], route)
    driver.step(WAIT)  # the first observation at the first scene
    driver.anchor()  # where the episode starts: its frame, step 0
    driver.callbacks = list(callbacks)
    for callback in driver.callbacks:  # the episode, as callbacks see it, starts here
        callback.on_reset(env, driver.obs, driver.frame)
    agent.reset(driver.view, episode_rng(seed), info["camera"])
    encoder.reset()
    goal_frames = explore(driver, agent, encoder, visits, route)

    threshold = encoder.thresholds.image_goal
    goals: list[list[Any]] = []
    while driver.t < steps:
        scene = SCENES[int(rng.integers(len(SCENES)))]
        pick = int(rng.integers(len(goal_frames.steps[scene])))
        gx, gz = goal_frames.positions[scene][pick]
        agent.set_goal(goal_frames.embeddings[scene][pick], threshold, driver.t)
        start = driver.t

        def arrived(step: Step | None, goal: tuple[float, float] = (gx, gz)) -> bool:
            return step is not None and math.hypot(step.obs["pose"][0] - goal[0],
                                                   step.obs["pose"][2] - goal[1]) <= radius

        task = TaskOutcome(f"go to the {scene}", start)
        for callback in driver.callbacks:
            callback.on_task_start(task)
        last = driver.run(agent.act, steps=min(goal_limit, steps - start), until=arrived)
        reached = arrived(last)
        for callback in driver.callbacks:
            callback.on_task_end(TaskOutcome(task.item, start, driver.t, reached))
        goals.append([scene, goal_frames.steps[scene][pick], start, driver.t - start, reached])
    return {
        "steps": driver.t,
        "goals_reached": sum(goal[4] for goal in goals),
        "goals_given": len(goals),
        "mean_duration": (float(np.mean([g[3] for g in goals if g[4]]))
                          if any(g[4] for g in goals) else None),
        "reached_by_scene": {scene: sum(g[4] and g[0] == scene for g in goals)
                             for scene in SCENES},
        "goals": goals,
        "origin": list(driver.frame.origin),
        "route": [[v.scene, v.start, round(v.viewpoint[0], 2), round(v.viewpoint[1], 2),
                   list(v.goal_window)] for v in visits],
    }
