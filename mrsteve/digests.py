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
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parent
"""The installed package's folder (its data files lie below it)."""


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: dataclasses as dicts of their fields, tuples as lists,
    enums as their values, paths as strings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name))
                for field in dataclasses.fields(value)}
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


WORLD_DATA = ("world/data/content.toml", "world/data/crafting.toml", "world/data/worlds.toml",
              "tasks/data/tasks.toml")
"""The data files every task loads: blocks and items, crafting recipes, world recipes, the task
catalogue."""
