"""Sequential item tasks: ABA-Sparse, ABA-Random and SEQ(4).

- **ABA-Sparse** (Section 4.2, appendix "ABA-Sparse Tasks Details"): ``A-B-A`` with A a sparse
  resource (water, beef, wool, milk) and B a dense one (log, dirt, seeds, leaves, sand): 20 tasks,
  12K steps, unlimited memory, spawn at the map centre; map1 for water, map2 for beef, wool and
  milk, map3 whenever B is sand.
- **ABA-Random** (appendix "MrSteve in Randomly Generated Maps"): A in {water, beef, wool}, B = log,
  on procedural plains, 12K steps; **SEQ(4)**: log, water, wool, beef in a row, 16K steps.

The task changes only on success; each task starts with the item it needs in hand; success is read
from the inventory (:mod:`mrsteve.tasks.episode`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.factory import make_agent
from mrsteve.tasks.episode import run_tasks
from mrsteve.world.recipes import WORLD_RECIPES

SPARSE_ITEMS = {"water": "water_bucket", "beef": "beef", "wool": "wool", "milk": "milk_bucket"}
"""Task A of ABA-Sparse: short name -> item."""
DENSE_ITEMS = {"log": "log", "dirt": "dirt", "seeds": "wheat_seeds", "leaves": "leaves", "sand": "sand"}
"""Task B of ABA-Sparse: short name -> item."""

NOOP_STEPS = 200
"""No-op steps after reset before the first task (the release), so mobs spread out."""


@dataclass(frozen=True)
class SequentialTask:
    """Items to obtain in order within ``max_steps`` on ``world``. ``labels`` name the sub-tasks
    in the metrics (``A``, ``B``, ``A2`` for ABA tasks)."""

    name: str
    suite: str
    world: str
    items: tuple[str, ...]
    labels: tuple[str, ...]
    max_steps: int

    @property
    def metric_names(self) -> tuple[str, ...]:
        return (
            "success_rate",
            *(f"success_{label}" for label in self.labels),
            *(f"duration_{label}" for label in self.labels),
        )


def _aba(suite: str, a: str, b: str, world: str) -> SequentialTask:
    items = (SPARSE_ITEMS[a], DENSE_ITEMS[b], SPARSE_ITEMS[a])
    return SequentialTask(f"{a}-{b}-{a}", suite, world, items, ("A", "B", "A2"), 12_000)


def _aba_sparse_world(a: str, b: str) -> str:
    if b == "sand":
        return "map3"
    return "map1" if a == "water" else "map2"


TASK_SUITES: dict[str, dict[str, SequentialTask]] = {
    "aba-sparse": {
        task.name: task
        for task in (
            _aba("aba-sparse", a, b, _aba_sparse_world(a, b)) for a in SPARSE_ITEMS for b in DENSE_ITEMS
        )
    },
    "aba-random": {
        task.name: task for task in (_aba("aba-random", a, "log", "plains") for a in ("water", "beef", "wool"))
    },
    "seq4": {
        "log-water-wool-beef": SequentialTask(
            "log-water-wool-beef", "seq4", "plains", ("log", "water_bucket", "wool", "beef"),
            ("log", "water", "wool", "beef"), 16_000,
        )
    },
}  # fmt: skip


def find_tasks(suite: str, names: str) -> list[SequentialTask]:
    """The tasks of ``suite`` named in ``names`` (comma separated, or ``all``); unknown suites or
    task names raise ``ValueError`` listing the valid ones."""
    if suite not in TASK_SUITES:
        raise ValueError(f"unknown task suite {suite!r}; known: {', '.join(TASK_SUITES)}")
    tasks = TASK_SUITES[suite]
    if names == "all":
        return list(tasks.values())
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in tasks]
    if unknown or not chosen:
        raise ValueError(f"unknown {suite} task(s) {unknown or names!r}; known: all, {', '.join(tasks)}")
    return [tasks[name] for name in chosen]


def task_by_key(key: str) -> SequentialTask:
    """A task from its ``suite/name`` key (as stored in episode specs)."""
    suite, _, name = key.partition("/")
    return find_tasks(suite, name)[0]


def sequential_episode(
    task_key: str,
    agent_name: str,
    seed: int,
    *,
    capacity: int | None = None,
    obs_size: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One episode of task ``suite/name`` for the agent ``agent_name``: its record of metrics.

    ``capacity`` bounds the memory (default unlimited, as in the paper's ABA-Sparse).
    """
    task = task_by_key(task_key)
    env_kwargs: dict[str, Any] = {"world": task.world, "noop_steps": NOOP_STEPS}
    if obs_size is not None:
        env_kwargs["obs_size"] = tuple(obs_size)
    env = gym.make("mrsteve/Voxel-v0", **env_kwargs)
    agent = make_agent(agent_name, world_size=WORLD_RECIPES[task.world].size, capacity=capacity)
    result = run_tasks(env, agent, task.items, seed=seed, max_steps=task.max_steps)
    env.close()
    record: dict[str, Any] = {"steps": result.steps}
    outcomes = {label: None for label in task.labels}
    outcomes.update(zip(task.labels, result.tasks))
    for label, outcome in outcomes.items():
        succeeded = outcome is not None and outcome.success
        record[f"success_{label}"] = 100.0 if succeeded else 0.0
        record[f"duration_{label}"] = outcome.duration if succeeded else None
    record["success_rate"] = 100.0 if result.successes == len(task.items) else 0.0
    return record
