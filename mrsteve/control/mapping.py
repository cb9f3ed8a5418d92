"""A 2.5-D height map of the episode built from depth frames, and path planning on it.

The navigator (:mod:`mrsteve.control.navigation`) sees what VPT-Nav sees: the pose and the
first-person frame (here its depth and semantic images). Every step it projects each pixel's hit
point into the world with the pose and the renderer's pinhole camera
(:func:`mrsteve.world.render.camera_rays`: vertical field of view, rays through pixel centres) and
records per ground column ``(x, z)``:

- ``ground``: the top of the highest solid block seen in the column (the feet level of a player
  standing on it). Terrain has no overhangs, so a block seen anywhere in a column stands on solid
  ground; tree trunks and house walls make their columns tall, hence not walkable;
- ``water``: the column's top is water (swimmable);
- ``leaves``: a bit mask of the leaf blocks seen at each height ``y < 64``. Tree crowns are not
  ground: the player walks under a crown whose lowest leaves are two or more blocks above the
  ground, and not through one that hangs lower.

Plants, mobs and the sky are ignored. A column never seen is *unknown* and counts as walkable
(optimistic planning). :func:`walk_levels` turns these into one walking level per column, and
:func:`find_path` plans on the levels with A* by the game's rules (:func:`can_step`): a step up of
at most one block is climbable with a jump, a drop of any height is fine, water is swimmable at an
extra cost and can be left only where the bank is level with its surface.
:meth:`HeightMap.from_blocks` builds the same map from a world's true blocks, for evaluators and
tests.

Cells are indexed ``[ix, iz]``: cell ``(ix, iz)`` covers ``[ox + ix, ox + ix + 1) x [oz + iz,
oz + iz + 1)`` on the ground plane, ``(ox, oz)`` being :attr:`HeightMap.origin` (as in
:class:`~mrsteve.control.visitation.VisitationMap`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from mrsteve.control.visitation import padding_to_cover
from mrsteve.world.content import Content, load_content
from mrsteve.world.physics import EYE_HEIGHT
from mrsteve.world.render import camera_rays

UNKNOWN = -1
"""Walking level of a column never seen."""
BLOCKED = np.iinfo(np.int16).max
"""Walking level of a column nobody can stand in (a crown hanging into the head room)."""
SWIM_EXIT_STEP = 0
"""Highest bank, in blocks above the water surface, a swimmer climbs out onto. As in Minecraft,
the swimmer's lift at a bank does not clear a full block, so only banks level with the surface
are exits (measured in the embedded world's physics)."""
MAX_HEIGHT = 64
"""Heights the leaf bit masks hold (``uint64``); the embedded world is 64 blocks high."""

IGNORED, TERRAIN, WATER, LEAVES = 0, 1, 2, 3
"""What a semantic class (or block id) means for the map."""

CANOPY_BLOCKS = ("oak_leaves",)
"""Solid blocks that hang in the air (tree crowns): recorded per height, not as ground."""

_HIT_INSET = 1e-3
"""A hit point is pushed this far along its ray to land inside the block it hit."""


@dataclass(frozen=True)
class HeightMapConfig:
    """Configuration of :class:`HeightMap`."""

    size: int = 160
    """Columns per side of the initial map, centred on where it starts (a 100 x 100 map fits)."""
    growth: int = 64
    """Columns added to a side when the agent or a goal comes near the map's edge."""
    margin: float = 24.0
    """Blocks kept on the map around the agent and the goal."""
    max_range: float = 48.0
    """Hits farther than this (blocks along the ray) are ignored."""
    fov_deg: float = 70.0
    """Vertical field of view of the camera (the environment's)."""

    def __post_init__(self) -> None:
        if self.size < 8 or self.growth < 1 or not self.margin >= 0 or not self.max_range > 0:
            raise ValueError(
                f"need size >= 8, growth >= 1, margin >= 0 and max_range > 0, got {self}"
            )
        if not 0 < self.fov_deg < 180:
            raise ValueError(f"fov_deg must be in (0, 180), got {self.fov_deg}")


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


def surface_kinds(content: Content) -> tuple[np.ndarray, np.ndarray]:
    """``(by_semantic, by_block)``: ``uint8`` tables of :data:`TERRAIN` / :data:`WATER` /
    :data:`LEAVES` / :data:`IGNORED` per semantic class and per block id."""
    by_block = np.zeros(len(content.blocks), dtype=np.uint8)
    for block in content.blocks:
        if block.shape == "liquid":
            by_block[block.id] = WATER
        elif block.name in CANOPY_BLOCKS:
            by_block[block.id] = LEAVES
        elif block.solid:
            by_block[block.id] = TERRAIN
    by_semantic = np.zeros(len(content.semantic_classes), dtype=np.uint8)
    by_semantic[content.block_semantic] = by_block  # mobs and the sky stay IGNORED
    by_semantic[content.semantic_id("sky")] = IGNORED
    return by_semantic, by_block


class HeightMap:
    """What the agent has seen of the ground, per column (module docstring); grows as needed."""

    def __init__(
        self,
        centre: tuple[float, float] = (0.0, 0.0),
        config: HeightMapConfig | None = None,
        content: Content | None = None,
    ) -> None:
        self.config = config or HeightMapConfig()
        content = content if content is not None else load_content()
        self._kinds, self._block_kinds = surface_kinds(content)
        size = self.config.size
        self._origin = (math.floor(centre[0]) - size // 2, math.floor(centre[1]) - size // 2)
        self._allocate((size, size))
        self._rays: np.ndarray | None = None

    def _allocate(self, shape: tuple[int, int]) -> None:
        self.ground = np.full(shape, UNKNOWN, dtype=np.int16)
        """``int16[nx, nz]``: top of the highest solid block seen per column; -1 unknown."""
        self.water = np.zeros(shape, dtype=np.bool_)
        """``bool[nx, nz]``: the column's top is water."""
        self.leaves = np.zeros(shape, dtype=np.uint64)
        """``uint64[nx, nz]``: bit ``y`` set when a leaf block was seen at height ``y``."""
        self.penalty = np.zeros(shape, dtype=np.float32)
        """``float32[nx, nz]``: extra cost a planner adds for entering a column (the navigator
        raises it where it got stuck)."""

    @classmethod
    def from_blocks(cls, blocks: np.ndarray, content: Content | None = None) -> HeightMap:
        """The map of a whole world seen at once (``blocks[x, y, z]``; cell ``(i, k)`` is column
        ``(i, k)``): the ground truth the evaluator plans shortest paths on."""
        if not isinstance(blocks, np.ndarray) or blocks.dtype != np.uint8 or blocks.ndim != 3:
            got = f"{getattr(blocks, 'dtype', type(blocks))}{getattr(blocks, 'shape', '')}"
            raise ValueError(f"blocks must be a uint8[X, Y, Z] array, got {got}")
        sx, _, sz = blocks.shape
        heightmap = cls((0.0, 0.0), HeightMapConfig(size=8), content)
        heightmap._origin = (0, 0)
        heightmap._allocate((sx, sz))
        _columns_from_blocks(blocks, heightmap._block_kinds, heightmap.ground, heightmap.water,
                             heightmap.leaves)
        return heightmap

    @property
    def origin(self) -> tuple[int, int]:
        """Ground-plane position ``(x, z)`` of the low corner of cell ``(0, 0)``."""
        return self._origin

    def cell(self, x: float, z: float) -> tuple[int, int]:
        """Index of the cell holding ``(x, z)`` (outside the arrays when off the map)."""
        return math.floor(x) - self._origin[0], math.floor(z) - self._origin[1]

    def inside(self, i: int, k: int) -> bool:
        """Whether cell ``(i, k)`` is on the map."""
        nx, nz = self.ground.shape
        return 0 <= i < nx and 0 <= k < nz

    def integrate(self, obs: dict[str, np.ndarray]) -> None:
        """Record the blocks hit by the pixels of one observation (``depth``, ``semantic``,
        ``pose``) and the column the player stands on."""
        pose = obs["pose"]
        x, y, z, yaw, pitch = (float(v) for v in pose[:5])
        self.cover(x, z)
        depth, semantic = obs["depth"], obs["semantic"]
        if self._rays is None or self._rays.shape[0] != depth.size:
            self._rays = camera_rays(depth.shape[0], depth.shape[1], self.config.fov_deg)
        ox, oz = self._origin
        _integrate_frame(
            self.ground, self.water, self.leaves, ox, oz, depth, semantic, self._kinds, self._rays,
            x, y + EYE_HEIGHT, z, yaw, pitch, self.config.max_range,
        )  # fmt: skip
        if abs(y - round(y)) < 1e-3:  # standing: the column under the feet holds the player
            i, k = self.cell(x, z)
            if self.ground[i, k] == UNKNOWN:
                self.ground[i, k] = round(y)

    def cover(self, x: float, z: float) -> None:
        """Grow the map so that ``margin`` blocks around ``(x, z)`` lie on it."""
        pad = padding_to_cover(self._origin, self.ground.shape, x, z, self.config.margin,
                               self.config.growth)
        if pad is None:
            return
        self.ground = np.pad(self.ground, pad, constant_values=UNKNOWN)
        self.water = np.pad(self.water, pad)
        self.leaves = np.pad(self.leaves, pad)
        self.penalty = np.pad(self.penalty, pad)
        self._origin = (self._origin[0] - pad[0][0], self._origin[1] - pad[1][0])

    def levels(self) -> np.ndarray:
        """``int16[nx, nz]`` walking level of every column (:func:`walk_levels`)."""
        return walk_levels(self.ground, self.leaves)

    def path(
        self,
        start: tuple[float, float],
        goal: tuple[float, float],
        radius: float,
        costs: PathCosts = PathCosts(),
        *,
        allow_water: bool = True,
        smooth: int = 32,
    ) -> tuple[np.ndarray, bool]:
        """Plan from ``start`` toward the disc of ``radius`` around ``goal`` (:func:`find_path`);
        returns ``(waypoints float[n, 2] of (x, z), reaches_goal)``."""
        self.cover(*goal)
        return find_path(
            self.levels(), self.water, self.penalty, self._origin, start, goal, radius, costs,
            allow_water=allow_water, smooth=smooth,
        )  # fmt: skip


@nb.njit(cache=True)
def _integrate_frame(ground, water, leaves, ox, oz, depth, semantic, kinds, rays, ex, ey, ez,
                     yaw_deg, pitch_deg, max_range):
    """Project every pixel's hit into its block and update that block's column."""
    yaw, pitch = math.radians(yaw_deg), math.radians(pitch_deg)
    cp = math.cos(pitch)
    fx, fy, fz = -math.sin(yaw) * cp, -math.sin(pitch), math.cos(yaw) * cp
    rx, ry, rz = -math.cos(yaw), 0.0, -math.sin(yaw)  # the renderer's camera frame
    ux, uy, uz = ry * fz - rz * fy, rz * fx - rx * fz, rx * fy - ry * fx
    nx, nz = ground.shape
    height, width = depth.shape
    for r in range(height):
        for c in range(width):
            t = depth[r, c]
            if not t < max_range:
                continue
            kind = kinds[semantic[r, c]]
            if kind == IGNORED:
                continue
            p = r * width + c
            cx, cy, cz = rays[p, 0], rays[p, 1], rays[p, 2]
            dx = rx * cx + ux * cy + fx * cz
            dy = ry * cx + uy * cy + fy * cz
            dz = rz * cx + uz * cy + fz * cz
            t += _HIT_INSET
            i = math.floor(ex + dx * t) - ox
            j = math.floor(ey + dy * t)
            k = math.floor(ez + dz * t) - oz
            if not (0 <= i < nx and 0 <= k < nz and 0 <= j < MAX_HEIGHT):
                continue
            _record(ground, water, leaves, i, j, k, kind)


@nb.njit(cache=True)
def _record(ground, water, leaves, i, j, k, kind):
    """Record block ``(i, j, k)`` of ``kind`` (see the module docstring)."""
    if kind == LEAVES:
        leaves[i, k] |= np.uint64(1) << np.uint64(j)
    elif j + 1 > ground[i, k]:
        ground[i, k] = j + 1
        water[i, k] = kind == WATER
    elif j + 1 == ground[i, k] and kind == TERRAIN:
        water[i, k] = False


@nb.njit(cache=True)
def _columns_from_blocks(blocks, block_kinds, ground, water, leaves):
    sx, sy, sz = blocks.shape
    for i in range(sx):
        for k in range(sz):
            for j in range(min(sy, MAX_HEIGHT)):
                kind = block_kinds[blocks[i, j, k]]
                if kind != IGNORED:
                    _record(ground, water, leaves, i, j, k, kind)


@nb.njit(cache=True)
def walk_levels(ground, leaves):
    """``int16[nx, nz]`` walking level per column: the ground of a known column, :data:`BLOCKED`
    when leaves hang in its two blocks of head room, :data:`UNKNOWN` when never seen. A column
    with leaves seen but its ground hidden under them takes its lowest known neighbour's ground."""
    nx, nz = ground.shape
    levels = np.empty((nx, nz), dtype=np.int16)
    for i in range(nx):
        for k in range(nz):
            g = ground[i, k]
            bits = leaves[i, k]
            if g == UNKNOWN and bits != 0:
                for di in range(-1, 2):
                    for dk in range(-1, 2):
                        a, b = i + di, k + dk
                        if (0 <= a < nx and 0 <= b < nz and ground[a, b] != UNKNOWN
                                and (g == UNKNOWN or ground[a, b] < g)):
                            g = ground[a, b]
            if g == UNKNOWN:
                levels[i, k] = UNKNOWN
            elif g < MAX_HEIGHT - 1 and bits & (np.uint64(3) << np.uint64(g)) != 0:
                levels[i, k] = BLOCKED
            else:
                levels[i, k] = g if ground[i, k] != UNKNOWN else UNKNOWN
    return levels


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
            if near_wall > 0.0 and _near_wall(levels, water, a, b):
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
