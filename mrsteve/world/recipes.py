"""The world recipes: the paper's maps and test terrains, built from a seeded generator.

Each recipe is data (``data/worlds.toml``, and the files of its own of :data:`OWN_FILES`: the
held-out worlds, Minecraft's forests and deserts): a size, a spawn and a list of terrain features
(:mod:`mrsteve.world.terrain`) applied in order, so a new map is a data edit. ``mrsteve worlds``
lists them; :func:`build_layout` builds one into a :class:`~mrsteve.world.layout.WorldLayout`.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import numpy as np

from mrsteve.naming import lookup, unknown_name
from mrsteve.world.chunks import UnboundedRecipe
from mrsteve.world.layout import WorldLayout
from mrsteve.world.terrain import FEATURES, Feature, Site


@dataclass(frozen=True)
class WorldRecipe:
    """How to build one world: the grid's size, where the player starts, and its features."""

    name: str
    size: tuple[int, int]
    """Extent along x and z in blocks, the wall ring included (the walkable inside is
    ``size - 2``); it is the shape of the built grid along x and z."""
    description: str
    """One line for ``mrsteve worlds``."""
    spawn: tuple[int, int]
    """The column the player starts on (its centre; feet on the ground)."""
    spawn_yaw: float
    """Heading at the start in degrees (0 faces +z)."""
    features: tuple[Feature, ...]
    """Applied in order: every ``shape`` pass, voxelisation, then every ``populate`` pass."""

    def build(self, rng: np.random.Generator) -> WorldLayout:
        """The world for this generator: same generator state, same arrays."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        site = Site(self.size, self.spawn, self.spawn_yaw)
        # One generator per feature, drawn in order: a feature appended to a recipe leaves
        # everything the others built unchanged.
        rngs = [np.random.default_rng(int(rng.integers(2**63))) for _ in self.features]
        for feature, feature_rng in zip(self.features, rngs, strict=True):
            feature.shape(site, feature_rng)
        site.voxelise()
        for feature, feature_rng in zip(self.features, rngs, strict=True):
            feature.populate(site, feature_rng)
        return site.finish(self.name)


def build_layout(name: str, rng: np.random.Generator) -> WorldLayout:
    """Build the world recipe called ``name``; unknown names raise ``ValueError`` listing all."""
    return lookup(WORLD_RECIPES, name, "world").build(rng)


WORLDS_FILE = "data/worlds.toml"
"""The paper's maps and test terrains and the learned parts' training worlds (below
``mrsteve/world/``): every task's episodes depend on it."""
HELD_OUT_FILE = "data/heldout_worlds.toml"
"""The held-out world recipes: worlds no learned part trains, calibrates or is tuned in."""
FOREST_FILE = "data/forest_worlds.toml"
"""Forests as dense as Minecraft's, beyond the paper: a navigation terrain and a navigator
training world."""
DESERT_FILE = "data/desert_worlds.toml"
"""Deserts as Minecraft's, beyond the paper: a navigation terrain and a navigator training
world."""
OWN_FILES = (HELD_OUT_FILE, FOREST_FILE, DESERT_FILE)
"""Recipe files that only the episodes in their worlds depend on (their digests are recorded by
those episodes alone, :class:`mrsteve.eval.spec.RunSpec`), so that a world added or changed
there leaves every other record as it was."""


@cache
def _recipe_tables(name: str) -> dict[str, list[dict[str, Any]]]:
    """The ``world`` and ``unbounded`` tables of the recipe file ``name``."""
    raw = tomllib.loads(resources.files("mrsteve.world").joinpath(name).read_text("utf-8"))
    return {kind: list(raw.get(kind, [])) for kind in ("world", "unbounded")}


@cache
def load_world_recipes() -> Mapping[str, WorldRecipe | UnboundedRecipe]:
    """Every recipe of :data:`WORLDS_FILE` and of :data:`OWN_FILES` by name, parsed and checked
    once per process."""
    tables = [_recipe_tables(name) for name in (WORLDS_FILE, *OWN_FILES)]
    return parse_world_recipes({kind: [table for raw in tables for table in raw[kind]]
                                for kind in ("world", "unbounded")})


@cache
def recipe_names(file: str) -> frozenset[str]:
    """The names of the recipes of ``file`` (:data:`WORLDS_FILE` or one of :data:`OWN_FILES`)."""
    return frozenset(table["name"] for tables in _recipe_tables(file).values()
                     for table in tables)


def held_out_world_names() -> frozenset[str]:
    """The names of the held-out world recipes (:data:`HELD_OUT_FILE`)."""
    return recipe_names(HELD_OUT_FILE)


def own_recipe_file(name: str) -> str | None:
    """The file of :data:`OWN_FILES` that defines the recipe ``name`` (``world/data/...``, as
    data digests name files), or None when :data:`WORLDS_FILE` does or none does."""
    return next((f"world/{file}" for file in OWN_FILES if name in recipe_names(file)), None)


def parse_world_recipes(raw: Mapping[str, Any]) -> Mapping[str, WorldRecipe | UnboundedRecipe]:
    """Build and validate the recipes of a parsed ``worlds.toml``."""
    recipes: dict[str, WorldRecipe | UnboundedRecipe] = {}
    parsed = [_parse_world(table) for table in raw.get("world", [])]
    parsed += [_parse_unbounded(table) for table in raw.get("unbounded", [])]
    for recipe in parsed:
        if recipe.name in recipes:
            raise ValueError(f"worlds.toml: world {recipe.name!r} is defined twice")
        recipes[recipe.name] = recipe
    return types.MappingProxyType(recipes)


_UNBOUNDED_KEYS = {"name", "description", "spawn_biome"}


def _parse_unbounded(table: Mapping[str, Any]) -> UnboundedRecipe:
    where = f"worlds.toml: unbounded world {table.get('name', '?')!r}"
    for key in table:
        if key not in _UNBOUNDED_KEYS:
            raise ValueError(f"{where}: {unknown_name('key', key, sorted(_UNBOUNDED_KEYS))}")
    missing = {"name", "description"} - set(table)
    if missing:
        raise ValueError(f"{where}: missing keys {sorted(missing)}")
    try:
        return UnboundedRecipe(
            name=_coerce(table["name"], str, f"{where}: name"),
            description=_coerce(table["description"], str, f"{where}: description"),
            spawn_biome=_coerce(table.get("spawn_biome", "plains"), str, f"{where}: spawn_biome"),
        )
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


_WORLD_KEYS = {"name", "size", "description", "spawn", "spawn_yaw", "features"}


def _parse_world(table: Mapping[str, Any]) -> WorldRecipe:
    where = f"worlds.toml: world {table.get('name', '?')!r}"
    for key in table:
        if key not in _WORLD_KEYS:
            raise ValueError(f"{where}: {unknown_name('key', key, sorted(_WORLD_KEYS))}")
    missing = {"name", "size", "description", "spawn"} - set(table)
    if missing:
        raise ValueError(f"{where}: missing keys {sorted(missing)}")
    size = _coerce(table["size"], tuple[int, int], f"{where}: size")
    if min(size) < 8:
        raise ValueError(f"{where}: size must be at least 8 x 8, got {size}")
    spawn = _coerce(table["spawn"], tuple[int, int], f"{where}: spawn")
    features = tuple(
        _parse_feature(entry, f"{where}: feature {i}")
        for i, entry in enumerate(table.get("features", []))
    )
    positions = {"spawn": spawn} | {
        f"feature {i} ({f.kind}) at": f.at
        for i, f in enumerate(features)
        if getattr(f, "at", None) is not None
    }
    for what, (x, z) in positions.items():
        if not (1 <= x < size[0] - 1 and 1 <= z < size[1] - 1):
            raise ValueError(f"{where}: {what} {(x, z)} is not inside the walls of {size}")
    return WorldRecipe(
        name=_coerce(table["name"], str, f"{where}: name"),
        size=size,
        description=_coerce(table["description"], str, f"{where}: description"),
        spawn=spawn,
        spawn_yaw=_coerce(table.get("spawn_yaw", 0.0), float, f"{where}: spawn_yaw"),
        features=features,
    )


def _parse_feature(table: Mapping[str, Any], where: str) -> Feature:
    kind = table.get("kind")
    if kind not in FEATURES:
        raise ValueError(f"{where}: {unknown_name('feature kind', kind, FEATURES)}")
    cls = FEATURES[kind]
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    where = f"{where} ({kind})"
    for key in table:
        if key != "kind" and key not in fields:
            raise ValueError(f"{where}: {unknown_name('field', key, fields)}")
    required = {
        name
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    if required - set(table):
        raise ValueError(f"{where}: missing fields {sorted(required - set(table))}")
    values = {
        name: _coerce(value, hints[name], f"{where}: {name}")
        for name, value in table.items()
        if name != "kind"
    }
    try:
        return cls(**values)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """``value`` from TOML as the type ``hint`` (lists become tuples, ints become floats)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        (hint,) = (a for a in args if a is not type(None))
        return _coerce(value, hint, where)
    if origin is Literal:
        if value not in args:
            raise ValueError(f"{where}: {unknown_name('value', value, map(repr, args))}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {value!r}")
        element_types = [args[0]] * len(value) if args[-1] is Ellipsis else list(args)
        if len(element_types) != len(value):
            raise ValueError(f"{where}: expected {len(element_types)} values, got {value!r}")
        return tuple(_coerce(v, t, where) for v, t in zip(value, element_types, strict=True))
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, hint) and not (hint is int and isinstance(value, bool)):
        return value
    raise ValueError(f"{where}: expected {hint.__name__}, got {value!r}")


WORLD_RECIPES: Mapping[str, WorldRecipe | UnboundedRecipe] = load_world_recipes()
"""Every world recipe by name (``mrsteve worlds`` lists them): bounded maps and unbounded
worlds (``size`` ``None``)."""
