"""Metrics of the paper's exploration and navigation experiments, computed from trajectories.

Exploration (appendix "Exploration Experiments Details"): the map is divided into an 11 x 11 grid;
*Map Coverage* is the percentage of grid cells the trajectory enters, and *Revisit Count* the mean,
over the cells where the agent spent more than 300 steps, of the number of times it came back to
the cell after leaving it (entries minus one), so an agent that never returns scores 0.

Navigation (appendix "VPT Navigator Ablation Study"): success within a radius of the goal and SPL,
success weighted by (shortest path length / max(path length, shortest path length)); the
navigation experiment passes the shortest walkable path on the true terrain to the success disc
(:mod:`mrsteve.tasks.navigation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ExplorationScore:
    """Map Coverage in percent and Revisit Count, with the per-cell step counts behind them."""

    map_coverage: float
    revisit_count: float
    steps_per_cell: np.ndarray
    entries_per_cell: np.ndarray


def exploration_score(
    xz: np.ndarray,
    origin: tuple[float, float],
    size: tuple[float, float],
    grid: int = 11,
    linger_steps: int = 300,
) -> ExplorationScore:
    """Score a trajectory ``xz`` (``N x 2`` positions, one per step) on a ``grid x grid`` division
    of the rectangle starting at ``origin`` with extent ``size`` (blocks)."""
    xz = np.asarray(xz, dtype=np.float64)
    if xz.ndim != 2 or xz.shape[1] != 2 or len(xz) == 0:
        raise ValueError(f"trajectory must be a non-empty N x 2 array of (x, z), got {xz.shape}")
    if grid < 1 or min(size) <= 0:
        raise ValueError(f"grid must be >= 1 and size positive, got grid={grid}, size={size}")
    rel = (xz - np.asarray(origin, dtype=np.float64)) / np.asarray(size, dtype=np.float64)
    cells = np.clip(np.floor(rel * grid).astype(np.int64), 0, grid - 1)
    flat = cells[:, 0] * grid + cells[:, 1]
    steps = np.bincount(flat, minlength=grid * grid)
    entered = np.ones(len(flat), dtype=bool)
    entered[1:] = flat[1:] != flat[:-1]
    entries = np.bincount(flat[entered], minlength=grid * grid)
    lingered = steps > linger_steps
    revisits = float(np.mean(entries[lingered] - 1)) if lingered.any() else 0.0
    return ExplorationScore(
        map_coverage=100.0 * float(np.count_nonzero(steps)) / (grid * grid),
        revisit_count=revisits,
        steps_per_cell=steps.reshape(grid, grid),
        entries_per_cell=entries.reshape(grid, grid),
    )


def path_length(xz: np.ndarray) -> float:
    """Length of a polyline of ``N x 2`` ground positions."""
    xz = np.asarray(xz, dtype=np.float64)
    if len(xz) < 2:
        return 0.0
    return float(np.sum(np.linalg.norm(np.diff(xz, axis=0), axis=1)))


def spl(success: bool, shortest: float, taken: float) -> float:
    """Success weighted by Path Length (Anderson et al. 2018) for one episode."""
    if shortest < 0 or taken < 0:
        raise ValueError(f"path lengths must be non-negative, got {shortest}, {taken}")
    if not success:
        return 0.0
    return float(shortest / max(taken, shortest)) if shortest > 0 else 1.0
