"""A running world: the voxel grid, the player, the mobs, the inventory and the scheduled events.

:class:`World` is built from a :class:`~mrsteve.world.layout.WorldLayout` and a seeded
``numpy.random.Generator`` (every random choice of the simulation is drawn from it, so the same
seed and the same controls give the same world). :meth:`World.step` advances one tick (1/20 s):
camera, held item, hands (:mod:`~mrsteve.world.interaction`), player physics
(:mod:`~mrsteve.world.physics`), mobs (:mod:`~mrsteve.world.mobs`), then the events scheduled
for the new step. Constant daylight, no weather and no hostile spawning (the paper's peaceful
set-up). Scripted policies and tests drive it directly; :mod:`mrsteve.env` wraps it for Gymnasium.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from mrsteve.naming import check_name
from mrsteve.world.chunks import ChunkWindow
from mrsteve.world.content import Content, load_content
from mrsteve.world.crafting import TABLE, CraftResult, load_recipes
from mrsteve.world.interaction import Hands, InteractionConfig, Inventory, Target, WorldEvent
from mrsteve.world.layout import ScheduledEvent, WorldLayout
from mrsteve.world.mobs import MobConfig, Mobs, ground_height
from mrsteve.world.physics import (
    EYE_HEIGHT,
    IN_WATER,
    ON_GROUND,
    PLAYER_HEIGHT,
    PLAYER_WIDTH,
    VX,
    VY,
    VZ,
    X,
    Y,
    Z,
    box_collides,
    new_player_state,
    settle_player,
    step_player,
)
from mrsteve.world.raycast import ColumnHeights, look_direction
from mrsteve.world.spawning import PassiveSpawning, SpawnRules

EVENT_KINDS = ("spawn_mob", "explode")
"""Kinds of :class:`~mrsteve.world.layout.ScheduledEvent` the world runs."""

SPAWN_ROAM = 8.0
"""Roaming radius of mobs spawned by a scheduled event."""


@dataclass(frozen=True)
class Regrowth:
    """A rule beyond Minecraft, for diagnostics: a broken block of a kind in :attr:`blocks`
    comes back in its cell :attr:`steps` steps later (later still while the player or a mob
    stands in the cell; never if something else was put there). Long-Instruction's agents solve
    several times the paper's tasks, and with it the map's logs cannot run out."""

    steps: int
    """Steps from the break to the block's return (at least 1)."""
    blocks: tuple[str, ...] = ("oak_log",)
    """Block kinds that come back."""

    def __post_init__(self) -> None:
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise ValueError(f"regrowth steps must be a positive integer, got {self.steps!r}")


HERDS = ("wander", "static")
"""The values of :attr:`WorldConfig.herds`."""


@dataclass(frozen=True)
class WorldConfig:
    """Rules of the simulation beyond the data file."""

    interaction: InteractionConfig = field(default_factory=InteractionConfig)
    """Attacking, breaking and using items."""
    mobs: MobConfig = field(default_factory=MobConfig)
    """How mobs wander and flee."""
    spawn_cycle: SpawnRules | None = None
    """Minecraft's passive spawn cycle (:class:`~mrsteve.world.spawning.SpawnRules`); ``None``:
    animals never come back once killed."""
    regrowth: Regrowth | None = None
    """Broken blocks that come back (:class:`Regrowth`, bounded worlds only); ``None``: none
    does, as in Minecraft."""
    herds: str = "wander"
    """How the animals of a pasture (:class:`~mrsteve.world.layout.Pasture`) move: ``wander``
    (Minecraft's ``EntityAIWander`` within the layout's ``roam``; killed animals come back at
    random columns of the pasture), or ``static``, a diagnostic beyond Minecraft: each stands
    where it first stood (it still flees when hit, then walks back) and a killed one comes back
    at that spot, so a sighting of a herd stays true however old it is."""

    def __post_init__(self) -> None:
        check_name(self.herds, HERDS, "herds")


class Controls(NamedTuple):
    """The player's input for one tick (a MineRL-style action).

    ``camera_pitch`` / ``camera_yaw`` are changes in degrees (positive pitch looks down, positive
    yaw turns right); ``equip`` is the index of the item to hold (content order), -1 keeps it.
    """

    forward: bool = False
    back: bool = False
    left: bool = False
    right: bool = False
    jump: bool = False
    sneak: bool = False
    sprint: bool = False
    attack: bool = False
    use: bool = False
    camera_pitch: float = 0.0
    camera_yaw: float = 0.0
    equip: int = -1
    place: bool = False
    """Put the held block down in front of the face the crosshair points at."""
    craft: int = -1
    """Index of the recipe to craft once (:attr:`~mrsteve.world.crafting.RecipeBook.names`); -1:
    none."""


def wrap_yaw(yaw: float) -> float:
    """``yaw`` in degrees wrapped to ``[-180, 180)``."""
    return (yaw + 180.0) % 360.0 - 180.0


class World:
    """The embedded world in motion; see the module docstring for what one step does."""

    def __init__(
        self,
        layout: WorldLayout,
        rng: np.random.Generator,
        config: WorldConfig = WorldConfig(),
        content: Content | None = None,
    ):
        self.content = content if content is not None else load_content()
        blocks = layout.blocks
        if not isinstance(blocks, np.ndarray) or blocks.dtype != np.uint8 or blocks.ndim != 3:
            raise ValueError(f"layout {layout.name!r}: blocks must be a uint8[x, y, z] array")
        if blocks.size and blocks.max() >= len(self.content.blocks):
            raise ValueError(f"layout {layout.name!r}: block id {blocks.max()} is not in content")
        self.layout = layout
        self.config = config
        self.rng = rng
        self.blocks = np.array(blocks, dtype=np.uint8, order="C")
        """``uint8[x, y, z]`` block ids; breaking and explosions change it."""
        self.heights = ColumnHeights(self.blocks)
        """Column heights of :attr:`blocks` for the renderer, refreshed where blocks vanish."""
        self.window = ChunkWindow(layout.terrain, self.blocks) if layout.terrain else None
        """The loaded chunks of an unbounded world (``None`` for a bounded one)."""
        self.solid = self.content.block_solid
        self.water = np.array([b.shape == "liquid" for b in self.content.blocks], dtype=np.bool_)
        self.inventory = Inventory(self.content)
        self.hands = Hands(self.content, config.interaction)
        self.recipes = load_recipes()
        self.last_craft: CraftResult | None = None
        """What the last ``craft`` did (the environment's info reports it)."""
        self.mobs = Mobs(self.content, config.mobs)
        self.t = 0
        """Steps since the world was built."""
        self._schedule: list[ScheduledEvent] = []

        x, y, z = layout.spawn
        self._check_inside(x, z, "spawn")
        self.player = new_player_state(x, y, z)
        """``float64[8]`` feet position, velocity and ground/water flags (see ``physics``)."""
        self.yaw = wrap_yaw(float(layout.spawn_yaw))
        self.pitch = 0.0
        settle_player(self.blocks, self.solid, self.water, self.player)
        static = config.herds == "static"
        for spawn in layout.mobs:
            roam = 0.0 if static and spawn.pasture is not None else spawn.roam
            self.spawn_mob(spawn.kind, spawn.x, spawn.z, roam=roam, burning=spawn.burning,
                           pasture=spawn.pasture)
        for event in layout.events:
            self.schedule(event)
        self.spawning = PassiveSpawning(self, config.spawn_cycle) if config.spawn_cycle else None
        """Minecraft's passive spawn cycle, when the configuration turns it on."""
        self._regrowing: list[tuple[int, int, int, int, int, int]] = []
        """A heap of ``(step due, order, i, j, k, block id)`` of broken blocks that come back."""
        self._regrow_order = 0
        self._regrows = np.zeros(len(self.content.blocks), np.bool_)
        if config.regrowth is not None:
            if self.window is not None:
                raise ValueError(f"layout {layout.name!r}: regrowth needs a bounded world (an "
                                 "unbounded one moves its arrays as the player walks)")
            self._regrows[[self.content.block(name).id for name in config.regrowth.blocks]] = True

    # ----------------------------------------------------------------------------- reading

    @property
    def origin(self) -> tuple[int, int]:
        """Where column ``(0, 0)`` of :attr:`blocks` lies in the frame the environment reports
        poses in: ``(0, 0)`` for a bounded world; an unbounded world's arrays hold the chunks
        loaded around the player, and this moves with them. Positions of this class
        (:attr:`position`, :attr:`pose`, :meth:`teleport`, the mobs) are in the arrays' frame."""
        return self.window.origin if self.window is not None else (0, 0)

    @property
    def frame_pose(self) -> tuple[float, float, float, float, float]:
        """:attr:`pose` in the reported frame (the arrays' frame plus :attr:`origin`)."""
        x, y, z, yaw, pitch = self.pose
        ox, oz = self.origin
        return x + ox, y, z + oz, yaw, pitch

    @property
    def position(self) -> tuple[float, float, float]:
        """The player's feet ``(x, y, z)``."""
        return float(self.player[X]), float(self.player[Y]), float(self.player[Z])

    @property
    def velocity(self) -> tuple[float, float, float]:
        """Blocks per tick."""
        return float(self.player[VX]), float(self.player[VY]), float(self.player[VZ])

    @property
    def pose(self) -> tuple[float, float, float, float, float]:
        """``(x, y, z, yaw, pitch)``: feet position (arrays' frame) and camera angles in degrees."""
        return (
            float(self.player[X]),
            float(self.player[Y]),
            float(self.player[Z]),
            self.yaw,
            self.pitch,
        )

    @property
    def eye(self) -> tuple[float, float, float]:
        return float(self.player[X]), float(self.player[Y]) + EYE_HEIGHT, float(self.player[Z])

    @property
    def look(self) -> tuple[float, float, float]:
        """Unit view direction."""
        return look_direction(self.yaw, self.pitch)

    @property
    def on_ground(self) -> bool:
        return bool(self.player[ON_GROUND])

    @property
    def in_water(self) -> bool:
        return bool(self.player[IN_WATER])

    def target(self, *, use: bool = False) -> Target:
        """What the crosshair points at (water counts only for ``use``)."""
        return self.hands.target(self, use=use)

    def mob_boxes(self) -> np.ndarray:
        """``float32[M, 6]`` rows ``(x, y_feet, z, width, height, semantic_id)`` for the renderer
        (a reused buffer)."""
        return self.mobs.boxes()

    @property
    def pending_events(self) -> tuple[ScheduledEvent, ...]:
        """Scheduled events that have not happened yet, in order."""
        return tuple(self._schedule)

    # ----------------------------------------------------------------------------- stepping

    def step(self, controls: Controls) -> tuple[WorldEvent, ...]:
        """Advance one tick under ``controls``; returns what happened (inventory gains, kills, ...)."""
        c = controls
        self.yaw = wrap_yaw(self.yaw + c.camera_yaw)
        self.pitch = min(90.0, max(-90.0, self.pitch + c.camera_pitch))
        if c.equip >= 0:
            if c.equip >= len(self.inventory.counts):
                raise ValueError(
                    f"equip must be -1 or an item index below {len(self.inventory.counts)}"
                )
            self.inventory.held = c.equip
        events: list[WorldEvent] = []
        self.hands.act(self, bool(c.attack), bool(c.use), events)
        if c.place:
            self.place(events)
        if c.craft >= 0:
            self.craft(self.recipes.names[c.craft], events)
        step_player(
            self.blocks,
            self.solid,
            self.water,
            self.player,
            int(c.forward) - int(c.back),
            int(c.left) - int(c.right),
            bool(c.jump),
            bool(c.sneak),
            bool(c.sprint),
            self.yaw,
        )
        if self.window is not None:
            dx, dz = self.window.shift_for(self.player[X], self.player[Z])
            if dx or dz:
                self.window.move(self, dx, dz)
        burnt = self.mobs.step(
            self.blocks, self.solid, self.water, self.player[X], self.player[Z], self.rng
        )
        if len(burnt):
            for index in burnt:
                events.append(WorldEvent("died", self.mobs.kind_name(index)))
            self.mobs.remove(burnt)
        self.t += 1
        if self.spawning is not None and self.t % self.spawning.rules.interval == 0:
            spawned = self.spawning.cycle()
            if spawned:
                events += [WorldEvent("spawned", kind, count) for kind, count in spawned.items()]
        while self._schedule and self._schedule[0].step <= self.t:
            self._run(self._schedule.pop(0), events)
        if self._regrowing:
            self._regrow(events)
        return tuple(events) if events else ()

    def block_broken(self, i: int, j: int, k: int, block: int) -> None:
        """The hands removed block ``block`` from cell ``(i, j, k)`` during the step that
        makes :attr:`t` ``t + 1``: schedule its return :attr:`Regrowth.steps` steps after that
        one, when the configuration's :class:`Regrowth` covers its kind."""
        if self._regrows[block]:
            due = self.t + 1 + self.config.regrowth.steps
            heapq.heappush(self._regrowing, (due, self._regrow_order, i, j, k, block))
            self._regrow_order += 1

    def _regrow(self, events: list[WorldEvent]) -> None:
        """Put back the broken blocks due by now whose cells are empty; a cell the player or a
        mob stands in is tried again next step, one filled meanwhile is left as it is."""
        waiting = []
        while self._regrowing and self._regrowing[0][0] <= self.t:
            entry = heapq.heappop(self._regrowing)
            _, _, i, j, k, block = entry
            if self.blocks[i, j, k] != 0:
                continue
            if self._occupied((i, j, k)):
                waiting.append((self.t + 1, *entry[1:]))
                continue
            self.blocks[i, j, k] = block
            self.heights.refresh(self.blocks, i, k, i + 1, k + 1)
            events.append(WorldEvent("regrew", self.content.blocks[block].name))
        for entry in waiting:
            heapq.heappush(self._regrowing, entry)

    # ----------------------------------------------------------------------------- crafting

    def place(self, events: list[WorldEvent] | None = None) -> bool:
        """Put the held block item down in front of the face the crosshair points at (the
        functional ``place`` action); nothing happens without such an item, a face in reach, or
        room (the player and the mobs keep theirs). Returns whether a block was placed."""
        held = self.inventory.held_item
        block = self.content.item(held).places if held is not None else None
        cell = self.hands.facing_cell(self) if block is not None else None
        if cell is None or self._occupied(cell):
            return False
        i, j, k = cell
        self.blocks[i, j, k] = self.content.block(block).id
        self.heights.refresh(self.blocks, i, k, i + 1, k + 1)
        self.inventory.take(held)
        if events is not None:
            events += [WorldEvent("consumed", held), WorldEvent("placed", block)]
        return True

    def _occupied(self, cell: tuple[int, int, int]) -> bool:
        """Whether the player's box or a mob's overlaps the block cell ``cell``."""
        i, j, k = cell
        half = PLAYER_WIDTH / 2
        boxes = [(float(self.player[X]), float(self.player[Y]), float(self.player[Z]), half,
                  PLAYER_HEIGHT)]
        boxes += [(float(x), float(y), float(z), float(w) / 2, float(h))
                  for x, y, z, w, h, _ in self.mob_boxes()]
        return any(x + w > i and x - w < i + 1 and y + h > j and y < j + 1
                   and z + w > k and z - w < k + 1 for x, y, z, w, h in boxes)

    def table_in_reach(self) -> bool:
        """Whether a crafting table stands within the hands' reach of the eye (its 3 x 3 grid
        can be used)."""
        reach = self.hands.config.reach
        eye = np.array(self.eye)
        low = np.maximum(np.floor(eye - reach).astype(int), 0)
        high = np.minimum(np.floor(eye + reach).astype(int) + 1, self.blocks.shape)
        found = np.argwhere(self.blocks[low[0]:high[0], low[1]:high[1], low[2]:high[2]]
                            == self.content.block(TABLE).id)
        if not len(found):
            return False
        nearest = np.clip(eye, found + low, found + low + 1)  # the nearest point of each table
        return bool((np.linalg.norm(nearest - eye, axis=1) <= reach).any())

    def craft(self, item: str, events: list[WorldEvent] | None = None) -> CraftResult:
        """Craft ``item`` once (the functional ``craft`` action, as MineDojo's): take the
        recipe's ingredients and give its output, or change nothing and say why."""
        reason = self.recipes.check(item, self.inventory.as_dict(), self.table_in_reach())
        if reason is not None:
            self.last_craft = CraftResult(item, 0, reason)
            return self.last_craft
        recipe = self.recipes.recipe(item)
        for name, count in recipe.ingredients.items():
            self.inventory.take(name, count)
            if events is not None:
                events.append(WorldEvent("consumed", name, count))
        self.collect(item, recipe.count, events)
        if events is not None:
            events.append(WorldEvent("crafted", item, recipe.count))
        self.last_craft = CraftResult(item, recipe.count)
        return self.last_craft

    # ----------------------------------------------------------------------------- commands

    def collect(self, item: str, count: int, events: list[WorldEvent] | None = None) -> None:
        """Put ``count`` of ``item`` in the inventory, recording a ``collected`` event."""
        self.inventory.give(item, count)
        if events is not None:
            events.append(WorldEvent("collected", item, count))

    def equip(self, item: str | None) -> None:
        """Hold ``item`` (``None``: empty hand)."""
        self.inventory.held = -1 if item is None else self.inventory.index(item)

    def teleport(
        self,
        x: float,
        z: float,
        y: float | None = None,
        *,
        yaw: float | None = None,
        pitch: float | None = None,
    ) -> None:
        """Move the player to ``(x, z)``, standing on the ground there unless ``y`` (feet) is given."""
        self._check_inside(x, z, "teleport target")
        if y is None:
            y = ground_height(self.blocks, self.solid, x, z, PLAYER_HEIGHT)
        half = PLAYER_WIDTH / 2
        if box_collides(
            self.blocks, self.solid, x - half, y, z - half, x + half, y + PLAYER_HEIGHT, z + half
        ):
            raise ValueError(f"teleport target ({x}, {y}, {z}) is inside a solid block")
        if pitch is not None and not -90.0 <= pitch <= 90.0:
            raise ValueError(f"pitch must be in [-90, 90] degrees, got {pitch}")
        self.player[:] = new_player_state(x, y, z)
        if yaw is not None:
            self.yaw = wrap_yaw(float(yaw))
        if pitch is not None:
            self.pitch = float(pitch)
        settle_player(self.blocks, self.solid, self.water, self.player)

    def spawn_mob(
        self, kind: str, x: float, z: float, *, roam: float | None = 8.0, burning: bool = False,
        pasture: tuple[float, float, float, float] | None = None,
    ) -> int:
        """Place a mob of ``kind`` on the ground at ``(x, z)``, kept in ``pasture`` when given;
        returns its index."""
        self._check_inside(x, z, f"{kind} spawn")
        y = ground_height(self.blocks, self.solid, x, z, self.content.mob(kind).height)
        return self.mobs.add(kind, x, y, z, roam=roam, burning=burning, pasture=pasture)

    def schedule(self, event: ScheduledEvent) -> None:
        """Run ``event`` when the step counter reaches ``event.step`` (next step if already past)."""
        check_name(event.kind, EVENT_KINDS, "event kind")
        if (
            isinstance(event.step, bool)
            or not isinstance(event.step, (int, np.integer))
            or event.step < 0
        ):
            raise ValueError(f"event step must be a non-negative integer, got {event.step!r}")
        if event.kind == "spawn_mob":
            if event.mob is None:
                raise ValueError("a spawn_mob event needs a mob kind")
            self.content.mob(event.mob)
            if event.count < 1:
                raise ValueError(f"spawn_mob count must be at least 1, got {event.count}")
        elif event.block is not None:
            self.content.block(event.block)
        if event.radius < 0:
            raise ValueError(f"event radius must be non-negative, got {event.radius}")
        self._check_inside(event.x, event.z, f"{event.kind} event")
        steps = [e.step for e in self._schedule]
        self._schedule.insert(bisect.bisect_right(steps, event.step), event)

    def _run(self, event: ScheduledEvent, events: list[WorldEvent]) -> None:
        if event.kind == "spawn_mob":
            sx, _, sz = self.blocks.shape
            for _ in range(event.count):
                angle, distance = self.rng.random(2) * (2 * math.pi, event.radius)
                x = min(max(event.x + distance * math.cos(angle), 1.0), sx - 1.0)
                z = min(max(event.z + distance * math.sin(angle), 1.0), sz - 1.0)
                self.spawn_mob(event.mob, x, z, roam=SPAWN_ROAM)
            events.append(WorldEvent("spawned", event.mob, event.count))
        else:
            count = self._explode(event)
            events.append(WorldEvent("exploded", event.block or "blocks", count))

    def _explode(self, event: ScheduledEvent) -> int:
        """Remove blocks around ``(x, z)``: every ``event.block`` within the horizontal radius at
        any height, or (no block kind) every breakable block in the sphere of that radius centred
        on the ground; plants left without support go too. Returns how many vanished."""
        sx, sy, sz = self.blocks.shape
        r = event.radius
        i0, i1 = max(0, math.floor(event.x - r)), min(sx, math.ceil(event.x + r) + 1)
        k0, k1 = max(0, math.floor(event.z - r)), min(sz, math.ceil(event.z + r) + 1)
        region = self.blocks[i0:i1, :, k0:k1]
        di = np.arange(i0, i1) + 0.5 - event.x
        dk = np.arange(k0, k1) + 0.5 - event.z
        flat = di[:, None, None] ** 2 + dk[None, None, :] ** 2
        if event.block is not None:
            hit = (region == self.content.block(event.block).id) & (flat <= r * r)
        else:
            centre = ground_height(self.blocks, self.solid, event.x, event.z, 1.0)
            dj = np.arange(sy) + 0.5 - centre
            breakable = self.hands.break_steps >= 0
            breakable[0] = False
            hit = breakable[region] & (flat + dj[None, :, None] ** 2 <= r * r)
        count = int(hit.sum())
        region[hit] = 0
        plant = self.hands.plant_mask
        while True:
            floating = plant[region[:, 1:, :]] & (region[:, :-1, :] == 0)
            if not floating.any():
                break
            count += int(floating.sum())
            region[:, 1:, :][floating] = 0
        self.heights.refresh(self.blocks, i0, k0, i1, k1)
        return count

    def _check_inside(self, x: float, z: float, what: str) -> None:
        sx, _, sz = self.blocks.shape
        if not (math.isfinite(x) and math.isfinite(z) and 0.0 <= x < sx and 0.0 <= z < sz):
            if self.window is None:
                raise ValueError(f"{what} ({x}, {z}) is outside the world: x must be in "
                                 f"[0, {sx}), z in [0, {sz})")
            ox, oz = self.origin  # an unbounded world: say it in the reported frame
            raise ValueError(
                f"{what} ({x + ox}, {z + oz}) is outside the chunks loaded around the player: "
                f"x must be in [{ox}, {ox + sx}), z in [{oz}, {oz + sz})")
