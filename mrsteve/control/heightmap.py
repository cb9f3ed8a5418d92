"""A 2.5-D height map of the episode built from depth frames.

The navigator (:mod:`mrsteve.control.navigation`) sees what VPT-Nav sees: the pose and the
first-person frame (here its depth and semantic images). Every step it projects each pixel's hit
point into the world with the pose and the environment's camera
(:class:`mrsteve.world.camera.Camera`: vertical field of view, rays through pixel centres) and
records per ground column ``(x, z)``:

- ``ground``: the top of the highest solid block seen in the column (the feet level of a player
  standing on it). Terrain has no overhangs, so a block seen anywhere in a column stands on solid
  ground; tree trunks and house walls make their columns tall, hence not walkable;
- ``water``: the column's top is water (swimmable);
- ``leaves``: a bit mask of the leaf blocks seen at each height ``y < 64``. Tree crowns are not
  ground: the player walks under a crown whose lowest leaves are two or more blocks above the
  ground, and not through one that hangs lower.

Plants, mobs and the sky are ignored. A column never seen is *unknown* and counts as walkable
(optimistic planning). :func:`walk_levels` turns these into one walking level per column, which
:mod:`mrsteve.control.path_planning` plans on. :meth:`HeightMap.from_blocks` builds the same map from a
world's true blocks, for evaluators and tests.

Cells are indexed ``[ix, iz]``: cell ``(ix, iz)`` covers ``[ox + ix, ox + ix + 1) x [oz + iz,
oz + iz + 1)`` on the ground plane, ``(ox, oz)`` being :attr:`HeightMap.origin` (as in
:class:`~mrsteve.control.visitation.VisitationMap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from mrsteve.control.visitation import padding_to_cover
from mrsteve.visibility import VISIBILITY
from mrsteve.world.camera import EYE_HEIGHT, Camera, camera_basis
from mrsteve.world.content import Content, load_content

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
    max_range: float = VISIBILITY.max_distance
    """Hits farther than this (blocks along the ray) are ignored (the shared visibility rule,
    :mod:`mrsteve.visibility`)."""

    def __post_init__(self) -> None:
        if self.size < 8 or self.growth < 1 or not self.margin >= 0 or not self.max_range > 0:
            raise ValueError(
                f"need size >= 8, growth >= 1, margin >= 0 and max_range > 0, got {self}"
            )


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
        *,
        camera: Camera | None = None,
    ) -> None:
        self.config = config or HeightMapConfig()
        self.camera = camera
        """The camera the frames come from (needed by :meth:`integrate`)."""
        content = content if content is not None else load_content()
        self._kinds, self._block_kinds = surface_kinds(content)
        size = self.config.size
        self._origin = (math.floor(centre[0]) - size // 2, math.floor(centre[1]) - size // 2)
        self._allocate((size, size))

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
        self._levels: np.ndarray | None = None  # walk_levels(ground, leaves) until they change

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
        if self.camera is None or self.camera.shape != depth.shape:
            raise ValueError(f"integrate needs the camera of {depth.shape} frames, got "
                             f"{self.camera}")
        ox, oz = self._origin
        changed = _integrate_frame(
            self.ground, self.water, self.leaves, ox, oz, depth, semantic, self._kinds,
            self.camera.rays,
            x, y + EYE_HEIGHT, z, yaw, pitch, self.config.max_range,
        )  # fmt: skip
        if abs(y - round(y)) < 1e-3:  # standing: the column under the feet holds the player
            i, k = self.cell(x, z)
            if self.ground[i, k] == UNKNOWN:
                self.ground[i, k] = round(y)
                changed = True
        if changed:
            self._levels = None

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
        self._levels = None
        self._origin = (self._origin[0] - pad[0][0], self._origin[1] - pad[1][0])

    def levels(self) -> np.ndarray:
        """``int16[nx, nz]`` walking level of every column (:func:`walk_levels`; read-only,
        computed again only after :meth:`integrate` or :meth:`cover` changed the map: the
        navigator plans every few steps, and most steps add nothing new to a map already seen)."""
        if self._levels is None:
            self._levels = walk_levels(self.ground, self.leaves)
            self._levels.flags.writeable = False
        return self._levels


@nb.njit(cache=True)
def _integrate_frame(ground, water, leaves, ox, oz, depth, semantic, kinds, rays, ex, ey, ez,
                     yaw_deg, pitch_deg, max_range):
    """Project every pixel's hit into its block and update that block's column. Neighbouring
    pixels mostly hit the same block; :func:`_record` gives the same map however often a block is
    recorded in a row, so a pixel that repeats the previous pixel's block and kind is skipped
    (3x faster: the record's data-dependent branches were most of the cost). Returns whether
    any column changed."""
    (rx, ry, rz), (ux, uy, uz), (fx, fy, fz) = camera_basis(yaw_deg, pitch_deg)
    nx, nz = ground.shape
    height, width = depth.shape
    last_i = last_j = last_k = last_kind = -1
    changed = False
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
            if i == last_i and j == last_j and k == last_k and kind == last_kind:
                continue
            last_i, last_j, last_k, last_kind = i, j, k, kind
            if not (0 <= i < nx and 0 <= k < nz and 0 <= j < MAX_HEIGHT):
                continue
            changed |= _record(ground, water, leaves, i, j, k, kind)
    return changed


@nb.njit(cache=True)
def _record(ground, water, leaves, i, j, k, kind):
    """Record block ``(i, j, k)`` of ``kind`` (see the module docstring); returns whether the
    column's ground or leaves changed (what :func:`walk_levels` reads)."""
    if kind == LEAVES:
        bit = np.uint64(1) << np.uint64(j)
        if leaves[i, k] & bit:
            return False
        leaves[i, k] |= bit
        return True
    if j + 1 > ground[i, k]:
        ground[i, k] = j + 1
        water[i, k] = kind == WATER
        return True
    if j + 1 == ground[i, k] and kind == TERRAIN:
        water[i, k] = False
    return False


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
