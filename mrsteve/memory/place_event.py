"""Place Event Memory (paper, Section 3.1 and Appendix "Place Event Memory Write & Read
Operations"): place clusters, each subdivided into events."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve.memory.base import require
from mrsteve.memory.event import EventClusteredMemory, EventConfig
from mrsteve.memory.place import PlaceConfig, PlaceGrid, check_places


@dataclass(frozen=True)
class PlaceEventConfig(PlaceConfig, EventConfig):
    """Places as in Place Memory, events within each place as in Event Memory."""

    center_only: bool = False
    """The paper's "Center Embed" variant (Appendix "Place Event Memory Investigation"): once a
    provisional event is clustered, keep only each new event's centre frame (frames folded into
    an existing event are dropped), and let a read return only the centre frames of the top-k
    events, the oldest frame standing for a provisional event."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(isinstance(self.center_only, bool), "center_only must be a bool", self.center_only)
        require(not (self.center_only and self.frame_codes),
                "frame_codes needs center_only=False (Center Embed reads only centres)",
                self.frame_codes)


class PlaceEventMemory(PlaceGrid, EventClusteredMemory):
    """Frames grouped by place (cell of C blocks, heading bin of W degrees); within a place, a
    provisional event collects frames until it holds R, then DP-Means turns them into events.
    Eviction takes the oldest frame of the largest event over all places; a read ranks every
    event of every place by centre score, then scores the frames of the top-k."""

    Config = PlaceEventConfig
    config: PlaceEventConfig

    def __init__(
        self, capacity: int | None = None, *, dim: int | None = None, **hyperparameters: Any
    ):
        super().__init__(capacity, dim=dim, **hyperparameters)
        self.centre_only = self.scores_centres_only = self.config.center_only

    def _group_key(self, cell: tuple[int, int, int]) -> Hashable:
        return cell

    def _places_and_events(self) -> tuple[int, int]:
        return len(self._groups), len(self._group_of)

    def _check_group_keys(self, poses: np.ndarray, sizes: np.ndarray, keys: list) -> None:
        check_places(poses, sizes, keys, self.config)

    def _encode_key(self, key: Any) -> list[int]:
        return list(key)

    def _decode_key(self, key: list[int]) -> Hashable:
        return tuple(key)
