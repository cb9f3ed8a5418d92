"""What the player's hands do: the inventory, and attack / use along the crosshair.

As in Minecraft (and MineDojo's success checks, which read the inventory): holding attack on a
block breaks it after its hardness time and its drop goes straight into the inventory; attacking a
mob hurts it (with a hurt cooldown), makes it flee, and on death its drops go into the inventory;
using an item applies the ``use_with`` rules (a bucket on a cow gives a milk bucket, shears on a
sheep give wool until it regrows, a bucket on water gives a water bucket). The crosshair is a ray
from the eye of length ``reach``; the nearest of block and mob box is the target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple, Protocol

import numpy as np

from mrsteve.naming import lookup
from mrsteve.world.content import Content
from mrsteve.world.mobs import Mobs, pick_mob
from mrsteve.world.physics import TICKS_PER_SECOND
from mrsteve.world.raycast import NO_HIT, ColumnHeights, cast_ray


@dataclass(frozen=True)
class InteractionConfig:
    """Rules of attacking and using; defaults are Minecraft's (survival, version 1.11)."""

    reach: float = 4.5
    """Length of the crosshair ray from the eye, in blocks."""
    hand_damage: float = 1.0
    """Damage of an attack with anything but the weapon."""
    weapon: str = "sword"
    """The item that deals ``weapon_damage``."""
    weapon_damage: float = 6.0
    """Damage of an attack with the weapon held (an iron sword)."""
    hurt_cooldown_steps: int = 10
    """Steps after a hit during which a mob cannot be hurt again."""
    break_delay_steps: int = 5
    """Steps after breaking a block before the next one starts to break."""
    use_cooldown_steps: int = 4
    """Steps between two uses while use is held."""
    regrow_steps: int = 1200
    """Steps before a mob harvested with a kept tool (a sheared sheep) can be harvested again."""
    consumed_on_use: tuple[str, ...] = ("bucket",)
    """Items turned into the result when used (an empty bucket becomes a filled one); other items
    (shears) are kept and the mob must regrow."""
    block_use: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType(
            {"water": MappingProxyType({"bucket": "water_bucket"})}
        )
    )
    """``{block: {held item: result}}``: what using an item on a block gives (the water stays, like
    an infinite pond)."""

    def __post_init__(self):
        if self.reach <= 0 or self.hand_damage <= 0 or self.weapon_damage <= 0:
            raise ValueError("reach, hand_damage and weapon_damage must be positive")
        for name in (
            "hurt_cooldown_steps",
            "break_delay_steps",
            "use_cooldown_steps",
            "regrow_steps",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be non-negative, got {getattr(self, name)}")


class WorldEvent(NamedTuple):
    """Something that happened during a step.

    ``kind`` is one of ``collected`` (``name`` is an item, ``count`` how many arrived),
    ``consumed`` (an item used up), ``broke`` (a block), ``killed`` (a mob the player killed),
    ``died`` (a mob that burnt out), ``spawned`` (mobs of kind ``name``) or ``exploded`` (``count``
    blocks vanished; ``name`` is the block kind or ``blocks``).
    """

    kind: str
    name: str
    count: int = 1


class Target(NamedTuple):
    """What the crosshair points at: ``kind`` is ``block``, ``mob`` or ``none``; ``cell`` is the
    block's ``(i, j, k)``, ``mob`` the mob's index, ``distance`` from the eye."""

    kind: str
    distance: float
    cell: tuple[int, int, int] = (-1, -1, -1)
    mob: int = -1


class Inventory:
    """Item counts in content order (the ``inventory`` observation) and the held item."""

    def __init__(self, content: Content):
        self.content = content
        self.counts = np.zeros(len(content.items), dtype=np.int64)
        self.held = -1
        self._index = {item.name: item.id for item in content.items}

    def index(self, item: str) -> int:
        """Slot of ``item``; unknown names raise ``ValueError`` listing the known items."""
        return lookup(self._index, item, "item")

    @property
    def held_item(self) -> str | None:
        """Name of the item in the main hand (``None`` for an empty hand)."""
        if self.held < 0 or self.counts[self.held] <= 0:
            return None
        return self.content.items[self.held].name

    def give(self, item: str, count: int = 1) -> None:
        if count < 0:
            raise ValueError(f"count must be non-negative, got {count}")
        self.counts[self.index(item)] += count

    def take(self, item: str, count: int = 1) -> None:
        slot = self.index(item)
        if not 0 <= count <= self.counts[slot]:
            raise ValueError(f"cannot take {count} {item}: holding {self.counts[slot]}")
        self.counts[slot] -= count

    def clear(self, items: Sequence[str] | None = None) -> None:
        """Remove every ``items`` (all items when ``None``) from the inventory."""
        if items is None:
            self.counts[:] = 0
        else:
            self.counts[[self.index(item) for item in items]] = 0

    def as_dict(self) -> dict[str, int]:
        """``{item: count}`` of the items held (counts above zero)."""
        return {self.content.items[i].name: int(n) for i, n in enumerate(self.counts) if n > 0}


class HandsWorld(Protocol):
    """What of a world the hands act on (:class:`mrsteve.world.world.World` is one).

    Declared here so that this module need not import the world that owns the hands.
    """

    blocks: np.ndarray
    """Block ids, ``(x, y, z)``."""
    heights: ColumnHeights
    """Column heights, refreshed where a block is broken."""
    mobs: Mobs
    inventory: Inventory
    rng: np.random.Generator
    """Drop chances and counts."""

    @property
    def eye(self) -> tuple[float, float, float]: ...

    @property
    def look(self) -> tuple[float, float, float]: ...

    def collect(self, item: str, count: int, events: list[WorldEvent] | None = None) -> None: ...


class Hands:
    """Attack and use along the crosshair, with Minecraft's breaking progress and cooldowns."""

    def __init__(self, content: Content, config: InteractionConfig):
        self.config = config
        for item in (config.weapon, *config.consumed_on_use):
            content.item(item)
        for block, rules in config.block_use.items():
            content.block(block)
            for item in (*rules, *rules.values()):
                content.item(item)
        self._content = content
        shapes = [b.shape for b in content.blocks]
        self.attack_mask = np.array([s not in ("none", "liquid") for s in shapes], dtype=np.bool_)
        self.use_mask = np.array([s != "none" for s in shapes], dtype=np.bool_)
        self.plant_mask = np.array([s == "cross" for s in shapes], dtype=np.bool_)
        self.break_steps = np.array(
            [
                -1 if b.unbreakable else max(1, math.ceil(b.hardness * TICKS_PER_SECOND - 1e-9))
                for b in content.blocks
            ],
            dtype=np.int64,
        )
        self._weapon = content.item(config.weapon).id
        self._harvests = [
            frozenset(r for tool, r in m.use_with.items() if tool not in config.consumed_on_use)
            for m in content.mobs
        ]
        self.breaking: tuple[int, int, int] | None = None
        """The cell being broken, if any."""
        self.break_progress = 0
        """Steps the current cell has been attacked for."""
        self._break_delay = 0
        self._use_cooldown = 0

    def target(self, world: HandsWorld, *, use: bool = False) -> Target:
        """What the crosshair points at (``use``: water counts as a target)."""
        ox, oy, oz = world.eye
        dx, dy, dz = world.look
        reach = self.config.reach
        mask = self.use_mask if use else self.attack_mask
        dist, i, j, k, face = cast_ray(world.blocks, mask, ox, oy, oz, dx, dy, dz, reach)
        block_dist = dist if face != NO_HIT and dist <= reach else math.inf
        mob, mob_dist = -1, math.inf
        if len(world.mobs):
            mob, mob_dist = pick_mob(
                world.mobs.records, world.mobs.kinds, ox, oy, oz, dx, dy, dz, min(reach, block_dist)
            )
        if mob >= 0:
            return Target("mob", mob_dist, mob=mob)
        if block_dist <= reach:
            return Target("block", block_dist, cell=(i, j, k))
        return Target("none", math.inf)

    def act(self, world: HandsWorld, attack: bool, use: bool, events: list[WorldEvent]) -> None:
        """One step of the hands: continue or start breaking, hit a mob, or use the held item."""
        if self._break_delay > 0:
            self._break_delay -= 1
        if self._use_cooldown > 0:
            self._use_cooldown -= 1
        if attack:
            self._attack(world, events)
        else:
            self.breaking, self.break_progress = None, 0
        if use and self._use_cooldown == 0:
            self._use(world, events)

    def _attack(self, world: HandsWorld, events: list[WorldEvent]) -> None:
        target = self.target(world)
        if target.kind == "mob":
            self.breaking, self.break_progress = None, 0
            self._hit_mob(world, target.mob, events)
            return
        if target.kind != "block" or self._break_delay > 0:
            self.breaking, self.break_progress = None, 0
            return
        if target.cell != self.breaking:
            self.breaking, self.break_progress = target.cell, 0
        i, j, k = target.cell
        needed = self.break_steps[world.blocks[i, j, k]]
        if needed < 0:
            return
        self.break_progress += 1
        if self.break_progress >= needed:
            self.breaking, self.break_progress = None, 0
            self._break_delay = self.config.break_delay_steps
            self.break_block(world, i, j, k, events)

    def break_block(
        self, world: HandsWorld, i: int, j: int, k: int, events: list[WorldEvent]
    ) -> None:
        """Remove the block at ``(i, j, k)`` with its drop, and the plants it held up."""
        blocks = world.blocks
        while True:
            block = self._content.blocks[blocks[i, j, k]]
            blocks[i, j, k] = 0
            events.append(WorldEvent("broke", block.name))
            if block.drop is not None and world.rng.random() < block.drop_chance:
                world.collect(block.drop, 1, events)
            j += 1
            if j >= blocks.shape[1] or not self.plant_mask[blocks[i, j, k]]:
                world.heights.refresh(blocks, i, k, i + 1, k + 1)
                return

    def _hit_mob(self, world: HandsWorld, index: int, events: list[WorldEvent]) -> None:
        mob = world.mobs.records[index]
        if mob["hurt_cooldown"] > 0:
            return
        held = world.inventory.held
        weapon = held == self._weapon and world.inventory.counts[held] > 0
        mob["health"] -= self.config.weapon_damage if weapon else self.config.hand_damage
        mob["hurt_cooldown"] = self.config.hurt_cooldown_steps
        kind = self._content.mobs[int(mob["kind"])]
        mob["flee_steps"] = kind.flee_steps
        if mob["health"] > 0:
            return
        sheared = mob["regrow_steps"] > 0
        world.mobs.remove(np.array([index]))
        events.append(WorldEvent("killed", kind.name))
        for item, low, high in kind.drops:
            if sheared and item in self._harvests[kind.id]:
                continue
            count = int(world.rng.integers(low, high + 1))
            if count:
                world.collect(item, count, events)

    def _use(self, world: HandsWorld, events: list[WorldEvent]) -> None:
        held = world.inventory.held_item
        if held is None:
            return
        target = self.target(world, use=True)
        if target.kind == "mob":
            mob = world.mobs.records[target.mob]
            rules = self._content.mobs[int(mob["kind"])].use_with
        elif target.kind == "block":
            i, j, k = target.cell
            rules = self.config.block_use.get(self._content.blocks[world.blocks[i, j, k]].name, {})
        else:
            return
        result = rules.get(held)
        if result is None:
            return
        inventory = world.inventory
        if held in self.config.consumed_on_use:
            inventory.take(held)
            events.append(WorldEvent("consumed", held))
            if inventory.counts[inventory.held] == 0:  # the filled bucket takes the empty hand
                inventory.held = inventory.index(result)
        elif target.kind == "mob":
            if mob["regrow_steps"] > 0:
                return
            mob["regrow_steps"] = self.config.regrow_steps
        world.collect(result, 1, events)
        self._use_cooldown = self.config.use_cooldown_steps
