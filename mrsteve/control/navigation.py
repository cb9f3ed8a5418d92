"""Goal-conditioned navigation: the ``Navigator`` interface and the embedded world's navigators.

In the paper the low-level goal achiever pi_L-Nav is VPT-Nav, a VPT policy fine-tuned with PPO to
reach an ``(x, z)`` goal within 3 blocks (Section 3.2, appendix "Goal-Conditioned VPT Navigator
Details"). In the embedded world :class:`DepthNavigator` stands in for it without weights. It reads
only what VPT-Nav gets, the pose and the first-person frame (here its depth and semantic images,
never the world's blocks), and

- maps what it sees into a 2.5-D height map of the episode
  (:class:`~mrsteve.control.heightmap.HeightMap`) with the environment's camera;
- plans on it with A* (steps up of one block climbable with a jump, drops fine, water swimmable at
  a cost and left where the bank is level with it, unseen ground optimistic) and replans every few
  steps as the map fills in;
- follows the path waypoint by waypoint, turning at most 10 degrees per step as VPT's camera
  does; sprint-jumps along straight stretches as players (and VPT) do; jumps onto one-block steps
  and when stalled, holds jump while swimming;
- unsticks itself: where it stalls (:class:`~mrsteve.control.motion.StallTracker`) the column ahead
  costs more and it replans; with no progress for long
  (:class:`~mrsteve.control.motion.ProgressTracker`) it walks a short random detour (like
  VPT-Nav's forced jump when the agent stops);
- says when a goal is out of reach as far as it has seen (:meth:`Navigator.blocked`): no path on
  its map; the best one more than ``max_detour`` times as long as the straight line; a goal never
  seen behind a wall or cliff face it cannot see over
  (:func:`~mrsteve.control.path_planning.wall_across`: ``wall_rise`` blocks high, ``2 wall_half_width
  + 1`` long); or ``give_up_detours`` detours without getting closer. An explorer then gives the goal up at once.

:class:`StraightNavigator` is the paper's "Heuristic" row (appendix "VPT Navigator Ablation Study"):
turn toward the goal, walk, jump when stalled; no map, no swimming.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.control.heightmap import UNKNOWN, HeightMap, HeightMapConfig
from mrsteve.control.motion import (
    ProgressTracker,
    StallTracker,
    clamp,
    heading_to,
    noop_action,
    wrap_degrees,
)
from mrsteve.control.path_planning import PathCosts, distance_to_disc, plan_path, wall_across
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera


@runtime_checkable
class Navigator(Protocol):
    """pi_L-Nav: reaches an ``(x, z)`` goal from observations (positions in the agent's frame,
    :class:`mrsteve.spaces.AgentFrame`)."""

    success_radius: float

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        """Forget everything about the previous goal or episode; ``camera`` is the environment's
        (:attr:`mrsteve.env.voxel_env.VoxelEnv.camera`)."""

    def observe(self, obs: Observation) -> None:
        """Record a step another controller acted in (a mapping navigator maps it; others
        ignore it)."""

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        """The next action toward ``goal_xz``."""

    def reached(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """Whether the agent is within ``success_radius`` of ``goal_xz`` on the ground plane."""

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """Whether ``goal_xz`` is out of reach from ``obs`` as far as the navigator has seen (a
        navigator without a map never knows: ``False``)."""


def within(obs: Observation, goal_xz: tuple[float, float], radius: float) -> bool:
    """Whether the agent of ``obs`` is within ``radius`` of ``goal_xz`` on the ground plane (a
    navigator's :meth:`Navigator.reached`)."""
    x, _, z = obs["pose"][:3]
    return math.hypot(goal_xz[0] - x, goal_xz[1] - z) <= radius


@dataclass(frozen=True)
class NavigatorConfig:
    """Parameters of the navigators (the straight one uses the steering fields only)."""

    success_radius: float = 3.0
    """Done within this many blocks of the goal on the ground plane (the paper and release: 3)."""
    max_turn: float = 10.0
    """Largest camera turn per step, degrees (VPT's camera moves at most 10 per step)."""
    pitch: float = 10.0
    """Camera pitch held while navigating (degrees, positive looks down): the ground ahead and
    the slopes above both stay in view."""
    walk_cone: float = 35.0
    """Walk forward only when the heading error is below this many degrees."""
    sprint_cone: float = 15.0
    """Sprint when the heading error is below this many degrees."""
    sprint_jump: float = 4.0
    """Jump while sprinting straight at a waypoint at least this far (blocks) away, as players
    and VPT do: 0.34 blocks per step instead of 0.28. ``inf`` turns it off."""
    stall_speed: float = 0.05
    """Horizontal blocks per step below which a step after one with forward pressed counts as
    stalled (:class:`~mrsteve.control.motion.StallTracker`)."""
    stall_jump: int = 3
    """Stalled steps in a row after which the navigator jumps."""
    stuck_steps: int = 16
    """Stalled steps in a row after which the depth navigator penalises the column ahead and
    replans, and the learned one, which has no map, gives the goal up."""
    idle_steps: int = 32
    """Steps in a row standing still (moving less than :attr:`stall_speed`, whatever was
    pressed) after which the learned navigator gives the goal up: its policy neither walks
    toward it nor turns away (chosen in a training world, ``results/navigation-learned/NOTES.md``).
    A turn in place toward a goal behind takes 18 steps at :attr:`max_turn`."""
    stuck_penalty: float = 6.0
    """Cost added to a column the navigator got stuck in front of."""
    replan_interval: int = 8
    """Steps between plans (the map changes as the agent moves)."""
    plan_margin: float = 0.75
    """The plan ends this far inside the success disc, so arriving surely counts."""
    waypoint_reached: float = 0.6
    """A waypoint this close (blocks) is passed and the next one steered to."""
    no_progress_steps: int = 160
    """Steps without getting :attr:`progress_gain` closer to the goal before a detour
    (:class:`~mrsteve.control.motion.ProgressTracker`)."""
    progress_gain: float = 1.0
    """Blocks closer to the goal than ever before that count as progress."""
    give_up_probability: float = 0.9
    give_up_steps: int = 8
    """A learned navigator whose weights have a give-up head gives a goal up once the head put
    the chance that it is out of reach at ``give_up_probability`` or more for ``give_up_steps``
    steps in a row (chosen in a training world, ``results/navigation-learned/NOTES.md``)."""
    max_detour: float = 2.0
    """A goal whose best path on the map (unseen ground counted walkable) is longer than this
    many times the straight distance, plus :attr:`detour_slack`, is out of reach (a wall or a
    cliff in the way); so is one with no path at all."""
    detour_slack: float = 10.0
    """Blocks of detour every goal is allowed on top of :attr:`max_detour` (around a pond, a
    tree)."""
    wall_rise: int = 3
    """Blocks above the feet from which a seen column is a wall (a jump climbs one)."""
    wall_half_width: int = 3
    """A wall is ``2 wall_half_width + 1`` such columns long at least (a tree trunk is one)."""
    give_up_detours: int = 2
    """Detours without progress after which the goal is out of reach."""
    detour_steps: int = 24
    """Steps of a detour (a random heading away from the goal direction)."""
    costs: PathCosts = field(default_factory=PathCosts)
    """Costs the planner weighs paths by."""
    map: HeightMapConfig = field(default_factory=HeightMapConfig)
    """The height map built from depth frames."""

    def __post_init__(self) -> None:
        if not self.success_radius > 0 or not self.max_turn > 0:
            raise ValueError(f"success_radius and max_turn must be positive, got {self}")
        if not 0 < self.sprint_cone <= self.walk_cone <= 180:
            raise ValueError(f"need 0 < sprint_cone <= walk_cone <= 180, got {self}")
        if min(self.stall_jump, self.stuck_steps, self.replan_interval, self.no_progress_steps,
               self.detour_steps, self.give_up_steps, self.idle_steps) < 1:
            raise ValueError(f"step counts must be >= 1, got {self}")
        if not 0 < self.give_up_probability < 1:
            raise ValueError(f"give_up_probability must lie in (0, 1), got "
                             f"{self.give_up_probability}")


class _Steering:
    """What both navigators share: the success test, the stall count and turning toward a heading."""

    def __init__(self, config: NavigatorConfig | None = None) -> None:
        self.config = config or NavigatorConfig()
        self.success_radius = self.config.success_radius
        self._stall = StallTracker(self.config.stall_speed)
        self._rng = np.random.default_rng(0)
        self.camera: Camera | None = None
        self.heading_error = 0.0
        """Signed degrees from the view's yaw to the heading the last action steered toward (a
        positive yaw change turns toward a positive one); 0 before any."""

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng
        self.camera = camera
        self._stall.reset()
        self.heading_error = 0.0

    def reached(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        return within(obs, goal_xz, self.config.success_radius)

    def observe(self, obs: Observation) -> None:
        """Nothing to record (no map)."""

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """Without a map nothing is known to be out of reach."""
        return False

    def _steer(self, yaw: float, pitch: float, heading: float, jump: bool) -> Action:
        """Turn toward ``heading``; walk when roughly facing it, sprint when facing it."""
        cfg = self.config
        error = wrap_degrees(heading - yaw)
        self.heading_error = error
        forward = abs(error) < cfg.walk_cone
        self._stall.pressed(forward)
        stalled_jump = forward and self._stall.stalled >= cfg.stall_jump
        return {
            "forward": int(forward),
            "sprint": int(abs(error) < cfg.sprint_cone),
            "jump": int(jump or stalled_jump),
            "camera": np.array(
                [clamp(cfg.pitch - pitch, cfg.max_turn), clamp(error, cfg.max_turn)],
                dtype=np.float32,
            ),
        }  # fmt: skip


class StraightNavigator(_Steering):
    """The paper's "Heuristic" navigator: turn toward the goal and walk; jump when stalled."""

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        x, _, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        self._stall.update(x, z)
        if self.reached(obs, goal_xz):
            return noop_action()
        return self._steer(yaw, pitch, heading_to(x, z, *goal_xz), jump=False)


class DepthNavigator(_Steering):
    """Mapping and planning navigator from pose, depth and semantics: the stand-in for VPT-Nav
    (module docstring). Deterministic given the generator passed to :meth:`reset`."""

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        super().reset(rng, camera)
        self.map: HeightMap | None = None
        """The height map of the episode (built from the first observation on)."""
        self._observed: Observation | None = None
        self._goal: tuple[float, float] | None = None
        self._path = np.zeros((0, 2))
        self._blocked = False
        self._detours = 0
        self._next = 0
        self._plan_age = 0
        self._progress = ProgressTracker(self.config.progress_gain, self.config.no_progress_steps)
        self._detour_left = 0
        self._detour_heading = 0.0

    def observe(self, obs: Observation) -> None:
        """Add an observation to the height map (also done by :meth:`act`; call it for steps
        where another controller acts, so the map stays complete)."""
        if obs is self._observed:
            return
        if self.camera is None:
            raise RuntimeError("call reset(rng, camera) before observe() or act()")
        if self.map is None:
            self.map = HeightMap((float(obs["pose"][0]), float(obs["pose"][2])), self.config.map,
                                 camera=self.camera)
        self.map.integrate(obs)
        self._observed = obs

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """Out of reach as far as seen (module docstring), judged at the latest plan toward
        ``goal_xz`` (made now for a new goal, which becomes the current one)."""
        self.observe(obs)
        if self._new_goal(goal_xz):
            self._plan(*(float(v) for v in obs["pose"][:3]))
        return self._blocked

    def replan(self, obs: Observation) -> bool:
        """Plan toward the current goal from the pose of ``obs`` now, as :meth:`act` does every
        ``replan_interval`` steps, and judge it (:meth:`blocked`): for a navigator that watches
        another controller walk."""
        if self._goal is None:
            raise RuntimeError("no goal yet: call blocked() or act() with one first")
        self.observe(obs)
        self._plan(*(float(v) for v in obs["pose"][:3]))
        return self._blocked

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        cfg = self.config
        self.observe(obs)
        x, y, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        self._new_goal(goal_xz)
        goal = self._goal
        distance = math.hypot(goal[0] - x, goal[1] - z)
        self._stall.update(x, z)
        if distance <= cfg.success_radius:
            return noop_action()

        if self._progress.update(distance) and self._detour_left == 0:
            self._start_detour(x, z, distance)
        if self._stall.stalled >= cfg.stuck_steps:
            self._penalise_ahead(x, z, yaw)
        self._plan_age += 1
        if self._plan_age >= cfg.replan_interval or self._next >= len(self._path):
            self._plan(x, y, z)

        if self._detour_left > 0:
            self._detour_left -= 1
            heading, ahead = self._detour_heading, 0.0
        else:
            wx, wz = self._waypoint(x, z)
            heading, ahead = heading_to(x, z, wx, wz), math.hypot(wx - x, wz - z)
        sprint_jump = ahead >= cfg.sprint_jump and abs(wrap_degrees(heading - yaw)) < cfg.max_turn
        return self._steer(yaw, pitch, heading,
                           jump=sprint_jump or self._should_jump(x, y, z, heading))

    # -- internals -------------------------------------------------------------------------------

    def _new_goal(self, goal_xz: tuple[float, float]) -> bool:
        """Make ``goal_xz`` the goal; whether it is a new one (then a plan is due)."""
        goal = (float(goal_xz[0]), float(goal_xz[1]))
        if goal == self._goal:
            return False
        self._goal = goal
        self._progress.reset()
        self._detour_left = 0
        self._detours = 0
        self._plan_age = self.config.replan_interval  # plan now
        return True

    def _plan(self, x: float, y: float, z: float) -> None:
        """Plan toward the goal and judge whether it is out of reach."""
        cfg = self.config
        radius = max(cfg.success_radius - cfg.plan_margin, 0.5)
        self._path, reaches = plan_path(self.map, (x, z), self._goal, radius, cfg.costs)
        self._next = 1 if len(self._path) > 1 else 0
        self._plan_age = 0
        straight = max(math.hypot(self._goal[0] - x, self._goal[1] - z) - radius, 0.0)
        boxed_in = not reaches and len(self._path) <= 1  # the map walls the agent in: no verdict
        self._blocked = not boxed_in and (
            not reaches
            or self._detours > cfg.give_up_detours
            or distance_to_disc(self._path, self._goal, radius)
            > cfg.max_detour * straight + cfg.detour_slack
            or self._walled_off(x, y, z)
        )

    def _walled_off(self, x: float, y: float, z: float) -> bool:
        """Whether the goal, never seen, lies behind a wall across the straight line to it."""
        hm, (gx, gz) = self.map, self._goal
        gi, gk = hm.cell(gx, gz)
        levels = hm.levels()
        if hm.inside(gi, gk) and levels[gi, gk] != UNKNOWN:
            return False
        ox, oz = hm.origin
        return wall_across(levels, x - ox, z - oz, gx - ox, gz - oz, math.floor(y + 1e-3),
                           self.config.wall_rise, self.config.wall_half_width)

    def _waypoint(self, x: float, z: float) -> tuple[float, float]:
        """The next waypoint not yet passed (the goal once the path is used up)."""
        while self._next < len(self._path) - 1 and math.hypot(
            self._path[self._next, 0] - x, self._path[self._next, 1] - z
        ) < self.config.waypoint_reached:
            self._next += 1
        if self._next >= len(self._path):
            return self._goal
        return float(self._path[self._next, 0]), float(self._path[self._next, 1])

    def _should_jump(self, x: float, y: float, z: float, heading: float) -> bool:
        """Jump while swimming, and when the column just ahead stands a block higher."""
        hm = self.map
        i, k = hm.cell(x, z)
        if hm.water[i, k]:
            return True
        feet = math.floor(y + 1e-3)
        dx, dz = -math.sin(math.radians(heading)), math.cos(math.radians(heading))
        for reach in (0.5, 0.9):
            a, b = hm.cell(x + dx * reach, z + dz * reach)
            if (a, b) != (i, k) and hm.inside(a, b) and hm.ground[a, b] > feet:
                return True
        return False

    def _penalise_ahead(self, x: float, z: float, yaw: float) -> None:
        """Stuck against something: make the column ahead costly and replan."""
        dx, dz = -math.sin(math.radians(yaw)), math.cos(math.radians(yaw))
        i, k = self.map.cell(x + 0.8 * dx, z + 0.8 * dz)
        if (i, k) != self.map.cell(x, z) and self.map.inside(i, k):
            self.map.penalty[i, k] += self.config.stuck_penalty
        self._stall.clear()
        self._plan_age = self.config.replan_interval

    def _start_detour(self, x: float, z: float, distance: float) -> None:
        """No progress for ``no_progress_steps``: walk a random heading away from the goal."""
        cfg = self.config
        side = 1.0 if self._rng.random() < 0.5 else -1.0
        turn = side * float(self._rng.uniform(60.0, 150.0))
        self._detour_heading = wrap_degrees(heading_to(x, z, *self._goal) + turn)
        self._detour_left = cfg.detour_steps
        self._detours += 1
        self._progress.restart(distance)
        self._plan_age = cfg.replan_interval
