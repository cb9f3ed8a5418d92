"""What world recipes are made of: a building :class:`Site`, smooth noise, and terrain features.

A world is built in three passes over a :class:`Site`, all vectorised over the map:

1. ``shape``: every feature edits the ground's *columns*: elevation (blocks above
   :data:`GROUND_Y`), the top block and the block under it, and water;
2. ``Site.voxelise`` turns the columns into ``blocks[x, y, z]`` in one numpy pass;
3. ``populate``: every feature puts things on the ground: trees, plants, houses, mobs, scheduled
   events, landmarks.

Each feature draws from its own generator, so appending a feature to a recipe leaves everything
the other features built unchanged (``map3`` is ``map2`` plus a pond).

Conventions: ``blocks[x, y, z]`` with y up; the grid includes the map's wall ring (columns 0 and
``size - 1``). A column's *level* is the y of the first air block above its ground: where a
player's feet stand. Positions ``at = (x, z)`` name a column; its centre is ``(x + 0.5, z + 0.5)``.
Directions are those of Minecraft's maps and the top-down image: +x is east (right) and -z is
north (up), so "upper-right" means large x and small z.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import ClassVar, get_args

import numpy as np

from mrsteve.naming import unknown_name
from mrsteve.world.content import Mob, load_content
from mrsteve.world.layout import EventKind, MobSpawn, Pasture, ScheduledEvent, WorldLayout

WORLD_HEIGHT = 64
"""Blocks along y in every world."""
GROUND_Y = 16
"""Level of flat ground: feet stand at y = 16, the top ground block is at y = 15."""
SOIL_DEPTH = 3
"""Blocks of the *under* block (dirt, sand, ...) below the top block before stone begins."""
WALL_CLEARANCE = 4
"""The map walls rise this many blocks above the highest block inside: standing on anything and
jumping cannot clear them, and the sky stays visible above them."""
SLOPE = 0.8
"""Rise per block of the slopes carved around ponds, rivers and house pads (below 1, so every
step on them is one block high and can be jumped)."""
MAX_STEP = 0.95
"""Largest rise between neighbouring columns of smooth reliefs (hills, mountains, ridges)."""
SPAWN_CLEARANCE = 12.0
"""Randomly placed ponds, herds and outcrops keep at least this far from the spawn."""

Area = tuple[int, int, int, int]
"""A box of columns ``(x0, z0, x1, z1)``, half-open: ``x0 <= x < x1`` and ``z0 <= z < z1``."""
HERD_TRIES = 20
"""Herd centres drawn before giving up when the herd's spots do not fit around one."""


def value_noise(
    rng: np.random.Generator, shape: tuple[int, int], scale: float, octaves: int = 1
) -> np.ndarray:
    """Smooth random field in [-1, 1]: value noise on a lattice ``scale`` blocks apart.

    Each further octave halves the lattice spacing and the amplitude.
    """
    total = np.zeros(shape)
    weight = 0.0
    for octave in range(octaves):
        amplitude = 0.5**octave
        total += amplitude * _lattice_noise(rng, shape, scale / 2**octave)
        weight += amplitude
    return total / weight


def _lattice_noise(rng, shape, spacing):
    def axis(n):
        u = (np.arange(n) + 0.5) / spacing
        i = np.floor(u).astype(np.intp)
        t = u - i
        return i, t * t * (3.0 - 2.0 * t)  # smoothstep: no creases at lattice lines

    (ix, tx), (iz, tz) = axis(shape[0]), axis(shape[1])
    lattice = rng.uniform(-1.0, 1.0, (ix[-1] + 2, iz[-1] + 2))
    tx, tz = tx[:, None], tz[None, :]
    near = lattice[np.ix_(ix, iz)] * (1 - tx) + lattice[np.ix_(ix + 1, iz)] * tx
    far = lattice[np.ix_(ix, iz + 1)] * (1 - tx) + lattice[np.ix_(ix + 1, iz + 1)] * tx
    return near * (1 - tz) + far * tz


def cap_slope(relief: np.ndarray, max_step: float = MAX_STEP) -> np.ndarray:
    """The highest field at or below ``relief`` whose neighbouring columns differ by at most
    ``max_step``: gentle parts stay as they are, too-steep peaks are cut down to cones.

    With ``max_step < 1`` the floored heights differ by at most one block between neighbours, so
    the terrain can be climbed with jumps (Minecraft's 1.25-block jump).
    """
    capped = relief.copy()
    while True:
        before = capped.copy()
        for view in (capped, capped.T):  # along x, then along z (``.T`` writes through)
            view[1:] = np.minimum(view[1:], view[:-1] + max_step)
            view[:-1] = np.minimum(view[:-1], view[1:] + max_step)
        if np.array_equal(capped, before):
            return capped


class Site:
    """A world under construction: ground columns, then voxels, and what stands on them."""

    def __init__(self, size: tuple[int, int], spawn: tuple[int, int], spawn_yaw: float = 0.0):
        self.content = load_content()
        self.size = size
        self.spawn = spawn
        self.spawn_yaw = spawn_yaw
        self.elevation = np.zeros(size)
        """Ground height above :data:`GROUND_Y` in blocks (floored when voxelised)."""
        self.top = np.full(size, self.block_id("grass_block"), np.uint8)
        self.under = np.full(size, self.block_id("dirt"), np.uint8)
        self.water = np.zeros(size, np.int16)
        """Level of the water surface (first air above it); 0 where the column is dry."""
        self.occupied = np.zeros(size, np.bool_)
        """Columns taken by a tree trunk or a house: no more trees, plants or mobs there."""
        self.x, self.z = np.meshgrid(
            np.arange(size[0]) + 0.5, np.arange(size[1]) + 0.5, indexing="ij"
        )
        self.level: np.ndarray | None = None
        self.blocks: np.ndarray | None = None
        self.mobs: list[MobSpawn] = []
        self.pastures: list[Pasture] = []
        self.events: list[ScheduledEvent] = []
        self.landmarks: dict[str, tuple[float, float]] = {}
        self.placed: dict[int, tuple[int, int]] = {}
        """Columns features drew in ``shape`` to build on in ``populate``, by ``id`` of the
        feature (a randomly placed house)."""

    def block_id(self, name: str) -> int:
        return self.content.block(name).id

    # -- geometry ---------------------------------------------------------------------------------
    def distance(self, at: tuple[float, float]) -> np.ndarray:
        """Distance of every column centre to the centre of column ``at``."""
        return np.hypot(self.x - (at[0] + 0.5), self.z - (at[1] + 0.5))

    def inside(self, margin: float = 0.0) -> np.ndarray:
        """Columns inside the wall ring, at least ``margin`` columns away from it."""
        low = 1 + margin
        return (
            (self.x >= low)
            & (self.x < self.size[0] - low)
            & (self.z >= low)
            & (self.z < self.size[1] - low)
        )

    def within(self, area: Area | None) -> np.ndarray:
        """Columns in ``area`` (all columns when ``None``)."""
        if area is None:
            return np.ones(self.size, np.bool_)
        x0, z0, x1, z1 = area
        return (self.x >= x0) & (self.x < x1) & (self.z >= z0) & (self.z < z1)

    def away_from_spawn(self, clearance: float) -> np.ndarray:
        return self.distance(self.spawn) >= clearance

    @property
    def dry(self) -> np.ndarray:
        return self.water == 0

    def ground(self, area: Area | None = None, clearance: float = 3.0) -> np.ndarray:
        """Free dry land inside the walls (in ``area``, ``clearance`` away from the spawn)."""
        return (
            self.dry
            & ~self.occupied
            & self.inside()
            & self.within(area)
            & self.away_from_spawn(clearance)
        )

    # -- columns ----------------------------------------------------------------------------------
    def raise_ground(self, relief: np.ndarray, block: str | None = None) -> None:
        """Raise the ground to ``relief`` where that is higher; columns raised a block or more
        get ``block`` on top and below (a stone mountain, a sand ridge)."""
        raised = (relief >= 1.0) & (relief > self.elevation)
        self.elevation = np.maximum(self.elevation, relief)
        if block is not None:
            self.paint(raised, block, block)

    def paint(self, mask: np.ndarray, top: str, under: str | None = None) -> None:
        self.top[mask] = self.block_id(top)
        if under is not None:
            self.under[mask] = self.block_id(under)

    def pick(self, rng: np.random.Generator, mask: np.ndarray, what: str) -> tuple[int, int]:
        """A random column of ``mask``."""
        cells = np.argwhere(mask)
        if len(cells) == 0:
            raise ValueError(f"no room for {what} on this map")
        x, z = cells[rng.integers(len(cells))]
        return int(x), int(z)

    def clear_square(self, blocked: np.ndarray, half: int) -> np.ndarray:
        """Columns whose square of half-width ``half`` (cut off by the map's edge) holds no
        ``blocked`` column."""
        padded = np.pad(blocked, half, constant_values=False)
        window = np.lib.stride_tricks.sliding_window_view(padded, (2 * half + 1, 2 * half + 1))
        return ~window.any(axis=(2, 3))

    def scatter(
        self, rng: np.random.Generator, mask: np.ndarray, count: int, spacing: float, what: str
    ) -> np.ndarray:
        """``count`` random columns of ``mask`` at least ``spacing`` apart, as ``int[count, 2]``."""
        cells = np.argwhere(mask)[rng.permutation(int(mask.sum()))]
        chosen = np.empty((count, 2), np.intp)
        n = 0
        for cell in cells:
            if n and (np.square(chosen[:n] - cell).sum(axis=1) < spacing**2).any():
                continue
            chosen[n] = cell
            n += 1
            if n == count:
                return chosen
        raise ValueError(
            f"only {n} of {count} {what} fit {spacing} blocks apart in the space given"
        )

    # -- voxels -----------------------------------------------------------------------------------
    def voxelise(self) -> None:
        """Columns to ``blocks[x, y, z]``: stone, ``SOIL_DEPTH`` under blocks, the top, water."""
        level = GROUND_Y + np.floor(self.elevation).astype(np.int16)
        self.level = np.clip(level, SOIL_DEPTH + 2, WORLD_HEIGHT - 8)
        y = np.arange(WORLD_HEIGHT, dtype=np.int16)[None, :, None]
        level = self.level[:, None, :]
        water = np.where(y < self.water[:, None, :], self.block_id("water"), 0).astype(np.uint8)
        blocks = np.where(
            y < level - 1 - SOIL_DEPTH,
            self.block_id("stone"),
            np.where(y < level - 1, self.under[:, None, :], water),
        )
        ix, iz = np.indices(self.size)
        blocks[ix, self.level - 1, iz] = self.top
        self.blocks = blocks

    def grow_tree(self, x: int, z: int, trunk: int) -> None:
        """An oak: a ``trunk``-block log with a leaf crown (leaves only fill air)."""
        level = int(self.level[x, z])
        tree = _tree_template(trunk, self.block_id("oak_log"), self.block_id("oak_leaves"))
        region = self.blocks[x - 2 : x + 3, level : level + trunk + 1, z - 2 : z + 3]
        fill = (tree == self.block_id("oak_log")) | ((tree != 0) & (region == 0))
        region[fill] = tree[fill]
        self.occupied[x, z] = True

    def plant(self, mask: np.ndarray, block: str, heights: np.ndarray) -> None:
        """Stack ``heights[x, z]`` blocks of ``block`` on the columns of ``mask`` free above."""
        xs, zs = np.nonzero(mask)
        ys = self.level[xs, zs]
        free = self.blocks[xs, ys, zs] == 0
        xs, zs, ys, heights = xs[free], zs[free], ys[free], heights[xs[free], zs[free]]
        for dy in range(int(heights.max(initial=0))):
            tall = heights > dy
            self.blocks[xs[tall], ys[tall] + dy, zs[tall]] = self.block_id(block)

    def build_house(self, x: int, z: int, door_toward: tuple[float, float]) -> None:
        """The house of :func:`_house_template` centred on column ``(x, z)``, its door facing
        ``door_toward``; its floor replaces the ground's top block."""
        house = _house_template(*(self.block_id(b) for b in ("planks", "cobblestone", "glass")))
        dx, dz = door_toward[0] - (x + 0.5), door_toward[1] - (z + 0.5)
        if abs(dx) > abs(dz):  # the template's door faces -z
            house = house.transpose(2, 1, 0)[::-1] if dx > 0 else house.transpose(2, 1, 0)
        elif dz > 0:
            house = house[:, :, ::-1]
        half = house.shape[0] // 2
        level = int(self.level[x, z])
        self.blocks[
            x - half : x + half + 1, level - 1 : level - 1 + house.shape[1], z - half : z + half + 1
        ] = house

    def finish(self, name: str) -> WorldLayout:
        """Close the map with its walls and hand over the :class:`WorldLayout`."""
        inside = self.blocks[1:-1, :, 1:-1]
        highest = int(np.nonzero(inside.any(axis=(0, 2)))[0].max())
        top = min(WORLD_HEIGHT, highest + 1 + WALL_CLEARANCE)
        wall = self.block_id("wall")
        self.blocks[[0, -1], :top, :] = wall
        self.blocks[:, :top, [0, -1]] = wall
        x, z = self.spawn
        level = int(self.level[x, z])
        if not self.dry[x, z] or self.occupied[x, z]:
            raise ValueError(f"world {name!r}: the spawn column {self.spawn} is not free dry land")
        self.blocks[x, level : level + 2, z] = 0  # head room: no grass or leaves in the face
        return WorldLayout(
            name=name,
            blocks=self.blocks,
            spawn=(x + 0.5, float(level), z + 0.5),
            spawn_yaw=self.spawn_yaw,
            mobs=tuple(self.mobs),
            events=tuple(self.events),
            landmarks=MappingProxyType(dict(self.landmarks)),
            pastures=tuple(self.pastures),
        )


@cache
def _tree_template(trunk: int, log: int, leaves: int) -> np.ndarray:
    """``uint8[5, trunk + 1, 5]``: a Minecraft oak, the trunk's foot at ``[2, 0, 2]``."""
    tree = np.zeros((5, trunk + 1, 5), np.uint8)
    tree[:, trunk - 3 : trunk - 1, :] = leaves  # two wide layers ...
    tree[[0, 0, -1, -1], trunk - 2, [0, -1, 0, -1]] = 0  # ... the upper one without corners
    tree[1:4, trunk - 1 :, 1:4] = leaves  # two narrow layers, the top one a plus
    tree[[1, 1, 3, 3], trunk, [1, 3, 1, 3]] = 0
    tree[2, :trunk, 2] = log
    tree.setflags(write=False)
    return tree


@cache
def _house_template(planks: int, cobblestone: int, glass: int) -> np.ndarray:
    """``uint8[7, 7, 7]``: a 7 x 7 planks house on a cobblestone floor with cobblestone corners,
    glass windows, a two-high door in the middle of its -z wall and a stepped roof."""
    house = np.zeros((7, 7, 7), np.uint8)
    house[:, 0, :] = cobblestone
    house[:, 1:5, :] = planks
    house[1:6, 1:5, 1:6] = 0
    house[[0, 0, 6, 6], 1:5, [0, 6, 0, 6]] = cobblestone
    house[3, 1:3, 0] = 0  # door
    house[3, 2:4, 6] = glass
    house[[0, 6], 2:4, 3] = glass
    house[:, 5, :] = planks
    house[1:6, 6, 1:6] = planks
    house.setflags(write=False)
    return house


# -- features -------------------------------------------------------------------------------------
class Feature:
    """A piece of a world recipe. ``shape`` edits the ground's columns before voxels exist;
    ``populate`` places blocks, mobs, events and landmarks on the voxelised ground."""

    kind: ClassVar[str]

    def shape(self, site: Site, rng: np.random.Generator) -> None:
        """Edit the columns (default: nothing)."""

    def populate(self, site: Site, rng: np.random.Generator) -> None:
        """Place things on the ground (default: nothing)."""

    def _mark(self, site: Site, landmark: str | None, at: tuple[float, float]) -> None:
        if landmark is not None:
            site.landmarks[landmark] = (float(at[0]), float(at[1]))


def _check_block(name: str | None, where: str) -> None:
    if name is not None:
        try:
            load_content().block(name)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None


def _check_mob(name: str, where: str) -> Mob:
    try:
        return load_content().mob(name)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _centre(at: tuple[int, int]) -> tuple[float, float]:
    return at[0] + 0.5, at[1] + 0.5


@dataclass(frozen=True)
class Hills(Feature):
    """Rolling ground: smooth noise up to ``height`` blocks high, lumps about ``scale`` wide."""

    kind: ClassVar[str] = "hills"
    height: float
    """Highest rise above flat ground, in blocks (less where slopes had to be capped)."""
    scale: float
    """Width of one hill in blocks."""
    octaves: int = 2
    """Noise octaves: more gives rougher ground."""

    def shape(self, site, rng):
        relief = self.height * (value_noise(rng, site.size, self.scale, self.octaves) + 1) / 2
        site.raise_ground(cap_slope(relief))


@dataclass(frozen=True)
class Surface(Feature):
    """``block`` on top of the ground in patches covering ``cover`` of ``area``'s dry columns."""

    kind: ClassVar[str] = "surface"
    block: str
    """Top block of the patches."""
    cover: float = 1.0
    """Fraction of the area covered (1: all of it)."""
    scale: float = 8.0
    """Width of one patch in blocks."""
    area: Area | None = None
    """Where (default: the whole map)."""
    under: str | None = None
    """Block below the top one (default: unchanged)."""

    def __post_init__(self):
        _check_block(self.block, "surface")
        _check_block(self.under, "surface")
        if not 0 < self.cover <= 1:
            raise ValueError(f"surface: cover must be in (0, 1], got {self.cover}")

    def shape(self, site, rng):
        mask = site.within(self.area) & site.dry
        if self.cover < 1:
            noise = value_noise(rng, site.size, self.scale, octaves=2)
            mask &= noise >= np.quantile(noise[mask], 1 - self.cover)
        site.paint(mask, self.block, self.under)


@dataclass(frozen=True)
class Mountain(Feature):
    """A rough cone of ``block`` ``height`` blocks high and ``radius`` wide at its foot."""

    kind: ClassVar[str] = "mountain"
    radius: float
    """Distance from the summit to the foot, in blocks."""
    height: float
    """Height of the summit above flat ground (less where slopes had to be capped)."""
    at: tuple[int, int] | None = None
    """Column of the summit (default: a random place whose foot stays away from the spawn)."""
    block: str = "stone"
    """What the mountain is made of, from a block above flat ground up."""
    roughness: float = 0.25
    """Relative variation of the slopes' height and of the foot's distance from the top."""

    def __post_init__(self):
        _check_block(self.block, "mountain")

    def shape(self, site, rng):
        at = self.at
        if at is None:
            room = site.inside(self.radius / 2) & site.away_from_spawn(
                self.radius * (1 + self.roughness) + SPAWN_CLEARANCE
            )
            at = site.pick(rng, room, "a mountain")
        reach = self.radius * (1 + self.roughness * value_noise(rng, site.size, self.radius))
        cone = self.height * np.clip(1 - site.distance(at) / reach, 0, 1)
        rough = 1 + self.roughness * value_noise(rng, site.size, 8.0, octaves=2)
        site.raise_ground(cap_slope(cone * rough), self.block)


@dataclass(frozen=True)
class Ridge(Feature):
    """A mountain ridge of ``block`` along z at column ``x``, with an optional lower pass."""

    kind: ClassVar[str] = "ridge"
    x: int
    """Column of the crest."""
    half_width: float
    """Distance from the crest to the foot, in blocks."""
    height: float
    """Height of the crest above flat ground."""
    block: str = "sand"
    """What the ridge is made of, from a block above flat ground up."""
    roughness: float = 0.15
    """Relative height variation along the crest."""
    meander: float = 2.0
    """How far the crest winds from column ``x``, in blocks."""
    pass_z: int | None = None
    """Where along z the crest dips to ``pass_height`` (default: no pass)."""
    pass_height: float = 2.0
    """Height of the crest at the pass."""
    pass_width: float = 6.0
    """Half-length of the dip along z, in blocks."""

    def __post_init__(self):
        _check_block(self.block, "ridge")

    def shape(self, site, rng):
        course = self.x + 0.5 + self.meander * value_noise(rng, (1, site.size[1]), 24.0)
        across = np.clip(1 - np.abs(site.x - course) / self.half_width, 0, 1)
        crest = self.height * (1 + self.roughness * value_noise(rng, site.size, 16.0))
        if self.pass_z is not None:
            dip = np.exp(-np.square((site.z - (self.pass_z + 0.5)) / self.pass_width))
            crest = crest - (crest - self.pass_height) * dip
        site.raise_ground(cap_slope(crest * across), self.block)


@dataclass(frozen=True)
class Outcrops(Feature):
    """``count`` rock steps ``height`` blocks high (cliffs to climb around) at random places."""

    kind: ClassVar[str] = "outcrops"
    count: int
    height: int = 2
    """Blocks the outcrop rises at once over the ground around it (2+: a cliff)."""
    radius: float = 2.5
    block: str = "stone"

    def __post_init__(self):
        _check_block(self.block, "outcrops")

    def shape(self, site, rng):
        room = site.inside(self.radius + 1) & site.away_from_spawn(self.radius + 4)
        centres = site.scatter(rng, room, self.count, 2 * self.radius + 3, "outcrops")
        rock = np.zeros(site.size, np.bool_)
        for x, z in centres:
            rock |= site.distance((x, z)) < self.radius
        site.elevation[rock] += self.height
        site.paint(rock, self.block, self.block)


@dataclass(frozen=True)
class Pond(Feature):
    """A pond of ``radius`` in a bowl of gentle slopes.

    ``sink`` lowers its water surface (and a shore floor around it) below the land and ``rim``
    raises a ring of hills around it, so that the pond is seen only from close by (the paper's
    Map 1). Without ``at`` it goes to a random place away from the spawn.
    """

    kind: ClassVar[str] = "pond"
    radius: float
    """Radius of the water in blocks."""
    at: tuple[int, int] | None = None
    """Column of the centre (default: random)."""
    depth: int = 2
    """Water depth at the centre (1 at the edge)."""
    sink: int = 0
    """Blocks the water surface lies below flat ground (0: flush with it)."""
    rim: int = 0
    """Height of the ring of hills around the pond above flat ground."""
    shore_width: float = 1.0
    """Width of the flat shore ring at water level, in blocks."""
    shore: str | None = None
    """Top block of the shore ring (default: unchanged)."""
    bed: str = "dirt"
    """Block under the water."""
    area: Area | None = None
    """Where a randomly placed pond may go."""
    landmark: str | None = None
    """Landmark name of the pond's centre."""

    def __post_init__(self):
        _check_block(self.shore, "pond")
        _check_block(self.bed, "pond")
        if self.radius < 1 or self.depth < 1 or self.sink < 0 or self.rim < 0:
            raise ValueError("pond: radius and depth must be >= 1, sink and rim >= 0")

    def shape(self, site, rng):
        floor_radius = self.radius + self.shore_width
        at = self.at
        if at is None:
            room = (
                site.inside(floor_radius + 2)
                & site.within(self.area)
                & site.away_from_spawn(floor_radius + SPAWN_CLEARANCE)
            )
            at = site.pick(rng, room, "a pond")
        d = site.distance(at)
        crest = floor_radius + (self.sink + self.rim) / SLOPE
        slope = np.maximum(0.0, SLOPE * (d - floor_radius))
        bowl = np.minimum(site.elevation, slope - self.sink)
        site.elevation = np.maximum(bowl, self.rim - SLOPE * np.abs(d - crest))
        water = d < self.radius
        fall = np.round((self.depth - 1) * (1 - np.square(d / self.radius)))
        site.elevation[water] = (-self.sink - 1 - fall)[water]
        site.water[water] = GROUND_Y - self.sink
        site.paint(water, self.bed, self.bed)
        if self.shore is not None:
            site.paint(~water & (d < floor_radius), self.shore, self.shore)
        self._mark(site, self.landmark, _centre(at))


@dataclass(frozen=True)
class River(Feature):
    """A river along x around row ``z``: ``depth`` blocks of water one block below its banks,
    too wide to jump, so it must be swum across. In this world's physics (Minecraft's water-exit
    rule) a swimmer's lift raises the feet only about half a block, not onto a bank one block
    above the water, so every ``exit_spacing``
    blocks a shore ``exit_width`` columns wide comes down to the water's level on both sides:
    the river is crossed by finding an exit, which a navigator that only heads straight for its
    goal does not do (the paper's heuristic navigator fails on rivers)."""

    kind: ClassVar[str] = "river"
    z: int
    """Row the river follows."""
    half_width: float
    """Half the width of the water, in blocks."""
    depth: int = 3
    """Water depth in blocks."""
    meander: float = 2.0
    """How far the river winds from row ``z``, in blocks."""
    bank_width: float = 2.0
    """Width of the flat banks one block above the water, in blocks."""
    bank: str = "sand"
    """Top block of the banks."""
    bed: str = "sand"
    """Block under the water."""
    exit_spacing: int = 16
    """Blocks along the river between the starts of two exits (shores level with the water)."""
    exit_width: int = 3
    """Columns of each exit along the river."""
    landmark: str | None = None
    """Landmark name of the river's middle."""

    def __post_init__(self):
        _check_block(self.bank, "river")
        _check_block(self.bed, "river")
        if not 0 < self.exit_width < self.exit_spacing:
            raise ValueError(f"river: need 0 < exit_width < exit_spacing, got {self.exit_width}, "
                             f"{self.exit_spacing}")

    def shape(self, site, rng):
        course = self.z + 0.5 + self.meander * value_noise(rng, (site.size[0], 1), 24.0)
        d = np.abs(site.z - course)
        banks = self.half_width + self.bank_width
        site.elevation = np.minimum(site.elevation, np.maximum(0.0, SLOPE * (d - banks)))
        water = d < self.half_width
        site.elevation[water] = -1 - self.depth
        site.water[water] = GROUND_Y - 1
        site.paint(water, self.bed, self.bed)
        site.paint(~water & (d < banks), self.bank)
        offset = int(rng.integers(self.exit_spacing))
        exits = ~water & (d < banks) & ((site.x + offset) % self.exit_spacing < self.exit_width)
        site.elevation[exits] = -1.0  # ground top level with the water surface
        middle = site.size[0] // 2
        self._mark(site, self.landmark, (middle + 0.5, float(course[middle, 0])))


@dataclass(frozen=True)
class House(Feature):
    """A 7 x 7 planks house on a flattened pad, its door toward ``door_toward`` (default: the
    spawn). Two houses are identical block for block."""

    kind: ClassVar[str] = "house"
    at: tuple[int, int] | None = None
    """Column of the house's centre (default: a random place on dry land, its pad and a margin
    around it clear of water and of other houses and trees, away from the spawn)."""
    door_toward: tuple[int, int] | None = None
    """A column the door faces (default: the spawn)."""
    landmark: str | None = None
    """Landmark name of the house's centre."""

    PAD: ClassVar[int] = 6
    """Half-width of the flat, tree-free square around the house."""
    MARGIN: ClassVar[int] = 6
    """A randomly placed house's pad keeps this many columns from water and occupied columns
    (the pad's slopes reach about ``PAD / SLOPE`` blocks out)."""

    def shape(self, site, rng):
        if self.at is None:
            room = (
                site.clear_square(~site.dry | site.occupied, self.PAD + self.MARGIN)
                & site.inside(self.PAD + 1)
                & site.away_from_spawn(self.PAD + SPAWN_CLEARANCE)
            )
            site.placed[id(self)] = site.pick(rng, room, "a house")
        x, z = self._where(site)
        pad = np.maximum(np.abs(site.x - (x + 0.5)), np.abs(site.z - (z + 0.5))) - 0.5
        target = np.floor(site.elevation[x, z])
        outside = np.maximum(pad - self.PAD, 0)
        site.elevation = target + np.clip(
            site.elevation - target, -SLOPE * outside, SLOPE * outside
        )
        site.occupied |= pad <= self.PAD
        site.paint(pad <= self.PAD, "grass_block")

    def populate(self, site, rng):
        toward = site.spawn if self.door_toward is None else self.door_toward
        site.build_house(*self._where(site), _centre(toward))
        self._mark(site, self.landmark, _centre(self._where(site)))

    def _where(self, site: Site) -> tuple[int, int]:
        return self.at if self.at is not None else site.placed[id(self)]


@dataclass(frozen=True)
class Forest(Feature):
    """``count`` oak trees ``spacing`` apart in ``area`` (default: anywhere)."""

    kind: ClassVar[str] = "forest"
    count: int
    area: Area | None = None
    """Where the trunks stand (default: anywhere inside the walls)."""
    spacing: float = 4.0
    """Least distance between two trunks, in blocks."""
    clearance: float = 3.0
    """Trees keep at least this far from the spawn."""
    trunk: tuple[int, int] = (4, 6)
    """Shortest and tallest trunk in blocks."""
    landmark: str | None = None
    """Landmark name of the trees' mean position."""

    def populate(self, site, rng):
        room = (
            site.ground(self.area, self.clearance)
            & site.inside(2)
            & np.isin(site.top, [site.block_id("grass_block"), site.block_id("dirt")])
            & (site.level + self.trunk[1] + 2 < WORLD_HEIGHT)
        )
        trees = site.scatter(rng, room, self.count, self.spacing, "trees")
        trunks = rng.integers(self.trunk[0], self.trunk[1] + 1, size=self.count)
        for (x, z), trunk in zip(trees, trunks, strict=True):
            site.grow_tree(int(x), int(z), int(trunk))
        self._mark(site, self.landmark, tuple(trees.mean(axis=0) + 0.5))


@dataclass(frozen=True)
class Plants(Feature):
    """``block`` (tall grass, sugar cane) on a ``chance`` of the free columns of ``area`` whose
    top block is one of ``on``, ``height`` blocks tall."""

    kind: ClassVar[str] = "plants"
    block: str
    chance: float
    """Probability that a free column gets a plant."""
    area: Area | None = None
    """Where (default: the whole map)."""
    height: tuple[int, int] = (1, 1)
    """Shortest and tallest stack."""
    on: tuple[str, ...] = ("grass_block",)
    """Top blocks the plant grows on."""
    landmark: str | None = None
    """Landmark name of the centre of ``area``."""

    def __post_init__(self):
        for name in (self.block, *self.on):
            _check_block(name, "plants")
        if self.landmark is not None and self.area is None:
            raise ValueError("plants: a landmark needs an area")

    def populate(self, site, rng):
        grows = rng.random(site.size) < self.chance
        heights = rng.integers(self.height[0], self.height[1] + 1, size=site.size)
        on = np.isin(site.top, [site.block_id(name) for name in self.on])
        site.plant(grows & on & site.ground(self.area, clearance=0.0), self.block, heights)
        if self.area is not None:
            x0, z0, x1, z1 = self.area
            self._mark(site, self.landmark, ((x0 + x1) / 2, (z0 + z1) / 2))


@dataclass(frozen=True)
class Herd(Feature):
    """``count`` mobs within ``spread`` of ``at`` (default: a random place away from the spawn);
    each wanders within ``roam`` blocks of where it stands, and within its ``pasture`` when the
    herd has one (:class:`~mrsteve.world.layout.Pasture`)."""

    kind: ClassVar[str] = "herd"
    mob: str
    count: int
    at: tuple[int, int] | None = None
    """Column of the herd's centre (default: random)."""
    spread: float = 6.0
    """Mobs stand within this distance of the centre."""
    roam: float = 8.0
    """Each mob wanders within this distance of where it starts."""
    burning: bool = False
    """On fire from the start, for mobs that burn in daylight (zombies: they die after the
    mob's burn time)."""
    landmark: str | None = None
    """Landmark name of the herd's centre."""
    pasture: Area | None = None
    """Area the herd stands in and never leaves; with the passive spawn cycle the species
    spawns only there, and killed animals come back there (default: no pasture)."""

    def __post_init__(self):
        mob = _check_mob(self.mob, "herd")
        if self.burning and mob.daylight_burn_steps is None:
            raise ValueError(f"herd: {self.mob}s do not burn in daylight")
        if self.pasture is not None and not (self.pasture[0] < self.pasture[2]
                                             and self.pasture[1] < self.pasture[3]):
            raise ValueError(f"herd: pasture must be [x0, z0, x1, z1] with x0 < x1 and z0 < z1, "
                             f"got {list(self.pasture)}")

    def populate(self, site, rng):
        if self.pasture is not None and not (
                min(self.pasture[:2]) >= 1 and self.pasture[2] <= site.size[0] - 1
                and self.pasture[3] <= site.size[1] - 1):
            raise ValueError(f"herd: pasture {list(self.pasture)} must lie inside the walls "
                             f"(columns 1 to {site.size[0] - 2}, 1 to {site.size[1] - 2})")
        fenced = site.within(self.pasture)
        for attempt in range(HERD_TRIES):
            at = self.at
            if at is None:
                room = site.ground(clearance=SPAWN_CLEARANCE) & site.inside(self.spread) & fenced
                at = site.pick(rng, room, f"a herd of {self.mob}")
            room = site.ground(clearance=2.0) & (site.distance(at) <= self.spread) & fenced
            try:
                spots = site.scatter(rng, room, self.count, 1.5, f"{self.mob}s")
                break
            except ValueError:  # a centre drawn beside a pond or a house: draw another
                if self.at is not None or attempt == HERD_TRIES - 1:
                    raise
        pasture = None
        if self.pasture is not None:
            pasture = Pasture(self.mob, self.pasture, self.count, self.roam)
            site.pastures.append(pasture)
        for x, z in spots:
            site.mobs.append(MobSpawn(self.mob, float(x) + 0.5, float(z) + 0.5, self.roam,
                                      self.burning, None if pasture is None else pasture.fence))
        self._mark(site, self.landmark, _centre(at))


@dataclass(frozen=True)
class Event(Feature):
    """A :class:`ScheduledEvent` at column ``at``: mobs that appear or blocks that blow up."""

    kind: ClassVar[str] = "event"
    step: int
    """Environment step at which it happens."""
    event: EventKind
    """``spawn_mob`` or ``explode``."""
    at: tuple[int, int]
    mob: str | None = None
    """The mob kind that appears (``spawn_mob``)."""
    count: int = 1
    """How many mobs appear (``spawn_mob``)."""
    radius: float = 3.0
    """Blocks within this distance vanish (``explode``)."""
    block: str | None = None
    """Only blocks of this kind vanish (``explode``; default: every breakable block)."""
    landmark: str | None = None
    """Landmark name of ``at``."""

    def __post_init__(self):
        if self.event not in get_args(EventKind):
            raise ValueError(f"event: {unknown_name('event', self.event, get_args(EventKind))}")
        if self.event == "spawn_mob":
            _check_mob(self.mob or "", "event: spawn_mob needs a mob")
        _check_block(self.block, "event")

    def populate(self, site, rng):
        x, z = _centre(self.at)
        site.events.append(
            ScheduledEvent(
                self.step, self.event, x, z, self.mob, self.count, self.radius, self.block
            )
        )
        self._mark(site, self.landmark, (x, z))


FEATURES: Mapping[str, type[Feature]] = MappingProxyType(
    {
        feature.kind: feature
        for feature in (
            Hills,
            Surface,
            Mountain,
            Ridge,
            Outcrops,
            Pond,
            River,
            House,
            Forest,
            Plants,
            Herd,
            Event,
        )
    }
)
"""Every feature kind a recipe can name, by its ``kind``."""
