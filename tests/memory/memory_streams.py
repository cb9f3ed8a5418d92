"""Synthetic frames for the memory tests: the five memories, unit embeddings, scenes and walks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

import numpy as np

from mrsteve.memory import MEMORY_VARIANTS, Memory, MemoryVariant


def build(variant: MemoryVariant, capacity: int | None = None, *, dim: int | None = None,
          **hyperparameters) -> Memory:
    """A memory of ``variant`` with ``hyperparameters`` over its own."""
    return variant.build(capacity, dim=dim, config=variant.config(**hyperparameters))


VARIANTS: dict[str, tuple[MemoryVariant, dict]] = {
    **{name: (variant, {}) for name, variant in MEMORY_VARIANTS.items()},
    "fifo-float16": (MEMORY_VARIANTS["fifo"], {"frame_precision": "float16"}),
    "place-event-float16": (MEMORY_VARIANTS["place-event"], {"frame_precision": "float16"}),
}
"""Every memory variant of the registry by its name, and two keeping their frames in float16
(``*-float16``), with the hyperparameters that make them so."""
MEMORIES: dict[str, Callable[..., Memory]] = {
    name: partial(build, variant, **extra) for name, (variant, extra) in VARIANTS.items()}
"""Each factory takes ``(capacity=None, *, dim=None, **hyperparameters)``."""


def clusters_events(name: str) -> bool:
    """Whether memory ``name`` clusters its frames into events (it has an ``update_freq``)."""
    return "update_freq" in {field.name for field in dataclasses.fields(
        VARIANTS[name][0].config_type)}


def memory_class(name: str) -> tuple[type, dict]:
    """The class of memory ``name`` and the hyperparameters that make it that memory."""
    variant, extra = VARIANTS[name]
    return variant.memory_type, {**dict(variant.fixed), **extra}
QUICK_CLUSTERING: dict[str, dict[str, int]] = {
    "event": {"update_freq": 10},
    "place-event": {"update_freq": 10},
    "center-embed": {"update_freq": 10},
    "place-event-float16": {"update_freq": 10},
}
"""Settings that make small tests cluster events (the paper's R = 100 needs long streams)."""


def base_name(name: str) -> str:
    """The memory a ``*-float16`` variant keeps its frames like (its name without the suffix)."""
    return name.removesuffix("-float16")


def as_stored(name: str, embeddings: np.ndarray) -> np.ndarray:
    """``embeddings`` (float32) as memory ``name`` keeps them: rounded to float16 by the
    ``*-float16`` memories."""
    if name.endswith("-float16"):
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
