"""What happened to the tasks of an episode."""

from __future__ import annotations

from dataclasses import dataclass, field


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


class TaskLedger:
    """The item tasks of an episode as they are given (:class:`mrsteve.tasks.wrapper.ItemTasks`
    and MineStudio's callback of them, :class:`mrsteve.minecraft.sim.ItemTasksCallback`):
    :attr:`result` holds every task given so far; the running one is kept with its item's
    inventory slot and the count it started from."""

    def __init__(self) -> None:
        self.result = EpisodeResult()
        self._current: tuple[TaskOutcome, int, int] | None = None

    @property
    def task(self) -> TaskOutcome | None:
        """The running task, if any."""
        return None if self._current is None else self._current[0]

    def close_tasks(self) -> TaskOutcome | None:
        """Give up the running task at the current step (the episode is over); returns it."""
        if self._current is None:
            return None
        task = self._current[0]
        task.end, task.success = self.result.steps, False
        self._current = None
        return task
