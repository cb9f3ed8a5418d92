"""Running an experiment: groups of seeded episodes, worker processes, resumable records, summaries.

Every experiment (:mod:`mrsteve.eval.experiment`) is a list of groups (one task and agent each)
and a picklable *episode function* ``spec -> record`` (a JSON-able dict of metrics).
:func:`run_episodes` runs the :class:`EpisodeSpec` not already present in the records file, in
worker processes if asked, appending each record as soon as its episode ends, so an interrupted
sweep resumes without redoing finished episodes; a record is keyed by task, agent, episode, seed
and a digest of the episode's options, so a resume never mixes settings. :func:`run_sweep` runs
every group of an experiment and writes its summaries (:mod:`mrsteve.eval.results`) and plots.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mrsteve.eval.results import Metric, records_path_for, summarize, write_summary

Record = dict[str, Any]
EpisodeFn = Callable[["EpisodeSpec"], Record]


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a sweep. ``seed`` is derived from the sweep's seed and ``index``."""

    task: str
    agent: str
    index: int
    seed: int
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def options_key(self) -> str:
        """A digest of ``options``: records of other settings are never resumed from."""
        text = json.dumps([[k, v] for k, v in self.options], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def key(self) -> tuple[str, str, int, int, str]:
        """What identifies a finished episode in a records file."""
        return (self.task, self.agent, self.index, self.seed, self.options_key)


def episode_seed(base_seed: int, index: int) -> int:
    """The seed of episode ``index`` of a sweep seeded with ``base_seed`` (the paper: 42 + episode)."""
    return int(base_seed) + int(index)


def make_specs(
    tasks: Iterable[str], agents: Iterable[str], episodes: int, seed: int, **options: Any
) -> list[EpisodeSpec]:
    """The cross product of tasks, agents and ``episodes`` seeded episodes."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    frozen = tuple(sorted(options.items()))
    return [
        EpisodeSpec(task, agent, i, episode_seed(seed, i), frozen)
        for task in tasks
        for agent in agents
        for i in range(episodes)
    ]


def read_records(path: Path | None) -> list[Record]:
    """Records already written to ``path`` (JSON lines); a torn last line from a crash is ignored."""
    if path is None or not Path(path).exists():
        return []
    records = []
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):  # interrupted while writing the last record
                break
            raise ValueError(f"{path}:{number}: not a JSON record; delete or fix the line") from None
    return records


def _record_key(record: Record) -> tuple[str, str, int, int, str]:
    return (record["task"], record["agent"], int(record["episode"]), int(record["seed"]),
            record.get("options_key", ""))


def _call(episode_fn: EpisodeFn, spec: EpisodeSpec) -> Record:
    record = dict(episode_fn(spec))
    record.update(task=spec.task, agent=spec.agent, episode=spec.index, seed=spec.seed,
                  options_key=spec.options_key)
    return record


def run_episodes(
    episode_fn: EpisodeFn,
    specs: list[EpisodeSpec],
    *,
    records_path: Path | None = None,
    workers: int = 1,
    progress: bool = True,
    on_record: Callable[[Record], None] | None = None,
) -> list[Record]:
    """Run every spec not yet in ``records_path`` and return the records of all ``specs``.

    ``workers > 1`` runs episodes in that many processes (``episode_fn`` must be picklable: a
    module-level function). Records are appended to ``records_path`` as episodes finish.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    wanted = {spec.key for spec in specs}
    done = {_record_key(r): r for r in read_records(records_path) if _record_key(r) in wanted}
    todo = [spec for spec in specs if spec.key not in done]
    if records_path is not None:
        Path(records_path).parent.mkdir(parents=True, exist_ok=True)

    bar = tqdm(total=len(specs), initial=len(done), disable=not progress, unit="ep", leave=False)
    try:
        for record in _execute(episode_fn, todo, workers):
            done[_record_key(record)] = record
            if records_path is not None:
                with open(records_path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
            if on_record is not None:
                on_record(record)
            bar.update(1)
    finally:
        bar.close()
    return [done[spec.key] for spec in specs]


def _execute(episode_fn: EpisodeFn, specs: list[EpisodeSpec], workers: int) -> Iterator[Record]:
    if workers == 1 or len(specs) <= 1:
        for spec in specs:
            yield _call(episode_fn, spec)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_call, episode_fn, spec) for spec in specs]
        for future in as_completed(futures):
            yield future.result()


# -- sweeps over groups ------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One (task, agent) of a sweep, with what its summary needs."""

    task: str
    """Task name of the episode specs (``exploration``, ``navigation/flat``, ...)."""
    agent: str
    label: str
    """Short name of the group in file names (``flat``, ``count-based``)."""
    config: Mapping[str, Any]
    """The group's full configuration (the task's and the agent's), saved in its summary."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """What the episode function needs besides task, agent and seed (JSON-able)."""


@dataclass(frozen=True)
class SweepOptions:
    """The options every experiment shares."""

    episodes: int
    """Episodes per task and agent; episode i uses seed S + i."""
    seed: int = 42
    """Base seed S of the episodes (the paper: 42 + episode)."""
    workers: int = 1
    """Worker processes running episodes."""
    json_path: Path | None = None
    """Write the summary JSON here (one file per group when there are several, named
    PATH-stem.<group>.json) and the episode records as JSON lines beside it; an existing records
    file is resumed."""
    plots: Path | None = None
    """Save plots here (per-episode trajectories, or the experiment's summary figure)."""
    progress: bool = True
    """Show a progress bar."""


def summary_path(json_path: Path | None, label: str, *, several: bool) -> Path | None:
    """Where a group's summary goes: ``json_path``, or with the group's label before the suffix
    when a sweep has several groups."""
    if json_path is None or not several:
        return json_path
    return json_path.with_name(f"{json_path.stem}.{label}{json_path.suffix or '.json'}")


def run_sweep(
    groups: Sequence[Group],
    episode_fn: EpisodeFn,
    metrics: Sequence[str],
    options: SweepOptions,
    *,
    plot: Callable[[Record, Path], Any] | None = None,
    echo: Callable[[str], Any] = print,
) -> dict[tuple[str, str], dict[str, Metric]]:
    """Run every group's episodes (resuming from its records file), write summaries and per-episode
    plots; returns the metric summaries by ``(task, agent)``. A group that cannot be set up raises
    ``ValueError`` naming it."""
    summaries = {}
    for group in groups:
        specs = make_specs([group.task], [group.agent], options.episodes, options.seed,
                           **group.options)
        path = summary_path(options.json_path, group.label, several=len(groups) > 1)
        try:
            records = run_episodes(
                episode_fn, specs, workers=options.workers, progress=options.progress,
                records_path=records_path_for(path) if path else None,
            )  # fmt: skip
        except ValueError as error:  # a task that cannot be set up on its world
            raise ValueError(f"{group.task}, {group.agent}: {error}") from None
        summary = summarize(records, metrics)
        summaries[(group.task, group.agent)] = summary
        if path is not None:
            config = {**group.config, "episodes": options.episodes, "seed": options.seed,
                      "seeds": [spec.seed for spec in specs]}
            write_summary(path, task=group.task, agent=group.agent, episodes=len(records),
                          config=config, metrics=summary)
            echo(f"wrote {path}")
        if options.plots is not None and plot is not None:
            for record in records:
                name = f"{group.task.replace('/', '-')}_{group.agent}_{record['episode']:03d}.png"
                plot(record, options.plots / name)
    if options.plots is not None and plot is not None:
        echo(f"plots in {options.plots}")
    return summaries
