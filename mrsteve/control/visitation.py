"""The visitation map of hierarchical episodic exploration.

Appendix "Solver Module Details" (Explore Mode): an ``L x L`` grid of 1-block cells centred on the
agent's start, on which the agent's field of view is marked as a sector towards its heading (the
release: ``L = 128``, a 70 degree, 10-block sector). The paper builds it from Place Event Memory:
each frame the memory holds marks the view it was seen with (:class:`PaintedFrames`), so a place
the memory forgot is unvisited again; an explorer without a memory marks every step it observes.
The map grows when a view leaves it, keeping every count where it was, so it also serves
unbounded worlds.

Cells are indexed ``counts[ix, iz]``: cell ``(ix, iz)`` covers ``[ox + ix, ox + ix + 1) x
[oz + iz, oz + iz + 1)`` on the ground plane, ``(ox, oz)`` being :attr:`VisitationMap.origin`.
Headings follow Minecraft: yaw 0 faces +z, yaw 90 faces -x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.naming import check_name

PAINTED_FROM = ("memory", "steps")
"""What an agent with a memory paints its visitation map with
(:attr:`VisitationConfig.painted_from`)."""


@dataclass(frozen=True)
class VisitationConfig:
    """Configuration of :class:`VisitationMap` (the release's values)."""

    size: int = 128
    """Cells per side of the initial map, 1 block per cell, centred on the start (paper: L = 120
    on 100 x 100 maps, 240 on 200 x 200; the release: 128)."""
    fov_degrees: float = 70.0
    """Angular width of the painted field-of-view sector: the paper's exploration-map parameter
    (the release paints a 70 degree sector), not read from the environment's camera."""
    view_distance: float = 10.0
    """Radius of the painted sector in blocks."""
    growth: int = 64
    """Cells added to a side when the painted sector would leave the map."""
    painted_from: str = field(default="memory", metadata=OMITTED_WHEN_DEFAULT)
    """What an agent with a memory paints the map with: ``memory``, the frames its memory holds
    (the paper: pi_H-Nav reads M_t, so a place the memory forgot is unvisited again), or
    ``steps``, every step it took, as an agent without a memory does."""

    def __post_init__(self) -> None:
        check_name(self.painted_from, PAINTED_FROM, "painted_from")
        if self.size < 1 or self.growth < 1:
            raise ValueError(f"size and growth must be positive cell counts, got {self.size}, "
                             f"{self.growth}")
        if not 0 < self.fov_degrees <= 360 or not self.view_distance >= 0:
            raise ValueError(f"fov_degrees must be in (0, 360] and view_distance >= 0, got "
                             f"{self.fov_degrees}, {self.view_distance}")


class VisitationMap:
    """Counts of how often each 1-block cell was in the agent's field of view.

    ``centre`` is the start position the map (and the goal patches) are centred on.
    """

    def __init__(self, config: VisitationConfig | None = None,
                 centre: tuple[float, float] = (0.0, 0.0)) -> None:
        self.config = config or VisitationConfig()
        self.centre = (float(centre[0]), float(centre[1]))
        half = self.config.size // 2
        self._origin = (math.floor(centre[0]) - half, math.floor(centre[1]) - half)
        self._counts = np.zeros((self.config.size, self.config.size), dtype=np.int32)
        self._half_fov = self.config.fov_degrees / 2

    @property
    def counts(self) -> np.ndarray:
        """``int32[nx, nz]`` paint counts (read-only view)."""
        view = self._counts.view()
        view.flags.writeable = False
        return view

    @property
    def origin(self) -> tuple[int, int]:
        """Ground-plane position ``(x, z)`` of the low corner of cell ``(0, 0)``."""
        return self._origin

    @property
    def extent(self) -> tuple[int, int, int, int]:
        """``(x_min, z_min, x_max, z_max)`` covered by the map."""
        nx, nz = self._counts.shape
        return self._origin[0], self._origin[1], self._origin[0] + nx, self._origin[1] + nz

    def cell(self, x: float, z: float) -> tuple[int, int]:
        """Index of the cell holding ``(x, z)`` (outside the array when off the map)."""
        return math.floor(x) - self._origin[0], math.floor(z) - self._origin[1]

    def count_at(self, x: float, z: float) -> int:
        """Paint count of the cell holding ``(x, z)``; 0 off the map."""
        ix, iz = self.cell(x, z)
        nx, nz = self._counts.shape
        return int(self._counts[ix, iz]) if 0 <= ix < nx and 0 <= iz < nz else 0

    def paint(self, x: float, z: float, yaw: float) -> None:
        """Add 1 to every cell of the field-of-view sector seen from ``(x, z)`` facing ``yaw``."""
        if not (math.isfinite(x) and math.isfinite(z) and math.isfinite(yaw)):
            raise ValueError(f"paint needs a finite position and yaw, got {(x, z, yaw)}")
        self._cover(x, z)
        paint_sector(self._counts, *self._origin, x, z, yaw, self._half_fov,
                     self.config.view_distance, 1)

    def paint_many(self, xs: np.ndarray, zs: np.ndarray, yaws: np.ndarray, value: int = 1) -> None:
        """Add ``value`` to the field-of-view sector of each eye ``(xs[k], zs[k])`` facing
        ``yaws[k]``; ``value = -1`` takes back sectors painted before (the same eyes paint the
        same cells whatever the map grew to since)."""
        xs, zs, yaws = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (xs, zs, yaws))
        if not xs.size:
            return
        if not (np.isfinite(xs).all() and np.isfinite(zs).all() and np.isfinite(yaws).all()):
            raise ValueError("paint_many needs finite positions and yaws")
        self._cover(xs.min(), zs.min())
        self._cover(xs.max(), zs.max())
        paint_sectors(self._counts, *self._origin, xs, zs, yaws, self._half_fov,
                      self.config.view_distance, value)

    def blank_layer(self, dtype: type = np.float32) -> np.ndarray:
        """Zeros shaped like :attr:`counts`: a layer aligned with this map (same cells)."""
        return np.zeros(self._counts.shape, dtype=dtype)

    def _cover(self, x: float, z: float) -> None:
        """Grow the map so that the sector seen from ``(x, z)`` lies on it."""
        pad = padding_to_cover(self._origin, self._counts.shape, x, z,
                               self.config.view_distance + 1, self.config.growth)
        if pad is not None:
            self._counts = np.pad(self._counts, pad)
            self._origin = (self._origin[0] - pad[0][0], self._origin[1] - pad[1][0])


class PaintedFrames:
    """A visitation map kept painted with the fields of view of the frames a memory holds.

    The paper builds the count-based explorer's visitation map from Place Event Memory (appendix
    "Solver Module Details"): a place whose frames the memory forgot (evicted) counts as unvisited
    again. :meth:`update` is a diff against the frames painted so far: it paints the frames new
    since the last update and takes back the sectors of those no longer held, so each frame costs
    one sector painted and at most one taken back. Frames are told apart by their steps (the agent
    writes one frame a step, steps increasing); their poses are relative to ``origin``, the
    ground position ``(x, z)`` of the memory's start.
    """

    def __init__(self, visitation: VisitationMap, origin: tuple[float, float] = (0.0, 0.0)
                 ) -> None:
        self.visitation = visitation
        self.origin = (float(origin[0]), float(origin[1]))
        self._n = 0
        self._t = np.empty(1024, np.int64)
        """Steps of the painted frames (the first :attr:`_n`), ascending."""
        self._eyes = np.empty((1024, 3))
        """Their ``(x, z, yaw)`` on the map, one row each."""

    def __len__(self) -> int:
        return self._n

    def update(self, t: np.ndarray, poses: np.ndarray) -> None:
        """Make the painted frames those of steps ``t`` (``int[n]``, any order) seen from
        ``poses`` (``float[n, 5]``: ``x, y, z, yaw, pitch``, position relative to ``origin``).
        Costs a pass over ``t``, plus one over the painted frames when some are gone."""
        t = np.asarray(t, dtype=np.int64).reshape(-1)
        if np.shape(poses) != (t.size, 5):
            raise ValueError(f"one pose (x, y, z, yaw, pitch) per step: got {t.size} steps and "
                             f"poses of shape {np.shape(poses)}")
        painted = self._t[: self._n]
        new = t > painted[-1] if self._n else np.ones(t.shape, bool)
        added = np.flatnonzero(new)
        if t.size - added.size != self._n:  # frames painted before are gone
            kept = np.isin(painted, t[~new])
            self._paint(self._eyes[: self._n][~kept], -1)
            n = int(np.count_nonzero(kept))
            self._t[:n], self._eyes[:n] = painted[kept], self._eyes[: self._n][kept]
            self._n = n
        if added.size:
            added = added[np.argsort(t[added], kind="stable")]
            rows = np.asarray(poses)[added]
            eyes = np.column_stack([rows[:, 0] + self.origin[0], rows[:, 2] + self.origin[1],
                                    rows[:, 3]]).astype(np.float64)
            self._paint(eyes, 1)
            self._append(t[added], eyes)

    def _append(self, t: np.ndarray, eyes: np.ndarray) -> None:
        end = self._n + t.size
        if end > self._t.size:
            rows = max(end, 2 * self._t.size)
            self._t = np.resize(self._t, rows)
            self._eyes = np.resize(self._eyes, (rows, 3))
        self._t[self._n:end], self._eyes[self._n:end] = t, eyes
        self._n = end

    def _paint(self, eyes: np.ndarray, value: int) -> None:
        self.visitation.paint_many(eyes[:, 0], eyes[:, 1], eyes[:, 2], value)


def padding_to_cover(
    origin: tuple[int, int], shape: tuple[int, int], x: float, z: float, reach: float, growth: int
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``np.pad`` widths that grow a grid anchored at ``origin`` (world column of cell ``[0, 0]``)
    so that the square ``reach`` blocks around ``(x, z)`` lies on it, by at least ``growth``
    cells on each side that needs it; ``None`` when it already does."""
    nx, nz = shape
    lo_x = math.floor(x - reach) - origin[0]
    lo_z = math.floor(z - reach) - origin[1]
    hi_x = math.floor(x + reach) - origin[0] + 1 - nx
    hi_z = math.floor(z + reach) - origin[1] + 1 - nz
    if lo_x >= 0 and lo_z >= 0 and hi_x <= 0 and hi_z <= 0:
        return None
    return (
        (max(growth, -lo_x) if lo_x < 0 else 0, max(growth, hi_x) if hi_x > 0 else 0),
        (max(growth, -lo_z) if lo_z < 0 else 0, max(growth, hi_z) if hi_z > 0 else 0),
    )


@nb.njit(cache=True)
def paint_sector(grid, ox, oz, x, z, yaw, half_fov, radius, value):
    """Add ``value`` to the cells of ``grid[ix, iz]`` in a field-of-view sector.

    Cell ``(i, j)`` covers ``[ox + i, ox + i + 1) x [oz + j, oz + j + 1)`` on the ground plane and
    ``(x, z)`` is the eye there. Painted are the cells whose centre lies within ``radius`` and
    within ``half_fov`` degrees of the heading ``yaw`` (Minecraft: 0 faces +z, 90 faces -x), and
    the eye's own cell; cells off the grid are skipped. Offsets are taken from the eye's cell, so
    an eye paints the same ground cells whatever the grid's origin (a sector is taken back exactly
    after the map grew).
    """
    nx, nz = grid.shape
    heading = math.radians(yaw)
    fx, fz = -math.sin(heading), math.cos(heading)
    cos_half = math.cos(math.radians(half_fov))
    cell_x, cell_z = math.floor(x), math.floor(z)
    frac_x, frac_z = x - cell_x, z - cell_z
    eye_i, eye_j = cell_x - ox, cell_z - oz
    reach = math.floor(radius) + 1
    for di in range(max(-reach, -eye_i), min(reach, nx - 1 - eye_i) + 1):
        dx = di + 0.5 - frac_x
        for dj in range(max(-reach, -eye_j), min(reach, nz - 1 - eye_j) + 1):
            dz = dj + 0.5 - frac_z
            distance = math.sqrt(dx * dx + dz * dz)
            if (di == 0 and dj == 0) or (
                distance <= radius and dx * fx + dz * fz >= cos_half * distance
            ):
                grid[eye_i + di, eye_j + dj] += value


@nb.njit(cache=True)
def paint_sectors(grid, ox, oz, xs, zs, yaws, half_fov, radius, value):
    """:func:`paint_sector` for each eye ``(xs[k], zs[k])`` facing ``yaws[k]``."""
    for k in range(xs.size):
        paint_sector(grid, ox, oz, xs[k], zs[k], yaws[k], half_fov, radius, value)
