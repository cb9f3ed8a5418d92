"""Mobs as one structured array, advanced each tick by a compiled kernel.

Each mob is a record of :data:`MOB_DTYPE` (position of its feet, home and roaming radius, health,
timers). Cows, sheep and spiders wander like Minecraft's ``EntityAIWander`` (on a random tick,
walk to a random spot nearby, kept within ``roam`` of home), flee from the player for their
``flee_steps`` when hit, step up one block, avoid drops of more than three blocks, and never walk
into solid blocks or water, nor out of their pasture (a fence: an area their box stays in; the
whole plane for mobs without one). Zombies catch fire under the open sky (constant daylight) and die
after their ``daylight_burn_steps``. Mobs are axis-aligned boxes; they do not push each other or
the player. All randomness comes in as an array drawn from the world's generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from mrsteve.world.content import Content
from mrsteve.world.physics import TICKS_PER_SECOND

MOB_DTYPE = np.dtype(
    [
        ("kind", np.int32),  # index into Content.mobs
        ("x", np.float64),  # feet position (box centre on x and z)
        ("y", np.float64),
        ("z", np.float64),
        ("home_x", np.float64),  # where it spawned
        ("home_z", np.float64),
        ("roam", np.float64),  # wander targets stay within this distance of home (inf: anywhere)
        ("fence_x0", np.float64),  # the pasture the box stays in (-inf, -inf, inf, inf: none)
        ("fence_z0", np.float64),
        ("fence_x1", np.float64),
        ("fence_z1", np.float64),
        ("target_x", np.float64),  # current wander target
        ("target_z", np.float64),
        ("walking", np.bool_),  # heading for the wander target
        ("health", np.float64),
        ("flee_steps", np.int32),  # steps of fleeing left
        ("hurt_cooldown", np.int32),  # steps until it can be hurt again
        ("burning", np.bool_),
        ("burn_steps", np.int32),  # steps burnt so far
        ("regrow_steps", np.int32),  # steps until it can be harvested again (sheared sheep)
    ],
    align=True,
)
"""One mob's state."""

# Columns of the per-kind table built by :func:`kind_table`.
K_WIDTH, K_HEIGHT, K_SPEED, K_BURN_STEPS, K_SEMANTIC, K_BURNING_SEMANTIC = range(6)
_KIND_COLUMNS = 6

RANDOMS_PER_MOB = 3
"""Uniform numbers each mob consumes per tick (wander decision, direction, distance)."""

MAX_STEP_UP = 1.0
MAX_DROP = 3
_INSIDE = 1.0 - 1e-6  # box corners probed just inside the box


@dataclass(frozen=True)
class MobConfig:
    """How mobs move; defaults are Minecraft's ``EntityAIWander`` and ``EntityAIPanic``."""

    wander_chance: float = 1 / 120
    """Probability per tick that an idle mob starts walking somewhere."""
    wander_radius: float = 10.0
    """Largest distance of a wander target from the mob."""
    flee_speed_multiplier: float = 2.0
    """Speed of a fleeing mob relative to its walking speed (Minecraft's panic speed)."""

    def __post_init__(self):
        if not 0.0 <= self.wander_chance <= 1.0:
            raise ValueError(f"wander_chance must be in [0, 1], got {self.wander_chance}")
        if self.wander_radius <= 0 or self.flee_speed_multiplier <= 0:
            raise ValueError("wander_radius and flee_speed_multiplier must be positive")


def kind_table(content: Content) -> np.ndarray:
    """``float64[n_kinds, 6]``: size, speed per tick, burn steps and semantic ids of each kind."""
    table = np.zeros((len(content.mobs), _KIND_COLUMNS), dtype=np.float64)
    burning = content.semantic_id("burning_zombie")
    for mob in content.mobs:
        table[mob.id, K_WIDTH] = mob.width
        table[mob.id, K_HEIGHT] = mob.height
        table[mob.id, K_SPEED] = mob.speed / TICKS_PER_SECOND
        table[mob.id, K_BURN_STEPS] = (
            -1 if mob.daylight_burn_steps is None else mob.daylight_burn_steps
        )
        table[mob.id, K_SEMANTIC] = content.semantic_id(mob.name)
        table[mob.id, K_BURNING_SEMANTIC] = burning
    return table


@nb.njit(cache=True)
def ground_height(blocks, solid, x, z, clearance):
    """Lowest place to stand in the column at ``(x, z)``: the top of a solid block (or the bottom
    of the grid) with ``clearance`` blocks of non-solid space above it; under a roof, that is the
    floor. The top of the grid when there is none."""
    i, k = math.floor(x), math.floor(z)
    sy = blocks.shape[1]
    free = 0
    for j in range(sy):
        if solid[blocks[i, j, k]]:
            free = 0
            continue
        free += 1
        if free >= clearance:
            return float(j + 1 - free)
    return float(sy)


@nb.njit(cache=True)
def _standing_height(blocks, solid, water, x, y, z, half_width, height):
    """Feet height a mob at ``y`` would stand at after stepping to ``(x, z)``, or NaN if it cannot:
    a wall or a step higher than one block, a drop deeper than three, water, or the map edge."""
    sx, sy, sz = blocks.shape
    new_y = -1.0
    for corner in range(4):
        cx = x + (half_width if corner & 1 else -half_width) * _INSIDE
        cz = z + (half_width if corner & 2 else -half_width) * _INSIDE
        i, k = math.floor(cx), math.floor(cz)
        if i < 0 or k < 0 or i >= sx or k >= sz:
            return np.nan
        top = min(math.floor(y + 1e-6), sy - 1)
        support = -1.0
        for j in range(top, max(math.floor(y) - MAX_DROP - 1, -1), -1):
            if solid[blocks[i, j, k]]:
                support = float(j + 1)
                break
        if support < 0:
            return np.nan
        new_y = max(new_y, support)
    if new_y > y + MAX_STEP_UP + 1e-6:
        return np.nan
    for corner in range(4):
        cx = x + (half_width if corner & 1 else -half_width) * _INSIDE
        cz = z + (half_width if corner & 2 else -half_width) * _INSIDE
        i, k = math.floor(cx), math.floor(cz)
        feet = math.floor(new_y + 1e-6)
        if feet < sy and water[blocks[i, feet, k]]:
            return np.nan
        for j in range(feet, min(math.ceil(new_y + height - 1e-6), sy)):
            if solid[blocks[i, j, k]]:
                return np.nan
    return new_y


@nb.njit(cache=True)
def _under_open_sky(blocks, solid, x, y, z, height):
    i, k = math.floor(x), math.floor(z)
    for j in range(max(math.ceil(y + height - 1e-6), 0), blocks.shape[1]):
        if solid[blocks[i, j, k]]:
            return False
    return True


@nb.njit(cache=True)
def _outside_fence(mob, x, z, half_width):
    """Whether a box of ``half_width`` at ``(x, z)`` sticks out of the mob's pasture."""
    return (x - half_width < mob.fence_x0 or x + half_width > mob.fence_x1
            or z - half_width < mob.fence_z0 or z + half_width > mob.fence_z1)


@nb.njit(cache=True)
def step_mobs(
    blocks,
    solid,
    water,
    mobs,
    kinds,
    player_x,
    player_z,
    randoms,
    wander_chance,
    wander_radius,
    flee_speed_multiplier,
):
    """Advance every mob one tick; returns how many died (burnt out: health set to 0)."""
    died = 0
    for n in range(mobs.shape[0]):
        mob = mobs[n]
        kind = mob.kind
        if mob.hurt_cooldown > 0:
            mob.hurt_cooldown -= 1
        if mob.regrow_steps > 0:
            mob.regrow_steps -= 1
        burn_limit = kinds[kind, K_BURN_STEPS]
        if burn_limit >= 0:
            if not mob.burning and _under_open_sky(
                blocks, solid, mob.x, mob.y, mob.z, kinds[kind, K_HEIGHT]
            ):
                mob.burning = True
            if mob.burning:
                mob.burn_steps += 1
                if mob.burn_steps >= burn_limit:
                    mob.health = 0.0
                    died += 1
                    continue
        speed = kinds[kind, K_SPEED]
        if speed <= 0.0:
            continue
        if mob.flee_steps > 0:
            mob.flee_steps -= 1
            dx, dz = mob.x - player_x, mob.z - player_z
            speed *= flee_speed_multiplier
            mob.walking = False
        else:
            if not mob.walking:
                if randoms[n, 0] >= wander_chance:
                    continue
                angle = 2.0 * math.pi * randoms[n, 1]
                distance = wander_radius * randoms[n, 2]
                tx = mob.x + distance * math.cos(angle)
                tz = mob.z + distance * math.sin(angle)
                hx, hz = tx - mob.home_x, tz - mob.home_z
                off = math.sqrt(hx * hx + hz * hz)
                if off > mob.roam:
                    tx = mob.home_x + hx * mob.roam / off
                    tz = mob.home_z + hz * mob.roam / off
                half = kinds[kind, K_WIDTH] / 2
                tx = min(max(tx, mob.fence_x0 + half), mob.fence_x1 - half)
                tz = min(max(tz, mob.fence_z0 + half), mob.fence_z1 - half)
                mob.target_x, mob.target_z = tx, tz
                mob.walking = True
            dx, dz = mob.target_x - mob.x, mob.target_z - mob.z
        length = math.sqrt(dx * dx + dz * dz)
        if length < 1e-9:
            mob.walking = False
            continue
        if mob.walking and length <= speed:
            speed = length
            mob.walking = False
        nx = mob.x + dx / length * speed
        nz = mob.z + dz / length * speed
        half = kinds[kind, K_WIDTH] / 2
        if _outside_fence(mob, nx, nz, half):
            new_y = np.nan
        else:
            new_y = _standing_height(blocks, solid, water, nx, mob.y, nz, half,
                                     kinds[kind, K_HEIGHT])
        if math.isnan(new_y):
            mob.walking = False
        else:
            mob.x, mob.y, mob.z = nx, new_y, nz
    return died


@nb.njit(cache=True)
def mob_boxes(mobs, kinds, out):
    """Fill ``out[:n]`` with renderer boxes ``(x, y_feet, z, width, height, semantic_id)``."""
    for n in range(mobs.shape[0]):
        mob = mobs[n]
        out[n, 0] = mob.x
        out[n, 1] = mob.y
        out[n, 2] = mob.z
        out[n, 3] = kinds[mob.kind, K_WIDTH]
        out[n, 4] = kinds[mob.kind, K_HEIGHT]
        out[n, 5] = kinds[mob.kind, K_BURNING_SEMANTIC if mob.burning else K_SEMANTIC]


@nb.njit(cache=True)
def pick_mob(mobs, kinds, ox, oy, oz, dx, dy, dz, max_dist):
    """Index and distance of the first mob box a ray enters within ``max_dist`` (-1 if none)."""
    best, best_dist = -1, max_dist
    for n in range(mobs.shape[0]):
        mob = mobs[n]
        half = kinds[mob.kind, K_WIDTH] / 2
        lo = (mob.x - half, mob.y, mob.z - half)
        hi = (mob.x + half, mob.y + kinds[mob.kind, K_HEIGHT], mob.z + half)
        origin = (ox, oy, oz)
        direction = (dx, dy, dz)
        t_near, t_far = 0.0, best_dist
        for axis in range(3):
            if abs(direction[axis]) < 1e-12:
                if origin[axis] < lo[axis] or origin[axis] > hi[axis]:
                    t_near, t_far = 1.0, 0.0
                    break
                continue
            t0 = (lo[axis] - origin[axis]) / direction[axis]
            t1 = (hi[axis] - origin[axis]) / direction[axis]
            if t0 > t1:
                t0, t1 = t1, t0
            t_near = max(t_near, t0)
            t_far = min(t_far, t1)
        if t_near <= t_far:
            best, best_dist = n, t_near
    return best, best_dist


class Mobs:
    """The mobs of one world: a :data:`MOB_DTYPE` array that grows as mobs spawn."""

    def __init__(self, content: Content, config: MobConfig = MobConfig(), capacity: int = 16):
        self.content = content
        self.config = config
        self.kinds = kind_table(content)
        self._records = np.zeros(capacity, dtype=MOB_DTYPE)
        self._boxes = np.zeros((capacity, 6), dtype=np.float32)
        self.count = 0

    def __len__(self) -> int:
        return self.count

    @property
    def records(self) -> np.ndarray:
        """The live mobs' records (a view: edits change the world)."""
        return self._records[: self.count]

    def kind_name(self, index: int) -> str:
        return self.content.mobs[int(self._records[index]["kind"])].name

    def add(
        self,
        kind: str,
        x: float,
        y: float,
        z: float,
        *,
        roam: float | None = 8.0,
        burning: bool = False,
        pasture: tuple[float, float, float, float] | None = None,
    ) -> int:
        """Place a mob of ``kind`` with its feet at ``(x, y, z)``; returns its index. It never
        leaves ``pasture`` (``(x0, z0, x1, z1)``, which must hold its box; ``None``: no fence)."""
        mob = self.content.mob(kind)
        if roam is not None and roam < 0:
            raise ValueError(f"roam must be non-negative or None (anywhere), got {roam}")
        fence = NO_FENCE if pasture is None else tuple(float(v) for v in pasture)
        half = mob.width / 2
        if not (fence[0] <= x - half and x + half <= fence[2]
                and fence[1] <= z - half and z + half <= fence[3]):
            raise ValueError(f"a {kind} at ({x}, {z}) does not fit its pasture {pasture}")
        if self.count == len(self._records):
            self._records = np.concatenate([self._records, np.zeros_like(self._records)])
            self._boxes = np.zeros((len(self._records), 6), dtype=np.float32)
        self._records[self.count : self.count + 1] = np.zeros(1, dtype=MOB_DTYPE)
        record = self._records[self.count]  # a view into the array
        record["kind"] = mob.id
        record["x"], record["y"], record["z"] = x, y, z
        record["home_x"], record["home_z"] = x, z
        record["roam"] = math.inf if roam is None else roam
        for name, value in zip(FENCE_FIELDS, fence, strict=True):
            record[name] = value
        record["health"] = mob.health
        record["burning"] = burning and mob.daylight_burn_steps is not None
        self.count += 1
        return self.count - 1

    def remove(self, indices: np.ndarray) -> None:
        """Drop the mobs at ``indices``; later mobs move down (indices are not stable)."""
        keep = np.ones(self.count, dtype=np.bool_)
        keep[indices] = False
        kept = self.records[keep]
        self._records[: len(kept)] = kept
        self.count = len(kept)

    def insert(self, records: np.ndarray) -> None:
        """Add mobs as they were (records of :data:`MOB_DTYPE`, e.g. saved with a chunk)."""
        need = self.count + len(records)
        if need > len(self._records):
            grown = np.zeros(max(need, 2 * len(self._records)), dtype=MOB_DTYPE)
            grown[: self.count] = self.records
            self._records = grown
            self._boxes = np.zeros((len(grown), 6), dtype=np.float32)
        self._records[self.count : need] = records
        self.count = need

    def step(
        self, blocks, solid, water, player_x, player_z, rng: np.random.Generator
    ) -> np.ndarray:
        """Advance all mobs one tick; returns the indices of mobs that burnt out (not yet removed)."""
        if self.count == 0:
            return _NO_INDICES
        randoms = rng.random((self.count, RANDOMS_PER_MOB))
        c = self.config
        died = step_mobs(
            blocks,
            solid,
            water,
            self.records,
            self.kinds,
            player_x,
            player_z,
            randoms,
            c.wander_chance,
            c.wander_radius,
            c.flee_speed_multiplier,
        )
        if died == 0:
            return _NO_INDICES
        return np.flatnonzero(self.records["health"] <= 0.0)

    def boxes(self) -> np.ndarray:
        """``float32[n, 6]`` boxes for the renderer (a reused buffer: copy to keep)."""
        mob_boxes(self.records, self.kinds, self._boxes)
        return self._boxes[: self.count]


_NO_INDICES = np.zeros(0, dtype=np.int64)

FENCE_FIELDS = ("fence_x0", "fence_z0", "fence_x1", "fence_z1")
"""The record's fields of its pasture, as ``(x0, z0, x1, z1)``."""
NO_FENCE = (-math.inf, -math.inf, math.inf, math.inf)
"""The fence of a mob without a pasture: the whole plane."""
