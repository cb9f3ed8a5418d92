"""Where an episode starts: the evaluator (or a trainer rendering data) reads the world to put the
player near the targets of a task, as MineDojo's task set-ups spawn the agent near what the task
needs.

A *target* is a block of one of the named semantic classes with open air beside or above it, or
a mob of one of them (:func:`target_positions`); :func:`place_agent` draws a standing place whose
nearest target lies a given distance away, and :func:`start_near` teleports the player there and
starts the driver's episode at the new place. The instruction experiment
(:mod:`mrsteve.eval.instruction`) and the instruction policy's training
(:mod:`mrsteve.train.instruction`) start their episodes this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mrsteve.tasks.driver import Driver


def target_positions(world: Any, classes: Sequence[str], on_mobs: bool) -> np.ndarray:
    """``float[K, 2]``: the world ``(x, z)`` of every target of the semantic ``classes``: the
    mobs of those kinds where they are (``on_mobs``), else the centres of the blocks of those
    classes with open air on a side or above."""
    content = world.content
    if on_mobs:
        mob_kinds = [i for i, mob in enumerate(content.mobs) if mob.name in classes]
        records = world.mobs.records
        chosen = records[np.isin(records["kind"], mob_kinds)]
        return np.stack([chosen["x"], chosen["z"]], axis=1).astype(np.float64)
    ids = [content.block(name).id for name in classes]
    blocks = world.blocks
    target = np.isin(blocks, ids)
    air = blocks == content.block("air").id
    open_side = np.zeros_like(target)
    open_side[:-1] |= air[1:]
    open_side[1:] |= air[:-1]
    open_side[:, :-1] |= air[:, 1:]
    open_side[:, :, :-1] |= air[:, :, 1:]
    open_side[:, :, 1:] |= air[:, :, :-1]
    x, _, z = np.nonzero(target & open_side)
    return np.stack([x + 0.5, z + 0.5], axis=1)


def place_agent(world: Any, targets: np.ndarray, rng: np.random.Generator,
                distance: tuple[float, float], tries: int = 200) -> dict[str, float]:
    """Teleport options (``x``, ``z``, ``yaw``) for a standing place whose nearest target lies
    ``distance`` blocks away (on the ground plane), drawn with ``rng``; ``ValueError`` when none
    of ``tries`` draws fits."""
    low, high = distance
    size_x, _, size_z = world.blocks.shape
    if len(targets) == 0:
        raise ValueError("the world has no target of the skill")
    for _ in range(tries):
        anchor = targets[rng.integers(len(targets))]
        angle, radius = rng.uniform(0, 2 * np.pi), rng.uniform(low, high)
        x, z = anchor[0] + radius * np.cos(angle), anchor[1] + radius * np.sin(angle)
        if not (2 <= x < size_x - 2 and 2 <= z < size_z - 2):
            continue
        nearest = np.min(np.hypot(targets[:, 0] - x, targets[:, 1] - z))
        if not low <= nearest <= high:
            continue
        column = world.blocks[int(x), :, int(z)]
        if np.isin(column, [world.content.block("water").id]).any():
            continue
        try:
            world.teleport(float(x), float(z))
        except ValueError:
            continue
        return {"x": float(x), "z": float(z), "yaw": float(rng.uniform(-180, 180))}
    raise ValueError(f"no standing place with the nearest target {low:g}-{high:g} blocks away")


def start_near(driver: Driver, targets: np.ndarray, rng: np.random.Generator,
               distance: tuple[float, float]) -> dict[str, float]:
    """Teleport the player of the driver's (reset) environment to a place of
    :func:`place_agent` and start the episode there (a no-op step observes the new place);
    returns the place. ``ValueError`` (nothing changed) when no place fits."""
    env = driver.env.unwrapped
    place = place_agent(env.world, targets, rng, distance)
    env.apply_commands({"teleport": place})
    driver.attach(driver.env.step({})[0])
    return place


__all__ = ["place_agent", "start_near", "target_positions"]
