"""The episode loop: tasks given one after another to an agent, success read from the inventory.

One loop serves every experiment (ABA-Sparse, ABA-Random, SEQ(4), Long-Instruction, the memory
tasks' task phase): a task is an item to obtain; it starts with the item it needs in hand
(``data/tasks.toml``: a bucket for water or milk, a sword for killing), the agent is told its
prompts (``agent.set_task(prompts, t)``), it succeeds when the item's count in the inventory rises
(MineDojo's success checker, appendix "Environments Setting"), and the next task starts only after
a success (ABA-Sparse) or after ``task_limit`` steps (Long-Instruction cancels a task after 20K
steps). The task side lives with the environment (:class:`~mrsteve.tasks.wrapper.ItemTasks`, a
Gymnasium wrapper); this loop drives the agent on it. Logging, recording and metrics attach as
callbacks (:class:`EpisodeCallback`), never as branches in the loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mrsteve.perception.prompts import TaskPrompts
from mrsteve.seeding import episode_rng
from mrsteve.spaces import Action, AgentFrame, Observation
from mrsteve.tasks.catalog import ItemTask
from mrsteve.tasks.outcomes import EpisodeResult, TaskOutcome
from mrsteve.tasks.wrapper import ItemSource, ItemTasks


@runtime_checkable
class Agent(Protocol):
    """What the episode loop runs: given tasks one after another, acts every step."""

    name: str

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None:
        """Start a new episode (``obs`` is the first observation, ``camera`` the environment's)."""

    def set_task(self, task: TaskPrompts, t: int) -> None:
        """A new task at step ``t``: obtain ``task.item``, told by its prompts."""

    def act(self, obs: Observation, t: int) -> Action:
        """The action for step ``t``."""


class EpisodeCallback:
    """Hooks into :func:`run_tasks`; override what you need (all do nothing by default)."""

    def on_reset(self, env: Any, agent: Agent, obs: Mapping[str, Any]) -> None:
        """After the environment reset and the agent reset (``obs`` is the environment's; the
        agent's positions are in :meth:`AgentFrame.of(obs) <mrsteve.spaces.AgentFrame>`)."""

    def on_task_start(self, task: TaskOutcome) -> None:
        """A task was given."""

    def on_step(self, t: int, obs: Mapping[str, Any], action: Mapping[str, Any], agent: Agent) -> None:
        """After step ``t`` (``obs`` is the observation it produced)."""

    def on_task_end(self, task: TaskOutcome) -> None:
        """A task succeeded or was given up."""


def run_tasks(
    env: Any,
    agent: Agent,
    items: ItemSource,
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
    The agent is told each task's prompts (``agent.set_task(prompts, t)``) and sees every
    observation through the episode's :class:`~mrsteve.spaces.AgentFrame` (its own keys only, the
    pose relative to the start); callbacks get the environment's observations.
    """
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    tasks = ItemTasks(env, items, task_limit=task_limit)
    obs, info = tasks.reset(seed=seed, options=options)
    frame = AgentFrame.of(obs)
    agent.reset(frame.view(obs), episode_rng(seed), info["camera"])
    for callback in callbacks:
        callback.on_reset(env, agent, obs)

    def started(item_task: ItemTask, t: int) -> None:
        agent.set_task(item_task.prompts, t)
        for callback in callbacks:
            callback.on_task_start(tasks.task)

    def ended(task: TaskOutcome) -> None:
        for callback in callbacks:
            callback.on_task_end(task)

    started(info["task"], 0)
    t = 0
    while tasks.task is not None and t < max_steps:
        action = agent.act(frame.view(obs), t)
        obs, _, terminated, truncated, info = tasks.step(action)
        t += 1
        for callback in callbacks:
            callback.on_step(t, obs, action, agent)
        if "task_end" in info:
            ended(info["task_end"])
        if "task" in info:
            started(info["task"], t)
        if terminated or truncated:
            break
    unfinished = tasks.close_tasks()
    if unfinished is not None:
        ended(unfinished)
    return tasks.result
