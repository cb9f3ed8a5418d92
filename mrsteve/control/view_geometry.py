"""Pixel-to-world geometry for the scripted skills: which world points the target pixels of a frame
see, from the depth frame, the pose and the environment's camera (:mod:`mrsteve.world.camera`).

A pixel ``p`` with depth ``d`` seen from the eye ``e`` with camera basis ``B`` (rows right, up,
forward) sees the world point ``e + d * rays[p] @ B``.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from mrsteve.world.camera import Camera


class ViewFrame:
    """Target pixels of one frame (flat indices and depths) with their world points on demand.

    A few pixels (a mob, a tree far off) get all their points at once; among many (the ground,
    for dirt) the pixels that could see a given sphere are first picked by depth and by the
    sphere's footprint on the screen, so only a handful of world points are ever computed."""

    def __init__(self, camera: Camera, basis: np.ndarray, eye: np.ndarray, pixels, depths):
        self.camera, self.basis, self.eye = camera, basis, eye
        self.pixels, self.depths = pixels, depths
        self._directions = self._points = None
        if pixels.size <= _FEW_PIXELS:
            self._directions = self.directions(slice(None))
            self._points = self.points(slice(None))

    def subset(self, keep: np.ndarray) -> ViewFrame:
        return ViewFrame(self.camera, self.basis, self.eye, self.pixels[keep], self.depths[keep])

    def directions(self, index) -> np.ndarray:
        """World directions of the pixels ``index`` selects."""
        if self._directions is not None:
            return self._directions[index]
        return rays64(self.camera)[self.pixels[index]] @ self.basis

    def points(self, index, directions: np.ndarray | None = None) -> np.ndarray:
        """World points seen by the pixels ``index`` selects."""
        if self._points is not None:
            return self._points[index]
        if directions is None:
            directions = self.directions(index)
        return self.eye + self.depths[index, None].astype(np.float64) * directions

    def nearest(self) -> np.ndarray:
        """World point of the nearest pixel."""
        return self.points(int(np.argmin(self.depths)))

    def candidates(self, centre: np.ndarray, radius: float) -> np.ndarray:
        """Indices of the pixels that may see a point within ``radius`` of ``centre``: depth
        within ``radius`` of the centre's distance, and inside the sphere's screen footprint."""
        if self._directions is not None:
            return np.arange(self.pixels.size)
        offset = centre - self.eye
        index = np.flatnonzero(np.abs(self.depths - float(np.linalg.norm(offset))) <= radius)
        right, up, ahead = self.basis @ offset
        if index.size and ahead - radius > 0.1:  # wholly in front: bound its footprint on screen
            u, v = right / ahead, up / ahead
            row, col = self.camera.project(u, v)
            spread = self.camera.focal * radius / (ahead - radius)  # |d(x/z)| <= r(1+|x/z|)/(z-r)
            rows, cols = np.divmod(self.pixels[index], self.camera.shape[1])
            index = index[
                (np.abs(rows - row) <= spread * (1.0 + abs(v)) + 1.0)
                & (np.abs(cols - col) <= spread * (1.0 + abs(u)) + 1.0)
            ]
        return index

    def within(self, centre: np.ndarray, radius: float) -> np.ndarray:
        """Indices of the pixels whose point lies within ``radius`` of ``centre``."""
        index = self.candidates(centre, radius)
        close = ((self.points(index) - centre) ** 2).sum(axis=1) <= radius * radius
        return index[close]

    def closest_to(self, centre: np.ndarray, radius: float) -> np.ndarray | None:
        """The pixel point nearest ``centre`` if one lies within ``radius``, else ``None``."""
        index = self.candidates(centre, radius)
        if index.size == 0:
            return None
        points = self.points(index)
        gaps = ((points - centre) ** 2).sum(axis=1)
        best = int(np.argmin(gaps))
        return points[best] if gaps[best] <= radius * radius else None

    def cell(self, point: np.ndarray) -> np.ndarray:
        """The block cell a pixel's point lies on (nudged into the block along the view)."""
        return np.floor(point + _NUDGE * (point - self.eye) / np.linalg.norm(point - self.eye))

    def shows_cell(self, cell: np.ndarray) -> bool:
        """Whether some pixel sees the block ``cell``."""
        index = self.candidates(cell + 0.5, _HALF_DIAGONAL)
        if index.size == 0:
            return False
        directions = self.directions(index)
        inside = np.floor(self.points(index, directions) + _NUDGE * directions)
        return bool(np.any((inside == cell).all(axis=1)))


@cache
def rays64(camera: Camera) -> np.ndarray:
    """``float64[H * W, 3]`` camera-space rays of ``camera`` (the world points are computed in
    double precision)."""
    return camera.rays.astype(np.float64)


_FEW_PIXELS = 256
"""Frames with at most this many target pixels compute all their world points at once."""
_NUDGE = 0.02
"""Blocks a hit point is pushed along its ray to fall inside the block it hit."""
_HALF_DIAGONAL = math.sqrt(3.0) / 2.0


def ray_enters_box(
    origin: np.ndarray, direction: np.ndarray, cell: np.ndarray, length: float
) -> bool:
    """Whether the ray ``origin + t * direction``, ``0 <= t <= length``, enters the unit cell."""
    t_in, t_out = 0.0, length
    for axis in range(3):
        o, d, lo = float(origin[axis]), float(direction[axis]), float(cell[axis])
        if abs(d) < 1e-12:
            if not lo <= o <= lo + 1.0:
                return False
            continue
        t1, t2 = (lo - o) / d, (lo + 1.0 - o) / d
        t_in, t_out = max(t_in, min(t1, t2)), min(t_out, max(t1, t2))
    return t_in <= t_out
