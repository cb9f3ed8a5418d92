"""Running a sweep: every episode of every group in one queue, resumable records, summaries.

An experiment (:mod:`mrsteve.eval.experiment`) is a list of groups
(:class:`~mrsteve.eval.spec.Group`: one task and one agent configuration each) whose episodes are run specs
(:class:`~mrsteve.eval.spec.RunSpec`). :func:`run_sweep` puts every episode of every group that
its group's records file does not already hold into one queue, most expensive first, and hands
it to a backend (:mod:`mrsteve.eval.backends`): worker processes that live for the whole sweep
and take the next episode as they free up, or Ray tasks with a bounded window so an N-CPU
cluster runs N at once. Each record is appended to its group's file as it arrives, each group's
summary is written when its last episode ends, and one progress bar counts the whole sweep.

A record is keyed by its spec's digest, so a resume never mixes settings. A records file
(:class:`RecordsFile`) is locked while a sweep appends to it (a second sweep on it is refused),
and a torn last line left by a crash is cut off before appending.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mrsteve.eval.backends import BACKENDS, check_backend, run_jobs
from mrsteve.eval.results import Metric, records_path_for, summarize, write_summary
from mrsteve.eval.spec import Group, RunSpec, check_episodes, check_seed
from mrsteve.fileio import writable_target

try:
    import fcntl
except ImportError:  # not on Windows: records files are not locked there
    fcntl = None

Record = dict[str, Any]
Job = Callable[[RunSpec], Record]

RECORD_FIELDS = {"task": str, "agent": str, "episode": int, "seed": int}
"""What every episode record holds besides its metrics (and ``group`` and ``digest``)."""


def episode_record(job: Job, spec: RunSpec) -> Record:
    """``job(spec)``'s metrics with what identifies the episode: group, task, agent, episode,
    seed and the spec's digest (the record's key). An episode that cannot be set up (a
    ``ValueError``) names its group."""
    try:
        record = dict(job(spec))
    except ValueError as error:
        raise ValueError(f"{spec.group}: {error}") from None
    record.update(group=spec.group, task=spec.task_name, agent=spec.agent_name,
                  episode=spec.index, seed=spec.seed, digest=spec.digest)
    return record


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
            raise ValueError(f"{path}:{number}: not a JSON record; delete or fix the "
                             "line") from None
        if not isinstance(record, dict) or any(
            not isinstance(record.get(name), kind) or isinstance(record.get(name), bool)
            for name, kind in RECORD_FIELDS.items()
        ):  # fmt: skip
            raise ValueError(f"{path}:{number}: not an episode record of an mrsteve sweep (it "
                             f"needs {', '.join(RECORD_FIELDS)}); give another --json or --out")
        records.append(record)
    return records


def read_records(path: Path | None) -> list[Record]:
    """Records already written to ``path`` (JSON lines); a torn last line from a crash is
    ignored."""
    if path is None or not Path(path).exists():
        return []
    with open(path, encoding="utf-8") as handle:
        return parse_records(handle.read(), path)


class DiskFull(OSError):
    """The disk filled while a record was written (the records written so far are intact)."""


class RecordsFile:
    """A group's records file, open for appending and locked (``fcntl.flock``) from ``open`` to
    ``close``: a second sweep on the same file is refused rather than running every episode
    again. Opening cuts off a torn last line (a crash while writing), so the next record starts
    on a line of its own."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.handle = None
        self.records: list[Record] = []

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
        """Append ``record`` and flush it to disk; a full disk raises :class:`DiskFull` and
        leaves the file as it was (a partial line is cut off again)."""
        start = self.handle.tell()
        try:
            self.handle.write(json.dumps(record).encode() + b"\n")
            self.handle.flush()
            os.fsync(self.handle.fileno())
        except OSError as error:
            try:
                self.handle.truncate(start)
            except OSError:
                pass  # the next open cuts the torn line
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFull(error.errno, f"the disk is full: could not write a record to "
                                            f"{self.path}") from None
            raise
        self.records.append(record)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()  # releases the lock
            self.handle = None

    def __enter__(self) -> RecordsFile:
        return self.open() if self.handle is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- the sweep's options and outputs ----------------------------------------------------------


@dataclass(frozen=True)
class SweepOptions:
    """The options every experiment shares."""

    episodes: int
    """Episodes per task and agent; episode i uses seed S + i."""
    seed: int = 42
    """Base seed S of the episodes (the paper: 42 + episode)."""
    workers: int = 1
    """Worker processes running episodes, each taking the next episode of the sweep as it frees
    up (with --backend ray and no --address: the CPUs of the local Ray started for the run)."""
    backend: str = "local"
    """Where episodes run: local (worker processes on this machine) or ray (Ray tasks on a
    cluster; pip install 'mrsteve[ray]')."""
    address: str | None = None
    """Address of a running Ray cluster for --backend ray (e.g. auto, or 10.0.0.1:6379);
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
        check_episodes(self.episodes)
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or not (
                1 <= self.workers <= 4096):
            raise ValueError(f"workers must be an integer from 1 to 4096, got {self.workers!r}")
        check_seed(self.seed)
        check_backend(self.backend)
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
    """Raise ``ValueError`` now, before any work, if a file in ``paths`` or the folder
    ``folder`` cannot be written."""
    for path in paths:
        if path is not None:
            writable_target(path)
    if folder is not None:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"cannot write plots to {folder}: it is not a directory")
        writable_target(folder / "plot.png")


# -- the queue ----------------------------------------------------------------------------------


@dataclass
class GroupRun:
    """A group's part in a running sweep: its episodes, its records file, what is still due."""

    group: Group
    specs: list[RunSpec]
    summary: Path | None
    records_file: RecordsFile | None
    done: dict[str, Record]

    @property
    def finished(self) -> bool:
        return len(self.done) == len(self.specs)

    def records(self) -> list[Record]:
        """The group's records in episode order."""
        return [self.done[spec.digest] for spec in self.specs]


class SweepBar(tqdm):
    """The sweep's bar, without tqdm's monitor thread (worker processes are forked from the
    driver, and a fork should not copy a process with other threads running)."""

    monitor_interval = 0


class SweepProgress:
    """One progress bar over a sweep: episodes done (resumed ones counted from the start), the
    groups finished, and the group of the last episode done."""

    def __init__(self, runs: Sequence[GroupRun], enabled: bool,
                 echo: Callable[[str], Any] = print) -> None:
        self.enabled, self.echo = enabled, echo
        total = sum(len(run.specs) for run in runs)
        resumed = sum(len(run.done) for run in runs)
        self.groups = len(runs)
        self.finished = sum(run.finished for run in runs)
        self.bar = SweepBar(total=total, initial=resumed, disable=not enabled, unit="ep",
                            dynamic_ncols=True,
                            desc=f"{self.groups} group{'s' * (self.groups > 1)}")
        if resumed:
            self.write(f"resuming: {resumed} of {total} episodes are in the records")
        self._postfix("")

    def _postfix(self, last: str) -> None:
        self.bar.set_postfix_str(f"groups done {self.finished}/{self.groups}"
                                 + (f", last: {last}" if last else ""))

    def episode_done(self, run: GroupRun) -> None:
        self.finished += run.finished
        self.bar.update(1)
        self._postfix(run.group.label)

    def write(self, line: str) -> None:
        """A line above the bar (or through ``echo`` without a bar)."""
        if self.enabled:
            self.bar.write(line)
        else:
            self.echo(line)

    def close(self) -> None:
        self.bar.close()


def queue_order(runs: Sequence[GroupRun]) -> list[RunSpec]:
    """Every episode still due, the most expensive group's first (stable otherwise)."""
    due = [(run.group.cost, order, spec) for order, run in enumerate(runs)
           for spec in run.specs if spec.digest not in run.done]
    due.sort(key=lambda item: (-item[0], item[1], item[2].index))
    return [spec for _, _, spec in due]


def run_sweep(
    groups: Sequence[Group],
    metrics: Sequence[str],
    options: SweepOptions,
    *,
    job: Job,
    on_group: Callable[[Group, list[Record]], Any] | None = None,
    echo: Callable[[str], Any] = print,
    on_start: Callable[[Path], Any] | None = None,
    isolated: bool = False,
) -> dict[str, dict[str, Metric]]:
    """Run every group's episodes in one queue with ``job`` (``RunSpec -> metrics``, picklable:
    a module-level function, such as an experiment's episode function), resuming from each
    group's records file; write each group's summary when its last episode ends and call
    ``on_group(group, records)`` then;
    returns the metric summaries by group label. Every output is checked, the backend found and
    every records file locked before the first episode; then ``on_start`` is called with the
    manifest's path (when there is one). ``isolated``: episodes run in worker processes even with
    one worker (as a benchmark compares)."""
    labels = [group.label for group in groups]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"groups must differ; given twice: {', '.join(repeated)}")
    paths = [summary_path(options.summary_base, label, several=len(groups) > 1)
             for label in labels]
    check_outputs([*paths, options.manifest_path], options.plots_dir)
    check_backend(options.backend, available=True)
    summaries: dict[str, dict[str, Metric]] = {}
    with ExitStack() as stack:
        runs = []
        for group, path in zip(groups, paths):
            records_file = (stack.enter_context(RecordsFile(records_path_for(path)))
                            if path is not None else None)
            specs = group.episodes(options.episodes, options.seed)
            wanted = {spec.digest for spec in specs}
            existing = records_file.records if records_file is not None else []
            done = {r["digest"]: r for r in existing if r.get("digest") in wanted}
            runs.append(GroupRun(group, specs, path, records_file, done))
        if on_start is not None and options.manifest_path is not None:
            on_start(options.manifest_path)
        by_label = {run.group.label: run for run in runs}
        progress = SweepProgress(runs, options.progress, echo)
        stack.callback(progress.close)

        def finish(run: GroupRun) -> None:
            records = run.records()
            summary = summarize(records, metrics)
            summaries[run.group.label] = summary
            if run.summary is not None:
                config = {**run.group.spec.tree(), "episodes": options.episodes,
                          "seed": options.seed, "seeds": [spec.seed for spec in run.specs]}
                write_summary(run.summary, task=run.group.task, agent=run.group.agent,
                              episodes=len(records), config=config, metrics=summary)
                progress.write(f"wrote {run.summary}")
            if on_group is not None:
                on_group(run.group, records)

        for run in runs:
            if run.finished:
                finish(run)
        for record in _records(job, queue_order(runs), options, isolated):
            run = by_label[record["group"]]
            if record["digest"] in run.done:  # never a record twice, whatever a backend hands back
                continue
            if run.records_file is not None:
                run.records_file.append(record)
            run.done[record["digest"]] = record
            progress.episode_done(run)
            if run.finished:
                finish(run)
    return {label: summaries[label] for label in labels}


def _records(job: Job, specs: list[RunSpec], options: SweepOptions,
             isolated: bool = False) -> Iterator[Record]:
    """Records of ``specs`` as they finish, on the sweep's backend."""
    return run_jobs(partial(episode_record, job), specs, workers=options.workers,
                    backend=options.backend, address=options.address, isolated=isolated)


def run_episodes(job: Job, specs: Sequence[RunSpec], *, workers: int = 1, backend: str = "local",
                 address: str | None = None) -> list[Record]:
    """Run ``specs`` (no records file, no summary) and return their records in order: a sweep
    without outputs, for tests and notebooks."""
    found: dict[str, Record] = {}
    for record in run_jobs(partial(episode_record, job), list(specs), workers=workers,
                           backend=backend, address=address):
        found[record["digest"]] = record
    return [found[spec.digest] for spec in specs]


__all__ = ["BACKENDS", "DiskFull", "Job", "Record", "RecordsFile", "SweepOptions",
           "check_outputs", "episode_record", "parse_records", "read_records", "run_episodes",
           "run_sweep", "summary_path"]
