"""What the trainings share: the run folder (:class:`TrainingRun`: its checkpoint, resumed when
the recipe matches, the stage state and history it keeps, the time spent over every sitting, the
data it caches, the files it ends with), renderings split into seeded streams that do not depend
on how many processes render them, and the recipe a checkpoint resumes by."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.workers import starmap_in_processes

RENDER_STREAMS = 2
"""Seeded streams every rendering (demonstrations, DAgger rounds, validation walks) is split
into, whatever the number of processes rendering them (``workers``): the data, and so the
weights, are the same on every machine. The shipped weights' data was rendered in two."""

SPEED_SETTINGS = ("threads", "workers")
"""Recipe fields that decide how fast a run goes, not what it trains."""


def render_streams(function: Callable[..., Any], seed: int, total: int,
                   job: Callable[[int, int, int], tuple], workers: int) -> list[Any]:
    """``function(*job(stream_seed, count, first))`` for each of the :data:`RENDER_STREAMS`
    streams of a rendering of ``total`` items seeded by ``seed`` (``first``: the index of the
    stream's first item), at most ``workers`` processes at once; the results in stream order."""
    counts = [total // RENDER_STREAMS + (i < total % RENDER_STREAMS)
              for i in range(RENDER_STREAMS)]
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
    seeds = [int(s.generate_state(1)[0])
             for s in np.random.SeedSequence(seed).spawn(RENDER_STREAMS)]
    jobs = [job(s, n, f) for s, n, f in zip(seeds, counts, firsts, strict=True) if n]
    return starmap_in_processes(function, jobs, processes=workers)


def trained_alike(fingerprint: str, other: str, extendable: tuple[str, ...] = ()) -> bool:
    """Whether a run of recipe ``other`` (a checkpoint's, as JSON) goes on from a checkpoint of
    recipe ``fingerprint``: equal but for the speed settings (:data:`SPEED_SETTINGS`), the
    validation settings (``validation_*``) and ``extendable`` counts (rounds of a stage that
    comes last in training) raised, not lowered, so a run resumes under any of them and a
    finished one goes on with more rounds."""
    def training(recipe: dict[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in recipe.items()
                if name not in SPEED_SETTINGS and name not in extendable
                and not name.startswith("validation_")}

    saved, wanted = json.loads(fingerprint), json.loads(other)
    return (training(saved) == training(wanted)
            and all(saved.get(name, 0) <= wanted.get(name, 0) for name in extendable))


class TrainingRun:
    """One training's run folder ``out``: ``checkpoint.pt`` holds the recipe's ``fingerprint``
    (a JSON dump), :attr:`state` (the stage reached, the epochs done, the :attr:`history`, the
    seconds spent) and the state of each torch object saved with it; a run of the same recipe
    (:func:`trained_alike`, with ``extendable`` counts that may grow) resumes from it, another
    starts afresh. ``state`` is the initial state of a fresh run; ``say`` prints progress."""

    CHECKPOINT = "checkpoint.pt"

    def __init__(self, out: Path, fingerprint: str, state: Mapping[str, Any], *,
                 say: Callable[[str], None] = print, extendable: tuple[str, ...] = ()) -> None:
        import torch

        self.out, self.fingerprint, self.say = Path(out), fingerprint, say
        self.out.mkdir(parents=True, exist_ok=True)
        self.state: dict[str, Any] = {"history": [], **state}
        self.saved: dict[str, Any] | None = None
        """The checkpoint resumed (its objects' states for :meth:`restore`), else ``None``."""
        self._started = time.perf_counter()
        path = self.out / self.CHECKPOINT
        if path.exists():
            saved = torch.load(path, weights_only=False)
            if not trained_alike(saved.get("config", "{}"), fingerprint, extendable):
                say(f"{path} is of another configuration; starting afresh")
            else:
                self.saved, self.state = saved, saved["state"]
                # the time spent counts on from the folder's earlier sittings
                self._started -= self.state.get("seconds", max(
                    (row.get("seconds", 0.0) for row in self.history), default=0.0))

    @property
    def history(self) -> list[dict[str, Any]]:
        """One row per epoch, round or stage done (what ``history.json`` and the curve show)."""
        return self.state["history"]

    @property
    def seconds(self) -> float:
        """Seconds spent training in this folder, over every sitting."""
        return time.perf_counter() - self._started

    def log(self, stage: str, epoch: int, **values: Any) -> dict[str, Any]:
        """Append a history row (``stage``, ``epoch``, ``values`` and the seconds spent)."""
        row = {"stage": stage, "epoch": epoch, **values, "seconds": self.seconds}
        self.history.append(row)
        return row

    def restore(self, **objects: Any) -> bool:
        """Load the resumed checkpoint's state into each torch object (``model=...``,
        ``optimiser=...``) it holds; ``False`` when nothing was resumed."""
        if self.saved is None:
            return False
        for name, target in objects.items():
            target.load_state_dict(self.saved[name])
        return True

    def save(self, **objects: Any) -> None:
        """Write the checkpoint: the fingerprint, :attr:`state` and each object's state."""
        import torch

        from mrsteve.fileio import atomic_path

        self.state["seconds"] = self.seconds
        with atomic_path(self.out / self.CHECKPOINT) as tmp:
            torch.save({"config": self.fingerprint, "state": self.state,
                        **{name: target.state_dict() for name, target in objects.items()}}, tmp)

    def cached(self, name: str, key: str, render: Callable[[], Any],
               load: Callable[[Path], Any], elsewhere: Path | None = None) -> Any:
        """``<name>.npz`` of the folder (or of the folder ``elsewhere``) when it was rendered for
        ``key`` (read by ``load``), else ``render()``'s, saved in the folder (anything with
        ``save(path)``)."""
        for folder in (self.out, elsewhere):
            if folder is None:
                continue
            path, key_path = folder / f"{name}.npz", folder / f"{name}.key"
            if path.exists() and key_path.exists() and key_path.read_text() == key:
                return load(path)
        data = render()
        data.save(self.out / f"{name}.npz")
        (self.out / f"{name}.key").write_text(key)
        return data

    def finish(self, weights: Any, filename: str,
               plot: Callable[[Sequence[dict[str, Any]], Path], None]) -> None:
        """Write the trained ``weights`` as ``filename``, ``history.json`` and ``curve.png``
        (drawn by ``plot(history, path)``)."""
        from mrsteve.fileio import atomic_path

        weights.save(self.out / filename)
        with atomic_path(self.out / "history.json") as tmp:
            tmp.write_text(json.dumps(self.history, indent=2))
        plot(self.history, self.out / "curve.png")


__all__ = ["RENDER_STREAMS", "SPEED_SETTINGS", "TrainingRun", "render_streams", "trained_alike"]
