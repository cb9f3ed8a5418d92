"""What an agent sees and does: the observation and action types shared by every layer.

The environment (:mod:`mrsteve.env`) emits observations with the keys of
:data:`OBSERVATION_KEYS`; an action is a dict in MineRL's form (button names to 0/1, ``camera`` a
``float32[2]`` change of pitch and yaw in degrees). These aliases are the one definition the
perception, control and agent layers type against.

What the agent may know: the frame (and the stand-ins' semantic and depth
frames of the same view), its position relative to the episode's start, its inventory and the
task's text; never the map. :class:`AgentFrame` makes that structural: the loops that run agents
(:mod:`mrsteve.tasks`) hand every agent part :meth:`AgentFrame.view` of the environment's
observation, a read-only mapping of exactly :data:`AGENT_OBSERVATION_KEYS` whose ground-plane
position is relative to the block the episode started in, so the map's own coordinates (where its
walls are, how big it is) never reach an agent.

Frames, named once and used by these names everywhere:

- **world**: the environment's coordinates (the ``pose`` observation, the map's blocks); only
  evaluators, the tasks' scripted phases and plots use them;
- **episode**: the agent's frame, :class:`AgentFrame` (world minus the start's block corner on
  the ground plane); every position an agent part receives or returns is in it, decisions'
  targets and goals included (:class:`mrsteve.protocols.Decision`);
- the memory keeps positions relative to the start pose itself (the paper's convention: the
  episode frame minus the start's fraction of a block), converted by the agent that writes it
  (:meth:`mrsteve.agent.mrsteve.MrSteve.memory_pose`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
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


AGENT_OBSERVATION_KEYS = ("rgb", "depth", "semantic", "pose", "inventory")
"""The keys an agent part receives (:meth:`AgentFrame.view`); nothing else of the environment."""


class AgentFrame:
    """The agent's coordinate frame of one episode: ground-plane positions ``(x, z)`` relative to
    the corner of the block the episode started in (a whole-block shift, so block boundaries stay
    at whole numbers, as the stand-ins that read depth need). The height ``y`` stays the block
    level the player stands at (Minecraft shows it; the height maps number levels 0-63), and yaw
    and pitch are unchanged: neither tells where anything on the map is."""

    def __init__(self, start_pose: Sequence[float]) -> None:
        self.origin = (float(math.floor(float(start_pose[0]))), 0.0,
                       float(math.floor(float(start_pose[2]))))
        """World ``(x, y, z)`` of the agent frame's origin (``y`` is 0: heights are kept)."""
        self._shift = np.array([*self.origin, 0.0, 0.0])

    @classmethod
    def of(cls, obs: Mapping[str, Any]) -> AgentFrame:
        """The frame of an episode whose first observation is ``obs``."""
        return cls(obs["pose"])

    def view(self, obs: Mapping[str, Any]) -> Observation:
        """What the agent's parts receive of ``obs``: :data:`AGENT_OBSERVATION_KEYS` only,
        read-only, the ground-plane position relative to the start's block."""
        view = {key: obs[key] for key in AGENT_OBSERVATION_KEYS}
        view["pose"] = np.asarray(obs["pose"], dtype=np.float64) - self._shift
        return MappingProxyType(view)

    def to_world(self, x: float, z: float) -> tuple[float, float]:
        """A ground-plane position of the agent frame in world coordinates (for evaluators and
        plots)."""
        return x + self.origin[0], z + self.origin[2]

    def from_world(self, x: float, z: float) -> tuple[float, float]:
        """A world ground-plane position in the agent frame (a goal an evaluator sets)."""
        return x - self.origin[0], z - self.origin[2]
