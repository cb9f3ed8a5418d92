"""What an agent sees and does: the observation and action types shared by every layer.

The environment (:mod:`mrsteve.env`) emits observations with the keys of
:data:`OBSERVATION_KEYS`; an action is a dict in MineRL's form (button names to 0/1, ``camera`` a
``float32[2]`` change of pitch and yaw in degrees). These aliases are the one definition the
perception, control and agent layers type against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

Observation = Mapping[str, np.ndarray]
"""One step's observation: ``rgb``, ``depth``, ``semantic``, ``pose``, ``inventory`` (see
:class:`mrsteve.env.voxel_env.VoxelEnv`)."""

Action = dict[str, Any]
"""One step's action: MineRL-style buttons, ``camera`` and ``equip``."""

OBSERVATION_KEYS = ("rgb", "depth", "semantic", "pose", "inventory")
"""The keys of an observation."""


def noop_action() -> Action:
    """An action that presses nothing and leaves the camera still."""
    return {"camera": np.zeros(2, dtype=np.float32)}
