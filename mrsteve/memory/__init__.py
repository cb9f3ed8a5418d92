"""What-Where-When episodic memories (paper, Section 3.1): FIFO, Place, Event and Place Event
Memory (with its "Center Embed" variant), DP-Means, and a versioned file format.

Modules, lowest first: ``base`` (the ``Memory`` protocol, read results, input checks), ``frames``
(contiguous frame storage), ``clusters`` (per-cluster slot blocks in one arena, the centre
matrix of open clusters, size buckets),
``kernels`` (the numba read and write kernels), ``dpmeans``, ``fileformat`` (the versioned file format),
``clustered`` (what the variants share), the variants ``fifo``, ``place``, ``event``,
``place_event``, and ``persistence`` (loading).

numpy and numba only: this layer imports neither gymnasium nor torch.

Usage::

    memory = PlaceEventMemory(capacity=20_000)
    memory.write(embedding, (x, y, z, yaw, pitch), t)   # every step
    found = memory.read(query, 0.2274, near=(x, z))     # frames nearest first
    found = memory.read(query, 0.2274, near=(x, z), scores="best")  # the same frames, most
                                                        # decided from int8 codes
    found = memory.read(query, 0.2274, near=(x, z), limit=16)  # the 16 nearest; found.matched
                                                        # counts every match

Every memory takes ``frame_precision="float16"`` to keep its frames in half the bytes (reads move
half as much; scores of unit vectors differ from float32's by up to about 1e-4).
"""

from mrsteve.memory.base import (
    ClusterView,
    Memory,
    MemoryRead,
    MemoryStats,
    ReadFilter,
    RecalledFrame,
)
from mrsteve.memory.clustered import ClusterConfig, MemoryConfig
from mrsteve.memory.dpmeans import DPMeans, DPMeansResult
from mrsteve.memory.event import EventConfig, EventMemory
from mrsteve.memory.fifo import FIFOMemory
from mrsteve.memory.fileformat import FORMAT_VERSION
from mrsteve.memory.persistence import load
from mrsteve.memory.place import PlaceConfig, PlaceMemory, place_key
from mrsteve.memory.place_event import PlaceEventConfig, PlaceEventMemory
from mrsteve.memory.variants import MEMORY_VARIANTS, MemoryVariant, memory_variant

__all__ = [
    "FORMAT_VERSION",
    "MEMORY_VARIANTS",
    "ClusterConfig",
    "ClusterView",
    "DPMeans",
    "DPMeansResult",
    "EventConfig",
    "EventMemory",
    "FIFOMemory",
    "Memory",
    "MemoryConfig",
    "MemoryRead",
    "MemoryStats",
    "MemoryVariant",
    "PlaceConfig",
    "PlaceEventConfig",
    "PlaceEventMemory",
    "PlaceMemory",
    "ReadFilter",
    "RecalledFrame",
    "load",
    "memory_variant",
    "place_key",
]
