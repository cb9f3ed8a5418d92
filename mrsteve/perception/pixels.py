"""The pixel encoder: a learned video-text dual encoder that sees only the RGB frame (MineCLIP's role).

MineCLIP embeds 16-frame clips of raw pixels and text prompts into one space, trained contrastively
on YouTube videos and their transcripts. This encoder is the same kind of model at the scale of the
embedded world, trained by :mod:`mrsteve.train.encoder` (``mrsteve train encoder``; torch is
needed there only) on clips rendered in the procedural calibration worlds, captioned from what the
renderer's ground truth shows (the labels of :mod:`mrsteve.calibration.clips`):

* image tower: a small convolutional network over each ``uint8[H, W, 3]`` frame (``3 x 3``
  convolutions with ReLU, then a linear layer over the flattened feature map, so where things are
  in the view is kept), giving one ``frame_dim`` feature per frame;
* clip: the *mean* of the window's frame features (so the agent loop pays for one new frame a
  step: a ring buffer with a running sum, like the semantic encoder's), then a two-layer head;
* text tower: the mean of the prompt's word embeddings, then a two-layer head;

both L2-normalised, similarity the dot product. Inference here is numpy only (``im2col`` and one
matrix product per layer); the weights ship in ``data/pixels.npz`` with the thresholds calibrated
for them in ``data/pixels_thresholds.toml`` (``mrsteve calibrate --encoder pixels``), which records
the weights' hash.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import numpy as np

from mrsteve.nn import FrameEncoder, Weights, convolution_shapes, feature_map
from mrsteve.perception._data import data_path, read_data_toml
from mrsteve.perception.encoder import Observation
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.thresholds import EncoderThresholds, parse_thresholds

SHIPPED_WEIGHTS = "pixels.npz"
"""Data file of the shipped weights (``mrsteve train encoder``)."""

SHIPPED_PIXEL_THRESHOLDS = "pixels_thresholds.toml"
"""Data file of the thresholds calibrated for the shipped weights."""

FORMAT = "mrsteve-pixel-encoder"
"""The ``format`` entry of a weights file's metadata."""

VERSION = 1
"""Weights file version this code reads and writes."""


@dataclass(frozen=True)
class PixelArchitecture:
    """The shape of a pixel encoder; the training code builds the same network from it."""

    vocabulary: tuple[str, ...]
    """Words the text tower knows (the lexicon's prompts and their rephrasings)."""
    obs_size: tuple[int, int] = (40, 64)
    """Frame height and width (the environment's default)."""
    window: int = 16
    """Frames per clip (MineCLIP: 16)."""
    channels: tuple[int, ...] = (16, 32, 64)
    """Output channels of the convolutions."""
    strides: tuple[int, ...] = (2, 2, 2)
    """Stride of each convolution."""
    frame_dim: int = 256
    """Per-frame feature size (what the window averages)."""
    dim: int = 128
    """Embedding size."""
    word_dim: int = 64
    """Word embedding size of the text tower."""

    def __post_init__(self) -> None:
        convolution_shapes(self.channels, self.strides)
        if min(self.obs_size) < 1 or self.window < 1 or not self.vocabulary:
            raise ValueError("obs_size and window must be positive and vocabulary non-empty")

    @property
    def feature_map(self) -> tuple[int, int, int]:
        """Height, width and channels of the last convolution's output."""
        return feature_map(self.obs_size, self.channels, self.strides)

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name and shape of every parameter (torch's layouts: convolutions ``[out, in, k, k]``,
        linear layers ``[out, in]``; the flattened feature map is channel-major)."""
        shapes = convolution_shapes(self.channels, self.strides)
        flat = int(np.prod(self.feature_map))
        linears = {"image.frame": (self.frame_dim, flat),
                   "image.head.0": (self.frame_dim, self.frame_dim),
                   "image.head.2": (self.dim, self.frame_dim),
                   "text.head.0": (self.frame_dim, self.word_dim),
                   "text.head.2": (self.dim, self.frame_dim)}
        for name, shape in linears.items():
            shapes[f"{name}.weight"] = shape
            shapes[f"{name}.bias"] = shape[:1]
        shapes["text.words.weight"] = (len(self.vocabulary), self.word_dim)
        return shapes


def tokens(text: str) -> list[str]:
    """The words of a prompt, lower-cased (what the text tower embeds)."""
    return re.findall(r"[a-z]+", text.lower())


@dataclass(frozen=True)
class PixelWeights(Weights):
    """A pixel encoder's parameters (float32, torch layouts) and architecture; its hash is what
    thresholds are tied to."""

    FORMAT: ClassVar[str] = FORMAT
    VERSION: ClassVar[int] = VERSION
    WHAT: ClassVar[str] = "pixel encoder"
    ARCHITECTURE: ClassVar[type] = PixelArchitecture

    architecture: PixelArchitecture


def load_weights(path: str | Path) -> PixelWeights:
    """Weights from an ``.npz`` file :meth:`PixelWeights.save` wrote; anything else raises a
    ``ValueError`` that names what is wrong."""
    return PixelWeights.load(path)


def load_shipped_weights() -> PixelWeights:
    """The weights shipped in ``data/pixels.npz`` (read once per process)."""
    return PixelWeights.read(data_path(SHIPPED_WEIGHTS))


@cache
def load_shipped_pixel_thresholds() -> EncoderThresholds:
    """Thresholds shipped in ``data/pixels_thresholds.toml`` for the shipped weights."""
    return parse_thresholds(read_data_toml(SHIPPED_PIXEL_THRESHOLDS))


def placeholder_thresholds(lexicon: Lexicon | None = None) -> EncoderThresholds:
    """Uncalibrated thresholds (status ``estimate``) that new weights start from: calibration
    replaces each prompt's with its fitted cut (with enough clips) and the event ones with theirs."""
    lexicon = lexicon or load_lexicon()
    return EncoderThresholds(MappingProxyType(dict.fromkeys(lexicon.texts, 0.5)), image_goal=0.9,
                             event_merge=0.905, event_fold=0.9)


def load_calibrated(weights: str | Path, thresholds: str | Path) -> PixelEncoder:
    """A pixel encoder with trained weights (``mrsteve train encoder``) and the thresholds
    ``mrsteve calibrate --encoder pixels --weights WEIGHTS --out THRESHOLDS`` fitted for them;
    thresholds calibrated for other weights are refused."""
    import tomllib

    loaded = load_weights(weights)
    try:
        with open(thresholds, "rb") as handle:
            raw = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"cannot read thresholds file {thresholds}: {error}") from None
    if raw.get("weights_sha256") != loaded.sha256:
        raise ValueError(f"{thresholds} was calibrated for weights {raw.get('weights_sha256')}, "
                         f"not {weights} ({loaded.sha256}): calibrate them with mrsteve "
                         f"calibrate --encoder pixels --weights {weights} --out FILE")
    return PixelEncoder(loaded, parse_thresholds(raw))


@cache
def shipped_thresholds_hash() -> str | None:
    """The weights hash the shipped thresholds were calibrated for (``weights_sha256``)."""
    return read_data_toml(SHIPPED_PIXEL_THRESHOLDS).get("weights_sha256")


class _ImageTower:
    """Numpy inference of the image tower: per-frame features and the clip head."""

    def __init__(self, weights: PixelWeights) -> None:
        arch, p = weights.architecture, weights.parameters
        self.frame_features = FrameEncoder(p, arch.obs_size, arch.channels, arch.strides)
        """``float32[N, frame_dim]`` features of ``uint8[N, H, W, 3]`` frames."""
        self.head = [(p[f"image.head.{i}.weight"].T.copy(), p[f"image.head.{i}.bias"])
                     for i in (0, 2)]

    def embed(self, mean_features: np.ndarray) -> np.ndarray:
        """The L2-normalised clip embedding of the mean frame feature (summed in float64 by the
        callers, so the running sum of :meth:`PixelEncoder.observe` does not drift; the head runs
        in float32 like the rest)."""
        (w0, b0), (w1, b1) = self.head
        hidden = mean_features.astype(np.float32) @ w0
        hidden += b0
        return _normalised(np.maximum(hidden, 0.0, out=hidden) @ w1 + b1)


def _normalised(vector: np.ndarray) -> np.ndarray:
    return (vector / np.sqrt(vector @ vector)).astype(np.float32)


class PixelEncoder:
    """The learned RGB encoder; implements :class:`~mrsteve.perception.Encoder`.

    Reads ``observation["rgb"]``: ``uint8[H, W, 3]`` at the architecture's ``obs_size``. The rolling
    window of :meth:`observe` keeps per-frame features in a ring buffer with a running sum, so a step
    costs one frame through the image tower plus the clip head, and gives what
    :meth:`encode_frames` gives for the same frames (to float32 rounding).
    """

    reads = ("rgb",)
    """The observation keys it reads."""

    def __init__(self, weights: PixelWeights | None = None,
                 thresholds: EncoderThresholds | None = None,
                 lexicon: Lexicon | None = None) -> None:
        weights = weights or load_shipped_weights()
        if thresholds is None:
            calibrated_for = shipped_thresholds_hash()
            if weights.sha256 != calibrated_for:
                raise ValueError(
                    f"the shipped thresholds were calibrated for weights {calibrated_for}, not "
                    f"these ({weights.sha256}): pass thresholds calibrated for them (mrsteve "
                    f"calibrate --encoder pixels --weights PATH --out FILE, then "
                    f"mrsteve.perception.thresholds.parse_thresholds), or recalibrate the "
                    f"shipped ones (mrsteve calibrate --encoder pixels --write)")
            thresholds = load_shipped_pixel_thresholds()
        self.weights = weights
        self.architecture = weights.architecture
        self.lexicon = lexicon or load_lexicon()
        missing = [p for p in self.lexicon.texts if p not in thresholds.task]
        if missing:
            raise ValueError(f"thresholds lack task thresholds for prompts {missing}")
        self._thresholds = thresholds
        self._image = _ImageTower(weights)
        self._words = {word: i for i, word in enumerate(self.architecture.vocabulary)}
        self._ring = np.zeros((self.architecture.window, self.architecture.frame_dim))
        self._total = np.zeros(self.architecture.frame_dim)
        self._text_cache: dict[str, np.ndarray] = {}
        self.reset()

    @property
    def dim(self) -> int:
        return self.architecture.dim

    @property
    def window(self) -> int:
        return self.architecture.window

    @property
    def thresholds(self) -> EncoderThresholds:
        return self._thresholds

    def task_threshold(self, prompt: str) -> float:
        return self._thresholds.task_threshold(prompt)

    def reset(self) -> None:
        self._ring[:] = 0.0
        self._total[:] = 0.0
        self._slot = 0
        self._filled = 0

    def observe(self, observation: Observation) -> np.ndarray:
        features = self._image.frame_features(self._rgb(observation)[None])[0]
        slot = self._slot
        self._total += features - self._ring[slot]
        self._ring[slot] = features
        self._slot = (slot + 1) % self.window
        self._filled = min(self._filled + 1, self.window)
        return self._image.embed(self._total / self._filled)

    def encode_frames(self, frames: Sequence[Observation]) -> np.ndarray:
        clip = [self._rgb(observation) for observation in frames][-self.window:]
        if not clip:
            raise ValueError("encode_frames needs at least one observation")
        features = self._image.frame_features(np.stack(clip))
        return self._image.embed(features.astype(np.float64).mean(axis=0))

    def encode_text(self, prompt: str) -> np.ndarray:
        if prompt not in self._text_cache:
            self.lexicon.meaning(prompt)  # an unknown prompt raises, listing the known ones
            self._text_cache[prompt] = self.embed_words(prompt)
        return self._text_cache[prompt].copy()

    def embed_words(self, text: str) -> np.ndarray:
        """The text tower's embedding of any text made of words it knows (e.g. a rephrasing)."""
        words = tokens(text)
        unknown = [word for word in words if word not in self._words]
        if not words or unknown:
            raise ValueError(f"the text tower knows none of {unknown or [text]}; its words: "
                             f"{', '.join(self.architecture.vocabulary)}")
        p = self.weights.parameters
        mean = p["text.words.weight"][[self._words[w] for w in words]].mean(axis=0)
        hidden = np.maximum(p["text.head.0.weight"] @ mean + p["text.head.0.bias"], 0.0)
        return _normalised(p["text.head.2.weight"] @ hidden + p["text.head.2.bias"])

    def _rgb(self, observation: Observation) -> np.ndarray:
        try:
            rgb = observation["rgb"]
        except KeyError:
            raise KeyError("PixelEncoder reads observation['rgb'] (uint8[H, W, 3]); the "
                           f"observation has {sorted(observation)}") from None
        shape = (*self.architecture.obs_size, 3)
        if not (isinstance(rgb, np.ndarray) and rgb.shape == shape and rgb.dtype == np.uint8):
            raise ValueError(f"observation['rgb'] must be uint8{list(shape)} (the weights' "
                             f"obs_size), got {getattr(rgb, 'dtype', type(rgb))} "
                             f"{getattr(rgb, 'shape', '')}")
        return rgb
