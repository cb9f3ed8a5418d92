"""STEVE-1 told to "go explore", without memory: the paper's wandering explorer.

The paper observes that STEVE-1 with "go explore" walks straight ahead, runs into walls and
follows them. :class:`WanderExplorer` walks on, jumps when stalled
(:class:`~mrsteve.control.motion.StallTracker`), swims, and turns toward the more open side when
something it cannot climb blocks the view ahead (free space read from the depth frame with the
environment's camera). The scripted skills wander with it when no target is in view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mrsteve.control.motion import StallTracker, clamp
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera
from mrsteve.world.content import load_content


@dataclass(frozen=True)
class WanderConfig:
    """Configuration of :class:`WanderExplorer` (STEVE-1 "go explore")."""

    clearance: float = 2.5
    """Free distance (blocks) at eye level the wanderer needs ahead to keep walking straight."""
    eye_band: float = 8.0
    """Pixel rows within this many degrees of the horizon make the eye-level band."""
    max_turn: float = 10.0
    """Largest camera turn per step, degrees."""
    stall_speed: float = 0.05
    """Horizontal blocks per step below which a step counts as stalled
    (:class:`~mrsteve.control.motion.StallTracker`)."""
    stall_jump: int = 3
    """Stalled steps in a row after which it jumps."""
    stuck_steps: int = 30
    """Stalled steps in a row after which it turns away as if blocked."""

    def __post_init__(self) -> None:
        if not self.clearance > 0 or not self.eye_band > 0 or not self.max_turn > 0:
            raise ValueError(f"clearance, eye_band and max_turn must be positive, got {self}")


class WanderExplorer:
    """STEVE-1 told to "go explore" (module docstring): straight on, turning at obstacles."""

    def __init__(self, config: WanderConfig | None = None) -> None:
        self.config = config or WanderConfig()
        self._water_class = load_content().semantic_id("water")
        self._stall = StallTracker(self.config.stall_speed)
        self._rng = np.random.default_rng(0)
        self.camera: Camera | None = None
        self._turn = 0.0
        self._geometry_of: Camera | None = None
        self._geometry: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def goal(self) -> tuple[float, float] | None:
        return None

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng
        self.camera = camera
        self._stall.reset()
        self._turn = 0.0

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """STEVE-1's "go explore" ignores tasks."""

    def observe(self, obs: Observation) -> None:
        self._stall.update(float(obs["pose"][0]), float(obs["pose"][2]))

    def act(self, obs: Observation) -> Action:
        cfg = self.config
        pitch = float(obs["pose"][4])
        free_left, free_ahead, free_right = self._free_space(obs["depth"], pitch)
        stalled = self._stall.stalled
        if self._turn == 0.0 and (free_ahead < cfg.clearance or stalled >= cfg.stuck_steps):
            # blocked: turn toward the more open side (at random when both look alike)
            if abs(free_left - free_right) < 0.5:
                self._turn = cfg.max_turn * (1 if self._rng.random() < 0.5 else -1)
            else:
                self._turn = cfg.max_turn * (1 if free_right > free_left else -1)
            self._stall.clear()
        elif self._turn != 0.0 and free_ahead >= cfg.clearance + 1.0:
            self._turn = 0.0
        swimming = self._swimming(obs)
        self._stall.pressed(True)
        return {
            "forward": 1,
            "sprint": int(self._turn == 0.0),
            "jump": int(swimming or self._stall.stalled >= cfg.stall_jump),
            "camera": np.array([clamp(-pitch, cfg.max_turn), self._turn], dtype=np.float32),
        }

    def _free_space(self, depth: np.ndarray, pitch: float) -> tuple[float, float, float]:
        """Least horizontal free distance at eye level in the left, middle and right thirds."""
        row_angles, column_cosines, thirds = self._camera_geometry(depth.shape)
        band = np.abs(row_angles - pitch) < self.config.eye_band
        if not band.any():
            return (math.inf,) * 3
        free = depth[band].min(axis=0) * column_cosines
        left, ahead, right = np.minimum.reduceat(free, thirds).tolist()
        return left, ahead, right

    def _camera_geometry(self, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Upward angle of each pixel row (degrees), cosine of each column's yaw offset, and the
        first column of each third (the parts of ``np.array_split``), computed once per camera."""
        if self.camera is None or self.camera.shape != tuple(shape):
            raise ValueError(f"the wanderer needs the camera of {shape} frames (reset(obs, rng, "
                             f"camera)), got {self.camera}")
        if self._geometry_of is not self.camera:
            column_angles, row_angles = self.camera.view_angles
            width = column_angles.shape[0]
            sizes = [width // 3 + (part < width % 3) for part in range(3)]
            thirds = np.minimum(np.cumsum([0, *sizes[:2]]), width - 1)
            self._geometry = (row_angles, np.cos(np.radians(column_angles)), thirds)
            self._geometry_of = self.camera
        return self._geometry

    def _swimming(self, obs: Observation) -> bool:
        """Off the block grid vertically with water filling the bottom of the view."""
        y = float(obs["pose"][1])
        if abs(y - round(y)) < 1e-3:
            return False
        bottom = obs["semantic"][-max(1, obs["semantic"].shape[0] // 4):]
        return float(np.mean(bottom == self._water_class)) > 0.5
