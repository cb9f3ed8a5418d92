"""Small hand-built layouts for the simulation tests (a flat walled floor to add features to)."""

from __future__ import annotations

import numpy as np

from mrsteve.world.content import load_content
from mrsteve.world.layout import MobSpawn, ScheduledEvent, WorldLayout

GROUND = 4
"""Feet height of a player standing on the floor (the top of the floor is y = 4)."""


def block_id(name: str) -> int:
    return load_content().block(name).id


def flat_blocks(size: int = 24, height: int = 12) -> np.ndarray:
    """A ``size`` x ``size`` grass floor (dirt under it) inside a wall one block thick."""
    blocks = np.zeros((size, height, size), dtype=np.uint8)
    blocks[:, : GROUND - 1, :] = block_id("dirt")
    blocks[:, GROUND - 1, :] = block_id("grass_block")
    wall = block_id("wall")
    blocks[0, :, :] = blocks[-1, :, :] = wall
    blocks[:, :, 0] = blocks[:, :, -1] = wall
    return blocks


def layout(
    blocks: np.ndarray | None = None,
    spawn: tuple[float, float, float] | None = None,
    yaw: float = 0.0,
    mobs: tuple[MobSpawn, ...] = (),
    events: tuple[ScheduledEvent, ...] = (),
) -> WorldLayout:
    """A layout over ``blocks`` (default: :func:`flat_blocks`), spawning at the centre."""
    blocks = flat_blocks() if blocks is None else blocks
    if spawn is None:
        spawn = (blocks.shape[0] / 2 + 0.5, float(GROUND), blocks.shape[2] / 2 + 0.5)
    return WorldLayout("handmade", blocks, spawn, yaw, mobs, events)
