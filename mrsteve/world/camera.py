"""The first-person camera: one definition of its geometry for the renderer, the crosshair and
every part that turns pixels back into world points.

Conventions: the grid is ``blocks[x, y, z]`` with y up; block ``(i, j, k)`` fills
``[i, i+1) x [j, j+1) x [k, k+1)``. Yaw and pitch are Minecraft's, in degrees: yaw 0 faces +z, yaw
90 faces -x, positive pitch looks down. The camera sits :data:`EYE_HEIGHT` above the feet. Camera
space is (right, up, forward); :func:`camera_basis` gives those axes in world coordinates, and a
pixel's world ray is ``rays[p] @ basis``. The field of view is vertical (Minecraft's and
MineDojo's 70 degrees by default) and rays pass through pixel centres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numba as nb
import numpy as np

EYE_HEIGHT = 1.62
"""Height of the camera above the feet (blocks; Minecraft's)."""
DEFAULT_FOV_DEG = 70.0
"""Vertical field of view (degrees) of Minecraft's and MineDojo's default camera."""


@nb.njit(cache=True, fastmath=True)
def look_direction(yaw_deg: float, pitch_deg: float) -> tuple[float, float, float]:
    """Unit view vector of a Minecraft yaw and pitch in degrees."""
    yaw = math.radians(yaw_deg)
    pitch = math.radians(pitch_deg)
    cp = math.cos(pitch)
    return -math.sin(yaw) * cp, -math.sin(pitch), math.cos(yaw) * cp


@nb.njit(cache=True)
def camera_basis(yaw_deg: float, pitch_deg: float):
    """The camera's right, up and forward axes in world coordinates, as three ``(x, y, z)``
    tuples: right = forward x world up (level), up = right x forward."""
    fx, fy, fz = look_direction(yaw_deg, pitch_deg)
    yaw = math.radians(yaw_deg)
    rx, ry, rz = -math.cos(yaw), 0.0, -math.sin(yaw)
    ux, uy, uz = ry * fz - rz * fy, rz * fx - rx * fz, rx * fy - ry * fx
    return (rx, ry, rz), (ux, uy, uz), (fx, fy, fz)


def basis_matrix(yaw_deg: float, pitch_deg: float) -> np.ndarray:
    """:func:`camera_basis` as a ``float64[3, 3]`` array (rows right, up, forward)."""
    return np.array(camera_basis(float(yaw_deg), float(pitch_deg)), dtype=np.float64)


def camera_rays(height: int, width: int, fov_deg: float) -> np.ndarray:
    """``float32[H * W, 3]`` unit ray of each pixel in camera space (right, up, forward), row-major,
    through pixel centres, for a vertical field of view of ``fov_deg`` degrees."""
    tan_half = math.tan(math.radians(fov_deg) / 2.0)
    v = (1.0 - (np.arange(height) + 0.5) * 2.0 / height) * tan_half
    u = ((np.arange(width) + 0.5) * 2.0 / width - 1.0) * tan_half * width / height
    rays = np.empty((height, width, 3), dtype=np.float64)
    rays[..., 0] = u[None, :]
    rays[..., 1] = v[:, None]
    rays[..., 2] = 1.0
    rays /= np.linalg.norm(rays, axis=-1, keepdims=True)
    return np.ascontiguousarray(rays.reshape(-1, 3), dtype=np.float32)


@dataclass(frozen=True)
class Camera:
    """The pinhole camera of an environment: image size and vertical field of view. The
    environment hands it to the agent's parts (``env.unwrapped.camera``, ``info["camera"]``)."""

    height: int
    """Image rows."""
    width: int
    """Image columns."""
    fov_deg: float = DEFAULT_FOV_DEG
    """Vertical field of view in degrees."""

    def __post_init__(self) -> None:
        if self.height < 1 or self.width < 1:
            raise ValueError(f"image size must be positive, got {self.height} x {self.width}")
        if not 0.0 < self.fov_deg < 180.0:
            raise ValueError(f"fov_deg must be in (0, 180) degrees, got {self.fov_deg}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)``."""
        return (self.height, self.width)

    @cached_property
    def rays(self) -> np.ndarray:
        """``float32[H * W, 3]`` camera-space ray of each pixel (:func:`camera_rays`)."""
        return camera_rays(self.height, self.width, self.fov_deg)

    @cached_property
    def tan_half(self) -> float:
        """``tan`` of half the vertical field of view."""
        return math.tan(math.radians(self.fov_deg) / 2.0)

    @property
    def focal(self) -> float:
        """Pixels per unit of ``tan`` of the angle off the axis."""
        return self.height / 2.0 / self.tan_half

    def project(self, u: float, v: float) -> tuple[float, float]:
        """Fractional pixel ``(row, col)`` of the camera-space direction ``(u, v, 1)``."""
        return (self.height / 2.0 - v * self.focal - 0.5, self.width / 2.0 + u * self.focal - 0.5)

    @cached_property
    def view_angles(self) -> tuple[np.ndarray, np.ndarray]:
        """``(columns float[W], rows float[H])``: yaw offset of each pixel column (positive to the
        right) and upward angle of each pixel row, in degrees."""
        rays = self.rays.reshape(self.height, self.width, 3)
        columns = np.degrees(np.arctan2(rays[0, :, 0], rays[0, :, 2]))
        rows = np.degrees(np.arctan2(rays[:, 0, 1], rays[:, 0, 2]))
        return columns, rows
