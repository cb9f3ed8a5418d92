"""The encoders an agent can use, by name: the one registry the agent's tree, its factory and the
command line read (:data:`ENCODERS`).

==============  ===========================================================================
``semantic``    :class:`~mrsteve.perception.SemanticEncoder`, the stand-in over the renderer's
                semantic frame
``pixels``      :class:`~mrsteve.perception.pixels.PixelEncoder`, the video-text model over RGB
                frames with the shipped weights
``mineclip``    MineCLIP over RGB frames, a released ``attn.pth`` (``--mineclip-weights``;
                registered by :mod:`mrsteve.minecraft.registry`, the ``minecraft`` extra)
==============  ===========================================================================

Each entry holds what builds the encoder, its calibrated thresholds, its shipped weights, the
data files it loads and how ``mrsteve calibrate`` fits its thresholds, so that a new encoder is
one entry. An entry may name its builder as ``"package.module:function"``, imported when the
encoder is chosen (:func:`~mrsteve.naming.entry_point`): an optional dependency costs nothing
until then. Other packages add encoders through the entry-point group ``mrsteve.encoders``
(:class:`~mrsteve.registry.Registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mrsteve.digests import WeightsFile, check_files
from mrsteve.naming import entry_point
from mrsteve.nn import Weights
from mrsteve.perception.encoder import Encoder
from mrsteve.perception.thresholds import EncoderThresholds
from mrsteve.registry import Registry
from mrsteve.spaces import AGENT_OBSERVATION_KEYS


@dataclass(frozen=True)
class EncoderSpec:
    """One encoder: its name, what builds it and the data files it loads."""

    name: str
    description: str
    """What it is, in one line."""
    build: Callable[..., Encoder] | str
    """A fresh encoder with the shipped weights and thresholds: ``build(*files)``, given the
    weights files of :attr:`files` (or the ``"module:function"`` that is it)."""
    thresholds: Callable[[], EncoderThresholds] | str
    """Its calibrated thresholds, read from its data file without building the encoder."""
    data: tuple[str, ...]
    """The data files (paths below ``mrsteve/``) it loads: its prompts, its calibrated
    thresholds, its weights."""
    weights: Callable[[], Weights] | None = None
    """Its shipped weights (``None``: it has none)."""
    files: tuple[str, ...] = ()
    """The kinds of the weights files it is built from that the package does not ship (a
    released checkpoint each, given on the command line as ``--<kind>-weights``)."""
    extra: str | None = None
    """The package extra that installs what it needs beyond the core (``None``: nothing)."""
    calibration: Callable[[str | None], Calibrated] | str | None = None
    """What ``mrsteve calibrate`` fits thresholds for: ``calibration(weights)`` gives the encoder
    with placeholder thresholds (of the shipped weights, or of the weights file ``weights``; one
    that takes none refuses it with a ``ValueError``); ``None``: its thresholds are not fitted
    here (a released model's)."""
    thresholds_file: str | None = None
    """The shipped thresholds ``mrsteve calibrate --write`` replaces (below ``mrsteve/``)."""
    reads: tuple[str, ...] = AGENT_OBSERVATION_KEYS
    """The observation keys its encoder reads (default: any the agent is given)."""
    check_file: Callable[[str, str], WeightsFile] | str | None = None
    """``check_file(kind, path)``: a weights file of :attr:`files` read key by key and recorded
    (:class:`~mrsteve.digests.WeightsFile`), for a part built from released files."""

    def make(self, files: tuple[WeightsFile, ...] = ()) -> Encoder:
        """A fresh encoder, built from the weights ``files`` of :attr:`files` (in their order)."""
        check_files(files, self.files, f"the {self.name} encoder")
        encoder = self._resolve(self.build)(*files)
        if not isinstance(encoder, Encoder):
            raise ValueError(f"the {self.name} encoder's builder gave a "
                             f"{type(encoder).__name__}, which lacks the Encoder protocol")
        return encoder

    def read_thresholds(self) -> EncoderThresholds:
        return self._resolve(self.thresholds)()

    def calibration_model(self, weights: str | None = None) -> Calibrated:
        """The encoder to calibrate (:attr:`calibration`)."""
        if self.calibration is None:
            raise ValueError(f"the {self.name} encoder's thresholds are not fitted here")
        return self._resolve(self.calibration)(weights)

    def _resolve(self, target):
        return entry_point(target, f"the {self.name} encoder", self.extra)


@dataclass(frozen=True)
class Calibrated:
    """An encoder as ``mrsteve calibrate`` fits it: the model with placeholder thresholds, the
    SHA-256 of its weights (``None``: it has none), what the thresholds file says it is, and the
    command-line words that name it."""

    model: Encoder
    weights_sha256: str | None = None
    description: str | None = None
    arguments: tuple[str, ...] = ()


def check_encoder_spec(spec: EncoderSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is an :class:`EncoderSpec` naming its
    data files; what it builds is checked against the Encoder protocol when it is built."""
    if not isinstance(spec, EncoderSpec):
        raise ValueError(f"an encoder plug-in gives an EncoderSpec, not a {type(spec).__name__}")
    if not all(isinstance(path, str) for path in spec.data):
        raise ValueError(f"the {spec.name} encoder's data are paths below mrsteve/ (strings)")


def _semantic() -> Encoder:
    from mrsteve.perception.semantic import SemanticEncoder

    return SemanticEncoder()


def _semantic_thresholds() -> EncoderThresholds:
    from mrsteve.perception.semantic import load_shipped_thresholds

    return load_shipped_thresholds()


def _pixels() -> Encoder:
    from mrsteve.perception.pixels import PixelEncoder, load_shipped_weights

    return PixelEncoder(load_shipped_weights())


def _pixel_thresholds() -> EncoderThresholds:
    from mrsteve.perception.pixels import load_shipped_pixel_thresholds

    return load_shipped_pixel_thresholds()


def _pixel_weights() -> Weights:
    from mrsteve.perception.pixels import load_shipped_weights

    return load_shipped_weights()


def _semantic_calibration(weights: str | None) -> Calibrated:
    from mrsteve.perception.semantic import SemanticEncoder

    if weights is not None:
        raise ValueError("the semantic encoder takes no weights file (--weights is a trained "
                         "pixel encoder's: give --encoder pixels too)")
    return Calibrated(SemanticEncoder())


def _pixel_calibration(weights: str | None) -> Calibrated:
    from mrsteve.perception.pixels import (
        PixelEncoder,
        load_shipped_weights,
        load_weights,
        placeholder_thresholds,
    )

    loaded = load_shipped_weights() if weights is None else load_weights(weights)
    name = "data/pixels.npz" if weights is None else Path(weights).name
    return Calibrated(PixelEncoder(loaded, placeholder_thresholds()), loaded.sha256,
                      f"the pixel encoder (mrsteve.perception.pixels.PixelEncoder), weights "
                      f"{name}", ("--encoder pixels",))


PIXEL_ENCODER_DATA = ("perception/data/lexicon.toml", "perception/data/pixels.npz",
                      "perception/data/pixels_thresholds.toml")
"""The data files the shipped pixel encoder loads (its lexicon, weights and thresholds)."""


ENCODERS: Registry[EncoderSpec] = Registry("encoder", "mrsteve.encoders", (
    EncoderSpec("semantic", "the renderer's semantic frame", _semantic, _semantic_thresholds,
                ("perception/data/lexicon.toml", "perception/data/salience.toml",
                 "perception/data/thresholds.toml"),
                calibration=_semantic_calibration,
                thresholds_file="perception/data/thresholds.toml", reads=("semantic",)),
    EncoderSpec("pixels", "the learned encoder over RGB frames", _pixels, _pixel_thresholds,
                PIXEL_ENCODER_DATA, _pixel_weights,
                calibration=_pixel_calibration,
                thresholds_file="perception/data/pixels_thresholds.toml", reads=("rgb",)),
), check=check_encoder_spec)
"""Every encoder by name (module docstring)."""


def encoder_spec(kind: str) -> EncoderSpec:
    """The entry of the encoder called ``kind`` (an unknown name lists the known ones)."""
    return ENCODERS.spec(kind)


def make_encoder(kind: str = "semantic", files: tuple[WeightsFile, ...] = ()) -> Encoder:
    """A fresh encoder of ``kind`` (one of :data:`ENCODERS`) with its shipped thresholds (built
    from the weights ``files`` its entry takes)."""
    return encoder_spec(kind).make(files)


def encoder_weights(kind: str) -> str | None:
    """SHA-256 of the weights an encoder of ``kind`` ships with (``None``: it has none)."""
    weights = encoder_spec(kind).weights
    return None if weights is None else weights().sha256


def encoder_thresholds(kind: str) -> EncoderThresholds:
    """The calibrated thresholds an encoder of ``kind`` ships with (read from its data file,
    without building the encoder)."""
    return encoder_spec(kind).read_thresholds()


def encoder_data(kind: str) -> tuple[str, ...]:
    """The data files (paths below ``mrsteve/``) an encoder of ``kind`` loads."""
    return encoder_spec(kind).data

