"""Toy run specs and episode functions for the sweep tests: one that kills its own worker on a
first attempt (fault injection), one that sleeps (to kill the driver under it, or to see episodes
overlap), one that cannot be set up. Module-level, so workers can load them."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from mrsteve import progress
from mrsteve.eval.spec import Group, RunSpec


@dataclass(frozen=True)
class ToyTask:
    """A task that is only settings."""

    folder: str = ""
    kill: int = -1
    seconds: float = 0.0
    size: int = 1


@dataclass(frozen=True)
class ToyAgent:
    """An agent tree of a name only."""

    name: str = "a"


def toy_group(label: str = "g", agent: str = "a", cost: float = 1.0, **task) -> Group:
    """A group of toy episodes."""
    return Group(RunSpec("toy", label, "t", ToyTask(**task), ToyAgent(agent)), cost=cost)


def toy_specs(labels: tuple[str, ...] = ("g",), episodes: int = 1, seed: int = 0,
              **task) -> list[RunSpec]:
    """The episodes of one toy group per label."""
    return [spec for label in labels for spec in toy_group(label, **task).episodes(episodes, seed)]


def attempts(folder: Path, index: int) -> int:
    """How many times episode ``index`` was started (one file per attempt)."""
    return len(list(Path(folder).glob(f"attempt-{index}-*")))


def square_of_seed(spec) -> dict:
    return {"value": spec.seed * spec.seed}


def dies_once(spec) -> dict:
    """Square of the seed; episode ``kill`` SIGKILLs its own process mid-episode the first time
    (as the out-of-memory killer would), every attempt leaving a file in ``folder``."""
    folder = Path(spec.task.folder)
    first = attempts(folder, spec.index) == 0
    (folder / f"attempt-{spec.index}-{os.getpid()}-{time.monotonic_ns()}").touch()
    if spec.index == spec.task.kill and first:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"value": spec.seed * spec.seed}


def sleeps(spec) -> dict:
    """Leave this worker's pid in ``folder``, sleep ``seconds``; when and where it ran."""
    if spec.task.folder:
        (Path(spec.task.folder) / f"worker-{os.getpid()}").touch()
    start = time.monotonic()
    time.sleep(spec.task.seconds)
    return {"pid": os.getpid(), "start": start, "end": time.monotonic()}


def raises(spec) -> dict:
    """An episode that cannot be set up."""
    raise ValueError("no such task")


def steps(spec) -> dict:
    """An episode of ``size`` steps, each told to :mod:`mrsteve.progress` as a driver does."""
    progress.planned(spec.task.size)
    for t in range(1, spec.task.size + 1):
        progress.tick(t)
    return {"steps": spec.task.size}
