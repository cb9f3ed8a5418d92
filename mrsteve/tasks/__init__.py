"""The paper's tasks: what a task is (data), the episode loops and the metrics.

Tasks hand over tools, read success from the inventory and tell the agent its prompts; they import
no agent or control code (agents, explorers and navigators are duck-typed). The experiments that
build agents and run sweeps live in :mod:`mrsteve.eval`.
"""

from mrsteve.tasks.catalog import (
    ItemTask,
    SequentialTask,
    TaskCatalog,
    find_tasks,
    load_catalog,
    task_by_key,
    task_prompts,
)
from mrsteve.tasks.episode import Agent, EpisodeCallback, run_tasks
from mrsteve.tasks.outcomes import EpisodeResult, TaskOutcome
from mrsteve.tasks.wrapper import ItemTasks

__all__ = ["Agent", "EpisodeCallback", "EpisodeResult", "ItemTask", "ItemTasks",
           "SequentialTask", "TaskCatalog", "TaskOutcome", "find_tasks", "load_catalog",
           "run_tasks", "task_by_key", "task_prompts"]
