"""Event clustering (paper, Appendix "Place Event Memory Write & Read Operations" and "Event Memory
Write & Read Operations") and Event Memory, which applies it to the whole stream of frames.

Frames first go to a *provisional event* (the paper's dummy deque Q). Every ``update_freq`` (R)
frames it is clustered: DP-Means on its embeddings, new clusters whose centres are more similar
than ``merge_threshold`` merged (MERGE_CLUSTERS), then each folded into the most similar existing
event of the same group if more similar than ``fold_threshold`` (c), else kept as a new event.
The provisional event is readable like any event; its centre is its oldest frame.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from mrsteve.memory.base import is_int, is_real, require
from mrsteve.memory.clustered import ClusterConfig, ClusteredMemory
from mrsteve.memory.dpmeans import DPMeans
from mrsteve.memory.frames import FrameStore, container_nbytes
from mrsteve.memory.kernels import score_rows


@dataclass(frozen=True)
class EventConfig(ClusterConfig):
    """How frames are clustered into events. Similarities are cosines (MineCLIP score / 100)."""

    update_freq: int = 100
    """R: frames collected in the provisional event before it is clustered (paper: 100)."""
    n_init: int = 5
    """K': DP-Means starting clusters (release: update_freq // 20 = 5)."""
    delta: float = 1.0
    """DP-Means penalty: a point farther than this squared distance from every centre opens a
    cluster (paper: 1)."""
    merge_threshold: float = 0.74
    """thr2: new clusters whose centres are more similar than this merge (release: 74.0)."""
    fold_threshold: float = 0.735
    """c: a new cluster joins the most similar existing event if more similar than this
    (paper: MineCLIP threshold 73.5)."""
    max_iter: int = 100
    """Most DP-Means iterations per clustering."""
    seed: int = 0
    """Seed of the k-means++ starts."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("update_freq", "n_init", "max_iter"):
            value = getattr(self, name)
            require(is_int(value) and value >= 1, f"{name} must be an int >= 1", value)
        require(is_real(self.delta) and self.delta > 0, "delta must be > 0", self.delta)
        for name in ("merge_threshold", "fold_threshold"):
            value = getattr(self, name)
            require(
                is_real(value) and -1 <= value <= 1, f"{name} must be a cosine in [-1, 1]", value
            )
        require(is_int(self.seed), "seed must be an int", self.seed)


@dataclass(eq=False)
class EventGroup:
    """Events that new clusters may fold into: one place (Place Event Memory) or the whole
    memory (Event Memory)."""

    key: Hashable
    events: list[int] = field(default_factory=list)
    """Cluster ids of the group's clustered events, oldest first."""
    provisional: int = -1
    """Cluster id of the provisional event, -1 when it holds no frames."""
    timer: int = 0
    """Frames written to the provisional event since it was last clustered (r_k)."""


def merge_similar(centres: np.ndarray, threshold: float) -> np.ndarray:
    """MERGE_CLUSTERS: connected components of the graph linking centres whose cosine similarity
    exceeds ``threshold``; returns each centre's component, numbered by first member."""
    if centres.shape[0] == 1:
        return np.zeros(1, np.int64)
    unit = centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    decided, linked = _linked(unit, threshold)
    return _components(linked if decided else (unit @ unit.T) > threshold)


@numba.njit(cache=True, nogil=True)
def _linked(unit: np.ndarray, threshold: float) -> tuple[bool, np.ndarray]:
    """``(decided, linked)``: ``unit @ unit.T > threshold`` off the diagonal, as numpy (BLAS)
    computes it, from dot products summed here, or ``decided`` false when one lies too near the
    threshold to tell. Any order of summing ``n`` products (with or without fused
    multiply-adds) lands within ``n u / (1 - n u)`` times the sum of their magnitudes of the
    exact dot product (``u = 2**-53``; Higham, Accuracy and Stability of Numerical Algorithms,
    3.1), so a sum here farther than twice that from the threshold is on the same side as
    BLAS's (or any other order's)."""
    count, dim = unit.shape
    gamma = dim * 2.0**-53 / (1.0 - dim * 2.0**-53)
    linked = np.zeros((count, count), np.bool_)
    for first in range(count):
        for second in range(first + 1, count):
            dot = 0.0
            magnitude = 0.0
            for column in range(dim):
                product = unit[first, column] * unit[second, column]
                dot += product
                magnitude += abs(product)
            # twice the bound, then room for the rounding of the bound, of the comparisons and
            # of underflow
            slack = 2.0 * gamma * magnitude * (1.0 + 4.0 * gamma)
            slack += 2.0**-50 * (abs(dot) + abs(threshold)) + 1e-300
            if dot - slack > threshold:
                linked[first, second] = linked[second, first] = True
            elif not dot + slack < threshold:  # too near, or NaN
                return False, linked
    return True, linked


@numba.njit(cache=True, nogil=True)
def _components(linked: np.ndarray) -> np.ndarray:
    """Each node's component, numbered by first member: every node takes the smallest index
    among itself and the nodes it links to (``linked[i, j]``), all at once, until nothing
    changes; then those smallest indices are numbered in increasing order."""
    count = linked.shape[0]
    component = np.arange(count)
    smallest = component.copy()
    changed = True
    while changed:
        changed = False
        for node in range(count):
            least = component[node]
            for other in range(count):
                if linked[node, other] and component[other] < least:
                    least = component[other]
            smallest[node] = least
            changed |= least != component[node]
        component[:] = smallest
    number = np.full(count, -1)
    for node in range(count):
        number[component[node]] = 0
    numbered = 0
    for node in range(count):
        if number[node] == 0:
            number[node] = numbered
            numbered += 1
    return number[component]


class ScoresAfterEviction:
    """Scores of one cluster's frames against the embedding of its evicted centre, kept for the
    next eviction.

    Eviction takes the oldest frame of the largest event again and again, and the frame nearest
    the taken centre is most often the next oldest, with the same embedding (a still view): so the
    same cluster's centre is replaced at almost every write (19,949 of 20,000 evictions of a
    Long-Navigation run), and scoring its thousands of frames each time took 45 % of the run. When
    the new reference embedding equals the last one and the cluster still holds the frames scored
    then (less the oldest ones evicted since), only the frames added since are scored. The scores
    come from :func:`~mrsteve.memory.kernels.score_rows`, which sums every row the same way
    wherever it sits (BLAS does not: rows at the end of a thread's share round differently), so
    kept scores equal fresh ones and the centre picked is the same either way. Scratch space: not
    saved, not counted in the memory's bytes (20 bytes per frame of one cluster).
    """

    def __init__(self) -> None:
        self.cluster = -1
        self.reference = np.zeros(0, np.float32)
        self.slots = np.zeros(0, np.int64)
        self.steps = np.zeros(0, np.int64)
        self.values = np.zeros(0, np.float32)

    def scores(
        self, cluster: int, reference: np.ndarray, slots: np.ndarray, frames: FrameStore
    ) -> np.ndarray:
        """Float32 dot products of the frames in ``slots`` (the cluster's, oldest first) with
        ``reference`` (float32)."""
        kept = self._kept(cluster, reference, slots, frames)
        fresh = score_rows(frames.embeddings, slots[kept:], reference)
        values = np.concatenate((self.values[self.values.shape[0] - kept :], fresh))
        self.cluster, self.reference, self.values = cluster, reference.copy(), values
        self.slots, self.steps = slots.copy(), frames.steps[slots]
        return values

    def _kept(
        self, cluster: int, reference: np.ndarray, slots: np.ndarray, frames: FrameStore
    ) -> int:
        """How many leading frames of ``slots`` are the last call's newest ones, scored against
        the same reference (0: score them all)."""
        if (
            cluster != self.cluster
            or not slots.shape[0]
            or not np.array_equal(reference, self.reference)
        ):
            return 0
        start = np.flatnonzero(self.slots == slots[0])
        if not start.shape[0]:
            return 0
        kept = self.slots.shape[0] - int(start[0])
        same = (
            kept <= slots.shape[0]
            and np.array_equal(self.slots[-kept:], slots[:kept])
            and np.array_equal(self.steps[-kept:], frames.steps[slots[:kept]])
        )
        return kept if same else 0


class EventClusteredMemory(ClusteredMemory):
    """Base of Event and Place Event Memory: frames grouped by :meth:`_group_key`, and within a
    group clustered into events. Eviction takes the oldest frame of the largest event (the
    provisional events count as events). ``centre_only`` keeps only each new event's centre
    frame after clustering (paper, Appendix "Place Event Memory Investigation")."""

    Config = EventConfig
    config: EventConfig
    centre_only: bool = False
    """Keep only the centre frame of each new event (set by the Center Embed variant)."""

    def __init__(
        self, capacity: int | None = None, *, dim: int | None = None, **hyperparameters: Any
    ):
        super().__init__(capacity, dim=dim, **hyperparameters)
        self._groups: dict[Hashable, EventGroup] = {}
        self._group_of: dict[int, EventGroup] = {}
        """Cluster id -> its group."""
        self._dpmeans = DPMeans(
            self.config.n_init, self.config.delta, self.config.max_iter, self.config.seed
        )
        self._centre_scores = ScoresAfterEviction()

    @abstractmethod
    def _group_key(self, cell: tuple[int, int, int]) -> Hashable:
        """The group (place) of a frame in place ``cell``."""

    def _place(self, slot: int, cell: tuple[int, int, int]) -> None:
        key = self._group_key(cell)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = EventGroup(key)
        clusters = self._clusters
        if group.provisional < 0:
            group.provisional = clusters.open()
            self._group_of[group.provisional] = group
            clusters.set_centre(group.provisional, slot)
        clusters.append(group.provisional, slot)
        self._route_to(group.provisional)
        self._appended(group.provisional, slot)

    def _appended(self, cluster: int, slot: int) -> None:
        group = self._group_of[cluster]
        group.timer += 1
        if group.timer >= self.config.update_freq:
            self._cluster_events(group)

    def _cluster_events(self, group: EventGroup) -> None:
        """Turn the provisional event into events (paper, Algorithm "Write", lines 7-25)."""
        clusters = self._clusters
        provisional = group.provisional
        slots = clusters.take_all(provisional)
        self._close(provisional)
        del self._group_of[provisional]
        group.provisional, group.timer = -1, 0
        embeddings = self._frames.vectors(slots)
        fit = self._dpmeans.fit(embeddings)
        merged = merge_similar(fit.centres, self.config.merge_threshold)[fit.labels]
        # Event -> positions in ``slots`` of the frames it receives; gathered first so that an
        # event stays oldest first when two new clusters land in it.
        joined: dict[int, list[np.ndarray]] = {}
        for label in range(int(merged.max()) + 1):
            members = np.flatnonzero(merged == label)
            # The centre: the frame nearest the mean of the (merged) DP-Means cluster.
            points = embeddings[members]
            offsets = points - points.mean(axis=0)
            centre = int(members[np.argmin(np.einsum("ij,ij->i", offsets, offsets))])
            target = self._most_similar_event(group, embeddings[centre])
            if target is None:
                target = clusters.open()
                self._group_of[target] = group
                group.events.append(target)
                clusters.set_centre(target, int(slots[centre]))
                kept = np.array([centre]) if self.centre_only else members
            else:
                kept = members[:0] if self.centre_only else members
            joined.setdefault(target, []).append(kept)
        for target, parts in joined.items():
            clusters.extend(target, slots[np.sort(np.concatenate(parts))])
        if self.centre_only:
            kept = np.concatenate([part for parts in joined.values() for part in parts])
            self._drop(np.delete(slots, kept))

    def _most_similar_event(self, group: EventGroup, centre: np.ndarray) -> int | None:
        """The group's event most similar to ``centre`` if above ``fold_threshold``."""
        if not group.events:
            return None
        similarities = self._clusters.centre_of(group.events) @ centre
        best = int(np.argmax(similarities))
        return group.events[best] if similarities[best] > self.config.fold_threshold else None

    def _after_eviction(self, cluster: int, slot: int) -> None:
        clusters = self._clusters
        group = self._group_of[cluster]
        if clusters.size(cluster) == 0:
            if cluster == group.provisional:
                group.provisional, group.timer = -1, 0
            else:
                group.events.remove(cluster)
            del self._group_of[cluster]
            self._close(cluster)
            if group.provisional < 0 and not group.events:
                del self._groups[group.key]
        elif cluster == group.provisional:
            clusters.set_centre(cluster, int(clusters.slots(cluster)[0]))
        elif slot == clusters.centre_slot[cluster]:  # the remaining frame nearest the old centre
            slots = clusters.slots(cluster)
            scores = self._centre_scores.scores(
                cluster, self._frames.vectors(slot), slots, self._frames
            )
            clusters.set_centre(cluster, int(slots[np.argmax(scores)]))

    def _places_and_events(self) -> tuple[int, int]:
        return 0, len(self._group_of)

    def _index_nbytes(self) -> int:
        events = [group.events for group in self._groups.values()]
        return container_nbytes(self._groups, self._group_of, *events)

    # --- persistence ---

    def _save_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        groups = list(self._groups.values())
        arrays["groups.keys"] = np.asarray([self._encode_key(g.key) for g in groups], np.int64)
        arrays["groups.provisional"] = np.asarray([g.provisional for g in groups], np.int64)
        arrays["groups.timer"] = np.asarray([g.timer for g in groups], np.int64)
        arrays["groups.event_counts"] = np.asarray([len(g.events) for g in groups], np.int64)
        arrays["groups.events"] = np.asarray([e for g in groups for e in g.events], np.int64)
        scalars["dpmeans_rng"] = self._dpmeans.rng.bit_generator.state

    def _load_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        events = arrays["groups.events"].tolist()
        offset = 0
        for key, provisional, timer, count in zip(
            arrays["groups.keys"].tolist(),
            arrays["groups.provisional"].tolist(),
            arrays["groups.timer"].tolist(),
            arrays["groups.event_counts"].tolist(),
            strict=True,
        ):
            group = EventGroup(
                self._decode_key(key), events[offset : offset + count], provisional, timer
            )
            offset += count
            self._groups[group.key] = group
            for cluster in group.events + ([provisional] if provisional >= 0 else []):
                self._group_of[cluster] = group
        self._dpmeans.rng.bit_generator.state = scalars["dpmeans_rng"]

    def _check_index(self, live: np.ndarray, sizes: np.ndarray, held: np.ndarray) -> None:
        groups = list(self._groups.values())
        members = [c for g in groups for c in g.events]
        members += [g.provisional for g in groups if g.provisional >= 0]
        if sorted(members) != sorted(live.tolist()) or len(self._group_of) != len(members):
            raise ValueError("the event groups do not name the clusters held, each once")
        for group in groups:
            require(
                is_int(group.timer) and 0 <= group.timer < self.config.update_freq,
                f"a provisional event's timer must be in [0, {self.config.update_freq})",
                group.timer,
            )
            require(bool(group.events) or group.provisional >= 0, "a group has events", group.key)
        keys = [self._group_of[c].key for c in live.tolist()]
        self._check_group_keys(self._frames.poses[held], sizes, keys)

    def _check_group_keys(self, poses: np.ndarray, sizes: np.ndarray, keys: list) -> None:
        """Raise ``ValueError`` unless every frame (``poses`` of the clusters concatenated,
        ``sizes`` each) belongs to its cluster's group ``keys``."""
        if any(key != () for key in keys):
            raise ValueError("Event Memory has one group, whose key is empty")

    @abstractmethod
    def _encode_key(self, key: Any) -> list[int]:
        """A group key as ints, for saving."""

    @abstractmethod
    def _decode_key(self, key: list[int]) -> Hashable:
        """The inverse of :meth:`_encode_key`."""


class EventMemory(EventClusteredMemory):
    """Event Memory (paper, Appendix "Event Memory Write & Read Operations"): one provisional event
    for the whole stream, clustered every R frames into events regardless of place. Eviction takes
    the oldest frame of the largest event; a read ranks events by centre score, then scores the
    frames of the top-k."""

    def _group_key(self, cell: tuple[int, int, int]) -> Hashable:
        return ()

    def _encode_key(self, key: Any) -> list[int]:
        return []

    def _decode_key(self, key: list[int]) -> Hashable:
        return ()
