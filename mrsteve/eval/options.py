"""The options every experiment shares (:class:`SweepOptions`: episodes, seed, workers,
backend, outputs) and the checks of a sweep's outputs made before any work: files writable, and a
run folder that holds no other run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mrsteve.eval.backends import check_backend
from mrsteve.eval.results import records_path_for
from mrsteve.eval.spec import check_episodes, check_seed
from mrsteve.fileio import writable_target


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
    trace: bool = False
    """Keep a trace of each episode for `mrsteve view` (traces/ in the run folder: the path,
    modes, memory reads and what the memory holds at the end; a few hundred KB each)."""
    plan: bool = False
    """Write the run's plan (plan.json in the run folder: the command, the episodes and seeds,
    every group's configuration digest) and run nothing; commit it, then run the same command
    without --plan, so the results show they were declared first."""

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
        for flag, path, example in (("--json", self.json_path, "runs/aba.json"),
                                    ("--plots", self.plots, "runs/plots")):
            if path is not None and not Path(path).name:
                raise ValueError(f"{flag} {str(path)!r} names no file or folder of its own (as "
                                 f"an empty {flag} does): name one, e.g. {flag} {example}")
        if self.out is not None and not Path(self.out).name:
            given = ("names the current folder (as an empty --out does), which is"
                     if str(self.out) in ("", ".") else f"{str(self.out)!r} is")
            raise ValueError(f"--out {given} no folder of its own (the results would go among "
                             "other files): name one, e.g. --out runs/my-run")

    @property
    def summary_base(self) -> Path | None:
        """The summary path of a one-group sweep (the run folder's summary.json, or --json)."""
        return self.out / "summary.json" if self.out is not None else self.json_path

    @property
    def traces_dir(self) -> Path | None:
        """Where episode traces go with ``--trace``: the run folder's traces/, or
        PATH-stem.traces/ beside ``--json``."""
        if not self.trace:
            return None
        if self.out is not None:
            return self.out / "traces"
        if self.json_path is not None:
            return self.json_path.with_name(f"{self.json_path.stem}.traces")
        return None

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


def check_run_folder(folder: Path | None, experiment: str, summaries: Sequence[Path]) -> None:
    """Raise ``ValueError`` now, before any work, if the run folder ``folder`` holds another
    run's results: a manifest of another experiment, or summaries and records this sweep would
    leave beside its own (other groups, named). A folder of this sweep's own files is resumed."""
    if folder is None or not folder.is_dir():
        return
    try:
        recorded = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    recorded = recorded if isinstance(recorded, dict) else {}
    if recorded.get("experiment", experiment) != experiment:
        raise ValueError(f"{folder} holds a run of {recorded['experiment']}: give another --out")
    ours = {path.name for path in summaries} | {records_path_for(path).name for path in summaries}
    others: list[str] = []
    for path in sorted(folder.glob("summary*.json*")):
        if path.name in ours or not path.name.endswith((".episodes.jsonl", ".json")):
            continue
        stem = path.name.removesuffix(".episodes.jsonl").removesuffix(".json")
        label = stem.removeprefix("summary").lstrip(".")
        if not label:  # a one-group run's summary.json: its manifest names the group
            label = ", ".join(recorded.get("groups") or []) or path.name
        if label not in others:
            others.append(label)
    if others:
        raise ValueError(f"{folder} holds the results of another run, groups this one would "
                         f"leave beside its own: {', '.join(others)}; give another --out, or "
                         "that run's options to resume it")
