"""The learned instruction policy: STEVE-1's recipe over RGB frames (pi_Inst).

In the paper pi_Inst is STEVE-1: VPT fine-tuned by goal-conditioned behaviour cloning, the goal a
MineCLIP embedding of a later clip of the same trajectory (hindsight relabelling), a linear
projection of the goal added to the image features; a prior maps an instruction's text embedding
to a visual goal embedding, and classifier-free guidance mixes the conditioned and unconditioned
logits at run time (appendix "Solver Module Details"). This policy is the same kind of model at
the embedded world's scale, trained by :mod:`mrsteve.train.instruction` (``mrsteve train
instruction-policy``; torch is needed there only):

* image encoder and core: the learned navigator's (:mod:`mrsteve.control.learned_navigator`; fine-tuning
  starts from its foundation policy, as STEVE-1 starts from VPT);
* goal: the pixel encoder's clip embedding (:class:`~mrsteve.perception.pixels.PixelEncoder`,
  MineCLIP's role), through a linear projection added to the frame embedding before the core;
  a zero goal is the unconditioned policy (the goal dropped in training);
* prior: an MLP from the pixel encoder's text embedding of the prompt to a visual goal
  embedding (:meth:`InstructionNet.prior`);
* heads: one Bernoulli per key of :data:`INSTRUCTION_BUTTONS`, VPT's camera bins per axis;
* guidance: ``uncond + scale * (cond - uncond)`` on every head's logits, so scale 0 is the
  unconditioned policy, 1 the conditioned one and STEVE-1's ``(1 + l) cond - l uncond`` with
  l = 6 is scale 7 (:attr:`InstructionPolicyConfig.guidance`); the camera head may take its
  own scale (:attr:`InstructionPolicyConfig.camera_guidance`).

It reads only the RGB frame (:attr:`LearnedSkills.reads`) and the prompt; the task holds the
item it needs in hand, as the tasks set it (``mrsteve/tasks/data/tasks.toml``). Inference is
numpy (:mod:`mrsteve.nn`); the weights ship in ``data/instruction.npz``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from mrsteve.control.learned_navigator import CAMERA_BINS, camera_bin_values
from mrsteve.control.skill_book import SkillBook, load_skills
from mrsteve.control.skills import GO_EXPLORE
from mrsteve.digests import OMITTED_WHEN_DEFAULT, PACKAGE_ROOT
from mrsteve.nn import (
    CausalCore,
    FrameEncoder,
    PolicyArchitecture,
    Weights,
    layer_norm,
    mlp,
    press_probability,
    sample_category,
)
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera

SHIPPED_INSTRUCTION_POLICY = "control/data/instruction.npz"
"""The shipped weights, below ``mrsteve/`` (``mrsteve train instruction-policy``)."""

INSTRUCTION_BUTTONS = ("forward", "left", "right", "jump", "sprint", "attack", "use")
"""The keys the policy presses (what the scripted skills press)."""


@dataclass(frozen=True)
class InstructionArchitecture(PolicyArchitecture):
    """The shape of a learned instruction policy: the foundation policy's image encoder and core,
    a goal projection and the prior; the training code builds the same network."""

    goal_dim: int = 128
    """Width of a goal embedding (the pixel encoder's)."""
    text_dim: int = 128
    """Width of a text embedding (the pixel encoder's)."""
    prior_hidden: int = 256
    """Hidden width of the prior (a 3-layer MLP)."""
    goal_encoder: str = ""
    """SHA-256 of the pixel encoder weights whose embeddings the goals and the prior are in."""

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name and shape of every parameter (torch's layouts)."""
        d, hidden = self.dim, self.prior_hidden
        shapes = self.policy_shapes(len(INSTRUCTION_BUTTONS), 2 * CAMERA_BINS)
        linears = {"goal": (d, self.goal_dim), "prior.0": (hidden, self.text_dim),
                   "prior.2": (hidden, hidden), "prior.4": (self.goal_dim, hidden)}
        for name, shape in linears.items():
            shapes[f"{name}.weight"] = shape
            shapes[f"{name}.bias"] = shape[:1]
        return shapes


@dataclass(frozen=True)
class InstructionWeights(Weights):
    """A learned instruction policy's parameters (float32, torch layouts) and architecture."""

    FORMAT: ClassVar[str] = "mrsteve-instruction-policy"
    VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "instruction policy"
    ARCHITECTURE: ClassVar[type] = InstructionArchitecture

    architecture: InstructionArchitecture


def load_instruction_weights(path: str | Path) -> InstructionWeights:
    """Weights from an ``.npz`` file :meth:`InstructionWeights.save` wrote; anything else raises
    a ``ValueError`` that names what is wrong."""
    return InstructionWeights.load(path)


def load_shipped_instruction_policy() -> InstructionWeights:
    """The weights shipped in ``data/instruction.npz`` (read once per process)."""
    return InstructionWeights.read(PACKAGE_ROOT / SHIPPED_INSTRUCTION_POLICY)


class InstructionNet:
    """Numpy inference of :class:`InstructionWeights`, one step at a time, with classifier-free
    guidance: the conditioned and the unconditioned passes each keep their own memory of the
    last ``context`` frames."""

    def __init__(self, weights: InstructionWeights) -> None:
        arch, p = weights.architecture, weights.parameters
        self.architecture = arch
        self.image = FrameEncoder(p, arch.obs_size, arch.channels, arch.strides)
        self.cores = (CausalCore(p, arch.heads, arch.context),
                      CausalCore(p, arch.heads, arch.context))
        self.goal = (p["goal.weight"].T.copy(), p["goal.bias"])
        self.norm = (p["head.norm.weight"], p["head.norm.bias"])
        self.buttons = (p["head.buttons.weight"].T.copy(), p["head.buttons.bias"])
        self.camera = (p["head.camera.weight"].T.copy(), p["head.camera.bias"])
        self.prior_layers = [(p[f"prior.{i}.weight"].T.copy(), p[f"prior.{i}.bias"])
                             for i in (0, 2, 4)]

    def reset(self) -> None:
        """Forget the frames seen so far."""
        for core in self.cores:
            core.reset()

    def prior(self, text: np.ndarray) -> np.ndarray:
        """The unit-length visual goal embedding ``float32[goal_dim]`` for a text embedding."""
        goal = mlp(self.prior_layers, np.asarray(text, np.float32))
        return (goal / max(float(np.linalg.norm(goal)), 1e-12)).astype(np.float32)

    def step(self, rgb: np.ndarray, goal: np.ndarray, guidance: float = 1.0,
             camera_guidance: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Guided logits of one step: ``(float32[len(INSTRUCTION_BUTTONS)], float32[2,
        CAMERA_BINS])`` for frame ``uint8[H, W, 3]`` and goal embedding ``float32[goal_dim]``
        (module docstring): the keys' at scale ``guidance``, the camera's at ``camera_guidance``
        (``None``: the same). Scales of 1 alone run the conditioned pass only, of 0 alone the
        unconditioned one only."""
        camera = guidance if camera_guidance is None else camera_guidance
        frame = self.image(rgb[None])[0]
        weight, bias = self.goal
        conditioned = unconditioned = None
        if guidance != 0.0 or camera != 0.0:
            conditioned = self._head(self.cores[0].step(frame + goal @ weight + bias))
        if guidance != 1.0 or camera != 1.0:
            unconditioned = self._head(self.cores[1].step(frame + bias))
        if conditioned is None:
            return unconditioned
        if unconditioned is None:
            return conditioned
        return tuple((u + scale * (c - u)).astype(np.float32) for c, u, scale
                     in zip(conditioned, unconditioned, (guidance, camera), strict=True))

    def _head(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = layer_norm(x, *self.norm)
        buttons = y @ self.buttons[0] + self.buttons[1]
        camera = (y @ self.camera[0] + self.camera[1]).reshape(2, CAMERA_BINS)
        return buttons.astype(np.float32), camera.astype(np.float32)


@dataclass(frozen=True)
class InstructionPolicyConfig:
    """Run-time settings of :class:`LearnedSkills`."""

    guidance: float | None = None
    """Classifier-free guidance scale (module docstring; 7 is STEVE-1's l = 6); ``None``: the
    scale the weights' training validated (``info["guidance"]``), else 1."""
    camera_guidance: float | None = None
    """The camera head's own guidance scale (1 leaves the camera to the conditioned pass while
    the keys stay guided); ``None``: the one the weights' training validated
    (``info["camera_guidance"]``), else the keys' scale, every head alike."""
    sample: bool = True
    """Sample the actions (as STEVE-1 acts), else take the most likely."""
    weights: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    """A weights file (``mrsteve train instruction-policy``) to run with in place of the shipped
    one: an absolute path, which every worker reads."""
    weights_sha256: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    """The SHA-256 of :attr:`weights` (a file changed since is refused)."""

    def __post_init__(self) -> None:
        for name in ("guidance", "camera_guidance"):
            scale = getattr(self, name)
            if scale is not None and not (np.isfinite(scale) and scale >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {scale}")
        if (self.weights is None) != (self.weights_sha256 is None):
            raise ValueError("an instruction-policy weights file is named with its SHA-256")

    def load_weights(self) -> InstructionWeights:
        """The weights to run with: :attr:`weights` (checked against :attr:`weights_sha256`),
        else the shipped ones."""
        if self.weights is None:
            return load_shipped_instruction_policy()
        return InstructionWeights.read(self.weights, self.weights_sha256)


class LearnedSkills:
    """pi_Inst as a learned policy over the RGB frame (module docstring); implements
    :class:`~mrsteve.control.skills.GoalConditionedPolicy`. A prompt is one of the skill book's
    (:mod:`mrsteve.control.skill_book`, aliases included: what the agent is told in Execute
    mode), or :data:`~mrsteve.control.skills.GO_EXPLORE`; an image goal is a clip embedding of
    the pixel encoder (:meth:`follow`). A new prompt or goal clears the core's memory. Actions
    are sampled with the generator passed to :meth:`reset`. ``embed_text`` is the text tower of
    the pixel encoder whose SHA-256 is ``text_encoder``
    (:meth:`~mrsteve.perception.pixels.PixelEncoder.embed_words`): the one the ``weights`` were
    trained with (the shipped ones: :func:`load_shipped_instruction_policy`).

    "Go explore": the text tower knows no word for it (its vocabulary is the tasks' prompts), so
    the policy is told it as no goal at all, STEVE-1's zero goal: the unconditioned pass, which
    cloning learned from the skills' play over every goal (searching included) and which
    classifier-free guidance mixes in at every step."""

    reads = ("rgb",)
    """The observation keys it reads."""

    def __init__(self, embed_text: Callable[[str], np.ndarray], text_encoder: str,
                 config: InstructionPolicyConfig | None = None, *,
                 weights: InstructionWeights,
                 skills: SkillBook | None = None) -> None:
        self.config = config or InstructionPolicyConfig()
        self.weights = weights
        if self.weights.architecture.goal_encoder != text_encoder:
            raise ValueError(
                f"these instruction-policy weights were trained on the goals of pixel encoder "
                f"{self.weights.architecture.goal_encoder or '(unnamed)'}, not the one given "
                f"({text_encoder}): retrain them (mrsteve train instruction-policy)")
        self.net = InstructionNet(self.weights)
        self.guidance = (float(self.weights.info.get("guidance", 1.0))
                         if self.config.guidance is None else self.config.guidance)
        """The guidance scale it acts with."""
        camera = (self.weights.info.get("camera_guidance") if self.config.camera_guidance is None
                  else self.config.camera_guidance)
        self.camera_guidance = self.guidance if camera is None else float(camera)
        """The camera head's guidance scale."""
        self.skills = skills or load_skills()
        self._embed_text = embed_text
        self._goals: dict[str, np.ndarray] = {}
        self._camera_values = camera_bin_values()
        self._rng = np.random.default_rng(0)
        self._prompt: str | bytes | None = None

    @property
    def goal_encoder(self) -> str:
        """SHA-256 of the pixel encoder whose clip embeddings are its goals."""
        return self.weights.architecture.goal_encoder

    def goal(self, prompt: str) -> np.ndarray:
        """The prior's visual goal for ``prompt``, zeros for
        :data:`~mrsteve.control.skills.GO_EXPLORE` (class docstring; an unknown prompt raises
        ``ValueError`` listing the known ones)."""
        if prompt not in self._goals:
            if prompt == GO_EXPLORE:
                self._goals[prompt] = np.zeros(self.weights.architecture.goal_dim, np.float32)
            else:
                skill = self.skills.skill(prompt)
                self._goals[prompt] = self.net.prior(self._embed_text(skill.prompt))
        return self._goals[prompt]

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng
        self._prompt = None
        self.net.reset()

    def act(self, obs: Observation, prompt: str) -> Action:
        return self._act(obs, self.goal(prompt), prompt)

    def follow(self, obs: Observation, goal: np.ndarray) -> Action:
        """The next action toward an image goal: ``goal``, a clip embedding of the pixel encoder
        :attr:`goal_encoder` names (STEVE-1's visual goals: the prior's text goals live in the
        same space)."""
        goal = np.asarray(goal, dtype=np.float32)
        if goal.shape != (self.weights.architecture.goal_dim,):
            raise ValueError(f"a goal is a clip embedding of {self.weights.architecture.goal_dim}"
                             f" values, got shape {goal.shape}")
        return self._act(obs, goal, goal.tobytes())

    def _act(self, obs: Observation, goal: np.ndarray, key: str | bytes) -> Action:
        """One step toward ``goal``; ``key`` names it (a new one clears the core's memory)."""
        if key != self._prompt:
            self._prompt = key
            self.net.reset()
        rgb = obs["rgb"]
        shape = (*self.weights.architecture.obs_size, 3)
        if rgb.shape != shape:
            raise ValueError(f"the instruction policy's weights take frames of {shape}, got "
                             f"{rgb.shape}")
        buttons, camera = self.net.step(rgb, goal, self.guidance, self.camera_guidance)
        if self.config.sample:
            draws = self._rng.random(len(INSTRUCTION_BUTTONS) + 2)
            pressed = draws[:len(INSTRUCTION_BUTTONS)] < press_probability(buttons)
            bins = [sample_category(axis, draw)
                    for axis, draw in zip(camera, draws[len(INSTRUCTION_BUTTONS):], strict=True)]
        else:
            pressed, bins = buttons > 0.0, [int(np.argmax(axis)) for axis in camera]
        action: Action = {name: int(press)
                          for name, press in zip(INSTRUCTION_BUTTONS, pressed, strict=True)}
        action["camera"] = self._camera_values[bins].astype(np.float32)
        return action
