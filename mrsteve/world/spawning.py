"""Minecraft 1.11's passive spawn cycle: animals come back to a world the player hunts in.

Every :attr:`SpawnRules.interval` ticks (400: ``WorldServer`` spawns creatures when the world time
is a multiple of 400), ``WorldEntitySpawner.findChunksForSpawning`` does, for passive creatures:

1. the *eligible* chunks are the loaded chunks within 8 chunks of the player (a 17 x 17 square);
   the cap is ``10 x eligible / 289`` (``maxNumberOfCreature`` 10, ``MOB_COUNT_DIV`` = 17 x 17),
   and nothing spawns while more creatures than the cap are loaded;
2. each eligible chunk draws one spot: a random column and a random height below its height map
   rounded up to 16 (so most draws are underground or in the air and spawn nothing);
3. from that spot, 3 packs each take 1-4 steps of ``rand(6) - rand(6)`` on x and z; a step spawns
   an animal of the pack's species (drawn by the biome's weights at its first step) where it is
   at least 24 blocks from the player and from the world's spawn point, stands on grass in
   light above 8, with room for its body and no water; at most 4 per chunk and cycle.

Our world is Minecraft's with the ground at y = 16 instead of 64
(:data:`~mrsteve.world.chunks.MC_Y_OFFSET`): heights are drawn in Minecraft's units so the odds of
step 2 stay Minecraft's. Cows and sheep are our palette's passive animals: the loaded creatures
counted for the cap are cows and sheep, and packs of the other species (pigs, chickens, horses ...)
are drawn and spawn nothing. The daylight is constant: a cell is lit when no opaque block stands
above it in its column.

A herd with a pasture (:class:`~mrsteve.world.layout.Pasture`) keeps to it, as Minecraft's
animals stay in the loaded chunks near where they spawned: its species spawns only there.
Each cycle first restocks the pastures (:meth:`PassiveSpawning.restock`: up to
:attr:`SpawnRules.max_per_chunk` of a herd's killed animals come back, each at a random column of
the pasture where step 3 lets an animal spawn; the cap does not hold them back), then runs steps
1-3 for the species without a pasture. With static herds (a diagnostic beyond Minecraft,
:attr:`~mrsteve.world.world.WorldConfig.herds`) a killed animal comes back at the spot where it
first stood instead, once the player is 24 blocks away and nothing stands in the way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mrsteve.world.chunks import ANIMALS, BIOME_RULES, CHUNK, MC_Y_OFFSET, PLAINS
from mrsteve.world.layout import Pasture
from mrsteve.world.mobs import FENCE_FIELDS, ground_height
from mrsteve.world.physics import X, Y, Z


@dataclass(frozen=True)
class SpawnRules:
    """The numbers of Minecraft 1.11's passive spawn cycle (see the module docstring)."""

    interval: int = 400
    """Ticks between two cycles (``getWorldTotalTime() % 400 == 0``)."""
    cap: int = 10
    """``EnumCreatureType.CREATURE.getMaxNumberOfCreature()``."""
    cap_chunks: int = 289
    """``MOB_COUNT_DIV``: the cap is per this many eligible chunks."""
    chunk_radius: int = 8
    """Eligible chunks: within this many chunks of the player's on each axis."""
    min_distance: float = 24.0
    """No spawn within this distance of the player or of the world's spawn point."""
    packs: int = 3
    pack_steps: int = 4
    """A pack takes ``ceil(4 u)`` steps: 1 to 4."""
    spread: int = 6
    """Each step moves by ``rand(6) - rand(6)`` on x and on z."""
    max_per_chunk: int = 4
    """``EntityLiving.getMaxSpawnedInChunk()``; also the most animals a pasture gets back per
    cycle."""
    pasture_tries: int = 16
    """Random columns of its pasture an animal coming back tries (it waits for the next cycle
    when none of them lets it spawn)."""

    def __post_init__(self):
        for name in ("interval", "cap_chunks", "packs", "pack_steps", "spread", "max_per_chunk",
                     "pasture_tries"):
            if getattr(self, name) < 1:
                raise ValueError(f"spawn rules: {name} must be at least 1, got {getattr(self, name)}")
        if self.cap < 0 or self.chunk_radius < 0 or self.min_distance < 0:
            raise ValueError("spawn rules: cap, chunk_radius and min_distance must be non-negative")


class PassiveSpawning:
    """The spawn cycle of one world; :meth:`cycle` runs it once."""

    def __init__(self, world, rules: SpawnRules):
        self.world = world
        self.rules = rules
        content = world.content
        names = [b.name for b in content.blocks]
        self._opaque = content.block_solid & np.array([n != "oak_leaves" for n in names])
        """Minecraft's normal cubes: full solid blocks that are not leaves."""
        self._grass = content.block("grass_block").id
        self._kinds = np.array([content.mob(name).id for name in ANIMALS])
        self.pastures = world.layout.pastures
        for pasture in self.pastures:
            if pasture.mob not in ANIMALS:
                raise ValueError(f"spawn cycle: only {' and '.join(ANIMALS)} spawn in a pasture, "
                                 f"got a pasture of {pasture.mob}s")
        self._wild = tuple(name for name in ANIMALS
                           if name not in {pasture.mob for pasture in self.pastures})
        """The animals that spawn anywhere (no pasture)."""
        self._sizes = {name: (content.mob(name).width, content.mob(name).height)
                       for name in ANIMALS}
        ox, oz = world.origin
        x, _, z = world.layout.spawn
        self._spawn_point = (x + ox, float(world.layout.spawn[1]), z + oz)
        """The world's spawn point, in the reported frame."""
        self._homes = ({pasture: self._herd(pasture)[["home_x", "home_z"]].tolist()
                        for pasture in self.pastures}
                       if world.config.herds == "static" else None)
        """Static herds: the spots each pasture's animals first stood on."""

    def loaded_animals(self) -> int:
        """Cows and sheep in the loaded world: what the cap is checked against."""
        return int(np.isin(self.world.mobs.records["kind"], self._kinds).sum())

    def eligible_chunks(self) -> list[tuple[int, int]]:
        """Loaded chunks (of the world's arrays) within :attr:`SpawnRules.chunk_radius` of the
        player's."""
        sx, _, sz = self.world.blocks.shape
        pcx = math.floor(self.world.player[X] / CHUNK)
        pcz = math.floor(self.world.player[Z] / CHUNK)
        r = self.rules.chunk_radius
        return [(cx, cz)
                for cx in range(max(pcx - r, 0), min(pcx + r, (sx - 1) // CHUNK) + 1)
                for cz in range(max(pcz - r, 0), min(pcz + r, (sz - 1) // CHUNK) + 1)]

    def cap(self, eligible: int) -> int:
        return self.rules.cap * eligible // self.rules.cap_chunks

    def _herd(self, pasture: Pasture) -> np.ndarray:
        """The records of ``pasture``'s living animals."""
        records = self.world.mobs.records
        fence = np.column_stack([records[f] for f in FENCE_FIELDS])
        return records[(records["kind"] == self.world.content.mob(pasture.mob).id)
                       & (fence == pasture.fence).all(axis=1)]

    def herd_size(self, pasture: Pasture) -> int:
        """The living animals of ``pasture``'s herd."""
        return len(self._herd(pasture))

    def restock(self) -> dict[str, int]:
        """Bring killed animals back to their pastures; returns how many of each species came.

        A herd below its ``count`` gets up to :attr:`SpawnRules.max_per_chunk` animals, each at
        the first of :attr:`SpawnRules.pasture_tries` random columns of the pasture where an
        animal can spawn (on grass, lit, room for its body, 24 blocks from the player and the
        world's spawn point: step 3's rules), standing on the column's ground. Static herds
        (:meth:`_restock_at_homes`) get them back where they first stood."""
        if self._homes is not None:
            return self._restock_at_homes()
        world, rng = self.world, self.world.rng
        spawned: dict[str, int] = {}
        for pasture in self.pastures:
            missing = min(pasture.count - self.herd_size(pasture), self.rules.max_per_chunk)
            x0, z0, x1, z1 = pasture.area
            height = self._sizes[pasture.mob][1]
            for _animal in range(missing):
                for _try in range(self.rules.pasture_tries):
                    x, z = int(rng.integers(x0, x1)), int(rng.integers(z0, z1))
                    y = int(ground_height(world.blocks, world.solid, x + 0.5, z + 0.5, height))
                    if not self._too_close(x, y, z) and self._can_spawn(pasture.mob, x, y, z):
                        world.spawn_mob(pasture.mob, x + 0.5, z + 0.5, roam=pasture.roam,
                                        pasture=pasture.fence)
                        spawned[pasture.mob] = spawned.get(pasture.mob, 0) + 1
                        break
        return spawned

    def _restock_at_homes(self) -> dict[str, int]:
        """Static herds: up to :attr:`SpawnRules.max_per_chunk` of a herd's killed animals come
        back, each at the spot it first stood on (the spots no living animal of the herd calls
        home), where the player is at least 24 blocks away and the body has room."""
        world = self.world
        spawned: dict[str, int] = {}
        for pasture in self.pastures:
            empty = list(self._homes[pasture])
            for home in self._herd(pasture)[["home_x", "home_z"]].tolist():
                if home in empty:  # an animal put in the pasture since has no spot to keep
                    empty.remove(home)
            height = self._sizes[pasture.mob][1]
            for x, z in empty[: self.rules.max_per_chunk]:
                y = int(ground_height(world.blocks, world.solid, x, z, height))
                if not self._too_close(math.floor(x), y, math.floor(z)) \
                        and self._has_room(pasture.mob, math.floor(x), y, math.floor(z)):
                    world.spawn_mob(pasture.mob, x, z, roam=0.0, pasture=pasture.fence)
                    spawned[pasture.mob] = spawned.get(pasture.mob, 0) + 1
        return spawned

    def cycle(self) -> dict[str, int]:
        """One spawn cycle: :meth:`restock`, then steps 1-3 for the animals without a pasture;
        returns how many of each species spawned."""
        spawned = self.restock()
        if not self._wild:
            return spawned
        world, rules, rng = self.world, self.rules, self.world.rng
        chunks = self.eligible_chunks()
        if self.loaded_animals() > self.cap(len(chunks)):
            return spawned
        sx, sy, sz = world.blocks.shape
        for n in rng.permutation(len(chunks)):
            cx, cz = chunks[n]
            x = cx * CHUNK + int(rng.integers(CHUNK))
            z = cz * CHUNK + int(rng.integers(CHUNK))
            if x >= sx or z >= sz:
                continue
            top = int(world.heights.columns[x, z]) + MC_Y_OFFSET
            y = int(rng.integers(-(-(top + 1) // 16) * 16)) - MC_Y_OFFSET
            if y < 0 or y >= sy or self._opaque[world.blocks[x, y, z]]:
                continue
            in_chunk = 0
            for _pack in range(rules.packs):
                px, pz, species = x, z, None
                for _step in range(math.ceil(rng.random() * rules.pack_steps)):
                    d = rng.integers(rules.spread, size=4)
                    px, pz = px + int(d[0] - d[1]), pz + int(d[2] - d[3])
                    if not (0 <= px < sx and 0 <= pz < sz) or self._too_close(px, y, pz):
                        continue
                    if species is None:
                        species = self._species(px, pz)
                        if species is None:
                            break
                    if species in self._wild and self._can_spawn(species, px, y, pz):
                        world.spawn_mob(species, px + 0.5, pz + 0.5, roam=None)
                        spawned[species] = spawned.get(species, 0) + 1
                        in_chunk += 1
                        if in_chunk >= rules.max_per_chunk:
                            break
                if in_chunk >= rules.max_per_chunk:
                    break
        return spawned

    def _too_close(self, x: int, y: int, z: int) -> bool:
        world = self.world
        ox, oz = world.origin
        p = world.player
        limit = self.rules.min_distance**2
        near_player = (x + 0.5 - p[X]) ** 2 + (y - p[Y]) ** 2 + (z + 0.5 - p[Z]) ** 2 < limit
        sx_, sy_, sz_ = self._spawn_point
        near_spawn = (x + ox - sx_) ** 2 + (y - sy_) ** 2 + (z + oz - sz_) ** 2 < limit
        return near_player or near_spawn

    def _species(self, x: int, z: int) -> str | None:
        """A species drawn by the weights of the biome at column ``(x, z)`` (plains for a
        bounded world's maps); ``None`` where the biome has no passive creatures."""
        window = self.world.window
        biome = PLAINS
        if window is not None:
            biome = int(window.generator.biome(np.array([x + window.corner[0] * CHUNK]),
                                               np.array([z + window.corner[1] * CHUNK]))[0])
        names, cumulative = BIOME_RULES[biome].animal_weights
        if not names:
            return None
        return names[int(np.searchsorted(cumulative, self.world.rng.random(), side="right"))]

    def _can_spawn(self, species: str, x: int, y: int, z: int) -> bool:
        """On grass, with room for the body (no solid block, no water) and no mob in the way,
        lit (no opaque block above)."""
        blocks = self.world.blocks
        if y < 1 or blocks[x, y - 1, z] != self._grass:
            return False
        if self._opaque[blocks[x, y:, z]].any():
            return False
        return self._has_room(species, x, y, z)

    def _has_room(self, species: str, x: int, y: int, z: int) -> bool:
        """Room for the body at column ``(x, z)`` from height ``y``: no solid block, no water,
        no mob in the way."""
        world = self.world
        blocks = world.blocks
        width, height = self._sizes[species]
        for j in range(y, min(y + math.ceil(height), blocks.shape[1])):
            if world.solid[blocks[x, j, z]] or world.water[blocks[x, j, z]]:
                return False
        records = world.mobs.records
        if len(records):
            close = (np.abs(records["x"] - (x + 0.5)) < width) & (
                np.abs(records["z"] - (z + 0.5)) < width) & (np.abs(records["y"] - y) < height)
            if close.any():
                return False
        return True
