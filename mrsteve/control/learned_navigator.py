"""The learned navigator: a goal-conditioned policy over RGB frames (VPT-Nav's role).

In the paper pi_L-Nav is VPT-Nav: VPT (an image encoder and a Transformer-XL cloned from people
playing) fine-tuned with PPO to reach an ``(x, z)`` goal, the goal encoded by a 4-layer MLP from
``goal - position`` and the view angles and added after the transformer (appendix
"Goal-Conditioned VPT Navigator Details"). This policy is the same kind of model at the scale of
the embedded world, trained by :mod:`mrsteve.train.navigator` (``mrsteve train navigator``; torch
is needed there only):

* image encoder: ``3 x 3`` convolutions with ReLU and a linear layer per ``uint8[H, W, 3]`` frame;
* core: one causal transformer block (pre-norm, multi-head attention over the last ``context``
  frames with a learned bias per head and offset, then an MLP): memory of the recent frames, as
  the TrXL's;
* goal encoder (:func:`goal_features`): ``goal - position`` on the ground plane rescaled to length
  at most 20 and squashed by symlog, with the cosine and sine of yaw and pitch, through a 4-layer
  MLP; added to the frame embedding before the core (``trxl``, "TrXL-Cond."), after it (``head``,
  "Head-Cond.", the paper's choice), at both (``dual``), or not at all (``none``: the foundation
  policy, which has no goal);
* heads: one Bernoulli per button of :data:`BUTTONS` and a categorical over :data:`CAMERA_BINS`
  camera bins per axis, binned as VPT bins its camera (mu-law, mu = 10, +-10 degrees); and,
  where the weights have one (``give_up``), a give-up head: one logistic output over the same
  features, the chance that the goal is out of reach (beyond VPT-Nav, which has no map and no
  verdict: fitted to the depth navigator's verdicts,
  :mod:`mrsteve.train.navigator_give_up`).

It reads only the RGB frame and the pose (:attr:`LearnedNavigator.reads`): no depth, no semantics,
no map. Like VPT-Nav's wrapper it forces a jump when the agent stops moving. Inference is numpy
(:mod:`mrsteve.nn`); the weights ship in ``data/navigator.npz``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from mrsteve.control.motion import ProgressTracker, StallTracker, noop_action
from mrsteve.control.navigation import NavigatorConfig, within
from mrsteve.digests import PACKAGE_ROOT
from mrsteve.nn import (
    CausalCore,
    FrameEncoder,
    PolicyArchitecture,
    Weights,
    layer_norm,
    logit,
    mlp,
    press_probability,
    sample_category,
    symlog,
)
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera

SHIPPED_NAVIGATOR = "control/data/navigator.npz"
"""The shipped weights, below ``mrsteve/`` (``mrsteve train navigator``)."""

FORMAT = "mrsteve-navigator"
"""The ``format`` entry of a weights file's metadata."""

VERSION = 1
"""Weights file version this code reads and writes."""

BUTTONS = ("forward", "jump", "sprint")
"""The keys the policy presses (what the scripted navigators press)."""

CAMERA_BINS = 11
"""Camera bins per axis (VPT: 11)."""
CAMERA_MAX = 10.0
"""Largest camera change per step, degrees (VPT: 10)."""
CAMERA_MU = 10.0
"""mu of the mu-law camera quantisation (VPT: 10)."""

GOAL_CLIP = 20.0
"""The relative goal is rescaled to at most this length before symlog (the release)."""
GOAL_FEATURES = 6
"""Goal encoder inputs: symlog of the rescaled ``(dx, dz)``, cos and sin of yaw and pitch."""

CONDITIONING = ("none", "trxl", "head", "dual")
"""Where the goal embedding is added: nowhere (the foundation policy), to the frame embedding
before the core (TrXL-Cond.), after the core (Head-Cond.), or both (Dual-Cond.)."""


def camera_bin_values() -> np.ndarray:
    """``float32[CAMERA_BINS]``: the camera change (degrees) of each bin, VPT's mu-law decoding
    of evenly spaced codes in ``[-1, 1]``."""
    codes = np.linspace(-1.0, 1.0, CAMERA_BINS)
    values = np.sign(codes) * ((1.0 + CAMERA_MU) ** np.abs(codes) - 1.0) / CAMERA_MU
    return (values * CAMERA_MAX).astype(np.float32)


def camera_bins(degrees: np.ndarray) -> np.ndarray:
    """The bin of each camera change (VPT's mu-law encoding, rounded to the nearest code)."""
    x = np.clip(np.asarray(degrees, dtype=np.float64), -CAMERA_MAX, CAMERA_MAX) / CAMERA_MAX
    codes = np.sign(x) * np.log1p(CAMERA_MU * np.abs(x)) / np.log1p(CAMERA_MU)
    return np.rint((codes + 1.0) * (CAMERA_BINS - 1) / 2).astype(np.int64)


def goal_features(dx: np.ndarray | float, dz: np.ndarray | float, yaw: np.ndarray | float,
                  pitch: np.ndarray | float) -> np.ndarray:
    """``float32[..., 6]``: the goal encoder's inputs for the goal ``(dx, dz)`` blocks away on
    the ground plane and the view angles (degrees). One step's numbers (Python floats, as the
    agent passes them) take a scalar path, the same values without building arrays."""
    if all(isinstance(value, float) for value in (dx, dz, yaw, pitch)):
        length = np.hypot(dx, dz)
        scale = GOAL_CLIP / max(length, 1e-12) if length > GOAL_CLIP else 1.0
        yaw, pitch = math.radians(yaw), math.radians(pitch)
        return np.array([_symlog(dx * scale), _symlog(dz * scale), math.cos(yaw), math.sin(yaw),
                         math.cos(pitch), math.sin(pitch)], np.float32)
    dx, dz = np.asarray(dx, np.float64), np.asarray(dz, np.float64)
    length = np.hypot(dx, dz)
    scale = np.where(length > GOAL_CLIP, GOAL_CLIP / np.maximum(length, 1e-12), 1.0)
    yaw, pitch = np.radians(yaw), np.radians(pitch)
    return np.stack([symlog(dx * scale), symlog(dz * scale), np.cos(yaw), np.sin(yaw),
                     np.cos(pitch), np.sin(pitch)], axis=-1).astype(np.float32)


def _symlog(x: float) -> float:
    """:func:`~mrsteve.nn.symlog` of one number."""
    return 0.0 if x == 0.0 else math.copysign(math.log1p(abs(x)), x)


@dataclass(frozen=True)
class NavigatorArchitecture(PolicyArchitecture):
    """The shape of a learned navigator: the foundation policy's image encoder and core, and its
    goal encoders; the training code builds the same network from it."""

    goal_hidden: int = 128
    """Hidden width of the goal encoder (a 4-layer MLP)."""
    conditioning: str = "head"
    """One of :data:`CONDITIONING`."""
    give_up: bool = False
    """Whether the weights have a give-up head (``head.give_up``)."""

    def __post_init__(self) -> None:
        if self.give_up and self.conditioning == "none":
            raise ValueError("a give-up head needs a goal: conditioning 'none' has none")
        if self.conditioning not in CONDITIONING:
            raise ValueError(f"conditioning must be one of {', '.join(CONDITIONING)}, got "
                             f"{self.conditioning!r}")
        super().__post_init__()

    @property
    def goal_sites(self) -> tuple[str, ...]:
        """The goal encoders the conditioning has: ``goal_in`` (before the core), ``goal_out``
        (after it)."""
        return {"none": (), "trxl": ("goal_in",), "head": ("goal_out",),
                "dual": ("goal_in", "goal_out")}[self.conditioning]

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name and shape of every parameter (torch's layouts)."""
        shapes = self.policy_shapes(len(BUTTONS), 2 * CAMERA_BINS)
        for site in self.goal_sites:
            widths = (GOAL_FEATURES, self.goal_hidden, self.goal_hidden, self.goal_hidden,
                      self.dim)
            for layer in range(4):
                shapes[f"{site}.{2 * layer}.weight"] = (widths[layer + 1], widths[layer])
                shapes[f"{site}.{2 * layer}.bias"] = (widths[layer + 1],)
        if self.give_up:
            shapes["head.give_up.weight"] = (1, self.dim)
            shapes["head.give_up.bias"] = (1,)
        return shapes


@dataclass(frozen=True)
class NavigatorWeights(Weights):
    """A learned navigator's parameters (float32, torch layouts) and architecture."""

    FORMAT: ClassVar[str] = FORMAT
    VERSION: ClassVar[int] = VERSION
    WHAT: ClassVar[str] = "navigator"
    ARCHITECTURE: ClassVar[type] = NavigatorArchitecture

    architecture: NavigatorArchitecture

    def architecture_record(self) -> dict[str, object]:
        """``give_up`` only when set, so weights made before the head existed keep their file
        and digest."""
        fields = asdict(self.architecture)
        if not self.architecture.give_up:
            del fields["give_up"]
        return fields


def load_navigator_weights(path: str | Path) -> NavigatorWeights:
    """Weights from an ``.npz`` file :meth:`NavigatorWeights.save` wrote; anything else raises a
    ``ValueError`` that names what is wrong."""
    return NavigatorWeights.load(path)


def load_shipped_navigator() -> NavigatorWeights:
    """The weights shipped in ``data/navigator.npz`` (read once per process)."""
    return NavigatorWeights.read(PACKAGE_ROOT / SHIPPED_NAVIGATOR)


class NavigatorPolicy:
    """Numpy inference of a :class:`NavigatorWeights` policy, one step at a time: the core keeps
    the keys and values of the last ``context`` frames in a ring."""

    def __init__(self, weights: NavigatorWeights) -> None:
        arch, p = weights.architecture, weights.parameters
        self.architecture = arch
        self.image = FrameEncoder(p, arch.obs_size, arch.channels, arch.strides)
        self.core = CausalCore(p, arch.heads, arch.context)
        self.norm = (p["head.norm.weight"], p["head.norm.bias"])
        self.buttons = (p["head.buttons.weight"].T.copy(), p["head.buttons.bias"])
        self.camera = (p["head.camera.weight"].T.copy(), p["head.camera.bias"])
        self.goals = {site: [(p[f"{site}.{2 * layer}.weight"].T.copy(),
                              p[f"{site}.{2 * layer}.bias"]) for layer in range(4)]
                      for site in arch.goal_sites}
        self.give_up = ((p["head.give_up.weight"][0].copy(), float(p["head.give_up.bias"][0]))
                        if arch.give_up else None)
        self.features: np.ndarray | None = None
        """``float32[dim]``: the last step's features, what every head reads."""

    def reset(self) -> None:
        """Forget the frames seen so far."""
        self.core.reset()

    def frame_embedding(self, rgb: np.ndarray) -> np.ndarray:
        """``float32[N, dim]`` of ``uint8[N, H, W, 3]`` frames."""
        return self.image(rgb)

    def goal_embedding(self, site: str, goal: np.ndarray) -> np.ndarray:
        return mlp(self.goals[site], goal)

    def step(self, rgb: np.ndarray, goal: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Logits of one step: ``(float32[len(BUTTONS)], float32[2, CAMERA_BINS])`` (pitch,
        yaw) for frame ``uint8[H, W, 3]`` and goal features ``float32[6]`` (ignored by a
        policy without a goal)."""
        x = self.image(rgb[None])[0]
        if "goal_in" in self.goals:
            x = x + self.goal_embedding("goal_in", goal)
        x = self.core.step(x)
        if "goal_out" in self.goals:
            x = x + self.goal_embedding("goal_out", goal)
        y = self.features = layer_norm(x, *self.norm)
        buttons = y @ self.buttons[0] + self.buttons[1]
        camera = (y @ self.camera[0] + self.camera[1]).reshape(2, CAMERA_BINS)
        return buttons.astype(np.float32), camera.astype(np.float32)

    def give_up_logit(self) -> float:
        """The give-up head's logit at the last step (weights with a give-up head only)."""
        if self.give_up is None or self.features is None:
            raise ValueError("no give-up head in these weights, or no step taken yet")
        return float(self.features @ self.give_up[0] + self.give_up[1])


class LearnedNavigator:
    """pi_L-Nav as a learned policy over the RGB frame and the pose (module docstring);
    implements :class:`~mrsteve.control.navigation.Navigator`.

    Actions are sampled from the policy with the generator passed to :meth:`reset` (``sample``,
    as VPT acts) or the most likely taken. A new goal clears the core's memory (a new
    navigation run, as VPT-Nav is given one goal per run). After ``stall_jump`` stalled steps in a
    row (:class:`~mrsteve.control.motion.StallTracker`) it jumps, as VPT-Nav's wrapper forces a
    jump when the agent stops moving. Having no map, it judges a goal out of reach
    (:meth:`blocked`) by its own motion alone: ``stuck_steps`` stalled steps in a row (forward
    held, jumps forced, no headway: where the depth navigator replans around the column ahead),
    ``idle_steps`` steps in a row standing still whatever it pressed (its policy neither walks
    nor turns away) or ``no_progress_steps`` steps without coming ``progress_gain`` blocks closer
    than ever before (:class:`~mrsteve.control.motion.ProgressTracker`: where the depth
    navigator starts a detour); having neither a plan nor a detour, it gives up, so that an
    explorer gives the goal up instead of pushing into a wall or a tree until its timeout.
    Weights with a give-up head also give a goal up once the head has put the chance that it is
    out of reach at ``give_up_probability`` or more for ``give_up_steps`` steps in a row: a goal
    beyond a wall is then found out from the view of the wall, before the motion rules see it.
    Its settings are the navigators' (:class:`~mrsteve.control.navigation.NavigatorConfig`: the
    success radius, the stall and progress rules); ``weights``: the policy's (the navigator
    registry, :mod:`mrsteve.control.registry`, gives the shipped ones)."""

    reads = ("rgb", "pose")
    """The observation keys it reads."""

    def __init__(self, config: NavigatorConfig | None = None, *,
                 weights: NavigatorWeights, sample: bool = True) -> None:
        config = config or NavigatorConfig()
        if weights.architecture.conditioning == "none":
            raise ValueError("these weights are a foundation policy without a goal encoder "
                             "(conditioning 'none'); a navigator needs goal-conditioned weights")
        self.weights = weights
        self.policy = NavigatorPolicy(weights)
        self.success_radius = config.success_radius
        self.sample = sample
        self.stall_jump = config.stall_jump
        self.stuck_steps = config.stuck_steps
        self.idle_steps = config.idle_steps
        self._give_up_threshold = logit(config.give_up_probability)
        self.give_up_steps = config.give_up_steps
        self._judged_out_of_reach = 0
        """Steps in a row the give-up head judged the current goal out of reach."""
        self._stall = StallTracker(config.stall_speed)
        self._progress = ProgressTracker(config.progress_gain, config.no_progress_steps)
        self._camera_values = camera_bin_values()
        self._rng = np.random.default_rng(0)
        self._goal: tuple[float, float] | None = None

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng
        self._goal = None
        self._judged_out_of_reach = 0
        self._stall.reset()
        self._progress.reset()
        self.policy.reset()

    def observe(self, obs: Observation) -> None:
        """Nothing to record (the core remembers the frames it acted on)."""

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """Whether the current goal saw ``stuck_steps`` stalled steps in a row, ``idle_steps``
        steps in a row standing still, no progress for ``no_progress_steps`` steps or
        ``give_up_steps`` steps in a row judged out of reach by the give-up head (a new goal
        never is)."""
        return ((float(goal_xz[0]), float(goal_xz[1])) == self._goal
                and (self._progress.stuck or self._stall.stalled >= self.stuck_steps
                     or self._stall.still >= self.idle_steps
                     or self._judged_out_of_reach >= self.give_up_steps))

    def reached(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        return within(obs, goal_xz, self.success_radius)

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        goal = (float(goal_xz[0]), float(goal_xz[1]))
        if goal != self._goal:
            self._goal = goal
            self.policy.reset()
            self._progress.reset()
            self._stall.clear()
            self._judged_out_of_reach = 0
        x, _, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        self._stall.update(x, z)
        if self.reached(obs, goal):
            return noop_action()
        self._progress.update(math.hypot(goal[0] - x, goal[1] - z))
        rgb = obs["rgb"]
        shape = (*self.weights.architecture.obs_size, 3)
        if rgb.shape != shape:
            raise ValueError(f"the navigator's weights take frames of {shape}, got {rgb.shape}")
        buttons, camera = self.policy.step(rgb, goal_features(goal[0] - x, goal[1] - z, yaw,
                                                              pitch))
        if self.policy.give_up is not None:
            judged = self.policy.give_up_logit() >= self._give_up_threshold
            self._judged_out_of_reach = self._judged_out_of_reach + 1 if judged else 0
        if self.sample:
            draws = self._rng.random(len(BUTTONS) + 2)
            pressed = draws[:len(BUTTONS)] < press_probability(buttons)
            bins = [sample_category(axis, draw) for axis, draw in zip(camera, draws[len(BUTTONS):],
                                                                strict=True)]
        else:
            pressed, bins = buttons > 0.0, [int(np.argmax(axis)) for axis in camera]
        action: Action = {name: int(press) for name, press in zip(BUTTONS, pressed, strict=True)}
        self._stall.pressed(bool(action["forward"]))
        if action["forward"] and self._stall.stalled >= self.stall_jump:
            action["jump"] = 1
        action["camera"] = self._camera_values[bins].astype(np.float32)
        return action
