"""What a world recipe produces: the voxel grid plus everything placed on it.

A :class:`WorldLayout` is plain data (no behaviour): world recipes in ``recipes.py`` build it from a
seeded generator, and :class:`mrsteve.world.world.World` turns it into a running world.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

EventKind = Literal["spawn_mob", "explode"]

Fence = tuple[float, float, float, float]
"""An area ``(x0, z0, x1, z1)`` of block columns (half-open) a mob never leaves."""


@dataclass(frozen=True)
class MobSpawn:
    """A mob placed at ``(x, z)`` on the ground; it wanders within ``roam`` blocks of that spot
    (``None``: anywhere it can walk) and never leaves ``pasture`` (``None``: no fence).
    ``burning`` sets a zombie alight from the start."""

    kind: str
    x: float
    z: float
    roam: float | None = 8.0
    burning: bool = False
    pasture: Fence | None = None


@dataclass(frozen=True)
class Pasture:
    """Where a herd of ``count`` ``mob`` s lives: its animals never leave ``area`` (``(x0, z0,
    x1, z1)`` columns, half-open), and with the passive spawn cycle the species spawns only
    there, killed animals coming back until the herd is ``count`` again
    (:meth:`~mrsteve.world.spawning.PassiveSpawning.restock`); each wanders within ``roam`` of
    where it spawned."""

    mob: str
    area: tuple[int, int, int, int]
    count: int
    roam: float | None = 8.0

    @property
    def fence(self) -> Fence:
        """:attr:`area` as the fence of the herd's mobs."""
        x0, z0, x1, z1 = self.area
        return float(x0), float(z0), float(x1), float(z1)


@dataclass(frozen=True)
class ScheduledEvent:
    """Something that happens at environment step ``step``.

    ``spawn_mob``: ``count`` mobs of kind ``mob`` appear around ``(x, z)``.
    ``explode``: every block of kind ``block`` (every breakable block when ``None``) within
    ``radius`` of ``(x, z)`` vanishes, like the paper's sugar cane that blows up.
    """

    step: int
    kind: EventKind
    x: float
    z: float
    mob: str | None = None
    count: int = 1
    radius: float = 3.0
    block: str | None = None


@dataclass(frozen=True)
class WorldLayout:
    """A generated world: ``blocks[x, y, z]`` (uint8 block ids, y up) and what stands on it.

    ``spawn`` is the player's feet position ``(x, y, z)`` and ``spawn_yaw`` its heading.
    ``landmarks`` names places that tasks and tests refer to (``"water"``, ``"house_1"``, ...) as
    ``(x, z)`` centres. ``size`` is the grid's ``(x, z)`` extent, wall ring included (the recipes
    put the walls in the outermost columns, so the walkable inside is ``size - 2``).
    """

    name: str
    blocks: np.ndarray
    spawn: tuple[float, float, float]
    spawn_yaw: float = 0.0
    mobs: tuple[MobSpawn, ...] = ()
    events: tuple[ScheduledEvent, ...] = ()
    landmarks: Mapping[str, tuple[float, float]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    pastures: tuple[Pasture, ...] = ()
    """The herds that keep to an area (:class:`Pasture`)."""
    terrain: Any = None
    """For an unbounded world, its :class:`~mrsteve.world.chunks.UnboundedTerrain`: ``blocks``
    is then the first loaded window of chunks, and the world loads more as the player walks."""

    @property
    def size(self) -> tuple[int, int]:
        return int(self.blocks.shape[0]), int(self.blocks.shape[2])
