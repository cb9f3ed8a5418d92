"""Running many episodes: seeds, worker processes, resumable per-episode records.

Every ``mrsteve eval`` experiment is a list of :class:`EpisodeSpec` and a picklable *episode
function* ``spec -> record`` (a JSON-able dict of metrics). :func:`run_episodes` runs the specs not
already present in the records file, in worker processes if asked, appending each record as soon as
its episode ends, so an interrupted sweep resumes without redoing finished episodes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from tqdm import tqdm

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
    def key(self) -> tuple[str, str, int, int]:
        """What identifies a finished episode in a records file."""
        return (self.task, self.agent, self.index, self.seed)


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


def _record_key(record: Record) -> tuple[str, str, int, int]:
    return (record["task"], record["agent"], int(record["episode"]), int(record["seed"]))


def _call(episode_fn: EpisodeFn, spec: EpisodeSpec) -> Record:
    record = dict(episode_fn(spec))
    record.update(task=spec.task, agent=spec.agent, episode=spec.index, seed=spec.seed)
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
