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
