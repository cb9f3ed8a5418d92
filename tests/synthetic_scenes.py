"""Synthetic semantic frames for the encoder tests: a flat world seen from an eye 1.62 blocks up.

A scene is a ground class with flat discs on it (ponds, sand) and upright cylinders standing on
it (trees, mobs, houses). ``view`` renders the semantic frame and depth from a pose with the
world's conventions (yaw 0 faces +z, 90 faces -x; 70 degree vertical field of view).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from mrsteve.world.content import load_content

EYE = 1.62
VFOV = 70.0
SHAPE = (40, 64)


@dataclass(frozen=True)
class Disc:
    """A flat patch of ``cls`` on the ground."""

    cls: str
    x: float
    z: float
    radius: float


@dataclass(frozen=True)
class Pillar:
    """An upright cylinder of ``cls`` standing on the ground."""

    cls: str
    x: float
    z: float
    radius: float
    height: float


@dataclass(frozen=True)
class Scene:
    ground: str = "grass_block"
    discs: tuple[Disc, ...] = ()
    pillars: tuple[Pillar, ...] = ()
    view_distance: float = 48.0


def view(
    scene: Scene, x: float, z: float, yaw: float, pitch: float = 0.0, shape: tuple[int, int] = SHAPE
) -> dict[str, np.ndarray]:
    """Semantic frame (``uint8``) and depth (``float32``, ``inf`` for the sky) seen from a pose."""
    content = load_content()
    height, width = shape
    focal = (height / 2) / math.tan(math.radians(VFOV / 2))
    cols = np.arange(width) + 0.5 - width / 2
    rows = np.arange(height) + 0.5 - height / 2
    # Camera-space rays: right, up, forward; pitch rotates about the right axis (positive looks down).
    right, up = np.meshgrid(cols / focal, -rows / focal)
    p = math.radians(pitch)
    forward_y = up * math.cos(p) - math.sin(p)
    forward_h = up * math.sin(p) + math.cos(p)
    yaw_r = math.radians(yaw)
    fx, fz = -math.sin(yaw_r), math.cos(yaw_r)  # facing direction
    rx, rz = -math.cos(yaw_r), -math.sin(yaw_r)  # right-hand direction
    dx = forward_h * fx + right * rx
    dz = forward_h * fz + right * rz
    dy = forward_y
    norm = np.sqrt(dx * dx + dy * dy + dz * dz)
    dx, dy, dz = dx / norm, dy / norm, dz / norm

    depth = np.full(shape, np.inf)
    semantic = np.zeros(shape, dtype=np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ground = np.where(dy < 0, EYE / -dy, np.inf)
    hit = t_ground <= scene.view_distance
    depth[hit] = t_ground[hit]
    semantic[hit] = content.semantic_id(scene.ground)
    gx, gz = x + dx * t_ground, z + dz * t_ground
    for disc in scene.discs:
        inside = hit & ((gx - disc.x) ** 2 + (gz - disc.z) ** 2 <= disc.radius**2)
        semantic[inside] = content.semantic_id(disc.cls)
    for pillar in scene.pillars:
        t = _cylinder_hit(x - pillar.x, z - pillar.z, dx, dz, dy, pillar.radius, pillar.height)
        closer = t < np.minimum(depth, scene.view_distance)
        depth[closer] = t[closer]
        semantic[closer] = content.semantic_id(pillar.cls)
    return {"semantic": semantic, "depth": depth.astype(np.float32),
            "rgb": _colours(semantic, depth, scene.view_distance)}


SKY_RGB = np.array([140.0, 180.0, 240.0])
"""Colour of the sky and of the fog towards the horizon."""


def _colours(semantic: np.ndarray, depth: np.ndarray, view_distance: float) -> np.ndarray:
    """``uint8[H, W, 3]``: each pixel in its class's colour (a block's top colour, a mob's body),
    fading into the sky's colour towards the view distance, like the renderer's fog."""
    fog = np.clip((np.nan_to_num(depth, posinf=view_distance) / view_distance - 0.4) / 0.6, 0, 1)
    rgb = _class_colours()[semantic] * (1 - fog[..., None]) + SKY_RGB * fog[..., None]
    return rgb.round().astype(np.uint8)


@cache
def _class_colours() -> np.ndarray:
    content = load_content()
    colours = np.tile(SKY_RGB, (len(content.semantic_classes), 1))
    for block_id, cls in enumerate(content.block_semantic[:len(content.block_colors)]):
        if block_id:
            colours[cls] = content.block_colors[block_id][0]
    for mob in content.mobs:
        colours[content.semantic_id(mob.name)] = mob.color
    colours[content.semantic_id("burning_zombie")] = (255.0, 150.0, 30.0)
    return colours


def _cylinder_hit(ox, oz, dx, dz, dy, radius, height):
    """Distance along each ray to an upright cylinder around the origin (``inf`` if missed)."""
    a = dx * dx + dz * dz
    b = 2 * (ox * dx + oz * dz)
    c = ox * ox + oz * oz - radius * radius
    disc = b * b - 4 * a * c
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (-b - np.sqrt(disc)) / (2 * a)
    y = EYE + dy * t
    ok = (disc >= 0) & (t > 0) & (y >= 0) & (y <= height)
    return np.where(ok, t, np.inf)


def clip(
    scene: Scene,
    x: float,
    z: float,
    yaw: float,
    rng: np.random.Generator,
    frames: int = 16,
    jitter: float = 0.3,
    turn: float = 4.0,
) -> list[dict[str, np.ndarray]]:
    """``frames`` views around a pose with small random moves and turns (one agent idling there)."""
    return [
        view(
            scene,
            x + rng.uniform(-jitter, jitter),
            z + rng.uniform(-jitter, jitter),
            yaw + rng.uniform(-turn, turn),
            rng.uniform(-turn, turn),
        )
        for _ in range(frames)
    ]


def zombies(burning: bool, x: float = 0.0, z: float = 6.0) -> tuple[Pillar, ...]:
    """Three zombies standing side by side around ``(x, z)``."""
    cls = "burning_zombie" if burning else "zombie"
    return tuple(Pillar(cls, x + dx, z, 0.3, 1.95) for dx in (-1.5, 0.0, 1.5))


PLAIN = Scene()
"""Grass to the horizon."""
POND = Scene(discs=(Disc("water", 0.0, 7.0, 3.0),))
"""A pond 4 to 10 blocks ahead (yaw 0)."""
FAR_POND = Scene(discs=(Disc("water", 0.0, 22.0, 2.0),))
"""A small pond 20 blocks ahead: a few water pixels, not near."""
FOREST = Scene(
    pillars=tuple(
        Pillar(cls, px, pz, r, h)
        for px, pz in ((-3.0, 6.0), (2.5, 8.0), (5.0, 12.0))
        for cls, r, h in (("oak_leaves", 1.5, 6.0), ("oak_log", 0.5, 3.5))
    )
)
"""Three trees ahead (crowns drawn around their trunks)."""
PASTURE = Scene(pillars=(Pillar("cow", -1.5, 6.0, 0.45, 1.4), Pillar("sheep", 2.0, 7.0, 0.45, 1.3)))
"""A cow and a sheep on grass ahead."""
DESERT = Scene(ground="sand")
"""Sand to the horizon."""
DIRT_FIELD = Scene(ground="dirt")
"""Dirt to the horizon."""
MEADOW = Scene(
    pillars=tuple(
        Pillar("tall_grass", px, pz, 0.4, 0.9)
        for px in (-3.0, -1.5, 0.0, 1.5, 3.0)
        for pz in (3.0, 5.0)
    )
)
"""Tall grass ahead."""
BURNING = Scene(pillars=zombies(burning=True))
"""Burning zombies ahead (Zombies' Death Spot, first event)."""
