"""Plan4MC's low level: a goal-reaching DQN over the RGB frame and the goal (Table 1's "DQN"
columns and the navigator table's "Low-level Navigator in Plan4MC").

The paper: "The low-level policy is trained using DQN and follows the MineAgent structure from the
MineDojo framework. It receives a goal position and current observation in pixel and outputs
actions" (appendix "Exploration Experiments Details"). Here the Q-network is the learned parts'
image tower (``3 x 3`` convolutions and a linear layer, :class:`mrsteve.nn.FrameEncoder`) beside a
goal encoder (one layer over :func:`~mrsteve.control.learned_navigator.goal_features`: the goal
relative to the agent and the view angles), joined by a hidden layer into one Q-value per action
of :data:`DQN_ACTIONS`. It has no memory, no map and no verdict on a goal out of reach. As in
Plan4MC's release it acts epsilon-greedily at run time (epsilon 0.05, drawn from the generator
given to :meth:`DQNNavigator.reset`). :mod:`mrsteve.train.dqn` trains it (``mrsteve train
dqn-navigator``); the weights ship in ``data/dqn_navigator.npz``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mrsteve.control.learned_navigator import goal_features
from mrsteve.control.motion import clamp
from mrsteve.control.navigation import NavigatorConfig, within
from mrsteve.digests import PACKAGE_ROOT
from mrsteve.nn import FrameEncoder, Weights, convolution_shapes, feature_map, mlp
from mrsteve.spaces import Action, Observation, noop_action
from mrsteve.world.camera import Camera

SHIPPED_DQN_NAVIGATOR = "control/data/dqn_navigator.npz"
"""The shipped weights, below ``mrsteve/`` (``mrsteve train dqn-navigator``)."""

TURN = 15.0
"""Degrees of yaw a turning action turns."""

DQN_ACTIONS: tuple[tuple[bool, bool, float], ...] = (
    (True, False, 0.0),     # forward
    (True, True, 0.0),      # forward and jump
    (False, False, -TURN),  # turn left
    (False, False, TURN),   # turn right
    (True, False, -TURN),   # forward, turning left
    (True, False, TURN),    # forward, turning right
)
"""The discrete actions ``(forward, jump, yaw turn in degrees)``; every action also levels the
view toward the navigators' pitch."""


@dataclass(frozen=True)
class DQNArchitecture:
    """The Q-network's shape."""

    obs_size: tuple[int, int] = (40, 64)
    channels: tuple[int, ...] = (16, 32, 32)
    strides: tuple[int, ...] = (2, 2, 2)
    frame_dim: int = 128
    """Width of the frame embedding."""
    goal_dim: int = 64
    """Width of the goal embedding."""
    hidden: int = 128
    """Width of the hidden layer over both."""
    actions: int = len(DQN_ACTIONS)

    def __post_init__(self) -> None:
        convolution_shapes(self.channels, self.strides)
        if min(*self.obs_size, self.frame_dim, self.goal_dim, self.hidden) < 1:
            raise ValueError(f"need positive sizes, got {self}")
        if self.actions != len(DQN_ACTIONS):
            raise ValueError(f"the DQN navigator has {len(DQN_ACTIONS)} actions, not "
                             f"{self.actions}")

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Each parameter's shape (torch layouts)."""
        shapes = convolution_shapes(self.channels, self.strides)
        linears = {"image.frame": (self.frame_dim, int(np.prod(
                       feature_map(self.obs_size, self.channels, self.strides)))),
                   "goal": (self.goal_dim, 6),
                   "hidden": (self.hidden, self.frame_dim + self.goal_dim),
                   "q": (self.actions, self.hidden)}
        for name, shape in linears.items():
            shapes[f"{name}.weight"] = shape
            shapes[f"{name}.bias"] = shape[:1]
        return shapes


class DQNWeights(Weights):
    """The DQN navigator's parameters (float32, torch layouts) and architecture."""

    FORMAT: ClassVar[str] = "mrsteve-dqn-navigator"
    VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "DQN navigator"
    ARCHITECTURE: ClassVar[type] = DQNArchitecture

    architecture: DQNArchitecture


class QNetwork:
    """Numpy inference of :class:`DQNWeights`: Q-values of a batch of frames and goals."""

    def __init__(self, weights: DQNWeights) -> None:
        arch, p = weights.architecture, weights.parameters
        self.image = FrameEncoder(p, arch.obs_size, arch.channels, arch.strides)
        self.goal = (p["goal.weight"].T.copy(), p["goal.bias"])
        self.head = [(p[f"{name}.weight"].T.copy(), p[f"{name}.bias"])
                     for name in ("hidden", "q")]

    def __call__(self, rgb: np.ndarray, goal: np.ndarray) -> np.ndarray:
        """``float32[N, actions]`` for frames ``uint8[N, H, W, 3]`` and goal features
        ``float32[N, 6]``."""
        goal_embedding = np.maximum(goal @ self.goal[0] + self.goal[1], 0.0)
        x = np.concatenate([self.image(rgb), goal_embedding], axis=1)
        return mlp(self.head, x).astype(np.float32)


def dqn_action(index: int, pitch: float, config: NavigatorConfig) -> Action:
    """The environment action of :data:`DQN_ACTIONS` ``[index]`` for a view pitched ``pitch``
    degrees (the view is levelled toward ``config.pitch``)."""
    forward, jump, turn = DQN_ACTIONS[index]
    return {"forward": int(forward), "jump": int(jump),
            "camera": np.array([clamp(config.pitch - pitch, config.max_turn), turn],
                               dtype=np.float32)}


class DQNNavigator:
    """pi_L-Nav as Plan4MC's DQN (module docstring); implements
    :class:`~mrsteve.control.navigation.Navigator`."""

    reads = ("rgb", "pose")
    """The observation keys it reads."""

    EPSILON = 0.05
    """Chance of a random action at each step (Plan4MC's release acts so)."""

    def __init__(self, config: NavigatorConfig | None = None, *, weights: DQNWeights) -> None:
        self.config = config or NavigatorConfig()
        self.success_radius = self.config.success_radius
        self.weights = weights
        self.network = QNetwork(weights)
        self._rng = np.random.default_rng(0)

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng

    def observe(self, obs: Observation) -> None:
        """Nothing to record (no memory)."""

    def reached(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        return within(obs, goal_xz, self.success_radius)

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """No map, no verdict: never known to be out of reach."""
        return False

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        if self.reached(obs, goal_xz):
            return noop_action()
        shape = (*self.weights.architecture.obs_size, 3)
        if obs["rgb"].shape != shape:
            raise ValueError(f"the DQN navigator's weights take frames of {shape}, got "
                             f"{obs['rgb'].shape}")
        x, _, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        goal = goal_features(goal_xz[0] - x, goal_xz[1] - z, yaw, pitch)
        return dqn_action(self.choose(obs["rgb"], goal), pitch, self.config)

    def choose(self, rgb: np.ndarray, goal: np.ndarray) -> int:
        """The index in :data:`DQN_ACTIONS` taken for frame ``rgb`` and goal features ``goal``:
        at random with chance :attr:`EPSILON`, else the largest Q-value's."""
        if self._rng.random() < self.EPSILON:
            return int(self._rng.integers(len(DQN_ACTIONS)))
        return int(np.argmax(self.network(rgb[None], goal[None])[0]))


def load_shipped_dqn_navigator() -> DQNWeights:
    """The shipped weights (read once per process)."""
    return DQNWeights.read(PACKAGE_ROOT / SHIPPED_DQN_NAVIGATOR)


__all__ = ["DQN_ACTIONS", "SHIPPED_DQN_NAVIGATOR", "DQNArchitecture", "DQNNavigator",
           "DQNWeights", "QNetwork", "dqn_action", "load_shipped_dqn_navigator"]
