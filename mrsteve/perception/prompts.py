"""Prompts per item: explore (memory query), execute (instruction) and place (exploration) prompts.

The authors' release table (``notes/reference.md``, the paper's Table "Prompts used in MrSteve"),
loaded from ``data/tasks.toml`` into frozen dataclasses and checked against the world's items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from mrsteve.perception._data import read_data_toml
from mrsteve.world.content import load_content

DEFAULT_PLACE_PROMPT = "near pasture"
"""The place prompt of items the release gives none for."""


@dataclass(frozen=True)
class TaskPrompts:
    """The prompts MrSteve uses to obtain one item."""

    item: str
    """The target item (an item name of the world's content)."""
    explore: str
    """Prompt that queries the memory for the resource (MineCLIP prompt in the paper)."""
    execute: str
    """Instruction for the instruction policy once at the resource (STEVE-1 prompt)."""
    place: str
    """Place prompt of task-conditioned exploration (where the resource is likely to be)."""
    mineclip_threshold: float
    """The release's MineCLIP task threshold as a cosine (MineCLIP units / 100)."""


@dataclass(frozen=True)
class TaskPromptTable:
    """Prompts of every item the paper's tasks ask for."""

    tasks: tuple[TaskPrompts, ...]

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(t.item for t in self.tasks)

    def for_item(self, item: str) -> TaskPrompts:
        """The prompts of ``item``; an unknown item raises ``KeyError`` listing the known ones."""
        for task in self.tasks:
            if task.item == item:
                return task
        raise KeyError(f"no prompts for item {item!r}; known items: {', '.join(self.items)}")


def parse_task_prompts(raw: Mapping[str, Any], item_names: tuple[str, ...]) -> TaskPromptTable:
    """Build and validate a :class:`TaskPromptTable` from the parsed TOML mapping."""
    tasks = []
    for entry in raw["task"]:
        item = entry["item"]
        if item not in item_names:
            raise ValueError(f"tasks: {item!r} is not an item; items: {', '.join(item_names)}")
        threshold = float(entry["mineclip_threshold"])
        if not 1.0 < threshold < 100.0:
            raise ValueError(f"tasks: {item!r}: mineclip_threshold must be in MineCLIP units "
                             f"(cosine x 100, between 1 and 100), got {threshold}")
        tasks.append(TaskPrompts(
            item=item,
            explore=entry["explore"],
            execute=entry["execute"],
            place=entry.get("place", DEFAULT_PLACE_PROMPT),
            mineclip_threshold=threshold / 100.0,
        ))
    items = [t.item for t in tasks]
    if len(set(items)) != len(items):
        raise ValueError("tasks: duplicate items")
    return TaskPromptTable(tuple(tasks))


@cache
def load_task_prompts() -> TaskPromptTable:
    """The shipped table, parsed once per process."""
    return parse_task_prompts(read_data_toml("tasks.toml"), load_content().item_names)


def task_prompts(item: str) -> TaskPrompts:
    """The prompts of ``item``, e.g. ``task_prompts("water_bucket").explore == "near water"``."""
    return load_task_prompts().for_item(item)
