"""Place Memory (paper, Section 3.1 and Appendix "Place Memory Write & Read Operations"): frames
clustered by where the agent stood and which way it looked."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve.memory.base import is_real, require
from mrsteve.memory.clustered import ClusterConfig, ClusteredMemory
from mrsteve.memory.frames import container_nbytes

PlaceKey = tuple[int, int, int]
"""``(cell x, cell z, yaw bin)`` of a place."""


@dataclass(frozen=True)
class PlaceConfig(ClusterConfig):
    """How ground positions and headings map to places."""

    cell_size: float = 6.0
    """C: side of a square place cell on the ground plane, in blocks (paper: 6)."""
    yaw_bin: float = 60.0
    """W: width of a heading bin in degrees, in (0, 180] (paper: 60)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        cell, width = self.cell_size, self.yaw_bin
        require(is_real(cell) and cell > 0, "cell_size must be > 0 blocks", cell)
        require(is_real(width) and 0 < width <= 180, "yaw_bin must be in (0, 180] degrees", width)


def place_key(pose: list[float], config: PlaceConfig) -> PlaceKey:
    """The place of a pose relative to the episode start: ``floor((p + C/2) / C)`` on x and z and
    ``floor(((yaw + W/2) mod 360) / W)``, so the first place is centred on the start, yaw 0."""
    x, _, z, yaw, _ = pose
    cell, width = config.cell_size, config.yaw_bin
    return (
        math.floor((x + cell / 2) / cell),
        math.floor((z + cell / 2) / cell),
        math.floor(((yaw + width / 2) % 360.0) / width),
    )


def checked_place_key(pose: list[float], config: PlaceConfig) -> PlaceKey:
    """:func:`place_key`, refusing a position whose cell number does not fit int64 (the file
    format stores keys as int64)."""
    key = place_key(pose, config)
    low, high = _KEY_RANGE
    if not (low <= key[0] <= high and low <= key[1] <= high):
        raise ValueError(
            f"pose x and z must lie within {_KEY_RANGE[1] * config.cell_size:.4g} blocks of the "
            f"start (place cells of {config.cell_size} blocks numbered as int64), got "
            f"x={pose[0]}, z={pose[2]}"
        )
    return key


_KEY_RANGE = (-(2**63), 2**63 - 1)


def check_places(poses: np.ndarray, sizes: np.ndarray, keys: list, config: PlaceConfig) -> None:
    """Raise ``ValueError`` unless every frame lies in its cluster's place: ``poses`` of the
    frames of several clusters concatenated, ``sizes`` frames each, ``keys`` their places (for
    loading: a file whose frames are not where its places say was not written by ``save``)."""
    if any(not (isinstance(key, tuple) and len(key) == 3) for key in keys):
        raise ValueError("place keys must be (cell x, cell z, yaw bin)")
    poses = poses.astype(np.float64)
    cell, width = config.cell_size, config.yaw_bin
    found = np.stack(
        [
            np.floor((poses[:, 0] + cell / 2) / cell),
            np.floor((poses[:, 2] + cell / 2) / cell),
            np.floor(np.mod(poses[:, 3] + width / 2, 360.0) / width),
        ],
        axis=1,
    )
    expected = np.repeat(np.asarray(keys, np.float64).reshape(-1, 3), sizes, axis=0)
    wrong = (found != expected).any(axis=1)
    if wrong.any():
        raise ValueError(
            f"a frame at pose {poses[np.argmax(wrong)].tolist()} is filed under place "
            f"{expected[np.argmax(wrong)].astype(np.int64).tolist()}"
        )


def distance_to_place_centre(x: Any, z: Any, yaw: Any, key: PlaceKey, config: PlaceConfig) -> Any:
    """Squared distance from poses to the centre of place ``key``, each axis in units of the
    place's extent (C blocks, W degrees). Works on floats and on numpy arrays alike."""
    cell, width = config.cell_size, config.yaw_bin
    dx = (x - key[0] * cell) / cell
    dz = (z - key[1] * cell) / cell
    dyaw = ((yaw - key[2] * width + 180.0) % 360.0 - 180.0) / width
    return dx * dx + dz * dz + dyaw * dyaw


class PlaceGrid:
    """What the memories grouping frames by place share: the grid of place cells the write
    computes each frame's cell on, and the refusal of a position whose cell overflows int64."""

    config: PlaceConfig

    def _place_grid(self) -> np.ndarray:
        cell, width = self.config.cell_size, self.config.yaw_bin
        return np.array([cell, cell / 2, width, width / 2], np.float64)

    def _check_location(self, pose: list[float]) -> None:
        checked_place_key(pose, self.config)


class PlaceMemory(PlaceGrid, ClusteredMemory):
    """One cluster per place, each a FIFO queue. A place's centre is its frame nearest the place
    centre (:func:`distance_to_place_centre`; ties keep the older frame). Eviction drops the
    oldest frame of the largest place; a read ranks places by centre score, then scores the
    frames of the top-k."""

    Config = PlaceConfig
    config: PlaceConfig

    def __init__(
        self, capacity: int | None = None, *, dim: int | None = None, **hyperparameters: Any
    ):
        super().__init__(capacity, dim=dim, **hyperparameters)
        self._places: dict[PlaceKey, int] = {}
        """Place -> cluster id."""
        self._key_of: dict[int, PlaceKey] = {}
        self._centre_distance: dict[int, float] = {}

    def _place(self, slot: int, key: PlaceKey) -> None:
        cluster = self._places.get(key)
        if cluster is None:
            cluster = self._places[key] = self._clusters.open()
            self._key_of[cluster] = key
            self._centre_distance[cluster] = math.inf
        self._clusters.append(cluster, slot)
        self._route_to(cluster)
        self._appended(cluster, slot)

    def _appended(self, cluster: int, slot: int) -> None:
        x, _, z, yaw, _ = self._frames.poses[slot].tolist()
        distance = distance_to_place_centre(x, z, yaw, self._key_of[cluster], self.config)
        if distance < self._centre_distance[cluster]:
            self._centre_distance[cluster] = distance
            self._clusters.set_centre(cluster, slot)

    def _after_eviction(self, cluster: int, slot: int) -> None:
        if self._clusters.size(cluster) == 0:
            del self._places[self._key_of.pop(cluster)]
            del self._centre_distance[cluster]
            self._close(cluster)
        elif slot == self._clusters.centre_slot[cluster]:
            slots = self._clusters.slots(cluster)
            poses = self._frames.poses[slots].astype(np.float64)
            distances = distance_to_place_centre(
                poses[:, 0], poses[:, 2], poses[:, 3], self._key_of[cluster], self.config
            )
            best = int(np.argmin(distances))
            self._centre_distance[cluster] = float(distances[best])
            self._clusters.set_centre(cluster, int(slots[best]))

    def _places_and_events(self) -> tuple[int, int]:
        return len(self._places), 0

    def _check_index(self, live: np.ndarray, sizes: np.ndarray, held: np.ndarray) -> None:
        if sorted(self._places.values()) != sorted(live.tolist()) or len(self._key_of) != len(
            self._places
        ):
            raise ValueError("the places do not name the clusters held, each once")
        keys = [self._key_of[c] for c in live.tolist()]
        check_places(self._frames.poses[held], sizes, keys, self.config)

    def _index_nbytes(self) -> int:
        return container_nbytes(self._places, self._key_of, self._centre_distance)

    def _save_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        clusters = list(self._places.values())
        arrays["places.keys"] = np.asarray(list(self._places), np.int64).reshape(-1, 3)
        arrays["places.clusters"] = np.asarray(clusters, np.int64)
        arrays["places.centre_distance"] = np.asarray(
            [self._centre_distance[c] for c in clusters], np.float64
        )

    def _load_index(self, scalars: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        keys = arrays["places.keys"].tolist()
        clusters = arrays["places.clusters"].tolist()
        distances = arrays["places.centre_distance"].tolist()
        for key, cluster, distance in zip(keys, clusters, distances, strict=True):
            self._places[tuple(key)] = cluster
            self._key_of[cluster] = tuple(key)
            self._centre_distance[cluster] = distance
