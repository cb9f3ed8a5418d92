"""Synthetic frames for the memory tests: the five memories, unit embeddings, scenes and walks."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from mrsteve.memory import EventMemory, FIFOMemory, PlaceEventMemory, PlaceMemory

MEMORIES: dict[str, Callable[..., object]] = {
    "fifo": FIFOMemory,
    "place": PlaceMemory,
    "event": EventMemory,
    "place_event": PlaceEventMemory,
    "place_event_centre_only": partial(PlaceEventMemory, center_only=True),
    "fifo_float16": partial(FIFOMemory, frame_precision="float16"),
    "place_event_float16": partial(PlaceEventMemory, frame_precision="float16"),
}
"""Each factory takes ``(capacity=None, *, dim=None, **hyperparameters)``; ``*_float16`` keep
their frames in float16."""
QUICK_CLUSTERING: dict[str, dict[str, int]] = {
    "event": {"update_freq": 10},
    "place_event": {"update_freq": 10},
    "place_event_centre_only": {"update_freq": 10},
    "place_event_float16": {"update_freq": 10},
}
"""Settings that make small tests cluster events (the paper's R = 100 needs long streams)."""


def base_name(name: str) -> str:
    """The memory a ``*_float16`` variant keeps its frames like (its name without the suffix)."""
    return name.removesuffix("_float16")


def as_stored(name: str, embeddings: np.ndarray) -> np.ndarray:
    """``embeddings`` (float32) as memory ``name`` keeps them: rounded to float16 by the
    ``*_float16`` memories."""
    if name.endswith("_float16"):
        return embeddings.astype(np.float16).astype(np.float32)
    return embeddings


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, np.float64)
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


def random_frames(
    rng: np.random.Generator, count: int, dim: int, spread: float = 20.0, scenes: int = 6
) -> tuple[np.ndarray, np.ndarray]:
    """``(embeddings, poses)``: noisy copies of a few scene vectors at random poses."""
    prototypes = unit(rng.normal(size=(scenes, dim)))
    embeddings = unit(
        prototypes[rng.integers(scenes, size=count)] + 0.3 * unit(rng.normal(size=(count, dim)))
    )
    poses = np.zeros((count, 5))
    poses[:, [0, 2]] = rng.uniform(-spread, spread, size=(count, 2))
    poses[:, 3] = rng.uniform(-180, 180, size=count)
    poses[:, 4] = rng.uniform(-30, 30, size=count)
    return embeddings, poses


class SceneWorld:
    """Scenes as unit vectors: ``view(scene, n)`` gives ``n`` noisy frames of one scene (cosine
    about 0.96 to each other), so distinct scenes (cosine about 0) form distinct events."""

    def __init__(self, dim: int = 64, seed: int = 0) -> None:
        self.dim = dim
        self.rng = np.random.default_rng(seed)

    def scene(self) -> np.ndarray:
        return unit(self.rng.normal(size=self.dim))

    def mix(self, *parts: tuple[float, np.ndarray]) -> np.ndarray:
        return unit(sum(weight * vector for weight, vector in parts))

    def view(self, scene: np.ndarray, count: int) -> np.ndarray:
        return unit(scene + 0.2 * unit(self.rng.normal(size=(count, self.dim))))


def stay(x: float, z: float, count: int, yaw: float = 0.0) -> np.ndarray:
    """Poses of an agent standing at ``(x, z)`` facing ``yaw``."""
    poses = np.zeros((count, 5))
    poses[:, 0], poses[:, 2], poses[:, 3] = x, z, yaw
    return poses


def trip(start: tuple[float, float], count: int, speed: float = 0.2) -> np.ndarray:
    """Poses walking straight along +x from ``start``: a new 6-block place every 30 steps."""
    poses = stay(*start, count)
    poses[:, 0] += speed * np.arange(1, count + 1)
    poses[:, 3] = -90.0  # facing +x
    return poses


def write_all(memory, embeddings: np.ndarray, poses: np.ndarray, start: int = 0) -> int:
    """Write frames with steps ``start, start + 1, ...``; returns the next step."""
    for offset, (embedding, pose) in enumerate(zip(embeddings, poses)):
        memory.write(embedding, pose, start + offset)
    return start + len(embeddings)
