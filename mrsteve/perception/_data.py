"""Reading the perception layer's data files (``mrsteve/perception/data/*.toml``)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any


def read_data_toml(name: str) -> dict[str, Any]:
    """The parsed TOML file ``data/<name>`` shipped with :mod:`mrsteve.perception`."""
    text = resources.files("mrsteve.perception").joinpath(f"data/{name}").read_text("utf-8")
    return tomllib.loads(text)


def data_path(name: str) -> Path:
    """The file ``data/<name>`` of :mod:`mrsteve.perception` on disk (to rewrite shipped data)."""
    return Path(str(resources.files("mrsteve.perception").joinpath(f"data/{name}")))
