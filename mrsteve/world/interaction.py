"""What the player's hands do: the inventory, and attack / use along the crosshair.

As in Minecraft 1.11 (MineDojo's version; its success checks read the inventory): holding attack
on a block breaks it after its hardness time (faster with a tool of its ``tool_speed``) and its
drops for the held item go straight into the inventory; attacking a mob swings at it with the held
item's damage once the swing has recovered (its attack cooldown, 1.9+ combat) and the mob is not
still hurt from the last hit; a hit makes it flee, and on death its drops go into the inventory;
using an item applies the ``use_with`` rules (a bucket on a cow gives a milk bucket, shears on a
sheep give 1-3 wool until it regrows, a bucket on water gives a water bucket). Every drop chance and
count is drawn from the world's seeded generator. The crosshair is a ray from the eye of length
``reach``; the nearest of block and mob box is the target. The rules' numbers are data
(``data/content.toml``).
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
    """Rules of attacking and using; defaults are Minecraft's (survival, version 1.11). Damage and
    attack cooldowns of the hand and the weapons are content (``data/content.toml``)."""

    reach: float = 4.5
    """Length of the crosshair ray from the eye, in blocks."""
    hurt_cooldown_steps: int = 10
    """Steps after a hit during which a mob cannot be hurt again (Minecraft's 10 ticks of
    invulnerability)."""
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
        if self.reach <= 0:
            raise ValueError(f"reach must be positive, got {self.reach}")
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
    ``consumed`` (``count`` of an item used up), ``broke`` (a block), ``placed`` (a block put
    down), ``crafted`` (``count`` of an item made), ``killed`` (a mob the player killed),
    ``died`` (a mob that burnt out), ``spawned`` (mobs of kind ``name``), ``exploded`` (``count``
    blocks vanished; ``name`` is the block kind or ``blocks``) or ``regrew`` (a broken block came
    back, :class:`~mrsteve.world.world.Regrowth`).
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

    def block_broken(self, i: int, j: int, k: int, block: int) -> None:
        """Block id ``block`` was removed from cell ``(i, j, k)``."""


class Hands:
    """Attack and use along the crosshair, with Minecraft's breaking progress and cooldowns."""

    def __init__(self, content: Content, config: InteractionConfig):
        self.config = config
        for item in config.consumed_on_use:
            content.item(item)
        for block, rules in config.block_use.items():
            content.block(block)
            for item in (*rules, *rules.values()):
                content.item(item)
        self._content = content
        self._block_use = {
            block: {held: (result, 1, 1) for held, result in rules.items()}
            for block, rules in config.block_use.items()
        }
        shapes = [b.shape for b in content.blocks]
        self.attack_mask = np.array([s not in ("none", "liquid") for s in shapes], dtype=np.bool_)
        self.use_mask = np.array([s != "none" for s in shapes], dtype=np.bool_)
        self.plant_mask = np.array([s == "cross" for s in shapes], dtype=np.bool_)
        self.replace_mask = np.array([b.replaceable for b in content.blocks], dtype=np.bool_)
        held_names = (None, *content.item_names)  # row 0: bare hand, row i + 1: item i held
        self._break_steps_held = np.array(
            [
                [
                    -1
                    if b.unbreakable
                    else _steps(b.hardness / b.tool_speed.get(held, 1.0), minimum=1)
                    for b in content.blocks
                ]
                for held in held_names
            ],
            dtype=np.int64,
        )
        self._drops_held = [[b.drops_with(held) for b in content.blocks] for held in held_names]
        self._attacks_held = [
            (a.damage, _steps(a.cooldown)) for a in map(content.attack, held_names)
        ]
        self._harvests = [
            frozenset(r[0] for tool, r in m.use_with.items() if tool not in config.consumed_on_use)
            for m in content.mobs
        ]
        self.breaking: tuple[int, int, int] | None = None
        """The cell being broken, if any."""
        self.break_progress = 0
        """Steps the current cell has been attacked for."""
        self._break_delay = 0
        self._use_cooldown = 0
        self._attack_cooldown = 0

    @property
    def break_steps(self) -> np.ndarray:
        """``int64[n_blocks]``: steps to break each block id by hand (-1: unbreakable)."""
        return self._break_steps_held[0]

    @staticmethod
    def _held_row(world: HandsWorld) -> int:
        """Row of the held item in the per-held tables (0: a bare hand or an empty slot)."""
        inventory = world.inventory
        held = inventory.held
        return held + 1 if held >= 0 and inventory.counts[held] > 0 else 0

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

    def facing_cell(self, world: HandsWorld) -> tuple[int, int, int] | None:
        """Where a placed block goes: the cell of a replaceable block the crosshair points at
        (tall grass), else the empty cell in front of the face it points at, within reach
        (``None``: no block in reach, or that cell is not air)."""
        ox, oy, oz = world.eye
        dx, dy, dz = world.look
        reach = self.config.reach
        dist, i, j, k, face = cast_ray(world.blocks, self.attack_mask, ox, oy, oz, dx, dy, dz,
                                       reach)
        if face == NO_HIT or dist > reach:
            return None
        if self.replace_mask[world.blocks[i, j, k]]:
            return int(i), int(j), int(k)
        di, dj, dk = FACE_NORMALS[face]
        cell = (i + di, j + dj, k + dk)
        inside = all(0 <= c < n for c, n in zip(cell, world.blocks.shape))
        return cell if inside and world.blocks[cell] == 0 else None

    def act(self, world: HandsWorld, attack: bool, use: bool, events: list[WorldEvent]) -> None:
        """One step of the hands: continue or start breaking, hit a mob, or use the held item."""
        if self._break_delay > 0:
            self._break_delay -= 1
        if self._use_cooldown > 0:
            self._use_cooldown -= 1
        if self._attack_cooldown > 0:
            self._attack_cooldown -= 1
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
        needed = self._break_steps_held[self._held_row(world), world.blocks[i, j, k]]
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
        """Remove the block at ``(i, j, k)`` with its drops for the held item, and the plants it
        held up with theirs."""
        blocks = world.blocks
        drops = self._drops_held[self._held_row(world)]
        while True:
            block = blocks[i, j, k]
            blocks[i, j, k] = 0
            world.block_broken(i, j, k, int(block))
            events.append(WorldEvent("broke", self._content.blocks[block].name))
            for drop in drops[block]:
                if drop.chance >= 1.0 or world.rng.random() < drop.chance:
                    world.collect(drop.item, 1, events)
            j += 1
            if j >= blocks.shape[1] or not self.plant_mask[blocks[i, j, k]]:
                world.heights.refresh(blocks, i, k, i + 1, k + 1)
                return

    def _hit_mob(self, world: HandsWorld, index: int, events: list[WorldEvent]) -> None:
        """Swing at the mob once the last swing has recovered (a swing at a mob still hurt from
        the last hit does no damage but must recover too, as in Minecraft)."""
        if self._attack_cooldown > 0:
            return
        damage, cooldown = self._attacks_held[self._held_row(world)]
        self._attack_cooldown = cooldown
        mob = world.mobs.records[index]
        if mob["hurt_cooldown"] > 0:
            return
        mob["health"] -= damage
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
            count = _draw_count(world.rng, low, high)
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
            rules = self._block_use.get(self._content.blocks[world.blocks[i, j, k]].name, {})
        else:
            return
        rule = rules.get(held)
        if rule is None:
            return
        result, low, high = rule
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
        count = _draw_count(world.rng, low, high)
        if count:
            world.collect(result, count, events)
        self._use_cooldown = self.config.use_cooldown_steps


FACE_NORMALS = ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))
"""The outward normal of each face :func:`~mrsteve.world.raycast.cast_ray` reports (0/1: -x/+x,
2/3: -y/+y, 4/5: -z/+z)."""


def _steps(seconds: float, minimum: int = 0) -> int:
    """Whole steps (ticks) that ``seconds`` take, rounded up: a swing that recovers in 12.5 ticks
    hits at full strength on the 13th."""
    return max(minimum, math.ceil(seconds * TICKS_PER_SECOND - 1e-9))


def _draw_count(rng: np.random.Generator, low: int, high: int) -> int:
    """A count uniform in ``low..high`` (no draw when there is no choice)."""
    return low if low == high else int(rng.integers(low, high + 1))
