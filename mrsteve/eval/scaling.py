"""How a sweep scales with workers: the same episodes with one worker and with N, timed.

:func:`measure_scaling` sweeps an experiment's groups twice into temporary folders, once with one
worker process and once with ``workers`` (local processes, or Ray tasks with ``backend="ray"``);
both start alike (worker processes of the same driver, which has run no episode), so the speed-up
is the one a user sees from ``--workers``. It checks that both gave the same records (the same
seeds give the same episodes, whoever runs them), and reports the wall times, the speed-up and
where the time went: the steps of the episodes, and how much of the workers' time went into
episodes (the rest is start-up, idle workers at the end of the queue, and the driver).
``mrsteve bench sweep`` prints it.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from mrsteve.eval.experiment import Experiment
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import Record, read_records

IDENTITY = ("digest", "node", "episode_seconds", "worker")
"""Record fields that say who ran an episode, not what happened in it."""


def timed_episode(episode: Any, spec: Any) -> Record:
    """``episode(spec)`` with its wall time and the process that ran it."""
    start = time.perf_counter()
    record = dict(episode(spec))
    record["episode_seconds"] = time.perf_counter() - start
    record["worker"] = os.getpid()
    return record


@dataclass(frozen=True)
class SweepTiming:
    """One timed sweep."""

    workers: int
    seconds: float
    """Wall time of the whole sweep (workers' start-up included)."""
    episodes: int
    steps: int | None
    """Environment steps of all episodes (``None``: the records do not say)."""
    busy: float
    """Share of the workers' wall time spent in episodes."""
    processes: int
    """Distinct processes that ran episodes."""

    @property
    def steps_per_second(self) -> float | None:
        return None if self.steps is None else self.steps / self.seconds


@dataclass(frozen=True)
class Scaling:
    """One worker against N, on the same episodes."""

    serial: SweepTiming
    parallel: SweepTiming
    identical: bool
    """Whether both sweeps gave the same records."""

    @property
    def speedup(self) -> float:
        return self.serial.seconds / self.parallel.seconds

    def as_dict(self) -> dict[str, Any]:
        def timing(t: SweepTiming) -> dict[str, Any]:
            return {"workers": t.workers, "seconds": round(t.seconds, 3), "episodes": t.episodes,
                    "steps": t.steps, "steps_per_second": t.steps_per_second,
                    "busy": round(t.busy, 4), "processes": t.processes}

        return {"serial": timing(self.serial), "parallel": timing(self.parallel),
                "speedup": self.speedup, "identical_records": self.identical}


def _sweep(experiment: Experiment, config: Any, options: SweepOptions, folder: Path
           ) -> tuple[SweepTiming, list[Record]]:
    """Sweep into ``folder`` with episodes timed; the timing and the records."""
    from mrsteve.eval.sweep import run_sweep

    groups = experiment.groups(config)
    options = replace(options, out=folder, json_path=None, plots=None, progress=False)
    start = time.perf_counter()
    run_sweep(groups, experiment.metrics(config), options,
              job=partial(timed_episode, experiment.episode), echo=lambda _: None,
              isolated=True)
    seconds = time.perf_counter() - start
    records = [r for path in sorted(folder.glob("*.episodes.jsonl")) for r in read_records(path)]
    steps = [r.get("steps") for r in records]
    total = sum(steps) if all(isinstance(s, int) for s in steps) else None
    busy = sum(r["episode_seconds"] for r in records) / (options.workers * seconds)
    timing = SweepTiming(options.workers, seconds, len(records), total, busy,
                         len({(r.get("node"), r["worker"]) for r in records}))
    return timing, records


def measure_scaling(experiment: Experiment, config: Any, options: SweepOptions) -> Scaling:
    """Sweep ``experiment`` with ``config`` once with one local worker, once with
    ``options.workers`` on ``options.backend``, each into a fresh temporary folder; compare and
    time them."""
    runs = []
    serial = replace(options, workers=1, backend="local", address=None)
    for sweep in (serial, options):
        with tempfile.TemporaryDirectory(prefix="mrsteve-bench-sweep-") as folder:
            runs.append(_sweep(experiment, config, sweep, Path(folder)))
    (serial, first), (parallel, second) = runs

    def comparable(records: list[Record]) -> list[dict[str, Any]]:
        kept = [{k: v for k, v in r.items() if k not in IDENTITY} for r in records]
        return sorted(kept, key=lambda r: (r["group"], r["episode"]))

    return Scaling(serial, parallel, comparable(first) == comparable(second))
