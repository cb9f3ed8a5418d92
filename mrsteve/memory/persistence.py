"""The memory file format: an uncompressed ``.npz`` archive whose ``header`` member is UTF-8 JSON
``{"format": "mrsteve.memory", "version", "kind", "capacity", "dim", "config", "state"}`` and whose
other members are the memory's arrays. Saving writes a temporary file and renames it over the
target, so a crash never leaves half a file; loading checks the header and every member's CRC, and
raises ``ValueError`` for anything that is not an intact memory file of this version.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.memory.clustered import ClusteredMemory

FORMAT = "mrsteve.memory"
FORMAT_VERSION = 1
_HEADER = "header"
_ZIP_MAGIC = b"PK\x03\x04"


def save_memory(memory: ClusteredMemory, path: str | os.PathLike[str]) -> None:
    """Write ``memory`` to ``path`` atomically (see the module docstring for the format)."""
    scalars, arrays = memory._state()
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "kind": type(memory).__name__,
        "capacity": memory.capacity,
        "dim": memory.dim,
        "config": dataclasses.asdict(memory.config),
        "state": scalars,
    }
    members = {_HEADER: np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8), **arrays}
    target = Path(path)
    descriptor, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            np.savez(handle, **members)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str]) -> ClusteredMemory:
    """The memory saved at ``path`` by ``memory.save(path)``, exactly as it was."""
    arrays = _read_members(Path(path))
    try:
        header = json.loads(arrays.pop(_HEADER).tobytes().decode("utf-8"))
    except KeyError:
        raise ValueError(f"{path}: not a mrsteve memory file (no header)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: corrupted memory file header ({error})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not a mrsteve memory file (format is not {FORMAT!r})")
    if header.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: memory file version {header.get('version')!r}, this mrsteve reads "
            f"version {FORMAT_VERSION}"
        )
    kinds = _memory_kinds()
    kind = header.get("kind")
    if kind not in kinds:
        raise ValueError(f"{path}: unknown memory kind {kind!r}; known: {sorted(kinds)}")
    try:
        return kinds[kind]._from_state(
            header["capacity"], header["dim"], header["config"], header["state"], arrays
        )
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise ValueError(
            f"{path}: corrupted memory file ({type(error).__name__}: {error})"
        ) from None


def _read_members(path: Path) -> dict[str, np.ndarray]:
    with open(path, "rb") as handle:
        if handle.read(4) != _ZIP_MAGIC:
            raise ValueError(f"{path}: not a mrsteve memory file (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        raise ValueError(
            f"{path}: corrupted memory file ({type(error).__name__}: {error})"
        ) from None


def _memory_kinds() -> dict[str, Any]:
    from mrsteve.memory.event import EventMemory
    from mrsteve.memory.fifo import FIFOMemory
    from mrsteve.memory.place import PlaceMemory
    from mrsteve.memory.place_event import PlaceEventMemory

    return {cls.__name__: cls for cls in (FIFOMemory, PlaceMemory, EventMemory, PlaceEventMemory)}
