"""The memory variants by name: the one registry the agent factory, the benchmarks and the
command line read.

==================  =====================================================================
``fifo``            FIFO Memory: the oldest frame goes first, a read scores every frame
``place``           Place Memory: frames clustered by place cell and heading
``event``           Event Memory: frames clustered into events by DP-Means
``place-event``     Place Event Memory: events within places (MrSteve's memory)
``center-embed``    Place Event Memory keeping only event centres (the paper's "Center Embed")
==================  =====================================================================

A variant is a memory class and the hyperparameters that make it (``center-embed`` is Place
Event Memory with ``center_only=True``); :meth:`MemoryVariant.config` is its whole
configuration, the paper's values as defaults, which an agent's configuration tree holds.

Other packages add memories through the entry-point group ``mrsteve.memories``
(:class:`~mrsteve.registry.Registry`): a :class:`MemoryVariant` of a class that takes
``(capacity, *, dim, **hyperparameters)``, keeps its hyperparameters' frozen dataclass as
``Config`` (:class:`~mrsteve.memory.clustered.MemoryConfig` fields give it the event
thresholds of the agent's encoder, as Event Memory's) and implements
:class:`~mrsteve.memory.Memory`. :func:`check_memory_variant` builds one, writes and reads it
before it is accepted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mrsteve.memory.base import Memory
from mrsteve.memory.clustered import MemoryConfig, make_config
from mrsteve.memory.event import EventMemory
from mrsteve.memory.fifo import FIFOMemory
from mrsteve.memory.place import PlaceMemory
from mrsteve.memory.place_event import PlaceEventMemory
from mrsteve.registry import Registry


@dataclass(frozen=True)
class MemoryVariant:
    """One memory: its class and the hyperparameters that make it this variant."""

    name: str
    title: str
    """How tables and figures call it."""
    memory_type: type
    """The memory's class (:class:`~mrsteve.memory.clustered.ClusteredMemory` for the paper's):
    ``memory_type(capacity, dim=..., **hyperparameters)``, its hyperparameters' dataclass as
    ``memory_type.Config``."""
    fixed: tuple[tuple[str, Any], ...] = ()
    """Hyperparameters that make the variant (``center_only=True`` for Center Embed)."""
    description: str = ""
    """What it keeps and forgets, in one line."""

    @property
    def config_type(self) -> type[MemoryConfig]:
        config_type = getattr(self.memory_type, "Config", None)
        if not (isinstance(config_type, type) and dataclasses.is_dataclass(config_type)):
            raise ValueError(f"{self.name} memory's class {self.memory_type.__name__} keeps no "
                             "Config dataclass of its hyperparameters")
        return config_type

    @property
    def has_places(self) -> bool:
        """Whether the variant clusters frames by place (it has a place cell side C)."""
        return "cell_size" in {field.name for field in dataclasses.fields(self.config_type)}

    @property
    def ranks_clusters(self) -> bool:
        """Whether a read ranks clusters by their centres and scans the ``top_k`` best (FIFO
        Memory scans every frame)."""
        return "top_k" in {field.name for field in dataclasses.fields(self.config_type)}

    @property
    def has_events(self) -> bool:
        """Whether the variant clusters frames into events (it has event merge thresholds, which
        come from the encoder's calibration)."""
        return "merge_threshold" in {field.name for field in dataclasses.fields(self.config_type)}

    def config(self, **hyperparameters: Any) -> MemoryConfig:
        """The variant's whole configuration: ``hyperparameters`` over the paper's defaults (an
        unknown name is an error listing the variant's hyperparameters)."""
        for name, value in self.fixed:
            if hyperparameters.get(name, value) != value:
                raise ValueError(f"{self.name} memory has {name}={value!r}; got {name}="
                                 f"{hyperparameters[name]!r}")
        return make_config(self.config_type, {**dict(self.fixed), **hyperparameters},
                           self.memory_type.__name__)

    def build(self, capacity: int | None = None, *, dim: int | None = None,
              config: MemoryConfig | None = None) -> Memory:
        """A new memory of this variant (``config``: its :meth:`config`, default the paper's)."""
        config = self.config() if config is None else config
        if type(config) is not self.config_type:
            raise ValueError(f"{self.name} memory takes a {self.config_type.__name__}, got a "
                             f"{type(config).__name__}")
        self.config(**dataclasses.asdict(config))  # the fixed hyperparameters hold
        return self.memory_type(capacity, dim=dim, **dataclasses.asdict(config))

    make = build


CHECK_FRAMES = 120
"""Frames :func:`check_memory_variant` writes (more than its memory's capacity)."""


def check_memory_variant(variant: MemoryVariant) -> None:
    """Raise ``ValueError`` (one line) unless ``variant`` builds a memory that keeps the
    :class:`~mrsteve.memory.Memory` protocol: it is built at a capacity of 64 frames of 8
    dimensions, written 120 frames, holds at most 64, answers a read with a
    :class:`~mrsteve.memory.MemoryRead` whose frames all score at least the threshold (nearest
    first with ``near``; none inside a disc of ``outside``; a best score with ``scores="best"``;
    the first ``limit`` of them, every match counted, with ``limit``), and is empty after
    :meth:`~mrsteve.memory.Memory.clear`."""
    import numpy as np

    from mrsteve.memory.base import Memory, MemoryRead

    what = f"the memory variant {getattr(variant, 'name', variant)!r}"
    if not isinstance(variant, MemoryVariant):
        raise ValueError(f"{what} is a {type(variant).__name__}, not a MemoryVariant")
    try:
        memory = variant.build(64, dim=8)
    except Exception as error:  # noqa: BLE001 (whatever breaks, the checker names it)
        raise ValueError(f"{what} cannot be built at capacity 64, dim 8: {error}") from None
    if not isinstance(memory, Memory):
        raise ValueError(f"{what} builds a {type(memory).__name__}, which lacks the Memory "
                         "protocol's methods (write, read, clear, stats, clusters, save, ...)")
    rng = np.random.default_rng(0)
    frames = rng.normal(size=(CHECK_FRAMES, 8)).astype(np.float32)
    frames /= np.linalg.norm(frames, axis=1, keepdims=True)
    try:
        for t, embedding in enumerate(frames):
            memory.write(embedding, (0.5 * t, 0.0, 0.0, 0.0, 0.0), t)
        held = len(memory)
        found = memory.read(frames[-1], 0.5, near=(0.0, 0.0))
        spared = memory.read(frames[-1], 0.5, near=(0.0, 0.0), outside=[(0.0, 0.0, 1.0)],
                             scores="best")
        first = memory.read(frames[-1], 0.5, near=(0.0, 0.0), limit=1)
        memory.clear()
        cleared = len(memory)
    except Exception as error:  # noqa: BLE001
        raise ValueError(f"{what} fails a write, read or clear: {type(error).__name__}: "
                         f"{error}") from None
    if not 0 < held <= 64:
        raise ValueError(f"{what} holds {held} frames after 120 writes at capacity 64")
    if not isinstance(found, MemoryRead):
        raise ValueError(f"{what} reads a {type(found).__name__}, not a MemoryRead")
    if not len(found.t) == len(found.pose) == len(found.score) or (
            len(found) and float(np.min(found.score)) < 0.5 - 1e-6):
        raise ValueError(f"{what} reads frames scoring under the threshold, or arrays of "
                         "different lengths")
    distance = np.abs(np.asarray(found.pose, np.float64)[:, 0])
    if np.any(np.diff(distance) < -1e-6):
        raise ValueError(f"{what} does not return the frames nearest first when given near")
    if not isinstance(spared, MemoryRead) or np.any(np.abs(spared.pose[:, 0]) <= 1.0) or (
            len(spared) and not spared.best_score >= 0.5 - 1e-6):
        raise ValueError(f"{what} returns frames inside a disc of outside, or no best score "
                         "with scores='best'")
    if not isinstance(first, MemoryRead) or len(first) > 1 or first.matched != len(found) or (
            len(found) and not np.array_equal(first.t, found.t[:1])):
        raise ValueError(f"{what} does not return the first frame of a read, counting every "
                         "match (MemoryRead.matched), with limit=1")
    if cleared:
        raise ValueError(f"{what} holds {cleared} frames after clear()")


MEMORY_VARIANTS: Registry[MemoryVariant] = Registry(
    "memory", "mrsteve.memories", (
        MemoryVariant("fifo", "FIFO", FIFOMemory,
                      description="the oldest frame goes first, a read scores every frame"),
        MemoryVariant("place", "Place", PlaceMemory,
                      description="frames clustered by place cell and heading"),
        MemoryVariant("event", "Event", EventMemory,
                      description="frames clustered into events by DP-Means"),
        MemoryVariant("place-event", "Place Event", PlaceEventMemory,
                      description="events within places (MrSteve's memory)"),
        MemoryVariant("center-embed", "Place Event (centre only)", PlaceEventMemory,
                      (("center_only", True),),
                      description="Place Event Memory keeping only event centres"),
    ), check=check_memory_variant)
"""Every memory variant by name (module docstring)."""


def memory_variant(name: str) -> MemoryVariant:
    """The variant called ``name`` (an unknown name lists the known ones)."""
    return MEMORY_VARIANTS.spec(name)
