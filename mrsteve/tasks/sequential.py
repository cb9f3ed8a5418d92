"""Sequential item tasks: ABA-Sparse, ABA-Random and SEQ(4), and what one episode reports.

- **ABA-Sparse** (Section 4.2, appendix "ABA-Sparse Tasks Details"): ``A-B-A`` with A a sparse
  resource (water, beef, wool, milk) and B a dense one (log, dirt, seeds, leaves, sand): 20 tasks,
  12K steps, unlimited memory, spawn at the map centre; map1 for water, map2 for beef, wool and
  milk, map3 whenever B is sand.
- **ABA-Random** (appendix "MrSteve in Randomly Generated Maps"): A in {water, beef, wool}, B = log,
  on procedural plains, 12K steps; **SEQ(4)**: log, water, wool, beef in a row, 16K steps.

The suites are data (``data/tasks.toml``, :mod:`mrsteve.tasks.catalog`). The task changes only on
success; each task starts with the item it needs in hand; success is read from the inventory
(:mod:`mrsteve.tasks.episode`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mrsteve.protocols import Agent
from mrsteve.tasks.catalog import SequentialTask, find_tasks, load_catalog, task_by_key
from mrsteve.tasks.episode import EpisodeResult, run_tasks

__all__ = ["NOOP_STEPS", "SequentialTask", "env_kwargs", "find_tasks", "run_sequential",
           "sequential_record", "task_by_key", "task_suites"]

NOOP_STEPS = 200
"""No-op steps after reset before the first task (the release), so mobs spread out."""


def task_suites() -> Mapping[str, Mapping[str, SequentialTask]]:
    """Every suite's tasks by name."""
    return load_catalog().suites


def env_kwargs(task: SequentialTask, obs_size: tuple[int, int] | None = None) -> dict[str, Any]:
    """The :func:`~mrsteve.env.make_env` arguments of ``task``'s episodes."""
    kwargs: dict[str, Any] = {"world": task.world, "noop_steps": NOOP_STEPS,
                              "spawn_cycle": task.spawn_cycle}
    if obs_size is not None:
        kwargs["obs_size"] = tuple(obs_size)
    return kwargs


def sequential_record(task: SequentialTask, result: EpisodeResult) -> dict[str, Any]:
    """One episode's metrics: success (0 or 100) and duration of each sub-task, and the episode's
    success (every sub-task done in time)."""
    record: dict[str, Any] = {"steps": result.steps}
    outcomes = {label: None for label in task.labels}
    outcomes.update(zip(task.labels, result.tasks))
    for label, outcome in outcomes.items():
        succeeded = outcome is not None and outcome.success
        record[f"success_{label}"] = 100.0 if succeeded else 0.0
        record[f"duration_{label}"] = outcome.duration if succeeded else None
    record["success_rate"] = 100.0 if result.successes == len(task.items) else 0.0
    return record


def run_sequential(env: Any, agent: Agent, task: SequentialTask, seed: int) -> dict[str, Any]:
    """One episode of ``task`` for ``agent`` on ``env`` (made with :func:`env_kwargs`): its
    record of metrics."""
    return sequential_record(task, run_tasks(env, agent, task.items, seed=seed,
                                             max_steps=task.max_steps))
