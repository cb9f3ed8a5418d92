"""FIFO Memory (paper, Section 3.1): the oldest frame goes first, and a read scores every frame."""

from __future__ import annotations

import numpy as np

from mrsteve.memory.base import ReadFilter, check_embedding
from mrsteve.memory.clustered import ClusteredMemory
from mrsteve.memory.kernels import filtered_in_order

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
        exact_scores: bool, near: tuple[float, float] | None, limit: int, check_query: bool,
    ) -> tuple:
        """Every frame scored exactly, in one matrix product, then filtered and put in result
        order (:meth:`ClusteredMemory._search`'s result); the query checked first where
        ``check_query`` asks."""
        if check_query:
            check_embedding(query, self._dim, name="query")
        frames = self._frames
        slots = self._clusters.slots(_ALL)
        scores = frames.scores(query, slots)
        keep = scores >= threshold
        found, scores = slots[keep], scores[keep]
        bounds = scores.astype(np.float64)
        bytes_read = slots.shape[0] * (frames.embeddings.strides[0] + 4)
        near_x, near_z = (0.0, 0.0) if near is None else near
        return filtered_in_order(
            found, frames.steps[found], frames.poses[found], scores, bounds, bounds,
            int(slots.shape[0]), bytes_read, frames.embeddings, query, window.compiled,
            near_x, near_z, near is not None, limit,
        )

    def _centre_index(self, cluster: int, slots: np.ndarray) -> int | None:
        return None

    def _places_and_events(self) -> tuple[int, int]:
        return 0, 0
