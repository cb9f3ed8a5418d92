"""FIFO Memory (paper, Section 3.1): the oldest frame goes first, and a read scores every frame."""

from __future__ import annotations

import numpy as np

from mrsteve.memory.base import ReadFilter
from mrsteve.memory.clustered import ClusteredMemory
from mrsteve.memory.kernels import passing_frames, settle_read

_ALL = 0
"""FIFO Memory keeps every frame in one cluster, oldest first; it has no centre."""


class FIFOMemory(ClusteredMemory):
    """Frames in arrival order. Eviction drops the oldest frame; a read scores every stored frame
    with one matrix product (``top_k`` is accepted and ignored)."""

    has_centres = False

    def _check_index(self, live: np.ndarray, sizes: np.ndarray, held: np.ndarray) -> None:
        if live.tolist() != [_ALL]:
            raise ValueError(f"FIFO Memory has one cluster, {_ALL}, got clusters {live.tolist()}")

    def _on_allocate(self) -> None:
        self._clusters.open()

    def _place(self, slot: int, cell: tuple[int, int, int]) -> None:
        self._clusters.append(_ALL, slot)
        self._route_to(_ALL)

    def _after_eviction(self, cluster: int, slot: int) -> None:
        """Nothing to repair: the one cluster never empties (capacity >= 1)."""

    def _default_top_k(self) -> int:
        return 1

    def _search(
        self, query: np.ndarray, top_k: int, window: ReadFilter, threshold: np.float32,
        exact_scores: bool, near: tuple[float, float] | None,
    ) -> tuple:
        """Every frame scored exactly, in one matrix product, then filtered and put in result
        order (:meth:`ClusteredMemory._search`'s result)."""
        frames = self._frames
        slots = self._clusters.slots(_ALL)
        scores = frames.scores(query, slots)
        keep = scores >= threshold
        found, scores = slots[keep], scores[keep]
        t, pose = frames.steps[found], frames.poses[found]
        if window.active:
            passing = passing_frames(t, pose, window.compiled)
            found, t, pose, scores = found[passing], t[passing], pose[passing], scores[passing]
        bounds = scores.astype(np.float64)
        near_x, near_z = (0.0, 0.0) if near is None else near
        t, pose, scores, best, _ = settle_read(found, t, pose, scores, bounds, bounds,
                                               frames.embeddings, query, near_x, near_z,
                                               near is not None)
        bytes_read = slots.shape[0] * (frames.embeddings.strides[0] + 4)
        return t, pose, scores, best, int(keep.sum()), int(slots.shape[0]), bytes_read

    def _centre_index(self, cluster: int, slots: np.ndarray) -> int | None:
        return None

    def _places_and_events(self) -> tuple[int, int]:
        return 0, 0
