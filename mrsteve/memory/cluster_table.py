"""Clusters of frames as index structures over a :class:`FrameStore`: an inverted file whose lists
are the clusters (places or events).

Layout, chosen for the read (score every centre, then every frame of the top-k clusters):

- *Slot lists in one arena.* Each cluster owns a block of one int32 arena; its frames' slots lie
  at ``arena[base + head : base + tail]``, oldest first. Eviction advances ``head``; a full block
  is compacted in place or moved to a twice larger block at the arena's end; when the arena is
  full, every live block is packed to its front (a copying collector: amortised O(1) a frame).
  One flat array, so the numba read walks the lists of the top-k clusters without Python.
- *A dense matrix of int8 centre codes of exactly the clusters that are open*: row ``row[c]``
  holds cluster ``c``'s centre as int8 codes with a scale and a residual bound; a closed
  cluster's row is filled by the last row at once (swap-remove), so a read scores live clusters
  only. The read ranks from the codes (a quarter of the bytes of float32: at 1M frames a float32
  matrix no longer fits the cache) and rescores exactly, from the centre frames' own rows in
  the frame store, only the rows that can make the top-k. No float32 copy of the centres is
  kept (file format 2 had one): it cost a frame's bytes per cluster, which is every frame's
  when eviction has left mostly one-frame clusters.
- *Pivot groups over the centre rows* (from :data:`PIVOT_MIN_ROWS` rows on): each centre is
  filed under a similar centre's codes, its pivot, with its component along the pivot and a
  bound on the rest, from which a read bounds every centre's score with two multiply-adds and
  reads the int8 codes of only the rows that can make the top-k (at 1M frames about a tenth).
  Built lazily by the reads, not saved (a loaded memory rebuilds it): a row whose centre
  changed waits, unpruned, until a read files it.
- *Size buckets* find the largest cluster (the one eviction shrinks) without scanning.

For filtered reads each cluster also has a time span and the bounding box of its frames' ground
positions, recomputed lazily (only for clusters changed since the last filtered read), so writes
stay cheap. Cluster ids are reused after a cluster closes.

Embeddings stay in the frame store's slot rows rather than in per-cluster blocks. Measured on
the 100K-frame benchmark (same process, 3 repeats each, against faiss IVF as a yardstick): with
the frames renumbered so that every event's embeddings are contiguous, the top-30 read was
1.07-1.21 x faiss IVF's time; with the slots as written, 1.05-1.16 x. A read's ~1,300 frames are
2 KB rows, each a contiguous stream the prefetcher follows, so contiguity buys nothing
measurable, while per-cluster embedding blocks would cost a block's slack in 2 KB rows instead
of 4-byte slots (over 2.2 KB per frame) and copy embeddings whenever a block moves. The same
holds for the frames' int8 codes (:attr:`~mrsteve.memory.clustered.ClusterConfig.frame_codes`):
a copy in the arena's order, kept current lazily by the reads, took the 1,219-frame code scan
of a cold read from 110 to 96 us and the whole read from 224 to 217 us (100K frames, one
core), at the arena's length in code rows (305,680 for 100K frames: 156 MB); not kept. Nor is a
576-byte record per frame holding its code, scale, bound, step and pose (9 adjacent cache lines
where the scan now reads 8 and 4 scattered ones): 5-10 % off the cold code scan, 13 % with the
records also in the arena's order; the scan of a read's ~1,000 scattered frames waits on DRAM
either way (about 5 GB/s against 20 GB/s streaming). Nor is a bound on each frame's angle to its
cluster's centre (kept at every append and centre change), from which the centre's score bounds
the frame's on the sphere: it decided 41 % of a read's 1,244 frames without their codes, but the
extra pass and the bounds the best score then needs cost what the codes saved (the scan 64 us
before, 66 after, 78 when the frames that may be the best are narrowed by their codes; one
process, alternating, on a loaded machine). Nor are 4-bit codes of the centres (two columns a
byte, scaled to 2.5 times the row's RMS, exact residual bounds; ``vpmaddubsw`` on AVX2), bounding
every centre before the int8 codes of the ~170 that may make the top-30, the floor from the int8
bounds of the 38 rows of best 4-bit score: every read identical, a read's bytes 2.11 -> 1.55 MB
and the centre pass 56 -> 42 us alone, but the whole read as before in `mrsteve bench memory`
(codes over faiss IVF 0.627 and 0.628 against 0.622 and 0.630, alternating runs): the int8 pass
over 2,701 rows was not what a read waits on. 4-bit frame codes were not tried: on the same
reads 218 of a read's 1,273 frames straddle the threshold and 270 may be the best under their
bounds (int8: 16 and 12), so most would need their int8 codes as well.
"""

from __future__ import annotations

import numpy as np

from mrsteve.memory.base import ReadFilter
from mrsteve.memory.frames import FrameStore, container_nbytes
from mrsteve.memory.kernels import (
    BASE,
    BLOCK,
    HEAD,
    TAIL,
    append_slot,
    assign_pivots,
    largest_bucket,
    move_bucket,
    quantise_rows,
)

ID_GROWTH = 256
"""Cluster rows added when the table is full (copy growth; tables are small)."""
MIN_BLOCK = 8
"""Smallest slot block of a cluster."""
MIN_ARENA = 1024
"""Smallest arena (int32 slots)."""
PIVOT_MIN_ROWS = 4096
"""Centre rows from which the reads prune with pivot groups first
(:meth:`ClusterTable.pivot_index`; below, the int8 pass over every row is cheap enough: at 2,701
rows, pivots cut a read's bytes from 2.28 to 1.59 MB but took it from 168 to 219 us, alternating
in one process)."""


class SizeBuckets:
    """Clusters grouped by size. Among clusters of the largest size, the one that reached that
    size first comes first.

    Each size's clusters form a list in the order they reached that size, linked through
    :attr:`links` and ended by :attr:`ends`: arrays, so that the compiled write moves a cluster
    to its next size itself (:func:`~mrsteve.memory.kernels.move_bucket`)."""

    def __init__(self) -> None:
        self.links = np.zeros((0, 2), np.int64)
        """Per cluster id, the previous and the next cluster of its size (-1: none)."""
        self.ends = np.array([[0, -1]], np.int64)
        """Per size, its first and last cluster (-1: none); row 0 (size 0 is not tracked) holds
        a bound on the largest size. Sizes up to :meth:`reserve`'s are valid."""

    def resize(self, clusters: int) -> None:
        """Make room for cluster ids below ``clusters``."""
        self.links = _grown(self.links, clusters)

    def reserve(self, size: int) -> None:
        """Make room for clusters of up to ``size`` frames."""
        if size >= self.ends.shape[0]:
            old = self.ends.shape[0]
            self.ends = _grown(self.ends, max(size + 1, 2 * old))
            self.ends[old:] = -1

    def move(self, cluster: int, old_size: int, new_size: int) -> None:
        """Record a size change; size 0 means not tracked."""
        move_bucket(self.links, self.ends, cluster, old_size, new_size)

    def largest(self) -> int:
        """The largest cluster (there must be one)."""
        return largest_bucket(self.ends)

    def _firsts(self) -> np.ndarray:
        return self.ends[1:, 0]

    def order(self) -> np.ndarray:
        """Every tracked cluster, smallest size first, bucket order kept (for persistence)."""
        ordered = []
        for cluster in self._firsts()[self._firsts() >= 0].tolist():
            while cluster >= 0:
                ordered.append(cluster)
                cluster = int(self.links[cluster, 1])
        return np.asarray(ordered, np.int64)

    def restore(self, order: np.ndarray, sizes: np.ndarray) -> None:
        self.reserve(int(sizes.max(initial=0)))
        for cluster in order.tolist():
            self.move(cluster, 0, int(sizes[cluster]))

    @property
    def nbytes(self) -> int:
        """The links, and the ends of the sizes up to the largest held (as a loaded memory has
        them)."""
        held = np.flatnonzero(self._firsts() >= 0)
        largest = int(held[-1]) + 1 if held.shape[0] else 0
        return self.links.nbytes + self.ends[: largest + 1].nbytes


class ClusterTable:
    """Every cluster of one memory, indexed by cluster id."""

    _PER_CLUSTER = (
        "centre_slot",
        "row",
        "blocks",
        "stale",
        "t_first",
        "t_last",
        "box",
    )
    _SAVED = ("centre_slot", "base", "block", "head", "tail")

    def __init__(self, frames: FrameStore) -> None:
        self.frames = frames
        self.count = 0
        """Cluster ids handed out so far; rows past it are spare."""
        self.free_ids: list[int] = []
        self.centre_slot = np.zeros(0, np.int64)
        self.row = np.zeros(0, np.int64)
        """Row of each open cluster in :attr:`codes` (-1 when closed)."""
        self.blocks = np.zeros((0, 4), np.int64)
        """Per cluster, its slot block in :attr:`arena`, one row (one argument for the compiled
        write); its columns are :attr:`base`, :attr:`block`, :attr:`head` and :attr:`tail`."""
        self._name_block_columns()
        self.stale = np.zeros(0, bool)
        """Clusters whose span and box are out of date."""
        self.t_first = np.zeros(0, np.int64)
        self.t_last = np.zeros(0, np.int64)
        self.box = np.zeros((0, 4), np.float32)
        """``(x_min, x_max, z_min, z_max)`` of the frames held (when not stale)."""
        self.codes = np.zeros((0, frames.dim), np.int8)
        self.scales = np.zeros(0, np.float32)
        self.residuals = np.zeros(0, np.float32)
        """Per row, ``0 .. live_count - 1`` (spare after), an open cluster's centre as int8
        ``codes * scales``, and an upper bound on the L2 norm of what that misses (the read ranks
        from the codes first)."""
        self.live = np.zeros(0, np.int64)
        """Cluster id of each row of :attr:`codes`."""
        self.pivot_group = np.zeros(0, np.int64)
        self.pivot_along = np.zeros(0, np.float64)
        self.pivot_across = np.zeros(0, np.float64)
        """Per row: the pivot group of its centre (-1: not filed yet), the centre's component
        along the group's pivot and a bound on the norm of the rest
        (:func:`~mrsteve.memory.kernels.assign_pivots`)."""
        self.group_codes = np.zeros((0, frames.dim), np.int8)
        self.group_scales = np.zeros(0, np.float32)
        self.group_norms = np.zeros(0, np.float64)
        """Per pivot group, its pivot ``group_codes * group_scales`` and that vector's norm (0: the
        group is unused)."""
        self.group_count = 0
        self.live_count = 0
        self.arena = np.zeros(0, np.int32)
        self.arena_used = 0
        """Arena entries handed out to blocks (the bump pointer)."""
        self.buckets = SizeBuckets()
        self.changes = 0
        """Count of the changes that can make a read find a frame it did not find before, other
        than writing that frame (:class:`~mrsteve.memory.clustered.MissedRead`): a cluster opened
        or closed, a centre set, frames moved in (:meth:`extend`) or out (:meth:`take_all`).
        Appending a new frame and evicting the oldest do not count."""

    # --- lifecycle ---

    def open(self) -> int:
        """A new empty cluster with a row in the centre matrix; its centre is set by the caller
        with :meth:`set_centre`."""
        self.changes += 1
        if self.free_ids:
            cluster = self.free_ids.pop()
        else:
            if self.count == self.row.shape[0]:
                self._grow_ids()
            cluster = self.count
            self.count += 1
            self.block[cluster] = 0
        if self.block[cluster] == 0:
            self.base[cluster] = self._allocate(MIN_BLOCK)
            self.block[cluster] = MIN_BLOCK
        self.head[cluster] = self.tail[cluster] = 0
        row = self.live_count
        if row == self.codes.shape[0]:
            self._grow_rows(row + max(ID_GROWTH, row // 8))  # spare rows <= 1/8
        self.live[row] = cluster
        self.row[cluster] = row
        self.pivot_group[row] = -1
        self.live_count = row + 1
        return cluster

    def close(self, cluster: int) -> None:
        """Retire an empty cluster: its centre leaves the matrix now (the last row fills the
        hole); its id and slot block will be reused."""
        assert self.head[cluster] == self.tail[cluster], "only empty clusters close"
        self.changes += 1
        self.head[cluster] = self.tail[cluster] = 0
        row, last = int(self.row[cluster]), self.live_count - 1
        if row != last:
            moved = int(self.live[last])
            for array in self._PER_ROW:
                array = getattr(self, array)
                array[row] = array[last]
            self.live[row] = moved
            self.row[moved] = row
        self.row[cluster] = -1
        self.live_count = last
        self.free_ids.append(cluster)

    _PER_ROW = ("codes", "scales", "residuals", "live", "pivot_group", "pivot_along", "pivot_across")

    def _grow_rows(self, rows: int) -> None:
        old = self.live.shape[0]
        for name in self._PER_ROW:
            setattr(self, name, _grown(getattr(self, name), rows))
        self.pivot_group[old:] = -1

    def _grow_ids(self) -> None:
        self._resize_ids(self.row.shape[0] + ID_GROWTH)
        self.row[self.count :] = -1

    def _resize_ids(self, rows: int) -> None:
        for name in self._PER_CLUSTER:
            setattr(self, name, _grown(getattr(self, name), rows))
        self._name_block_columns()
        self.buckets.resize(rows)

    def _name_block_columns(self) -> None:
        """Views of the columns of :attr:`blocks`: each cluster's block starts at ``base`` in the
        arena and is ``block`` entries long; its slots are ``arena[base + head : base + tail]``."""
        columns = self.blocks.T
        self.base, self.block, self.head, self.tail = (
            columns[BASE], columns[BLOCK], columns[HEAD], columns[TAIL]
        )

    # --- the arena of slot blocks ---

    def _allocate(self, length: int) -> int:
        """Start of a fresh block of ``length`` entries at the arena's end (packing the arena or
        enlarging it when full)."""
        if self.arena_used + length > self.arena.shape[0]:
            self._pack(length)
        self.buckets.reserve(length)  # a block's frames: a cluster's size is at most its length
        start = self.arena_used
        self.arena_used += length
        return start

    def _pack(self, extra: int) -> None:
        """Move every open cluster's slots to the arena's front (blocks keep their lengths), then
        enlarge the arena if fewer than half its entries would be free after ``extra`` more."""
        open_ids = self.live[: self.live_count]
        blocks = self.block[open_ids]
        bases = (np.cumsum(blocks) - blocks).astype(np.int64)
        needed = int(blocks.sum()) + extra
        length = self.arena.shape[0]
        if needed * 2 > length:
            length = max(MIN_ARENA, 2 * needed)
        packed = np.zeros(length, np.int32)
        sizes = self.tail[open_ids] - self.head[open_ids]
        source = _ranges(self.base[open_ids] + self.head[open_ids], sizes)
        packed[_ranges(bases, sizes)] = self.arena[source]
        self.arena = packed
        self.base[open_ids] = bases
        self.tail[open_ids] = sizes
        self.head[open_ids] = 0
        self.block[self.free_ids] = 0  # closed clusters give their blocks up
        self.arena_used = int(blocks.sum())

    def _make_room(self, cluster: int, count: int) -> None:
        """Compact or enlarge a full block so ``count`` more slots fit."""
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        block = int(self.block[cluster])
        size = tail - head
        needed = size + count
        if needed <= block - block // 4:
            base = int(self.base[cluster])
            self.arena[base : base + size] = self.arena[base + head : base + tail]
        else:
            length = max(MIN_BLOCK, 2 * needed)
            start = self._allocate(length)  # may pack the arena: read the base after it
            base = int(self.base[cluster])
            head = int(self.head[cluster])
            self.arena[start : start + size] = self.arena[base + head : base + head + size]
            self.base[cluster] = start
            self.block[cluster] = length
        self.head[cluster] = 0
        self.tail[cluster] = size

    # --- frames of a cluster ---

    def size(self, cluster: int) -> int:
        return int(self.tail[cluster] - self.head[cluster])

    def sizes(self) -> np.ndarray:
        return self.tail[: self.count] - self.head[: self.count]

    def slots(self, cluster: int) -> np.ndarray:
        """The cluster's slots, oldest first (a view: copy before changing the cluster)."""
        base = int(self.base[cluster])
        return self.arena[base + int(self.head[cluster]) : base + int(self.tail[cluster])]

    def gather(self, clusters: np.ndarray) -> np.ndarray:
        """The slots of several clusters, concatenated."""
        starts = self.base[clusters] + self.head[clusters]
        return self.arena[_ranges(starts, self.tail[clusters] - self.head[clusters])]

    def append(self, cluster: int, slot: int) -> None:
        """Add the newest frame to a cluster."""
        if self._append(cluster, slot) < 0:  # the block is full
            self._make_room(cluster, 1)
            self._append(cluster, slot)

    def _append(self, cluster: int, slot: int) -> int:
        buckets = self.buckets
        return append_slot(
            self.arena, self.blocks, self.stale, buckets.links, buckets.ends, cluster, slot
        )

    def extend(self, cluster: int, slots: np.ndarray) -> None:
        """Add frames newer than every frame of the cluster, oldest first."""
        count = int(slots.shape[0])
        if count == 0:
            return
        self.changes += 1
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        if tail + count > self.block[cluster]:
            self._make_room(cluster, count)
            head, tail = 0, tail - head
        start = int(self.base[cluster]) + tail
        self.arena[start : start + count] = slots
        self.tail[cluster] = tail + count
        self.stale[cluster] = True
        self.buckets.move(cluster, tail - head, tail - head + count)

    def pop_oldest(self, cluster: int) -> int:
        """Remove and return the cluster's oldest slot."""
        head, tail = int(self.head[cluster]), int(self.tail[cluster])
        slot = int(self.arena[self.base[cluster] + head])
        self.head[cluster] = head + 1
        self.stale[cluster] = True
        self.buckets.move(cluster, tail - head, tail - head - 1)
        return slot

    def take_all(self, cluster: int) -> np.ndarray:
        """Remove and return every slot of the cluster, oldest first (the cluster stays open)."""
        slots = self.slots(cluster).copy()
        self.changes += 1
        self.buckets.move(cluster, slots.shape[0], 0)
        self.head[cluster] = self.tail[cluster] = 0
        return slots

    # --- centres and ranking ---

    def set_centre(self, cluster: int, slot: int) -> None:
        self.changes += 1
        self.centre_slot[cluster] = slot
        row = self.row[cluster]
        self._quantise(row, row + 1)

    def _quantise(self, start: int, stop: int) -> None:
        """Int8 codes, scales and residual bounds of centre rows ``start:stop``
        (:func:`~mrsteve.memory.kernels.quantise_rows`)."""
        slots = self.centre_slot[self.live[start:stop]]
        quantise_rows(
            self.frames.embeddings, slots, self.codes, self.scales, self.residuals, start
        )
        self.pivot_group[start:stop] = -1

    def pivot_index(self, limited: bool = False) -> tuple:
        """The pivot groups the read prunes with (empty below :data:`PIVOT_MIN_ROWS` rows, and for
        a ``limited`` memory: with a capacity, eviction replaces centres at every write, and
        filing them cost more than pruning saved, 1.75 -> 2.8-3.5 ms a read at 1M writes of
        ``mrsteve bench memory --long-run``), after
        filing rows whose centre changed: all of them when they are most rows (the first read
        of a large table, or of a loaded one), else as many as cost a quarter of an int8 pass
        over every row (the rest wait, unpruned)."""
        rows = self.live_count
        if rows < PIVOT_MIN_ROWS or limited:
            return _NO_PIVOTS
        groups = self.pivot_group[:rows]
        dirty = np.flatnonzero(groups < 0)
        if dirty.shape[0]:
            if dirty.shape[0] * 2 <= rows:
                dirty = dirty[: max(1, rows // (4 * max(self.group_count, 1)))]
            members = np.bincount(groups[groups >= 0], minlength=self.group_count)
            free = np.flatnonzero(members == 0)
            self.group_norms[free] = 0.0
            needed = self.group_count + dirty.shape[0]
            if needed > self.group_norms.shape[0]:
                grown = max(needed, 2 * self.group_norms.shape[0])
                for name in ("group_codes", "group_scales", "group_norms"):
                    setattr(self, name, _grown(getattr(self, name), grown))
            self.group_count = assign_pivots(
                self.codes, self.scales, dirty, self.frames.embeddings, self.centre_slot,
                self.live, self._pivots(self.group_norms.shape[0]), self.group_count, free,
            )
        return self._pivots(self.group_count)

    def _pivots(self, groups: int) -> tuple:
        return (
            self.pivot_group, self.pivot_along, self.pivot_across, self.group_codes[:groups],
            self.group_scales[:groups], self.group_norms[:groups],
        )

    def centre_of(self, clusters: int | list[int] | np.ndarray) -> np.ndarray:
        """Centre embeddings of open clusters (a copy)."""
        return self.frames.vectors(self.centre_slot[clusters])

    def live_centres(self) -> np.ndarray:
        """Centre embeddings of the open clusters in row order (a copy)."""
        return self.centre_of(self.live[: self.live_count])

    def largest(self) -> int:
        return self.buckets.largest()

    def live_ids(self) -> np.ndarray:
        """Ids of the clusters that hold frames, ascending."""
        return np.flatnonzero(self.sizes() > 0)

    def searchable(self, window: ReadFilter) -> np.ndarray:
        """Per row of the centre matrix: may the read search that cluster?"""
        clusters = self.live[: self.live_count]
        self._refresh_spans()
        return window.clusters(self.t_first[clusters], self.t_last[clusters], self.box[clusters])

    def _refresh_spans(self) -> None:
        """Recompute the time span and box of the stale clusters that hold frames."""
        sizes = self.sizes()
        stale = np.flatnonzero(self.stale[: self.count] & (sizes > 0))
        self.stale[: self.count] = False
        if stale.shape[0] == 0:
            return
        slots = self.gather(stale)
        counts = sizes[stale]
        ends = np.cumsum(counts)
        starts = ends - counts
        steps = self.frames.steps[slots]
        self.t_first[stale] = steps[starts]
        self.t_last[stale] = steps[ends - 1]
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
        arrays += self.arena.nbytes + sum(getattr(self, name).nbytes for name in self._PER_ROW)
        arrays += self.group_codes.nbytes + self.group_scales.nbytes + self.group_norms.nbytes
        return arrays + container_nbytes(self.free_ids) + self.buckets.nbytes

    # --- persistence ---

    def to_arrays(self) -> dict[str, np.ndarray]:
        count = self.count
        arrays = {name: getattr(self, name)[:count] for name in self._SAVED}
        arrays["free_ids"] = np.asarray(self.free_ids, np.int64)
        arrays["live"] = self.live[: self.live_count]
        arrays["arena"] = self.arena[: self.arena_used]
        arrays["shape"] = np.asarray(
            [self.row.shape[0], self.codes.shape[0], self.arena.shape[0]], np.int64
        )
        arrays["bucket_order"] = self.buckets.order()
        return arrays

    @classmethod
    def from_arrays(
        cls, arrays: dict[str, np.ndarray], frames: FrameStore, has_centres: bool = True
    ) -> ClusterTable:
        """The table saved by :meth:`to_arrays` over ``frames``; ``has_centres`` false for a
        memory whose clusters have no centre frame (FIFO: its centre codes stay zero)."""
        if "queue_lengths" in arrays:
            arrays = _from_version_1(arrays)
        # Versions 1 and 2 also stored the centres' embeddings, which are the centre frames'
        # (checked on load before version 3): they are not needed.
        table = cls(frames)
        id_rows, centre_rows, arena_length = arrays["shape"].tolist()
        table.count = count = int(arrays["head"].shape[0])
        if not count <= id_rows or arrays["live"].shape[0] > centre_rows:
            raise ValueError("cluster table larger than its recorded shape")
        table._resize_ids(id_rows)
        table.row[:] = -1
        for name in cls._SAVED:
            saved = arrays[name]
            if saved.shape[0] != count:
                raise ValueError(
                    f"cluster table field {name!r} has {saved.shape[0]} rows, not {count}"
                )
            getattr(table, name)[:count] = saved
        table.stale[:count] = True
        live = arrays["live"].astype(np.int64)
        table.live_count = int(live.shape[0])
        table._grow_rows(centre_rows)
        table.live[: live.shape[0]] = live
        table.row[live] = np.arange(live.shape[0])
        arena = arrays["arena"]
        table.arena = _grown(arena.astype(np.int32), arena_length)
        table.arena_used = int(arena.shape[0])
        table.free_ids = arrays["free_ids"].tolist()
        sizes = table.sizes()
        if (
            (sizes < 0).any()
            or (table.base[:count] + table.tail[:count] > table.arena_used).any()
            or (table.tail[:count] > table.block[:count]).any()
            or set(live.tolist()) & set(table.free_ids)
            or live.shape[0] + len(table.free_ids) != count
        ):
            raise ValueError("cluster blocks do not match the arena stored")
        slots = table.gather(live)
        if slots.shape[0] != sizes.sum() or (slots.shape[0] and slots.max() >= frames.used):
            raise ValueError("cluster slots do not match the frames stored")
        if has_centres:
            centres = table.centre_slot[live]
            if centres.shape[0] and not (0 <= centres.min() and centres.max() < frames.used):
                raise ValueError("a cluster's centre is not a stored frame")
            table._quantise(0, live.shape[0])  # a NaN centre is refused by the memory's check
        table.buckets.reserve(int(table.block[:count].max(initial=0)))
        table.buckets.restore(arrays["bucket_order"], sizes)
        return table


def _from_version_1(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Version 1 kept one slot queue per cluster and centres by cluster id: pack the queues into
    an arena and list the open clusters, ascending ids, as the rows of the centre codes."""
    lengths = arrays["queue_lengths"].astype(np.int64)
    count = int(lengths.shape[0])
    head, tail = arrays["head"].astype(np.int64), arrays["tail"].astype(np.int64)
    free = set(arrays["free_ids"].tolist())
    live = np.asarray([c for c in range(count) if c not in free], np.int64)
    sizes = tail - head
    queued = arrays["queued"]
    if queued.shape[0] != sizes.sum() or (sizes < 0).any():
        raise ValueError("cluster queues do not match the frames stored")
    base = np.cumsum(lengths) - lengths
    arena = np.zeros(int(lengths.sum()), np.int32)
    arena[_ranges(base + head, sizes)] = queued
    return {
        "centre_slot": arrays["centre_slot"],
        "base": base,
        "block": lengths,
        "head": head,
        "tail": tail,
        "free_ids": arrays["free_ids"],
        "live": live,
        "arena": arena,
        "shape": np.asarray(
            [-(-count // ID_GROWTH) * ID_GROWTH, live.shape[0], arena.shape[0]], np.int64
        ),
        "bucket_order": arrays["bucket_order"],
    }


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(start, start + length)`` for each pair (vectorised)."""
    lengths = np.asarray(lengths, np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    offsets = np.repeat(np.asarray(starts, np.int64) - (ends - lengths), lengths)
    return offsets + np.arange(total)


_NO_PIVOTS = (
    np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros((0, 1), np.int8),
    np.zeros(0, np.float32), np.zeros(0),
)
"""The pivot index of a table too small to use one."""


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    grown = np.zeros((rows,) + array.shape[1:], array.dtype)
    grown[: min(rows, array.shape[0])] = array[:rows]
    return grown
