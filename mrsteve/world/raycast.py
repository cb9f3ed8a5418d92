"""Voxel ray casting (Amanatides & Woo DDA) shared by crosshair picking and the renderer, and the
column height map that lets the renderer's rays skip empty space.

Conventions: the grid is ``blocks[x, y, z]`` with y up, block ``(i, j, k)`` fills
``[i, i+1) x [j, j+1) x [k, k+1)``; yaw 0 faces +z, yaw 90 faces -x; positive pitch looks down
(the camera's geometry, :func:`~mrsteve.world.camera.look_direction` included, lives in
:mod:`mrsteve.world.camera`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from mrsteve.world.camera import look_direction

__all__ = ["NO_HIT", "TILE_SHIFT", "ColumnHeights", "cast_ray", "dda_axis", "look_direction",
           "solid_mask"]

NO_HIT = -1

TILE_SHIFT = 3
"""The tiles of :attr:`ColumnHeights.tiles` are ``2 ** TILE_SHIFT`` = 8 columns square."""

_BIG = 1e30


@nb.njit(cache=True)
def dda_axis(origin, direction, cell):
    """DDA set-up along one axis for a ray at ``origin`` inside ``cell``: ``(step, t_delta, t_max)``,
    the cell step, the ray length per cell, and the ray length to the first cell boundary (1e30 when
    the ray is parallel to the axis)."""
    if direction > 0:
        t_delta = 1.0 / direction
        return 1, t_delta, (cell + 1 - origin) * t_delta
    if direction < 0:
        t_delta = -1.0 / direction
        return -1, t_delta, (origin - cell) * t_delta
    return -1, _BIG, _BIG


@nb.njit(cache=True)
def cast_ray(blocks, hit_mask, ox, oy, oz, dx, dy, dz, max_dist):
    """First block along a ray whose id is set in ``hit_mask``.

    Returns ``(dist, i, j, k, face)``: the distance to the entry point, the block's indices and the
    face crossed (0/1: -x/+x, 2/3: -y/+y, 4/5: -z/+z, the side of the block that was entered). With
    no hit within ``max_dist`` (or out of the grid) ``face`` is ``NO_HIT``. Rays starting outside
    the grid along y (above the build limit) still enter it.
    """
    sx, sy, sz = blocks.shape
    i = math.floor(ox)
    j = math.floor(oy)
    k = math.floor(oz)
    step_i, t_delta_i, t_max_i = dda_axis(ox, dx, i)
    step_j, t_delta_j, t_max_j = dda_axis(oy, dy, j)
    step_k, t_delta_k, t_max_k = dda_axis(oz, dz, k)
    dist = 0.0
    face = NO_HIT
    while dist <= max_dist:
        inside = 0 <= i < sx and 0 <= k < sz
        if not inside:
            return dist, i, j, k, NO_HIT
        if 0 <= j < sy:
            if hit_mask[blocks[i, j, k]]:
                return dist, i, j, k, face
        elif (j < 0 and dy <= 0) or (j >= sy and dy >= 0):
            return dist, i, j, k, NO_HIT
        if t_max_i < t_max_j and t_max_i < t_max_k:
            dist = t_max_i
            t_max_i += t_delta_i
            i += step_i
            face = 0 if step_i > 0 else 1
        elif t_max_j < t_max_k:
            dist = t_max_j
            t_max_j += t_delta_j
            j += step_j
            face = 2 if step_j > 0 else 3
        else:
            dist = t_max_k
            t_max_k += t_delta_k
            k += step_k
            face = 4 if step_k > 0 else 5
    return dist, i, j, k, NO_HIT


def solid_mask(content) -> np.ndarray:
    """``bool[n_blocks]`` true for every block but air: what a crosshair or a camera ray stops at."""
    return np.array([b.shape != "none" for b in content.blocks], dtype=np.bool_)


class ColumnHeights:
    """Height of every column of a voxel grid and its maximum over square tiles of columns.

    ``columns[x, z]`` is one more than the y of the highest non-air block (0 for an empty column);
    ``tiles[x >> tile_shift, z >> tile_shift]`` is the largest column height in that tile. A ray
    that stays at or above a tile's height passes through it untouched, so the renderer skips it in
    one step. Heights that are too high only cost speed; too low, they hide blocks: whoever adds
    blocks to the grid calls :meth:`refresh` over the changed columns (removing blocks needs no call).
    """

    def __init__(self, blocks: np.ndarray) -> None:
        if not isinstance(blocks, np.ndarray) or blocks.dtype != np.uint8 or blocks.ndim != 3:
            raise ValueError(
                f"blocks must be a uint8[X, Y, Z] numpy array, got {getattr(blocks, 'dtype', type(blocks))}"
            )
        sx, _, sz = blocks.shape
        self.tile_shift = TILE_SHIFT
        tile = 1 << self.tile_shift
        self.columns = np.zeros((sx, sz), dtype=np.int16)
        self.tiles = np.zeros((-(-sx // tile), -(-sz // tile)), dtype=np.int16)
        self.refresh(blocks)

    def refresh(self, blocks: np.ndarray, x0: int = 0, z0: int = 0, x1: int | None = None,
                z1: int | None = None) -> None:
        """Recompute the columns ``[x0, x1) x [z0, z1)`` (default: all) and their tiles."""
        sx, _, sz = blocks.shape
        if (sx, sz) != self.columns.shape:
            raise ValueError(f"blocks cover {sx} x {sz} columns, heights {self.columns.shape}")
        x1 = sx if x1 is None else x1
        z1 = sz if z1 is None else z1
        _refresh_heights(blocks, self.columns, self.tiles, self.tile_shift, max(x0, 0),
                         max(z0, 0), min(x1, sx), min(z1, sz))


@nb.njit(cache=True)
def _refresh_heights(blocks, columns, tiles, tile_shift, x0, z0, x1, z1):
    if x0 >= x1 or z0 >= z1:
        return
    sy = blocks.shape[1]
    row = np.empty(z1 - z0, dtype=np.int16)  # local, so the inner loop vectorises
    for x in range(x0, x1):
        row[:] = 0
        for y in range(sy):  # z innermost: reads the grid in memory order
            plane = blocks[x, y, z0:z1]
            for z in range(z1 - z0):
                if plane[z] != 0:
                    row[z] = y + 1
        columns[x, z0:z1] = row
    sx, sz = columns.shape
    tile = 1 << tile_shift
    for tx in range(x0 >> tile_shift, ((x1 - 1) >> tile_shift) + 1):
        for tz in range(z0 >> tile_shift, ((z1 - 1) >> tile_shift) + 1):
            top = 0
            for x in range(tx * tile, min((tx + 1) * tile, sx)):
                for z in range(tz * tile, min((tz + 1) * tile, sz)):
                    top = max(top, columns[x, z])
            tiles[tx, tz] = top
