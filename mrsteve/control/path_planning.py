"""Path planning on a :class:`~mrsteve.control.heightmap.HeightMap` by the game's walking rules.

:func:`find_path` plans on the map's walking levels with A* (:func:`search`) by the rules of
:func:`can_step`: a step up of at most one block is climbable with a jump, a drop of any height is
fine, water is swimmable at an extra cost and can be left only where the bank is level with its
surface. :func:`plan_path` plans on a height map, :func:`reachable` floods it, and
:func:`distance_to_disc` measures a planned path up to a goal disc.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from mrsteve.control.heightmap import BLOCKED, SWIM_EXIT_STEP, UNKNOWN, HeightMap


@dataclass(frozen=True)
class PathCosts:
    """Costs of moving between neighbouring columns for :func:`find_path` (per block walked)."""

    swim: float = 2.5
    """Multiplier for entering water (swimming runs at 1.96 blocks/s, walking at 4.3)."""
    jump: float = 1.0
    """Added for a one-block step up (a jump)."""
    near_wall: float = 0.6
    """Added for entering a column next to one that cannot be climbed from it."""
    unknown: float = 1.2
    """Multiplier for entering a column never seen (optimistic, yet known ground is preferred)."""


GEOMETRIC = PathCosts(swim=1.0, jump=0.0, near_wall=0.0, unknown=1.0)
"""Plain path length: what an evaluator's shortest path measures."""


@nb.njit(cache=True)
def can_step(level_from, level_to, from_water):
    """Whether a player can move from a column at ``level_from`` to a neighbour at ``level_to``:
    up at most one block with a jump, or :data:`SWIM_EXIT_STEP` out of water; down any height.
    Unknown columns are assumed passable."""
    if level_to == BLOCKED:
        return False
    if level_from == UNKNOWN or level_to == UNKNOWN or level_from == BLOCKED:
        return True
    return level_to - level_from <= (SWIM_EXIT_STEP if from_water else 1)


_NEIGHBOURS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [1, -1], [-1, 1], [-1, -1]],
                       dtype=np.int64)


@nb.njit(cache=True)
def _near_wall(levels, water, i, k):
    """Whether a neighbour of column ``(i, k)`` cannot be climbed from it."""
    nx, nz = levels.shape
    for n in range(8):
        a, b = i + _NEIGHBOURS[n, 0], k + _NEIGHBOURS[n, 1]
        if 0 <= a < nx and 0 <= b < nz and not can_step(levels[i, k], levels[a, b], water[i, k]):
            return True
    return False


@nb.njit(cache=True)
def _heap_push(keys, items, size, key, item):
    n = size
    keys[n] = key
    items[n] = item
    while n > 0:
        parent = (n - 1) >> 1
        if keys[parent] <= keys[n]:
            break
        keys[parent], keys[n] = keys[n], keys[parent]
        items[parent], items[n] = items[n], items[parent]
        n = parent
    return size + 1


@nb.njit(cache=True)
def _heap_pop(keys, items, size):
    item = items[0]
    size -= 1
    keys[0] = keys[size]
    items[0] = items[size]
    n = 0
    while True:
        left = 2 * n + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[left + 1] < keys[left]:
            child = left + 1
        if keys[n] <= keys[child]:
            break
        keys[child], keys[n] = keys[n], keys[child]
        items[child], items[n] = items[n], items[child]
        n = child
    return item, size


@nb.njit(cache=True)
def search(levels, water, penalty, start_i, start_k, goal_x, goal_z, radius, swim, jump,
           near_wall, unknown, allow_water, use_goal):
    """A* over columns (8-connected; a diagonal needs both sides passable) from ``(start_i,
    start_k)`` to any column whose centre lies within ``radius`` of ``(goal_x, goal_z)`` (cell
    coordinates); with ``use_goal`` false, Dijkstra over everything reachable.

    Returns ``(cost, parent, end)``: ``float64[nx, nz]`` path costs (``inf``: not reached),
    ``int64[nx, nz]`` flat index of each column's predecessor (-1 at the start), and the flat index
    of the goal column reached, or of the reached column nearest the goal when none is (-1 without
    ``use_goal``).
    """
    nx, nz = levels.shape
    n_cells = nx * nz
    cost = np.full((nx, nz), np.inf)
    parent = np.full((nx, nz), -1, dtype=np.int64)
    closed = np.zeros((nx, nz), dtype=np.bool_)
    walled = np.full((nx, nz), -1, dtype=np.int8)  # _near_wall of each column, once computed
    keys = np.empty(8 * n_cells + 1)
    items = np.empty(8 * n_cells + 1, dtype=np.int64)
    cost[start_i, start_k] = 0.0
    size = _heap_push(keys, items, 0, 0.0, start_i * nz + start_k)
    best, best_gap = start_i * nz + start_k, np.inf
    while size > 0:
        item, size = _heap_pop(keys, items, size)
        i, k = item // nz, item % nz
        if closed[i, k]:
            continue
        closed[i, k] = True
        if use_goal:
            gap = math.hypot(i + 0.5 - goal_x, k + 0.5 - goal_z) - radius
            if gap <= 0.0:
                return cost, parent, item
            if gap < best_gap:
                best, best_gap = item, gap
        here, wet = levels[i, k], water[i, k]
        for n in range(8):
            di, dk = _NEIGHBOURS[n, 0], _NEIGHBOURS[n, 1]
            a, b = i + di, k + dk
            if not (0 <= a < nx and 0 <= b < nz) or closed[a, b]:
                continue
            there = levels[a, b]
            if not can_step(here, there, wet) or (water[a, b] and not allow_water):
                continue
            step = 1.0
            if di != 0 and dk != 0:
                if not (can_step(here, levels[i + di, k], wet)
                        and can_step(here, levels[i, k + dk], wet)):
                    continue
                step = math.sqrt(2.0)
            if water[a, b]:
                step *= swim
            if there == UNKNOWN:
                step *= unknown
            elif here != UNKNOWN and here != BLOCKED and there - here == 1:
                step += jump
            if near_wall > 0.0:
                if walled[a, b] < 0:
                    walled[a, b] = _near_wall(levels, water, a, b)
                if walled[a, b]:
                    step += near_wall
            step += penalty[a, b]
            total = cost[i, k] + step
            if total < cost[a, b]:
                cost[a, b] = total
                parent[a, b] = item
                h = 0.0
                if use_goal:
                    h = max(0.0, math.hypot(a + 0.5 - goal_x, b + 0.5 - goal_z) - radius)
                size = _heap_push(keys, items, size, total + h, a * nz + b)
    return cost, parent, best if use_goal else -1


@nb.njit(cache=True)
def _trace(parent, end):
    """Flat cell indices from the start to ``end``."""
    n = 0
    item = end
    while item >= 0:
        n += 1
        item = parent.flat[item]
    cells = np.empty(n, dtype=np.int64)
    item = end
    for m in range(n - 1, -1, -1):
        cells[m] = item
        item = parent.flat[item]
    return cells


@nb.njit(cache=True)
def line_of_walk(levels, water, x0, z0, x1, z1, allow_water):
    """Whether a player can walk the straight segment between two points (cell coordinates):
    every column its body (0.6 wide) touches is passable, the columns along its centre line are
    climbable one from the next, and no water is entered unless ``allow_water``."""
    nx, nz = levels.shape
    length = math.hypot(x1 - x0, z1 - z0)
    steps = max(1, math.ceil(length / 0.1))
    side_x, side_z = 0.0, 0.0
    if length > 0:
        side_x, side_z = -(z1 - z0) / length * 0.3, (x1 - x0) / length * 0.3
    prev_i, prev_k = math.floor(x0), math.floor(z0)
    for s in range(steps + 1):
        f = s / steps
        x, z = x0 + (x1 - x0) * f, z0 + (z1 - z0) * f
        i, k = math.floor(x), math.floor(z)
        if not (0 <= i < nx and 0 <= k < nz):
            return False
        if (i, k) != (prev_i, prev_k):
            if not can_step(levels[prev_i, prev_k], levels[i, k], water[prev_i, prev_k]):
                return False
            if water[i, k] and not allow_water:
                return False
            prev_i, prev_k = i, k
        for sign in (-1.0, 1.0):
            a, b = math.floor(x + sign * side_x), math.floor(z + sign * side_z)
            if not (0 <= a < nx and 0 <= b < nz):
                return False
            if (a, b) != (i, k) and not can_step(levels[i, k], levels[a, b], water[i, k]):
                return False
    return True


@nb.njit(cache=True)
def wall_across(levels, x0, z0, x1, z1, feet, rise, half_width):
    """Whether a wall stands across the segment between two points (cell coordinates): a known
    column at least ``rise`` blocks above ``feet`` with at least ``2 half_width + 1`` such
    columns in the square of side ``2 half_width + 1`` around it (a wall of that length through
    it, whatever its direction, or a cliff face; not a tree trunk). The start's own column does
    not count."""
    nx, nz = levels.shape
    length = math.hypot(x1 - x0, z1 - z0)
    if length == 0.0:
        return False
    steps = math.ceil(length / 0.25)
    start_i, start_k = math.floor(x0), math.floor(z0)
    last_i, last_k = start_i, start_k
    for s in range(1, steps + 1):
        i = math.floor(x0 + (x1 - x0) * s / steps)
        k = math.floor(z0 + (z1 - z0) * s / steps)
        if (i, k) == (last_i, last_k) or not (0 <= i < nx and 0 <= k < nz):
            continue
        last_i, last_k = i, k
        if not _tall(levels[i, k], feet, rise):
            continue
        count = 0
        for a in range(max(i - half_width, 0), min(i + half_width + 1, nx)):
            for b in range(max(k - half_width, 0), min(k + half_width + 1, nz)):
                if _tall(levels[a, b], feet, rise):
                    count += 1
        if count >= 2 * half_width + 1:
            return True
    return False


@nb.njit(cache=True)
def _tall(level, feet, rise):
    return level != UNKNOWN and level != BLOCKED and level - feet >= rise


@nb.njit(cache=True)
def _smooth(levels, water, points, window):
    """String pulling: keep a point only where the walk from the last kept one would be blocked,
    over the first ``window`` points (the rest are kept as they are)."""
    n = points.shape[0]
    keep = np.zeros(n, dtype=np.bool_)
    keep[0] = True
    keep[n - 1] = True
    anchor = 0
    limit = min(n - 1, window)
    while anchor < limit:
        wet = water[math.floor(points[anchor, 0]), math.floor(points[anchor, 1])]
        reach = anchor + 1
        for j in range(anchor + 2, limit + 1):
            wet_j = wet or water[math.floor(points[j, 0]), math.floor(points[j, 1])]
            if line_of_walk(levels, water, points[anchor, 0], points[anchor, 1], points[j, 0],
                            points[j, 1], wet_j):
                reach = j
            else:
                break
        keep[reach] = True
        anchor = reach
    for m in range(limit, n):
        keep[m] = True
    return points[keep]


def find_path(
    levels: np.ndarray,
    water: np.ndarray,
    penalty: np.ndarray,
    origin: tuple[int, int],
    start: tuple[float, float],
    goal: tuple[float, float],
    radius: float,
    costs: PathCosts = PathCosts(),
    *,
    allow_water: bool = True,
    smooth: int = 32,
) -> tuple[np.ndarray, bool]:
    """Plan a walk from ``start`` toward the disc of ``radius`` around ``goal`` (world ``(x, z)``).

    A* on the columns (:func:`search`), then string pulling over the first ``smooth`` columns so
    open ground is crossed in straight lines. Returns ``(waypoints, reaches_goal)``: ``float[n, 2]``
    world positions from ``start`` to the centre of the goal column reached (or of the reachable
    column nearest the goal when the disc cannot be reached; then ``reaches_goal`` is false).
    """
    ox, oz = origin
    nx, nz = levels.shape
    si, sk = math.floor(start[0]) - ox, math.floor(start[1]) - oz
    if not (0 <= si < nx and 0 <= sk < nz):
        raise ValueError(f"start {start} is off the map (origin {origin}, shape {levels.shape})")
    gx, gz = goal[0] - ox, goal[1] - oz
    _, parent, end = search(
        levels, water, penalty, si, sk, gx, gz, float(radius), costs.swim, costs.jump,
        costs.near_wall, costs.unknown, allow_water, True,
    )  # fmt: skip
    cells = _trace(parent, end)
    points = np.empty((len(cells), 2))
    points[:, 0] = cells // nz + 0.5
    points[:, 1] = cells % nz + 0.5
    points[0] = (start[0] - ox, start[1] - oz)
    end_i, end_k = divmod(int(end), nz)
    reached = math.hypot(end_i + 0.5 - gx, end_k + 0.5 - gz) <= radius
    if len(points) > 2:
        points = _smooth(levels, water, points, smooth)
    points[:, 0] += ox
    points[:, 1] += oz
    return points, reached


def plan_path(
    heightmap: HeightMap,
    start: tuple[float, float],
    goal: tuple[float, float],
    radius: float,
    costs: PathCosts = PathCosts(),
    *,
    allow_water: bool = True,
    smooth: int = 32,
) -> tuple[np.ndarray, bool]:
    """Plan from ``start`` toward the disc of ``radius`` around ``goal`` on ``heightmap`` (grown
    to hold the goal; :func:`find_path`); returns ``(waypoints float[n, 2] of (x, z),
    reaches_goal)``."""
    heightmap.cover(*goal)
    return find_path(
        heightmap.levels(), heightmap.water, heightmap.penalty, heightmap.origin, start, goal,
        radius, costs, allow_water=allow_water, smooth=smooth,
    )  # fmt: skip


def reachable(heightmap: HeightMap, start: tuple[float, float], *, allow_water: bool = True
              ) -> np.ndarray:
    """``bool[nx, nz]``: the columns a player at ``start`` can walk (or swim) to."""
    si, sk = heightmap.cell(*start)
    cost, _, _ = search(
        heightmap.levels(), heightmap.water, heightmap.penalty, si, sk, 0.0, 0.0, 0.0,
        1.0, 0.0, 0.0, 1.0, allow_water, False,
    )  # fmt: skip
    return np.isfinite(cost)


def distance_to_disc(points: np.ndarray, goal: tuple[float, float], radius: float) -> float:
    """Length of the polyline ``points`` up to where it first enters the disc of ``radius`` around
    ``goal`` (its full length when it never does)."""
    points = np.asarray(points, dtype=np.float64)
    centre = np.asarray(goal, dtype=np.float64)
    total = 0.0
    if np.hypot(*(points[0] - centre)) <= radius:
        return 0.0
    for a, b in itertools.pairwise(points):
        seg = b - a
        length = float(np.hypot(*seg))
        if np.hypot(*(b - centre)) <= radius and length > 0:
            # first crossing of |a + s * seg - centre| = radius for s in [0, 1]
            rel = a - centre
            qa, qb, qc = seg @ seg, 2 * (rel @ seg), rel @ rel - radius * radius
            s = (-qb - math.sqrt(max(qb * qb - 4 * qa * qc, 0.0))) / (2 * qa)
            return total + length * min(max(s, 0.0), 1.0)
        total += length
    return total


class WorldGround:
    """A whole world's ground as the evaluator measures it (:meth:`HeightMap.from_blocks`, the
    ground truth, never the agent's map): its walking levels and water, the columns a player
    can reach from a place, and the shortest walk to a goal disc (A* with plain distances,
    straightened by string pulling). What :func:`mrsteve.tasks.navigation.pick_goal` draws
    navigation goals on."""

    def __init__(self, blocks: np.ndarray) -> None:
        self.map = HeightMap.from_blocks(blocks)
        self.levels = self.map.levels()
        """``int[X, Z]``: each column's walking level."""
        self.water = self.map.water
        """``bool[X, Z]``: the columns whose surface is water."""
        self.height = blocks.shape[1]
        """The world's height in blocks (a level this high is a column with no ground)."""

    def reachable(self, start: tuple[float, float], *, allow_water: bool = True) -> np.ndarray:
        """``bool[X, Z]``: the columns a player at ``start`` can walk (or swim) to."""
        return reachable(self.map, start, allow_water=allow_water)

    def shortest(self, start: tuple[float, float], goal: tuple[float, float],
                 radius: float) -> float:
        """The length of the shortest walk from ``start`` to the goal column, up to where it
        enters the disc of ``radius`` around ``goal``; ``RuntimeError`` when the planner finds
        no path."""
        path, reached = plan_path(self.map, start, goal, 0.5, GEOMETRIC, smooth=self.levels.size)
        if not reached:
            raise RuntimeError(f"goal {goal} is reachable, yet the planner found no path to it")
        return distance_to_disc(path, goal, radius)
