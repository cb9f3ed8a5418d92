"""Loading memory files (format in :mod:`mrsteve.memory.fileformat`; memories save themselves
with ``memory.save(path)``)."""

from __future__ import annotations

import os

from mrsteve.memory.clustered import ClusteredMemory
from mrsteve.memory.event import EventMemory
from mrsteve.memory.fifo import FIFOMemory
from mrsteve.memory.fileformat import FORMAT, FORMAT_VERSION, invalid, read_archive
from mrsteve.memory.place import PlaceMemory
from mrsteve.memory.place_event import PlaceEventMemory
from mrsteve.naming import lookup

__all__ = ["FORMAT", "FORMAT_VERSION", "MEMORY_KINDS", "load"]

MEMORY_KINDS: dict[str, type[ClusteredMemory]] = {
    cls.__name__: cls for cls in (FIFOMemory, PlaceMemory, EventMemory, PlaceEventMemory)
}
"""The classes a file's ``kind`` names."""


def load(path: str | os.PathLike[str]) -> ClusteredMemory:
    """The memory saved at ``path`` by ``memory.save(path)``, exactly as it was."""
    header, arrays = read_archive(path)
    try:
        kind = lookup(MEMORY_KINDS, header.get("kind"), "memory kind")
    except ValueError as error:
        raise invalid(path, str(error)) from None
    try:
        return kind._from_state(
            header["capacity"], header["dim"], header["config"], header["state"], arrays
        )
    except Exception as error:  # noqa: BLE001 (any inconsistency of a crafted file)
        raise invalid(path, f"corrupted ({type(error).__name__}: {error})") from None
