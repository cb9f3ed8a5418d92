"""Long-Instruction (paper Section 4.4, appendix "Long-Horizon Tasks"): random "Obtain X" tasks
one after another on the 200 x 200 ``long_instruction`` map for 500K steps. As in the paper's
map, the sheep keep to the upper left and the cows to the lower right all episode: each herd has
a pasture it never leaves, where killed animals come back with the passive spawn cycle
(:meth:`mrsteve.world.spawning.PassiveSpawning.restock`).

X is drawn uniformly from water, beef, wool, log, dirt and seeds (the task's own random stream);
the task changes on success or after 20K steps (cancelled), and the metric is the number of tasks
solved. The loop is :func:`mrsteve.tasks.episode.run_tasks` with an endless item source and its
``task_limit``; :class:`ResidentMemory` samples the process's resident memory along the way (the
curve that shows memory stays flat once the capacity is reached).
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mrsteve.protocols import Agent
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.outcomes import EpisodeResult

ITEMS = ("water_bucket", "beef", "wool", "log", "dirt", "wheat_seeds")
"""The paper's six items (water bucket, beef, wool, wood, dirt, seeds)."""

WORLD = "long_instruction"
STEPS = 500_000
TASK_LIMIT = 20_000
CAPACITY = 20_000
NOOP_STEPS = 200
"""No-op steps after reset (the release's, as the sequential tasks)."""


def random_item(index: int, rng: np.random.Generator) -> str:
    """The item of task ``index``: uniform over :data:`ITEMS` from the task stream."""
    return ITEMS[int(rng.integers(len(ITEMS)))]


def resident_mb() -> float:
    """This process's resident set size in MiB (``/proc/self/statm``; the peak where that file
    does not exist)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


class ResidentMemory(EpisodeCallback):
    """Samples ``(step, resident MiB, memory frames)`` every ``every`` steps into :attr:`samples`
    (``frames``: how many frames the agent's memory holds, ``None`` without one)."""

    def __init__(self, every: int, frames: Callable[[], int | None] = lambda: None):
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.every = every
        self.frames = frames
        self.samples: list[tuple[int, float, int | None]] = []

    def on_step(self, step: Step) -> None:
        if step.t % self.every == 0:
            self.samples.append((step.t, round(resident_mb(), 1), self.frames()))


def instruction_record(result: EpisodeResult) -> dict[str, Any]:
    """One episode's metrics: tasks solved and given, the mean duration of the solved ones, and
    per task its item, start, duration and success (for the per-task durations)."""
    solved = [task.duration for task in result.tasks if task.success]
    return {
        "steps": result.steps,
        "tasks_solved": result.successes,
        "tasks_given": len(result.tasks),
        "mean_duration": float(np.mean(solved)) if solved else None,
        "solved_by_item": {item: sum(task.success and task.item == item for task in result.tasks)
                           for item in ITEMS},
        "tasks": [[task.item, task.start, task.duration, bool(task.success)]
                  for task in result.tasks],
    }


def run_long_instruction(env: Any, agent: Agent, seed: int, *, steps: int = STEPS,
                         task_limit: int = TASK_LIMIT,
                         callbacks: Sequence[EpisodeCallback] = ()) -> dict[str, Any]:
    """One Long-Instruction episode of ``steps`` steps for ``agent`` on ``env`` (the
    ``long_instruction`` world): its record (:func:`instruction_record`)."""
    if task_limit < 1:
        raise ValueError(f"task_limit must be >= 1, got {task_limit}")
    result = run_tasks(env, agent, random_item, seed=seed, max_steps=steps, task_limit=task_limit,
                       callbacks=callbacks)
    return instruction_record(result)
