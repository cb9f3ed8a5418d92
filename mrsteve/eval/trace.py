"""What `mrsteve view` shows of an episode, kept while it runs and bounded whatever its length.

:class:`EpisodeTrace` is a driver callback (:class:`~mrsteve.tasks.driver.EpisodeCallback`). It
keeps the path (a point every :attr:`~EpisodeTrace.path_every` steps), the modes as runs of
steps, every memory read of the mode selector (its prompt, how many frames matched, the best
score, the chosen target and the first :attr:`~EpisodeTrace.candidates_kept` candidates), each
task's start and end, and thumbnails of the agent's view (every
:attr:`~EpisodeTrace.thumbnail_every` steps; when :attr:`~EpisodeTrace.max_thumbnails` are kept,
every other one is dropped and the interval doubles, so a 500K-step episode keeps as many as a
short one, spread over all of it). At the end, :meth:`~EpisodeTrace.finish` adds what the
memory holds (its event clusters, each with the thumbnail nearest its centre frame's step, and
the place cells its frames lie in) and the top-down map of the terrain under the path: the
map is the evaluator's, for display only; the agent never sees it. Positions are world ``(x, z)``.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.spaces import AgentFrame
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.tasks.outcomes import TaskOutcome

TRACE_VERSION = 1
"""The layout of a trace (:meth:`EpisodeTrace.data`); a viewer refuses other versions."""

MAP_SCALE = 4
"""Pixels per block of the top-down map."""


def png_data(image: np.ndarray) -> str:
    """``image`` (``uint8[H, W, 3]``) as a base64 PNG."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(buffer, format="PNG",
                                                                      optimize=True)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass
class EpisodeTrace(EpisodeCallback):
    """An episode as :mod:`mrsteve.eval.view` draws it (module docstring)."""

    path_every: int = 5
    max_path_points: int = 20_000
    """Points kept at most: past them every other one goes and the interval doubles."""
    thumbnail_every: int = 50
    max_thumbnails: int = 240
    candidates_kept: int = 16
    max_reads: int = 5000
    """Reads kept at most (the first ones; the count of the rest is kept)."""
    path: list[list[float]] = field(default_factory=list)
    modes: list[list[Any]] = field(default_factory=list)
    """``[first step, mode]`` for each run of steps in one mode."""
    reads: list[dict[str, Any]] = field(default_factory=list)
    reads_dropped: int = 0
    tasks: list[dict[str, Any]] = field(default_factory=list)
    thumbnails: dict[int, str] = field(default_factory=dict)
    """Base64 PNG of the agent's view by step."""
    steps: int = 0
    memory: dict[str, Any] | None = None
    map: dict[str, Any] | None = None

    def on_reset(self, env: Any, obs: Any, frame: AgentFrame) -> None:
        self.frame = frame
        self.path.append(self._xz(obs))

    def on_task_start(self, task: TaskOutcome) -> None:
        self.tasks.append({"item": task.item, "start": int(task.start), "end": None,
                           "success": False})

    def on_task_end(self, task: TaskOutcome) -> None:
        for kept in reversed(self.tasks):
            if kept["item"] == task.item and kept["start"] == task.start:
                kept.update(end=None if task.end is None else int(task.end),
                            success=bool(task.success))
                return

    def on_step(self, step: Step) -> None:
        self.steps = step.t
        decision = step.decision
        mode = decision.mode.value if decision.mode is not None else None
        if not self.modes or self.modes[-1][1] != mode:
            self.modes.append([int(step.t), mode])
        if step.t % self.path_every == 0:
            if len(self.path) >= self.max_path_points:  # point i stays at step i * path_every
                self.path, self.path_every = self.path[::2], self.path_every * 2
            if step.t % self.path_every == 0:
                self.path.append(self._xz(step.obs))
        if decision.query is not None:
            self._read(step.t, decision.query)
        if step.t % self.thumbnail_every == 0 and "rgb" in step.view:
            self._thumbnail(step.t, step.view["rgb"])

    def _xz(self, obs: Any) -> list[float]:
        return [round(float(obs["pose"][0]), 2), round(float(obs["pose"][2]), 2)]

    def _world(self, x: float, z: float) -> list[float]:
        wx, wz = self.frame.to_world(x, z)
        return [round(float(wx), 2), round(float(wz), 2)]

    def _read(self, t: int, query: Any) -> None:
        if len(self.reads) >= self.max_reads:
            self.reads_dropped += 1
            return
        target = query.target
        self.reads.append({
            "t": int(t), "prompt": query.prompt, "candidates": int(query.candidates),
            "best_score": None if query.best_score is None else round(float(query.best_score), 4),
            "target": None if target is None else self._world(target[0], target[2]),
            "target_t": query.target_t,
            "candidates_at": [self._world(x, z) for x, z in
                              query.candidates_xz[:self.candidates_kept]],
        })

    def _thumbnail(self, t: int, rgb: np.ndarray) -> None:
        if len(self.thumbnails) >= self.max_thumbnails:
            self.thumbnail_every *= 2
            self.thumbnails = {kept: image for kept, image in self.thumbnails.items()
                               if kept % self.thumbnail_every == 0}
            if t % self.thumbnail_every:
                return
        self.thumbnails[int(t)] = png_data(np.asarray(rgb))

    def finish(self, memory: Any, blocks: np.ndarray | None,
               corner: tuple[float, float] = (0.0, 0.0),
               episode_pose: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        """Add what ``memory`` holds at the end (``None``: an agent without one; its poses are
        put in the episode frame by ``episode_pose``, as the agent keeps them) and the map of
        ``blocks`` (``blocks[0, :, 0]`` at world ``corner``)."""
        if memory is not None:
            self.memory = self._memory(memory, episode_pose or (lambda pose: pose))
        if blocks is not None:
            from mrsteve.world.topdown import top_down_image

            self.map = {"png": png_data(top_down_image(blocks, scale=MAP_SCALE)),
                        "corner": [float(corner[0]), float(corner[1])], "scale": MAP_SCALE,
                        "size": [int(blocks.shape[0]), int(blocks.shape[2])]}

    def _memory(self, memory: Any,
                episode_pose: Callable[[np.ndarray], np.ndarray]) -> dict[str, Any]:
        clusters = []
        steps = np.array(sorted(self.thumbnails), dtype=np.int64)
        for number, view in enumerate(memory.clusters()):
            if not len(view.t):
                continue
            centre = view.centre_index if view.centre_index is not None else len(view.t) - 1
            t = int(view.t[centre])
            nearest = (int(steps[np.argmin(np.abs(steps - t))]) if len(steps) else None)
            pose = episode_pose(view.pose[centre])
            clusters.append({
                "id": number, "frames": len(view.t), "first": int(view.t.min()),
                "last": int(view.t.max()), "centre_t": t,
                "at": self._world(float(pose[0]), float(pose[2])), "thumbnail_t": nearest,
            })
        config = getattr(memory, "config", None)
        cell = getattr(config, "cell_size", None)
        cells: list[list[float]] = []
        if cell and clusters:
            from mrsteve.memory.base import held_frames

            _, poses = held_frames(memory)
            keys = np.unique(np.floor(poses[:, [0, 2]] / cell).astype(np.int64), axis=0)
            corners = [episode_pose(np.array([kx * cell, 0.0, kz * cell, 0.0, 0.0]))
                       for kx, kz in keys]  # a cell's corner, as the memory keys it
            cells = [self._world(float(c[0]), float(c[2])) for c in corners]
        return {"kind": type(memory).__name__, "frames": len(memory),
                "capacity": memory.capacity, "clusters": clusters, "cell_size": cell,
                "cells": cells}

    def finish_episode(self, agent: Any, env: Any) -> None:
        """:meth:`finish` with the memory of ``agent`` (or of its controller, under a planner)
        and the map of ``env``'s world under the path and the targets."""
        controller = getattr(agent, "controller", agent)
        world = env.unwrapped.world
        blocks, corner = world.blocks, (0.0, 0.0)
        if world.window is not None:  # an unbounded world: the terrain under what is drawn
            points = np.asarray(self.path + [read["target"] for read in self.reads
                                             if read["target"]], dtype=np.float64)
            blocks, corner = world.window.region(points.min(axis=0), points.max(axis=0))
        self.finish(getattr(controller, "memory", None), blocks, corner,
                    getattr(controller, "episode_pose", None))

    def data(self, about: dict[str, Any] | None = None) -> dict[str, Any]:
        """The trace as plain data (``about``: what the episode was: task, agent, seed)."""
        used = ({cluster["thumbnail_t"] for cluster in self.memory["clusters"]}
                if self.memory else set())
        return {
            "version": TRACE_VERSION, "about": about or {}, "steps": int(self.steps),
            "path_every": self.path_every, "path": self.path, "modes": self.modes,
            "reads": self.reads, "reads_dropped": self.reads_dropped, "tasks": self.tasks,
            "memory": self.memory, "map": self.map,
            "thumbnails": {str(t): image for t, image in self.thumbnails.items() if t in used},
        }


def requested_trace() -> EpisodeTrace | None:
    """A trace for the episode about to run when the sweep asked for traces
    (:func:`requesting_traces`), else ``None``: an experiment's episode function passes it to
    the driver with its callbacks, then calls :func:`keep_trace`."""
    return EpisodeTrace() if traces_requested() else None


def keep_trace(record: dict[str, Any], trace: EpisodeTrace | None, agent: Any, env: Any,
               spec: Any) -> dict[str, Any]:
    """``record`` with the finished ``trace`` of the episode of ``spec`` (a
    :class:`~mrsteve.eval.spec.RunSpec`) under :data:`TRACE_KEY` (unchanged without one); call
    it while ``env`` is open."""
    if trace is not None:
        trace.finish_episode(agent, env)
        record[TRACE_KEY] = trace.data({"task": spec.task_name, "agent": spec.agent_name,
                                        "group": spec.group, "episode": spec.index,
                                        "seed": spec.seed})
    return record


def write_trace(path: Path, data: dict[str, Any]) -> Path:
    """``data`` (:meth:`EpisodeTrace.data`) as gzipped JSON at ``path``."""
    from mrsteve.fileio import atomic_path

    with atomic_path(path) as temporary:
        temporary.write_bytes(gzip.compress(json.dumps(data).encode("utf-8"), mtime=0))
    return path


def read_trace(path: Path) -> dict[str, Any]:
    """A trace written by :func:`write_trace`; ``ValueError`` naming the file otherwise."""
    try:
        data = json.loads(gzip.decompress(Path(path).read_bytes()))
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except (OSError, EOFError, ValueError) as error:
        raise ValueError(f"{path} is not an episode trace ({error})") from None
    if not isinstance(data, dict) or data.get("version") != TRACE_VERSION:
        raise ValueError(f"{path} is not an episode trace of version {TRACE_VERSION}")
    return data


TRACE_KEY = "trace"
"""The key of an episode's record that carries its trace to the sweep, which keeps it in its
own file (:data:`TRACES`) rather than in the records."""

_requested = False


@contextmanager
def requesting_traces(wanted: bool = True) -> Iterator[None]:
    """Within the block (and in worker processes forked in it), episodes that can keep a trace
    do (:func:`traces_requested`)."""
    global _requested
    previous, _requested = _requested, wanted
    try:
        yield
    finally:
        _requested = previous


def traces_requested() -> bool:
    """Whether the running sweep asked its episodes for traces (:func:`requesting_traces`)."""
    return _requested


TRACE_FILE = "trace.json.gz"
"""A demo's trace, in its folder."""

TRACES = "traces"
"""The folder of a run's traces (``eval --trace``): ``<group>.<episode>.json.gz``."""


def trace_name(group: str, episode: int) -> str:
    """The file name of a run's trace of ``group``'s episode ``episode``."""
    return f"{group}.{episode}.json.gz"


def find_traces(source: Path) -> list[Path]:
    """The traces at ``source``: a trace file, a demo's folder or a run folder's ``traces/``
    (by group, then episode); ``ValueError`` saying how to make one when there is none."""
    source = Path(source)
    if not source.exists():
        raise ValueError(f"{source} does not exist: give a demo's folder, a run folder made "
                         "with --trace or a trace file")
    if source.is_file():
        return [source]
    if (source / TRACE_FILE).is_file():
        return [source / TRACE_FILE]
    found = sorted((source / TRACES).glob("*.json.gz"), key=_trace_order)
    if not found:
        raise ValueError(f"{source} holds no trace: `mrsteve demo` writes one, and `mrsteve eval "
                         "... --trace` one per episode")
    return found


def _trace_order(path: Path) -> tuple[str, int]:
    group, _, episode = path.name.removesuffix(".json.gz").rpartition(".")
    return (group, int(episode)) if episode.isdigit() else (path.name, -1)
