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
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mrsteve.memory.base import Memory
from mrsteve.memory.clustered import ClusteredMemory, MemoryConfig, make_config
from mrsteve.memory.event import EventMemory
from mrsteve.memory.fifo import FIFOMemory
from mrsteve.memory.place import PlaceMemory
from mrsteve.memory.place_event import PlaceEventMemory
from mrsteve.naming import lookup


@dataclass(frozen=True)
class MemoryVariant:
    """One memory of the paper: its class and the hyperparameters that make it this variant."""

    name: str
    title: str
    """How tables and figures call it."""
    memory_type: type[ClusteredMemory]
    fixed: tuple[tuple[str, Any], ...] = ()
    """Hyperparameters that make the variant (``center_only=True`` for Center Embed)."""

    @property
    def config_type(self) -> type[MemoryConfig]:
        return self.memory_type.Config

    @property
    def has_places(self) -> bool:
        """Whether the variant clusters frames by place (it has a place cell side C)."""
        return "cell_size" in {field.name for field in dataclasses.fields(self.config_type)}

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


MEMORY_VARIANTS: dict[str, MemoryVariant] = {
    variant.name: variant
    for variant in (
        MemoryVariant("fifo", "FIFO", FIFOMemory),
        MemoryVariant("place", "Place", PlaceMemory),
        MemoryVariant("event", "Event", EventMemory),
        MemoryVariant("place-event", "Place Event", PlaceEventMemory),
        MemoryVariant("center-embed", "Place Event (centre only)", PlaceEventMemory,
                      (("center_only", True),)),
    )
}
"""Every memory variant by name (module docstring)."""


def memory_variant(name: str) -> MemoryVariant:
    """The variant called ``name`` (an unknown name lists the known ones)."""
    return lookup(MEMORY_VARIANTS, name, "memory")
