"""How a sweep scales with workers: the same episodes with one worker and with N, timed.

:func:`measure_scaling` sweeps an experiment's groups twice into temporary folders, once with one
worker process and once with ``workers`` (local processes, or Ray tasks with ``backend="ray"``);
both start alike (each sweep's driver is a fresh process forked from this one, and its episodes
run in worker processes of it), so the speed-up is the one a user sees from ``--workers``. It
checks that both gave the same records (the same seeds give the same episodes, whoever runs
them), and reports the wall times, the speed-up and where the time went: the start-up (from the
sweep's start to its first episode's: the driver's set-up and warm-up, the workers' start), the
episodes per second after it, the steps of the episodes, and how much of the workers' time went
into episodes (the rest is start-up, idle workers at the end of the queue, and the driver).
``mrsteve bench sweep`` prints it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from mrsteve.eval.backends import check_backend, check_cluster, die_with_parent, start_method
from mrsteve.eval.experiment import Experiment
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import Record, read_records

IDENTITY = ("digest", "node", "episode_started", "episode_seconds", "worker")
"""Record fields that say who ran an episode, not what happened in it."""


def timed_episode(episode: Any, spec: Any) -> Record:
    """``episode(spec)`` with its start (the wall clock), its wall time and the process that ran
    it."""
    started, start = time.time(), time.perf_counter()
    record = dict(episode(spec))
    record["episode_started"] = started
    record["episode_seconds"] = time.perf_counter() - start
    record["worker"] = os.getpid()
    return record


@dataclass(frozen=True)
class SweepTiming:
    """One timed sweep."""

    workers: int
    seconds: float
    """Wall time of the whole sweep (workers' start-up included)."""
    startup: float
    """Seconds from the sweep's start to its first episode's (the driver's set-up and warm-up,
    the workers' start; on a cluster, as exact as the nodes' clocks agree)."""
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

    @property
    def steady_episodes_per_second(self) -> float:
        """Episodes per second after the start-up."""
        return self.episodes / max(self.seconds - self.startup, 1e-9)


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
            return {"workers": t.workers, "seconds": round(t.seconds, 3),
                    "startup_seconds": round(t.startup, 3), "episodes": t.episodes,
                    "steady_episodes_per_second": t.steady_episodes_per_second,
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
    started, start = time.time(), time.perf_counter()
    run_sweep(groups, experiment.metrics(config), options,
              job=partial(timed_episode, experiment.episode), echo=lambda _: None,
              isolated=True)
    seconds = time.perf_counter() - start
    records = [r for path in sorted(folder.glob("*.episodes.jsonl")) for r in read_records(path)]
    steps = [r.get("steps") for r in records]
    total = sum(steps) if all(isinstance(s, int) for s in steps) else None
    busy = sum(r["episode_seconds"] for r in records) / (options.workers * seconds)
    startup = min((r["episode_started"] - started for r in records), default=seconds)
    timing = SweepTiming(options.workers, seconds, max(startup, 0.0), len(records), total, busy,
                         len({(r.get("node"), r["worker"]) for r in records}))
    return timing, records


def _reply(conn: Any, parent: int, function: Callable[..., Any], *args: Any) -> None:
    """A fresh driver: ``function(*args)``'s value or exception sent back to ``parent``, with
    which it dies."""
    die_with_parent(parent)
    try:
        reply = ("ok", function(*args))
    except BaseException as error:  # noqa: BLE001  (raised again in the caller)
        reply = ("error", error)
    try:
        conn.send(reply)
    except Exception as error:  # noqa: BLE001  (an unpicklable exception)
        conn.send(("error", RuntimeError(f"{reply[1]!r} ({error})")))
    conn.close()


def in_fresh_driver(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a child process started as local workers are (forked on Linux): it
    starts from this process's state, whatever an earlier call warmed in its own process (its
    exception, if any, is raised here)."""
    context = get_context(start_method())
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_reply, args=(child, os.getpid(), function, *args))
    process.start()
    child.close()
    try:
        status, value = parent.recv()
    except EOFError:
        process.join()
        raise RuntimeError(f"a sweep's driver process died (exit code {process.exitcode})"
                           ) from None
    finally:
        parent.close()
    process.join()
    if status == "error":
        raise value
    return value


def measure_scaling(experiment: Experiment, config: Any, options: SweepOptions) -> Scaling:
    """Sweep ``experiment`` with ``config`` once with one local worker, once with
    ``options.workers`` on ``options.backend``, each into a fresh temporary folder; compare and
    time them. A Ray cluster not found at ``options.address`` is refused before either runs."""
    check_backend(options.backend, available=True)
    if options.backend == "ray" and options.address:
        check_cluster(options.address)
    runs = []
    serial = replace(options, workers=1, backend="local", address=None)
    for sweep in (serial, options):
        with tempfile.TemporaryDirectory(prefix="mrsteve-bench-sweep-") as folder:
            runs.append(in_fresh_driver(_sweep, experiment, config, sweep, Path(folder)))
    (serial, first), (parallel, second) = runs

    def comparable(records: list[Record]) -> list[dict[str, Any]]:
        kept = [{k: v for k, v in r.items() if k not in IDENTITY} for r in records]
        return sorted(kept, key=lambda r: (r["group"], r["episode"]))

    return Scaling(serial, parallel, comparable(first) == comparable(second))
