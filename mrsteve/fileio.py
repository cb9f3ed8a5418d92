"""Safe file writes: a crash or a full disk never leaves half a file behind, and nothing but a
regular file is ever replaced (stdlib only).

A write goes to a temporary file beside its target, named ``.<name>.<pid>.<random>.tmp``, which
replaces the target in one step once complete. Temporaries left by a killed writer are removed by
the next write to the same target (their process is gone). The target must be a regular file or
not exist: a directory, a device (``/dev/null``), a socket or a pipe is refused with an error
rather than replaced; a symbolic link is followed and its target written.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def writable_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces (symbolic links followed), checked up front: it must
    be a regular file or not exist yet, in a directory that exists or can be made and is writable.
    Raises ``ValueError`` naming the problem otherwise; nothing is created or changed."""
    target = Path(os.path.realpath(os.fspath(path)))
    try:
        mode = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ValueError(f"cannot write {path}: it is {kind}; give the path of a regular file")
    parent = target.parent
    while not parent.exists():  # the nearest existing ancestor must be a writable directory
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {path}: directory {parent} is not writable")
    return target


def _remove_stale_temporaries(target: Path) -> None:
    """Delete temporaries of earlier writes to ``target`` whose writing process no longer runs."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(\d+)\.[^.]+\.tmp$")
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid != os.getpid() and not _process_alive(pid):
            Path(entry.path).unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one step, on
    failure it is removed and ``path`` is left as it was (see the module docstring for what may be
    replaced)."""
    target = writable_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.",
                               suffix=".tmp")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
    try:
        yield Path(tmp)
        writable_target(target)  # still a regular file (or absent) at the moment of replacing
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: str | os.PathLike, payload: Any) -> None:
    """Write ``payload`` as indented JSON to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=2)
        handle.write("\n")
