"""What the paper's tasks are, as data: ``data/tasks.toml`` loaded into frozen dataclasses.

An *item task* is "obtain <item>": the tool handed over at its start and the prompts the agent is
told (:class:`~mrsteve.perception.prompts.TaskPrompts`). A *sequential task* is items to obtain in
order on a world within a step budget; the *suites* (ABA-Sparse, ABA-Random, SEQ(4)) group them.
Everything is checked against the world's items and recipes when the file is loaded.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from mrsteve.naming import choose, lookup, unknown_name
from mrsteve.perception.prompts import DEFAULT_PLACE_PROMPT, TaskPrompts


@dataclass(frozen=True)
class ItemTask:
    """Obtain one item: the tool it starts with and the prompts the agent gets."""

    item: str
    tool: str | None
    """Given (one) and held when the task starts; ``None``: bare hand."""
    prompts: TaskPrompts


@dataclass(frozen=True)
class SequentialTask:
    """Items to obtain in order within ``max_steps`` on ``world``. ``labels`` name the sub-tasks
    in the metrics (``A``, ``B``, ``A2`` for ABA tasks)."""

    name: str
    suite: str
    world: str
    items: tuple[str, ...]
    labels: tuple[str, ...]
    max_steps: int
    spawn_cycle: bool = False
    """Run the world with Minecraft's passive spawn cycle (:mod:`mrsteve.world.spawning`), as
    the paper's tasks ran in Minecraft: animals come back after being killed."""

    @property
    def key(self) -> str:
        """``suite/name``, as stored in episode records."""
        return f"{self.suite}/{self.name}"

    @property
    def metric_names(self) -> tuple[str, ...]:
        return (
            "success_rate",
            *(f"success_{label}" for label in self.labels),
            *(f"duration_{label}" for label in self.labels),
        )


@dataclass(frozen=True)
class CraftingTask:
    """Obtain ``item`` within ``max_steps`` on ``world``, crafting what the world does not give
    (appendix "LLM-Augmented Agent with MrSteve"); ``tools`` are given at the start."""

    name: str
    item: str
    world: str
    max_steps: int
    tools: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """``crafting/name``, as stored in episode records."""
        return f"crafting/{self.name}"


@dataclass(frozen=True)
class TaskCatalog:
    """Every item task, every suite of sequential tasks, and the crafting tasks."""

    items: Mapping[str, ItemTask]
    suites: Mapping[str, Mapping[str, SequentialTask]]
    crafting: Mapping[str, CraftingTask] = field(default_factory=dict)

    def item(self, item: str) -> ItemTask:
        return lookup(self.items, item, "task item")

    def prompts(self, item: str) -> TaskPrompts:
        """The prompts of ``item``, e.g. ``prompts("water_bucket").explore == "near water"``."""
        return self.item(item).prompts

    def find(self, suite: str, names: str) -> list[SequentialTask]:
        """The tasks of ``suite`` named in ``names`` (comma separated, or ``all``)."""
        tasks = lookup(self.suites, suite, "task suite")
        return [tasks[name] for name in choose(names, list(tasks), f"{suite} task")]

    def find_crafting(self, names: str) -> list[CraftingTask]:
        """The crafting tasks named in ``names`` (comma separated, or ``all``)."""
        return [self.crafting[name] for name in choose(names, list(self.crafting),
                                                       "crafting task")]

    def by_key(self, key: str) -> SequentialTask:
        """A task from its ``suite/name`` key."""
        suite, _, name = key.partition("/")
        return lookup(lookup(self.suites, suite, "task suite"), name, f"{suite} task")


def parse_catalog(raw: Mapping[str, Any], item_names: tuple[str, ...],
                  world_names: tuple[str, ...]) -> TaskCatalog:
    """Build and check a :class:`TaskCatalog` from the parsed TOML mapping."""
    items: dict[str, ItemTask] = {}
    for entry in raw["item"]:
        item = entry["item"]
        if item in items:
            raise ValueError(f"tasks.toml: duplicate item {item!r}")
        for name in (item, entry.get("tool", item)):
            if name not in item_names:
                raise unknown_name("item (tasks.toml)", name, item_names)
        threshold = float(entry["mineclip_threshold"])
        if not 1.0 < threshold < 100.0:
            raise ValueError(f"tasks.toml: {item!r}: mineclip_threshold must be in MineCLIP units "
                             f"(cosine x 100, between 1 and 100), got {threshold}")
        prompts = TaskPrompts(item=item, explore=entry["explore"], execute=entry["execute"],
                              place=entry.get("place", DEFAULT_PLACE_PROMPT),
                              mineclip_threshold=threshold / 100.0)
        items[item] = ItemTask(item, entry.get("tool"), prompts)
    short = dict(raw.get("short", {}))
    suites: dict[str, Mapping[str, SequentialTask]] = {}
    for suite, spec in raw["suite"].items():
        labels = tuple(spec["labels"])
        tasks = {}
        for task in spec["tasks"]:
            name = task["name"]
            sequence = tuple(lookup(short, part, "short item name") for part in name.split("-"))
            if len(sequence) != len(labels):
                raise ValueError(f"tasks.toml: {suite}/{name}: {len(sequence)} items for labels "
                                 f"{labels}")
            for item in sequence:
                lookup(items, item, "task item")
            world = task.get("world", spec.get("world"))
            if world not in world_names:
                raise unknown_name("world (tasks.toml)", world, world_names)
            spawn_cycle = task.get("spawn_cycle", spec.get("spawn_cycle", False))
            if not isinstance(spawn_cycle, bool):
                raise ValueError(f"tasks.toml: {suite}/{name}: spawn_cycle must be true or false, "
                                 f"got {spawn_cycle!r}")
            tasks[name] = SequentialTask(name, suite, world, sequence, labels,
                                         int(task.get("max_steps", spec["max_steps"])),
                                         spawn_cycle)
        suites[suite] = MappingProxyType(tasks)
    return TaskCatalog(MappingProxyType(items), MappingProxyType(suites),
                       MappingProxyType(parse_crafting(raw.get("crafting"), item_names,
                                                       world_names)))


def parse_crafting(spec: Mapping[str, Any] | None, item_names: tuple[str, ...],
                   world_names: tuple[str, ...]) -> dict[str, CraftingTask]:
    """The ``[crafting]`` table's tasks, their items, tools and world checked."""
    if spec is None:
        return {}
    world = spec["world"]
    if world not in world_names:
        raise unknown_name("world (tasks.toml [crafting])", world, world_names)
    tools = tuple(spec.get("tools", ()))
    tasks = {}
    for entry in spec["tasks"]:
        for item in (entry["item"], *tools):
            if item not in item_names:
                raise unknown_name("item (tasks.toml [crafting])", item, item_names)
        if entry["name"] in tasks:
            raise ValueError(f"tasks.toml: duplicate crafting task {entry['name']!r}")
        tasks[entry["name"]] = CraftingTask(entry["name"], entry["item"], world,
                                            int(entry["max_steps"]), tools)
    return tasks


@cache
def load_catalog() -> TaskCatalog:
    """The shipped catalog, parsed and checked once per process."""
    from mrsteve.world.content import load_content
    from mrsteve.world.recipes import WORLD_RECIPES

    text = resources.files("mrsteve.tasks").joinpath("data/tasks.toml").read_text("utf-8")
    return parse_catalog(tomllib.loads(text), tuple(load_content().item_names),
                         tuple(WORLD_RECIPES))


def exploration_patch_size(world: str) -> float:
    """The exploration goal patch side G for tasks on ``world``: a task-level setting the agent is
    given, as the paper sets it per map (15 on 100 x 100 maps, 30 on 200 x 200): 15 % of the
    map's side, rounded to a block."""
    from mrsteve.world.recipes import WORLD_RECIPES

    size = lookup(WORLD_RECIPES, world, "world").size
    if size is None:  # unbounded: the side of the agent's exploration map (the release's 128)
        size = (EXPLORATION_MAP_SIDE, EXPLORATION_MAP_SIDE)
    return float(round(0.15 * min(size)))


EXPLORATION_MAP_SIDE = 128
"""Side in blocks of the authors' exploration map around the start, the extent G is set for on
an unbounded world."""


def task_prompts(item: str) -> TaskPrompts:
    """The prompts the agent gets for a task to obtain ``item``."""
    return load_catalog().prompts(item)


def find_tasks(suite: str, names: str) -> list[SequentialTask]:
    """The tasks of ``suite`` named in ``names`` (comma separated, or ``all``); unknown suites or
    task names raise ``ValueError`` listing the valid ones."""
    return load_catalog().find(suite, names)


def task_by_key(key: str) -> SequentialTask:
    """A task from its ``suite/name`` key (as stored in episode records)."""
    return load_catalog().by_key(key)
