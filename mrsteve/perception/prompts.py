"""The prompts an agent is told for one task: explore (memory query), execute (instruction) and
place (task-conditioned exploration).

The task gives them (``mrsteve/tasks/data/tasks.toml``, the authors' release table, the paper's
Table "Prompts used in MrSteve"; :func:`mrsteve.tasks.task_prompts`); perception only defines
their type, since the encoders and thresholds are keyed by prompt text.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    place: str = DEFAULT_PLACE_PROMPT
    """Place prompt of task-conditioned exploration (where the resource is likely to be)."""
    mineclip_threshold: float | None = None
    """The release's MineCLIP task threshold as a cosine (MineCLIP units / 100), if known."""
