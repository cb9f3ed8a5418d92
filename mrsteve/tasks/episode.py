"""The episode loop: tasks given one after another to an agent, success read from the inventory.

One loop serves every experiment (ABA-Sparse, ABA-Random, SEQ(4), Long-Instruction, the memory
tasks' task phase): a task is an item to obtain; it starts with the item it needs in hand
(``data/tasks.toml``: a bucket for water or milk, a sword for killing), the agent is told its
prompts (``agent.set_task(prompts, t)``), it succeeds when the item's count in the inventory rises
(MineDojo's success checker, appendix "Environments Setting"), and the next task starts only after
a success (ABA-Sparse) or after ``task_limit`` steps (Long-Instruction cancels a task after 20K
steps). Logging, recording and metrics attach as callbacks
(:class:`EpisodeCallback`), never as branches in the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mrsteve.perception.prompts import TaskPrompts
from mrsteve.seeding import episode_rng
from mrsteve.spaces import Action, Observation
from mrsteve.tasks.catalog import load_catalog


@runtime_checkable
class Agent(Protocol):
    """What the episode loop runs: given tasks one after another, acts every step."""

    name: str

    def reset(self, obs: Observation, rng: np.random.Generator) -> None:
        """Start a new episode (``obs`` is the first observation)."""

    def set_task(self, task: TaskPrompts, t: int) -> None:
        """A new task at step ``t``: obtain ``task.item``, told by its prompts."""

    def act(self, obs: Observation, t: int) -> Action:
        """The action for step ``t``."""


@dataclass
class TaskOutcome:
    """One task of an episode."""

    item: str
    start: int
    """Step at which the task was given."""
    end: int | None = None
    """Step at which it succeeded or was given up (``None`` while running)."""
    success: bool = False

    @property
    def duration(self) -> int | None:
        return None if self.end is None else self.end - self.start


@dataclass
class EpisodeResult:
    """Every task given in one episode, in order, and the steps taken."""

    tasks: list[TaskOutcome] = field(default_factory=list)
    steps: int = 0

    @property
    def successes(self) -> int:
        return sum(task.success for task in self.tasks)


class EpisodeCallback:
    """Hooks into :func:`run_tasks`; override what you need (all do nothing by default)."""

    def on_reset(self, env: Any, agent: Agent, obs: Mapping[str, Any]) -> None:
        """After the environment reset and the agent reset."""

    def on_task_start(self, task: TaskOutcome) -> None:
        """A task was given."""

    def on_step(self, t: int, obs: Mapping[str, Any], action: Mapping[str, Any], agent: Agent) -> None:
        """After step ``t`` (``obs`` is the observation it produced)."""

    def on_task_end(self, task: TaskOutcome) -> None:
        """A task succeeded or was given up."""


def run_tasks(
    env: Any,
    agent: Agent,
    items: Sequence[str] | Callable[[int, np.random.Generator], str],
    *,
    seed: int,
    max_steps: int,
    task_limit: int | None = None,
    options: Mapping[str, Any] | None = None,
    callbacks: Sequence[EpisodeCallback] = (),
) -> EpisodeResult:
    """Run one episode of ``max_steps`` steps at most.

    ``items`` is the task sequence (the episode ends when the last succeeds) or a function
    ``(task_index, rng) -> item`` giving an endless random sequence (Long-Instruction). A task is
    given up after ``task_limit`` steps without success (``None``: never), and the next begins.
    Everything random comes from ``seed``: the world's generator (``env.reset(seed=seed)``), the
    agent's (:func:`mrsteve.seeding.episode_rng`) and the random item draws (its ``task`` stream).
    The agent is told each task's prompts (``agent.set_task(prompts, t)``).
    """
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    catalog = load_catalog()
    item_names = list(env.unwrapped.item_names)
    next_item = items if callable(items) else None
    sequence = None if callable(items) else list(items)
    if sequence is not None:
        if not sequence:
            raise ValueError("tasks must be a non-empty list of items")
        for item in sequence:
            catalog.item(item)  # an unknown item lists the known ones

    obs, _ = env.reset(seed=seed, options=options)
    agent.reset(obs, episode_rng(seed))
    task_rng = episode_rng(seed, "task")
    for callback in callbacks:
        callback.on_reset(env, agent, obs)

    result = EpisodeResult()

    def start(index: int, t: int) -> tuple[TaskOutcome, int, int] | None:
        if sequence is not None and index >= len(sequence):
            return None
        item = sequence[index] if sequence is not None else next_item(index, task_rng)
        item_task = catalog.item(item)
        tool = item_task.tool
        if tool is not None:
            env.unwrapped.apply_commands({"give": {tool: 1}, "equip": tool})
        slot = item_names.index(item)
        task = TaskOutcome(item=item, start=t)
        result.tasks.append(task)
        agent.set_task(item_task.prompts, t)
        for callback in callbacks:
            callback.on_task_start(task)
        return task, slot, int(env.unwrapped.world.inventory.counts[slot])

    def finish(task: TaskOutcome, t: int, success: bool) -> None:
        task.end, task.success = t, success
        for callback in callbacks:
            callback.on_task_end(task)

    current = start(0, 0)
    t = 0
    while current is not None and t < max_steps:
        task, slot, baseline = current
        action = agent.act(obs, t)
        obs, _, terminated, truncated, _ = env.step(action)
        t += 1
        for callback in callbacks:
            callback.on_step(t, obs, action, agent)
        if obs["inventory"][slot] > baseline:
            finish(task, t, True)
            current = start(len(result.tasks), t)
        elif task_limit is not None and t - task.start >= task_limit:
            finish(task, t, False)
            current = start(len(result.tasks), t)
        if terminated or truncated:
            break
    if current is not None:
        finish(current[0], t, False)
    result.steps = t
    return result
