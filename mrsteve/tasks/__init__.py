"""The paper's tasks: what a task is (data), the driver loop every episode runs on, and the
metrics.

Tasks hand over tools, read success from the inventory and tell the agent its prompts; they import
no agent or control code (they run any :class:`mrsteve.protocols.Agent`). Every episode steps the
environment through the one :class:`Driver` loop, the experiments' and the trainings' walks
alike; where an episode starts near a task's targets is :mod:`mrsteve.tasks.placement`. The
experiments that build agents and run sweeps live in :mod:`mrsteve.eval`.
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
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step, Trajectory
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.outcomes import EpisodeResult, TaskOutcome
from mrsteve.tasks.wrapper import ItemTasks

__all__ = ["Driver", "EpisodeCallback", "EpisodeResult", "ItemTask", "ItemTasks",
           "SequentialTask", "Step", "TaskCatalog", "TaskOutcome", "Trajectory", "find_tasks",
           "load_catalog", "run_tasks", "task_by_key", "task_prompts"]
