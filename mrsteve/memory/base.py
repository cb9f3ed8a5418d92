"""The memory interface shared by every variant: the ``Memory`` protocol, what a read returns, the
read filters (what-where-when), and the validation of everything a caller passes in.

A frame is ``(embedding, pose, t)``: an L2-normalised float32 embedding, a pose
``(x, y, z, yaw, pitch)`` relative to the episode start (y up, yaw and pitch in degrees as in
Minecraft) and the environment step ``t``. Scores are cosine similarities (embedding dot products).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from mrsteve.memory.frames import FrameStore
from mrsteve.memory.kernels import (
    FLOAT32_MAX,
    NORM_TOLERANCE,
    STEP_MAX,
    STEP_MIN,
    passing_frames,
    square_norm_and_peak,
)

POSE_FIELDS = ("x", "y", "z", "yaw", "pitch")


class RecalledFrame(NamedTuple):
    """One frame returned by a read."""

    t: int
    pose: tuple[float, ...]
    """``(x, y, z, yaw, pitch)``."""
    score: float


SCORES = ("all", "best")
"""What scores a read computes (:meth:`Memory.read`'s ``scores``): every returned frame's, or
only those its order and its best score need."""


@dataclass(frozen=True, eq=False)
class MemoryRead:
    """The frames a read returned, as parallel arrays in result order (nearest to ``near`` first
    when it was given, else highest score first): every frame that matched, or the first
    ``limit`` of them (:attr:`matched` counts them all). Index or iterate it to get
    :class:`RecalledFrame` tuples.
    """

    t: np.ndarray
    """Environment steps, int64, shape ``(n,)``."""
    pose: np.ndarray
    """Poses ``(x, y, z, yaw, pitch)``, float32, shape ``(n, 5)``."""
    score: np.ndarray
    """Cosine similarity to the query, float32, shape ``(n,)``; NaN for a frame whose score a
    read with ``scores="best"`` did not need (it is at least the threshold)."""
    frames_scored: int
    """Dot products the read computed: cluster centres ranked plus frames scored (exactly or
    from their codes)."""
    best_score: float | None = None
    """The highest score, exact (``None`` when nothing was found); computed from ``score`` when
    not given."""
    bytes_read: int = 0
    """Bytes of embeddings (float rows and int8 codes) and slot lists the read touched, where
    the memory counts them (0: not counted)."""
    matched: int | None = None
    """Frames that scored at least the threshold and passed the filters: more than
    ``len(self)`` when the read's ``limit`` returned only the first; ``len(self)`` when not
    given."""

    def __post_init__(self) -> None:
        if self.best_score is None and len(self):
            object.__setattr__(self, "best_score", float(np.max(self.score)))
        if self.matched is None:
            object.__setattr__(self, "matched", len(self))

    @classmethod
    def empty(cls, frames_scored: int = 0, bytes_read: int = 0) -> MemoryRead:
        return cls(np.empty(0, np.int64), np.empty((0, 5), np.float32), np.empty(0, np.float32),
                   frames_scored, None, bytes_read)

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def __getitem__(self, index: int) -> RecalledFrame:
        pose = tuple(float(v) for v in self.pose[index])
        return RecalledFrame(int(self.t[index]), pose, float(self.score[index]))

    def __iter__(self) -> Iterator[RecalledFrame]:
        return (self[i] for i in range(len(self)))


@dataclass(frozen=True)
class MemoryStats:
    """Size and shape of a memory. A *cluster* is what a read ranks by its centre: a place in
    :class:`PlaceMemory`, an event (the provisional one of a place included) in Event and Place
    Event Memory; FIFO Memory is one cluster that every read scans whole."""

    frames: int
    places: int
    events: int
    clusters: int
    frames_per_cluster_min: int
    frames_per_cluster_mean: float
    frames_per_cluster_max: int
    bytes: int
    """Bytes allocated: every numpy buffer, spare rows included, plus an estimate of the Python
    index containers by their lengths (:func:`mrsteve.memory.frames.container_nbytes`)."""


@dataclass(frozen=True, eq=False)
class ClusterView:
    """A copy of one cluster's frames, oldest first, for inspection and tests."""

    t: np.ndarray
    pose: np.ndarray
    embedding: np.ndarray
    centre_index: int | None
    """Row of the centre frame in the arrays above; ``None`` for FIFO (no centre)."""


@runtime_checkable
class Memory(Protocol):
    """An episodic memory of ``(embedding, pose, t)`` frames (the paper's Section 3.1)."""

    @property
    def capacity(self) -> int | None:
        """Most frames held at once; ``None`` is unlimited."""
        ...

    @property
    def dim(self) -> int | None:
        """Embedding size, fixed by ``dim=`` or by the first write."""
        ...

    def write(self, embedding: ArrayLike, pose: Sequence[float], t: int) -> None:
        """Store one frame, then evict while over capacity."""
        ...

    def read(
        self,
        query: ArrayLike,
        threshold: float,
        *,
        top_k: int | None = None,
        near: Sequence[float] | None = None,
        since: int | None = None,
        until: int | None = None,
        within: Sequence[float] | None = None,
        outside: Sequence[Sequence[float]] | None = None,
        scores: str = "all",
        limit: int | None = None,
    ) -> MemoryRead:
        """The searched frames whose score is at least ``threshold``: nearest first to ``near``
        ``(x, z)``, else best first; filtered by step (``since``, ``until``), by a disc
        ``within`` and by discs ``outside`` (:class:`ReadFilter`). With ``scores="best"`` only
        the scores the order and :attr:`MemoryRead.best_score` need must be computed (others
        may be NaN); the frames and their order are the same. With ``limit`` only the first
        ``limit`` frames in that order are returned (:attr:`MemoryRead.matched` still counts
        every match and :attr:`MemoryRead.best_score` is still the best of them)."""
        ...

    def clear(self) -> None:
        """Forget every frame (a new episode); capacity, dimension and hyperparameters stay."""
        ...

    def __len__(self) -> int: ...

    def stats(self) -> MemoryStats: ...

    def clusters(self) -> list[ClusterView]: ...

    def save(self, path: str | os.PathLike[str]) -> None: ...


def held_frames(memory: Memory) -> tuple[np.ndarray, np.ndarray]:
    """``(t int64[n], pose float32[n, 5])``: the step and pose of every frame ``memory`` holds, in
    no particular order (what the explorer's visitation map is painted from). The library's
    variants answer from their frame store, embeddings untouched; another memory through
    :meth:`Memory.clusters`."""
    store = getattr(memory, "_frames", None)
    if isinstance(store, FrameStore):
        if not store.free:
            return store.steps[: store.used].copy(), store.poses[: store.used].copy()
        held = np.ones(store.used, bool)
        held[store.free] = False
        rows = np.flatnonzero(held)
        return store.steps[rows], np.take(store.poses, rows, axis=0)
    views = memory.clusters() if len(memory) else []
    if not views:
        return np.empty(0, np.int64), np.empty((0, 5), np.float32)
    return (np.concatenate([view.t for view in views]).astype(np.int64),
            np.concatenate([view.pose for view in views]).astype(np.float32))


@dataclass(frozen=True)
class ReadFilter:
    """The what-where-when bounds of a read. A frame passes when ``since <= t <= until``, its
    ground position lies within ``radius`` of ``(x, z)`` and outside every disc of ``outside``.
    A cluster is searched (ranked for top-k) when its time span ``[oldest t, newest t]`` meets
    ``[since, until]`` and the bounding box of its frames' ground positions meets the disc;
    ``outside`` bounds frames only (the clusters compete as without it: the mode selector's
    exclusion of searched targets after its read)."""

    since: int | None = None
    until: int | None = None
    within: tuple[float, ...] | None = None
    """``(x, z, radius)``."""
    outside: tuple[tuple[float, ...], ...] = ()
    """``((x, z, radius), ...)``."""

    @functools.cached_property
    def compiled(self) -> tuple[int, int, np.ndarray, np.ndarray]:
        """``(since, until, within, outside)`` as the compiled read filters frames with them
        (:func:`~mrsteve.memory.kernels.passing_frames`): int64's bounds where unbounded, the
        discs as float64 arrays (no rows: none)."""
        return (
            STEP_MIN if self.since is None else self.since,
            STEP_MAX if self.until is None else self.until,
            np.asarray(self.within if self.within is not None else (), np.float64),
            np.asarray(self.outside, np.float64).reshape(len(self.outside), 3),
        )

    @property
    def limits_clusters(self) -> bool:
        """Whether some clusters may not compete for the top-k."""
        return self.since is not None or self.until is not None or self.within is not None

    def frames(self, t: np.ndarray, pose: np.ndarray) -> np.ndarray:
        """Boolean mask of the frames that pass (as the compiled read filters them)."""
        return passing_frames(t, pose, self.compiled)

    def clusters(self, t_first: np.ndarray, t_last: np.ndarray, box: np.ndarray) -> np.ndarray:
        """Boolean mask of the clusters to search; ``box`` rows are ``(x_min, x_max, z_min,
        z_max)``. A cluster holding a passing frame always passes."""
        keep = np.ones(t_first.shape[0], bool)
        if self.since is not None:
            keep &= t_last >= self.since
        if self.until is not None:
            keep &= t_first <= self.until
        if self.within is not None:
            x, z, radius = self.within
            box = box.astype(np.float64)
            dx = np.maximum(np.maximum(box[:, 0] - x, x - box[:, 1]), 0.0)
            dz = np.maximum(np.maximum(box[:, 2] - z, z - box[:, 3]), 0.0)
            keep &= dx * dx + dz * dz <= radius * radius
        return keep


NO_FILTER = ReadFilter()
"""The filter of a read with no bounds."""


# --- validation of caller input -------------------------------------------------------------------


def require(condition: bool, message: str, value: Any) -> None:
    """Raise ``ValueError(f"{message}, got {value!r}")`` unless ``condition``."""
    if not condition:
        raise ValueError(f"{message}, got {value!r}")


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    """A finite number (not a bool)."""
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def check_capacity(capacity: Any) -> int | None:
    if capacity is None:
        return None
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ValueError(f"capacity must be a positive int or None (unlimited), got {capacity!r}")
    return int(capacity)


def check_dim(dim: Any) -> int | None:
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(
            f"dim must be a positive int or None (set by the first write), got {dim!r}"
        )
    return int(dim)


STEP_RANGE = (STEP_MIN, STEP_MAX)
"""Steps the memory stores (int64)."""


def check_embedding(embedding: ArrayLike, dim: int | None, name: str = "embedding") -> np.ndarray:
    """A 1-D float vector of size ``dim`` (any size while ``dim`` is None), finite as float32 and
    L2-normalised (norm within ``1 +- NORM_TOLERANCE``); returned as float32."""
    array = embedding if type(embedding) is np.ndarray else np.asarray(embedding)
    if array.dtype.kind != "f":
        raise ValueError(f"{name} must hold floats (float32 or float64), got dtype {array.dtype}")
    if array.ndim != 1 or (dim is not None and array.shape[0] != dim) or array.shape[0] == 0:
        expected = f"({dim},)" if dim is not None else "(dim,) with dim >= 1"
        raise ValueError(f"{name} must have shape {expected}, got {array.shape}")
    if array.dtype == np.float32 or array.dtype == np.float64:
        square_norm, peak = square_norm_and_peak(array)  # one compiled pass, no warnings
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            wide = array.astype(np.float64)
            square_norm, peak = float(np.dot(wide, wide)), float(np.abs(wide).max())
    if not math.isfinite(square_norm) or peak > FLOAT32_MAX:
        raise ValueError(f"{name} holds NaN or infinite values (as float32)")
    norm = math.sqrt(square_norm)
    if not abs(norm - 1.0) <= NORM_TOLERANCE:
        raise ValueError(
            f"{name} must be L2-normalised (norm 1 +- {NORM_TOLERANCE}; scores are cosines), "
            f"got norm {norm:.6g}"
        )
    return array if array.dtype == np.float32 else array.astype(np.float32)


def check_pose(pose: Any) -> list[float]:
    """Five numbers ``(x, y, z, yaw, pitch)``, finite as float32; returned as stored (rounded to
    float32)."""
    try:
        values = tuple(map(float, pose.tolist() if type(pose) is np.ndarray else pose))
    except (TypeError, ValueError):
        raise ValueError(f"pose must be 5 numbers {POSE_FIELDS}, got {pose!r}") from None
    if len(values) != 5:
        raise ValueError(f"pose must be 5 numbers {POSE_FIELDS}, got {len(values)} values")
    # A NaN or inf makes the sum NaN or inf (so does an overflow, of values past float32's range).
    if not math.isfinite(sum(values)) or max(map(abs, values)) > FLOAT32_MAX:
        raise ValueError(
            f"pose must be finite and within float32 range (|v| <= {FLOAT32_MAX:.4g}), "
            f"got {values}"
        )
    return np.asarray(values, np.float32).tolist()


def check_step(t: Any, last: int | None) -> int:
    """An int step in int64 range, not earlier than the last one written (a cluster's oldest
    frame is then its earliest)."""
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
        raise ValueError(f"t must be an int environment step, got {t!r}")
    step = int(t)
    if not STEP_RANGE[0] <= step <= STEP_RANGE[1]:
        raise ValueError(f"t must fit int64 ({STEP_RANGE[0]} to {STEP_RANGE[1]}), got {step}")
    if last is not None and step < last:
        raise ValueError(f"t must not decrease: got {step} after {last}")
    return step


def check_read_options(
    threshold: Any,
    top_k: Any,
    default_top_k: int,
    near: Any,
    since: Any,
    until: Any,
    within: Any,
    outside: Any = None,
    scores: Any = "all",
    limit: Any = None,
) -> tuple[float, int, tuple[float, ...] | None, ReadFilter]:
    """Validate a read's options; returns ``(threshold, top_k, near, filter)`` (a read without
    bounds shares :data:`NO_FILTER`)."""
    if scores not in SCORES:
        raise ValueError(f"scores must be one of {', '.join(map(repr, SCORES))}, got {scores!r}")
    if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError(f"limit must be a positive int or None (every frame), got {limit!r}")
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a number, got {threshold!r}") from None
    if math.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    if top_k is None:
        top_k = default_top_k
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(
            f"top_k must be a positive int or None (the memory's default), got {top_k!r}"
        )
    near_xz = None if near is None else _finite_numbers(near, 2, "near", "(x, z)")
    if since is None and until is None and within is None and outside is None:
        return threshold, int(top_k), near_xz, NO_FILTER
    for name, bound in (("since", since), ("until", until)):
        if bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, (int, np.integer))
        ):
            raise ValueError(f"{name} must be an int step or None, got {bound!r}")
    disc = None
    if within is not None:
        disc = _finite_numbers(within, 3, "within", "(x, z, radius)")
        if disc[2] < 0:
            raise ValueError(f"within radius must be >= 0, got {disc[2]}")
    excluded: tuple[tuple[float, ...], ...] = ()
    if outside is not None:
        try:
            discs = list(outside)
        except TypeError:
            raise ValueError(f"outside must be a list of (x, z, radius), got {outside!r}") from None
        excluded = tuple(_finite_numbers(d, 3, "each disc of outside", "(x, z, radius)")
                         for d in discs)
        if any(radius < 0 for _, _, radius in excluded):
            raise ValueError(f"outside radii must be >= 0, got {outside!r}")
    window = ReadFilter(
        None if since is None else int(since), None if until is None else int(until), disc,
        excluded,
    )
    return threshold, int(top_k), near_xz, window


def _finite_numbers(values: Any, count: int, name: str, shape: str) -> tuple[float, ...]:
    try:
        numbers = tuple(map(float, values))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {count} numbers {shape}, got {values!r}") from None
    if len(numbers) != count or not all(map(math.isfinite, numbers)):
        raise ValueError(f"{name} must be {count} finite numbers {shape}, got {values!r}")
    return numbers
