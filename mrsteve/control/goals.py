"""High-level goal selectors of hierarchical explorers: pi_H-Nav proposes the next exploration goal.

One protocol, :class:`GoalSelector`, and three selectors side by side:

- :class:`CountBasedGoalSelector`: the paper's pi_H-Cnt over a visitation map built from the
  agent's memory (the frames it holds), or painted from the steps it observes without one;
- :class:`TaskConditionedGoalSelector`: pi_H-Cnt preferring places that match a task's place
  prompt (the only one whose :meth:`~GoalSelector.set_task` does something);
- :class:`DirectionGoalSelector`: Plan4MC's high level (a direction to a neighbouring grid cell),
  scripted; :class:`LearnedDirectionGoalSelector`: the same with the direction from the trained
  LSTM of :mod:`mrsteve.control.direction_policy`.

Count-based selection. Section "Hierarchical Episodic Exploration" and appendix "Solver Module Details": the visitation
map is divided into ``G x G``-block patches and the goal is the centre of a least-visited patch,
the nearest first. The release: the nearest patch with no painted cell (ties at random), else the
least-painted one; a goal is reached within 3 blocks and abandoned after 2000 steps.
Appendix "Task-Conditioned Hierarchical Episodic Exploration": among the least-visited patches,
prefer those near Place Event Memory events that match a place prompt ("near pasture").

Patches are anchored so that the start is the centre of a patch and tile the visitation map
(128 x 128 blocks around the start, as in the release, growing as the agent goes): the selectors
know nothing of the map, not its size nor its walls. A goal the navigator finds it cannot reach
(a wall or a cliff in the way, as far as it has seen) is given up at once (:meth:`give_up`); one
never reached is given up after ``goal_timeout`` steps. A given-up patch is not chosen again for
``retry_after`` steps: what the navigator judged from one place (a ridge it cannot see over, with
a pass it has not found) may be reachable from another, and a patch given up for good would leave
a whole side of a map unexplored. On an unbounded world, ``frontier="rings"`` (beyond the paper)
also offers the patches just beyond the map's edge and fills square rings of patches around the
start from the inside out. Positions are in the agent's frame
(:class:`mrsteve.spaces.AgentFrame`); event poses from the agent's memory, relative to the exact
start, are shifted to it.

Direction selection (appendix "Exploration Experiments Details"). Plan4MC's high level is an LSTM
trained with PPO that reads the agent's past ``(x, y)`` positions and picks the next of four
directions (north, south, east, west) on an 11 x 11 grid over the map, to visit many distinct
cells. The stand-in knows no map either: its cells (``cell_size`` blocks, a task-level setting like
G: 9 blocks on 100 x 100 maps, a map side over 11) tile the plane around the start, it remembers
only the last few cells it entered (the paper: the LSTM "struggled to keep track of visited
locations as the trajectory grew longer") and prefers a direction whose neighbouring cell is not
among them, at random among equals: a stand-in for a trained policy.
:class:`LearnedDirectionGoalSelector` picks with the trained policy instead (Plan4MC's recipe: an
LSTM trained with PPO to visit distinct cells of an 11 x 11 grid around the start).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numba as nb
import numpy as np

from mrsteve.control.direction_policy import DIRECTIONS, DirectionPolicy, DirectionWeights
from mrsteve.control.visitation import (
    PaintedFrames,
    VisitationConfig,
    VisitationMap,
    paint_sectors,
)
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.memory.base import Memory, held_frames
from mrsteve.naming import check_name

FRONTIERS = ("nearest", "rings")
"""How the count-based selector picks among unpainted patches (:attr:`ExplorationConfig.frontier`)."""

_TIE = 1e-6
"""Scores (distances, counts, relevance) closer than this are ties."""


@dataclass(frozen=True)
class ExplorationConfig:
    """Configuration of the count-based goal selectors (the paper's and release's values)."""

    patch_size: float = 15.0
    """Side ``G`` of a goal patch in blocks: 15 on 100 x 100 maps, 30 on 200 x 200 maps."""
    reach_distance: float = 3.0
    """A goal within this many blocks (on the ground plane) is reached."""
    goal_timeout: int = 2000
    """Steps after which an unreached goal is abandoned."""
    retry_after: int = 2000
    """Steps an abandoned or given-up patch is not chosen again (as long as a goal may take)."""
    frontier: str = field(default="nearest", metadata=OMITTED_WHEN_DEFAULT)
    """Which unpainted patch is the goal: ``nearest``, the one nearest the agent among the
    patches the visitation map covers (the paper's), or ``rings``, for an unbounded world (a
    task-level setting, beyond the paper): the patches of the map and the ring just beyond its
    edge, those on the innermost square ring of patches around the start first, the nearest the
    agent among them (the paper: "in an infinitely large map, the visitation map can be easily
    expanded by adding new grids"). With ``nearest`` on such a world, once every patch of the
    map has some paint the agent goes back to the least-painted one until a view happens to
    reach the edge and grow the map; offered the patches beyond the edge nearest-first, it
    walks straight away from the start."""

    def __post_init__(self) -> None:
        if (not self.patch_size > 0 or not self.reach_distance >= 0 or self.goal_timeout < 1
                or self.retry_after < 1):
            raise ValueError(f"patch_size must be > 0, reach_distance >= 0, goal_timeout >= 1 "
                             f"and retry_after >= 1, got {self.patch_size}, "
                             f"{self.reach_distance}, {self.goal_timeout}, {self.retry_after}")
        check_name(self.frontier, FRONTIERS, "frontier")


@dataclass(frozen=True)
class DirectionConfig:
    """Configuration of :class:`DirectionGoalSelector` (Plan4MC's high level)."""

    cell_size: float = 9.0
    """Side of a grid cell in blocks (Plan4MC's 11 x 11 grid over a 100 x 100 map: about 9)."""
    memory: int = 4
    """Distinct grid cells, most recent first, the selector remembers."""
    reach_distance: float = 3.0
    """A goal within this many blocks is reached."""
    goal_timeout: int = 300
    """Steps after which an unreached goal is given up and a new direction chosen."""
    weights: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    """A weights file (``mrsteve train direction-policy``) the learned direction picker runs
    with in place of the shipped one."""
    weights_sha256: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    """The hash of :attr:`weights` (a retrained file is another tree)."""

    def __post_init__(self) -> None:
        if not self.cell_size > 0 or self.memory < 0 or self.goal_timeout < 1:
            raise ValueError(f"need cell_size > 0, memory >= 0 and goal_timeout >= 1, got {self}")


@runtime_checkable
class GoalSelector(Protocol):
    """The high level of a hierarchical explorer: the next goal ``(x, z)`` (episode frame, as
    every position an agent part sees) from the trajectory so far."""

    @property
    def goal(self) -> tuple[float, float] | None:
        """The current goal, ``None`` before the first :meth:`propose`."""
        ...

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        """Start a new episode at ``pose`` ``(x, y, z, yaw, pitch)``; random choices from ``rng``."""
        ...

    def observe(self, pose: Sequence[float]) -> None:
        """Record the agent's pose at a step (every step, whoever acts)."""
        ...

    def propose(self, pose: Sequence[float], t: int) -> tuple[float, float]:
        """The goal to pursue at step ``t``: the current one, or a new one when it was reached or
        has timed out."""
        ...

    def give_up(self, t: int) -> None:
        """Drop the current goal at step ``t``: the navigator found it unreachable. The next
        :meth:`propose` picks another."""
        ...

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """A task's place prompt (its embedding and threshold); selectors that explore task-free
        ignore it."""
        ...


class EventSource(Protocol):
    """What task-conditioned exploration reads from a memory: its event clusters."""

    def event_centres(self) -> tuple[np.ndarray, np.ndarray]:
        """``(embeddings float32[n, dim], poses float[n, 5])``: each event cluster's centre
        embedding and the pose ``(x, y, z, yaw, pitch)`` of its centre frame."""
        ...


@dataclass(frozen=True)
class PatchStats:
    """The goal patches at one moment, as ``[px, pz]`` arrays."""

    index_x: np.ndarray
    """Patch indices along x (stable as the map grows)."""
    index_z: np.ndarray
    centre_x: np.ndarray
    """Patch centres along x (``float[px]``)."""
    centre_z: np.ndarray
    painted_cells: np.ndarray
    """Cells painted at least once (``int[px, pz]``)."""
    mean_paint: np.ndarray
    """Mean paint count per cell on the map (``float[px, pz]``; 0 for patches off the map)."""
    cell_patch: tuple[np.ndarray, np.ndarray]
    """Position in ``index_x`` (``index_z``) of the patch of each map cell row (column); -1: none."""

    def sums(self, layer: np.ndarray) -> np.ndarray:
        """Per-patch sums of a layer aligned with the visitation map."""
        return _patch_sums(layer, *self.cell_patch, len(self.index_x), len(self.index_z))


def patch_stats(visitation: VisitationMap, patch_size: float,
                beyond_map: bool = False) -> PatchStats:
    """The patches over the visitation map (centred on its start) and their paint; with
    ``beyond_map``, also the ring of patches just beyond its edge (no cell on the map: no
    paint)."""
    margin = patch_size if beyond_map else 0.0
    x_min, z_min, x_max, z_max = visitation.extent
    bounds = ((x_min - margin, x_max + margin), (z_min - margin, z_max + margin))
    axes = []
    for axis, (lo, hi) in enumerate(bounds):
        origin, size = visitation.origin[axis], patch_size
        start = visitation.centre[axis]
        index = np.arange(math.ceil((lo - start) / size), math.floor((hi - start) / size) + 1)
        index = index[start + index * size < hi]
        low_edges = start + (index - 0.5) * size
        edges = np.concatenate([low_edges, [low_edges[-1] + size]])
        cell_centres = origin + np.arange(visitation.counts.shape[axis]) + 0.5
        patch = np.searchsorted(edges, cell_centres, side="right") - 1
        patch[(cell_centres < edges[0]) | (cell_centres >= edges[-1])] = -1
        axes.append((index, low_edges + size / 2, patch))
    (ix, cx, px), (iz, cz, pz) = axes
    counts = visitation.counts
    cells = np.outer(np.bincount(px[px >= 0], minlength=len(ix)),
                     np.bincount(pz[pz >= 0], minlength=len(iz)))
    painted = _patch_sums((counts > 0).view(np.uint8), px, pz, len(ix), len(iz))
    mean = np.divide(_patch_sums(counts, px, pz, len(ix), len(iz)), cells,
                     out=np.zeros(cells.shape), where=cells > 0)
    return PatchStats(ix, iz, cx, cz, painted.astype(np.int64), mean, (px, pz))


@nb.njit(cache=True)
def _patch_sums(layer, patch_x, patch_z, n_x, n_z):
    """``float64[n_x, n_z]`` sums of ``layer[i, j]`` over cells of each patch."""
    sums = np.zeros((n_x, n_z))
    for i in range(layer.shape[0]):
        px = patch_x[i]
        if px < 0:
            continue
        for j in range(layer.shape[1]):
            pz = patch_z[j]
            if pz >= 0:
                sums[px, pz] += layer[i, j]
    return sums


class CountBasedGoalSelector:
    """The paper's count-based goal selector pi_H-Cnt.

    Its :class:`~mrsteve.control.visitation.VisitationMap` (centred on the start) holds the fields
    of view of the frames the agent's ``memory`` holds, brought up to date before each goal is
    chosen (appendix "Solver Module Details": the map is built from Place Event Memory, so a place
    whose frames were evicted is unvisited again); without a memory, the field of view of every
    :meth:`observe`. The goal is the centre of the nearest patch with
    no painted cell, else of the least-painted patch (nearest among equals); remaining ties are
    broken with the generator given to :meth:`reset`. :meth:`propose` keeps a goal until it is
    reached, times out or is given up; a patch whose goal timed out or was given up is not chosen
    again for ``retry_after`` steps.
    """

    def __init__(
        self,
        config: ExplorationConfig | None = None,
        visitation: VisitationConfig | None = None,
        memory: Memory | None = None,
    ) -> None:
        self.config = config or ExplorationConfig()
        self.visitation_config = visitation or VisitationConfig()
        self.memory = memory if self.visitation_config.painted_from == "memory" else None
        """The agent's memory, whose frames (poses relative to the start) paint the map; ``None``
        (no memory, or a map painted from the steps): the selector paints the steps it
        observes."""
        self.visitation: VisitationMap | None = None
        """The visitation map of the episode (from :meth:`reset` on; with a memory, as of the
        last :meth:`update_visitation`)."""
        self._painted: PaintedFrames | None = None
        self._stale = False
        self.rng = np.random.default_rng(0)
        self._start = (0.0, 0.0, 0.0)
        self._goal: tuple[float, float] | None = None

    @property
    def goal(self) -> tuple[float, float] | None:
        return self._goal

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        self._start = (float(pose[0]), float(pose[1]), float(pose[2]))
        start = (self._start[0], self._start[2])
        self.visitation = VisitationMap(self.visitation_config, start)
        self._painted = None if self.memory is None else PaintedFrames(self.visitation, start)
        self._stale = self.memory is not None
        self.rng = rng
        self._goal = None
        self._goal_patch: tuple[int, int] | None = None
        self._goal_since = 0
        self._abandoned: dict[tuple[int, int], int] = {}
        """Patches given up, with the step they were given up at."""

    def observe(self, pose: Sequence[float]) -> None:
        """Paint the step's field of view; with a memory, only note that it wrote a frame (the
        map is brought up to date when a goal is chosen)."""
        if self._painted is None:
            self.visitation.paint(float(pose[0]), float(pose[2]), float(pose[3]))
        else:
            self._stale = True

    def update_visitation(self) -> None:
        """Paint the map with the frames the memory holds now (a no-op without a memory, or
        when no step was observed since the last update): new frames painted, evicted ones
        taken back."""
        if self._painted is None or not self._stale:
            return
        self._painted.update(*held_frames(self.memory))
        self._stale = False

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Count-based exploration ignores tasks."""

    def select(self, x: float, z: float) -> tuple[float, float]:
        self.update_visitation()
        rings = self.config.frontier == "rings"
        stats = patch_stats(self.visitation, self.config.patch_size, beyond_map=rings)
        candidates = np.ones(stats.painted_cells.shape, dtype=bool)
        for px, pz in self._abandoned:
            candidates[(stats.index_x == px)[:, None] & (stats.index_z == pz)[None, :]] = False
        if not candidates.any():
            candidates[:] = True
        unpainted = candidates & (stats.painted_cells == 0)
        if unpainted.any():
            candidates = unpainted
            if rings:
                ring = np.maximum(np.abs(stats.index_x)[:, None], np.abs(stats.index_z)[None, :])
                candidates &= ring == ring[candidates].min()
        else:
            least = stats.mean_paint[candidates].min()
            candidates &= stats.mean_paint <= least + _TIE
        candidates = self._prefer(stats, candidates)
        distance = np.hypot(stats.centre_x[:, None] - x, stats.centre_z[None, :] - z)
        distance = np.where(candidates, distance, np.inf)
        nearest = np.flatnonzero(distance <= distance.min() + _TIE)
        kx, kz = np.unravel_index(self.rng.choice(nearest), distance.shape)
        self._goal_patch = (int(stats.index_x[kx]), int(stats.index_z[kz]))
        return float(stats.centre_x[kx]), float(stats.centre_z[kz])

    def propose(self, pose: Sequence[float], t: int) -> tuple[float, float]:
        x, z = float(pose[0]), float(pose[2])
        if self._goal is not None:
            if math.hypot(self._goal[0] - x, self._goal[1] - z) <= self.config.reach_distance:
                self._goal = None
            elif t - self._goal_since >= self.config.goal_timeout:
                self.give_up(t)
        if self._goal is None:
            retry = self.config.retry_after
            self._abandoned = {p: since for p, since in self._abandoned.items()
                               if t - since < retry}
            self._goal = self.select(x, z)
            self._goal_since = t
        return self._goal

    def give_up(self, t: int) -> None:
        if self._goal is not None:
            self._abandoned[self._goal_patch] = t
            self._goal = None

    def _prefer(self, stats: PatchStats, candidates: np.ndarray) -> np.ndarray:
        """Narrow the least-visited candidates before distance decides (hook for subclasses)."""
        return candidates


class TaskConditionedGoalSelector(CountBasedGoalSelector):
    """Count-based selection that prefers task-relevant patches (appendix "Task-Conditioned
    Hierarchical Episodic Exploration").

    With a task set (a place prompt's embedding and threshold), event clusters of ``events`` (the
    agent's memory, poses relative to the episode start) whose centre scores at least the
    threshold are relevant; their centre frames' field-of-view sectors are painted on a
    task-relevance layer aligned with the visitation map, summed per patch and smoothed with a
    3 x 3 box blur over patches (something near X is likely X). Among the least-visited patches the
    most relevant win, then the nearest. Without a task it is the count-based selector.
    """

    def __init__(
        self,
        events: EventSource,
        config: ExplorationConfig | None = None,
        visitation: VisitationConfig | None = None,
        memory: Memory | None = None,
    ) -> None:
        super().__init__(config, visitation, memory)
        self.events = events
        self._query: np.ndarray | None = None
        self._threshold = 0.0

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Explore towards places matching ``query`` (e.g. ``encoder.encode_text("near pasture")``
        with ``encoder.task_threshold("near pasture")``)."""
        self._query = np.asarray(query, dtype=np.float32)
        self._threshold = float(threshold)

    def clear_task(self) -> None:
        """Explore without a task (count-based)."""
        self._query = None

    def episode_events(self) -> tuple[np.ndarray, np.ndarray]:
        """The event centres of ``events`` with their poses moved from the memory's (relative to
        the start pose) into the episode frame."""
        embeddings, poses = self.events.event_centres()
        return embeddings, np.asarray(poses, dtype=np.float64) + np.array([*self._start, 0.0, 0.0])

    def relevance(self, stats: PatchStats) -> np.ndarray:
        """Blurred task relevance of each patch (``float[px, pz]``; zeros without a task)."""
        relevance = np.zeros(stats.painted_cells.shape)
        if self._query is None:
            return relevance
        embeddings, poses = self.episode_events()
        if len(embeddings) == 0:
            return relevance
        if embeddings.shape[1] != self._query.shape[0]:
            raise ValueError(f"event embeddings have dim {embeddings.shape[1]}, the task query "
                             f"{self._query.shape[0]}")
        relevant = np.asarray(poses, dtype=np.float64)[embeddings @ self._query >= self._threshold]
        layer = self.visitation.blank_layer()
        config = self.visitation.config
        paint_sectors(layer, *self.visitation.origin, relevant[:, 0], relevant[:, 2],
                      relevant[:, 3], config.fov_degrees / 2, config.view_distance, 1.0)
        return box_blur(stats.sums(layer))

    def _prefer(self, stats: PatchStats, candidates: np.ndarray) -> np.ndarray:
        relevance = np.where(candidates, self.relevance(stats), -np.inf)
        return candidates & (relevance >= relevance.max() - _TIE)


def box_blur(grid: np.ndarray) -> np.ndarray:
    """3 x 3 box blur (mean over each cell's neighbourhood, zeros beyond the edges)."""
    padded = np.pad(grid.astype(np.float64), 1)
    rows, cols = grid.shape
    return sum(padded[i:i + rows, j:j + cols] for i in range(3) for j in range(3)) / 9.0


class DirectionGoalSelector:
    """Plan4MC-style high level (module docstring): one of north, south, east or west to the
    neighbouring cell of a grid of ``cell_size`` cells around the start, preferring cells not
    among the last ``memory`` ones entered."""

    DIRECTIONS = DIRECTIONS
    """North (-z), south (+z), east (+x), west (-x) in grid steps."""

    def __init__(self, config: DirectionConfig | None = None) -> None:
        self.config = config or DirectionConfig()
        self._corner = (0.0, 0.0)
        self._rng = np.random.default_rng(0)
        self._recent: deque[tuple[int, int]] = deque(maxlen=max(self.config.memory, 1))
        self._goal: tuple[float, float] | None = None
        self._goal_since = 0

    @property
    def goal(self) -> tuple[float, float] | None:
        return self._goal

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        half = self.config.cell_size / 2
        self._corner = (float(pose[0]) - half, float(pose[2]) - half)  # the start cell's centre
        self._rng = rng
        self._recent.clear()
        self._goal = None
        self._goal_since = 0
        self.observe(pose)

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Plan4MC's explorer ignores tasks."""

    def cell(self, x: float, z: float) -> tuple[int, int]:
        """The grid cell holding ``(x, z)`` (the start's cell is ``(0, 0)``)."""
        size = self.config.cell_size
        return (math.floor((x - self._corner[0]) / size),
                math.floor((z - self._corner[1]) / size))

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

    def give_up(self, t: int) -> None:
        """Drop the goal; its cell counts as recently entered so another direction is taken."""
        if self._goal is not None:
            cell = self.cell(*self._goal)
            if self.config.memory > 0 and cell not in self._recent:
                self._recent.appendleft(cell)
            self._goal = None

    def _next_goal(self, x: float, z: float) -> tuple[float, float]:
        i, k = self.cell(x, z)
        di, dk = self.DIRECTIONS[self._direction(x, z, (i, k))]
        size = self.config.cell_size
        return self._corner[0] + (i + di + 0.5) * size, self._corner[1] + (k + dk + 0.5) * size

    def _direction(self, x: float, z: float, cell: tuple[int, int]) -> int:
        """The index in :attr:`DIRECTIONS` to go from ``cell`` (the agent at ``(x, z)``): one
        whose neighbour is not among the recent cells, at random among equals."""
        options = [(cell[0] + di, cell[1] + dk) for di, dk in self.DIRECTIONS]
        fresh = [index for index, option in enumerate(options) if option not in self._recent]
        choices = fresh or list(range(len(options)))
        return choices[int(self._rng.integers(len(choices)))]


class LearnedDirectionGoalSelector(DirectionGoalSelector):
    """Plan4MC's high level as trained (:mod:`mrsteve.control.direction_policy`): at each
    decision the LSTM reads the agent's position relative to the start, in cells, and the
    direction is sampled from its output; the trajectory is the LSTM's only memory (the recent
    cells are not consulted). A direction off the grid it was trained on is walked too, as in
    Plan4MC (the navigator gives up at a wall)."""

    def __init__(self, weights: DirectionWeights, config: DirectionConfig | None = None) -> None:
        super().__init__(config)
        self._policy = DirectionPolicy(weights)

    def reset(self, pose: Sequence[float], rng: np.random.Generator) -> None:
        self._policy.reset()
        super().reset(pose, rng)

    def observe(self, pose: Sequence[float]) -> None:
        """Nothing to record: the LSTM reads the position when it decides."""

    def give_up(self, t: int) -> None:
        self._goal = None

    def _direction(self, x: float, z: float, cell: tuple[int, int]) -> int:
        half, size = self.config.cell_size / 2, self.config.cell_size
        position = ((x - self._corner[0] - half) / size, (z - self._corner[1] - half) / size)
        return self._policy.choose(position, self._rng)
