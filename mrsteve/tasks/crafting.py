"""Crafting tasks (appendix "LLM-Augmented Agent with MrSteve"): obtain an item the world does not
give within a step budget, its success read from the inventory.

The tasks are data (``[crafting]`` in ``data/tasks.toml``, :class:`CraftingTask`): the target
item, the step budget of the appendix's table (3,000 for oak_stairs, sign and fence, 6,000 for
the rest), the world, and the tools given at the start. :func:`run_crafting` runs one episode:
the tools are given, the agent is told the task (``agent.set_task(task, 0)``: it reads
``task.item``), and the episode ends when the item's count rises (MineDojo's success checker) or
the budget is spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mrsteve.protocols import Agent
from mrsteve.seeding import episode_rng
from mrsteve.tasks.catalog import CraftingTask, load_catalog
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step
from mrsteve.tasks.sequential import NOOP_STEPS

__all__ = ["CraftingResult", "CraftingTask", "crafting_env_kwargs", "find_crafting",
           "run_crafting"]


@dataclass(frozen=True)
class CraftingResult:
    """One crafting episode: whether the item was obtained, and when."""

    success: bool
    steps: int
    """Steps taken (the step the item arrived, on success)."""


def find_crafting(names: str) -> list[CraftingTask]:
    """The crafting tasks named in ``names`` (comma separated, or ``all``); an unknown name
    raises ``ValueError`` listing the known ones."""
    return load_catalog().find_crafting(names)


def crafting_env_kwargs(task: CraftingTask) -> dict[str, Any]:
    """The :func:`~mrsteve.env.make_env` arguments of ``task``'s episodes."""
    return {"world": task.world, "noop_steps": NOOP_STEPS}


def run_crafting(env: Any, agent: Agent, task: CraftingTask, *, seed: int,
                 callbacks: Sequence[EpisodeCallback] = ()) -> CraftingResult:
    """One episode of ``task`` for ``agent`` on ``env`` (made with :func:`crafting_env_kwargs`):
    everything random comes from ``seed``, as in every task of the package."""
    driver = Driver(env, callbacks)
    options = {"give": {tool: 1 for tool in task.tools}} if task.tools else None
    info = driver.reset(seed=seed, options=options)
    slot = list(env.unwrapped.item_names).index(task.item)
    baseline = int(driver.obs["inventory"][slot])
    agent.reset(driver.view, episode_rng(seed), info["camera"])
    agent.set_task(task, 0)

    def obtained(step: Step) -> bool:
        return int(step.obs["inventory"][slot]) > baseline

    last = driver.run(agent.act, steps=task.max_steps, until=obtained)
    return CraftingResult(last is not None and obtained(last), driver.t)
