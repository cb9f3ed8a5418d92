"""DP-Means clustering, as the paper's event clustering uses it (Appendix "Place Event Memory
Write & Read Operations", "Event Cluster Details")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mrsteve.memory.base import is_int, is_real, require


@dataclass(frozen=True, eq=False)
class DPMeansResult:
    labels: np.ndarray
    """Cluster of each point, int64 in ``0..k-1``, clusters numbered by their first point."""
    centres: np.ndarray
    """Mean of each cluster's points, float64, shape ``(k, d)``."""
    iterations: int


class DPMeans:
    """DP-Means (Kulis & Jordan, 2012) with delayed cluster creation (Dinari & Freifeld, 2022):
    k-means++ picks ``n_init`` starting centres (K'), then Lloyd iterations assign every point to
    its nearest centre and move centres to their means; in each iteration the point farthest from
    its centre opens a new cluster if its squared distance exceeds ``delta``. Stops when nothing
    changes or after ``max_iter`` iterations. Deterministic given ``seed`` (an int or a
    ``numpy.random.Generator``, whose state the successive fits advance)."""

    def __init__(
        self,
        n_init: int = 5,
        delta: float = 1.0,
        max_iter: int = 100,
        seed: int | np.random.Generator = 0,
    ) -> None:
        require(is_int(n_init) and n_init >= 1, "n_init must be an int >= 1", n_init)
        require(is_real(delta) and delta > 0, "delta must be > 0", delta)
        require(is_int(max_iter) and max_iter >= 1, "max_iter must be an int >= 1", max_iter)
        self.n_init = n_init
        self.delta = float(delta)
        self.max_iter = max_iter
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def fit(self, points: ArrayLike) -> DPMeansResult:
        """Cluster the rows of ``points`` (shape ``(n, d)``, n >= 1, finite)."""
        x = np.asarray(points, np.float64)
        if x.ndim != 2 or x.shape[0] == 0 or not np.isfinite(x).all():
            raise ValueError(
                f"points must be a finite (n, d) array with n >= 1, got shape {x.shape}"
            )
        squared = np.einsum("ij,ij->i", x, x)
        centres = self._kmeans_plus_plus(x, squared)
        labels = np.full(x.shape[0], -1)
        rows = np.arange(x.shape[0])
        for iteration in range(1, self.max_iter + 1):
            distances = (
                squared[:, None] - 2.0 * (x @ centres.T) + np.einsum("ij,ij->i", centres, centres)
            )
            assigned = distances.argmin(axis=1)
            nearest = distances[rows, assigned]
            farthest = int(nearest.argmax())
            opened = nearest[farthest] > self.delta
            if opened:
                assigned[farthest] = centres.shape[0]
            if not opened and np.array_equal(assigned, labels):
                break
            counts = np.bincount(assigned, minlength=centres.shape[0] + opened)
            members = assigned[None, :] == np.flatnonzero(counts)[:, None]
            centres = (members @ x) / counts[counts > 0][:, None]
            labels = (np.cumsum(counts > 0) - 1)[assigned]
        _, first_points = np.unique(labels, return_index=True)
        order = np.argsort(first_points)
        renumber = np.empty_like(order)
        renumber[order] = np.arange(order.shape[0])
        return DPMeansResult(renumber[labels], centres[order], iteration)

    def _kmeans_plus_plus(self, x: np.ndarray, squared: np.ndarray) -> np.ndarray:
        """Up to ``n_init`` distinct starting centres (Arthur & Vassilvitskii, 2007)."""
        chosen = [int(self.rng.integers(x.shape[0]))]
        closest = np.maximum(squared - 2.0 * (x @ x[chosen[0]]) + squared[chosen[0]], 0.0)
        while len(chosen) < min(self.n_init, x.shape[0]):
            cumulative = np.cumsum(closest)
            if cumulative[-1] <= 0.0:
                break
            pick = int(
                np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right")
            )
            pick = min(pick, x.shape[0] - 1)
            chosen.append(pick)
            distance = np.maximum(squared - 2.0 * (x @ x[pick]) + squared[pick], 0.0)
            np.minimum(closest, distance, out=closest)
        return x[chosen]
