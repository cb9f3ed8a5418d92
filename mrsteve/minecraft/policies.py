"""The released models as the agent's parts: MineCLIP as an encoder, VPT-Nav as a navigator,
STEVE-1 with its prior as an instruction policy.

* :class:`MineClipEncoder` implements :class:`~mrsteve.perception.Encoder`: a clip's embedding
  is MineCLIP's video embedding of its last 16 frames passed through the reward head's video
  adapter, L2-normalised, so that its dot product with a normalised text embedding is the cosine
  the reward head scales by ``exp(logit_scale)`` (the release's thresholds, 22.74 and 73.5 in
  those units with the scale at 100, are cosines 0.2274 and 0.735);
* :class:`VptNavNavigator` implements :class:`~mrsteve.control.navigation.Navigator`: VPT-Nav
  reads the frame and the goal relative to the pose each step, keeps its transformer memory for
  the current goal and, like the release's wrapper, jumps when it stops moving forward;
* :class:`Steve1Policy` implements :class:`~mrsteve.control.skills.InstructionPolicy`: the prior
  maps MineCLIP's text embedding of the skill's prompt to a visual goal, and classifier-free
  guidance mixes the policy conditioned on it with the policy given a zero goal,
  ``(1 + s) cond - s uncond`` on the log-probabilities (STEVE-1's ``cond_scale``, 6.0 in the
  release).

Frames are resized to what each model takes as VPT does
(:func:`~mrsteve.minecraft.actions.resize_bilinear`); VPT's joint actions become ours through
:func:`~mrsteve.minecraft.actions.from_vpt`. Actions are sampled with a torch generator seeded from the episode's generator, so the
same seed gives the same episode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np
import torch

from mrsteve.control.learned_navigator import goal_features
from mrsteve.control.motion import StallTracker, noop_action
from mrsteve.control.navigation import NavigatorConfig, within
from mrsteve.control.skill_book import SkillBook, load_skills
from mrsteve.control.skills import GO_EXPLORE
from mrsteve.minecraft.actions import from_vpt, resize_bilinear
from mrsteve.minecraft.checkpoints import read_checkpoint
from mrsteve.minecraft.mineclip import MineClip
from mrsteve.minecraft.tokenizer import clip_tokenizer
from mrsteve.minecraft.vpt import (
    PolicyOutput,
    State,
    Steve1PolicyNet,
    TranslatorVAE,
    VptNavPolicyNet,
)
from mrsteve.perception.encoder import Observation
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.thresholds import EncoderThresholds
from mrsteve.spaces import Action
from mrsteve.world.camera import Camera

WINDOW = 16
"""Frames per MineCLIP clip."""
RELEASE_TASK_THRESHOLD = 0.2274
"""The paper's task threshold h = 22.74 in MineCLIP's units (logit scale 100), as a cosine."""
RELEASE_EVENT_MERGE, RELEASE_EVENT_FOLD = 0.74, 0.735
"""The release's event-clustering thresholds (74.0 and 73.5) as cosines."""
STEVE1_GUIDANCE = 6.0
"""STEVE-1's ``cond_scale`` in the release's agent configuration."""


def release_thresholds(lexicon: Lexicon | None = None) -> EncoderThresholds:
    """MineCLIP's thresholds from the paper and the release (status ``estimate``: not measured
    here): h for every prompt of the lexicon, the event thresholds, and the fold threshold for
    image goals."""
    lexicon = lexicon or load_lexicon()
    task = MappingProxyType(dict.fromkeys(lexicon.texts, RELEASE_TASK_THRESHOLD))
    return EncoderThresholds(task, image_goal=RELEASE_EVENT_FOLD, event_merge=RELEASE_EVENT_MERGE,
                             event_fold=RELEASE_EVENT_FOLD)


def _rgb(observation: Observation, who: str) -> np.ndarray:
    try:
        rgb = observation["rgb"]
    except KeyError:
        raise KeyError(f"{who} reads observation['rgb'] (uint8[H, W, 3]); the observation has "
                       f"{sorted(observation)}") from None
    if not (isinstance(rgb, np.ndarray) and rgb.ndim == 3 and rgb.shape[2] == 3
            and rgb.dtype == np.uint8):
        raise ValueError(f"observation['rgb'] must be uint8[H, W, 3], got "
                         f"{getattr(rgb, 'dtype', type(rgb))} {getattr(rgb, 'shape', '')}")
    return rgb


def _normalised(x: torch.Tensor) -> np.ndarray:
    return torch.nn.functional.normalize(x.float(), dim=-1).cpu().numpy().astype(np.float32)


class MineClipEncoder:
    """MineCLIP as the agent's encoder (module docstring). The rolling window of :meth:`observe`
    keeps the last 16 frames' image features, so a step costs one frame through the image
    encoder plus the temporal transformer over the window."""

    reads = ("rgb",)
    """The observation keys it reads."""

    def __init__(self, model: MineClip, thresholds: EncoderThresholds | None = None,
                 lexicon: Lexicon | None = None, device: str | torch.device = "cpu") -> None:
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self._thresholds = thresholds or release_thresholds(lexicon)
        self._features = torch.zeros(WINDOW, model.config.embed_dim, device=self.device)
        self._filled = 0
        self._text_cache: dict[str, np.ndarray] = {}

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> MineClipEncoder:
        """The encoder of a MineCLIP checkpoint (``attn.pth``), checked key by key."""
        return cls(read_checkpoint(path, "mineclip").build(), **kwargs)

    @property
    def dim(self) -> int:
        return self.model.config.embed_dim

    @property
    def window(self) -> int:
        return WINDOW

    @property
    def thresholds(self) -> EncoderThresholds:
        return self._thresholds

    def task_threshold(self, prompt: str) -> float:
        return self._thresholds.task_threshold(prompt)

    @torch.no_grad()
    def frame_features(self, frames: Sequence[np.ndarray]) -> torch.Tensor:
        """``[N, dim]`` image features of ``uint8[H, W, 3]`` frames (resized to MineCLIP's
        resolution)."""
        size = self.model.config.resolution
        batch = np.stack([frame if frame.shape[:2] == size else resize_bilinear(frame, size)
                          for frame in frames])
        return self.model.encode_images(torch.from_numpy(batch).to(self.device))

    @torch.no_grad()
    def video_features(self, frames: Sequence[Observation]) -> torch.Tensor:
        """MineCLIP's ``encode_video`` of the last 16 of ``frames``: ``[dim]``, unnormalised
        (the embeddings STEVE-1 is conditioned on)."""
        clip = [_rgb(observation, type(self).__name__) for observation in frames][-WINDOW:]
        if not clip:
            raise ValueError("a clip needs at least one observation")
        return self.model.encode_video(self.frame_features(clip)[None])[0]

    @torch.no_grad()
    def _embed(self, video: torch.Tensor) -> np.ndarray:
        return _normalised(self.model.reward_head.adapt_video(video))

    def encode_frames(self, frames: Sequence[Observation]) -> np.ndarray:
        return self._embed(self.video_features(frames))

    def reset(self) -> None:
        self._filled = 0

    @torch.no_grad()
    def observe(self, observation: Observation) -> np.ndarray:
        feature = self.frame_features([_rgb(observation, type(self).__name__)])
        self._features = torch.cat([self._features[1:], feature])
        self._filled = min(self._filled + 1, WINDOW)
        return self._embed(self.model.encode_video(self._features[None, -self._filled:])[0])

    @torch.no_grad()
    def text_features(self, text: str) -> torch.Tensor:
        """MineCLIP's ``encode_text`` of any text: ``[dim]``, unnormalised."""
        tokens = clip_tokenizer().tokenize(text, self.model.config.context_length)
        return self.model.encode_text(torch.from_numpy(tokens).to(self.device))[0]

    def encode_text(self, prompt: str) -> np.ndarray:
        """The normalised text embedding (MineCLIP reads any text: no prompt is unknown)."""
        if prompt not in self._text_cache:
            self._text_cache[prompt] = _normalised(self.text_features(prompt))
        return self._text_cache[prompt].copy()


def _generator(rng: np.random.Generator) -> torch.Generator:
    """A torch generator seeded from the episode's generator."""
    return torch.Generator().manual_seed(int(rng.integers(2**62)))


def _sample(log_probs: torch.Tensor, generator: torch.Generator | None) -> int:
    """A draw from ``log_probs [n]`` (its most likely entry without a generator)."""
    if generator is None:
        return int(log_probs.argmax())
    return int(torch.multinomial(log_probs.float().exp(), 1, generator=generator))


class _Recurrent:
    """A VPT-family network stepped one frame at a time, keeping its transformer memory."""

    def __init__(self, net: torch.nn.Module, batch: int, device: str | torch.device) -> None:
        self.net = net.to(device).eval()
        self.device = torch.device(device)
        self.batch = batch
        self.size = tuple(net.config.img_shape[:2])
        self.reset()

    def reset(self) -> None:
        """Forget every frame: the next step starts an episode."""
        self.state: list[State] = self.net.initial_state(self.batch, self.device)
        self.first = True

    @torch.no_grad()
    def step(self, rgb: np.ndarray, goal: np.ndarray) -> PolicyOutput:
        """One step for frame ``uint8[H, W, 3]`` (shared by the batch) and ``goal [batch, g]``."""
        frame = rgb if rgb.shape[:2] == self.size else resize_bilinear(rgb, self.size)
        frames = torch.from_numpy(np.ascontiguousarray(frame)).to(self.device)
        frames = frames.expand(self.batch, 1, *frames.shape)
        first = torch.full((self.batch,), self.first, device=self.device)
        goals = torch.as_tensor(goal, dtype=torch.float32, device=self.device)[:, None]
        out = self.net(frames, first, self.state, goals)
        self.state, self.first = out.state, False
        return out


class VptNavNavigator:
    """VPT-Nav as the agent's navigator (module docstring); reads the frame and the pose."""

    reads = ("rgb", "pose")
    """The observation keys it reads."""

    def __init__(self, net: VptNavPolicyNet, config: NavigatorConfig | None = None, *,
                 device: str | torch.device = "cpu", sample: bool = True) -> None:
        config = config or NavigatorConfig()
        self.success_radius = config.success_radius
        self.stall_jump = config.stall_jump
        self.sample = sample
        self.policy = _Recurrent(net, 1, device)
        self._stall = StallTracker(config.stall_speed)
        self._generator: torch.Generator | None = None
        self._goal: tuple[float, float] | None = None

    @classmethod
    def from_file(cls, path: str | Path, model_file: str | Path | None = None,
                  **kwargs) -> VptNavNavigator:
        """The navigator of a VPT-Nav checkpoint (``vpt_nav.weights``), checked key by key."""
        return cls(read_checkpoint(path, "vpt-nav", model_file).build(), **kwargs)

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._generator = _generator(rng) if self.sample else None
        self._goal = None
        self._stall.reset()
        self.policy.reset()

    def observe(self, obs: Observation) -> None:
        """Nothing to record (the transformer remembers the frames it acted on)."""

    def blocked(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        """VPT-Nav has no map: it never knows a goal is out of reach."""
        return False

    def reached(self, obs: Observation, goal_xz: tuple[float, float]) -> bool:
        return within(obs, goal_xz, self.success_radius)

    def step(self, rgb: np.ndarray, goal: np.ndarray) -> tuple[int, int]:
        """VPT's joint ``(buttons, camera)`` indices for a frame and the goal features
        ``float32[6]`` (:func:`mrsteve.control.learned_navigator.goal_features`)."""
        out = self.policy.step(rgb, np.asarray(goal, np.float32)[None])
        return (_sample(out.buttons[0, 0], self._generator),
                _sample(out.camera[0, 0], self._generator))

    def act(self, obs: Observation, goal_xz: tuple[float, float]) -> Action:
        goal = (float(goal_xz[0]), float(goal_xz[1]))
        if goal != self._goal:
            self._goal = goal
            self.policy.reset()
            self._stall.clear()
        x, _, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        self._stall.update(x, z)
        if self.reached(obs, goal):
            return noop_action()
        rgb = _rgb(obs, type(self).__name__)
        action = from_vpt(*self.step(rgb, goal_features(goal[0] - x, goal[1] - z, yaw, pitch)))
        self._stall.pressed(bool(action["forward"]))
        if action["forward"] and self._stall.stalled >= self.stall_jump:
            action["jump"] = 1
        return action


class Steve1Policy:
    """STEVE-1 with its prior as the agent's instruction policy (module docstring). A prompt is
    one of the skill book's; a new prompt clears the policy's memory. ``text_features`` is
    MineCLIP's text encoder (:meth:`MineClipEncoder.text_features`)."""

    reads = ("rgb",)
    """The observation keys it reads."""

    def __init__(self, net: Steve1PolicyNet, prior: TranslatorVAE,
                 text_features: Callable[[str], torch.Tensor], *,
                 guidance: float = STEVE1_GUIDANCE, skills: SkillBook | None = None,
                 device: str | torch.device = "cpu", sample: bool = True) -> None:
        if not (math.isfinite(guidance) and guidance >= 0):
            raise ValueError(f"guidance must be a finite number >= 0, got {guidance}")
        if prior.config.input_dim != net.net.mineclip_embed_linear.in_features:
            raise ValueError(f"the prior's embeddings have {prior.config.input_dim} dimensions, "
                             f"the policy's goals {net.net.mineclip_embed_linear.in_features}")
        self.guidance = float(guidance)
        self.prior = prior.to(device).eval()
        self.policy = _Recurrent(net, 2, device)
        self.skills = skills or load_skills()
        self.sample = sample
        self._text_features = text_features
        self._goals: dict[str, np.ndarray] = {}
        self._generator: torch.Generator | None = None
        self._prompt: str | None = None

    @classmethod
    def from_files(cls, weights: str | Path, prior: str | Path,
                   mineclip: str | Path | MineClipEncoder,
                   model_file: str | Path | None = None, **kwargs) -> Steve1Policy:
        """The policy of ``steve1.weights`` and ``steve1_prior.pt`` with the text encoder of
        ``mineclip`` (an encoder, or the path of ``attn.pth``), each file checked key by key."""
        if not isinstance(mineclip, MineClipEncoder):
            mineclip = MineClipEncoder.from_file(mineclip, device=kwargs.get("device", "cpu"))
        return cls(read_checkpoint(weights, "steve1", model_file).build(),
                   read_checkpoint(prior, "steve1-prior").build(), mineclip.text_features,
                   **kwargs)

    @torch.no_grad()
    def text_goal(self, text: str) -> np.ndarray:
        """The prior's visual goal embedding for any text: the decoder at the mean of the
        latent, so a text always gets the same goal (STEVE-1 draws the latent)."""
        features = self._text_features(text).float()
        device = next(self.prior.parameters()).device
        return self.prior(features.to(device)[None])[0].cpu().numpy()

    goal_encoder = ""
    """None of the package's encoders gives its goals: STEVE-1's are MineCLIP's video
    embeddings before the reward head's adapter, which :class:`MineClipEncoder` applies."""

    def goal(self, prompt: str) -> np.ndarray:
        """:meth:`text_goal` of a skill-book prompt's text, or of "go explore" itself (an unknown
        prompt raises ``ValueError`` listing the known ones)."""
        if prompt not in self._goals:
            text = prompt if prompt == GO_EXPLORE else self.skills.skill(prompt).prompt
            self._goals[prompt] = self.text_goal(text)
        return self._goals[prompt]

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._generator = _generator(rng) if self.sample else None
        self._prompt = None
        self.policy.reset()

    def step(self, rgb: np.ndarray, goal: np.ndarray) -> tuple[int, int]:
        """VPT's joint ``(buttons, camera)`` indices for a frame and a visual goal embedding,
        with guidance: the batch holds the conditioned and the zero-goal passes."""
        out = self.policy.step(rgb, np.stack([goal, np.zeros_like(goal)]))
        s = self.guidance
        buttons, camera = ((1 + s) * head[0, 0] - s * head[1, 0]
                           for head in (out.buttons, out.camera))
        return (_sample(torch.log_softmax(buttons, -1), self._generator),
                _sample(torch.log_softmax(camera, -1), self._generator))

    def act(self, obs: Observation, prompt: str) -> Action:
        return self._act(obs, self.goal(prompt), prompt)

    def follow(self, obs: Observation, goal: np.ndarray) -> Action:
        """The next action toward a visual goal embedding (STEVE-1's visual goals)."""
        goal = np.asarray(goal, dtype=np.float32)
        return self._act(obs, goal, goal.tobytes())

    def _act(self, obs: Observation, goal: np.ndarray, key: str | bytes) -> Action:
        if key != self._prompt:
            self._prompt = key
            self.policy.reset()
        return from_vpt(*self.step(_rgb(obs, type(self).__name__), goal))
