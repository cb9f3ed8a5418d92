"""Blocks, items, mobs and semantic classes of the embedded world, loaded from ``data/content.toml``.

The data file is the single source of truth (rules as data, as in Crafter); this module turns it
into frozen dataclasses, checks it once at load time, and exposes dense lookup tables (numpy arrays
indexed by block id) for the numba kernels of the physics and the renderer.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType

import numpy as np

from mrsteve.naming import unknown_name

SHAPES = ("none", "cube", "cross", "liquid")
"""Block shapes: ``none`` (air), ``cube``, ``cross`` (thin plants) and ``liquid`` (water)."""


@dataclass(frozen=True)
class BlockDrop:
    """One item a broken block may give: with probability ``chance``, and only with ``tool`` held
    when one is named. The drops naming the held item replace the drops naming none (oak leaves give
    leaves with shears, else a sapling or an apple by chance)."""

    item: str
    chance: float = 1.0
    tool: str | None = None


@dataclass(frozen=True)
class Block:
    """A block type. ``hardness`` is seconds to break by hand; ``tool_speed`` divides it for the
    named tools; ``drops`` (see :class:`BlockDrop`) go into the inventory when it breaks."""

    id: int
    name: str
    solid: bool
    shape: str
    color: tuple[int, int, int]
    side_color: tuple[int, int, int] | None = None
    top_color: tuple[int, int, int] | None = None
    hardness: float = 0.0
    drops: tuple[BlockDrop, ...] = ()
    tool_speed: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    unbreakable: bool = False
    replaceable: bool = False
    """Whether a block placed onto it takes its cell, as Minecraft's tall grass does."""
    semantic: str | None = None
    """The semantic class the block shows as (``None``: its own name): a crafting table reads as
    planks to the semantic stand-in, so its classes, and every encoder's dimension, stay as
    calibrated."""

    def drops_with(self, held: str | None) -> tuple[BlockDrop, ...]:
        """The drops that may come when the block is broken with ``held`` in hand (``None``: a
        bare hand): those naming ``held`` if any do, else those naming no tool."""
        tooled = tuple(d for d in self.drops if d.tool is not None and d.tool == held)
        return tooled or tuple(d for d in self.drops if d.tool is None)


@dataclass(frozen=True)
class Attack:
    """How hard and how often something hits a mob: ``damage`` in half-hearts, ``cooldown`` the
    seconds it takes to recover full strength after a swing (Minecraft 1.9+ combat)."""

    damage: float
    cooldown: float


@dataclass(frozen=True)
class Item:
    """An inventory item; its index in :attr:`Content.items` is its slot in inventory vectors."""

    id: int
    name: str
    attack: Attack | None = None
    """A weapon's hit; ``None``: it hits like a bare hand (:attr:`Content.hand`)."""
    places: str | None = None
    """The block the item puts down when placed (``None``: it cannot be placed)."""


@dataclass(frozen=True)
class Mob:
    """A mob kind: an axis-aligned box ``width`` x ``height`` with its feet at its position."""

    id: int
    name: str
    width: float
    height: float
    health: float
    speed: float
    flee_steps: int
    color: tuple[int, int, int]
    drops: tuple[tuple[str, int, int], ...]
    """``(item, min, max)`` given on death, the count drawn uniformly in ``min..max``."""
    use_with: Mapping[str, tuple[str, int, int]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """``{held item: (result, min, max)}``: what using the item on the mob gives."""
    daylight_burn_steps: int | None = None


@dataclass(frozen=True)
class Content:
    """Everything in ``content.toml``, with name lookups and dense tables for compiled kernels."""

    blocks: tuple[Block, ...]
    items: tuple[Item, ...]
    mobs: tuple[Mob, ...]
    semantic_classes: tuple[str, ...]
    hand: Attack = Attack(1.0, 0.25)
    """The hit of a bare hand, and of any item that is not a weapon."""

    def block(self, name: str) -> Block:
        """The block called ``name``; unknown names raise ``ValueError`` listing the known ones."""
        return _lookup(self.blocks, name, "block")

    def item(self, name: str) -> Item:
        """The item called ``name``; unknown names raise ``ValueError`` listing the known ones."""
        return _lookup(self.items, name, "item")

    def mob(self, name: str) -> Mob:
        """The mob kind called ``name``; unknown names raise ``ValueError`` listing the known."""
        return _lookup(self.mobs, name, "mob")

    def attack(self, held: str | None) -> Attack:
        """The hit made with ``held`` in hand (``None``: a bare hand)."""
        attack = None if held is None else self.item(held).attack
        return self.hand if attack is None else attack

    def semantic_id(self, name: str) -> int:
        """The semantic class id of ``name`` (``sky``, a block name, a mob name, ``burning_zombie``)."""
        try:
            return self.semantic_classes.index(name)
        except ValueError:
            raise unknown_name("semantic class", name, self.semantic_classes) from None

    @property
    def item_names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.items)

    @property
    def block_solid(self) -> np.ndarray:
        """``bool[n_blocks]``: whether a block id collides."""
        return np.array([b.solid for b in self.blocks], dtype=np.bool_)

    @property
    def block_shape(self) -> np.ndarray:
        """``uint8[n_blocks]``: index of each block's shape in :data:`SHAPES`."""
        return np.array([SHAPES.index(b.shape) for b in self.blocks], dtype=np.uint8)

    @property
    def block_colors(self) -> np.ndarray:
        """``uint8[n_blocks, 3, 3]``: top, side and bottom colour of each block id."""
        table = np.zeros((len(self.blocks), 3, 3), dtype=np.uint8)
        for b in self.blocks:
            table[b.id, 0] = b.top_color or b.color
            table[b.id, 1] = b.side_color or b.color
            table[b.id, 2] = b.side_color if b.name == "grass_block" else b.color
        return table

    @property
    def block_semantic(self) -> np.ndarray:
        """``uint8[n_blocks]``: semantic class of each block id (air maps to sky)."""
        return np.array(
            [self.semantic_id("sky" if b.name == "air" else b.semantic or b.name)
             for b in self.blocks],
            dtype=np.uint8,
        )


def _lookup(entries, name, kind):
    for entry in entries:
        if entry.name == name:
            return entry
    raise unknown_name(kind, name, (e.name for e in entries))


def _rgb(value, where) -> tuple[int, int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(c, int) and 0 <= c <= 255 for c in value)
    ):
        raise ValueError(f"{where}: colour must be three integers in 0..255, got {value!r}")
    return (value[0], value[1], value[2])


def _attack(entry: Mapping, where: str) -> Attack | None:
    """``damage`` and ``attack_cooldown`` (seconds) of an item or the hand; both or neither."""
    if "damage" not in entry and "attack_cooldown" not in entry:
        return None
    try:
        attack = Attack(float(entry["damage"]), float(entry["attack_cooldown"]))
    except KeyError as missing:
        raise ValueError(f"{where}: damage and attack_cooldown go together; {missing} is missing")
    if not attack.damage > 0 or attack.cooldown < 0:
        raise ValueError(
            f"{where}: damage must be positive and attack_cooldown non-negative, got {attack}"
        )
    return attack


def _block_drop(raw: Mapping, item_names: set[str], where: str) -> BlockDrop:
    unknown = sorted(set(raw) - {"item", "chance", "tool"})
    if unknown:
        raise ValueError(f"{where}: unknown drop keys {unknown}; accepted: item, chance, tool")
    drop = BlockDrop(raw.get("item"), float(raw.get("chance", 1.0)), raw.get("tool"))
    for name in (drop.item, drop.tool):
        if name is not None and name not in item_names:
            raise ValueError(f"{where}: drop names the unknown item {name!r}")
    if drop.item is None or not 0.0 < drop.chance <= 1.0:
        raise ValueError(f"{where}: a drop needs an item and a chance in (0, 1], got {dict(raw)}")
    return drop


def _counted(raw, item_names: set[str], where: str) -> tuple[str, int, int]:
    """``[item, min, max]``: an item and the range its count is drawn from."""
    if not (isinstance(raw, list) and len(raw) == 3):
        raise ValueError(f"{where}: expected [item, min, max], got {raw!r}")
    name, low, high = raw[0], int(raw[1]), int(raw[2])
    if name not in item_names or not 0 <= low <= high:
        raise ValueError(f"{where}: bad [item, min, max] {raw!r} (known item, 0 <= min <= max)")
    return (name, low, high)


def parse_content(raw: Mapping) -> Content:
    """Build and validate :class:`Content` from the parsed TOML mapping."""
    items = tuple(
        Item(id=i, name=entry["name"], attack=_attack(entry, f"content: item {entry['name']!r}"),
             places=entry.get("places"))
        for i, entry in enumerate(raw["item"])
    )
    item_names = {item.name for item in items}
    if len(item_names) != len(items):
        raise ValueError("content: duplicate item names")
    hand = _attack(raw.get("hand", {}), "content: [hand]") or Attack(1.0, 0.25)

    blocks = []
    for i, entry in enumerate(raw["block"]):
        where = f"content: block {entry.get('name', i)!r}"
        if entry["id"] != i:
            raise ValueError(f"{where}: ids must be 0, 1, 2, ... in file order, got {entry['id']}")
        if entry["shape"] not in SHAPES:
            raise ValueError(f"{where}: {unknown_name('shape', entry['shape'], SHAPES)}")
        if "drop" in entry or "drop_chance" in entry:
            raise ValueError(
                f"{where}: write drops = [{{ item = ..., chance = ... }}], not drop / drop_chance"
            )
        drops = tuple(_block_drop(d, item_names, where) for d in entry.get("drops", ()))
        tool_speed = {tool: float(speed) for tool, speed in entry.get("tool_speed", {}).items()}
        for tool, speed in tool_speed.items():
            if tool not in item_names or not speed > 0:
                raise ValueError(
                    f"{where}: tool_speed {tool!r} = {speed} needs a known item and "
                    f"a positive speed"
                )
        blocks.append(
            Block(
                id=i,
                name=entry["name"],
                solid=bool(entry["solid"]),
                shape=entry["shape"],
                color=_rgb(entry["color"], where),
                side_color=_rgb(entry["side_color"], where) if "side_color" in entry else None,
                top_color=_rgb(entry["top_color"], where) if "top_color" in entry else None,
                hardness=float(entry.get("hardness", 0.0)),
                drops=drops,
                tool_speed=MappingProxyType(tool_speed),
                unbreakable=bool(entry.get("unbreakable", False)),
                replaceable=bool(entry.get("replaceable", False)),
                semantic=entry.get("semantic"),
            )
        )
    if blocks[0].name != "air":
        raise ValueError("content: block 0 must be air")
    if len(blocks) > 255:
        raise ValueError("content: at most 255 block types fit the uint8 voxel grid")

    mobs = []
    for i, entry in enumerate(raw["mob"]):
        where = f"content: mob {entry['name']!r}"
        drops = tuple(_counted(d, item_names, f"{where}: drop") for d in entry["drops"])
        use_with = {
            tool: _counted(result, item_names, f"{where}: use_with {tool!r}")
            for tool, result in entry.get("use_with", {}).items()
        }
        for tool in use_with:
            if tool not in item_names:
                raise ValueError(f"{where}: use_with names the unknown item {tool!r}")
        mobs.append(
            Mob(
                id=i,
                name=entry["name"],
                width=float(entry["width"]),
                height=float(entry["height"]),
                health=float(entry["health"]),
                speed=float(entry["speed"]),
                flee_steps=int(entry["flee_steps"]),
                color=_rgb(entry["color"], where),
                drops=drops,
                use_with=MappingProxyType(use_with),
                daylight_burn_steps=entry.get("daylight_burn_steps"),
            )
        )

    block_names = {block.name for block in blocks}
    for item in items:
        if item.places is not None and item.places not in block_names - {"air"}:
            raise ValueError(f"content: item {item.name!r} places the unknown block "
                             f"{item.places!r}")
    classes = tuple(raw["semantic"]["classes"])
    shown = {block.name for block in blocks[1:] if block.semantic is None}
    for block in blocks:
        if block.semantic is not None and block.semantic not in shown:
            raise ValueError(f"content: block {block.name!r} shows as {block.semantic!r}, which "
                             "is not a block shown as itself")
    expected = {"sky", "burning_zombie"} | shown | {m.name for m in mobs}
    if set(classes) != expected or len(classes) != len(expected):
        missing = sorted(expected - set(classes))
        extra = sorted(set(classes) - expected)
        raise ValueError(
            f"content: semantic classes must name sky, every block shown as itself, every mob "
            f"and burning_zombie once (missing {missing}, unexpected {extra})"
        )
    return Content(tuple(blocks), items, tuple(mobs), classes, hand)


@cache
def load_content() -> Content:
    """The embedded world's content, parsed once per process."""
    text = resources.files("mrsteve.world").joinpath("data/content.toml").read_text("utf-8")
    return parse_content(tomllib.loads(text))
