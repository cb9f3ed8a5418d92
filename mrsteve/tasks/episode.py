"""Item tasks given one after another to an agent, success read from the inventory.

:func:`run_tasks` serves every experiment of item tasks (ABA-Sparse, ABA-Random, SEQ(4),
Long-Instruction): a task is an item to obtain; it starts with the item it needs in hand
(``data/tasks.toml``: a bucket for water or milk, a sword for killing), the agent is told its
prompts (``agent.set_task(prompts, t)``), it succeeds when the item's count in the inventory rises
(MineDojo's success checker, appendix "Environments Setting"), and the next task starts only after
a success (ABA-Sparse) or after ``task_limit`` steps (Long-Instruction cancels a task after 20K
steps). The task side lives with the environment (:class:`~mrsteve.tasks.wrapper.ItemTasks`, a
Gymnasium wrapper); the driver (:mod:`mrsteve.tasks.driver`) runs the agent on it and tells the
callbacks (:class:`EpisodeCallback`) each step, each task's start and each task's end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mrsteve.protocols import Agent
from mrsteve.seeding import episode_rng
from mrsteve.tasks.catalog import ItemTask
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step
from mrsteve.tasks.outcomes import EpisodeResult, TaskOutcome
from mrsteve.tasks.wrapper import ItemSource, ItemTasks

__all__ = ["Agent", "EpisodeCallback", "EpisodeResult", "TaskOutcome", "drive_tasks", "run_tasks"]


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
    observation in the episode frame (its own keys only, the pose relative to the start);
    callbacks get the environment's observations and the agent's decisions.
    """
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    return drive_tasks(ItemTasks(env, items, task_limit=task_limit), agent, seed=seed,
                       max_steps=max_steps, options=options, callbacks=callbacks)


def drive_tasks(
    tasks: Any,
    agent: Agent,
    *,
    seed: int,
    max_steps: int,
    options: Mapping[str, Any] | None = None,
    callbacks: Sequence[EpisodeCallback] = (),
) -> EpisodeResult:
    """The episode loop of :func:`run_tasks` on an environment that gives item tasks as
    :class:`~mrsteve.tasks.wrapper.ItemTasks` does (``reset``'s ``info["task"]`` and
    ``info["camera"]``; ``step``'s ``info["task_end"]`` and ``info["task"]``; its ``result`` and
    ``close_tasks()``): MineStudio's simulator gives them through a callback
    (:mod:`mrsteve.minecraft.sim`)."""
    driver = Driver(tasks, callbacks)
    info = driver.reset(seed=seed, options=options)
    agent.reset(driver.view, episode_rng(seed), info["camera"])

    def started(task: ItemTask, t: int) -> None:
        agent.set_task(task.prompts, t)
        for callback in callbacks:
            callback.on_task_start(tasks.task)

    def ended(task: TaskOutcome) -> None:
        for callback in callbacks:
            callback.on_task_end(task)

    def task_events(step: Step) -> bool:
        if "task_end" in step.info:
            ended(step.info["task_end"])
        if "task" in step.info:
            started(step.info["task"], step.t)
        return False

    started(info["task"], 0)
    driver.run(agent.act, steps=max_steps, until=task_events)
    unfinished = tasks.close_tasks()
    if unfinished is not None:
        ended(unfinished)
    return tasks.result
