"""What every memory variant shares: frames in a :class:`FrameStore`, clusters in a
:class:`ClusterTable`, the write-then-evict loop, the hierarchical read, statistics and saving.

A variant decides where a new frame goes (:meth:`ClusteredMemory._place`) and what happens to a
cluster when eviction takes its oldest frame (:meth:`ClusteredMemory._after_eviction`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from mrsteve.memory.base import (
    NORM_TOLERANCE,
    STEP_RANGE,
    ClusterView,
    MemoryRead,
    MemoryStats,
    ReadFilter,
    check_capacity,
    check_dim,
    check_embedding,
    check_pose,
    check_read_options,
    check_step,
    is_int,
    require,
)
from mrsteve.memory.cluster_table import ClusterTable
from mrsteve.memory.fileformat import write_archive
from mrsteve.memory.frames import PRECISIONS, FrameStore
from mrsteve.memory.kernels import (
    EVERY_FRAME,
    FLOAT32_MAX,
    NO_ROOM,
    REFUSED_QUERY,
    STORED,
    score_rows,
    search_clusters,
    write_frame,
)
from mrsteve.naming import check_name, unknown_name


@dataclass(frozen=True)
class MemoryConfig:
    """Settings every memory has (FIFO Memory has no others)."""

    frame_precision: str = "float32"
    """How frames' embeddings are kept: ``"float32"``, or ``"float16"`` at half the bytes (a read
    moves half as much; scores of unit vectors then differ by up to about 1e-4). Not in the
    paper."""

    def __post_init__(self) -> None:
        """Validate; subclasses extend this and call ``super().__post_init__()``."""
        check_name(self.frame_precision, PRECISIONS, "frame_precision")


@dataclass(frozen=True)
class ClusterConfig(MemoryConfig):
    """Hyperparameters of the memories that rank clusters before scoring frames."""

    top_k: int = 30
    """Clusters whose frames a read scores, by centre score (paper, Table "Specifications": 30)."""
    frame_codes: bool = False
    """Keep int8 codes of each frame beside it (520 more bytes a 512-dim frame, written with
    it), from which reads with ``scores="best"`` decide most frames without their float rows
    (:meth:`ClusteredMemory.read`). Not in the paper; ``mrsteve bench memory`` measures it."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(is_int(self.top_k) and self.top_k >= 1, "top_k must be an int >= 1", self.top_k)
        require(isinstance(self.frame_codes, bool), "frame_codes must be a bool",
                self.frame_codes)


def make_config(
    config_type: type[MemoryConfig], hyperparameters: dict[str, Any], owner: str
) -> MemoryConfig:
    """``config_type(**hyperparameters)``; an unknown name raises the package's unknown-name
    error, naming ``owner`` (the memory class) and the accepted names."""
    names = [field.name for field in dataclasses.fields(config_type)]
    for name in hyperparameters:
        if name not in names:
            raise unknown_name(f"{owner} hyperparameter", name, names or ["(none)"])
    return config_type(**hyperparameters)


class ClusteredMemory(ABC):
    """Base of the memory variants (see :class:`mrsteve.memory.base.Memory` for the interface)."""

    Config: ClassVar[type[MemoryConfig]] = MemoryConfig
    scores_centres_only: bool = False
    """A read returns the centre frames of the top-k clusters instead of all their frames."""

    def __init__(
        self, capacity: int | None = None, *, dim: int | None = None, **hyperparameters: Any
    ):
        self._capacity = check_capacity(capacity)
        self.config = make_config(self.Config, hyperparameters, type(self).__name__)
        self._dim: int | None = None
        self._frames: FrameStore | None = None
        self._clusters: ClusterTable | None = None
        self._size = 0
        self._last_t: int | None = None
        self._grid = self._place_grid()
        self._route = np.array([0, 0, 0, -1], np.int64)
        """``(cell x, cell z, yaw bin, cluster)``: the place cell of the last frame stored and the
        cluster taking that cell's frames (-1: none; :meth:`_route_to`)."""
        self._missed: MissedRead | None = None
        """The last read, when it found nothing (:class:`MissedRead`)."""
        dim = check_dim(dim)
        if dim is not None:
            self._allocate(dim)

    def clear(self) -> None:
        """Forget every frame (a new episode): the memory is as built, with its capacity,
        dimension and hyperparameters."""
        library = next(cls for cls in type(self).__mro__  # a user's subclass keeps its own state
                       if cls.__module__.startswith(__package__ + "."))
        library.__init__(self, self._capacity, dim=self._dim, **dataclasses.asdict(self.config))

    def _allocate(self, dim: int) -> None:
        self._dim = dim
        self._frames = FrameStore(dim, self._frames_rows(), self.config.frame_precision,
                                  self._frames_coded())
        self._clusters = ClusterTable(self._frames)
        self._on_allocate()

    def _frames_rows(self) -> int | None:
        """Rows the frame store may grow to: a write comes before its eviction."""
        return None if self._capacity is None else self._capacity + 1

    def _on_allocate(self) -> None:
        """Set up variant state that needs the storage (FIFO opens its one cluster)."""

    @property
    def capacity(self) -> int | None:
        return self._capacity

    @property
    def dim(self) -> int | None:
        return self._dim

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(capacity={self._capacity}, frames={self._size}, {self.config})"
        )

    # --- write ---

    def write(self, embedding: ArrayLike, pose: Sequence[float], t: int) -> None:
        """Store one frame (the paper's "Memory Add"), then, while more frames than the capacity
        are held, remove the oldest frame of the largest cluster ("Memory Remove")."""
        # Everything is checked before anything changes: a rejected write leaves the memory as
        # it was. 1-D float arrays go straight to the compiled call, which checks the frame,
        # stores it and, in the place cell of the route, appends it to its cluster; other input
        # and the first write (which fixes the size) are checked in Python first. This runs every
        # step: attribute look-ups and calls are kept few on purpose.
        last = self._last_t
        if type(t) is int and last is not None and last <= t <= _LAST_STEP:
            step = t
        else:
            step = check_step(t, last)
        frames = self._frames
        if (
            frames is not None
            and type(embedding) is np.ndarray
            and type(pose) is np.ndarray
            and embedding.ndim == 1 == pose.ndim
            and embedding.dtype in _FLOAT_TYPES
            and pose.dtype in _FLOAT_TYPES
        ):
            vector, checked = embedding, False
        else:
            vector, pose = self._checked(embedding, pose)
            frames, checked = self._frames, True
        free = frames.free
        slot = free[-1] if free else frames.used
        status, cluster, size = self._write_frame(slot, vector, pose, step, checked)
        if status != STORED:
            if status != NO_ROOM:
                self._refuse(embedding, pose)
            frames.grow()  # for a frame that passed the checks: a refused write changes nothing
            status, cluster, size = self._write_frame(slot, vector, pose, step, checked)
        if free:
            free.pop()
        else:
            frames.used += 1
        self._size += 1
        if self._missed is not None:
            self._missed = self._missed.written(slot)
        self._last_t = step
        if cluster < 0:
            cell_x, cell_z, yaw_bin, _ = self._route.tolist()  # the cell the kernel found
            self._place(slot, (cell_x, cell_z, yaw_bin))
        else:  # on the route: the cluster _place would choose
            if size < 0:  # its block was full
                self._clusters.append(cluster, slot)
            self._appended(cluster, slot)
        while self._capacity is not None and self._size > self._capacity:
            self._evict()

    def _write_frame(
        self, slot: int, vector: np.ndarray, pose: np.ndarray, t: int, checked: bool
    ) -> tuple[int, int, int]:
        """:func:`~mrsteve.memory.kernels.write_frame` on this memory's arrays and route: check
        the frame (its embedding unless ``checked``), store it in ``slot`` if it passes and the
        slot is a row of the store, and append it to the route's cluster if it lies in the
        route's place cell."""
        frames, table = self._frames, self._clusters
        return write_frame(
            frames.embeddings, frames.poses, frames.steps, slot, vector, pose, t, not checked,
            self._grid, self._route, table.arena, table.blocks, table.stale, table.buckets.links,
            table.buckets.ends, *frames.frame_codes,
        )

    def _checked(self, embedding: ArrayLike, pose: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """``(float32 vector, float64 pose as stored)``, or the ``ValueError`` of the first check
        that fails, in order: pose, embedding, location. Allocates the storage on the first
        write."""
        stored_pose = check_pose(pose)
        vector = check_embedding(embedding, self._dim)
        self._check_location(stored_pose)
        if self._frames is None:
            self._allocate(vector.shape[0])
        return vector, np.asarray(stored_pose, np.float64)

    def _refuse(self, embedding: np.ndarray, pose: np.ndarray) -> NoReturn:
        """Raise the error of a frame the compiled checks refused, as the Python checks word it."""
        self._checked(embedding, pose)
        raise AssertionError("the Python checks passed a frame the compiled checks refused")

    def _route_to(self, cluster: int) -> None:
        """Frames in the place cell of the last frame stored go to ``cluster`` until it closes
        (:meth:`_close`) or a frame lands elsewhere: the write appends there in the compiled
        call, then calls :meth:`_appended`."""
        self._route[3] = cluster

    def _close(self, cluster: int) -> None:
        """Close an empty cluster (:meth:`ClusterTable.close`), ending a route to it."""
        self._clusters.close(cluster)
        if self._route[3] == cluster:
            self._route[3] = -1

    def _place_grid(self) -> np.ndarray:
        """``(C, C / 2, W, W / 2)`` of the variant's place cells, from which the write computes
        each frame's cell (:func:`~mrsteve.memory.kernels.write_frame`); empty: no places."""
        return _NO_GRID

    def _check_location(self, pose: list[float]) -> None:
        """Raise ``ValueError`` for a pose (as stored) that the variant cannot file."""

    @abstractmethod
    def _place(self, slot: int, cell: tuple[int, int, int]) -> None:
        """Put the frame in ``slot`` into its cluster and :meth:`_route_to` that cluster;
        ``cell`` is its place cell ``(cell x, cell z, yaw bin)`` on the variant's grid
        (:meth:`_place_grid`), zeros without one."""

    def _appended(self, cluster: int, slot: int) -> None:
        """After the frame in ``slot`` was appended to ``cluster`` (by :meth:`_place` or on the
        route): what the variant updates then."""

    def _evict(self) -> None:
        cluster = self._clusters.largest()
        slot = self._clusters.pop_oldest(cluster)
        self._drop(slot)
        self._after_eviction(cluster, slot)

    def _drop(self, slots: int | np.ndarray) -> None:
        """Forget frames that no cluster holds any more."""
        self._frames.release(slots)
        self._size -= 1 if isinstance(slots, int) else int(slots.shape[0])

    @abstractmethod
    def _after_eviction(self, cluster: int, slot: int) -> None:
        """Eviction took ``slot``, the oldest frame of ``cluster``: close an emptied cluster, or
        pick a new centre when the centre was taken."""

    # --- read ---

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
        """The searched frames whose score (cosine similarity to ``query``) is at least
        ``threshold``, nearest first to ``near`` = ``(x, z)`` when given, else best first.

        Searched frames: the frames of the ``top_k`` clusters (default: the config's) whose
        centres score best among the clusters that pass the filters (paper, Algorithm "Read").
        ``since``/``until`` (steps, inclusive) and ``within=(x, z, radius)`` (blocks) filter
        both: a cluster competes for the top-k when its time span meets ``[since, until]`` and
        the bounding box of its frames meets the disc; a frame is returned only if it passes
        itself (see :class:`ReadFilter`). ``outside=[(x, z, radius), ...]`` drops the frames in
        those discs after the search.

        ``scores="best"`` computes only the scores the result needs: the best score
        (:attr:`MemoryRead.best_score`) and the order are exact, the other frames' scores NaN.
        With :attr:`ClusterConfig.frame_codes`, which frames score at least the threshold is
        then decided from the frames' int8 codes wherever their error bound allows, and with
        ``near`` a float32 row is read only for frames whose bound straddles the threshold,
        that may be the best, or that tie another's distance (best first needs every score).
        The frames, their order and the best score are those of ``scores="all"``, to the last
        bit.

        ``limit`` returns only the first ``limit`` frames in result order
        (:attr:`MemoryRead.matched` counts them all); a nearest-first read then sorts only the
        frames no farther than the ``limit``-th nearest.
        """
        # A float32 vector of the memory's size goes to the compiled read as it is: its values
        # are checked there, in the read's own call (a refused one raises this check's error).
        unchecked = (type(query) is np.ndarray and query.dtype is _FLOAT32 and query.ndim == 1
                     and query.shape[0] == self._dim)
        vector = query if unchecked else check_embedding(query, self._dim, name="query")
        threshold, top_k, near_xz, window = check_read_options(
            threshold, top_k, self._default_top_k(), near, since, until, within, outside, scores,
            limit,
        )
        if unchecked and (self._size == 0 or self._missed is not None):
            vector, unchecked = check_embedding(query, self._dim, name="query"), False
        if self._size == 0:
            return MemoryRead.empty()
        # compared in float32, like the scores (a threshold past float32 is +-inf)
        bar = np.float32(threshold if abs(threshold) <= FLOAT32_MAX else threshold * np.inf)
        missed = None
        whole = not window.limits_clusters  # every cluster competes: a missed read can recur
        if whole:
            missed, self._missed = self._missed, None
            if missed is not None and missed.misses_again(vector, bar, top_k, self):
                self._missed = missed.rescored()
                return MemoryRead.empty(frames_scored=missed.frames_scored)
        t, pose, score, best, matched, found, frames_scored, bytes_read = self._search(
            vector, top_k, window, bar, scores == "all", near_xz,
            EVERY_FRAME if limit is None else int(limit), unchecked,
        )
        if frames_scored == REFUSED_QUERY:
            check_embedding(query, self._dim, name="query")
            raise AssertionError("the Python check passed a query the compiled read refused")
        if not found and whole:
            self._missed = MissedRead(vector.copy(), bar, top_k, self._clusters.changes,
                                      clear=MissedRead.known_unclear(missed, vector, bar, top_k))
        return MemoryRead(t, pose, score, frames_scored, None if math.isnan(best) else float(best),
                          bytes_read, int(matched))

    def _default_top_k(self) -> int:
        return self.config.top_k

    def _search(
        self, query: np.ndarray, top_k: int, window: ReadFilter, threshold: np.float32,
        exact_scores: bool, near: tuple[float, float] | None, limit: int, check_query: bool,
    ) -> tuple:
        """The read after its checks, in one compiled call
        (:func:`~mrsteve.memory.kernels.search_clusters`): rank the clusters by centre, decide the
        frames of the top-k (or take their centres' scores), filter them and put the first
        ``limit`` in result order (nearest first to ``near``, else best first); with
        ``exact_scores``, every found frame's score. With ``check_query`` the float32 query's
        values are not checked yet: a query the check refuses finds nothing and counts
        :data:`~mrsteve.memory.kernels.REFUSED_QUERY` dot products. Returns ``(t, poses, scores,
        best score (NaN: none), frames that passed the filters, frames found before them, dot
        products, bytes read)``."""
        table = self._clusters
        frames = self._frames
        allowed = table.searchable(window) if window.limits_clusters else _EVERY_CLUSTER
        near_x, near_z = (0.0, 0.0) if near is None else near
        return search_clusters(
            table.codes,
            table.scales,
            table.residuals,
            table.live,
            table.live_count,
            allowed,
            top_k,
            table.base,
            table.head,
            table.tail,
            table.arena,
            frames.embeddings,
            frames.steps,
            frames.poses,
            table.centre_slot,
            query,
            threshold,
            self.scores_centres_only,
            table.pivot_index(limited=self._capacity is not None),
            *frames.frame_codes,
            exact_scores,
            window.compiled,
            near_x,
            near_z,
            near is not None,
            limit,
            check_query,
        )

    def _frames_coded(self) -> bool:
        """Whether the store keeps the frames' int8 codes (:attr:`ClusterConfig.frame_codes`)."""
        return bool(getattr(self.config, "frame_codes", False))

    # --- inspection ---

    def clusters(self) -> list[ClusterView]:
        """Copies of every cluster that holds frames, by cluster id."""
        if self._clusters is None:
            return []
        views = []
        for cluster in self._clusters.live_ids().tolist():
            slots = self._clusters.slots(cluster)
            centre = self._centre_index(cluster, slots)
            views.append(
                ClusterView(
                    self._frames.steps[slots],
                    self._frames.poses[slots],
                    self._frames.vectors(slots),
                    centre,
                )
            )
        return views

    def event_centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre embedding and centre-frame pose of every cluster holding frames
        (``float32[n, dim]``, ``float32[n, 5]``): what task-conditioned exploration scores."""
        if self._clusters is None:
            return np.zeros((0, self.dim or 0), np.float32), np.zeros((0, 5), np.float32)
        live = self._clusters.live_ids()
        slots = self._clusters.centre_slot[live]
        return self._frames.vectors(slots), self._frames.poses[slots].copy()

    def centre_rows(self) -> int:
        """Rows of the centre matrix a read scores: one per cluster holding frames (a cluster
        emptied by eviction leaves it at once)."""
        return 0 if self._clusters is None else self._clusters.live_count

    def _centre_index(self, cluster: int, slots: np.ndarray) -> int | None:
        return int(np.flatnonzero(slots == self._clusters.centre_slot[cluster])[0])

    def stats(self) -> MemoryStats:
        sizes = self._clusters.sizes() if self._clusters is not None else np.zeros(0, np.int64)
        sizes = sizes[sizes > 0]
        places, events = self._places_and_events()
        storage = 0
        if self._frames is not None:
            storage = self._frames.nbytes + self._clusters.nbytes + self._index_nbytes()
        return MemoryStats(
            frames=self._size,
            places=places,
            events=events,
            clusters=int(sizes.shape[0]),
            frames_per_cluster_min=int(sizes.min()) if sizes.size else 0,
            frames_per_cluster_mean=float(sizes.mean()) if sizes.size else 0.0,
            frames_per_cluster_max=int(sizes.max()) if sizes.size else 0,
            bytes=int(storage),
        )

    @abstractmethod
    def _places_and_events(self) -> tuple[int, int]:
        """``(places, events)`` for :meth:`stats`."""

    def _index_nbytes(self) -> int:
        """Bytes of the variant's own index structures."""
        return 0

    # --- persistence (file format in mrsteve.memory.fileformat) ---

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the memory to ``path`` atomically; :func:`mrsteve.memory.load` restores it
        (format: :mod:`mrsteve.memory.fileformat`)."""
        scalars, arrays = self._state()
        header = {
            "kind": type(self).__name__,
            "capacity": self._capacity,
            "dim": self._dim,
            "config": dataclasses.asdict(self.config),
            "state": scalars,
        }
        write_archive(path, header, arrays)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """``(JSON-able scalars, arrays)`` that restore this memory exactly."""
        scalars: dict[str, Any] = {"size": self._size, "last_t": self._last_t}
        arrays: dict[str, np.ndarray] = {}
        if self._frames is not None:
            arrays.update({f"frames.{k}": v for k, v in self._frames.to_arrays().items()})
            arrays.update({f"clusters.{k}": v for k, v in self._clusters.to_arrays().items()})
            self._save_index(scalars, arrays)
        return scalars, arrays

    def _save_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Add the variant's own index structures to a saved state."""

    @classmethod
    def _from_state(
        cls,
        capacity: int | None,
        dim: int | None,
        config: dict[str, Any],
        scalars: dict[str, Any],
        arrays: dict[str, np.ndarray],
    ) -> ClusteredMemory:
        memory = cls(capacity, **config)
        memory._size = int(scalars["size"])
        memory._last_t = scalars["last_t"]
        if dim is not None:
            memory._dim = dim
            memory._frames = FrameStore.from_arrays(
                _section(arrays, "frames."), memory._frames_rows(), memory.config.frame_precision,
                memory._frames_coded(),
            )
            if memory._frames.dim != dim:
                raise ValueError(f"frames have {memory._frames.dim} dims, the header says {dim}")
            memory._clusters = ClusterTable.from_arrays(
                _section(arrays, "clusters."), memory._frames, memory.has_centres
            )
            memory._load_index(scalars, arrays)
        stored = 0 if memory._clusters is None else int(memory._clusters.sizes().sum())
        if stored != memory._size:
            raise ValueError(f"clusters hold {stored} frames but the header says {memory._size}")
        memory._check_loaded()
        if memory._frames is not None:
            memory._frames.code_all()
        return memory

    has_centres: ClassVar[bool] = True
    """Each cluster's centre is one of its frames (FIFO Memory has no centre)."""

    def _check_loaded(self) -> None:
        """Raise ``ValueError`` naming the first broken invariant of a loaded memory (what every
        ``save`` writes holds them all): each stored slot held by one cluster or free, never
        both; held frames unit-norm, finite, oldest first within a cluster and not after the
        last step; each centre a frame of its cluster; then the variant's own index."""
        require(
            is_int(self._size) and self._size >= 0, "size must be an int >= 0", self._size
        )
        require(
            self._last_t is None or is_int(self._last_t), "last_t must be an int", self._last_t
        )
        if self._frames is None:
            require(self._size == 0, "an empty memory holds no frames", self._size)
            return
        frames, table = self._frames, self._clusters
        live = table.live[: table.live_count]
        sizes = table.sizes()[live]
        held = table.gather(live)
        every = np.concatenate([held, np.asarray(frames.free, np.int64)])
        uses = np.bincount(every, minlength=frames.used)
        if uses.shape[0] != frames.used or (uses != 1).any():
            bad = int(np.flatnonzero(uses != 1)[0])
            raise ValueError(
                f"slot {bad} is held {int(uses[bad])} times by the clusters and the free list "
                f"(each of the {frames.used} slots stored must be held once)"
            )
        if held.shape[0]:
            embeddings = frames.vectors(held)
            norms = np.sqrt(np.einsum("ij,ij->i", embeddings, embeddings, dtype=np.float64))
            wrong = ~(np.abs(norms - 1.0) <= NORM_TOLERANCE)  # NaN counts as wrong
            if wrong.any():
                raise ValueError(
                    f"frame in slot {int(held[np.argmax(wrong)])} has an embedding of norm "
                    f"{norms[np.argmax(wrong)]:.6g} (stored embeddings are finite unit vectors)"
                )
            if not np.isfinite(frames.poses[held]).all():
                raise ValueError("a stored pose is not finite")
            steps = frames.steps[held]
            starts = np.cumsum(sizes) - sizes
            order = np.diff(steps) >= 0
            order[starts[1:] - 1] = True  # a cluster may start before the previous ends
            require(bool(order.all()), "each cluster's frames must be oldest first", "disorder")
            require(
                self._last_t is not None and int(steps.max()) <= self._last_t,
                f"last_t must not precede the newest stored step {int(steps.max())}",
                self._last_t,
            )
        if self.has_centres:
            centre = table.centre_slot[live]
            owner = np.repeat(np.arange(live.shape[0]), sizes)
            hit = np.zeros(live.shape[0], bool)
            hit[owner[held == centre[owner]]] = True
            if not hit.all():
                cluster = int(live[np.argmin(hit)])
                raise ValueError(f"cluster {cluster}'s centre is not one of its frames")
        self._check_index(live, sizes, held)

    def _check_index(self, live: np.ndarray, sizes: np.ndarray, held: np.ndarray) -> None:
        """The variant's part of :meth:`_check_loaded`: ``live`` clusters (rows of the centre
        matrix), their sizes and their slots concatenated."""

    def _load_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`_save_index` wrote."""


_NO_GRID = np.zeros(0, np.float64)
_FLOAT_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""Embedding and pose dtypes the compiled write checks itself."""


class MissedRead:
    """A read that found nothing, and the frames written since: the same read (query, threshold,
    top-k, no time or place window) finds nothing again, without searching, while nothing that
    could make it find a frame happened. Only two things can: a frame written since that scores
    at the threshold (checked here: a dot product per frame, against the read's thousands), or
    a change to which clusters rank in the top-k or which frames they hold, counted by
    :attr:`ClusterTable.changes` (eviction only removes frames). A frame written since counts as
    a possible match from :meth:`slack` below the threshold, more than two sums of the same
    products can differ, so the shortcut never hides a frame the search would return.

    When the clusters have changed, one scan of every frame held can still settle it: if no
    frame scores within the slack of the threshold, no read of this query finds anything,
    however the clusters rank, until a frame written since does (:attr:`clear`).

    MrSteve reads every step while it explores (the authors' release), mostly finding nothing.
    FIFO Memory, which has no clusters to change, then scores only the new frame instead of
    every frame (Long-Instruction with FIFO: 37 -> 30 s for 60K steps). In Place Event Memory a
    centre changes at most writes (eviction keeps taking the oldest frame of a provisional event,
    whose centre is its oldest frame), so its reads are settled by the scan: late in
    Long-Instruction, when no cow or sheep is left and the agent explores for 20K steps at a
    time, 110K of its 111K reads find nothing, and every scan (one per 500 empty reads, seed 42,
    400K steps) found no frame near the threshold.
    """

    __slots__ = ("bar", "changes", "clear", "frames_scored", "query", "slots", "top_k")

    def __init__(self, query: np.ndarray, bar: np.float32, top_k: int, changes: int,
                 clear: bool | None = None) -> None:
        self.query, self.bar, self.top_k, self.changes = query, bar, top_k, changes
        self.slots: list[int] = []
        """Slots written since the read (a slot written twice: its latest frame)."""
        self.frames_scored = 0
        self.clear = clear
        """Whether no frame held scores within :meth:`slack` of the threshold (then no read of
        the query finds one, whatever the clusters): ``None`` until the first read after a
        cluster change scans every frame; ``False`` stays (no more scans for this read)."""

    def same_read(self, query: np.ndarray, bar: np.float32, top_k: int) -> bool:
        """Whether a read of ``query`` at ``bar`` over ``top_k`` clusters is this one."""
        return bar == self.bar and top_k == self.top_k and np.array_equal(query, self.query)

    @staticmethod
    def known_unclear(missed: MissedRead | None, query: np.ndarray, bar: np.float32,
                      top_k: int) -> bool | None:
        """``False`` when ``missed`` is the same read and a scan found a frame near its
        threshold (a new missed read keeps that, so it does not scan again); else ``None``."""
        if missed is not None and missed.clear is False and missed.same_read(query, bar, top_k):
            return False
        return None

    @staticmethod
    def slack(dim: int) -> np.float32:
        """Four times the most two sums of ``dim`` float32 products of unit vectors can differ
        by, whatever their order (``dim * 2**-24``, Higham's bound to first order), and at
        least 1e-3."""
        return np.float32(max(1e-3, 4.0 * dim * 2.0**-24))

    def written(self, slot: int) -> MissedRead | None:
        """Note a frame written; ``None`` (forget the read) past :data:`MISSED_READ_FRAMES`."""
        if len(self.slots) >= MISSED_READ_FRAMES:
            return None
        self.slots.append(slot)
        return self

    def misses_again(
        self, query: np.ndarray, bar: np.float32, top_k: int, memory: ClusteredMemory
    ) -> bool:
        """Whether ``memory``'s read of ``query`` would find nothing, as this one did."""
        if not self.same_read(query, bar, top_k):
            return False
        limit = bar - self.slack(query.shape[0])
        if memory._clusters.changes != self.changes:
            if self.clear is None:  # one scan, the frames written since included
                self.clear = bool(memory._frames.peak_score(query) < limit)
                self.frames_scored = memory._frames.used
                self.slots.clear()
                return self.clear
            if not self.clear:
                return False
        self.frames_scored = len(self.slots)
        if not self.slots:
            return True
        scores = score_rows(memory._frames.embeddings, np.array(self.slots, np.int64), query)
        return bool(scores.max() < limit)

    def rescored(self) -> MissedRead:
        """This read, its frames written since checked."""
        self.slots.clear()
        return self


MISSED_READ_FRAMES = 64
"""Frames written after a read that found nothing beyond which it is forgotten."""

_LAST_STEP = STEP_RANGE[1]


_EVERY_CLUSTER = np.zeros(0, bool)
"""``allowed`` for an unfiltered read: every cluster may be searched."""
_FLOAT32 = np.dtype(np.float32)
"""The dtype of a query the compiled read checks itself (:meth:`ClusteredMemory.read`)."""


def _section(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
