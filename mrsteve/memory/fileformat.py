"""The memory file format: an uncompressed ``.npz`` archive whose ``header`` member is UTF-8 JSON
``{"format": "mrsteve.memory", "version", "kind", "capacity", "dim", "config", "state"}`` and whose
other members are the memory's arrays. Writing goes through :func:`mrsteve.fileio.atomic_path`
(a temporary file renamed over the target, only ever a regular file), so a crash never leaves
half a file and ``/dev/null`` or a directory is refused; reading checks the header and every
member's CRC, and raises ``ValueError`` for anything that is not an intact memory file of a
version this code reads.

Versions: 4 adds ``frame_precision`` to every memory's config, with ``frames.embeddings`` in
that dtype (float32, or float16); 3 stores each cluster's slots as a block of one arena and the
open clusters in the order of the read's centre rows (``clusters.arena``, ``clusters.live``); 2
also stored the centres' embeddings (a copy of the centre frames', ignored on load); 1 stored a
slot queue per cluster and centres by cluster id. Versions 1 to 3 still load (1 and 2 converted
on load; all three kept float32 frames). This module knows nothing of the memory classes, so the
memories (which save) and :mod:`mrsteve.memory.persistence` (which loads) both import it without
importing each other.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.fileio import atomic_path

FORMAT = "mrsteve.memory"
FORMAT_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
_HEADER = "header"
_ZIP_MAGIC = b"PK\x03\x04"


def write_archive(path: str | os.PathLike[str], header: dict[str, Any], arrays: dict) -> None:
    """Write ``header`` (``format`` and ``version`` added) and ``arrays`` to ``path`` atomically."""
    header = {"format": FORMAT, "version": FORMAT_VERSION, **header}
    members = {_HEADER: np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8), **arrays}
    with atomic_path(path) as temporary, open(temporary, "wb") as handle:
        np.savez(handle, **members)
        handle.flush()
        os.fsync(handle.fileno())


def invalid(path: str | os.PathLike[str], reason: str) -> ValueError:
    """The one error every unreadable memory file gives."""
    return ValueError(f"{path} is not a valid mrsteve memory file: {reason}")


def read_archive(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(header, arrays)`` of a memory file of a readable version."""
    arrays = _read_members(Path(path))
    try:
        header = json.loads(arrays.pop(_HEADER).tobytes().decode("utf-8"))
    except KeyError:
        raise invalid(path, "no header") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise invalid(path, f"corrupted header ({error})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise invalid(path, f"the header's format is not {FORMAT!r}")
    if header.get("version") not in READABLE_VERSIONS:
        raise invalid(
            path,
            f"version {header.get('version')!r}, this mrsteve reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
        )
    return header, arrays


def _read_members(path: Path) -> dict[str, np.ndarray]:
    with open(path, "rb") as handle:  # a missing or unreadable file raises OSError as usual
        if handle.read(4) != _ZIP_MAGIC:
            raise invalid(path, "not an .npz archive")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except Exception as error:  # noqa: BLE001 (zipfile and numpy raise many kinds on bad bytes)
        raise invalid(path, f"corrupted ({type(error).__name__}: {error})") from None
