"""Reading the perception layer's data files (``mrsteve/perception/data/*.toml``)."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any


def read_data_toml(name: str) -> dict[str, Any]:
    """The parsed TOML file ``data/<name>`` shipped with :mod:`mrsteve.perception`."""
    text = resources.files("mrsteve.perception").joinpath(f"data/{name}").read_text("utf-8")
    return tomllib.loads(text)
