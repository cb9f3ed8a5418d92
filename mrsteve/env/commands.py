"""Set-up commands for ``VoxelEnv.reset(options=...)``: give or clear items, teleport, spawn mobs,
schedule events, the way tasks set up MineDojo worlds with chat commands.

``options`` is a mapping from command name to its argument; commands run in the order of
:data:`COMMANDS` whatever the mapping's order::

    env.reset(seed=0, options={
        "clear": True,                                   # or a list of item names
        "give": {"bucket": 1, "shears": 1},
        "equip": "bucket",                               # item held in the main hand (None: empty)
        "teleport": {"x": 50.5, "z": 20.5, "yaw": 90.0}, # y (feet) and pitch optional
        "spawn_mobs": [{"kind": "cow", "x": 55, "z": 20, "count": 2, "roam": 8.0}],
        "schedule": [{"step": 500, "kind": "spawn_mob", "mob": "spider", "x": 60, "z": 60,
                      "count": 3}],
        "cut_trees": "eye",                              # or "foot" (:data:`TREE_CUTS`)
    })

Positions are absolute world coordinates (as in the ``pose`` observation). ``spawn_mobs`` entries
take the fields of :class:`~mrsteve.world.layout.MobSpawn` plus ``count``; ``schedule`` entries the
fields of :class:`~mrsteve.world.layout.ScheduledEvent` (or are instances of it), with ``step``
counted in world steps since reset, no-op steps included. The form of the options is checked
before the world is built, names and positions as the commands are applied to it; a bad command
raises ``ValueError``, ``KeyError`` or ``TypeError`` naming what is accepted.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mrsteve.naming import check_name
from mrsteve.world.layout import MobSpawn, ScheduledEvent
from mrsteve.world.world import World

COMMANDS = ("clear", "give", "equip", "teleport", "spawn_mobs", "schedule", "cut_trees")
"""Accepted option keys, in the order they are applied."""

TREE_CUTS = {
    "eye": "each trunk's log at a standing player's eye level (the second from the foot) taken, "
           "as an agent takes its first log",
    "foot": "every log open at its side taken but the foot's: what is left of a tree once the "
            "logs a player reaches standing beside it are gone, the foot log aside (the rest "
            "sit inside the leaves)",
}
"""What ``cut_trees`` does to every oak trunk of the world."""

_TELEPORT_FIELDS = ("x", "z", "y", "yaw", "pitch")


@dataclass(frozen=True)
class SetupCommands:
    """Parsed, validated ``reset`` options (see the module docstring)."""

    clear: tuple[str, ...] | None = ()
    """Items to remove from the inventory (``None``: all of them)."""
    give: tuple[tuple[str, int], ...] = ()
    equip: str | None = None
    equip_given: bool = False
    """Whether ``equip`` was set (``equip=None`` then means an empty hand)."""
    teleport: Mapping[str, float] | None = None
    spawn_mobs: tuple[MobSpawn, ...] = ()
    schedule: tuple[ScheduledEvent, ...] = ()
    cut_trees: str | None = None
    """A key of :data:`TREE_CUTS` (``None``: the trees stay whole)."""

    def apply(self, world: World) -> None:
        """Run the commands on ``world`` in :data:`COMMANDS` order."""
        if self.clear != ():
            world.inventory.clear(self.clear)
        for item, count in self.give:
            world.inventory.give(item, count)
        if self.equip_given:
            world.equip(self.equip)
        ox, oz = world.origin  # positions are given in the frame the pose is reported in
        if self.teleport is not None:
            world.teleport(**(self.teleport | {"x": self.teleport["x"] - ox,
                                               "z": self.teleport["z"] - oz}))
        for spawn in self.spawn_mobs:
            world.spawn_mob(spawn.kind, spawn.x - ox, spawn.z - oz, roam=spawn.roam,
                            burning=spawn.burning)
        for event in self.schedule:
            world.schedule(dataclasses.replace(event, x=event.x - ox, z=event.z - oz))
        if self.cut_trees is not None:
            cut_trees(world, self.cut_trees)


def cut_trees(world: World, how: str) -> int:
    """Take logs from every oak trunk of ``world`` as :data:`TREE_CUTS` ``how`` says (no drops);
    returns how many went."""
    log = world.content.block("oak_log").id
    blocks = world.blocks
    taken = 0
    for i, k in sorted({(int(i), int(k)) for i, _, k in np.argwhere(blocks == log)}):
        heights = np.flatnonzero(blocks[i, :, k] == log)
        if how == "eye":
            cells = [heights[0] + 1] if heights[0] + 1 in heights else []
        else:
            cells = [j for j in heights[1:] if _open_at_a_side(blocks, i, int(j), k)]
        for j in cells:
            blocks[i, j, k] = 0
        if cells:
            world.heights.refresh(blocks, i, k, i + 1, k + 1)
            taken += len(cells)
    return taken


def _open_at_a_side(blocks: np.ndarray, i: int, j: int, k: int) -> bool:
    """Whether a horizontal neighbour of cell ``(i, j, k)`` inside the world is air."""
    return any(0 <= i + di < blocks.shape[0] and 0 <= k + dk < blocks.shape[2]
               and blocks[i + di, j, k + dk] == 0
               for di, dk in ((1, 0), (-1, 0), (0, 1), (0, -1)))


def parse_commands(options: Mapping | None) -> SetupCommands:
    """Check the form of ``options`` (keys, types, fields); names are checked by the world."""
    if options is None:
        return SetupCommands()
    if not isinstance(options, Mapping):
        raise TypeError(
            f"reset options must be a mapping with keys {', '.join(COMMANDS)}, "
            f"got {type(options).__name__}"
        )
    for key in options:
        check_name(key, COMMANDS, "reset option")
    parsed: dict = {}
    if "clear" in options:
        parsed["clear"] = _parse_clear(options["clear"])
    if "give" in options:
        parsed["give"] = _parse_give(options["give"])
    if "equip" in options:
        parsed["equip"], parsed["equip_given"] = options["equip"], True
    if "teleport" in options:
        parsed["teleport"] = _parse_teleport(options["teleport"])
    if "spawn_mobs" in options:
        parsed["spawn_mobs"] = _parse_spawns(options["spawn_mobs"])
    if "schedule" in options:
        parsed["schedule"] = _parse_schedule(options["schedule"])
    if "cut_trees" in options:
        parsed["cut_trees"] = check_name(options["cut_trees"], TREE_CUTS, "cut_trees")
    return SetupCommands(**parsed)


def _parse_clear(value) -> tuple[str, ...] | None:
    if value is True:
        return None
    if value is False:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"'clear' takes True (everything) or a list of item names, got {value!r}")
    return tuple(value)


def _parse_give(value) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, Mapping):
        raise TypeError(f"'give' takes a mapping {{item: count}}, got {value!r}")
    for item, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(
                f"'give' count of {item!r} must be a non-negative integer, got {count!r}"
            )
    return tuple(value.items())


def _parse_teleport(value) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"'teleport' takes a mapping with keys {', '.join(_TELEPORT_FIELDS)}, got {value!r}"
        )
    unknown = sorted(set(value) - set(_TELEPORT_FIELDS))
    if unknown or "x" not in value or "z" not in value:
        raise ValueError(
            f"'teleport' takes x and z (and optionally y, yaw, pitch), got keys {sorted(value)}"
        )
    parsed = {}
    for key, number in value.items():
        if number is None and key in ("y", "yaw", "pitch"):
            continue
        if (
            isinstance(number, bool)
            or not isinstance(number, (int, float))
            or not math.isfinite(number)
        ):
            raise ValueError(f"'teleport' {key} must be a finite number, got {number!r}")
        parsed[key] = float(number)
    return parsed


def _entries(value, name: str) -> list:
    if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(f"{name!r} takes a list of entries, got {value!r}")
    return list(value)


def _build(cls, entry, name: str, extra: tuple[str, ...] = ()):
    accepted = [f.name for f in dataclasses.fields(cls)] + list(extra)
    if not isinstance(entry, Mapping):
        raise TypeError(
            f"{name!r} entries are mappings with keys {', '.join(accepted)}, got {entry!r}"
        )
    for key in entry:
        check_name(key, accepted, f"{name!r} field")
    fields = {key: value for key, value in entry.items() if key not in extra}
    try:
        return cls(**fields)
    except TypeError as error:
        raise ValueError(f"{name!r} entry {dict(entry)!r}: {error}") from None


def _parse_spawns(value) -> tuple[MobSpawn, ...]:
    spawns = []
    for entry in _entries(value, "spawn_mobs"):
        spawn = (
            entry
            if isinstance(entry, MobSpawn)
            else _build(MobSpawn, entry, "spawn_mobs", ("count",))
        )
        count = entry.get("count", 1) if isinstance(entry, Mapping) else 1
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"'spawn_mobs' count must be a positive integer, got {count!r}")
        spawns.extend([spawn] * count)
    return tuple(spawns)


def _parse_schedule(value) -> tuple[ScheduledEvent, ...]:
    return tuple(
        entry if isinstance(entry, ScheduledEvent) else _build(ScheduledEvent, entry, "schedule")
        for entry in _entries(value, "schedule")
    )
