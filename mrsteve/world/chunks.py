"""Unbounded worlds: terrain generated chunk by chunk from the seed, as Minecraft's.

The world is made of chunks of 16 x 16 columns. A chunk is a pure function of the world's seed and
its chunk coordinates (:meth:`ChunkGenerator.chunk`), so it is the same whatever order chunks are
visited in: every random draw comes from a counter-based generator keyed by ``(seed, feature,
chunk)`` (:class:`ChunkRandom`), and features that reach over a chunk's border (tree crowns, grass
patches, lakes) are drawn by the chunk they start in and stamped by every chunk they touch.

What a chunk holds follows Minecraft 1.11's overworld generator (``BiomeDecorator``,
``WorldEntitySpawner.performWorldGenSpawning``, ``WorldGenLakes``), scaled to our palette and to
our 64-block height (our flat ground, feet at y = 16, is Minecraft's y = 64: :data:`MC_Y_OFFSET`):

- biomes from a smooth noise field: plains (most), forest and desert; rivers wind through all of
  them along the zero line of a second field, and lakes sit in a quarter of the chunks
  (``waterLakeChance`` = 4) where their random height lands on the ground, not in deserts;
- trees per chunk as each biome's decorator: plains 0 plus one with chance 0.05, forest 10 plus one
  with chance 0.1, desert none; oaks with a 4-6 block trunk (``WorldGenTrees``);
- tall grass patches per chunk (plains 10, forest 2): a patch starts at a random height below
  twice the ground's, sinks to the ground through air, and tries 128 spots spread by
  ``rand(8) - rand(8)`` (and ``rand(4) - rand(4)`` in height); sugar cane (10 tries per chunk, 60
  in deserts) where a spot at exactly the drawn height has water beside it;
- animals at chunk generation: while a uniform draw is below the biome's spawning chance 0.1, a
  pack of 4 of a species drawn by the biome's weights (plains: sheep 12, pig 10, chicken 10, cow
  8, horse 5, donkey 1; forest: the same without horses and donkeys, plus wolf 5; deserts and
  rivers none) walks from a random spot of the chunk. Species outside our palette (all but cows
  and sheep) are drawn and dropped, so cows and sheep keep their Minecraft share.

:class:`ChunkStore` keeps what the world changed in chunks that went out of the loaded window
(their blocks, compressed, and their mobs), so a chunk comes back as the agent left it.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numba as nb
import numpy as np

from mrsteve.world.content import Content, load_content
from mrsteve.world.layout import MobSpawn, WorldLayout
from mrsteve.world.terrain import GROUND_Y, SOIL_DEPTH, WORLD_HEIGHT, _tree_template

CHUNK = 16
"""Columns along each side of a chunk (Minecraft's)."""
MC_Y_OFFSET = 48
"""Minecraft's y of our y: our flat ground (feet at :data:`GROUND_Y` = 16) is Minecraft's 64, so
Minecraft's height draws (``rand(2 * height)``) keep their odds."""
WATER_LEVEL = GROUND_Y
"""The first air above still water (rivers and lakes): the level of flat ground."""

BIOMES = ("plains", "forest", "desert")
PLAINS, FOREST, DESERT = range(3)

_SALTS = {name: i + 1 for i, name in enumerate(
    ("biome", "hills", "river", "lakes", "trees", "grass", "reeds", "animals"))}
_SALT_BIOME, _SALT_HILLS, _SALT_RIVER = _SALTS["biome"], _SALTS["hills"], _SALTS["river"]

_GOLDEN = 0x9E3779B97F4A7C15
_COORD = 0xD1B54A32D192ED03


@nb.njit(cache=True, inline="always")
def _mix(z):
    """SplitMix64's finaliser (``uint64``, wrapping)."""
    z = (z ^ (z >> nb.uint64(30))) * nb.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> nb.uint64(27))) * nb.uint64(0x94D049BB133111EB)
    return z ^ (z >> nb.uint64(31))


@nb.njit(cache=True, inline="always")
def _hash(seed, salt, a, b, c):
    """A ``uint64`` hash of the seed, a feature's salt and three integers."""
    h = _mix(nb.uint64(seed) + nb.uint64(salt) * nb.uint64(_GOLDEN))
    h = _mix(h ^ (nb.uint64(a) * nb.uint64(_COORD)))
    h = _mix(h ^ (nb.uint64(b) * nb.uint64(_COORD)))
    return _mix(h ^ (nb.uint64(c) * nb.uint64(_COORD)))


@nb.njit(cache=True, inline="always")
def _unit(h):
    """A ``uint64`` hash to a uniform float in [0, 1)."""
    return float(h >> nb.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True)
def _noise(seed, salt, x, z, spacing, octaves):
    """Smooth noise in [-1, 1] at the world point ``(x, z)``: hashed lattice values ``spacing``
    blocks apart, smoothstep-interpolated; each further octave halves spacing and amplitude."""
    total = 0.0
    weight = 0.0
    amplitude = 1.0
    for octave in range(octaves):
        u, v = x / spacing, z / spacing
        iu, iv = math.floor(u), math.floor(v)
        tu, tv = u - iu, v - iv
        tu, tv = tu * tu * (3.0 - 2.0 * tu), tv * tv * (3.0 - 2.0 * tv)
        c00 = _unit(_hash(seed, salt, octave, iu, iv))
        c10 = _unit(_hash(seed, salt, octave, iu + 1, iv))
        c01 = _unit(_hash(seed, salt, octave, iu, iv + 1))
        c11 = _unit(_hash(seed, salt, octave, iu + 1, iv + 1))
        near = c00 * (1.0 - tu) + c10 * tu
        far = c01 * (1.0 - tu) + c11 * tu
        total += amplitude * (2.0 * (near * (1.0 - tv) + far * tv) - 1.0)
        weight += amplitude
        amplitude *= 0.5
        spacing *= 0.5
    return total / weight


@nb.njit(cache=True)
def _ground(seed, xs, zs, lakes, shape, biome_out, relief_out):
    """Biome and relief (blocks above flat ground) of the columns ``(xs, zs)``: hills, minus
    river beds along the river field's zero line and lake bowls (``lakes``: ``(x, z, r)`` rows)."""
    (biome_spacing, forest_below, desert_above, hill_height, hill_spacing, river_spacing,
     river_width, river_bank, lake_bank, water_depth) = shape
    for n in range(xs.shape[0]):
        fx, fz = xs[n] + 0.5, zs[n] + 0.5
        b = _noise(seed, _SALT_BIOME, fx, fz, biome_spacing, 2)
        biome_out[n] = DESERT if b > desert_above else (FOREST if b < forest_below else PLAINS)
        relief = hill_height * (_noise(seed, _SALT_HILLS, fx, fz, hill_spacing, 2) + 1.0) / 2.0
        river = abs(_noise(seed, _SALT_RIVER, fx, fz, river_spacing, 1))
        relief = min(relief, river_bank * (river - river_width))
        for m in range(lakes.shape[0]):
            d = math.sqrt((fx - lakes[m, 0]) ** 2 + (fz - lakes[m, 1]) ** 2)
            relief = min(relief, lake_bank * (d - lakes[m, 2]))
        relief_out[n] = max(relief, -water_depth)


@nb.njit(cache=True)
def _voxelise(level, top, under, wet, stone, water, out):
    """Columns to ``out[x, y, z]``: stone, then :data:`SOIL_DEPTH` ``under`` blocks, the ``top``
    block under the feet level, still water up to :data:`WATER_LEVEL` where ``wet``, air."""
    for i in range(out.shape[0]):
        for k in range(out.shape[2]):
            lv = level[i, k]
            for j in range(out.shape[1]):
                if j < lv - 1 - SOIL_DEPTH:
                    out[i, j, k] = stone
                elif j < lv - 1:
                    out[i, j, k] = under[i, k]
                elif j == lv - 1:
                    out[i, j, k] = top[i, k]
                elif wet[i, k] and j < WATER_LEVEL:
                    out[i, j, k] = water
                else:
                    out[i, j, k] = 0


@nb.njit(cache=True)
def _stamp_oaks(blocks, x0, z0, trees, templates, log):
    """Stamp the oaks ``trees`` (rows ``(x, z, trunk, feet level)`` in world columns) into the
    chunk ``blocks`` whose corner is ``(x0, z0)``: ``templates[trunk]`` is the oak of that trunk
    (:func:`~mrsteve.world.terrain._tree_template`, trunk foot at ``[2, 0, 2]``); its logs go over
    whatever is there, its leaves only into air."""
    for n in range(trees.shape[0]):
        x, z, trunk, level = trees[n, 0], trees[n, 1], trees[n, 2], trees[n, 3]
        tree = templates[trunk]
        for a in range(5):
            i = x - 2 + a - x0
            if i < 0 or i >= blocks.shape[0]:
                continue
            for c in range(5):
                k = z - 2 + c - z0
                if k < 0 or k >= blocks.shape[2]:
                    continue
                for dy in range(min(trunk + 1, blocks.shape[1] - level)):
                    b = tree[a, dy, c]
                    if b == log or (b != 0 and blocks[i, level + dy, k] == 0):
                        blocks[i, level + dy, k] = b


@nb.njit(cache=True)
def _uniforms(seed, salt, cx, cz, start, out):
    for n in range(out.shape[0]):
        out[n] = _unit(_hash(seed, salt, cx, cz, start + n))


class ChunkRandom:
    """A counter-based generator for one feature of one chunk: the same key gives the same
    numbers in any process, whatever was drawn for other chunks before."""

    def __init__(self, seed: int, salt: str, cx: int, cz: int):
        self._key = (seed, _SALTS[salt], int(cx), int(cz))
        self._counter = 0

    def random(self, shape: int | tuple[int, ...]) -> np.ndarray:
        """Uniform floats in [0, 1) of ``shape``."""
        out = np.empty(math.prod(shape) if isinstance(shape, tuple) else shape)
        _uniforms(*self._key, self._counter, out)
        self._counter += len(out)
        return out.reshape(shape)

    def integers(self, high: int | np.ndarray, shape: int | tuple[int, ...]) -> np.ndarray:
        """Integers in ``[0, high)`` of ``shape`` (Java's ``rand.nextInt(high)``)."""
        return _below(self.random(shape), high)

    def split(self, *shapes: int | tuple[int, ...]) -> list[np.ndarray]:
        """Uniform arrays of ``shapes``, the same numbers as consecutive :meth:`random` calls,
        drawn at once."""
        sizes = [math.prod(s) if isinstance(s, tuple) else s for s in shapes]
        flat = self.random(sum(sizes))
        bounds = np.cumsum([0, *sizes])
        return [flat[a:b].reshape(shape) for a, b, shape in zip(bounds[:-1], bounds[1:], shapes)]


def _below(uniform: np.ndarray, high: int | np.ndarray) -> np.ndarray:
    """Uniform numbers to integers in ``[0, high)``."""
    return np.minimum((uniform * high).astype(np.int64), np.asarray(high) - 1)


@dataclass(frozen=True)
class BiomeRules:
    """What Minecraft 1.11 decorates a biome's chunk with (``BiomeDecorator`` fields) and which
    animals it spawns (``spawnableCreatureList``)."""

    top: str
    under: str
    trees_per_chunk: int
    extra_tree_chance: float
    grass_per_chunk: int
    reeds_per_chunk: int
    creatures: Mapping[str, int]
    """Spawn weights of the passive species; cows and sheep are the ones our world has."""
    spawning_chance: float = 0.1
    """``Biome.getSpawningChance``: the chance of each further pack at chunk generation."""
    pack: int = 4
    """Group size of cows and sheep (``SpawnListEntry(..., 4, 4)``)."""

    @cached_property
    def animal_weights(self) -> tuple[tuple[str, ...], np.ndarray]:
        names = tuple(self.creatures)
        weights = np.array([self.creatures[n] for n in names], np.float64)
        return names, np.cumsum(weights) / weights.sum() if len(weights) else weights


_PLAINS_CREATURES = {"sheep": 12, "pig": 10, "chicken": 10, "cow": 8, "horse": 5, "donkey": 1}
_FOREST_CREATURES = {"sheep": 12, "pig": 10, "chicken": 10, "cow": 8, "wolf": 5}

BIOME_RULES = (
    BiomeRules("grass_block", "dirt", 0, 0.05, 10, 0, _PLAINS_CREATURES),
    BiomeRules("grass_block", "dirt", 10, 0.1, 2, 0, _FOREST_CREATURES),
    BiomeRules("sand", "sand", 0, 0.0, 0, 50, {}),
)
"""Per biome, in :data:`BIOMES` order."""

_NO_LAKES = np.zeros((0, 3))

EXTRA_REEDS = 10
"""Sugar cane tries every chunk gets beside its biome's (``BiomeDecorator``)."""
GRASS_TRIES, REED_TRIES = 128, 20
"""Spots a tall-grass patch and a sugar-cane patch try (``WorldGenTallGrass``, ``WorldGenReeds``)."""
LAKE_CHANCE = 4
"""One chunk in this many tries a lake (``waterLakeChance``)."""
MC_WORLD_TOP = 256
TRUNKS = (4, 6)
"""Shortest and tallest oak trunk (``WorldGenTrees``: 4 + rand(3))."""


@dataclass(frozen=True)
class TerrainShape:
    """The relief: noise scales and heights (ours; Minecraft's plains roll a few blocks)."""

    biome_spacing: float = 256.0
    """Lattice spacing of the biome field: biomes a few hundred blocks across."""
    forest_below: float = -0.25
    """Biome field below this: forest."""
    desert_above: float = 0.4
    """Biome field above this: desert."""
    hill_height: float = 4.0
    hill_spacing: float = 30.0
    river_spacing: float = 160.0
    """Lattice spacing of the river field: a river every couple of hundred blocks."""
    river_width: float = 0.05
    """Half-width of a river in river-field units (about 6-8 blocks of water across)."""
    river_bank: float = 40.0
    """Ground rise per river-field unit beside a river: banks of about 0.8 blocks per block."""
    lake_radius: tuple[float, float] = (3.0, 6.5)
    lake_bank: float = 0.8
    water_depth: float = 3.0


@dataclass(frozen=True)
class Columns:
    """The ground of a set of columns: biome, feet level, top and under blocks, water."""

    biome: np.ndarray
    level: np.ndarray
    top: np.ndarray
    under: np.ndarray
    wet: np.ndarray
    """Under still water (the surface at :data:`WATER_LEVEL`)."""


@dataclass(frozen=True)
class Decoration:
    """What one chunk's decorator places, in world columns: tree trunks ``(x, z, trunk height,
    feet level)``, tall-grass tries ``(x, z, y)`` and sugar-cane tries ``(x, z, y, height)``."""

    trees: np.ndarray
    grass: np.ndarray
    reeds: np.ndarray


def _inside(tries: np.ndarray, x0: int, z0: int) -> tuple[np.ndarray, ...]:
    """The tries that fall in the chunk whose corner is ``(x0, z0)``, as chunk indices (and the
    rest of their columns)."""
    i, k = tries[:, 0] - x0, tries[:, 1] - z0
    ok = (i >= 0) & (i < CHUNK) & (k >= 0) & (k < CHUNK)
    return (i[ok], k[ok], *(tries[ok, c] for c in range(2, tries.shape[1])))


class ChunkGenerator:
    """The terrain of one unbounded world: :meth:`chunk` builds any chunk from the seed alone."""

    def __init__(self, seed: int, shape: TerrainShape = TerrainShape(),
                 content: Content | None = None):
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.shape = shape
        self.content = content if content is not None else load_content()
        c = self.content
        self._ids = {name: c.block(name).id for name in (
            "grass_block", "dirt", "sand", "stone", "water", "oak_log", "oak_leaves",
            "tall_grass", "sugar_cane")}
        self._top = np.array([c.block(r.top).id for r in BIOME_RULES], np.uint8)
        self._under = np.array([c.block(r.under).id for r in BIOME_RULES], np.uint8)
        self._solid = c.block_solid
        self._shape_tuple = (shape.biome_spacing, shape.forest_below, shape.desert_above,
                             shape.hill_height, shape.hill_spacing, shape.river_spacing,
                             shape.river_width, shape.river_bank, shape.lake_bank,
                             shape.water_depth)
        """:class:`TerrainShape` in the order the :func:`_ground` kernel reads it."""
        self._oaks = np.zeros((TRUNKS[1] + 1, 5, TRUNKS[1] + 1, 5), np.uint8)
        """The oak of each trunk height (:func:`_tree_template`), by trunk."""
        for trunk in range(TRUNKS[0], TRUNKS[1] + 1):
            self._oaks[trunk, :, :trunk + 1] = _tree_template(
                trunk, self._ids["oak_log"], self._ids["oak_leaves"])
        self._tree_soil = np.zeros(len(c.blocks), np.bool_)
        self._tree_soil[[self._ids["grass_block"], self._ids["dirt"]]] = True
        self._reed_soil = self._tree_soil.copy()
        self._reed_soil[self._ids["sand"]] = True
        # Neighbouring chunks share their lakes and decorations: keep the recent ones.
        self.lakes = lru_cache(maxsize=4096)(self._lakes)
        self.decoration = lru_cache(maxsize=1024)(self._decoration)

    # -- columns ------------------------------------------------------------------------------
    def _ground(self, x: np.ndarray, z: np.ndarray, lakes: np.ndarray) -> tuple[np.ndarray, ...]:
        xs, zs = np.ravel(x).astype(np.int64), np.ravel(z).astype(np.int64)
        biome = np.empty(len(xs), np.int8)
        relief = np.empty(len(xs))
        _ground(self.seed, xs, zs, lakes, self._shape_tuple, biome, relief)
        return biome.reshape(np.shape(x)), relief.reshape(np.shape(x))

    def biome(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Biome index (:data:`BIOMES`) of the columns ``(x, z)``."""
        return self._ground(x, z, _NO_LAKES)[0]

    def _lakes(self, cx: int, cz: int) -> np.ndarray:
        """``float[n, 3]`` ``(x, z, radius)`` of the lake chunk ``(cx, cz)`` starts (0 or 1): one
        chunk in :data:`LAKE_CHANCE`, at a random height that sinks to the ground when drawn above
        it (Minecraft's ground at 64 of 256), never in a desert."""
        rng = ChunkRandom(self.seed, "lakes", cx, cz)
        chance, height, x, z, r = rng.random(5)
        if chance >= 1 / LAKE_CHANCE or height * MC_WORLD_TOP < GROUND_Y + MC_Y_OFFSET:
            return _NO_LAKES
        x, z = cx * CHUNK + 2 + 12 * x, cz * CHUNK + 2 + 12 * z
        if self.biome(np.array([math.floor(x)]), np.array([math.floor(z)]))[0] == DESERT:
            return _NO_LAKES
        low, high = self.shape.lake_radius
        return np.array([[x, z, low + (high - low) * r]])

    def columns(self, x: np.ndarray, z: np.ndarray) -> Columns:
        """The ground of the columns ``(x, z)`` (integer arrays of one shape)."""
        s = self.shape
        x, z = np.asarray(x, np.int64), np.asarray(z, np.int64)
        reach = s.lake_radius[1] + s.hill_height / s.lake_bank + 1
        lakes = [self.lakes(cx, cz)
                 for cx in range(int(x.min() - reach) // CHUNK, int(x.max() + reach) // CHUNK + 1)
                 for cz in range(int(z.min() - reach) // CHUNK, int(z.max() + reach) // CHUNK + 1)]
        biome, relief = self._ground(x, z, np.concatenate(lakes))
        level = (GROUND_Y + np.floor(relief)).astype(np.int16)
        wet = level < WATER_LEVEL
        top = np.where(wet, self._ids["sand"], self._top[biome]).astype(np.uint8)
        under = np.where(wet, self._ids["sand"], self._under[biome]).astype(np.uint8)
        return Columns(biome, level, top, under, wet)

    def _voxels(self, cols: Columns) -> np.ndarray:
        blocks = np.empty((CHUNK, WORLD_HEIGHT, CHUNK), np.uint8)
        _voxelise(np.ascontiguousarray(cols.level), np.ascontiguousarray(cols.top),
                  np.ascontiguousarray(cols.under), np.ascontiguousarray(cols.wet),
                  self._ids["stone"], self._ids["water"], blocks)
        return blocks

    # -- chunks -------------------------------------------------------------------------------
    def chunk(self, cx: int, cz: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ``(cx, cz)``: ``uint8[16, 64, 16]`` blocks (``[x, y, z]`` from the chunk's
        corner ``(16 cx, 16 cz)``) and ``float[n, 3]`` ``(x, z, kind)`` of the animals its
        generation places (world columns' centres; kind 0 cow, 1 sheep)."""
        x0, z0 = cx * CHUNK, cz * CHUNK
        gx, gz = np.meshgrid(np.arange(x0 - 1, x0 + CHUNK + 1), np.arange(z0 - 1, z0 + CHUNK + 1),
                             indexing="ij")
        padded = self.columns(gx, gz)  # one column of margin for the sugar cane's water test
        inner = Columns(*(a[1:-1, 1:-1] for a in (padded.biome, padded.level, padded.top,
                                                   padded.under, padded.wet)))
        blocks = self._voxels(inner)
        decorations = [self.decoration(ax, az)
                       for ax in (cx - 1, cx, cx + 1) for az in (cz - 1, cz, cz + 1)]
        # Minecraft's order: trees, then grass, then sugar cane.
        self._stamp_trees(blocks, x0, z0, np.concatenate([d.trees for d in decorations]))
        i, k, y = _inside(np.concatenate([d.grass for d in decorations]), x0, z0)
        ok = (y == inner.level[i, k]) & (inner.top[i, k] == self._ids["grass_block"])
        ok[ok] = blocks[i[ok], y[ok], k[ok]] == 0
        blocks[i[ok], y[ok], k[ok]] = self._ids["tall_grass"]
        i, k, y, tall = _inside(np.concatenate([d.reeds for d in decorations]), x0, z0)
        pi, pk = i + 1, k + 1  # in the padded columns
        beside = (padded.wet[pi - 1, pk] | padded.wet[pi + 1, pk] | padded.wet[pi, pk - 1]
                  | padded.wet[pi, pk + 1])
        ok = (y == padded.level[pi, pk]) & ~padded.wet[pi, pk] & beside & self._reed_soil[
            padded.top[pi, pk]]
        for i_, k_, y_, t in zip(i[ok], k[ok], y[ok], tall[ok], strict=True):
            column = blocks[i_, y_:y_ + t, k_]
            if (column == 0).all():
                column[:] = self._ids["sugar_cane"]
        return blocks, self._animals(blocks, inner, cx, cz)

    def _decoration(self, ax: int, az: int) -> Decoration:
        """What the decorator of chunk ``(ax, az)`` places, in world columns (tries that fall in
        neighbouring chunks included): the rules of the biome at the chunk's centre."""
        rules = BIOME_RULES[int(self.biome(np.array([ax * CHUNK + 8]), np.array([az * CHUNK + 8]))[0])]
        x0, z0 = ax * CHUNK, az * CHUNK
        rng = ChunkRandom(self.seed, "trees", ax, az)
        n_trees = rules.trees_per_chunk + int(rng.random(1)[0] < rules.extra_tree_chance)
        tree_x, tree_z, trunk = rng.split(n_trees, n_trees, n_trees)
        tree_x, tree_z = x0 + _below(tree_x, CHUNK), z0 + _below(tree_z, CHUNK)
        trunk = TRUNKS[0] + _below(trunk, TRUNKS[1] - TRUNKS[0] + 1)
        n_grass = rules.grass_per_chunk
        grass_x, grass_z, grass_height, grass_tries, grass_dy = ChunkRandom(
            self.seed, "grass", ax, az).split(n_grass, n_grass, n_grass, (4, n_grass, GRASS_TRIES),
                                              (2, n_grass, GRASS_TRIES))
        grass_x, grass_z = x0 + _below(grass_x, CHUNK), z0 + _below(grass_z, CHUNK)
        grass_tries, grass_dy = _below(grass_tries, 8), _below(grass_dy, 4)
        n_reeds = rules.reeds_per_chunk + EXTRA_REEDS
        tries = (n_reeds, REED_TRIES)
        reed_x, reed_z, reed_height, reed_tries, reed_cap, tall = ChunkRandom(
            self.seed, "reeds", ax, az).split(n_reeds, n_reeds, n_reeds, (4, *tries), tries, tries)
        reed_x, reed_z = x0 + _below(reed_x, CHUNK), z0 + _below(reed_z, CHUNK)
        reed_tries = _below(reed_tries, 4)
        tall = 2 + _below(tall, _below(reed_cap, 3) + 1)

        cols = self.columns(np.concatenate([tree_x, grass_x, reed_x]),
                            np.concatenate([tree_z, grass_z, reed_z]))
        tree_cols = slice(0, n_trees)
        grass_level = cols.level[n_trees:n_trees + n_grass].astype(np.int64)
        reed_level = cols.level[n_trees + n_grass:].astype(np.int64)

        fits = (~cols.wet[tree_cols] & self._tree_soil[cols.top[tree_cols]]
                & (cols.level[tree_cols] + trunk + 2 < WORLD_HEIGHT))
        keep: list[int] = []
        xs, zs = tree_x.tolist(), tree_z.tolist()
        for n in np.flatnonzero(fits).tolist():  # no trunk beside another of the same chunk
            if all(max(abs(xs[n] - xs[m]), abs(zs[n] - zs[m])) >= 2 for m in keep):
                keep.append(n)
        trees = np.stack([tree_x, tree_z, trunk, cols.level[tree_cols]], axis=1)[keep]

        # A grass patch's height is drawn in [0, 2 x ground): from above the ground it sinks to
        # the ground block, from below it stays buried and places nothing.
        landed = grass_height * 2 * (grass_level + MC_Y_OFFSET) >= grass_level - 1 + MC_Y_OFFSET
        dx, dz = grass_tries[0] - grass_tries[1], grass_tries[2] - grass_tries[3]
        grass = np.stack(np.broadcast_arrays(
            grass_x[:, None] + dx, grass_z[:, None] + dz,
            grass_level[:, None] - 1 + grass_dy[0] - grass_dy[1]), axis=-1)[landed].reshape(-1, 3)
        # A sugar-cane patch keeps its drawn height: it grows only where that is right above the
        # ground, beside water.
        reed_y = (reed_height * 2 * (reed_level + MC_Y_OFFSET)).astype(np.int64) - MC_Y_OFFSET
        right = reed_y == reed_level
        reeds = np.stack(np.broadcast_arrays(
            reed_x[:, None] + reed_tries[0] - reed_tries[1],
            reed_z[:, None] + reed_tries[2] - reed_tries[3], reed_y[:, None], tall), axis=-1)
        return Decoration(trees, grass, reeds[right].reshape(-1, 4))

    def _stamp_trees(self, blocks, x0, z0, trees):
        _stamp_oaks(blocks, x0, z0, np.ascontiguousarray(trees, np.int64), self._oaks,
                    self._ids["oak_log"])

    def _animals(self, blocks, cols, cx, cz) -> np.ndarray:
        """Minecraft's ``performWorldGenSpawning`` for the chunk: packs while a draw is below the
        spawning chance, each walking from a random spot, every animal on ground where it has
        room; species drawn by weight, those outside our palette dropped."""
        rules = BIOME_RULES[int(cols.biome[8, 8])]
        names, cumulative = rules.animal_weights
        rng = ChunkRandom(self.seed, "animals", cx, cz)
        placed = []
        while len(names) and rng.random(1)[0] < rules.spawning_chance:
            name = names[int(np.searchsorted(cumulative, rng.random(1)[0], side="right"))]
            start = rng.integers(CHUNK, 2)
            i, k = int(start[0]), int(start[1])
            for _ in range(rules.pack):
                for _try in range(4):
                    if name in ("cow", "sheep") and self._room(blocks, cols, i, k):
                        placed.append((cx * CHUNK + i + 0.5, cz * CHUNK + k + 0.5,
                                       ("cow", "sheep").index(name)))
                        break
                    step = rng.integers(5, 4)
                    i, k = i + step[0] - step[1], k + step[2] - step[3]
                    while not (0 <= i < CHUNK and 0 <= k < CHUNK):
                        step = rng.integers(5, 4)
                        i, k = int(start[0]) + step[0] - step[1], int(start[1]) + step[2] - step[3]
                    i, k = int(i), int(k)
        return np.array(placed, np.float64).reshape(-1, 3)

    def _room(self, blocks, cols, i, k) -> bool:
        """Minecraft's ``ON_GROUND`` placement: solid ground below, two cells free of solid
        blocks and of water above it."""
        y = int(cols.level[i, k])
        if cols.wet[i, k] or y + 1 >= WORLD_HEIGHT:
            return False
        return not (self._solid[blocks[i, y, k]] or self._solid[blocks[i, y + 1, k]])


@dataclass
class ChunkStore:
    """What the world keeps of the chunks that left the loaded window: the blocks of those it
    changed (zlib-compressed) and the mobs that were in them, by chunk; and which chunks were
    ever loaded (their generated animals were placed once)."""

    blocks: dict[int, bytes] = field(default_factory=dict)
    mobs: dict[int, np.ndarray] = field(default_factory=dict)
    visited: set[int] = field(default_factory=set)

    @staticmethod
    def key(cx: int, cz: int) -> int:
        """One integer per chunk (chunk coordinates within +-2^31)."""
        return ((int(cx) & 0xFFFFFFFF) << 32) | (int(cz) & 0xFFFFFFFF)

    def save_blocks(self, cx: int, cz: int, blocks: np.ndarray) -> None:
        self.blocks[self.key(cx, cz)] = zlib.compress(np.ascontiguousarray(blocks).tobytes(), 1)

    def load_blocks(self, cx: int, cz: int) -> np.ndarray | None:
        data = self.blocks.get(self.key(cx, cz))
        if data is None:
            return None
        return np.frombuffer(zlib.decompress(data), np.uint8).reshape(CHUNK, WORLD_HEIGHT, CHUNK)


WINDOW_CHUNKS = 10
"""Chunks along each side of the loaded square: the player is kept in its middle two, so every
edge stays at least 64 blocks (the view distance) away."""


@dataclass(frozen=True)
class UnboundedTerrain:
    """How a layout continues beyond its grid: the generator, the chunk (in the generator's
    coordinates) at the grid's corner, and the checksums of the grid's chunks as generated (a
    chunk whose blocks differ from them is kept when it leaves the window)."""

    generator: ChunkGenerator
    corner: tuple[int, int]
    generated_crc: np.ndarray


@dataclass(frozen=True)
class UnboundedRecipe:
    """An unbounded world: terrain generated chunk by chunk as the player walks (see the module
    docstring), the player starting on dry grass of ``spawn_biome`` nearest the origin."""

    name: str
    description: str
    shape: TerrainShape = TerrainShape()
    spawn_biome: str = "plains"
    size = None
    """Unbounded (the bounded recipes' ``(x, z)`` extent)."""

    def __post_init__(self):
        if self.spawn_biome not in BIOMES:
            raise ValueError(f"world {self.name!r}: spawn_biome must be one of {', '.join(BIOMES)}, "
                             f"got {self.spawn_biome!r}")

    def build(self, rng: np.random.Generator) -> WorldLayout:
        """The first loaded window around the spawn, its animals, and the terrain that goes on."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        generator = ChunkGenerator(int(rng.integers(2**63)), self.shape)
        (scx, scz), (i, k) = self._spawn(generator)
        n, half = WINDOW_CHUNKS, WINDOW_CHUNKS // 2
        corner = (scx - half, scz - half)
        blocks = np.empty((n * CHUNK, WORLD_HEIGHT, n * CHUNK), np.uint8)
        crc = np.empty((n, n), np.uint32)
        mobs = []
        for a in range(n):
            for b in range(n):
                view = _chunk_view(blocks, a, b)
                view[:], animals = generator.chunk(corner[0] + a, corner[1] + b)
                crc[a, b] = _crc(view)
                mobs += [MobSpawn(ANIMALS[int(kind)], x - corner[0] * CHUNK,
                                  z - corner[1] * CHUNK, roam=None) for x, z, kind in animals]
        x, z = half * CHUNK + i, half * CHUNK + k
        column = blocks[x, :, z]
        level = int(np.flatnonzero(generator.content.block_solid[column]).max()) + 1
        blocks[x, level:level + 2, z] = 0  # head room: no grass or leaves in the face
        return WorldLayout(name=self.name, blocks=blocks, spawn=(x + 0.5, float(level), z + 0.5),
                           mobs=tuple(mobs),
                           terrain=UnboundedTerrain(generator, corner, crc))

    def _spawn(self, generator: ChunkGenerator) -> tuple[tuple[int, int], tuple[int, int]]:
        """The chunk nearest the origin whose centre lies in the spawn biome, and its dry grass
        column nearest its centre (Minecraft looks for a spawn in the spawn biomes the same way)."""
        biome = BIOMES.index(self.spawn_biome)
        for radius in range(SPAWN_SEARCH_CHUNKS):
            ring = [(a, b) for a in range(-radius, radius + 1) for b in range(-radius, radius + 1)
                    if max(abs(a), abs(b)) == radius]
            for cx, cz in ring:
                if generator.biome(np.array([cx * CHUNK + 8]), np.array([cz * CHUNK + 8]))[0] != biome:
                    continue
                blocks, _ = generator.chunk(cx, cz)
                cols = generator.columns(*np.meshgrid(np.arange(cx * CHUNK, cx * CHUNK + CHUNK),
                                                      np.arange(cz * CHUNK, cz * CHUNK + CHUNK),
                                                      indexing="ij"))
                solid = generator.content.block_solid
                ii, kk = np.indices((CHUNK, CHUNK))
                free = ~solid[blocks[ii, np.minimum(cols.level, WORLD_HEIGHT - 1), kk]] & ~solid[
                    blocks[ii, np.minimum(cols.level + 1, WORLD_HEIGHT - 1), kk]]
                ok = ~cols.wet & (cols.top == generator.content.block("grass_block").id) & free
                if ok.any():
                    candidates = np.argwhere(ok)
                    best = candidates[np.argmin(np.square(candidates - 7.5).sum(axis=1))]
                    return (cx, cz), (int(best[0]), int(best[1]))
        raise ValueError(f"world {self.name!r}: no {self.spawn_biome} within "
                         f"{SPAWN_SEARCH_CHUNKS} chunks of the origin for this seed")


SPAWN_SEARCH_CHUNKS = 64
"""How far (in chunks) the spawn search looks from the origin."""


class ChunkWindow:
    """The loaded chunks of an unbounded world: a square of :data:`WINDOW_CHUNKS` chunks around
    the player that moves with it.

    The world's arrays hold the window; when the player leaves the middle two chunks, the window
    moves by whole chunks: chunks that leave are kept in a :class:`ChunkStore` (their blocks if
    the world changed them, their mobs always, as Minecraft saves entities with their chunk), and
    chunks that enter come from the store or the generator (with the animals of their generation,
    the first time). :attr:`origin` is where the arrays' corner lies in the world frame the
    environment reports (the first window's corner is ``(0, 0)``)."""

    def __init__(self, terrain: UnboundedTerrain, blocks: np.ndarray):
        self.generator = terrain.generator
        self.corner = terrain.corner
        """Generator chunk of ``blocks[0, :, 0]``."""
        self._first = terrain.corner
        self.store = ChunkStore()
        n = blocks.shape[0] // CHUNK
        if (blocks.shape[0] != blocks.shape[2] or blocks.shape[0] % CHUNK
                or terrain.generated_crc.shape != (n, n)):
            raise ValueError(f"an unbounded world's grid must be square in whole chunks with a "
                             f"checksum each, got {blocks.shape[0]} x {blocks.shape[2]} columns")
        self.size = n
        self._crc = terrain.generated_crc.copy()
        for i in range(n):
            for k in range(n):
                self.store.visited.add(ChunkStore.key(self.corner[0] + i, self.corner[1] + k))

    @property
    def origin(self) -> tuple[int, int]:
        return ((self.corner[0] - self._first[0]) * CHUNK, (self.corner[1] - self._first[1]) * CHUNK)

    def region(self, low, high) -> tuple[np.ndarray, np.ndarray]:
        """The terrain as generated (not as changed) over the chunks holding the reported-frame
        points from ``low`` to ``high`` (``(x, z)`` each), and the reported position of its
        corner: for maps of an episode's path."""
        first = np.array(self._first) * CHUNK
        c0 = np.floor((np.asarray(low) + first) / CHUNK).astype(int)
        c1 = np.floor((np.asarray(high) + first) / CHUNK).astype(int) + 1
        blocks = np.zeros(((c1[0] - c0[0]) * CHUNK, WORLD_HEIGHT, (c1[1] - c0[1]) * CHUNK), np.uint8)
        for a in range(c1[0] - c0[0]):
            for b in range(c1[1] - c0[1]):
                _chunk_view(blocks, a, b)[:] = self.generator.chunk(c0[0] + a, c0[1] + b)[0]
        return blocks, (c0 * CHUNK - first).astype(np.float64)

    def shift_for(self, x: float, z: float) -> tuple[int, int]:
        """Chunks to move the window by so the player at ``(x, z)`` stands in its middle two."""
        low, high = self.size // 2 - 1, self.size // 2
        moves = []
        for position in (x, z):
            chunk = math.floor(position / CHUNK)
            moves.append(chunk - high if chunk > high else (chunk - low if chunk < low else 0))
        return moves[0], moves[1]

    def move(self, world, dx: int, dz: int) -> None:
        """Move the window by ``(dx, dz)`` chunks, shifting the world's blocks, player and mobs."""
        n, blocks, mobs = self.size, world.blocks, world.mobs
        cx0, cz0 = self.corner
        records = mobs.records
        mob_i = np.floor(records["x"] / CHUNK).astype(np.int64)
        mob_k = np.floor(records["z"] / CHUNK).astype(np.int64)
        leaving = np.zeros(len(records), np.bool_)
        for i in range(n):
            for k in range(n):
                if 0 <= i - dx < n and 0 <= k - dz < n:
                    continue
                view = _chunk_view(blocks, i, k)
                if _crc(view) != self._crc[i, k]:
                    self.store.save_blocks(cx0 + i, cz0 + k, view)
                here = (mob_i == i) & (mob_k == k)
                if here.any():
                    kept = records[here].copy()
                    _translate(kept, cx0 * CHUNK, cz0 * CHUNK)
                    self.store.mobs[ChunkStore.key(cx0 + i, cz0 + k)] = kept
                leaving |= here
        mobs.remove(np.flatnonzero(leaving))

        _shift(blocks, dx * CHUNK, dz * CHUNK)
        self._crc = _shifted(self._crc, dx, dz)
        self.corner = (cx0 + dx, cz0 + dz)
        world.player[0] -= dx * CHUNK
        world.player[2] -= dz * CHUNK
        _translate(mobs.records, -dx * CHUNK, -dz * CHUNK)

        cx0, cz0 = self.corner
        for i in range(n):
            for k in range(n):
                if 0 <= i + dx < n and 0 <= k + dz < n:
                    continue
                self._load(world, i, k, cx0 + i, cz0 + k)
        world.heights.refresh(blocks)

    def _load(self, world, i: int, k: int, cx: int, cz: int) -> None:
        key = ChunkStore.key(cx, cz)
        saved = self.store.load_blocks(cx, cz)
        view = _chunk_view(world.blocks, i, k)
        if saved is None:
            generated, animals = self.generator.chunk(cx, cz)
            view[:] = generated
        else:
            view[:] = saved
            animals = None
        self._crc[i, k] = _crc(view)
        if key in self.store.mobs:
            kept = self.store.mobs.pop(key)
            _translate(kept, -self.corner[0] * CHUNK, -self.corner[1] * CHUNK)
            world.mobs.insert(kept)
        elif key not in self.store.visited:
            if animals is None:
                animals = self.generator.chunk(cx, cz)[1]
            for x, z, kind in animals:
                world.spawn_mob(ANIMALS[int(kind)], x - self.corner[0] * CHUNK,
                                z - self.corner[1] * CHUNK, roam=None)
        self.store.visited.add(key)


ANIMALS = ("cow", "sheep")
"""The passive species of our palette, in the generator's kind order."""


def _chunk_view(blocks: np.ndarray, i: int, k: int) -> np.ndarray:
    return blocks[i * CHUNK:(i + 1) * CHUNK, :, k * CHUNK:(k + 1) * CHUNK]


def _crc(view: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(view))


def _translate(records: np.ndarray, dx: float, dz: float) -> None:
    for name in ("x", "home_x", "target_x"):
        records[name] += dx
    for name in ("z", "home_z", "target_z"):
        records[name] += dz


def _shift(blocks: np.ndarray, dx: int, dz: int) -> None:
    """Move the contents of ``blocks`` by ``(-dx, -dz)`` columns in place (what was at column
    ``dx`` is at 0); the columns that come free keep stale contents for the caller to fill."""
    sx, _, sz = blocks.shape
    if abs(dx) >= sx or abs(dz) >= sz:
        return
    src_x = slice(max(dx, 0), sx + min(dx, 0))
    dst_x = slice(max(-dx, 0), sx + min(-dx, 0))
    src_z = slice(max(dz, 0), sz + min(dz, 0))
    dst_z = slice(max(-dz, 0), sz + min(-dz, 0))
    blocks[dst_x, :, dst_z] = blocks[src_x, :, src_z].copy()


def _shifted(grid: np.ndarray, dx: int, dz: int) -> np.ndarray:
    out = np.zeros_like(grid)
    n = grid.shape[0]
    if abs(dx) >= n or abs(dz) >= n:
        return out
    out[max(-dx, 0):n + min(-dx, 0), max(-dz, 0):n + min(-dz, 0)] = \
        grid[max(dx, 0):n + min(dx, 0), max(dz, 0):n + min(dz, 0)]
    return out
