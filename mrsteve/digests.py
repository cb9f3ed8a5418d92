"""Digests that name what produced a result: of JSON-able configurations and of the data files
and weights the package ships (stdlib only).

A run spec's digest (:mod:`mrsteve.eval.spec`) is the key of its episode record, so everything
that decides the episode must reach it: the configuration tree and the digests of the data files
its parts load (:func:`data_digests`). Recalibrated thresholds or retrained weights therefore
never resume the records of the old ones.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parent
"""The installed package's folder (its data files lie below it)."""


OMITTED_WHEN_DEFAULT = MappingProxyType({"omitted_when_default": True})
"""The metadata of a dataclass field that :func:`plain` leaves out while it holds its default: a
field added to a configuration later, so that the configurations without it keep their digests
(and the records keyed by them)."""


def _default(field: dataclasses.Field) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: dataclasses as dicts of their fields (less those marked
    :data:`OMITTED_WHEN_DEFAULT` that hold their default), tuples as lists, enums as their
    values, paths as strings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name))
                for field in dataclasses.fields(value)
                if not (field.metadata.get("omitted_when_default")
                        and getattr(value, field.name) == _default(field))}
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    return value


def digest(value: Any, length: int = 16) -> str:
    """A hex SHA-256 digest (``length`` characters) of ``value`` as canonical JSON (keys sorted)."""
    text = json.dumps(plain(value), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


@cache
def data_digest(path: str) -> str:
    """SHA-256 of a data file shipped in the package, named by its path below ``mrsteve/`` (e.g.
    ``perception/data/thresholds.toml``)."""
    return hashlib.sha256((PACKAGE_ROOT / path).read_bytes()).hexdigest()


def data_digests(paths: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``((path, sha256), ...)`` of shipped data files (:func:`data_digest`), sorted by path."""
    return tuple((path, data_digest(path)) for path in sorted(set(paths)))


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in chunks: released weights are gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class WeightsFile:
    """A weights file a part runs with that the package does not ship (a released checkpoint),
    named in a configuration tree by where it is and what it holds, so that every worker finds
    it and a file changed later is told apart."""

    kind: str
    """What it holds: a checkpoint kind (``mineclip``, ``vpt-nav``, ``steve1``,
    ``steve1-prior``)."""
    path: str
    """Its absolute path."""
    sha256: str
    """SHA-256 of its bytes (:func:`file_sha256`)."""


def check_files(files: tuple[WeightsFile, ...], kinds: tuple[str, ...], what: str) -> None:
    """Raise ``ValueError`` unless ``files`` are weights files of ``kinds``, in that order: what
    ``what`` (a part, e.g. "the mineclip encoder") is built from."""
    given = tuple(file.kind for file in files)
    if given != kinds:
        raise ValueError(f"{what} runs on released weights files ({', '.join(kinds)}), given "
                         f"{', '.join(given) or 'none'}")


WORLD_DATA = ("world/data/content.toml", "world/data/crafting.toml", "world/data/worlds.toml",
              "tasks/data/tasks.toml")
"""The data files every task loads: blocks and items, crafting recipes, world recipes, the task
catalogue."""

HELD_OUT_WORLD_DATA = "world/data/heldout_worlds.toml"
"""The held-out world recipes: loaded by every task too, but only the episodes in one of its
worlds record its digest (:class:`mrsteve.eval.spec.RunSpec`; the forests' and deserts' recipe
files are kept the same way, :data:`mrsteve.world.recipes.OWN_FILES`), so a held-out world added
or changed leaves every other record as it was."""
