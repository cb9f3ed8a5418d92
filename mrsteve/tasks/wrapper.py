"""Item tasks kept with the environment (as Minigrid and Crafter keep their missions): a Gymnasium
wrapper that gives tasks one after another, hands over their tools and reads success from the
inventory.

Any loop can drive an agent on it; :func:`mrsteve.tasks.episode.run_tasks` is the package's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from mrsteve.seeding import episode_rng
from mrsteve.tasks.catalog import ItemTask, load_catalog
from mrsteve.tasks.outcomes import EpisodeResult, TaskLedger, TaskOutcome

ItemSource = Sequence[str] | Callable[[int, np.random.Generator], str]
"""A task sequence, or ``(task_index, rng) -> item`` for an endless random one."""


class ItemTasks(TaskLedger, gym.Wrapper):
    """Gives the tasks of ``items`` one after another.

    - ``reset`` starts the first task: its tool (``data/tasks.toml``) is given and held (a task
      without one starts with an empty hand; earlier tools stay in the inventory);
      ``info["task"]`` is the :class:`~mrsteve.tasks.catalog.ItemTask` (its ``prompts`` are what
      the agent is told);
    - ``step`` counts steps; a task succeeds when its item's count in the inventory rises
      (MineDojo's success checker) and is given up after ``task_limit`` steps (``None``: never).
      When one ends, ``info["task_end"]`` is its :class:`TaskOutcome` and, if another follows,
      ``info["task"]`` the new one (tool already in hand); after the last, ``terminated``.
    - :attr:`result` holds every task given so far; :meth:`close_tasks` gives up the running one.

    Random items draw from the episode's ``task`` stream (:func:`mrsteve.seeding.episode_rng`).
    """

    def __init__(self, env: gym.Env, items: ItemSource, *, task_limit: int | None = None):
        gym.Wrapper.__init__(self, env)
        TaskLedger.__init__(self)
        self.catalog = load_catalog()
        self._next_item = items if callable(items) else None
        self._sequence = None if callable(items) else list(items)
        if self._sequence is not None:
            if not self._sequence:
                raise ValueError("tasks must be a non-empty list of items")
            for item in self._sequence:
                self.catalog.item(item)  # an unknown item lists the known ones
        self.task_limit = task_limit
        self._item_names = list(env.unwrapped.item_names)
        self._rng: np.random.Generator | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._rng = episode_rng(seed, "task") if seed is not None else np.random.default_rng()
        self.result = EpisodeResult()
        started = self._start(0)
        if started is not None:
            info["task"] = started
        return obs, info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.result.steps += 1
        if self._current is not None:
            task, slot, baseline = self._current
            t = self.result.steps
            success = obs["inventory"][slot] > baseline
            if success or (self.task_limit is not None and t - task.start >= self.task_limit):
                task.end, task.success = t, bool(success)
                info["task_end"] = task
                started = self._start(t)
                if started is not None:
                    info["task"] = started
                else:
                    terminated = True
        return obs, reward, terminated, truncated, info

    def _start(self, t: int) -> ItemTask | None:
        index = len(self.result.tasks)
        if self._sequence is not None and index >= len(self._sequence):
            self._current = None
            return None
        if self._sequence is not None:
            item = self._sequence[index]
        else:
            item = self._next_item(index, self._rng)
        item_task = self.catalog.item(item)
        # the task's tool in hand, or an empty hand (what earlier tasks left stays in the
        # inventory, but shears held would turn a seeds task's grass into grass, not seeds)
        tool = item_task.tool
        self.env.unwrapped.apply_commands({"give": {tool: 1}, "equip": tool} if tool is not None
                                          else {"equip": None})
        slot = self._item_names.index(item)
        task = TaskOutcome(item=item, start=t)
        self.result.tasks.append(task)
        self._current = (task, slot, int(self.env.unwrapped.world.inventory.counts[slot]))
        return item_task
