"""Voxel ray casting (Amanatides & Woo DDA) shared by crosshair picking and the renderer.

Conventions (``notes/design.md``): the grid is ``blocks[x, y, z]`` with y up, block ``(i, j, k)``
fills ``[i, i+1) x [j, j+1) x [k, k+1)``; yaw 0 faces +z, yaw 90 faces -x; positive pitch looks down.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

NO_HIT = -1


@nb.njit(cache=True, fastmath=True)
def look_direction(yaw_deg: float, pitch_deg: float) -> tuple[float, float, float]:
    """Unit view vector of a Minecraft yaw and pitch in degrees."""
    yaw = math.radians(yaw_deg)
    pitch = math.radians(pitch_deg)
    cp = math.cos(pitch)
    return -math.sin(yaw) * cp, -math.sin(pitch), math.cos(yaw) * cp


@nb.njit(cache=True)
def cast_ray(blocks, hit_mask, ox, oy, oz, dx, dy, dz, max_dist):
    """First block along a ray whose id is set in ``hit_mask``.

    Returns ``(dist, i, j, k, face)``: the distance to the entry point, the block's indices and the
    face crossed (0/1: -x/+x, 2/3: -y/+y, 4/5: -z/+z, the side of the block that was entered). With
    no hit within ``max_dist`` (or out of the grid) ``face`` is ``NO_HIT``. Rays starting outside
    the grid along y (above the build limit) still enter it.
    """
    sx, sy, sz = blocks.shape
    i = int(math.floor(ox))
    j = int(math.floor(oy))
    k = int(math.floor(oz))
    step_i = 1 if dx > 0 else -1
    step_j = 1 if dy > 0 else -1
    step_k = 1 if dz > 0 else -1
    inf = 1e30
    t_delta_i = abs(1.0 / dx) if dx != 0 else inf
    t_delta_j = abs(1.0 / dy) if dy != 0 else inf
    t_delta_k = abs(1.0 / dz) if dz != 0 else inf
    t_max_i = ((i + 1 - ox) if dx > 0 else (ox - i)) * t_delta_i if dx != 0 else inf
    t_max_j = ((j + 1 - oy) if dy > 0 else (oy - j)) * t_delta_j if dy != 0 else inf
    t_max_k = ((k + 1 - oz) if dz > 0 else (oz - k)) * t_delta_k if dz != 0 else inf
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
