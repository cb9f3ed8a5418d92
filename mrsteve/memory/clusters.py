"""Clusters of frames as index structures over a :class:`FrameStore`.

Each cluster has a queue of frame slots (oldest first) in its own int32 buffer, a centre embedding
(a copy of one of its frames) in one contiguous matrix that a read scores with a single matrix
product, and a place in size buckets, so the largest cluster (the one eviction shrinks) is found
without scanning. For filtered reads each cluster also has a time span and the bounding box of its
frames' ground positions, recomputed lazily (only for clusters changed since the last filtered
read), so writes stay cheap. Cluster ids are reused after a cluster empties.
"""

from __future__ import annotations

import sys

import numpy as np

from mrsteve.memory.base import ReadFilter
from mrsteve.memory.frames import FrameStore, container_nbytes

ID_GROWTH = 256
"""Cluster rows added when the table is full (copy growth; tables are small)."""
MIN_QUEUE = 8
"""Smallest slot buffer of a cluster."""


class SizeBuckets:
    """Clusters grouped by size. Among clusters of the largest size, the one that reached that
    size first comes first."""

    def __init__(self) -> None:
        self._members: dict[int, dict[int, None]] = {}
        self._largest = 0

    def move(self, cluster: int, old_size: int, new_size: int) -> None:
        """Record a size change; size 0 means not tracked."""
        if old_size:
            bucket = self._members[old_size]
            del bucket[cluster]
            if not bucket:
                del self._members[old_size]
        if new_size:
            bucket = self._members.get(new_size)
            if bucket is None:
                bucket = self._members[new_size] = {}
            bucket[cluster] = None
            self._largest = max(self._largest, new_size)

    def largest(self) -> int:
        """The largest cluster (there must be one)."""
        while self._largest not in self._members:
            self._largest -= 1
        return next(iter(self._members[self._largest]))

    def order(self) -> np.ndarray:
        """Every tracked cluster, smallest size first, bucket order kept (for persistence)."""
        ordered = [c for size in sorted(self._members) for c in self._members[size]]
        return np.asarray(ordered, np.int64)

    def restore(self, order: np.ndarray, sizes: np.ndarray) -> None:
        for cluster in order.tolist():
            self.move(cluster, 0, int(sizes[cluster]))

    @property
    def nbytes(self) -> int:
        return container_nbytes(self._members, *self._members.values())


class ClusterTable:
    """Every cluster of one memory, indexed by cluster id."""

    _PER_CLUSTER = ("centres", "centre_slot", "head", "tail", "stale", "t_first", "t_last", "box")
    _SAVED = ("centres", "centre_slot", "head", "tail")

    def __init__(self, frames: FrameStore) -> None:
        self.frames = frames
        self.count = 0
        """Cluster ids handed out so far; rows past it are spare."""
        self.free_ids: list[int] = []
        self.centres = np.zeros((0, frames.dim), np.float32)
        self.centre_slot = np.zeros(0, np.int64)
        self.head = np.zeros(0, np.int64)
        self.tail = np.zeros(0, np.int64)
        self.stale = np.zeros(0, bool)
        """Clusters whose span and box are out of date."""
        self.t_first = np.zeros(0, np.int64)
        self.t_last = np.zeros(0, np.int64)
        self.box = np.zeros((0, 4), np.float32)
        """``(x_min, x_max, z_min, z_max)`` of the frames held (when not stale)."""
        self.queues: list[np.ndarray] = []
        self.buckets = SizeBuckets()

    # --- lifecycle ---

    def open(self) -> int:
        """A new empty cluster; its centre is set by the caller with :meth:`set_centre`."""
        if self.free_ids:
            return self.free_ids.pop()
        if self.count == self.centres.shape[0]:
            self._grow()
        self.queues.append(np.zeros(MIN_QUEUE, np.int32))
        self.count += 1
        return self.count - 1

    def close(self, cluster: int) -> None:
        """Retire an empty cluster; its id (and slot buffer) will be reused."""
        assert self.head[cluster] == self.tail[cluster], "only empty clusters close"
        self.head[cluster] = self.tail[cluster] = 0
        self.free_ids.append(cluster)

    def _grow(self) -> None:
        rows = self.centres.shape[0] + ID_GROWTH
        for name in self._PER_CLUSTER:
            array = getattr(self, name)
            grown = np.zeros((rows,) + array.shape[1:], array.dtype)
            grown[: array.shape[0]] = array
            setattr(self, name, grown)

    # --- frames of a cluster ---

    def size(self, cluster: int) -> int:
        return int(self.tail[cluster] - self.head[cluster])

    def sizes(self) -> np.ndarray:
        return self.tail[: self.count] - self.head[: self.count]

    def slots(self, cluster: int) -> np.ndarray:
        """The cluster's slots, oldest first (a view: copy before changing the cluster)."""
        return self.queues[cluster][self.head[cluster] : self.tail[cluster]]

    def gather(self, clusters: np.ndarray) -> np.ndarray:
        """The slots of several clusters, concatenated."""
        heads = self.head[clusters].tolist()
        tails = self.tail[clusters].tolist()
        queues = self.queues
        parts = [queues[c][h:t] for c, h, t in zip(clusters.tolist(), heads, tails)]
        return np.concatenate(parts) if parts else np.empty(0, np.int32)

    def append(self, cluster: int, slot: int) -> None:
        """Add the newest frame to a cluster."""
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        queue = self.queues[cluster]
        if tail == queue.shape[0]:
            queue, head, tail = self._make_room(cluster, 1)
        queue[tail] = slot
        self.tail[cluster] = tail + 1
        self.stale[cluster] = True
        self.buckets.move(cluster, tail - head, tail - head + 1)

    def extend(self, cluster: int, slots: np.ndarray) -> None:
        """Add frames newer than every frame of the cluster, oldest first."""
        count = int(slots.shape[0])
        if count == 0:
            return
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        queue = self.queues[cluster]
        if tail + count > queue.shape[0]:
            queue, head, tail = self._make_room(cluster, count)
        queue[tail : tail + count] = slots
        self.tail[cluster] = tail + count
        self.stale[cluster] = True
        self.buckets.move(cluster, tail - head, tail - head + count)

    def pop_oldest(self, cluster: int) -> int:
        """Remove and return the cluster's oldest slot."""
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        slot = int(self.queues[cluster][head])
        self.head[cluster] = head + 1
        self.stale[cluster] = True
        self.buckets.move(cluster, tail - head, tail - head - 1)
        return slot

    def take_all(self, cluster: int) -> np.ndarray:
        """Remove and return every slot of the cluster, oldest first (the cluster stays open)."""
        slots = self.slots(cluster).copy()
        self.buckets.move(cluster, slots.shape[0], 0)
        self.head[cluster] = self.tail[cluster] = 0
        return slots

    def _make_room(self, cluster: int, count: int) -> tuple[np.ndarray, int, int]:
        """Compact or enlarge a full slot buffer so ``count`` more slots fit."""
        queue = self.queues[cluster]
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        size = tail - head
        needed = size + count
        if needed <= queue.shape[0] - queue.shape[0] // 4:
            queue[:size] = queue[head:tail]
        else:
            grown = np.zeros(max(MIN_QUEUE, 2 * needed), np.int32)
            grown[:size] = queue[head:tail]
            self.queues[cluster] = queue = grown
        self.head[cluster] = 0
        self.tail[cluster] = size
        return queue, 0, size

    # --- centres and ranking ---

    def set_centre(self, cluster: int, slot: int) -> None:
        self.centre_slot[cluster] = slot
        self.centres[cluster] = self.frames.embeddings[slot]

    def largest(self) -> int:
        return self.buckets.largest()

    def live(self) -> np.ndarray:
        """Ids of the clusters that hold frames, ascending."""
        return np.flatnonzero(self.sizes() > 0)

    def rank(
        self, query: np.ndarray, top_k: int, window: ReadFilter
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """The ``top_k`` searched clusters by centre score (paper, Algorithm "Read", lines 1-2):
        ``(cluster ids, their centre scores, centres scored)``."""
        count = self.count
        scores = self.centres[:count] @ query
        searched = self.tail[:count] > self.head[:count]
        if window.active:
            self._refresh_spans()
            searched &= window.clusters(self.t_first[:count], self.t_last[:count], self.box[:count])
        candidates = np.flatnonzero(searched)
        if candidates.shape[0] > top_k:
            candidate_scores = scores[candidates]
            best = np.argpartition(candidate_scores, candidates.shape[0] - top_k)[-top_k:]
            candidates = candidates[best]
        return candidates, scores[candidates], count

    def _refresh_spans(self) -> None:
        """Recompute the time span and box of the stale clusters that hold frames."""
        stale = np.flatnonzero(self.stale[: self.count] & (self.sizes() > 0))
        self.stale[: self.count] = False
        if stale.shape[0] == 0:
            return
        slots = self.gather(stale)
        starts = np.concatenate(([0], np.cumsum(self.sizes()[stale])[:-1]))
        ends = np.cumsum(self.sizes()[stale]) - 1
        steps = self.frames.steps[slots]
        self.t_first[stale] = steps[starts]
        self.t_last[stale] = steps[ends]
        x = self.frames.poses[slots, 0]
        z = self.frames.poses[slots, 2]
        box = self.box
        box[stale, 0] = np.minimum.reduceat(x, starts)
        box[stale, 1] = np.maximum.reduceat(x, starts)
        box[stale, 2] = np.minimum.reduceat(z, starts)
        box[stale, 3] = np.maximum.reduceat(z, starts)

    @property
    def nbytes(self) -> int:
        arrays = sum(getattr(self, name).nbytes for name in self._PER_CLUSTER)
        queues = sum(sys.getsizeof(queue) for queue in self.queues) + container_nbytes(self.queues)
        return arrays + queues + container_nbytes(self.free_ids) + self.buckets.nbytes

    # --- persistence ---

    def to_arrays(self) -> dict[str, np.ndarray]:
        count = self.count
        arrays = {name: getattr(self, name)[:count] for name in self._SAVED}
        arrays["free_ids"] = np.asarray(self.free_ids, np.int64)
        arrays["queue_lengths"] = np.asarray([q.shape[0] for q in self.queues], np.int64)
        arrays["queued"] = self.gather(np.arange(count))
        arrays["bucket_order"] = self.buckets.order()
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], frames: FrameStore) -> ClusterTable:
        table = cls(frames)
        table.count = count = int(arrays["queue_lengths"].shape[0])
        while table.centres.shape[0] < count:  # the rows the table had grown to
            table._grow()
        for name in cls._SAVED:
            saved = arrays[name]
            if saved.shape[0] != count:
                raise ValueError(
                    f"cluster table field {name!r} has {saved.shape[0]} rows, not {count}"
                )
            getattr(table, name)[:count] = saved
        table.stale[:count] = True
        queued = arrays["queued"]
        offset = 0
        for cluster, length in enumerate(arrays["queue_lengths"].tolist()):
            queue = np.zeros(length, np.int32)
            head, tail = int(table.head[cluster]), int(table.tail[cluster])
            queue[head:tail] = queued[offset : offset + tail - head]
            offset += tail - head
            table.queues.append(queue)
        if offset != queued.shape[0] or (queued.shape[0] and queued.max() >= frames.used):
            raise ValueError("cluster queues do not match the frames stored")
        table.free_ids = arrays["free_ids"].tolist()
        table.buckets.restore(arrays["bucket_order"], table.sizes())
        return table
