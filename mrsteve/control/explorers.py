"""Explorers: what an agent does when it has nowhere particular to go (the paper's Table 1).

An :class:`Explorer` sees every step (:meth:`~Explorer.observe`, also in steps another controller
acts) and acts when asked (:meth:`~Explorer.act`). The paper compares hierarchical explorers, a
high-level goal proposer over a low-level goal-conditioned navigator, with STEVE-1 told to "go
explore". The embedded stand-ins:

- :class:`HierarchicalExplorer` with :class:`CountBasedProposer`: MrSteve's hierarchical episodic
  exploration (Section 3.3): the visitation map painted with the field of view every step, the
  count-based goal selector pi_H-Cnt (nearest unseen ``G x G`` patch, G = 15 on 100 x 100 maps), and
  a navigator as pi_L-Nav (:class:`~mrsteve.control.navigation.DepthNavigator` for VPT-Nav);
- :class:`HierarchicalExplorer` with :class:`DirectionProposer`: Plan4MC's explorer (appendix
  "Exploration Experiments Details"). Plan4MC's high level is an LSTM trained with PPO that reads
  the agent's past ``(x, y)`` positions and picks the next of four directions (north, south, east,
  west) on an 11 x 11 grid, to visit many distinct cells. The stand-in has no map either: it
  remembers only the last few grid cells it entered (the paper: the LSTM "struggled to keep track
  of visited locations as the trajectory grew longer") and prefers a direction whose neighbouring
  cell is not among them, at random among equals. Plan4MC's low level is a DQN goal reacher; the
  straight navigator (:class:`~mrsteve.control.navigation.StraightNavigator`, no terrain skills)
  stands in for it, our navigator for the VPT-Nav cross combination;
- :class:`WanderExplorer`: STEVE-1 with "go explore", no memory: the paper observes it walks
  straight ahead, runs into walls and follows them. It walks on, jumps when stalled, swims, and
  turns toward the more open side when something it cannot climb blocks the view ahead.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.control.goals import (
    Bounds,
    CountBasedGoalSelector,
    EventSource,
    ExplorationConfig,
    TaskConditionedGoalSelector,
)
from mrsteve.control.navigation import Action, Navigator, Observation
from mrsteve.control.visitation import VisitationConfig, VisitationMap
from mrsteve.world.content import load_content
from mrsteve.world.render import camera_rays


@runtime_checkable
class Explorer(Protocol):
    """pi_H-Nav and pi_L-Nav together: where to go next when memory has nothing (Explore mode)."""

    @property
    def goal(self) -> tuple[float, float] | None:
        """The current exploration goal ``(x, z)`` in world coordinates, if any (for plots)."""

    def reset(self, obs: Observation, rng: np.random.Generator) -> None:
        """Start a new episode at ``obs``."""

    def observe(self, obs: Observation) -> None:
        """Record a step the agent took in any mode (e.g. paint the visitation map)."""

    def act(self, obs: Observation) -> Action:
        """The next exploration action (the step was recorded by :meth:`observe` first)."""


class GoalProposer(Protocol):
    """The high level of a hierarchical explorer: the next goal from the trajectory so far."""

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        """Start a new episode at ``pose`` ``(x, y, z, yaw, pitch)``."""

    def observe(self, pose: Sequence[float]) -> None:
        """Record the agent's pose at a step."""

    def propose(self, pose: Sequence[float], t: int) -> tuple[float, float]:
        """The goal to pursue at step ``t``: the current one, or a new one when it was reached or
        has timed out."""


def patch_bounds(walkable: Bounds, start: tuple[float, float], patch_size: float) -> Bounds:
    """The area goal patches tile: ``patch_size`` patches anchored with the start at a patch
    centre (as in the release), as many as have their centre inside ``walkable``. Edge patches
    reach past the walls, so their goals (the centres) lie near them."""
    lows, highs = [], []
    for axis in (0, 1):
        below = math.floor((start[axis] - walkable[axis]) / patch_size)
        above = math.floor((walkable[axis + 2] - start[axis]) / patch_size)
        lows.append(start[axis] - (below + 0.5) * patch_size)
        highs.append(start[axis] + (above + 0.5) * patch_size)
    return (lows[0], lows[1], highs[0], highs[1])


class CountBasedProposer:
    """pi_H-Cnt: :class:`~mrsteve.control.visitation.VisitationMap` painted with the field of view
    and :class:`~mrsteve.control.goals.CountBasedGoalSelector` over it, centred on the start.

    With ``bounds``, the walkable area inside a map's walls, the goal patches are those of
    :func:`patch_bounds`; without, they tile the whole visitation map."""

    def __init__(
        self,
        config: ExplorationConfig | None = None,
        visitation: VisitationConfig | None = None,
        bounds: Bounds | None = None,
    ) -> None:
        self.config = config or ExplorationConfig()
        self.visitation_config = visitation or VisitationConfig()
        self.bounds = bounds
        self.visitation: VisitationMap | None = None
        self.selector: CountBasedGoalSelector | None = None

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        start = (float(pose[0]), float(pose[2]))
        self.visitation = VisitationMap(self.visitation_config, start)
        bounds = None
        if self.bounds is not None:
            bounds = patch_bounds(self.bounds, start, self.config.patch_size)
        self.selector = self._make_selector(pose, rng, bounds)

    def _make_selector(
        self, start: Sequence[float], rng: np.random.Generator, bounds: Bounds | None
    ) -> CountBasedGoalSelector:
        return CountBasedGoalSelector(self.visitation, rng, self.config, bounds)

    def observe(self, pose: Sequence[float]) -> None:
        self.visitation.paint(float(pose[0]), float(pose[2]), float(pose[3]))

    def propose(self, pose: Sequence[float], t: int) -> tuple[float, float]:
        return self.selector.update(pose, t)


class TaskConditionedProposer(CountBasedProposer):
    """Task-conditioned pi_H (appendix "Task-Conditioned Hierarchical Episodic Exploration"): the
    count-based proposer whose selector, given a task's place prompt (:meth:`set_task`), prefers
    the least-visited patches near remembered events that match it. ``events`` (the agent's
    memory) hold poses relative to the episode start; they are shifted to world coordinates."""

    def __init__(
        self,
        events: EventSource,
        config: ExplorationConfig | None = None,
        visitation: VisitationConfig | None = None,
        bounds: Bounds | None = None,
    ) -> None:
        super().__init__(config, visitation, bounds)
        self.events = events

    def _make_selector(self, start, rng, bounds) -> TaskConditionedGoalSelector:
        events = _ShiftedEvents(self.events, (float(start[0]), float(start[1]), float(start[2])))
        return TaskConditionedGoalSelector(self.visitation, events, rng, self.config, bounds)

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Explore toward places matching ``query`` (a place prompt's embedding)."""
        self.selector.set_task(query, threshold)


class _ShiftedEvents:
    """An :class:`EventSource` whose poses are moved by ``offset`` (start-relative -> world)."""

    def __init__(self, events: EventSource, offset: tuple[float, float, float]) -> None:
        self.events = events
        self.offset = np.array([*offset, 0.0, 0.0])

    def event_centres(self) -> tuple[np.ndarray, np.ndarray]:
        centres, poses = self.events.event_centres()
        return centres, np.asarray(poses, dtype=np.float64) + self.offset


@dataclass(frozen=True)
class DirectionConfig:
    """Configuration of :class:`DirectionProposer` (Plan4MC's high level)."""

    grid: int = 11
    """Cells per side of the grid the directions move on (Plan4MC: 11 x 11)."""
    memory: int = 4
    """Distinct grid cells, most recent first, the proposer remembers."""
    reach_distance: float = 3.0
    """A goal within this many blocks is reached."""
    goal_timeout: int = 300
    """Steps after which an unreached goal is given up and a new direction chosen."""

    def __post_init__(self) -> None:
        if self.grid < 2 or self.memory < 0 or self.goal_timeout < 1:
            raise ValueError(f"need grid >= 2, memory >= 0 and goal_timeout >= 1, got {self}")


class DirectionProposer:
    """Plan4MC-style high level (module docstring): one of north, south, east or west to the
    neighbouring cell of a ``grid x grid`` division of ``bounds``, preferring cells not among the
    last ``memory`` ones entered."""

    DIRECTIONS = ((0, -1), (0, 1), (1, 0), (-1, 0))
    """North (-z), south (+z), east (+x), west (-x) in grid steps."""

    def __init__(self, bounds: Bounds, config: DirectionConfig | None = None) -> None:
        if not (bounds[0] < bounds[2] and bounds[1] < bounds[3]):
            raise ValueError(f"bounds must be (x_min, z_min, x_max, z_max) with min < max, "
                             f"got {bounds}")
        self.bounds = bounds
        self.config = config or DirectionConfig()
        self._cell_size = ((bounds[2] - bounds[0]) / self.config.grid,
                           (bounds[3] - bounds[1]) / self.config.grid)
        self._rng = np.random.default_rng(0)
        self._recent: deque[tuple[int, int]] = deque(maxlen=max(self.config.memory, 1))
        self._goal: tuple[float, float] | None = None
        self._goal_since = 0

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        self._rng = rng
        self._recent.clear()
        self._goal = None
        self._goal_since = 0
        self.observe(pose)

    def cell(self, x: float, z: float) -> tuple[int, int]:
        """The grid cell holding ``(x, z)`` (clipped to the grid)."""
        n = self.config.grid
        i = math.floor((x - self.bounds[0]) / self._cell_size[0])
        k = math.floor((z - self.bounds[1]) / self._cell_size[1])
        return min(max(i, 0), n - 1), min(max(k, 0), n - 1)

    def observe(self, pose: Sequence[float]) -> None:
        cell = self.cell(float(pose[0]), float(pose[2]))
        if self.config.memory > 0 and (not self._recent or self._recent[0] != cell):
            if cell in self._recent:
                self._recent.remove(cell)
            self._recent.appendleft(cell)

    def propose(self, pose: Sequence[float], t: int) -> tuple[float, float]:
        x, z = float(pose[0]), float(pose[2])
        if self._goal is not None and (
            math.hypot(self._goal[0] - x, self._goal[1] - z) <= self.config.reach_distance
            or t - self._goal_since >= self.config.goal_timeout
        ):
            self._goal = None
        if self._goal is None:
            self._goal = self._next_goal(x, z)
            self._goal_since = t
        return self._goal

    def _next_goal(self, x: float, z: float) -> tuple[float, float]:
        n = self.config.grid
        i, k = self.cell(x, z)
        options = [(i + di, k + dk) for di, dk in self.DIRECTIONS
                   if 0 <= i + di < n and 0 <= k + dk < n]
        fresh = [cell for cell in options if cell not in self._recent]
        choices = fresh or options
        gi, gk = choices[int(self._rng.integers(len(choices)))]
        return (self.bounds[0] + (gi + 0.5) * self._cell_size[0],
                self.bounds[1] + (gk + 0.5) * self._cell_size[1])


class HierarchicalExplorer:
    """A goal proposer (high level) over a goal-conditioned navigator (low level)."""

    def __init__(self, proposer: GoalProposer, navigator: Navigator) -> None:
        self.proposer = proposer
        self.navigator = navigator
        # a navigator that maps (DepthNavigator.observe) sees every step, not only those it acts in
        self._navigator_observe = getattr(navigator, "observe", None)
        self._goal: tuple[float, float] | None = None
        self._t = 0

    @property
    def goal(self) -> tuple[float, float] | None:
        return self._goal

    def reset(self, obs: Observation, rng: np.random.Generator) -> None:
        high, low = rng.spawn(2)
        self.proposer.reset(obs["pose"], high)
        self.navigator.reset(low)
        self._goal = None
        self._t = 0

    def observe(self, obs: Observation) -> None:
        self.proposer.observe(obs["pose"])
        if self._navigator_observe is not None:
            self._navigator_observe(obs)
        self._t += 1

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Hand a task's place prompt to a task-conditioned proposer (others explore task-free)."""
        set_task = getattr(self.proposer, "set_task", None)
        if set_task is not None:
            set_task(query, threshold)

    def act(self, obs: Observation) -> Action:
        self._goal = self.proposer.propose(obs["pose"], self._t)
        return self.navigator.act(obs, self._goal)


@dataclass(frozen=True)
class WanderConfig:
    """Configuration of :class:`WanderExplorer` (STEVE-1 "go explore")."""

    clearance: float = 2.5
    """Free distance (blocks) at eye level the wanderer needs ahead to keep walking straight."""
    eye_band: float = 8.0
    """Pixel rows within this many degrees of the horizon make the eye-level band."""
    max_turn: float = 10.0
    """Largest camera turn per step, degrees."""
    stall_speed: float = 0.05
    """Horizontal blocks per step below which a step counts as stalled."""
    stall_jump: int = 3
    """Stalled steps in a row after which it jumps."""
    stuck_steps: int = 30
    """Stalled steps in a row after which it turns away as if blocked."""

    def __post_init__(self) -> None:
        if not self.clearance > 0 or not self.eye_band > 0 or not self.max_turn > 0:
            raise ValueError(f"clearance, eye_band and max_turn must be positive, got {self}")


class WanderExplorer:
    """STEVE-1 told to "go explore" (module docstring): straight on, turning at obstacles."""

    def __init__(self, config: WanderConfig | None = None, fov_deg: float = 70.0) -> None:
        self.config = config or WanderConfig()
        self.fov_deg = float(fov_deg)
        self._water_class = load_content().semantic_id("water")
        self._geometry: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None
        self._rng = np.random.default_rng(0)
        self._last_xz: tuple[float, float] | None = None
        self._stalled = 0
        self._turn = 0.0

    @property
    def goal(self) -> tuple[float, float] | None:
        return None

    def reset(self, obs: Observation, rng: np.random.Generator) -> None:
        self._rng = rng
        self._last_xz = None
        self._stalled = 0
        self._turn = 0.0

    def observe(self, obs: Observation) -> None:
        x, z = float(obs["pose"][0]), float(obs["pose"][2])
        if self._last_xz is not None:
            moved = math.hypot(x - self._last_xz[0], z - self._last_xz[1])
            self._stalled = 0 if moved >= self.config.stall_speed else self._stalled + 1
        self._last_xz = (x, z)

    def act(self, obs: Observation) -> Action:
        cfg = self.config
        pitch = float(obs["pose"][4])
        free_left, free_ahead, free_right = self._free_space(obs["depth"], pitch)
        if self._turn == 0.0 and (free_ahead < cfg.clearance or self._stalled >= cfg.stuck_steps):
            # blocked: turn toward the more open side (at random when both look alike)
            if abs(free_left - free_right) < 0.5:
                self._turn = cfg.max_turn * (1 if self._rng.random() < 0.5 else -1)
            else:
                self._turn = cfg.max_turn * (1 if free_right > free_left else -1)
            self._stalled = 0
        elif self._turn != 0.0 and free_ahead >= cfg.clearance + 1.0:
            self._turn = 0.0
        swimming = self._swimming(obs)
        return {
            "forward": 1,
            "sprint": int(self._turn == 0.0),
            "jump": int(swimming or self._stalled >= cfg.stall_jump),
            "camera": np.array([np.clip(-pitch, -cfg.max_turn, cfg.max_turn), self._turn],
                               dtype=np.float32),
        }

    def _free_space(self, depth: np.ndarray, pitch: float) -> tuple[float, float, float]:
        """Least horizontal free distance at eye level in the left, middle and right thirds."""
        column_angles, row_angles = self._camera_geometry(depth.shape)
        band = np.abs(row_angles - pitch) < self.config.eye_band
        if not band.any():
            return (math.inf,) * 3
        free = depth[band].min(axis=0) * np.cos(np.radians(column_angles))
        thirds = np.array_split(free, 3)
        return tuple(float(part.min()) for part in thirds)

    def _camera_geometry(self, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Yaw offset of each pixel column and upward angle of each row (degrees)."""
        if self._geometry is None or self._geometry[0] != shape:
            rays = camera_rays(shape[0], shape[1], self.fov_deg).reshape(shape[0], shape[1], 3)
            columns = np.degrees(np.arctan2(rays[0, :, 0], rays[0, :, 2]))
            rows = np.degrees(np.arctan2(rays[:, 0, 1], rays[:, 0, 2]))
            self._geometry = (shape, columns, rows)
        return self._geometry[1], self._geometry[2]

    def _swimming(self, obs: Observation) -> bool:
        """Off the block grid vertically with water filling the bottom of the view."""
        y = float(obs["pose"][1])
        if abs(y - round(y)) < 1e-3:
            return False
        bottom = obs["semantic"][-max(1, obs["semantic"].shape[0] // 4):]
        return float(np.mean(bottom == self._water_class)) > 0.5
