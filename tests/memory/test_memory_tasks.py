"""The paper's three Memory Tasks (Section 4.3, Appendix "Memory Tasks") at the memory level:
capacity 2,000, a 3,000-step exploration phase, synthetic scene embeddings, paper defaults.
Each task writes the frames and then asks for the goal frame's scene; a memory "keeps" the goal
when a read returns frames from where the goal was seen."""

from __future__ import annotations

import numpy as np
import pytest
from memory_streams import MEMORIES, SceneWorld, base_name, stay, trip, write_all

CAPACITY = 2000
STEPS = 3000
THRESHOLD = 0.8
"""Frames of one scene score about 0.95 against each other; distinct scenes about 0."""


def travel(
    world: SceneWorld, start: tuple[float, float], count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Walk away from ``start``; the view changes every 60 steps (two places)."""
    scenes = [world.scene() for _ in range(count // 60 + 1)]
    embeddings = np.concatenate([world.view(scene, 60) for scene in scenes])[:count]
    return embeddings, trip(start, count)


def remembers(name: str, embeddings, poses, goal: np.ndarray, where: tuple[float, float]) -> bool:
    memory = MEMORIES[name](CAPACITY)
    write_all(memory, embeddings, poses)
    assert len(memory) <= CAPACITY
    found = memory.read(goal, THRESHOLD)
    return bool((np.hypot(found.pose[:, 0] - where[0], found.pose[:, 2] - where[1]) < 3.0).any())


def find_water(world: SceneWorld):
    """500 steps at a pond, looking around, then a trip."""
    water = world.scene()
    pond = stay(0.0, 0.0, 500)
    pond[:, 3] = np.arange(500) * 1.0  # turning: the pond fills six heading places
    away, path = travel(world, (0.0, 0.0), STEPS - 500)
    embeddings = np.concatenate([world.view(water, 500), away])
    return embeddings, np.concatenate([pond, path]), embeddings[250], (0.0, 0.0)


def find_zombies_death_spot(world: SceneWorld):
    """One place: 500 steps of burning zombies (event X), 500 steps without (event Y), a trip."""
    place, zombies = world.scene(), world.scene()
    burning = world.mix((1.0, place), (1.2, zombies))  # cosine to the empty place about 0.64
    away, path = travel(world, (0.0, 0.0), STEPS - 1000)
    embeddings = np.concatenate([world.view(burning, 500), world.view(place, 500), away])
    return embeddings, np.concatenate([stay(0.0, 0.0, 1000), path]), embeddings[100], (0.0, 0.0)


def find_first_visited_house(world: SceneWorld):
    """Two look-alike houses (cosine about 0.9): 100 steps at the first, 2,000 at the second."""
    house = world.scene()
    first = world.mix((1.0, house), (0.3, world.scene()))
    second = world.mix((1.0, house), (0.3, world.scene()))
    away, path = travel(world, (60.0, 0.0), STEPS - 2100)
    embeddings = np.concatenate([world.view(first, 100), world.view(second, 2000), away])
    poses = np.concatenate([stay(0.0, 0.0, 100), stay(60.0, 0.0, 2000), path])
    return embeddings, poses, embeddings[50], (0.0, 0.0)


@pytest.mark.parametrize(
    ("task", "keepers"),
    [
        (find_water, {"place", "event", "place-event", "center-embed"}),
        (find_zombies_death_spot, {"event", "place-event", "center-embed"}),
        (find_first_visited_house, {"place", "place-event", "center-embed"}),
    ],
)
def test_which_memories_keep_the_goal(task, keepers):
    """(a) FIFO forgets the water, the others keep it; (b) Place forgets event X at a place later
    dominated by event Y, Event and Place Event keep it; (c) Event forgets the first of two
    look-alike places, Place and Place Event keep it (FIFO, which drops the first 1,000 frames,
    forgets in (b) and (c) as well)."""
    embeddings, poses, goal, where = task(SceneWorld(seed=7))
    kept = {name for name in MEMORIES if remembers(name, embeddings, poses, goal, where)}
    assert kept == {name for name in MEMORIES if base_name(name) in keepers}  # float16 as float32
