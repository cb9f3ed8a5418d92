"""Episode functions for the sweep tests: one that kills its own worker on a first attempt (fault
injection), one that sleeps (to kill the driver under it). Module-level, so workers can load them."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def attempts(folder: Path, index: int) -> int:
    """How many times episode ``index`` was started (one file per attempt)."""
    return len(list(Path(folder).glob(f"attempt-{index}-*")))


def dies_once(spec) -> dict:
    """Square of the seed; episode ``kill`` SIGKILLs its own process mid-episode the first time
    (as the out-of-memory killer would), every attempt leaving a file in ``folder``."""
    options = dict(spec.options)
    folder = Path(options["folder"])
    first = attempts(folder, spec.index) == 0
    (folder / f"attempt-{spec.index}-{os.getpid()}-{time.monotonic_ns()}").touch()
    if spec.index == options["kill"] and first:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"value": spec.seed * spec.seed}


def sleeps(spec) -> dict:
    """Leave this worker's pid in ``folder``, then sleep ``seconds``."""
    options = dict(spec.options)
    (Path(options["folder"]) / f"worker-{os.getpid()}").touch()
    time.sleep(options["seconds"])
    return {"value": 0}


def raises(spec) -> dict:
    """An episode that cannot be set up."""
    raise ValueError("no such task")
