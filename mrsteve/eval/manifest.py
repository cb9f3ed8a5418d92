"""A run's manifest: what produced its results, to reproduce or audit them later.

``manifest.json`` holds the experiment and its full configuration (every group's run spec, agent
trees included), the sweep's options (episodes, seeds, workers, backend), the versions of Python,
of ``mrsteve`` and of each of its dependencies (and of Ray when it ran the sweep), the git commit
of the source when it is a checkout, the process's arguments and the ``mrsteve eval`` command
that runs the same sweep, the start time and the wall time.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


def package_versions(extra: Sequence[str] = ()) -> dict[str, str | None]:
    """Versions of ``mrsteve`` and of the packages it depends on (and of ``extra``); ``None`` for
    one that is not installed."""
    try:
        requires = metadata.requires("mrsteve") or []
    except metadata.PackageNotFoundError:
        requires = []
    names = ["mrsteve"] + [re.split(r"[\s<>=!~;\[]", line, maxsplit=1)[0]
                           for line in requires if "extra ==" not in line]
    versions = {}
    for name in [*names, *extra]:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit(path: Path | None = None) -> dict[str, Any] | None:
    """The commit of the git checkout holding ``path`` (default: this package) and whether its
    tree has uncommitted changes; ``None`` outside a checkout or without git."""
    where = Path(path or Path(__file__).resolve().parent)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                                text=True, timeout=10)
        if commit.returncode != 0:
            return None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=where, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def timestamp(seconds: float) -> str:
    """A local time as the manifest writes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(seconds))


def earlier_sittings(path: Path | None, experiment: str) -> list[dict[str, Any]]:
    """The sittings an earlier manifest of the same run at ``path`` recorded (a run resumed
    from its records is made in several), each ``{"started", "git"}``; ``[]`` without one."""
    if path is None or not Path(path).is_file():
        return []
    try:
        earlier = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(earlier, dict) or earlier.get("experiment") != experiment:
        return []
    if isinstance(earlier.get("sittings"), list):
        return earlier["sittings"]
    return [{"started": earlier.get("started"), "git": earlier.get("git")}]


def portable_path(path: Path) -> str:
    """``path`` relative to the working folder when it lies inside it (a manifest names where
    the run is, not the machine's folders); as given otherwise."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


def manifest(experiment: str, config: Any, groups: Mapping[str, Any], sweep: Any,
             started: float, wall_time: float | None, command_line: str | None = None, *,
             git: dict[str, Any] | None = None, plan: dict[str, Any] | None = None,
             sittings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The manifest of a run of ``experiment`` (``config``: its config dataclass; ``groups``:
    each group's run spec by label; ``sweep``: the :class:`SweepOptions`; ``command_line``: the
    ``mrsteve eval`` command that runs it, whoever started it; ``git``: the code's commit when
    the run started (default: now); ``plan``: the provenance of its plan
    (:func:`mrsteve.eval.plan.plan_provenance`); ``sittings``: the earlier sittings of a
    resumed run, this one appended)."""
    options = {k: (portable_path(v) if isinstance(v, Path) else v)
               for k, v in dataclasses.asdict(sweep).items()}
    git = git_commit() if git is None else git
    return {
        "experiment": experiment,
        "config": dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config,
        "groups": dict(groups),
        "sweep": options | {"seeds": [sweep.seed + i for i in range(sweep.episodes)]},
        "versions": {"python": platform.python_version(),
                     **package_versions(("ray",) if sweep.backend == "ray" else ())},
        "git": git,
        "plan": plan,
        "sittings": [*(sittings or []), {"started": timestamp(started), "git": git}],
        "platform": platform.platform(),
        "command": [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else [],
        "command_line": command_line,
        "started": timestamp(started),
        "wall_time_s": None if wall_time is None else round(wall_time, 3),
    }
