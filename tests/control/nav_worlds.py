"""Hand-made walled floors for the navigation, height-map and planning tests."""

from __future__ import annotations

import numpy as np

from mrsteve.world.content import load_content
from mrsteve.world.layout import WorldLayout

GROUND = 4
"""Feet height on the hand-made floors (the floor's top)."""


def block(name: str) -> int:
    return load_content().block(name).id


def floor(size: int = 32, height: int = 14) -> np.ndarray:
    """A grass floor inside a wall ring one block thick."""
    blocks = np.zeros((size, height, size), dtype=np.uint8)
    blocks[:, : GROUND - 1, :] = block("dirt")
    blocks[:, GROUND - 1, :] = block("grass_block")
    blocks[0, :, :] = blocks[-1, :, :] = blocks[:, :, 0] = blocks[:, :, -1] = block("wall")
    return blocks


def world(blocks: np.ndarray, spawn=(16.5, 8.5), yaw: float = 0.0):
    """A world function for the environment; spawn on the floor at ``(x, z)``."""
    return lambda rng: WorldLayout("handmade", blocks, (spawn[0], float(GROUND), spawn[1]), yaw)


def step_up(blocks: np.ndarray) -> np.ndarray:
    """The far half of the floor raised by one block (z >= 16)."""
    blocks[1:-1, GROUND, 16:-1] = block("stone")
    return blocks


def channel(blocks: np.ndarray) -> np.ndarray:
    """Water three blocks deep across the floor at z = 14..18, its surface level with the banks."""
    blocks[1:-1, GROUND - 3 : GROUND, 14:19] = block("water")
    return blocks


def river(blocks: np.ndarray, exit_x: int | None = 6) -> np.ndarray:
    """Water across z = 14..18 whose surface is a block below the floor, so its banks cannot be
    climbed from the water, except a shore level with the water on the far bank at
    ``exit_x .. exit_x + 2`` (none when ``None``)."""
    blocks[1:-1, GROUND - 1, 14:19] = 0
    blocks[1:-1, GROUND - 4 : GROUND - 1, 14:19] = block("water")
    if exit_x is not None:
        blocks[exit_x : exit_x + 3, GROUND - 1, 19] = 0
    return blocks


def wall_across(blocks: np.ndarray) -> np.ndarray:
    """A two-block stone wall across z = 16 with a gap only at the right end (x = 26..30)."""
    blocks[1:26, GROUND : GROUND + 2, 16] = block("stone")
    return blocks
