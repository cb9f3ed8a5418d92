"""Episode records: what identifies an episode beside its metrics, and a group's records file
(JSON lines), locked while a sweep appends to it and resumable.

A record is keyed by its run spec's digest (:mod:`mrsteve.eval.spec`), so a resume never mixes
settings. A records file (:class:`RecordsFile`) is locked while a sweep appends to it (a second
sweep on it is refused), and a torn last line left by a crash is cut off before appending.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mrsteve.eval.spec import RunSpec
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
