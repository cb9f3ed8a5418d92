"""Running an experiment: groups of seeded episodes, worker processes or Ray tasks, resumable
records, summaries.

Every experiment (:mod:`mrsteve.eval.experiment`) is a list of groups (one task and agent each)
and a picklable *episode function* ``spec -> record`` (a JSON-able dict of metrics).
:func:`run_episodes` runs the :class:`EpisodeSpec` not already present in the records file, on a
backend (:mod:`mrsteve.eval.backends`: local worker processes or Ray tasks), appending each record
as soon as its episode ends, so an interrupted sweep resumes without redoing finished episodes; a
record is keyed by task, agent, episode, seed and a digest of the group's whole configuration and
options, so a resume never mixes settings. The records file (:class:`RecordsFile`) is locked while
a sweep appends to it (a second sweep on it is refused), and a torn last line left by a crash is
cut off before appending. :func:`run_sweep` runs every group of an experiment and writes its
summaries (:mod:`mrsteve.eval.results`) and plots, after checking every output path.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mrsteve.eval.backends import BACKENDS, run_jobs
from mrsteve.eval.results import Metric, records_path_for, summarize, write_summary
from mrsteve.fileio import writable_target

try:
    import fcntl
except ImportError:  # not on Windows: records files are not locked there
    fcntl = None

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
    settings: str = ""
    """A digest of the group's whole configuration (:func:`settings_digest`)."""

    @property
    def options_key(self) -> str:
        """A digest of ``options`` and ``settings``: records of other settings are never resumed
        from."""
        text = json.dumps([[[k, v] for k, v in self.options], self.settings], sort_keys=True,
                          default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def key(self) -> tuple[str, str, int, int, str]:
        """What identifies a finished episode in a records file."""
        return (self.task, self.agent, self.index, self.seed, self.options_key)


def episode_seed(base_seed: int, index: int) -> int:
    """The seed of episode ``index`` of a sweep seeded with ``base_seed`` (the paper: 42 + episode)."""
    return int(base_seed) + int(index)


def settings_digest(config: Mapping[str, Any] | None) -> str:
    """A digest of a group's configuration (the summary's ``config`` without the sweep's episode
    count and seeds), part of every record's key."""
    if not config:
        return ""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_seed(seed: Any) -> int:
    """``seed`` if it is a non-negative integer, else a ``ValueError`` saying so."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return seed


def make_specs(
    tasks: Iterable[str], agents: Iterable[str], episodes: int, seed: int,
    settings: Mapping[str, Any] | None = None, **options: Any,
) -> list[EpisodeSpec]:
    """The cross product of tasks, agents and ``episodes`` seeded episodes (``settings``: the
    group's configuration, digested into every spec's key)."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    check_seed(seed)
    frozen = tuple(sorted(options.items()))
    digest = settings_digest(settings)
    return [
        EpisodeSpec(task, agent, i, episode_seed(seed, i), frozen, digest)
        for task in tasks
        for agent in agents
        for i in range(episodes)
    ]


RECORD_FIELDS = {"task": str, "agent": str, "episode": int, "seed": int}
"""What every episode record holds besides its metrics."""


def parse_records(text: str, path: Path | str) -> list[Record]:
    """The records in ``text`` (JSON lines read from ``path``); a torn last line from a crash is
    ignored, anything else that is not an episode record is a ``ValueError`` naming the line."""
    records = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines) and not text.endswith("\n"):  # interrupted while writing
                break
            raise ValueError(f"{path}:{number}: not a JSON record; delete or fix the line") from None
        if not isinstance(record, dict) or any(
            not isinstance(record.get(name), kind) or isinstance(record.get(name), bool)
            for name, kind in RECORD_FIELDS.items()
        ):  # fmt: skip
            raise ValueError(f"{path}:{number}: not an episode record of an mrsteve sweep (it "
                             f"needs {', '.join(RECORD_FIELDS)}); give another --json or --out")
        records.append(record)
    return records


def read_records(path: Path | None) -> list[Record]:
    """Records already written to ``path`` (JSON lines); a torn last line from a crash is ignored."""
    if path is None or not Path(path).exists():
        return []
    with open(path, encoding="utf-8") as handle:
        return parse_records(handle.read(), path)


class RecordsFile:
    """A sweep's records file, open for appending and locked (``fcntl.flock``) from ``open`` to
    ``close``: a second sweep on the same file is refused rather than running every episode
    again. Opening cuts off a torn last line (a crash while writing), so the next record starts
    on a line of its own."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.handle = None

    def open(self) -> RecordsFile:
        target = writable_target(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(target, "a+b")
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise ValueError(f"{self.path} is in use by another sweep (the file is locked); "
                                 "wait for it to finish or write elsewhere") from None
        handle.seek(0)
        data = handle.read()
        try:
            self.records = parse_records(data.decode("utf-8", errors="replace"), self.path)
        except ValueError:
            handle.close()
            raise
        self.handle = handle
        if data and not data.endswith(b"\n"):
            try:
                json.loads(data[data.rfind(b"\n") + 1:])
                handle.write(b"\n")  # a whole record without its newline
            except ValueError:
                handle.truncate(data.rfind(b"\n") + 1)  # a torn record
        return self

    def append(self, record: Record) -> None:
        self.handle.write(json.dumps(record).encode() + b"\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()  # releases the lock
            self.handle = None

    def __enter__(self) -> RecordsFile:
        return self.open() if self.handle is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()


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
    records_path: Path | RecordsFile | None = None,
    workers: int = 1,
    progress: bool = True,
    on_record: Callable[[Record], None] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> list[Record]:
    """Run every spec not yet in ``records_path`` and return the records of all ``specs``.

    ``workers > 1`` runs episodes in that many processes, ``backend="ray"`` as Ray tasks
    (``episode_fn`` must be picklable: a module-level function). Records are appended to
    ``records_path`` (a path, or a :class:`RecordsFile` already open) as episodes finish.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    with ExitStack() as stack:
        records = records_path
        if records is not None and not isinstance(records, RecordsFile):
            records = stack.enter_context(RecordsFile(records))
        elif records is not None:
            stack.enter_context(records)
        wanted = {spec.key for spec in specs}
        existing = records.records if records is not None else []
        done = {_record_key(r): r for r in existing if _record_key(r) in wanted}
        todo = [spec for spec in specs if spec.key not in done]
        bar = tqdm(total=len(specs), initial=len(done), disable=not progress, unit="ep",
                   leave=False)
        stack.callback(bar.close)
        for record in run_jobs(partial(_call, episode_fn), todo, workers=workers,
                               backend=backend, address=address):
            key = _record_key(record)
            if key in done:  # never a record twice, whatever a backend hands back
                continue
            done[key] = record
            if records is not None:
                records.append(record)
            if on_record is not None:
                on_record(record)
            bar.update(1)
    return [done[spec.key] for spec in specs]


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
    """Worker processes running episodes (with --backend ray and no --address: the CPUs of the
    local Ray started for the run)."""
    backend: str = "local"
    """Where episodes run: local (worker processes on this machine) or ray (one Ray task per
    episode; pip install 'mrsteve[ray]')."""
    address: str | None = None
    """Address of a running Ray cluster for --backend ray (e.g. auto, or ray://head:10001);
    default: a local Ray started for the run."""
    out: Path | None = None
    """Run folder: summary.json (summary.<group>.json per group), the episode records beside
    each, plots/ and manifest.json; a run folder used again resumes its records."""
    json_path: Path | None = None
    """Write the summary JSON here instead of a run folder (one file per group when there are
    several, named PATH-stem.<group>.json), the episode records as JSON lines and
    PATH-stem.manifest.json beside it; an existing records file is resumed."""
    plots: Path | None = None
    """Save plots here (per-episode trajectories, or the experiment's summary figure; default
    with --out: DIR/plots)."""
    progress: bool = True
    """Show a progress bar."""

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.workers < 1:
            raise ValueError(f"episodes and workers must be >= 1, got {self.episodes} and "
                             f"{self.workers}")
        check_seed(self.seed)
        if self.backend not in BACKENDS:
            from mrsteve.naming import unknown_name

            raise unknown_name("backend", self.backend, BACKENDS)
        if self.address is not None and self.backend != "ray":
            raise ValueError("--address is the address of a Ray cluster: give --backend ray too")
        if self.out is not None and self.json_path is not None:
            raise ValueError("give a run folder (--out) or a summary path (--json), not both")

    @property
    def summary_base(self) -> Path | None:
        """The summary path of a one-group sweep (the run folder's summary.json, or --json)."""
        return self.out / "summary.json" if self.out is not None else self.json_path

    @property
    def plots_dir(self) -> Path | None:
        """Where plots go (--plots, or the run folder's plots/)."""
        if self.plots is None and self.out is not None:
            return self.out / "plots"
        return self.plots

    @property
    def manifest_path(self) -> Path | None:
        """Where the run's manifest goes (``manifest.json`` in the run folder, or beside
        --json)."""
        if self.out is not None:
            return self.out / "manifest.json"
        if self.json_path is not None:
            return self.json_path.with_name(f"{self.json_path.stem}.manifest.json")
        return None


def summary_path(json_path: Path | None, label: str, *, several: bool) -> Path | None:
    """Where a group's summary goes: ``json_path``, or with the group's label before the suffix
    when a sweep has several groups."""
    if json_path is None or not several:
        return json_path
    return json_path.with_name(f"{json_path.stem}.{label}{json_path.suffix or '.json'}")


def check_outputs(paths: Iterable[Path | None], folder: Path | None) -> None:
    """Raise ``ValueError`` now, before any episode runs, if a file in ``paths`` or the folder
    ``folder`` cannot be written."""
    for path in paths:
        if path is not None:
            writable_target(path)
    if folder is not None:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"cannot write plots to {folder}: it is not a directory")
        writable_target(folder / "plot.png")


def run_sweep(
    groups: Sequence[Group],
    episode_fn: EpisodeFn,
    metrics: Sequence[str],
    options: SweepOptions,
    *,
    plot: Callable[[Record, Path], Any] | None = None,
    echo: Callable[[str], Any] = print,
    on_start: Callable[[Path], Any] | None = None,
) -> dict[tuple[str, str], dict[str, Metric]]:
    """Run every group's episodes (resuming from its records file), write summaries and per-episode
    plots; returns the metric summaries by ``(task, agent)``. Every output is checked and every
    records file locked before the first episode; then ``on_start`` is called with the
    manifest's path (when there is one). A group that cannot be set up raises ``ValueError``
    naming it."""
    paths = [summary_path(options.summary_base, group.label, several=len(groups) > 1)
             for group in groups]
    plots = options.plots_dir if plot is not None or options.plots is not None else None
    check_outputs([*paths, options.manifest_path], plots)
    summaries = {}
    with ExitStack() as stack:
        records_files = [stack.enter_context(RecordsFile(records_path_for(path))) if path else None
                         for path in paths]
        if on_start is not None and options.manifest_path is not None:
            on_start(options.manifest_path)
        for group, path, records_file in zip(groups, paths, records_files):
            specs = make_specs([group.task], [group.agent], options.episodes, options.seed,
                               settings=group.config, **group.options)
            try:
                records = run_episodes(
                    episode_fn, specs, workers=options.workers, progress=options.progress,
                    records_path=records_file, backend=options.backend, address=options.address,
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
            if plots is not None and plot is not None:
                for record in records:
                    name = (f"{group.task.replace('/', '-')}_{group.agent}_"
                            f"{record['episode']:03d}.png")
                    plot(record, plots / name)
    if plots is not None and plot is not None:
        echo(f"plots in {plots}")
    return summaries
